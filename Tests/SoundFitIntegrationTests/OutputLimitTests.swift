import Foundation
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// The output safety limit through JACK: whatever the stages do, no output sample exceeds
    /// the maximum output; below it the signal is untouched.
    @Suite("Output safety limit") struct OutputLimit {
        /// 80 dB SPL through the default calibration (100 dB SPL at full scale): a 0.1 peak.
        static let ceiling: Float = 0.1

        @Test("A tone complex and broadband noise with +12 dB never exceed --max-output; below it nothing changes")
        func neverAboveTheLimit() throws {
            let rig = try Rig.start(.process(channels: 2, arguments: ["--max-output", "80"]))
            defer { rig.stop() }
            #expect(try rig.osc.ask("/config/max_output", reply: "/config/max_output").arguments == [.float(80), .string("dB SPL")])
            expectApplied(try rig.osc.set("/output/gain", .float(12)), "/output/gain", .float(12))
            _ = try rig.osc.status()  // starts a new interval for output_limit_db

            let complex = SignalGenerator.multiTone(frequencies: [250, 1000, 4000], amplitude: 0.05,
                                                    sampleRate: Capture.sampleRate, count: Capture.loopFrames, seed: 3)
            let noise = Capture.noise(seed: 21, amplitude: 0.17)
            let captured = try rig.audio().capture([complex, noise], frames: Capture.captureFrames)
            let peaks = captured.map { $0.map(abs).max() ?? 0 }
            report("peak with +12 dB and --max-output 80 (ceiling 0.1): complex", Double(peaks[0]), unit: "")
            report("peak with +12 dB and --max-output 80 (ceiling 0.1): noise", Double(peaks[1]), unit: "")
            #expect(peaks.allSatisfy { $0 <= Self.ceiling }, "\(peaks)")
            // Control: without the limit the peaks would be four times the input's.
            #expect((complex.map(abs).max() ?? 0) * 4 > Self.ceiling * 1.5)
            let reduction = try #require(try rig.osc.status()["output_limit_db"]?.number)
            report("output_limit_db after the loud part", reduction, unit: "dB")
            #expect(reduction > 6)

            // Below the limit: unity gain, a 0.05 tone comes out at its level, nothing limited.
            expectApplied(try rig.osc.set("/output/gain", .float(0)), "/output/gain", .float(0))
            try rig.audio().waitForAudio(seconds: 0.2)  // the gain's 20 ms ramp and the limiter's release, in JACK cycles
            _ = try rig.osc.status()
            let quiet = try rig.audio().capture([Capture.tone(1000, amplitude: 0.05)], frames: Capture.captureFrames)
            let level = Capture.toneLevel(quiet[0], frequency: 1000, reference: 0.05)
            report("tone below the limit", level)
            #expect(abs(level) <= 0.01)
            #expect(try rig.osc.status()["output_limit_db"]?.number == 0)

            // The limit can be lowered and queried; out-of-range values and values above the
            // ceiling set at start (--max-output 80) are refused.
            #expect(try rig.osc.ask("/config/max_output", [.float(70)], reply: "/config/max_output").arguments == [.float(70), .string("dB SPL")])
            expectErrorReply(try rig.osc.ask("/config/max_output", [.float(90)], reply: "/config/max_output"),
                             for: "/config/max_output", hint: "ceiling")
            expectErrorReply(try rig.osc.ask("/config/max_output", [.float(20)], reply: "/config/max_output"),
                             for: "/config/max_output", hint: "40")
        }
    }
}
