/* Reply queue: the physics thread's answers (body assigned, create failed, joint broken, character
 * state, collision events) travel to the game thread over one bounded single-producer
 * single-consumer ring of fixed-size replies.
 *
 * Threading contract
 *   - Producer (the physics thread): gy_reply_queue_push, gy_reply_queue_commit.
 *   - Consumer (the game thread): gy_reply_queue_pop, gy_reply_queue_drain.
 *   - Any thread: gy_reply_queue_get_stats.
 *   - No thread may be using the queue during _create and _destroy. A role moves to another thread
 *     only across a synchronisation that orders the two (thread create/join).
 *
 * Behaviour
 *   - Replies pushed during a physics tick become visible together at _commit (once per tick),
 *     so the game thread never drains half a tick. Delivery is in push order.
 *   - Capacity: the ring holds `capacity` replies, committed or not. When it is full:
 *       essential replies (assignments, failures, joint breaks, character state) go to an overflow
 *       list on the physics side, grown to its peak (no allocation in steady state; returned once it
 *       has stayed empty for 64 commits), and move into
 *       the ring first, before anything newer, as soon as the game thread has made room — at the
 *       next push or commit. Never dropped (only an allocation failure while growing the overflow
 *       loses one; counted as `lost`, and push returns GY_ERR_OUT_OF_MEMORY).
 *       droppable replies (collision events) are dropped and counted in `dropped` — also while the
 *       overflow is not empty, so nothing overtakes an older essential reply.
 *   - The game thread drains once per tick; what it has not drained stays queued. */
#ifndef GYRE_REPLY_QUEUE_H
#define GYRE_REPLY_QUEUE_H

#include "gyre/core.h"
#include "gyre/physics/reply.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gy_reply_queue gy_reply_queue;

typedef struct gy_reply_queue_def {
    const gy_allocator *allocator; /* NULL: default. Used on the producer (physics) thread. */
    uint32_t capacity; /* replies the ring holds, 1..2^24; rounded up so the ring size is a
                          power of two minus one. 0 = 16,383. */
} gy_reply_queue_def;

/* Counters. Each field is individually current from any thread; not one snapshot. */
typedef struct gy_reply_queue_stats {
    uint32_t capacity;            /* usable ring slots */
    uint64_t pushed;              /* accepted (queued or deferred) */
    uint64_t delivered;           /* handed to the game thread */
    uint64_t dropped;             /* droppable replies dropped: `replies_dropped` */
    uint64_t deferred;            /* essential replies that went through the overflow */
    uint64_t lost;                /* essential replies lost to an allocation failure */
    uint32_t high_water;          /* most replies resident in the ring at once */
    uint32_t overflow_high_water; /* most replies waiting in the overflow at once */
    uint32_t overflow_now;        /* replies waiting in the overflow now */
} gy_reply_queue_stats;

/* Creates a queue. GY_ERR_INVALID_ARGUMENT for a capacity out of range; GY_ERR_OUT_OF_MEMORY. */
gy_result gy_reply_queue_create(const gy_reply_queue_def *def, gy_reply_queue **out);

/* Frees the queue and anything still in it. NULL is ignored. */
void gy_reply_queue_destroy(gy_reply_queue *q);

/* Physics thread: queues a copy of *r (visible at the next commit). GY_OK when queued or
 * deferred; GY_ERR_CAPACITY when a droppable reply was dropped (counted);
 * GY_ERR_OUT_OF_MEMORY when an essential one was lost (counted); GY_ERR_INVALID_ARGUMENT. */
gy_result gy_reply_queue_push(gy_reply_queue *q, const gy_reply *r, gy_reply_class cls);

/* Physics thread: makes every reply pushed so far visible to the game thread, after first moving
 * as much of the overflow into the ring as fits. Call once per tick, after the tick's pushes. */
void gy_reply_queue_commit(gy_reply_queue *q);

/* Game thread: copies up to `max` committed replies into `out`, oldest first; returns the count. */
uint32_t gy_reply_queue_pop(gy_reply_queue *q, gy_reply *out, uint32_t max);

/* Game thread: calls fn for every reply committed before the call (not ones committed while it
 * runs), oldest first, and frees their slots; returns the count. fn must not use this queue. */
uint32_t gy_reply_queue_drain(gy_reply_queue *q, gy_reply_fn fn, void *ctx);

/* Any thread: counters. */
void gy_reply_queue_get_stats(const gy_reply_queue *q, gy_reply_queue_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_REPLY_QUEUE_H */
