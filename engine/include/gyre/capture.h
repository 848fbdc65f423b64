/* Capture and replay of a World's thread boundary (docs/embedding.md, docs/cli.md).
 *
 * A capture file is a header (magic, format version, a fingerprint of the build's struct layout),
 * the records of gyre/physics/capture_stream.h — META, the files the host attached, then FRAME,
 * BATCH and STATE records as they happened, then END — and a trailer holding a checksum of
 * everything before it. Replaying it in a lockstep World applies every recorded batch before the
 * tick it was applied before in the original run, so a real-time run replays exactly.
 *
 * Game thread only, like the World. */
#ifndef GYRE_CAPTURE_H
#define GYRE_CAPTURE_H

#include "gyre/physics/capture_stream.h"
#include "gyre/world.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GY_CAPTURE_FORMAT_VERSION 1u

/* A file stored in the capture (copied when the capture begins). */
typedef struct gy_capture_attachment {
    uint32_t role;    /* gy_capture_file_role */
    const char *name; /* non-empty, at most 4,096 bytes */
    const void *data;
    size_t size;
} gy_capture_attachment;

typedef struct gy_world_capture_def {
    /* Receives the file's bytes in order (required). Called on the game thread, from
     * gy_world_capture_begin, every gy_world_tick and gy_world_capture_end. */
    gy_capture_write_fn write;
    void *write_ctx;
    uint32_t buffer_bytes; /* between the threads; 0 = 16 MiB (gy_physics_capture_def) */
    const gy_capture_attachment *files;
    uint32_t file_count;
} gy_world_capture_def;

/* Zero: no writer, default buffer, no files. */
gy_world_capture_def gy_default_world_capture_def(void);

/* Starts a capture: writes the header, META and the files, then records every tick. Begin before
 * gy_world_start_physics (or while it runs in lockstep) so the capture sees every batch from the
 * first tick. GY_ERR_INVALID_ARGUMENT (no writer, a bad file entry), GY_ERR_MISUSE (already
 * capturing; real-time physics already running), the writer's error,
 * GY_ERR_OUT_OF_MEMORY. */
gy_result gy_world_capture_begin(gy_world *world, const gy_world_capture_def *def);

/* Ends the capture: the rest of the records, END and the trailer. GY_ERR_CAPACITY when the
 * buffer between the threads overflowed (*overflow_tick, optional: the tick whose record did not
 * fit; no trailer is written, so the file is refused as truncated), the writer's first error,
 * GY_ERR_MISUSE when not capturing. */
gy_result gy_world_capture_end(gy_world *world, uint64_t *overflow_tick);

/* Whether a capture is open. */
bool gy_world_capturing(const gy_world *world);

/* ---- reading --------------------------------------------------------------------------------- */

/* A stored file. */
typedef struct gy_capture_file_view {
    uint32_t role;
    const char *name; /* name_size bytes, not NUL-terminated */
    size_t name_size;
    const unsigned char *data;
    size_t size;
} gy_capture_file_view;

/* A batch: `count` commands in `size` bytes from `commands` (gy_capture_batch_next walks them). */
typedef struct gy_capture_batch_view {
    uint64_t tick, seq;
    uint32_t count;
    const unsigned char *commands;
    size_t size;
} gy_capture_batch_view;

typedef struct gy_capture_state_view {
    uint64_t tick, hash;
    uint32_t count;
    const gy_capture_body *bodies; /* in store-index order */
} gy_capture_state_view;

/* A checked capture, read whole. Arrays are in file order; ticks never go back within each. */
typedef struct gy_capture {
    gy_capture_meta meta;
    gy_capture_end end;
    const gy_capture_file_view *files;
    uint32_t file_count;
    const gy_capture_frame *frames;
    uint32_t frame_count;
    const gy_capture_batch_view *batches;
    uint32_t batch_count;
    const gy_capture_state_view *states;
    uint32_t state_count;
} gy_capture;

/* Checks and indexes `size` bytes of a capture file (copied). On failure *out is NULL and
 * `error` receives one line naming what is wrong and at which byte. GY_ERR_PARSE (not a capture,
 * damaged, truncated, inconsistent), GY_ERR_UNSUPPORTED (another format version or struct
 * layout), GY_ERR_OUT_OF_MEMORY, GY_ERR_INVALID_ARGUMENT (NULL). */
gy_result gy_capture_read(const void *bytes, size_t size, const gy_allocator *allocator,
                          gy_capture **out, char *error, size_t error_size);

void gy_capture_free(gy_capture *capture);

/* One command of a batch; *cursor starts at 0 (it is a byte offset). False after the last. */
bool gy_capture_batch_next(const gy_capture_batch_view *batch, size_t *cursor, uint32_t *ring,
                           const gy_command **cmd, const void **payload, size_t *payload_size);

/* Parses the STATE records in `size` bytes of stream records (no header), calling fn for each;
 * other records are skipped. Returns the bytes consumed (whole records only). For comparing a
 * replay's own capture as it is written. */
size_t gy_capture_scan_states(const void *bytes, size_t size,
                              void (*fn)(void *ctx, const gy_capture_state_view *state), void *ctx);

/* ---- replay ---------------------------------------------------------------------------------- */

/* Makes a lockstep World, started on the same scene, replay `capture` (kept by the caller until
 * gy_world_replay_end): from now on each gy_world_tick runs the physics up to the tick of the
 * capture's next frame, applying every recorded batch before its tick, and the World's own
 * commands are checked but not sent. GY_ERR_MISUSE (real time, stopped, already replaying). A
 * replaying World may capture too (its own stream is what `gyre replay --verify` compares),
 * GY_ERR_UNSUPPORTED (another backend or step rate), GY_ERR_INVALID_ARGUMENT. */
gy_result gy_world_replay_begin(gy_world *world, const gy_capture *capture);

/* Frames of the capture not yet replayed. */
uint32_t gy_world_replay_frames_left(const gy_world *world);

/* Runs the physics to the capture's end tick (after the last frame), applying its batches.
 * GY_ERR_MISUSE when not replaying; errors as gy_world_tick. */
gy_result gy_world_replay_finish(gy_world *world);

/* Leaves replay mode: the World's commands flow again (teardown needs them). */
gy_result gy_world_replay_end(gy_world *world);

/* Why the last replay call failed (a batch the physics refused), or "". */
const char *gy_world_replay_message(const gy_world *world);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_CAPTURE_H */
