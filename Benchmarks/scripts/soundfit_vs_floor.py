#!/usr/bin/env python3
"""Per-cycle CPU of a bypassed `soundfit` against the minimal C client
(`Benchmarks/CJackClient/passthrough_gain.c`), the two alone in one pinned SCHED_FIFO dummy server
at 64 frames, a new server per run, the order they join alternating from run to run.

SoundFit runs as started (every stage bypassed by default) on silence, as does the floor client.
Each run reads both processes' CPU (the sum of their threads' `schedstat` run time, or with
`--audio-thread` only each one's busiest thread) over SECONDS and prints the ratio; the summary is
the geometric mean over the runs, and over each order. With two clients the ratio holds to a few
percent from run to run (with three, the place in the graph moves it by up to 20 %: see
docs/benchmarks/2026-11-30-cycle-place.md). Usage:

    swift build -c release --product soundfit
    python3 Benchmarks/scripts/soundfit_vs_floor.py [--binary B] [--runs 8] [--seconds 12] [--audio-thread]
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import jackbench  # noqa: E402

CYCLES_PER_SECOND = 48000 / 64


def one_run(binary, soundfit_first, seconds, audio_thread):
    server = jackbench.Server(64, cpu=1, realtime=True)
    try:
        processes = {}
        for kind in (("soundfit", "floor") if soundfit_first else ("floor", "soundfit")):
            if kind == "soundfit":
                processes[kind], _ = jackbench.start_soundfit(server, binary, "soundfit-bench")
                server.wait_for_ports("soundfit-bench", "input", 2)
            else:
                processes[kind] = server.start([jackbench.c_client("passthrough_gain"), "floor"])
                server.wait_for_ports("floor", "input", 2)
        time.sleep(3)
        result = jackbench.measure([p.pid for p in processes.values()], seconds)
        pick = max if audio_thread else sum
        return {kind: pick(result[p.pid][1].values()) / 1e3 / (seconds * CYCLES_PER_SECOND)
                for kind, p in processes.items()}
    finally:
        server.stop()


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
    ratios = {True: [], False: []}
    for run in range(1, options.runs + 1):
        soundfit_first = run % 2 == 1
        cost = one_run(options.binary, soundfit_first, options.seconds, options.audio_thread)
        ratio = cost["soundfit"] / cost["floor"]
        ratios[soundfit_first].append(ratio)
        order = "SoundFit, floor" if soundfit_first else "floor, SoundFit"
        print(f"| {run} | {order} | {cost['soundfit']:.2f} | {cost['floor']:.2f} | {ratio:.3f} |", flush=True)
    every = ratios[True] + ratios[False]
    print()
    print(f"SoundFit / floor ({'audio thread' if options.audio_thread else 'whole process'}): geometric mean "
          f"{statistics.geometric_mean(every):.3f} over {len(every)} runs (SoundFit first "
          f"{statistics.geometric_mean(ratios[True]):.3f}, floor first "
          f"{statistics.geometric_mean(ratios[False]) if ratios[False] else float('nan'):.3f}); "
          f"load average at end: {jackbench.load_average()}")


if __name__ == "__main__":
    main()
