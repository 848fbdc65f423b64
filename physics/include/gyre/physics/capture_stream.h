/* The capture stream: what crossed the thread boundary, as a sequence of records. The physics
 * thread writes batch and state records into a byte buffer the game thread drains
 * (gy_physics_capture_*); the World adds its frame records and wraps the stream in a file with a
 * header and a checksum (gyre/capture.h). The layout is the build's own (native byte order and
 * struct layout); the file header carries a fingerprint of it, so a capture only replays on a
 * build that reads it the same way.
 *
 * Every record is a gy_capture_record followed by `size` bytes, `size` a multiple of 8. */
#ifndef GYRE_CAPTURE_STREAM_H
#define GYRE_CAPTURE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "gyre/physics/command.h"

#ifdef __cplusplus
extern "C" {
#endif

/* gy_capture_record.kind */
typedef enum gy_capture_kind {
    GY_CAPTURE_META = 1,  /* gy_capture_meta: first record of a file */
    GY_CAPTURE_FILE = 2,  /* gy_capture_file, then the name, then the data (each padded to 8) */
    GY_CAPTURE_FRAME = 3, /* gy_capture_frame: one game-thread tick of the World */
    GY_CAPTURE_BATCH = 4, /* gy_capture_batch, then `count` commands (gy_capture_command each) */
    GY_CAPTURE_STATE = 5, /* gy_capture_state, then `count` gy_capture_body */
    GY_CAPTURE_END = 6    /* gy_capture_end: last record of a complete file */
} gy_capture_kind;

typedef struct gy_capture_record {
    uint32_t kind; /* gy_capture_kind */
    uint32_t size; /* bytes that follow, a multiple of 8 */
} gy_capture_record;

/* Written by the World at capture begin. */
typedef struct gy_capture_meta {
    uint64_t base_tick; /* the physics tick when the capture began */
    uint32_t step_hz;
    uint32_t realtime;    /* 1: the physics thread paced itself; 0: lockstep */
    uint32_t max_catchup; /* the run's catch-up limit (real time) */
    uint32_t reserved;
    char backend[32]; /* NUL-terminated adapter name */
} gy_capture_meta;

/* A file the run loaded (a scene, an OBJ file) or an application note. */
typedef struct gy_capture_file {
    uint32_t role;      /* gy_capture_file_role */
    uint32_t name_size; /* bytes of the name (no NUL), padded to 8 in the record */
    uint64_t data_size; /* bytes of the data, padded to 8 in the record */
} gy_capture_file;

typedef enum gy_capture_file_role {
    GY_CAPTURE_FILE_SCENE = 1, /* the scene that was run */
    GY_CAPTURE_FILE_DATA = 2,  /* a file the scene named (OBJ, spawned scene) */
    GY_CAPTURE_FILE_NOTE = 3   /* the application's own settings (the CLI: its options) */
} gy_capture_file_role;

/* One gy_world_tick: the frame time the host passed and what the game thread took in during it,
 * which in real time depends on how the two threads met: the publish it read (its tick, and the
 * last batch applied before it: an iteration may apply a batch and publish without a step) and
 * how many replies it took off the queue. */
typedef struct gy_capture_frame {
    double dt;
    uint64_t tick;      /* the tick of the proxies the World had read once the tick was done */
    uint64_t batch_seq; /* the last batch applied before that publish */
    double time_scale;  /* the World's time scale during the tick */
    uint32_t hold;      /* 1: the host held the simulation */
    uint32_t replies;   /* replies taken off the queue during the tick */
} gy_capture_frame;

/* One sealed batch as the physics thread drained it: `tick` is the first tick stepped after it
 * was applied (a batch drained in an iteration that ran no step is applied before the next). */
typedef struct gy_capture_batch {
    uint64_t tick;
    uint64_t seq;   /* its publish sequence */
    uint32_t count; /* commands that follow */
    uint32_t reserved;
} gy_capture_batch;

/* One command of a batch: this header, the 64-byte gy_command (its payload pointer meaningless),
 * then `payload_size` bytes of its payload padded to 8. */
typedef struct gy_capture_command {
    uint32_t ring;         /* gy_command_ring */
    uint32_t payload_size; /* 0: no payload */
} gy_capture_command;

/* The simulation after a publish that followed at least one step: a hash of every live body's
 * pose and velocities as the adapter holds them (doubles), then each body's own. */
typedef struct gy_capture_state {
    uint64_t tick;
    uint64_t hash; /* over the bodies below, in order */
    uint32_t count;
    uint32_t reserved;
} gy_capture_state;

typedef struct gy_capture_body {
    gy_physics_body_ref body;
    uint64_t hash; /* pose (position, rotation) and linear and angular velocity */
} gy_capture_body;

typedef struct gy_capture_end {
    uint64_t tick;   /* the physics tick when the capture ended */
    uint64_t frames; /* frame records written */
} gy_capture_end;

/* Bytes a record with `size` bytes of content takes in the stream. */
static inline size_t gy_capture_padded(size_t size)
{
    return (size + 7u) & ~(size_t)7u;
}

/* Receives stream bytes, in order; a non-GY_OK result stops the capture (reported by
 * gy_physics_capture_end / gy_world_capture_end). */
typedef gy_result (*gy_capture_write_fn)(void *ctx, const void *bytes, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_CAPTURE_STREAM_H */
