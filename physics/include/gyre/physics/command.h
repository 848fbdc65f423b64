/* One command as it crosses from the game thread to the physics thread: the record capture files
 * hold and replay feeds back (gyre/physics/capture_stream.h, gy_physics_replay_command). The
 * queue that carries commands is private to the subsystem. */
#ifndef GYRE_PHYSICS_COMMAND_H
#define GYRE_PHYSICS_COMMAND_H

#include "gyre/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- body references ------------------------------------------------------------------------- */

/* One body, as every command, reply, proxy and query hit names it. Both parts are issued by the
 * subsystem's game-side pool when the body is created (gy_physics_record_create_body, or the
 * start that rebuilds a bootstrap list). `index` is its slot: the lowest with no live body (below
 * GY_PHYSICS_MAX_STORE_INDEX; proxies are indexed by it, and a released body's slot may hold
 * another body later). `generation` is never 0, and never issued twice by one subsystem, so a ref
 * to a released body never names the body that takes its slot next — a command naming it is
 * refused (GY_ERR_STALE_HANDLE on the game thread, dropped and counted on the physics thread) and
 * a reply about it is rejected. All-zero is the null ref. */
typedef struct gy_physics_body_ref {
    uint32_t index;
    uint32_t generation;
} gy_physics_body_ref;

/* A joint's identity, issued and checked exactly as a body's (its own pool: indices from 1,
 * generations of its own) when the joint is created. All-zero is the null ref. */
typedef struct gy_physics_joint_ref {
    uint32_t index;
    uint32_t generation;
} gy_physics_joint_ref;

/* A mesh or hull resource's identity, issued and checked as a body's (its own pool: indices from
 * 1, generations of its own) when the resource is created. All-zero is the null ref. */
typedef struct gy_physics_resource_ref {
    uint32_t index;
    uint32_t generation;
} gy_physics_resource_ref;

/* A resource ref as a collider's `shape.resource.bits` names it: the index in the low 32 bits, the
 * generation in the high 32, so a collider naming a released slot's old generation is told apart
 * from one naming the resource now live there. */
static inline uint64_t gy_physics_resource_ref_bits(gy_physics_resource_ref ref)
{
    return ((uint64_t)ref.generation << 32) | ref.index;
}

/* The resource ref `bits` (a collider's `shape.resource.bits`) packs; see
 * gy_physics_resource_ref_bits. */
static inline gy_physics_resource_ref gy_physics_resource_ref_of_bits(uint64_t bits)
{
    gy_physics_resource_ref ref = {(uint32_t)bits, (uint32_t)(bits >> 32)};
    return ref;
}

/* ---- commands -------------------------------------------------------------------------------- */

#define GY_COMMAND_SIZE      64u
#define GY_COMMAND_BODY_SIZE 56u
/* The one flag bit the queue owns: the body starts with an owned payload pointer. The other 15
 * bits of `flags` are the command set's. */
#define GY_COMMAND_PAYLOAD 0x8000u

/* One command: plain data, exactly 64 bytes, copied by value into the ring. `type` and `key` are
 * opaque to the queue (the physics thread defines the command set; `key` is typically the target's
 * body index). With GY_COMMAND_PAYLOAD set, body.payload.ptr is an owned pointer and only
 * body.payload.rest (48 bytes) is free for data. */
typedef struct gy_command {
    uint16_t type;
    uint16_t flags;
    uint32_t key;
    union {
        unsigned char bytes[GY_COMMAND_BODY_SIZE];
        uint64_t u64[GY_COMMAND_BODY_SIZE / 8];
        double f64[GY_COMMAND_BODY_SIZE / 8];
        struct {
            void *ptr;
            unsigned char rest[GY_COMMAND_BODY_SIZE - 8];
        } payload;
    } body;
} gy_command;

#if defined(__cplusplus)
static_assert(sizeof(gy_command) == GY_COMMAND_SIZE, "gy_command must be 64 bytes");
#else
_Static_assert(sizeof(gy_command) == GY_COMMAND_SIZE, "gy_command must be 64 bytes");
#endif

/* The two rings. Within a batch, every lifecycle command is delivered before any mutate one. */
typedef enum gy_command_ring {
    GY_COMMAND_LIFECYCLE = 0, /* create/release body, joint, resource */
    GY_COMMAND_MUTATE = 1,    /* transform, velocity, force, torque, impulse, intent, switches */
    GY_COMMAND_RING_COUNT = 2
} gy_command_ring;

/* Attaches an owned payload (non-NULL) to a command before it is recorded. */
static inline void gy_command_set_payload(gy_command *c, void *payload)
{
    c->body.payload.ptr = payload;
    c->flags = (uint16_t)(c->flags | GY_COMMAND_PAYLOAD);
}

/* The command's payload, or NULL when it carries none (or it was taken). */
static inline void *gy_command_payload(const gy_command *c)
{
    return (c->flags & GY_COMMAND_PAYLOAD) ? c->body.payload.ptr : NULL;
}

/* Consumer: takes ownership of the payload (the queue will not release it); NULL if none. */
static inline void *gy_command_take_payload(gy_command *c)
{
    void *p = gy_command_payload(c);
    c->flags = (uint16_t)(c->flags & ~GY_COMMAND_PAYLOAD);
    return p;
}

#ifdef __cplusplus
}
#endif

#endif /* GYRE_PHYSICS_COMMAND_H */
