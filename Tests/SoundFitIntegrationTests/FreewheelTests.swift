import Foundation
import Testing

extension SoundFitIntegration {
    /// JACK freewheel mode (`jack_freewheel y`, what test rigs and bounces use): the graph runs
    /// as fast as it computes, with no deadlines.
    @Suite("Freewheel") struct Freewheel {
        @Test("Freewheeling: /status says so, a set is applied and heard, a timetag waits for its moment, timings and xruns stay out")
        func freewheeling() throws {
            try Rig.run(.process(channels: 2)) { rig in
                let audio = try rig.audio()
                let osc = rig.osc
                #expect(try osc.status()["freewheeling"] == .int(0))

                try JackTools.run("jack_freewheel", server: rig.server.name, "y")
                defer { _ = try? JackTools.run("jack_freewheel", server: rig.server.name, "n") }
                let entered = try osc.waitForStatus(timeout: .seconds(10)) { $0["freewheeling"] == .int(1) }
                let timedCycles = try #require(entered["callback_samples"]?.number)
                let xruns = try #require(entered["xruns"]?.number)

                expectApplied(try osc.set("/output/gain", .float(-6)), "/output/gain", .float(-6))
                let captured = try audio.capture([Capture.tone(1000)], frames: Capture.captureFrames)
                for (channel, samples) in captured.enumerated() {
                    let level = Capture.toneLevel(samples, frequency: 1000)
                    report("freewheel: 1 kHz level at -6 dB output gain ch\(channel + 1)", level)
                    #expect(abs(level + 6) <= 0.05, "channel \(channel + 1): \(level) dB")
                }

                // A bundle for a moment 0.5 s ahead is applied then, not at the next of the many
                // fast cycles: freewheeling frames stand for no wall-clock time.
                let sent = ContinuousClock.now
                osc.sendBundle([OSCTestMessage("/output/gain", [.float(-12)])],
                               timetag: OSCWire.timetag(unixSeconds: OSCWire.wallClockNow + 0.5))
                let reports = try osc.waitForTerminalState("/output/gain")
                let waited = ContinuousClock.now - sent
                #expect(reports.last?.string(1) == "applied", "\(reports)")
                #expect(waited >= .milliseconds(450), "applied after \(waited)")

                let during = try osc.status()
                #expect(during["freewheeling"] == .int(1))
                #expect((during["freewheel_cycles"]?.number ?? 0) > 0, "\(during)")
                // Freewheeling cycles have no period: they are not in the callback statistics, and
                // nothing JACK reports meanwhile counts as an xrun.
                #expect(during["callback_samples"]?.number == timedCycles, "\(during)")
                #expect(during["xruns"]?.number == xruns, "\(during)")

                // The hearing test does not start while tones would play faster than real time.
                osc.send("/test/start", .string("left"))
                let refused = try osc.waitFor("/error for /test/start") { $0.address == "/error" }.match
                #expect(refused.string(0) == "/test/start" && refused.string(1)?.contains("freewheeling") == true, "\(refused)")

                try JackTools.run("jack_freewheel", server: rig.server.name, "n")
                let left = try osc.waitForStatus(timeout: .seconds(10)) { $0["freewheeling"] == .int(0) }
                #expect(left["connected"] == .int(1))
                let back = try audio.capture([Capture.tone(1000)], frames: Capture.captureFrames)
                #expect(abs(Capture.toneLevel(back[0], frequency: 1000) + 12) <= 0.05)
                #expect((try osc.status()["callback_samples"]?.number ?? 0) > timedCycles)
            }
        }
    }
}
