#!/usr/bin/env python3
"""Discovers a real SoundFit through a real avahi-daemon, as a client on the network would.

Runs itself again inside private user, network, mount and PID namespaces (no real root needed):
a loopback and a veth interface (10.77.0.2, multicast), tmpfs over /run and /dev/shm, a D-Bus
system bus and an avahi-daemon of its own (never the machine's). Then, with python `zeroconf`
(browse and resolve `_oscjson._tcp.local.` and `_osc._udp.local.`) and python-oscquery:

0. No system bus yet: SoundFit logs once that it is not advertised and answers.

1. SoundFit (127.0.0.1) starts before avahi-daemon; avahi starts, is stopped and restarted:
   SoundFit's services appear, go and come back, resolving to 127.0.0.1 only; one log line each.
2. `--osc-host 10.77.0.2`: the services resolve to 10.77.0.2 only.
3. `--osc-host 0.0.0.0`: the services are at the machine's host name; every address answers.
4. Another machine on the link (namespaces of its own, its own avahi-daemon) has SoundFit's host
   name already: SoundFit moves to NAME-2.local, logs it, and resolves to 127.0.0.1 there.

Every resolved address is asked: HTTP `?HOST_INFO` on the `_oscjson._tcp` address and port, OSC
`/ping` on the `_osc._udp` ones. Prints `measured:` and `log:` lines, `problem:` lines for what
failed, and `passed` at the end; exits 1 on a problem.

Usage: zeroconf_discovery.py --soundfit PATH   (with python `zeroconf` and python-oscquery)
"""
import argparse
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

LAN_ADDRESS = "10.77.0.2"
TYPES = ("_oscjson._tcp.local.", "_osc._udp.local.")
DBUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=/run/dbus/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
  <includedir>/usr/share/dbus-1/system.d</includedir>
</busconfig>
"""
AVAHI_CONFIG = """[server]
use-ipv4=yes
use-ipv6=no
ratelimit-interval-usec=1000000
ratelimit-burst=1000
[publish]
publish-hinfo=no
publish-workstation=no
"""

problems = []


def check(condition, what):
    print(f"check {'ok' if condition else 'FAILED'}: {what}", flush=True)
    if not condition:
        problems.append(what)
    return condition


def run(*command):
    subprocess.run(command, check=True)


def wait_until(predicate, timeout, step=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return predicate()


def prepare_namespace():
    """Interfaces, /run, the avahi user as root (avahi-daemon wants its runtime directory owned
    by that user, and no other user id exists in the namespace). Returns a working folder."""
    run("mount", "-t", "tmpfs", "tmpfs", "/run")
    run("mount", "-t", "tmpfs", "tmpfs", "/dev/shm")
    base = tempfile.mkdtemp(prefix="zeroconf-", dir="/run")
    for directory in ("/run/dbus", "/run/avahi-daemon"):
        os.makedirs(directory)
    for name, pattern, replacement in (("passwd", r"^avahi:x:\d+:\d+:", "avahi:x:0:0:"),
                                       ("group", r"^avahi:x:\d+:", "avahi:x:0:")):
        text = open(f"/etc/{name}").read()
        if not re.search(pattern, text, re.M):
            text += "avahi:x:0:0::/run/avahi-daemon:/usr/sbin/nologin\n" if name == "passwd" else "avahi:x:0:\n"
        path = os.path.join(base, name)
        with open(path, "w") as file:
            file.write(re.sub(pattern, replacement, text, flags=re.M))
        run("mount", "--bind", path, f"/etc/{name}")
    run("ip", "link", "set", "lo", "up")
    run("ip", "link", "add", "sf0", "type", "veth", "peer", "name", "sf1")
    run("ip", "addr", "add", f"{LAN_ADDRESS}/24", "dev", "sf0")
    run("ip", "link", "set", "sf0", "up")
    run("ip", "link", "set", "sf1", "up")
    return base


def start_bus(base):
    config = os.path.join(base, "dbus.conf")
    with open(config, "w") as file:
        file.write(DBUS_CONFIG)
    bus = subprocess.Popen(["dbus-daemon", "--config-file", config, "--nofork", "--nopidfile"])
    if not wait_until(lambda: os.path.exists("/run/dbus/system_bus_socket"), 10):
        raise SystemExit("problem: the system bus did not start")
    return bus


class Avahi:
    def __init__(self, base, host_name=None):
        self.config = os.path.join(base, "avahi-daemon.conf")
        with open(self.config, "w") as file:
            file.write(AVAHI_CONFIG.replace("[server]\n", f"[server]\nhost-name={host_name}\n" if host_name else "[server]\n"))
        self.log = os.path.join(base, "avahi.log")
        self.process = None

    def start(self):
        with open(self.log, "a") as log:
            self.process = subprocess.Popen(["avahi-daemon", "--no-drop-root", "--no-chroot", "--no-rlimits",
                                             "-f", self.config], stdout=log, stderr=subprocess.STDOUT)
        started = wait_until(lambda: "Server startup complete" in open(self.log).read(), 15)
        if not started:
            raise SystemExit(f"problem: avahi-daemon did not start: {open(self.log).read()}")
        print("measured: avahi-daemon: " + [line for line in open(self.log) if "Server startup complete" in line][-1].strip(),
              flush=True)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(10)
        self.process = None


class SoundFit:
    """The real binary; its standard error is kept line by line."""

    def __init__(self, binary, base, name, *arguments):
        home = os.path.join(base, f"home-{name}")
        os.makedirs(home)
        environment = {key: value for key, value in os.environ.items()
                       if not key.startswith(("JACK_", "XDG_", "SOUNDFIT_", "NSM_"))}
        environment["HOME"] = home
        self.name = name
        self.lines = []
        self.process = subprocess.Popen([binary, "run", "--name", name, "--state-dir", os.path.join(home, "state"),
                                         *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env=environment, stdin=subprocess.DEVNULL)
        self.ready = None
        threading.Thread(target=self._read_errors, daemon=True).start()
        for line in self.process.stdout:
            if line.startswith("soundfit ready"):
                self.ready = line.strip()
                break
        if not self.ready:
            raise SystemExit(f"problem: soundfit {name} did not get ready: {self.errors()}")
        print(f"measured: {self.ready}", flush=True)

    def _read_errors(self):
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))

    def errors(self):
        return "\n".join(self.lines)

    def zeroconf_lines(self):
        return [line[line.index("zeroconf:"):] for line in list(self.lines) if "zeroconf:" in line]

    def wait_for(self, text, count=1, timeout=20):
        return wait_until(lambda: len([line for line in self.zeroconf_lines() if text in line]) >= count, timeout)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for line in self.zeroconf_lines():
            print(f"log: {self.name}: {line}", flush=True)


def browse(service_name, seconds=4.0):
    """{type: ServiceInfo} of the services named `service_name` python zeroconf finds now."""
    from zeroconf import ServiceBrowser, ServiceListener, Zeroconf

    found = set()

    class Listener(ServiceListener):
        def add_service(self, zc, type_, name):
            found.add((type_, name))

        def update_service(self, zc, type_, name):
            found.add((type_, name))

        def remove_service(self, zc, type_, name):
            found.discard((type_, name))

    zc = Zeroconf()
    try:
        ServiceBrowser(zc, list(TYPES), Listener())
        wanted = {f"{service_name}.{type_}" for type_ in TYPES}
        wait_until(lambda: wanted <= {name for _, name in found}, seconds)
        infos = {}
        for type_, name in sorted(found):
            if name == f"{service_name}.{type_}":
                infos[type_] = zc.get_service_info(type_, name, timeout=3000)
        return infos
    finally:
        zc.close()


def answers_http(address, port, host=None):
    """The HOST_INFO an HTTP GET to ADDRESS:PORT answers (with `host` as its Host, as a client
    that uses the resolved name sends it), or the error."""
    request = urllib.request.Request(f"http://{address}:{port}/?HOST_INFO")
    if host:
        request.add_header("Host", f"{host}:{port}")
    try:
        with urllib.request.urlopen(request, timeout=3) as response:
            return json.loads(response.read())
    except Exception as error:  # noqa: BLE001 — reported as measured
        return f"error: {error}"


def answers_osc(address, port):
    """Whether `/ping` to ADDRESS:PORT over UDP is answered `/pong`."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.settimeout(3)
        udp.sendto(b"/ping\0\0\0,\0\0\0", (address, port))
        try:
            data, _ = udp.recvfrom(2048)
        except OSError as error:
            return f"error: {error}"
        return data.startswith(b"/pong\0")


def check_discovered(label, service_name, expected_addresses, http_port, osc_port, allowed=None, name_as_host=True):
    """Browses and resolves SoundFit's two services; every IPv4 address must answer. With
    `expected_addresses` the resolved ones must be exactly those (and no IPv6 one); with
    `allowed`, a non-empty subset of them. With `name_as_host`, a request naming the resolved host
    name as Host must be answered too (not after a collision: docs/network.md)."""
    from zeroconf import IPVersion

    infos = browse(service_name)
    for type_, port in (("_oscjson._tcp.local.", http_port), ("_osc._udp.local.", osc_port)):
        info = infos.get(type_)
        if not check(info is not None, f"{label}: '{service_name}' {type_} is found and resolved"):
            continue
        addresses = sorted(info.parsed_addresses(IPVersion.V4Only))
        others = sorted(info.parsed_addresses(IPVersion.V6Only))
        print(f"measured: {label}: {type_} '{service_name}' at {info.server} {addresses} port {info.port}", flush=True)
        if expected_addresses is not None:
            check(not others, f"{label}: {type_} resolves to no IPv6 address ({others})")
        elif others:
            # The machine's host name: avahi adds its IPv6 addresses, which SoundFit (IPv4
            # only) does not serve. docs/network.md says so.
            print(f"measured: {label}: {type_} IPv6 addresses of {info.server}, not served: {others}", flush=True)
        check(info.port == port, f"{label}: {type_} port {info.port} == {port}")
        if expected_addresses is not None:
            check(addresses == sorted(expected_addresses), f"{label}: {type_} resolves to {addresses}, only {expected_addresses}")
        else:
            check(bool(addresses) and set(addresses) <= set(allowed),
                  f"{label}: {type_} resolves to {addresses}, some of {allowed}")
        for address in addresses:
            if type_ == "_oscjson._tcp.local.":
                answer = answers_http(address, info.port)
                print(f"measured: {label}: GET http://{address}:{info.port}/?HOST_INFO -> {answer}", flush=True)
                check(isinstance(answer, dict) and answer.get("OSC_PORT") == osc_port,
                      f"{label}: http://{address}:{info.port} answers HOST_INFO with OSC_PORT {osc_port}")
                named = answers_http(address, info.port, host=info.server.rstrip("."))
                print(f"measured: {label}: GET http://{info.server.rstrip('.')}:{info.port}/?HOST_INFO at {address} -> "
                      f"{'HOST_INFO' if isinstance(named, dict) else named}", flush=True)
                check(isinstance(named, dict) or not name_as_host,
                      f"{label}: http://{info.server}:{info.port} (at {address}) answers")
            else:
                answer = answers_osc(address, info.port)
                print(f"measured: {label}: /ping to {address}:{info.port} -> {answer}", flush=True)
                check(answer is True, f"{label}: udp {address}:{info.port} answers /ping")
    return infos


def check_gone(label, service_name):
    infos = browse(service_name, seconds=3)
    if not check(not infos, f"{label}: '{service_name}' is no longer found ({infos})"):
        print(subprocess.run(["ps", "-eo", "pid,ppid,args"], capture_output=True, text=True).stdout, flush=True)


def python_oscquery(service_name, http_port):
    """python-oscquery's browser finds the service; its client reads /filter/cutoff."""
    from pythonoscquery.osc_query_browser import OSCQueryBrowser
    from pythonoscquery.osc_query_client import OSCQueryClient

    browser = OSCQueryBrowser()
    try:
        service = wait_until(lambda: next((svc for svc in browser.get_discovered_oscquery()
                                          if svc is not None and svc.name.startswith(service_name + ".")), None), 10)
        if not check(service is not None, f"python-oscquery's browser discovers '{service_name}'"):
            return
        client = OSCQueryClient(service)
        info = client.get_host_info()
        print(f"measured: python-oscquery: HOST_INFO name={info.name!r} osc={info.osc_ip}:{info.osc_port} "
              f"{info.osc_transport}", flush=True)
        check(info.name == service_name, f"python-oscquery reads HOST_INFO NAME {info.name!r}")
        node = client.query_node("/filter/cutoff")
        value = list(node.value) if node is not None else None
        print(f"measured: python-oscquery: /filter/cutoff VALUE {value}", flush=True)
        with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/filter/cutoff?VALUE", timeout=3) as response:
            served = json.loads(response.read())["VALUE"]
        check(value == served and isinstance(value[0], float), f"python-oscquery reads /filter/cutoff {value} == {served}")
    finally:
        browser.zc.close()


def inside(arguments):
    base = prepare_namespace()
    # 0. No system bus: avahi-publish cannot wait for a daemon; one line, SoundFit carries on.
    alone = SoundFit(arguments.soundfit, base, "fit-0", "--osc-port", "7730")
    check(bool(alone.wait_for("not advertised")), "fit-0 logs that it is not advertised")
    time.sleep(1)
    check(answers_osc("127.0.0.1", 7730) is True, "fit-0 answers /ping")
    alone.stop()
    check(len(alone.zeroconf_lines()) == 1, f"fit-0: one zeroconf line ({len(alone.zeroconf_lines())})")

    bus = start_bus(base)
    avahi = Avahi(base)
    try:
        # 1. Loopback, avahi-daemon started after SoundFit, stopped and started again.
        first = SoundFit(arguments.soundfit, base, "fit-a", "--osc-port", "7700")
        check(bool(first.wait_for("avahi-daemon is not running")), "fit-a logs that avahi-daemon is not running")
        avahi.start()
        check(bool(first.wait_for("advertising", 2)), "fit-a logs both services advertised once avahi-daemon started")
        check_discovered("loopback", "SoundFit fit-a", ["127.0.0.1"], 7701, 7700)
        other = answers_http("127.0.0.1", 7701, host="elsewhere.local")
        print(f"measured: loopback: GET with Host elsewhere.local -> {other}", flush=True)
        check("403" in str(other), "a Host name SoundFit does not advertise is refused (403)")
        python_oscquery("SoundFit fit-a", 7701)
        avahi.stop()
        check(bool(first.wait_for("avahi-daemon went away")), "fit-a logs that avahi-daemon went away")
        check_gone("avahi stopped", "SoundFit fit-a")
        avahi.start()
        check(bool(first.wait_for("avahi-daemon is back")), "fit-a logs that avahi-daemon is back")
        check(bool(first.wait_for("advertising", 4)), "fit-a logs both services advertised again")
        check_discovered("loopback, avahi restarted", "SoundFit fit-a", ["127.0.0.1"], 7701, 7700)
        first.stop()
        lines = first.zeroconf_lines()
        kinds = ["not running" in line and "advertised when it starts" in line for line in lines]
        check(sum(kinds) == 1, "fit-a: one 'not running' line")
        for text, count in (("went away", 1), ("is back", 1), ("advertising _oscjson._tcp on port 7701", 2),
                            ("advertising _osc._udp on port 7700", 2)):
            check(sum(text in line for line in lines) == count, f"fit-a: '{text}' logged {count} times")
        check(len(lines) == 7, f"fit-a: 7 zeroconf lines, no other ({len(lines)})")
        check(all("(127.0.0.1)" in line and ".local" in line for line in lines if "advertising" in line),
              "fit-a: each 'advertising' line names its host name and 127.0.0.1")
        check_gone("fit-a stopped", "SoundFit fit-a")

        # 2. The LAN address.
        second = SoundFit(arguments.soundfit, base, "fit-b", "--osc-host", LAN_ADDRESS, "--osc-port", "7710")
        check(bool(second.wait_for("advertising", 2)), "fit-b logs both services advertised")
        check_discovered("--osc-host", "SoundFit fit-b", [LAN_ADDRESS], 7711, 7710)
        second.stop()
        check(all(f"({LAN_ADDRESS})" in line for line in second.zeroconf_lines() if "advertising" in line),
              f"fit-b: each 'advertising' line names {LAN_ADDRESS}")

        # 3. Every interface: the machine's host name, which avahi publishes with both addresses.
        third = SoundFit(arguments.soundfit, base, "fit-c", "--osc-host", "0.0.0.0", "--osc-port", "7720")
        check(bool(third.wait_for("advertising", 2)), "fit-c logs both services advertised")
        check_discovered("0.0.0.0", "SoundFit fit-c", None, 7721, 7720, allowed=["127.0.0.1", LAN_ADDRESS])
        third.stop()

        # 4. Another machine on the link already has SoundFit's host name.
        label = "soundfit-fit-d-" + re.sub(r"[^a-z0-9]+", "-", socket.gethostname().split(".")[0].lower()).strip("-")
        peer = Peer(arguments.soundfit, f"{label}.local")
        try:
            fourth = SoundFit(arguments.soundfit, base, "fit-d", "--osc-port", "7740")
            check(bool(fourth.wait_for(f"the host name {label}.local is taken")), "fit-d logs that its host name is taken")
            check(bool(fourth.wait_for(f"at {label}-2.local (127.0.0.1)", 2)), f"fit-d advertises both services at {label}-2.local")
            infos = check_discovered("taken host name", "SoundFit fit-d", ["127.0.0.1"], 7741, 7740, name_as_host=False)
            check(all(info is not None and info.server == f"{label}-2.local." for info in infos.values()),
                  f"fit-d's services point at {label}-2.local")
            fourth.stop()
        finally:
            peer.stop()
    finally:
        if avahi.process:
            avahi.stop()
        bus.terminate()
        bus.wait(10)
    for problem in problems:
        print(f"problem: {problem}")
    if not problems:
        print("passed")
    return 1 if problems else 0


class Peer:
    """Another machine: network and mount namespaces of their own behind sf1 (10.77.0.3), with a
    system bus and an avahi-daemon (host name `peer`) that publishes `host_name`."""

    def __init__(self, soundfit, host_name):
        self.process = subprocess.Popen(["unshare", "--net", "--mount", "--fork", sys.executable, os.path.abspath(__file__),
                                         "--soundfit", soundfit, "--peer", host_name],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        pid = self.process.stdout.readline().split()[-1]
        run("ip", "link", "set", "sf1", "netns", pid)
        ready = self.process.stdout.readline().strip()
        print(f"measured: peer: {ready}", flush=True)
        if not ready.startswith("published"):
            raise SystemExit(f"problem: the peer machine did not publish {host_name}: {ready}")

    def stop(self):
        self.process.stdin.close()
        self.process.wait(20)


def peer(host_name):
    """Inside the peer's namespaces: prints its pid, waits for sf1, publishes, runs until stdin closes."""
    print(f"pid {os.getpid()}", flush=True)
    run("mount", "-t", "tmpfs", "tmpfs", "/run")
    for directory in ("/run/dbus", "/run/avahi-daemon"):
        os.makedirs(directory)
    base = tempfile.mkdtemp(prefix="peer-", dir="/run")
    if not wait_until(lambda: subprocess.run(["ip", "link", "show", "sf1"], capture_output=True).returncode == 0, 20):
        print("no sf1", flush=True)
        return 1
    run("ip", "addr", "add", "10.77.0.3/24", "dev", "sf1")
    run("ip", "link", "set", "sf1", "up")
    run("ip", "link", "set", "lo", "up")
    bus = start_bus(base)
    avahi = Avahi(base, host_name="peer")
    with contextlib.redirect_stdout(sys.stderr):
        avahi.start()
    publisher = subprocess.Popen(["avahi-publish", "-a", "-R", host_name, "10.77.0.3"], stderr=subprocess.PIPE, text=True,
                                 env=dict(os.environ, LC_ALL="C"))
    line = publisher.stderr.readline().strip()
    print(f"published {host_name} at 10.77.0.3: {line}" if line.startswith("Established") else line, flush=True)
    sys.stdin.read()
    publisher.kill()
    avahi.stop()
    bus.terminate()
    bus.wait(10)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--soundfit", required=True)
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--peer", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    # A mask inherited from the caller (a test runner blocks SIGTERM) would pass on to every
    # daemon started here: they could not be stopped.
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    if arguments.peer:
        return peer(arguments.peer)
    if arguments.inside:
        return inside(arguments)
    command = ["unshare", "--user", "--map-root-user", "--net", "--mount", "--pid", "--fork", "--mount-proc",
               "--kill-child", sys.executable, os.path.abspath(__file__), "--soundfit", os.path.abspath(arguments.soundfit),
               "--inside"]
    return subprocess.run(command, stdin=subprocess.DEVNULL).returncode


if __name__ == "__main__":
    sys.exit(main())
