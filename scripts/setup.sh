#!/usr/bin/env bash
# Installs what SoundFit needs on Debian 12 when it is missing: the JACK server and headers,
# liblo and its tools, libsndfile (`soundfit render`), pkg-config, avahi-utils (zeroconf
# advertisement, optional at run time). Swift itself must already be installed (swift.org toolchain).
# Sourced by scripts/run.sh and scripts/test.sh (which sets SOUNDFIT_SETUP_TESTS=1 first, for the
# packages only the test suite needs); safe to run again.
set -euo pipefail

# What building and running SoundFit needs.
packages=(jackd2 libjack-jackd2-dev liblo-dev liblo-tools libsndfile1-dev pkg-config avahi-utils)
# What only the test suite needs, on top.
# iproute2 (`ip`: the docs test brings up loopback in its own network namespace), curl and sox:
# what the commands of the README and docs/ use.
# python3-venv: the venv of the test suite's PyPI packages (below).
# pipewire, pipewire-bin, wireplumber, pipewire-jack, dbus, dbus-session-bus-common (session.conf,
# only recommended by dbus): a headless PipeWire of the test's own on a private session bus
# (PipeWire as the JACK server; nothing replaces jackd2's libjack, pw-jack chooses per process).
# avahi-daemon (with dbus): the discovery test runs one of its own, on a system bus of its own,
# in private namespaces (installing it may start the machine's: the test neither needs nor
# touches that one).
# gdb: test.sh's watchdog prints the threads of a test process that outlives its tier's budget.
test_packages=(man-db chromium chromium-driver python3-selenium iproute2 curl sox python3-venv
    pipewire pipewire-bin wireplumber pipewire-jack dbus dbus-session-bus-common avahi-daemon gdb)
if [ "${SOUNDFIT_SETUP_TESTS:-0}" = 1 ]; then packages+=("${test_packages[@]}"); fi
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if ((${#missing[@]} > 0)); then
    echo "soundfit setup: installing ${missing[*]}" >&2
    sudo_cmd=()
    if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo_cmd[@]}" apt-get update -qq
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null 2>&1; then
    for candidate in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
        if [ -x "$candidate/swift" ]; then export PATH="$candidate:$PATH"; break; fi
    done
fi
if ! command -v swift >/dev/null 2>&1; then
    echo "soundfit setup: Swift 6.1 or newer is required (https://swift.org/install/linux/); 'swift' is not on PATH" >&2
    exit 1
fi

# The test suite's PyPI packages, in a venv of the build folder: fhir.resources validates the
# hearing test's FHIR export (Tests/Scripts/validate_fhir.py); zeroconf and python-oscquery
# discover SoundFit (Tests/Scripts/zeroconf_discovery.py). The check imports all three, so an
# older venv gets the newer ones.
if [ "${SOUNDFIT_SETUP_TESTS:-0}" = 1 ]; then
    venv=.build/test-python
    if ! "$venv/bin/python" -c "import fhir.resources.R4B.observation, zeroconf, pythonoscquery.osc_query_browser" >/dev/null 2>&1; then
        echo "soundfit setup: installing fhir.resources, zeroconf and python-oscquery in $venv" >&2
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q "fhir.resources==8.3.0" "zeroconf==0.154.0" "python-oscquery==0.4.0"
    fi
fi
