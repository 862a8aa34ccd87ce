#!/usr/bin/env python3
"""Two `soundfit` binaries against each other (and the Faust client) in one private
`jackd -d dummy` server, pinned to one CPU, in every order the three can join the graph: a
before/after check of a per-cycle change whose effect is smaller than the scatter between runs.

Each run starts the Faust noise source, then the three clients in one of the six orders (where a
client sits in the graph changes its cost by up to ~25 %: the last one wakes the server), feeds
them the same noise, and reads each process's CPU seconds (schedstat) over SECONDS, loaded
(lowpass 1 kHz + gain on both SoundFits, as jack_vs_faust.py) and idle (noise disconnected,
SoundFit bypassed). Prints every run and the medians of B / A and of each against Faust. Usage:

    python3 Benchmarks/scripts/jack_ab.py --a OLD_BINARY --b NEW_BINARY [--period 64] [--seconds 8] [--realtime]

Build the older binary in a worktree of its own (`git worktree add`, its own `--scratch-path`).
"""
import argparse
import itertools
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import jackbench  # noqa: E402
from jack_vs_faust import configure_idle, configure_loaded  # noqa: E402

FAUST = "faust"


def one_run(options, order):
    server = jackbench.Server(options.period, cpu=options.cpu, realtime=options.realtime)
    try:
        server.start_faust("noise_source")
        processes, clients, inputs = {}, {}, {}
        for name in order:
            if name == FAUST:
                processes[name] = server.start_faust("lowpass_gain")
                inputs[name] = server.wait_for_ports("lowpass_gain", "input", 2)
            else:
                binary = options.a if name == "A" else options.b
                processes[name], clients[name] = jackbench.start_soundfit(
                    server, binary, f"soundfit-{name}", extra=["--patches-dir", os.path.join(jackbench.ROOT, "patches")])
                inputs[name] = server.wait_for_ports(f"soundfit-{name}", "input", 2)
        noise_out = server.wait_for_ports("noise_source", "output", 2)
        for port in noise_out + inputs[FAUST] + server.wait_for_ports("lowpass_gain", "output", 2):
            server.disconnect_all(port)
        for index, source in enumerate(noise_out):
            for name in order:
                server.connect(source, inputs[name][index])
        result = {}
        for case, configure in (("loaded", configure_loaded), ("idle", configure_idle)):
            for client in clients.values():
                configure(client)
            if case == "idle":
                for port in noise_out:
                    server.disconnect_all(port)
            time.sleep(3)
            cpu = jackbench.measure([process.pid for process in processes.values()], options.seconds)
            result[case] = {name: sum(cpu[process.pid][1].values()) / 1e9 for name, process in processes.items()}
        return result
    finally:
        server.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--a", required=True, help="the binary to compare against (before)")
    parser.add_argument("--b", required=True, help="the binary under test (after)")
    parser.add_argument("--period", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--cpu", type=int, default=1)
    parser.add_argument("--realtime", action="store_true", help="jackd with SCHED_FIFO threads")
    options = parser.parse_args()
    print(f"command: python3 Benchmarks/scripts/jack_ab.py --a {options.a} --b {options.b} --period {options.period} "
          f"--seconds {options.seconds:g}{' --realtime' if options.realtime else ''}")
    print(f"load average at start: {jackbench.load_average()}")
    print("| case | graph order | A CPU s | B CPU s | Faust CPU s | B / A | A / Faust | B / Faust |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    ratios = {"loaded": [], "idle": []}
    for order in itertools.permutations(["A", "B", FAUST]):
        result = one_run(options, order)
        for case, cpu in result.items():
            row = (cpu["B"] / cpu["A"], cpu["A"] / cpu[FAUST], cpu["B"] / cpu[FAUST])
            ratios[case].append(row)
            print(f"| {case} | {' > '.join(order)} | {cpu['A']:.3f} | {cpu['B']:.3f} | {cpu[FAUST]:.3f} | "
                  + " | ".join(f"{value:.2f}" for value in row) + " |", flush=True)
    print()
    print("| case | median B / A | median A / Faust | median B / Faust |")
    print("| --- | ---: | ---: | ---: |")
    for case, rows in ratios.items():
        print(f"| {case} | " + " | ".join(f"{statistics.median(column):.2f}" for column in zip(*rows)) + " |")
    print(f"load average at end: {jackbench.load_average()}")


if __name__ == "__main__":
    main()
