/* Publishing: collision bookkeeping after each step, read-back of the bodies that may have
 * changed, the sparse proxy publish, the query snapshot and the replies.
 *
 * Which bodies are read back at a publish (everything else keeps its value unread):
 *   - the awake list (dynamic and kinematic bodies awake at their last read);
 *   - bodies touched since the last publish: created, teleported, pushed, given a velocity, named
 * by a character input or a joint change, woken by a contact or joint with an awake body;
 *   - one lane of sleepers (store_index % 8 == publish % 8), to catch wake-ups nothing reported.
 * Which slots are copied into the buffer being written: those whose value changed since that
 * buffer was last written, found through the per-publish dirty lists of the last 8 publishes (a
 * buffer older than that, or a new world, gets a full rewrite). */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gyre/handle_pool.h"
#include "gyre/math.h"
#include "physics_roster.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Wake propagation along contact and joint chains stops after this many passes (longer chains
 * are finished by the next tick or the sleepers' lane). */
#define MAX_WAKE_PASSES 16u

/* ---- lists ----------------------------------------------------------------------------------- */

/* Moves a body onto list `which` (awake or its lane); its caller has seen it is not there. */
static inline void enlist(gy_phys_sim *p, uint32_t store_index, uint8_t which)
{
    gy_phys_body *e = &p->bodies[store_index];
    assert(e->list != which);
    gy_phys_unlist(p, store_index);
    gy_u32_array *l =
        which == GY_PHYS_LIST_AWAKE ? &p->awake : &p->lanes[store_index % GY_PHYS_LANES];
    uint32_t pos = l->count;
    if (gy_u32_array_push(p->cfg->alloc, l, store_index) != GY_OK) {
        /* Out of memory: keep it unlisted; being touched again or its lane will find it. */
        return;
    }
    e->list = which;
    e->list_pos = pos;
    if (l == &p->awake)
        gy_phys_set32(&p->sh->counters.awake, p->awake.count);
}

void gy_phys_begin_publish(gy_phys_sim *p)
{
    /* A dirty list holds its publish's changes until its turn comes again, GY_PHYS_DIRTY_RING
     * publishes later: it is noted then, and so trimmed GY_PHYS_BURST_QUIET publishes after the
     * burst that filled it, like the others. */
    uint32_t d = (uint32_t)(p->pub_seq % GY_PHYS_DIRTY_RING);
    gy_phys_burst_note(p->cfg->alloc, &p->dirty[d], &p->dirty_burst[d], p->dirty[d].count,
                       GY_PHYS_BURST_QUIET / GY_PHYS_DIRTY_RING - 1u);
    gy_phys_burst_note(p->cfg->alloc, &p->touched, &p->touched_burst, p->touched.count,
                       GY_PHYS_BURST_QUIET);
    gy_phys_burst_note(p->cfg->alloc, &p->disturbed, &p->disturbed_burst, p->disturbed.count,
                       GY_PHYS_BURST_QUIET);
    p->dirty[d].count = 0;
    p->touched.count = 0;
    p->disturbed.count = 0;
    p->disturbed_scanned = 0;
    for (uint32_t i = 0; i < p->retouch.count; i++)
        gy_phys_touch(p, p->retouch.items[i]);
    p->retouch.count = 0;
}

/* ---- events ---------------------------------------------------------------------------------- */

static uint16_t create_list_index(const gy_phys_sim *p, gy_collider_id id)
{
    uint32_t slot = gy_handle_slot(id.bits);
    return slot < p->collider_index_capacity ? p->collider_index[slot] : UINT16_MAX;
}

/* Every field of the reply is written below (the collision fills the whole body), so the event
 * is built in place rather than through gy_phys_reply's zeroing and copying: about a thousand
 * of these go out per tick from a pile. The tracker hands each event over as it produces it
 * (its on_event), so events are never stored and read back in between. */
_Static_assert(sizeof(gy_physics_collision) == GY_REPLY_BODY_SIZE, "collision fills the body");

/* To float, saturated: the tracker admits only finite contacts, but a finite double beyond float
 * range (a deep overlap of huge colliders) would still reach the game as infinity. */
static float to_float(double v)
{
    return (float)fmin(fmax(v, -(double)FLT_MAX), (double)FLT_MAX);
}

void gy_phys_contact_event(void *ctx, const gy_contact_event *ev)
{
    gy_phys_sim *p = ctx;
    const gy_contact *c = &ev->contact;
    p->tick_events++;
    p->events++;
    gy_reply r;
    r.flags = (uint16_t)__atomic_load_n(&p->sh->generation, __ATOMIC_RELAXED);
    gy_physics_collision e;
    e.generation_a = (uint32_t)c->user_a;
    e.generation_b = (uint32_t)c->user_b;
    e.index_b = (uint32_t)(c->user_b >> 32);
    e.collider_a = create_list_index(p, c->collider_a);
    e.collider_b = create_list_index(p, c->collider_b);
    e.tick = (uint32_t)ev->tick;
    e.point[0] = to_float(c->point.x);
    e.point[1] = to_float(c->point.y);
    e.point[2] = to_float(c->point.z);
    e.normal[0] = to_float(c->normal.x);
    e.normal[1] = to_float(c->normal.y);
    e.normal[2] = to_float(c->normal.z);
    e.penetration = to_float(c->penetration);
    e.normal_impulse = to_float(c->normal_impulse);
    e.tangent_impulse = to_float(c->tangent_impulse);
    uint16_t type = ev->type == GY_CONTACT_EVENT_ENTER  ? GY_PHYSICS_REPLY_COLLISION_ENTER
                    : ev->type == GY_CONTACT_EVENT_STAY ? GY_PHYSICS_REPLY_COLLISION_STAY
                                                        : GY_PHYSICS_REPLY_COLLISION_EXIT;
    r.type = type;
    r.key = (uint32_t)(c->user_a >> 32);
    memcpy(r.body.bytes, &e, sizeof e);
    /* Only STAY may be lost to a flood: a lost EXIT would leave the game's pair open for good. */
    gy_reply_queue_push(p->cfg->replies, &r,
                        type == GY_PHYSICS_REPLY_COLLISION_STAY ? GY_REPLY_DROPPABLE
                                                                : GY_REPLY_ESSENTIAL);
    if (type == GY_PHYSICS_REPLY_COLLISION_EXIT) {
        /* A partner removed or gone: what rested on it may have been woken. */
        gy_phys_touch(p, (uint32_t)(c->user_a >> 32));
        gy_phys_touch(p, (uint32_t)(c->user_b >> 32));
    }
}

/* ---- after a step ---------------------------------------------------------------------------- */

/* Awake as far as this publish knows: on the awake list or already queued for read-back. */
static bool known_awake(const gy_phys_sim *p, const gy_phys_body *e)
{
    return e->list == GY_PHYS_LIST_AWAKE || e->touch_mark == gy_phys_seq_mark(p->pub_seq);
}

/* A contact or joint between a known-awake body and a sleeper may have woken the sleeper. */
static void wake_partner(gy_phys_sim *p, uint32_t a, uint32_t b)
{
    const gy_phys_body *ea = &p->bodies[a], *eb = &p->bodies[b];
    bool aa = known_awake(p, ea), ab = known_awake(p, eb);
    if (aa && !ab && eb->motion != GY_MOTION_STATIC)
        gy_phys_touch(p, b);
    else if (ab && !aa && ea->motion != GY_MOTION_STATIC)
        gy_phys_touch(p, a);
}

/* Each live joint with an awake body reports its state; a joint between sleepers keeps its last
 * report, which still holds. */
static void report_joint_states(gy_phys_sim *p, uint64_t tick)
{
    const gy_backend *be = p->cfg->backend;
    for (uint32_t k = 0; k < p->joint_count; k++) {
        const gy_phys_joint *j = &p->joints[k];
        if (!j->live || !(known_awake(p, &p->bodies[j->a_store]) ||
                          (j->b_store != GY_PHYS_NONE && known_awake(p, &p->bodies[j->b_store]))))
            continue;
        gy_joint_state s;
        if (be->joint_get_state(p->world, j->id, &s) != GY_OK)
            continue;
        gy_physics_joint_state_reply r = {
            .generation = __atomic_load_n(&p->sh->generation, __ATOMIC_RELAXED),
            .joint_generation = j->generation,
            .tick = tick,
            .position = (float)s.position,
            .velocity = (float)s.velocity,
            .twist = (float)s.twist,
            .force = {(float)s.force.x, (float)s.force.y, (float)s.force.z},
            .torque = {(float)s.torque.x, (float)s.torque.y, (float)s.torque.z},
        };
        gy_phys_reply(p, GY_PHYSICS_REPLY_JOINT_STATE, k, &r, sizeof r, GY_REPLY_DROPPABLE);
    }
}

static uint32_t user_store(const gy_phys_sim *p, uint64_t user)
{
    uint32_t s = (uint32_t)(user >> 32);
    return s < p->body_count && p->bodies[s].id.bits != 0 &&
                   p->bodies[s].generation == (uint32_t)user
               ? s
               : GY_PHYS_NONE;
}

/* The contacts with every piece of a mesh built in pieces named as its first piece, so the
 * tracker sees one pair however many pieces a body touches (the deepest wins) and no EXIT and
 * ENTER when it crosses a seam. The pair keeps the tracker's order (a's collider below b's). */
static uint32_t merge_pieces(gy_phys_sim *p, const gy_contact *in, uint32_t n,
                             const gy_contact **out)
{
    *out = in;
    if (p->pieced_bodies == 0 || n == 0)
        return n;
    if (gy_array_reserve(p->cfg->alloc, (void **)&p->piece_contacts, &p->piece_contact_capacity, n,
                         sizeof *p->piece_contacts) != GY_OK) {
        gy_log(p->cfg->logger, GY_LOG_WARN,
               "physics: contacts of meshes built in pieces not merged (out of memory): a seam "
               "may show as an EXIT and an ENTER");
        return n;
    }
    for (uint32_t i = 0; i < n; i++) {
        gy_contact c = in[i];
        uint32_t sa = gy_handle_slot(c.collider_a.bits), sb = gy_handle_slot(c.collider_b.bits);
        if (sa < p->collider_capacity && gy_phys_collider_id(p, sa).bits == c.collider_a.bits)
            c.collider_a = gy_phys_collider_id(p, p->colliders[sa].head);
        if (sb < p->collider_capacity && gy_phys_collider_id(p, sb).bits == c.collider_b.bits)
            c.collider_b = gy_phys_collider_id(p, p->colliders[sb].head);
        if (c.collider_a.bits > c.collider_b.bits) {
            gy_body_id body = c.body_a;
            gy_collider_id col = c.collider_a;
            uint64_t user = c.user_a;
            c.body_a = c.body_b;
            c.body_b = body;
            c.collider_a = c.collider_b;
            c.collider_b = col;
            c.user_a = c.user_b;
            c.user_b = user;
            c.normal = gy_v3_scale(c.normal, -1.0);
        }
        p->piece_contacts[i] = c;
    }
    *out = p->piece_contacts;
    return n;
}

void gy_phys_after_step(gy_phys_sim *p, uint64_t tick)
{
    const gy_backend *be = p->cfg->backend;
    const gy_contact *contacts, *pairs;
    uint32_t n = be->contacts(p->world, &contacts);
    uint32_t np = gy_phys_character_contacts(p, contacts, n, &pairs);
    np = merge_pieces(p, pairs, np, &pairs);
    p->step_contacts = n;
    p->tick_events = 0;
    gy_result r = gy_contact_tracker_update(&p->tracker, tick, pairs, np);
    if (r != GY_OK)
        gy_log(p->cfg->logger, GY_LOG_WARN, "physics: collision events of tick %llu lost: %s",
               (unsigned long long)tick, gy_result_message(r));
    /* The adapter wakes whole islands: a chain A-B-C touching an awake A wakes C too, whatever
     * order the pairs are listed in, so repeat until nothing new is touched. With every movable
     * body on the awake list there is no sleeper to wake: the walk over the pairs is skipped. */
    bool sleepers = p->awake.count < p->movable_bodies;
    for (uint32_t pass = 0; sleepers && pass < MAX_WAKE_PASSES; pass++) {
        uint32_t before = p->touched.count;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t a = user_store(p, contacts[i].user_a), b = user_store(p, contacts[i].user_b);
            if (a != GY_PHYS_NONE && b != GY_PHYS_NONE)
                wake_partner(p, a, b);
        }
        if (p->touched.count == before)
            break;
    }
    const gy_joint_id *broken;
    const uint64_t *users;
    uint32_t nb = be->broken_joints(p->world, &broken, &users);
    for (uint32_t i = 0; i < nb; i++) {
        uint64_t key = users[i];
        if (key >= p->joint_count || !p->joints[key].live ||
            p->joints[key].id.bits != broken[i].bits)
            continue;
        gy_phys_joint *j = &p->joints[key];
        j->live = false;
        gy_phys_touch(p, j->a_store);
        if (j->b_store != GY_PHYS_NONE)
            gy_phys_touch(p, j->b_store);
        gy_physics_joint_reply jr = {__atomic_load_n(&p->sh->generation, __ATOMIC_RELAXED),
                                     j->generation, tick};
        gy_phys_reply(p, GY_PHYSICS_REPLY_JOINT_BROKEN, (uint32_t)key, &jr, sizeof jr,
                      GY_REPLY_ESSENTIAL);
    }
    report_joint_states(p, tick);
}

static int u32_order(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Whether body index `s` is in the sorted list. */
static bool u32_listed(const gy_u32_array *l, uint32_t s)
{
    return bsearch(&s, l->items, l->count, sizeof *l->items, u32_order) != NULL;
}

void gy_phys_wake_disturbed(gy_phys_sim *p)
{
    if (p->disturbed.count == p->disturbed_scanned)
        return;
    /* The bodies teleported this publish, sorted and searched rather than marked in the roster:
     * teleports are few, and a mark would be 4 bytes in every body's record. */
    qsort(p->disturbed.items, p->disturbed.count, sizeof *p->disturbed.items, u32_order);
    const gy_contact *contacts;
    uint32_t n = p->cfg->backend->contacts(p->world, &contacts);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t a = user_store(p, contacts[i].user_a), b = user_store(p, contacts[i].user_b);
        if (a == GY_PHYS_NONE || b == GY_PHYS_NONE)
            continue;
        if (u32_listed(&p->disturbed, a) && p->bodies[b].motion != GY_MOTION_STATIC)
            gy_phys_touch(p, b);
        if (u32_listed(&p->disturbed, b) && p->bodies[a].motion != GY_MOTION_STATIC)
            gy_phys_touch(p, a);
    }
    p->disturbed_scanned = p->disturbed.count;
}

/* ---- read-back ------------------------------------------------------------------------------- */

/* The 13 numbers are contiguous in gy_body_state: position, rotation, linear and angular
 * velocity. */
_Static_assert(offsetof(gy_body_state, pose.rotation) == 3 * sizeof(double) &&
                   offsetof(gy_body_state, linear_velocity) == 7 * sizeof(double) &&
                   offsetof(gy_body_state, angular_velocity) == 10 * sizeof(double),
               "body state numbers are contiguous");

/* True when the state is one a game could have set: rotation finite (and within float range),
 * every position and velocity component within GY_PHYSICS_MAX_MAGNITUDE. The bound is the one
 * commands are held to, far beyond any game's scale; a body past it is running away, and the
 * adapter must not step it again: ODE aborts the process once a runaway reaches about 1e155
 * (positions, velocities) or 1e105 (angular velocity), faster than a non-finite check sees. */
static bool state_sane(const gy_body_state *s)
{
    /* Branch-free over the 13 numbers, two at a time where SSE2 is there (this runs for every
     * body read back: 65 scalar instructions became about 30). NaN fails every comparison. */
    const double m = GY_PHYSICS_MAX_MAGNITUDE, f = (double)FLT_MAX;
    const double *v = &s->pose.position.x;
#if defined(__SSE2__)
    const __m128d sign = _mm_set1_pd(-0.0);
    /* Bounds per pair: px py | pz qx | qy qz | qw vx | vy vz | wx wy | wz. */
    const __m128d mm = _mm_set1_pd(m), mf = _mm_set_pd(f, m), ff = _mm_set1_pd(f),
                  fm = _mm_set_pd(m, f);
    __m128d ok = _mm_cmple_pd(_mm_andnot_pd(sign, _mm_loadu_pd(v + 0)), mm);
    ok = _mm_and_pd(ok, _mm_cmple_pd(_mm_andnot_pd(sign, _mm_loadu_pd(v + 2)), mf));
    ok = _mm_and_pd(ok, _mm_cmple_pd(_mm_andnot_pd(sign, _mm_loadu_pd(v + 4)), ff));
    ok = _mm_and_pd(ok, _mm_cmple_pd(_mm_andnot_pd(sign, _mm_loadu_pd(v + 6)), fm));
    ok = _mm_and_pd(ok, _mm_cmple_pd(_mm_andnot_pd(sign, _mm_loadu_pd(v + 8)), mm));
    ok = _mm_and_pd(ok, _mm_cmple_pd(_mm_andnot_pd(sign, _mm_loadu_pd(v + 10)), mm));
    ok = _mm_and_pd(ok, _mm_cmple_pd(_mm_andnot_pd(sign, _mm_load_sd(v + 12)), mm));
    /* The last load's upper half is 0, which passes. */
    return _mm_movemask_pd(ok) == 3;
#else
    int ok = 1;
    for (int i = 0; i < 13; i++)
        ok &= fabs(v[i]) <= (i >= 3 && i < 7 ? f : m);
    return ok != 0;
#endif
}

/* Freezes a body whose state went non-finite or past the bound at its last published pose, at
 * rest, and reports it once. The adapter has no way to make a body immovable, so a faulted body
 * is frozen again at every publish (read_one keeps it queued) until a SET_POSE clears the fault:
 * between publishes it moves at most the few steps of the forces still acting on it. */
static void freeze_faulted(gy_phys_sim *p, uint32_t s, gy_phys_body *e, const gy_proxy *cur,
                           gy_body_state *st)
{
    const gy_backend *be = p->cfg->backend;
    /* The proxy holds the last published pose, or the pose the body was created at when it has
     * never been published (gy_phys_create_body seeds it): a body is frozen where it was. */
    const float *x = cur->position, *q = cur->rotation;
    gy_pose pose = {gy_v3(x[0], x[1], x[2]), gy_quat_normalize((gy_quat){q[0], q[1], q[2], q[3]})};
    be->body_set_pose(p->world, e->id, pose);
    be->body_set_linear_velocity(p->world, e->id, gy_v3(0, 0, 0));
    be->body_set_angular_velocity(p->world, e->id, gy_v3(0, 0, 0));
    st->pose = pose;
    st->linear_velocity = st->angular_velocity = gy_v3(0, 0, 0);
    if (!e->fault) {
        gy_phys_add(&p->sh->counters.bodies_faulted, 1);
        gy_physics_body_reply reply = {
            e->generation, __atomic_load_n(&p->sh->generation, __ATOMIC_RELAXED), e->id, p->tick};
        gy_phys_reply(p, GY_PHYSICS_REPLY_BODY_FAULT, s, &reply, sizeof reply, GY_REPLY_ESSENTIAL);
        gy_log(p->cfg->logger, GY_LOG_WARN,
               "physics: body %u (generation %u) went non-finite or past %g; frozen", s,
               e->generation, GY_PHYSICS_MAX_MAGNITUDE);
    }
    e->fault = 1;
}

/* Inlined into the awake bodies' loop, the one that runs per body per tick; out of line for the
 * other lists (read_one below). */
static inline __attribute__((always_inline)) void read_one_inline(gy_phys_sim *p, uint32_t s)
{
    gy_phys_body *e = &p->bodies[s];
    if (e->id.bits == 0 || e->read_mark == gy_phys_seq_mark(p->pub_seq))
        return;
    e->read_mark = gy_phys_seq_mark(p->pub_seq);
    gy_body_state st;
    if (p->cfg->backend->body_get_state(p->world, e->id, &st) != GY_OK)
        return;
    p->reads++;
    const gy_proxy *cur = gy_phys_proxy_of(p, s);
    if (e->fault || !state_sane(&st))
        freeze_faulted(p, s, e, cur, &st);
    gy_proxy np;
    np.position[0] = (float)st.pose.position.x;
    np.position[1] = (float)st.pose.position.y;
    np.position[2] = (float)st.pose.position.z;
    np.rotation[0] = (float)st.pose.rotation.x;
    np.rotation[1] = (float)st.pose.rotation.y;
    np.rotation[2] = (float)st.pose.rotation.z;
    np.rotation[3] = (float)st.pose.rotation.w;
    np.linear_velocity[0] = (float)st.linear_velocity.x;
    np.linear_velocity[1] = (float)st.linear_velocity.y;
    np.linear_velocity[2] = (float)st.linear_velocity.z;
    np.angular_velocity[0] = (float)st.angular_velocity.x;
    np.angular_velocity[1] = (float)st.angular_velocity.y;
    np.angular_velocity[2] = (float)st.angular_velocity.z;
    np.generation = e->generation;
    np.tick = cur->tick;
    bool awake = st.awake && !e->fault;
    np.flags =
        (uint16_t)(GY_PROXY_LIVE | (awake ? GY_PROXY_AWAKE : 0u) |
                   ((uint32_t)e->motion << GY_PROXY_MOTION_SHIFT) |
                   (e->teleported ? GY_PROXY_TELEPORTED : 0u) | (e->fault ? GY_PROXY_FAULT : 0u));
    np.teleports = (uint16_t)(cur->teleports + (e->teleported ? 1u : 0u));
    bool changed = memcmp(&np, cur, sizeof np) != 0;
    gy_proxy *w = changed ? gy_phys_proxy_write(p, s) : NULL;
    if (changed && w == NULL) {
        /* Out of memory for its page's copy: nothing taken from this read; read again at the
         * next publish. */
        e->read_mark = 0;
        gy_u32_array_push(p->cfg->alloc, &p->retouch, s);
        return;
    }
    /* A Dynamic body that went to sleep or woke since its last read (not at its creation, whose
     * proxy is not live yet, nor through a fault, which freezes it). */
    if (e->motion == GY_MOTION_DYNAMIC && (cur->flags & GY_PROXY_LIVE) &&
        !(cur->flags & GY_PROXY_FAULT) && !e->fault &&
        awake != ((cur->flags & GY_PROXY_AWAKE) != 0)) {
        gy_physics_body_reply reply = {
            e->generation, __atomic_load_n(&p->sh->generation, __ATOMIC_RELAXED), e->id, p->tick};
        gy_phys_reply(p, awake ? GY_PHYSICS_REPLY_BODY_WAKE : GY_PHYSICS_REPLY_BODY_SLEEP, s,
                      &reply, sizeof reply, GY_REPLY_ESSENTIAL);
    }
    if (e->teleported) {
        e->teleported = 0;
        /* Read again next publish so the flag is cleared there. */
        gy_u32_array_push(p->cfg->alloc, &p->retouch, s);
    } else if (e->fault) {
        /* Frozen again at every publish (see freeze_faulted()). */
        gy_u32_array_push(p->cfg->alloc, &p->retouch, s);
    }
    if (changed) {
        bool moved = memcmp(np.position, w->position, sizeof np.position) != 0 ||
                     memcmp(np.rotation, w->rotation, sizeof np.rotation) != 0;
        np.tick = (uint32_t)p->tick;
        *w = np;
        p->changes++;
        gy_phys_mark_changed(p, s);
        if (moved && e->snapshot_follows) {
            gy_query_snapshot_move(p->cfg->snapshot, e->first_collider, st.pose);
        } else if (moved) {
            for (uint32_t slot = e->first_collider; slot != GY_PHYS_NONE;
                 slot = p->colliders[slot].next) {
                const gy_phys_collider *c = &p->colliders[slot];
                if (!c->in_snapshot || c->is_plane)
                    continue;
                gy_query_snapshot_move(p->cfg->snapshot, slot,
                                       gy_phys_collider_pose(p, c, st.pose));
            }
        }
    }
    uint8_t list = e->motion == GY_MOTION_STATIC ? GY_PHYS_LIST_NONE
                   : awake                       ? GY_PHYS_LIST_AWAKE
                                                 : GY_PHYS_LIST_LANE;
    if (e->list != list) {
        if (list == GY_PHYS_LIST_NONE)
            gy_phys_unlist(p, s);
        else
            enlist(p, s, list);
    }
}

static void read_one(gy_phys_sim *p, uint32_t s)
{
    read_one_inline(p, s);
}

void gy_phys_read_awake(gy_phys_sim *p)
{
    /* In list order, which is mostly the order the bodies were created in (and so the adapter's
     * memory order). A body that falls asleep leaves the list, the last entry (not read yet)
     * taking its place, which is then read next. The roster records are fetched a few bodies
     * ahead: after a step they are out of cache. */
    enum { AHEAD = 4 };
    for (uint32_t i = 0; i < p->awake.count;) {
        if (i + AHEAD < p->awake.count) {
            uint32_t ahead = p->awake.items[i + AHEAD];
            const char *next = (const char *)&p->bodies[ahead];
            __builtin_prefetch(next, 1);
            __builtin_prefetch(next + sizeof(gy_phys_body) - 1u, 1);
            const char *proxy = (const char *)gy_phys_proxy_of(p, ahead);
            __builtin_prefetch(proxy, 1);
            __builtin_prefetch(proxy + sizeof(gy_proxy) - 1u, 1);
        }
        uint32_t s = p->awake.items[i];
        read_one_inline(p, s);
        if (i < p->awake.count && p->awake.items[i] == s)
            i++;
    }
}

void gy_phys_read_back(gy_phys_sim *p)
{
    /* Bodies gy_phys_read_awake already read this publish are skipped (read_mark). */
    gy_phys_read_awake(p);
    for (uint32_t pass = 0; pass < MAX_WAKE_PASSES && p->joint_count > 0; pass++) {
        uint32_t before = p->touched.count;
        for (uint32_t k = 0; k < p->joint_count; k++) {
            const gy_phys_joint *j = &p->joints[k];
            if (j->live && j->b_store != GY_PHYS_NONE)
                wake_partner(p, j->a_store, j->b_store);
        }
        if (p->touched.count == before)
            break;
    }
    for (uint32_t i = 0; i < p->touched.count; i++)
        read_one(p, p->touched.items[i]);
    gy_u32_array *lane = &p->lanes[p->pub_seq % GY_PHYS_LANES];
    for (uint32_t i = lane->count; i-- > 0;)
        read_one(p, lane->items[i]);
    gy_phys_add(&p->sh->counters.proxies_read, p->reads);
    gy_phys_add(&p->sh->counters.proxies_changed, p->changes);
    p->reads = 0;
    p->changes = 0;
}

/* ---- publish --------------------------------------------------------------------------------- */

static uint32_t pages_for(uint32_t count)
{
    return (count + GY_PROXY_PAGE - 1u) >> GY_PROXY_PAGE_SHIFT;
}

/* A page of the writer's own (refs 1), from the pool or the allocator; contents undefined. */
static gy_proxy *page_take(gy_phys_sim *p)
{
    gy_phys_page *g = p->free_pages;
    if (g != NULL) {
        p->free_pages = g->next;
        p->free_page_count--;
    } else {
        g = gy_alloc(p->cfg->alloc, sizeof *g);
        if (g == NULL)
            return NULL;
    }
    p->pool_quiet = 0;
    g->refs = 1;
    g->next = NULL;
    return g->proxies;
}

/* One table fewer names the page: the last one returns it to the pool (or the allocator). */
static void page_drop(gy_phys_sim *p, gy_proxy *proxies)
{
    if (proxies == NULL)
        return;
    gy_phys_page *g = gy_phys_page_of(proxies);
    assert(g->refs > 0);
    if (--g->refs > 0)
        return;
    if (p->free_page_count < GY_PHYS_PAGE_POOL) {
        g->next = p->free_pages;
        p->free_pages = g;
        p->free_page_count++;
    } else {
        gy_free(p->cfg->alloc, g, sizeof *g);
    }
}

/* Entry `i` of `f`'s table now names `proxies` (shared with the table it came from). */
static void page_adopt(gy_phys_sim *p, gy_phys_frame *f, uint32_t i, gy_proxy *proxies)
{
    gy_phys_page_of(proxies)->refs++;
    page_drop(p, f->pages[i]);
    f->pages[i] = proxies;
}

gy_proxy *gy_phys_unshare(gy_phys_sim *p, uint32_t s)
{
    gy_phys_frame *f = &p->sh->frames[p->frame];
    uint32_t i = s >> GY_PROXY_PAGE_SHIFT;
    gy_proxy *shared = f->pages[i];
    gy_proxy *own = page_take(p);
    if (own == NULL) {
        gy_log(p->cfg->logger, GY_LOG_WARN, "physics: proxy page could not be copied");
        return NULL;
    }
    memcpy(own, shared, GY_PROXY_PAGE * sizeof(gy_proxy));
    page_drop(p, shared); /* still named by another table: refs > 1 before */
    f->pages[i] = own;
    return &own[s & (GY_PROXY_PAGE - 1u)];
}

gy_result gy_phys_cover_frame(gy_phys_sim *p, uint32_t need)
{
    gy_phys_frame *f = &p->sh->frames[p->frame];
    if (need <= f->count)
        return GY_OK;
    uint32_t pages = pages_for(need);
    /* The writer's table (new pages NULL) and the pages' change marks. */
    gy_result r = gy_phys_table_reserve(p->cfg->alloc, (void **)&f->pages, &f->page_capacity, pages,
                                        sizeof *f->pages);
    if (r == GY_OK)
        r = gy_phys_table_reserve(p->cfg->alloc, (void **)&p->page_marks, &p->page_mark_capacity,
                                  pages, sizeof *p->page_marks);
    if (r != GY_OK)
        return r;
    /* Past the count, a page holds whatever an earlier world or a failed create left, or is not
     * there yet: each is made the writer's own and the new slots cleared. */
    for (uint32_t i = f->count >> GY_PROXY_PAGE_SHIFT; i < pages; i++) {
        uint32_t lo = i << GY_PROXY_PAGE_SHIFT, hi = lo + GY_PROXY_PAGE;
        lo = lo > f->count ? lo : f->count;
        hi = hi < need ? hi : need;
        if (f->pages[i] == NULL) {
            f->pages[i] = page_take(p);
            if (f->pages[i] == NULL)
                return GY_ERR_OUT_OF_MEMORY;
            memset(f->pages[i], 0, GY_PROXY_PAGE * sizeof(gy_proxy));
        } else if (gy_phys_proxy_write(p, lo) == NULL) {
            return GY_ERR_OUT_OF_MEMORY;
        }
        memset(&f->pages[i][lo & (GY_PROXY_PAGE - 1u)], 0, (size_t)(hi - lo) * sizeof(gy_proxy));
        f->count = hi; /* covered so far: a failure on a later page keeps what is done */
    }
    f->count = need;
    return GY_OK;
}

/* No proxy in page `i` changed in the last GY_PHYS_DIRTY_RING publishes: its buffers may share
 * it (a page changing every publish is kept per buffer, so it is not copied at every change). */
static bool page_settled(const gy_phys_sim *p, uint32_t i)
{
    return (uint32_t)(gy_phys_seq_mark(p->pub_seq) - p->page_marks[i]) > GY_PHYS_DIRTY_RING;
}

/* Brings buffer `nb`, which the writer has just taken, up to date from `from`, the buffer just
 * published. Page by page: a settled page is shared with `from` (the buffer's own copy let go),
 * a page `nb` has no own copy of gets one; the rest of its own pages get the slots changed since
 * `nb` was last brought up to date, found through the dirty lists of the last 8 publishes (a
 * buffer older than that, or a new world, copies its own pages whole). */
static void catch_up(gy_phys_sim *p, uint32_t nb, gy_phys_frame *from)
{
    gy_phys_frame *f = &p->sh->frames[nb];
    uint64_t seq = p->pub_seq;
    uint64_t written = 0;
    uint32_t pages = pages_for(from->count);
    assert(f->page_capacity >= pages);
    bool whole = p->written_seq[nb] == 0 || p->written_seq[nb] + GY_PHYS_DIRTY_RING < seq ||
                 f->count > from->count;
    for (uint32_t i = 0; i < pages; i++) {
        gy_proxy *mine = f->pages[i], *theirs = from->pages[i];
        if (mine == theirs)
            continue;
        bool own = mine != NULL && gy_phys_page_of(mine)->refs == 1u &&
                   (i << GY_PROXY_PAGE_SHIFT) < f->count;
        if (page_settled(p, i)) {
            page_adopt(p, f, i, theirs);
        } else if (!own) {
            /* No copy of its own, or one past its count: a whole copy (else shared). */
            gy_proxy *copy = page_take(p);
            if (copy == NULL) {
                page_adopt(p, f, i, theirs);
                continue;
            }
            memcpy(copy, theirs, GY_PROXY_PAGE * sizeof(gy_proxy));
            page_drop(p, mine);
            f->pages[i] = copy;
        } else if (whole) {
            memcpy(mine, theirs, GY_PROXY_PAGE * sizeof(gy_proxy));
        }
    }
    if (whole) {
        written = from->count;
        gy_phys_add(&p->sh->counters.full_scans, 1);
    } else {
        /* A body that changed in several of these publishes is in each of their lists (an
         * awake one in all of them): it is copied once, from the list of its latest change. */
        for (uint64_t q = p->written_seq[nb] + 1u; q <= seq; q++) {
            const gy_u32_array *l = &p->dirty[q % GY_PHYS_DIRTY_RING];
            for (uint32_t k = 0; k < l->count; k++) {
                uint32_t s = l->items[k];
                uint32_t i = s >> GY_PROXY_PAGE_SHIFT;
                if (p->bodies[s].change_seq != gy_phys_seq_mark(q) || f->pages[i] == from->pages[i])
                    continue;
                f->pages[i][s & (GY_PROXY_PAGE - 1u)] = from->pages[i][s & (GY_PROXY_PAGE - 1u)];
                written++;
            }
        }
        /* Slots the buffer did not span yet: created bodies (copied again) and the empty ones
         * between them. */
        for (uint32_t s = f->count; s < from->count; s++) {
            uint32_t i = s >> GY_PROXY_PAGE_SHIFT;
            if (f->pages[i] != from->pages[i])
                f->pages[i][s & (GY_PROXY_PAGE - 1u)] = from->pages[i][s & (GY_PROXY_PAGE - 1u)];
        }
    }
    f->count = from->count;
    p->written_seq[nb] = seq;
    gy_phys_add(&p->sh->counters.proxies_written, written);
}

static void publish_proxies(gy_phys_sim *p)
{
    uint32_t b = p->frame;
    gy_phys_frame *f = &p->sh->frames[b];
    uint32_t n = p->body_count;
    uint32_t pages = pages_for(n);
    assert(f->count >= n);
    /* The buffer taken next must hold the current values: when another buffer's table is too
     * small, the larger one is made now, so a failure publishes nothing and loses nothing. */
    bool small = false;
    for (uint32_t k = 0; k < GY_PHYS_PROXY_BUFS; k++)
        small |= k != b && p->sh->frames[k].page_capacity < pages;
    if (small && p->spare_capacity < pages) {
        gy_proxy **t = gy_alloc(p->cfg->alloc, (size_t)f->page_capacity * sizeof *t);
        if (t == NULL) {
            gy_log(p->cfg->logger, GY_LOG_WARN,
                   "physics: proxy page table could not grow; publish skipped");
            p->written_seq[b] = p->pub_seq;
            return;
        }
        gy_free(p->cfg->alloc, p->spare, (size_t)p->spare_capacity * sizeof *t);
        p->spare = t;
        p->spare_capacity = f->page_capacity;
    }
    f->count = n;
    f->tick = p->tick;
    f->due_ns = p->due_ns;
    f->applied_seq = gy_command_queue_acknowledged(p->cfg->commands);
    f->published_ns = p->cfg->clock(p->cfg->clock_ctx);
    if (f->published_ns < f->due_ns)
        f->published_ns = f->due_ns;
    p->written_seq[b] = p->pub_seq;
    gy_triple_buffer_publish(p->cfg->proxy_tb, p->tick);
    uint32_t nb = gy_triple_buffer_write_index(p->cfg->proxy_tb);
    gy_phys_frame *nf = &p->sh->frames[nb];
    if (nf->page_capacity < pages) {
        /* Its pages move to the larger table, which the writer now holds. */
        if (nf->page_capacity > 0)
            memcpy(p->spare, nf->pages, (size_t)nf->page_capacity * sizeof *p->spare);
        memset(p->spare + nf->page_capacity, 0,
               (size_t)(p->spare_capacity - nf->page_capacity) * sizeof *p->spare);
        gy_free(p->cfg->alloc, nf->pages, (size_t)nf->page_capacity * sizeof *nf->pages);
        nf->pages = p->spare;
        nf->page_capacity = p->spare_capacity;
        p->spare = NULL;
        p->spare_capacity = 0;
    }
    catch_up(p, nb, f);
    p->frame = nb;
    bool all_hold = true;
    for (uint32_t k = 0; k < GY_PHYS_PROXY_BUFS; k++)
        all_hold &= p->sh->frames[k].page_capacity >= pages;
    if (all_hold && p->spare != NULL) {
        gy_free(p->cfg->alloc, p->spare, (size_t)p->spare_capacity * sizeof *p->spare);
        p->spare = NULL;
        p->spare_capacity = 0;
    }
}

static void free_pool(gy_phys_sim *p)
{
    while (p->free_pages != NULL) {
        gy_phys_page *g = p->free_pages;
        p->free_pages = g->next;
        gy_free(p->cfg->alloc, g, sizeof *g);
    }
    p->free_page_count = 0;
}

/* Frees every page and table (destroy). */
void gy_phys_free_pages(gy_phys_sim *p)
{
    const gy_allocator *a = p->cfg->alloc;
    for (uint32_t b = 0; b < GY_PHYS_PROXY_BUFS; b++) {
        gy_phys_frame *f = &p->sh->frames[b];
        for (uint32_t i = 0; i < f->page_capacity; i++)
            page_drop(p, f->pages[i]);
        gy_free(a, f->pages, (size_t)f->page_capacity * sizeof *f->pages);
        f->pages = NULL;
        f->page_capacity = 0;
        f->count = 0;
    }
    free_pool(p);
    gy_free(a, p->spare, (size_t)p->spare_capacity * sizeof *p->spare);
    p->spare = NULL;
    p->spare_capacity = 0;
    gy_free(a, p->page_marks, (size_t)p->page_mark_capacity * sizeof *p->page_marks);
    p->page_marks = NULL;
    p->page_mark_capacity = 0;
}

/* Once every 2^32 publishes: no mark may match a later publish, so every one is cleared, the
 * sequence skips the value whose mark would be 0, and every buffer is rewritten whole (the dirty
 * lists name publishes from before). Before the coming publish's first mark. */
static void clear_marks(gy_phys_sim *p)
{
    for (uint32_t s = 0; s < p->body_count; s++) {
        gy_phys_body *e = &p->bodies[s];
        e->change_seq = e->read_mark = e->touch_mark = 0;
    }
    if (p->page_marks != NULL)
        memset(p->page_marks, 0, (size_t)p->page_mark_capacity * sizeof *p->page_marks);
    for (uint32_t l = 0; l < GY_PHYS_DIRTY_RING; l++)
        p->dirty[l].count = 0;
    gy_phys_invalidate_buffers(p);
    p->pub_seq++;
}

void gy_phys_publish(gy_phys_sim *p)
{
    publish_proxies(p);
    gy_result r = gy_query_snapshot_publish(p->cfg->snapshot, p->tick);
    if (r != GY_OK)
        gy_log(p->cfg->logger, GY_LOG_WARN, "physics: query snapshot publish failed: %s",
               gy_result_message(r));
    gy_reply_queue_commit(p->cfg->replies);
    gy_phys_add(&p->sh->counters.publishes, 1);
    /* The pool serves bursts of page copies (statics streamed in or moved); once none was taken
     * for a while its pages go back to the allocator, so a level that stopped changing keeps one
     * copy of each page. */
    if (++p->pool_quiet >= GY_PHYS_BURST_QUIET)
        free_pool(p);
    p->pub_seq++;
    if (gy_phys_seq_mark(p->pub_seq) == 0)
        clear_marks(p);
    gy_phys_begin_publish(p);
}
