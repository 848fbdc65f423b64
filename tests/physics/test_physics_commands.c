/* The physics subsystem's command and reply paths, in lockstep (a real physics thread runs):
 * validation, attachment identity (stale replies rejected, creates cancelled within a batch, stale
 * commands dropped), one-off inputs under a flood, collision-event pairing, joints and resources,
 * the character hook, live and snapshot queries, and misuse. */
#include "test_physics_fixture.h"
#include "gyre/backend/backend.h"

/* ---- creation and misuse --------------------------------------------------------------------- */

static void test_physics_create_rejects_bad_definitions(void **state)
{
    (void)state;
    gy_physics *p = NULL;
    gy_physics_def d = gy_default_physics_def();
    d.backend = "no-such-adapter";
    assert_result(gy_physics_create(&d, &p), GY_ERR_UNKNOWN_BACKEND);
    assert_null(p);
    d = gy_default_physics_def();
    d.step_hz = 5;
    assert_result(gy_physics_create(&d, &p), GY_ERR_INVALID_ARGUMENT);
    d = gy_default_physics_def();
    d.max_catchup_steps = 17;
    assert_result(gy_physics_create(&d, &p), GY_ERR_INVALID_ARGUMENT);
    d = gy_default_physics_def();
    d.frame_budget_s = NAN;
    assert_result(gy_physics_create(&d, &p), GY_ERR_NON_FINITE);
    d = gy_default_physics_def();
    d.world.gravity.y = INFINITY;
    assert_result(gy_physics_create(&d, &p), GY_ERR_NON_FINITE);
    assert_result(gy_physics_create(NULL, NULL), GY_ERR_INVALID_ARGUMENT);
}

static void test_physics_misuse_is_an_error(void **state)
{
    (void)state;
    gy_physics_def d = gy_default_physics_def();
    gy_physics *p = fx_physics(&d);
    fx_body b = fx_sphere(0, 1, gy_v3(0, 1, 0), 0.5);
    assert_result(fx_record(p, &b, NULL), GY_ERR_MISUSE);
    assert_result(gy_physics_publish(p, NULL), GY_ERR_MISUSE);
    assert_result(gy_physics_stop(p), GY_ERR_MISUSE);
    assert_result(gy_physics_start(p, NULL), GY_OK);
    assert_true(gy_physics_running(p));
    assert_result(gy_physics_start(p, NULL), GY_ERR_MISUSE);
    /* Real-time mode: lockstep ticks are refused. */
    assert_result(gy_physics_step(p, 1, 0), GY_ERR_MISUSE);
    /* Stopping from inside a mutation window would join a parked thread. */
    gy_barrier *barrier = gy_physics_barrier(p);
    assert_result(gy_barrier_begin_mutation(barrier, FX_TIMEOUT_NS), GY_OK);
    assert_result(gy_physics_stop(p), GY_ERR_MISUSE);
    assert_result(gy_barrier_end_mutation(barrier), GY_OK);
    assert_result(gy_physics_stop(p), GY_OK);
    assert_false(gy_physics_running(p));
    assert_result(gy_physics_stop(p), GY_ERR_MISUSE);
    gy_physics_destroy(p);
}

static void test_physics_record_validates_before_enqueueing(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    fx_body b = fx_sphere(0, 1, gy_v3(0, 1, 0), 0.5);
    b.desc.def.pose.position.x = NAN;
    assert_result(fx_record(p, &b, NULL), GY_ERR_NON_FINITE);
    b = fx_sphere(0, 0, gy_v3(0, 1, 0), 0.5);
    /* Nowhere to put the ref: refused before anything is issued. */
    assert_result(gy_physics_record_create_body(p, fx_desc(&b), NULL), GY_ERR_INVALID_ARGUMENT);
    b = fx_sphere(0, 1, gy_v3(0, 1, 0), -1.0);
    assert_result(fx_record(p, &b, NULL), GY_ERR_INVALID_SHAPE);
    /* No index left below the bound: refused before anything is issued. */
    b = fx_sphere(GY_PHYSICS_MAX_STORE_INDEX, 1, gy_v3(0, 1, 0), 0.5);
    assert_result(fx_record(p, &b, NULL), GY_ERR_CAPACITY);

    b = fx_sphere(0, 1, gy_v3(0, 1, 0), 0.5);
    assert_result(fx_record(p, &b, NULL), GY_OK);

    gy_pose bad = gy_pose_identity();
    bad.rotation.w = NAN;
    assert_result(gy_physics_record_set_pose(p, (gy_physics_body_ref){0, 1}, bad),
                  GY_ERR_NON_FINITE);
    bad = gy_pose_identity();
    bad.rotation.w = 2.0;
    assert_result(gy_physics_record_set_pose(p, (gy_physics_body_ref){0, 1}, bad),
                  GY_ERR_INVALID_ARGUMENT);
    assert_result(
        gy_physics_record_add_force(p, (gy_physics_body_ref){0, 1}, gy_v3(INFINITY, 0, 0)),
        GY_ERR_NON_FINITE);
    assert_result(gy_physics_record_add_impulse_at(p, (gy_physics_body_ref){0, 1}, gy_v3(1, 0, 0),
                                                   gy_v3(0, NAN, 0)),
                  GY_ERR_NON_FINITE);
    assert_result(gy_physics_record_character_jump(p, (gy_physics_body_ref){0, 1}, NAN),
                  GY_ERR_NON_FINITE);
    assert_result(gy_physics_record_add_impulse(p, (gy_physics_body_ref){0, 7}, gy_v3(1, 0, 0)),
                  GY_ERR_STALE_HANDLE);
    assert_result(gy_physics_record_release_body(p, (gy_physics_body_ref){0, 7}),
                  GY_ERR_STALE_HANDLE);
    assert_result(gy_physics_set_time_scale(p, NAN), GY_ERR_NON_FINITE);
    assert_result(gy_physics_set_time_scale(p, -1.0), GY_ERR_INVALID_ARGUMENT);

    gy_physics_resource_def rd = {NULL, NULL};
    gy_physics_resource_ref resource;
    assert_result(gy_physics_record_create_resource(p, &rd, &resource), GY_ERR_INVALID_ARGUMENT);

    /* Only the one valid create reached the physics thread. */
    fx_step(p, 1);
    gy_physics_stats s = fx_stats(p);
    assert_int_equal(s.commands_applied, 1);
    assert_int_equal(s.commands_dropped_stale, 0);
    assert_int_equal(s.bodies, 1);
    gy_physics_destroy(p);
}

/* The live-change commands validate on the game thread, and what the adapter refuses on the
 * physics thread (a static body's mass, a collider index past the body's) is counted as failed,
 * never applied to another body or collider. */
static void test_physics_live_change_commands_validate_and_count(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    fx_create(p, fx_floor(0, 1));
    fx_create(p, fx_sphere(1, 2, gy_v3(0, 3, 0), 0.5));
    fx_step(p, 1);
    gy_physics_stats before = fx_stats(p);

    assert_result(gy_physics_record_set_mass(p, (gy_physics_body_ref){1, 2}, 0.0),
                  GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_physics_record_set_mass(p, (gy_physics_body_ref){1, 2}, NAN),
                  GY_ERR_NON_FINITE);
    gy_material m = gy_default_material();
    m.friction = -1.0;
    assert_result(gy_physics_record_set_material(p, (gy_physics_body_ref){1, 2}, 0, &m),
                  GY_ERR_INVALID_ARGUMENT);
    m = gy_default_material();
    assert_result(gy_physics_record_set_material(p, (gy_physics_body_ref){1, 2}, 70000u, &m),
                  GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_physics_record_set_filter(p, (gy_physics_body_ref){1, 9}, 0, 1u, 1u),
                  GY_ERR_STALE_HANDLE);
    assert_result(gy_physics_record_set_gravity(p, gy_v3(0, NAN, 0)), GY_ERR_NON_FINITE);
    assert_result(gy_physics_record_set_gravity(p, gy_v3(0, 1e13, 0)), GY_ERR_INVALID_ARGUMENT);

    /* Applied: mass, material, filter, sleep, gravity. Failed on the physics thread: a static
     * body's mass, collider 1 of a one-collider body. */
    assert_result(gy_physics_record_set_mass(p, (gy_physics_body_ref){1, 2}, 3.0), GY_OK);
    assert_result(gy_physics_record_set_material(p, (gy_physics_body_ref){1, 2}, 0, &m), GY_OK);
    assert_result(gy_physics_record_set_filter(p, (gy_physics_body_ref){1, 2}, 0, 2u, ~0u), GY_OK);
    assert_result(gy_physics_record_set_awake(p, (gy_physics_body_ref){1, 2}, false), GY_OK);
    assert_result(gy_physics_record_set_gravity(p, gy_v3(0, -5, 0)), GY_OK);
    assert_result(gy_physics_record_set_mass(p, (gy_physics_body_ref){0, 1}, 3.0), GY_OK);
    assert_result(gy_physics_record_set_filter(p, (gy_physics_body_ref){1, 2}, 1, 2u, ~0u), GY_OK);
    fx_step(p, 1);
    gy_physics_stats s = fx_stats(p);
    assert_int_equal(s.commands_applied - before.commands_applied, 5);
    assert_int_equal(s.commands_failed - before.commands_failed, 2);
    assert_near(gy_physics_gravity(p).y, -5.0, 0.0);
    /* The sleeper was woken by the gravity change that followed it in the batch. */
    const gy_proxy *px = fx_proxies(p, NULL, NULL);
    assert_true((px[1].flags & GY_PROXY_AWAKE) != 0);
    gy_physics_destroy(p);

    /* Stopped: gravity is kept for the next start. */
    p = fx_lockstep(NULL);
    assert_result(gy_physics_stop(p), GY_OK);
    assert_result(gy_physics_record_set_gravity(p, gy_v3(0, 2, 0)), GY_OK);
    assert_result(gy_physics_start(p, NULL), GY_OK);
    fx_create(p, fx_sphere(0, 1, gy_v3(0, 3, 0), 0.5));
    fx_step(p, 30);
    px = fx_proxies(p, NULL, NULL);
    assert_true(px[0].position[1] > 3.0f);
    gy_physics_destroy(p);
}

/* ---- attachment identity --------------------------------------------------------------------- */

/* A started lockstep physics, and `rs` emptied to record its replies. */
static gy_physics *lockstep_recording(fx_replies *rs)
{
    memset(rs, 0, sizeof *rs);
    return fx_lockstep(NULL);
}

static const gy_reply *find_assigned(const fx_replies *rs, uint32_t attachment)
{
    for (uint32_t i = 0; i < rs->count; i++)
        if (rs->r[i].type == GY_PHYSICS_REPLY_BODY_ASSIGNED &&
            gy_reply_as_body(&rs->r[i])->body_generation == attachment)
            return &rs->r[i];
    return NULL;
}

static void test_physics_stale_attachment_replies_rejected(void **state)
{
    (void)state;
    static fx_replies rs;
    gy_physics *p = lockstep_recording(&rs);
    fx_create(p, fx_sphere(3, 10, gy_v3(0, 5, 0), 0.5));
    fx_step(p, 1); /* BODY_ASSIGNED(10) is committed but not drained yet */
    /* The game drops that attachment and reuses the slot before it drains. */
    assert_result(gy_physics_record_release_body(p, (gy_physics_body_ref){3, 10}), GY_OK);
    fx_create(p, fx_sphere(3, 11, gy_v3(2, 5, 0), 0.5));
    fx_step(p, 1);
    fx_drain(p, &rs);
    assert_null(find_assigned(&rs, 10));
    const gy_reply *r = find_assigned(&rs, 11);
    assert_non_null(r);
    assert_int_equal(r->key, 3);
    assert_int_not_equal(gy_reply_as_body(r)->body.bits, 0);
    assert_int_equal(fx_stats(p).replies_rejected, 1);
    uint32_t n;
    const gy_proxy *px = fx_proxies(p, &n, NULL);
    assert_true(n > 3);
    assert_int_equal(px[3].generation, 11);
    assert_near(px[3].position[0], 2.0, 1e-6);

    /* Late replies from an old world: a body assigned just before a stop is re-assigned by the
     * next start; only the new world's assignment passes. */
    gy_physics_body_ref old = fx_create(p, fx_sphere(0, 20, gy_v3(4, 5, 0), 0.5));
    fx_step(p, 1);
    assert_result(gy_physics_stop(p), GY_OK);
    fx_body keep = fx_sphere(0, 20, gy_v3(4, 5, 0), 0.5);
    gy_physics_body_ref kept;
    gy_physics_bootstrap boot = {NULL, 0, fx_desc(&keep), 1, NULL, 0, &kept, NULL, NULL};
    assert_result(gy_physics_start(p, &boot), GY_OK);
    assert_int_equal(kept.index, old.index); /* the start issues the list's first body index 0 */
    assert_true(kept.generation != 20);      /* the new world's body has a new ref */
    memset(&rs, 0, sizeof rs);
    fx_drain(p, &rs);
    assert_int_equal(fx_count_type(&rs, GY_PHYSICS_REPLY_BODY_ASSIGNED), 1);
    assert_null(find_assigned(&rs, 20));
    r = find_assigned(&rs, kept.generation);
    assert_non_null(r);
    assert_int_equal(gy_reply_as_body(r)->generation, fx_stats(p).generation);
    assert_int_equal(gy_reply_generation(r), (uint16_t)fx_stats(p).generation);
    assert_int_equal(fx_stats(p).replies_rejected, 2);
    gy_physics_destroy(p);
}

/* A restart issues the bootstrap's bodies new refs: a ref kept from before names nothing, even
 * though a body lives at its index again. */
static void test_physics_ref_from_before_a_restart_is_stale(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    gy_physics_body_ref old = fx_create(p, fx_sphere(0, 0, gy_v3(0, 5, 0), 0.5));
    fx_step(p, 1);
    assert_result(gy_physics_stop(p), GY_OK);
    fx_body again = fx_sphere(0, 0, gy_v3(0, 5, 0), 0.5);
    gy_physics_body_ref now;
    gy_physics_bootstrap boot = {NULL, 0, fx_desc(&again), 1, NULL, 0, &now, NULL, NULL};
    assert_result(gy_physics_start(p, &boot), GY_OK);
    assert_int_equal(now.index, old.index);
    assert_true(now.generation > old.generation);
    assert_result(gy_physics_record_add_impulse(p, old, gy_v3(1, 0, 0)), GY_ERR_STALE_HANDLE);
    assert_result(gy_physics_record_release_body(p, old), GY_ERR_STALE_HANDLE);
    assert_result(gy_physics_record_add_impulse(p, now, gy_v3(1, 0, 0)), GY_OK);
    fx_step(p, 1); /* applied to the new body (a release in the same batch would come first) */
    assert_int_equal(fx_stats(p).commands_dropped_stale, 0);
    assert_result(gy_physics_record_release_body(p, now), GY_OK);
    /* Released: stale from the record on, and a null ref never names a body. */
    assert_result(gy_physics_record_add_impulse(p, now, gy_v3(1, 0, 0)), GY_ERR_STALE_HANDLE);
    gy_physics_body_ref null_ref = {0, 0};
    assert_result(gy_physics_record_set_awake(p, null_ref, true), GY_ERR_STALE_HANDLE);
    fx_step(p, 1);
    assert_int_equal(fx_stats(p).commands_dropped_stale, 0);
    gy_physics_destroy(p);
}

/* Makes the joint pool issue `index` next when it is free (see fx_issue_at). */
static void joint_at(gy_physics *p, uint32_t index)
{
    p->game.joint_ids.free_from = index;
}

/* Makes the resource pool issue `index` next when it is free (see fx_issue_at). */
static void res_at(gy_physics *p, uint32_t index)
{
    p->game.resource_ids.free_from = index;
}

/* A joint on body `a` hanging from the world, in slot `index` (joint_at). */
static gy_physics_joint_def hinge_on(uint32_t index, gy_physics_body_ref a)
{
    (void)index; /* issued by the pool: joint_at makes it the next one */
    gy_physics_joint_def d;
    memset(&d, 0, sizeof d);
    d.a = a;
    d.def = gy_default_joint_def();
    d.def.type = GY_JOINT_HINGE;
    d.def.anchor = gy_v3(0, 6, 0);
    d.def.axis = gy_v3(0, 0, 1);
    return d;
}

/* Joint refs are issued and checked as body refs are: one from before a restart, or released,
 * names nothing even when its slot holds a joint again; one the physics thread no longer holds
 * (broken there) is dropped and counted. */
static void test_physics_joint_ref_from_before_a_restart_is_stale(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    gy_physics_body_ref body = fx_create(p, fx_sphere(0, 0, gy_v3(0, 5, 0), 0.5));
    gy_physics_joint_def jd = hinge_on(1, body);
    gy_physics_joint_ref old;
    joint_at(p, 1);
    assert_result(gy_physics_record_create_joint(p, &jd, &old), GY_OK);
    assert_int_equal(old.index, 1);
    assert_true(old.generation != 0);
    fx_step(p, 1);
    assert_result(gy_physics_stop(p), GY_OK);
    fx_body again = fx_sphere(0, 0, gy_v3(0, 5, 0), 0.5);
    gy_physics_joint_def boot_joint = hinge_on(1, (gy_physics_body_ref){0, 0});
    gy_physics_body_ref body_now;
    gy_physics_joint_ref now;
    gy_physics_bootstrap boot = {NULL, 0,   fx_desc(&again), 1, &boot_joint, 1, &body_now,
                                 &now, NULL};
    assert_result(gy_physics_start(p, &boot), GY_OK);
    assert_int_equal(now.index, old.index);
    assert_true(now.generation > old.generation);
    gy_joint_motor motor = {GY_MOTOR_VELOCITY, 1.0, 10.0};
    assert_result(gy_physics_record_set_motor(p, old, &motor), GY_ERR_STALE_HANDLE);
    assert_result(gy_physics_record_release_joint(p, old), GY_ERR_STALE_HANDLE);
    assert_result(gy_physics_record_set_motor(p, now, &motor), GY_OK);
    fx_step(p, 1);
    assert_int_equal(fx_stats(p).commands_dropped_stale, 0);
    assert_result(gy_physics_record_release_joint(p, now), GY_OK);
    /* Released: stale from the record on, and a null ref never names a joint. */
    assert_result(gy_physics_record_set_motor(p, now, &motor), GY_ERR_STALE_HANDLE);
    assert_result(gy_physics_record_release_joint(p, now), GY_ERR_STALE_HANDLE);
    gy_physics_joint_ref null_ref = {0, 0};
    assert_result(gy_physics_record_release_joint(p, null_ref), GY_ERR_STALE_HANDLE);
    /* The slot takes a new joint; the old ref still names nothing. */
    gy_physics_joint_def breaking = hinge_on(1, body_now);
    breaking.def.breakable = true;
    breaking.def.break_force = 1.0; /* the hanging sphere weighs ~5 N: it breaks at once */
    gy_physics_joint_ref next;
    joint_at(p, 1);
    assert_result(gy_physics_record_create_joint(p, &breaking, &next), GY_OK);
    assert_int_equal(next.index, 1);
    assert_true(next.generation > now.generation);
    assert_result(gy_physics_record_set_motor(p, now, &motor), GY_ERR_STALE_HANDLE);
    fx_step(p, 3);
    assert_int_equal(fx_stats(p).commands_dropped_stale, 0);
    /* Broken on the physics thread: the game still holds the ref, the physics thread drops what
     * names it and counts it. */
    assert_result(gy_physics_record_set_motor(p, next, &motor), GY_OK);
    assert_result(gy_physics_record_release_joint(p, next), GY_OK);
    fx_step(p, 1);
    assert_int_equal(fx_stats(p).commands_dropped_stale, 2);
    gy_physics_destroy(p);
}

/* The physics thread checks a joint's or resource's generation itself: a command whose ref the
 * game side would have refused (forged here by putting the old generation back in the game-side
 * pool) finds another generation in the slot and is dropped and counted, not applied to it. */
static void
test_physics_stale_joint_and_resource_commands_dropped_on_the_physics_thread(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    gy_physics_body_ref body = fx_create(p, fx_sphere(2, 0, gy_v3(0, 5, 0), 0.5));
    gy_physics_joint_def jd = hinge_on(3, body);
    gy_physics_joint_ref old_joint, new_joint;
    joint_at(p, 3);
    assert_result(gy_physics_record_create_joint(p, &jd, &old_joint), GY_OK);
    gy_vec3 pts[8];
    for (int i = 0; i < 8; i++)
        pts[i] = gy_v3(i & 1 ? 0.5 : -0.5, i & 2 ? 0.5 : -0.5, i & 4 ? 0.5 : -0.5);
    gy_hull_def hull = {pts, 8};
    gy_physics_resource_def rd = {NULL, &hull};
    gy_physics_resource_ref old_res, new_res;
    res_at(p, 7);
    assert_result(gy_physics_record_create_resource(p, &rd, &old_res), GY_OK);
    fx_step(p, 1);
    assert_result(gy_physics_record_release_joint(p, old_joint), GY_OK);
    joint_at(p, 3);
    assert_result(gy_physics_record_create_joint(p, &jd, &new_joint), GY_OK);
    assert_result(gy_physics_record_release_resource(p, old_res), GY_OK);
    res_at(p, 7);
    assert_result(gy_physics_record_create_resource(p, &rd, &new_res), GY_OK);
    assert_int_equal(new_joint.index, old_joint.index);
    assert_int_equal(new_res.index, old_res.index);
    fx_step(p, 1);
    assert_int_equal(fx_stats(p).commands_dropped_stale, 0);
    p->game.joint_ids.live[3] = old_joint.generation;
    p->game.resource_ids.live[7] = old_res.generation;
    gy_joint_motor motor = {GY_MOTOR_VELOCITY, 1.0, 10.0};
    assert_result(gy_physics_record_set_motor(p, old_joint, &motor), GY_OK);
    assert_result(gy_physics_record_release_joint(p, old_joint), GY_OK);
    assert_result(gy_physics_record_release_resource(p, old_res), GY_OK);
    fx_step(p, 1);
    assert_int_equal(fx_stats(p).commands_dropped_stale, 3);
    /* The new ones are still there: their releases are applied. */
    p->game.joint_ids.live[3] = new_joint.generation;
    p->game.resource_ids.live[7] = new_res.generation;
    assert_result(gy_physics_record_release_joint(p, new_joint), GY_OK);
    assert_result(gy_physics_record_release_resource(p, new_res), GY_OK);
    fx_step(p, 1);
    assert_int_equal(fx_stats(p).commands_dropped_stale, 3);
    gy_physics_destroy(p);
}

/* A ball of radius 0.5 at `at` whose collider is the hull resource `r`. */
static fx_body hull_ball(uint32_t index, uint32_t generation, gy_vec3 at, gy_physics_resource_ref r)
{
    fx_body b = fx_sphere(index, generation, at, 0.5);
    b.collider.shape.type = GY_SHAPE_HULL;
    b.collider.shape.resource.bits = gy_physics_resource_ref_bits(r);
    return b;
}

/* Resource refs as joint refs: one from before a restart, or released, names nothing. */
static void test_physics_resource_ref_from_before_a_restart_is_stale(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    gy_vec3 pts[8];
    for (int i = 0; i < 8; i++)
        pts[i] = gy_v3(i & 1 ? 0.5 : -0.5, i & 2 ? 0.5 : -0.5, i & 4 ? 0.5 : -0.5);
    gy_hull_def hull = {pts, 8};
    gy_physics_resource_def rd = {NULL, &hull};
    gy_physics_resource_ref old;
    res_at(p, 1);
    assert_result(gy_physics_record_create_resource(p, &rd, &old), GY_OK);
    assert_int_equal(old.index, 1);
    assert_true(old.generation != 0);
    fx_step(p, 1);
    assert_result(gy_physics_stop(p), GY_OK);
    gy_physics_resource_ref now;
    gy_physics_bootstrap boot = {&rd, 1, NULL, 0, NULL, 0, NULL, NULL, &now};
    assert_result(gy_physics_start(p, &boot), GY_OK);
    assert_int_equal(now.index, old.index);
    assert_true(now.generation > old.generation);
    assert_result(gy_physics_record_release_resource(p, old), GY_ERR_STALE_HANDLE);
    /* A body names the resource by its ref: the one issued by the start. */
    fx_body b = hull_ball(0, 0, gy_v3(0, 5, 0), now);
    fx_create(p, b);
    fx_step(p, 1);
    assert_int_equal(fx_stats(p).bodies, 1);
    assert_result(gy_physics_record_release_resource(p, now), GY_OK);
    assert_result(gy_physics_record_release_resource(p, now), GY_ERR_STALE_HANDLE);
    gy_physics_resource_ref null_ref = {0, 0};
    assert_result(gy_physics_record_release_resource(p, null_ref), GY_ERR_STALE_HANDLE);
    fx_step(p, 1);
    assert_int_equal(fx_stats(p).commands_dropped_stale, 0);
    gy_physics_destroy(p);
}

/* A unit-cube hull resource at slot `index`. */
static gy_physics_resource_ref cube_resource(gy_physics *p, uint32_t index)
{
    static gy_vec3 pts[8];
    for (int i = 0; i < 8; i++)
        pts[i] = gy_v3(i & 1 ? 0.5 : -0.5, i & 2 ? 0.5 : -0.5, i & 4 ? 0.5 : -0.5);
    gy_hull_def hull = {pts, 8};
    gy_physics_resource_def rd = {NULL, &hull};
    gy_physics_resource_ref ref = {0, 0};
    res_at(p, index);
    assert_result(gy_physics_record_create_resource(p, &rd, &ref), GY_OK);
    return ref;
}

/* A cube resource at slot `index` released after a tick and the slot taken again by a new one:
 * returns the new ref and puts the released one in `old`. */
static gy_physics_resource_ref reissued_cube_resource(gy_physics *p, uint32_t index,
                                                      gy_physics_resource_ref *old)
{
    *old = cube_resource(p, index);
    fx_step(p, 1);
    assert_result(gy_physics_record_release_resource(p, *old), GY_OK);
    return cube_resource(p, index);
}

/* The one reply drained is the create of body `key` (generation `generation`) failing as stale. */
static void assert_stale_body_create_failed(const fx_replies *rs, uint32_t key, uint32_t generation)
{
    assert_int_equal(rs->count, 1);
    assert_int_equal(rs->r[0].type, GY_PHYSICS_REPLY_CREATE_FAILED);
    assert_int_equal(rs->r[0].key, key);
    assert_int_equal(gy_reply_as_failure(&rs->r[0])->kind, GY_PHYSICS_OBJECT_BODY);
    assert_int_equal(gy_reply_as_failure(&rs->r[0])->body_generation, generation);
    assert_int_equal(gy_reply_as_failure(&rs->r[0])->result, GY_ERR_STALE_HANDLE);
}

/* A resource released and its slot reused: a body naming the old ref is refused when recorded
 * (nothing recorded), not built against the new resource. */
static void test_physics_body_naming_a_stale_resource_is_refused(void **state)
{
    (void)state;
    static fx_replies rs;
    gy_physics *p = lockstep_recording(&rs);
    gy_physics_resource_ref old;
    gy_physics_resource_ref now = reissued_cube_resource(p, 7, &old);
    assert_int_equal(now.index, old.index);
    assert_true(now.generation != old.generation);
    fx_body b = hull_ball(0, 0, gy_v3(0, 5, 0), old);
    gy_physics_resource_ref stale[] = {old, {7, 0}, {9, now.generation}, {0, 0}};
    for (size_t i = 0; i < sizeof stale / sizeof stale[0]; i++) {
        b.collider.shape.resource.bits = gy_physics_resource_ref_bits(stale[i]);
        gy_physics_body_ref ref = {3, 3};
        assert_result(gy_physics_record_create_body(p, fx_desc(&b), &ref), GY_ERR_STALE_HANDLE);
        assert_int_equal(ref.index, 3); /* untouched */
        assert_int_equal(ref.generation, 3);
    }
    fx_step(p, 1);
    fx_drain(p, &rs);
    assert_int_equal(rs.count, 0);
    assert_int_equal(fx_stats(p).bodies, 0);
    /* Nothing holds the body's slot: the same body naming the live ref is created. */
    b.collider.shape.resource.bits = gy_physics_resource_ref_bits(now);
    fx_create(p, b);
    fx_step(p, 1);
    fx_drain(p, &rs);
    assert_int_equal(fx_count_type(&rs, GY_PHYSICS_REPLY_BODY_ASSIGNED), 1);
    assert_int_equal(fx_count_type(&rs, GY_PHYSICS_REPLY_CREATE_FAILED), 0);
    assert_int_equal(fx_stats(p).bodies, 1);
    gy_physics_destroy(p);
}

/* A stale resource ref that got past the game side (the old generation put back in the pool by
 * hand) is caught on the physics thread: the body's create fails as stale rather than taking the
 * resource now live in the slot. */
static void test_physics_body_naming_a_stale_resource_fails_on_the_physics_thread(void **state)
{
    (void)state;
    static fx_replies rs;
    gy_physics *p = lockstep_recording(&rs);
    gy_physics_resource_ref old;
    gy_physics_resource_ref now = reissued_cube_resource(p, 7, &old);
    fx_step(p, 1);
    p->game.resource_ids.live[7] = old.generation;
    fx_body b = hull_ball(0, 40, gy_v3(0, 5, 0), old);
    fx_create(p, b);
    p->game.resource_ids.live[7] = now.generation;
    fx_step(p, 1);
    fx_drain(p, &rs);
    assert_stale_body_create_failed(&rs, 0, 40);
    gy_physics_stats s = fx_stats(p);
    assert_int_equal(s.creates_failed, 1);
    assert_int_equal(s.bodies, 0);
    /* The live resource is untouched: a body naming its ref is built against it. */
    assert_result(gy_physics_record_release_body(p, (gy_physics_body_ref){0, 40}), GY_OK);
    b = hull_ball(1, 41, gy_v3(0, 5, 0), now);
    fx_create(p, b);
    fx_step(p, 1);
    assert_int_equal(fx_stats(p).bodies, 1);
    gy_physics_destroy(p);
}

/* Generations are never issued twice: once the last one is out, creates are refused (and change
 * nothing) rather than wrap to a generation an old ref may still carry. */
static void test_physics_refs_run_out_rather_than_repeat(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    fx_issue_next(p, UINT32_MAX);
    gy_physics_body_ref last = fx_create(p, fx_sphere(0, 0, gy_v3(0, 5, 0), 0.5));
    assert_int_equal(last.generation, UINT32_MAX);
    fx_body b = fx_sphere(1, 0, gy_v3(2, 5, 0), 0.5);
    gy_physics_body_ref ref = {7, 7};
    assert_result(gy_physics_record_create_body(p, fx_desc(&b), &ref), GY_ERR_CAPACITY);
    assert_int_equal(ref.index, 7); /* untouched */
    assert_int_equal(ref.generation, 7);
    assert_result(gy_physics_record_release_body(p, last), GY_OK);
    assert_result(gy_physics_record_create_body(p, fx_desc(&b), &ref), GY_ERR_CAPACITY);
    fx_step(p, 1);
    assert_int_equal(fx_stats(p).bodies, 0);
    gy_physics_destroy(p);
}

/* A collider's resource bits and the ref they pack: the index low, the generation high, every
 * value of each kept (no bits pattern is invalid to unpack; a stale or null one is refused where
 * it is resolved), and the null ref packs to 0. */
static void test_physics_resource_ref_bits_round_trip(void **state)
{
    (void)state;
    gy_physics_resource_ref null_ref = {0, 0};
    assert_true(gy_physics_resource_ref_bits(null_ref) == 0u);
    gy_physics_resource_ref r = gy_physics_resource_ref_of_bits(0);
    assert_int_equal(r.index, 0);
    assert_int_equal(r.generation, 0);
    gy_physics_resource_ref one = {7, 3};
    assert_true(gy_physics_resource_ref_bits(one) == ((3ull << 32) | 7u));
    const uint32_t edge[] = {0u, 1u, 0x80000000u, UINT32_MAX};
    for (int i = 0; i < 4; i++)
        for (int g = 0; g < 4; g++) {
            gy_physics_resource_ref ref = {edge[i], edge[g]};
            r = gy_physics_resource_ref_of_bits(gy_physics_resource_ref_bits(ref));
            assert_int_equal(r.index, edge[i]);
            assert_int_equal(r.generation, edge[g]);
        }
    r = gy_physics_resource_ref_of_bits(UINT64_MAX);
    assert_int_equal(r.index, UINT32_MAX);
    assert_int_equal(r.generation, UINT32_MAX);
}

static void test_physics_create_released_in_same_batch_is_not_performed(void **state)
{
    (void)state;
    static fx_replies rs;
    gy_physics *p = lockstep_recording(&rs);
    fx_create(p, fx_sphere(5, 30, gy_v3(0, 5, 0), 0.5));
    assert_result(gy_physics_record_release_body(p, (gy_physics_body_ref){5, 30}), GY_OK);
    /* And a slot taken, dropped and taken again by a newer attachment in one batch. */
    fx_create(p, fx_sphere(6, 31, gy_v3(0, 5, 0), 0.5));
    assert_result(gy_physics_record_release_body(p, (gy_physics_body_ref){6, 31}), GY_OK);
    fx_create(p, fx_sphere(6, 32, gy_v3(3, 5, 0), 0.5));
    fx_step(p, 1);
    gy_physics_stats s = fx_stats(p);
    assert_int_equal(s.creates_cancelled, 2);
    assert_int_equal(s.commands_dropped_stale, 0);
    assert_int_equal(s.bodies, 1);
    fx_drain(p, &rs);
    assert_int_equal(fx_count_type(&rs, GY_PHYSICS_REPLY_BODY_ASSIGNED), 1);
    assert_non_null(find_assigned(&rs, 32));
    uint32_t n;
    const gy_proxy *px = fx_proxies(p, &n, NULL);
    assert_int_equal(n, 7);
    assert_int_equal(px[5].flags, 0);
    assert_int_equal(px[5].generation, 0);
    assert_int_equal(px[6].generation, 32);
    assert_near(px[6].position[0], 3.0, 1e-6);
    gy_physics_destroy(p);
}

static void test_physics_commands_for_a_failed_create_are_dropped_and_counted(void **state)
{
    (void)state;
    static fx_replies rs;
    gy_physics *p = lockstep_recording(&rs);
    /* A hull collider naming a resource gone by the time the body is created (the game side
     * fooled into holding its ref) fails on the physics thread. */
    fx_step(p, 2); /* the failure names a tick other than the first */
    gy_physics_resource_ref gone = cube_resource(p, 99);
    assert_result(gy_physics_record_release_resource(p, gone), GY_OK);
    p->game.resource_ids.live[99] = gone.generation;
    fx_create(p, hull_ball(0, 40, gy_v3(0, 1, 0), gone));
    fx_step(p, 1);
    fx_drain(p, &rs);
    assert_stale_body_create_failed(&rs, 0, 40);
    /* The tick whose drain refused it: the one just produced. */
    assert_int_equal(gy_reply_as_failure(&rs.r[0])->tick, gy_physics_tick(p));
    assert_int_equal(gy_physics_tick(p), 3);
    /* The game side still holds the attachment until it reacts, so these are recorded... */
    assert_result(gy_physics_record_add_impulse(p, (gy_physics_body_ref){0, 40}, gy_v3(1, 0, 0)),
                  GY_OK);
    assert_result(gy_physics_record_set_pose(p, (gy_physics_body_ref){0, 40}, gy_pose_identity()),
                  GY_OK);
    fx_step(p, 1);
    /* ...and dropped there. */
    gy_physics_stats s = fx_stats(p);
    assert_int_equal(s.commands_dropped_stale, 2);
    assert_int_equal(s.creates_failed, 1);
    assert_int_equal(s.bodies, 0);
    gy_physics_destroy(p);
}

/* ---- one-off inputs -------------------------------------------------------------------------- */

static void test_physics_impulses_reach_exactly_one_tick_under_a_flood(void **state)
{
    (void)state;
    gy_physics_def d = gy_default_physics_def();
    d.lockstep = true;
    d.world.gravity = gy_v3(0, 0, 0);
    d.mutate_capacity = 1024; /* the flood overflows the ring into staging */
    gy_physics *p = fx_physics(&d);
    assert_result(gy_physics_start(p, NULL), GY_OK);
    enum { FILLERS = 64, FLOOD = 3000 };
    fx_body target = fx_sphere(0, 1, gy_v3(0, 0, 0), 0.5);
    target.desc.def.mass = 1.0;
    target.desc.def.linear_damping = 0.0;
    target.desc.def.angular_damping = 0.0;
    target.desc.def.allow_sleeping = false;
    fx_create(p, target);
    for (uint32_t i = 1; i <= FILLERS; i++)
        fx_create(p, fx_sphere(i, 100 + i, gy_v3(10.0 * i, 50, 0), 0.5));
    fx_step(p, 1);
    uint32_t expected = 0;
    for (uint32_t t = 0; t < 30; t++) {
        for (uint32_t k = 0; k < FLOOD; k++) {
            uint32_t s = 1 + k % FILLERS;
            assert_result(gy_physics_record_set_linear_velocity(
                              p, (gy_physics_body_ref){s, 100 + s}, gy_v3(0, 0, 0)),
                          GY_OK);
            if (k == FLOOD / 2) {
                assert_result(
                    gy_physics_record_add_impulse(p, (gy_physics_body_ref){0, 1}, gy_v3(1, 0, 0)),
                    GY_OK);
                expected++;
                if (t % 3 == 0) {
                    /* Two impulses in one tick are two impulses, across a batch boundary too. */
                    assert_result(gy_physics_publish(p, NULL), GY_OK);
                    assert_result(gy_physics_record_add_impulse(p, (gy_physics_body_ref){0, 1},
                                                                gy_v3(1, 0, 0)),
                                  GY_OK);
                    expected++;
                }
            }
        }
        fx_step(p, 1);
        const gy_proxy *px = fx_proxies(p, NULL, NULL);
        assert_near(px[0].linear_velocity[0], (double)expected, 1e-5);
    }
    /* A tick with nothing but one impulse delivers it too. */
    assert_result(gy_physics_record_add_impulse(p, (gy_physics_body_ref){0, 1}, gy_v3(1, 0, 0)),
                  GY_OK);
    expected++;
    fx_step(p, 1);
    fx_step(p, 1); /* and an empty tick adds nothing */
    const gy_proxy *px = fx_proxies(p, NULL, NULL);
    assert_near(px[0].linear_velocity[0], (double)expected, 1e-5);
    assert_int_equal(fx_stats(p).commands_dropped_stale, 0);
    gy_physics_destroy(p);
}

/* ---- collision events ------------------------------------------------------------------------ */

typedef struct pair_log {
    uint32_t a, b; /* attachments, a < b */
    uint32_t enters, exits, stays;
    uint32_t last_tick;
    uint32_t exit_tick;
    bool touching;
    bool double_in_tick;
} pair_log;

static pair_log *pair_of(pair_log *logs, uint32_t *n, uint32_t a, uint32_t b)
{
    if (a > b) {
        uint32_t t = a;
        a = b;
        b = t;
    }
    for (uint32_t i = 0; i < *n; i++)
        if (logs[i].a == a && logs[i].b == b)
            return &logs[i];
    pair_log *l = &logs[(*n)++];
    memset(l, 0, sizeof *l);
    l->a = a;
    l->b = b;
    return l;
}

static void log_events(const fx_replies *rs, pair_log *logs, uint32_t *n)
{
    for (uint32_t i = 0; i < rs->count; i++) {
        const gy_reply *r = &rs->r[i];
        if (r->type < GY_PHYSICS_REPLY_COLLISION_ENTER)
            continue;
        const gy_physics_collision *c = gy_reply_as_collision(r);
        pair_log *l = pair_of(logs, n, c->generation_a, c->generation_b);
        if (r->type == GY_PHYSICS_REPLY_COLLISION_EXIT) {
            assert_true(l->touching);
            assert_near(c->normal_impulse, 0.0, 0.0);
            assert_near(c->tangent_impulse, 0.0, 0.0);
            l->exits++;
            l->touching = false;
            l->exit_tick = c->tick;
            continue;
        }
        if (l->touching && l->last_tick == c->tick)
            l->double_in_tick = true;
        if (r->type == GY_PHYSICS_REPLY_COLLISION_ENTER) {
            assert_false(l->touching);
            l->enters++;
        } else {
            assert_true(l->touching);
            l->stays++;
        }
        l->touching = true;
        l->last_tick = c->tick;
    }
}

static void test_physics_events_pair_on_release_and_on_stop(void **state)
{
    (void)state;
    static fx_replies rs;
    memset(&rs, 0, sizeof rs);
    pair_log logs[16];
    uint32_t nlogs = 0;
    gy_physics *p = fx_lockstep(NULL);
    fx_create(p, fx_floor(0, 1));
    fx_create(p, fx_box(1, 2, GY_MOTION_DYNAMIC, gy_v3(0, 0.49, 0), gy_v3(1, 1, 1)));
    fx_create(p, fx_box(2, 3, GY_MOTION_DYNAMIC, gy_v3(5, 0.49, 0), gy_v3(1, 1, 1)));
    fx_step(p, 10);
    fx_drain(p, &rs);
    log_events(&rs, logs, &nlogs);
    assert_int_equal(nlogs, 2);
    pair_log *l1 = pair_of(logs, &nlogs, 1, 2), *l2 = pair_of(logs, &nlogs, 1, 3);
    assert_int_equal(l1->enters, 1);
    assert_int_equal(l2->enters, 1);
    assert_true(l1->touching && l2->touching);
    assert_int_equal(l1->stays, 9);
    assert_false(l1->double_in_tick);

    uint64_t tick = gy_physics_tick(p);
    assert_result(gy_physics_record_release_body(p, (gy_physics_body_ref){1, 2}), GY_OK);
    fx_step(p, 1);
    rs.count = 0;
    fx_drain(p, &rs);
    log_events(&rs, logs, &nlogs);
    assert_int_equal(l1->exits, 1);
    assert_false(l1->touching);
    assert_int_equal(l1->exit_tick, (uint32_t)(tick + 1u));
    assert_true(l2->touching);

    tick = gy_physics_tick(p);
    assert_result(gy_physics_stop(p), GY_OK);
    rs.count = 0;
    fx_drain(p, &rs);
    log_events(&rs, logs, &nlogs);
    assert_int_equal(l2->exits, 1);
    assert_false(l2->touching);
    assert_int_equal(l2->exit_tick, (uint32_t)(tick + 1u));
    for (uint32_t i = 0; i < nlogs; i++) {
        assert_int_equal(logs[i].enters, logs[i].exits);
        assert_false(logs[i].double_in_tick);
    }
    gy_physics_destroy(p);
}

/* ---- joints and resources -------------------------------------------------------------------- */

static void test_physics_resources_and_joints_by_key(void **state)
{
    (void)state;
    static fx_replies rs;
    gy_physics *p = lockstep_recording(&rs);
    gy_vec3 pts[8];
    for (int i = 0; i < 8; i++)
        pts[i] = gy_v3(i & 1 ? 0.5 : -0.5, i & 2 ? 0.5 : -0.5, i & 4 ? 0.5 : -0.5);
    gy_hull_def hull = {pts, 8};
    gy_physics_resource_def rd = {NULL, &hull};
    gy_physics_resource_ref resource;
    res_at(p, 7);
    assert_result(gy_physics_record_create_resource(p, &rd, &resource), GY_OK);
    fx_create(p, hull_ball(0, 1, gy_v3(0, 5, 0), resource));
    fx_create(p, fx_sphere(1, 2, gy_v3(0, 3, 0), 0.25));
    fx_create(p, fx_floor(2, 3));
    gy_physics_joint_def jd;
    memset(&jd, 0, sizeof jd);
    jd.a.index = 0;
    jd.a.generation = 1;
    jd.def = gy_default_joint_def();
    jd.def.type = GY_JOINT_BALL;
    jd.def.anchor = gy_v3(0, 8, 0);
    jd.def.breakable = true;
    jd.def.break_force = 1.0; /* the hanging hull weighs ~10 N: it breaks at once */
    gy_physics_joint_ref joint;
    joint_at(p, 4);
    assert_result(gy_physics_record_create_joint(p, &jd, &joint), GY_OK);
    /* A joint naming a body the game no longer holds is refused game-side... */
    jd.a.index = 1;
    jd.a.generation = 99;
    joint_at(p, 5);
    assert_result(gy_physics_record_create_joint(p, &jd, &joint), GY_ERR_STALE_HANDLE);
    fx_step(p, 3);
    fx_drain(p, &rs);
    assert_int_equal(fx_count_type(&rs, GY_PHYSICS_REPLY_BODY_ASSIGNED), 3);
    assert_int_equal(fx_count_type(&rs, GY_PHYSICS_REPLY_CREATE_FAILED), 0);
    assert_int_equal(fx_count_type(&rs, GY_PHYSICS_REPLY_JOINT_BROKEN), 1);
    for (uint32_t i = 0; i < rs.count; i++)
        if (rs.r[i].type == GY_PHYSICS_REPLY_JOINT_BROKEN)
            assert_int_equal(rs.r[i].key, 4);
    /* The snapshot answers against the hull. */
    const gy_snapshot_view *v = gy_physics_acquire_query_view(p);
    assert_non_null(v);
    gy_snapshot_entry_info info;
    assert_result(gy_snapshot_view_get(v, 0, &info), GY_OK);
    assert_int_equal(info.entry.shape.type, GY_SHAPE_HULL);
    assert_int_equal(info.entry.body.generation, 1);
    /* Releasing the resource while a body uses it is fine (the body keeps its reference). */
    assert_result(gy_physics_record_release_resource(p, resource), GY_OK);
    assert_result(gy_physics_record_release_body(p, (gy_physics_body_ref){0, 1}), GY_OK);
    fx_step(p, 1);
    gy_physics_stats s = fx_stats(p);
    assert_int_equal(s.commands_dropped_stale, 0);
    assert_int_equal(s.bodies, 2);
    gy_physics_destroy(p);
}

/* ---- the character hook ---------------------------------------------------------------------- */

typedef struct hook_log {
    uint32_t calls;
    uint32_t jumps;
    uint32_t intents;
    uint64_t last_tick;
    uint64_t ticks_with_inputs[8];
    uint32_t n_with_inputs;
    bool saw_teleport; /* the body teleported this tick was already there when the hook ran */
    uint32_t move_store;
    uint32_t move_attachment;
} hook_log;

static void hook(void *ctx, const gy_physics_step_context *sc)
{
    hook_log *h = ctx;
    h->calls++;
    h->last_tick = sc->tick;
    if (sc->input_count > 0 && h->n_with_inputs < 8)
        h->ticks_with_inputs[h->n_with_inputs++] = sc->tick;
    for (uint32_t i = 0; i < sc->input_count; i++) {
        if (sc->inputs[i].kind == GY_CHARACTER_JUMP) {
            h->jumps++;
            assert_near(sc->inputs[i].value, 4.5, 0.0);
        } else {
            h->intents++;
            assert_int_equal(sc->inputs[i].flags, 3);
        }
    }
    gy_body_id id =
        gy_physics_hook_body(sc, (gy_physics_body_ref){h->move_store, h->move_attachment});
    if (id.bits == 0)
        return;
    gy_body_state st;
    assert_result(sc->backend->body_get_state(sc->world, id, &st), GY_OK);
    if (fabs(st.pose.position.x - 7.0) < 1e-9)
        h->saw_teleport = true;
    /* Characters move after the step: this move is what the tick publishes. */
    gy_pose to = st.pose;
    to.position.z = (double)sc->tick;
    assert_result(sc->backend->body_set_pose(sc->world, id, to), GY_OK);
    gy_physics_hook_touch(sc, h->move_store);
}

static void test_physics_character_hook_runs_after_the_step(void **state)
{
    (void)state;
    hook_log h;
    memset(&h, 0, sizeof h);
    h.move_store = 1;
    h.move_attachment = 2;
    gy_physics_def d = gy_default_physics_def();
    d.lockstep = true;
    d.move_characters = hook;
    d.character_ctx = &h;
    gy_physics *p = fx_physics(&d);
    assert_result(gy_physics_start(p, NULL), GY_OK);
    fx_create(p, fx_sphere(0, 1, gy_v3(0, 1, 0), 0.5));
    fx_create(p, fx_box(1, 2, GY_MOTION_KINEMATIC, gy_v3(0, 3, 0), gy_v3(1, 1, 1)));
    fx_step(p, 2);
    assert_int_equal(h.calls, 2);
    assert_int_equal(h.n_with_inputs, 0);
    assert_result(gy_physics_record_character_jump(p, (gy_physics_body_ref){0, 1}, 4.5), GY_OK);
    assert_result(
        gy_physics_record_character_intent(p, (gy_physics_body_ref){0, 1}, gy_v3(1, 0, 0), 3),
        GY_OK);
    gy_pose tp = gy_pose_identity();
    tp.position = gy_v3(7, 3, 0);
    assert_result(gy_physics_record_set_pose(p, (gy_physics_body_ref){1, 2}, tp), GY_OK);
    fx_step(p, 3);
    assert_int_equal(h.calls, 5);
    assert_int_equal(h.jumps, 1); /* exactly one tick saw the jump */
    assert_int_equal(h.intents, 1);
    assert_int_equal(h.n_with_inputs, 1);
    assert_int_equal(h.ticks_with_inputs[0], 3);
    assert_true(h.saw_teleport);
    const gy_proxy *px = fx_proxies(p, NULL, NULL);
    assert_near(px[1].position[2], (double)h.last_tick, 1e-6);
    assert_near(px[1].position[0], 7.0, 1e-6);
    gy_physics_destroy(p);
}

/* ---- queries --------------------------------------------------------------------------------- */

static void test_physics_live_and_snapshot_queries_carry_the_tick(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    fx_create(p, fx_floor(0, 1));
    fx_create(p, fx_box(1, 2, GY_MOTION_STATIC, gy_v3(0, 0.5, 0), gy_v3(1, 1, 1)));
    fx_step(p, 2);
    gy_hit hit;
    uint32_t n = 0;
    uint64_t tick = 0;
    gy_query_filter f = gy_default_query_filter();
    assert_result(gy_physics_raycast(p, gy_v3(0, 5, 0), gy_v3(0, -10, 0), &f, GY_COLLECT_CLOSEST,
                                     &hit, 1, &n, &tick),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_int_equal(tick, 2);
    assert_int_equal(hit.user_data, ((uint64_t)1 << 32) | 2u);
    assert_near(hit.point.y, 1.0, 1e-6);
    assert_near(hit.distance, 4.0, 1e-6);

    gy_shape sphere = {0};
    sphere.type = GY_SHAPE_SPHERE;
    sphere.radius = 0.25;
    gy_pose at = gy_pose_identity();
    at.position = gy_v3(3, 0.1, 0);
    assert_result(gy_physics_overlap(p, &sphere, at, &f, GY_COLLECT_ANY, &hit, 1, &n, &tick),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_int_equal(hit.user_data, ((uint64_t)0 << 32) | 1u);
    at.position = gy_v3(3, 5, 0);
    assert_result(gy_physics_shape_cast(p, &sphere, at, gy_v3(0, -10, 0), &f, GY_COLLECT_CLOSEST,
                                        &hit, 1, &n, NULL),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_near(hit.distance, 4.75, 1e-3);

    const gy_snapshot_view *v = gy_physics_acquire_query_view(p);
    assert_non_null(v);
    assert_int_equal(gy_snapshot_view_tick(v), 2);
    gy_snapshot_hit sh;
    gy_snapshot_filter sf = gy_default_snapshot_filter();
    assert_result(gy_snapshot_view_raycast(v, gy_v3(0, 5, 0), gy_v3(0, -10, 0), &sf,
                                           GY_COLLECT_CLOSEST, &sh, 1, &n),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_int_equal(sh.body.generation, 2);
    assert_int_equal(sh.body.index, 1);
    assert_int_equal(sh.tick, 2);
    assert_near(sh.point.y, 1.0, 1e-6);
    /* A caller can skip its own body. */
    sf.ignore_body.generation = 2;
    assert_result(gy_snapshot_view_raycast(v, gy_v3(0, 5, 0), gy_v3(0, -10, 0), &sf,
                                           GY_COLLECT_CLOSEST, &sh, 1, &n),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_int_equal(sh.body.generation, 1);

    /* A teleport shows in the next snapshot. */
    gy_pose tp = gy_pose_identity();
    tp.position = gy_v3(10, 0.5, 0);
    assert_result(gy_physics_record_set_pose(p, (gy_physics_body_ref){1, 2}, tp), GY_OK);
    fx_step(p, 1);
    v = gy_physics_acquire_query_view(p);
    assert_int_equal(gy_snapshot_view_tick(v), 3);
    sf.ignore_body.generation = 0;
    assert_result(gy_snapshot_view_raycast(v, gy_v3(10, 5, 0), gy_v3(0, -10, 0), &sf,
                                           GY_COLLECT_CLOSEST, &sh, 1, &n),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_int_equal(sh.body.generation, 2);
    assert_int_equal(sh.tick, 3);
    gy_physics_destroy(p);
}

/* ---- faults ---------------------------------------------------------------------------------- */

static void count_log(void *ctx, gy_log_level level, const char *message)
{
    (void)message;
    if (level >= GY_LOG_WARN)
        (*(uint32_t *)ctx)++;
}

/* Stands in for an adapter blow-up: once armed, sets one number of body 0's state straight on
 * the adapter (commands refuse such values): which (0-2 position, 3-5 linear velocity, 6-8
 * angular velocity) and to what. */
typedef struct poke {
    bool armed;
    int which;
    double value;
} poke;

static void poke_hook(void *ctx, const gy_physics_step_context *sc)
{
    poke *k = ctx;
    if (!k->armed)
        return;
    k->armed = false;
    gy_body_id id = gy_physics_hook_body(sc, (gy_physics_body_ref){0, 1});
    gy_body_state st;
    assert_result(sc->backend->body_get_state(sc->world, id, &st), GY_OK);
    double *v = k->which < 3   ? &st.pose.position.x
                : k->which < 6 ? &st.linear_velocity.x
                               : &st.angular_velocity.x;
    v[k->which % 3] = k->value;
    if (k->which < 3 && fabs(k->value) > GY_MAX_MAGNITUDE) {
        /* Adapters refuse such a pose: the body is put at the bound, moving outwards at the
         * largest accepted speed, so the step itself carries it past. */
        v[k->which % 3] = copysign(GY_MAX_MAGNITUDE, k->value);
        assert_result(sc->backend->body_set_pose(sc->world, id, st.pose), GY_OK);
        gy_vec3 vel = gy_v3(0, 0, 0);
        (&vel.x)[k->which % 3] = copysign(GY_MAX_MAGNITUDE, k->value);
        assert_result(sc->backend->body_set_linear_velocity(sc->world, id, vel), GY_OK);
    } else if (k->which < 3)
        assert_result(sc->backend->body_set_pose(sc->world, id, st.pose), GY_OK);
    else if (k->which < 6)
        assert_result(sc->backend->body_set_linear_velocity(sc->world, id, st.linear_velocity),
                      GY_OK);
    else
        assert_result(sc->backend->body_set_angular_velocity(sc->world, id, st.angular_velocity),
                      GY_OK);
}

/* A lockstep world, no gravity, with one sphere (store 0, attachment 1) at (2, 3, 4) stepped once;
 * `k` is armed for the next step. */
static gy_physics *poked_sphere(poke *k, const gy_logger *logger)
{
    gy_physics_def d = gy_default_physics_def();
    d.lockstep = true;
    d.world.gravity = gy_v3(0, 0, 0);
    d.move_characters = poke_hook;
    d.character_ctx = k;
    d.logger = logger;
    gy_physics *p = fx_physics(&d);
    assert_result(gy_physics_start(p, NULL), GY_OK);
    fx_create(p, fx_sphere(0, 1, gy_v3(2, 3, 4), 0.5));
    fx_step(p, 1);
    k->armed = true; /* ordered by the lockstep hand-off */
    return p;
}

static void test_physics_non_finite_state_is_frozen_and_reported(void **state)
{
    (void)state;
    static fx_replies rs;
    memset(&rs, 0, sizeof rs);
    poke bl = {false, 3, 1e300}; /* the next step overflows the position */
    uint32_t warnings = 0;
    gy_logger logger = {count_log, &warnings};
    gy_physics *p = poked_sphere(&bl, &logger);
    fx_step(p, 3);
    const gy_proxy *px = fx_proxies(p, NULL, NULL);
    for (int k = 0; k < 3; k++) {
        assert_true(isfinite(px[0].position[k]));
        assert_true(isfinite(px[0].linear_velocity[k]));
    }
    assert_true(px[0].flags & GY_PROXY_FAULT);
    assert_near(px[0].position[0], 2.0, 1e-6); /* frozen at its last published pose */
    assert_near(px[0].linear_velocity[0], 0.0, 0.0);
    assert_true(fx_stats(p).bodies_faulted >= 1);
    fx_drain(p, &rs);
    assert_int_equal(fx_count_type(&rs, GY_PHYSICS_REPLY_BODY_FAULT), 1);
    assert_int_equal(warnings, 1);
    /* A teleport clears the fault. */
    gy_pose pose = gy_pose_identity();
    assert_result(gy_physics_record_set_pose(p, (gy_physics_body_ref){0, 1}, pose), GY_OK);
    fx_step(p, 2);
    px = fx_proxies(p, NULL, NULL);
    assert_false(px[0].flags & GY_PROXY_FAULT);
    assert_near(px[0].position[0], 0.0, 1e-9);
    gy_physics_destroy(p);
}

/* Every position and velocity component is held to GY_PHYSICS_MAX_MAGNITUDE on its own: past it
 * (either sign) the body is frozen and reported; a value well inside it is published as is. */
static void test_physics_each_state_component_is_bounded(void **state)
{
    (void)state;
    const double m = GY_PHYSICS_MAX_MAGNITUDE;
    for (int which = 0; which < 9; which++) {
        for (int sign = -1; sign <= 1; sign += 2) {
            for (int past = 0; past < 2; past++) {
                static fx_replies rs;
                memset(&rs, 0, sizeof rs);
                poke k = {false, which, sign * (past ? 2.0 * m : (which < 3 ? m : 1e-3 * m))};
                gy_logger quiet = {count_log, &(uint32_t){0}};
                gy_physics *p = poked_sphere(&k, &quiet);
                /* A position is carried past by the step after the poke (see poke_hook). */
                fx_step(p, which < 3 && past ? 2 : 1);
                const gy_proxy *px = fx_proxies(p, NULL, NULL);
                fx_drain(p, &rs);
                if (past) {
                    assert_true(px[0].flags & GY_PROXY_FAULT);
                    assert_int_equal(fx_count_type(&rs, GY_PHYSICS_REPLY_BODY_FAULT), 1);
                    /* Frozen at its last published pose: the bound, for a position. */
                    if (which < 3)
                        assert_near(px[0].position[which], sign * m, 1e-6 * m);
                    else
                        assert_near(px[0].position[0], 2.0, 1e-6);
                } else {
                    assert_false(px[0].flags & GY_PROXY_FAULT);
                    assert_int_equal(fx_count_type(&rs, GY_PHYSICS_REPLY_BODY_FAULT), 0);
                }
                gy_physics_destroy(p);
            }
        }
    }
}

/* Releasing through a NULL subsystem, a null ref or a ref of another kind's index is refused
 * with an error and changes nothing: the live body, joint and resource stay releasable. */
static void test_physics_release_of_a_bad_ref_is_refused_and_changes_nothing(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    gy_vec3 pts[8];
    for (int i = 0; i < 8; i++)
        pts[i] = gy_v3(i & 1 ? 0.5 : -0.5, i & 2 ? 0.5 : -0.5, i & 4 ? 0.5 : -0.5);
    gy_hull_def hull = {pts, 8};
    gy_physics_resource_def rd = {NULL, &hull};
    gy_physics_resource_ref res;
    res_at(p, 7);
    assert_result(gy_physics_record_create_resource(p, &rd, &res), GY_OK);
    gy_physics_body_ref a = fx_create(p, fx_sphere(0, 0, gy_v3(0, 5, 0), 0.5));
    gy_physics_joint_def jd = hinge_on(3, a);
    gy_physics_joint_ref joint;
    joint_at(p, 3);
    assert_result(gy_physics_record_create_joint(p, &jd, &joint), GY_OK);

    assert_result(gy_physics_record_release_body(NULL, a), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_physics_record_release_joint(NULL, joint), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_physics_record_release_resource(NULL, res), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_physics_record_release_body(p, (gy_physics_body_ref){0, 0}),
                  GY_ERR_STALE_HANDLE);
    assert_result(gy_physics_record_release_joint(p, (gy_physics_joint_ref){0, 0}),
                  GY_ERR_STALE_HANDLE);
    assert_result(gy_physics_record_release_resource(p, (gy_physics_resource_ref){0, 0}),
                  GY_ERR_STALE_HANDLE);
    /* The right index with a generation that was never issued for it. */
    assert_result(
        gy_physics_record_release_joint(p, (gy_physics_joint_ref){3, joint.generation + 1}),
        GY_ERR_STALE_HANDLE);
    assert_result(
        gy_physics_record_release_resource(p, (gy_physics_resource_ref){7, res.generation + 1}),
        GY_ERR_STALE_HANDLE);

    fx_step(p, 1);
    assert_int_equal(fx_stats(p).bodies, 1);
    assert_result(gy_physics_record_release_joint(p, joint), GY_OK);
    assert_result(gy_physics_record_release_body(p, a), GY_OK);
    assert_result(gy_physics_record_release_resource(p, res), GY_OK);
    assert_result(gy_physics_record_release_body(p, a), GY_ERR_STALE_HANDLE);
    fx_step(p, 1);
    assert_int_equal(fx_stats(p).bodies, 0);
    gy_physics_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_physics_create_rejects_bad_definitions),
        cmocka_unit_test(test_physics_misuse_is_an_error),
        cmocka_unit_test(test_physics_record_validates_before_enqueueing),
        cmocka_unit_test(test_physics_live_change_commands_validate_and_count),
        cmocka_unit_test(test_physics_stale_attachment_replies_rejected),
        cmocka_unit_test(test_physics_ref_from_before_a_restart_is_stale),
        cmocka_unit_test(test_physics_joint_ref_from_before_a_restart_is_stale),
        cmocka_unit_test(
            test_physics_stale_joint_and_resource_commands_dropped_on_the_physics_thread),
        cmocka_unit_test(test_physics_resource_ref_from_before_a_restart_is_stale),
        cmocka_unit_test(test_physics_release_of_a_bad_ref_is_refused_and_changes_nothing),
        cmocka_unit_test(test_physics_body_naming_a_stale_resource_is_refused),
        cmocka_unit_test(test_physics_body_naming_a_stale_resource_fails_on_the_physics_thread),
        cmocka_unit_test(test_physics_refs_run_out_rather_than_repeat),
        cmocka_unit_test(test_physics_resource_ref_bits_round_trip),
        cmocka_unit_test(test_physics_create_released_in_same_batch_is_not_performed),
        cmocka_unit_test(test_physics_commands_for_a_failed_create_are_dropped_and_counted),
        cmocka_unit_test(test_physics_impulses_reach_exactly_one_tick_under_a_flood),
        cmocka_unit_test(test_physics_events_pair_on_release_and_on_stop),
        cmocka_unit_test(test_physics_resources_and_joints_by_key),
        cmocka_unit_test(test_physics_character_hook_runs_after_the_step),
        cmocka_unit_test(test_physics_live_and_snapshot_queries_carry_the_tick),
        cmocka_unit_test(test_physics_non_finite_state_is_frozen_and_reported),
        cmocka_unit_test(test_physics_each_state_component_is_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
