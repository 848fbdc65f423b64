#!/usr/bin/env python3
"""The public surface of an installed Gyre, per audience.

    count_public.py INCLUDE_DIR                  prints the table docs/embedding.md carries
    count_public.py INCLUDE_DIR --check DOC.md   fails unless DOC.md's table says the same, no
                                                 private header is installed and gyre/gyre.h
                                                 reaches only the World host's headers

INCLUDE_DIR holds the installed `gyre/` folder. Audiences are folders: gyre/*.h for a host using
the World, gyre/physics/ for a host driving the physics subsystem without the World, gyre/backend/
for someone writing a driver. A public function is a `gy_` function declared or defined (static
inline) at file scope in an installed header.
"""
import os
import re
import sys

AUDIENCES = [
    ("gyre/", "a host using the World"),
    ("gyre/physics/", "a host driving the physics subsystem without the World"),
    ("gyre/backend/", "someone writing a driver"),
]
# Plumbing that must never be installed: the queues, buffers, the contact tracker, the query
# snapshot's writer, the physics side of the scene barrier, the handle pool, module internals.
PRIVATE = {
    "command_queue.h", "reply_queue.h", "triple_buffer.h", "contact_events.h",
    "query_snapshot.h", "scene_barrier.h", "handle_pool.h", "concurrency.h", "bvh.h",
    "physics_internal.h", "world_internal.h", "scene_internal.h", "adapter_common.h",
}
BEGIN = "<!-- public-surface: tests/engine/count_public.py -->"
END = "<!-- /public-surface -->"

FUNC = re.compile(r"^(?:static\s+inline\s+)?(?!typedef\b|return\b)[A-Za-z_][\w \t\*]*?\b(gy_\w+)\s*\(",
                  re.M)
INCLUDE = re.compile(r'^\s*#\s*include\s+["<](gyre/[^">]+)[">]', re.M)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def at_file_scope(text):
    """The text with every brace-enclosed block blanked (struct bodies, function bodies)."""
    out, depth = [], 0
    for ch in text:
        if ch == "{":
            depth += 1
        if depth == 0 or ch == "\n":
            out.append(ch)
        if ch == "}":
            depth = max(depth - 1, 0)
    return "".join(out)


def headers(incdir):
    found = []
    for root, _, files in os.walk(os.path.join(incdir, "gyre")):
        for f in files:
            if f.endswith(".h"):
                found.append(os.path.relpath(os.path.join(root, f), incdir))
    return sorted(found)


def audience(header):
    return max((a for a, _ in AUDIENCES if header.startswith(a)), key=len)


def functions(incdir, header):
    with open(os.path.join(incdir, header), encoding="utf-8") as fh:
        text = strip_comments(fh.read())
    text = re.sub(r"^\s*#[^\n]*(\\\n[^\n]*)*", " ", text, flags=re.M)
    text = re.sub(r'extern\s+"C"\s*\{', " ", text)
    return sorted(set(FUNC.findall(at_file_scope(text))))


def reachable(incdir, start):
    seen, pending = set(), [start]
    while pending:
        h = pending.pop()
        if h in seen or not os.path.exists(os.path.join(incdir, h)):
            continue
        seen.add(h)
        with open(os.path.join(incdir, h), encoding="utf-8") as fh:
            pending.extend(INCLUDE.findall(fh.read()))
    return seen


def table(incdir):
    hs = headers(incdir)
    lines = ["| audience | installed headers | public functions |", "| --- | --- | ---: |"]
    total = 0
    for prefix, who in AUDIENCES:
        mine = [h for h in hs if audience(h) == prefix]
        n = sum(len(functions(incdir, h)) for h in mine)
        total += n
        names = ", ".join("`%s`" % h[len(prefix):] for h in mine)
        lines.append("| `%s` (%s) | %s | %d |" % (prefix, who, names, n))
    gyre_h = sorted(reachable(incdir, "gyre/gyre.h"))
    n = sum(len(functions(incdir, h)) for h in gyre_h)
    lines.append("| all | %d headers | %d |" % (len(hs), total))
    lines.append("")
    lines.append("`#include <gyre/gyre.h>` reaches %d headers declaring %d functions." % (len(gyre_h), n))
    return "\n".join(lines), gyre_h, hs


def main():
    if len(sys.argv) not in (2, 4) or (len(sys.argv) == 4 and sys.argv[2] != "--check"):
        sys.exit(__doc__)
    incdir = sys.argv[1]
    text, gyre_h, hs = table(incdir)
    if len(sys.argv) == 2:
        print(text)
        return
    failed = []
    private = [h for h in hs if os.path.basename(h) in PRIVATE]
    if private:
        failed.append("private headers installed: " + ", ".join(private))
    stray = [h for h in gyre_h if audience(h) != "gyre/" and not h.startswith("gyre/physics/")]
    stray += [h for h in gyre_h if h == "gyre/physics/commands.h"]
    if stray:
        failed.append("gyre/gyre.h reaches headers of another audience: " + ", ".join(stray))
    with open(sys.argv[3], encoding="utf-8") as fh:
        doc = fh.read()
    if BEGIN not in doc or END not in doc:
        failed.append("%s has no %s ... %s block" % (sys.argv[3], BEGIN, END))
    else:
        block = doc.split(BEGIN, 1)[1].split(END, 1)[0].strip()
        if block != text:
            failed.append("%s's public-surface table is stale; it should read:\n%s" % (sys.argv[3], text))
    for f in failed:
        print("FAIL: " + f)
    if failed:
        sys.exit(1)
    print("ok: %d installed headers; the table in %s matches; no private header installed"
          % (len(hs), sys.argv[3]))


if __name__ == "__main__":
    main()
