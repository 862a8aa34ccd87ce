#!/usr/bin/env python3
"""Sends OSC messages to SoundFit over its WebSocket (OSC over WebSocket, binary frames) and prints
each answer, for the integration tests of the output ceiling. Uses the independent
WebSocket client and OSC codec of oscquery_client.py, nothing of SoundFit's own code.

Usage: osc_over_websocket.py --http PORT MESSAGE [MESSAGE ...]
A MESSAGE is `ADDRESS[,ARG...]` with ARG `f:1.5`, `i:3` or `s:text`, e.g. `/config/max_output,f:130`.
For each message, in order, prints one line `ADDRESS<TAB>JSON arguments` of the first answer whose
address is the message's own or `/error`; exits 1 when one does not come in 10 s.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oscquery_client import CheckFailed, WebSocket  # noqa: E402


def parse(text):
    address, *arguments = text.split(",")
    values = []
    for argument in arguments:
        kind, _, value = argument.partition(":")
        values.append({"f": float, "i": int, "s": str}[kind](value))
    return address, values


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--http", type=int, required=True)
    parser.add_argument("messages", nargs="+")
    args = parser.parse_args()
    ws = WebSocket(args.http)
    try:
        for text in args.messages:
            address, values = parse(text)
            ws.send_osc(address, *values)
            answer, arguments = ws.wait_for_osc(lambda m: m[0] in (address, "/error"), f"answer to {address}")
            print(f"{answer}\t{json.dumps(arguments)}", flush=True)
    except CheckFailed as failure:
        print(f"FAILED {failure}", file=sys.stderr)
        sys.exit(1)
    finally:
        ws.close()


if __name__ == "__main__":
    main()
