#!/usr/bin/env python3
"""End-to-end tests of the `gyre` command line (docs/cli.md), run by meson as one test per group:

    cli_test.py GROUP GYRE SCENES_DIR DATA_DIR [BACKENDS]

BACKENDS is the comma-separated list of adapters compiled in (meson's gyre_backends; default ode):
every sample scene runs on each of them, and `gyre conform` compares the first two.

Each group runs its cases in order and prints cmocka-style lines ([ RUN      ], [       OK ],
[  FAILED  ], and the [==========] / [  PASSED  ] summary that .ci/summarize.py collects). The exit
status is 1 when any case failed."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cases import Failure, check, run_cases

GROUP, GYRE, SCENES, DATA = sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
BACKENDS = sys.argv[5].split(",") if len(sys.argv) > 5 and sys.argv[5] else ["ode"]
TMP = Path(tempfile.mkdtemp(prefix="gyre-cli-"))

REPORT_KEYS = ["gyre_version", "scene", "backend", "mode", "ticks", "sim_seconds", "entities",
               "events", "raycasts", "expects", "counters", "timing"]
ENTITY_KEYS = ["name", "position", "rotation", "linear_velocity", "angular_velocity", "body",
               "awake", "grounded", "ground_state"]
COUNTER_KEYS = ["commands", "commands_dropped_stale", "replies", "replies_dropped", "bodies_peak",
                "live_objects_at_exit"]
GEOMETRY_KEYS = ["budget_units", "built", "cancelled", "pending", "max_tick_units"]
EVENT_KEYS = ["tick", "t", "kind", "a", "b", "point", "normal", "penetration", "normal_impulse"]
TRACE_HEADER = "tick,t,entity,x,y,z,qx,qy,qz,qw,vx,vy,vz"


def gyre(*args, cwd=None, timeout=120):
    """Runs gyre; returns (exit code, stdout, stderr, max RSS in KiB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([GYRE, *map(str, args)], stdout=out, stderr=err, cwd=cwd)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid != 0:
                break
            if time.monotonic() > deadline:
                p.kill()
                os.wait4(p.pid, 0)
                raise Failure(f"gyre {' '.join(map(str, args))}: timed out after {timeout} s")
            time.sleep(0.005)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return p.returncode, out.read().decode(), err.read().decode(), usage.ru_maxrss


def run_report(scene, *flags, expect_exit=0):
    report = TMP / (Path(scene).stem + ".report.json")
    code, out, err, _ = gyre("run", scene, "--quiet", "--report", report, *flags)
    check(code == expect_exit, f"{scene}: exit {code}, expected {expect_exit}; stderr:\n{err}")
    return json.loads(report.read_text()), err


EXPECT_KEYS = ["at", "entity", "passed", "detail", "script", "do", "expected", "actual",
               "tolerance"]


def check_expect_numbers(x):
    """An expect's numbers agree with its outcome: `passed` is what `actual`, `expected` and
    `tolerance` say (so the numbers are the ones the check used)."""
    if x["passed"] is None:
        check(x["actual"] is None, f"not reached, yet measured: {x}")
        return
    if x["do"] == "expect_event":
        e, first = x["expected"], x["actual"]["first_t"]
        held = first is not None and e["since"] - 1e-9 <= first <= e["until"] + 1e-9
        check(held == x["passed"], f"expect_event numbers disagree with passed: {x}")
        check(x["tolerance"] is None, str(x))
        return
    check(x["do"] == "expect" and list(x["expected"]) == list(x["actual"]), str(x))
    held = True
    for key, want in x["expected"].items():
        got = x["actual"][key]
        if isinstance(want, list):
            for w, g in zip(want, got):
                if w is not None:
                    held &= g is not None and abs(g - w) <= x["tolerance"] + 1e-6
        else:
            held &= got == want
    # Numbers are printed to 6 decimals: a miss within that rounding cannot be told apart.
    check(held == x["passed"] or any(
        isinstance(w, list) and any(a is not None and b is not None and
                                    abs(abs(a - b) - x["tolerance"]) < 2e-6
                                    for a, b in zip(w, x["actual"][k]))
        for k, w in x["expected"].items()), f"expect numbers disagree with passed: {x}")


def check_report_shape(r):
    check(list(r.keys()) == REPORT_KEYS, f"report keys {list(r.keys())}")
    for e in r["entities"]:
        check(list(e.keys()) == ENTITY_KEYS, f"entity keys {list(e.keys())}")
        check(len(e["position"]) == 3 and len(e["rotation"]) == 4, "pose sizes")
        check((e["awake"] is None) == (e["body"] != "Dynamic"),
              f"{e['name']}: awake must be a bool exactly for Dynamic bodies")
    # enter, stay and exit always; the body kinds after them, in this order, when they occurred.
    keys = list(r["events"].keys())
    check(keys[:3] == ["enter", "stay", "exit"] and
          keys[3:] == [k for k in ["sleep", "wake", "killed"] if k in keys[3:]], "events keys")
    # "geometry" follows when runtime geometry went through the per-tick budget.
    check(list(r["counters"].keys()) in (COUNTER_KEYS, COUNTER_KEYS + ["geometry"]),
          f"counter keys {list(r['counters'])}")
    if "geometry" in r["counters"]:
        check(list(r["counters"]["geometry"].keys()) == GEOMETRY_KEYS,
              f"geometry keys {list(r['counters']['geometry'])}")
    check(list(r["timing"].keys()) == ["wall_seconds", "step_ms"], "timing keys")
    check(list(r["timing"]["step_ms"].keys()) == ["mean", "p50", "p99", "max"], "step_ms keys")
    for x in r["expects"]:
        check(list(x.keys()) == EXPECT_KEYS, f"expect keys {list(x)}")
        check_expect_numbers(x)
    for c in r["raycasts"]:
        check(list(c.keys()) == ["label", "at", "hit", "entity", "distance", "point", "normal"],
              f"raycast keys {list(c)}")


# ---- groups ---------------------------------------------------------------------------------- #

def scene_cases():
    """Every sample scene on every adapter compiled in: the same expects must hold on each."""
    cases = []
    for backend in BACKENDS:
        for path in sorted(SCENES.glob("*.json")):
            def case(path=path, backend=backend):
                r, err = run_report(path, "--backend", backend)
                check_report_shape(r)
                check(r["counters"]["live_objects_at_exit"] == 0,
                      f"live_objects_at_exit = {r['counters']['live_objects_at_exit']}")
                check(r["mode"] == "lockstep" and r["backend"] == backend,
                      f"lockstep on {backend}")
                failed = [x for x in r["expects"] if x["passed"] is not True]
                check(not failed, f"expects not held on {backend}: {failed}")
                check(r["ticks"] > 0, "no ticks")
            cases.append((f"test_scene_{path.stem}_on_{backend}", case))
    return cases


def strip_timing(text):
    r = json.loads(text)
    del r["timing"]
    return r


def determinism_cases():
    def same_run(scene, *flags):
        outs = []
        for i in range(2):
            files = [TMP / f"det{i}.{k}" for k in ("report.json", "events.jsonl", "trace.csv")]
            code, _, err, _ = gyre("run", scene, "--quiet", "--report", files[0], "--events",
                                   files[1], "--trace", files[2], *flags)
            check(code == 0, f"exit {code}: {err}")
            outs.append([f.read_bytes() for f in files])
        a, b = outs
        ra, rb = a[0].decode(), b[0].decode()
        check(strip_timing(ra) == strip_timing(rb), "reports differ outside timing")
        # Byte-identical up to the timing object, which is last.
        check(ra[:ra.index('"timing"')] == rb[:rb.index('"timing"')], "report bytes differ")
        check(a[1] == b[1], "events files differ")
        check(a[2] == b[2], "trace files differ")
        check(len(a[1]) > 0 and len(a[2]) > 0, "empty events or trace")

    return [
        ("test_lockstep_showcase_is_byte_identical", lambda: same_run(SCENES / "showcase.json")),
        ("test_lockstep_spawn_is_byte_identical", lambda: same_run(SCENES / "streamed_cell.json")),
        ("test_lockstep_ball_pit_is_byte_identical", lambda: same_run(SCENES / "ball_pit.json")),
    ] + [(f"test_lockstep_showcase_is_byte_identical_on_{b}",
          lambda b=b: same_run(SCENES / "showcase.json", "--backend", b)) for b in BACKENDS[1:]]


def usage_cases():
    showcase = SCENES / "showcase.json"

    def help_top():
        code, out, err, _ = gyre("--help")
        check(code == 0 and "run" in out and "validate" in out and "soak" in out, out + err)
        code, out, _, _ = gyre("--version")
        check(code == 0 and out.startswith("gyre "), out)

    def version():
        code, out, err, _ = gyre("--version")
        check(code == 0 and err == "", f"exit {code}: {err}")
        lines = out.splitlines()
        check(re.fullmatch(r"gyre \d+\.\d+\.\d+", lines[0]), lines[0])
        check(lines[1] == "adapters:", out)
        vendor = {"ode": ("ODE", "ode"), "bullet": ("Bullet", "bullet-float64")}
        for b in BACKENDS:
            name, pc = vendor[b]
            m = next((re.fullmatch(rf"  {b} +{name} (\d+(\.\d+)+).*", l) for l in lines
                      if l.startswith(f"  {b} ")), None)
            check(m is not None, f"no line for {b} with a {name} version:\n{out}")
            if shutil.which("pkg-config"):
                want = subprocess.run(["pkg-config", "--modversion", pc], capture_output=True,
                                      text=True).stdout.strip()
                check(want == "" or m.group(1) == want, f"{b}: {m.group(1)}, pkg-config {want}")
        check(len([l for l in lines if l.startswith("  ")]) == len(BACKENDS), out)
        check(re.fullmatch(r"scene parser: cJSON \d+\.\d+\.\d+", lines[-1]), lines[-1])

    def help_sub():
        for sub, word in (("run", "--seconds"), ("validate", "SCENE.json")):
            code, out, err, _ = gyre(sub, "--help")
            check(code == 0 and word in out, f"gyre {sub} --help: {code} {out}{err}")

    def usage_errors():
        for args in ([], ["frobnicate"], ["run"], ["validate"], ["run", showcase, "--bogus"],
                     ["run", showcase, "--seconds"], ["run", showcase, "--seconds", "abc"],
                     ["run", showcase, "--seconds", "-1"], ["run", showcase, "--seconds", "inf"],
                     ["run", showcase, "--seconds", "1e999"],
                     ["run", showcase, "--report", "-", "--events", "-"],
                     ["run", showcase, showcase]):
            code, out, err, _ = gyre(*args)
            check(code == 2, f"gyre {args}: exit {code}, expected 2")
            check(out == "", f"gyre {args}: usage errors go to stderr, got stdout {out!r}")
            check(err.strip() != "", f"gyre {args}: no message")

    def suggestions():
        # A mistyped command or option: one line on stderr with the nearest word and where help
        # is, never the whole usage.
        for args, near in ((["rn", "x"], "run"), (["valdate", showcase], "validate"),
                           (["--verison"], "--version"),
                           (["--reprot", "r.json"], "gyre run SCENE.json --report"),
                           (["run", showcase, "--reprot", "r.json"], "--report"),
                           (["run", showcase, "--rep", "r.json"], "--report"),
                           (["run", showcase, "--seocnds=3"], "--seconds"),
                           (["conform", showcase, "--backend", "ode"], "--backends"),
                           (["soak", showcase, "--cels", "3"], "--cells"),
                           (["validate", "--fromat", "json", showcase], "--format"),
                           (["frobnicate"], None), (["run", showcase, "--zzzzzz"], None)):
            code, out, err, _ = gyre(*args)
            check(code == 2 and out == "", f"gyre {args}: exit {code}, stdout {out!r}")
            check(err.count("\n") == 1, f"gyre {args}: one line, got:\n{err}")
            check("--help" in err and "usage:" not in err, f"gyre {args}: {err}")
            if near is None:
                check("did you mean" not in err, f"gyre {args}: no near word: {err}")
            else:
                check(f"(did you mean {near}?)" in err, f"gyre {args}: expected {near}: {err}")

    def soak_usage_errors():
        # The soak itself is exercised by test_soak.py; here only its argument checking.
        code, _, err, _ = gyre("soak")
        check(code == 2 and "no scene" in err, f"{code} {err}")
        code, _, err, _ = gyre("soak", showcase, "--cells", "-3")
        check(code == 2 and "--cells" in err, f"{code} {err}")
        for bad in (["--seconds", "1e999"], ["--props"], ["--statics=2.5"]):
            code, _, err, _ = gyre("soak", showcase, *bad)
            check(code == 2 and bad[0].split("=")[0] in err, f"soak {bad}: {code} {err}")

    def unknown_backend():
        code, _, err, _ = gyre("run", showcase, "--backend", "nosuch")
        check(code == 2, f"exit {code}")
        check("nosuch" in err and "ode" in err, f"message should name it and list adapters: {err}")
        code, _, err, _ = gyre("run", DATA / "unknown_backend.json")
        check(code == 2 and "warp_drive" in err, f"scene's backend: exit {code}: {err}")
        check(re.search(r"unknown_backend\.json:1:\d+: error: physics\.backend: ", err),
              f"the scene's value, with its position: {err}")

    def missing_file():
        code, _, err, _ = gyre("run", TMP / "nope.json")
        check(code == 2 and "nope.json" in err, f"{code} {err}")
        code, _, err, _ = gyre("run", showcase, "--report", TMP / "no" / "dir" / "r.json")
        check(code == 2 and "r.json" in err, f"unwritable report: {code} {err}")

    def report_to_stdout():
        code, out, err, _ = gyre("run", showcase, "--seconds", "0.5", "--report", "-", "--quiet")
        check(code == 0, err)
        r = json.loads(out)
        check_report_shape(r)
        check(r["ticks"] == 30 and r["sim_seconds"] == 0.5, f"{r['ticks']} {r['sim_seconds']}")
        check(r["scene"] == str(showcase) and r["backend"] == "ode" and r["mode"] == "lockstep",
              "scene/backend/mode")
        names = [e["name"] for e in r["entities"]]
        check(names[:3] == ["ground", "crate_a", "crate_b"], f"scene order: {names[:3]}")
        hero = next(e for e in r["entities"] if e["name"] == "hero")
        check(hero["grounded"] is True and hero["awake"] is None and
              hero["ground_state"] == "walkable", "character fields")
        crate = next(e for e in r["entities"] if e["name"] == "crate_a")
        check(crate["ground_state"] is None, "ground_state is null for bodies")
        # Expects after the end of the run are listed as not reached.
        check(any(x["passed"] is None and "not reached" in x["detail"] for x in r["expects"]),
              "unreached expects")
        check(err == "", f"--quiet on a pipe prints nothing on success: {err!r}")

    def not_quiet_summary_on_pipe():
        code, _, err, _ = gyre("run", SCENES / "box_pile.json", "--seconds", "1")
        check(code == 0 and "\r" not in err, f"no progress line on a pipe: {err!r}")

    def events_lines():
        ev = TMP / "ev.jsonl"
        code, _, err, _ = gyre("run", SCENES / "sensors.json", "--seconds", "2", "--quiet",
                               "--events", ev)
        check(code == 0, err)
        lines = ev.read_text().splitlines()
        check(len(lines) > 10, "too few events")
        names = {"ground", "zone", "ball", "pad", "resting"}
        seen = set()
        for line in lines:
            e = json.loads(line)
            check(list(e.keys()) == EVENT_KEYS, f"event keys {list(e)}")
            check(abs(e["t"] - e["tick"] / 60.0) < 1e-6, "t = tick / step_hz")
            if e["kind"] in ("sleep", "wake"):
                # A body's lifecycle line: its entity in a, no b and no contact.
                check(e["a"] in names and e["b"] is None and e["point"] is None and
                      e["normal"] is None and e["penetration"] is None and
                      e["normal_impulse"] is None, f"lifecycle line {e}")
                seen.add((e["kind"], e["a"]))
                continue
            check(e["kind"] in ("enter", "stay", "exit"), e["kind"])
            check(e["a"] in names and e["b"] in names, f"names {e['a']} {e['b']}")
            seen.add((e["kind"], frozenset((e["a"], e["b"]))))
        check(("enter", frozenset(("ball", "zone"))) in seen, "ball enters the zone")
        check(("exit", frozenset(("ball", "zone"))) in seen, "ball leaves the zone")
        check(("sleep", "resting") in seen, "the box resting on the pad falls asleep")
        # Every enter is paired with an exit by the end (teardown closes the rest).
        enters = sum(1 for l in lines if '"kind": "enter"' in l)
        exits = sum(1 for l in lines if '"kind": "exit"' in l)
        check(enters == exits, f"{enters} enters, {exits} exits")

    def trace_rows():
        tr = TMP / "trace.csv"
        code, _, err, _ = gyre("run", SCENES / "restitution.json", "--seconds", "1", "--quiet",
                               "--trace", tr)
        check(code == 0, err)
        lines = tr.read_text().splitlines()
        check(lines[0] == TRACE_HEADER, lines[0])
        rows = [l.split(",") for l in lines[1:]]
        check(len(rows) == 4 * 121, f"{len(rows)} rows, expected 4 entities x 121 ticks")
        first = [r for r in rows if r[0] == "0"]
        check([r[2] for r in first] == ["ground", "bouncy", "half", "dead"], "tick 0, scene order")
        check(first[1][3:6] == ["-2", "2.25", "0"], f"initial state {first[1]}")
        check(all(len(r) == 13 for r in rows), "13 columns")

    def expect_failure():
        r, err = run_report(DATA / "expect_fail.json", "--seconds", "2", expect_exit=1)
        passed = [x["passed"] for x in r["expects"]]
        check(passed == [True, False, False], f"passed {passed}")
        check("expect failed" in err and "position.y" in err and "off by 1" in err,
              f"readable failure line: {err}")
        check("no enter event between 'ball' and 'far'" in err, err)

    def expect_numbers():
        r, _ = run_report(DATA / "expect_fail.json", "--seconds", "2", expect_exit=1)
        x = r["expects"]
        check(x[0]["script"] == 0 and x[0]["do"] == "expect", str(x[0]))
        check(x[1]["expected"] == {"position": [None, 1.5, None]}, str(x[1]))
        check(abs(x[1]["actual"]["position"][1] - 0.5) < 0.01 and x[1]["tolerance"] == 0.01,
              str(x[1]))
        check(x[2]["do"] == "expect_event" and x[2]["expected"] == {
            "kind": "enter", "a": "ball", "b": "far", "since": 0, "until": 1}, str(x[2]))
        check(x[2]["actual"] == {"first_t": None}, str(x[2]))
        # A held expect_event says when its event came; an unreached one measured nothing.
        r, _ = run_report(SCENES / "sensors.json")
        ev = [e for e in r["expects"] if e["do"] == "expect_event"]
        check(ev and all(e["passed"] and e["actual"]["first_t"] is not None for e in ev), str(ev))
        r, _ = run_report(SCENES / "showcase.json", "--seconds", "0.5")
        late = [e for e in r["expects"] if e["passed"] is None]
        check(late and all(e["actual"] is None for e in late), str(late))

    def junit():
        import xml.etree.ElementTree as ET
        out = TMP / "junit.xml"
        r, _ = run_report(DATA / "expect_fail.json", "--seconds", "2", "--junit", out,
                          expect_exit=1)
        root = ET.parse(out).getroot()
        check(root.tag == "testsuites", root.tag)
        suite = root.find("testsuite")
        cases = suite.findall("testcase")
        check(len(cases) == len(r["expects"]) == 3, f"{len(cases)} test cases")
        check((suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "2", "0"),
              str(suite.attrib))
        check([c.find("failure") is not None for c in cases] == [False, True, True],
              "failures where expects failed")
        check(cases[1].get("name") == "script[1] expect 'ball' at 1 s", cases[1].get("name"))
        check(cases[1].find("failure").get("message") == r["expects"][1]["detail"],
              "the failure message is the expect's detail")
        check(cases[2].get("name") == "script[2] expect_event enter 'ball' 'far' by 1 s",
              cases[2].get("name"))
        # Not reached: skipped, not failed.
        code, out_text, err, _ = gyre("run", SCENES / "showcase.json", "--seconds", "0.5",
                                      "--quiet", "--junit", "-")
        check(code == 0, err)
        suite = ET.fromstring(out_text).find("testsuite")
        skipped = [c for c in suite.findall("testcase") if c.find("skipped") is not None]
        check(skipped and suite.get("skipped") == str(len(skipped)) and
              suite.get("failures") == "0", str(suite.attrib))
        # A runtime fault is a failed test case of its own.
        run_report(DATA / "fault.json", "--seconds", "3", "--junit", out, expect_exit=1)
        suite = ET.parse(out).getroot().find("testsuite")
        run_case = [c for c in suite.findall("testcase") if c.get("name") == "run"]
        check(len(run_case) == 1 and run_case[0].find("failure") is not None, "fault case")
        code, _, err, _ = gyre("run", SCENES / "showcase.json", "--junit", TMP / "no" / "j.xml")
        check(code == 2 and "j.xml" in err, f"unwritable: {code} {err}")

    def spawn_failure():
        r, err = run_report(DATA / "spawn_invalid.json", "--seconds", "3", expect_exit=1)
        check([e["name"] for e in r["entities"]] == ["ground", "ball"], "nothing spawned")
        check("entities[1].components.physics.mass: must be > 0" in err, err)
        check("the run ends" in err, err)
        check(r["ticks"] == 30, f"the run ended at the spawn (tick 30), not {r['ticks']}")
        check(r["counters"]["live_objects_at_exit"] == 0, "no leak")

    def runtime_fault():
        r, err = run_report(DATA / "fault.json", "--seconds", "3", expect_exit=1)
        check("runtime fault" in err and "'rocket'" in err, err)
        check(r["ticks"] < 30, f"the run ended at the fault, not after {r['ticks']} ticks")
        check(r["counters"]["live_objects_at_exit"] == 0, "no leak")

    def destroy_and_switches():
        r, _ = run_report(DATA / "destroy.json", "--seconds", "2.5")
        check([e["name"] for e in r["entities"]] == ["ground", "sleeper", "switched"],
              "destroyed entity absent")
        check(all(x["passed"] for x in r["expects"]), r["expects"])

    def raycast_report():
        r, _ = run_report(SCENES / "level_mesh.json", "--seconds", "1.5")
        c = r["raycasts"][0]
        check(c["label"] == "ramp at x = 2" and c["hit"] and c["entity"] == "level", str(c))
        check(abs(c["distance"] - 4.5) < 1e-3 and abs(c["point"][1] - 0.5) < 1e-3, str(c))
        check(abs(c["normal"][0] + 0.242536) < 1e-3, "normal of a 1:4 ramp")

    return [
        ("test_help_everywhere", help_top),
        ("test_help_subcommands", help_sub),
        ("test_version_names_adapters_and_middleware_versions", version),
        ("test_usage_errors_exit_2", usage_errors),
        ("test_unknown_words_suggest_the_nearest_in_one_line", suggestions),
        ("test_soak_usage_errors", soak_usage_errors),
        ("test_unknown_backend_exit_2", unknown_backend),
        ("test_missing_or_unwritable_files_exit_2", missing_file),
        ("test_report_to_stdout", report_to_stdout),
        ("test_no_progress_line_on_a_pipe", not_quiet_summary_on_pipe),
        ("test_events_json_lines", events_lines),
        ("test_trace_csv", trace_rows),
        ("test_expect_failure_exit_1", expect_failure),
        ("test_expects_carry_expected_actual_and_tolerance", expect_numbers),
        ("test_junit_one_test_case_per_expect", junit),
        ("test_spawn_of_invalid_scene_exit_1", spawn_failure),
        ("test_runtime_fault_exit_1", runtime_fault),
        ("test_destroy_and_active_switches", destroy_and_switches),
        ("test_raycast_in_report", raycast_report),
    ]


def bad_input_cases():
    def invalid(cmd):
        code, out, err, _ = gyre(cmd, DATA / "invalid.json")
        check(code == 2, f"exit {code}")
        f = str(DATA / "invalid.json")
        for path, msg in [
                ("physics.step_hz", "must be between 10 and 1000 (got 5)"),
                ("entities[1].components.physics.mass", "must be > 0 for a Dynamic body (got -2)"),
                ("entities[2].name", 'duplicate name "crate"'),
                ("entities[2].components.physics.fricton", "unknown key"),
                ("entities[3].parent", 'no entity named "nobody"'),
                ("joints[0].a", 'no entity named "door"'),
                ("script[0].at", "must be >= 0 (got -1)"),
                ("script[0].entity", 'no entity named "ghost"')]:
            check(re.search(re.escape(f) + r":\d+:\d+: error: " + re.escape(f"{path}: {msg}"),
                            err), f"missing `{path}: {msg}` in:\n{err}")
        # Compilers' style: the line and column where the offending value starts.
        check(f"{f}:4:27: error: physics.step_hz: " in err, err)
        check(f"{f}:7:100: error: entities[1].components.physics.mass: " in err, err)
        check(f"{f}:8:98: error: entities[2].components.physics.fricton: " in err, err)
        check(out == "", "nothing on stdout")

    def validate_mixed():
        code, _, err, _ = gyre("validate", SCENES / "showcase.json", DATA / "invalid.json")
        check(code == 2, f"exit {code}")
        check(f"{SCENES / 'showcase.json'}: ok" in err, err)

    def validate_all():
        files = sorted(SCENES.glob("*.json"))
        code, _, err, _ = gyre("validate", *files)
        check(code == 0, err)
        check(err.count(": ok\n") == len(files), err)

    def file_problem(name, pattern, cmd="validate"):
        def case():
            code, out, err, _ = gyre(cmd, DATA / name)
            check(code == 2, f"exit {code}")
            check(re.search(pattern, err), f"expected /{pattern}/ in:\n{err}")
        return case

    def deep_document():
        deep = TMP / "deep.json"
        n = 10_000_000
        with open(deep, "w") as f:
            f.write('{"format": "gyre.scene", "version": 1, "x_deep": ')
            f.write("[" * n)
            f.write("]" * n)
            f.write("}")
        check(deep.stat().st_size >= 20_000_000, "20 MB")
        for cmd in ("validate", "run"):
            code, _, err, rss_kb = gyre(cmd, deep)
            check(code == 2, f"{cmd}: exit {code}")
            check("nested deeper than" in err, err)
            # The text itself is 20 MB; parsing it would cost far more. ASan adds its shadow.
            check(rss_kb < 400 * 1024, f"{cmd}: max RSS {rss_kb} KiB")
        deep.unlink()

    def format_json():
        files = [DATA / "invalid.json", DATA / "malformed.json", TMP / "nope.json",
                 SCENES / "box_pile.json"]
        code, out, err, _ = gyre("validate", "--format", "json", *files)
        check(code == 2, f"exit {code}")
        check(err == "", f"nothing for people on stderr: {err}")
        doc = json.loads(out)
        check(list(doc) == ["errors", "files"], f"keys {list(doc)}")
        check([f["file"] for f in doc["files"]] == [str(f) for f in files], str(doc["files"]))
        check([f["valid"] for f in doc["files"]] == [False, False, False, True], str(doc["files"]))
        for e in doc["errors"]:
            check(list(e) == ["file", "line", "column", "path", "message"], f"keys {list(e)}")
        by_file = {}
        for e in doc["errors"]:
            by_file.setdefault(e["file"], []).append(e)
        check([f["errors"] for f in doc["files"]] ==
              [len(by_file.get(str(f), [])) for f in files], "error counts per file")
        mass = next(e for e in doc["errors"]
                    if e["path"] == "entities[1].components.physics.mass")
        check((mass["line"], mass["column"]) == (7, 100), str(mass))
        check(mass["message"] == "must be > 0 for a Dynamic body (got -2)", str(mass))
        bad = by_file[str(DATA / "malformed.json")][0]
        check((bad["line"], bad["column"], bad["path"]) == (1, 70, ""), str(bad))
        missing = by_file[str(TMP / "nope.json")][0]
        check(missing["line"] is None and missing["column"] is None, str(missing))
        # The same errors as the text form, one for one.
        _, _, text, _ = gyre("validate", *files)
        lines = [l for l in text.splitlines() if ": error: " in l]
        check(len(lines) == len(doc["errors"]), f"{len(lines)} lines, {len(doc['errors'])} entries")
        for line, e in zip(lines, doc["errors"]):
            where = e["file"] + (f":{e['line']}:{e['column']}" if e["line"] else "")
            what = (e["path"] + ": " if e["path"] else "") + e["message"]
            check(line == f"{where}: error: {what}", f"{line!r} vs {e}")
        code, _, err, _ = gyre("validate", "--format", "xml", files[0])
        check(code == 2 and "text or json" in err, f"bad format: {code} {err}")

    def unknown_backend_validate():
        # What `gyre run` refuses, `gyre validate` refuses too, at the value's position.
        scene = DATA / "unknown_backend.json"
        code, _, err, _ = gyre("validate", scene)
        check(code == 2, f"validate: exit {code}: {err}")
        check(re.search(re.escape(str(scene)) + r":1:\d+: error: physics\.backend: no adapter named "
                        r"\"warp_drive\" in this build \(it has: " + re.escape(", ".join(BACKENDS)),
                        err), err)
        code, _, err, _ = gyre("run", scene)
        check(code == 2 and "warp_drive" in err, f"run: exit {code}: {err}")
        scene = TMP / "named_backends.json"
        for b in BACKENDS:
            scene.write_text('{"format": "gyre.scene", "version": 1, "physics": {"backend": "%s"}}'
                             % b)
            code, _, err, _ = gyre("validate", scene)
            check(code == 0, f"backend {b}: exit {code}: {err}")

    def spawned_scenes_validate():
        # A spawn of an invalid scene ends `gyre run` with exit 1; validate names it beforehand.
        code, _, err, _ = gyre("validate", DATA / "spawn_invalid.json")
        check(code == 2, f"exit {code}: {err}")
        check(re.search(r"spawn_invalid\.json:11:\d+: error: script\[0\]\.scene: the spawned scene "
                        r"\".*invalid\.json\" is not valid", err), err)
        check(re.search(r"invalid\.json:7:100: error: entities\[1\]\.components\.physics\.mass",
                        err), err)
        # A scene that spawns itself (and a valid cell twice) is checked once each, and is fine.
        me = TMP / "spawns_itself.json"
        me.write_text(json.dumps({"format": "gyre.scene", "version": 1, "script": [
            {"at": 1, "do": "spawn", "scene": me.name},
            {"at": 2, "do": "spawn", "scene": str(SCENES / "cell.json")},
            {"at": 3, "do": "spawn", "scene": str(SCENES / "cell.json")}]}))
        code, _, err, _ = gyre("validate", me)
        check(code == 0, f"exit {code}: {err}")
        check(err.count(": ok\n") == 2, err)

    return [
        ("test_validate_format_json_lists_every_error_with_position", format_json),
        ("test_validate_refuses_a_backend_run_refuses", unknown_backend_validate),
        ("test_validate_checks_spawned_scenes", spawned_scenes_validate),
        ("test_validation_errors_name_paths_validate", lambda: invalid("validate")),
        ("test_validation_errors_name_paths_run", lambda: invalid("run")),
        ("test_validate_reports_ok_per_file", validate_mixed),
        ("test_validate_every_sample_scene", validate_all),
        ("test_malformed_json", file_problem(
            "malformed.json", r"malformed\.json:1:70: error: malformed JSON")),
        ("test_empty_file", file_problem("empty.json", r"empty\.json: error: empty file")),
        ("test_number_overflow", file_problem(
            "overflow.json",
            r"overflow\.json:\d+:\d+: error: entities\[0\]\.transform\.position\[1\]: .*infinity")),
        ("test_number_overflow_run", file_problem(
            "overflow.json", r"entities\[0\]\.transform\.position\[1\]", cmd="run")),
        ("test_missing_obj", file_problem(
            "missing_obj.json",
            r"entities\[0\]\.components\.physics\.collision: cannot read \"no_such_file\.obj\" "
            r"\(resolved as \"" + re.escape(str(DATA / "no_such_file.obj")) + r"\"\): No such file")),
        ("test_obj_bad_face", file_problem(
            "bad_face.json", r"entities\[0\]\.components\.physics\.collision: bad_face\.obj:6: ")),
        ("test_deeply_nested_20mb_document", deep_document),
    ]


def realtime_cases():
    def paced():
        start = time.monotonic()
        r, _ = run_report(SCENES / "showcase.json", "--realtime", "--seconds", "1")
        wall = time.monotonic() - start
        check(r["mode"] == "realtime", r["mode"])
        check(r["ticks"] >= 60, f"{r['ticks']} ticks")
        check(wall >= 0.9, f"a paced second took {wall:.2f} s")
        check(r["counters"]["live_objects_at_exit"] == 0, "no leak")
        check(all(x["passed"] in (True, None) for x in r["expects"]), r["expects"])

    return [("test_realtime_is_paced", paced)]


CONFORM_KEYS = ["gyre_version", "scene", "backends", "baseline", "runs", "final", "trace",
                "entities", "events", "expects", "raycasts"]


def conform_repeat_cases():
    """`gyre conform` against itself: the same adapter twice, and a run against a saved one. Lockstep
    runs are deterministic, so both must show no difference at all; a saved report changed by hand
    must trip the gate."""
    a = BACKENDS[0]
    scene = SCENES / "box_pile.json"

    def same_backend_twice():
        out = TMP / "twice.json"
        code, _, err, _ = gyre("conform", scene, "--backends", f"{a},{a}", "--seconds", "2",
                               "--report", out)
        check(code == 0, f"exit {code}: {err}")
        check(f"{a} (1) vs {a} (2)" in err, err)
        c = json.loads(out.read_text())
        check(c["backends"] == [a, a] and c["baseline"] is None, str(c["backends"]))
        check(c["final"]["max_position_diff"] == 0 and c["trace"]["compared"] is True and
              c["trace"]["max_position_diff"] == 0, f"{c['final']} {c['trace']}")
        check(c["events"]["compared"] is True and c["events"]["differing_pairs"] == [] and
              c["events"]["pairs"] > 0, str(c["events"]))

    def saved_run():
        files = [TMP / f"saved.{k}" for k in ("report.json", "events.jsonl", "trace.csv")]
        code, _, err, _ = gyre("run", scene, "--seconds", "2", "--quiet", "--report", files[0],
                               "--events", files[1], "--trace", files[2])
        check(code == 0, err)
        out = TMP / "vs_saved.json"
        # The scene, the backend and the seconds come from the saved report.
        code, _, err, _ = gyre("conform", "--baseline", files[0], "--baseline-events", files[1],
                               "--baseline-trace", files[2], "--report", out,
                               "--max-position-diff", "0")
        check(code == 0, f"exit {code}: {err}")
        check(f"saved {a} vs {a}" in err, err)
        c = json.loads(out.read_text())
        check(c["baseline"] == str(files[0]) and c["scene"] == str(scene), str(c["baseline"]))
        check(c["runs"][0]["exit_code"] is None and c["runs"][1]["exit_code"] == 0, str(c["runs"]))
        check(c["runs"][0]["ticks"] == c["runs"][1]["ticks"] == 120, str(c["runs"]))
        check(c["final"]["max_position_diff"] == 0 and c["trace"]["max_position_diff"] == 0 and
              c["trace"]["rows"] == 121 * len(c["entities"]), f"{c['final']} {c['trace']}")
        check(c["events"]["compared"] is True and c["events"]["differing_pairs"] == [],
              str(c["events"]))
        for f in files:
            check(f.exists(), f"{f} must not be removed")
        # Without the saved events and trace, only what the report holds is compared.
        code, _, err, _ = gyre("conform", scene, "--baseline", files[0], "--report", out)
        check(code == 0, f"exit {code}: {err}")
        c = json.loads(out.read_text())
        check(c["trace"]["compared"] is False and "--baseline-trace" in c["trace"]["problem"],
              str(c["trace"]))
        check(c["events"]["compared"] is False, str(c["events"]))
        # A change of behaviour: one crate ends elsewhere than it did.
        r = json.loads(files[0].read_text())
        moved = r["entities"][3]
        moved["position"][0] += 0.25
        changed = TMP / "changed.report.json"
        changed.write_text(json.dumps(r))
        code, _, err, _ = gyre("conform", "--baseline", changed, "--max-position-diff", "0.001",
                               "--quiet")
        check(code == 1, f"exit {code}: {err}")
        check(f"'{moved['name']}' ends 0.25 m apart" in err, err)

    def usage():
        saved = TMP / "usage.report.json"
        code, _, err, _ = gyre("run", scene, "--seconds", "0.5", "--quiet", "--report", saved)
        check(code == 0, err)
        r = json.loads(saved.read_text())
        r["backend"] = "nosuch"
        bad = TMP / "bad_backend.report.json"
        bad.write_text(json.dumps(r))
        for args in (["--baseline-events", saved], ["--baseline", saved, "--backends", f"{a},{a}"],
                     ["--baseline", TMP / "nope.json"], ["--baseline", bad],
                     ["--baseline", SCENES / "box_pile.json"], ["--baseline"]):
            code, out, err, _ = gyre("conform", *args)
            check(code == 2 and out == "" and err.strip() != "", f"conform {args}: exit {code}")

    return [
        ("test_conform_same_adapter_twice_shows_no_difference", same_backend_twice),
        ("test_conform_against_a_saved_run", saved_run),
        ("test_conform_baseline_usage_errors_exit_2", usage),
    ]


def conform_cases():
    """`gyre conform` on two scenes that end at rest, as a smoke test: it runs, it reads both runs
    right (its per-run numbers equal `gyre run`'s), and the final poses agree within a bound the
    scene justifies. Differences below the bound are reported, not failed."""
    if len(BACKENDS) < 2:
        def needs_two():
            code, _, err, _ = gyre("conform", SCENES / "restitution.json")
            check(code == 2 and "two" in err, f"one adapter: exit {code}: {err}")
        return [("test_conform_needs_two_adapters", needs_two)] + conform_repeat_cases()
    a, b = BACKENDS[0], BACKENDS[1]

    def smoke(stem, bound):
        def case():
            out = TMP / f"{stem}.conform.json"
            code, _, err, _ = gyre("conform", SCENES / f"{stem}.json", "--backends", f"{a},{b}",
                                   "--report", out, "--max-position-diff", bound, timeout=240)
            check(code == 0, f"exit {code}: {err}")
            c = json.loads(out.read_text())
            check(list(c.keys()) == CONFORM_KEYS, f"keys {list(c.keys())}")
            check(c["backends"] == [a, b], str(c["backends"]))
            check(f"{a} vs {b}" in err, f"summary on stderr: {err}")
            for side, backend in enumerate((a, b)):
                r, _ = run_report(SCENES / f"{stem}.json", "--backend", backend)
                run = c["runs"][side]
                check(run["backend"] == backend and run["exit_code"] == 0, str(run))
                # conform compares pairs: the body kinds of the report are not among its counts.
                pairs = {k: r["events"][k] for k in ("enter", "stay", "exit")}
                check(run["events"] == pairs, f"{backend}: {run['events']} != {pairs}")
                check(run["expects_held"] == len(r["expects"]), f"{backend}: {run}")
                check(run["ticks"] == r["ticks"], f"{backend}: ticks")
                check([e["name"] for e in c["entities"]] == [e["name"] for e in r["entities"]],
                      "entities in report order")
            check(c["final"]["entities_match"] is True, "same entities")
            worst = max(e["position_diff"] for e in c["entities"])
            check(abs(c["final"]["max_position_diff"] - worst) < 1e-9, "final max")
            check(worst <= bound, f"final positions {worst} m apart (bound {bound})")
            t = c["trace"]
            check(t["compared"] is True and t["rows"] == (r["ticks"] + 1) * len(r["entities"]),
                  f"trace rows {t['rows']}")
            check(t["max_position_diff"] >= worst - 1e-9, "the run's largest difference")
            check(c["events"]["pairs"] >= 1, "collision pairs")
        return case

    def gate():
        # A gate below the difference the adapters really show must fail the command.
        code, _, err, _ = gyre("conform", SCENES / "box_pile.json", "--backends", f"{a},{b}",
                               "--seconds", "2", "--max-position-diff", "0", "--quiet")
        check(code == 1 and "--max-position-diff 0" in err, f"exit {code}: {err}")

    def usage():
        for args in (["conform"], ["conform", SCENES / "restitution.json", "--backends", a],
                     ["conform", SCENES / "restitution.json", "--bogus"],
                     ["conform", SCENES / "restitution.json", "--seconds", "1e999"],
                     ["conform", SCENES / "restitution.json", "--max-position-diff"],
                     ["conform", SCENES / "restitution.json", "--max-position-diff=-1"]):
            code, out, err, _ = gyre(*args)
            check(code == 2 and out == "" and err.strip() != "", f"gyre {args}: exit {code}")
        code, _, err, _ = gyre("conform", SCENES / "restitution.json", "--backends", f"{a},nosuch")
        check(code == 2 and "nosuch" in err and a in err, f"unknown adapter: {code} {err}")
        code, _, err, _ = gyre("conform", DATA / "invalid.json")
        check(code == 2 and "physics.step_hz" in err, f"invalid scene: {code} {err}")

    # restitution: three balls end at rest on a plane, with no sideways force: apart only by the
    # adapters' resting penetrations (ODE's 0.5 mm surface layer), so 1 cm is generous.
    # box_pile: each adapter holds its crates within the scene's tolerances (up to 5 cm) of the
    # analytic pyramid, so the two may end up to 10 cm apart.
    return [
        ("test_conform_restitution", smoke("restitution", 0.01)),
        ("test_conform_box_pile", smoke("box_pile", 0.1)),
        ("test_conform_gate_exit_1", gate),
        ("test_conform_usage_errors_exit_2", usage),
    ] + conform_repeat_cases()


GROUPS = {"cli_scenes": scene_cases, "cli_determinism": determinism_cases,
          "cli_usage": usage_cases, "cli_bad_input": bad_input_cases,
          "cli_realtime": realtime_cases, "cli_conform": conform_cases}


def main():
    status = run_cases(GROUPS[GROUP]())
    for p in TMP.iterdir():
        p.unlink()
    TMP.rmdir()
    return status


if __name__ == "__main__":
    sys.exit(main())
