import Foundation
import SoundFit
import SoundFitTestSupport
import Testing

extension SoundFitIntegration {
    /// The masking noise through JACK, heard by the virtual listener: its level in dB EM as the
    /// listener measures it, and the listener's cross-hearing (a dead ear's tone heard by the
    /// other cochlea, masked away by noise there; over-masking by noise crossing back).
    ///
    /// The engine runs in this process and is driven directly (test mode, masking, tones), so
    /// these tests need no masking procedure; the hearing test's own masked trials are
    /// tested with this listener through the procedure.
    @Suite("Masking noise and cross-hearing through JACK") struct MaskingCrossHearing {
        static let calibration = ToneCalibration(fullScaleSPL: PresetGenerator.defaultCalibration)

        /// Waits until the engine rendered `seconds` of audio, counted in its JACK cycles: the
        /// event a stalled server does not fake (a wall-clock sleep counts time no cycle ran in).
        private func waitForAudio(_ rig: InProcessRealtimeRig, seconds: Double) throws {
            let cycles = UInt64((seconds * rig.audio.sampleRate / Double(rig.server.period)).rounded(.up))
            let start = rig.engine.cycleCount
            let deadline = ContinuousClock.now + .seconds(10 + seconds)
            while rig.engine.cycleCount - start < cycles {
                guard ContinuousClock.now < deadline else {
                    throw IntegrationError("JACK cycles stopped: \(rig.engine.cycleCount - start) of \(cycles)")
                }
                Thread.sleep(forTimeInterval: 0.005)  // polls a condition (with a deadline)
            }
        }

        /// Plays `tone` dB HL at 1 kHz in `ear` with `masking` dB EM at 1 kHz in the other ear
        /// (nil: none) and returns what the listener measured of it.
        private func present(_ level: Double, ear: ToneStimulus.Ear, masking: Double?, rig: InProcessRealtimeRig,
                             listener: VirtualListener) throws -> VirtualListener.Presentation {
            let frequency = 1000.0
            let other: ToneStimulus.Ear = ear == .left ? .right : .left
            rig.engine.setMasking(masking.map {
                MaskingNoise(frequency: frequency, ear: other,
                             amplitude: Self.calibration.maskingAmplitude(effectiveMasking: $0, frequency: frequency))
            })
            // The noise ramps in over 25 ms after the next cycle, and the listener measures it over
            // the 0.75 s before each tone's analysis: 1 s of audio.
            try waitForAudio(rig, seconds: 1.0)
            let before = listener.presentations.count
            let number = rig.engine.play(ToneStimulus.Tone(
                frequency: frequency, amplitude: Self.calibration.amplitude(hearingLevel: level, frequency: frequency),
                ear: ear, seconds: 0.3))
            let deadline = ContinuousClock.now + .seconds(5)
            while listener.presentations.count == before {
                guard ContinuousClock.now < deadline else {
                    throw IntegrationError("the listener measured no tone (tone \(number) started: "
                        + "\(rig.engine.hasStarted(tone: number)); presentations: \(listener.presentations); "
                        + "not tones: \(listener.rejectedSounds.suffix(4)))")
                }
                Thread.sleep(forTimeInterval: 0.01)  // polls a condition (with a deadline)
            }
            // Let the tone end (and its 10 ms of silence pass) before the next one.
            try waitForAudio(rig, seconds: 0.45)
            return listener.presentations[before]
        }

        @Test("A dead ear's tone is heard by the other cochlea unmasked, not with 50 dB EM there; noise crossing back over-masks")
        func crossHearingAndMasking() throws {
            let rig = try Rig.start(.inProcess(clientName: "sfmaskx", label: "soundfit.integration.masking",
                                               waitForSession: true))
            defer { rig.stop() }
            // Left dead (110 dB HL), right normal (0 dB HL); steep, no lapses: answers are certain.
            let simulated = SimulatedListener(thresholds: [.left: [(1000, 110)], .right: [(1000, 0)]], slope: 2, lapses: 0)
            let listener = try VirtualListener(
                server: rig.server.name, soundfitClient: "sfmaskx", oscPort: rig.soundfit.socket.boundPeer.port,
                listener: simulated, calibration: Self.calibration, responseWindowSeconds: 0.4, name: "sfmasklistener",
                seed: 1, interauralAttenuation: 40)
            defer { listener.stop() }
            rig.engine.isInTestMode = true
            defer {
                rig.engine.setMasking(nil)
                rig.engine.isInTestMode = false
            }
            // 60 dB HL in the dead left ear: the right cochlea gets 20 dB HL, above its threshold.
            let unmasked = try present(60, ear: .left, masking: nil, rig: rig, listener: listener)
            // The same with 50 dB EM in the right ear: its cochlea's threshold rises to 50.
            let masked = try present(60, ear: .left, masking: 50, rig: rig, listener: listener)
            // 30 dB HL in the normal right ear with 80 dB EM in the left: 40 dB EM crosses back.
            let overMasked = try present(30, ear: .right, masking: 80, rig: rig, listener: listener)
            // The same tone with 60 dB EM: 20 dB EM crosses back, the tone is 10 dB above it.
            let plateau = try present(30, ear: .right, masking: 60, rig: rig, listener: listener)
            for (name, presentation, level, masking) in [
                ("unmasked", unmasked, 60.0, nil), ("masked", masked, 60, 50), ("over-masked", overMasked, 30, 80),
                ("plateau", plateau, 30, 60),
            ] as [(String, VirtualListener.Presentation, Double, Double?)] {
                report("\(name): tone measured − presented", presentation.level - level, unit: "dB")
                #expect(abs(presentation.level - level) <= 1, "\(name): tone \(presentation.level) dB HL")
                #expect(presentation.frequency == 1000)
                if let masking {
                    let measured = presentation.maskingLevel ?? -.infinity
                    report("\(name): masking measured − presented", measured - masking, unit: "dB")
                    #expect(abs(measured - masking) <= 1, "\(name): masking \(measured) dB EM, presented \(masking)")
                } else {
                    #expect(presentation.maskingLevel == nil, "\(name): noise measured where none played")
                }
            }
            #expect(unmasked.ear == .left && unmasked.pressed, "the shadow (cross-heard) tone was not heard")
            #expect(masked.ear == .left && !masked.pressed, "the masked shadow tone was heard")
            #expect(overMasked.ear == .right && !overMasked.pressed, "over-masking did not raise the test ear's threshold")
            #expect(plateau.ear == .right && plateau.pressed, "a tone 10 dB above the crossed-over noise was not heard")
            // The model, directly: the probabilities the presses were drawn from.
            #expect(listener.probabilityOfHeard(.left, frequency: 1000, level: 60) > 0.99)
            #expect(listener.probabilityOfHeard(.left, frequency: 1000, level: 60, masking: [.right: 50]) < 0.01)
            #expect(listener.probabilityOfHeard(.right, frequency: 1000, level: 30, masking: [.left: 80]) < 0.01)
            #expect(listener.probabilityOfHeard(.left, frequency: 1000, level: 115) > 0.99, "the dead ear itself at 115")
        }
    }
}
