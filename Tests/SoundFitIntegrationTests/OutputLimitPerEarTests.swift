import Foundation
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// One output limiter per ear (first of a pair left, second
    /// right), no latency of its own, and each ear's limit the lower of the maximum output and the
    /// ear's maximum derived from its preset.
    @Suite("Output limit per ear") struct OutputLimitPerEar {
        /// `--max-output 90` through the default calibration (100 dB SPL at full scale): −10 dBFS.
        static let ceiling: Float = 0.316_227_8

        @Test("A loud left ear (100 dB SPL over a 90 dB SPL limit) leaves the right ear's level unchanged (≤ 0.5 dB); the outputs report no added latency")
        func earsAreIndependent() throws {
            try Rig.run(.process(channels: 2, arguments: ["--max-output", "90", "--connect"])) { rig in
                let audio = try rig.audio()
                let quiet = Capture.tone(500, amplitude: 0.0316)   // 70 dB SPL
                let loud = Capture.tone(1000, amplitude: 1)        // 100 dB SPL, 10 dB over the limit

                let alone = try audio.capture([[Float](repeating: 0, count: Capture.loopFrames), quiet], frames: Capture.captureFrames)
                let beside = try audio.capture([loud, quiet], frames: Capture.captureFrames)
                let rightAlone = Capture.toneLevel(alone[1], frequency: 500, reference: 0.0316)
                let rightBeside = Capture.toneLevel(beside[1], frequency: 500, reference: 0.0316)
                let leftPeak = Double(beside[0].map(abs).max() ?? 0)
                let leftSteady = Double(Capture.steady(beside[0]).map(abs).max() ?? 0)
                report("right ear 500 Hz 70 dB SPL alone", rightAlone)
                report("right ear beside a 100 dB SPL left ear", rightBeside)
                report("left ear peak (limit −10 dBFS)", Meter.decibels(leftPeak), unit: "dBFS")
                #expect(abs(rightBeside - rightAlone) <= 0.5, "the right ear moved by \(rightBeside - rightAlone) dB")
                #expect(abs(rightAlone) <= 0.05, "the right ear passes at unity: \(rightAlone) dB")
                #expect(leftPeak <= Double(Self.ceiling) * 1.0001, "left peak \(leftPeak), limit \(Self.ceiling)")
                #expect(Meter.decibels(leftSteady) >= -10.1, "the left ear is held at its limit, not below: \(leftSteady)")

                // The limiter has no look-ahead: the outputs pass on their inputs' capture latency
                // (the dummy backend's one period of 256 frames) and add nothing.
                let status = try rig.osc.status()
                #expect(status["capture_latency"]?.number == 256, "\(status)")
                #expect(isClose(status["output_limit_left_dbfs"], -10, tolerance: 1e-4), "\(status)")
                #expect(isClose(status["output_limit_right_dbfs"], -10, tolerance: 1e-4), "\(status)")
                #expect(status["derived_max_output_left_spl"] == nil, "no preset, no derived maximum: \(status)")
            }
        }

        @Test("With a profile (left N3, right N2) each ear is held at its own derived maximum, below --max-output, as /status reports")
        func derivedMaximaPerEar() throws {
            let directory = try UniqueName.temporaryDirectory("sf-ear-limit")
            defer { try? FileManager.default.removeItem(at: directory) }
            let profile = try TestAudiogram.profileFile(left: .n3, right: .n2, in: directory)
            try Rig.run(.process(channels: 2, arguments: ["--profile", profile.path, "--tech-level", "3",
                                                                "--max-output", "110"])) { rig in
                // Not inside #expect: see Rig.run (a closure in the macro would stand in for a later one).
                let enabled = try rig.osc.pollQuery("/processing/enabled") { $0 == .int(1) }
                #expect(enabled == .int(1))
                let status = try rig.osc.status()
                let left = try #require(status["derived_max_output_left_spl"]?.number, "\(status)")
                let right = try #require(status["derived_max_output_right_spl"]?.number, "\(status)")
                report("derived maximum output, left N3", left, unit: "dB SPL")
                report("derived maximum output, right N2", right, unit: "dB SPL")
                // N3 prescribes more gain than N2, so its maximum is higher; both below --max-output 110.
                #expect(left > right + 3 && left < 110 && right > 85, "\(left), \(right)")
                #expect(isClose(status["output_limit_left_dbfs"], left - 100, tolerance: 1e-3), "\(status)")
                #expect(isClose(status["output_limit_right_dbfs"], right - 100, tolerance: 1e-3), "\(status)")
                #expect(isClose(status["output_limit_dbfs"], 10, tolerance: 1e-4), "the hearing test's limit stays --max-output: \(status)")

                // A full-scale 1 kHz sine with +12 dB: each ear's output sits at its own limit.
                expectApplied(try rig.osc.set("/output/gain", .float(12)), "/output/gain", .float(12))
                let captured = try rig.audio().capture([Capture.tone(1000, amplitude: 1), Capture.tone(1000, amplitude: 1)],
                                                       frames: Capture.captureFrames)
                for (channel, limit) in [(0, left - 100), (1, right - 100)] {
                    let whole = Meter.decibels(Double(captured[channel].map(abs).max() ?? 0))
                    let steady = Meter.decibels(Double(Capture.steady(captured[channel]).map(abs).max() ?? 0))
                    report("ch\(channel + 1) peak (limit \(limit) dBFS)", whole, unit: "dBFS")
                    #expect(whole <= limit + 0.01, "ch\(channel + 1): a sample reached \(whole) dBFS, limit \(limit)")
                    #expect(abs(steady - limit) <= 0.1, "ch\(channel + 1): steady peak \(steady) dBFS, limit \(limit)")
                }
            }
        }
    }
}
