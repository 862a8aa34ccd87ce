// AVX2/FMA builds of the personalization processor's and the biquad's per-sample loops (issue
// 15), chosen at run time. The baseline path is the Swift code in SoundFitDSP
// (`PersonalizationKernels`, `FilterLoops`); these functions compute the same filters over the
// same memory, two SIMD4 vectors per 256-bit register (simd_kernels.c: the personalization,
// declared first; biquad_kernels.c: the biquad, declared at the end), compiled with
// `__attribute__((target("avx2,fma")))` so that the package itself keeps targeting baseline
// x86-64 and needs no compiler flags.
//
// Memory layout of the personalization kernels (all of it SoundFitDSP's, 16-byte aligned
// SIMD4<Float> vectors):
// - `first`, `second`: the pair's channels (`second` NULL for a lone last channel);
// - `slot`: one SIMD4 frame per sample of the channel pair;
// - `filters`: four vectors per analysis band vector (c11, c12, c22, scale);
// - `analysisStates`: two vectors per band vector;
// - `weights`: per band vector `2·period` vectors, already offset to the period position;
// - `detectors`: one `BandState` (nine vectors; sum1 and sum2 are the 4th and 5th) per band vector;
// - `ramps`: one `SectionRamp` (nine vectors: c11, c12, c22, h1, h2, dh1, dh2, sections as int32,
//   lanes) per cascade vector; `cascadeStates`: three vectors per cascade vector.
//
// Real-time safe: plain arithmetic, no allocation, no locks, no system calls. Only call the
// kernels after `soundfit_simd_has_avx2_fma()` returned 1.
#ifndef CSOUNDFIT_SIMD_H
#define CSOUNDFIT_SIMD_H

/// 1 when this CPU executes AVX2 and FMA instructions, else 0 (also on other architectures).
int soundfit_simd_has_avx2_fma(void);

/// The pair's `count` frames from `first`/`second` into `slot` (`PersonalizationKernels.interleave`)
/// and the analysis bank over them (`PersonalizationKernels.analyze2/analyze1`).
void soundfit_simd_analyze_avx2_fma(const float *first, const float *second, void *slot, long count,
                                    long bandVectors, long period, const void *filters, void *analysisStates,
                                    const void *weights, void *detectors);

/// The systolic cascade of `vectors` section vectors over `slot` (`PersonalizationKernels.cascade`),
/// then each ramp's mix advanced by `count` samples. With `first`, `second` and `broadband` (the
/// pair's broadband gain and its per-sample step, two SIMD4) all non-NULL the output goes to the
/// channels times the moving gain (`PersonalizationKernels.deinterleave` without a cross-fade;
/// the gain is advanced), else back into `slot`, in place.
void soundfit_simd_cascade_avx2_fma(void *slot, long count, long vectors, void *ramps, void *cascadeStates,
                                    float *first, float *second, void *broadband);

// The biquad (`BiquadFilter`, Sources/SoundFitDSP/Filter; biquad_kernels.c): one call runs the
// filter over frames `start ..< start + count` of every channel (`buffers`: the channel
// pointers), as `BiquadFilter.runGroups` does. Memory: `states` two SIMD4 per group of four
// channels (`[ic1, ic2]`), `scratch` `2 × scratchFrames` SIMD4, coefficient vectors eight floats
// (`SVFLoopCoefficients.packed`: c11, c12, c22, m0, h1, h2, unused, unused;
// `SVFTwoStepCoefficients.packed`: e11, e12, e21, e22, f1, f2, b1, b2).

/// The steady loop (`FilterLoops.steadySingle/steadyPair`); `parity`: the absolute index parity
/// of frame `start` (the filter's `frameParity`).
void soundfit_biquad_steady_avx2_fma(const void *buffers, long channelCount, long start, long count, void *states,
                                     void *scratch, long scratchFrames, long parity, const void *loopCoefficients,
                                     const void *twoStepCoefficients);

/// The moving loop (`FilterLoops.movingSingle/movingPair`): coefficients `rampStart +
/// rampIncrement · t` and wet level `wetStart + wetIncrement · t` at `t = position + i + 1` for
/// frame `i` of the call (`FilterRamp.at`).
void soundfit_biquad_moving_avx2_fma(const void *buffers, long channelCount, long start, long count, void *states,
                                     void *scratch, long scratchFrames, const void *rampStart,
                                     const void *rampIncrement, float wetStart, float wetIncrement, long position);

#endif
