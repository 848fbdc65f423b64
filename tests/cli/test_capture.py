#!/usr/bin/env python3
"""End-to-end tests of `gyre run --capture` and `gyre replay [--verify]` (docs/cli.md): every
sample scene captured on every adapter, in lockstep and in real time, replays with --verify and
writes the same report, events and trace; an altered batch (its value, its tick) is caught at the
right tick and entity; damaged, truncated and foreign files are refused with exit 2. Run by meson:

    test_capture.py GYRE SCENES_DIR BACKENDS

Prints cmocka-style lines (see cases.py); exits 1 when any case failed. Runs are half a second
of simulated time so the real-time half of the matrix stays near 20 s."""
import json
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from cases import Failure, check, run_cases

GYRE, SCENES = sys.argv[1], Path(sys.argv[2])
BACKENDS = [b for b in sys.argv[3].split(",") if b]
TMP = Path(tempfile.mkdtemp(prefix="gyre-capture-"))
SECONDS = "0.5"
HEADER = 64
TRAILER = 16
FRAME, BATCH, STATE, END = 3, 4, 5, 6


def gyre(*args, timeout=120):
    p = subprocess.run([GYRE, *map(str, args)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=timeout, text=True)
    return p.returncode, p.stderr


def comparable(report_path, realtime):
    """The report without what may differ between a run and its replay: the scene (the replay
    names the capture), timing, and in real time the queue counters."""
    r = json.loads(Path(report_path).read_text())
    r.pop("scene", None)
    r.pop("timing", None)
    if realtime:
        r.pop("counters", None)
    return r


def capture_and_replay(scene, backend, realtime):
    tag = f"{scene.stem}-{backend}-{'rt' if realtime else 'ls'}"
    cap, r1, r2 = TMP / f"{tag}.cap", TMP / f"{tag}-run.json", TMP / f"{tag}-replay.json"
    e1, e2, t1, t2 = (TMP / f"{tag}-{n}" for n in ("run.ev", "replay.ev", "run.csv", "replay.csv"))
    mode = ["--realtime"] if realtime else []
    code, err = gyre("run", scene, "--seconds", SECONDS, "--backend", backend, *mode, "--quiet",
                     "--capture", cap, "--report", r1, "--events", e1, "--trace", t1)
    check(code in (0, 1), f"{tag}: run exited {code}:\n{err}")
    check(cap.exists(), f"{tag}: no capture written:\n{err}")
    code2, err2 = gyre("replay", cap, "--verify", "--report", r2, "--events", e2, "--trace", t2)
    check(code2 == code, f"{tag}: the run exited {code}, the replay {code2}:\n{err2}")
    check("every one the same" in err2, f"{tag}: verify did not pass:\n{err2}")
    check(comparable(r1, realtime) == comparable(r2, realtime), f"{tag}: reports differ")
    check(e1.read_bytes() == e2.read_bytes(), f"{tag}: events differ")
    check(t1.read_bytes() == t2.read_bytes(), f"{tag}: traces differ")


def scenes():
    return sorted(p for p in SCENES.glob("*.json"))


def test_capture_every_scene_replays_in_lockstep():
    for scene in scenes():
        for backend in BACKENDS:
            capture_and_replay(scene, backend, False)


def test_capture_every_scene_replays_from_realtime():
    for scene in scenes():
        for backend in BACKENDS:
            capture_and_replay(scene, backend, True)


# ---- altered captures ---------------------------------------------------------------------------

def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def records(data):
    at = HEADER
    while at < len(data) - TRAILER:
        kind, size = struct.unpack_from("<II", data, at)
        yield kind, at + 8, size
        at += 8 + size


def reseal(data):
    """The bytes with a checksum that fits them again (an edit a checksum alone cannot catch)."""
    body = bytes(data[:-TRAILER])
    return body + data[-TRAILER:-8] + struct.pack("<Q", fnv1a(body))


def compound_capture():
    """compound.json in lockstep: one batch, an impulse on 'floater' applied before tick 31."""
    cap = TMP / "compound.cap"
    code, err = gyre("run", SCENES / "compound.json", "--seconds", "1", "--backend", BACKENDS[0],
                     "--quiet", "--capture", cap)
    check(code == 0, f"run exited {code}:\n{err}")
    data = bytearray(cap.read_bytes())
    batches = [(off, size) for kind, off, size in records(data) if kind == BATCH]
    check(len(batches) == 1, f"{len(batches)} batches, expected the impulse's alone")
    return data, batches[0][0]


def test_capture_altered_batch_value_is_caught_at_its_tick():
    data, off = compound_capture()
    tick = struct.unpack_from("<Q", data, off)[0]
    check(tick == 31, f"the impulse was applied before tick {tick}, expected 31")
    # The first command: 8-byte header, then the gy_command (type, flags, key, body: attachment,
    # aux, then the impulse's doubles).
    cmd = off + 24 + 8
    z = struct.unpack_from("<d", data, cmd + 8 + 8 + 16)[0]
    check(z == 4.0, f"impulse z is {z}, expected 4")
    struct.pack_into("<d", data, cmd + 8 + 8 + 16, 4.5)
    bad = TMP / "value.cap"
    bad.write_bytes(reseal(data))
    code, err = gyre("replay", bad, "--verify", "--quiet")
    check(code == 1, f"exit {code}, expected 1:\n{err}")
    check("tick 31 " in err and "'floater'" in err, f"does not name tick 31 and 'floater':\n{err}")


def test_capture_altered_batch_tick_is_caught_at_the_recorded_tick():
    data, off = compound_capture()
    struct.pack_into("<Q", data, off, 35)
    bad = TMP / "tick.cap"
    bad.write_bytes(reseal(data))
    code, err = gyre("replay", bad, "--verify", "--quiet")
    check(code == 1, f"exit {code}, expected 1:\n{err}")
    check("tick 31 " in err and "'floater'" in err, f"does not name tick 31 and 'floater':\n{err}")


def test_capture_catchup_iteration_replays_with_one_publish():
    # A real-time run that falls behind steps several ticks in one iteration and publishes once,
    # after the last: a body that fell asleep in between is reported at that publish's tick. A
    # lockstep capture of friction_ramp.json (rough_crate falls asleep at tick 34) with the
    # frames and states of ticks 33 to 35 taken out is such a run's capture: the replay must
    # step 33 to 36 in one iteration and report the sleep at tick 36, where the run would have.
    cap, events = TMP / "ramp.cap", TMP / "ramp.ev"
    code, err = gyre("run", SCENES / "friction_ramp.json", "--seconds", "1", "--backend",
                     BACKENDS[0], "--quiet", "--capture", cap, "--events", events)
    check(code == 0, f"run exited {code}:\n{err}")
    sleeps = [e["tick"] for e in map(json.loads, events.read_text().splitlines())
              if e["kind"] == "sleep" and e["a"] == "rough_crate"]
    check(sleeps == [34], f"rough_crate fell asleep at ticks {sleeps}, expected 34")
    data = cap.read_bytes()
    base = struct.unpack_from("<Q", data, HEADER + 8)[0]  # META: base_tick first
    out, frames = bytearray(data[:HEADER]), 0
    for kind, off, size in records(data):
        tick = (struct.unpack_from("<Q", data, off + 8)[0] if kind == FRAME  # after its dt
                else struct.unpack_from("<Q", data, off)[0] if kind == STATE else None)
        if kind == BATCH:
            check(not 33 <= struct.unpack_from("<Q", data, off)[0] - base <= 36,
                  "a batch inside the catch-up iteration")
        if tick is not None and 33 <= tick - base <= 35:
            continue
        record = bytearray(data[off - 8:off + size])
        if kind == FRAME:
            frames += 1
        if kind == END:
            struct.pack_into("<Q", record, 16, frames)
        out += record
    bad = TMP / "catchup.cap"
    bad.write_bytes(reseal(out + data[-TRAILER:]))
    code, err = gyre("replay", bad, "--verify", "--events", events)
    check(code == 0 and "every one the same" in err, f"exit {code}:\n{err}")
    sleeps = [e["tick"] for e in map(json.loads, events.read_text().splitlines())
              if e["kind"] == "sleep" and e["a"] == "rough_crate"]
    check(sleeps == [36], f"the replay reports rough_crate asleep at ticks {sleeps}, expected 36 "
          "(the catch-up iteration's publish)")


# ---- damaged files ------------------------------------------------------------------------------

def refused(data, name, needle):
    bad = TMP / name
    bad.write_bytes(bytes(data))
    code, err = gyre("replay", bad, "--verify")
    check(code == 2, f"{name}: exit {code}, expected 2:\n{err}")
    check(needle in err and str(bad) in err, f"{name}: message lacks '{needle}':\n{err}")


def test_capture_truncated_or_damaged_files_are_refused():
    data, _ = compound_capture()
    for cut in (0, 10, HEADER, len(data) // 2, len(data) - 1):
        refused(data[:cut], f"cut{cut}.cap", "capture")
    refused(data[:len(data) // 2], "half.cap", "truncated")
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x40
    refused(flipped, "flipped.cap", "checksum")
    version = bytearray(data)
    struct.pack_into("<I", version, 8, 99)
    refused(reseal(version), "version.cap", "format version 99")
    refused(b"not a capture at all, just text" * 4, "text.cap", "not a Gyre capture")
    # A record that claims more bytes than the file has, behind a valid checksum.
    huge = bytearray(data)
    struct.pack_into("<I", huge, HEADER + 4, 0x7FFFFFF8)
    refused(reseal(huge), "huge.cap", "beyond the file")


def test_capture_usage_errors():
    code, err = gyre("replay")
    check(code == 2 and "no capture file" in err, f"exit {code}:\n{err}")
    code, err = gyre("replay", TMP / "missing.cap")
    check(code == 2 and "cannot read" in err, f"exit {code}:\n{err}")
    code, err = gyre("replay", "x.cap", "--verfy")
    check(code == 2 and "--verify" in err, f"exit {code}:\n{err}")
    code, err = gyre("run", SCENES / "compound.json", "--capture")
    check(code == 2 and "--capture" in err, f"exit {code}:\n{err}")


CASES = [test_capture_every_scene_replays_in_lockstep,
         test_capture_every_scene_replays_from_realtime,
         test_capture_altered_batch_value_is_caught_at_its_tick,
         test_capture_altered_batch_tick_is_caught_at_the_recorded_tick,
         test_capture_catchup_iteration_replays_with_one_publish,
         test_capture_truncated_or_damaged_files_are_refused,
         test_capture_usage_errors]


def main():
    return run_cases([(case.__name__, case) for case in CASES])


if __name__ == "__main__":
    sys.exit(main())
