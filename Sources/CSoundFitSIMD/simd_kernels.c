// See include/CSoundFitSIMD.h. Each function mirrors its Swift original in
// Sources/SoundFitDSP/Personalization/PersonalizationKernels.swift; keep them in step (the
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

/// One TPT SVF update (`PersonalizationKernels.tick`): returns 2·v1 in `band`, 2·v2 in `low`.
WIDE static inline void tick(f4 x, f4 *s1, f4 *s2, f4 c11, f4 c12, f4 c22, f4 *band, f4 *low) {
    f4 a = *s1, b = *s2;
    f4 n1 = (a + c11 * a) + c12 * (x - b);
    f4 n2 = (b - c22 * b) + (c12 * a + c22 * x);
    *s1 = n1;
    *s2 = n2;
    *band = a + n1;
    *low = b + n2;
}

WIDE static void analyze2(const f4 *slot, long count, const f4 *filters, f4 *states, const f4 *weights,
                          const f4 *otherWeights, BandState *detectors) {
    f4 p11 = filters[0], p12 = filters[1], p22 = filters[2], pScale = filters[3];
    f4 q11 = filters[4], q12 = filters[5], q22 = filters[6], qScale = filters[7];
    f4 a1 = states[0], a2 = states[1], b1 = states[2], b2 = states[3];
    f4 sum1 = detectors[0].sum1, sum2 = detectors[0].sum2, other1 = detectors[1].sum1, other2 = detectors[1].sum2;
    for (long i = 0; i < count; i++) {
        f4 input = slot[i], band, band2, unused;
        tick(input, &a1, &a2, p11, p12, p22, &band, &unused);
        tick(input, &b1, &b2, q11, q12, q22, &band2, &unused);
        f4 y = pScale * band, z = qScale * band2;
        f4 power = y * y, power2 = z * z;
        sum1 += weights[2 * i] * power;
        sum2 += weights[2 * i + 1] * power;
        other1 += otherWeights[2 * i] * power2;
        other2 += otherWeights[2 * i + 1] * power2;
    }
    states[0] = a1;
    states[1] = a2;
    states[2] = b1;
    states[3] = b2;
    detectors[0].sum1 = sum1;
    detectors[0].sum2 = sum2;
    detectors[1].sum1 = other1;
    detectors[1].sum2 = other2;
}

WIDE static void analyze1(const f4 *slot, long count, const f4 *filters, f4 *states, const f4 *weights,
                          BandState *detector) {
    f4 p11 = filters[0], p12 = filters[1], p22 = filters[2], pScale = filters[3];
    f4 a1 = states[0], a2 = states[1], sum1 = detector->sum1, sum2 = detector->sum2;
    for (long i = 0; i < count; i++) {
        f4 band, unused;
        tick(slot[i], &a1, &a2, p11, p12, p22, &band, &unused);
        f4 y = pScale * band, power = y * y;
        sum1 += weights[2 * i] * power;
        sum2 += weights[2 * i + 1] * power;
    }
    states[0] = a1;
    states[1] = a2;
    detector->sum1 = sum1;
    detector->sum2 = sum2;
}

WIDE void soundfit_simd_analyze_avx2_fma(const void *slot, long count, long bandVectors, long period,
                                         const void *filters, void *analysisStates, const void *weights,
                                         void *detectors) {
    const f4 *input = slot, *f = filters, *w = weights;
    f4 *states = analysisStates;
    BandState *d = detectors;
    long b = 0;
    while (b < bandVectors) {
        const f4 *bandWeights = w + 2 * b * period;
        if (b + 1 < bandVectors) {
            analyze2(input, count, f + 4 * b, states + 2 * b, bandWeights, bandWeights + 2 * period, d + b);
            b += 2;
        } else {
            analyze1(input, count, f + 4 * b, states + 2 * b, bandWeights, d + b);
            b += 1;
        }
    }
}

/// One iteration of one cascade vector (`PersonalizationKernels.section`); states advance only in
/// the lanes of `active` when `masked`.
WIDE static inline void section(const SectionRamp *r, f4 *s, f4 upstream, f4 position, int masked, i4 active) {
    f4 own = s[2];
    f4 x = {upstream[2], upstream[3], own[0], own[1]};
    f4 s1 = s[0], s2 = s[1], band, low;
    tick(x, &s1, &s2, r->c11, r->c12, r->c22, &band, &low);
    f4 samples = position - r->lanes;
    f4 h1 = r->h1 + samples * r->dh1, h2 = r->h2 + samples * r->dh2;
    s[2] = x + h1 * band + h2 * low;
    if (masked) {
        s[0] = (f4)(((i4)s1 & active) | ((i4)s[0] & ~active));
        s[1] = (f4)(((i4)s2 & active) | ((i4)s[1] & ~active));
    } else {
        s[0] = s1;
        s[1] = s2;
    }
}

WIDE void soundfit_simd_cascade_avx2_fma(void *slotMemory, long count, long vectors, void *rampMemory,
                                         void *cascadeStates) {
    f4 *slot = slotMemory, *states = cascadeStates;
    SectionRamp *ramps = rampMemory;
    long last = 2 * vectors - 1;
    f4 *output = states + (3 * (vectors - 1) + 2);
    const i4 none = {0, 0, 0, 0};
    for (long i = 0; i < count + last; i++) {
        float p = (float)(i + 1);
        f4 position = {p, p, p, p};
        if (i >= last && i < count) {
            for (long q = vectors - 1; q > 0; q--)
                section(ramps + q, states + 3 * q, states[3 * q - 1], position, 0, none);
            section(ramps, states, slot[i], position, 0, none);
        } else {
            int32_t n = (int32_t)i, c = (int32_t)count;
            i4 iteration = {n, n, n, n}, countVector = {c, c, c, c};
            long lowest = i > count ? (i - count) >> 1 : 0;
            long q = vectors - 1 < (i >> 1) ? vectors - 1 : (i >> 1);
            for (; q >= lowest; q--) {
                f4 upstream = q == 0 ? slot[i < count - 1 ? i : count - 1] : states[3 * q - 1];
                i4 sample = iteration - ramps[q].sections;
                section(ramps + q, states + 3 * q, upstream, position, 1, (sample >= 0) & (sample < countVector));
            }
        }
        if (i >= last) slot[i - last] = *output;
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

void soundfit_simd_analyze_avx2_fma(const void *slot, long count, long bandVectors, long period,
                                    const void *filters, void *analysisStates, const void *weights,
                                    void *detectors) {
    __builtin_trap();  // never called: soundfit_simd_has_avx2_fma() is 0 here
}

void soundfit_simd_cascade_avx2_fma(void *slot, long count, long vectors, void *ramps, void *cascadeStates) {
    __builtin_trap();
}

#endif
