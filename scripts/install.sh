#!/usr/bin/env bash
# Installs SoundFit under PREFIX (default /usr/local):
#   PREFIX/bin/soundfit                                   the binary (built in release)
#   PREFIX/share/soundfit/patches/                        the factory patches (found by the binary)
#   PREFIX/share/soundfit/ui/                             the web page, when the checkout has ui/
#   PREFIX/share/man/man1/soundfit.1                      the man page, generated from the commands
#   PREFIX/share/bash-completion/completions/soundfit     shell completions (bash, zsh, fish)
#   PREFIX/share/zsh/site-functions/_soundfit
#   PREFIX/share/fish/vendor_completions.d/soundfit.fish
#   PREFIX/lib/systemd/user/soundfit.service              a systemd user unit (`systemctl --user`)
#
# Usage: scripts/install.sh [--binary FILE] [PREFIX]
#   --binary FILE  install FILE instead of building (a soundfit built already)
# Set DESTDIR to stage the files for a package (DESTDIR/PREFIX/...); the paths the installed
# files name stay PREFIX/... .
set -euo pipefail
cd "$(dirname "$0")/.."

binary=""
if [ "${1:-}" = "--binary" ]; then
    binary="${2:?--binary needs a file}"
    shift 2
fi
prefix="${1:-/usr/local}"
case "$prefix" in
    /*) ;;
    *) echo "install.sh: PREFIX must be an absolute path, got '$prefix'" >&2; exit 2 ;;
esac
root="${DESTDIR:-}$prefix"

if [ -z "$binary" ]; then
    source scripts/setup.sh
    swift build -c release --product soundfit >&2
    binary=.build/release/soundfit
fi
[ -x "$binary" ] || { echo "install.sh: $binary is not an executable" >&2; exit 1; }

install -d "$root/bin" "$root/share/soundfit/patches" "$root/share/man/man1" \
    "$root/share/bash-completion/completions" "$root/share/zsh/site-functions" \
    "$root/share/fish/vendor_completions.d" "$root/lib/systemd/user"
install -m 0755 "$binary" "$root/bin/soundfit"
install -m 0644 patches/*.json "$root/share/soundfit/patches/"
if [ -d ui ]; then
    rm -rf "$root/share/soundfit/ui"
    cp -R ui "$root/share/soundfit/ui"
    chmod -R u=rwX,go=rX "$root/share/soundfit/ui"
fi

# The man page and the completions come from the command tree of the binary just installed.
"$root/bin/soundfit" --experimental-dump-help | python3 scripts/install/manpage.py > "$root/share/man/man1/soundfit.1"
"$root/bin/soundfit" --generate-completion-script bash > "$root/share/bash-completion/completions/soundfit"
"$root/bin/soundfit" --generate-completion-script zsh > "$root/share/zsh/site-functions/_soundfit"
"$root/bin/soundfit" --generate-completion-script fish > "$root/share/fish/vendor_completions.d/soundfit.fish"
sed "s|@BINDIR@|$prefix/bin|g" scripts/install/soundfit.service.in > "$root/lib/systemd/user/soundfit.service"
chmod 0644 "$root/share/man/man1/soundfit.1" "$root/share/bash-completion/completions/soundfit" \
    "$root/share/zsh/site-functions/_soundfit" "$root/share/fish/vendor_completions.d/soundfit.fish" \
    "$root/lib/systemd/user/soundfit.service"

echo "installed soundfit $("$root/bin/soundfit" --version | sed 's/^soundfit //') into $root"
