#!/usr/bin/env python3
"""End-to-end tests of `gyre soak` (docs/cli.md): a short real-time soak with its report, a hard
stop/start soak, the gates and the watchdog, and usage errors. Run by meson:

    test_soak.py GYRE SCENES_DIR

Prints cmocka-style lines ([ RUN      ], [       OK ], [  FAILED  ] and the [==========] /
[  PASSED  ] summary that .ci/summarize.py collects); exits 1 when any case failed. The soaks
are small (2,000 statics, 100 props, a few seconds) so the whole file stays well under 20 s,
also under the sanitizers. The counts a case checks are asked of the soak with --min-samples: a
loaded machine (ThreadSanitizer among other jobs) can starve the physics thread for most of a
few seconds, and the soak then measures on until it has them instead of the case failing on a
slow machine."""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from cases import Failure, check, run_cases

GYRE, SCENES = sys.argv[1], Path(sys.argv[2])
TMP = Path(tempfile.mkdtemp(prefix="gyre-soak-"))
BASE = SCENES / "soak.json"
# A generous watchdog: it is there to catch a hang, not a slow machine. Under TSan on the shared
# 2-core machine at load 12-15 a batch was seen waiting 5.3 s for the physics thread (which had
# passed 62 safe points in all), so 30 s; the watchdog test sets its own bound after these.
SMALL = ["--statics", "2000", "--props", "100", "--warmup", "0.5", "--quiet",
         "--watchdog-ms", "30000"]

DIST_KEYS = ["p50", "p99", "p999", "max", "count"]
REQUIRED = ["barrier_wait_us", "mutation_us", "step_ms", "ticks_missed", "replies_dropped",
            "rss_start_mb", "rss_end_mb", "live_objects_at_exit"]


def soak(*args, timeout=240):
    """Runs `gyre soak`; returns (exit code, stderr, report or None)."""
    report = TMP / "report.json"
    if report.exists():
        report.unlink()
    with tempfile.TemporaryFile() as err:
        p = subprocess.run([GYRE, "soak", *map(str, args)], stdout=subprocess.DEVNULL,
                           stderr=err, timeout=timeout)
        err.seek(0)
        text = err.read().decode()
    data = json.loads(report.read_text()) if report.exists() else None
    return p.returncode, text, data


def check_dist(r, key):
    d = r[key]
    check(list(d.keys()) == DIST_KEYS, f"{key} keys {list(d.keys())}")
    check(d["p50"] <= d["p99"] <= d["p999"] <= d["max"], f"{key} not ordered: {d}")
    return d


def test_soak_barrier_report():
    code, err, r = soak(BASE, *SMALL, "--seconds", "3", "--cells", "32", "--min-samples", "60",
                        "--report", TMP / "report.json")
    check(code == 0, f"exit {code}; stderr:\n{err}")
    check(r is not None, "no report written")
    for k in REQUIRED:
        check(k in r, f"report lacks {k}")
    check(r["mode"] == "barrier", f"mode {r['mode']}")
    wait = check_dist(r, "barrier_wait_us")
    window = check_dist(r, "mutation_us")
    step = check_dist(r, "step_ms")
    # 32 cells/s for 3 s, about one cell per window: dozens of windows, each timed.
    check(r["cells_swapped"] >= 48, f"only {r['cells_swapped']} cells swapped")
    check(r["windows"] >= 60 and r["config"]["min_samples"] == 60, "--min-samples not met")
    check(wait["count"] == r["windows"] == window["count"], "one wait and window per swap")
    check(step["count"] >= 60, f"only {step['count']} physics iterations sampled")
    check(window["p50"] > 0, "a mutation window that creates bodies takes time")
    # 2,000 statics over a 4 x 4 window: the resident props stay awake (allow_sleeping false).
    check(r["config"]["window_cells"] == 16, f"window {r['config']['window_cells']}")
    check(r["awake_min"] == 100, f"awake_min {r['awake_min']}, expected the 100 props")
    check(r["replies_dropped"] == 0, f"{r['replies_dropped']} replies dropped")
    check(r["live_objects_at_exit"] == 0, f"{r['live_objects_at_exit']} objects leaked")
    check(r["allocator_bytes_at_exit"] == 0, f"{r['allocator_bytes_at_exit']} bytes leaked")
    check(r["rss_start_mb"] > 0 and r["rss_end_mb"] > 0, "RSS not measured")
    check(r["commands"] > 0 and r["replies"] > 0, "no commands or replies counted")
    check(r["passed"] is True and r["watchdog"]["reports"] == 0, "run not passed")


def test_soak_hard_swaps_stop_and_start():
    code, err, r = soak(BASE, *SMALL, "--seconds", "2", "--cells", "8", "--hard",
                        "--min-samples", "3", "--report", TMP / "report.json")
    check(code == 0, f"exit {code}; stderr:\n{err}")
    check(r["mode"] == "hard", f"mode {r['mode']}")
    check(r["windows"] >= 3, f"only {r['windows']} hard swaps")
    check(r["live_objects_at_exit"] == 0, "leak after hard swaps")
    # A hard swap rebuilds the whole world; a barrier window only adds and removes one cell.
    check(r["swap_us"]["p50"] > 1000, f"hard swap p50 {r['swap_us']['p50']} us: too fast to be "
          "a stop/start")


def test_soak_min_samples_measures_on_past_seconds():
    # 8 cells/s for 1 s is about 8 windows: 16 are asked for, so the soak measures on (for at
    # most 20 s) until it has 16 windows and iterations, and its report covers the time it took.
    code, err, r = soak(BASE, *SMALL, "--seconds", "1", "--cells", "8", "--min-samples", "16",
                        "--report", TMP / "report.json")
    check(code == 0, f"exit {code}; stderr:\n{err}")
    check(r["windows"] >= 16 and r["step_ms"]["count"] >= 16 and r["awake_min"] is not None,
          f"{r['windows']} windows, {r['step_ms']['count']} iterations, awake_min "
          f"{r['awake_min']}: fewer than 16")
    check(r["measured_seconds"] > 1.0, f"measured {r['measured_seconds']} s, not past --seconds")
    check(r["seconds"] == 1, f"seconds {r['seconds']}")


def test_soak_gate_fails_with_exit_1():
    code, err, r = soak(BASE, *SMALL, "--seconds", "1", "--min-samples", "1",
                        "--max-barrier-p99-us", "0",
                        "--max-replies-dropped", "0", "--report", TMP / "report.json")
    check(code == 1, f"exit {code}, expected 1; stderr:\n{err}")
    gates = {g["gate"]: g for g in r["gates"]}
    check(gates["max-barrier-p99-us"]["passed"] is False, "barrier gate passed at 0 us")
    check(gates["max-replies-dropped"]["passed"] is True, "replies gate failed")
    check(r["passed"] is False, "report says passed")


def test_soak_watchdog_fails_the_run():
    # A 1 us bound: the command batch the World just published is still waiting for the physics
    # thread's next tick when the game thread polls, so the watchdog trips at once; the run stops
    # with exit 1 and both threads' state in the message.
    code, err, r = soak(BASE, *SMALL, "--seconds", "10", "--watchdog-ms", "0.001",
                        "--report", TMP / "report.json")
    check(code == 1, f"exit {code}, expected 1; stderr:\n{err}")
    check("watchdog" in err and "game thread" in err and "physics thread" in err,
          f"no watchdog report with both threads' state:\n{err}")
    check(r["watchdog"]["reports"] >= 1 and r["watchdog"]["failure"], "report lacks the failure")
    check(r["live_objects_at_exit"] == 0, "leak after a failed run")


def test_soak_usage_errors():
    for args in [[], ["--seconds", "5"], [BASE, "--cells", "-1"], [BASE, "--statics", "x"],
                 [BASE, "--bogus"], [BASE, "--max-barrier-p99-us"], [BASE, BASE],
                 [BASE, "--min-samples", "x"], [BASE, "--min-samples", "-1"],
                 [BASE, "--statics", "0", "--props", "0"], [BASE, "--backend", "nope"],
                 [TMP / "missing.json"]]:
        code, err, _ = soak(*args)
        check(code == 2, f"gyre soak {' '.join(map(str, args))}: exit {code}, expected 2")
        check(err.strip() != "", f"gyre soak {args}: no message")
    code, _, _ = soak("--help")
    check(code == 0, "--help exit")


def test_soak_invalid_scene_exits_2():
    bad = TMP / "bad.json"
    bad.write_text('{"format": "gyre.scene", "version": 1, "entities": [{"name": 3}]}')
    code, err, _ = soak(bad, "--seconds", "1")
    check(code == 2, f"exit {code}")
    check(str(bad) in err, f"error does not name the file:\n{err}")


CASES = [test_soak_barrier_report, test_soak_hard_swaps_stop_and_start,
         test_soak_min_samples_measures_on_past_seconds,
         test_soak_gate_fails_with_exit_1, test_soak_watchdog_fails_the_run,
         test_soak_usage_errors, test_soak_invalid_scene_exits_2]


def main():
    return run_cases([(case.__name__, case) for case in CASES])


if __name__ == "__main__":
    sys.exit(main())
