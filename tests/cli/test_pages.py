#!/usr/bin/env python3
"""The pages `gyre run --html` and `gyre soak --html` write (docs/viewing.md), opened in a real
browser: headless Chromium driven over the DevTools protocol (--remote-debugging-pipe, so no
websocket module is needed). Each page must set data-gyre-status="ok" on its <body> after drawing
(its own check: every entity drawn with all its colliders, the last frame reached, no WebGL error,
not one flat colour), log no console error or uncaught exception, request nothing but itself, and
give a screenshot that is not blank. Damaged pages must report an error instead. Run by meson:

    test_pages.py GYRE SCENES_DIR BACKENDS [diagnostics|no-diagnostics]

(the last: whether the build has the diagnostics sampler, default diagnostics).

Exits 77 (skipped) when no Chromium is installed; .ci/setup test installs Debian's `chromium`.
Prints cmocka-style lines like the other command-line tests."""
import base64
import json
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

from cases import Failure, check, run_cases, threads, wait_for

GYRE, SCENES = sys.argv[1], Path(sys.argv[2])
BACKENDS = [b for b in sys.argv[3].split(",") if b]
HAS_DIAGNOSTICS = len(sys.argv) < 5 or sys.argv[4] == "diagnostics"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
TMP = None  # a temporary folder, made by main()
WIDTH, HEIGHT = 1280, 800
PAGE_TIMEOUT = 40  # seconds for a page to check itself (swiftshader on a loaded 2-core machine)
SHOWCASE_MAX_BYTES = 4 * 1024 * 1024  # "a few megabytes at most" for a 10 s showcase


class Browser:
    """Headless Chromium over --remote-debugging-pipe: NUL-separated JSON on fds 3 and 4."""

    def __init__(self):
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        def fds():
            a, b = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        args = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
                "--enable-unsafe-swiftshader", "--use-angle=swiftshader",
                "--remote-debugging-pipe", f"--user-data-dir={TMP / 'profile'}",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-sync", "about:blank"]
        self.log = open(TMP / "chromium.log", "w")
        self.proc = subprocess.Popen(args, preexec_fn=fds, close_fds=False,
                                     stdout=self.log, stderr=self.log)
        os.close(to_child_r)
        os.close(from_child_w)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, tab=None, timeout=30):
        self.next_id += 1
        mid = self.next_id
        msg = {"id": mid, "method": method, "params": params or {}}
        if tab:
            msg["sessionId"] = tab
        os.write(self.to_child, json.dumps(msg).encode() + b"\0")
        end = time.monotonic() + timeout
        while True:
            m = self._read(end)
            if m.get("id") == mid:
                if "error" in m:
                    raise Failure(f"{method}: {m['error']}")
                return m["result"]
            self.events.append(m)

    def _read(self, end):
        while b"\0" not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                raise Failure("the browser did not answer in time")
            ready, _, _ = select.select([self.from_child], [], [], left)
            if ready:
                chunk = os.read(self.from_child, 1 << 20)
                if not chunk:
                    raise Failure("the browser exited")
                self.buf += chunk
        m, self.buf = self.buf.split(b"\0", 1)
        return json.loads(m)

    def close(self):
        try:
            self.send("Browser.close", timeout=10)
        except (Failure, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


BROWSER = None


def open_page(path, script=None, results=None):
    """Opens a page in a new tab and waits for its self-check, then runs `script` (JavaScript, or
    None) before the screenshot; its value goes into results["value"] when `results` is a dict.
    Returns (status, frames, problems, png) where problems lists console errors, exceptions and
    requests other than the page."""
    b = BROWSER
    target = b.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    tab = b.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    try:
        for domain in ("Runtime", "Log", "Page", "Network"):
            b.send(f"{domain}.enable", tab=tab)
        b.send("Emulation.setDeviceMetricsOverride",
               {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False},
               tab=tab)
        b.events.clear()
        url = Path(path).resolve().as_uri()
        b.send("Page.navigate", {"url": url}, tab=tab)
        status, frames = None, 0
        end = time.monotonic() + PAGE_TIMEOUT
        while status is None and time.monotonic() < end:
            r = b.send("Runtime.evaluate", {
                "expression": "document.body ? [document.body.dataset.gyreStatus || null, "
                              "Number(document.body.dataset.gyreFrames || 0)] : [null, 0]",
                "returnByValue": True}, tab=tab)
            status, frames = r["result"]["value"]
            if status is None:
                time.sleep(0.2)
        if script is not None and status == "ok":
            r = b.send("Runtime.evaluate", {"expression": script, "returnByValue": True},
                       tab=tab)
            if results is not None:
                results["value"] = r["result"].get("value")
        png = base64.b64decode(b.send("Page.captureScreenshot", {"format": "png"},
                                      tab=tab)["data"])
        problems = []
        for e in b.events:
            if e.get("sessionId") != tab:
                continue
            p = e.get("params", {})
            if e.get("method") == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                problems.append("exception: " + d.get("exception", {}).get("description", d["text"]))
            elif e.get("method") == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
                problems.append("console." + p["type"] + ": " +
                                " ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
            elif e.get("method") == "Log.entryAdded" and p["entry"]["level"] == "error":
                problems.append("log: " + p["entry"]["text"])
            elif e.get("method") == "Network.requestWillBeSent" and p["request"]["url"] != url:
                problems.append("requested " + p["request"]["url"][:120])
        return status, frames, problems, png
    finally:
        b.send("Target.closeTarget", {"targetId": target})


# ---- PNG: enough of a decoder to count colours ------------------------------------------------

def png_colours(png, limit=64):
    """The number of distinct colours in an 8-bit RGB or RGBA PNG (counting stops at `limit`)."""
    check(png[:8] == b"\x89PNG\r\n\x1a\n", "the screenshot is not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        chunk = png[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour_type = struct.unpack(">IIBB", chunk[:10])
            check(depth == 8 and colour_type in (2, 6), f"unexpected PNG format {depth}/{colour_type}")
            bpp = 3 if colour_type == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    colours = set()
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        if y % 8 == 0:  # every 8th row and column: enough to tell a picture from a blank
            for x in range(0, width, 8):
                colours.add(bytes(line[x * bpp:x * bpp + 3]))
            if len(colours) >= limit:
                return len(colours)
        prev = line
    return len(colours)


# ---- the cases ---------------------------------------------------------------------------------

def gyre(*args, timeout=120):
    p = subprocess.run([GYRE, *map(str, args)], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stderr


def assert_page_ok(path):
    status, frames, problems, png = open_page(path)
    check(not problems, f"{path.name}: " + "; ".join(problems[:5]))
    check(status == "ok", f"{path.name}: the page's self-check says {status!r}")
    check(frames > 0, f"{path.name}: data-gyre-frames is {frames}")
    n = png_colours(png)
    check(n >= 8, f"{path.name}: the screenshot is blank ({n} colours)")
    return frames


def run_page(scene, backend, seconds=None):
    page = TMP / f"{Path(scene).stem}-{backend}.html"
    args = ["run", SCENES / scene, "--backend", backend, "--quiet", "--html", page]
    if seconds is not None:
        args += ["--seconds", seconds]
    code, err = gyre(*args)
    check(code == 0, f"gyre run {scene} --backend {backend} exit {code}: {err}")
    return page


def showcase_pages():
    for backend in BACKENDS:
        page = run_page("showcase.json", backend)
        size = page.stat().st_size
        check(size <= SHOWCASE_MAX_BYTES, f"the showcase page is {size} bytes")
        html = page.read_text()
        check(not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html),
              "the page refers to something outside itself")
        assert_page_ok(page)


def shape_pages():
    # Hull and mesh (level_mesh) on the first adapter; the showcase has spheres, boxes, a plane
    # and a sensor, and spawns a cell with a capsule and a cylinder.
    assert_page_ok(run_page("level_mesh.json", BACKENDS[0], seconds=2))


def scene_without_bodies():
    """A scene with no physics entity still gives a page of its frames that passes its check."""
    scene, page = TMP / "empty.json", TMP / "empty.html"
    scene.write_text('{"format": "gyre.scene", "version": 1, "entities": [{"name": "marker"}]}')
    code, err = gyre("run", scene, "--seconds", "1", "--quiet", "--html", page)
    check(code == 0, f"exit {code}: {err}")
    status, frames, problems, _ = open_page(page)
    check(status == "ok" and frames > 0 and not problems, f"{status}, {frames} frames; {problems}")


def soak_page():
    page = TMP / "soak.html"
    code, err = gyre("soak", SCENES / "soak.json", "--seconds", "2", "--warmup", "0.5",
                     "--statics", "1000", "--props", "50", "--quiet", "--watchdog-ms", "5000",
                     "--max-barrier-p99-us", "1000000", "--max-step-p99-ms", "1000",
                     "--html", page, timeout=60)
    check(code == 0, f"gyre soak exit {code}: {err}")
    html = page.read_text()
    for name in ("barrier wait", "mutation window", "step (CPU)"):
        check(f'"name":"{name}"' in html, f"the soak page has no {name}")
    check('"gate":1000000' in html, "the barrier gate is not on the page")
    assert_page_ok(page)


def replay_page():
    """A real-time run captured, then replayed with --verify and --html: the replay's page passes
    its check and equals the page the run wrote (same frames, events, expects) but for the name
    it shows as the scene (the capture file) and the plotted series: those sample the physics
    thread's own counters whenever the game thread looked, which a replay does not reproduce."""
    cap, run_html, replay_html = TMP / "rt.cap", TMP / "rt-run.html", TMP / "rt-replay.html"
    code, err = gyre("run", SCENES / "box_pile.json", "--backend", BACKENDS[0], "--realtime",
                     "--seconds", "2", "--quiet", "--capture", cap, "--html", run_html)
    check(code == 0, f"gyre run --capture exit {code}: {err}")
    code, err = gyre("replay", cap, "--verify", "--quiet", "--html", replay_html)
    check(code == 0, f"gyre replay --verify --html exit {code}: {err}")
    assert_page_ok(replay_html)
    frames = lambda path: re.sub(r'\["scene","[^"]*"\]|<title>[^<]*</title>|Gyre run: [^<"]*|'
                                 r'"series":\[.*?\],"histograms"', "", path.read_text())
    check(len(frames(replay_html)) > 0 and frames(replay_html) == frames(run_html),
          "the replay's page differs from the run's")


def page_data(path):
    """The JSON document a page carries."""
    m = re.search(r'<script type="application/json" id="gyre-data">(.*?)</script>',
                  path.read_text(), re.S)
    check(m is not None, f"{path.name}: no data element")
    return json.loads(m.group(1))


DIAGNOSTICS = {"bodies": ["awake", "sleeping", "static", "characters"],
               "contacts and events": ["pairs", "points", "events per tick"],
               "body table": ["live", "used", "capacity"],
               "allocator": ["live", "peak"],
               "runtime geometry": ["jobs", "bodies waiting", "most units in a tick"]}


def page_plots_the_diagnostics():
    """A 4 s showcase run: the page carries the 5 Hz diagnostics as series grouped into one plot
    each, sampled about 20 times, with values that agree with each other and with the run's
    report (every body awake, asleep or static; the body table's peak is the run's; allocator
    peak >= live > 0), and the page draws every plot. Without the sampler: no such plots, and
    the page still passes its check."""
    seconds = 4
    page, report = TMP / "diagnostics.html", TMP / "diagnostics.json"
    code, err = gyre("run", SCENES / "showcase.json", "--backend", BACKENDS[0], "--quiet",
                     "--seconds", seconds, "--html", page, "--report", report)
    check(code == 0, f"exit {code}: {err}")
    got = {}
    status, _, problems, _ = open_page(page, "JSON.stringify(gyre.plots())", got)
    check(status == "ok" and not problems, f"{status}; {problems}")
    plots = json.loads(got["value"])
    groups = [*DIAGNOSTICS] if HAS_DIAGNOSTICS else []
    check([p["group"] for p in plots] == [None, *groups] and
          all(p["names"] == DIAGNOSTICS[p["group"]] for p in plots if p["group"] is not None) and
          all(p["drawn"] for p in plots), f"the page's plots: {plots}")
    if not HAS_DIAGNOSTICS:
        check(all(s["group"] is None for s in page_data(page)["series"]),
              "a build without the diagnostics sampler put diagnostics on the page")
        return
    rep = json.loads(report.read_text())
    series = {}
    for s in page_data(page)["series"]:
        if s["group"] is not None:
            series[(s["group"], s["name"])] = s["mean"]
    check(sorted(series) == sorted((g, n) for g, names in DIAGNOSTICS.items() for n in names),
          f"the diagnostics series on the page: {sorted(series)}")
    v = lambda g, n: series[(g, n)]  # noqa: E731
    bins = [b for b in range(len(v("bodies", "awake"))) if v("bodies", "awake")[b] is not None]
    check(5 * seconds - 2 <= len(bins) <= 5 * seconds + 1,
          f"{len(bins)} diagnostics samples in a {seconds} s run (5 Hz)")
    for (g, n), values in series.items():
        check([b for b in range(len(values)) if values[b] is not None] == bins,
              f"{g} {n} is sampled in other bins than the rest")
    peak_before = 0
    for b in bins:
        at = {key: values[b] for key, values in series.items()}
        live = at[("body table", "live")]
        check(at[("bodies", "awake")] + at[("bodies", "sleeping")] + at[("bodies", "static")] == live,
              f"bin {b}: awake, sleeping and static do not add up to the {live} bodies: {at}")
        check(0 < live <= at[("body table", "used")] <= at[("body table", "capacity")],
              f"bin {b}: body table {at}")
        check(0 <= at[("bodies", "characters")] <= live, f"bin {b}: characters {at}")
        check(0 <= at[("contacts and events", "points")] and
              0 <= at[("contacts and events", "pairs")] and
              0 <= at[("contacts and events", "events per tick")], f"bin {b}: contacts {at}")
        check(all(at[("runtime geometry", n)] >= 0 for n in DIAGNOSTICS["runtime geometry"]),
              f"bin {b}: runtime geometry {at}")
        bytes_live, bytes_peak = at[("allocator", "live")], at[("allocator", "peak")]
        check(0 < bytes_live <= bytes_peak and bytes_peak >= peak_before,
              f"bin {b}: allocator live {bytes_live}, peak {bytes_peak} (before {peak_before})")
        peak_before = bytes_peak
    last = {key: values[bins[-1]] for key, values in series.items()}
    check(max(v("body table", "live")[b] for b in bins) == rep["counters"]["bodies_peak"],
          f"the body table's peak on the page is not the report's {rep['counters']['bodies_peak']}")
    # Trigger bodies do not move: the physics counts them with the static ones.
    kinds = [e.get("body") for e in rep["entities"]]
    statics = sum(1 for k in kinds if k in ("Static", "Trigger"))
    movable = sum(1 for k in kinds if k in ("Dynamic", "Kinematic"))
    check(last[("bodies", "static")] == statics and
          last[("bodies", "awake")] + last[("bodies", "sleeping")] == movable,
          f"static, awake and sleeping bodies at the end: {last}; the report has {statics} static "
          f"or trigger and {movable} dynamic or kinematic")
    check(max(v("contacts and events", "pairs")[b] for b in bins) > 0, "no contact pair sampled")


def page_holds_the_trace_and_events():
    """What the page decoded equals the run's --trace and --events within the page's units:
    positions 0.1 mm, velocities 1 mm/s, rotations 1/32767 (either sign), contact points 1 mm,
    normals 1/127."""
    page, trace, events = TMP / "same.html", TMP / "same.csv", TMP / "same.jsonl"
    code, err = gyre("run", SCENES / "showcase.json", "--backend", BACKENDS[0], "--quiet",
                     "--seconds", "4", "--html", page, "--trace", trace, "--events", events)
    check(code == 0, f"exit {code}: {err}")
    rows = [line.split(",") for line in trace.read_text().splitlines()[1:]]
    ticks = sorted({int(r[0]) for r in rows})
    probe = [t for t in ticks if t % 17 == 0] + [ticks[-1]]
    wanted = [(r[2], int(r[0])) for r in rows if int(r[0]) in probe]
    got = {}
    status, _, problems, _ = open_page(page, "JSON.stringify({events: gyre.events(), states: " +
                                       json.dumps(wanted) + ".map(([n, f]) => gyre.state(n, f))})",
                                       got)
    check(status == "ok" and not problems, f"{status}; {problems}")
    decoded = json.loads(got["value"])
    states = iter(decoded["states"])
    for r in rows:
        if int(r[0]) not in probe:
            continue
        s = next(states)
        check(s is not None, f"{r[2]} is absent at tick {r[0]}")
        x, q, v = list(map(float, r[3:6])), list(map(float, r[6:10])), list(map(float, r[10:13]))
        near = lambda a, b, tol: all(abs(i - j) <= tol for i, j in zip(a, b))  # noqa: E731
        check(near(s[0:3], x, 6e-5) and near(s[3:6], v, 6e-4) and
              (near(s[6:10], q, 1e-4) or near(s[6:10], [-c for c in q], 1e-4)),
              f"{r[2]} at tick {r[0]}: page {s}, trace {r[3:]}")
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    check(len(lines) == len(decoded["events"]),
          f"{len(lines)} events in the file, {len(decoded['events'])} on the page")
    for want, have in zip(lines, decoded["events"]):
        check((want["tick"], want["kind"], want["a"], want["b"]) ==
              (have["tick"], have["kind"], have["a"], have["b"]), f"{want} vs {have}")
        if want["point"] is not None:
            check(all(abs(a - b) <= 6e-4 for a, b in zip(want["point"], have["point"])) and
                  all(abs(a - b) <= 0.5 / 127 + 1e-9 for a, b in zip(want["normal"], have["normal"])),
                  f"{want} vs {have}")


def interrupted_realtime_run_keeps_its_page():
    """SIGINT ends a real-time run with a complete page of the run so far (exit 130): whenever the
    signal lands once the physics thread runs (a second thread: the run has its signal handlers
    by then), the page holds at least the first frame and passes its own check."""
    page = TMP / "interrupted.html"
    p = subprocess.Popen([GYRE, "run", SCENES / "showcase.json", "--realtime", "--seconds", "60",
                          "--quiet", "--html", page], stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: threads(p.pid) >= 2 or p.poll() is not None, "the physics thread")
        check(p.poll() is None, f"exited before the signal (exit {p.returncode})")
    except Failure:
        p.kill()
        p.communicate()
        raise
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    check(p.returncode == 130, f"exit {p.returncode}: {err}")
    check(not list(TMP.glob("interrupted.html.tmp-*")), "a temporary file was left behind")
    assert_page_ok(page)


def damaged_pages_report_errors():
    page = run_page("showcase.json", BACKENDS[0], seconds=1)
    html = page.read_text()
    # Frame data cut short: decoding must fail and say so.
    truncated = TMP / "truncated.html"
    m = re.search(r'"frames":"([A-Za-z0-9+/=]{16,})"', html)
    check(m is not None, "no frame data found in the page")
    truncated.write_text(html[:m.start(1)] + m.group(1)[:8] + html[m.end(1):])
    status, _, _, _ = open_page(truncated)
    check(status is not None and status.startswith("error"),
          f"a page with truncated frames says {status!r}")
    # A collider whose geometry is missing cannot be drawn: the self-check must notice.
    undrawable = TMP / "undrawable.html"
    bad = re.sub(r'"shape":"box"', '"shape":"hull","geometry":99,"x":"box"', html, count=1)
    check(bad != html, "no box collider found in the page")
    undrawable.write_text(bad)
    status, _, _, _ = open_page(undrawable)
    check(status is not None and status.startswith("error") and "not drawn" in status,
          f"a page with an undrawable entity says {status!r}")


def usage():
    code, err = gyre("run", SCENES / "showcase.json", "--html")
    check(code == 2 and "--html needs a file name" in err, f"exit {code}: {err}")
    code, err = gyre("run", SCENES / "showcase.json", "--html", "-", "--report", "-")
    check(code == 2 and "stdout" in err, f"exit {code}: {err}")
    code, err = gyre("soak", SCENES / "soak.json", "--html")
    check(code == 2 and "--html needs a file name" in err, f"exit {code}: {err}")
    code, err = gyre("replay", TMP / "none.cap", "--html")
    check(code == 2 and "--html needs a file name" in err, f"exit {code}: {err}")
    # An unwritable page: exit 2 before running.
    code, err = gyre("run", SCENES / "showcase.json", "--html", TMP / "no" / "such" / "p.html")
    check(code == 2 and "--html" in err, f"exit {code}: {err}")


def main():
    global BROWSER, TMP
    if CHROMIUM is None:
        print("chromium is not installed: skipped (apt-get install chromium)")
        return 77
    TMP = Path(tempfile.mkdtemp(prefix="gyre-pages-"))
    BROWSER = Browser()
    try:
        return run_cases([
            ("test_pages_usage", usage),
            ("test_pages_showcase_every_adapter", showcase_pages),
            ("test_pages_hull_and_mesh", shape_pages),
            ("test_pages_scene_without_bodies", scene_without_bodies),
            ("test_pages_soak", soak_page),
            ("test_pages_hold_the_trace_and_events", page_holds_the_trace_and_events),
            ("test_pages_plot_the_diagnostics", page_plots_the_diagnostics),
            ("test_pages_replay", replay_page),
            ("test_pages_interrupted_realtime_run", interrupted_realtime_run_keeps_its_page),
            ("test_pages_damaged_report_errors", damaged_pages_report_errors),
        ])
    finally:
        BROWSER.close()
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
