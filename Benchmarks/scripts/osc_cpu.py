#!/usr/bin/env python3
"""Control-plane CPU of the real `soundfit` binary: whole-process CPU seconds per 1 000 OSC sets
(set -> applied) and the share of a core at a given message rate.

Starts a private `jackd -d dummy` (48 kHz, PERIOD frames) and the release binary (stereo, every
stage bypassed, silence in), measures the idle process for SECONDS as the baseline, then sends
`/filter/cutoff ,f value` (a new value each time) paced at each RATE for SECONDS while reading the
replies, and reports the process's CPU seconds over the window (utime + stime from
`/proc/PID/stat`), CPU seconds per 1 000 sets above the idle baseline, the number of `applied`
and `superseded` replies, and the busiest threads. Usage:

    swift build -c release --product soundfit
    python3 Benchmarks/scripts/osc_cpu.py [--period 64] [--rates 1000,10000] [--seconds 10]

The sender is one Python thread; at 10 000 messages per second it needs most of a core itself, so
on a 2-core machine it competes with SoundFit: read the figures as an upper bound.
"""
import argparse
import os
import select
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import jackbench  # noqa: E402
from oscclient import decode, encode  # noqa: E402


def drive(client, rate, seconds):
    """Sends at `rate` for `seconds` and drains replies; returns (sent, applied, superseded)."""
    sock = client.sock
    sock.setblocking(False)
    sent = applied = superseded = 0
    start = time.monotonic()
    end = start + seconds
    while True:
        now = time.monotonic()
        due = min(int((now - start) * rate), int(seconds * rate))
        while sent < due:
            sock.sendto(encode("/filter/cutoff", 500.0 + (sent % 1000)), client.target)
            sent += 1
        if now >= end + 1.0:
            break
        readable, _, _ = select.select([sock], [], [], 0.0005)
        while readable:
            try:
                address, args = decode(sock.recv(65536))
            except BlockingIOError:
                break
            if address == "/state" and args[0] == "/filter/cutoff":
                applied += args[1] == "applied"
                superseded += args[1] == "superseded"
    sock.setblocking(True)
    return sent, applied, superseded


def busiest(threads, count=4):
    top = sorted(threads.items(), key=lambda item: -item[1])[:count]
    return ", ".join(f"{name} {ns / 1e9:.3f}" for name, ns in top)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--period", type=int, default=64)
    parser.add_argument("--rates", default="1000,10000")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--binary", default=os.path.join(jackbench.ROOT, ".build", "release", "soundfit"))
    options = parser.parse_args()
    server = jackbench.Server(options.period)
    try:
        soundfit, client = jackbench.start_soundfit(server, options.binary, "soundfit-osc-bench")
        time.sleep(3)
        print(f"command: python3 Benchmarks/scripts/osc_cpu.py --period {options.period} --rates {options.rates} "
              f"--seconds {options.seconds:g}")
        print(f"binary: {options.binary}; load average at start: {jackbench.load_average()}")
        idle_cpu, idle_threads = jackbench.measure([soundfit.pid], options.seconds)[soundfit.pid]
        print("| rate /s | sets sent | applied | superseded | CPU s | share of a core | CPU s per 1 000 sets "
              "(above idle) | busiest threads (CPU s) |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        print(f"| idle | 0 | 0 | 0 | {idle_cpu:.2f} | {idle_cpu / options.seconds:.1%} | - | {busiest(idle_threads)} |")
        for rate in [int(r) for r in options.rates.split(",")]:
            before = jackbench.cpu_seconds(soundfit.pid)
            threads_before = jackbench.thread_cpu_ns(soundfit.pid)
            started = time.monotonic()
            sent, applied, superseded = drive(client, rate, options.seconds)
            elapsed = time.monotonic() - started
            cpu = jackbench.cpu_seconds(soundfit.pid) - before
            threads = {}
            for key, ns in jackbench.thread_cpu_ns(soundfit.pid).items():
                threads[key[1]] = threads.get(key[1], 0) + ns - threads_before.get(key, 0)
            above_idle = cpu - idle_cpu / options.seconds * elapsed
            print(f"| {rate} | {sent} | {applied} | {superseded} | {cpu:.2f} | {cpu / elapsed:.1%} | "
                  f"{above_idle / sent * 1000:.3f} | {busiest(threads)} |", flush=True)
        print(f"load average at end: {jackbench.load_average()}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
