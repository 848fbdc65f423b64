/* Fuzz entry points shared by the libFuzzer targets (tests/fuzz/fuzz_<name>.c) and the plain
 * regression replay (tests/reliability/test_fuzz_regressions.c), so a corpus file exercises the
 * same code with or without libFuzzer.
 *
 * Each takes arbitrary bytes, runs them through one input boundary with a counting allocator and
 * checks what must hold for any input: no crash, no leak (every block freed), and on failure a
 * clear error. It returns NULL when everything held, else a static message naming the broken
 * invariant (the libFuzzer targets abort with it, the replay fails the test). Sanitizer builds
 * catch memory errors on top. */
#ifndef GYRE_FUZZ_ENTRY_H
#define GYRE_FUZZ_ENTRY_H

#include <stddef.h>
#include <stdint.h>

/* gy_obj_parse on the bytes. */
const char *gy_fuzz_obj(const uint8_t *data, size_t size);

/* gy_scene_load_string on the bytes; relative paths resolve against `data_dir` (the folder with
 * the OBJ files the seeds name). Inputs whose strings could name a device or kernel file (any
 * string containing "dev/", "proc/", "sys/" or "fd/") are skipped, so the loader never blocks on
 * a pipe or reads a device. */
const char *gy_fuzz_scene(const uint8_t *data, size_t size, const char *data_dir);

/* The physics side's command decoding: the bytes are cut into 64-byte gy_command records (a
 * short tail is zero-padded) and fed through the physics thread's real drain/apply path of a
 * lockstep subsystem bootstrapped with a small scene (resources, bodies of every motion type,
 * joints), which then runs two ticks, stops and is destroyed.
 *   - Bit 0 of a record's `flags` picks the ring (0 lifecycle, 1 mutate); bit 1 seals the batch
 *     after the record (so inputs span several batches; small rings force staging too).
 *   - GY_COMMAND_PAYLOAD is cleared: a payload is an owned pointer into this process, which raw
 *     bytes can never legitimately hold, so the decoder is fuzzed on everything else, including
 *     payload-carrying command types that arrive without their payload. */
const char *gy_fuzz_commands(const uint8_t *data, size_t size);

/* The capture reader (gy_capture_read) on the bytes as they are, then on the bytes with a valid
 * end marker and checksum appended (so the fuzzer reaches the records behind the checksum). A
 * refused input must leave nothing allocated and give a message; an accepted one has its batches
 * walked and fed through a lockstep subsystem in replay mode (gy_physics_replay_command checks
 * every payload), a tick per batch. */
const char *gy_fuzz_capture(const uint8_t *data, size_t size);

#endif
