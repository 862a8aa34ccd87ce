#!/usr/bin/env python3
"""Which source files and Swift modules one OSC parameter set passes through.

Measured dynamically, from LLVM coverage counts of an instrumented soundfit:
  1. Start a private JACK server (jackd -r -n pathcount-<pid>-k<K> -d dummy -r 48000 -p 64) and
     soundfit on it (run --server NAME --no-start-server --osc-port 0 --state-dir <fresh temp>)
     with LLVM_PROFILE_FILE=<temp>/run-k<K>.profraw.
  2. Wait for the ready line, /ping -> /pong, query the parameter; send K sets
     `<address> ,f value_base+i ,i i+1` one at a time, each waiting for its terminal
     `/state <address> applied|failed|superseded <value> i+1`; /sync -> /synced; SIGTERM
     soundfit (the profile is written at exit) and jackd.
  3. Once with K=N, once with K=0. The K=0 run idles as long as the K=N run spent on its sets, so
     work driven by time (750 audio cycles a second at 64 frames, timers) cancels out.
  4. llvm-profdata merge -sparse, llvm-cov export; per function delta = count(K=N) - count(K=0).
     On the path: delta >= N (ran once per set), less --slack (5 %): start-up work varies by a
     few calls between runs, and a few observers coalesce. Files under the package's Sources/
     holding such a function are reported, grouped by module (first path component).
Build the instrumented binary first (its own build folder, kept out of git):
    swift build -c debug --product soundfit -Xswiftc -profile-generate \
        -Xswiftc -profile-coverage-mapping --build-path .build-cov
    python3 Benchmarks/scripts/parameter_path.py [--sets 200] [--address /filter/cutoff] [--json]
Blind spot: code that runs every audio cycle anyway (process callback, renderer loop) carries
each set too, but a count delta cannot tell it from idle cycles (--no-idle-baseline puts it near
the threshold, on one side or the other by chance). Sets equal to the current value are no-ops
and are refused.
"""
import argparse, collections, json, os, re, shutil, signal, socket, struct, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_BINARY = os.path.join(ROOT, ".build-cov", "debug", "soundfit")
TERMINAL = {"applied", "failed", "superseded"}


class Failure(Exception):
    """A step failed or timed out; the message says which and where its log is."""


def osc_str(s):
    b = s.encode() + b"\0"
    return b + b"\0" * (-len(b) % 4)


def osc_encode(address, *args):  # floats, ints and strings are all this script sends
    tags = "".join("f" if isinstance(a, float) else "i" if isinstance(a, int) else "s" for a in args)
    data = b"".join(struct.pack(">" + t, a) if t in "fi" else osc_str(a) for t, a in zip(tags, args))
    return osc_str(address) + osc_str("," + tags) + data


def osc_decode(packet):
    def read_str(pos):
        end = packet.index(b"\0", pos)
        return packet[pos:end].decode(errors="replace"), end + 1 + (-(end + 1 - pos) % 4)
    if packet.startswith(b"#bundle"):  # soundfit answers a lone message with lone messages
        return "#bundle", []
    address, pos = read_str(0)
    tags, pos = read_str(pos) if pos < len(packet) else (",", pos)
    args = []
    for t in tags[1:]:
        if t in "if":
            args.append(struct.unpack(">" + t, packet[pos:pos + 4])[0]); pos += 4
        elif t in "sS":
            s, pos = read_str(pos); args.append(s)
        else:  # the replies this script waits for carry only i, f and s
            break
    return address, args


def wait_reply(sock, deadline, what, accept):
    """Reads datagrams until accept(address, args) is true; raises on timeout."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise Failure(f"timed out waiting for {what}")
        sock.settimeout(left)
        try:
            address, args = osc_decode(sock.recv(65536))
        except socket.timeout:
            raise Failure(f"timed out waiting for {what}")
        if address == "/error":
            raise Failure(f"/error while waiting for {what}: {args}")
        if accept(address, args):
            return address, args


def read_ready_line(proc, out_path, deadline, log_path):
    while time.monotonic() < deadline:
        with open(out_path, errors="replace") as f:
            m = re.search(r"^soundfit ready osc=udp://([\d.]+):(\d+)", f.read(), re.M)
        if m:
            return m.group(1), int(m.group(2))
        if proc.poll() is not None:
            raise Failure(f"soundfit exited with {proc.returncode} before its ready line; see {log_path}")
        time.sleep(0.05)
    raise Failure(f"timed out waiting for soundfit's ready line; see {log_path}")


def stop(proc, name, timeout):
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill(); proc.wait()
        raise Failure(f"{name} did not exit within {timeout} s of SIGTERM (killed)")


def run_once(opts, tmp, k, idle_seconds):
    """One soundfit run with k sets; returns (profraw path, seconds spent on the sets)."""
    tag = f"k{k}"
    server = f"pathcount-{os.getpid()}-{tag}"
    profraw = os.path.join(tmp, f"run-{tag}.profraw")
    state_dir = tempfile.mkdtemp(prefix=f"state-{tag}-", dir=tmp)
    env = dict(os.environ, JACK_DEFAULT_SERVER=server, LLVM_PROFILE_FILE=profraw)
    jack_log = open(os.path.join(tmp, f"jackd-{tag}.log"), "wb")
    sf_log_path = os.path.join(tmp, f"soundfit-{tag}.log")
    sf_log, sf_out = open(sf_log_path, "wb"), open(os.path.join(tmp, f"soundfit-{tag}.out"), "wb")
    jackd = soundfit = sock = None
    try:
        jackd = subprocess.Popen(["jackd", "-r", "-n", server, "-d", "dummy", "-r", "48000", "-p", "64"],
                                 stdout=jack_log, stderr=subprocess.STDOUT, env=env)
        try:
            subprocess.run(["jack_wait", "-s", server, "-w", "-t", str(int(opts.timeout))], env=env,
                           check=True, capture_output=True, timeout=opts.timeout + 5)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            raise Failure(f"jackd server {server} did not come up within {opts.timeout} s; see {jack_log.name}")
        soundfit = subprocess.Popen([opts.binary, "run", "--server", server, "--no-start-server",
                                     "--name", f"pathcount{tag}", "--osc-port", "0", "--state-dir", state_dir],
                                    stdout=sf_out, stderr=sf_log, env=env)
        host, port = read_ready_line(soundfit, sf_out.name, time.monotonic() + opts.timeout, sf_log_path)
        sock, target = socket.socket(socket.AF_INET, socket.SOCK_DGRAM), (host, port)
        sock.bind(("127.0.0.1", 0))
        sock.sendto(osc_encode("/ping", 7), target)
        wait_reply(sock, time.monotonic() + opts.timeout, "/pong", lambda a, x: a == "/pong" and x == [7])
        sock.sendto(osc_encode(opts.address), target)  # a set to the current value is a no-op: refuse it
        _, current = wait_reply(sock, time.monotonic() + opts.timeout, f"the query of {opts.address}",
                                lambda a, x: a == opts.address and len(x) == 1)
        if isinstance(current[0], float) and opts.value_base <= current[0] < opts.value_base + opts.sets:
            raise Failure(f"{opts.address} is {current[0]} already: choose a --value-base that avoids it")
        started = time.monotonic()
        for i in range(k):
            value, rid = float(opts.value_base + i), i + 1
            sock.sendto(osc_encode(opts.address, value, rid), target)
            _, args = wait_reply(sock, time.monotonic() + opts.timeout, f"the terminal /state of set {rid} ({value})",
                                 lambda a, x: a == "/state" and len(x) >= 3 and x[0] == opts.address
                                 and x[1] in TERMINAL and x[-1] == rid)
            if args[1] != "applied":
                raise Failure(f"set {rid} ({value}) ended {args[1]}: {args}")
        time.sleep(idle_seconds)
        elapsed = time.monotonic() - started
        sock.sendto(osc_encode("/sync", 99), target)
        wait_reply(sock, time.monotonic() + opts.timeout, "/synced", lambda a, x: a == "/synced" and x == [99])
        stop(soundfit, "soundfit", opts.timeout)
        if soundfit.returncode != 0:
            raise Failure(f"soundfit exited with {soundfit.returncode} after SIGTERM; see {sf_log_path}")
        if not os.path.exists(profraw) or os.path.getsize(profraw) == 0:
            raise Failure(f"no profile written at {profraw} (is {opts.binary} instrumented?)")
        stop(jackd, "jackd", opts.timeout)
        return profraw, elapsed
    finally:
        sock and sock.close()
        for proc in (soundfit, jackd):  # only the processes this run started
            if proc is not None and proc.poll() is None:
                proc.kill(); proc.wait()
        jack_log.close(); sf_log.close(); sf_out.close()


def tool(name):
    swift = shutil.which("swift")
    near = os.path.join(os.path.dirname(os.path.realpath(swift)), name) if swift else None
    return near if near and os.path.exists(near) else (shutil.which(name) or name)


def function_counts(opts, profraw):
    """{(name, file): count} for every function defined under the package's Sources/."""
    profdata = profraw.replace(".profraw", ".profdata")
    subprocess.run([tool("llvm-profdata"), "merge", "-sparse", profraw, "-o", profdata], check=True)
    out = subprocess.run([tool("llvm-cov"), "export", "-format=text", "-skip-expansions",
                          "-instr-profile=" + profdata, opts.binary], check=True, capture_output=True).stdout
    counts = collections.Counter()
    for fn in json.loads(out)["data"][0]["functions"]:
        path = fn["filenames"][0]
        if path.startswith(opts.sources):  # not the dependencies' Sources/ under .build*/checkouts
            counts[(fn["name"], path[len(opts.sources):])] += fn["count"]
    return counts


def demangle(names):
    try:
        out = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(names),
                             capture_output=True, text=True, check=True, timeout=120).stdout.splitlines()
        return dict(zip(names, out)) if len(out) == len(names) else {n: n for n in names}
    except (OSError, subprocess.SubprocessError):
        return {n: n for n in names}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default=DEFAULT_BINARY)
    ap.add_argument("--sets", type=int, default=200, help="N, the sets of the measured run (default 200; "
                    "well below 100, start-up noise of a few calls reaches the threshold)")
    ap.add_argument("--address", default="/filter/cutoff", help="a float parameter (default /filter/cutoff)")
    ap.add_argument("--value-base", type=float, default=1001.0,
                    help="set i sends value-base + i (default 1001: not the default cutoff, 1000, a no-op set)")
    ap.add_argument("--slack", type=float, default=0.05, help="on the path: delta >= N * (1 - slack) "
                    "(default 0.05: start-up work varies by a few calls between runs; 0 = strictly >= N)")
    ap.add_argument("--sources", help="the Sources/ directory the binary was built from (default: found "
                    "from --binary: the first parent directory with a Package.swift)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds allowed for every wait (default 60)")
    ap.add_argument("--no-idle-baseline", action="store_true", help="K=0 run without the idle time")
    ap.add_argument("--keep", action="store_true", help="keep the temp directory (logs, profiles)")
    ap.add_argument("--verbose", action="store_true", help="list the on-path functions of each file")
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    opts = ap.parse_args()
    d = os.path.dirname(os.path.realpath(opts.binary))  # the package it was built from: a Package.swift
    while not opts.sources and d != "/" and not os.path.exists(os.path.join(d, "Package.swift")):
        d = os.path.dirname(d)
    opts.sources = os.path.join(os.path.realpath(opts.sources or os.path.join(d, "Sources")), "")
    if opts.sets < 1:
        ap.error("--sets must be at least 1")
    tmp = tempfile.mkdtemp(prefix="pathcount-")
    try:
        raw_n, seconds = run_once(opts, tmp, opts.sets, 0)
        raw_0, _ = run_once(opts, tmp, 0, 0 if opts.no_idle_baseline else seconds)
        after, before = function_counts(opts, raw_n), function_counts(opts, raw_0)
        if not after:
            raise Failure(f"the coverage data has no function under {opts.sources} (use --sources)")
    except (Failure, OSError, subprocess.CalledProcessError) as e:
        opts.keep = True  # its logs explain the failure
        print(f"error: {e} (temp dir kept: {tmp})", file=sys.stderr)
        sys.exit(1)
    finally:
        if not opts.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    on_path, threshold = collections.defaultdict(dict), opts.sets * (1 - opts.slack)  # file -> {name: delta}
    for key, count in after.items():
        delta = count - before.get(key, 0)
        if delta >= threshold:
            on_path[key[1]][key[0]] = delta
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output quietly
    names = demangle(sorted({n for fns in on_path.values() for n in fns})) if opts.verbose or opts.json else {}
    modules = collections.defaultdict(list)
    for path in sorted(on_path):
        modules[path.split("/", 1)[0]].append(path)
    if opts.json:
        return print(json.dumps({
            "address": opts.address, "sets": opts.sets, "threshold": threshold, "set_seconds": round(seconds, 3),
            "files": len(on_path), "module_count": len(modules),
            "files_per_module": {m: len(fs) for m, fs in sorted(modules.items())},
            "modules": {m: {f: sorted([names.get(n, n), d] for n, d in on_path[f].items()) for f in fs}
                        for m, fs in sorted(modules.items())}}, indent=2))
    print(f"{opts.address}: {opts.sets} sets in {seconds:.2f} s; on the path (delta >= {threshold:g}):")
    for module, files in sorted(modules.items()):
        print(f"{module} ({len(files)} files)")
        for path in files:
            print(f"  {path}")
            if opts.verbose:
                for n, d in sorted(on_path[path].items(), key=lambda item: names.get(item[0], item[0])):
                    print(f"      {d:>8}  {names.get(n, n)}")
    print(f"total: {len(on_path)} files in {len(modules)} modules")


if __name__ == "__main__":
    main()
