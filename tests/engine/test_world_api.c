/* The host-facing API's promises, on every adapter compiled in: a body in four lines, every
 * description field either acting or refused by name, per-body user data that survives, and the
 * live changes (gravity, sleep, mass, material, filter) applied in place through the physics
 * thread. Physics checks compare with the analytic answer and state their tolerance. */
#include "test_world_fixture.h"
#include "gyre/backend/backend.h"

#define G 9.81

/* The World (lockstep) on adapter `backend`, with a logger that keeps the last error. */
static gy_world *world_on(const char *backend, wfx_log *log, gy_logger *logger)
{
    gy_world_def c = wfx_config(NULL, true);
    c.physics.backend = backend;
    if (log != NULL) {
        memset(log, 0, sizeof *log);
        *logger = (gy_logger){wfx_log_fn, log};
        c.logger = logger;
    }
    return wfx_world_with(&c);
}

#define FOR_EACH_ADAPTER(var)                                                                      \
    for (uint32_t k_ = 0; k_ < gy_backend_count(); k_++)                                           \
        for (const char *var = gy_backend_at(k_)->name; var != NULL; var = NULL)

static double y_of(gy_world *w, gy_entity e)
{
    return wfx_state(w, e).pose.position.y;
}

/* ---- the short path ---------------------------------------------------------------------------
 */

static void test_api_body_in_four_lines_falls_and_lands(void **state)
{
    (void)state;
    FOR_EACH_ADAPTER(backend)
    {
        gy_world *world = world_on(backend, NULL, NULL);
        /* A static ground and a dynamic ball, each in four lines of the documented path. */
        gy_scene_collider floor = gy_default_scene_collider(gy_box(gy_v3(40, 1, 40)));
        gy_physics_component_def ground_desc =
            gy_default_physics_component_def_for(GY_BODY_STATIC, &floor);
        gy_entity ground;
        assert_result(gy_body_create(world, gy_v3(0, -0.5, 0), &ground_desc, &ground), GY_OK);

        gy_scene_collider shape = gy_default_scene_collider(gy_sphere(0.5));
        gy_physics_component_def desc =
            gy_default_physics_component_def_for(GY_BODY_DYNAMIC, &shape);
        desc.body.linear_damping = 0.0; /* for the analytic fall below */
        gy_entity ball;
        assert_result(gy_body_create(world, gy_v3(0, 20, 0), &desc, &ball), GY_OK);

        wfx_tick(world, 60);
        /* 60 ticks of free fall from rest: 20 - g t²/2 at t = 1 s, within 2 cm (a tick either way
         * of discretisation is 0.16 m, so this also pins the tick count). */
        assert_near(y_of(world, ball), 20.0 - 0.5 * G, 0.02);
        wfx_tick(world, 240);
        /* Resting on the ground's top face (y = 0) at its radius, within 2 cm. */
        assert_near(y_of(world, ball), 0.5, 0.02);
        assert_int_equal(gy_body_get_user_data(world, ball), 0);

        /* A failed create leaves no entity behind. */
        uint32_t before = gy_world_entity_count(world);
        gy_scene_collider bad = gy_default_scene_collider(gy_sphere(-1.0));
        gy_physics_component_def bad_desc =
            gy_default_physics_component_def_for(GY_BODY_DYNAMIC, &bad);
        gy_entity none;
        assert_result(gy_body_create(world, gy_v3(0, 1, 0), &bad_desc, &none),
                      GY_ERR_INVALID_SHAPE);
        assert_true(gy_entity_is_null(none));
        assert_int_equal(gy_world_entity_count(world), before);
        wfx_destroy(world, NULL);
    }
}

/* ---- nothing silently ignored -----------------------------------------------------------------
 */

typedef struct refusal {
    const char *field; /* what the log must name */
    gy_physics_component_def desc;
} refusal;

static void expect_refused(gy_world *w, wfx_log *log, const gy_physics_component_def *d,
                           const char *field)
{
    gy_entity e = wfx_entity(w, "victim", gy_v3(0, 3, 0));
    uint32_t warnings = log->warnings;
    gy_result r = gy_body_add(w, e, d);
    if (r != GY_ERR_INVALID_ARGUMENT)
        fail_msg("%s: gy_body_add returned %s, expected GY_ERR_INVALID_ARGUMENT", field,
                 gy_result_name(r));
    assert_false(gy_body_exists(w, e));
    if (log->warnings != warnings + 1 || strstr(log->last_warning, field) == NULL)
        fail_msg("%s: the log does not name it (last: \"%s\")", field, log->last_warning);
    assert_result(gy_entity_destroy(w, e), GY_OK);
}

static void test_api_unread_fields_are_refused_by_name(void **state)
{
    (void)state;
    wfx_log log;
    gy_logger logger;
    gy_world *w = world_on(NULL, &log, &logger);
    gy_scene_collider ball = gy_default_scene_collider(gy_sphere(0.5));
    gy_scene_collider cap = gy_default_scene_collider(gy_capsule(0.3, 1.8));

    /* The measured case: a Static motion type in the body def of a Dynamic component used to
     * be dropped, and the body fell. */
    gy_physics_component_def d = gy_default_physics_component_def_for(GY_BODY_DYNAMIC, &ball);
    d.body.type = GY_MOTION_STATIC;
    expect_refused(w, &log, &d, "body.type");

    d = gy_default_physics_component_def_for(GY_BODY_DYNAMIC, &ball);
    d.body.pose.position.y = 4.0;
    expect_refused(w, &log, &d, "body.pose");

    d = gy_default_physics_component_def_for(GY_BODY_STATIC, &ball);
    d.body.linear_velocity.x = 1.0;
    expect_refused(w, &log, &d, "body.linear_velocity");

    d = gy_default_physics_component_def_for(GY_BODY_STATIC, &ball);
    d.body.mass = 5.0;
    expect_refused(w, &log, &d, "body.mass");

    d = gy_default_physics_component_def_for(GY_BODY_KINEMATIC, &ball);
    d.body.gravity_factor = 0.0;
    expect_refused(w, &log, &d, "body.gravity_factor");

    d = gy_default_physics_component_def_for(GY_BODY_TRIGGER, &ball);
    d.body.continuous = true;
    expect_refused(w, &log, &d, "body.continuous");

    d = gy_default_physics_component_def_for(GY_BODY_KINEMATIC, &cap);
    d.body.linear_damping = 0.0;
    expect_refused(w, &log, &d, "body.linear_damping");

    d = gy_default_physics_component_def_for(GY_BODY_DYNAMIC, &ball);
    d.max_slope = 0.2;
    expect_refused(w, &log, &d, "max_slope");

    gy_vec3 points[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    gy_scene_collider sphere_with_points = ball;
    sphere_with_points.vertices = points;
    sphere_with_points.vertex_count = 4;
    d = gy_default_physics_component_def_for(GY_BODY_DYNAMIC, &sphere_with_points);
    expect_refused(w, &log, &d, "colliders[0].vertices");

    /* Defaults, and a body.type equal to what body_type gives, are accepted. */
    d = gy_default_physics_component_def_for(GY_BODY_STATIC, &ball);
    d.body.type = GY_MOTION_STATIC;
    gy_entity ok = wfx_entity(w, "ok", gy_v3(0, 0, 0));
    assert_result(gy_body_add(w, ok, &d), GY_OK);
    /* gy_body_update refuses the same way, keeping the component as it was. */
    d.body.pose.position.x = 1.0;
    uint32_t warnings = log.warnings;
    assert_result(gy_body_update(w, ok, &d), GY_ERR_INVALID_ARGUMENT);
    assert_int_equal(log.warnings, warnings + 1);
    assert_non_null(strstr(log.last_warning, "gy_body_update"));
    gy_physics_component_def kept;
    assert_result(gy_body_get_def(w, ok, &kept), GY_OK);
    assert_near(kept.body.pose.position.x, 0.0, 0.0);
    wfx_destroy(w, NULL);

    /* A World config whose physics allocator the World would replace. */
    gy_world_def c = gy_default_world_def();
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    memset(&log, 0, sizeof log);
    c.logger = &logger;
    c.physics.allocator = &ta.base;
    gy_world *none = NULL;
    assert_result(gy_world_create(&c, &none), GY_ERR_INVALID_ARGUMENT);
    assert_null(none);
    assert_non_null(strstr(log.last_warning, "physics.allocator"));
    assert_int_equal(ta.live_blocks, 0);
}

/* ---- user data --------------------------------------------------------------------------------
 */

static void test_api_user_data_survives_everything_but_update(void **state)
{
    (void)state;
    gy_world *w = world_on(NULL, NULL, NULL);
    gy_scene_collider shape = gy_default_scene_collider(gy_sphere(0.5));
    gy_physics_component_def d = gy_default_physics_component_def_for(GY_BODY_DYNAMIC, &shape);
    d.body.user_data = 0xfeedf00dull;
    gy_entity e;
    assert_result(gy_body_create(w, gy_v3(0, 5, 0), &d, &e), GY_OK);
    wfx_tick(w, 3);
    assert_int_equal(gy_body_get_user_data(w, e), 0xfeedf00dull);

    assert_result(gy_body_set_active(w, e, false), GY_OK);
    wfx_tick(w, 1);
    assert_result(gy_body_set_active(w, e, true), GY_OK);
    assert_result(gy_body_set_mass(w, e, 3.0), GY_OK);
    assert_result(gy_world_stop_physics(w), GY_OK);
    assert_result(gy_world_start_physics(w), GY_OK);
    wfx_tick(w, 2);
    assert_int_equal(gy_body_get_user_data(w, e), 0xfeedf00dull);
    gy_physics_component_def got;
    assert_result(gy_body_get_def(w, e, &got), GY_OK);
    assert_int_equal(got.body.user_data, 0xfeedf00dull);

    assert_result(gy_body_set_user_data(w, e, 42u), GY_OK);
    assert_int_equal(gy_body_get_user_data(w, e), 42u);
    /* An update takes the new description's value. */
    d.body.user_data = 7u;
    assert_result(gy_body_update(w, e, &d), GY_OK);
    assert_int_equal(gy_body_get_user_data(w, e), 7u);

    gy_entity plain = wfx_entity(w, "plain", gy_v3(0, 0, 0));
    assert_result(gy_body_set_user_data(w, plain, 1u), GY_ERR_MISUSE);
    assert_int_equal(gy_body_get_user_data(w, plain), 0u);
    wfx_destroy(w, NULL);
}

/* Each body's value is its own: bodies made from one description with values of their own, some
 * none, keep theirs while others are set, cleared, removed and destroyed, and a body that takes
 * the place (entity slot, component slot) of one that had a value starts with its own. */
static void test_api_user_data_is_each_bodys_own(void **state)
{
    (void)state;
    gy_world *w = world_on(NULL, NULL, NULL);
    gy_scene_collider shape = gy_default_scene_collider(gy_box(gy_v3(1, 1, 1)));
    gy_physics_component_def d = gy_default_physics_component_def_for(GY_BODY_STATIC, &shape);
    enum { N = 12 };
    gy_entity e[N];
    uint64_t want[N];
    for (uint32_t i = 0; i < N; i++) {
        want[i] = i % 3 == 0 ? 0u : 1000u + i;
        d.body.user_data = want[i];
        assert_result(gy_body_create(w, gy_v3(3.0 * i, 0, 0), &d, &e[i]), GY_OK);
    }
    wfx_tick(w, 2);
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(gy_body_get_user_data(w, e[i]), want[i]);

    /* Set, cleared, set on one that had none: the others keep theirs. */
    assert_result(gy_body_set_user_data(w, e[1], 77u), GY_OK);
    want[1] = 77u;
    assert_result(gy_body_set_user_data(w, e[2], 0u), GY_OK);
    want[2] = 0u;
    assert_result(gy_body_set_user_data(w, e[3], 33u), GY_OK);
    want[3] = 33u;
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(gy_body_get_user_data(w, e[i]), want[i]);

    /* Bodies with a value go (destroyed, removed): the ones left keep theirs, and bodies made in
     * their places have their own (none, or a new one), also once physics has run them. */
    assert_result(gy_entity_destroy(w, e[4]), GY_OK);
    assert_result(gy_body_remove(w, e[5]), GY_OK);
    assert_result(gy_entity_destroy(w, e[1]), GY_OK);
    assert_int_equal(gy_body_get_user_data(w, e[5]), 0u);
    gy_physics_component_def got;
    d.body.user_data = 0u;
    assert_result(gy_body_add(w, e[5], &d), GY_OK);
    assert_int_equal(gy_body_get_user_data(w, e[5]), 0u);
    want[5] = 0u;
    assert_result(gy_body_create(w, gy_v3(-3, 0, 0), &d, &e[4]), GY_OK);
    want[4] = 0u;
    d.body.user_data = 5u;
    assert_result(gy_body_create(w, gy_v3(-6, 0, 0), &d, &e[1]), GY_OK);
    want[1] = 5u;
    wfx_tick(w, 2);
    for (uint32_t i = 0; i < N; i++) {
        assert_int_equal(gy_body_get_user_data(w, e[i]), want[i]);
        assert_result(gy_body_get_def(w, e[i], &got), GY_OK);
        assert_int_equal(got.body.user_data, want[i]);
    }

    /* An update changes the updated body's value only. */
    d.body.user_data = 0u;
    assert_result(gy_body_update(w, e[7], &d), GY_OK);
    want[7] = 0u;
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(gy_body_get_user_data(w, e[i]), want[i]);
    wfx_destroy(w, NULL);
}

/* ---- live changes -----------------------------------------------------------------------------
 */

/* A 1 m box resting on the ground, stepped until asleep. */
static gy_entity sleeping_box(gy_world *w, const char *name, gy_vec3 at)
{
    gy_entity e = wfx_entity(w, name, at);
    wfx_add(w, e, wfx_box(GY_BODY_DYNAMIC, gy_v3(1, 1, 1)));
    for (int i = 0; i < 600 && (i < 10 || wfx_state(w, e).awake); i++)
        wfx_tick(w, 1);
    assert_false(wfx_state(w, e).awake);
    return e;
}

static void test_api_set_gravity_wakes_a_sleeper_which_moves_with_the_new_g(void **state)
{
    (void)state;
    FOR_EACH_ADAPTER(backend)
    {
        gy_world *w = world_on(backend, NULL, NULL);
        wfx_ground(w);
        gy_entity box = sleeping_box(w, "box", gy_v3(0, 0.5, 0));
        double y0 = y_of(w, box);

        assert_result(gy_world_set_gravity(w, gy_v3(0, 4, 0)), GY_OK);
        assert_near(gy_world_gravity(w).y, 4.0, 0.0);
        wfx_tick(w, 60);
        assert_true(wfx_state(w, box).awake);
        /* Rises a t²/2 = 2 m in 1 s with a = 4 m/s², within 2 cm (the free-fall tolerance). */
        assert_near(y_of(w, box) - y0, 0.5 * 4.0 * 1.0, 0.02);

        /* Kept across a restart: a new ball rises too. */
        assert_result(gy_world_stop_physics(w), GY_OK);
        assert_result(gy_world_start_physics(w), GY_OK);
        gy_entity ball = wfx_ball(w, "ball", gy_v3(10, 10, 0));
        wfx_tick(w, 30);
        assert_true(y_of(w, ball) > 10.0);

        assert_result(gy_world_set_gravity(w, gy_v3(0, NAN, 0)), GY_ERR_NON_FINITE);
        assert_result(gy_world_set_gravity(w, gy_v3(0, 1e300, 0)), GY_ERR_INVALID_ARGUMENT);
        assert_near(gy_world_gravity(w).y, 4.0, 0.0);
        wfx_destroy(w, NULL);
    }
}

static void test_api_set_awake_sleeps_in_mid_air_and_wakes_into_free_fall(void **state)
{
    (void)state;
    FOR_EACH_ADAPTER(backend)
    {
        gy_world *w = world_on(backend, NULL, NULL);
        gy_entity ball = wfx_ball(w, "ball", gy_v3(0, 50, 0)); /* no damping */
        wfx_tick(w, 10);
        assert_result(gy_body_set_awake(w, ball, false), GY_OK);
        wfx_tick(w, 1);
        gy_physics_state s = wfx_state(w, ball);
        assert_false(s.awake);
        wfx_tick(w, 60);
        assert_false(wfx_state(w, ball).awake);
        /* Asleep: not one bit of motion. */
        assert_near(y_of(w, ball), s.pose.position.y, 0.0);

        assert_result(gy_body_set_awake(w, ball, true), GY_OK);
        wfx_tick(w, 60);
        /* From rest, g t²/2 in 1 s, within 2 cm. */
        assert_near(y_of(w, ball), s.pose.position.y - 0.5 * G, 0.02);

        gy_entity ground = wfx_ground(w);
        assert_result(gy_body_set_awake(w, ground, true), GY_ERR_INVALID_MOTION);
        wfx_destroy(w, NULL);
    }
}

static void test_api_set_mass_changes_impulse_response_as_one_over_m(void **state)
{
    (void)state;
    FOR_EACH_ADAPTER(backend)
    {
        gy_world *w = world_on(backend, NULL, NULL);
        assert_result(gy_world_set_gravity(w, gy_v3(0, 0, 0)), GY_OK);
        gy_entity a = wfx_ball(w, "a", gy_v3(0, 5, 0));
        gy_entity b = wfx_ball(w, "b", gy_v3(5, 5, 0));
        assert_result(gy_body_set_mass(w, a, 2.0), GY_OK);
        assert_result(gy_body_set_mass(w, b, 8.0), GY_OK);
        assert_result(gy_body_apply_impulse(w, a, gy_v3(4, 0, 0)), GY_OK);
        assert_result(gy_body_apply_impulse(w, b, gy_v3(4, 0, 0)), GY_OK);
        wfx_tick(w, 2);
        /* J / m: 2 and 0.5 m/s (proxies carry floats: 1e-5). */
        assert_near(wfx_state(w, a).linear_velocity.x, 2.0, 1e-5);
        assert_near(wfx_state(w, b).linear_velocity.x, 0.5, 1e-5);
        /* Kept in the description for the next creation. */
        gy_physics_component_def d;
        assert_result(gy_body_get_def(w, b, &d), GY_OK);
        assert_near(d.body.mass, 8.0, 0.0);

        assert_result(gy_body_set_mass(w, a, 0.0), GY_ERR_INVALID_ARGUMENT);
        assert_result(gy_body_set_mass(w, a, INFINITY), GY_ERR_NON_FINITE);
        gy_entity ground = wfx_ground(w);
        assert_result(gy_body_set_mass(w, ground, 1.0), GY_ERR_INVALID_MOTION);
        wfx_destroy(w, NULL);
    }
}

/* Counts a recorder's events of `kind` between `self` and `other`. */
static uint32_t count_pair(const wfx_events *r, gy_entity self, gy_entity other,
                           gy_collision_kind kind)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->count; i++)
        n += r->ev[i].kind == kind && gy_entity_equal(r->ev[i].self, self) &&
             gy_entity_equal(r->ev[i].other, other);
    return n;
}

static void test_api_material_and_filter_change_in_place_without_exit_enter(void **state)
{
    (void)state;
    static wfx_events ev; /* large: not on the stack */
    FOR_EACH_ADAPTER(backend)
    {
        gy_world *w = world_on(backend, NULL, NULL);
        gy_entity ground = wfx_ground(w);
        gy_entity base = sleeping_box(w, "base", gy_v3(0, 0.5, 0));
        gy_entity top = sleeping_box(w, "top", gy_v3(0, 1.5, 0));
        memset(&ev, 0, sizeof ev);
        assert_result(gy_entity_set_collision_callback(w, base, wfx_on_collision, &ev), GY_OK);
        assert_result(gy_entity_set_collision_callback(w, top, wfx_on_collision, &ev), GY_OK);

        /* A new material and a new category (every mask still accepts it): same pairs, no EXIT
         * and no ENTER, and the stack stands. */
        gy_material ice = gy_default_material();
        ice.friction = 0.05;
        assert_result(gy_body_set_material(w, base, 0, ice), GY_OK);
        assert_result(gy_body_set_filter(w, base, 0, 4u | 8u, ~0u), GY_OK);
        wfx_tick(w, 30);
        assert_int_equal(wfx_count_kind(&ev, GY_COLLISION_EXIT), 0);
        assert_int_equal(wfx_count_kind(&ev, GY_COLLISION_ENTER), 0);
        assert_near(y_of(w, top), 1.5, 0.03);
        gy_physics_component_def d;
        assert_result(gy_body_get_def(w, base, &d), GY_OK);
        assert_near(d.colliders[0].def.material.friction, 0.05, 0.0);
        assert_int_equal(d.colliders[0].def.category, 4u | 8u);

        /* The top box stops accepting the base: one EXIT for that pair, none for the ground's
         * pair with the base, and the top box falls into the base. */
        assert_result(gy_body_set_filter(w, top, 0, 2u, ~(4u | 8u)), GY_OK);
        wfx_tick(w, 20);
        assert_int_equal(count_pair(&ev, top, base, GY_COLLISION_EXIT), 1);
        assert_int_equal(count_pair(&ev, base, ground, GY_COLLISION_EXIT), 0);
        assert_true(y_of(w, top) < 1.4);
        /* And back: the overlapping pair is found again (one ENTER). */
        assert_result(gy_body_set_filter(w, top, 0, 1u, ~0u), GY_OK);
        wfx_tick(w, 2);
        assert_int_equal(count_pair(&ev, top, base, GY_COLLISION_ENTER), 1);

        assert_result(gy_body_set_filter(w, top, 1, 1u, 1u), GY_ERR_INVALID_ARGUMENT);
        ice.restitution = -1.0;
        assert_result(gy_body_set_material(w, top, 0, ice), GY_ERR_INVALID_ARGUMENT);
        wfx_destroy(w, NULL);
    }
}

/* ---- entities and characters ------------------------------------------------------------------
 */

/* Bodies made from one description (a level's statics) hold it apart: changing one body's
 * material, filter, mass, user data or switch changes no other body's description, on either
 * side of teardown and of a body removed in between. */
static void test_api_bodies_from_one_description_change_apart(void **state)
{
    (void)state;
    gy_world *w = world_on(NULL, NULL, NULL);
    gy_scene_collider box = gy_default_scene_collider(gy_box(gy_v3(1, 1, 1)));
    gy_physics_component_def d = gy_default_physics_component_def_for(GY_BODY_STATIC, &box);
    gy_scene_collider ball = gy_default_scene_collider(gy_sphere(0.5));
    gy_physics_component_def dyn = gy_default_physics_component_def_for(GY_BODY_DYNAMIC, &ball);
    gy_entity s[4], b[2];
    for (uint32_t i = 0; i < 4; i++)
        assert_result(gy_body_create(w, gy_v3(3.0 * i, 0, 0), &d, &s[i]), GY_OK);
    for (uint32_t i = 0; i < 2; i++)
        assert_result(gy_body_create(w, gy_v3(3.0 * i, 10, 0), &dyn, &b[i]), GY_OK);
    wfx_tick(w, 2);
    gy_material ice = gy_default_material();
    ice.friction = 0.02;
    assert_result(gy_body_set_material(w, s[1], 0, ice), GY_OK);
    assert_result(gy_body_set_filter(w, s[2], 0, 4u, 8u), GY_OK);
    assert_result(gy_body_set_user_data(w, s[3], 99u), GY_OK);
    assert_result(gy_body_set_active(w, s[3], false), GY_OK);
    assert_result(gy_body_set_mass(w, b[0], 5.0), GY_OK);
    assert_result(gy_entity_destroy(w, s[0]), GY_OK);
    wfx_tick(w, 2);
    gy_physics_component_def got;
    for (uint32_t i = 1; i < 4; i++) {
        assert_result(gy_body_get_def(w, s[i], &got), GY_OK);
        const gy_collider_def *c = &got.colliders[0].def;
        assert_near(c->material.friction, i == 1 ? 0.02 : 0.5, 0.0);
        assert_int_equal(c->category, i == 2 ? 4u : box.def.category);
        assert_int_equal(c->mask, i == 2 ? 8u : box.def.mask);
        assert_int_equal(got.body.user_data, i == 3 ? 99u : 0u);
        assert_int_equal(got.is_active, i != 3);
        assert_near(c->shape.box_size.x, 1.0, 0.0);
    }
    assert_result(gy_body_get_def(w, b[0], &got), GY_OK);
    assert_near(got.body.mass, 5.0, 0.0);
    assert_result(gy_body_get_def(w, b[1], &got), GY_OK);
    assert_near(got.body.mass, dyn.body.mass, 0.0);
    /* A new body from the same description still gets the description as given. */
    gy_entity again;
    assert_result(gy_body_create(w, gy_v3(-3, 0, 0), &d, &again), GY_OK);
    assert_result(gy_body_get_def(w, again, &got), GY_OK);
    assert_near(got.colliders[0].def.material.friction, 0.5, 0.0);
    assert_int_equal(got.colliders[0].def.category, box.def.category);
    wfx_destroy(w, NULL);
}

static void test_api_get_entities_lists_the_live_ones(void **state)
{
    (void)state;
    gy_world *w = world_on(NULL, NULL, NULL);
    gy_entity a = wfx_entity(w, "a", gy_v3(0, 0, 0));
    gy_entity b = wfx_entity(w, "b", gy_v3(0, 0, 0));
    gy_entity c = wfx_entity(w, "c", gy_v3(0, 0, 0));
    assert_result(gy_entity_destroy(w, b), GY_OK);
    assert_int_equal(gy_world_get_entities(w, NULL, 0), 2);
    gy_entity list[4] = {{0}};
    assert_int_equal(gy_world_get_entities(w, list, 4), 2);
    assert_true(gy_entity_equal(list[0], a));
    assert_true(gy_entity_equal(list[1], c));
    assert_true(gy_entity_is_null(list[2]));
    gy_entity one[1] = {{0}};
    assert_int_equal(gy_world_get_entities(w, one, 1), 2);
    assert_true(gy_entity_equal(one[0], a));
    wfx_destroy(w, NULL);
}

static void test_api_character_intent_flags_are_refused_by_gyre_controller(void **state)
{
    (void)state;
    gy_world *w = world_on(NULL, NULL, NULL);
    wfx_ground(w);
    gy_scene_collider cap = gy_default_scene_collider(gy_capsule(0.3, 1.8));
    gy_physics_component_def d = gy_default_physics_component_def_for(GY_BODY_KINEMATIC, &cap);
    d.is_character = true;
    gy_entity hero;
    assert_result(gy_body_create(w, gy_v3(0, 0.95, 0), &d, &hero), GY_OK);
    wfx_tick(w, 2);
    assert_result(gy_character_set_intent(w, hero, gy_v3(1, 0, 0), 1u), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_character_set_intent(w, hero, gy_v3(1, 0, 0), 0u), GY_OK);
    wfx_destroy(w, NULL);
}

/* A host's own character hook: the flags of every intent it received. */
typedef struct hook_seen {
    uint32_t intents;
    uint32_t flags;
} hook_seen;

static void record_intents(void *ctx, const gy_physics_step_context *sc)
{
    hook_seen *h = ctx;
    for (uint32_t i = 0; i < sc->input_count; i++)
        if (sc->inputs[i].kind == GY_CHARACTER_INTENT) {
            h->intents++;
            h->flags = sc->inputs[i].flags;
        }
}

static void test_api_character_intent_flags_reach_a_host_hook(void **state)
{
    (void)state;
    hook_seen seen = {0, 0};
    gy_world_def c = wfx_config(NULL, true);
    c.physics.move_characters = record_intents;
    c.physics.character_ctx = &seen;
    gy_world *w = wfx_world_with(&c);
    gy_scene_collider cap = gy_default_scene_collider(gy_capsule(0.3, 1.8));
    gy_physics_component_def d = gy_default_physics_component_def_for(GY_BODY_KINEMATIC, &cap);
    d.is_character = true;
    gy_entity hero;
    assert_result(gy_body_create(w, gy_v3(0, 0.95, 0), &d, &hero), GY_OK);
    wfx_tick(w, 2);
    assert_result(gy_character_set_intent(w, hero, gy_v3(1, 0, 0), 0x5u), GY_OK);
    wfx_tick(w, 2);
    assert_int_equal(seen.intents, 1);
    assert_int_equal(seen.flags, 0x5u);
    wfx_destroy(w, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_body_in_four_lines_falls_and_lands),
        cmocka_unit_test(test_api_unread_fields_are_refused_by_name),
        cmocka_unit_test(test_api_user_data_survives_everything_but_update),
        cmocka_unit_test(test_api_user_data_is_each_bodys_own),
        cmocka_unit_test(test_api_set_gravity_wakes_a_sleeper_which_moves_with_the_new_g),
        cmocka_unit_test(test_api_set_awake_sleeps_in_mid_air_and_wakes_into_free_fall),
        cmocka_unit_test(test_api_set_mass_changes_impulse_response_as_one_over_m),
        cmocka_unit_test(test_api_material_and_filter_change_in_place_without_exit_enter),
        cmocka_unit_test(test_api_bodies_from_one_description_change_apart),
        cmocka_unit_test(test_api_get_entities_lists_the_live_ones),
        cmocka_unit_test(test_api_character_intent_flags_are_refused_by_gyre_controller),
        cmocka_unit_test(test_api_character_intent_flags_reach_a_host_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
