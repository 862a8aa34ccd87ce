// See include/CSoundFitSIMD.h. The AVX2/FMA build of `BiquadFilter`'s per-sample loops: each
// function mirrors its Swift original in Sources/SoundFitDSP/Filter/FilterLoops.swift
// (`FilterTap.tick`, `FilterTwoStepTap.tick2`, `FilterRamp.at`, `FilterLoops.*`) and
// `BiquadFilter.runGroups`; keep them in step (the SoundFitDSPTests suite `BiquadSIMDPathTests`
// runs both on the same input and compares).
//
// Two differences in shape, none in arithmetic: where the Swift loops run a pair of four-channel
// groups as two SIMD4 recursions side by side (`steadyPair`, `movingPair`), this build puts the
// pair into one 256-bit vector (the first group in the low half, the second in the high half), so
// a pair costs the instructions of one group; the scratch then holds the pair's frames as eight
// floats each (the same `2 × scratchFrames` SIMD4 of memory). And a lone group in steady state
// (1–4 channels, or the last group) reads and writes the channels inside the recursion loop
// (`steadyDirect4`) instead of going through the scratch. The states stay the Swift layout
// (`[ic1, ic2]` per group), so switching paths keeps the state.
#include "CSoundFitSIMD.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))

typedef float f4 __attribute__((vector_size(16)));
/// Eight floats in memory aligned for SIMD4 (16 bytes), as Swift allocates the scratch.
typedef float f8 __attribute__((vector_size(32), aligned(16)));

#define WIDE __attribute__((target("avx2,fma")))

/// `FilterTap`: the loop coefficients `(c11, c12, c22, m0, h1, h2)` (`SVFLoopCoefficients.packed`).
typedef struct { float c11, c12, c22, m0, h1, h2; } FilterTap;
/// `FilterTwoStepTap`: the tap plus the two-step coefficients (`SVFTwoStepCoefficients.packed`).
typedef struct { FilterTap one; float e11, e12, e21, e22, f1, f2, b1, b2; } FilterTwoStepTap;

static inline FilterTap filter_tap(const float *c) { return (FilterTap){c[0], c[1], c[2], c[3], c[4], c[5]}; }

// The recursions, once per vector width V (f4: one group of four channels, f8: a pair of groups).
// Scalars in vector expressions are splatted across the lanes.
#define FILTER_LOOPS(V, W)                                                                                      \
    /* `FilterTap.tick`: one sample of the trapezoidal SVF. */                                                 \
    WIDE static inline V tick##W(V x, V *ic1, V *ic2, FilterTap t) {                                           \
        V s1 = *ic1, s2 = *ic2;                                                                                \
        V n1 = (s1 + t.c11 * s1) + t.c12 * (x - s2);                                                           \
        V n2 = (s2 - t.c22 * s2) + (t.c12 * s1 + t.c22 * x);                                                   \
        *ic1 = n1;                                                                                             \
        *ic2 = n2;                                                                                             \
        return t.m0 * x + t.h1 * (s1 + n1) + t.h2 * (s2 + n2);                                                 \
    }                                                                                                          \
    /* `FilterTwoStepTap.tick2`: two samples, the state after both from the two-step update. */                \
    WIDE static inline void tick2##W(V *x0, V *x1, V *ic1, V *ic2, const FilterTwoStepTap *t) {                \
        V s1 = *ic1, s2 = *ic2, in0 = *x0, in1 = *x1;                                                          \
        V input1 = t->f1 * in0 + t->b1 * in1;                                                                  \
        V input2 = t->f2 * in0 + t->b2 * in1;                                                                  \
        V n1 = (s1 + t->e11 * s1) + (t->e12 * s2 + input1);                                                    \
        V n2 = (s2 + t->e22 * s2) + (t->e21 * s1 + input2);                                                    \
        V h1 = (s1 + t->one.c11 * s1) + t->one.c12 * (in0 - s2);                                               \
        V h2 = (s2 - t->one.c22 * s2) + (t->one.c12 * s1 + t->one.c22 * in0);                                  \
        *ic1 = n1;                                                                                             \
        *ic2 = n2;                                                                                             \
        *x0 = t->one.m0 * in0 + t->one.h1 * (s1 + h1) + t->one.h2 * (s2 + h2);                                 \
        *x1 = t->one.m0 * in1 + t->one.h1 * (h1 + n1) + t->one.h2 * (h2 + n2);                                 \
    }                                                                                                          \
    /* `FilterLoops.steadySingle/steadyPair`: `odd`, the first frame has an odd absolute index. */             \
    WIDE static void steady##W(V *a, V *s1, V *s2, long count, int odd, const FilterTwoStepTap *t) {           \
        V ic1 = *s1, ic2 = *s2;                                                                                \
        long i = 0;                                                                                            \
        if (odd && count > 0) {                                                                                \
            a[0] = tick##W(a[0], &ic1, &ic2, t->one);                                                          \
            i = 1;                                                                                             \
        }                                                                                                      \
        for (; i + 1 < count; i += 2) tick2##W(a + i, a + i + 1, &ic1, &ic2, t);                               \
        if (i < count) a[i] = tick##W(a[i], &ic1, &ic2, t->one);                                               \
        *s1 = ic1;                                                                                             \
        *s2 = ic2;                                                                                             \
    }                                                                                                          \
    /* `FilterLoops.movingSingle/movingPair`: coefficients and wet level interpolated per sample             \
       (`FilterRamp.at`). */                                                                                   \
    WIDE static void moving##W(V *a, V *s1, V *s2, long count, const float *start, const float *increment,     \
                               float wetStart, float wetIncrement, long position) {                            \
        V ic1 = *s1, ic2 = *s2;                                                                                \
        f8 c0 = *(const f8 *)start, dc = *(const f8 *)increment;                                               \
        for (long i = 0; i < count; i++) {                                                                     \
            float t = (float)(position + i + 1);                                                               \
            f8 c = c0 + dc * t;                                                                                \
            FilterTap tap = {c[0], c[1], c[2], c[3], c[4], c[5]};                                              \
            float wet = wetStart + wetIncrement * t;                                                           \
            V x = a[i];                                                                                        \
            V y = tick##W(x, &ic1, &ic2, tap);                                                                 \
            a[i] = x + wet * (y - x);                                                                          \
        }                                                                                                      \
        *s1 = ic1;                                                                                             \
        *s2 = ic2;                                                                                             \
    }

FILTER_LOOPS(f4, 4)
FILTER_LOOPS(f8, 8)

/// `steady4` on one group read from and written to the channels directly, frame by frame: the
/// same arithmetic as interleave4 + steady4 + deinterleave4 (bit-identical), without the round
/// trip through the scratch, so that the loads and stores hide under the recursion's latency (one
/// group is latency-bound). `lanes` is a constant in each instance (see `steadyDirect4`).
__attribute__((always_inline)) WIDE static inline void steadyDirectLanes(float *const *p, long lanes, long start,
                                                                         long count, f4 *states, int odd,
                                                                         const FilterTwoStepTap *t) {
    float *p0 = p[0] + start, *p1 = p0, *p2 = p0, *p3 = p0;
    if (lanes > 1) p1 = p[1] + start;
    if (lanes > 2) p2 = p[2] + start;
    if (lanes > 3) p3 = p[3] + start;
#define LOAD(i) ((f4){p0[i], lanes > 1 ? p1[i] : 0, lanes > 2 ? p2[i] : 0, lanes > 3 ? p3[i] : 0})
#define STORE(i, v)                  \
    do {                             \
        f4 y = (v);                  \
        p0[i] = y[0];                \
        if (lanes > 1) p1[i] = y[1]; \
        if (lanes > 2) p2[i] = y[2]; \
        if (lanes > 3) p3[i] = y[3]; \
    } while (0)
    f4 ic1 = states[0], ic2 = states[1];
    long i = 0;
    if (odd && count > 0) {
        STORE(0, tick4(LOAD(0), &ic1, &ic2, t->one));
        i = 1;
    }
    for (; i + 1 < count; i += 2) {
        f4 x0 = LOAD(i), x1 = LOAD(i + 1);
        tick24(&x0, &x1, &ic1, &ic2, t);
        STORE(i, x0);
        STORE(i + 1, x1);
    }
    if (i < count) STORE(i, tick4(LOAD(i), &ic1, &ic2, t->one));
#undef LOAD
#undef STORE
    states[0] = ic1;
    states[1] = ic2;
}

WIDE static void steadyDirect4(float *const *p, long lanes, long start, long count, f4 *states, int odd,
                               const FilterTwoStepTap *t) {
    switch (lanes) {
    case 1: steadyDirectLanes(p, 1, start, count, states, odd, t); break;
    case 2: steadyDirectLanes(p, 2, start, count, states, odd, t); break;
    case 3: steadyDirectLanes(p, 3, start, count, states, odd, t); break;
    default: steadyDirectLanes(p, 4, start, count, states, odd, t); break;
    }
}

/// `FilterLoops.interleave` of one group: `lanes` (1…4) channels from `p`, zero in the other lanes.
WIDE static void interleave4(const float *const *p, long lanes, long start, long count, f4 *out) {
    const float *p0 = p[0] + start, *p1 = p0, *p2 = p0, *p3 = p0;
    if (lanes > 1) p1 = p[1] + start;
    if (lanes > 2) p2 = p[2] + start;
    if (lanes > 3) p3 = p[3] + start;
    switch (lanes) {
    case 1: for (long i = 0; i < count; i++) out[i] = (f4){p0[i], 0, 0, 0}; break;
    case 2: for (long i = 0; i < count; i++) out[i] = (f4){p0[i], p1[i], 0, 0}; break;
    case 3: for (long i = 0; i < count; i++) out[i] = (f4){p0[i], p1[i], p2[i], 0}; break;
    default: for (long i = 0; i < count; i++) out[i] = (f4){p0[i], p1[i], p2[i], p3[i]}; break;
    }
}

/// `FilterLoops.deinterleave` of one group.
WIDE static void deinterleave4(const f4 *in, float *const *p, long lanes, long start, long count) {
    for (long lane = 0; lane < lanes; lane++) {
        float *q = p[lane] + start;
        for (long i = 0; i < count; i++) q[i] = in[i][lane];
    }
}

/// `FilterLoops.interleave` of a pair of groups into eight-float frames: the four channels of the
/// first group, then `lanesB` (1…4) channels of the second, zero in the other lanes.
WIDE static void interleave8(const float *const *p, long lanesB, long start, long count, f8 *out) {
    const float *p0 = p[0] + start, *p1 = p[1] + start, *p2 = p[2] + start, *p3 = p[3] + start;
    const float *q0 = p[4] + start, *q1 = q0, *q2 = q0, *q3 = q0;
    if (lanesB > 1) q1 = p[5] + start;
    if (lanesB > 2) q2 = p[6] + start;
    if (lanesB > 3) q3 = p[7] + start;
    switch (lanesB) {
    case 1: for (long i = 0; i < count; i++) out[i] = (f8){p0[i], p1[i], p2[i], p3[i], q0[i], 0, 0, 0}; break;
    case 2: for (long i = 0; i < count; i++) out[i] = (f8){p0[i], p1[i], p2[i], p3[i], q0[i], q1[i], 0, 0}; break;
    case 3: for (long i = 0; i < count; i++) out[i] = (f8){p0[i], p1[i], p2[i], p3[i], q0[i], q1[i], q2[i], 0}; break;
    default:
        for (long i = 0; i < count; i++) out[i] = (f8){p0[i], p1[i], p2[i], p3[i], q0[i], q1[i], q2[i], q3[i]};
        break;
    }
}

/// `FilterLoops.deinterleave` of a pair of groups (`4 + lanesB` lanes).
WIDE static void deinterleave8(const f8 *in, float *const *p, long lanesB, long start, long count) {
    for (long lane = 0; lane < 4 + lanesB; lane++) {
        float *q = p[lane] + start;
        for (long i = 0; i < count; i++) q[i] = in[i][lane];
    }
}

/// `BiquadFilter.runGroups`: `steady` (the two-step taps) or, when NULL, the ramp.
WIDE static void run_groups(const void *bufferPointers, long channelCount, long start, long count, void *stateMemory,
                            void *scratchMemory, long scratchFrames, long parity, const FilterTwoStepTap *steady,
                            const float *rampStart, const float *rampIncrement, float wetStart, float wetIncrement,
                            long position) {
    float *const *buffers = bufferPointers;
    f4 *states = stateMemory;
    long groupCount = (channelCount + 3) / 4;
    long group = 0;
    while (group < groupCount) {
        int paired = group + 1 < groupCount;
        long base = group * 4;
        long lanesA = channelCount - base < 4 ? channelCount - base : 4;
        long lanesB = paired ? (channelCount - base - 4 < 4 ? channelCount - base - 4 : 4) : 0;
        f4 *groupStates = states + 2 * group;
        long done = 0;
        while (done < count) {
            long n = scratchFrames < count - done ? scratchFrames : count - done;
            long at = start + done;
            if (paired) {
                // The pair's states `[a1, a2, b1, b2]` as two eight-lane vectors (a low, b high).
                f8 *frames = scratchMemory;
                f8 s1 = __builtin_shufflevector(groupStates[0], groupStates[2], 0, 1, 2, 3, 4, 5, 6, 7);
                f8 s2 = __builtin_shufflevector(groupStates[1], groupStates[3], 0, 1, 2, 3, 4, 5, 6, 7);
                interleave8((const float *const *)buffers + base, lanesB, at, n, frames);
                if (steady) {
                    steady8(frames, &s1, &s2, n, ((parity ^ done) & 1) == 1, steady);
                } else {
                    moving8(frames, &s1, &s2, n, rampStart, rampIncrement, wetStart, wetIncrement, position + done);
                }
                deinterleave8(frames, buffers + base, lanesB, at, n);
                groupStates[0] = __builtin_shufflevector(s1, s1, 0, 1, 2, 3);
                groupStates[1] = __builtin_shufflevector(s2, s2, 0, 1, 2, 3);
                groupStates[2] = __builtin_shufflevector(s1, s1, 4, 5, 6, 7);
                groupStates[3] = __builtin_shufflevector(s2, s2, 4, 5, 6, 7);
            } else if (steady) {
                steadyDirect4(buffers + base, lanesA, at, n, groupStates, ((parity ^ done) & 1) == 1, steady);
            } else {
                f4 *frames = scratchMemory;
                interleave4((const float *const *)buffers + base, lanesA, at, n, frames);
                if (steady) {
                    steady4(frames, groupStates, groupStates + 1, n, ((parity ^ done) & 1) == 1, steady);
                } else {
                    moving4(frames, groupStates, groupStates + 1, n, rampStart, rampIncrement, wetStart, wetIncrement,
                            position + done);
                }
                deinterleave4(frames, buffers + base, lanesA, at, n);
            }
            done += n;
        }
        group += paired ? 2 : 1;
    }
}

WIDE void soundfit_biquad_steady_avx2_fma(const void *buffers, long channelCount, long start, long count, void *states,
                                          void *scratch, long scratchFrames, long parity, const void *loopCoefficients,
                                          const void *twoStepCoefficients) {
    const float *one = loopCoefficients, *two = twoStepCoefficients;
    FilterTwoStepTap tap = {filter_tap(one), two[0], two[1], two[2], two[3], two[4], two[5], two[6], two[7]};
    run_groups(buffers, channelCount, start, count, states, scratch, scratchFrames, parity, &tap, one, one, 1, 0, 0);
}

WIDE void soundfit_biquad_moving_avx2_fma(const void *buffers, long channelCount, long start, long count, void *states,
                                          void *scratch, long scratchFrames, const void *rampStart,
                                          const void *rampIncrement, float wetStart, float wetIncrement,
                                          long position) {
    run_groups(buffers, channelCount, start, count, states, scratch, scratchFrames, 0, 0, rampStart, rampIncrement,
               wetStart, wetIncrement, position);
}

#else

void soundfit_biquad_steady_avx2_fma(const void *buffers, long channelCount, long start, long count, void *states,
                                     void *scratch, long scratchFrames, long parity, const void *loopCoefficients,
                                     const void *twoStepCoefficients) {
    __builtin_trap();  // never called: soundfit_simd_has_avx2_fma() is 0 here
}

void soundfit_biquad_moving_avx2_fma(const void *buffers, long channelCount, long start, long count, void *states,
                                     void *scratch, long scratchFrames, const void *rampStart,
                                     const void *rampIncrement, float wetStart, float wetIncrement, long position) {
    __builtin_trap();
}

#endif
