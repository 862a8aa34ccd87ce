import CSoundFitSIMD

/// Which build of the personalization processor's and the biquad's (`BiquadFilter`) per-sample
/// loops runs: the baseline Swift kernels (`PersonalizationKernels`, `FilterLoops`,
/// baseline x86-64 SSE2, any CPU) or 256-bit kernels compiled for AVX2 and FMA in the C target
/// `CSoundFitSIMD`, which run only on CPUs that have both. The two agree within float tolerance
/// (FMA rounds `a·b + c` once instead of twice); `SIMDPathTests` and `BiquadSIMDPathTests`
/// compare them.
///
/// Chosen once per processor at set-up, off the audio thread.
public enum SIMDPath: String, Sendable, CaseIterable {
    case baseline
    case avx2FMA = "avx2-fma"

    /// The environment variable that forces a path: `baseline`, `avx2-fma` or `auto` (unset:
    /// `auto`, the widest this CPU runs).
    public static var environmentVariable: String { "SOUNDFIT_SIMD" }

    /// True when this CPU executes AVX2 and FMA instructions.
    public static let isAVX2FMAAvailable: Bool = soundfit_simd_has_avx2_fma() == 1

    /// True when this CPU can run the path.
    public var isAvailable: Bool { self == .baseline || Self.isAVX2FMAAvailable }

    /// The path processors use unless told otherwise: `SOUNDFIT_SIMD` if it names a path this CPU
    /// runs, else the widest available.
    public static let preferred: SIMDPath = environmentChoice.path

    /// Why `SOUNDFIT_SIMD` was not followed (an unknown value, or a path this CPU cannot run),
    /// for the log; nil when it was or is unset.
    public static let environmentProblem: String? = environmentChoice.problem

    private static let environmentChoice: (path: SIMDPath, problem: String?) = {
        let widest: SIMDPath = isAVX2FMAAvailable ? .avx2FMA : .baseline
        guard let value = libcEnvironment(environmentVariable), value != "auto", !value.isEmpty else { return (widest, nil) }
        guard let path = SIMDPath(rawValue: value) else {
            return (widest, "\(environmentVariable)=\(value) is not one of auto, baseline, avx2-fma; using \(widest.rawValue)")
        }
        guard path.isAvailable else {
            return (widest, "\(environmentVariable)=\(value): this CPU lacks AVX2 or FMA; using \(widest.rawValue)")
        }
        return (path, nil)
    }()

    /// `self` if this CPU runs it (and the C kernels' view of the memory matches Swift's), else
    /// the baseline.
    var runnable: SIMDPath { isAvailable && Self.layoutMatches ? self : .baseline }

    /// True when `SectionRamp` and `BandState` are laid out as the C kernels declare them (nine
    /// SIMD4 fields each, in declaration order; see CSoundFitSIMD.h).
    static let layoutMatches: Bool =
        MemoryLayout<SectionRamp>.stride == 9 * 16 && MemoryLayout<SectionRamp>.offset(of: \.dh2) == 6 * 16
            && MemoryLayout<SectionRamp>.offset(of: \.sections) == 7 * 16 && MemoryLayout<SectionRamp>.offset(of: \.lanes) == 8 * 16
            && MemoryLayout<BandState>.stride == 9 * 16 && MemoryLayout<BandState>.offset(of: \.sum1) == 3 * 16
            && MemoryLayout<BandState>.offset(of: \.sum2) == 4 * 16
}

// The C kernels, trusted by the `@_noLocks` checks like the libm wrappers (LibM.swift): the
// compiler cannot see into C bodies; these are plain arithmetic on the caller's memory. Only
// called when `SIMDPath.isAVX2FMAAvailable`.

/// `PersonalizationKernels.interleave` of the pair `first`/`second` into `slot`, then
/// `analyze2/analyze1` over all `bandVectors`, AVX2/FMA build.
@_semantics("no_performance_analysis") @inline(never)
func simdAnalyzeAVX2FMA(_ first: UnsafePointer<Float>, _ second: UnsafePointer<Float>?,
                        into slot: UnsafeMutablePointer<SIMD4<Float>>, count: Int, bandVectors: Int, period: Int,
                        filters: UnsafePointer<SIMD4<Float>>, states: UnsafeMutablePointer<SIMD4<Float>>,
                        weights: UnsafePointer<SIMD4<Float>>, detectors: UnsafeMutablePointer<BandState>) {
    soundfit_simd_analyze_avx2_fma(first, second, slot, count, bandVectors, period, filters, states, weights, detectors)
}

/// `PersonalizationKernels.cascade`, AVX2/FMA build, in place in `slot`; or, with `outputs` (the
/// pair's two channels and its broadband gain and step), straight to the channels as
/// `PersonalizationKernels.deinterleave` without a cross-fade writes them.
@_semantics("no_performance_analysis") @inline(never)
func simdCascadeAVX2FMA(_ slot: UnsafeMutablePointer<SIMD4<Float>>, count: Int, vectors: Int,
                        ramps: UnsafeMutablePointer<SectionRamp>, states: UnsafeMutablePointer<SIMD4<Float>>,
                        outputs: (first: UnsafeMutablePointer<Float>, second: UnsafeMutablePointer<Float>,
                                  broadband: UnsafeMutablePointer<SIMD4<Float>>)? = nil) {
    soundfit_simd_cascade_avx2_fma(slot, count, vectors, ramps, states, outputs?.first, outputs?.second, outputs?.broadband)
}
