#!/usr/bin/env bash
# Uses SoundFit the way another project would: by URL and version tag. Clones the committed HEAD
# into a temporary directory and tags the clone with the version of the package (only the
# clone: tags of this repository play no part). Then:
# - every library product can be depended on by version (a probe package per product);
# - Examples/OfflineConsumer, pointed at `file://<clone>` `from: <version>`, builds, runs and
#   prints the expected measurement; it depends on the SoundFitEngine product only, so its
#   executable must link neither libjack nor liblo;
# - the DocC article shows that example's code verbatim (so the article's code compiles).
#
# Package resolution works offline when git maps github.com to a local mirror.
set -euo pipefail
cd "$(dirname "$0")/.."
repository=$(pwd)

version=$(sed -n 's/.*current = "\([0-9][0-9.]*\)".*/\1/p' Sources/SoundFitModel/SoundFitVersion.swift | head -1)
[[ -n "$version" ]] || { echo "check-consumer: no version in Sources/SoundFitModel/SoundFitVersion.swift" >&2; exit 1; }
example=Examples/OfflineConsumer/Sources/OfflineRender/OfflineRender.swift
article=Sources/SoundFitEngine/SoundFitEngine.docc/OfflineRendering.md
python3 - "$example" "$article" <<'PY'
import sys
code, article = (open(path).read() for path in sys.argv[1:])
if "```swift\n" + code + "```" not in article:
    sys.exit(f"check-consumer: {sys.argv[2]} must show {sys.argv[1]} verbatim in a swift code block")
PY

work=$(mktemp -d "${TMPDIR:-/tmp}/soundfit-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A clone of HEAD whose only tag is the version under test.
git clone --quiet --no-checkout "$repository" "$work/SoundFit"
git -C "$work/SoundFit" checkout --quiet --detach "$(git rev-parse HEAD)"
git -C "$work/SoundFit" tag -l | xargs -r git -C "$work/SoundFit" tag -d >/dev/null
git -C "$work/SoundFit" tag "$version"

# Every library product can be depended on by version (SwiftPM refuses products whose targets
# carry unsafe flags; loading the package graph is enough to find out).
products=$(swift package dump-package | python3 -c 'import json, sys
print(" ".join(p["name"] for p in json.load(sys.stdin)["products"] if "library" in p["type"]))')
for product in $products; do
    probe="$work/probe-$product"
    mkdir -p "$probe/Sources/Probe"
    echo 'print("probe")' > "$probe/Sources/Probe/main.swift"
    cat > "$probe/Package.swift" <<SWIFT
// swift-tools-version:6.1
import PackageDescription
let package = Package(
    name: "Probe",
    dependencies: [.package(url: "file://$work/SoundFit", from: "$version")],
    targets: [.executableTarget(name: "Probe", dependencies: [.product(name: "$product", package: "SoundFit")])])
SWIFT
    if ! graph=$(swift package --package-path "$probe" --cache-path "$work/cache" show-dependencies 2>&1) \
        || grep -q "error:" <<<"$graph"; then
        echo "check-consumer: the product $product cannot be depended on by version:" >&2
        grep "error:" <<<"$graph" >&2 || echo "$graph" >&2
        exit 1
    fi
done
echo "check-consumer: every library product ($products) can be depended on by version $version"

# The consumer, depending on that clone by URL and version.
cp -R "$work/SoundFit/Examples/OfflineConsumer" "$work/OfflineConsumer"
manifest="$work/OfflineConsumer/Package.swift"
sed -i "s|\.package(name: \"SoundFit\", path: \"\.\./\.\.\")|.package(url: \"file://$work/SoundFit\", from: \"$version\")|" "$manifest"
grep -q "file://$work/SoundFit\", from: \"$version\"" "$manifest" \
    || { echo "check-consumer: could not point $manifest at the tagged clone" >&2; exit 1; }

echo "check-consumer: building Examples/OfflineConsumer against SoundFit $version by URL"
swift build --package-path "$work/OfflineConsumer" --cache-path "$work/cache" --product OfflineRender 2>&1 \
    | grep -E "error|warning: .*(unsafe|SoundFit)|Build complete" || true
binary="$work/OfflineConsumer/.build/debug/OfflineRender"
[[ -x "$binary" ]] || { echo "check-consumer: the consumer did not build" >&2; exit 1; }

output=$("$binary")
echo "check-consumer: $output"
python3 - "$output" <<'PY'
import re, sys
match = re.fullmatch(r"5000 Hz through a 1000 Hz lowpass: (-?[0-9.]+) dB", sys.argv[1].strip())
if not match:
    sys.exit("check-consumer: unexpected output")
attenuation = float(match.group(1))
# A second-order lowpass at 1 kHz takes about 28 dB off a 5 kHz tone.
if not -31 <= attenuation <= -25:
    sys.exit(f"check-consumer: expected about -28 dB, measured {attenuation} dB")
PY

if ldd "$binary" | grep -E 'libjack|liblo'; then
    echo "check-consumer: the offline consumer links JACK or liblo" >&2
    exit 1
fi
echo "check-consumer: OfflineConsumer builds by version, runs, and links neither libjack nor liblo"
