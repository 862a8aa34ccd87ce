#ifndef SOUNDFIT_CREFERENCE_BIQUAD_H
#define SOUNDFIT_CREFERENCE_BIQUAD_H
/* Filled in by the benchmark work. */
#endif
