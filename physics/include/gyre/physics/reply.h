/* One reply as it crosses from the physics thread to the game thread: what gy_physics_drain_replies
 * hands a host (body assigned, create failed, joint broken, character state, collision events;
 * gyre/physics/physics.h has the typed views). The queue that carries replies is private to the
 * subsystem. */
#ifndef GYRE_PHYSICS_REPLY_H
#define GYRE_PHYSICS_REPLY_H

#include "gyre/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GY_REPLY_SIZE      64u
#define GY_REPLY_BODY_SIZE 56u

/* One reply: plain data, exactly 64 bytes. `type`, `flags` and `key` are the physics thread's
 * (e.g. the reply kind and the body's index); the queue never reads them. */
typedef struct gy_reply {
    uint16_t type;
    uint16_t flags;
    uint32_t key;
    union {
        unsigned char bytes[GY_REPLY_BODY_SIZE];
        uint64_t u64[GY_REPLY_BODY_SIZE / 8];
        double f64[GY_REPLY_BODY_SIZE / 8];
    } body;
} gy_reply;

#if defined(__cplusplus)
static_assert(sizeof(gy_reply) == GY_REPLY_SIZE, "gy_reply must be 64 bytes");
#else
_Static_assert(sizeof(gy_reply) == GY_REPLY_SIZE, "gy_reply must be 64 bytes");
#endif

/* How a reply behaves when the ring is full. */
typedef enum gy_reply_class {
    GY_REPLY_ESSENTIAL = 0, /* never dropped: deferred through the overflow */
    GY_REPLY_DROPPABLE = 1  /* dropped and counted */
} gy_reply_class;

/* Receives one reply on the game thread (gy_physics_drain_replies). */
typedef void (*gy_reply_fn)(void *ctx, const gy_reply *r);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_PHYSICS_REPLY_H */
