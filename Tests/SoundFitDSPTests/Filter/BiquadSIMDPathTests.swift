import Foundation
import SoundFitDSP
import SoundFitTestSupport
import Testing

/// The AVX2/FMA build of the biquad's per-sample loops (`SIMDPath.avx2FMA`, biquad_kernels.c in
/// CSoundFitSIMD) against the baseline Swift loops (`FilterLoops`): two filters with the same
/// settings, one per path, over the same 10 s of white noise on 1, 2, 3, 5 and 8 channels (one
/// group, a partial group, a pair with a partial second group, a full pair), in 64-frame blocks,
/// odd 37-frame blocks, and odd 301-frame blocks (longer than the 256-frame scratch, so calls run
/// in pieces). Mid-stream the cutoff sweeps over four octaves (a new target every block, so the
/// moving loop runs for seconds), and the filter is disabled and enabled again (the wet fades).
///
/// **Tolerance.** FMA rounds `a·b + c` once where the baseline rounds twice, so every update
/// differs in the last bits (≈ 1 ulp); the recursion carries that on, most at low cutoffs and
/// high Q. Measured worst case (24 Nov 2026, AMD EPYC) over every type, channel count and block
/// size: 3.1e-7 of the peak (−130 dB). The bound, 3e-6 of the output peak, keeps a 10× margin; a
/// real fault fails it by orders of magnitude (ignoring the wet level in the C moving loop gave
/// 0.3–1.3).
@Suite("SIMD paths of the biquad")
struct BiquadSIMDPathTests {
    static let fs = 48000.0
    static let frames = 480_000
    /// Largest |baseline − avx2-fma| allowed, relative to the baseline's output peak.
    static let bound = 3e-6

    /// The settings each run starts from.
    static let cases: [FilterSettings] = [
        FilterSettings(isEnabled: true, type: .lowpass, cutoff: 300, q: 0.7071),
        FilterSettings(isEnabled: true, type: .highpass, cutoff: 2000, q: 2),
        FilterSettings(isEnabled: true, type: .bandpass, cutoff: 1000, q: 4),
        FilterSettings(isEnabled: true, type: .peak, cutoff: 700, q: 1.5, gain: 9),
        FilterSettings(isEnabled: true, type: .lowshelf, cutoff: 120, q: 0.9, gain: -8),
        FilterSettings(isEnabled: true, type: .highshelf, cutoff: 5000, q: 0.7071, gain: 6),
    ]

    /// The settings in force from frame `frame` on: the start settings, then (3…4 s) the cutoff
    /// sweeping up four octaves, then (6 s) disabled, then (6.5 s) enabled again.
    static func settings(_ start: FilterSettings, atFrame frame: Int) -> FilterSettings {
        var settings = start
        let seconds = Double(frame) / fs
        if seconds >= 3 { settings.cutoff = start.cutoff * Float(pow(2, 4 * min(seconds - 3, 1))) }
        if seconds >= 6 && seconds < 6.5 { settings.isEnabled = false }
        return settings
    }

    /// The outputs of a filter on `path` for `input` (channels × frames) in blocks of `block`.
    static func output(_ start: FilterSettings, path: SIMDPath, input: [[Float]], block: Int) -> [Float] {
        let spec = ProcessingSpec(sampleRate: fs, maximumFrameCount: max(block, 64), channelCount: input.count)
        var filter = BiquadFilter(spec: spec, settings: start, simdPath: path)
        #expect(filter.simdPath == path)
        let buffers = ChannelBuffers(input)
        var frame = 0
        while frame < input[0].count {
            let n = min(block, input[0].count - frame)
            filter.apply(settings(start, atFrame: frame))
            filter.process(buffers.outputs(offset: frame), frameCount: n)
            frame += n
        }
        return buffers.allSamples
    }

    /// Largest |baseline − wide| relative to the baseline's peak.
    static func relativeDifference(_ a: [Float], _ b: [Float]) -> Double {
        let peak = a.map { Double(abs($0)) }.max()!
        let worst = zip(a, b).map { Double(abs($0 - $1)) }.max()!
        return worst / peak
    }

    @Test("AVX2/FMA equals the baseline within 3e-6 of the peak: 10 s of noise, cutoff sweep, bypass fades",
          .enabled(if: SIMDPath.isAVX2FMAAvailable), arguments: [1, 2, 3, 5, 8], [64, 37, 301])
    func noise(channelCount: Int, block: Int) {
        let input = (0..<channelCount).map {
            SignalGenerator.whiteNoise(count: Self.frames, amplitude: 0.5 / Double($0 + 1), seed: UInt64(20 + $0))
        }
        var worst = 0.0, worstType = ""
        for start in Self.cases {
            let baseline = Self.output(start, path: .baseline, input: input, block: block)
            let wide = Self.output(start, path: .avx2FMA, input: input, block: block)
            // Control: the wide path really ran (FMA rounds differently, so not bit-identical).
            #expect(baseline != wide, "\(start.type.name)")
            let difference = Self.relativeDifference(baseline, wide)
            #expect(difference <= Self.bound, "\(start.type.name)")
            if difference > worst { (worst, worstType) = (difference, start.type.name) }
        }
        report("biquad avx2-fma vs baseline, \(channelCount) ch, \(block)-frame blocks: worst \(worst) of the peak (\(worstType))")
    }

    @Test("the baseline can be forced; avx2-fma is taken only where the CPU has it")
    func choice() {
        let spec = ProcessingSpec(sampleRate: Self.fs, maximumFrameCount: 64, channelCount: 2)
        #expect(BiquadFilter(spec: spec, simdPath: .baseline).simdPath == .baseline)
        #expect(BiquadFilter(spec: spec, simdPath: .avx2FMA).simdPath == (SIMDPath.isAVX2FMAAvailable ? .avx2FMA : .baseline))
        #expect(BiquadFilter(spec: spec).simdPath == SIMDPath.preferred)
    }
}
