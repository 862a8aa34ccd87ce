#!/usr/bin/env bash
# SoundFit's main job: install what is missing, build, and run `soundfit run` with any arguments
# given (a private dummy-backend JACK server is started when none is running).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
swift build -c release --product soundfit >&2
exec .build/release/soundfit run "$@"
