#!/usr/bin/env python3
"""Mutation testing for Gyre: applies each mutant in mutants.txt to a scratch copy of the tree,
builds it incrementally, runs the test suite (every adapter's suites, the valgrind suite left out)
and reports which mutants the suite killed, with the tests that failed, and the score.

    nice -n 10 python3 tests/mutation/run.py                 # every mutant
    python3 tests/mutation/run.py combine-min-multiply ...   # only these
    python3 tests/mutation/run.py --list                     # the list, nothing run

The scratch copy (default /tmp/gyre-mutation) holds the working tree's tracked and untracked
files (build folders left out) and one build folder reused across mutants: each mutant rewrites
one source file, rebuilds what depends on it, runs the tests and restores the file. A mutant the
compiler rejects is reported as such and left out of the score. The run stops at the first failing
test unless --all-killers is given. Exit status: 0 when the score reaches --min-score (default
95), 1 otherwise, 2 when the unmutated tree does not build or pass.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
KEYS = {"module", "file", "find", "replace", "occurrence", "equivalent", "why"}


def parse_mutants(path):
    """Reads mutants.txt: `[id]` sections of `key = value` lines. In values, \\n is a newline,
    \\t a tab and \\\\ a backslash. `find` must occur exactly once in `file` unless
    `occurrence = N` (1-based) picks one."""
    mutants, cur = [], None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            s = line.rstrip("\n")
            if not s.strip() or s.lstrip().startswith("#"):
                continue
            if s.startswith("[") and s.endswith("]"):
                cur = {"id": s[1:-1], "line": n}
                mutants.append(cur)
                continue
            if cur is None or " = " not in s:
                sys.exit(f"{path}:{n}: expected '[id]' or 'key = value'")
            key, value = s.split(" = ", 1)
            key = key.strip()
            if key not in KEYS:
                sys.exit(f"{path}:{n}: unknown key '{key}'")
            cur[key] = unescape(value)
    ids = set()
    for m in mutants:
        for k in ("module", "file", "find", "replace"):
            if k not in m:
                sys.exit(f"{path}:{m['line']}: mutant {m['id']} has no '{k}'")
        if m["id"] in ids:
            sys.exit(f"{path}:{m['line']}: mutant id {m['id']} used twice")
        ids.add(m["id"])
    return mutants


def unescape(v):
    out, i = [], 0
    while i < len(v):
        c = v[i]
        if c == "\\" and i + 1 < len(v):
            out.append({"n": "\n", "t": "\t", "\\": "\\"}.get(v[i + 1], "\\" + v[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def mutate(text, m):
    """The mutated text, or raises ValueError when the spec does not match exactly."""
    count = text.count(m["find"])
    occ = int(m.get("occurrence", "0"))
    if occ == 0 and count != 1:
        raise ValueError(f"'find' occurs {count} times in {m['file']} (must be once)")
    if occ > count:
        raise ValueError(f"occurrence {occ} of 'find', but it occurs {count} times")
    at = -1
    for _ in range(max(occ, 1)):
        at = text.index(m["find"], at + 1)
    return text[:at] + m["replace"] + text[at + len(m["find"]):]


def sync_tree(scratch):
    """Copies the working tree's files into scratch, rewriting only files that differ (so the
    scratch build stays incremental) and deleting files no longer in the tree."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                           check=True, capture_output=True).stdout.decode().split("\0")
    files = {f for f in files if f and os.path.isfile(os.path.join(ROOT, f))}
    for f in files:
        src, dst = os.path.join(ROOT, f), os.path.join(scratch, f)
        with open(src, "rb") as a:
            data = a.read()
        if os.path.exists(dst):
            with open(dst, "rb") as b:
                if b.read() == data:
                    continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "wb") as b:
            b.write(data)
        shutil.copymode(src, dst)
    for dirpath, dirnames, filenames in os.walk(scratch):
        rel = os.path.relpath(dirpath, scratch)
        if rel == "build" or rel.startswith("build" + os.sep):
            dirnames[:] = []
            continue
        for fn in filenames:
            r = os.path.normpath(os.path.join(rel, fn))
            if r not in files:
                os.remove(os.path.join(dirpath, fn))


def build(scratch, log):
    bdir = os.path.join(scratch, "build")
    if not os.path.exists(os.path.join(bdir, "build.ninja")):
        r = subprocess.run(["meson", "setup", bdir, "-Dbench=false"], cwd=scratch,
                           stdout=log, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            return False
    return subprocess.run(["ninja", "-C", bdir], cwd=scratch, stdout=log,
                          stderr=subprocess.STDOUT).returncode == 0


def run_tests(scratch, args, log):
    """Runs the suite; returns the names of the tests that did not pass."""
    bdir = os.path.join(scratch, "build")
    cmd = ["meson", "test", "-C", bdir, "--no-rebuild", "--print-errorlogs",
           "--no-suite", "valgrind", "--num-processes", str(args.jobs),
           "--timeout-multiplier", str(args.timeout_multiplier)]
    if not args.all_killers:
        cmd += ["--maxfail", "1"]
    subprocess.run(cmd, cwd=scratch, stdout=log, stderr=subprocess.STDOUT)
    failed = []
    path = os.path.join(bdir, "meson-logs", "testlog.json")
    with open(path, encoding="utf-8") as f:
        for line in f:
            t = json.loads(line)
            # INTERRUPT: stopped by --maxfail after another test failed, not a verdict.
            if t.get("result") not in ("OK", "SKIP", "EXPECTEDFAIL", "INTERRUPT"):
                failed.append(t["name"])
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ids", nargs="*", help="run only these mutants")
    ap.add_argument("--mutants", default=os.path.join(HERE, "mutants.txt"))
    ap.add_argument("--scratch", default="/tmp/gyre-mutation")
    ap.add_argument("--jobs", type=int, default=2, help="tests run at once (default 2)")
    ap.add_argument("--timeout-multiplier", type=float, default=0.2,
                    help="of each test's meson timeout (300 s): a hung mutant counts as killed")
    ap.add_argument("--all-killers", action="store_true",
                    help="run the whole suite for each mutant, listing every test that fails")
    ap.add_argument("--min-score", type=float, default=95.0)
    ap.add_argument("--report", help="also write the results as JSON here")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    args = ap.parse_args()

    mutants = parse_mutants(args.mutants)
    if args.ids:
        unknown = set(args.ids) - {m["id"] for m in mutants}
        if unknown:
            sys.exit("unknown mutant(s): " + ", ".join(sorted(unknown)))
        mutants = [m for m in mutants if m["id"] in args.ids]
    for m in mutants:  # every spec must still match the tree before anything runs
        with open(os.path.join(ROOT, m["file"]), encoding="utf-8") as f:
            try:
                mutate(f.read(), m)
            except ValueError as e:
                sys.exit(f"mutant {m['id']}: {e}")
    if args.list:
        for m in mutants:
            eq = "  (equivalent)" if "equivalent" in m else ""
            print(f"{m['id']:40} {m['module']:22} {m['file']}{eq}")
        return 0

    os.makedirs(args.scratch, exist_ok=True)
    sync_tree(args.scratch)
    logpath = os.path.join(args.scratch, "mutation.log")
    log = open(logpath, "w", encoding="utf-8")
    print(f"scratch: {args.scratch} (log: {logpath})")
    t0 = time.time()
    log.write("== baseline\n")
    log.flush()
    if not build(args.scratch, log):
        print("the unmutated tree does not build; see the log")
        return 2
    failed = run_tests(args.scratch, args, log)
    if failed:
        print("the unmutated tree fails: " + ", ".join(failed))
        return 2
    print(f"baseline: builds and passes ({time.time() - t0:.0f} s)")

    results = []
    for i, m in enumerate(mutants, 1):
        path = os.path.join(args.scratch, m["file"])
        with open(path, encoding="utf-8") as f:
            original = f.read()
        t1 = time.time()
        log.write(f"== {m['id']}\n")
        log.flush()
        with open(path, "w", encoding="utf-8") as f:
            f.write(mutate(original, m))
        try:
            if not build(args.scratch, log):
                status, killers = "stillborn", []
            else:
                killers = run_tests(args.scratch, args, log)
                status = "killed" if killers else "survived"
        finally:
            with open(path, "w", encoding="utf-8") as f:
                f.write(original)
        r = {"id": m["id"], "module": m["module"], "file": m["file"], "status": status,
             "killers": killers, "equivalent": "equivalent" in m,
             "seconds": round(time.time() - t1, 1)}
        results.append(r)
        note = " (listed as equivalent)" if r["equivalent"] else ""
        print(f"[{i:2}/{len(mutants)}] {m['id']:40} {status:9} {r['seconds']:5.0f} s  "
              f"{', '.join(killers)}{note}", flush=True)
    # Leave the scratch build matching the tree for the next run.
    build(args.scratch, log)

    scored = [r for r in results if r["status"] != "stillborn" and not r["equivalent"]]
    killed = [r for r in scored if r["status"] == "killed"]
    score = 100.0 * len(killed) / len(scored) if scored else 100.0
    print()
    for r in results:
        if r["status"] == "survived" and not r["equivalent"]:
            print(f"SURVIVED: {r['id']} ({r['module']}, {r['file']})")
        if r["status"] == "stillborn":
            print(f"does not compile: {r['id']} ({r['file']})")
    eq = [r for r in results if r["equivalent"]]
    print(f"score: {len(killed)}/{len(scored)} non-equivalent mutants killed ({score:.1f} %); "
          f"{len(eq)} equivalent, "
          f"{sum(r['status'] == 'stillborn' for r in results)} do not compile; "
          f"{time.time() - t0:.0f} s")
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump({"score": score, "killed": len(killed), "scored": len(scored),
                       "results": results}, f, indent=1)
    return 0 if score >= args.min_score else 1


if __name__ == "__main__":
    sys.exit(main())
