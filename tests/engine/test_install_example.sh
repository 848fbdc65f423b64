#!/bin/sh
# Installs the build into a temporary root, builds the host example against the installed copy
# with nothing but `pkg-config --cflags --libs gyre`, and runs it. The example is the file given
# and also the C block of DOC.md between the `host example` markers: the two must be identical,
# so the page shows exactly what is built and run.
#   test_install_example.sh BUILD_DIR EXAMPLE.c DOC.md CC [CC ARGS...]
set -eu
build=$1
example=$2
doc=$3
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk '/^<!-- host example: begin -->$/ { on = 1; next }
     /^<!-- host example: end -->$/ { on = 0 }
     on && !/^```/ { print }' "$doc" >"$tmp/from_doc.c"
if ! cmp -s "$example" "$tmp/from_doc.c"; then
    echo "the host example in $doc differs from $example:"
    diff -u "$example" "$tmp/from_doc.c" || true
    exit 1
fi
meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/root" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; exit 1; }
pc=$(find "$tmp/root" -name gyre.pc | head -n 1)
[ -n "$pc" ] || { echo "gyre.pc was not installed"; exit 1; }
# The staged root stands in for /: pkg-config prefixes the paths it prints with it.
PKG_CONFIG_PATH=$(dirname "$pc")
PKG_CONFIG_SYSROOT_DIR="$tmp/root"
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
flags=$(pkg-config --cflags --libs gyre)
echo "pkg-config --cflags --libs gyre: $flags"
"$@" -std=c11 -Wall -Wextra -Werror "$example" $flags -o "$tmp/host_example"
"$tmp/host_example"
