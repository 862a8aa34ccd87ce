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
                                                [--floor] [--order alternate|soundfit-first|faust-first|latin]

`--order latin` (with the floor, runs a multiple of 3) is the fair comparison: each client joins
the graph first, second and third once per three runs, and the summary's geometric means cancel
what the place itself costs.

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


# The clients in the order they join the graph, per --order. A client that joins earlier runs
# earlier in each cycle, and where a client runs changes what its wake-up costs (two copies of the
# floor client differ by up to 20 % by place alone on the development VM): `latin` gives each
# client each place once per three runs (a Latin square), so the geometric mean of a ratio over
# the three cancels the place.
LATIN_SQUARE = [("S", "F", "C"), ("F", "C", "S"), ("C", "S", "F")]


def sequence(order, run, floor):
    """The clients of run `run` (1-based) in joining order: S SoundFit, F Faust, C the floor."""
    if order == "latin":
        return LATIN_SQUARE[(run - 1) % 3]
    soundfit_first = {"soundfit-first": True, "faust-first": False}.get(order, run % 2 == 0)
    return ("S", "F") + (("C",) if floor else ()) if soundfit_first else ("F", "S") + (("C",) if floor else ())


def one_run(options, period, placement, clients):
    server = jackbench.Server(period, cpu=options.cpu if placement == "one-cpu" else None, realtime=options.realtime)
    try:
        noise = server.start_faust("noise_source")
        floor = None
        for kind in clients:
            if kind == "S":
                soundfit, client = jackbench.start_soundfit(server, options.binary, SOUNDFIT_NAME)
                server.wait_for_ports(SOUNDFIT_NAME, "input", 2)
            elif kind == "F":
                faust = server.start_faust("lowpass_gain")
                server.wait_for_ports("lowpass_gain", "input", 2)
            else:
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
    parser.add_argument("--order", choices=["alternate", "soundfit-first", "faust-first", "latin"], default="alternate",
                        help="which client joins the graph first (alternate: SoundFit in even runs; latin: every "
                             "client in every place once per three runs, with the floor; the floor is last otherwise)")
    parser.add_argument("--floor", action="store_true",
                        help="also run the minimal C client (Benchmarks/CJackClient/passthrough_gain.c)")
    parser.add_argument("--binary", default=os.path.join(jackbench.ROOT, ".build", "release", "soundfit"))
    options = parser.parse_args()
    if options.order == "latin":
        options.floor = True
        if options.runs % 3:
            parser.error("--order latin takes a multiple of 3 runs (one Latin square each)")
    periods = [int(p) for p in options.periods.split(",")]
    placements = ["free", "one-cpu"] if options.placement == "both" else [options.placement]
    print(f"command: python3 Benchmarks/scripts/jack_vs_faust.py --periods {options.periods} "
          f"--seconds {options.seconds:g} --runs {options.runs} --placement {options.placement}"
          f"{' --realtime' if options.realtime else ''} --order {options.order}{' --floor' if options.floor else ''}")
    print(f"binary: {options.binary}; load average at start: {jackbench.load_average()}")
    print("| period | placement | case | run: joining order (S SoundFit, F Faust, C floor) | SoundFit CPU s | Faust CPU s "
          "| SoundFit / Faust | C floor / Faust | SoundFit / C floor | xruns | migrations SoundFit / Faust "
          "| SoundFit's busiest threads (CPU s) |")
    print("| ---: | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    summary = []
    for period in periods:
        for placement in placements:
            ratios = {"loaded": [], "idle": []}
            floors = {"loaded": [], "idle": []}
            over_floor = {"loaded": [], "idle": []}
            for run in range(1, options.runs + 1):
                clients = sequence(options.order, run, options.floor)
                result = one_run(options, period, placement, clients)
                for case in ("loaded", "idle"):
                    (sf_cpu, sf_threads, sf_moves), (faust_cpu, _, faust_moves), floor, xruns = result[case]
                    ratio = sf_cpu / faust_cpu if faust_cpu > 0 else float("inf")
                    ratios[case].append(ratio)
                    floor_text, over_floor_text = "–", "–"
                    if floor and faust_cpu > 0 and floor[0] > 0:
                        floors[case].append(floor[0] / faust_cpu)
                        over_floor[case].append(sf_cpu / floor[0])
                        floor_text, over_floor_text = f"{floor[0] / faust_cpu:.2f}", f"{sf_cpu / floor[0]:.2f}"
                    print(f"| {period} | {placement} | {case} | {run} {''.join(clients)} | {sf_cpu:.3f} | {faust_cpu:.3f} "
                          f"| {ratio:.2f} | {floor_text} | {over_floor_text} | {xruns} | {sf_moves} / {faust_moves} "
                          f"| {top_threads(sf_threads)} |", flush=True)
            for case in ("loaded", "idle"):
                summary.append((period, placement, case, ratios[case], floors[case], over_floor[case]))
    print()
    print("Geometric means are over whole runs; with --order latin they cancel each client's place in the graph.")
    print("| period | placement | case | SoundFit / Faust: geometric mean (median, min–max) | C floor / Faust "
          "| SoundFit / C floor: geometric mean (median, min–max) |")
    print("| ---: | --- | --- | --- | --- | --- |")
    for period, placement, case, ratio, floor, over in summary:
        def spread(values):
            if not values:
                return "–"
            return (f"{statistics.geometric_mean(values):.2f} ({statistics.median(values):.2f}, "
                    f"{min(values):.2f}–{max(values):.2f})")
        floor_text = f"{statistics.geometric_mean(floor):.2f}" if floor else "–"
        print(f"| {period} | {placement} | {case} | {spread(ratio)} | {floor_text} | {spread(over)} |")
    print(f"load average at end: {jackbench.load_average()}")


if __name__ == "__main__":
    main()
