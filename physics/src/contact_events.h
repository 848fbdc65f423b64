/* Collision-event lifecycle: turns the adapter's touching pairs after each step into per-pair
 * ENTER / STAY / EXIT events.
 *
 * Per collider pair and physics tick there is exactly one ENTER (first tick it touches) or STAY
 * (every later tick it touches), and every ENTER is answered by exactly one EXIT: when the pair is
 * no longer reported, when either body or collider is released, or when the world stops. EXIT
 * carries the pair's last geometry with zero impulses. Adapters stop reporting pairs whose bodies
 * are all asleep or static; such a pair keeps emitting STAY (last geometry, zero impulse) until one
 * of its bodies is awake again and the pair is still missing, or a side is released.
 *
 * Output order is deterministic for a given sequence of calls: events follow the tracker's pair
 * table, where new pairs are appended in the order the adapter first lists them and an exited
 * pair's place is taken by the last pair. Nothing allocates once the tracked pairs plus the
 * adapter's list length have reached their peak, provided the caller clears the event array each
 * tick. Memory: about peak x (160 B pair + 144 B event + 64 to 128 B of hash map + 4 B per
 * contact).
 *
 * Threading: a tracker belongs to the physics thread. No function here is thread-safe; the event
 * array is read on the physics thread (copied into the reply queue), never from another thread. */
#ifndef GYRE_CONTACT_EVENTS_H
#define GYRE_CONTACT_EVENTS_H

#include "gyre/array.h"
#include "gyre/backend/backend.h"
#include "gyre/core.h"
#include "gyre/hash_map.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gy_contact_event_type {
    GY_CONTACT_EVENT_ENTER, /* first tick the pair touches */
    GY_CONTACT_EVENT_STAY,  /* a later tick it touches, or it sleeps in contact */
    GY_CONTACT_EVENT_EXIT   /* it separated or a side was released or the world stopped */
} gy_contact_event_type;

/* One event. `contact` holds the pair's bodies, colliders, the bodies' user data (Gyre's
 * (index << 32) | generation of their refs), is_sensor and geometry in the adapter's a/b
 * orientation. On EXIT and on a sleeping pair's STAY the geometry is the last one reported and both
 * impulses are 0. */
typedef struct gy_contact_event {
    uint64_t tick; /* the physics tick the event belongs to */
    gy_contact_event_type type;
    gy_contact contact;
} gy_contact_event;

/* Answers whether a body is awake. Return false only for bodies known to be asleep or static;
 * return true for anything else, stale handles included, so a pair whose body vanished exits. */
typedef bool (*gy_body_awake_fn)(void *ctx, gy_body_id body);

/* Receives one event as it is produced (on the thread calling the tracker). `ev` is valid for the
 * call only; the callback must not call back into the tracker. */
typedef void (*gy_contact_event_fn)(void *ctx, const gy_contact_event *ev);

/* Zero-initialised means defaults; copied by init. */
typedef struct gy_contact_tracker_def {
    const gy_allocator *allocator; /* NULL: default allocator */
    /* NULL: every body counts as awake, so a pair exits the first tick it is not reported. */
    gy_body_awake_fn body_awake;
    void *body_awake_ctx; /* passed back to body_awake; must outlive the tracker's use of it */
    /* NULL: events are appended to the tracker's event array (gy_contact_tracker_events).
     * Otherwise every event goes to on_event instead, in the same order and at the moment it
     * would have been appended, and the array stays empty: a consumer that turns events into
     * something else saves storing and re-reading each of them. */
    gy_contact_event_fn on_event;
    void *on_event_ctx; /* passed back to on_event */
} gy_contact_tracker_def;

/* Counters for diagnostics. */
typedef struct gy_contact_tracker_stats {
    uint32_t pairs;      /* pairs currently tracked (touching or sleeping in contact) */
    uint32_t peak_pairs; /* highest `pairs` seen */
    uint64_t duplicates; /* contacts dropped because the adapter listed their pair twice */
} gy_contact_tracker_stats;

/* One tracked pair; private to contact_events.c. */
typedef struct gy_contact_pair_ gy_contact_pair_;

/* The tracker. Embed it and treat every field as private. */
typedef struct gy_contact_tracker {
    const gy_allocator *allocator;
    gy_body_awake_fn body_awake;
    void *body_awake_ctx;
    gy_contact_event_fn on_event;
    void *on_event_ctx;
    gy_contact_pair_ *pairs; /* dense, in event order */
    uint32_t pair_count, pair_capacity;
    gy_hash_map index;  /* collider pair (lower handle, higher) -> index in pairs */
    gy_u32_array found; /* per contact of an update: its pair's index, UINT32_MAX for none */
    gy_contact_event *events;
    uint32_t event_count, event_capacity;
    bool has_tick;
    uint64_t last_tick; /* tick of the last update, valid when has_tick */
    gy_contact_tracker_stats stats;
} gy_contact_tracker;

/* Prepares an empty tracker; allocates nothing. `def` may be NULL for defaults. */
void gy_contact_tracker_init(gy_contact_tracker *t, const gy_contact_tracker_def *def);

/* Frees everything without emitting events (call gy_contact_tracker_stop first to pair them);
 * init again before reuse. */
void gy_contact_tracker_fini(gy_contact_tracker *t);

/* Feeds the adapter's touching pairs after the step of `tick` and appends one event per tracked
 * pair: ENTER/STAY for pairs listed (a pair listed more than once counts once: its deepest entry
 * wins, first on ties), STAY for missing pairs whose two bodies are both not awake, EXIT for the
 * other missing pairs. `tick` must be greater than the previous update's (GY_ERR_MISUSE), until
 * gy_contact_tracker_stop resets that. Every contact must name two non-null bodies and two distinct
 * non-null colliders (GY_ERR_INVALID_ARGUMENT) and carry finite numbers (GY_ERR_NON_FINITE).
 * On any error, including GY_ERR_OUT_OF_MEMORY, the tracker and its events are unchanged.
 * Report bodies released before the step (gy_contact_tracker_body_released) first.
 * O(count + pairs). */
gy_result gy_contact_tracker_update(gy_contact_tracker *t, uint64_t tick,
                                    const gy_contact *contacts, uint32_t count);

/* Appends an EXIT (stamped `tick`) for every tracked pair that involves `body` and forgets them.
 * A body with no pairs is fine (GY_OK, no events). GY_ERR_INVALID_ARGUMENT for a null body.
 * O(pairs). */
gy_result gy_contact_tracker_body_released(gy_contact_tracker *t, uint64_t tick, gy_body_id body);

/* The same for one collider removed from a body that stays. */
gy_result gy_contact_tracker_collider_released(gy_contact_tracker *t, uint64_t tick,
                                               gy_collider_id collider);

/* Appends an EXIT (stamped `tick`) for every tracked pair, forgets all pairs and accepts any tick
 * in the next update (a restarted world). Fails only with GY_ERR_OUT_OF_MEMORY, changing nothing.
 */
gy_result gy_contact_tracker_stop(gy_contact_tracker *t, uint64_t tick);

/* The events appended since the last gy_contact_tracker_clear_events, oldest first; `*count`
 * receives their number. Owned by the tracker, valid until its next non-const call. */
const gy_contact_event *gy_contact_tracker_events(const gy_contact_tracker *t, uint32_t *count);

/* Empties the event array, keeping its memory. The physics thread calls it once the tick's events
 * are published; events otherwise accumulate (and the array grows). */
void gy_contact_tracker_clear_events(gy_contact_tracker *t);

/* Current counters. */
gy_contact_tracker_stats gy_contact_tracker_get_stats(const gy_contact_tracker *t);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_CONTACT_EVENTS_H */
