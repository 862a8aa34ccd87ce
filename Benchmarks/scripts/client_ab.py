#!/usr/bin/env python3
"""Per-cycle CPU of one JACK client against another, the two alone in one pinned SCHED_FIFO dummy
server at 64 frames, a new server per run, the order they join alternating from run to run (as
`soundfit_vs_floor.py`, for any pair). A client is one of

    floor                       Benchmarks/CJackClient/passthrough_gain.c
    footprint                   Benchmarks/CJackClient/footprint_floor.c (its FLOOR_* variables)
    swift-floor                 Benchmarks/SwiftJackClient/passthrough_gain.swift
    soundfit[:BINARY]           a bypassed soundfit (default: .build/release/soundfit)

optionally preceded by environment variables for it: `FLOOR_CODE_PAGES=16,FLOOR_FTZ=1|footprint`.
Prints each run's ratio A / B and their geometric mean. Comparing two variants of one program
directly (A against B) is more sensitive than comparing each with the floor in separate sets,
which drift by up to 5 % from one set to the next. Usage:

    python3 Benchmarks/scripts/client_ab.py A B [--runs 8] [--seconds 8] [--audio-thread]
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import jackbench  # noqa: E402

CYCLES_PER_SECOND = 48000 / 64


def start(server, spec, name):
    """Starts the client `spec` as `name` on `server` and waits for its input ports."""
    variables, _, kind = spec.rpartition("|")
    environment = dict(pair.split("=", 1) for pair in variables.split(",") if pair)
    if kind.startswith("soundfit"):
        binary = kind.partition(":")[2] or os.path.join(jackbench.ROOT, ".build", "release", "soundfit")
        process, _ = jackbench.start_soundfit(server, binary, name, env=environment)
    else:
        commands = {"floor": lambda: jackbench.c_client("passthrough_gain"),
                    "footprint": lambda: jackbench.c_client("footprint_floor"),
                    "swift-floor": lambda: jackbench.swift_client("passthrough_gain")}
        if kind not in commands:
            sys.exit(f"unknown client {kind!r}: floor, footprint, swift-floor or soundfit[:BINARY]")
        process = server.start([commands[kind](), name], env=environment)
    server.wait_for_ports(name, "input", 2)
    return process


def compare(a, b, runs, seconds, audio_thread, report):
    """Runs A and B `runs` times, a new server each run, A joining first in odd runs; calls
    `report(run, a_first, cost)` with each run's CPU µs per cycle ({"a": …, "b": …}) and returns
    the runs' (a_first, A / B) pairs."""
    ratios = []
    for run in range(1, runs + 1):
        a_first = run % 2 == 1
        server = jackbench.Server(64, cpu=1, realtime=True)
        try:
            order = [("a", a), ("b", b)] if a_first else [("b", b), ("a", a)]
            processes = {key: start(server, spec, f"client-{key}") for key, spec in order}
            time.sleep(3)
            result = jackbench.measure([p.pid for p in processes.values()], seconds)
            pick = max if audio_thread else sum
            cost = {key: pick(result[p.pid][1].values()) / 1e3 / (seconds * CYCLES_PER_SECOND)
                    for key, p in processes.items()}
        finally:
            server.stop()
        report(run, a_first, cost)
        ratios.append((a_first, cost["a"] / cost["b"]))
    return ratios


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--audio-thread", action="store_true", help="compare each process's busiest thread only")
    options = parser.parse_args()
    print(f"A: {options.a}; B: {options.b}; load average at start: {jackbench.load_average()}")

    def report(run, a_first, cost):
        print(f"| {run} | {'A, B' if a_first else 'B, A'} | A {cost['a']:.2f} µs | B {cost['b']:.2f} µs | "
              f"A / B {cost['a'] / cost['b']:.3f} |", flush=True)

    ratios = [ratio for _, ratio in compare(options.a, options.b, options.runs, options.seconds,
                                            options.audio_thread, report)]
    print(f"A / B ({'audio thread' if options.audio_thread else 'whole process'}): geometric mean "
          f"{statistics.geometric_mean(ratios):.3f} over {len(ratios)} runs (min {min(ratios):.3f}, "
          f"max {max(ratios):.3f}); load average at end: {jackbench.load_average()}")


if __name__ == "__main__":
    main()
