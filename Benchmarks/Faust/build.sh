#!/bin/sh
# Builds the Faust peer of the personalization benchmark into
# Benchmarks/Faust/.build/libsoundfit_faust.so (loaded by soundfit-bench with dlopen, so
# Package.swift needs no target for it). Needs the Debian package `faust`
# (apt-get install -y --no-install-recommends faust) and a C compiler.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build="$here/.build"
mkdir -p "$build"
python3 "$here/generate.py" "$build"
wrapper="$build/soundfit_faust.c"
printf '#include <stdlib.h>\n#include <faust/gui/CInterface.h>\n' > "$wrapper"
for tl in 1 2 3 4; do
    faust -lang c -cn fausttl$tl -o "$build/personalization_tl$tl.c" "$build/personalization_tl$tl.dsp"
    faust -lang c -cn faustcascade$tl -o "$build/cascade_tl$tl.c" "$build/cascade_tl$tl.dsp"
    echo "#include \"personalization_tl$tl.c\"" >> "$wrapper"
    echo "#include \"cascade_tl$tl.c\"" >> "$wrapper"
done
cat >> "$wrapper" <<'C'
/* One mono instance of tech level tl at sample rate sr. */
void *soundfit_faust_new(int tl, int sr) {
    switch (tl) {
    case 1: { fausttl1 *d = newfausttl1(); initfausttl1(d, sr); return d; }
    case 2: { fausttl2 *d = newfausttl2(); initfausttl2(d, sr); return d; }
    case 3: { fausttl3 *d = newfausttl3(); initfausttl3(d, sr); return d; }
    default: { fausttl4 *d = newfausttl4(); initfausttl4(d, sr); return d; }
    }
}
void soundfit_faust_compute(void *d, int tl, int count, float **in, float **out) {
    switch (tl) {
    case 1: computefausttl1((fausttl1 *)d, count, in, out); break;
    case 2: computefausttl2((fausttl2 *)d, count, in, out); break;
    case 3: computefausttl3((fausttl3 *)d, count, in, out); break;
    default: computefausttl4((fausttl4 *)d, count, in, out); break;
    }
}
/* The cascade peer (same interface). */
void *soundfit_faust_cascade_new(int tl, int sr) {
    switch (tl) {
    case 1: { faustcascade1 *d = newfaustcascade1(); initfaustcascade1(d, sr); return d; }
    case 2: { faustcascade2 *d = newfaustcascade2(); initfaustcascade2(d, sr); return d; }
    case 3: { faustcascade3 *d = newfaustcascade3(); initfaustcascade3(d, sr); return d; }
    default: { faustcascade4 *d = newfaustcascade4(); initfaustcascade4(d, sr); return d; }
    }
}
void soundfit_faust_cascade_compute(void *d, int tl, int count, float **in, float **out) {
    switch (tl) {
    case 1: computefaustcascade1((faustcascade1 *)d, count, in, out); break;
    case 2: computefaustcascade2((faustcascade2 *)d, count, in, out); break;
    case 3: computefaustcascade3((faustcascade3 *)d, count, in, out); break;
    default: computefaustcascade4((faustcascade4 *)d, count, in, out); break;
    }
}
C
# -O3 -ffast-math, baseline x86-64 like the Swift build (no -march).
cc -O3 -ffast-math -shared -fPIC -I/usr/include -o "$build/libsoundfit_faust.so" "$wrapper" -lm
echo "built $build/libsoundfit_faust.so"
