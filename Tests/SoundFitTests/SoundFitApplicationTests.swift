import Foundation
import Logging
import SoundFit
import Synchronization
import Testing

/// The composition root without a JACK server: what `soundfit run` and the integration tests
/// rely on when starting fails or succeeds.
@Suite struct SoundFitApplicationTests {
    @Test func theReadyLineIsTheOneScriptsRead() throws {
        let peer = try #require(OSCPeer(host: "127.0.0.1", port: 7700))
        let web = try #require(OSCPeer(host: "127.0.0.1", port: 7701))
        var ready = SoundFitReady(osc: peer, oscTCP: peer, http: web, clientName: "soundfit", serverName: "default", channelCount: 2)
        #expect(ready.line == "soundfit ready osc=udp://127.0.0.1:7700 osc_tcp=tcp://127.0.0.1:7700 http=http://127.0.0.1:7701 "
            + "client=soundfit server=default channels=2")
        ready.oscTCP = nil
        ready.http = nil
        #expect(ready.line == "soundfit ready osc=udp://127.0.0.1:7700 osc_tcp=off http=off client=soundfit server=default channels=2")
        #expect(ready.privateServerHint == nil)
        // With no server running, SoundFit's own: the line says so, the hint names the server for JACK's tools.
        ready.serverName = "soundfit-private-1000-1"
        ready.usesPrivateServer = true
        #expect(ready.line.hasSuffix(" server=soundfit-private-1000-1 channels=2 private_server=dummy"))
        let hint = try #require(ready.privateServerHint)
        #expect(hint.contains("jack_lsp -s soundfit-private-1000-1") && hint.contains("export JACK_DEFAULT_SERVER=soundfit-private-1000-1"))
    }

    @Test func withoutAServerRunEndsWithTheJackErrorAndReleasesTheOSCPort() async throws {
        var jack = JackHostConfiguration()
        jack.clientName = "soundfit-unit"
        jack.serverName = "soundfit-unit-absent-\(getpid())"
        jack.startsPrivateServer = false
        var logger = Logger(label: "soundfit.unit")
        logger.logLevel = .critical
        let readies = Readies()
        let application = try SoundFitApplication(
            configuration: SoundFitConfiguration(jack: jack, osc: .init(host: "127.0.0.1", port: 0),
                                                 session: .fineTuning(techLevel: try TechLevel(3))),
            logger: logger, onReady: { _ in readies.count.add(1, ordering: .relaxed) })
        let port = application.socket.boundPeer.port

        await #expect(throws: JackHostError.self) { try await application.run() }
        #expect(readies.count.load(ordering: .relaxed) == 0, "reported ready without a server")
        // The socket was closed: its port can be bound again.
        let again = try OSCSocket(host: "127.0.0.1", port: port)
        again.close(receiving: false)
    }
}

private final class Readies: Sendable {
    let count = Atomic<Int>(0)
}
