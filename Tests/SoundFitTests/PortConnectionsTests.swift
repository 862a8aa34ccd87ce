@testable import SoundFitJack
import Testing

/// Which removed connections wait for their port and which are the user's, from the events
/// JACK's callbacks report, in the order JACK reports them. Through real JACK:
/// `SoundFitIntegration.ConnectionsSurviveTheGraph`.
@Suite struct PortConnectionsTests {
    typealias Connection = PortConnections.Connection
    let start = ContinuousClock.now
    let input = Connection(source: "player:out_1", destination: "soundfit:input_1")
    let output = Connection(source: "soundfit:output_1", destination: "player:in_1")

    func tracking(_ connections: Connection...) -> PortConnections {
        var tracked = PortConnections()
        tracked.merge(connections)
        return tracked
    }

    @Test func aPortThatGoesAwayTakesItsConnectionsWithItAndGetsThemBack() {
        var tracked = tracking(input, output)
        // JACK reports the disconnection first (the port still exists then), the port after.
        tracked.disconnected(input, otherPortGone: false, at: start)
        #expect(tracked.portWentAway("player:out_1", at: start + .milliseconds(1)) == [input])
        #expect(tracked.connections == [output])
        #expect(tracked.awaiting("player:out_1") == [input])
        #expect(tracked.awaiting("player:in_1").isEmpty)
        #expect(tracked.connectionsToRestore == [output, input], "a returning server gets both")
        // Restored: the connect callback's report ends the wait.
        tracked.connected(input)
        #expect(tracked.awaiting("player:out_1").isEmpty)
        #expect(tracked.connections == [output, input])
    }

    @Test func aRemovalReportedAfterThePortIsGoneWaitsForIt() {
        var tracked = tracking(output)
        tracked.disconnected(output, otherPortGone: true, at: start)
        #expect(tracked.awaiting("player:in_1") == [output])
        #expect(tracked.portWentAway("player:in_1", at: start) == [output], "counted once")
        #expect(tracked.connectionsToRestore == [output])
    }

    @Test func theUsersRemovalFromAPortThatStaysIsForgotten() {
        var tracked = tracking(input, output)
        tracked.disconnected(input, otherPortGone: false, at: start)
        // Another port goes: not the removed connection's.
        #expect(tracked.portWentAway("player:in_1", at: start + .milliseconds(5)).isEmpty)
        #expect(tracked.awaiting("player:out_1").isEmpty)
        // Its own port goes, but long after the user removed it.
        #expect(tracked.portWentAway("player:out_1", at: start + PortConnections.claimWindow + .milliseconds(1)).isEmpty)
        #expect(tracked.connectionsToRestore == [output])
    }

    @Test func aConnectionMadeAgainByHandIsNotRestoredTwice() {
        var tracked = tracking(input)
        tracked.disconnected(input, otherPortGone: true, at: start)
        tracked.connected(input)
        #expect(tracked.awaiting("player:out_1").isEmpty)
        #expect(tracked.connectionsToRestore == [input])
        // A removal of a connection never tracked changes nothing.
        tracked.disconnected(output, otherPortGone: true, at: start)
        #expect(tracked.awaiting("player:in_1").isEmpty)
    }

    @Test func aConnectionAReturningServerCannotMakeYetWaitsForItsPort() {
        var tracked = PortConnections()
        tracked.await(input)
        #expect(tracked.awaiting("player:out_1") == [input])
        tracked.await(input)
        #expect(tracked.awaitingPorts == [input], "waits once")
        tracked.merge([input])
        #expect(tracked.awaiting("player:out_1").isEmpty, "made: no longer waiting")
        #expect(tracked.connections == [input])
    }
}

/// The environment a private jackd gets: never PipeWire's JACK library folder.
@Suite struct PrivateJackServerEnvironmentTests {
    @Test func pipeWiresLibraryFolderIsDroppedAndTheRestKept() {
        let environment = PrivateJackServer.environment(from: [
            "LD_LIBRARY_PATH": "/usr/${LIB}/pipewire-0.3/jack:/opt/lib", "HOME": "/root",
        ])
        #expect(environment == ["HOME=/root", "LD_LIBRARY_PATH=/opt/lib"])
        #expect(PrivateJackServer.environment(from: ["LD_LIBRARY_PATH": "/usr/lib/x86_64-linux-gnu/pipewire-0.3/jack"])
                    == [], "nothing left: no LD_LIBRARY_PATH at all")
        #expect(PrivateJackServer.environment(from: ["PATH": "/usr/bin"]) == ["PATH=/usr/bin"])
    }
}
