#!/usr/bin/env python3
"""Scale of the real `soundfit` binary in one private `jackd -d dummy` server (48 kHz, 64 frames
unless told):

1. *Wide:* one instance with 64 channels at tech level 4, every stage on (personalization from the
   N3 standard audiogram at intensity 1, peak filter, ring modulator, output gain), white noise on
   every input: the process callback's p50 / p99 / max from `/status` (the binary's ring of the
   last 8192 callbacks, so the phase runs long enough to replace it), and the process's CPU.
2. *Eight instances:* eight stereo instances at tech level 4 on the same server, all fed the same
   noise; every stage bypassed (the same-run baseline) and every stage on, alternating for
   `--rounds` rounds. Per phase the total CPU seconds of the eight processes (`/proc/PID/stat`)
   and the server's xruns (counted by the first instance).

Usage:

    swift build -c release --product soundfit
    python3 Benchmarks/scripts/jack_scale.py [--period 64] [--seconds 12] [--instances 8] [--channels 64]
                                             [--rounds 2] [--realtime]
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import jackbench  # noqa: E402

# The N3 standard audiogram (Bisgaard et al. 2010), as in jack_callback.py.
AUDIOGRAM = [250, 35.0, 500, 35.0, 1000, 40.0, 1500, 45.0, 2000, 50.0, 3000, 55.0, 4000, 60.0, 6000, 65.0]


def every_stage_on(client):
    client.request("/profile/audiogram", "both", *[float(v) for v in AUDIOGRAM], reply="/profile/presets",
                   timeout=30)
    for address, value in [("/processing/enabled", 1), ("/processing/intensity", 1.0), ("/filter/type", "peak"),
                           ("/filter/gain", 6.0), ("/filter/cutoff", 2000.0), ("/filter/enabled", 1),
                           ("/ringmod/enabled", 1), ("/ringmod/mix", 0.5), ("/output/gain", -6.0)]:
        client.set_and_wait_applied(address, value, timeout=30)


def every_stage_bypassed(client):
    for address, value in [("/processing/enabled", 0), ("/filter/enabled", 0), ("/ringmod/enabled", 0),
                           ("/output/gain", 0.0)]:
        client.set_and_wait_applied(address, value, timeout=30)


def feed_noise(server, noise_out, client_name, channels):
    # The audio inputs only: `midi_in` is an input port too.
    inputs = [p for p in server.wait_for_ports(client_name, "input", channels + 1) if ":input_" in p]
    for channel, port in enumerate(inputs):
        server.connect(noise_out[channel % 2], port)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--period", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--instances", type=int, default=8)
    parser.add_argument("--channels", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2, help="alternations of the bypassed and the every-stage-on phase")
    parser.add_argument("--realtime", action="store_true", help="jackd with SCHED_FIFO threads (default: --no-realtime)")
    parser.add_argument("--binary", default=os.path.join(jackbench.ROOT, ".build", "release", "soundfit"))
    options = parser.parse_args()
    ring_seconds = 8192 * options.period / 48000 + 1
    print(f"command: python3 Benchmarks/scripts/jack_scale.py --period {options.period} --seconds "
          f"{options.seconds:g} --instances {options.instances} --channels {options.channels} --rounds {options.rounds}"
          f"{' --realtime' if options.realtime else ''}")
    print(f"binary: {options.binary}; load average at start: {jackbench.load_average()}")

    server = jackbench.Server(options.period, realtime=options.realtime)
    try:
        noise = server.start_faust("noise_source")
        noise_out = server.wait_for_ports("noise_source", "output", 2)
        for port in noise_out:
            server.disconnect_all(port)
        wide, client = jackbench.start_soundfit(server, options.binary, "soundfit-wide", options.channels,
                                                ["--tech-level", "4"])
        feed_noise(server, noise_out, "soundfit-wide", options.channels)
        every_stage_on(client)
        time.sleep(1)
        xruns = jackbench.status(client)["xruns"]
        cpu, _ = jackbench.measure([wide.pid], max(options.seconds, ring_seconds))[wide.pid]
        s = jackbench.status(client)
        period_us = options.period / 48000 * 1e6
        print()
        print(f"Wide: {options.channels} channels, tech level 4, every stage on, {options.period} frames "
              f"({period_us:.0f} us period)")
        print("| callbacks | p50 us | p99 us | p99.9 us | max us | p50 / period | CPU s | xruns |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        print(f"| {s['callback_samples']} | {s['callback_p50_us']:.1f} | {s['callback_p99_us']:.1f} | "
              f"{s['callback_p999_us']:.1f} | {s['callback_max_us']:.1f} | {s['callback_p50_us'] / period_us:.1%} | "
              f"{cpu:.2f} / {max(options.seconds, ring_seconds):.0f} s | {s['xruns'] - xruns} |", flush=True)
        wide.terminate()
        wide.wait(timeout=10)

        instances = []
        for index in range(options.instances):
            name = f"soundfit-{index}"
            process, osc = jackbench.start_soundfit(server, options.binary, name, 2, ["--tech-level", "4"])
            feed_noise(server, noise_out, name, 2)
            instances.append((process, osc))
        print()
        print(f"{options.instances} stereo instances, tech level 4, {options.period} frames, {options.seconds:g} s "
              "per phase")
        print("| round | phase | total CPU s | CPU s per instance (min-max) | xruns | load average |")
        print("| ---: | --- | ---: | --- | ---: | ---: |")
        phases = [("every stage bypassed (baseline)", every_stage_bypassed), ("every stage on", every_stage_on)]
        totals = {phase: [0.0, 0] for phase, _ in phases}
        # The phases alternate, so that whatever else the machine does falls on both alike.
        for round_index in range(1, options.rounds + 1):
            for phase, configure in phases:
                for _, osc in instances:
                    configure(osc)
                time.sleep(2)
                xruns = jackbench.status(instances[0][1])["xruns"]
                result = jackbench.measure([p.pid for p, _ in instances], options.seconds)
                xruns = jackbench.status(instances[0][1])["xruns"] - xruns
                cpus = [result[p.pid][0] for p, _ in instances]
                totals[phase][0] += sum(cpus)
                totals[phase][1] += xruns
                print(f"| {round_index} | {phase} | {sum(cpus):.2f} | {min(cpus):.2f}-{max(cpus):.2f} | {xruns} | "
                      f"{jackbench.load_average()} |", flush=True)
        print()
        print(f"| phase | total CPU s over {options.rounds} × {options.seconds:g} s | xruns |")
        print("| --- | ---: | ---: |")
        for phase, (cpu, xruns) in totals.items():
            print(f"| {phase} | {cpu:.2f} | {xruns} |")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
