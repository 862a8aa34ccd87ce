#include "CReferenceBiquad.h"

void soundfit_ref_biquad_tdf2_process(const soundfit_ref_biquad_coefficients *c,
                                      soundfit_ref_biquad_tdf2_state *states,
                                      float *const *channels, int channel_count, int frame_count) {
    const float b0 = c->b0, b1 = c->b1, b2 = c->b2, a1 = c->a1, a2 = c->a2;
    for (int ch = 0; ch < channel_count; ch++) {
        float *restrict x = channels[ch];
        float s1 = states[ch].s1, s2 = states[ch].s2;
        for (int i = 0; i < frame_count; i++) {
            const float in = x[i];
            const float out = b0 * in + s1;
            s1 = b1 * in - a1 * out + s2;
            s2 = b2 * in - a2 * out;
            x[i] = out;
        }
        states[ch].s1 = s1;
        states[ch].s2 = s2;
    }
}

void soundfit_ref_biquad_df1_process(const soundfit_ref_biquad_coefficients *c,
                                     soundfit_ref_biquad_df1_state *states,
                                     float *const *channels, int channel_count, int frame_count) {
    const float b0 = c->b0, b1 = c->b1, b2 = c->b2, a1 = c->a1, a2 = c->a2;
    for (int ch = 0; ch < channel_count; ch++) {
        float *restrict x = channels[ch];
        float x1 = states[ch].x1, x2 = states[ch].x2, y1 = states[ch].y1, y2 = states[ch].y2;
        for (int i = 0; i < frame_count; i++) {
            const float in = x[i];
            const float out = b0 * in + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2;
            x2 = x1;
            x1 = in;
            y2 = y1;
            y1 = out;
            x[i] = out;
        }
        states[ch].x1 = x1;
        states[ch].x2 = x2;
        states[ch].y1 = y1;
        states[ch].y2 = y2;
    }
}
