#!/usr/bin/env python3
"""Interrupts and files (docs/cli.md): SIGINT and SIGTERM end `gyre run --realtime` and
`gyre soak` early with complete files (the report says "interrupted": true) and exit 130 / 143;
every output file is written under a temporary name and renamed when complete, so a command that
fails leaves an older file of that name untouched and no temporary behind; `--strict` makes a run
that ended before an expect fail. Run by meson:

    test_signals.py GYRE SCENES_DIR

Each interrupt is sent once the command has started its physics thread (a second thread in
/proc/PID/task) and, for `run`, once its temporary trace holds rows: conditions waited for with a
timeout, never a fixed sleep. Prints cmocka-style lines."""
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cases import Failure, check, run_cases, threads, wait_for

GYRE, SCENES = sys.argv[1], Path(sys.argv[2])
TMP = Path(tempfile.mkdtemp(prefix="gyre-signals-"))
SCENE = SCENES / "restitution.json"  # expects from 0.6 s on
WAIT_S = 60.0  # generous: sanitizer builds on a loaded machine


def temporaries_written():
    return any(f.stat().st_size > 0 for f in TMP.iterdir() if ".tmp-" in f.name)


def interrupt(args, sig, outputs, started=None):
    """Starts `gyre ARGS`, sends `sig` once its physics thread runs (and `started()` holds);
    returns (exit code, stderr, seconds from the signal to the exit)."""
    for f in outputs:
        if f.exists():
            f.unlink()
    err = tempfile.TemporaryFile()
    p = subprocess.Popen([GYRE, *map(str, args)], stdout=subprocess.DEVNULL, stderr=err)
    try:
        wait_for(lambda: threads(p.pid) >= 2 or p.poll() is not None, "the physics thread")
        if started is not None:
            wait_for(lambda: started() or p.poll() is not None, "the first output")
        check(p.poll() is None, f"exited before the signal (exit {p.returncode})")
        t0 = time.monotonic()
        p.send_signal(sig)
        code = p.wait(timeout=WAIT_S)
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    err.seek(0)
    return code, err.read().decode(), took


def no_temporaries():
    left = [f.name for f in TMP.iterdir() if ".tmp-" in f.name]
    check(not left, f"temporary files left behind: {left}")


def check_run_files(report, events, trace):
    r = json.loads(report.read_text())
    check(r.get("interrupted") is True, f"report without \"interrupted\": true: {list(r)}")
    check(r["mode"] == "realtime", f"mode {r['mode']}")
    check(0 < r["ticks"] < 60 * 30, f"ticks {r['ticks']}: not stopped early")
    lines = events.read_text().splitlines()
    for i, line in enumerate(lines):
        json.loads(line)  # each line whole
    rows = trace.read_text().splitlines()
    check(rows[0] == "tick,t,entity,x,y,z,qx,qy,qz,qw,vx,vy,vz", "trace header")
    check(len(rows) > 1, "no trace rows")
    for row in rows[1:]:
        check(len(row.split(",")) == 13, f"truncated trace row: {row!r}")
    check(trace.read_text().endswith("\n"), "trace does not end with a whole row")
    return r


def run_interrupted(sig, code_expected):
    report, events, trace = TMP / "report.json", TMP / "events.jsonl", TMP / "trace.csv"
    code, err, took = interrupt(["run", SCENE, "--realtime", "--seconds", "30", "--quiet",
                                 "--report", report, "--events", events, "--trace", trace],
                                sig, [report, events, trace], started=temporaries_written)
    check(code == code_expected, f"exit {code}, expected {code_expected}; stderr:\n{err}")
    check("interrupted" in err, f"no interrupt message; stderr:\n{err}")
    check_run_files(report, events, trace)
    no_temporaries()
    print(f"    stopped {took:.3f} s after the signal", flush=True)


def test_signals_run_sigint():
    run_interrupted(signal.SIGINT, 130)


def test_signals_run_sigterm():
    run_interrupted(signal.SIGTERM, 143)


def test_signals_soak_sigint_and_sigterm():
    report = TMP / "soak.json"
    for sig, expected in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        code, err, took = interrupt(
            ["soak", SCENES / "soak.json", "--seconds", "60", "--statics", "500", "--props", "20",
             "--warmup", "0.2", "--quiet", "--watchdog-ms", "5000", "--report", report],
            sig, [report])
        check(code == expected, f"exit {code}, expected {expected}; stderr:\n{err}")
        r = json.loads(report.read_text())
        check(r.get("interrupted") is True, f"soak report without \"interrupted\": true")
        check(r["wall_seconds"] < 60, f"wall_seconds {r['wall_seconds']}: not stopped early")
        no_temporaries()
        print(f"    soak stopped {took:.3f} s after {sig.name}", flush=True)


def test_signals_failed_run_keeps_the_older_file():
    report = TMP / "kept.json"
    report.write_text("older\n")
    p = subprocess.run([GYRE, "run", TMP / "missing.json", "--report", report],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=WAIT_S)
    check(p.returncode == 2, f"exit {p.returncode}")
    check(report.read_text() == "older\n", "the older report was overwritten or truncated")
    no_temporaries()
    # A run that completes replaces it with a whole report.
    p = subprocess.run([GYRE, "run", SCENE, "--seconds", "0.1", "--quiet", "--report", report],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=WAIT_S)
    check(p.returncode == 0, f"exit {p.returncode}: {p.stderr.decode()}")
    r = json.loads(report.read_text())
    check("interrupted" not in r, "an uninterrupted report says interrupted")
    no_temporaries()


def test_signals_strict_fails_a_run_that_ended_early():
    # The scene's expects come at 0.6 s and later: a 0.3 s run reaches none of them.
    args = [GYRE, "run", SCENE, "--seconds", "0.3"]
    p = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=WAIT_S)
    err = p.stderr.decode()
    check(p.returncode == 0, f"without --strict: exit {p.returncode}")
    check("not reached" in err, f"no 'not reached' notes:\n{err}")
    p = subprocess.run(args + ["--strict"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=WAIT_S)
    check(p.returncode == 1, f"with --strict: exit {p.returncode}")
    check("--strict" in p.stderr.decode(), "no --strict message")
    # A run that reaches every expect passes with --strict too.
    p = subprocess.run(args[:3] + ["--seconds", "3", "--strict", "--quiet"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=WAIT_S)
    check(p.returncode == 0, f"a complete run with --strict: exit {p.returncode}")


if __name__ == "__main__":
    sys.exit(run_cases([(n, f) for n, f in list(globals().items()) if n.startswith("test_")]))
