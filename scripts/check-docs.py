#!/usr/bin/env python3
"""Fails when the repository's text cites what a reader cannot open, or a module list is stale.

1. No citation of a tracker or of a document outside the repository: no "issue N", no
   `DESIGN.md`, `seeds/` or `shared/` in the sources, tests, scripts, benchmarks, patches and
   `Package.swift`, nor in the hand-written documentation (README.md, BENCHMARKS.md, docs/*.md;
   not CHANGELOG.md, whose releases name their issues, nor the dated lab notebook in
   docs/benchmarks/). A comment says the reason itself.
2. The module lists name exactly the targets under Sources/ that `Package.swift` declares: the
   table of docs/Architecture.md (after its `<!-- modules: ... -->` marker) and the "Layers" list
   of Package.swift's own doc comment; the layer diagram of docs/Architecture.md names each one.

Usage: scripts/check-docs.py [PACKAGE_DIR]   (reads `swift package dump-package`)
"""
import json
import os
import re
import subprocess
import sys

CITATION = re.compile(r"\b[Ii]ssue \d+|\bDESIGN\.md\b|\bseeds/|\bshared/")
CODE_ROOTS = ["Sources", "Tests", "scripts", "Benchmarks", "patches"]
TEXT_SUFFIXES = (".swift", ".py", ".sh", ".c", ".h", ".modulemap", ".json", ".md", ".js", ".html", ".css", ".dsp")
SELF = os.path.join("scripts", "check-docs.py")  # names the patterns it looks for


def cited(package_dir):
    """Every line that cites a tracker or an outside document, as `path:line: text`."""
    files = [os.path.join(package_dir, "Package.swift"), os.path.join(package_dir, "README.md"),
             os.path.join(package_dir, "BENCHMARKS.md")]
    docs = os.path.join(package_dir, "docs")
    files += [os.path.join(docs, name) for name in sorted(os.listdir(docs)) if name.endswith(".md")]
    for root in CODE_ROOTS:
        for directory, folders, names in os.walk(os.path.join(package_dir, root)):
            folders[:] = sorted(f for f in folders if not f.startswith(".") and f != "__pycache__")
            files += [os.path.join(directory, name) for name in sorted(names)
                      if name.endswith(TEXT_SUFFIXES) or name in ("install",)]
    found = []
    for path in files:
        relative = os.path.relpath(path, package_dir)
        if relative == SELF or not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as text:
            for number, line in enumerate(text, 1):
                if CITATION.search(line):
                    found.append(f"{relative}:{number}: {line.strip()[:120]}")
    return found


def source_targets(package_dir):
    dump = subprocess.run(["swift", "package", "dump-package"], cwd=package_dir,
                          check=True, capture_output=True, text=True).stdout
    targets = set()
    for target in json.loads(dump)["targets"]:
        if target["type"] == "test":
            continue
        path = target.get("path") or os.path.join("Sources", target["name"])
        if path.split("/")[0] == "Sources":
            targets.add(target["name"])
    return targets


def compare(label, listed, targets):
    problems = [f"{label} does not list the target {name} (add it)" for name in sorted(targets - listed)]
    problems += [f"{label} lists {name}, which is no target under Sources/ in Package.swift (remove or rename it)"
                 for name in sorted(listed - targets)]
    return problems


def architecture_lists(package_dir):
    """The module table's names and the layer diagram's text of docs/Architecture.md."""
    text = open(os.path.join(package_dir, "docs", "Architecture.md"), encoding="utf-8").read()
    diagram = re.search(r"```\n(.*?)```", text, re.S)
    marker = text.find("<!-- modules:")
    if marker < 0:
        return None, diagram.group(1) if diagram else ""
    listed = set()
    for line in text[marker:].split("\n")[1:]:
        if line.startswith("| ---") or line.startswith("| module"):
            continue
        if not line.startswith("|"):
            if listed:
                break
            continue
        first = line.split("|")[1]
        listed.update(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", first))
    return listed, diagram.group(1) if diagram else ""


def package_layers(package_dir):
    """The backticked names that open each item of Package.swift's "Layers" list."""
    lines = open(os.path.join(package_dir, "Package.swift"), encoding="utf-8").read().split("\n")
    listed, inside = set(), False
    for line in lines:
        if line.startswith("/// Layers"):
            inside = True
            continue
        if inside:
            if not line.startswith("/// ") or not line[4:].strip():
                break
            item = re.match(r"/// - ((?:`[A-Za-z_][A-Za-z0-9_]*`(?:, )?)+)", line)
            if item:
                listed.update(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", item.group(1)))
    return listed


def main():
    package_dir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    problems = [f"cites a tracker or a document outside the repository (say the reason itself): {hit}"
                for hit in cited(package_dir)]
    targets = source_targets(package_dir)
    table, diagram = architecture_lists(package_dir)
    if table is None:
        problems.append("docs/Architecture.md has no `<!-- modules: ... -->` table")
    else:
        problems += compare("docs/Architecture.md's module table", table, targets)
    problems += [f"docs/Architecture.md's layer diagram does not name {name}"
                 for name in sorted(targets) if not re.search(rf"\b{re.escape(name)}\b", diagram)]
    problems += compare("Package.swift's \"Layers\" comment", package_layers(package_dir), targets)
    if problems:
        print("check-docs:", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    print(f"no citation of a tracker or outside document; the module lists name the {len(targets)} targets under Sources/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
