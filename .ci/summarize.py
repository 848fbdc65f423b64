#!/usr/bin/env python3
"""Prints each test's cmocka summary lines from a meson build's testlog.json, then one
'tests: N passed, N failed' line. Exits 1 when any test failed or none ran."""
import json
import sys
from pathlib import Path

build = Path(sys.argv[1])
log = build / "meson-logs" / "testlog.json"
if not log.exists():
    print(f"{build}: no test log", file=sys.stderr)
    sys.exit(1)
passed = failed = 0
for line in log.read_text().splitlines():
    if not line.strip():
        continue
    t = json.loads(line)
    ok = t.get("result") in ("OK", "EXPECTEDFAIL", "SKIP")
    out = t.get("stdout") or ""
    summary = [l for l in out.splitlines() if l.startswith("[  PASSED  ]") or
               l.startswith("[  FAILED  ]") or l.startswith("[==========]")]
    print(f"{build.name}/{t['name']}: {t.get('result')} ({t.get('duration', 0):.1f} s)")
    for l in summary:
        print("    " + l)
    if ok:
        passed += 1
    else:
        failed += 1
print(f"tests: {passed} passed, {failed} failed")
sys.exit(0 if failed == 0 and passed > 0 else 1)
