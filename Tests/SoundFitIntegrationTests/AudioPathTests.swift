import CJack
import Foundation
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// Signals through the real binary: ports, bypass, filter and gain, measured on captures.
    @Suite("Audio path") struct AudioPath {
        @Test("--channels 3 registers soundfit:input_1…3 and soundfit:output_1…3")
        func portsExist() throws {
            let rig = try Rig.start(.process(channels: 3))
            defer { rig.stop() }
            #expect(rig.ready.channels == 3)
            #expect(rig.ready.client == "soundfit")
            #expect(rig.ready.server == rig.server.name)

            let audio = try rig.audio()
            let ports = Set(audio.ports(matching: "^soundfit:"))
            let inputs = (1...3).map { "soundfit:input_\($0)" }
            let outputs = (1...3).map { "soundfit:output_\($0)" }
            #expect(ports == Set(inputs + outputs + ["soundfit:midi_in"]))
            for port in inputs {
                #expect(audio.portFlags(port).map { $0 & Int32(JackPortIsInput.rawValue) != 0 } == true, "\(port)")
            }
            for port in outputs {
                #expect(audio.portFlags(port).map { $0 & Int32(JackPortIsOutput.rawValue) != 0 } == true, "\(port)")
            }
            // And the status agrees.
            let status = try rig.osc.status()
            #expect(status["connected"] == .int(1))
            #expect(status["sample_rate"]?.number == 48000)
        }

        @Test("Default settings pass a −20 dBFS 1 kHz sine at unity, bit-exact on every channel")
        func unityPassthrough() throws {
            try Rig.run(.process(channels: 2)) { rig in
                let audio = try rig.audio()

                let captured = try audio.capture([Capture.tone(1000)], frames: Capture.captureFrames)
                for (channel, samples) in captured.enumerated() {
                    let level = Capture.toneLevel(samples, frequency: 1000)
                    report("bypass 1 kHz level ch\(channel + 1) re input", level)
                    #expect(abs(level) <= 0.05, "channel \(channel + 1): \(level) dB")
                }

                // Null test: distinct noise per channel (a channel swap or any processing fails it)
                // must come back bit for bit, with the same latency on every channel.
                let noises = (0..<rig.channels).map { Capture.noise(seed: UInt64($0 + 1)) }
                let capturedNoise = try audio.capture(noises, frames: Capture.captureFrames)
                var lags: [Int?] = []
                for channel in 0..<rig.channels {
                    let lag = Capture.bitExactLag(captured: capturedNoise[channel], played: noises[channel])
                    lags.append(lag)
                    #expect(lag != nil, "channel \(channel + 1) is not a bit-exact copy of its input")
                }
                #expect(Set(lags).count == 1, "channels have different latencies: \(lags)")
                if let lag = lags.first ?? nil { report("bypass latency (frames, test client loop)", Double(lag), unit: "frames") }
            }
        }

        @Test("Lowpass 1 kHz: 4 kHz attenuated by ≥ 20 dB, 250 Hz within 0.5 dB")
        func lowpassFilter() throws {
            try Rig.run(.process(channels: 2)) { rig in
                let audio = try rig.audio()
                let osc = rig.osc
                // Two tones at −20 dBFS each; the fit separates them (whole periods in the window).
                let low = Capture.tone(250), high = Capture.tone(4000)
                let mix = zip(low, high).map { $0 + $1 }

                // Control: with the filter off both tones pass at unity.
                let before = try audio.capture([mix], frames: Capture.captureFrames)
                for samples in before {
                    #expect(abs(Capture.toneLevel(samples, frequency: 4000)) <= 0.05)
                    #expect(abs(Capture.toneLevel(samples, frequency: 250)) <= 0.05)
                }

                // The defaults, set explicitly (already in effect, so they may go straight to applied).
                expectApplied(try osc.set("/filter/type", .string("lowpass")), "/filter/type", .string("lowpass"), changed: false)
                expectApplied(try osc.set("/filter/cutoff", .float(1000)), "/filter/cutoff", .float(1000), changed: false)
                expectApplied(try osc.set("/filter/enabled", .int(1)), "/filter/enabled", .int(1))

                let after = try audio.capture([mix], frames: Capture.captureFrames)
                let reference = CookbookBiquad(kind: .lpf, f0: 1000, q: 0.7071, dbGain: 0, fs: Capture.sampleRate)
                for (high, low) in Capture.expectLowpass1kHz(after, report: "lowpass 1 kHz") {
                    // Tighter: both points on the cookbook response (independent float64 reference).
                    for (frequency, level) in [(4000.0, high), (250.0, low)] {
                        let expected = reference.magnitudeDecibels(atFrequency: frequency, fs: Capture.sampleRate)
                        #expect(abs(level - expected) <= 0.1, "\(frequency) Hz: \(level) dB, cookbook \(expected) dB")
                    }
                }
            }
        }

        @Test("/output/gain -6 measures −6 ± 0.1 dB")
        func outputGain() throws {
            try Rig.run(.process(channels: 2)) { rig in
                let audio = try rig.audio()
                expectApplied(try rig.osc.set("/output/gain", .float(-6)), "/output/gain", .float(-6))
                let captured = try audio.capture([Capture.tone(1000)], frames: Capture.captureFrames)
                for (channel, samples) in captured.enumerated() {
                    let level = Capture.toneLevel(samples, frequency: 1000)
                    report("output gain -6: ch\(channel + 1)", level)
                    #expect(abs(level + 6) <= 0.1, "channel \(channel + 1): \(level) dB")
                }
                #expect(try rig.osc.query("/output/gain") == .float(-6))
            }
        }
    }
}
