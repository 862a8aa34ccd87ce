#ifndef SOUNDFIT_CLIBLO_SHIM_H
#define SOUNDFIT_CLIBLO_SHIM_H

#include <lo/lo.h>

#endif
