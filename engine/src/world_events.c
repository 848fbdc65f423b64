/* Replies from the physics thread, and collision events as the game sees them.
 *
 * The World keeps the set of touching collider pairs it has reported (ENTER seen, EXIT not yet),
 * keyed by the pair's body generations (never issued twice) and collider indices. ENTER and EXIT
 * travel as essential replies (never dropped by a flood; only STAY is), and the set guarantees
 * pairing on the game side whatever else happens on the physics side: an ENTER for a known pair is
 * a STAY, a STAY for an unknown pair (its ENTER lost to an out-of-memory overflow) is reported as
 * the ENTER, an EXIT for an unknown pair is ignored, and when a body goes away (removed, switched
 * off, updated, destroyed, physics stopped) the World itself reports EXIT for each of its pairs at
 * once — the physics thread's own EXITs for them, arriving later, then find no pair and are
 * ignored. */
#include <assert.h>
#include <string.h>

#include "world_internal.h"

/* ---- the pair set ---------------------------------------------------------------------------- */

static gy_map_key pair_key(uint32_t gen_a, uint32_t gen_b, uint16_t col_a, uint16_t col_b)
{
    return gy_map_key_pair(((uint64_t)gen_a << 32) | gen_b, ((uint64_t)col_a << 16) | col_b);
}

static gy_map_key pair_key_of(const gy_w_pair *p)
{
    return pair_key(p->gen_a, p->gen_b, p->col_a, p->col_b);
}

/* The dense index of a known pair, or GY_W_NONE. */
static uint32_t pair_find(const gy_world *w, gy_map_key key)
{
    const uint64_t *d = gy_hash_map_find(&w->pair_index, key);
    return d != NULL ? (uint32_t)*d : GY_W_NONE;
}

static gy_result pair_reserve(gy_world *w, uint32_t need)
{
    gy_result r =
        gy_array_reserve(w->alloc, (void **)&w->pairs, &w->pair_capacity, need, sizeof *w->pairs);
    if (r != GY_OK)
        return r;
    w->pair_index.allocator = w->alloc;
    return gy_hash_map_reserve(&w->pair_index, need);
}

/* The body of `e` while its generation is still `gen` (pairs only exist between live bodies). */
static gy_w_body *pair_body(const gy_world *w, gy_entity e, uint32_t gen)
{
    gy_w_body *c = gy_w_body_of(w, gy_w_entity_slot(w, e));
    return c != NULL && c->ref.generation == gen ? c : NULL;
}

/* Counts the pair on both bodies (+1 on add, -1 on removal). */
static void pair_count_on_bodies(gy_world *w, const gy_w_pair *p, int delta)
{
    gy_w_body *a = pair_body(w, p->ent_a, p->gen_a), *b = pair_body(w, p->ent_b, p->gen_b);
    assert(a != NULL && b != NULL);
    if (a != NULL)
        a->pairs = (uint32_t)((int64_t)a->pairs + delta);
    if (b != NULL)
        b->pairs = (uint32_t)((int64_t)b->pairs + delta);
}

static void pair_remove(gy_world *w, uint32_t d)
{
    pair_count_on_bodies(w, &w->pairs[d], -1);
    gy_hash_map_remove(&w->pair_index, pair_key_of(&w->pairs[d]), NULL);
    uint32_t last = w->pair_count - 1u;
    if (d != last) {
        w->pairs[d] = w->pairs[last];
        *gy_hash_map_find(&w->pair_index, pair_key_of(&w->pairs[d])) = d;
    }
    w->pair_count = last;
}

/* ---- dispatch -------------------------------------------------------------------------------- */

static void queue_pending(gy_world *w, gy_collision_fn fn, void *ctx, const gy_collision_event *ev)
{
    if (fn == NULL)
        return;
    if (w->pending_count == w->pending_capacity &&
        gy_array_reserve(w->alloc, (void **)&w->pending, &w->pending_capacity,
                         w->pending_count + 1u, sizeof *w->pending) != GY_OK) {
        gy_log(w->logger, GY_LOG_ERROR, "world: out of memory: a collision EXIT was lost");
        return;
    }
    gy_w_pending *p = &w->pending[w->pending_count++];
    p->fn = fn;
    p->ctx = ctx;
    p->event = *ev;
}

void gy_w_flush_pending(gy_world *w)
{
    /* Callbacks may queue more (destroying entities): the loop sees them. */
    for (uint32_t i = 0; i < w->pending_count; i++) {
        gy_w_pending p = w->pending[i];
        w->stats.events_dispatched++;
        p.fn(p.ctx, w, &p.event);
    }
    w->pending_count = 0;
}

typedef struct side {
    gy_collision_fn fn;
    void *ctx;
} side;

static side callback_of(const gy_world *w, gy_entity e)
{
    side s = {NULL, NULL};
    uint32_t slot = gy_w_entity_slot(w, e);
    const gy_w_entity_cold *cold = slot != GY_W_NONE ? gy_w_cold_of(w, slot) : NULL;
    if (cold != NULL) {
        s.fn = cold->on_collision;
        s.ctx = cold->collision_ctx;
    }
    return s;
}

/* The event from A's side and from B's. */
static void views(const gy_w_pair *p, gy_collision_kind kind, double ni, double ti, bool synth,
                  gy_collision_event *a, gy_collision_event *b)
{
    a->kind = kind;
    a->self = p->ent_a;
    a->other = p->ent_b;
    a->self_collider = p->col_a;
    a->other_collider = p->col_b;
    a->point = p->point;
    a->normal = p->normal;
    a->penetration = p->penetration;
    a->normal_impulse = ni;
    a->tangent_impulse = ti;
    a->tick = p->tick;
    a->synthesized = synth;
    *b = *a;
    b->self = p->ent_b;
    b->other = p->ent_a;
    b->self_collider = p->col_b;
    b->other_collider = p->col_a;
    b->normal = gy_v3_neg(p->normal);
}

/* Calls both sides now. Both callbacks are looked up first, so a side destroyed by the other's
 * callback still gets this event (its EXIT follows from the destroy). */
static void dispatch_now(gy_world *w, const gy_w_pair *p, gy_collision_kind kind, double ni,
                         double ti)
{
    side sa = callback_of(w, p->ent_a), sb = callback_of(w, p->ent_b);
    if (sa.fn == NULL && sb.fn == NULL)
        return;
    gy_collision_event a, b;
    views(p, kind, ni, ti, false, &a, &b);
    if (sa.fn != NULL) {
        w->stats.events_dispatched++;
        sa.fn(sa.ctx, w, &a);
    }
    if (sb.fn != NULL) {
        w->stats.events_dispatched++;
        sb.fn(sb.ctx, w, &b);
    }
}

/* Queues the synthesized EXIT of the pair at dense index `d` and forgets the pair. */
static void synthesize_exit(gy_world *w, uint32_t d)
{
    gy_w_pair p = w->pairs[d];
    pair_remove(w, d);
    side sa = callback_of(w, p.ent_a), sb = callback_of(w, p.ent_b);
    gy_collision_event a, b;
    views(&p, GY_COLLISION_EXIT, 0.0, 0.0, true, &a, &b);
    queue_pending(w, sa.fn, sa.ctx, &a);
    queue_pending(w, sb.fn, sb.ctx, &b);
    w->stats.exits_synthesized++;
}

void gy_w_pairs_body_released(gy_world *w, gy_w_body *c)
{
    uint32_t generation = c->ref.generation;
    for (uint32_t d = w->pair_count; c->pairs > 0 && d-- > 0;) {
        if (d >= w->pair_count)
            continue;
        const gy_w_pair *p = &w->pairs[d];
        if (p->gen_a != generation && p->gen_b != generation)
            continue;
        synthesize_exit(w, d);
    }
    assert(c->pairs == 0);
}

void gy_w_pairs_clear(gy_world *w)
{
    while (w->pair_count > 0)
        synthesize_exit(w, w->pair_count - 1u);
}

static void set_geometry(gy_w_pair *p, const gy_physics_collision *e)
{
    p->point = gy_v3(e->point[0], e->point[1], e->point[2]);
    p->normal = gy_v3(e->normal[0], e->normal[1], e->normal[2]);
    p->penetration = e->penetration;
    p->tick = e->tick;
}

static void handle_collision(gy_world *w, const gy_reply *r)
{
    const gy_physics_collision *e = gy_reply_as_collision(r);
    gy_map_key key = pair_key(e->generation_a, e->generation_b, e->collider_a, e->collider_b);
    uint32_t d = pair_find(w, key);
    if (r->type == GY_PHYSICS_REPLY_COLLISION_EXIT) {
        if (d == GY_W_NONE)
            return; /* already reported (the World's own EXIT) or never entered */
        gy_w_pair p = w->pairs[d];
        set_geometry(&p, e);
        pair_remove(w, d);
        dispatch_now(w, &p, GY_COLLISION_EXIT, 0.0, 0.0);
        return;
    }
    if (d != GY_W_NONE) {
        gy_w_pair *q = &w->pairs[d];
        set_geometry(q, e);
        gy_w_pair p = *q;
        dispatch_now(w, &p, GY_COLLISION_STAY, e->normal_impulse, e->tangent_impulse);
        return;
    }
    const gy_w_body *a = gy_w_body_by_ref(w, (gy_physics_body_ref){r->key, e->generation_a});
    const gy_w_body *b = gy_w_body_by_ref(w, (gy_physics_body_ref){e->index_b, e->generation_b});
    if (a == NULL || b == NULL) {
        w->stats.replies_stale++;
        return;
    }
    if (pair_reserve(w, w->pair_count + 1u) != GY_OK) {
        gy_log(w->logger, GY_LOG_ERROR, "world: out of memory: a collision ENTER was lost");
        return;
    }
    gy_w_pair *p = &w->pairs[w->pair_count];
    memset(p, 0, sizeof *p);
    p->gen_a = e->generation_a;
    p->gen_b = e->generation_b;
    p->col_a = e->collider_a;
    p->col_b = e->collider_b;
    p->ent_a = gy_w_entity_handle(w, gy_w_body_slot(w, a));
    p->ent_b = gy_w_entity_handle(w, gy_w_body_slot(w, b));
    set_geometry(p, e);
    /* Reserved above: storing the new key cannot fail. */
    gy_result stored = gy_hash_map_put(&w->pair_index, key, w->pair_count);
    assert(stored == GY_OK);
    (void)stored;
    w->pair_count++;
    pair_count_on_bodies(w, p, +1);
    gy_w_pair copy = *p;
    dispatch_now(w, &copy, GY_COLLISION_ENTER, e->normal_impulse, e->tangent_impulse);
}

/* ---- replies --------------------------------------------------------------------------------- */

static const char *entity_name(const gy_world *w, const gy_w_body *c)
{
    return gy_w_entity_name(w, gy_w_body_slot(w, c));
}

static void on_reply(void *ctx, const gy_reply *r)
{
    gy_world *w = ctx;
    w->stats.replies_handled++;
    switch (r->type) {
    case GY_PHYSICS_REPLY_BODY_ASSIGNED: {
        const gy_physics_body_reply *b = gy_reply_as_body(r);
        gy_w_body *c = gy_w_body_by_ref(w, (gy_physics_body_ref){r->key, b->body_generation});
        if (c == NULL) {
            w->stats.replies_stale++;
            break;
        }
        c->assigned = true;
        c->body = b->body;
        break;
    }
    case GY_PHYSICS_REPLY_CREATE_FAILED: {
        const gy_physics_failure_reply *f = gy_reply_as_failure(r);
        if (f->kind == GY_PHYSICS_OBJECT_JOINT) {
            gy_w_joint_failed(w, (gy_physics_joint_ref){r->key, f->body_generation});
        } else if (f->kind == GY_PHYSICS_OBJECT_RESOURCE) {
            gy_w_geometry_failed(w, (gy_physics_resource_ref){r->key, f->body_generation},
                                 (gy_result)f->result);
        } else {
            gy_w_body *c = gy_w_body_by_ref(w, (gy_physics_body_ref){r->key, f->body_generation});
            if (c == NULL) {
                w->stats.replies_stale++;
                break;
            }
            c->failed = true;
            c->error = (gy_result)f->result;
            gy_log(w->logger, GY_LOG_WARN,
                   "world: entity '%s': body create failed at tick %llu: %s", entity_name(w, c),
                   (unsigned long long)f->tick, gy_result_message(c->error));
        }
        break;
    }
    case GY_PHYSICS_REPLY_JOINT_BROKEN:
        gy_w_joint_broken(w,
                          (gy_physics_joint_ref){r->key, gy_reply_as_joint(r)->joint_generation});
        break;
    case GY_PHYSICS_REPLY_JOINT_STATE:
        gy_w_joint_state_reply(
            w, (gy_physics_joint_ref){r->key, gy_reply_as_joint_state(r)->joint_generation},
            gy_reply_as_joint_state(r));
        break;
    case GY_PHYSICS_REPLY_BODY_FAULT: {
        gy_w_body *c = gy_w_body_by_ref(
            w, (gy_physics_body_ref){r->key, gy_reply_as_body(r)->body_generation});
        if (c == NULL) {
            w->stats.replies_stale++;
            break;
        }
        gy_w_body_own_state(w, c); /* faulted until a capture reads the proxy again */
        gy_w_result_of(w, c)->faulted = true;
        gy_log(w->logger, GY_LOG_ERROR,
               "world: entity '%s': the adapter produced a non-finite state; body frozen",
               entity_name(w, c));
        break;
    }
    case GY_PHYSICS_REPLY_CHARACTER_STATE:
        gy_w_character_reply(w, r);
        break;
    case GY_PHYSICS_REPLY_BODY_SLEEP:
    case GY_PHYSICS_REPLY_BODY_WAKE: {
        const gy_physics_body_reply *b = gy_reply_as_body(r);
        gy_w_body *c = gy_w_body_by_ref(w, (gy_physics_body_ref){r->key, b->body_generation});
        if (c == NULL) {
            w->stats.replies_stale++;
            break;
        }
        const gy_w_entity_cold *en = gy_w_cold_of(w, gy_w_body_slot(w, c));
        if (en == NULL || en->on_body_event == NULL)
            break;
        gy_body_event ev = {r->type == GY_PHYSICS_REPLY_BODY_SLEEP ? GY_BODY_EVENT_SLEEP
                                                                   : GY_BODY_EVENT_WAKE,
                            gy_w_entity_handle(w, gy_w_body_slot(w, c)), b->tick};
        en->on_body_event(en->body_event_ctx, w, &ev);
        break;
    }
    case GY_PHYSICS_REPLY_COLLISION_ENTER:
    case GY_PHYSICS_REPLY_COLLISION_STAY:
    case GY_PHYSICS_REPLY_COLLISION_EXIT:
        handle_collision(w, r);
        break;
    default:
        break;
    }
    /* EXITs a callback caused (by destroying or switching off) come right after it. */
    if (w->pending_count > 0)
        gy_w_flush_pending(w);
}

void gy_w_drain(gy_world *w)
{
    bool nested = w->dispatching;
    w->dispatching = true;
    gy_w_flush_pending(w);
    uint32_t taken = 0;
    gy_physics_drain_replies_at_most(w->physics, w->reply_budget, on_reply, w, &taken);
    w->replies_taken += taken;
    if (w->reply_budget != UINT32_MAX)
        w->reply_budget -= taken;
    gy_w_flush_pending(w);
    w->dispatching = nested;
}

void gy_w_events_fini(gy_world *w)
{
    if (w->pairs != NULL)
        gy_free(w->alloc, w->pairs, (size_t)w->pair_capacity * sizeof *w->pairs);
    gy_hash_map_fini(&w->pair_index);
    if (w->pending != NULL)
        gy_free(w->alloc, w->pending, (size_t)w->pending_capacity * sizeof *w->pending);
    w->pairs = NULL;
    w->pending = NULL;
    w->pair_count = w->pair_capacity = 0;
    w->pending_count = w->pending_capacity = 0;
}
