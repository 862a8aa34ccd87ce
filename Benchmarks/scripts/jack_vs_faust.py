#!/usr/bin/env python3
"""Whole-process CPU of the real `soundfit` binary against a Faust JACK client doing the same work,
side by side in one private `jackd -d dummy` server.

For each period (frames per cycle) and run this starts one dummy server (48 kHz), the Faust client
`Benchmarks/Faust/jack/lowpass_gain.dsp` (stereo 2nd-order Butterworth lowpass at 1 kHz, then
-6 dB; built with `faust2jackconsole`, which is installed when missing) and SoundFit (stereo,
/filter/type lowpass, cutoff 1000 Hz, Q 0.7071, /output/gain -6, every other stage bypassed), and
feeds both the same white noise from a third Faust client (`noise_source.dsp`). After a 3 s
settling time it reads each whole process's CPU seconds (the sum of its threads' run time,
`/proc/PID/task/*/schedstat`) over SECONDS and prints them with the ratio SoundFit / Faust. The idle case follows in the same server:
every SoundFit stage bypassed (filter off, gain 0 dB) and the noise disconnected from both, so both
get silence; the Faust client keeps filtering it. Per-thread CPU (`/proc/PID/task/*/schedstat`)
shows where SoundFit's share goes.

Placement: on a VM, a thread woken on another CPU than its waker's is charged the cross-CPU
wake-up (an IPI and the idle CPU's exit; in `perf` it shows as `finish_task_switch`), and the
scheduler, not the client, decides which client's thread lands there. `--placement one-cpu` pins
the server and every client to one CPU (taskset), so both clients are woken the same way and the
ratio compares what the clients themselves cost; `free` (the default) leaves placement to the
scheduler, as a user's system does; `both` runs each. The migrations column counts how often
each process's threads moved between CPUs during the window. Usage:

    swift build -c release --product soundfit
    python3 Benchmarks/scripts/jack_vs_faust.py [--periods 32,64,256] [--seconds 20] [--runs 3]
                                                [--placement free|one-cpu|both] [--realtime]

Absolute CPU seconds depend on the machine and on what else runs; the ratio holds better, since
both clients run in the same server at the same time.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import jackbench  # noqa: E402

SOUNDFIT_NAME = "soundfit-bench"


def configure_loaded(client):
    for address, value in [("/filter/type", "lowpass"), ("/filter/cutoff", 1000.0), ("/filter/q", 0.7071),
                           ("/filter/enabled", 1), ("/ringmod/enabled", 0), ("/output/gain", -6.0)]:
        client.set_and_wait_applied(address, value)


def configure_idle(client):
    for address, value in [("/filter/enabled", 0), ("/ringmod/enabled", 0), ("/output/gain", 0.0)]:
        client.set_and_wait_applied(address, value)


def top_threads(threads, count=4):
    busiest = sorted(threads.items(), key=lambda item: -item[1])[:count]
    return ", ".join(f"{name} {ns / 1e9:.3f}" for name, ns in busiest)


def migrations(pid):
    return sum(jackbench.thread_migrations(pid).values())


def measure(pids, seconds):
    """Per pid: (CPU seconds, {thread: ns}, thread migrations) over the window. The CPU seconds
    are the sum of the threads' run time from schedstat (nanoseconds); /proc/PID/stat counts
    in 10 ms ticks, too coarse for the 0.03–0.1 s a client uses in a window. No thread starts
    or ends during a window here (no OSC traffic), so the sum is the whole process."""
    before = {pid: migrations(pid) for pid in pids}
    result = jackbench.measure(pids, seconds)
    return {pid: (sum(result[pid][1].values()) / 1e9, result[pid][1], migrations(pid) - before[pid]) for pid in pids}


def one_run(options, period, placement, soundfit_first):
    server = jackbench.Server(period, cpu=options.cpu if placement == "one-cpu" else None, realtime=options.realtime)
    try:
        noise = server.start_faust("noise_source")
        if soundfit_first:
            soundfit, client = jackbench.start_soundfit(server, options.binary, SOUNDFIT_NAME)
        faust = server.start_faust("lowpass_gain")
        if not soundfit_first:
            server.wait_for_ports("lowpass_gain", "input", 2)
            soundfit, client = jackbench.start_soundfit(server, options.binary, SOUNDFIT_NAME)
        floor = None
        if options.floor:
            floor = server.start([jackbench.c_client("passthrough_gain")])
            floor_in = server.wait_for_ports("passthrough_gain", "input", 2)
        faust_in = server.wait_for_ports("lowpass_gain", "input", 2)
        noise_out = server.wait_for_ports("noise_source", "output", 2)
        soundfit_in = server.wait_for_ports(SOUNDFIT_NAME, "input", 2)
        for port in faust_in + noise_out + server.wait_for_ports("lowpass_gain", "output", 2):
            server.disconnect_all(port)
        for index, (source, faust_port, soundfit_port) in enumerate(zip(noise_out, faust_in, soundfit_in)):
            server.connect(source, faust_port)
            server.connect(source, soundfit_port)
            if floor:
                server.connect(source, floor_in[index])
        pids = [soundfit.pid, faust.pid] + ([floor.pid] if floor else [])

        def window():
            xruns_before = jackbench.status(client)["xruns"]
            time.sleep(0.5)  # the /status request's handling stays out of the window
            result = measure(pids, options.seconds)
            xruns = jackbench.status(client)["xruns"] - xruns_before
            return (result[soundfit.pid], result[faust.pid], result[floor.pid] if floor else None, xruns)

        configure_loaded(client)
        time.sleep(3)
        loaded = window()
        # Idle: silence into every client (the noise source is disconnected), SoundFit fully
        # bypassed; the Faust client (and the floor client) go on computing on silence.
        for port in noise_out:
            server.disconnect_all(port)
        configure_idle(client)
        time.sleep(3)
        return {"loaded": loaded, "idle": window()}
    finally:
        server.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--periods", default="32,64,256")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--placement", choices=["free", "one-cpu", "both"], default="free")
    parser.add_argument("--cpu", type=int, default=1, help="the CPU of --placement one-cpu")
    parser.add_argument("--realtime", action="store_true", help="jackd with SCHED_FIFO threads (default: --no-realtime)")
    parser.add_argument("--order", choices=["alternate", "soundfit-first", "faust-first"], default="alternate",
                        help="which client joins the graph first (alternate: SoundFit in even runs)")
    parser.add_argument("--floor", action="store_true",
                        help="also run the minimal C client (Benchmarks/CJackClient/passthrough_gain.c), last in the graph")
    parser.add_argument("--binary", default=os.path.join(jackbench.ROOT, ".build", "release", "soundfit"))
    options = parser.parse_args()
    periods = [int(p) for p in options.periods.split(",")]
    placements = ["free", "one-cpu"] if options.placement == "both" else [options.placement]
    print(f"command: python3 Benchmarks/scripts/jack_vs_faust.py --periods {options.periods} "
          f"--seconds {options.seconds:g} --runs {options.runs} --placement {options.placement}"
          f"{' --realtime' if options.realtime else ''} --order {options.order}{' --floor' if options.floor else ''}")
    print(f"binary: {options.binary}; load average at start: {jackbench.load_average()}")
    print("| period | placement | case | run (S: SoundFit first, F: Faust first) | SoundFit CPU s | Faust CPU s "
          "| SoundFit / Faust | C floor / Faust | xruns | migrations SoundFit / Faust | SoundFit's busiest threads (CPU s) |")
    print("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    summary = []
    for period in periods:
        for placement in placements:
            ratios = {"loaded": [], "idle": []}
            floors = {"loaded": [], "idle": []}
            for run in range(1, options.runs + 1):
                first = {"soundfit-first": True, "faust-first": False}.get(options.order, run % 2 == 0)
                result = one_run(options, period, placement, soundfit_first=first)
                for case in ("loaded", "idle"):
                    (sf_cpu, sf_threads, sf_moves), (faust_cpu, _, faust_moves), floor, xruns = result[case]
                    ratio = sf_cpu / faust_cpu if faust_cpu > 0 else float("inf")
                    ratios[case].append(ratio)
                    floor_text = "–"
                    if floor and faust_cpu > 0:
                        floors[case].append(floor[0] / faust_cpu)
                        floor_text = f"{floor[0] / faust_cpu:.2f}"
                    print(f"| {period} | {placement} | {case} | {run} {'S' if first else 'F'} | {sf_cpu:.3f} | {faust_cpu:.3f} "
                          f"| {ratio:.2f} | {floor_text} | {xruns} | {sf_moves} / {faust_moves} | {top_threads(sf_threads)} |",
                          flush=True)
            for case in ("loaded", "idle"):
                floor_median = f"{statistics.median(floors[case]):.2f}" if floors[case] else "–"
                summary.append((period, placement, case, statistics.median(ratios[case]), min(ratios[case]),
                                max(ratios[case]), floor_median))
    print()
    print("| period | placement | case | median SoundFit / Faust | min | max | median C floor / Faust |")
    print("| ---: | --- | --- | ---: | ---: | ---: | ---: |")
    for period, placement, case, median, low, high, floor_median in summary:
        print(f"| {period} | {placement} | {case} | {median:.2f} | {low:.2f} | {high:.2f} | {floor_median} |")
    print(f"load average at end: {jackbench.load_average()}")


if __name__ == "__main__":
    main()
