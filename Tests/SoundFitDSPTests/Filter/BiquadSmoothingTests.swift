import Foundation
import SoundFitDSP
import SoundFitTestSupport
import Testing

@Suite("BiquadFilter: smoothing")
struct BiquadSmoothingTests {
    static let spec = ProcessingSpec(sampleRate: 48000, maximumFrameCount: 256, channelCount: 2)

    static func coefficientError(_ a: BiquadCoefficients, _ b: BiquadCoefficients) -> Double {
        [abs(a.b0 - b.b0), abs(a.b1 - b.b1), abs(a.b2 - b.b2), abs(a.a1 - b.a1), abs(a.a2 - b.a2)].max()!
    }

    /// A cutoff move takes 20 ms (60 segments of 16 samples at 48 kHz), then the filter is steady
    /// on exactly the target design.
    @Test("a move lasts 20 ms and ends on the target design")
    func moveDuration() {
        var filter = BiquadFilter(spec: Self.spec, settings: FilterSettings(isEnabled: true, type: .lowpass, cutoff: 1000))
        let noise = ChannelBuffers([SignalGenerator.whiteNoise(count: 2000, seed: 1), SignalGenerator.whiteNoise(count: 2000, seed: 2)])
        filter.process(noise.outputs, frameCount: 100)
        let before = filter.isSmoothing
        #expect(!before)
        filter.apply(FilterSettings(isEnabled: true, type: .lowpass, cutoff: 2000, q: 2))
        filter.process(noise.outputs(offset: 100), frameCount: 944)
        let midway = filter.isSmoothing
        #expect(midway)
        let target = BiquadCoefficients.rbj(type: .lowpass, cutoff: 2000, q: 2, gain: 0, sampleRate: 48000)
        let notYet = Self.coefficientError(filter.currentCoefficients, target)
        #expect(notYet > 1e-6)
        filter.process(noise.outputs(offset: 1044), frameCount: 17)   // segment 60 ends, then steady
        let after = filter.isSmoothing
        #expect(!after)
        let landed = Self.coefficientError(filter.currentCoefficients, target)
        #expect(landed < 1e-9)
    }

    /// The gain is not part of a low-pass response: changing it starts no move (and no
    /// coefficient redesigns).
    @Test("a gain change on a type without gain starts no move")
    func irrelevantGain() {
        var filter = BiquadFilter(spec: Self.spec, settings: FilterSettings(isEnabled: true, type: .lowpass, cutoff: 1000))
        let noise = ChannelBuffers([SignalGenerator.whiteNoise(count: 64, seed: 1), SignalGenerator.whiteNoise(count: 64, seed: 2)])
        filter.apply(FilterSettings(isEnabled: true, type: .lowpass, cutoff: 1000, gain: 12))
        filter.process(noise.outputs, frameCount: 1)
        let moving = filter.isSmoothing
        #expect(!moving)
        // A later switch to a peak uses the new gain.
        filter.apply(FilterSettings(isEnabled: true, type: .peak, cutoff: 1000, gain: 12))
        filter.process(noise.outputs, frameCount: 64)
        let buffers = ChannelBuffers([[Float](repeating: 0, count: 1024), [Float](repeating: 0, count: 1024)])
        filter.process(buffers.outputs, frameCount: 1024)
        let design = BiquadCoefficients.rbj(type: .peak, cutoff: 1000, q: Double(Float(0.7071)), gain: 12, sampleRate: 48000)
        #expect(Self.coefficientError(filter.currentCoefficients, design) < 1e-9)
    }

    /// A disabled filter's settings can change freely; enabling starts on them (no move from the
    /// old values) and fades in from the dry signal over 10 ms.
    @Test("enabling starts on the current settings and fades in")
    func enableFadesIn() {
        var filter = BiquadFilter(spec: Self.spec, settings: FilterSettings(isEnabled: false, type: .lowpass, cutoff: 1000))
        filter.apply(FilterSettings(isEnabled: false, type: .highpass, cutoff: 3000))
        let dc = [Float](repeating: 0.5, count: 1200)
        let buffers = ChannelBuffers([dc, dc])
        filter.process(buffers.outputs, frameCount: 100)
        let bypassed = filter.isBypassed
        #expect(bypassed)
        #expect(buffers.channel(0)[0..<100].allSatisfy { $0 == 0.5 })
        filter.apply(FilterSettings(isEnabled: true, type: .highpass, cutoff: 3000))
        filter.process(buffers.outputs(offset: 100), frameCount: 1100)
        let out = buffers.channel(1)
        // High-pass on DC: the filtered part decays quickly; the output starts at the dry value
        // and leaves it gradually (no step), ending near zero after the fade.
        #expect(abs(out[100] - 0.5) < 0.01)
        #expect(SignalGenerator.maximumJump(out) < 0.02)
        #expect(abs(out[1199]) < 1e-4)
        let design = BiquadCoefficients.rbj(type: .highpass, cutoff: 3000, q: Double(Float(0.7071)), gain: 0, sampleRate: 48000)
        #expect(Self.coefficientError(filter.currentCoefficients, design) < 1e-9)
    }
}
