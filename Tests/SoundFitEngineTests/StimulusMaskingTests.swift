import SoundFitDSP
import SoundFitEngine
import SoundFitModel
import SoundFitTestSupport
import Testing

/// The renderer's masking noise: on the other ear's channels than the tone, continuous through
/// tones and gaps, off on request, only in test mode; a renderer made later takes it.
@Suite struct StimulusMaskingTests {
    static let rate = 48000.0

    private func render(_ driver: inout InMemoryDriver, seconds: Double) -> [[Float]] {
        let frames = Int(seconds * Self.rate)
        let silence = [Float](repeating: 0, count: frames)
        return driver.render([silence, silence]).outputs
    }

    private func level(_ samples: ArraySlice<Float>, re amplitude: Double) -> Double {
        Measurement.decibels(Measurement.rms(samples) / amplitude)
    }

    @Test func theNoiseIsOnTheOtherEarAndStaysOnThroughTonesAndGaps() {
        let engine = AudioEngine()
        var driver = InMemoryDriver(engine: engine, channelCount: 2)
        engine.isInTestMode = true
        _ = render(&driver, seconds: 0.05)
        let noise = MaskingNoise(frequency: 1000, ear: .left, amplitude: 0.05)
        engine.setMasking(noise)
        #expect(engine.masking == noise)
        // 0.5 s of noise alone, a 0.5 s right-ear tone, 0.5 s of gap.
        let before = render(&driver, seconds: 0.5)
        _ = engine.play(ToneStimulus.Tone(frequency: 1000, amplitude: 0.1, ear: .right, seconds: 0.5))
        let during = render(&driver, seconds: 0.5)
        let after = render(&driver, seconds: 0.5)
        #expect(before[1].allSatisfy { $0 == 0 } && after[1].allSatisfy { $0 == 0 },
                "the right ear (the tone's) got the noise")
        // The right ear carries the tone alone: a pure sine of the tone's amplitude.
        let peak = during[1].map(abs).max() ?? 0
        #expect(abs(peak - 0.1) < 0.001, "tone peak \(peak)")
        let settle = Int(0.05 * Self.rate)
        for (name, part) in [("before", before[0][settle...]), ("during", during[0][0...]), ("after", after[0][0...])] {
            let measured = level(part, re: 0.05)
            print("measured: masking noise \(name) the tone = \(String(format: "%+.2f", measured)) dB re target")
            #expect(abs(measured) <= 1, "noise \(name) the tone: \(measured) dB")
        }
        // Continuous across the tone's onset and end: no 5 ms window without noise.
        let joined = before[0] + during[0] + after[0]
        let window = Int(0.005 * Self.rate)
        for start in stride(from: settle, to: joined.count - window, by: window) {
            #expect(Measurement.rms(joined[start..<(start + window)]) > 0.01, "noise gap at frame \(start)")
        }

        engine.setMasking(nil)
        #expect(engine.masking == nil)
        let off = render(&driver, seconds: 0.2)
        let ramp = Int(NarrowBandNoise.rampSeconds * Self.rate)
        #expect(off[0][..<64].contains { $0 != 0 }, "the noise was cut, not ramped down")
        #expect(off[0][(ramp + 256)...].allSatisfy { $0 == 0 }, "the noise did not stop")
    }

    @Test func theNoisePlaysOnlyInTestModeAndANewRendererTakesTheSetting() {
        let engine = AudioEngine()
        var driver = InMemoryDriver(engine: engine, channelCount: 2)
        engine.setMasking(MaskingNoise(frequency: 2000, ear: .right, amplitude: 0.05))
        let normal = render(&driver, seconds: 0.2)
        #expect(normal[1].allSatisfy { $0 == 0 }, "masking noise outside test mode")
        engine.isInTestMode = true
        let on = render(&driver, seconds: 1)
        #expect(on[0].allSatisfy { $0 == 0 })
        #expect(abs(level(on[1][Int(0.1 * Self.rate)...], re: 0.05)) <= 1)
        // A renderer made later (a new session) takes the setting in force.
        var later = InMemoryDriver(engine: engine, sampleRate: 96000, channelCount: 2)
        let frames = 96000
        let silence = [Float](repeating: 0, count: frames)
        let rendered = later.render([silence, silence]).outputs
        #expect(abs(Measurement.decibels(Measurement.rms(rendered[1][9600...]) / 0.05)) <= 1,
                "the masking setting did not reach a renderer made after it")
        engine.setMasking(nil)
        engine.isInTestMode = false
    }
}
