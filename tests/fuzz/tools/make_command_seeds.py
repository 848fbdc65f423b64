#!/usr/bin/env python3
"""Writes the seed corpus for fuzz_commands: files of raw 64-byte gy_command records.

Record layout (little-endian, see physics/src/command_queue.h and the physics side's
command set in physics/src/physics_state.h): u16 type, u16 flags, u32 key, then a 56-byte
body; plain commands carry u32 attachment, u32 aux, f64 v[6]. In the fuzz harness, flags bit 0
picks the mutate ring and bit 1 seals the batch after the record (see tests/fuzz/fuzz_entry.h).
The bootstrap scene the harness starts from holds bodies at store 0..4 with attachments 1..5,
resources 1 (hull) and 2 (mesh), joints 1 and 2.

Usage: python3 tests/fuzz/tools/make_command_seeds.py tests/fuzz/corpus/commands
"""
import math
import os
import struct
import sys

CREATE_BODY, RELEASE_BODY, CREATE_JOINT, RELEASE_JOINT, CREATE_RESOURCE, RELEASE_RESOURCE = range(1, 7)
SET_POSE, SET_LIN, SET_ANG, FORCE, TORQUE, IMPULSE, IMPULSE_AT, INTENT, JUMP = range(7, 16)
MUTATE, SEAL, PAYLOAD = 1, 2, 0x8000


def cmd(type_, key, flags=0, attachment=0, aux=0, v=(0, 0, 0, 0, 0, 0)):
    v = list(v) + [0.0] * (6 - len(v))
    return struct.pack('<HHIII6d', type_, flags, key, attachment, aux, *v)


def mut(type_, store, v, aux=0, seal=False):
    return cmd(type_, store, MUTATE | (SEAL if seal else 0), store + 1, aux, v)


def main(out):
    os.makedirs(out, exist_ok=True)
    seeds = {}
    seeds['mutate_every_kind'] = b''.join([
        mut(FORCE, 1, (0, 50, 0)), mut(TORQUE, 2, (0, 1, 0)), mut(IMPULSE, 4, (1, 0, 0)),
        mut(IMPULSE_AT, 1, (0, 1, 0, 1, 2, 0)), mut(SET_LIN, 2, (0, 3, 0)),
        mut(SET_ANG, 4, (0, 0, 2)), mut(SET_POSE, 1, (0, 5, 0, 0, 0, 0), aux=3),
        mut(SET_POSE, 3, (1, 1, 1, 0.0, 0.0, 0.0), aux=0), mut(INTENT, 3, (1, 0, 0), aux=1),
        mut(JUMP, 3, (4,), seal=True)])
    seeds['release_everything'] = b''.join([
        cmd(RELEASE_JOINT, 1), cmd(RELEASE_JOINT, 2), cmd(RELEASE_BODY, 2, attachment=3),
        cmd(RELEASE_BODY, 0, attachment=1), cmd(RELEASE_RESOURCE, 1), cmd(RELEASE_RESOURCE, 2, SEAL),
        mut(FORCE, 2, (0, 1, 0))])
    seeds['stale_targets'] = b''.join([
        cmd(RELEASE_BODY, 9, attachment=9), cmd(RELEASE_BODY, 1, attachment=7),
        cmd(RELEASE_JOINT, 77), cmd(RELEASE_RESOURCE, 0), cmd(RELEASE_RESOURCE, 0xFFFFFFFF),
        cmd(FORCE, 0xFFFFFFFF, MUTATE, 1, 0, (1, 1, 1)), cmd(IMPULSE, 4, MUTATE, 0, 0, (1, 0, 0))])
    junk = struct.pack('<Q', 0xDEADBEEFDEADBEEF)
    seeds['payload_types_without_payload'] = b''.join([
        struct.pack('<HHI', CREATE_BODY, PAYLOAD, 7) + junk + bytes(48),
        struct.pack('<HHI', CREATE_JOINT, PAYLOAD | SEAL, 3) + junk + bytes(48),
        struct.pack('<HHI', CREATE_RESOURCE, PAYLOAD, 3) + junk + bytes(48),
        struct.pack('<HHI', CREATE_BODY, 0, 5) + bytes(56)])
    seeds['unknown_types'] = b''.join([
        cmd(0, 0), cmd(16, 1, MUTATE, 2), cmd(0xFFFF, 2, SEAL), cmd(0x7FFF, 0, MUTATE | SEAL, 1),
        cmd(SET_POSE, 1, 0, 2), cmd(RELEASE_BODY, 1, MUTATE, 2)])
    seeds['non_finite'] = b''.join([
        mut(FORCE, 1, (math.nan, 0, 0)), mut(SET_LIN, 2, (math.inf, 0, 0)),
        mut(SET_POSE, 1, (0, math.nan, 0, 0, 0, 0), aux=3),
        mut(SET_POSE, 2, (0, 1, 0, math.inf, 0, 0), aux=3), mut(JUMP, 3, (-math.inf,)),
        mut(IMPULSE_AT, 4, (1, 0, 0, math.nan, 0, 0))])
    seeds['pose_out_of_range'] = b''.join([
        mut(SET_POSE, 1, (0, 1, 0, 0.9, 0.9, 0.9), aux=3),
        mut(SET_POSE, 2, (0, 1, 0, 0, 0, 0), aux=4),
        mut(SET_POSE, 4, (0, 1, 0, 0, 0, 0), aux=0xFFFFFFFF),
        mut(SET_POSE, 1, (1e300, -1e300, 0, 0, 0, 0), aux=2)])
    flood = []
    for i in range(48):
        flood.append(mut(IMPULSE if i % 3 else FORCE, 1 + i % 4, (0, 0.1 * i, 0), seal=(i % 7 == 6)))
        if i % 5 == 0:
            flood.append(cmd(RELEASE_JOINT, 1 + i % 3, SEAL if i % 10 == 0 else 0))
    seeds['many_batches_small_rings'] = b''.join(flood)
    seeds['short_tail'] = mut(FORCE, 1, (0, 1, 0)) + b'\x0c\x00\x01\x00\x02\x00'
    for name, data in seeds.items():
        with open(os.path.join(out, name + '.bin'), 'wb') as f:
            f.write(data)


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else 'tests/fuzz/corpus/commands')
