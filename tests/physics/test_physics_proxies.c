/* Proxies and the tick in lockstep (a real physics thread runs): the 64-byte layout, sparse
 * publish (never stale in any of the three buffers, and really sparse), identity across slot
 * reuse, teleport flags, determinism and the zero-allocation steady state.
 *
 * White-box: between lockstep ticks the physics thread is idle (gy_physics_step returns after the
 * tick's publish, with a happens-before through its completion flag), so the test may read the
 * roster in physics_state.h; it reads the adapter only under the simulation lock. */
#include "test_physics_fixture.h"

#include "physics_state.h"

/* ---- layout ---------------------------------------------------------------------------------- */

static void test_physics_proxy_is_64_bytes(void **state)
{
    (void)state;
    assert_int_equal(sizeof(gy_proxy), 64);
    assert_int_equal(sizeof(gy_physics_collision) <= GY_REPLY_BODY_SIZE, 1);
    gy_proxy px;
    memset(&px, 0, sizeof px);
    px.flags = (uint16_t)(GY_PROXY_LIVE | ((uint32_t)GY_MOTION_KINEMATIC << GY_PROXY_MOTION_SHIFT));
    assert_int_equal(gy_proxy_motion(&px), GY_MOTION_KINEMATIC);
}

/* ---- truth checks ---------------------------------------------------------------------------- */

static uint32_t rng_state = 12345u;
static uint32_t rng(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

/* The buffer the reader gets now equals the roster's current value in every slot. */
static void assert_read_matches_roster(gy_physics *p)
{
    uint32_t n;
    uint64_t tick;
    const gy_proxy *px = fx_proxies(p, &n, &tick);
    assert_int_equal(n, p->sim.body_count);
    assert_int_equal(tick, p->sim.tick);
    for (uint32_t s = 0; s < n; s++) {
        const gy_proxy *cur = gy_phys_proxy_of(&p->sim, s);
        if (memcmp(&px[s], cur, sizeof(gy_proxy)) != 0)
            fail_msg("slot %u stale in buffer %u at tick %llu: generation %u vs %u, y %g vs %g", s,
                     gy_triple_buffer_read_index(p->cfg.proxy_tb), (unsigned long long)tick,
                     px[s].generation, cur->generation, (double)px[s].position[1],
                     (double)cur->position[1]);
    }
}

/* The roster's value of every live body equals the adapter's state now (so nothing the sparse
 * read-back skipped had changed). */
static void assert_roster_matches_adapter(gy_physics *p)
{
    gy_hit h;
    uint32_t n;
    /* Binds the game thread to the world (live queries do so on first use). */
    assert_result(gy_physics_raycast(p, gy_v3(0, 100, 0), gy_v3(0, 1, 0), NULL, GY_COLLECT_ANY, &h,
                                     1, &n, NULL),
                  GY_OK);
    pthread_rwlock_wrlock(&p->sh.sim_lock);
    for (uint32_t s = 0; s < p->sim.body_count; s++) {
        const gy_phys_body *e = &p->sim.bodies[s];
        const gy_proxy *cur = gy_phys_proxy_of(&p->sim, s);
        if (e->id.bits == 0) {
            assert_int_equal(cur->flags, 0);
            continue;
        }
        gy_body_state st;
        assert_result(p->cfg.backend->body_get_state(p->sim.world, e->id, &st), GY_OK);
        float want[13] = {
            (float)st.pose.position.x,   (float)st.pose.position.y,    (float)st.pose.position.z,
            (float)st.pose.rotation.x,   (float)st.pose.rotation.y,    (float)st.pose.rotation.z,
            (float)st.pose.rotation.w,   (float)st.linear_velocity.x,  (float)st.linear_velocity.y,
            (float)st.linear_velocity.z, (float)st.angular_velocity.x, (float)st.angular_velocity.y,
            (float)st.angular_velocity.z};
        if (memcmp(want, cur->position, sizeof want) != 0 ||
            ((cur->flags & GY_PROXY_AWAKE) != 0) != st.awake)
            fail_msg("slot %u (motion %u) not re-read at tick %llu: y %.9g vs %.9g, awake %d vs %d",
                     s, e->motion, (unsigned long long)p->sim.tick, (double)cur->position[1],
                     (double)want[1], (cur->flags & GY_PROXY_AWAKE) != 0, st.awake);
    }
    pthread_rwlock_unlock(&p->sh.sim_lock);
}

/* ---- sparse publish -------------------------------------------------------------------------- */

#define SCENE_STATICS 10u
#define SCENE_BODIES  40u

static uint32_t next_attachment = 1000;

static void build_scene(gy_physics *p, uint32_t *attachments)
{
    fx_create(p, fx_floor(0, attachments[0] = next_attachment++));
    for (uint32_t s = 1; s <= SCENE_STATICS; s++)
        fx_create(p, fx_box(s, attachments[s] = next_attachment++, GY_MOTION_STATIC,
                            gy_v3(-15.0 + 3.0 * s, 0.5, 12), gy_v3(1, 1, 1)));
    for (uint32_t s = SCENE_STATICS + 1; s < SCENE_BODIES; s++) {
        uint32_t k = s - SCENE_STATICS - 1;
        fx_create(p,
                  fx_box(s, attachments[s] = next_attachment++, GY_MOTION_DYNAMIC,
                         gy_v3(-12.0 + 2.5 * (k % 10), 0.6 + 1.05 * (k / 10), 0), gy_v3(1, 1, 1)));
    }
}

static void test_physics_sparse_publish_never_exposes_stale_data(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    uint32_t att[SCENE_BODIES + 8];
    build_scene(p, att);
    uint32_t count = SCENE_BODIES;
    uint32_t skip = 0;
    for (uint32_t t = 0; t < 360; t++) {
        uint32_t r = rng() % 100;
        if (t > 200 && r < 8) {
            /* Teleport a static (never read back otherwise). */
            uint32_t s = 1 + rng() % SCENE_STATICS;
            gy_pose pose = gy_pose_identity();
            pose.position = gy_v3(-15.0 + 3.0 * s, 0.5, 12.0 + (double)(rng() % 5));
            assert_result(gy_physics_record_set_pose(p, (gy_physics_body_ref){s, att[s]}, pose),
                          GY_OK);
        } else if (t > 150 && r < 16) {
            /* Nudge a (by now often sleeping) body. */
            uint32_t s = SCENE_STATICS + 1 + rng() % (SCENE_BODIES - SCENE_STATICS - 1);
            assert_result(
                gy_physics_record_add_impulse(p, (gy_physics_body_ref){s, att[s]}, gy_v3(0, 3, 0)),
                GY_OK);
        } else if (r < 20) {
            /* Drop a body and give its slot to a new one elsewhere. */
            uint32_t s = SCENE_STATICS + 1 + rng() % (SCENE_BODIES - SCENE_STATICS - 1);
            assert_result(gy_physics_record_release_body(p, (gy_physics_body_ref){s, att[s]}),
                          GY_OK);
            att[s] = next_attachment++;
            fx_create(p, fx_box(s, att[s], GY_MOTION_DYNAMIC,
                                gy_v3(-12.0 + (double)(rng() % 24), 3.0, 4), gy_v3(1, 1, 1)));
        } else if (r < 22 && count < SCENE_BODIES + 8) {
            /* Grow the slot range. */
            att[count] = next_attachment++;
            fx_create(p, fx_sphere(count, att[count], gy_v3(8, 4, -4), 0.4));
            count++;
        }
        fx_step(p, 1);
        assert_roster_matches_adapter(p);
        /* The reader keeps its buffer for 0..11 publishes, longer than the dirty lists reach. */
        if (skip == 0) {
            assert_read_matches_roster(p);
            skip = rng() % 12;
        } else {
            skip--;
        }
    }
    gy_physics_stats s = fx_stats(p);
    assert_true(s.full_scans > 0);               /* the long-held buffer was rewritten whole */
    assert_true(s.full_scans * 4 < s.publishes); /* the rest were sparse */
    gy_physics_destroy(p);
}

/* The roster keeps 32 bits of each publish mark: where the sequence's low 32 bits would come
 * round to 0, every mark is cleared and every buffer rewritten, and reads, touches and sparse
 * publishes go on exact across it. */
static void test_physics_publish_marks_survive_the_sequence_wrapping(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    uint32_t att[SCENE_BODIES];
    build_scene(p, att);
    fx_step(p, 20);
    /* The thread waits for the next request: the sequence is the game thread's to set here. */
    p->sim.pub_seq = (1ull << 32) - 6u;
    gy_physics_stats before = fx_stats(p);
    for (uint32_t t = 0; t < 16; t++) {
        if (t % 3 == 0) {
            uint32_t s = 1 + t % SCENE_STATICS;
            gy_pose pose = gy_pose_identity();
            pose.position = gy_v3(-15.0 + 3.0 * s, 0.5, 13.0 + (double)t);
            assert_result(gy_physics_record_set_pose(p, (gy_physics_body_ref){s, att[s]}, pose),
                          GY_OK);
        }
        uint32_t d = SCENE_STATICS + 1 + t % (SCENE_BODIES - SCENE_STATICS - 1);
        assert_result(
            gy_physics_record_add_impulse(p, (gy_physics_body_ref){d, att[d]}, gy_v3(0, 2, 0)),
            GY_OK);
        fx_step(p, 1);
        assert_roster_matches_adapter(p);
        assert_read_matches_roster(p);
    }
    assert_true(p->sim.pub_seq > (1ull << 32));
    assert_true(fx_stats(p).full_scans > before.full_scans);
    gy_physics_destroy(p);
}

static void test_physics_sparse_publish_skips_untouched_sleepers_and_statics(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    uint32_t att[SCENE_BODIES];
    build_scene(p, att);
    /* Let the boxes come to rest (bounded). */
    uint32_t t = 0;
    for (; t < 900 && (t < 10 || fx_stats(p).awake > 0); t++)
        fx_step(p, 1);
    assert_int_equal(fx_stats(p).awake, 0);
    fx_step(p, 3); /* every buffer catches up with the last changes */
    gy_physics_stats before = fx_stats(p);
    fx_step(p, 16);
    gy_physics_stats after = fx_stats(p);
    uint32_t sleepers = SCENE_BODIES - SCENE_STATICS - 1;
    /* Two rounds of the 8 lanes read each sleeper twice; statics never; nothing is rewritten. */
    assert_int_equal(after.proxies_read - before.proxies_read, 2 * sleepers);
    assert_int_equal(after.proxies_changed - before.proxies_changed, 0);
    assert_int_equal(after.proxies_written - before.proxies_written, 0);
    assert_int_equal(after.publishes - before.publishes, 16);
    assert_read_matches_roster(p);

    /* A teleported static is read and rewritten (all three buffers get it), then left alone. */
    gy_pose pose = gy_pose_identity();
    pose.position = gy_v3(0, 0.5, -12);
    assert_result(gy_physics_record_set_pose(p, (gy_physics_body_ref){3, att[3]}, pose), GY_OK);
    before = fx_stats(p);
    fx_step(p, 1);
    const gy_proxy *px = fx_proxies(p, NULL, NULL);
    assert_near(px[3].position[2], -12.0, 1e-6);
    assert_true(px[3].flags & GY_PROXY_TELEPORTED);
    fx_step(p, 7);
    after = fx_stats(p);
    /* Read at the teleport, once more to clear its flag, plus each lane's sleepers once. */
    assert_int_equal(after.proxies_read - before.proxies_read, 2 + sleepers);
    assert_int_equal(after.proxies_changed - before.proxies_changed, 2);
    assert_roster_matches_adapter(p);
    assert_read_matches_roster(p);
    px = fx_proxies(p, NULL, NULL);
    assert_false(px[3].flags & GY_PROXY_TELEPORTED);
    assert_int_equal(px[3].teleports, 1);
    gy_physics_destroy(p);
}

/* gy_physics_keep_frame: nothing for no subsystem; the publish the last read returned, which
 * later reads and publishes leave as it was until the next keep. */
static void test_physics_kept_frame_stays_the_last_read_until_the_next_keep(void **state)
{
    (void)state;
    uint32_t count = 7;
    assert_null(gy_physics_keep_frame(NULL, &count));
    assert_int_equal(count, 0);
    gy_physics *p = fx_lockstep(NULL);
    uint32_t att[SCENE_BODIES];
    build_scene(p, att);
    fx_step(p, 1);
    gy_proxy_frame read;
    assert_result(gy_physics_read_frame(p, &read), GY_OK);
    uint32_t n = read.count;
    const gy_proxy *const *kept = gy_physics_keep_frame(p, &count);
    assert_ptr_equal(kept, read.pages);
    assert_int_equal(count, n);
    gy_proxy copy[SCENE_BODIES], now_flat[SCENE_BODIES];
    assert_true(n <= SCENE_BODIES);
    fx_flatten(kept, n, copy);
    for (int t = 0; t < 6; t++) { /* the boxes fall: every publish differs from the kept one */
        fx_step(p, 1);
        gy_proxy_frame now;
        assert_result(gy_physics_read_frame(p, &now), GY_OK);
        assert_ptr_not_equal(now.pages, kept);
        fx_flatten(kept, n, now_flat);
        assert_memory_equal(now_flat, copy, n * sizeof *copy);
    }
    assert_memory_not_equal(fx_proxies(p, NULL, NULL), copy, n * sizeof *copy);
    gy_physics_destroy(p);
}

/* A body that moves every tick is in the dirty list of every publish a buffer missed: the buffer
 * gets it once, whether the reader takes every publish (three buffers in turn) or none (two). */
static void test_physics_publish_copies_each_changed_proxy_once(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    fx_create(p, fx_floor(0, next_attachment++));
    enum { FALLING = 20, TICKS = 12 };
    for (uint32_t s = 1; s <= FALLING; s++)
        fx_create(p, fx_box(s, next_attachment++, GY_MOTION_DYNAMIC, gy_v3(3.0 * s, 40, 0),
                            gy_v3(1, 1, 1)));
    for (int reader_takes_each = 0; reader_takes_each < 2; reader_takes_each++) {
        gy_physics_stats before = fx_stats(p);
        /* Settle into the mode first: a buffer the reader held for a while is rewritten whole
         * when it comes back, and the bodies' creation is in the first publishes' lists. */
        for (int t = 0; t < TICKS + 4; t++) {
            if (t == 4)
                before = fx_stats(p);
            fx_step(p, 1);
            if (reader_takes_each)
                assert_read_matches_roster(p);
        }
        gy_physics_stats after = fx_stats(p);
        /* Still in free fall: every box changed in every publish, and was copied once each. */
        assert_int_equal(after.proxies_changed - before.proxies_changed, FALLING * TICKS);
        assert_int_equal(after.proxies_written - before.proxies_written, FALLING * TICKS);
        assert_int_equal(after.full_scans, before.full_scans);
    }
    assert_read_matches_roster(p);
    gy_physics_destroy(p);
}

/* The tick's time counters: the adapter's own step is part of the step time, and every tick adds
 * to each. */
static void test_physics_stats_time_the_adapter_step_within_the_step(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    fx_create(p, fx_floor(0, next_attachment++));
    fx_create(p, fx_box(1, next_attachment++, GY_MOTION_DYNAMIC, gy_v3(0, 5, 0), gy_v3(1, 1, 1)));
    fx_step(p, 1);
    gy_physics_stats a = fx_stats(p);
    fx_step(p, 10);
    gy_physics_stats z = fx_stats(p);
    assert_int_equal(z.ticks - a.ticks, 10);
    assert_true(z.adapter_step_ns > a.adapter_step_ns);
    assert_true(z.step_ns - a.step_ns >= z.adapter_step_ns - a.adapter_step_ns);
    assert_true(z.publish_ns > a.publish_ns);
    assert_true(z.cpu_ns > a.cpu_ns);
    gy_physics_destroy(p);
}

/* The adapter's counters, read between ticks like a live query (no sampler involved). */
static void test_physics_adapter_counters_are_read_between_ticks(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    gy_backend_counters c;
    uint64_t tick = 99;
    fx_create(p, fx_floor(0, next_attachment++));
    uint32_t box = next_attachment++;
    fx_create(p, fx_box(1, box, GY_MOTION_DYNAMIC, gy_v3(0, 5, 0), gy_v3(1, 1, 1)));
    fx_step(p, 1);
    assert_result(gy_physics_get_adapter_counters(p, &c, &tick), GY_OK);
    assert_int_equal(tick, gy_physics_tick(p));
    assert_int_equal(c.bodies[GY_MOTION_DYNAMIC], 1);
    assert_int_equal(c.bodies[GY_MOTION_STATIC], 1);
    uint32_t live = c.live_objects;
    assert_true(live >= 4); /* two bodies and their colliders */
    assert_result(gy_physics_record_release_body(p, (gy_physics_body_ref){1, box}), GY_OK);
    fx_step(p, 1);
    assert_result(gy_physics_get_adapter_counters(p, &c, NULL), GY_OK);
    assert_int_equal(c.bodies[GY_MOTION_DYNAMIC], 0);
    assert_int_equal(c.live_objects, live - 2);
    assert_result(gy_physics_get_adapter_counters(p, NULL, NULL), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_physics_get_adapter_counters(NULL, &c, NULL), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_physics_stop(p), GY_OK);
    assert_result(gy_physics_get_adapter_counters(p, &c, NULL), GY_ERR_MISUSE);
    gy_physics_destroy(p);
}

static void test_physics_new_body_never_inherits_an_old_pose(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    fx_create(p, fx_floor(0, 1));
    fx_create(p, fx_sphere(1, 2, gy_v3(0, 20, 0), 0.5));
    fx_step(p, 30);
    const gy_proxy *px = fx_proxies(p, NULL, NULL);
    float old_y = px[1].position[1];
    assert_true(old_y < 19.0f);
    /* Disable → enable: the same slot, a new attachment, a new pose; in one batch... */
    assert_result(gy_physics_record_release_body(p, (gy_physics_body_ref){1, 2}), GY_OK);
    fx_create(p, fx_box(1, 3, GY_MOTION_STATIC, gy_v3(5, 2, 5), gy_v3(1, 1, 1)));
    fx_step(p, 1);
    for (int k = 0; k < 3; k++) {
        px = fx_proxies(p, NULL, NULL);
        assert_int_equal(px[1].generation, 3);
        assert_near(px[1].position[0], 5.0, 0.0);
        assert_near(px[1].position[1], 2.0, 0.0);
        assert_int_equal(px[1].teleports, 0);
        assert_int_equal(gy_proxy_motion(&px[1]), GY_MOTION_STATIC);
        fx_step(p, 1);
    }
    /* ...and across two batches published before one tick. */
    assert_result(gy_physics_record_release_body(p, (gy_physics_body_ref){1, 3}), GY_OK);
    assert_result(gy_physics_publish(p, NULL), GY_OK);
    fx_create(p, fx_sphere(1, 4, gy_v3(-5, 3, 0), 0.5));
    fx_step(p, 1);
    px = fx_proxies(p, NULL, NULL);
    assert_int_equal(px[1].generation, 4);
    assert_near(px[1].position[0], -5.0, 1e-6);
    assert_near(px[1].position[1], 3.0, 0.01); /* one step of free fall: 9.81/3600 m */
    assert_read_matches_roster(p);
    gy_physics_destroy(p);
}

/* ---- determinism ----------------------------------------------------------------------------- */

static uint64_t fnv(const void *data, size_t n, uint64_t h)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static void pile_run(uint64_t *hashes, uint32_t ticks, gy_proxy *final, uint32_t *final_count)
{
    gy_physics *p = fx_lockstep(NULL);
    fx_create(p, fx_floor(0, 1));
    for (uint32_t s = 1; s <= 48; s++)
        fx_create(p,
                  fx_box(s, 1 + s, GY_MOTION_DYNAMIC,
                         gy_v3(0.3 * (s % 4), 0.6 + 1.1 * (s / 4), 0.2 * (s % 3)), gy_v3(1, 1, 1)));
    for (uint32_t t = 0; t < ticks; t++) {
        if (t % 20 == 5)
            assert_result(
                gy_physics_record_add_impulse_at(p, (gy_physics_body_ref){1 + t % 48, 2 + t % 48},
                                                 gy_v3(2, 4, 0), gy_v3(0, 1, 0)),
                GY_OK);
        if (t == 60) {
            gy_pose pose = gy_pose_identity();
            pose.position = gy_v3(0, 15, 0);
            assert_result(gy_physics_record_set_pose(p, (gy_physics_body_ref){7, 8}, pose), GY_OK);
        }
        fx_step(p, 1);
        uint32_t n;
        const gy_proxy *px = fx_proxies(p, &n, NULL);
        hashes[t] = fnv(px, (size_t)n * sizeof *px, 1469598103934665603ull);
        if (t + 1 == ticks) {
            memcpy(final, px, (size_t)n * sizeof *px);
            *final_count = n;
        }
    }
    gy_physics_destroy(p);
}

static void test_physics_lockstep_is_deterministic(void **state)
{
    (void)state;
    enum { TICKS = 150 };
    static uint64_t h1[TICKS], h2[TICKS];
    static gy_proxy f1[64], f2[64];
    uint32_t n1 = 0, n2 = 0;
    pile_run(h1, TICKS, f1, &n1);
    pile_run(h2, TICKS, f2, &n2);
    assert_int_equal(n1, 49);
    assert_int_equal(n1, n2);
    assert_memory_equal(f1, f2, n1 * sizeof(gy_proxy));
    for (uint32_t t = 0; t < TICKS; t++)
        if (h1[t] != h2[t])
            fail_msg("runs diverge at tick %u", t + 1);
    /* The pile really moved (a frozen world would be trivially deterministic). */
    assert_true(f1[48].position[1] < 0.6f + 1.1f * 12.0f - 1.0f);
}

/* ---- query snapshot -------------------------------------------------------------------------- */

/* A downward ray at (x, z) on the latest snapshot: the attachment it hits first, 0 for none. */
static uint32_t snapshot_hit_at(gy_physics *p, double x, double z)
{
    const gy_snapshot_view *v = gy_physics_acquire_query_view(p);
    assert_non_null(v);
    gy_snapshot_filter f = gy_default_snapshot_filter();
    gy_snapshot_hit hit;
    uint32_t n = 0;
    assert_result(gy_snapshot_view_raycast(v, gy_v3(x, 20, z), gy_v3(0, -40, 0), &f,
                                           GY_COLLECT_CLOSEST, &hit, 1, &n),
                  GY_OK);
    return n == 1 ? hit.body.generation : 0u;
}

/* The read-back moves a one-collider body's snapshot entry straight from the body's pose
 * (snapshot_follows) and walks the collider records otherwise: an offset collider and a
 * two-collider body land where their local poses put them, tick after tick. */
static void test_physics_snapshot_moves_every_collider_with_its_body(void **state)
{
    (void)state;
    gy_physics_def d = gy_default_physics_def();
    d.lockstep = true;
    d.world.gravity = gy_v3(0, 0, 0);
    gy_physics *p = fx_physics(&d);
    assert_result(gy_physics_start(p, NULL), GY_OK);
    /* Three bodies gliding along -z at 6 m/s: one plain box, one box offset 2 m along x from its
     * body, one body of two boxes 3 m apart along z. */
    fx_body plain = fx_box(0, 1, GY_MOTION_DYNAMIC, gy_v3(0, 5, 0), gy_v3(1, 1, 1));
    fx_body offset = fx_box(1, 2, GY_MOTION_DYNAMIC, gy_v3(10, 5, 0), gy_v3(1, 1, 1));
    offset.collider.local_pose.position = gy_v3(2, 0, 0);
    fx_body pair = fx_box(2, 3, GY_MOTION_DYNAMIC, gy_v3(20, 5, 0), gy_v3(1, 1, 1));
    gy_collider_def two[2] = {pair.collider, pair.collider};
    two[1].local_pose.position = gy_v3(0, 0, 3);
    fx_body *all[3] = {&plain, &offset, &pair};
    for (int i = 0; i < 3; i++) {
        all[i]->desc.def.linear_velocity = gy_v3(0, 0, -6);
        all[i]->desc.def.allow_sleeping = false;
    }
    fx_create(p, plain);
    fx_create(p, offset);
    gy_physics_body_def pd = *fx_desc(&pair);
    pd.colliders = two;
    pd.collider_count = 2;
    gy_physics_body_ref pair_ref;
    assert_result(gy_physics_record_create_body(p, &pd, &pair_ref), GY_OK);
    fx_step(p, 1);
    assert_int_equal(p->sim.bodies[0].snapshot_follows, 1);
    assert_int_equal(p->sim.bodies[1].snapshot_follows, 0);
    assert_int_equal(p->sim.bodies[2].snapshot_follows, 0);
    for (uint32_t t = 1; t <= 60; t++) {
        if (t > 1)
            fx_step(p, 1);
        uint32_t n;
        const gy_proxy *px = fx_proxies(p, &n, NULL);
        /* Each collider's centre, from its body's published pose (no rotation: no torque). */
        const struct {
            uint32_t store, attachment;
            double dx, dz;
        } c[4] = {{0, 1, 0, 0}, {1, 2, 2, 0}, {2, 3, 0, 0}, {2, 3, 0, 3}};
        for (int k = 0; k < 4; k++) {
            double x = px[c[k].store].position[0] + c[k].dx;
            double z = px[c[k].store].position[2] + c[k].dz;
            assert_true(px[c[k].store].position[2] < 0.0f);
            assert_int_equal(snapshot_hit_at(p, x, z), c[k].attachment);
        }
        /* Where the offset collider's body origin is there is nothing: the box is 2 m away. */
        assert_int_equal(snapshot_hit_at(p, px[1].position[0], px[1].position[2]), 0);
    }
    /* They really moved, well past their own size. */
    assert_true(fx_proxies(p, NULL, NULL)[0].position[2] < -5.0f);
    gy_physics_destroy(p);
}

/* ---- memory ---------------------------------------------------------------------------------- */

static void test_physics_steady_state_allocates_nothing(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    static fx_replies rs;
    gy_physics *p = fx_lockstep(&ta.base);
    fx_create(p, fx_floor(0, 1));
    /* Boxes a metre apart on the floor, kept awake and nudged every tick: the contact count
     * stays at its peak, so only the subsystem's own behaviour is measured. */
    for (uint32_t s = 1; s <= 30; s++) {
        fx_body b =
            fx_box(s, 1 + s, GY_MOTION_DYNAMIC, gy_v3(-15.0 + s, 0.2, 0), gy_v3(0.4, 0.4, 0.4));
        b.desc.def.allow_sleeping = false;
        fx_create(p, b);
    }
    gy_snapshot_filter sf = gy_default_snapshot_filter();
    uint64_t allocs_at = 0;
    for (uint32_t t = 0; t < 1300; t++) {
        if (t == 300)
            allocs_at = __atomic_load_n(&ta.allocs, __ATOMIC_RELAXED) +
                        __atomic_load_n(&ta.reallocs, __ATOMIC_RELAXED);
        uint32_t s = 1 + t % 30;
        assert_result(
            gy_physics_record_add_impulse(p, (gy_physics_body_ref){s, 1 + s}, gy_v3(0, 1, 0)),
            GY_OK);
        assert_result(
            gy_physics_record_add_force(
                p, (gy_physics_body_ref){1 + (t + 7) % 30, 2 + (t + 7) % 30}, gy_v3(0, 30, 0)),
            GY_OK);
        if (t % 50 == 0) {
            gy_pose pose = gy_pose_identity();
            pose.position = gy_v3(-15.0 + s, 1.0, 0);
            assert_result(gy_physics_record_set_pose(p, (gy_physics_body_ref){s, 1 + s}, pose),
                          GY_OK);
        }
        fx_step(p, 1);
        uint32_t n;
        fx_proxies(p, &n, NULL);
        rs.count = 0;
        fx_drain(p, &rs);
        const gy_snapshot_view *v = gy_physics_acquire_query_view(p);
        gy_snapshot_hit hit;
        assert_result(gy_snapshot_view_raycast(v, gy_v3(0, 10, 0), gy_v3(0, -20, 0), &sf,
                                               GY_COLLECT_CLOSEST, &hit, 1, &n),
                      GY_OK);
    }
    uint64_t allocs_end = __atomic_load_n(&ta.allocs, __ATOMIC_RELAXED) +
                          __atomic_load_n(&ta.reallocs, __ATOMIC_RELAXED);
    assert_int_equal(allocs_end - allocs_at, 0);
    assert_true(fx_stats(p).awake > 0);
    gy_physics_destroy(p);
    assert_int_equal(ta.live_blocks, 0);
    assert_int_equal(ta.live_bytes, 0);
}

/* A burst of creations fills the per-publish lists (bodies to read back, proxies changed) with
 * every body once and leaves spare proxy pages in the pool; after a quiet period the lists are
 * trimmed back and the pool returned, and publishes stay exact through a later burst. */
static void test_physics_burst_lists_shrink_once_quiet(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_physics *p = fx_lockstep(&ta.base);
    const uint32_t n = 3000;
    for (uint32_t s = 0; s < n; s++) {
        fx_create(p,
                  fx_box(s, 0, GY_MOTION_STATIC,
                         gy_v3((double)(s % 60) * 2.0, 0, (double)(s / 60) * 2.0), gy_v3(1, 1, 1)));
        if (s % 1000 == 999)
            fx_step(p, 1);
    }
    fx_step(p, 1);
    pthread_rwlock_wrlock(&p->sh.sim_lock);
    uint32_t dirty_peak = 0;
    for (uint32_t l = 0; l < GY_PHYS_DIRTY_RING; l++)
        dirty_peak = p->sim.dirty[l].capacity > dirty_peak ? p->sim.dirty[l].capacity : dirty_peak;
    uint32_t touched_peak = p->sim.touched.capacity;
    pthread_rwlock_unlock(&p->sh.sim_lock);
    assert_true(touched_peak >= 1000u);
    assert_true(dirty_peak >= 1000u);
    /* Once the pages settle, the buffers share them and their own copies go to the pool. */
    fx_step(p, GY_PHYS_DIRTY_RING + 2u);
    pthread_rwlock_wrlock(&p->sh.sim_lock);
    uint32_t pooled = p->sim.free_page_count;
    pthread_rwlock_unlock(&p->sh.sim_lock);
    assert_true(pooled > 0u);
    uint64_t live_at_peak = __atomic_load_n(&ta.live_bytes, __ATOMIC_RELAXED);

    fx_step(p, GY_PHYS_BURST_QUIET + 2u);
    pthread_rwlock_wrlock(&p->sh.sim_lock);
    assert_true(p->sim.touched.capacity <= GY_PHYS_BURST_MIN_CAP);
    for (uint32_t l = 0; l < GY_PHYS_DIRTY_RING; l++)
        assert_true(p->sim.dirty[l].capacity <= GY_PHYS_BURST_MIN_CAP);
    assert_int_equal(p->sim.free_page_count, 0);
    assert_null(p->sim.free_pages);
    pthread_rwlock_unlock(&p->sh.sim_lock);
    assert_true(__atomic_load_n(&ta.live_bytes, __ATOMIC_RELAXED) + 4u * 1000u * sizeof(uint32_t) <
                live_at_peak);
    assert_read_matches_roster(p);

    /* Every static moved at once: the lists grow again and the buffers still get every change. */
    for (uint32_t s = 0; s < n; s++) {
        gy_pose pose = gy_pose_identity();
        pose.position = gy_v3((double)(s % 60) * 2.0, 3.0, (double)(s / 60) * 2.0);
        assert_result(gy_physics_record_set_pose(p, (gy_physics_body_ref){s, s + 1u}, pose), GY_OK);
        if (s % 1000 == 999)
            fx_step(p, 1);
    }
    fx_step(p, 1);
    assert_read_matches_roster(p);
    const gy_proxy *px = fx_proxies(p, NULL, NULL);
    for (uint32_t s = 0; s < n; s++)
        assert_near(px[s].position[1], 3.0, 1e-6);
    fx_step(p, 4);
    assert_read_matches_roster(p);
    gy_physics_destroy(p);
    assert_int_equal(ta.live_blocks, 0);
    assert_int_equal(ta.live_bytes, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_physics_proxy_is_64_bytes),
        cmocka_unit_test(test_physics_sparse_publish_never_exposes_stale_data),
        cmocka_unit_test(test_physics_sparse_publish_skips_untouched_sleepers_and_statics),
        cmocka_unit_test(test_physics_publish_marks_survive_the_sequence_wrapping),
        cmocka_unit_test(test_physics_kept_frame_stays_the_last_read_until_the_next_keep),
        cmocka_unit_test(test_physics_publish_copies_each_changed_proxy_once),
        cmocka_unit_test(test_physics_stats_time_the_adapter_step_within_the_step),
        cmocka_unit_test(test_physics_adapter_counters_are_read_between_ticks),
        cmocka_unit_test(test_physics_new_body_never_inherits_an_old_pose),
        cmocka_unit_test(test_physics_lockstep_is_deterministic),
        cmocka_unit_test(test_physics_snapshot_moves_every_collider_with_its_body),
        cmocka_unit_test(test_physics_steady_state_allocates_nothing),
        cmocka_unit_test(test_physics_burst_lists_shrink_once_quiet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
