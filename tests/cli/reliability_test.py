#!/usr/bin/env python3
"""Reliability checks of the `gyre` command line (docs/reliability.md), one meson test per group:

    reliability_test.py GROUP GYRE SCENES_DIR DATA_DIR [BACKENDS]

cli_runaway   scenes that blow up by themselves (no bad input): on every adapter compiled in, the
              run must end with exit code 1 naming the entity, never abort, and leave nothing live.
cli_valgrind  every sample scene through `gyre run` under valgrind memcheck on every adapter: no
              memcheck error, no definite or indirect leak. Each scene runs just long enough to
              play its whole script (its last action's `at`, rounded up, at least 1 s; 8 s cap),
              two runs at a time (VALGRIND_JOBS), so the set takes about a minute per adapter on
              two cores. Valgrind's own error exit code is 99 so that it cannot be mistaken for
              gyre's exit code 1 (a failed check or a runtime fault). Skipped (exit 77) when
              gyre is built with a sanitizer.

Prints cmocka-style lines ([ RUN      ], [       OK ], [  FAILED  ], and the [==========] /
[  PASSED  ] summary .ci/summarize.py collects); exits 1 when any case failed."""
import concurrent.futures
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cases import Failure, check, run_cases

GROUP, GYRE, SCENES, DATA = sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
BACKENDS = sys.argv[5].split(",") if len(sys.argv) > 5 and sys.argv[5] else ["ode"]

VALGRIND_ERROR_EXIT = 99
VALGRIND_MAX_SECONDS = 8.0


def run(cmd, timeout):
    """Runs cmd; returns (exit code, stderr). A process killed by a signal gives a negative code."""
    try:
        p = subprocess.run([str(c) for c in cmd], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failure(f"{' '.join(map(str, cmd))}: timed out after {timeout} s")
    return p.returncode, p.stderr.decode(errors="replace")


# ---- runaway simulations --------------------------------------------------------------------- #

# scene file in DATA, the entity that must be named, the seconds to run.
RUNAWAYS = [
    # A hinged pendulum under a gravity factor of 1e14: the joint holds it, but its speed passes
    # GY_PHYSICS_MAX_MAGNITUDE (1e12 m/s) within the first step, long before anything overflows.
    ("runaway_pendulum.json", "bob", 2),
    # A box falling on a resting one under a gravity factor of 1e20: the contact solver flings
    # them apart, the top one first.
    ("runaway_stack.json", "top", 2),
]


def runaway_cases():
    cases = []
    tmp = Path(tempfile.mkdtemp(prefix="gyre-runaway-"))
    for backend in BACKENDS:
        for scene, entity, seconds in RUNAWAYS:
            def case(scene=scene, entity=entity, seconds=seconds, backend=backend):
                report = tmp / f"{Path(scene).stem}-{backend}.json"
                code, err = run([GYRE, "run", DATA / scene, "--backend", backend, "--quiet",
                                 "--seconds", seconds, "--report", report], timeout=120)
                check(code == 1, f"exit {code}, expected 1 (a negative code is a signal); "
                                 f"stderr:\n{err}")
                check("runtime fault" in err and f"'{entity}'" in err,
                      f"stderr does not name '{entity}':\n{err}")
                r = json.loads(report.read_text())
                check(r["ticks"] < seconds * 60, f"the run went on to tick {r['ticks']}")
                check(r["counters"]["live_objects_at_exit"] == 0, "objects live at exit")
                for e in r["entities"]:
                    for key in ("position", "linear_velocity", "angular_velocity"):
                        check(all(math.isfinite(x) and abs(x) <= 1e12 for x in e[key]),
                              f"{e['name']}.{key} = {e[key]} published")
            cases.append((f"test_{Path(scene).stem}_exit_1_on_{backend}", case))
    return cases, lambda: shutil.rmtree(tmp, ignore_errors=True)


# ---- valgrind -------------------------------------------------------------------------------- #

def scene_seconds(path):
    script = json.loads(path.read_text()).get("script", [])
    last = max((a.get("at", 0) for a in script), default=0)
    return min(VALGRIND_MAX_SECONDS, max(1.0, math.ceil(last + 0.05)))


def valgrind_cases():
    valgrind = shutil.which("valgrind")
    scenes = sorted(SCENES.glob("*.json"))
    jobs = int(os.environ.get("VALGRIND_JOBS", "2"))
    runs = [(backend, path) for backend in BACKENDS for path in scenes]
    results = {}

    def one(backend, path):
        seconds = scene_seconds(path)
        cmd = [valgrind, "-q", f"--error-exitcode={VALGRIND_ERROR_EXIT}", "--leak-check=full",
               "--errors-for-leak-kinds=definite,indirect", GYRE, "run", path, "--backend",
               backend, "--seconds", seconds, "--quiet", "--report", os.devnull]
        t0 = time.monotonic()
        code, err = run(cmd, timeout=600)
        return code, err, seconds, time.monotonic() - t0

    if valgrind is not None:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = {pool.submit(one, b, p): (b, p) for b, p in runs}
            for f in futures:
                try:
                    results[futures[f]] = f.result()
                except Failure as e:
                    results[futures[f]] = e

    cases = []
    for backend, path in runs:
        def case(backend=backend, path=path):
            check(valgrind is not None, "valgrind is not installed")
            res = results[(backend, path)]
            if isinstance(res, Failure):
                raise res
            code, err, seconds, wall = res
            print(f"    {path.name} on {backend}: {seconds:g} s simulated, {wall:.1f} s under "
                  f"memcheck", flush=True)
            check(code != VALGRIND_ERROR_EXIT, f"memcheck reported errors or leaks:\n{err}")
            # A missed `expect` is cli_scenes' business (it runs the same scenes without
            # valgrind); here it is only reported. Anything else that is not exit 0 fails.
            lines = [l for l in err.splitlines() if l.strip()]
            missed = code == 1 and lines and all(l.startswith("gyre: expect failed:")
                                                 for l in lines)
            if missed:
                print(f"    note: {len(lines)} expect(s) missed (see cli_scenes)", flush=True)
            check(code == 0 or missed, f"gyre exit {code} under valgrind; stderr:\n{err}")
        cases.append((f"test_valgrind_{path.stem}_on_{backend}", case))
    return cases, lambda: None


GROUPS = {"cli_runaway": runaway_cases, "cli_valgrind": valgrind_cases}


def sanitized(binary):
    """True when the binary was built with a sanitizer, which cannot run under valgrind."""
    data = Path(binary).read_bytes()
    return b"__asan_init" in data or b"__tsan_init" in data


def main():
    if GROUP == "cli_valgrind" and sanitized(GYRE):
        print("gyre is built with a sanitizer; valgrind runs only on plain builds (skipped)")
        return 77
    cases, cleanup = GROUPS[GROUP]()
    try:
        return run_cases(cases)
    finally:
        cleanup()


if __name__ == "__main__":
    sys.exit(main())
