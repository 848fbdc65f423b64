#!/bin/sh
# What a host project meets when it takes Gyre from outside the source tree:
#   1. the installed gyre.pc hands out Gyre's include folder and nothing else as Cflags;
#   2. every installed header compiles alone, as C11 and as C++17, under gcc and clang with
#      -Wpedantic -Werror (a compiler that is not installed is named and left out), each
#      audience's folder (gyre/, gyre/physics/, gyre/backend/) holds headers, no private header
#      is installed, gyre/gyre.h reaches only World-host headers, and docs/embedding.md's
#      table of headers and public functions per audience matches what was installed;
#   3. a Meson project that takes Gyre as a subproject (`dependency('gyre')`) builds the host
#      example against a shared libgyre and runs it.
#   test_packaging.sh BUILD_DIR SOURCE_DIR EXAMPLE.c
set -eu
build=$1
src=$2
example=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/root" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; exit 1; }
pc=$(find "$tmp/root" -name gyre.pc | head -n 1)
[ -n "$pc" ] || { echo "gyre.pc was not installed"; exit 1; }
PKG_CONFIG_PATH=$(dirname "$pc")
PKG_CONFIG_SYSROOT_DIR="$tmp/root"
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
cflags=$(echo $(pkg-config --cflags gyre))
incdir=$(find "$tmp/root" -type d -name gyre -path '*/include/gyre' | head -n 1)
incdir=$(dirname "$incdir")
if [ "$cflags" != "-I$incdir" ]; then
    echo "pkg-config --cflags gyre gives '$cflags'; expected only '-I$incdir'"
    exit 1
fi
echo "ok: pkg-config --cflags gyre is '$cflags'"

failed=0
headers=$(cd "$incdir" && find gyre -name '*.h' | sort)
for compiler in gcc:c:c11 clang:c:c11 g++:c++:c++17 clang++:c++:c++17; do
    cc=${compiler%%:*}
    rest=${compiler#*:}
    lang=${rest%%:*}
    std=${rest#*:}
    if ! command -v "$cc" >/dev/null 2>&1; then
        echo "note: $cc is not installed; headers not checked with it"
        continue
    fi
    for h in $headers; do
        if ! printf '#include <%s>\n' "$h" |
            "$cc" -x "$lang" -std="$std" -Wall -Wextra -Wpedantic -Werror -fsyntax-only \
                $cflags - 2>"$tmp/err"; then
            echo "FAIL: <$h> under $cc -std=$std -Wpedantic -Werror:"
            cat "$tmp/err"
            failed=1
        fi
    done
    echo "ok: $(echo "$headers" | wc -l) installed headers compile under $cc -std=$std -Wpedantic"
done
[ "$failed" = 0 ] || exit 1
for audience in gyre gyre/physics gyre/backend; do
    n=$(find "$incdir/$audience" -maxdepth 1 -name '*.h' | wc -l)
    [ "$n" -gt 0 ] || { echo "FAIL: no header installed in $audience/"; exit 1; }
    echo "ok: $n headers in $audience/"
done
python3 "$src/tests/engine/count_public.py" "$incdir" --check "$src/docs/embedding.md"

# The subproject: a host project of two files with Gyre's tree as subprojects/gyre, taken from
# there even where an installed gyre.pc is visible.
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
mkdir -p "$tmp/host/subprojects"
ln -s "$(cd "$src" && pwd)" "$tmp/host/subprojects/gyre"
cp "$example" "$tmp/host/host.c"
cat >"$tmp/host/meson.build" <<'MESON'
project('host', 'c', default_options: ['c_std=c11'])
executable('host', 'host.c', dependencies: dependency('gyre'))
MESON
meson setup "$tmp/host/build" "$tmp/host" --force-fallback-for=gyre -Dgyre:default_library=shared -Dgyre:tests=false \
    -Dgyre:bench=false -Dgyre:fuzz=false >"$tmp/setup.log" 2>&1 ||
    { cat "$tmp/setup.log"; exit 1; }
meson compile -C "$tmp/host/build" host >"$tmp/compile.log" 2>&1 ||
    { tail -n 40 "$tmp/compile.log"; exit 1; }
lib=$(find "$tmp/host/build" -name "libgyre.so*" | head -n 1)
[ -n "$lib" ] || { echo "the subproject did not build a shared libgyre"; exit 1; }
"$tmp/host/build/host"
echo "ok: the host example built with Gyre as a subproject (shared libgyre) and ran"
