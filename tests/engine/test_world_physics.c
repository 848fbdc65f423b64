/* Physics components over the real physics thread (lockstep): attachment identity end to end,
 * stale replies, the enable trio, updates, stop/start, and the validation every write does; and
 * in real time, the state a body reports staying that of the publish the World took in. */
#include "test_world_fixture.h"

#include <time.h>

#define G 9.81

static void test_body_add_creates_and_falls(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = wfx_world(&ta);
    gy_entity ball = wfx_ball(w, "ball", gy_v3(0, 10, 0));
    assert_true(gy_body_exists(w, ball));
    gy_physics_state s = wfx_state(w, ball);
    assert_false(s.has_body); /* recorded, not yet built */
    assert_int_not_equal(s.ref.generation, 0);
    assert_near(s.pose.position.y, 10.0, 0.0);
    wfx_tick(w, 30);
    s = wfx_state(w, ball);
    assert_true(s.has_body);
    assert_int_not_equal(s.body.bits, 0);
    assert_int_equal(s.tick, 30);
    /* Free fall, no damping: v = -g t and (the adapter integrates exactly here) y = y0 - g t²/2. */
    assert_near(s.linear_velocity.y, -G * 30 * WFX_DT, 1e-4);
    assert_near(s.pose.position.y, 10.0 - G * (30 * WFX_DT) * (30 * WFX_DT) / 2.0, 1e-4);
    /* The entity's transform follows the body. */
    assert_near(wfx_world_pose(w, ball).position.y, s.pose.position.y, 0.0);
    wfx_destroy(w, &ta);
}

/* Remove and re-add physics: a new attachment, a new body at the entity's current transform with
 * the authored (zero) velocity — never the old body, pose or velocity. */
static void test_body_readd_never_inherits_old_body_or_pose(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    gy_entity ball = wfx_ball(w, "ball", gy_v3(0, 10, 0));
    wfx_tick(w, 30);
    gy_physics_state before = wfx_state(w, ball);
    assert_true(before.linear_velocity.y < -4.0);
    assert_result(gy_body_remove(w, ball), GY_OK);
    assert_false(gy_body_exists(w, ball));
    assert_result(gy_entity_set_local_position(w, ball, gy_v3(3, 20, 0)), GY_OK);
    wfx_add(w, ball, wfx_sphere(GY_BODY_DYNAMIC, 0.5));
    gy_physics_state s = wfx_state(w, ball);
    assert_true(s.ref.generation > before.ref.generation);
    assert_int_equal(s.ref.index, before.ref.index); /* the slot is reused */
    wfx_tick(w, 1);
    s = wfx_state(w, ball);
    assert_near(s.pose.position.x, 3.0, 1e-6);
    assert_near(s.pose.position.y, 20.0 - G * WFX_DT * WFX_DT / 2.0, 1e-5);
    assert_near(s.linear_velocity.y, -G * WFX_DT, 1e-5);
    assert_true(s.has_body);
    assert_int_not_equal(s.body.bits, before.body.bits);
    assert_int_equal(wfx_physics_stats(w).bodies, 1);
    wfx_destroy(w, NULL);
}

/* Remove and re-add in the same frame, many times, while the old bodies' replies are in flight:
 * only the newest body is ever assigned. */
static void test_body_replies_for_removed_attachments_are_rejected(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    gy_entity ball = wfx_ball(w, "ball", gy_v3(0, 5, 0));
    /* Run the create past the World (its reply stays queued), then remove before the drain. */
    assert_result(gy_physics_step(gy_world_physics(w), 1, WFX_TIMEOUT), GY_OK);
    uint32_t old = wfx_state(w, ball).ref.generation;
    assert_result(gy_body_remove(w, ball), GY_OK);
    wfx_add(w, ball, wfx_sphere(GY_BODY_DYNAMIC, 0.5));
    wfx_tick(w, 1);
    gy_physics_stats ps = wfx_physics_stats(w);
    assert_true(ps.replies_rejected >= 1);
    gy_physics_state s = wfx_state(w, ball);
    assert_true(s.ref.generation > old);
    assert_true(s.has_body);
    /* A churn of remove/re-add within single frames. */
    for (uint32_t i = 0; i < 20; i++) {
        assert_result(gy_body_remove(w, ball), GY_OK);
        wfx_add(w, ball, wfx_sphere(GY_BODY_DYNAMIC, 0.5));
        if (i % 3 == 0)
            wfx_tick(w, 1);
    }
    wfx_tick(w, 2);
    assert_int_equal(wfx_physics_stats(w).bodies, 1);
    s = wfx_state(w, ball);
    assert_true(s.has_body);
    /* The proxy slot carries the newest attachment. */
    const gy_proxy *const *px;
    uint32_t n;
    assert_result(gy_physics_read_proxies(gy_world_physics(w), &px, &n, NULL, NULL), GY_OK);
    assert_true(s.ref.index < n);
    assert_int_equal(gy_proxy_in(px, s.ref.index)->generation, s.ref.generation);
    wfx_destroy(w, NULL);
}

/* A body's ref is issued by the physics subsystem (the lowest free index), not taken from the
 * World's store: a component made while another's body is released gets that body's index, and
 * the released one comes back at another. Each reads its own proxy and replies by its ref. */
static void test_body_issued_another_index_reads_its_own_proxy_and_replies(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    gy_entity a = wfx_ball(w, "a", gy_v3(0, 10, 0));
    wfx_ball(w, "b", gy_v3(3, 10, 0));
    wfx_ball(w, "c", gy_v3(6, 10, 0));
    wfx_tick(w, 1);
    uint32_t a_index = wfx_state(w, a).ref.index;
    assert_int_equal(a_index, 0);
    assert_result(gy_body_set_active(w, a, false), GY_OK);
    gy_entity d = wfx_ball(w, "d", gy_v3(9, 20, 0));
    assert_int_equal(wfx_state(w, d).ref.index, a_index); /* a's, released */
    assert_result(gy_body_set_active(w, a, true), GY_OK);
    assert_int_equal(wfx_state(w, a).ref.index, 3); /* d's store slot is 3 */
    wfx_tick(w, 30);
    gy_physics_state sd = wfx_state(w, d), sa = wfx_state(w, a);
    assert_true(sd.has_body);
    assert_true(sa.has_body);
    assert_int_not_equal(sd.body.bits, sa.body.bits);
    assert_near(sd.pose.position.x, 9.0, 1e-9);
    assert_near(sd.pose.position.y, 20.0 - G * (30 * WFX_DT) * (30 * WFX_DT) / 2.0, 1e-4);
    assert_near(sd.linear_velocity.y, -G * 30 * WFX_DT, 1e-4);
    assert_near(wfx_world_pose(w, d).position.x, 9.0, 1e-9);
    assert_near(sa.pose.position.x, 0.0, 1e-9);
    /* a fell one tick, was released, and fell 30 from rest where it was. */
    double a_y = 10.0 - G * WFX_DT * WFX_DT / 2.0;
    assert_near(sa.pose.position.y, a_y - G * (30 * WFX_DT) * (30 * WFX_DT) / 2.0, 1e-4);
    assert_near(sa.linear_velocity.y, -G * 30 * WFX_DT, 1e-4);
    /* Released and made again while the old body's replies are in flight: only the new one. */
    assert_result(gy_physics_step(gy_world_physics(w), 1, WFX_TIMEOUT), GY_OK);
    uint32_t old = wfx_state(w, d).ref.generation;
    assert_result(gy_body_remove(w, d), GY_OK);
    wfx_add(w, d, wfx_sphere(GY_BODY_DYNAMIC, 0.5));
    wfx_tick(w, 2);
    sd = wfx_state(w, d);
    assert_true(sd.ref.generation > old);
    assert_true(sd.has_body);
    assert_int_equal(wfx_physics_stats(w).bodies, 4);
    wfx_destroy(w, NULL);
}

/* A body issued another's released index is listed apart from its store index, and the room for
 * that is taken before its create is recorded: refused for memory, gy_body_add reports
 * GY_ERR_OUT_OF_MEMORY and records nothing (no create answered by a release in the same batch). */
static void test_body_apart_from_its_store_index_refused_for_memory_records_nothing(void **state)
{
    (void)state;
    uint32_t refused = 0;
    for (uint64_t k = 1; k < 8; k++) {
        gy_test_allocator ta;
        gy_test_allocator_init(&ta);
        gy_world *w = wfx_world(&ta);
        gy_entity a = wfx_ball(w, "a", gy_v3(0, 10, 0));
        wfx_ball(w, "b", gy_v3(3, 10, 0));
        wfx_ball(w, "c", gy_v3(6, 10, 0));
        wfx_tick(w, 1);
        assert_result(gy_body_set_active(w, a, false), GY_OK); /* frees index 0, keeps store 0 */
        wfx_tick(w, 1);
        gy_entity d = wfx_entity(w, "d", gy_v3(9, 20, 0));
        wfx_desc dd = wfx_sphere(GY_BODY_DYNAMIC, 0.5);
        ta.fail_at = ta.calls + k;
        gy_result r = gy_body_add(w, d, wfx_d(&dd));
        ta.fail_at = 0;
        wfx_tick(w, 2);
        gy_physics_stats ps = wfx_physics_stats(w);
        assert_int_equal(ps.creates_cancelled, 0);
        if (r == GY_OK) {
            assert_int_equal(wfx_state(w, d).ref.index, 0); /* a's, apart from d's store 3 */
            assert_int_equal(ps.bodies, 3);
        } else {
            assert_result(r, GY_ERR_OUT_OF_MEMORY);
            refused++;
            assert_int_equal(ps.bodies, 2);
        }
        wfx_destroy(w, &ta);
    }
    assert_true(refused > 0);
}

/* A body released while jointed releases its joint first (no command left to be dropped as
 * stale), and the joint is made again, under a new ref, each time both bodies are back. */
static void test_body_toggled_under_a_joint_gets_its_joint_back_each_time(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    gy_entity a = wfx_ball(w, "a", gy_v3(0, 10, 0));
    gy_joint j = wfx_ball_joint(w, a, wfx_ball(w, "b", gy_v3(2, 10, 0)), gy_v3(1, 10, 0));
    wfx_tick(w, 1);
    for (uint32_t i = 0; i < 20; i++) {
        assert_result(gy_body_set_active(w, a, false), GY_OK);
        wfx_tick(w, 1);
        assert_int_equal(wfx_joint_status(w, j), GY_JOINT_PENDING);
        assert_result(gy_body_set_active(w, a, true), GY_OK);
        wfx_tick(w, 1);
        assert_int_equal(wfx_joint_status(w, j), GY_JOINT_LIVE);
    }
    assert_int_equal(wfx_physics_stats(w).commands_dropped_stale, 0);
    wfx_destroy(w, NULL);
}

/* ---- the enable trio ------------------------------------------------------------------------- */

static void assert_enable(gy_world *w, gy_entity e, bool entity, bool component, bool effective)
{
    gy_body_enable en;
    assert_result(gy_body_get_enable(w, e, &en), GY_OK);
    assert_int_equal(en.entity_active, entity);
    assert_int_equal(en.component_active, component);
    assert_int_equal(en.effective, effective);
    assert_int_equal(gy_body_is_active(w, e), effective);
}

static void test_body_enable_trio(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    wfx_ground(w);
    gy_entity parent = wfx_entity(w, "parent", gy_v3(0, 0, 0));
    gy_entity_def d = gy_default_entity_def();
    d.parent = parent;
    d.position = gy_v3(0, 5, 0);
    gy_entity ball;
    assert_result(gy_entity_create(w, &d, &ball), GY_OK);
    wfx_add(w, ball, wfx_sphere(GY_BODY_DYNAMIC, 0.5));
    wfx_tick(w, 2);
    assert_enable(w, ball, true, true, true);
    assert_int_equal(wfx_physics_stats(w).bodies, 2);

    /* Component off: body released; writes do nothing and say so. */
    assert_result(gy_body_set_active(w, ball, false), GY_OK);
    assert_enable(w, ball, true, false, false);
    assert_result(gy_body_apply_impulse(w, ball, gy_v3(1, 0, 0)), GY_ERR_INACTIVE);
    assert_result(gy_body_set_linear_velocity(w, ball, gy_v3(1, 0, 0)), GY_ERR_INACTIVE);
    assert_result(gy_body_apply_force(w, ball, gy_v3(1, 0, 0)), GY_ERR_INACTIVE);
    assert_result(gy_body_apply_torque(w, ball, gy_v3(1, 0, 0)), GY_ERR_INACTIVE);
    wfx_tick(w, 1);
    assert_int_equal(wfx_physics_stats(w).bodies, 1);
    assert_false(wfx_state(w, ball).has_body);

    /* Moved while off: on again recreates it at the current transform. */
    assert_result(gy_entity_set_local_position(w, ball, gy_v3(2, 8, 0)), GY_OK);
    assert_result(gy_body_set_active(w, ball, true), GY_OK);
    assert_enable(w, ball, true, true, true);
    wfx_tick(w, 1);
    assert_int_equal(wfx_physics_stats(w).bodies, 2);
    gy_physics_state s = wfx_state(w, ball);
    assert_near(s.pose.position.x, 2.0, 1e-6);
    assert_near(s.pose.position.y, 8.0 - G * WFX_DT * WFX_DT / 2.0, 1e-5);

    /* Entity off (through its parent): same. */
    assert_result(gy_entity_set_active(w, parent, false), GY_OK);
    assert_enable(w, ball, false, true, false);
    wfx_tick(w, 1);
    assert_int_equal(wfx_physics_stats(w).bodies, 1);
    /* Component switch flipped while the entity is off: still not effective. */
    assert_result(gy_body_set_active(w, ball, false), GY_OK);
    assert_result(gy_entity_set_active(w, parent, true), GY_OK);
    assert_enable(w, ball, true, false, false);
    wfx_tick(w, 1);
    assert_int_equal(wfx_physics_stats(w).bodies, 1);
    assert_result(gy_body_set_active(w, ball, true), GY_OK);
    wfx_tick(w, 1);
    assert_int_equal(wfx_physics_stats(w).bodies, 2);
    assert_result(gy_body_apply_impulse(w, ball, gy_v3(1, 0, 0)), GY_OK);
    wfx_destroy(w, NULL);
}

static void test_body_update_recreates_with_new_settings(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    gy_entity e = wfx_ball(w, "thing", gy_v3(0, 10, 0));
    wfx_tick(w, 10);
    gy_physics_state before = wfx_state(w, e);
    wfx_desc k = wfx_box(GY_BODY_KINEMATIC, gy_v3(1, 1, 1));
    k.desc.body.linear_velocity = gy_v3(1, 0, 0);
    assert_result(gy_body_update(w, e, wfx_d(&k)), GY_OK);
    gy_physics_state s = wfx_state(w, e);
    assert_true(s.ref.generation > before.ref.generation);
    assert_int_equal(s.motion, GY_MOTION_KINEMATIC);
    wfx_tick(w, 60);
    s = wfx_state(w, e);
    /* Kinematic, moving at its initial 1 m/s from where the update found it. */
    assert_near(s.pose.position.y, before.pose.position.y, 1e-6);
    assert_near(s.pose.position.x, 1.0, 1e-4);
    gy_physics_component_def d;
    assert_result(gy_body_get_def(w, e, &d), GY_OK);
    assert_int_equal(d.body_type, GY_BODY_KINEMATIC);
    assert_int_equal(d.colliders[0].def.shape.type, GY_SHAPE_BOX);
    /* Forces are for dynamic bodies only. */
    assert_result(gy_body_apply_force(w, e, gy_v3(1, 0, 0)), GY_ERR_INVALID_MOTION);
    assert_int_equal(wfx_physics_stats(w).bodies, 1);
    wfx_destroy(w, NULL);
}

/* ---- validation ------------------------------------------------------------------------------ */

static void test_body_validation_errors_record_nothing(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    gy_entity plain = wfx_entity(w, "plain", gy_v3(0, 0, 0));
    gy_entity ball = wfx_ball(w, "ball", gy_v3(0, 10, 0));
    gy_entity wall = wfx_entity(w, "wall", gy_v3(5, 0, 0));
    wfx_add(w, wall, wfx_box(GY_BODY_STATIC, gy_v3(1, 4, 1)));
    wfx_tick(w, 1);
    gy_entity dead = wfx_entity(w, "dead", gy_v3(0, 0, 0));
    assert_result(gy_entity_destroy(w, dead), GY_OK);
    gy_physics_stats before = wfx_physics_stats(w);
    gy_vec3 nan3 = gy_v3(0, NAN, 0);

    assert_result(gy_body_apply_impulse(NULL, ball, gy_v3(1, 0, 0)), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_body_apply_impulse(w, dead, gy_v3(1, 0, 0)), GY_ERR_STALE_HANDLE);
    assert_result(gy_body_apply_impulse(w, gy_entity_null(), gy_v3(1, 0, 0)), GY_ERR_STALE_HANDLE);
    assert_result(gy_body_apply_impulse(w, plain, gy_v3(1, 0, 0)), GY_ERR_MISUSE);
    assert_result(gy_body_apply_impulse(w, ball, nan3), GY_ERR_NON_FINITE);
    assert_result(gy_body_apply_impulse_at(w, ball, gy_v3(1, 0, 0), nan3), GY_ERR_NON_FINITE);
    assert_result(gy_body_apply_force(w, ball, gy_v3(INFINITY, 0, 0)), GY_ERR_NON_FINITE);
    assert_result(gy_body_apply_torque(w, ball, nan3), GY_ERR_NON_FINITE);
    assert_result(gy_body_set_linear_velocity(w, ball, nan3), GY_ERR_NON_FINITE);
    assert_result(gy_body_set_angular_velocity(w, ball, nan3), GY_ERR_NON_FINITE);
    assert_result(gy_body_set_linear_velocity(w, wall, gy_v3(1, 0, 0)), GY_ERR_INVALID_MOTION);
    assert_result(gy_body_apply_impulse(w, wall, gy_v3(1, 0, 0)), GY_ERR_INVALID_MOTION);
    assert_result(gy_character_set_intent(w, ball, gy_v3(1, 0, 0), 0), GY_ERR_MISUSE);
    assert_result(gy_character_jump(w, ball, 3.0), GY_ERR_MISUSE);
    gy_pose bad = {gy_v3(0, 0, 0), {0, 0, 0, 3}};
    assert_result(gy_body_teleport(w, ball, bad), GY_ERR_INVALID_ARGUMENT);
    bad.rotation = (gy_quat){0, 0, 0, NAN};
    assert_result(gy_body_teleport(w, ball, bad), GY_ERR_NON_FINITE);
    assert_result(gy_body_teleport(w, dead, gy_pose_identity()), GY_ERR_STALE_HANDLE);
    assert_result(gy_body_remove(w, plain), GY_ERR_MISUSE);
    assert_result(gy_body_set_active(w, plain, false), GY_ERR_MISUSE);
    gy_physics_state st;
    assert_result(gy_body_get_state(w, plain, &st), GY_ERR_MISUSE);

    /* Bad descriptions. */
    wfx_desc d = wfx_sphere(GY_BODY_DYNAMIC, 0.5);
    assert_result(gy_body_add(w, ball, wfx_d(&d)), GY_ERR_MISUSE); /* already has one */
    assert_result(gy_body_add(w, dead, wfx_d(&d)), GY_ERR_STALE_HANDLE);
    assert_result(gy_body_add(w, plain, NULL), GY_ERR_INVALID_ARGUMENT);
    d = wfx_sphere(GY_BODY_DYNAMIC, NAN);
    assert_result(gy_body_add(w, plain, wfx_d(&d)), GY_ERR_NON_FINITE);
    d = wfx_sphere(GY_BODY_DYNAMIC, -1.0);
    assert_result(gy_body_add(w, plain, wfx_d(&d)), GY_ERR_INVALID_SHAPE);
    d = wfx_sphere(GY_BODY_DYNAMIC, 0.5);
    d.desc.body.linear_velocity.x = INFINITY;
    assert_result(gy_body_add(w, plain, wfx_d(&d)), GY_ERR_NON_FINITE);
    d = wfx_sphere(GY_BODY_DYNAMIC, 0.5);
    wfx_d(&d)->collider_count = 0;
    assert_result(gy_body_add(w, plain, &d.desc), GY_ERR_INVALID_ARGUMENT);
    gy_shape plane;
    memset(&plane, 0, sizeof plane);
    plane.type = GY_SHAPE_PLANE;
    plane.normal = gy_v3(0, 1, 0);
    d = wfx_shape(GY_BODY_DYNAMIC, plane);
    assert_result(gy_body_add(w, plain, wfx_d(&d)), GY_ERR_INVALID_MOTION);
    d = wfx_sphere(GY_BODY_DYNAMIC, 0.5);
    d.desc.is_character = true; /* a character is Kinematic with one capsule */
    assert_result(gy_body_add(w, plain, wfx_d(&d)), GY_ERR_INVALID_ARGUMENT);
    d = wfx_sphere(GY_BODY_DYNAMIC, 0.5);
    d.desc.body_type = (gy_body_type)99;
    assert_result(gy_body_add(w, plain, wfx_d(&d)), GY_ERR_INVALID_ARGUMENT);
    assert_false(gy_body_exists(w, plain));
    d = wfx_sphere(GY_BODY_DYNAMIC, NAN);
    assert_result(gy_body_update(w, ball, wfx_d(&d)), GY_ERR_NON_FINITE);

    /* Nothing was recorded: a tick applies no command and changes no body. */
    gy_physics_state s0 = wfx_state(w, ball);
    wfx_tick(w, 1);
    gy_physics_stats after = wfx_physics_stats(w);
    assert_int_equal(after.commands_applied, before.commands_applied);
    assert_int_equal(after.commands_dropped_stale, before.commands_dropped_stale);
    assert_int_equal(after.commands_failed, before.commands_failed);
    assert_int_equal(after.bodies, 2);
    gy_physics_state s1 = wfx_state(w, ball);
    assert_int_equal(s1.ref.generation, s0.ref.generation);
    assert_near(s1.linear_velocity.x, 0.0, 0.0);
    wfx_destroy(w, NULL);
}

/* ---- writes ---------------------------------------------------------------------------------- */

static void test_body_writes_reach_the_body(void **state)
{
    (void)state;
    gy_world_def c = wfx_config(NULL, true);
    c.physics.world.gravity = gy_v3(0, 0, 0);
    gy_world *w = wfx_world_with(&c);
    gy_entity a = wfx_ball(w, "a", gy_v3(0, 0, 0));
    gy_entity b = wfx_ball(w, "b", gy_v3(10, 0, 0));
    gy_entity k = wfx_entity(w, "k", gy_v3(0, 0, 10));
    wfx_add(w, k, wfx_box(GY_BODY_KINEMATIC, gy_v3(1, 1, 1)));
    double m = 1000.0 * 4.0 / 3.0 * GY_PI * 0.125; /* 1000 kg/m³ × volume */
    assert_result(gy_body_apply_impulse(w, a, gy_v3(m * 2.0, 0, 0)), GY_OK);
    assert_result(gy_body_set_linear_velocity(w, b, gy_v3(0, 3, 0)), GY_OK);
    assert_result(gy_body_set_linear_velocity(w, k, gy_v3(0, 0, -1)), GY_OK);
    wfx_tick(w, 60);
    assert_near(wfx_state(w, a).linear_velocity.x, 2.0, 1e-4);
    assert_near(wfx_state(w, a).pose.position.x, 2.0, 1e-3);
    assert_near(wfx_state(w, b).pose.position.y, 3.0, 1e-3);
    assert_near(wfx_state(w, k).pose.position.z, 9.0, 1e-3);
    /* A force acts for one step only: Δv = F dt / m. */
    assert_result(gy_body_apply_force(w, b, gy_v3(m * 60.0, 0, 0)), GY_OK);
    wfx_tick(w, 5);
    assert_near(wfx_state(w, b).linear_velocity.x, 1.0, 1e-4);
    /* Teleport: the state and the transform show it at once. */
    gy_pose to = {gy_v3(50, 50, 50), gy_quat_identity()};
    assert_result(gy_body_teleport(w, a, to), GY_OK);
    assert_near(wfx_state(w, a).pose.position.y, 50.0, 0.0);
    assert_near(wfx_world_pose(w, a).position.y, 50.0, 0.0);
    wfx_tick(w, 1);
    assert_near(wfx_state(w, a).pose.position.x, 50.0 + 2.0 * WFX_DT, 1e-4);
    wfx_destroy(w, NULL);
}

/* ---- stop and start -------------------------------------------------------------------------- */

static void test_body_stop_start_keeps_bodies_and_poses(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = wfx_world(&ta);
    wfx_ground(w);
    gy_entity ball = wfx_ball(w, "ball", gy_v3(0, 10, 0));
    gy_entity off = wfx_ball(w, "off", gy_v3(5, 10, 0));
    assert_result(gy_body_set_active(w, off, false), GY_OK);
    wfx_tick(w, 20);
    gy_physics_state before = wfx_state(w, ball);
    assert_result(gy_world_stop_physics(w), GY_OK);
    assert_false(gy_world_physics_running(w));
    assert_result(gy_world_stop_physics(w), GY_ERR_MISUSE);
    assert_result(gy_body_apply_impulse(w, ball, gy_v3(0, 1, 0)), GY_ERR_INACTIVE);
    gy_physics_state mid = wfx_state(w, ball);
    assert_near(mid.pose.position.y, before.pose.position.y, 0.0);
    assert_false(mid.has_body);
    /* Changes while stopped are kept for the restart. */
    gy_entity late = wfx_ball(w, "late", gy_v3(-5, 3, 0));
    wfx_tick(w, 3); /* ticks while stopped do nothing to bodies */
    assert_near(wfx_state(w, ball).pose.position.y, before.pose.position.y, 0.0);
    assert_result(gy_world_start_physics(w), GY_OK);
    assert_result(gy_world_start_physics(w), GY_ERR_MISUSE);
    gy_physics_state after = wfx_state(w, ball);
    assert_true(after.ref.generation > before.ref.generation);
    assert_near(after.pose.position.y, before.pose.position.y, 0.0);
    assert_int_equal(wfx_physics_stats(w).bodies, 3); /* ground, ball, late; not `off` */
    wfx_tick(w, 1);
    after = wfx_state(w, ball);
    assert_true(after.has_body);
    /* It kept falling with the velocity it had. */
    assert_near(after.linear_velocity.y, before.linear_velocity.y - G * WFX_DT, 1e-4);
    assert_near(wfx_state(w, late).pose.position.x, -5.0, 1e-6);
    assert_result(gy_body_set_active(w, off, true), GY_OK);
    wfx_tick(w, 1);
    assert_int_equal(wfx_physics_stats(w).bodies, 4);
    wfx_destroy(w, &ta);
}

/* ---- the per-publish capture ----------------------------------------------------------------- */

static gy_world_stats world_stats(const gy_world *w)
{
    gy_world_stats s;
    gy_world_get_stats(w, &s);
    return s;
}

/* An awkward pose: neither the position nor the rotation is exact in float. */
static gy_pose odd_pose(double x)
{
    gy_pose p;
    p.position = gy_v3(x + 0.1, 2.2, 3.3);
    p.rotation = gy_quat_axis_angle(gy_v3_normalize(gy_v3(1, 2, 3)), 0.7 + x * 0.01);
    return p;
}

static void assert_pose_exact(gy_pose a, gy_pose b)
{
    assert_near(a.position.x, b.position.x, 0.0);
    assert_near(a.position.y, b.position.y, 0.0);
    assert_near(a.position.z, b.position.z, 0.0);
    assert_near(a.rotation.x, b.rotation.x, 0.0);
    assert_near(a.rotation.y, b.rotation.y, 0.0);
    assert_near(a.rotation.z, b.rotation.z, 0.0);
    assert_near(a.rotation.w, b.rotation.w, 0.0);
}

/* A moving root body's transform is its body's newest result whenever it is read, and stays
 * right through what makes the World store it: the game writing part of it, a child appearing,
 * a teleport and a stop. A spinning body, so a stale stored rotation would show. */
static gy_entity spinning_ball(gy_world *w, const char *name, gy_vec3 position)
{
    gy_entity e = wfx_entity(w, name, position);
    wfx_desc d = wfx_sphere(GY_BODY_DYNAMIC, 0.5);
    d.desc.body.angular_velocity = gy_v3(0.5, 2.0, 1.0);
    wfx_add(w, e, d);
    return e;
}

static void assert_pose_near(gy_pose a, gy_pose b, double tol)
{
    assert_near(a.position.x, b.position.x, tol);
    assert_near(a.position.y, b.position.y, tol);
    assert_near(a.position.z, b.position.z, tol);
    assert_near(a.rotation.x, b.rotation.x, tol);
    assert_near(a.rotation.y, b.rotation.y, tol);
    assert_near(a.rotation.z, b.rotation.z, tol);
    assert_near(a.rotation.w, b.rotation.w, tol);
}

static void test_body_transform_follows_its_newest_result(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = wfx_world(&ta);
    gy_entity a = spinning_ball(w, "a", gy_v3(0, 50, 0));
    gy_entity b = spinning_ball(w, "b", gy_v3(5, 50, 0));
    wfx_tick(w, 10);
    for (int k = 0; k < 2; k++) {
        gy_entity e = k == 0 ? a : b;
        gy_physics_state s = wfx_state(w, e);
        assert_true(fabs(s.pose.rotation.w) < 0.999); /* it did turn */
        gy_pose local;
        assert_result(gy_entity_get_local_pose(w, e, &local), GY_OK);
        assert_pose_exact(wfx_world_pose(w, e), s.pose);
        assert_pose_exact(local, s.pose);
    }
    /* The game moves only a's position: its rotation stays the body's newest, not its first. */
    gy_quat turned = wfx_state(w, a).pose.rotation;
    assert_result(gy_entity_set_local_position(w, a, gy_v3(1, 40, 2)), GY_OK);
    gy_world_update_transforms(w);
    gy_pose pa = wfx_world_pose(w, a);
    assert_near(pa.position.y, 40.0, 0.0);
    assert_near(pa.rotation.x, turned.x, 0.0);
    assert_near(pa.rotation.w, turned.w, 0.0);
    assert_pose_exact(wfx_state(w, a).pose, pa); /* teleported there */
    /* b gains a child: b's stored pose is its newest result, and the child rides on it. */
    gy_pose bnow = wfx_state(w, b).pose;
    gy_entity_def cd = gy_default_entity_def();
    cd.parent = b;
    cd.position = gy_v3(1, 0, 0);
    gy_entity child;
    assert_result(gy_entity_create(w, &cd, &child), GY_OK);
    gy_pose expect = gy_pose_mul(bnow, (gy_pose){gy_v3(1, 0, 0), gy_quat_identity()});
    assert_pose_near(wfx_world_pose(w, child), expect, 1e-12);
    wfx_tick(w, 5);
    bnow = wfx_state(w, b).pose;
    assert_pose_exact(wfx_world_pose(w, b), bnow);
    expect = gy_pose_mul(bnow, (gy_pose){gy_v3(1, 0, 0), gy_quat_identity()});
    assert_pose_near(wfx_world_pose(w, child), expect, 1e-12);
    /* A stop keeps the last result as the stored pose. */
    gy_pose alast = wfx_state(w, a).pose;
    assert_result(gy_world_stop_physics(w), GY_OK);
    gy_pose local;
    assert_result(gy_entity_get_local_pose(w, a, &local), GY_OK);
    assert_pose_exact(local, alast);
    assert_pose_exact(wfx_world_pose(w, a), alast);
    assert_pose_exact(wfx_render_pose(w, a), alast);
    wfx_destroy(w, &ta);
}

static gy_entity static_box(gy_world *w, const char *name, gy_pose pose)
{
    gy_entity_def d = gy_default_entity_def();
    d.name = name;
    d.position = pose.position;
    d.rotation = pose.rotation;
    gy_entity e;
    assert_result(gy_entity_create(w, &d, &e), GY_OK);
    wfx_add(w, e, wfx_box(GY_BODY_STATIC, gy_v3(1, 1, 1)));
    return e;
}

/* A 1 m static box on a new child of `parent`, at `position` in the parent's frame. */
static gy_entity static_child(gy_world *w, gy_entity parent, gy_vec3 position)
{
    gy_entity_def d = gy_default_entity_def();
    d.parent = parent;
    d.position = position;
    gy_entity e;
    assert_result(gy_entity_create(w, &d, &e), GY_OK);
    wfx_add(w, e, wfx_box(GY_BODY_STATIC, gy_v3(1, 1, 1)));
    return e;
}

/* Once its proxy has confirmed it, a static body costs no capture work: a publish reads the moving
 * bodies only, however many statics there are, and the statics' state stays what it was. */
static void test_body_settled_statics_are_not_captured(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = wfx_world(&ta);
    enum { STATICS = 64 };
    gy_entity statics[STATICS];
    gy_pose game[STATICS]; /* the game's poses (rotation normalised by the World) */
    for (uint32_t i = 0; i < STATICS; i++) {
        statics[i] = static_box(w, "wall", odd_pose(10.0 * (double)i));
        game[i] = wfx_world_pose(w, statics[i]);
        assert_near(game[i].rotation.w, odd_pose(10.0 * (double)i).rotation.w, 1e-12);
    }
    gy_entity ball = wfx_ball(w, "ball", gy_v3(0, 50, 0));
    /* Recorded and not yet confirmed: every body is read. */
    assert_int_equal(world_stats(w).bodies_tracked, STATICS + 1);
    wfx_tick(w, 1);
    gy_world_stats s0 = world_stats(w);
    assert_int_equal(s0.bodies_tracked, 1);
    assert_int_equal(s0.bodies_captured, STATICS + 1);
    wfx_tick(w, 20);
    gy_world_stats s1 = world_stats(w);
    assert_int_equal(gy_world_physics_tick(w), 21);
    /* One capture per lockstep tick, of the ball alone. */
    assert_int_equal(s1.bodies_captured - s0.bodies_captured, 20);
    assert_int_equal(s1.bodies_tracked, 1);
    for (uint32_t i = 0; i < STATICS; i++) {
        gy_physics_state st = wfx_state(w, statics[i]);
        assert_true(st.has_body);
        assert_false(st.awake);
        assert_int_equal(st.tick, 21); /* the state is as of the newest publish */
        assert_near(gy_v3_len(st.linear_velocity), 0.0, 0.0);
        assert_pose_exact(st.pose, game[i]);
        assert_pose_exact(wfx_world_pose(w, statics[i]), game[i]);
    }
    /* The ball is still read and written back at every tick. */
    gy_physics_state b = wfx_state(w, ball);
    assert_int_equal(b.tick, 21);
    assert_near(b.pose.position.y, 50.0 - G * (21 * WFX_DT) * (21 * WFX_DT) / 2.0, 1e-4);
    assert_near(wfx_world_pose(w, ball).position.y, b.pose.position.y, 0.0);
    wfx_destroy(w, &ta);
}

/* Update switches a settled static to dynamic (captured from then on, falling from where it
 * stood) and back (captured until a proxy confirms it, then at rest where the update left it). */
static void test_body_static_turned_dynamic_is_captured(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    gy_pose at = {gy_v3(0, 10, 0), gy_quat_identity()};
    gy_entity e = static_box(w, "crate", at);
    wfx_tick(w, 2);
    assert_int_equal(world_stats(w).bodies_tracked, 0);
    wfx_desc dyn = wfx_box(GY_BODY_DYNAMIC, gy_v3(1, 1, 1));
    assert_result(gy_body_update(w, e, wfx_d(&dyn)), GY_OK);
    assert_int_equal(world_stats(w).bodies_tracked, 1);
    uint64_t c0 = world_stats(w).bodies_captured;
    wfx_tick(w, 30);
    assert_int_equal(world_stats(w).bodies_captured - c0, 30);
    gy_physics_state s = wfx_state(w, e);
    assert_int_equal(s.motion, GY_MOTION_DYNAMIC);
    assert_true(s.awake);
    assert_int_equal(s.tick, 32);
    assert_near(s.linear_velocity.y, -G * 30 * WFX_DT, 1e-4);
    assert_near(s.pose.position.y, 10.0 - G * (30 * WFX_DT) * (30 * WFX_DT) / 2.0, 1e-4);
    assert_near(wfx_world_pose(w, e).position.y, s.pose.position.y, 0.0);
    /* Back to static: held where it is now, exactly. */
    gy_pose here = wfx_world_pose(w, e);
    wfx_desc stat = wfx_box(GY_BODY_STATIC, gy_v3(1, 1, 1));
    assert_result(gy_body_update(w, e, wfx_d(&stat)), GY_OK);
    assert_int_equal(world_stats(w).bodies_tracked, 1);
    wfx_tick(w, 1);
    assert_int_equal(world_stats(w).bodies_tracked, 0);
    c0 = world_stats(w).bodies_captured;
    wfx_tick(w, 10);
    assert_int_equal(world_stats(w).bodies_captured, c0);
    s = wfx_state(w, e);
    assert_int_equal(s.motion, GY_MOTION_STATIC);
    assert_false(s.awake);
    assert_int_equal(s.tick, 43);
    assert_pose_exact(s.pose, here);
    assert_pose_exact(wfx_world_pose(w, e), here);
    wfx_destroy(w, NULL);
}

/* A World with `n` static boxes in a row along x (3 m apart, at y 10), settled. */
static gy_world *static_row(gy_entity *e, int n)
{
    gy_world *w = wfx_world(NULL);
    for (int i = 0; i < n; i++)
        e[i] = static_box(w, NULL, (gy_pose){gy_v3(3.0 * i, 10, 0), gy_quat_identity()});
    wfx_tick(w, 2);
    return w;
}

/* The moved-bodies lists are sized for the bodies that can move: statics turned dynamic by update
 * grow them, and every one of them is listed when they fall, in ticks where some turn back. */
static void test_statics_turned_dynamic_are_all_listed_as_moved(void **state)
{
    (void)state;
    enum { N = 40 };
    gy_entity e[N];
    gy_world *w = static_row(e, N);
    wfx_desc dyn = wfx_box(GY_BODY_DYNAMIC, gy_v3(1, 1, 1));
    for (int i = 0; i < N; i++)
        assert_result(gy_body_update(w, e[i], wfx_d(&dyn)), GY_OK);
    wfx_tick(w, 3);
    const gy_entity *moved = NULL;
    assert_int_equal(gy_world_moved_bodies(w, &moved), N);
    /* Half back to static, then as many new dynamic bodies as there were. */
    wfx_desc stat = wfx_box(GY_BODY_STATIC, gy_v3(1, 1, 1));
    for (int i = 0; i < N / 2; i++)
        assert_result(gy_body_update(w, e[i], wfx_d(&stat)), GY_OK);
    for (int i = 0; i < N / 2; i++) {
        gy_entity n = static_box(w, NULL, (gy_pose){gy_v3(3.0 * i, 10, 5), gy_quat_identity()});
        assert_result(gy_body_update(w, n, wfx_d(&dyn)), GY_OK);
    }
    wfx_tick(w, 3);
    assert_int_equal(gy_world_moved_bodies(w, &moved), N);
    wfx_destroy(w, NULL);
}

/* The drawn pose of a body. */
static gy_pose drawn(gy_world *w, gy_entity e)
{
    gy_pose p;
    assert_result(gy_entity_get_render_pose(w, e, &p), GY_OK);
    return p;
}

/* Ticks; then the frame's list of drawn poses that changed agrees with each body's drawn pose. */
static void tick_drawn(gy_world *w, uint32_t frames)
{
    wfx_tick(w, frames);
    const gy_render_pose *rp = NULL;
    uint32_t n = gy_world_render_poses(w, &rp);
    for (uint32_t i = 0; i < n; i++)
        assert_pose_exact(rp[i].pose, drawn(w, rp[i].entity));
}

/* Only moving bodies hold render results, so a motion change gives or takes them: statics turned
 * dynamic (every other one, then some of those back, which reorders the rest's) are each drawn
 * falling at their own place, and one turned back static is drawn at its last result, still. */
static void test_statics_turned_dynamic_are_drawn_where_they_are(void **state)
{
    (void)state;
    enum { N = 24 };
    gy_entity e[N];
    gy_world *w = static_row(e, N);
    wfx_desc dyn = wfx_box(GY_BODY_DYNAMIC, gy_v3(1, 1, 1));
    wfx_desc stat = wfx_box(GY_BODY_STATIC, gy_v3(1, 1, 1));
    for (int i = 0; i < N; i += 2)
        assert_result(gy_body_update(w, e[i], wfx_d(&dyn)), GY_OK);
    tick_drawn(w, 6);
    for (int i = 0; i < N; i++) {
        gy_pose p = drawn(w, e[i]);
        assert_near(p.position.x, 3.0 * i, 1e-6);
        if (i % 2 == 0) {
            assert_true(p.position.y < 10.0);
            assert_true(p.position.y >= wfx_world_pose(w, e[i]).position.y); /* behind the newest */
        } else {
            assert_pose_exact(p, wfx_world_pose(w, e[i]));
            assert_near(p.position.y, 10.0, 1e-12);
        }
    }
    /* The first few movers back to static (the others' results move to the freed places), then
     * as many statics turned dynamic (they take the places at the end). */
    gy_pose held[N];
    for (int i = 0; i < 8; i += 2) {
        assert_result(gy_body_update(w, e[i], wfx_d(&stat)), GY_OK);
        held[i] = wfx_world_pose(w, e[i]);
        assert_true(held[i].position.y < 10.0);
        assert_pose_exact(drawn(w, e[i]), held[i]); /* at once, not at an old result */
    }
    for (int i = 1; i < 8; i += 2)
        assert_result(gy_body_update(w, e[i], wfx_d(&dyn)), GY_OK);
    double was[N];
    for (int i = 8; i < N; i += 2)
        was[i] = drawn(w, e[i]).position.y;
    tick_drawn(w, 4);
    for (int i = 0; i < N; i++) {
        gy_pose p = drawn(w, e[i]);
        assert_near(p.position.x, 3.0 * i, 1e-6);
        if (i < 8 && i % 2 == 0) {
            assert_pose_exact(p, held[i]);
            assert_pose_exact(wfx_world_pose(w, e[i]), held[i]);
        } else if (i < 8) {
            assert_true(p.position.y < 10.0);
        } else if (i % 2 == 0) {
            assert_true(p.position.y < was[i]); /* still falling, from where it was drawn */
        } else {
            assert_near(p.position.y, 10.0, 1e-12);
        }
    }
    wfx_destroy(w, NULL);
}

/* A teleport of a static turned dynamic, and of a dynamic turned static, is drawn at once, and
 * then the first falls from it and the second stays there. */
static void test_teleports_after_a_motion_change_are_drawn(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    gy_entity a = static_box(w, "was static", (gy_pose){gy_v3(0, 10, 0), gy_quat_identity()});
    gy_entity b = wfx_entity(w, "was dynamic", gy_v3(5, 10, 0));
    wfx_add(w, b, wfx_box(GY_BODY_DYNAMIC, gy_v3(1, 1, 1)));
    gy_entity c = wfx_entity(w, "still dynamic", gy_v3(10, 10, 0));
    wfx_add(w, c, wfx_box(GY_BODY_DYNAMIC, gy_v3(1, 1, 1)));
    wfx_tick(w, 3);
    wfx_desc dyn = wfx_box(GY_BODY_DYNAMIC, gy_v3(1, 1, 1));
    wfx_desc stat = wfx_box(GY_BODY_STATIC, gy_v3(1, 1, 1));
    assert_result(gy_body_update(w, a, wfx_d(&dyn)), GY_OK);
    assert_result(gy_body_update(w, b, wfx_d(&stat)), GY_OK);
    tick_drawn(w, 3);
    gy_pose ta = odd_pose(20.0), tb = odd_pose(30.0);
    assert_result(gy_body_teleport(w, a, ta), GY_OK);
    assert_result(gy_body_teleport(w, b, tb), GY_OK);
    ta = wfx_world_pose(w, a); /* as the World normalised them */
    tb = wfx_world_pose(w, b);
    assert_pose_exact(drawn(w, a), ta);
    assert_pose_exact(drawn(w, b), tb);
    tick_drawn(w, 1);
    assert_near(drawn(w, a).position.y, ta.position.y, 1e-2); /* from the teleport, not 10 */
    assert_pose_exact(drawn(w, b), tb);
    tick_drawn(w, 4);
    gy_pose pa = drawn(w, a);
    assert_near(pa.position.x, ta.position.x, 1e-3);
    assert_true(pa.position.y < ta.position.y);
    assert_pose_exact(drawn(w, b), tb);
    assert_pose_exact(wfx_state(w, b).pose, tb);
    assert_near(drawn(w, c).position.x, 10.0, 1e-6);
    assert_true(drawn(w, c).position.y < 10.0);
    wfx_destroy(w, NULL);
}

/* A teleported static is read again until a proxy shows the teleport, keeps the game's pose (not
 * the proxy's float one), and goes quiet again. Moving a parent teleports its static child. */
static void test_body_teleported_static_keeps_game_pose(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    gy_entity wall = static_box(w, "wall", odd_pose(0.0));
    gy_entity parent = wfx_entity(w, "parent", gy_v3(0, 0, 0));
    gy_entity child = static_child(w, parent, gy_v3(0, 0, 4));
    wfx_tick(w, 3);
    assert_int_equal(world_stats(w).bodies_tracked, 0);

    assert_result(gy_body_teleport(w, wall, odd_pose(5.0)), GY_OK);
    assert_int_equal(world_stats(w).bodies_tracked, 1);
    gy_pose to = wfx_world_pose(w, wall); /* the game's pose, as the World normalised it */
    assert_near(to.position.x, 5.1, 1e-12);
    assert_near(to.rotation.w, odd_pose(5.0).rotation.w, 1e-12);
    assert_pose_exact(wfx_state(w, wall).pose, to);
    wfx_tick(w, 1);
    assert_int_equal(world_stats(w).bodies_tracked, 0);
    uint64_t c0 = world_stats(w).bodies_captured;
    wfx_tick(w, 5);
    assert_int_equal(world_stats(w).bodies_captured, c0);
    gy_physics_state s = wfx_state(w, wall);
    assert_pose_exact(s.pose, to);
    assert_pose_exact(wfx_world_pose(w, wall), to);
    assert_int_equal(s.tick, 9);
    /* The physics side has it there (as a float). */
    const gy_proxy *const *px;
    uint32_t n;
    assert_result(gy_physics_read_proxies(gy_world_physics(w), &px, &n, NULL, NULL), GY_OK);
    assert_true(s.ref.index < n);
    assert_near(gy_proxy_in(px, s.ref.index)->position[0], to.position.x, 1e-5);
    assert_near(gy_proxy_in(px, s.ref.index)->position[2], to.position.z, 1e-5);

    assert_result(gy_entity_set_local_position(w, parent, gy_v3(7, 1, 0)), GY_OK);
    wfx_tick(w, 1);
    assert_int_equal(world_stats(w).bodies_tracked, 0);
    s = wfx_state(w, child);
    assert_near(s.pose.position.x, 7.0, 0.0);
    assert_near(s.pose.position.y, 1.0, 0.0);
    assert_near(s.pose.position.z, 4.0, 0.0);
    assert_result(gy_physics_read_proxies(gy_world_physics(w), &px, &n, NULL, NULL), GY_OK);
    assert_near(gy_proxy_in(px, s.ref.index)->position[0], 7.0, 1e-6);
    wfx_destroy(w, NULL);
}

static void assert_vec_near(gy_vec3 a, gy_vec3 b, double tol)
{
    assert_near(a.x, b.x, tol);
    assert_near(a.y, b.y, tol);
    assert_near(a.z, b.z, tol);
}

/* The proxy position of a body's physics-side pose (a float). */
static gy_vec3 proxy_position(gy_world *w, gy_entity e)
{
    const gy_proxy *const *px;
    uint32_t n;
    assert_result(gy_physics_read_proxies(gy_world_physics(w), &px, &n, NULL, NULL), GY_OK);
    uint32_t i = wfx_state(w, e).ref.index;
    assert_true(i < n);
    const float *p = gy_proxy_in(px, i)->position;
    return gy_v3(p[0], p[1], p[2]);
}

/* A held body (a static, at the pose it was created at) whose entity the game moves, by its
 * local pose, its parent's, or a reparent to the root: until the transforms propagate, the body
 * and its drawn pose stay where they were; the propagation then teleports it to the entity's new
 * world pose, where it is drawn at once and the physics side has it. */
static void test_held_bodies_moved_by_the_game_are_teleported_and_drawn(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    gy_entity root = static_box(w, "root", odd_pose(0.0));
    gy_entity parent = wfx_entity(w, "parent", gy_v3(0, 0, 0));
    gy_entity child = static_child(w, parent, gy_v3(0, 0, 4));
    gy_entity leaving = static_child(w, parent, gy_v3(2, 0, 0));
    wfx_tick(w, 3);
    assert_int_equal(world_stats(w).bodies_tracked, 0);

    /* Its own local pose. */
    gy_pose was = wfx_world_pose(w, root);
    assert_result(gy_entity_set_local_pose(w, root, odd_pose(6.0)), GY_OK);
    gy_pose to = wfx_world_pose(w, root);
    assert_near(to.position.x, 6.1, 1e-12);
    assert_pose_exact(wfx_state(w, root).pose, was);
    assert_pose_exact(wfx_render_pose(w, root), was);
    gy_world_update_transforms(w);
    assert_pose_exact(wfx_state(w, root).pose, to);
    assert_pose_exact(wfx_render_pose(w, root), to);
    assert_int_equal(world_stats(w).bodies_tracked, 1); /* until a proxy confirms the teleport */

    /* Its parent's. */
    assert_result(gy_entity_set_local_position(w, parent, gy_v3(0, 6, 0)), GY_OK);
    assert_pose_exact(wfx_state(w, child).pose, (gy_pose){gy_v3(0, 0, 4), gy_quat_identity()});
    assert_near(wfx_render_pose(w, child).position.y, 0.0, 0.0);
    gy_world_update_transforms(w);
    assert_vec_near(wfx_state(w, child).pose.position, gy_v3(0, 6, 4), 0.0);
    assert_vec_near(wfx_render_pose(w, child).position, gy_v3(0, 6, 4), 0.0);
    assert_vec_near(wfx_state(w, leaving).pose.position, gy_v3(2, 6, 0), 0.0);

    /* A reparent to the root: its world pose becomes its local one. */
    assert_result(gy_entity_set_parent(w, leaving, gy_entity_null()), GY_OK);
    assert_vec_near(wfx_world_pose(w, leaving).position, gy_v3(2, 0, 0), 0.0);
    assert_vec_near(wfx_state(w, leaving).pose.position, gy_v3(2, 6, 0), 0.0);
    assert_vec_near(wfx_render_pose(w, leaving).position, gy_v3(2, 6, 0), 0.0);
    gy_world_update_transforms(w);
    assert_vec_near(wfx_state(w, leaving).pose.position, gy_v3(2, 0, 0), 0.0);
    assert_vec_near(wfx_render_pose(w, leaving).position, gy_v3(2, 0, 0), 0.0);

    /* The physics side has each where the game put it, and they stay there. */
    wfx_tick(w, 2);
    assert_vec_near(proxy_position(w, root), to.position, 1e-5);
    assert_vec_near(proxy_position(w, child), gy_v3(0, 6, 4), 1e-6);
    assert_vec_near(proxy_position(w, leaving), gy_v3(2, 0, 0), 1e-6);
    assert_pose_exact(wfx_state(w, root).pose, to);
    assert_pose_exact(wfx_render_pose(w, root), to);
    assert_vec_near(wfx_render_pose(w, child).position, gy_v3(0, 6, 4), 0.0);
    wfx_destroy(w, NULL);
}

/* Moving a held body's entity keeps the pose it is held at aside first, a record per body moved
 * until the transforms propagate: refused for memory, the move reports GY_ERR_OUT_OF_MEMORY and
 * changes nothing; every move that succeeds is teleported. */
static void test_held_body_move_refused_for_memory_changes_nothing(void **state)
{
    (void)state;
    enum { N = 40 };
    uint32_t refused = 0;
    for (uint64_t k = 1; k < 6; k++) {
        gy_test_allocator ta;
        gy_test_allocator_init(&ta);
        gy_world *w = wfx_world(&ta);
        gy_entity e[N];
        gy_pose was[N];
        for (uint32_t i = 0; i < N; i++)
            e[i] = static_box(w, NULL, odd_pose(2.0 * i));
        wfx_tick(w, 3);
        for (uint32_t i = 0; i < N; i++)
            was[i] = wfx_world_pose(w, e[i]);
        ta.fail_at = ta.calls + k;
        for (uint32_t i = 0; i < N; i++) {
            gy_result r = gy_entity_set_local_pose(w, e[i], odd_pose(2.0 * i + 1.0));
            if (r == GY_OK)
                continue;
            assert_result(r, GY_ERR_OUT_OF_MEMORY);
            refused++;
            assert_pose_exact(wfx_world_pose(w, e[i]), was[i]);
            assert_pose_exact(wfx_state(w, e[i]).pose, was[i]);
            assert_pose_exact(wfx_render_pose(w, e[i]), was[i]);
            ta.fail_at = 0;
            assert_result(gy_entity_set_local_pose(w, e[i], odd_pose(2.0 * i + 1.0)), GY_OK);
        }
        ta.fail_at = 0;
        for (uint32_t i = 0; i < N; i++)
            assert_pose_exact(wfx_state(w, e[i]).pose, was[i]);
        gy_world_update_transforms(w);
        for (uint32_t i = 0; i < N; i++) {
            gy_pose to = wfx_world_pose(w, e[i]);
            assert_near(to.position.x, 2.0 * i + 1.1, 1e-12);
            assert_pose_exact(wfx_state(w, e[i]).pose, to);
            assert_pose_exact(wfx_render_pose(w, e[i]), to);
        }
        wfx_tick(w, 2);
        for (uint32_t i = 0; i < N; i++)
            assert_near(proxy_position(w, e[i]).x, 2.0 * i + 1.1, 1e-5);
        wfx_destroy(w, &ta);
    }
    assert_true(refused > 0);
}

/* Switching off, stopping and starting: a static is tracked again whenever it gets a new body,
 * and its state tick stays the newest publish it was part of. */
static void test_body_statics_tracked_again_after_restart(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = wfx_world(&ta);
    gy_entity ground = wfx_ground(w);
    gy_entity ball = wfx_ball(w, "ball", gy_v3(0, 10, 0));
    wfx_tick(w, 4);
    assert_int_equal(world_stats(w).bodies_tracked, 1);
    assert_int_equal(wfx_state(w, ground).tick, 4);

    assert_result(gy_body_set_active(w, ground, false), GY_OK);
    assert_int_equal(world_stats(w).bodies_tracked, 1);
    assert_int_equal(wfx_state(w, ground).tick, 4);
    wfx_tick(w, 1);
    assert_int_equal(wfx_state(w, ground).tick, 4); /* no body, no newer state */
    assert_result(gy_body_set_active(w, ground, true), GY_OK);
    assert_int_equal(world_stats(w).bodies_tracked, 2);
    wfx_tick(w, 1);
    assert_int_equal(world_stats(w).bodies_tracked, 1);
    assert_int_equal(wfx_state(w, ground).tick, 6);

    assert_result(gy_world_stop_physics(w), GY_OK);
    assert_int_equal(world_stats(w).bodies_tracked, 0);
    wfx_tick(w, 2);
    assert_int_equal(wfx_state(w, ground).tick, 6);
    assert_int_equal(wfx_state(w, ball).tick, 6);
    assert_result(gy_world_start_physics(w), GY_OK);
    assert_int_equal(world_stats(w).bodies_tracked, 2);
    wfx_tick(w, 1);
    assert_int_equal(world_stats(w).bodies_tracked, 1);
    gy_physics_state g = wfx_state(w, ground);
    assert_true(g.has_body);
    assert_int_equal(g.tick, gy_world_physics_tick(w));
    assert_near(g.pose.position.y, -0.5, 0.0);
    wfx_destroy(w, &ta);
}

typedef struct remover {
    gy_entity victim;
    uint32_t removed;
} remover;

static void remove_on_enter(void *ctx, gy_world *w, const gy_collision_event *e)
{
    remover *r = ctx;
    if (e->kind == GY_COLLISION_ENTER && r->removed == 0) {
        assert_result(gy_body_remove(w, r->victim), GY_OK);
        r->removed++;
    }
}

/* A callback removes the body of a falling ball between the capture that moved it and the sync:
 * the other balls' results still reach their transforms, and the removed one keeps its last. */
static void test_body_removed_in_a_callback_leaves_the_others_synced(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = wfx_world(&ta);
    gy_entity ground = wfx_ground(w);
    gy_entity low = wfx_ball(w, "low", gy_v3(0, 0.6, 0));
    gy_entity balls[4];
    for (uint32_t i = 0; i < 4; i++)
        balls[i] = wfx_ball(w, "ball", gy_v3(3.0 + 2.0 * i, 20.0 + i, 0));
    remover r = {balls[1], 0};
    assert_result(gy_entity_set_collision_callback(w, ground, remove_on_enter, &r), GY_OK);
    uint32_t n = 0;
    while (r.removed == 0 && n < 60) {
        wfx_tick(w, 1);
        n++;
    }
    assert_int_equal(r.removed, 1);
    assert_false(gy_body_exists(w, balls[1]));
    gy_pose left = wfx_world_pose(w, balls[1]);
    assert_true(left.position.y < 21.0);
    assert_int_equal(world_stats(w).bodies_tracked, 4); /* low and three balls */
    wfx_tick(w, 10);
    n += 10;
    assert_pose_exact(wfx_world_pose(w, balls[1]), left);
    for (uint32_t i = 0; i < 4; i++) {
        if (i == 1)
            continue;
        double y0 = 20.0 + i;
        double t = (double)n * WFX_DT;
        gy_physics_state s = wfx_state(w, balls[i]);
        assert_near(s.pose.position.y, y0 - G * t * t / 2.0, 1e-4);
        assert_pose_exact(wfx_world_pose(w, balls[i]), s.pose);
    }
    assert_true(wfx_state(w, low).pose.position.y < 0.6);
    wfx_destroy(w, &ta);
}

/* Real time: a body's velocities, flags and state tick are those of the publish the World's
 * last tick took in, however many newer publishes another reader takes in between (the World
 * reads them where that publish is kept; under TSan this also shows the physics thread never
 * writes it meanwhile), and the next tick moves them on. */
static void test_body_state_is_the_publish_the_world_took_in(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world_def c = wfx_config(&ta, false);
    gy_world *w = wfx_world_with(&c);
    gy_entity ball = wfx_ball(w, "ball", gy_v3(0, 1000, 0));
    const struct timespec ms = {0, 2000000L};
    gy_physics_state before = wfx_state(w, ball);
    for (uint32_t i = 0; i < 5000u && before.linear_velocity.y >= 0.0; i++) {
        nanosleep(&ms, NULL);
        wfx_tick(w, 1);
        before = wfx_state(w, ball);
    }
    assert_true(before.linear_velocity.y < 0.0);
    assert_true(before.awake);
    uint32_t newer = 0;
    for (uint32_t i = 0; i < 5000u && newer < 4u; i++) {
        nanosleep(&ms, NULL);
        const gy_proxy *const *px;
        uint32_t n;
        uint64_t tick = 0;
        if (gy_physics_read_proxies(gy_world_physics(w), &px, &n, &tick, NULL) == GY_OK &&
            tick > before.tick + newer)
            newer++;
    }
    assert_int_equal(newer, 4);
    gy_physics_state after = wfx_state(w, ball);
    assert_int_equal(after.tick, before.tick);
    assert_memory_equal(&after.linear_velocity, &before.linear_velocity,
                        sizeof before.linear_velocity);
    assert_memory_equal(&after.angular_velocity, &before.angular_velocity,
                        sizeof before.angular_velocity);
    assert_true(after.awake == before.awake && after.faulted == before.faulted);
    wfx_tick(w, 1);
    after = wfx_state(w, ball);
    assert_true(after.tick > before.tick);
    assert_true(after.linear_velocity.y < before.linear_velocity.y); /* still falling, faster */
    wfx_destroy(w, &ta);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_body_add_creates_and_falls),
        cmocka_unit_test(test_body_readd_never_inherits_old_body_or_pose),
        cmocka_unit_test(test_body_replies_for_removed_attachments_are_rejected),
        cmocka_unit_test(test_body_issued_another_index_reads_its_own_proxy_and_replies),
        cmocka_unit_test(test_body_apart_from_its_store_index_refused_for_memory_records_nothing),
        cmocka_unit_test(test_body_toggled_under_a_joint_gets_its_joint_back_each_time),
        cmocka_unit_test(test_body_enable_trio),
        cmocka_unit_test(test_body_update_recreates_with_new_settings),
        cmocka_unit_test(test_body_validation_errors_record_nothing),
        cmocka_unit_test(test_body_writes_reach_the_body),
        cmocka_unit_test(test_body_stop_start_keeps_bodies_and_poses),
        cmocka_unit_test(test_body_transform_follows_its_newest_result),
        cmocka_unit_test(test_body_settled_statics_are_not_captured),
        cmocka_unit_test(test_body_static_turned_dynamic_is_captured),
        cmocka_unit_test(test_statics_turned_dynamic_are_all_listed_as_moved),
        cmocka_unit_test(test_statics_turned_dynamic_are_drawn_where_they_are),
        cmocka_unit_test(test_teleports_after_a_motion_change_are_drawn),
        cmocka_unit_test(test_body_teleported_static_keeps_game_pose),
        cmocka_unit_test(test_held_bodies_moved_by_the_game_are_teleported_and_drawn),
        cmocka_unit_test(test_held_body_move_refused_for_memory_changes_nothing),
        cmocka_unit_test(test_body_statics_tracked_again_after_restart),
        cmocka_unit_test(test_body_removed_in_a_callback_leaves_the_others_synced),
        cmocka_unit_test(test_body_state_is_the_publish_the_world_took_in),
    };
    return cmocka_run_group_tests_name("world_physics", tests, NULL, NULL);
}
