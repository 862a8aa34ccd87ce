#!/usr/bin/env bash
# The whole test suite: install what is missing, build, run every test (DSP measurements,
# engine and OSC units, and integration tests against real `jackd -d dummy` servers).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
swift build --build-tests
swift test --skip-build "$@"
