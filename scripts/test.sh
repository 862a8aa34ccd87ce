#!/usr/bin/env bash
# The whole test suite: install what is missing, build, run every test — DSP measurements,
# engine/processing/OSC/state units, then the integration tests against real `jackd -d dummy`
# servers. The integration tests run on their own: they block on sockets and JACK while they
# measure, and sharing two cores with the CPU-heavy DSP tests would only slow both down.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
swift build --build-tests
swift test --skip-build --skip SoundFitIntegrationTests "$@"
swift test --skip-build --filter SoundFitIntegrationTests "$@"
