#!/bin/sh
# Builds the two Faust peers of the personalization benchmark (see generate.py) into
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
# soundfit_faust_new/_compute (the crossover-tree peer, classes fausttl<N>) and
# soundfit_faust_cascade_new/_compute (the cascade peer, classes faustcascade<N>): one mono
# instance of tech level tl at sample rate sr, and its compute.
for peer in "soundfit_faust fausttl" "soundfit_faust_cascade faustcascade"; do
    set -- $peer
    {
        echo "void *$1_new(int tl, int sr) {"
        echo "    switch (tl) {"
        for tl in 1 2 3; do echo "    case $tl: { $2$tl *d = new$2$tl(); init$2$tl(d, sr); return d; }"; done
        echo "    default: { ${2}4 *d = new${2}4(); init${2}4(d, sr); return d; }"
        echo "    }"
        echo "}"
        echo "void $1_compute(void *d, int tl, int count, float **in, float **out) {"
        echo "    switch (tl) {"
        for tl in 1 2 3; do echo "    case $tl: compute$2$tl(($2$tl *)d, count, in, out); break;"; done
        echo "    default: compute${2}4((${2}4 *)d, count, in, out); break;"
        echo "    }"
        echo "}"
    } >> "$wrapper"
done
# -O3 -ffast-math, baseline x86-64 like the Swift build (no -march).
cc -O3 -ffast-math -shared -fPIC -I/usr/include -o "$build/libsoundfit_faust.so" "$wrapper" -lm
echo "built $build/libsoundfit_faust.so"
