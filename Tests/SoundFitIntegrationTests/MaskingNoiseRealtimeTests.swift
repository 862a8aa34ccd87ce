import CAllocationCounter
import CRealtimeSupport
import Foundation
import SoundFit
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// The masking noise is rendered in the process callback: it must allocate nothing there,
    /// through level changes, band and ear switches, on/off, tones and a sample-rate change.
    @Suite("Masking noise real-time safety") struct MaskingNoiseRealtime {
        /// The settings the tests cycle through: levels, bands, ears, off.
        static let settings: [MaskingNoise?] = [
            MaskingNoise(frequency: 1000, ear: .right, amplitude: 0.02),
            MaskingNoise(frequency: 1000, ear: .right, amplitude: 0.08),
            MaskingNoise(frequency: 4000, ear: .right, amplitude: 0.05),
            nil,
            MaskingNoise(frequency: 250, ear: .left, amplitude: 0.03),
            MaskingNoise(frequency: 8000, ear: .right, amplitude: 0.01),
        ]

        @Test("No heap calls in the engine's renderer over ≥ 2000 cycles of masking changes, tones and a rate change", .optimizedCodeOnly)
        func noHeapCallsInTheRenderer() {
            soundfit_allocation_counter_install()
            let engine = AudioEngine()
            let channels = 2, frames = 256
            var renderer = engine.makeRenderer(spec: ProcessingSpec(sampleRate: 48000, maximumFrameCount: 1024, channelCount: channels))
            let storage = UnsafeMutablePointer<Float>.allocate(capacity: 2 * channels * frames)
            storage.initialize(repeating: 0, count: 2 * channels * frames)
            let inputs = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: channels)
            let outputs = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: channels)
            defer {
                storage.deallocate()
                inputs.deallocate()
                outputs.deallocate()
            }
            for channel in 0..<channels {
                inputs[channel] = UnsafePointer(storage + channel * frames)
                outputs[channel] = storage + (channels + channel) * frames
            }
            engine.isInTestMode = true
            var noisePower = 0.0
            let before = AllocationCounts.now()
            for cycle in 0..<2400 {
                // Control side, outside the section (publishing may allocate there).
                if cycle % 40 == 0 { engine.setMasking(Self.settings[(cycle / 40) % Self.settings.count]) }
                if cycle % 150 == 0 {
                    _ = engine.play(ToneStimulus.Tone(frequency: 1000, amplitude: 0.1, ear: .left, seconds: 0.3))
                }
                soundfit_realtime_section_enter()
                if cycle == 1200 { renderer.setSampleRate(96000) }
                renderer.render(inputs: inputs, outputs: outputs, frameCount: frames)
                soundfit_realtime_section_leave()
                for frame in 0..<frames { noisePower += Double(outputs[1][frame]) * Double(outputs[1][frame]) }
            }
            let heapCalls = before.untilNow().realtimeHeapCalls
            engine.setMasking(nil)
            engine.isInTestMode = false
            report("realtime heap calls rendering the masking noise (renderer)", Double(heapCalls), unit: "calls")
            #expect(heapCalls == 0, "heap calls in the renderer while the masking noise played")
            #expect(noisePower > 1, "the masking noise did not play (power \(noisePower))")
        }

        @Test("No heap calls on the JACK thread while the masking noise plays beside tones in test mode", .optimizedCodeOnly)
        func noHeapCallsThroughJack() throws {
            let rig = try Rig.start(.inProcess(clientName: "sfrtmask", label: "soundfit.integration.realtime.masking",
                                               waitForSession: true))
            defer { rig.stop() }
            let (engine, audio) = (rig.engine, rig.audio)
            let before = AllocationCounts.now()
            let startCycles = engine.cycleCount
            engine.isInTestMode = true
            var step = 0
            let deadline = ContinuousClock.now + .seconds(30)
            // At a 64-frame period, 40 ms is ~30 cycles: each setting is rendered (and ramped).
            while engine.cycleCount - startCycles < 2000 && ContinuousClock.now < deadline {
                engine.setMasking(Self.settings[step % Self.settings.count])
                if step % 3 == 0 { _ = engine.play(ToneStimulus.Tone(frequency: 2000, amplitude: 0.1, ear: .left, seconds: 0.1)) }
                step += 1
                try audio.waitForAudio(seconds: 0.04)
            }
            // A steady setting to measure: noise on the right, the tone on the left.
            engine.setMasking(MaskingNoise(frequency: 1000, ear: .right, amplitude: 0.05))
            // Long enough for a capture repeated after xruns (up to five one-second attempts).
            _ = engine.play(ToneStimulus.Tone(frequency: 1000, amplitude: 0.1, ear: .left, seconds: 10))
            let captured = try audio.capture([[0]], frames: 48000)
            engine.stopTone()
            let cycles = engine.cycleCount - startCycles
            engine.setMasking(nil)
            engine.isInTestMode = false
            let counted = rig.stopAndCount(since: before)
            report("realtime heap calls with the masking noise through JACK", Double(counted.realtimeHeapCalls), unit: "calls")
            report("process cycles with the masking noise", Double(cycles), unit: "cycles")
            #expect(counted.realtimeHeapCalls == 0, "heap calls inside the JACK process callback with the masking noise")
            #expect(cycles >= 1000 && counted.sectionsEntered >= 1000)
            let noise = Measurement.decibels(Measurement.rms(captured[1][4800...]) / 0.05)
            report("masking noise through JACK re target", noise, unit: "dB")
            #expect(abs(noise) <= 1, "right-ear noise \(noise) dB re target")
            // The median over 48 ms blocks (48 whole periods each): an xrun kept in the last
            // capture breaks the tone's phase in one block, which a whole-window DFT reads as a
            // level loss of several dB.
            let blocks = stride(from: 4800, to: 43200, by: 2304).map {
                Spectrum.toneAmplitude(captured[0][$0..<($0 + 2304)], frequency: 1000, sampleRate: 48000)
            }.sorted()
            let tone = blocks[blocks.count / 2]
            #expect(abs(Measurement.decibels(tone / 0.1)) <= 0.5,
                    "left-ear tone \(tone), left RMS \(Measurement.rms(captured[0])), right RMS \(Measurement.rms(captured[1]))")
        }

        /// A hearing test of a dead left ear beside a normal right one presents masked trials (the
        /// procedure masks the right ear while re-measuring the left); none may allocate on the
        /// JACK thread.
        @Test("No heap calls on the JACK thread during a hearing test with masked trials", .optimizedCodeOnly)
        func noHeapCallsDuringMaskedHearingTest() throws {
            let rig = try Rig.start(.inProcess(clientName: "sfrtmht", label: "soundfit.integration.realtime.maskedtest",
                                               waitForSession: true))
            defer { rig.stop() }
            let (engine, osc) = (rig.engine, rig.osc)
            let config = try osc.ask("/test/config", HearingTestThroughJack.fastTiming, reply: "/test/config")
            #expect(config.address == "/test/config", "\(config)")
            let listener = try VirtualListener(
                server: rig.server.name, soundfitClient: "sfrtmht", oscPort: rig.soundfit.socket.boundPeer.port,
                listener: SimulatedListener(thresholds: [.left: [(1000, 110)], .right: [(1000, 0)]], lapses: 0),
                calibration: ToneCalibration(fullScaleSPL: PresetGenerator.defaultCalibration),
                responseWindowSeconds: HearingTestThroughJack.responseWindowSeconds, name: "sfrtmhtlistener", seed: 5)
            defer { listener.stop() }
            let before = AllocationCounts.now()
            osc.sendRaw(OSCWire.encode(OSCTestMessage("/test/start", [.string("both"), .float(1000)])))
            var sawMasking = false, ended = false
            let deadline = ContinuousClock.now + .seconds(180)
            while !ended && ContinuousClock.now < deadline {
                if engine.masking != nil { sawMasking = true }
                // Watching the engine meanwhile.
                ended = osc.collect(for: .milliseconds(50)).contains {  // polls a condition (with a deadline)
                    $0.address == "/test/state" && ["done", "cancelled", "failed"].contains($0.string(0) ?? "")
                }
            }
            let heapCalls = before.untilNow().realtimeHeapCalls
            report("realtime heap calls during a masked hearing test", Double(heapCalls), unit: "calls")
            #expect(ended, "the test did not end")
            #expect(sawMasking, "no masked trial")
            #expect(listener.presentations.contains { $0.maskingLevel != nil }, "the listener measured no masking")
            #expect(heapCalls == 0, "heap calls inside the JACK process callback during masked trials")
        }
    }
}
