#!/usr/bin/env python3
"""Writes the capture seeds of tests/fuzz/corpus/capture/ from short `gyre run --capture` runs:
batches with every kind of command the sample scenes send (impulses, spawned bodies with their
payloads, motors, character intents), plus a truncated and a damaged copy.

    make_capture_seeds.py GYRE SCENES_DIR OUT_DIR"""
import struct
import subprocess
import sys
from pathlib import Path

GYRE, SCENES, OUT = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
RUNS = [("impulse", "compound.json", "0.55"), ("spawn", "streamed_cell.json", "0.3"),
        ("motors", "joints.json", "0.1"), ("character", "character_course.json", "0.1"),
        ("showcase", "showcase.json", "0.05")]

HEADER, TRAILER, FILE = 64, 16, 2


def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def pad(b):
    return b + bytes(-len(b) % 8)


def portable(data):
    """The capture with its stored files named /scenes/NAME instead of where this machine keeps
    them, and the checksum redone."""
    out, at = bytearray(data[:HEADER]), HEADER
    while at < len(data) - TRAILER:
        kind, size = struct.unpack_from("<II", data, at)
        body = data[at + 8:at + 8 + size]
        if kind == FILE:
            role, name_size, data_size = struct.unpack_from("<IIQ", body, 0)
            name = body[16:16 + name_size].decode()
            content = body[16 + ((name_size + 7) & ~7):][:data_size]
            new_name = ("/scenes/" + name.rsplit("/", 1)[-1]).encode() if name.startswith("/") \
                else name.encode()
            body = struct.pack("<IIQ", role, len(new_name), data_size) + pad(new_name) + \
                pad(content)
        out += struct.pack("<II", kind, len(body)) + body
        at += 8 + size
    return bytes(out) + data[-TRAILER:-8] + struct.pack("<Q", fnv1a(out))


OUT.mkdir(parents=True, exist_ok=True)
for name, scene, seconds in RUNS:
    path = OUT / f"{name}.cap"
    subprocess.run([GYRE, "run", SCENES / scene, "--seconds", seconds, "--quiet", "--capture",
                    path], check=False, stdout=subprocess.DEVNULL)
    path.write_bytes(portable(path.read_bytes()))
data = (OUT / "impulse.cap").read_bytes()
(OUT / "truncated.cap").write_bytes(data[: len(data) // 2])
flipped = bytearray(data)
flipped[len(data) // 3] ^= 0x10
(OUT / "flipped.cap").write_bytes(bytes(flipped))
