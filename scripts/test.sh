#!/usr/bin/env bash
# The whole test suite: install what is missing, check that Package.swift declares what each
# target imports, build, run every test — DSP measurements, engine/processing/OSC/state units,
# then the integration tests against real `jackd -d dummy` servers — and build the offline
# consumer package against a tagged clone, by URL and version.
#
# The tests are built in the release configuration (with testable imports): the heap-call
# counts on the live JACK thread must measure optimized code, the code a user runs, and no
# library target may carry optimization flags of its own (a package with unsafe flags cannot
# be depended on by version). The release build also compiles the compile-time real-time
# proofs (`@_noLocks`), which debug builds leave out.
#
# The integration tests run on their own: they block on sockets and JACK while they measure,
# and sharing two cores with the CPU-heavy DSP tests would only slow both down.
set -euo pipefail
cd "$(dirname "$0")/.."
SOUNDFIT_SETUP_TESTS=1 source scripts/setup.sh
python3 scripts/check-imports.py
build=(-c release -Xswiftc -enable-testing)
swift build --build-tests "${build[@]}"
swift test --skip-build "${build[@]}" --skip SoundFitIntegrationTests "$@"
swift test --skip-build "${build[@]}" --filter SoundFitIntegrationTests "$@"
scripts/check-consumer.sh
