#ifndef SOUNDFIT_CREFERENCE_BIQUAD_H
#define SOUNDFIT_CREFERENCE_BIQUAD_H

/* A straightforward float32 biquad in C, compiled -O3: the speed reference that the Swift
   kernels are compared with in `soundfit-bench`. Coefficients are normalized (a0 = 1). */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    float b0, b1, b2, a1, a2;
} soundfit_ref_biquad_coefficients;

/* Transposed direct form II state of one channel. */
typedef struct {
    float s1, s2;
} soundfit_ref_biquad_tdf2_state;

/* Direct form I state of one channel. */
typedef struct {
    float x1, x2, y1, y2;
} soundfit_ref_biquad_df1_state;

/* Filters `channel_count` non-interleaved channels of `frame_count` frames in place,
   transposed direct form II, one channel after another. */
void soundfit_ref_biquad_tdf2_process(const soundfit_ref_biquad_coefficients *_Nonnull coefficients,
                                      soundfit_ref_biquad_tdf2_state *_Nonnull states,
                                      float *_Nonnull const *_Nonnull channels, int channel_count, int frame_count);

/* The same with direct form I. */
void soundfit_ref_biquad_df1_process(const soundfit_ref_biquad_coefficients *_Nonnull coefficients,
                                     soundfit_ref_biquad_df1_state *_Nonnull states,
                                     float *_Nonnull const *_Nonnull channels, int channel_count, int frame_count);

#ifdef __cplusplus
}
#endif

#endif
