"""What the command-line test scripts share: the failure type, check(), and the runner that prints
cmocka's result lines, so .ci/summarize.py counts these tests as it counts the C suites."""
import json
import os
import subprocess
import time


class Failure(Exception):
    """A check that did not hold."""


def check(cond, message):
    if not cond:
        raise Failure(message)


def wait_for(cond, what, timeout=60.0):
    """Polls `cond` until it holds; fails after `timeout` seconds (generous: sanitizer builds on a
    loaded machine). What a test waits for is a condition, never a fixed sleep."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.01)
    raise Failure(f"timed out waiting for {what}")


def threads(pid):
    """How many threads process `pid` runs (0 once it is gone)."""
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


# What a failing case raises: a check, a bad report, a missing key or file, a hung child.
EXPECTED = (Failure, json.JSONDecodeError, OSError, KeyError, StopIteration,
            subprocess.TimeoutExpired)


def run_cases(cases):
    """Runs (name, function) pairs in order; returns the exit code (0 all passed, 1 otherwise)."""
    print(f"[==========] Running {len(cases)} test(s).", flush=True)
    failed = []
    for name, fn in cases:
        print(f"[ RUN      ] {name}", flush=True)
        t0 = time.monotonic()
        try:
            fn()
            print(f"[       OK ] {name} ({time.monotonic() - t0:.2f} s)", flush=True)
        except EXPECTED as e:
            print(f"{name}: {type(e).__name__}: {e}", flush=True)
            print(f"[  FAILED  ] {name}", flush=True)
            failed.append(name)
    print(f"[==========] {len(cases)} test(s) run.")
    print(f"[  PASSED  ] {len(cases) - len(failed)} test(s).")
    if failed:
        print(f"[  FAILED  ] {len(failed)} test(s), listed below:")
        for name in failed:
            print(f"[  FAILED  ] {name}")
    print(f"{len(cases) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0
