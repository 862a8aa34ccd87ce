#ifndef SOUNDFIT_CSNDFILE_SHIM_H
#define SOUNDFIT_CSNDFILE_SHIM_H

#include <sndfile.h>

/// `sf_command` takes a `void *` and an int; turning clipping on is the one command SoundFit
/// sends (a float sample beyond ±1 written to an integer file then clips instead of wrapping).
static inline int soundfit_sf_set_clipping(SNDFILE *file) {
    return sf_command(file, SFC_SET_CLIPPING, NULL, SF_TRUE);
}

#endif
