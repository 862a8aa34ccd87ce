import Foundation
import SoundFitDSP
import SoundFitTestSupport
import Testing

/// The AVX2/FMA build of the personalization processor's per-sample loops (`SIMDPath.avx2FMA`,
/// the C target CSoundFitSIMD) against the baseline Swift kernels: two processors with the same
/// preset and settings, one per path, over the same long inputs, at every tech level. The C path
/// runs 8-wide (two SIMD4 vectors per 256-bit register); its output goes straight to the channels
/// for a stereo pair without a cross-fade (the noise after its fade-in, the sines' first pair)
/// and through the Swift deinterleave otherwise (the fade-in, the sines' lone third channel), so
/// both outputs are compared here.
///
/// **Tolerance.** FMA rounds `a·b + c` once where the baseline rounds the product and the sum
/// separately, so the two differ in the last bits of every filter update (≈ 1 ulp, 6e-8
/// relative); the recursive filters carry such differences on, and the detectors' control loop
/// turns them into slightly different gains. Measured worst case (24 Nov 2026, 8-wide kernels):
/// 3e-7 / 7e-7 of the peak at tech level 1 (static EQ), 1.1e-5…1.2e-5 on noise and 1.6e-5…1.9e-5
/// on the sines at tech levels 2–4 (the detectors' loop). The bound, 1e-4 of the output peak
/// (−80 dB), keeps a 5× margin, is far below anything audible, and a real fault in the loops fails
/// it by orders of magnitude (dropping one ramp's advance in the C cascade gave 0.4–0.8, dropping the broadband
/// gain's step in its direct output 0.018–0.13).
@Suite("SIMD paths of the personalization processor")
struct SIMDPathTests {
    static let fs = 48000.0

    /// The two paths' outputs for `input` (channels × frames) in blocks of `block` frames.
    static func outputs(techLevel: Int, input: [[Float]], block: Int) throws -> (baseline: [Float], wide: [Float]) {
        var results: [[Float]] = []
        for path in [SIMDPath.baseline, .avx2FMA] {
            let spec = ProcessingSpec(sampleRate: fs, maximumFrameCount: block, channelCount: input.count)
            var processor = PersonalizationProcessor(
                spec: spec, settings: PersonalizationSettings(isEnabled: true, intensity: 1), techLevel: techLevel, simdPath: path)
            #expect(processor.simdPath == path)
            let prepared = Unmanaged.passRetained(
                try PreparedPersonalization(preset: Personalization.n3Preset(techLevel: techLevel), sampleRate: fs, techLevel: techLevel))
            guard case .installed(retired: nil) = processor.install(prepared) else { fatalError("not installed") }
            let buffers = ChannelBuffers(input)
            var start = 0
            while start < input[0].count {
                let n = min(block, input[0].count - start)
                processor.process(buffers.outputs(offset: start), frameCount: n)
                start += n
            }
            processor.removePreset()?.release()
            results.append(buffers.allSamples)
        }
        return (results[0], results[1])
    }

    /// Largest |baseline − wide| relative to the baseline's peak.
    static func relativeDifference(_ a: [Float], _ b: [Float]) -> Double {
        let peak = a.map { Double(abs($0)) }.max()!
        let worst = zip(a, b).map { Double(abs($0 - $1)) }.max()!
        return worst / peak
    }

    @Test("AVX2/FMA equals the baseline within 1e-4 of the peak: 10 s of noise", .enabled(if: SIMDPath.isAVX2FMAAvailable),
          arguments: [1, 2, 3, 4])
    func noise(techLevel: Int) throws {
        let frames = 480_000
        let input = [SignalGenerator.whiteNoise(count: frames, amplitude: 0.3, seed: 11),
                     SignalGenerator.whiteNoise(count: frames, amplitude: 0.05, seed: 12)]
        let (baseline, wide) = try Self.outputs(techLevel: techLevel, input: input, block: 64)
        // Control: the wide path really ran (FMA rounds differently, so not bit-identical).
        #expect(baseline != wide)
        #expect(Self.relativeDifference(baseline, wide) <= 1e-4)
    }

    /// Sines from quiet (expansion) to loud (compression, limiter), odd block sizes (control
    /// periods split across calls) and a lone third channel.
    @Test("AVX2/FMA equals the baseline within 1e-4 of the peak: sines, odd blocks, 3 channels",
          .enabled(if: SIMDPath.isAVX2FMAAvailable), arguments: [1, 2, 3, 4])
    func sines(techLevel: Int) throws {
        let frames = 240_000
        let input = [(1000.0, 0.5), (2950.0, 0.002), (333.0, 0.05)].map { frequency, amplitude in
            (0..<frames).map { Float(amplitude * sin(2 * Double.pi * frequency * Double($0) / Self.fs)) }
        }
        let (baseline, wide) = try Self.outputs(techLevel: techLevel, input: input, block: 37)
        #expect(baseline != wide)
        #expect(Self.relativeDifference(baseline, wide) <= 1e-4)
    }

    @Test("the baseline can be forced; avx2-fma is taken only where the CPU has it")
    func choice() {
        let spec = ProcessingSpec(sampleRate: Self.fs, maximumFrameCount: 64, channelCount: 2)
        #expect(PersonalizationProcessor(spec: spec, simdPath: .baseline).simdPath == .baseline)
        let wide = PersonalizationProcessor(spec: spec, simdPath: .avx2FMA).simdPath
        #expect(wide == (SIMDPath.isAVX2FMAAvailable ? .avx2FMA : .baseline))
        #expect(SIMDPath.preferred.isAvailable)
    }
}
