import SoundFitDSP
import SoundFitEngine
import SoundFitModel
import SoundFitTestSupport
import Testing

/// The renderer's hearing-test mode: the tone alone on the tested ear, the input ignored, a
/// fade in and out of the mode, the output safety limit in force, the onset reported.
@Suite struct StimulusTests {
    static let rate = 48000.0

    private func render(_ driver: inout InMemoryDriver, _ input: [Float], blocks: Int) -> [[Float]] {
        let frames = blocks * driver.blockSize
        let samples = (0..<frames).map { input.isEmpty ? Float(0) : input[$0 % input.count] }
        return driver.render([samples, samples]).outputs
    }

    @Test func inTestModeOnlyTheToneOnItsEarPlaysAndItsOnsetIsReported() {
        let engine = AudioEngine()
        var driver = InMemoryDriver(engine: engine, channelCount: 2)
        let music = SignalGenerator.multiTone(frequencies: [300, 3000], amplitude: 0.3, sampleRate: Self.rate,
                                              count: 4800, seed: 2)
        // Normal mode: the input passes.
        let before = render(&driver, music, blocks: 4)
        #expect(before[0] == Array(music[0..<1024]), "the input does not pass outside test mode")
        engine.isInTestMode = true
        // The fade (10 ms) out of the chain's output.
        let fading = render(&driver, music, blocks: 4)
        let fadeEnd = Int(0.01 * Self.rate) + 256
        #expect(fading[0][fadeEnd...].allSatisfy { $0 == 0 }, "the input still plays in test mode")
        #expect(fading[0][0..<64].contains { $0 != 0 }, "no fade: the output was cut")

        let number = engine.play(ToneStimulus.Tone(frequency: 1000, amplitude: 0.1, ear: .right, seconds: 0.2))
        #expect(!engine.hasStarted(tone: number))
        let tone = render(&driver, music, blocks: 50)
        #expect(engine.hasStarted(tone: number))
        #expect(tone[0].allSatisfy { $0 == 0 }, "the left ear got something during a right-ear tone")
        let peak = tone[1].map(abs).max() ?? 0
        #expect(abs(peak - 0.1) < 0.001, "tone peak \(peak)")
        // The tone starts at the first frame of its cycle (the ramp starts from 0) and ends.
        #expect(tone[1][0] == 0 && tone[1][1] != 0)
        let length = Int(0.2 * Self.rate)
        #expect(tone[1][length...].allSatisfy { $0 == 0 })

        // Leaving fades the input back in.
        engine.isInTestMode = false
        let back = render(&driver, music, blocks: 8)
        // It starts one fade step (1/480 at 48 kHz) above silence: no jump (the two tones peak below 0.6).
        #expect(abs(back[0][0]) <= 0.6 / 480, "the input came back with a jump: \(back[0][0])")
        #expect(back[0].suffix(256).contains { $0 != 0 }, "the input did not come back")
    }

    @Test func theOutputSafetyLimitHoldsInTestMode() {
        let engine = AudioEngine()
        engine.setOutputCeiling(0.05)
        engine.isInTestMode = true
        var driver = InMemoryDriver(engine: engine, channelCount: 2)
        _ = render(&driver, [], blocks: 4)
        _ = engine.play(ToneStimulus.Tone(frequency: 1000, amplitude: 0.5, ear: .left, seconds: 0.3))
        let output = render(&driver, [], blocks: 60)
        let peak = output[0].map(abs).max() ?? 0
        #expect(peak <= 0.05 && peak > 0.04, "peak \(peak) with a 0.05 ceiling")
        #expect(engine.takeOutputLimitReduction() > 15)
    }

    @Test func stopEndsTheToneAtTheNextCycle() {
        let engine = AudioEngine()
        engine.isInTestMode = true
        var driver = InMemoryDriver(engine: engine, channelCount: 2)
        _ = render(&driver, [], blocks: 4)
        _ = engine.play(ToneStimulus.Tone(frequency: 500, amplitude: 0.1, ear: .left, seconds: 2))
        let playing = render(&driver, [], blocks: 20)
        #expect(playing[0].suffix(256).contains { $0 != 0 })
        engine.stopTone()
        let stopped = render(&driver, [], blocks: 4)
        #expect(stopped[0].allSatisfy { $0 == 0 })
    }
}
