#!/bin/sh
# Installs the build into a temporary root, builds docs/examples/host_example.c against the
# installed copy with nothing but `pkg-config --cflags --libs gyre`, and runs it.
#   test_install_example.sh BUILD_DIR EXAMPLE.c CC [CC ARGS...]
set -eu
build=$1
example=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
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
