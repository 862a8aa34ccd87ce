#!/usr/bin/env python3
"""Set -> `applied` round trip of the real `soundfit` binary over real UDP OSC.

For each period (frames per JACK cycle) this starts a private `jackd -d dummy` (48 kHz) and the
release binary on it, then for each rate sends `/filter/cutoff ,f value ,i request_id` paced at
that many messages per second (a new value every time, so every set has something to apply) and
times, per request id, the interval from `sendto` to the arrival of its `/state … applied … id`.
Requests that end `failed` are counted, not timed. Requests that end `superseded` are counted,
and the interval to their `/state … superseded … id` is reported apart (how long a client waits
to learn a value was skipped). With continuous delivery the filter, ring modulator and output
parameters stream: every value is published to the audio thread as it arrives (up to 8 in
flight per parameter, beyond that the newest value waits), and `superseded` is exact: the audio
thread went from an older value straight to a newer one and never rendered this one. So at more
than one message per period, `applied` is the last value before each cycle and the others end
`superseded`. "Applied without waiting" are the applied requests that never reported `pending`
(handed to the engine on arrival, not held back by the in-flight bound or a delivery that cannot
overlap). Usage:

    swift build -c release --product soundfit
    python3 Benchmarks/scripts/osc_roundtrip.py [--periods 64,256] [--rates 100,1000,10000] [--seconds 4]

One thread does everything (send when due, otherwise wait in select() for replies), so a reply is
time-stamped as soon as it arrives unless a send burst is in progress; at 10 000 messages/s the
client's own loop adds up to ~0.1 ms. Python 3 standard library only.
"""
import argparse
import os
import random
import select
import shutil
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from oscclient import Client, encode  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SAMPLE_RATE = 48000


def status(client):
    args = client.request("/status")
    return dict(zip(args[0::2], args[1::2]))


def percentile(sorted_values, fraction):
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, int(round(fraction * (len(sorted_values) - 1)))))
    return sorted_values[index]


def classify(data):
    """(state, request id) of a `/state ,s address ,s state <value> [,s error] ,i id` packet, else None.

    A fast path instead of a full decode: the state string follows the (zero-padded) address,
    and the request id is the last argument.
    """
    if not data.startswith(b"/state\0\0"):
        return None
    tags = data[8:data.index(b"\0", 8)]
    if not (tags.startswith(b",ss") and tags.endswith(b"i")):
        return None
    request_id = struct.unpack(">i", data[-4:])[0]
    for state in (b"applied", b"superseded", b"failed", b"pending"):
        if b"\0" + state + b"\0" in data:
            return state.decode(), request_id
    return "other", request_id


def run_rate(client, rate, seconds, first_id):
    """Sends `rate` messages per second for `seconds`; returns the per-request outcome."""
    sock = client.sock
    sock.setblocking(False)
    count = max(1, int(rate * seconds))
    sent_at = {}
    outcome = {}  # id -> (state, latency seconds or None)
    queued = set()  # ids that waited (pending) behind a delivery in flight
    start = time.perf_counter()
    next_index = 0
    deadline = None

    def drain():
        while True:
            try:
                data = sock.recv(65536)
            except BlockingIOError:
                return
            now = time.perf_counter()
            parsed = classify(data)
            if parsed is None:
                continue
            state, request_id = parsed
            if state == "pending":
                queued.add(request_id)
            if state in ("applied", "superseded", "failed") and request_id in sent_at and request_id not in outcome:
                outcome[request_id] = (state, now - sent_at[request_id] if state != "failed" else None)

    while True:
        now = time.perf_counter()
        due = min(count, int((now - start) * rate) + 1)
        while next_index < due:
            request_id = first_id + next_index
            value = 1000.0 + ((request_id * 7) % 997) + (0.5 if request_id % 2 else 0.0)
            packet = encode("/filter/cutoff", float(value), request_id)
            sent_at[request_id] = time.perf_counter()
            try:
                sock.sendto(packet, client.target)
            except BlockingIOError:
                del sent_at[request_id]
            next_index += 1
        drain()
        if next_index >= count:
            if deadline is None:
                deadline = time.perf_counter() + 3.0
            if len(outcome) >= len(sent_at) or time.perf_counter() > deadline:
                break
            wait = 0.01
        else:
            wait = max(0.0, start + (next_index + 0.0) / rate - time.perf_counter())
        select.select([sock], [], [], min(wait, 0.01))
    sock.setblocking(True)
    return count, sent_at, outcome, queued


def measure(binary, period, rates, seconds):
    server = f"sfosc-{os.getpid()}-{random.randint(0, 99999)}"
    jackd = subprocess.Popen(["jackd", "--no-realtime", "-n", server, "-d", "dummy", "-r", str(SAMPLE_RATE),
                              "-p", str(period)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    soundfit = None
    rows = []
    try:
        time.sleep(1.0)
        state = f"/tmp/{server}-state"
        soundfit = subprocess.Popen([binary, "run", "--server", server, "--no-start-server",
                                     "--name", "soundfit-bench", "--osc-port", "0", "--http-port", "0", "--state-dir", state,
                                     "--channels", "2", "--log-level", "warning"],
                                    stdout=subprocess.PIPE, text=True)
        ready = soundfit.stdout.readline().split()
        port = int([f for f in ready if f.startswith("osc=")][0].rsplit(":", 1)[1])
        client = Client(port)
        client.set_and_wait_applied("/filter/enabled", 1)
        next_id = 1
        # Warm-up: the runtime's first allocations and code paths.
        run_rate(client, 1000, 0.5, next_id)
        next_id += 100000
        for rate in rates:
            xruns_before = status(client)["xruns"]
            count, sent_at, outcome, queued = run_rate(client, rate, seconds, next_id)
            next_id += 100000
            time.sleep(0.2)
            xruns = status(client)["xruns"] - xruns_before
            latencies = sorted(v[1] * 1000 for v in outcome.values() if v[0] == "applied")
            direct = sorted(v[1] * 1000 for k, v in outcome.items() if v[0] == "applied" and k not in queued)
            skipped = sorted(v[1] * 1000 for v in outcome.values() if v[0] == "superseded")
            states = [v[0] for v in outcome.values()]
            rows.append({
                "period": period, "rate": rate, "sent": len(sent_at),
                "applied": states.count("applied"), "superseded": states.count("superseded"),
                "failed": states.count("failed"), "no_reply": len(sent_at) - len(outcome),
                "p50": percentile(latencies, 0.50), "p99": percentile(latencies, 0.99),
                "max": latencies[-1] if latencies else float("nan"), "xruns": xruns,
                "direct": len(direct), "direct_p50": percentile(direct, 0.50), "direct_p99": percentile(direct, 0.99),
                "skipped_p50": percentile(skipped, 0.50), "skipped_p99": percentile(skipped, 0.99),
            })
            time.sleep(0.3)
    finally:
        if soundfit:
            soundfit.terminate()
            soundfit.wait(timeout=10)
        jackd.terminate()
        jackd.wait(timeout=10)
        shutil.rmtree(f"/tmp/{server}-state", ignore_errors=True)
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--periods", default="64,256")
    parser.add_argument("--rates", default="100,1000,10000")
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "release", "soundfit"))
    options = parser.parse_args()
    periods = [int(p) for p in options.periods.split(",")]
    rates = [int(r) for r in options.rates.split(",")]

    rows = []
    for period in periods:
        rows += measure(options.binary, period, rates, options.seconds)

    print(f"command: python3 Benchmarks/scripts/osc_roundtrip.py --periods {options.periods} "
          f"--rates {options.rates} --seconds {options.seconds}")
    print("| period | msg/s | sent | applied | superseded | failed | no reply | p50 ms | p99 ms | max ms "
          "| target p99 (period + 1 ms) | applied without waiting | their p50 / p99 ms "
          "| superseded: p50 / p99 ms to the report | xruns |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
    def pair(first, second):
        return "–" if first != first else f"{first:.3f} / {second:.3f}"  # NaN: nothing to time

    for r in rows:
        period_ms = r["period"] / SAMPLE_RATE * 1000
        target = period_ms + 1
        verdict = f"{target:.2f} ms: {'met' if r['p99'] <= target else 'missed'}" if r["rate"] == 1000 else f"({target:.2f} ms)"
        print(f"| {r['period']} ({period_ms:.2f} ms) | {r['rate']} | {r['sent']} | {r['applied']} | {r['superseded']} "
              f"| {r['failed']} | {r['no_reply']} | {r['p50']:.3f} | {r['p99']:.3f} | {r['max']:.3f} | {verdict} "
              f"| {r['direct']} | {pair(r['direct_p50'], r['direct_p99'])} "
              f"| {pair(r['skipped_p50'], r['skipped_p99'])} | {r['xruns']} |")


if __name__ == "__main__":
    main()
