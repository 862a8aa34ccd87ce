#!/usr/bin/env python3
"""Fails when a target's `import` lines and its declared dependencies in Package.swift differ.

Every Swift target must declare exactly the modules it imports: a declared dependency it never
imports, or an import it gets only transitively, is reported with the fix. Modules of the
toolchain (Foundation, Glibc, Synchronization, Testing, ...) need no declaration. A product of
another package counts as the module of the same name. A test target may declare an
executable target without importing it: that builds the executable for the test to run.

Some targets are held to a boundary (`BOUNDARIES`): `OSCCore`, the OSC library, its tests and
their test support import nothing of SoundFit, only the modules listed for them (toolchain
modules included).

Usage: scripts/check-imports.py [PACKAGE_DIR]   (reads `swift package dump-package`)
"""
import json
import os
import re
import subprocess
import sys

TOOLCHAIN_MODULES = {
    "Swift", "_Concurrency", "_StringProcessing", "RegexBuilder", "Distributed", "Observation",
    "Synchronization", "Foundation", "FoundationEssentials", "FoundationInternationalization",
    "FoundationNetworking", "FoundationXML", "Dispatch", "Glibc", "Musl", "Darwin", "Android",
    "WinSDK", "ucrt", "CRT", "os", "Testing", "XCTest", "CxxStdlib", "SwiftShims",
}

# Target -> every module it may import (toolchain ones too). OSCCore is OSC itself, usable
# without SoundFit, and its tests need no jackd.
OSC_CORE_MODULES = {"Foundation", "Glibc", "Synchronization", "Logging", "CLiblo"}
BOUNDARIES = {
    "OSCCore": OSC_CORE_MODULES,
    "OSCTestSupport": OSC_CORE_MODULES | {"OSCCore"},
    "OSCCoreTests": OSC_CORE_MODULES | {"OSCCore", "OSCTestSupport", "Testing"},
}

IMPORT = re.compile(
    r"^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|package|internal|fileprivate|private)\s+)?"
    r"import\s+(?:(?:class|struct|enum|protocol|func|var|let|typealias)\s+)?"
    r"([A-Za-z_][A-Za-z0-9_]*)")


def target_directory(package_dir, target):
    if target.get("path"):
        return os.path.join(package_dir, target["path"])
    folder = "Tests" if target["type"] == "test" else "Sources"
    return os.path.join(package_dir, folder, target["name"])


def imported_modules(directory, package_dir):
    modules = {}
    for root, _, files in os.walk(directory):
        for name in sorted(files):
            if not name.endswith(".swift"):
                continue
            path = os.path.join(root, name)
            with open(path, encoding="utf-8") as source:
                for number, line in enumerate(source, 1):
                    match = IMPORT.match(line)
                    if match:
                        modules.setdefault(match.group(1), f"{os.path.relpath(path, package_dir)}:{number}")
    return modules


def declared_modules(target):
    """Maps each declared dependency to its module name."""
    declared = {}
    for dependency in target.get("dependencies", []):
        for kind in ("byName", "target", "product"):
            if kind in dependency:
                name = dependency[kind][0]
                declared[name] = kind
    return declared


def main():
    package_dir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    dump = subprocess.run(["swift", "package", "dump-package"], cwd=package_dir,
                          check=True, capture_output=True, text=True).stdout
    manifest = json.loads(dump)
    targets = {t["name"]: t for t in manifest["targets"]}
    executables = {name for name, t in targets.items() if t["type"] == "executable"}
    problems = []
    for name, target in targets.items():
        if target["type"] not in ("regular", "executable", "test"):
            continue
        directory = target_directory(package_dir, target)
        imports = imported_modules(directory, package_dir)
        if not imports and not any(f.endswith(".swift") for _, _, fs in os.walk(directory) for f in fs):
            continue  # a C target: its dependencies are headers, not imports
        for module, where in sorted(imports.items()):
            if name in BOUNDARIES and module != name and module not in BOUNDARIES[name]:
                problems.append(f"{name} imports {module} ({where}), beyond its boundary: it may import only "
                                f"{', '.join(sorted(BOUNDARIES[name]))}")
        imports = {m: where for m, where in imports.items() if m not in TOOLCHAIN_MODULES and m != name}
        declared = declared_modules(target)
        for module in sorted(declared):
            if name in BOUNDARIES and module not in BOUNDARIES[name]:
                problems.append(f"{name} declares {module}, beyond its boundary: remove it from the "
                                f"dependencies of {name} in Package.swift")
        for module, where in sorted(imports.items()):
            if module not in declared:
                problems.append(f"{name} imports {module} ({where}) but does not declare it: "
                                f"add \"{module}\" to the dependencies of {name} in Package.swift")
        for module, kind in sorted(declared.items()):
            if module in imports:
                continue
            if target["type"] == "test" and module in executables:
                continue  # built so the test can run it
            problems.append(f"{name} declares {module} but imports it nowhere: "
                            f"remove it from the dependencies of {name} in Package.swift")
    if problems:
        print("Package.swift and the imports disagree:", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    print(f"imports match the declared dependencies of {len(targets)} targets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
