#!/usr/bin/env python3
"""An independent OSCQuery client for SoundFit's integration tests: plain http.client, a small
RFC 6455 WebSocket client and a small OSC codec, nothing of SoundFit's own code.

Usage: oscquery_client.py CHECK --http PORT --osc PORT
CHECK is one of: namespace, listen, websocket-set, bad-http, bad-websocket, too-many, refused, slow-reader,
or measure (round-trip medians for BENCHMARKS.md, not a check).
Prints one line per thing checked; exits 1 with the reason at the first failure.
"""
import argparse
import base64
import http.client
import json
import os
import socket
import struct
import sys
import time

HOST = "127.0.0.1"


class CheckFailed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise CheckFailed(message)


# --- OSC (strings, int32, float32, T/F) --------------------------------------------------------

def _pad(data):
    return data + b"\0" * (4 - len(data) % 4)


def _string(text):
    return _pad(text.encode())


def osc_message(address, *arguments):
    tags, payload = ",", b""
    for argument in arguments:
        if isinstance(argument, bool):
            tags += "T" if argument else "F"
        elif isinstance(argument, int):
            tags += "i"
            payload += struct.pack(">i", argument)
        elif isinstance(argument, float):
            tags += "f"
            payload += struct.pack(">f", argument)
        else:
            tags += "s"
            payload += _string(argument)
    return _string(address) + _string(tags) + payload


def _read_string(data, offset):
    end = data.index(b"\0", offset)
    return data[offset:end].decode(), (end // 4 + 1) * 4


def osc_decode(data):
    """(address, [arguments]) of one message; bundles are not expected here."""
    address, offset = _read_string(data, 0)
    tags, offset = _read_string(data, offset)
    arguments = []
    for tag in tags[1:]:
        if tag == "i":
            arguments.append(struct.unpack_from(">i", data, offset)[0])
            offset += 4
        elif tag == "f":
            arguments.append(struct.unpack_from(">f", data, offset)[0])
            offset += 4
        elif tag == "h":
            arguments.append(struct.unpack_from(">q", data, offset)[0])
            offset += 8
        elif tag == "d":
            arguments.append(struct.unpack_from(">d", data, offset)[0])
            offset += 8
        elif tag in "sS":
            text, offset = _read_string(data, offset)
            arguments.append(text)
        elif tag == "T":
            arguments.append(True)
        elif tag == "F":
            arguments.append(False)
        else:
            arguments.append(None)
    return address, arguments


class UDPClient:
    def __init__(self, port):
        self.port = port
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.socket.bind((HOST, 0))
        self.socket.settimeout(5)

    def send(self, address, *arguments):
        self.socket.sendto(osc_message(address, *arguments), (HOST, self.port))

    def wait_for(self, predicate, what):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                data, _ = self.socket.recvfrom(65536)
            except socket.timeout:
                continue
            message = osc_decode(data)
            if predicate(message):
                return message
        raise CheckFailed(f"no {what} over UDP within 10 s")

    def query(self, address):
        self.send(address)
        return self.wait_for(lambda m: m[0] == address, f"answer to the query {address}")[1][0]

    def set_applied(self, address, value):
        self.send(address, value)
        return self.wait_for(lambda m: m[0] == "/state" and m[1][0] == address and m[1][1] in ("applied", "failed", "superseded"),
                             f"terminal /state for {address}")


# --- HTTP ---------------------------------------------------------------------------------------

def get(port, path):
    connection = http.client.HTTPConnection(HOST, port, timeout=10)
    connection.request("GET", path)
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, response.getheader("Content-Type"), body


def get_json(port, path, status=200):
    code, content_type, body = get(port, path)
    check(code == status, f"GET {path}: {code} {body[:200]!r}, expected {status}")
    check(content_type == "application/json", f"GET {path}: content type {content_type}")
    return json.loads(body)


def raw_http(port, data, read_timeout=10):
    """Sends raw bytes, returns everything the server answers until it closes."""
    sock = socket.create_connection((HOST, port), timeout=read_timeout)
    sock.sendall(data)
    answer = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    except (ConnectionResetError, socket.timeout):
        pass
    sock.close()
    return answer


def status_of(answer):
    line = answer.split(b"\r\n", 1)[0].decode(errors="replace")
    parts = line.split(" ")
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


def body_of(answer):
    return answer.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in answer else b""


# --- WebSocket (RFC 6455, client side) ------------------------------------------------------------

class WebSocket:
    def __init__(self, port, path="/", receive_buffer=None):
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer:
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.socket.settimeout(10)
        self.socket.connect((HOST, port))
        key = base64.b64encode(os.urandom(16)).decode()
        self.socket.sendall((f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nUpgrade: websocket\r\n"
                             f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.socket.recv(1)
            check(chunk, "the server closed the WebSocket handshake")
            head += chunk
        check(head.startswith(b"HTTP/1.1 101"), f"WebSocket handshake answered {head[:100]!r}")
        self.buffer = b""

    def send_frame(self, opcode, payload, fin=True):
        mask = os.urandom(4)
        header = bytes([(0x80 if fin else 0) | opcode])
        if len(payload) < 126:
            header += bytes([0x80 | len(payload)])
        elif len(payload) < 65536:
            header += bytes([0x80 | 126]) + struct.pack(">H", len(payload))
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", len(payload))
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.socket.sendall(header + mask + masked)

    def send_text(self, text):
        self.send_frame(0x1, text.encode())

    def send_osc(self, address, *arguments):
        self.send_frame(0x2, osc_message(address, *arguments))

    def _read(self, count):
        while len(self.buffer) < count:
            chunk = self.socket.recv(65536)
            if not chunk:
                raise EOFError("the server closed the WebSocket")
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def receive(self, timeout=10):
        """(opcode, payload) of the next frame; pings are answered and skipped."""
        self.socket.settimeout(timeout)
        while True:
            first, second = self._read(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(length)
            opcode = first & 0x0F
            if opcode == 0x9:
                self.send_frame(0xA, payload)
                continue
            return opcode, payload

    def wait_for_osc(self, predicate, what, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            opcode, payload = self.receive(timeout=max(0.1, deadline - time.monotonic()))
            if opcode == 0x2:
                message = osc_decode(payload)
                if predicate(message):
                    return message
        raise CheckFailed(f"no {what} over the WebSocket")

    def wait_for_text(self):
        opcode, payload = self.receive()
        check(opcode == 0x1, f"expected a text frame, got opcode {opcode}: {payload[:100]!r}")
        return json.loads(payload)

    def sync(self):
        """Every frame sent before is handled once /pong answers (frames are handled in order)."""
        self.send_osc("/ping", "sync")
        self.wait_for_osc(lambda m: m[0] == "/pong", "/pong")

    def close(self):
        self.socket.close()


# --- Checks -----------------------------------------------------------------------------------

def parameters_of(node, found):
    """Every parameter node under `node`: command nodes (ACCESS 2) and meter nodes (streams, not
    values) are left out."""
    if "TYPE" in node and node["ACCESS"] != 2 and not node["FULL_PATH"].startswith("/meters/"):
        found[node["FULL_PATH"]] = node
    for child in node.get("CONTENTS", {}).values():
        parameters_of(child, found)
    return found


def udp_list(udp):
    udp.send("/list")
    listed = {}
    while True:
        address, arguments = udp.wait_for(lambda m: m[0] in ("/list/param", "/list/end"), "/list")
        if address == "/list/end":
            check(arguments[0] == len(listed), f"/list/end counts {arguments[0]}, {len(listed)} listed")
            return listed
        listed[arguments[0]] = arguments


# The OSCQuery proposal's UNIT names (its units.md, whole).
PROPOSAL_UNITS = {
    "distance.m", "distance.km", "distance.dm", "distance.cm", "distance.mm", "distance.um", "distance.nm",
    "distance.pm", "distance.inches", "distance.feet", "distance.miles", "distance.pixels",
    "angle.degree", "angle.radian",
    "gain.linear", "gain.midigain", "gain.db", "gain.db-raw",
    "time.second", "time.bark", "time.bpm", "time.cents", "time.hz", "time.mel", "time.midinote", "time.ms",
    "time.speed", "time.samples",
    "speed.m/s", "speed.mph", "speed.km/h", "speed.kn", "speed.ft/s", "speed.ft/h",
}


def python_oscquery_refuses(node, refused):
    """The nodes python-oscquery 0.4.0 (`OSCPathNode.from_json`) cannot read, by its rules: a node
    without VALUE must have ACCESS 0, one with VALUE must not, and none has both CONTENTS and
    VALUE. One such node anywhere below makes it refuse the whole tree (a ValueError)."""
    has_value = bool(node.get("VALUE"))
    access = node.get("ACCESS")
    if (not has_value and access != 0) or (has_value and access == 0) or (has_value and node.get("CONTENTS")):
        refused.append(node["FULL_PATH"])
    for child in node.get("CONTENTS", {}).values():
        python_oscquery_refuses(child, refused)
    return refused


def close_enough(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def check_namespace(args):
    udp = UDPClient(args.osc)
    root = get_json(args.http, "/")
    check(root.get("FULL_PATH") == "/", f"root FULL_PATH {root.get('FULL_PATH')}")
    nodes = parameters_of(root, {})
    listed = udp_list(udp)
    check(set(nodes) == set(listed), f"namespace {sorted(nodes)} differs from /list {sorted(listed)}")
    kinds = {"bool": "T", "float": "f", "int": "i", "string": "s"}
    for address, row in listed.items():
        node = nodes[address]
        kind, access = row[1], row[2]
        check(node["TYPE"] == kinds[kind], f"{address}: TYPE {node['TYPE']} for /list type {kind}")
        check(node["ACCESS"] == (3 if access == "rw" else 1), f"{address}: ACCESS {node['ACCESS']} for /list access {access}")
        if kind == "string":
            check(node["RANGE"] == [{"VALS": row[3].split(" ")}], f"{address}: RANGE {node.get('RANGE')} for /list {row[3]}")
        elif kind == "bool":
            check("RANGE" not in node, f"{address}: a boolean has no RANGE, got {node.get('RANGE')}")
        else:
            rng = node["RANGE"][0]
            check(close_enough(rng["MIN"], row[3]) and close_enough(rng["MAX"], row[4]),
                  f"{address}: RANGE {rng} for /list {row[3]}…{row[4]}")
        value = udp.query(address)
        check("VALUE" in node, f"{address}: no VALUE")
        served = node["VALUE"][0]
        # Clients infer the type from the JSON text, so an f node's numbers are
        # JSON floats (1000.0, not 1000) and an i node's ints; CLIPMODE none (values outside RANGE
        # are rejected, not clipped); UNIT only from the proposal's list.
        number_type = {"float": float, "int": int}.get(kind)
        if number_type:
            check(type(served) is number_type, f"{address}: VALUE {served!r} reads as {type(served).__name__}, TYPE {node['TYPE']}")
            check(all(type(node["RANGE"][0][key]) is number_type for key in ("MIN", "MAX")),
                  f"{address}: RANGE {node['RANGE']} does not read as {number_type.__name__}")
            check(node.get("CLIPMODE") == ["none"], f"{address}: CLIPMODE {node.get('CLIPMODE')}, expected ['none']")
        else:
            check("CLIPMODE" not in node, f"{address}: CLIPMODE {node.get('CLIPMODE')} on a {kind}")
        check(all(unit in PROPOSAL_UNITS for unit in node.get("UNIT", [])), f"{address}: UNIT {node.get('UNIT')} is not the proposal's")
        if kind == "bool":
            check(served is (value == 1), f"{address}: VALUE {served} for the UDP answer {value}")
        elif kind == "float":
            check(close_enough(served, value), f"{address}: VALUE {served} for the UDP answer {value}")
        else:
            check(served == value, f"{address}: VALUE {served} for the UDP answer {value}")
        check(node["DESCRIPTION"], f"{address}: no DESCRIPTION")
        print(f"ok {address} TYPE {node['TYPE']} ACCESS {node['ACCESS']} RANGE {node.get('RANGE')} VALUE {served}")
    # One attribute at a time, and a container.
    udp.set_applied("/filter/cutoff", 1234.0)
    check(get_json(args.http, "/filter/cutoff?VALUE") == {"VALUE": [1234]}, "?VALUE does not follow a UDP set")
    check(get_json(args.http, "/filter/cutoff?TYPE") == {"TYPE": "f"}, "?TYPE")
    check(get_json(args.http, "/filter/cutoff?UNIT") == {"UNIT": ["time.hz"]}, "?UNIT")
    check(get_json(args.http, "/ringmod/frequency?UNIT") == {"UNIT": ["time.hz"]}, "?UNIT of /ringmod/frequency")
    check(get_json(args.http, "/output/gain?UNIT") == {"UNIT": ["gain.db"]}, "?UNIT of /output/gain")
    check(get_json(args.http, "/filter/cutoff?CLIPMODE") == {"CLIPMODE": ["none"]}, "?CLIPMODE")
    # A whole float is written as a float, byte for byte, in the node, the attribute and the RANGE.
    udp.set_applied("/filter/cutoff", 1600.0)
    for path, expected in [("/filter/cutoff?VALUE", b'{"VALUE":[1600.0]}'),
                           ("/filter/cutoff?RANGE", b'{"RANGE":[{"MIN":20.0,"MAX":20000.0}]}'),
                           ("/filter/gain?RANGE", b'{"RANGE":[{"MIN":-24.0,"MAX":24.0}]}')]:
        code, _, body = get(args.http, path)
        check(code == 200 and body == expected, f"GET {path}: {code} {body!r}, expected {expected!r}")
        print(f"ok {path}: {body.decode()}")
    code, _, body = get(args.http, "/filter/cutoff")
    check(b'"VALUE":[1600.0]' in body, f"GET /filter/cutoff: {body!r} lacks VALUE 1600.0")
    print("ok /filter/cutoff at 1600 Hz: VALUE [1600.0]")
    check(get_json(args.http, "/filter?FULL_PATH") == {"FULL_PATH": "/filter"}, "container ?FULL_PATH")
    check(sorted(get_json(args.http, "/filter")["CONTENTS"]) == ["cutoff", "enabled", "gain", "q", "type"], "/filter CONTENTS")
    code, _, _ = get(args.http, "/filter/q?UNIT")
    check(code == 204, f"?UNIT of a unitless parameter: {code}, expected 204")
    info = get_json(args.http, "/?HOST_INFO")
    check(info["OSC_PORT"] == args.osc and info["OSC_TRANSPORT"] == "UDP" and info["WS_PORT"] == args.http,
          f"HOST_INFO {info}")
    check(info["EXTENSIONS"].get("LISTEN") is True and info["EXTENSIONS"].get("VALUE") is True, f"EXTENSIONS {info}")
    check(info["EXTENSIONS"].get("PATH_CHANGED") is True, f"EXTENSIONS lack PATH_CHANGED: {info}")
    print(f"ok HOST_INFO {json.dumps(info)}")
    # The proposal: for HOST_INFO "the path in the URL is functionally irrelevant".
    for path in ["/filter/cutoff", "/filter", "/filter/", "/meters/input"]:
        check(get_json(args.http, f"{path}?HOST_INFO") == info, f"{path}?HOST_INFO differs from /?HOST_INFO")
    code, _, body = get(args.http, "/no/such?HOST_INFO")
    check(code == 404 and "error" in json.loads(body), f"/no/such?HOST_INFO answered {code} {body!r}")
    print("ok HOST_INFO on /filter/cutoff, /filter, /filter/, /meters/input; /no/such?HOST_INFO: 404")
    # A fragment is stripped: neither path nor attribute.
    for target, expected in [("/filter/cutoff?VALUE#frag", {"VALUE": [1600.0]}), ("/?HOST_INFO#x", info),
                             ("/filter/cutoff#x", None), ("/filter#x?VALUE", None)]:
        answer = raw_http(args.http, f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        check(status_of(answer) == 200, f"GET {target}: {answer[:300]!r}")
        served = json.loads(body_of(answer))
        if expected is None:
            expected_path = target.split("#")[0]
            check(served.get("FULL_PATH") == expected_path, f"GET {target}: FULL_PATH {served.get('FULL_PATH')}, expected {expected_path}")
        else:
            check(served == expected, f"GET {target}: {served}, expected {expected}")
        print(f"ok GET {target}: 200")
    # python-oscquery 0.4.0 reads a node only if each one below it has a VALUE or ACCESS 0: the
    # command nodes (ACCESS 2) and meter streams (ACCESS 1) have none, so it refuses GET / and
    # reads every other container (docs/osc-guide.md, OSCQuery).
    refused = python_oscquery_refuses(root, [])
    check(refused and all(path.startswith(("/patch/", "/meters/")) for path in refused),
          f"python-oscquery would refuse {refused}: only /patch/* and /meters/* are documented")
    readable = [f"/{name}" for name in root["CONTENTS"] if name not in ("patch", "meters")]
    check(readable == ["/processing", "/filter", "/ringmod", "/output"], f"docs/osc-guide.md names these containers, not {readable}")
    for container in readable:
        check(not python_oscquery_refuses(get_json(args.http, container), []), f"python-oscquery would refuse {container}")
    print(f"ok python-oscquery's rules: refused only {refused}; {', '.join(readable)} read")


def udp_patches(udp):
    """[(number, name)] of every patch, in /patch/list order (all pages)."""
    patches, offset = [], 0
    while offset != -1:
        udp.send("/patch/list", offset)
        while True:
            address, arguments = udp.wait_for(lambda m: m[0] in ("/patch/item", "/patch/end"), "/patch/list")
            if address == "/patch/end":
                offset = arguments[1]
                break
            patches.append((arguments[0], arguments[1]))
    return patches


def wait_for_path_changes(ws, paths):
    """Reads text frames until a PATH_CHANGED has named each of `paths`; binary frames are skipped."""
    seen = set()
    deadline = time.monotonic() + 10
    while not set(paths) <= seen:
        check(time.monotonic() < deadline, f"PATH_CHANGED for {sorted(set(paths) - seen)} did not arrive")
        opcode, payload = ws.receive(timeout=max(0.1, deadline - time.monotonic()))
        if opcode != 0x1:
            continue
        command = json.loads(payload)
        check(command.get("COMMAND") == "PATH_CHANGED", f"unexpected text frame {command}")
        seen.add(command["DATA"])
    return seen


def check_patch_nodes(udp, http_port, what):
    """/patch/load lists every patch as /patch/list does; /patch/delete the user patches; /patch/save none."""
    patches = udp_patches(udp)
    load = get_json(http_port, "/patch/load")
    check(load["TYPE"] == "s" and load["ACCESS"] == 2 and "VALUE" not in load, f"/patch/load node {load}")
    check(load["RANGE"] == [{"VALS": [name for _, name in patches]}],
          f"{what}: /patch/load VALS {load['RANGE']} for /patch/list {patches}")
    delete = get_json(http_port, "/patch/delete")
    check(delete["TYPE"] == "s" and delete["ACCESS"] == 2, f"/patch/delete node {delete}")
    check(delete["RANGE"] == [{"VALS": [name for number, name in patches if number < 0]}],
          f"{what}: /patch/delete VALS {delete['RANGE']} for /patch/list {patches}")
    save = get_json(http_port, "/patch/save")
    check(save["TYPE"] == "s" and save["ACCESS"] == 2 and "RANGE" not in save and save["DESCRIPTION"], f"/patch/save node {save}")
    return [name for _, name in patches]


def check_patch_changes(args):
    udp = UDPClient(args.osc)
    names = check_patch_nodes(udp, args.http, "at start")
    check(len(names) > 0, "no patch is loadable")
    check(sorted(get_json(args.http, "/patch")["CONTENTS"]) == ["delete", "load", "save"], "/patch CONTENTS")
    print(f"ok /patch/load VALS {names}")
    watcher = WebSocket(args.http)
    watcher.sync()
    # Saved over UDP: every WebSocket hears that the choices changed, and they hold the new patch.
    udp.send("/patch/save", "ns evening")
    _, saved = udp.wait_for(lambda m: m[0] in ("/patch/saved", "/error"), "/patch/saved")
    check(saved[1] == "ns evening", f"/patch/save answered {saved}")
    changed = wait_for_path_changes(watcher, ["/patch/load", "/patch/delete"])
    names = check_patch_nodes(udp, args.http, "after a save over UDP")
    check("ns evening" in names, f"the saved patch is not among /patch/load VALS {names}")
    print(f"ok a save over UDP: PATH_CHANGED {sorted(changed)}; VALS {names}")
    # Saved as binary OSC over another WebSocket (as the web page does): the watcher hears it too.
    page = WebSocket(args.http)
    page.send_osc("/patch/save", "ns morning")
    page.wait_for_osc(lambda m: m[0] == "/patch/saved" and m[1][1] == "ns morning", "/patch/saved over the WebSocket")
    wait_for_path_changes(watcher, ["/patch/load", "/patch/delete"])
    names = check_patch_nodes(udp, args.http, "after a save over the WebSocket")
    check("ns morning" in names, f"the patch saved over the WebSocket is not among {names}")
    # Sending to the node is the command: a load by name over the WebSocket.
    page.send_osc("/patch/load", "ns evening")
    _, current = page.wait_for_osc(lambda m: m[0] in ("/patch/current", "/error"), "/patch/current")
    check(current[1] == "ns evening", f"/patch/load over the WebSocket answered {current}")
    print(f"ok a save and a load over the WebSocket: /patch/current {current}")
    # Deleted over UDP (by number): PATH_CHANGED again, and the patch is gone from both nodes.
    number = next(number for number, name in udp_patches(udp) if name == "ns evening")
    udp.send("/patch/delete", number)
    _, deleted = udp.wait_for(lambda m: m[0] in ("/patch/deleted", "/error"), "/patch/deleted")
    check(deleted == [number], f"/patch/delete answered {deleted}")
    wait_for_path_changes(watcher, ["/patch/load", "/patch/delete"])
    names = check_patch_nodes(udp, args.http, "after a delete over UDP")
    check("ns evening" not in names and "ns morning" in names, f"after the delete /patch/load VALS {names}")
    print(f"ok a delete over UDP: PATH_CHANGED; VALS {names}")
    # A refused save changes nothing and tells nobody.
    udp.send("/patch/save", "")
    _, refused = udp.wait_for(lambda m: m[0] == "/error" and m[1][0] == "/patch/save", "/error for an empty name")
    check(check_patch_nodes(udp, args.http, "after a refused save") == names, "a refused save changed the patches")
    try:
        opcode, payload = watcher.receive(timeout=0.5)
        check(opcode != 0x1, f"a refused save sent {payload!r}")
    except socket.timeout:
        pass
    print(f"ok a refused save: /error {refused}; nothing changed")
    # A command node is not a parameter: LISTEN to it is an ERROR.
    watcher.send_text(json.dumps({"COMMAND": "LISTEN", "DATA": "/patch/load"}))
    answer = watcher.wait_for_text()
    check(answer.get("COMMAND") == "ERROR", f"LISTEN /patch/load: {answer}")
    watcher.close()
    page.close()


def expect_no_osc(ws, predicate, failure, seconds=1):
    """Fails with `failure` when the socket streams an OSC message matching `predicate` within
    `seconds` (after an IGNORE: nothing more may come)."""
    try:
        ws.wait_for_osc(predicate, "nothing", timeout=seconds)
        streamed = True
    except (CheckFailed, socket.timeout):
        streamed = False
    check(not streamed, failure)


def check_listen(args):
    udp = UDPClient(args.osc)
    ws = WebSocket(args.http)
    ws.send_text(json.dumps({"COMMAND": "LISTEN", "DATA": "/filter/cutoff"}))
    ws.sync()
    udp.set_applied("/filter/cutoff", 2500.0)
    address, arguments = ws.wait_for_osc(lambda m: m[0] == "/filter/cutoff", "LISTEN value of /filter/cutoff")
    check(arguments == [2500.0], f"LISTEN streamed {arguments}")
    print(f"ok LISTEN /filter/cutoff streamed {arguments} after a UDP set")
    ws.send_text(json.dumps({"COMMAND": "IGNORE", "DATA": "/filter/cutoff"}))
    ws.sync()
    udp.set_applied("/filter/cutoff", 3000.0)
    expect_no_osc(ws, lambda m: m[0] == "/filter/cutoff", "a change was streamed after IGNORE")
    print("ok IGNORE stops the stream")
    ws.send_text(json.dumps({"COMMAND": "LISTEN", "DATA": "/no/such/path"}))
    answer = ws.wait_for_text()
    check(answer.get("COMMAND") == "ERROR" and "/no/such/path" in answer.get("DATA", ""), f"LISTEN unknown path: {answer}")
    print(f"ok LISTEN of an unknown path: {answer}")
    ws.close()


def check_websocket_set(args):
    udp = UDPClient(args.osc)
    ws = WebSocket(args.http)
    ws.send_osc("/filter/cutoff", 3210.0)
    states = []
    while not states or states[-1] not in ("applied", "failed", "superseded"):
        address, arguments = ws.wait_for_osc(lambda m: m[0] == "/state", "/state over the WebSocket")
        check(arguments[0] == "/filter/cutoff", f"/state for {arguments}")
        states.append(arguments[1])
        check(arguments[2] == 3210.0, f"/state value {arguments}")
    check(states[-1] == "applied" and all(s == "applying" for s in states[:-1]), f"states {states}")
    check(udp.query("/filter/cutoff") == 3210.0, "the WebSocket set is not the value over UDP")
    print(f"ok a set over the WebSocket: /state {states}, UDP reads 3210")
    ws.send_osc("/filter/cutoff")
    _, arguments = ws.wait_for_osc(lambda m: m[0] == "/filter/cutoff", "query answer")
    check(arguments == [3210.0], f"query over the WebSocket answered {arguments}")
    ws.send_osc("/filter/cutoff", 99999.0)
    _, arguments = ws.wait_for_osc(lambda m: m[0] == "/error", "/error for an out-of-range set")
    check(arguments[0] == "/filter/cutoff", f"/error {arguments}")
    check(udp.query("/filter/cutoff") == 3210.0, "a refused set changed the value")
    print(f"ok an out-of-range set over the WebSocket: /error {arguments}")
    ws.close()


def check_websocket_meters(args):
    ws = WebSocket(args.http)
    ws.send_osc("/meters/subscribe", 25.0)
    _, arguments = ws.wait_for_osc(lambda m: m[0] in ("/meters/subscribed", "/error"), "/meters/subscribed")
    check(arguments[:1] == [25.0], f"/meters/subscribe over the WebSocket answered {arguments}")
    start = time.monotonic()
    inputs = []
    while len(inputs) < 10:
        _, levels = ws.wait_for_osc(lambda m: m[0] == "/meters/input", "/meters/input")
        inputs.append(levels)
    rate = (len(inputs) - 1) / (time.monotonic() - start)
    # Nothing plays into the input: every channel reads the floor, peak and RMS.
    check(all(levels == [-120.0] * 4 for levels in inputs), f"silent input read {inputs[-1]}")
    check(10 <= rate <= 40, f"{rate:.1f} meter messages per second at 25")
    print(f"ok meters over the WebSocket: {len(inputs)} /meters/input at {rate:.1f}/s, silence {inputs[-1]}")
    ws.close()


def check_listen_meters(args):
    """Run while a tone plays into the input: 0.1 (-20 dBFS) on channel 1, 0.05 (-26.02) on channel 2."""
    for path, kind in (("/meters/input", "ffff"), ("/meters/output", "ffff"), ("/meters/reduction", "i")):
        node = get_json(args.http, path)
        check(node["TYPE"] == kind and node["ACCESS"] == 1 and "VALUE" not in node and node["DESCRIPTION"], f"{path} node {node}")
    check(sorted(get_json(args.http, "/meters")["CONTENTS"]) == ["input", "output", "reduction"], "/meters CONTENTS")
    ws = WebSocket(args.http)
    ws.send_text(json.dumps({"COMMAND": "LISTEN", "DATA": "/meters/input"}))
    ws.wait_for_osc(lambda m: m[0] == "/meters/input", "/meters/input after LISTEN")
    start = time.monotonic()
    inputs, others = [], set()
    while len(inputs) < 21:
        opcode, payload = ws.receive()
        check(opcode == 0x2, f"expected binary OSC, got opcode {opcode}: {payload[:100]!r}")
        address, levels = osc_decode(payload)
        if address == "/meters/input":
            inputs.append(levels)
        else:
            others.add(address)
    rate = (len(inputs) - 1) / (time.monotonic() - start)
    check(not others, f"only /meters/input was LISTENed to, also got {others}")
    expected = [-20.0, -23.01, -26.02, -29.03]
    last = inputs[-1]
    check(len(last) == 4 and all(abs(a - b) <= 0.5 for a, b in zip(last, expected)), f"input meters {last}, expected {expected}")
    check(15 <= rate <= 35, f"{rate:.1f} /meters/input messages per second (the LISTEN rate is 25)")
    print(f"ok LISTEN /meters/input: {len(inputs)} messages at {rate:.1f}/s, last {last}")
    ws.send_text(json.dumps({"COMMAND": "IGNORE", "DATA": "/meters/input"}))
    ws.sync()
    expect_no_osc(ws, lambda m: m[0].startswith("/meters/"), "meter messages were streamed after IGNORE")
    print("ok IGNORE /meters/input stops the stream")
    ws.send_text(json.dumps({"COMMAND": "LISTEN", "DATA": "/meters/nothing"}))
    answer = ws.wait_for_text()
    check(answer.get("COMMAND") == "ERROR", f"LISTEN /meters/nothing: {answer}")
    ws.close()
    # Closing the socket ends its stream: another socket's LISTEN still streams (nothing leaked).
    other = WebSocket(args.http)
    other.send_text(json.dumps({"COMMAND": "LISTEN", "DATA": "/meters/output"}))
    _, levels = other.wait_for_osc(lambda m: m[0] == "/meters/output", "/meters/output after LISTEN")
    check(len(levels) == 4, f"/meters/output {levels}")
    other.close()
    print(f"ok LISTEN /meters/output on a new socket: {levels}")


def check_bad_websocket(args):
    udp = UDPClient(args.osc)
    before = udp.query("/filter/cutoff")
    ws = WebSocket(args.http)
    ws.send_frame(0x2, b"not an OSC packet")
    _, arguments = ws.wait_for_osc(lambda m: m[0] == "/error", "/error for a binary frame that is not OSC")
    print(f"ok a binary frame that is not OSC: /error {arguments}")
    ws.send_text("this is not JSON")
    answer = ws.wait_for_text()
    check(answer.get("COMMAND") == "ERROR", f"non-JSON text answered {answer}")
    print(f"ok a text frame that is not JSON: {answer}")
    ws.send_text(json.dumps({"COMMAND": "DANCE", "DATA": "/filter/cutoff"}))
    answer = ws.wait_for_text()
    check(answer.get("COMMAND") == "ERROR" and "DANCE" in answer["DATA"], f"unknown command answered {answer}")
    print(f"ok an unknown command: {answer}")
    ws.send_frame(0x2, osc_message("/filter/cutoff", 555.0) + b"\0" * (20 * 1024))
    opcode, payload = ws.receive()
    check(opcode == 0x8 and struct.unpack(">H", payload[:2])[0] == 1009, f"oversized frame answered {opcode} {payload!r}")
    print("ok an oversized frame: close 1009")
    ws.close()
    ws = WebSocket(args.http)
    ws.send_frame(0x3, b"reserved opcode")
    opcode, payload = ws.receive()
    check(opcode == 0x8 and struct.unpack(">H", payload[:2])[0] == 1002, f"a reserved opcode answered {opcode} {payload!r}")
    print("ok a reserved opcode: close 1002")
    ws.close()
    check(udp.query("/filter/cutoff") == before, "bad WebSocket input changed /filter/cutoff")
    print(f"ok /filter/cutoff still {before}")


def check_bad_http(args):
    udp = UDPClient(args.osc)
    before = udp.query("/filter/cutoff")
    answer = raw_http(args.http, b"GARBAGE\r\n\r\n")
    check(status_of(answer) == 400 and body_of(answer), f"a malformed request line answered {answer[:200]!r}")
    print(f"ok malformed request line: 400 {body_of(answer)!r}")
    answer = raw_http(args.http, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 16384 + b"\r\n\r\n")
    check(status_of(answer) == 431, f"an oversized header answered {answer[:200]!r}")
    print(f"ok oversized header: 431 {body_of(answer)!r}")
    code, _, body = get(args.http, "/no/such/path")
    check(code == 404 and "error" in json.loads(body), f"an unknown path answered {code} {body!r}")
    print(f"ok unknown path: 404 {body!r}")
    code, _, body = get(args.http, "/filter/cutoff?NOPE")
    check(code == 400 and "NOPE" in json.loads(body)["error"], f"an unknown attribute answered {code} {body!r}")
    print(f"ok unknown attribute: 400 {body!r}")
    for path in ["/ui/../Package.swift", "/ui/%2e%2e/Package.swift", "/ui/..%2fPackage.swift", "/ui//etc/passwd"]:
        answer = raw_http(args.http, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        check(status_of(answer) in (403, 404) and b"swift-tools-version" not in answer and b"root:" not in answer,
              f"{path} answered {answer[:300]!r}")
        print(f"ok {path}: {status_of(answer)} {body_of(answer)!r}")
    code, _, _ = get(args.http, "/ui")
    check(code == 301, f"/ui answered {code}, expected 301 to /ui/")
    code, content_type, body = get(args.http, "/ui/")
    check(code == 200 and content_type.startswith("text/html") and b"<html" in body.lower(), f"/ui/ answered {code} {content_type}")
    print(f"ok /ui: 301; /ui/: 200 {content_type}")
    answer = raw_http(args.http, b"POST /filter/cutoff HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\nConnection: close\r\n\r\n9999")
    check(status_of(answer) == 405, f"a POST answered {answer[:200]!r}")
    print(f"ok POST: 405 {body_of(answer)!r}")
    answer = raw_http(args.http, b"POST /ui/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n" + b"x" * 100000)
    check(status_of(answer) == 413, f"an oversized body answered {answer[:200]!r}")
    print(f"ok oversized body: 413 {body_of(answer)!r}")
    check(udp.query("/filter/cutoff") == before, "bad HTTP input changed /filter/cutoff")
    check(get_json(args.http, "/filter/cutoff?VALUE")["VALUE"][0] == before, "the namespace no longer answers")
    print(f"ok /filter/cutoff still {before}")


def check_too_many(args):
    udp = UDPClient(args.osc)
    before = udp.query("/filter/cutoff")
    held = []
    for _ in range(args.max_connections):
        connection = http.client.HTTPConnection(HOST, args.http, timeout=10)
        connection.request("GET", "/filter/cutoff?VALUE")
        check(connection.getresponse().read(), "a connection within the limit was not answered")
        held.append(connection)
    answer = raw_http(args.http, b"", read_timeout=5)
    check(status_of(answer) == 503 and b"too many connections" in answer, f"connection {args.max_connections + 1} answered {answer[:200]!r}")
    print(f"ok connection {args.max_connections + 1}: 503 {body_of(answer)!r}")
    for connection in held:
        connection.close()
    deadline = time.monotonic() + 10
    while True:
        try:
            get_json(args.http, "/filter/cutoff?VALUE")
            break
        except CheckFailed:
            check(time.monotonic() < deadline, "the server did not answer again after the connections closed")
            time.sleep(0.1)
    check(udp.query("/filter/cutoff") == before, "the connection flood changed /filter/cutoff")
    print("ok answered again once the connections closed; /filter/cutoff unchanged")


def check_slow_reader(args):
    udp = UDPClient(args.osc)
    before = udp.query("/filter/cutoff")
    ws = WebSocket(args.http, receive_buffer=4096)
    payload = "x" * 15000
    sent = 0
    try:
        for _ in range(4000):  # 60 MB of /pong answers, far beyond every buffer on the way
            ws.send_osc("/ping", payload)
            sent += 1
        closed = False
    except OSError:
        closed = True
    check(closed, f"a client that reads nothing was still connected after {sent} pings of 15 kB")
    print(f"ok a client that reads nothing was closed after {sent} pings of 15 kB")
    check(get_json(args.http, "/filter/cutoff?VALUE")["VALUE"][0] == before, "the namespace no longer answers")
    check(udp.query("/filter/cutoff") == before, "/filter/cutoff changed")
    print("ok the server answers others; /filter/cutoff unchanged")


def check_refused(args):
    answer = raw_http(args.http, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", read_timeout=5)
    check(answer == b"", f"a refused source was answered {answer[:200]!r}")
    print("ok a source outside --osc-allow: closed without an answer")


def measure(args):
    """Not a check: medians of 200 round trips, for BENCHMARKS.md (no timing goal in tests)."""
    def median_us(round_trip):
        """The median of 200 runs of `round_trip()`, in microseconds."""
        times = []
        for _ in range(200):
            start = time.perf_counter()
            round_trip()
            times.append(time.perf_counter() - start)
        return sorted(times)[len(times) // 2] * 1e6
    connection = http.client.HTTPConnection(HOST, args.http, timeout=10)
    sizes = []
    def get():
        connection.request("GET", "/")
        sizes.append(len(connection.getresponse().read()))
    get_us = median_us(get)
    print(f"measured: GET / ({sizes[-1]} bytes, keep-alive) median {get_us:.0f} us")
    ws = WebSocket(args.http)
    def ws_ping():
        ws.send_osc("/ping")
        ws.wait_for_osc(lambda m: m[0] == "/pong", "/pong")
    print(f"measured: OSC /ping over the WebSocket, round trip median {median_us(ws_ping):.0f} us")
    udp = UDPClient(args.osc)
    def udp_ping():
        udp.send("/ping")
        udp.wait_for(lambda m: m[0] == "/pong", "/pong")
    print(f"measured: OSC /ping over UDP (same client code), round trip median {median_us(udp_ping):.0f} us")


CHECKS = {
    "namespace": check_namespace, "listen": check_listen, "websocket-set": check_websocket_set,
    "websocket-meters": check_websocket_meters, "patch-changes": check_patch_changes,
    "listen-meters": check_listen_meters,
    "bad-http": check_bad_http, "bad-websocket": check_bad_websocket, "too-many": check_too_many,
    "refused": check_refused, "slow-reader": check_slow_reader, "measure": measure,
}

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("check", choices=sorted(CHECKS))
    parser.add_argument("--http", type=int, required=True)
    parser.add_argument("--osc", type=int, required=True)
    parser.add_argument("--max-connections", type=int, default=32)
    arguments = parser.parse_args()
    try:
        CHECKS[arguments.check](arguments)
    except (CheckFailed, EOFError, OSError, ValueError, KeyError) as error:
        print(f"FAILED {arguments.check}: {type(error).__name__}: {error}")
        sys.exit(1)
    print(f"passed {arguments.check}")
