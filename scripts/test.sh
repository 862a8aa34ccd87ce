#!/usr/bin/env bash
# The whole test suite: install what is missing, check that Package.swift declares what each
# target imports and that the text cites nothing a reader cannot open (scripts/check-docs.py),
# build with zero compiler warnings, run every test — DSP measurements, engine/processing/OSC/state units,
# then the integration tests against real `jackd -d dummy` servers — and build the offline
# consumer package against a tagged clone, by URL and version.
#
# Tiers (none named: all three):
#   --fast         units, DSP, in-memory surfaces: no jackd
#   --integration  the integration tests through real jackd, but the slow ones
#   --slow         hearing tests through JACK, browsers, install, long listeners, namespaces
#                  (the commands of README.md and docs/, PipeWire, netjack2, zeroconf), the consumer package
# The fast tier runs first (its hearing-test runs beside everything), then the real-time safety
# suite, then the rest of the JACK tiers side by side, each in test processes of its own (the
# layout is below, checked to run every test once); each tier prints its time. Other arguments
# go to `swift test` (e.g. `--filter Delivery`): then the tiers named run one after the other,
# each in one process.
#
# The tests are built in the release configuration (with testable imports): the heap-call
# counts on the live JACK thread must measure optimized code, the code a user runs, and no
# library target may carry optimization flags of its own (a package with unsafe flags cannot
# be depended on by version). The release build also compiles the compile-time real-time
# proofs (`@_noLocks`), which debug builds leave out.
set -euo pipefail
cd "$(dirname "$0")/.."

tiers=()
passed=()
for argument in "$@"; do
    case "$argument" in
        --fast) tiers+=(fast) ;;
        --integration) tiers+=(integration) ;;
        --slow) tiers+=(slow) ;;
        *) passed+=("$argument") ;;
    esac
done
((${#tiers[@]} > 0)) || tiers=(fast integration slow)

# Which test process runs which tests, when the whole suite runs (no filter of the caller's
# own). Items are suites (their type names) or one test of a suite (`Suite/function`).
#
# The fast tier's hearing-test runs render in real time on a stand-in audio thread and wait on
# the simulated listener's clock (about 70 s), not on the CPU: they run in a process of their
# own from the start, beside everything else. The rest of the tier (about 20 s of both cores)
# runs in another, first.
fast_clock_suites=(HearingTestRunnerTests HearingTestGateTests)
# The real-time safety suite runs alone, after the fast tier: its freewheel test runs a server
# as fast as the CPU allows, and beside six other test processes its in-process soundfit once
# answered nothing for 15 s.
alone_suites=(RealtimeSafety)
# The rest of the integration tier runs in two test processes side by side (each in a /dev/shm
# of its own, see `isolated` below): each test owns its jackd and binary and waits on sockets
# and JACK most of the time. The first process takes these suites (about half the tier's time
# on this 2-core machine), the second all the others.
integration_half=(
    Personalization OSCAbuse PatchesAndState ExposedControlPort AppliedMeansPersisted WebFuzzTests
    OutputCeiling Lifecycle
)
# The slow tier's integration suites.
slow_suites=(
    HearingTestThroughJack MaskingThroughJack MaskingCrossHearing HearingTestTerminal CalibrateTerminal
    HearingTestSurfaces MaskingNoiseRealtime CalibrationThroughJack CalibrationPage Verify WebSurface
    WebSurfaceUnderSignal Install ReadmeCommands PipeWireServer NetJack ZeroconfDiscovery
)
# The slow tier's test processes, beside the integration tier's. The hearing tests wait on the
# listener's clock (tones, gaps, response windows), not on the CPU, and each starts its own
# jackd: they run in test processes side by side (a process, not a thread, per group: libjack
# cannot hold clients of several servers at once), five, each about 3 minutes on this 2-core
# machine. (Two more, beside the integration tier's two, made the JACK tests that measure timing
# fail: a gain later than the next period, a listener that missed a tone, one client's sets
# delayed by another's flood.) Every test of the slow suites must be in one group: `check_layout`
# fails the run before any test when one is in none or in two.
slow_groups=(  # a group's items are separated by spaces or new lines
    "HearingTestThroughJack/standardAudiogramsNormal HearingTestThroughJack/pauseResumeCancel
     HearingTestThroughJack/serverLostMidTest ReadmeCommands Install NetJack"
    "MaskingThroughJack/deadEarBesideANormalEar MaskingCrossHearing MaskingNoiseRealtime"
    "HearingTestSurfaces/blindSurfacesRecordAndExport MaskingThroughJack/asymmetricEars PipeWireServer"
    "HearingTestThroughJack/standardAudiogramsSloping HearingTestThroughJack/unreliableAndSilentListeners
     HearingTestTerminal CalibrateTerminal"
    "HearingTestSurfaces/gateSubmitAndImport CalibrationThroughJack CalibrationPage Verify WebSurface
     WebSurfaceUnderSignal ZeroconfDiscovery"
)
suites_pattern() {  # items (suites, or Suite/function) of the integration tests: the filter that selects them
    local names=("$@")
    echo "SoundFitIntegrationTests\.SoundFitIntegration/($(IFS='|'; echo "${names[*]}"))(/|\(|\$)"
}
slow_pattern=$(suites_pattern "${slow_suites[@]}")
fast_clock_pattern="SoundFitRuntimeTests\.($(IFS='|'; echo "${fast_clock_suites[*]}"))(/|\$)"

SOUNDFIT_SETUP_TESTS=1 source scripts/setup.sh
# Tests that must not be skipped here (the heap-call counts need the optimized build this
# script makes) check that they run.
export SOUNDFIT_TEST_SCRIPT=1
python3 scripts/check-imports.py
python3 scripts/check-docs.py
build=(-c release -Xswiftc -enable-testing)

# What failed, printed again at the very end of the run: a CI log is often read from its tail,
# and the lines that name a failed test are far above it, among the other processes' output.
failures=$(mktemp "${TMPDIR:-/tmp}/soundfit-failures.XXXXXX")
record_failures() {  # prefix, exit status, log file
    {
        echo "${1}exited with status $2"
        if grep -q '^✘ Test .*recorded an issue' "$3"; then
            # Each issue line with its comment's lines (`↳`, then indented), not its neighbours.
            awk '/^✘ Test .*recorded an issue/ { keep = 1; print; next }
                 keep && /^(↳| )/ { print; next }
                 { keep = 0 }' "$3" | cut -c1-400 | head -n 40 | sed "s|^|$1|"
        else
            tail -n 20 "$3" | cut -c1-400 | sed "s|^|$1|"  # no test failed: it crashed or hung
        fi
    } >> "$failures"
}

report_failures() {
    [[ -s $failures ]] || return 0
    echo "==== what failed (the lines above, again)" >&2
    cat "$failures" >&2
}

# Zero compiler warnings: any `warning:` the build prints fails the run, named. (SwiftPM keeps
# remote dependencies quiet. A warning is printed when its file compiles: a fresh clone, as CI
# builds, compiles every file; an incremental build only the modules that changed.)
build_log=$(mktemp "${TMPDIR:-/tmp}/soundfit-build.XXXXXX")
trap 'report_failures; rm -f "$build_log" "$failures"' EXIT
swift build --build-tests "${build[@]}" 2>&1 | tee "$build_log"
if grep -q "warning:" "$build_log"; then
    echo "test.sh: the build printed compiler warnings; SoundFit builds with none (fix each at its cause):" >&2
    grep -E ':[0-9]+:[0-9]+: warning:' "$build_log" | sort -u >&2 || grep "warning:" "$build_log" | sort -u >&2
    exit 1
fi

# A test blocked in a system call ignores Swift Testing's time limit, and a silent CI job says
# nothing of where it stopped. So each test process has a budget in seconds: about three times
# its tier's (or group's) usual time on this 2-core machine, and all of them with the build
# below CI's 90 minutes. Past it, the watchdog names the tests that started and did not end,
# prints every thread's stack (with gdb, when installed) and stops the process, which fails.
# The output is line-buffered, so a log ends at the last line printed, not at the last full
# 4 KB block.
declare -A tier_budget=([fast]=400 [integration]=1000 [slow]=1200)

unfinished_tests() {  # log file
    awk '/^◇ Test "/ && / started\.$/ { name = $0; sub(/^◇ Test /, "", name); sub(/ started\.$/, "", name); open[name] = 1 }
         /^(✔|✘) Test "/ && /(passed|failed) after/ {
             name = $0; sub(/^(✔|✘) Test /, "", name)
             sub(/( with [0-9]+ test cases?)? (passed|failed) after.*$/, "", name); delete open[name] }
         END { for (name in open) print "  " name }' "$1"
}

descendants() {  # pid: its children, their children, ...
    local child
    for child in $(pgrep -P "$1" || true); do echo "$child"; descendants "$child"; done
}

report_hang() {  # tier, budget, log file, pid of the watched command
    echo "test.sh: tier $1 still running after its budget of $2 s; tests started and not ended:" >&2
    unfinished_tests "$3" >&2
    local pid
    for pid in $({ echo "$4"; descendants "$4"; } | xargs -r ps -o pid= -o comm= -p | awk '$2 ~ /SoundFitPackage/ { print $1 }'); do
        if command -v gdb >/dev/null; then
            echo "test.sh: threads of test process $pid:" >&2
            timeout 60 gdb -p "$pid" -batch -ex 'thread apply all bt 16' 2>/dev/null | grep -E '^(Thread|#)' >&2 || true
        fi
        kill -KILL "$pid" 2>/dev/null || true
    done
}

watched() {  # tier, prefix for each output line, command...
    local tier=$1 prefix=$2 log status=0
    shift 2
    log=$(mktemp "${TMPDIR:-/tmp}/soundfit-tier.XXXXXX")
    NO_COLOR=1 stdbuf -oL -eL "$@" > >(tee "$log" | sed -u "s|^|$prefix|") 2>&1 &
    local runner=$!
    (
        deadline=$((SECONDS + tier_budget[$tier]))
        while kill -0 "$runner" 2>/dev/null; do
            if ((SECONDS >= deadline)); then report_hang "$tier" "${tier_budget[$tier]}" "$log" "$runner"; break; fi
            sleep 2
        done
    ) &
    local watchdog=$!
    wait "$runner" || status=$?
    wait "$watchdog" || true
    ((status == 0)) || record_failures "$prefix" "$status" "$log"
    rm -f "$log"
    return "$status"
}

swift_test_watched() {  # tier, swift test arguments...
    local tier=$1
    shift
    watched "$tier" "" swift test --skip-build "${build[@]}" "$@"
}

# A command prefix: what follows runs in a /dev/shm of its own. jackd2 keeps there everything
# a server shares with its clients, and some of it is one for the whole machine or user: the
# server registry (8 servers at most) with its lock, and the port metadata database (keyed by
# UUIDs every server numbers from the same start). Test processes side by side that shared them
# failed: one's ports read another's metadata, and clients could not open or connect on running
# servers. A mount namespace with its own tmpfs on /dev/shm (and System V IPC of its own) gives
# each process all of these alone; a user other than root needs a user namespace for it (the
# user keeps its id).
isolated=(unshare --mount --ipc --propagation private)
((EUID == 0)) || isolated=(unshare --user --map-current-user --mount --ipc --propagation private)
isolated+=(-- sh -c 'mount -t tmpfs -o mode=1777 tmpfs /dev/shm && exec "$@"' isolated)

# `swift test` holds the build folder's lock while it runs, so processes side by side run the
# test binary itself, each with its own arguments, in a /dev/shm of its own (`isolated`), with
# an output prefix naming its tier and its number. Each records, when it ends, how long after the
# tests started it ended; `report_tiers` prints each tier's time from those.
test_binary=""
tests_started=$SECONDS
process_ends=""
process_count=0
started_process=""
start_process() {  # tier, test binary arguments...: one test process, in the background
    local tier=$1
    shift
    process_count=$((process_count + 1))
    local index=$process_count
    (
        code=0
        watched "$tier" "[$tier $index] " "${isolated[@]}" "$test_binary" --testing-library swift-testing "$@" || code=$?
        echo "$((SECONDS - tests_started)) $code" > "$process_ends/$tier.$index"
        exit "$code"
    ) &
    started_process=$!
}

side_by_side() {  # -- tier arguments of process 1 -- tier arguments of process 2 ...: all, until all end
    local pids=() status=0 pid group=()
    start_group() {
        ((${#group[@]} > 0)) || return 0
        start_process "${group[@]}"
        pids+=("$started_process")
        group=()
    }
    for argument in "$@"; do
        if [[ $argument == -- ]]; then start_group; else group+=("$argument"); fi
    done
    start_group
    for pid in "${pids[@]}"; do wait "$pid" || status=1; done
    return "$status"
}

report_tiers() {  # each tier's time: when its last process ended, after the tests started
    local tier
    for tier in fast integration slow; do
        compgen -G "$process_ends/$tier.*" >/dev/null || continue
        # shellcheck disable=SC2046  # one file per process
        awk -v tier="$tier" '{ if ($1 > time) time = $1; if ($2 != 0) failed = 1 }
            END { printf "==== tier %s %s in %d s\n", tier, failed ? "failed" : "passed", time }' $(compgen -G "$process_ends/$tier.*") >&2
    done
}

# The test processes of a tier, as `side_by_side` takes them (`-- tier arguments` each), but the
# fast tier's listener-clock process and the real-time safety suite, which run on their own.
tier_groups() {  # tier
    local group
    case "$1" in
        fast) printf '%s\n' -- fast --skip SoundFitIntegrationTests --skip "$fast_clock_pattern" ;;
        integration)
            printf '%s\n' -- integration --filter "$(suites_pattern "${integration_half[@]}")" \
                -- integration --filter SoundFitIntegrationTests --skip "$slow_pattern" --skip "$(suites_pattern "${integration_half[@]}")" \
                --skip "$(suites_pattern "${alone_suites[@]}")" ;;
        slow)
            for group in "${slow_groups[@]}"; do
                # shellcheck disable=SC2086  # each group is a word list
                printf '%s\n' -- slow --filter "$(suites_pattern $group)"
            done ;;
    esac
}

# Every test in exactly one process of the layout, checked before any runs: a test in no
# process would silently never run, one in two would run twice. The test binary lists every
# test's id; each process's `--filter`s and `--skip`s are applied to that list as regular
# expressions, as the test library applies them to test ids.
check_layout() {  # -- tier arguments of process 1 -- ...
    local all selected arguments=() argument
    all=$("$test_binary" --testing-library swift-testing --list-tests)
    selected=$(
        select_process() {
            ((${#arguments[@]} > 1)) || return 0
            local ids=$all index
            local filters=() skips=()
            for ((index = 1; index < ${#arguments[@]}; index += 2)); do
                case "${arguments[index]}" in
                    --filter) filters+=("${arguments[index + 1]}") ;;
                    --skip) skips+=("${arguments[index + 1]}") ;;
                esac
            done
            if ((${#filters[@]} > 0)); then ids=$(grep -E "$(IFS='|'; echo "${filters[*]}")" <<<"$ids" || true); fi
            for skip in "${skips[@]}"; do ids=$(grep -vE "$skip" <<<"$ids" || true); done
            [[ -z $ids ]] || echo "$ids"
        }
        for argument in "$@"; do
            if [[ $argument == -- ]]; then select_process; arguments=(); else arguments+=("$argument"); fi
        done
        select_process
    )
    local missing twice
    missing=$(comm -23 <(sort -u <<<"$all") <(sort -u <<<"$selected"))
    twice=$(sort <<<"$selected" | uniq -d)
    if [[ -n $missing || -n $twice ]]; then
        [[ -z $missing ]] || printf 'test.sh: tests in no test process of the layout:\n%s\n' "$missing" >&2
        [[ -z $twice ]] || printf 'test.sh: tests in two test processes of the layout:\n%s\n' "$twice" >&2
        return 1
    fi
    echo "test.sh: $(wc -l <<<"$all") tests, each in one of the layout's test processes" >&2
}

run_tier() {  # tier, with arguments of the caller's own (a filter): the tier in one process
    local tier=$1 start=$SECONDS
    echo "==== tier $tier" >&2
    case "$tier" in
        fast) swift_test_watched fast --skip SoundFitIntegrationTests "${passed[@]}" ;;
        integration) swift_test_watched integration --filter SoundFitIntegrationTests --skip "$slow_pattern" "${passed[@]}" ;;
        slow) swift_test_watched slow --filter "$slow_pattern" "${passed[@]}"; scripts/check-consumer.sh ;;
    esac
    echo "==== tier $tier passed in $((SECONDS - start)) s" >&2
}

if ((${#passed[@]} > 0)); then
    for tier in "${tiers[@]}"; do run_tier "$tier"; done
else
    # The layout, in three steps:
    # 1. the rest of the fast tier and the consumer package's build, side by side: they keep
    #    both cores busy. Beside the JACK tests they made them miss their timing, even at the
    #    lowest priority (nice 19): a gain not in the next period, a hearing test's surfaces
    #    printing near tones, its false-alarm rate; at idle priority (SCHED_IDLE) the fast tier's
    #    own threaded tests starved;
    # 2. the real-time safety suite alone (`alone_suites`);
    # 3. every other process of the JACK tiers side by side: they wait on sockets, JACK and the
    #    listener's clock, not on the CPU.
    # The fast tier's listener-clock process starts first and runs beside all three (little CPU).
    test_binary="$(swift build "${build[@]}" --show-bin-path)/SoundFitPackageTests.xctest"
    process_ends=$(mktemp -d "${TMPDIR:-/tmp}/soundfit-ends.XXXXXX")
    trap 'report_failures; rm -f "$build_log" "$failures"; rm -rf "$process_ends"' EXIT
    # Each a list of processes as `side_by_side` takes them: the listener-clock process, the rest
    # of the fast tier, the real-time safety suite, the other JACK processes.
    clock=() first=() alone=() jack=()
    for tier in "${tiers[@]}"; do
        case "$tier" in
            fast) clock=(-- fast --filter "$fast_clock_pattern"); mapfile -t first < <(tier_groups fast) ;;
            integration) alone=(-- integration --filter "$(suites_pattern "${alone_suites[@]}")") ;;
        esac
        [[ $tier == fast ]] || mapfile -t -O "${#jack[@]}" jack < <(tier_groups "$tier")
    done
    if [[ " ${tiers[*]} " == *" fast "* && " ${tiers[*]} " == *" integration "* && " ${tiers[*]} " == *" slow "* ]]; then
        check_layout "${clock[@]}" "${first[@]}" "${alone[@]}" "${jack[@]}"
    fi
    tests_started=$SECONDS
    status=0
    clock_process=""
    if ((${#clock[@]} > 0)); then
        start_process "${clock[@]:1}"
        clock_process=$started_process
    fi
    consumer=""
    if [[ " ${tiers[*]} " == *" slow "* ]]; then
        scripts/check-consumer.sh > >(sed -u 's|^|[consumer] |') 2>&1 &
        consumer=$!
    fi
    if ((${#first[@]} > 0)); then side_by_side "${first[@]}" || status=1; fi
    if [[ -n $consumer ]]; then wait "$consumer" || { echo "test.sh: the consumer package check failed" >&2; status=1; }; fi
    if ((${#alone[@]} > 0)); then side_by_side "${alone[@]}" || status=1; fi
    if ((${#jack[@]} > 0)); then side_by_side "${jack[@]}" || status=1; fi
    if [[ -n $clock_process ]]; then wait "$clock_process" || status=1; fi
    report_tiers  # and, on the way out, what failed (the trap's `report_failures`)
    ((status == 0)) || exit 1
    echo "==== all passed in $((SECONDS - tests_started)) s" >&2
fi
