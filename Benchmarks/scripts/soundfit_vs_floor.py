#!/usr/bin/env python3
"""Per-cycle CPU of a bypassed `soundfit` against the minimal C client
(`Benchmarks/CJackClient/passthrough_gain.c`), the two alone in one pinned SCHED_FIFO dummy server
at 64 frames, a new server per run, the order they join alternating from run to run.

SoundFit runs as started (every stage bypassed by default) on silence, as does the floor client.
Each run reads both processes' CPU (the sum of their threads' `schedstat` run time, or with
`--audio-thread` only each one's busiest thread) over SECONDS and prints the ratio; the summary is
the geometric mean over the runs, and over each order. With two clients the ratio holds to a few
percent from run to run (with three, the place in the graph moves it by up to 20 %: see
docs/benchmarks/2026-11-30-cycle-place.md). The runs are `client_ab.py`'s, SoundFit as A and the
floor as B. Usage:

    swift build -c release --product soundfit
    python3 Benchmarks/scripts/soundfit_vs_floor.py [--binary B] [--runs 8] [--seconds 12] [--audio-thread]
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))
import client_ab  # noqa: E402
import jackbench  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(jackbench.ROOT, ".build", "release", "soundfit"))
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--audio-thread", action="store_true", help="compare each process's busiest thread only")
    options = parser.parse_args()
    print(f"binary: {options.binary}; load average at start: {jackbench.load_average()}")
    print("| run | joining order | SoundFit µs per cycle | floor µs per cycle | SoundFit / floor |")
    print("| ---: | --- | ---: | ---: | ---: |")

    def report(run, soundfit_first, cost):
        order = "SoundFit, floor" if soundfit_first else "floor, SoundFit"
        print(f"| {run} | {order} | {cost['a']:.2f} | {cost['b']:.2f} | {cost['a'] / cost['b']:.3f} |", flush=True)

    runs = client_ab.compare(f"soundfit:{options.binary}", "floor", options.runs, options.seconds,
                             options.audio_thread, report)
    ratios = {first: [ratio for soundfit_first, ratio in runs if soundfit_first == first] for first in (True, False)}
    every = ratios[True] + ratios[False]
    print()
    print(f"SoundFit / floor ({'audio thread' if options.audio_thread else 'whole process'}): geometric mean "
          f"{statistics.geometric_mean(every):.3f} over {len(every)} runs (SoundFit first "
          f"{statistics.geometric_mean(ratios[True]):.3f}, floor first "
          f"{statistics.geometric_mean(ratios[False]) if ratios[False] else float('nan'):.3f}); "
          f"load average at end: {jackbench.load_average()}")


if __name__ == "__main__":
    main()
