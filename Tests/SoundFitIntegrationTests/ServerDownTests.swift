import Foundation
import Glibc
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// While no JACK server is connected no value can reach the audio, so none is reported
    /// `applied`: a patch load fails after the delivery timeout and changes nothing, the current
    /// patch stays, and the server back renders the values from before the load.
    @Suite("JACK server down") struct ServerDown {
        @Test("JACK down: /patch/load fails after the delivery timeout and changes nothing; the server back renders the old values")
        func patchLoadWhileServerDown() throws {
            try Rig.run(.process(channels: 2, startsServer: false)) { rig in
                #expect(try rig.osc.query("/filter/enabled") == .int(0))
                let before = try rig.osc.ask("/patch/current", reply: "/patch/current")
                #expect(before.arguments.prefix(2) == [.int(0), .string("Transparent")], "\(before)")

                rig.server.kill(signal: SIGKILL)
                _ = try rig.osc.waitForStatus(timeout: .seconds(15)) {
                    $0["connected"] == .int(0) && $0["session"] == .string("inactive")
                }
                let timeout = try rig.osc.ask("/config/timeout", [.float(0.5)], reply: "/config/timeout")
                #expect(isClose(timeout.arguments.first, 0.5, tolerance: 1e-6), "\(timeout)")

                // The load cannot reach the audio: refused after the delivery timeout, nothing changed.
                let start = ContinuousClock.now
                let answer = try rig.osc.ask("/patch/load", [.string("Lowpass 1 kHz")], reply: "/patch/current", timeout: .seconds(20))
                let elapsed = ContinuousClock.now - start
                report("/patch/load without a server: time to the answer", Double(elapsed / .milliseconds(1)), unit: "ms")
                expectErrorReply(answer, for: "/patch/load")
                #expect(elapsed >= .milliseconds(450), "answered after \(elapsed): before the 0.5 s delivery timeout")
                #expect(try rig.osc.query("/filter/enabled") == .int(0))
                #expect(try rig.osc.query("/filter/cutoff") == .float(1000))
                let after = try rig.osc.ask("/patch/current", reply: "/patch/current")
                #expect(after.arguments == before.arguments, "the current patch changed: \(before) → \(after)")
                _ = try rig.osc.ask("/config/timeout", [.float(10)], reply: "/config/timeout")

                // The server returns: the audio has the values from before the load (no filter).
                try rig.server.start()
                _ = try rig.osc.waitForStatus(timeout: .seconds(30)) {
                    $0["connected"] == .int(1) && $0["session"] == .string("active")
                }
                let client = try TestJackClient(server: rig.server.name, channels: 2)
                defer { client.close() }
                try client.connect(toClient: rig.ready.client)
                let mix = zip(Capture.tone(250), Capture.tone(4000)).map { $0 + $1 }
                let unfiltered = Capture.toneLevel(Capture.tone(4000), frequency: 4000)
                for (channel, samples) in try client.capture([mix], frames: Capture.captureFrames).enumerated() {
                    let high = Capture.toneLevel(samples, frequency: 4000), low = Capture.toneLevel(samples, frequency: 250)
                    report("server back: 4 kHz ch\(channel + 1) (unfiltered \(String(format: "%.2f", unfiltered)))", high)
                    report("server back: 250 Hz ch\(channel + 1)", low)
                    #expect(abs(high - unfiltered) <= 0.1, "ch\(channel + 1): 4 kHz at \(high) dB: the patch's lowpass is in the audio")
                    #expect(abs(low - unfiltered) <= 0.1, "ch\(channel + 1): 250 Hz at \(low) dB, expected \(unfiltered)")
                }
                #expect(try rig.osc.query("/filter/enabled") == .int(0))
            }
        }
    }
}
