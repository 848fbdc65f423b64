#!/usr/bin/env python3
"""Every public function that takes a World checks the calling thread first.

Reads the World's public headers (engine/include/gyre/*.h), finds each declared function with a
`gy_world *` parameter, finds its definition in engine/src/*.c and requires that the body calls
gy_w_enter or gy_w_enter_read (the owner check) before anything else touches the World. The few
functions that are meant for any thread are listed below with the reason. Prints one line per
function that fails and exits 1, so a new entry point without the check cannot land unnoticed.
"""
import pathlib
import re
import sys

# Any thread by design: creation (no World yet), the lock (how other threads get access; it
# checks the caller's holds itself) and claiming an unowned World.
ANY_THREAD = {
    "gy_world_create": "makes the World; the creating thread becomes its owner",
    "gy_world_lock_read": "how a tool thread gets access",
    "gy_world_unlock_read": "checks the caller holds the read side",
    "gy_world_lock_write": "how a tool thread gets access",
    "gy_world_unlock_write": "checks the caller holds the write side",
    "gy_world_take_ownership": "claims a World that nobody owns",
}

DECL = re.compile(r"^[A-Za-z_][\w \*]*?\b(gy_\w+)\s*\(([^;{]*)\)\s*;", re.M | re.S)
DEF = r"^[A-Za-z_][\w \*]*?\b{name}\s*\([^;{{]*\)\s*\{{"


def main():
    root = pathlib.Path(sys.argv[1])
    headers = sorted((root / "engine" / "include" / "gyre").glob("*.h"))
    sources = {p: p.read_text() for p in sorted((root / "engine" / "src").glob("*.c"))}
    names = []
    for h in headers:
        text = re.sub(r"/\*.*?\*/", "", h.read_text(), flags=re.S)
        for m in DECL.finditer(text):
            if "gy_world *" in m.group(2) or "gy_world*" in m.group(2):
                names.append(m.group(1))
    failures = 0
    checked = 0
    for name in names:
        if name in ANY_THREAD:
            continue
        body = None
        for src, text in sources.items():
            m = re.search(DEF.format(name=re.escape(name)), text, re.M | re.S)
            if m is None:
                continue
            depth, i = 1, m.end()
            while depth > 0 and i < len(text):
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            body = text[m.end():i]
            break
        if body is None:
            print(f"not ok - {name}: declared with a World but not defined in engine/src")
            failures += 1
            continue
        checked += 1
        if not re.search(r"\bgy_w_enter(_read)?\s*\(", body):
            print(f"not ok - {name}: does not start with gy_w_enter / gy_w_enter_read")
            failures += 1
    print(f"{checked} World entry points checked, {len(ANY_THREAD)} any-thread, {failures} missing")
    if checked == 0:
        print("not ok - no World entry points found (the header scan is broken)")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
