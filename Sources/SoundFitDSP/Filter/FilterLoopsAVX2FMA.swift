import CSoundFitSIMD

// The AVX2/FMA build of `BiquadFilter`'s per-sample loops (`SIMDPath.avx2FMA`): C functions in
// CSoundFitSIMD (biquad_kernels.c) that run `BiquadFilter.runGroups` with the loops of
// `FilterLoops`, line for line, over the same states and scratch, a pair of four-channel groups
// per 256-bit vector. Trusted by the `@_noLocks` checks like the libm wrappers (LibM.swift): the
// compiler cannot see into C bodies; these are plain arithmetic on the caller's memory. Only
// called when `SIMDPath.isAVX2FMAAvailable`. Audio thread.

/// `BiquadFilter.runGroups` with the steady loop (`FilterLoops.steadySingle/steadyPair`) over
/// frames `start ..< start + count`; `parity`: the filter's `frameParity`.
@_semantics("no_performance_analysis") @inline(never)
func filterSteadyAVX2FMA(_ buffers: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount: Int, start: Int, count: Int,
                         states: UnsafeMutablePointer<SIMD4<Float>>, scratch: UnsafeMutablePointer<SIMD4<Float>>,
                         scratchFrames: Int, parity: Int, loop: UnsafePointer<SIMD8<Float>>,
                         twoStep: UnsafePointer<SIMD8<Float>>) {
    soundfit_biquad_steady_avx2_fma(buffers, channelCount, start, count, states, scratch, scratchFrames, parity, loop, twoStep)
}

/// `BiquadFilter.runGroups` with the moving loop (`FilterLoops.movingSingle/movingPair`, the
/// coefficients and wet level of `FilterRamp`) over frames `start ..< start + count`.
@_semantics("no_performance_analysis") @inline(never)
func filterMovingAVX2FMA(_ buffers: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount: Int, start: Int, count: Int,
                         states: UnsafeMutablePointer<SIMD4<Float>>, scratch: UnsafeMutablePointer<SIMD4<Float>>,
                         scratchFrames: Int, rampStart: UnsafePointer<SIMD8<Float>>, rampIncrement: UnsafePointer<SIMD8<Float>>,
                         wetStart: Float, wetIncrement: Float, position: Int) {
    soundfit_biquad_moving_avx2_fma(buffers, channelCount, start, count, states, scratch, scratchFrames, rampStart,
                                    rampIncrement, wetStart, wetIncrement, position)
}
