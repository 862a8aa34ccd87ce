"""Shared pieces of the whole-process JACK benchmarks (jack_vs_faust.py, jack_scale.py): a private
`jackd -d dummy`, the release `soundfit` binary on it, the Faust JACK clients built with
`faust2jackconsole`, port wiring with `jack_connect`, and CPU seconds read from `/proc`.
Python 3 standard library only (plus the JACK command-line tools and, for the Faust clients, the
Debian package `faust`, installed on first use)."""
import os
import random
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from oscclient import Client  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FAUST_SOURCES = os.path.join(ROOT, "Benchmarks", "Faust", "jack")
FAUST_BUILD = os.path.join(ROOT, "Benchmarks", "Faust", ".build", "jack")
TICKS = os.sysconf("SC_CLK_TCK")


def faust_client(name):
    """The path of the Faust JACK client built from Benchmarks/Faust/jack/<name>.dsp, building it
    (and installing `faust` and the ALSA headers faust2jackconsole links against) when missing.
    faust2jackconsole compiles with its own flags (-Ofast -march=native on x86-64)."""
    binary = os.path.join(FAUST_BUILD, name)
    source = os.path.join(FAUST_SOURCES, name + ".dsp")
    if os.path.exists(binary) and os.path.getmtime(binary) >= os.path.getmtime(source):
        return binary
    if not shutil.which("faust2jackconsole"):
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "faust", "libasound2-dev",
                        "libjack-jackd2-dev", "g++"], check=True)
    os.makedirs(FAUST_BUILD, exist_ok=True)
    shutil.copy(source, FAUST_BUILD)
    subprocess.run(["faust2jackconsole", name + ".dsp"], cwd=FAUST_BUILD, check=True,
                   stdout=subprocess.DEVNULL)
    return binary


C_CLIENT_SOURCES = os.path.join(ROOT, "Benchmarks", "CJackClient")
C_CLIENT_BUILD = os.path.join(ROOT, "Benchmarks", "CJackClient", ".build")


def built(source, binary, command):
    """`binary`, built from `source` with `command` when missing or older than its source."""
    if not (os.path.exists(binary) and os.path.getmtime(binary) >= os.path.getmtime(source)):
        os.makedirs(os.path.dirname(binary), exist_ok=True)
        subprocess.run(command, check=True)
    return binary


def c_client(name):
    """The path of the minimal C JACK client built from Benchmarks/CJackClient/<name>.c (cc -O2)."""
    binary = os.path.join(C_CLIENT_BUILD, name)
    source = os.path.join(C_CLIENT_SOURCES, name + ".c")
    return built(source, binary, ["cc", "-O2", "-o", binary, source, "-ljack"])


SWIFT_CLIENT_SOURCES = os.path.join(ROOT, "Benchmarks", "SwiftJackClient")


def swift_client(name):
    """The path of the Swift floor client built from Benchmarks/SwiftJackClient/<name>.swift
    (`swiftc -O`)."""
    binary = os.path.join(SWIFT_CLIENT_SOURCES, ".build", name)
    source = os.path.join(SWIFT_CLIENT_SOURCES, name + ".swift")
    return built(source, binary, ["swiftc", "-O", "-I", SWIFT_CLIENT_SOURCES, source, "-o", binary])


class Server:
    """A private dummy-backend JACK server (48 kHz unless told), stopped by `stop()`."""

    def __init__(self, period, rate=48000, cpu=None, realtime=False):
        """`cpu`: pin the server and every client started through `start` to that CPU (taskset),
        so that no client's wake-up crosses CPUs (see `jack_vs_faust.py --placement`).
        `realtime`: SCHED_FIFO threads (jackd's default) instead of `--no-realtime`."""
        self.name = f"sfbench-{os.getpid()}-{random.randint(0, 99999)}"
        self.env = dict(os.environ, JACK_DEFAULT_SERVER=self.name, JACK_NO_AUDIO_RESERVATION="1")
        self.prefix = ["taskset", "-c", str(cpu)] if cpu is not None else []
        self.process = subprocess.Popen(self.prefix + ["jackd", *([] if realtime else ["--no-realtime"]), "-n", self.name,
                                                       "-d", "dummy", "-r", str(rate), "-p", str(period)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env)
        self.children = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if subprocess.run(["jack_lsp", "-s", self.name], capture_output=True, env=self.env).returncode == 0:
                return
            time.sleep(0.2)
        raise RuntimeError("jackd did not start")

    def start(self, argv, env=None, **kwargs):
        """Starts `argv` on this server (pinned like it), with `env` added to its environment."""
        process = subprocess.Popen(self.prefix + list(argv), env=dict(self.env, **(env or {})), **kwargs)
        self.children.append(process)
        return process

    def start_faust(self, name):
        """The Faust JACK client built from Benchmarks/Faust/jack/<name>.dsp on this server, quiet
        (faust2jackconsole reads commands from stdin: it gets a pipe that stays open)."""
        return self.start([faust_client(name)], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)

    def ports(self, client, direction):
        """`client`'s ports of `direction` ("input" or "output"), in registration order."""
        lines = subprocess.run(["jack_lsp", "-s", self.name, "-p", client + ":"], capture_output=True, text=True,
                               env=self.env).stdout.splitlines()
        ports, name = [], None
        for line in lines:
            if not line.startswith(("\t", " ")):
                name = line.strip()
            elif "properties:" in line and line.split("properties:")[1].strip().startswith(direction) and name:
                ports.append(name)
        return ports

    def wait_for_ports(self, client, direction, count, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ports = self.ports(client, direction)
            if len(ports) >= count:
                return ports
            time.sleep(0.2)
        raise RuntimeError(f"{client} has no {count} {direction} ports")

    def connect(self, source, destination):
        subprocess.run(["jack_connect", "-s", self.name, source, destination], env=self.env, check=True,
                       stdout=subprocess.DEVNULL)

    def disconnect_all(self, port):
        """Removes every connection of `port` (faust2jackconsole clients connect to system ports)."""
        out = subprocess.run(["jack_lsp", "-s", self.name, "-c", port], capture_output=True, text=True,
                             env=self.env).stdout.splitlines()
        for line in out[1:]:
            if line.startswith((" ", "\t")):
                subprocess.run(["jack_disconnect", "-s", self.name, port, line.strip()], env=self.env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self):
        for process in reversed(self.children):
            if process.poll() is None:
                process.terminate()
        for process in reversed(self.children):
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.returncode < 0:
            self.reclaim_registry_slot()

    def reclaim_registry_slot(self):
        """A jackd that died from a signal (a `--no-realtime` server gets SIGPIPE when a client
        it writes to was just killed) keeps its slot in JACK's server registry
        (/dev/shm/jack-shm-registry, 8 slots for the machine, then "Too many servers already
        active" for every jackd). Starting a server under the same name takes the slot over, and
        stopping it cleanly frees it."""
        reclaim = subprocess.Popen(["jackd", "--no-realtime", "-n", self.name, "-d", "dummy", "-p", "1024"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.env)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and reclaim.poll() is None:
            if subprocess.run(["jack_lsp", "-s", self.name], capture_output=True, env=self.env).returncode == 0:
                break
            time.sleep(0.2)
        reclaim.terminate()
        reclaim.wait(timeout=10)


def start_soundfit(server, binary, name, channels=2, extra=(), env=None):
    """The release binary on `server` (`env` added to its environment); returns (process, OSC client)."""
    state = f"/tmp/{server.name}-{name}-state"
    process = server.start([binary, "run", "--server", server.name, "--no-start-server", "--name", name,
                            "--osc-port", "0", "--http-port", "0", "--state-dir", state, "--channels", str(channels),
                            "--log-level", "warning", *extra], env=env, stdout=subprocess.PIPE, text=True)
    ready = process.stdout.readline().split()
    port = int([f for f in ready if f.startswith("osc=")][0].rsplit(":", 1)[1])
    return process, Client(port)


def status(client):
    args = client.request("/status")
    return dict(zip(args[0::2], args[1::2]))


def cpu_seconds(pid):
    """utime + stime of the whole process (all its threads, dead ones too) from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def per_thread(pid, read):
    """{(thread id, name): read(tid path)} over the live threads of `pid` (a thread that ends
    while it is read is left out)."""
    result = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        path = f"/proc/{pid}/task/{tid}"
        try:
            with open(f"{path}/comm") as f:
                name = f.read().strip()
            result[(int(tid), name)] = read(path)
        except OSError:
            continue
    return result


def thread_cpu_ns(pid):
    """{(thread id, name): nanoseconds on CPU} from each live thread's schedstat."""
    def run_time(path):
        with open(f"{path}/schedstat") as f:
            return int(f.read().split()[0])
    return per_thread(pid, run_time)


def thread_migrations(pid):
    """{(thread id, name): times the scheduler moved the thread to another CPU}, from each live
    thread's sched (`se.nr_migrations`)."""
    def migrations(path):
        with open(f"{path}/sched") as f:
            return next((int(line.split(":")[1]) for line in f if line.startswith("se.nr_migrations")), 0)
    return per_thread(pid, migrations)


def measure(pids, seconds):
    """CPU seconds each pid used over the next `seconds`, and {thread label: nanoseconds} (a thread
    started during the window counts whole; one that ended during it is missing)."""
    before = {pid: (cpu_seconds(pid), thread_cpu_ns(pid)) for pid in pids}
    time.sleep(seconds)
    result = {}
    for pid in pids:
        threads = thread_cpu_ns(pid)
        by_name = {}
        names = [name for _, name in threads]
        for key, ns in threads.items():
            # Threads of the same name apart (JACK's process and notification threads both run
            # the thread-init callback, so both are called soundfit-audio): name/tid.
            label = key[1] if names.count(key[1]) == 1 else f"{key[1]}/{key[0]}"
            by_name[label] = by_name.get(label, 0) + ns - before[pid][1].get(key, 0)
        result[pid] = (cpu_seconds(pid) - before[pid][0], by_name)
    return result


def load_average():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]
