/* Queues under pressure: every queue is flooded past its capacity and must behave as documented,
 * with counters that account for every item (nothing silent).
 *
 *   - Command queue (command_queue.h): full rings defer whole batches to game-side staging, a
 *     batch larger than a ring travels detached, nothing is dropped; published = consumed +
 *     discarded, and every payload is released exactly once — also on a hard-stop discard.
 *   - Reply queue (reply_queue.h): when full, essential replies wait in the overflow (never
 *     dropped), droppable ones are dropped and counted; pushed + dropped + lost = attempts, and
 *     everything pushed is delivered once the game drains.
 *   - The physics subsystem: tiny command rings under a flood of creates and impulses (every
 *     command applied, staging and detaching visible in the counters), and a tiny reply ring under
 *     a collision-event flood (every body assignment delivered exactly once, events dropped and
 *     counted, the drop visible in the public diagnostics). */
#include "test_support.h"

#include <stdlib.h>
#include <string.h>

#include "command_queue.h"
#include "gyre/math.h"
#include "gyre/physics/commands.h"
#include "reply_queue.h"
#include "physics_state.h"

#define TIMEOUT_NS 20000000000ull

/* ---- command queue --------------------------------------------------------------------------- */

typedef struct payload_log {
    gy_test_allocator *ta;
    uint32_t released;
} payload_log;

static void release_payload(void *ctx, gy_command *cmd)
{
    payload_log *log = ctx;
    void *p = gy_command_payload(cmd);
    gy_free(&log->ta->base, p, 16);
    log->released++;
}

static void record(gy_command_queue *q, gy_command_ring ring, uint32_t key, payload_log *log)
{
    gy_command c;
    memset(&c, 0, sizeof c);
    c.type = (uint16_t)(ring + 1);
    c.key = key;
    if (log != NULL) {
        void *p = gy_alloc(&log->ta->base, 16);
        assert_non_null(p);
        gy_command_set_payload(&c, p);
    }
    assert_result(gy_command_queue_record(q, ring, &c), GY_OK);
}

typedef struct drained {
    uint64_t last_seq;
    uint32_t next_key;
    uint32_t commands;
    bool in_order;
} drained;

static void check_command(void *ctx, uint64_t seq, gy_command_ring ring, gy_command *cmd)
{
    (void)ring;
    drained *d = ctx;
    if (seq < d->last_seq || cmd->key != d->next_key)
        d->in_order = false;
    d->last_seq = seq;
    d->next_key = cmd->key + 1u;
    d->commands++;
}

static void test_queue_pressure_command_rings_stage_and_detach_without_dropping(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    payload_log log = {&ta, 0};
    gy_command_queue_def def = {&ta.base, 7, 7, 3, release_payload, &log};
    gy_command_queue *q = NULL;
    assert_result(gy_command_queue_create(&def, &q), GY_OK);

    /* No consumer: 60 batches of 5 (lifecycle only, so keys arrive in record order), one batch
     * of 40 (larger than a ring), every third command with a payload. */
    uint32_t key = 0, payloads = 0;
    for (int b = 0; b < 61; b++) {
        int n = b == 30 ? 40 : 5;
        for (int i = 0; i < n; i++, key++) {
            bool with = key % 3 == 0;
            payloads += with;
            record(q, GY_COMMAND_LIFECYCLE, key, with ? &log : NULL);
        }
        assert_result(gy_command_queue_publish(q, NULL), GY_OK);
    }
    gy_command_queue_stats st;
    gy_command_queue_get_stats(q, &st);
    assert_int_equal(st.record_failures, 0);
    assert_int_equal(st.batches_published, 61);
    assert_int_equal(st.commands_published, key);
    assert_true(st.batches_deferred > 0);
    assert_true(st.staged_high_water > 0);
    assert_true(st.staged_batches > 0);
    assert_true(st.ring_high_water[GY_COMMAND_LIFECYCLE] <= st.capacity[GY_COMMAND_LIFECYCLE]);

    /* The consumer catches up (flushing as a waiting producer does): all of it, in order. */
    drained d = {0, 0, 0, true};
    for (int guard = 0; guard < 10000 && d.commands < key; guard++) {
        gy_command_queue_drain(q, 0, check_command, &d);
        gy_command_queue_flush(q);
    }
    assert_int_equal(d.commands, key);
    assert_true(d.in_order);
    gy_command_queue_get_stats(q, &st);
    assert_int_equal(st.commands_consumed + st.commands_discarded, st.commands_published);
    assert_int_equal(st.batches_detached, 1); /* counted when it left staging, whole */
    assert_int_equal(st.payloads_released, payloads);
    assert_int_equal(log.released, payloads);

    /* Flood again, then a hard stop discards it: still every payload released once. */
    uint32_t before = log.released, more = 0;
    for (int b = 0; b < 20; b++) {
        for (int i = 0; i < 6; i++, key++) {
            bool with = i % 2 == 0;
            more += with;
            record(q, GY_COMMAND_LIFECYCLE, key, with ? &log : NULL);
        }
        assert_result(gy_command_queue_publish(q, NULL), GY_OK);
    }
    record(q, GY_COMMAND_MUTATE, key++, &log); /* open, never sealed */
    more++;
    assert_int_equal(gy_command_queue_discard_sealed(q), 120);
    assert_int_equal(gy_command_queue_discard_open(q), 1);
    gy_command_queue_get_stats(q, &st);
    assert_int_equal(st.commands_consumed + st.commands_discarded, st.commands_published + 1);
    assert_int_equal(log.released - before, more);
    assert_int_equal(st.acknowledged, st.batches_published);
    gy_command_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
}

/* ---- reply queue ----------------------------------------------------------------------------- */

typedef struct reply_seen {
    uint32_t essential, droppable;
    uint32_t next_essential;
    bool in_order;
} reply_seen;

static void see_reply(void *ctx, const gy_reply *r)
{
    reply_seen *s = ctx;
    if (r->type == 1) {
        if (r->key != s->next_essential)
            s->in_order = false;
        s->next_essential = r->key + 1u;
        s->essential++;
    } else {
        s->droppable++;
    }
}

static void test_queue_pressure_reply_queue_keeps_essentials_and_counts_drops(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_reply_queue_def def = {&ta.base, 15};
    gy_reply_queue *q = NULL;
    assert_result(gy_reply_queue_create(&def, &q), GY_OK);

    uint32_t attempts = 0, essential = 0, refused_droppable = 0;
    reply_seen seen = {0, 0, 0, true};
    for (int tick = 0; tick < 10; tick++) {
        /* 12 essential + 30 droppable per tick into 15 slots; the game drains every other tick. */
        for (int i = 0; i < 42; i++) {
            gy_reply r;
            memset(&r, 0, sizeof r);
            bool ess = i % 7 < 2;
            r.type = ess ? 1 : 2;
            r.key = ess ? essential : 0;
            gy_result x = gy_reply_queue_push(q, &r, ess ? GY_REPLY_ESSENTIAL : GY_REPLY_DROPPABLE);
            attempts++;
            if (ess) {
                assert_result(x, GY_OK);
                essential++;
            } else if (x != GY_OK) {
                assert_result(x, GY_ERR_CAPACITY);
                refused_droppable++;
            }
        }
        gy_reply_queue_commit(q);
        if (tick % 2 == 1)
            gy_reply_queue_drain(q, see_reply, &seen);
    }
    gy_reply_queue_stats st;
    gy_reply_queue_get_stats(q, &st);
    assert_int_equal(st.lost, 0);
    assert_int_equal(st.dropped, refused_droppable);
    assert_true(st.dropped > 0);
    assert_true(st.deferred > 0);
    assert_true(st.overflow_high_water > 0);
    assert_int_equal(st.high_water, st.capacity);
    assert_int_equal(st.pushed + st.dropped + st.lost, attempts);

    /* The game catches up: each commit moves more of the overflow in; every essential arrives
     * once, in push order, and everything pushed is delivered. */
    for (int guard = 0; guard < 100 && (st.overflow_now > 0 || st.delivered < st.pushed); guard++) {
        gy_reply_queue_drain(q, see_reply, &seen);
        gy_reply_queue_commit(q);
        gy_reply_queue_get_stats(q, &st);
    }
    gy_reply_queue_drain(q, see_reply, &seen);
    gy_reply_queue_get_stats(q, &st);
    assert_int_equal(seen.essential, essential);
    assert_true(seen.in_order);
    assert_int_equal(st.delivered, st.pushed);
    assert_int_equal(seen.essential + seen.droppable, st.delivered);
    assert_int_equal(seen.droppable + st.dropped, attempts - essential);
    gy_reply_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_queue_pressure_reply_overflow_out_of_memory_is_counted(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_reply_queue_def def = {&ta.base, 3};
    gy_reply_queue *q = NULL;
    assert_result(gy_reply_queue_create(&def, &q), GY_OK);
    gy_reply_queue_stats st;
    gy_reply_queue_get_stats(q, &st);
    gy_reply r;
    memset(&r, 0, sizeof r);
    for (uint32_t i = 0; i < st.capacity; i++)
        assert_result(gy_reply_queue_push(q, &r, GY_REPLY_ESSENTIAL), GY_OK);
    /* The next essential needs the overflow to grow: fail that allocation. */
    ta.fail_at = ta.calls + 1;
    assert_result(gy_reply_queue_push(q, &r, GY_REPLY_ESSENTIAL), GY_ERR_OUT_OF_MEMORY);
    ta.fail_at = 0;
    gy_reply_queue_get_stats(q, &st);
    assert_int_equal(st.lost, 1);
    assert_int_equal(st.pushed + st.dropped + st.lost, st.capacity + 1u);
    gy_reply_queue_destroy(q);
    assert_int_equal(ta.live_blocks, 0);
}

/* ---- the physics subsystem ------------------------------------------------------------------- */

typedef struct physics_replies {
    uint32_t assigned[256];
    uint32_t assigned_total;
    uint32_t failed;
    uint32_t events;
    uint32_t other;
} physics_replies;

static void on_physics_reply(void *ctx, const gy_reply *r)
{
    physics_replies *pr = ctx;
    switch (r->type) {
    case GY_PHYSICS_REPLY_BODY_ASSIGNED:
        if (r->key < 256)
            pr->assigned[r->key]++;
        pr->assigned_total++;
        break;
    case GY_PHYSICS_REPLY_CREATE_FAILED:
        pr->failed++;
        break;
    case GY_PHYSICS_REPLY_COLLISION_ENTER:
    case GY_PHYSICS_REPLY_COLLISION_STAY:
    case GY_PHYSICS_REPLY_COLLISION_EXIT:
        pr->events++;
        break;
    default:
        pr->other++;
        break;
    }
}

static gy_physics_body_def sphere_desc(gy_vec3 pos, gy_collider_def *col)
{
    *col = gy_default_collider_def();
    col->shape.type = GY_SHAPE_SPHERE;
    col->shape.radius = 0.25;
    gy_physics_body_def d;
    memset(&d, 0, sizeof d);
    d.def = gy_default_body_def();
    d.def.pose.position = pos;
    d.colliders = col;
    d.collider_count = 1;
    return d;
}

/* Creates a body, the `index`-th created in a fresh pool: it gets index `index` and generation
 * index + 1, which later commands name it by. */
static void create_in_order(gy_physics *p, const gy_physics_body_def *d, uint32_t index)
{
    gy_physics_body_ref ref;
    assert_result(gy_physics_record_create_body(p, d, &ref), GY_OK);
    assert_int_equal(ref.index, index);
    assert_int_equal(ref.generation, index + 1u);
}

static void test_queue_pressure_physics_command_flood_applies_everything(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_physics_def def = gy_default_physics_def();
    def.lockstep = true;
    def.allocator = &ta.base;
    def.world.gravity = gy_v3(0, 0, 0);
    def.lifecycle_capacity = 7;
    def.mutate_capacity = 7;
    gy_physics *p = NULL;
    assert_result(gy_physics_create(&def, &p), GY_OK);
    assert_result(gy_physics_start(p, NULL), GY_OK);

    /* One batch far larger than both rings, then 40 batches the rings cannot hold at once. */
    enum { BODIES = 32, IMPULSES = 400, BATCHES = 40 };
    gy_collider_def col;
    for (uint32_t i = 0; i < BODIES; i++) {
        gy_physics_body_def d = sphere_desc(gy_v3(2.0 * i, 0, 0), &col);
        create_in_order(p, &d, i);
    }
    assert_result(gy_physics_publish(p, NULL), GY_OK);
    uint32_t recorded = BODIES;
    for (uint32_t b = 0; b < BATCHES; b++) {
        for (uint32_t i = 0; i < IMPULSES / BATCHES; i++) {
            uint32_t target = (recorded - BODIES) % BODIES;
            assert_result(gy_physics_record_add_impulse(
                              p, (gy_physics_body_ref){target, target + 1u}, gy_v3(0, 0.001, 0)),
                          GY_OK);
            recorded++;
        }
        assert_result(gy_physics_publish(p, NULL), GY_OK);
    }
    gy_command_queue_stats cs;
    gy_command_queue_get_stats(p->cfg.commands, &cs);
    assert_true(cs.batches_detached >= 1);
    assert_true(cs.batches_deferred > 0);
    assert_true(cs.staged_high_water > 0);
    assert_int_equal(cs.record_failures, 0);

    /* One lockstep tick drains every batch published so far. */
    assert_result(gy_physics_step(p, 1, TIMEOUT_NS), GY_OK);
    gy_physics_stats st;
    gy_physics_get_stats(p, &st);
    assert_int_equal(st.commands_applied, recorded);
    assert_int_equal(st.commands_dropped_stale + st.commands_failed, 0);
    assert_int_equal(st.bodies, BODIES);
    /* Each sphere got its impulses exactly once: 400 / 32 is 12 or 13 each, of 0.001 N·s. */
    const gy_proxy *const *px = NULL;
    uint32_t n = 0;
    assert_result(gy_physics_read_proxies(p, &px, &n, NULL, NULL), GY_OK);
    double mass = 1000.0 * 4.0 / 3.0 * 3.14159265358979 * 0.25 * 0.25 * 0.25;
    for (uint32_t i = 0; i < BODIES; i++) {
        uint32_t k = IMPULSES / BODIES + (i < IMPULSES % BODIES ? 1u : 0u);
        assert_near(gy_proxy_in(px, i)->linear_velocity[1], 0.001 * k / mass, 1e-6);
    }
#if GY_DIAGNOSTICS
    gy_physics_diagnostics dg;
    assert_result(gy_physics_get_diagnostics(p, &dg), GY_OK);
    assert_true(dg.command_staged_high_water > 0);
#endif
    gy_command_queue_get_stats(p->cfg.commands, &cs);
    assert_int_equal(cs.commands_consumed, recorded);
    assert_int_equal(cs.batches_consumed, cs.batches_published);
    assert_result(gy_physics_stop(p), GY_OK);
    gy_physics_destroy(p);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_queue_pressure_physics_event_flood_drops_only_counted_events(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_physics_def def = gy_default_physics_def();
    def.lockstep = true;
    def.allocator = &ta.base;
    def.reply_capacity = 31;
    gy_physics *p = NULL;
    assert_result(gy_physics_create(&def, &p), GY_OK);
    assert_result(gy_physics_start(p, NULL), GY_OK);

    /* A floor and 100 spheres resting on it, apart: 100 touching pairs, one event each per tick,
     * plus 101 assignments, all into a ring of 31. */
    enum { SPHERES = 100 };
    gy_collider_def floor_col = gy_default_collider_def();
    floor_col.shape.type = GY_SHAPE_BOX;
    floor_col.shape.box_size = gy_v3(60, 1, 60);
    gy_physics_body_def floor_desc;
    memset(&floor_desc, 0, sizeof floor_desc);
    floor_desc.def = gy_default_body_def();
    floor_desc.def.type = GY_MOTION_STATIC;
    floor_desc.def.pose.position = gy_v3(0, -0.5, 0);
    floor_desc.colliders = &floor_col;
    floor_desc.collider_count = 1;
    create_in_order(p, &floor_desc, 0);
    gy_collider_def col;
    for (uint32_t i = 1; i <= SPHERES; i++) {
        gy_physics_body_def d =
            sphere_desc(gy_v3(-25.0 + 5.0 * (i % 10), 0.24, -25.0 + 5.0 * (i / 10)), &col);
        create_in_order(p, &d, i);
    }

    /* The flood: 13 ticks without draining (two diagnostics samples: ticks 1 and 13). */
    assert_result(gy_physics_step(p, 13, TIMEOUT_NS), GY_OK);
    gy_reply_queue_stats rs;
    gy_reply_queue_get_stats(p->cfg.replies, &rs);
    assert_int_equal(rs.lost, 0);
    assert_true(rs.deferred >= SPHERES + 1u - rs.capacity);
    assert_true(rs.dropped > 0);
    assert_int_equal(rs.high_water, rs.capacity);
    gy_physics_stats ps;
    gy_physics_get_stats(p, &ps);
    assert_int_equal(ps.replies_dropped, rs.dropped); /* with or without the sampler */
#if GY_DIAGNOSTICS
    gy_physics_diagnostics dg;
    assert_result(gy_physics_get_diagnostics(p, &dg), GY_OK);
    assert_int_equal(dg.tick, 13);
    assert_true(dg.replies_dropped > 0); /* visible to a host, not only to this test */
    assert_int_equal(dg.reply_high_water, rs.capacity);
#endif

    /* The game drains every tick from now on: every assignment arrives exactly once. Events keep
     * flooding (100 per tick into 31 slots), so drops go on being counted. */
    physics_replies pr;
    memset(&pr, 0, sizeof pr);
    for (int guard = 0; guard < 200; guard++) {
        gy_physics_drain_replies(p, on_physics_reply, &pr);
        gy_reply_queue_get_stats(p->cfg.replies, &rs);
        if (pr.assigned_total == SPHERES + 1u && rs.overflow_now == 0)
            break;
        assert_result(gy_physics_step(p, 1, TIMEOUT_NS), GY_OK);
    }
    assert_int_equal(pr.assigned_total, SPHERES + 1u);
    for (uint32_t i = 0; i <= SPHERES; i++)
        assert_int_equal(pr.assigned[i], 1);
    assert_int_equal(pr.failed, 0);
    assert_true(pr.events > 0);
    gy_reply_queue_get_stats(p->cfg.replies, &rs);
    gy_physics_stats st;
    gy_physics_get_stats(p, &st);
    /* Every reply pushed was delivered (passed to us or rejected by the filter, counted). */
    assert_int_equal(rs.delivered, rs.pushed);
    assert_int_equal(pr.assigned_total + pr.failed + pr.events + pr.other + st.replies_rejected,
                     rs.delivered);
    assert_int_equal(rs.lost, 0);
    assert_result(gy_physics_stop(p), GY_OK);
    gy_physics_destroy(p);
    assert_int_equal(ta.live_blocks, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_pressure_command_rings_stage_and_detach_without_dropping),
        cmocka_unit_test(test_queue_pressure_reply_queue_keeps_essentials_and_counts_drops),
        cmocka_unit_test(test_queue_pressure_reply_overflow_out_of_memory_is_counted),
        cmocka_unit_test(test_queue_pressure_physics_command_flood_applies_everything),
        cmocka_unit_test(test_queue_pressure_physics_event_flood_drops_only_counted_events),
    };
    return cmocka_run_group_tests_name("queue_pressure", tests, NULL, NULL);
}
