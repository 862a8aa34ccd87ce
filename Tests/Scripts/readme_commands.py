#!/usr/bin/env python3
"""Runs every command block of the documentation (README.md, docs/*.md) the way a newcomer types them.

Usage: readme_commands.py --soundfit PATH [--checkout DIR] [--markdown FILE]... [--timeout SECONDS]

The files: each --markdown FILE, else README.md and every docs/*.md but docs/OSC.md, which is
generated from the command catalog (its examples are checked against each command's arguments by
OSCDocumentationTests, and no example there starts SoundFit). Each file runs on its own, as a
reader who opens that page: its own session, namespaces and temporary directory, so a page that
needs a running SoundFit starts it in its first block.

Blocks of a file, in document order:
- ```sh, ```bash and ```shell blocks run, one after another, in ONE bash session (variables
  and background jobs carry over), with `set -e -o pipefail`: a failing command fails its block;
- ```json blocks must parse;
- other blocks (output samples, Swift, plain text) are left alone.

A block can be marked by an HTML comment on the line before it (blank lines between are fine):
- `<!-- docs-test: skip REASON -->`   not run (needs a sound card, opens a browser, installs to
                                       /usr, is interactive…); the reason is required;
- `<!-- docs-test: exit N -->`        runs in a subshell and must exit with status N (an example of an
                                       error message);
- `<!-- docs-test: file NAME -->`     the block's text is written to NAME in the working directory,
                                       for later blocks (a profile, a patch).
Every unmarked shell block must run and succeed; an unknown or dangling marker is an error.

What the runner gives the blocks:
- isolation: a private network namespace (its own 127.0.0.1, so port 7700 is free), a private
  /dev/shm (JACK's registry and sockets: no other jackd is visible, and a private server is
  `soundfit-private-$(id -u)-1` as on a fresh machine) and a PID namespace (everything started
  ends with the run), through `unshare` as an unprivileged user namespace;
- `soundfit` on PATH (the built binary), HOME in a temporary directory, no JACK_DEFAULT_SERVER;
- the working directory: a temporary directory with the checkout's top-level entries linked in
  (scripts/, patches/, docs/, …), so files a block writes go nowhere else;
- long-running commands: a command line starting with `soundfit run` or `scripts/run.sh` (which is
  setup + build + `soundfit run`; the test suite did the first two) starts SoundFit in the
  background, stopping one started earlier (as a reader presses Ctrl-C first), and the block goes
  on once SoundFit printed its ready line. At the end SoundFit gets SIGTERM and must exit 0;
- a person's pace: one second after a command sent to the background (`… &`) and after each
  block, as a reader takes before typing the next line.
It also checks that the sample ready line of each file (a line starting with `soundfit ready `)
has the fields SoundFit printed first in that file's run, with the same values up to the user id.

Exit status: 0 when every block to run ran and succeeded, 1 otherwise, 2 for a malformed file (the
other files still run).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SHELL_LANGUAGES = {"sh", "bash", "shell"}
MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^\s`]*)")
START_SOUNDFIT = re.compile(r"^(\s*)(?:soundfit\s+run|scripts/run\.sh)\b(.*)$")
BACKGROUND = re.compile(r"^(.*[^&])&\s*(#.*)?$")


class Block:
    def __init__(self, line, language, text, marker):
        self.line = line
        self.language = language
        self.text = text
        self.marker = marker  # (kind, argument) or None

    def describe(self, markdown):
        return f"{display_name(markdown)}:{self.line} ```{self.language}"


CHECKOUT = None  # set in main: file names are shown relative to it


def display_name(markdown):
    """docs/running.md for a file of the checkout, the base name for any other."""
    path = os.path.abspath(markdown)
    if CHECKOUT and path.startswith(CHECKOUT + os.sep):
        return os.path.relpath(path, CHECKOUT)
    return os.path.basename(markdown)


def parse(markdown):
    """Fenced blocks with their markers; raises ValueError for malformed markers."""
    lines = open(markdown, encoding="utf-8").read().split("\n")
    blocks, pending, index = [], None, 0
    while index < len(lines):
        line = lines[index]
        marker = MARKER.match(line)
        fence = FENCE.match(line)
        if marker:
            if pending:
                raise ValueError(f"line {pending[0]}: docs-test marker not followed by a block")
            words = marker.group(1).split(None, 1)
            kind = words[0] if words else ""
            argument = words[1] if len(words) > 1 else ""
            if kind == "skip" and not argument:
                raise ValueError(f"line {index + 1}: `docs-test: skip` needs a reason")
            if kind == "exit" and not argument.isdigit():
                raise ValueError(f"line {index + 1}: `docs-test: exit N` needs a number")
            if kind == "file" and not re.fullmatch(r"[\w.-]+", argument):
                raise ValueError(f"line {index + 1}: `docs-test: file NAME` needs a plain file name")
            if kind not in ("skip", "exit", "file"):
                raise ValueError(f"line {index + 1}: unknown docs-test marker '{marker.group(1)}'")
            pending = (index + 1, kind, argument)
        elif fence:
            indent, ticks, language = fence.group(1), fence.group(2), fence.group(3).lower()
            start = index
            body = []
            index += 1
            while index < len(lines) and not lines[index].strip().startswith(ticks):
                text = lines[index]
                body.append(text[len(indent):] if text.startswith(indent) else text.lstrip())
                index += 1
            if index >= len(lines):
                raise ValueError(f"line {start + 1}: unclosed code block")
            blocks.append(Block(start + 1, language, "\n".join(body) + "\n",
                                (pending[1], pending[2]) if pending else None))
            pending = None
        elif line.strip() and pending:
            raise ValueError(f"line {pending[0]}: docs-test marker not followed by a block")
        index += 1
    if pending:
        raise ValueError(f"line {pending[0]}: docs-test marker not followed by a block")
    return blocks


def rewrite(text):
    """The block as the runner's shell runs it: SoundFit starts in the background, and a
    command sent to the background is followed by a person's pause."""
    out = []
    for line in text.split("\n"):
        start = START_SOUNDFIT.match(line)
        if start and not re.search(r"(^|\s)(--help|-h)(\s|$)", start.group(2).split("#")[0]):
            arguments = start.group(2).split("#")[0].strip()
            if arguments.endswith("&"):
                arguments = arguments[:-1].strip()
            out.append(f"{start.group(1)}docs_start_soundfit {arguments}")
            continue
        background = BACKGROUND.match(line)
        if background and not line.lstrip().startswith("#"):
            out.append(f"{background.group(1)}& docs_pace")
            continue
        out.append(line)
    return "\n".join(out)


PRELUDE = r'''
# The runner's helpers (see readme_commands.py).
docs_soundfit_pid=
docs_soundfit_count=0
docs_pace() { sleep 1; }
docs_stop_soundfit() {
    [ -n "$docs_soundfit_pid" ] || return 0
    local pid=$docs_soundfit_pid status=0
    docs_soundfit_pid=
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" || status=$?
    if [ "$status" -ne 0 ]; then
        echo "docs-test: soundfit (started by a block) exited with status $status on SIGTERM:"
        cat "$DOCS_DIR/soundfit-$docs_soundfit_count.err"
        return 1
    fi
}
docs_start_soundfit() {
    docs_stop_soundfit || return 1
    docs_soundfit_count=$((docs_soundfit_count + 1))
    local out="$DOCS_DIR/soundfit-$docs_soundfit_count.out" err="$DOCS_DIR/soundfit-$docs_soundfit_count.err"
    echo "docs-test: soundfit run $* (in the background)"
    soundfit run "$@" > "$out" 2> "$err" &
    docs_soundfit_pid=$!
    local tries=0 status=0
    until grep -q '^soundfit ready ' "$out"; do
        if ! kill -0 "$docs_soundfit_pid" 2>/dev/null; then
            wait "$docs_soundfit_pid" || status=$?
            docs_soundfit_pid=
            echo "docs-test: soundfit run $* exited with status $status before its ready line:"
            cat "$out" "$err"
            return 1
        fi
        tries=$((tries + 1))
        if [ "$tries" -gt 1200 ]; then
            echo "docs-test: soundfit run $* printed no ready line within 120 s:"
            cat "$out" "$err"
            return 1
        fi
        sleep 0.1
    done
    cat "$out"
    grep -i 'notice\|warning\|error' "$err" || true
}
trap 'docs_status=$?; docs_stop_soundfit || docs_status=1; exit $docs_status' EXIT
'''


def build_script(blocks, markdown, directory):
    parts = ["#!/bin/bash", PRELUDE]
    for number, block in enumerate(blocks):
        kind = block.marker[0] if block.marker else None
        where = block.describe(markdown)
        if kind == "skip":
            parts.append(f"printf 'skip %d\\n' {number} >&3")
            continue
        if kind == "file":
            path = os.path.join(directory, f"file-{number}")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(block.text)
            parts.append(f"printf 'begin %d\\n' {number} >&3")
            parts.append(f"cp {shlex_quote(path)} {shlex_quote(block.marker[1])}")
            parts.append(f"printf 'ok %d\\n' {number} >&3")
            continue
        if block.language not in SHELL_LANGUAGES:
            continue
        path = os.path.join(directory, f"block-{number}.sh")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(rewrite(block.text))
        parts.append(f"printf 'begin %d\\n' {number} >&3")
        parts.append(f"echo; echo '==== {where}'; cat {shlex_quote(os.path.join(directory, f'shown-{number}.sh'))}")
        with open(os.path.join(directory, f"shown-{number}.sh"), "w", encoding="utf-8") as handle:
            handle.write(block.text)
        if kind == "exit":
            expected = int(block.marker[1])
            parts.append(f"docs_block_status=0; (set -e -o pipefail; source {shlex_quote(path)}) || docs_block_status=$?")
            parts.append(f"if [ $docs_block_status -ne {expected} ]; then "
                         f"echo 'docs-test: {where} exited with status' $docs_block_status', the file says {expected}'; exit 1; fi")
        else:
            parts.append("set -e -o pipefail")
            parts.append(f"source {shlex_quote(path)}")
            parts.append("set +e +o pipefail")
        parts.append("docs_pace")
        parts.append(f"printf 'ok %d\\n' {number} >&3")
    parts.append("exit 0")
    script = os.path.join(directory, "run.sh")
    with open(script, "w", encoding="utf-8") as handle:
        handle.write("\n".join(parts) + "\n")
    return script


def shlex_quote(text):
    return "'" + text.replace("'", "'\\''") + "'"


def prepare_directory(checkout, soundfit, base):
    work = os.path.join(base, "work")
    os.makedirs(work)
    for entry in os.listdir(checkout):
        if entry.startswith(".build") or entry in (".git", ".swiftpm"):
            continue
        os.symlink(os.path.join(checkout, entry), os.path.join(work, entry))
    bin_directory = os.path.join(base, "bin")
    os.makedirs(bin_directory)
    os.symlink(os.path.realpath(soundfit), os.path.join(bin_directory, "soundfit"))
    home = os.path.join(base, "home")
    os.makedirs(home)
    return work, bin_directory, home


def check_ready_line(markdown, base):
    """The file's sample ready line has SoundFit's fields, with the values it printed (up to the uid)."""
    samples = [line.strip() for line in open(markdown, encoding="utf-8") if line.strip().startswith("soundfit ready ")]
    printed = []
    for name in sorted(os.listdir(base)):
        if name.startswith("soundfit-") and name.endswith(".out"):
            printed += [line.strip() for line in open(os.path.join(base, name)) if line.startswith("soundfit ready ")]
    if not samples or not printed:
        return []
    def fields(line):
        pairs = dict(token.split("=", 1) for token in line.split()[2:] if "=" in token)
        if "server" in pairs:
            pairs["server"] = re.sub(r"^soundfit-private-\d+-", "soundfit-private-UID-", pairs["server"])
        return pairs
    wanted = fields(printed[0])
    return [f"the sample ready line `{sample}` differs from the one SoundFit printed first, `{printed[0]}`"
            for sample in samples if fields(sample) != wanted]


def default_files(checkout):
    """README.md, then docs/*.md in name order, without the generated docs/OSC.md."""
    docs = os.path.join(checkout, "docs")
    names = sorted(name for name in os.listdir(docs) if name.endswith(".md") and name != "OSC.md")
    return [os.path.join(checkout, "README.md")] + [os.path.join(docs, name) for name in names]


def run_file(markdown, arguments):
    """Runs one file's blocks in a session of its own; returns (problems, blocks run), or None for
    a malformed file."""
    try:
        blocks = parse(markdown)
    except ValueError as error:
        print(f"{display_name(markdown)}: {error}")
        return None

    problems = []
    for block in blocks:
        if block.language == "json" and not (block.marker and block.marker[0] == "skip"):
            try:
                json.loads(block.text)
            except json.JSONDecodeError as error:
                problems.append(f"{block.describe(markdown)}: not valid JSON ({error}); fix it or mark it "
                                "<!-- docs-test: skip REASON -->")

    base = tempfile.mkdtemp(prefix="soundfit-readme-")
    try:
        work, bin_directory, home = prepare_directory(arguments.checkout, arguments.soundfit, base)
        script = build_script(blocks, markdown, base)
        environment = {key: value for key, value in os.environ.items()
                       if not key.startswith(("JACK_", "XDG_", "SOUNDFIT_", "NSM_"))}
        environment.update(PATH=bin_directory + os.pathsep + environment.get("PATH", "/usr/bin:/bin"),
                           HOME=home, DOCS_DIR=base)
        status_path = os.path.join(base, "status")
        inner = f"mount -t tmpfs tmpfs /dev/shm && ip link set lo up && exec bash {shlex_quote(script)} 3>{shlex_quote(status_path)}"
        command = ["unshare", "--user", "--map-root-user", "--mount", "--net", "--pid", "--fork", "--mount-proc",
                   "--kill-child", "bash", "-c", inner]
        log_path = os.path.join(base, "log")
        with open(log_path, "w") as log:
            process = subprocess.Popen(command, cwd=work, env=environment, stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL)
            try:
                status = process.wait(timeout=arguments.timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                status = None
        output = open(log_path, encoding="utf-8", errors="replace").read()
        print(output, end="")
        states = {}
        if os.path.exists(status_path):
            for line in open(status_path):
                state, number = line.split()
                states[int(number)] = state
        print(f"\n==== summary of {display_name(markdown)}")
        ran = 0
        for number, block in enumerate(blocks):
            if block.language not in SHELL_LANGUAGES and not (block.marker and block.marker[0] == "file"):
                continue
            state = states.get(number, "not reached")
            if state == "skip":
                print(f"skipped  {block.describe(markdown)}: {block.marker[1]}")
            elif state == "ok":
                ran += 1
                print(f"ok       {block.describe(markdown)}")
            else:
                label = "FAILED" if state == "begin" else "NOT RUN"
                problems.append(f"{block.describe(markdown)}: {label.lower()}")
                print(f"{label:8} {block.describe(markdown)}")
        if status is None:
            problems.append(f"{display_name(markdown)}: the run did not end within {arguments.timeout:.0f} s")
        elif status != 0:
            problems.append(f"{display_name(markdown)}: the run ended with status {status}")
        problems += check_ready_line(markdown, base)
        print(f"blocks run in {display_name(markdown)}: {ran}")
        return problems, ran
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main():
    global CHECKOUT
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--soundfit", required=True, help="the soundfit binary to put on PATH")
    parser.add_argument("--checkout", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    parser.add_argument("--markdown", action="append",
                        help="a file to run (repeatable); default: CHECKOUT/README.md and CHECKOUT/docs/*.md but docs/OSC.md")
    parser.add_argument("--timeout", type=float, default=600, help="seconds for each file's run")
    arguments = parser.parse_args()
    CHECKOUT = os.path.abspath(arguments.checkout)
    files = arguments.markdown or default_files(arguments.checkout)

    problems, ran, malformed = [], 0, False
    for markdown in files:
        print(f"==== file {display_name(markdown)}", flush=True)
        result = run_file(markdown, arguments)
        if result is None:
            malformed = True
            continue
        problems += result[0]
        ran += result[1]
    print(f"\nfiles run: {' '.join(display_name(markdown) for markdown in files)}")
    print(f"blocks run: {ran}")
    for problem in problems:
        print(f"problem: {problem}")
    return 2 if malformed else 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
