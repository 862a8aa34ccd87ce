import CJack
import Foundation
import Testing

extension SoundFitIntegration {
    /// Ports SoundFit is connected to disappear and come back (a player
    /// restarted, a netjack2 master restarted, an interface replugged, PipeWire re-creating a
    /// node). The pure bookkeeping is `PortConnectionsTests`; here a real player closes (JACK
    /// disconnects its ports on deactivation, then unregisters them) and opens again.
    @Suite("Connections that survive the graph") struct ConnectionsSurviveTheGraph {
        /// Waits until `predicate` holds for the player's view of the graph.
        private func waitForGraph(_ what: String, timeout: Duration = .seconds(10), _ predicate: () -> Bool) throws {
            let deadline = ContinuousClock.now + timeout
            while !predicate() {
                guard ContinuousClock.now < deadline else { throw IntegrationError("\(what) within \(timeout)") }
                Thread.sleep(forTimeInterval: 0.02)  // polls a condition (with a deadline)
            }
        }

        @Test("A player that closes and opens again gets its connections to soundfit back, with the audio exact; a connection the user removed stays removed; soundfit logs both")
        func playerReturns() throws {
            try Rig.run(.process(channels: 2)) { rig in
                let soundfit = rig.ready.client
                expectApplied(try rig.osc.set("/output/gain", .float(-6)), "/output/gain", .float(-6))
                let first = try rig.audio()
                let player = first.name
                let before = try first.capture([Capture.tone(1000)], frames: Capture.captureFrames)
                for samples in before { #expect(abs(Capture.toneLevel(samples, frequency: 1000) + 6) <= 0.1) }

                // The user removes one connection by hand. Whether a removal was the user's or the
                // port's is decided when the port goes: a port that goes within
                // `PortConnections.claimWindow` (2 s) of a removal claims it, and no event marks
                // the window's end, so the test waits it out.
                try first.disconnect("\(player):out_2", "\(soundfit):input_2")
                Thread.sleep(forTimeInterval: 2.3)
                rig.closeAudio()
                _ = rig.soundfit.process.waitForOutput(timeout: .seconds(10), fromStandardError: true) { $0.contains("went away; SoundFit restores") ? true : nil }

                let second = try TestJackClient(server: rig.server.name, name: player, channels: 2)
                defer { second.close() }
                #expect(second.name == player)
                try waitForGraph("connections restored") {
                    second.connections(of: "\(player):in_1") == ["\(soundfit):output_1"]
                        && second.connections(of: "\(player):in_2") == ["\(soundfit):output_2"]
                        && second.connections(of: "\(player):out_1") == ["\(soundfit):input_1"]
                }
                #expect(second.connections(of: "\(player):out_2").isEmpty, "the connection the user removed came back")
                let after = try second.capture([Capture.tone(1000)], frames: Capture.captureFrames)
                let level = Capture.toneLevel(after[0], frequency: 1000)
                report("player reopened: channel 1 through soundfit", level)
                #expect(abs(level + 6) <= 0.1, "channel 1: \(level) dB")
                #expect(Capture.toneLevel(after[1], frequency: 1000) < -100, "channel 2 has no input and plays nothing")
                let log = rig.soundfit.process.standardError
                #expect(log.contains("JACK port \(player):out_1 went away; SoundFit restores \(player):out_1 -> \(soundfit):input_1"), "\(log.suffix(2000))")
                #expect(log.contains("JACK port \(player):in_1 is back; restored \(soundfit):output_1 -> \(player):in_1"), "\(log.suffix(2000))")
                #expect(!log.contains("restored \(player):out_2"), "\(log.suffix(2000))")
            }
        }
    }
}
