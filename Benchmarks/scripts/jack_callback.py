#!/usr/bin/env python3
"""Process-callback duration of the real `soundfit` binary inside a real JACK graph.

Starts a private `jackd -d dummy` (48 kHz, PERIOD frames), runs the release binary with stereo
ports, measures the callback's duration on CLOCK_MONOTONIC (once its thread CPU time, a system call;
recorded by the binary in a preallocated ring, reported by /status) first with the chain bypassed (baseline), then with the
filter, ring modulator and gain, then with hearing personalization (tech level 3, N3 audiogram,
intensity 1) added, in the same run. Usage:

    swift build -c release --product soundfit
    python3 Benchmarks/scripts/jack_callback.py [--period 64] [--seconds 10]
"""
import argparse
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from oscclient import Client  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def status(client):
    args = client.request("/status")
    return dict(zip(args[0::2], args[1::2]))


def measure(client, seconds):
    """Waits until the ring holds only samples of this configuration, then reads /status."""
    time.sleep(seconds)
    return status(client)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--period", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "release", "soundfit"))
    options = parser.parse_args()

    server = f"sfbench-{os.getpid()}-{random.randint(0, 99999)}"
    jackd = subprocess.Popen(["jackd", "--no-realtime", "-n", server, "-d", "dummy", "-r", "48000",
                              "-p", str(options.period)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    soundfit = None
    try:
        time.sleep(1.0)
        state = f"/tmp/{server}-state"
        soundfit = subprocess.Popen([options.binary, "run", "--server", server, "--no-start-server",
                                     "--name", "soundfit-bench", "--osc-port", "0", "--http-port", "0", "--state-dir", state,
                                     "--channels", "2", "--log-level", "warning"],
                                    stdout=subprocess.PIPE, text=True)
        ready = soundfit.stdout.readline().split()
        port = int([f for f in ready if f.startswith("osc=")][0].rsplit(":", 1)[1])
        client = Client(port)
        # The ring holds the last 8192 callbacks: at 64 frames that is ~11 s, so each phase
        # runs long enough to replace it with its own samples.
        ring_seconds = 8192 * options.period / 48000 + 1
        baseline = measure(client, max(options.seconds, ring_seconds))
        for address, value in [("/filter/type", "peak"), ("/filter/gain", 6.0), ("/filter/cutoff", 2000.0),
                               ("/filter/enabled", 1), ("/ringmod/enabled", 1), ("/ringmod/mix", 0.5),
                               ("/output/gain", -6.0)]:
            client.set_and_wait_applied(address, value)
        loaded = measure(client, max(options.seconds, ring_seconds))
        # The N3 standard audiogram (Bisgaard et al. 2010): personalization at tech level 3.
        audiogram = [250, 35.0, 500, 35.0, 1000, 40.0, 1500, 45.0, 2000, 50.0, 3000, 55.0, 4000, 60.0, 6000, 65.0]
        client.request("/profile/audiogram", "both", *[float(v) for v in audiogram], reply="/profile/presets")
        client.set_and_wait_applied("/processing/intensity", 1.0)
        full = measure(client, max(options.seconds, ring_seconds))
        period_us = options.period / 48000 * 1e6
        print(f"command: python3 Benchmarks/scripts/jack_callback.py --period {options.period} --seconds {options.seconds}")
        print(f"jackd dummy 48000 Hz, {options.period} frames ({period_us:.0f} us period), stereo")
        print("| chain | callbacks | p50 us | p99 us | p99.9 us | max us | p50 load |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for name, s in [("bypassed (baseline)", baseline), ("filter+ringmod+gain", loaded),
                        ("personalization TL3 + filter+ringmod+gain", full)]:
            print(f"| {name} | {s['callback_samples']} | {s['callback_p50_us']:.2f} | {s['callback_p99_us']:.2f} | "
                  f"{s['callback_p999_us']:.2f} | {s['callback_max_us']:.2f} | {s['callback_p50_us'] / period_us:.2%} |")
        print(f"xruns: {full['xruns']} (dummy backend, whole run; the benchmark shares 2 cores with everything else)")
    finally:
        if soundfit:
            soundfit.terminate()
            soundfit.wait(timeout=10)
        jackd.terminate()
        jackd.wait(timeout=10)


if __name__ == "__main__":
    main()
