// See include/CSoundFitSIMD.h. Each function computes what its Swift original in
// Sources/SoundFitDSP/Personalization/PersonalizationKernels.swift computes, with the same filter
// state updates per lane, but on two SIMD4 vectors per 256-bit register, with every register of
// a channel pair in one loop and the filter states held in registers for the call (the 8-wide
// layout is built from Swift's memory on entry and written back on exit). Keep them in step (the
// SoundFitDSPTests suite `SIMDPathTests` runs both on the same input and compares).
#include "CSoundFitSIMD.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))

#include <stdint.h>

typedef float f4 __attribute__((vector_size(16)));
typedef int32_t i4 __attribute__((vector_size(16)));

/// `SectionRamp` (Swift): nine SIMD4 fields in declaration order.
typedef struct { f4 c11, c12, c22, h1, h2, dh1, dh2; i4 sections; f4 lanes; } SectionRamp;
/// `BandState` (Swift): nine SIMD4 fields in declaration order; only the sums are used here.
typedef struct { f4 e1, e2, envelope, sum1, sum2, gain, level, offset, applied; } BandState;

#define WIDE __attribute__((target("avx2,fma")))

int soundfit_simd_has_avx2_fma(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

typedef float f8 __attribute__((vector_size(32)));
typedef int32_t i8 __attribute__((vector_size(32)));

WIDE static inline f8 join(f4 low, f4 high) { return __builtin_shufflevector(low, high, 0, 1, 2, 3, 4, 5, 6, 7); }
WIDE static inline f4 lower(f8 v) { return __builtin_shufflevector(v, v, 0, 1, 2, 3); }
WIDE static inline f4 upper(f8 v) { return __builtin_shufflevector(v, v, 4, 5, 6, 7); }

/// The analysis bank (`PersonalizationKernels.analyze2/analyze1`, the same arithmetic per lane)
/// with two band vectors per 256-bit register and all `groups` registers (1…3) in one loop, so
/// that their independent recursions overlap instead of running one pair after the other. An odd
/// band count's last register runs its band vector in both halves and keeps the lower one.
/// The pair's frames are read from the channels (`PersonalizationKernels.interleave`: a lone last
/// channel, `stereo` 0, pairs with zeros) and stored in `slot` for the cascade on the way.
__attribute__((always_inline)) WIDE static inline void analyze_groups(
    int groups, int stereo, const float *first, const float *second, f4 *slot, long count, long bandVectors, long period, const f4 *f, f4 *states, const f4 *w,
    BandState *d) {
    f8 c11[3], c12[3], c22[3], scale[3], s1[3], s2[3], sum1[3], sum2[3];
    const f4 *w0[3], *w1[3];
    for (int g = 0; g < groups; g++) {
        long b = 2 * g, c = b + 1 < bandVectors ? b + 1 : b;
        c11[g] = join(f[4 * b], f[4 * c]);
        c12[g] = join(f[4 * b + 1], f[4 * c + 1]);
        c22[g] = join(f[4 * b + 2], f[4 * c + 2]);
        scale[g] = join(f[4 * b + 3], f[4 * c + 3]);
        s1[g] = join(states[2 * b], states[2 * c]);
        s2[g] = join(states[2 * b + 1], states[2 * c + 1]);
        sum1[g] = join(d[b].sum1, d[c].sum1);
        sum2[g] = join(d[b].sum2, d[c].sum2);
        w0[g] = w + 2 * b * period;
        w1[g] = w + 2 * c * period;
    }
    for (long i = 0; i < count; i++) {
        float left = first[i], right = stereo ? second[i] : 0;
        f4 frame = {left, right, left, right};
        slot[i] = frame;
        f8 x = join(frame, frame);
        for (int g = 0; g < groups; g++) {
            f8 a = s1[g], b = s2[g];
            f8 n1 = (a + c11[g] * a) + c12[g] * (x - b);
            f8 n2 = (b - c22[g] * b) + (c12[g] * a + c22[g] * x);
            s1[g] = n1;
            s2[g] = n2;
            f8 y = scale[g] * (a + n1), power = y * y;
            sum1[g] += join(w0[g][2 * i], w1[g][2 * i]) * power;
            sum2[g] += join(w0[g][2 * i + 1], w1[g][2 * i + 1]) * power;
        }
    }
    for (int g = 0; g < groups; g++) {
        long b = 2 * g, c = b + 1;
        states[2 * b] = lower(s1[g]);
        states[2 * b + 1] = lower(s2[g]);
        d[b].sum1 = lower(sum1[g]);
        d[b].sum2 = lower(sum2[g]);
        if (c < bandVectors) {
            states[2 * c] = upper(s1[g]);
            states[2 * c + 1] = upper(s2[g]);
            d[c].sum1 = upper(sum1[g]);
            d[c].sum2 = upper(sum2[g]);
        }
    }
}

#define ANALYZE(groups)                                                                              \
    (second ? analyze_groups(groups, 1, first, second, slot, count, bandVectors, period, f, states, w, d) \
            : analyze_groups(groups, 0, first, second, slot, count, bandVectors, period, f, states, w, d))

WIDE void soundfit_simd_analyze_avx2_fma(const float *first, const float *second, void *slotMemory, long count,
                                         long bandVectors, long period, const void *filters, void *analysisStates,
                                         const void *weights, void *detectors) {
    const f4 *f = filters, *w = weights;
    f4 *slot = slotMemory, *states = analysisStates;
    BandState *d = detectors;
    switch ((bandVectors + 1) / 2) {   // registers: tech levels 1–2 one, 3 two, 4 three (at most 6 band vectors)
    case 1: ANALYZE(1); break;
    case 2: ANALYZE(2); break;
    case 3: ANALYZE(3); break;
    default: break;
    }
}

/// The cascade's section vectors paired into 256-bit registers for one call: register `Q` holds
/// vector `Q` in its lower half and vector `Q + M` in its upper half (`M` registers). With this
/// pairing the systolic hand-over stays inside the 128-bit halves (one `vshufpd`): vector `q`'s
/// upstream `q − 1` is in the register before, and vector `M`'s upstream `M − 1` (the last
/// register's lower half) is moved into register 0 beside the pair's input. An odd vector count
/// leaves the last upper half empty: an identity section (all coefficients 0) after the last
/// vector, never active and never read. `base1`/`base2` are the mix at "position 0" of each lane
/// (`h − lane·dh`), so that the mix at iteration `i` is one FMA, `base + (i + 1)·dh`.
typedef struct { f8 c11, c12, c22, base1, base2, dh1, dh2, lanes; } WideRamp;

/// One iteration of one register of sections (`PersonalizationKernels.section`; the same state
/// update per lane, the mix ramp in one FMA): input `x`, states in `s1`, `s2`, output in `out`.
/// `bells`: the register holds only bells, whose low-pass mix is 0, so it is left out. In
/// `masked` iterations the states advance only in the lanes whose section works on a sample of
/// this segment (`1 ≤ position − lane ≤ count`).
__attribute__((always_inline)) WIDE static inline void wide_section(
    const WideRamp *r, f8 x, f8 *s1, f8 *s2, f8 *out, f8 position, int bells, int masked, f8 count) {
    f8 a = *s1, b = *s2;
    f8 n1 = (a + r->c11 * a) + r->c12 * (x - b);
    f8 n2 = (b - r->c22 * b) + (r->c12 * a + r->c22 * x);
    f8 h1 = r->base1 + position * r->dh1;
    if (bells) {
        *out = x + h1 * (a + n1);
    } else {
        f8 h2 = r->base2 + position * r->dh2;
        *out = x + h1 * (a + n1) + h2 * (b + n2);
    }
    if (masked) {
        f8 samples = position - r->lanes;
        i8 active = (samples >= 1) & (samples <= count);
        *s1 = (f8)(((i8)n1 & active) | ((i8)a & ~active));
        *s2 = (f8)(((i8)n2 & active) | ((i8)b & ~active));
    } else {
        *s1 = n1;
        *s2 = n2;
    }
}

/// `PersonalizationKernels.cascade` with `M` registers of two section vectors (see `WideRamp`);
/// the states live in registers for the whole call. `S` is the register whose upper half is the
/// shelf vector (the last one); with `bellsOnly` every other register is run as bells. With
/// `direct` the output goes straight to the pair's channels times the broadband gain
/// (`PersonalizationKernels.deinterleave` without a cross-fade), else back into `slot`.
__attribute__((always_inline)) WIDE static inline void cascade_wide(
    int M, int S, int bellsOnly, int direct, f4 *slot, long count, long vectors, const SectionRamp *ramps, f4 *states,
    float *first, float *second, f4 *broadband) {
    WideRamp r[4];
    f8 s1[4], s2[4], out[4];
    const SectionRamp identity = {{0}, {0}, {0}, {0}, {0}, {0}, {0}, {0}, {0}};
    const f4 zero = {0, 0, 0, 0};
    for (int Q = 0; Q < M; Q++) {
        long high = Q + M;
        const SectionRamp *p = ramps + Q, *u = high < vectors ? ramps + high : &identity;
        r[Q].c11 = join(p->c11, u->c11);
        r[Q].c12 = join(p->c12, u->c12);
        r[Q].c22 = join(p->c22, u->c22);
        r[Q].dh1 = join(p->dh1, u->dh1);
        r[Q].dh2 = join(p->dh2, u->dh2);
        r[Q].lanes = join(p->lanes, u->lanes);
        r[Q].base1 = join(p->h1, u->h1) - r[Q].lanes * r[Q].dh1;
        r[Q].base2 = join(p->h2, u->h2) - r[Q].lanes * r[Q].dh2;
        s1[Q] = join(states[3 * Q], high < vectors ? states[3 * high] : zero);
        s2[Q] = join(states[3 * Q + 1], high < vectors ? states[3 * high + 1] : zero);
        out[Q] = join(states[3 * Q + 2], high < vectors ? states[3 * high + 2] : zero);
    }
    long last = 2 * vectors - 1;
    float n = (float)count;
    const f8 countVector = {n, n, n, n, n, n, n, n};
    f4 gain = direct ? broadband[0] : zero, gainStep = direct ? broadband[1] : zero;
    for (long i = 0; i < count + last; i++) {
        float p = (float)(i + 1);
        f8 position = {p, p, p, p, p, p, p, p};
        int steady = i >= last && i < count;
        f4 input = slot[steady ? i : (i < count - 1 ? i : count - 1)];
        f8 x[4];
        x[0] = __builtin_shufflevector(join(input, lower(out[M - 1])), out[0], 2, 3, 8, 9, 6, 7, 12, 13);
#pragma clang loop unroll(full)
        for (int Q = 1; Q < M; Q++) x[Q] = __builtin_shufflevector(out[Q - 1], out[Q], 2, 3, 8, 9, 6, 7, 12, 13);
        if (steady) {
#pragma clang loop unroll(full)
            for (int Q = 0; Q < M; Q++)
                wide_section(r + Q, x[Q], s1 + Q, s2 + Q, out + Q, position, bellsOnly && Q != S, 0, countVector);
        } else {
            // Filling or draining: vector q works on samples in iterations 2q … count + 2q (both
            // of its sections in 2q + 1 … count + 2q − 1). Registers with no active section are
            // skipped (their outputs are read by none), those with every section active run
            // without masks (the empty upper half of an odd count never matters).
#pragma clang loop unroll(full)
            for (int Q = 0; Q < M; Q++) {
                long high = Q + M;
                int some = (i >= 2 * Q && i <= count + 2 * Q) || (high < vectors && i >= 2 * high && i <= count + 2 * high);
                int all = i >= 2 * Q + 1 && i <= count + 2 * Q - 1 && (high >= vectors || (i >= 2 * high + 1 && i <= count + 2 * high - 1));
                if (all)
                    wide_section(r + Q, x[Q], s1 + Q, s2 + Q, out + Q, position, bellsOnly && Q != S, 0, countVector);
                else if (some)
                    wide_section(r + Q, x[Q], s1 + Q, s2 + Q, out + Q, position, bellsOnly && Q != S, 1, countVector);
            }
        }
        if (i >= last) {
            if (direct) {
                gain += gainStep;
                f4 v = gain * upper(out[S]);
                first[i - last] = v[2];
                second[i - last] = v[3];
            } else {
                slot[i - last] = upper(out[S]);
            }
        }
    }
    if (direct) broadband[0] = gain;
    for (int Q = 0; Q < M; Q++) {
        long high = Q + M;
        states[3 * Q] = lower(s1[Q]);
        states[3 * Q + 1] = lower(s2[Q]);
        states[3 * Q + 2] = lower(out[Q]);
        if (high < vectors) {
            states[3 * high] = upper(s1[Q]);
            states[3 * high + 1] = upper(s2[Q]);
            states[3 * high + 2] = upper(out[Q]);
        }
    }
}

/// True when every bell vector's low-pass mix is 0 and stays 0 (what `bellCoefficients` sets).
WIDE static int bells_only(const SectionRamp *ramps, long vectors) {
    i4 any = {0, 0, 0, 0};
    for (long q = 0; q + 1 < vectors; q++) any |= (ramps[q].h2 != 0) | (ramps[q].dh2 != 0);
    return !(any[0] | any[1] | any[2] | any[3]);
}

#define CASCADE(M, S)                                                                                    \
    (bellsOnly ? (direct ? cascade_wide(M, S, 1, 1, slot, count, vectors, ramps, states, first, second, gain)  \
                         : cascade_wide(M, S, 1, 0, slot, count, vectors, ramps, states, first, second, gain)) \
               : (direct ? cascade_wide(M, S, 0, 1, slot, count, vectors, ramps, states, first, second, gain)  \
                         : cascade_wide(M, S, 0, 0, slot, count, vectors, ramps, states, first, second, gain)))

WIDE void soundfit_simd_cascade_avx2_fma(void *slotMemory, long count, long vectors, void *rampMemory,
                                         void *cascadeStates, float *first, float *second, void *broadband) {
    f4 *slot = slotMemory, *states = cascadeStates, *gain = broadband;
    int direct = first && second && broadband;
    SectionRamp *ramps = rampMemory;
    int bellsOnly = bells_only(ramps, vectors);
    // Registers M = ⌈vectors/2⌉; the shelf (vector `vectors − 1`) is the upper half of S = vectors − 1 − M.
    switch (vectors) {
    case 2: CASCADE(1, 0); break;
    case 3: CASCADE(2, 0); break;    // tech level 1
    case 4: CASCADE(2, 1); break;    // tech level 2
    case 5: CASCADE(3, 1); break;    // tech level 3
    case 6: CASCADE(3, 2); break;
    case 7: CASCADE(4, 2); break;    // tech level 4
    default: break;
    }
    float n = (float)count;
    f4 steps = {n, n, n, n};
    for (long q = 0; q < vectors; q++) {
        ramps[q].h1 += steps * ramps[q].dh1;
        ramps[q].h2 += steps * ramps[q].dh2;
    }
}

#else

int soundfit_simd_has_avx2_fma(void) { return 0; }

void soundfit_simd_analyze_avx2_fma(const float *first, const float *second, void *slot, long count,
                                    long bandVectors, long period, const void *filters, void *analysisStates,
                                    const void *weights, void *detectors) {
    __builtin_trap();  // never called: soundfit_simd_has_avx2_fma() is 0 here
}

void soundfit_simd_cascade_avx2_fma(void *slot, long count, long vectors, void *ramps, void *cascadeStates,
                                    float *first, float *second, void *broadband) {
    __builtin_trap();
}

#endif
