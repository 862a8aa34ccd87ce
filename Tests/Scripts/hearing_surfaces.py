#!/usr/bin/env python3
"""Records every surface a hearing-test taker could watch, with timestamps, while `soundfit test`
runs the test in a pseudo-terminal: the terminal client's output (it is the test's starter), an
OSC subscriber (UDP), and a WebSocket that LISTENs on every node of the OSCQuery namespace. Uses
the independent WebSocket client and OSC codec of oscquery_client.py, nothing of SoundFit's own.

Usage: hearing_surfaces.py --http PORT --osc PORT --out FILE -- SOUNDFIT_TEST_ARGV...
Writes FILE as JSON: {"terminal": [[unix_time, text]...], "subscriber": [[t, address, [args]]...],
"websocket": [[t, opcode, summary]...], "listened": N, "exit": status}; exits 0 once written.
"""
import argparse
import json
import os
import pty
import select
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oscquery_client import HOST, WebSocket, get_json, osc_decode, osc_message  # noqa: E402


def node_paths(node, found):
    found.append(node["FULL_PATH"])
    for child in node.get("CONTENTS", {}).values():
        node_paths(child, found)
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--http", type=int, required=True)
    parser.add_argument("--osc", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("argv", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    argv = args.argv[1:] if args.argv and args.argv[0] == "--" else args.argv
    lock = threading.Lock()
    log = {"terminal": [], "subscriber": [], "websocket": [], "listened": 0, "exit": None}
    stopping = threading.Event()

    # The WebSocket: LISTEN on every node (parameters stream their changes; others say ERROR).
    ws = WebSocket(args.http)
    paths = node_paths(get_json(args.http, "/"), [])
    for path in paths:
        ws.send_text(json.dumps({"COMMAND": "LISTEN", "DATA": path}))
    log["listened"] = len(paths)

    def read_websocket():
        while not stopping.is_set():
            try:
                opcode, payload = ws.receive(timeout=0.2)
            except (socket.timeout, TimeoutError):
                continue
            except (EOFError, OSError):
                return
            now = time.time()
            if opcode == 0x2:
                message = osc_decode(payload)
                summary = [message[0], [a if isinstance(a, (int, float, str)) else repr(a) for a in message[1]]]
            else:
                summary = payload[:200].decode("utf-8", "replace")
            with lock:
                log["websocket"].append([now, opcode, summary])

    # The subscriber.
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind((HOST, 0))
    udp.settimeout(0.2)
    udp.sendto(osc_message("/subscribe"), (HOST, args.osc))

    def read_subscriber():
        while not stopping.is_set():
            try:
                data, _ = udp.recvfrom(65536)
            except socket.timeout:
                continue
            now = time.time()
            message = osc_decode(data)
            with lock:
                log["subscriber"].append([now, message[0], [a if isinstance(a, (int, float, str)) else repr(a)
                                                            for a in message[1]]])

    threads = [threading.Thread(target=read_websocket), threading.Thread(target=read_subscriber)]
    for thread in threads:
        thread.start()
    # Until the subscription is confirmed (its /subscribed), the test does not start.
    deadline = time.time() + 10
    while time.time() < deadline and not any(m[1] == "/subscribed" for m in log["subscriber"]):
        time.sleep(0.02)

    pid, fd = pty.fork()
    if pid == 0:
        os.execv(argv[0], argv)
    began = time.time()
    pending = b""
    status = None
    while time.time() - began < args.timeout:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                chunk = b""
            if chunk:
                now = time.time()
                pending += chunk
                # One entry per line, stamped when its first byte arrived is approximated by
                # the arrival of the chunk that completed it (chunks come within milliseconds).
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    text = line.decode("utf-8", "replace").strip("\r")
                    if text:
                        log["terminal"].append([now, text])
                continue
        done, code = os.waitpid(pid, os.WNOHANG)
        if done:
            status = os.WEXITSTATUS(code) if os.WIFEXITED(code) else -1
            break
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        status = -9
    if pending.strip():
        log["terminal"].append([time.time(), pending.decode("utf-8", "replace").strip()])
    log["exit"] = status
    time.sleep(0.3)  # the last reports on the other surfaces (no event marks them all received)
    stopping.set()
    for thread in threads:
        thread.join()
    ws.close()
    with open(args.out, "w") as file:
        json.dump(log, file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
