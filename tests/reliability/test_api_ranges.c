/* Every number the World takes is held to its documented range (gyre/backend/backend.h) with the
 * same error whether physics runs or not, and what the middleware produces reaches the game finite.
 * Each case is a value a middleware cannot handle (it would abort inside ODE), one that could
 * wedge a restart, or one that could hand the game an infinity. Run once per adapter: argument 1
 * names it. */
#include "test_support.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "gyre/gyre.h"

#define DT      (1.0 / 60.0)
#define TIMEOUT 20000000000ull

static const char *adapter = "ode";

static gy_world *make_world(gy_test_allocator *ta, bool stopped)
{
    gy_test_allocator_init(ta);
    gy_world_def c = gy_default_world_def();
    c.physics.lockstep = true;
    c.physics.backend = adapter;
    c.allocator = &ta->base;
    c.step_timeout_ns = TIMEOUT;
    c.start_stopped = stopped;
    gy_world *w = NULL;
    assert_result(gy_world_create(&c, &w), GY_OK);
    return w;
}

static void destroy_world(gy_world *w, gy_test_allocator *ta)
{
    bool running = gy_world_physics_running(w);
    gy_world_teardown rep;
    assert_result(gy_world_destroy(w, &rep), GY_OK);
    if (running) {
        assert_true(rep.adapter_checked);
        assert_int_equal(rep.adapter_live_objects, 0);
    }
    assert_int_equal(ta->live_blocks, 0);
}

static void tick(gy_world *w, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        assert_result(gy_world_tick(w, DT), GY_OK);
}

static gy_entity entity(gy_world *w, const char *name, gy_vec3 at)
{
    gy_entity_def d = gy_default_entity_def();
    d.name = name;
    d.position = at;
    gy_entity e;
    assert_result(gy_entity_create(w, &d, &e), GY_OK);
    return e;
}

typedef struct desc {
    gy_physics_component_def d;
    gy_scene_collider c;
} desc;

static gy_physics_component_def *with(desc *d)
{
    d->d.colliders = &d->c;
    d->d.collider_count = 1;
    return &d->d;
}

static desc shaped(gy_body_type type, gy_shape s)
{
    desc d;
    memset(&d, 0, sizeof d);
    d.d = gy_default_physics_component_def();
    d.d.body_type = type;
    d.c.def = gy_default_collider_def();
    d.c.def.shape = s;
    return d;
}

static gy_shape sphere(double r)
{
    gy_shape s = {.type = GY_SHAPE_SPHERE, .radius = r};
    return s;
}

static gy_shape cylinder(double r, double h)
{
    gy_shape s = {.type = GY_SHAPE_CYLINDER, .radius = r, .height = h};
    return s;
}

static gy_shape box(double x, double y, double z)
{
    gy_shape s = {.type = GY_SHAPE_BOX, .box_size = {x, y, z}};
    return s;
}

/* ---- 1: sizes, masses, damping, gravity factor ------------------------------------------------
 */

/* One refused description, on a running and on a stopped World: the same error, nothing added. */
static void expect_refused(desc d, gy_result expected)
{
    for (int stopped = 0; stopped < 2; stopped++) {
        gy_test_allocator ta;
        gy_world *w = make_world(&ta, stopped != 0);
        gy_entity e = entity(w, "e", gy_v3(0, 1, 0));
        assert_result(gy_body_add(w, e, with(&d)), expected);
        assert_false(gy_body_exists(w, e));
        if (!stopped)
            tick(w, 2);
        destroy_world(w, &ta);
    }
}

static void test_ranges_shape_sizes_beyond_what_a_middleware_handles_are_refused(void **state)
{
    (void)state;
    expect_refused(shaped(GY_BODY_DYNAMIC, cylinder(0.5, 1e-17)), GY_ERR_INVALID_SHAPE);
    expect_refused(shaped(GY_BODY_DYNAMIC, cylinder(0.5, 1e100)), GY_ERR_INVALID_SHAPE);
    expect_refused(shaped(GY_BODY_DYNAMIC, sphere(1e300)), GY_ERR_INVALID_SHAPE);
    expect_refused(shaped(GY_BODY_STATIC, box(1, 2 * GY_MAX_SHAPE_SIZE, 1)),
                   GY_ERR_INVALID_SHAPE);
    expect_refused(shaped(GY_BODY_DYNAMIC, sphere(GY_MIN_SHAPE_SIZE / 2)),
                   GY_ERR_INVALID_SHAPE);
}

static void test_ranges_mass_damping_and_gravity_factor_are_bounded(void **state)
{
    (void)state;
    desc d = shaped(GY_BODY_DYNAMIC, sphere(0.5));
    d.d.body.mass = 1e300;
    expect_refused(d, GY_ERR_INVALID_ARGUMENT);
    d = shaped(GY_BODY_DYNAMIC, sphere(0.5));
    d.d.body.mass = GY_MIN_MASS / 10;
    expect_refused(d, GY_ERR_INVALID_ARGUMENT);
    d = shaped(GY_BODY_DYNAMIC, sphere(0.5));
    d.d.body.gravity_factor = -1e300;
    expect_refused(d, GY_ERR_INVALID_ARGUMENT);
    d = shaped(GY_BODY_DYNAMIC, sphere(0.5));
    d.d.body.linear_damping = 1e300;
    expect_refused(d, GY_ERR_INVALID_ARGUMENT);
    d = shaped(GY_BODY_DYNAMIC, sphere(0.5));
    d.d.body.angular_damping = 2 * GY_MAX_COEFFICIENT;
    expect_refused(d, GY_ERR_INVALID_ARGUMENT);
    d = shaped(GY_BODY_DYNAMIC, sphere(0.5));
    d.d.body.has_mass_properties = true;
    d.d.body.mass = 1.0;
    d.d.body.mass_properties.inertia = (gy_mat3){{{1e300, 0, 0}, {0, 1e300, 0}, {0, 0, 1e300}}};
    expect_refused(d, GY_ERR_INVALID_ARGUMENT);
    d = shaped(GY_BODY_DYNAMIC, sphere(0.5));
    d.c.def.density = 1e300;
    expect_refused(d, GY_ERR_INVALID_ARGUMENT);
    d = shaped(GY_BODY_DYNAMIC, sphere(0.5));
    d.d.body.linear_velocity = gy_v3(0, 2 * GY_MAX_MAGNITUDE, 0);
    expect_refused(d, GY_ERR_INVALID_ARGUMENT);
}

/* The smallest and largest accepted sizes run: two cylinders GY_MIN_SHAPE_SIZE high resting on
 * each other (what made libccd abort at 1e-17), a body of the largest mass on a floor of the
 * largest size, the largest gravity factor. Every state stays finite. */
static void test_ranges_the_edges_of_each_range_run(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_world *w = make_world(&ta, false);
    desc floor = shaped(GY_BODY_STATIC, box(GY_MAX_SHAPE_SIZE, 1, GY_MAX_SHAPE_SIZE));
    assert_result(gy_body_add(w, entity(w, "floor", gy_v3(0, -0.5, 0)), with(&floor)), GY_OK);
    gy_entity e[4];
    desc low = shaped(GY_BODY_DYNAMIC, cylinder(0.5, GY_MIN_SHAPE_SIZE));
    e[0] = entity(w, "c0", gy_v3(0, GY_MIN_SHAPE_SIZE / 2, 0));
    assert_result(gy_body_add(w, e[0], with(&low)), GY_OK);
    e[1] = entity(w, "c1", gy_v3(0.1, 1.5 * GY_MIN_SHAPE_SIZE, 0));
    assert_result(gy_body_add(w, e[1], with(&low)), GY_OK);
    desc heavy = shaped(GY_BODY_DYNAMIC, sphere(GY_MIN_SHAPE_SIZE));
    heavy.d.body.mass = GY_MAX_MASS;
    e[2] = entity(w, "heavy", gy_v3(3, 0.5, 0));
    assert_result(gy_body_add(w, e[2], with(&heavy)), GY_OK);
    desc fast = shaped(GY_BODY_DYNAMIC, sphere(0.5));
    fast.d.body.gravity_factor = GY_MAX_GRAVITY_FACTOR;
    fast.d.body.linear_damping = GY_MAX_COEFFICIENT;
    e[3] = entity(w, "fast", gy_v3(-3, 2, 0));
    assert_result(gy_body_add(w, e[3], with(&fast)), GY_OK);
    tick(w, 30);
    for (int i = 0; i < 4; i++) {
        gy_physics_state s;
        assert_result(gy_body_get_state(w, e[i], &s), GY_OK);
        assert_true(gy_vec3_is_finite(s.pose.position) && gy_quat_is_finite(s.pose.rotation));
        assert_true(gy_vec3_is_finite(s.linear_velocity) && gy_vec3_is_finite(s.angular_velocity));
    }
    destroy_world(w, &ta);
}

/* Query extents: the live overlap of a sphere of radius 1e300 against a hull made ODE abort;
 * now it is refused, live and snapshot alike, running or stopped. */
static void test_ranges_query_extents_are_refused_alike_live_and_snapshot(void **state)
{
    (void)state;
    static const gy_vec3 pts[] = {{-1, -1, -1}, {1, -1, -1}, {-1, 1, -1}, {-1, -1, 1}, {1, 1, 1}};
    for (int stopped = 0; stopped < 2; stopped++) {
        gy_test_allocator ta;
        gy_world *w = make_world(&ta, false);
        gy_geometry g;
        gy_hull_def hd = {pts, 5};
        assert_result(gy_geometry_create_hull(w, &hd, &g), GY_OK);
        gy_shape hull = {.type = GY_SHAPE_HULL, .resource.bits = g.bits};
        desc rock = shaped(GY_BODY_STATIC, hull);
        assert_result(gy_body_add(w, entity(w, "rock", gy_v3(0, 0, 0)), with(&rock)), GY_OK);
        gy_geometry_release(w, g);
        tick(w, 2);
        if (stopped)
            assert_result(gy_world_stop_physics(w), GY_OK);
        gy_world_hit hits[4];
        uint32_t n = 7;
        gy_shape big = sphere(1e300);
        gy_pose at = gy_pose_identity();
        assert_result(gy_world_overlap(w, &big, at, NULL, GY_COLLECT_ALL, hits, 4, &n, NULL),
                      GY_ERR_INVALID_SHAPE);
        assert_int_equal(n, 0);
        assert_result(
            gy_world_snapshot_overlap(w, &big, at, NULL, GY_COLLECT_ALL, hits, 4, &n, NULL),
            GY_ERR_INVALID_SHAPE);
        gy_vec3 far = gy_v3(-1e300, 0, 0), dir = gy_v3(1, 0, 0);
        assert_result(gy_world_raycast(w, far, dir, NULL, GY_COLLECT_CLOSEST, hits, 4, &n, NULL),
                      GY_ERR_INVALID_ARGUMENT);
        assert_result(
            gy_world_snapshot_raycast(w, far, dir, NULL, GY_COLLECT_CLOSEST, hits, 4, &n, NULL),
            GY_ERR_INVALID_ARGUMENT);
        gy_vec3 o = gy_v3(-5, 0, 0), t = gy_v3(2 * GY_MAX_MAGNITUDE, 0, 0);
        assert_result(gy_world_snapshot_raycast(w, o, t, NULL, GY_COLLECT_ALL, hits, 4, &n, NULL),
                      GY_ERR_INVALID_ARGUMENT);
        at.position = gy_v3(0, 0, 2 * GY_MAX_MAGNITUDE);
        gy_shape small = sphere(1);
        assert_result(
            gy_world_shape_cast(w, &small, at, dir, NULL, GY_COLLECT_ALL, hits, 4, &n, NULL),
            GY_ERR_INVALID_ARGUMENT);
        if (!stopped) {
            /* The largest accepted sphere against the hull: answered, finite. */
            gy_shape largest = sphere(GY_MAX_SHAPE_SIZE);
            assert_result(gy_world_overlap(w, &largest, gy_pose_identity(), NULL, GY_COLLECT_ALL,
                                           hits, 4, &n, NULL),
                          GY_OK);
            assert_int_equal(n, 1);
            assert_result(gy_world_raycast(w, gy_v3(-GY_MAX_MAGNITUDE, 0, 0),
                                           gy_v3(GY_MAX_MAGNITUDE, 0, 0), NULL, GY_COLLECT_CLOSEST,
                                           hits, 4, &n, NULL),
                          GY_OK);
            assert_int_equal(n, 1);
            assert_true(gy_vec3_is_finite(hits[0].point) && gy_is_finite(hits[0].distance));
        }
        destroy_world(w, &ta);
    }
}

/* A cast across the whole range (found by the randomized test): ODE's time-of-impact bisection
 * asked for a bracket finer than the doubles near the end of the sweep hold and never returned,
 * wedging the game thread inside a live query. */
static void test_ranges_a_cast_across_the_whole_range_returns(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_world *w = make_world(&ta, false);
    desc floor = shaped(GY_BODY_STATIC, box(40, 1, 40));
    assert_result(gy_body_add(w, entity(w, "floor", gy_v3(0, -0.5, 0)), with(&floor)), GY_OK);
    tick(w, 2);
    gy_shape cap = {.type = GY_SHAPE_CAPSULE, .radius = 0.767, .height = 2.58};
    gy_pose from = {gy_v3(-GY_MAX_MAGNITUDE, 0.2, 0.5),
                    gy_quat_normalize((gy_quat){0.3, 0.2, 0.5, 0.8})};
    gy_world_hit hits[4];
    uint32_t n = 0;
    for (int c = 0; c < 3; c++) {
        assert_result(gy_world_shape_cast(w, &cap, from, gy_v3(GY_MAX_MAGNITUDE, -0.3, 0.2), NULL,
                                          (gy_collector)c, hits, 4, &n, NULL),
                      GY_OK);
        assert_int_equal(n, 1);
        assert_true(gy_vec3_is_finite(hits[0].point) && gy_is_finite(hits[0].fraction));
        assert_true(hits[0].fraction > 0.999999 && hits[0].fraction < 1.0);
    }
    destroy_world(w, &ta);
}

/* ---- 3: a stopped World accepts what a running one does, and always starts again ------------- */

static void test_ranges_a_stopped_world_refuses_what_a_running_one_does(void **state)
{
    (void)state;
    for (int stopped = 0; stopped < 2; stopped++) {
        gy_test_allocator ta;
        gy_world *w = make_world(&ta, stopped != 0);
        gy_entity e = entity(w, "e", gy_v3(0, 1, 0));
        desc d = shaped(GY_BODY_DYNAMIC, sphere(0.5));
        assert_result(gy_body_add(w, e, with(&d)), GY_OK);
        gy_pose far = gy_pose_identity();
        far.position = gy_v3(2 * GY_MAX_MAGNITUDE, 0, 0);
        assert_result(gy_body_teleport(w, e, far), GY_ERR_INVALID_ARGUMENT);
        assert_result(gy_entity_set_world_pose(w, e, far), GY_ERR_INVALID_ARGUMENT);
        assert_result(gy_entity_set_local_position(w, e, far.position), GY_ERR_INVALID_ARGUMENT);
        gy_entity_def ed = gy_default_entity_def();
        ed.position = far.position;
        gy_entity x;
        assert_result(gy_entity_create(w, &ed, &x), GY_ERR_INVALID_ARGUMENT);
        /* A child whose world position composes beyond the range cannot take a body. */
        gy_entity p = entity(w, "parent", gy_v3(0.9 * GY_MAX_MAGNITUDE, 0, 0));
        gy_entity_def cd = gy_default_entity_def();
        cd.parent = p;
        cd.position = gy_v3(0.9 * GY_MAX_MAGNITUDE, 0, 0);
        gy_entity child;
        assert_result(gy_entity_create(w, &cd, &child), GY_OK);
        assert_result(gy_body_add(w, child, with(&d)), GY_ERR_INVALID_ARGUMENT);
        const gy_result expect = GY_ERR_INVALID_ARGUMENT; /* before "physics stopped" */
        assert_result(gy_body_set_linear_velocity(w, e, gy_v3(1e13, 0, 0)), expect);
        assert_result(gy_body_apply_force(w, e, gy_v3(0, -1e300, 0)), expect);
        assert_result(gy_body_apply_impulse_at(w, e, gy_v3(1, 0, 0), far.position), expect);
        assert_result(gy_body_apply_torque(w, e, gy_v3(0, 0, NAN)), GY_ERR_NON_FINITE);
        destroy_world(w, &ta);
    }
}

/* A restart builds every body it can: one whose entity's world pose was composed out of range
 * while physics was stopped (a parent moved) is reported by entity, the others start. */
static void test_ranges_restart_leaves_out_only_the_body_that_cannot_be_built(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_world *w = make_world(&ta, false);
    gy_entity ball = entity(w, "ball", gy_v3(0, 1, 0));
    desc d = shaped(GY_BODY_DYNAMIC, sphere(0.5));
    assert_result(gy_body_add(w, ball, with(&d)), GY_OK);
    gy_entity p = entity(w, "parent", gy_v3(0.5 * GY_MAX_MAGNITUDE, 0, 0));
    gy_entity_def cd = gy_default_entity_def();
    cd.name = "far";
    cd.parent = p;
    cd.position = gy_v3(0.4 * GY_MAX_MAGNITUDE, 0, 0);
    gy_entity child;
    assert_result(gy_entity_create(w, &cd, &child), GY_OK);
    assert_result(gy_body_add(w, child, with(&d)), GY_OK);
    tick(w, 3);
    assert_result(gy_world_stop_physics(w), GY_OK);
    /* Every local position is in range; the child's world one is not any more. */
    assert_result(gy_entity_set_local_position(w, p, gy_v3(0.9 * GY_MAX_MAGNITUDE, 0, 0)), GY_OK);
    assert_result(gy_world_start_physics(w), GY_OK);
    tick(w, 2);
    gy_physics_state s;
    assert_result(gy_body_get_state(w, ball, &s), GY_OK);
    assert_true(s.has_body);
    assert_false(s.failed);
    assert_result(gy_body_get_state(w, child, &s), GY_OK);
    assert_true(s.failed);
    assert_false(s.has_body);
    assert_result(s.error, GY_ERR_INVALID_ARGUMENT);
    gy_world_stats st;
    gy_world_get_stats(w, &st);
    assert_int_equal(st.bodies_failed, 1);
    /* Moved back in range and switched off and on, it is built. */
    assert_result(gy_entity_set_local_position(w, p, gy_v3(0, 0, 0)), GY_OK);
    assert_result(gy_body_set_active(w, child, false), GY_OK);
    assert_result(gy_body_set_active(w, child, true), GY_OK);
    tick(w, 2);
    assert_result(gy_body_get_state(w, child, &s), GY_OK);
    assert_true(s.has_body);
    destroy_world(w, &ta);
}

/* A character carried by a platform at the largest speed while walking at it too moves at
 * twice the range: its reported velocity is beyond what a body may be created with, and a restart
 * used to hand that to the bootstrap and refuse the whole World. */
static void test_ranges_restart_after_a_character_reported_a_huge_velocity(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_world *w = make_world(&ta, false);
    desc floor = shaped(GY_BODY_KINEMATIC, box(40, 1, 40));
    floor.d.body.linear_velocity = gy_v3(GY_MAX_MAGNITUDE, 0, 0);
    gy_entity platform = entity(w, "platform", gy_v3(0, -0.5, 0));
    assert_result(gy_body_add(w, platform, with(&floor)), GY_OK);
    gy_shape cap = {.type = GY_SHAPE_CAPSULE, .radius = 0.4, .height = 1.8};
    desc ch = shaped(GY_BODY_KINEMATIC, cap);
    ch.d.is_character = true;
    gy_entity hero = entity(w, "hero", gy_v3(0, 0.92, 0));
    assert_result(gy_body_add(w, hero, with(&ch)), GY_OK);
    assert_result(gy_character_set_intent(w, hero, gy_v3(GY_MAX_MAGNITUDE, 0, 0), 0), GY_OK);
    tick(w, 3);
    gy_physics_state s;
    assert_result(gy_body_get_state(w, hero, &s), GY_OK);
    assert_true(gy_vec3_is_finite(s.linear_velocity));
    assert_result(gy_world_stop_physics(w), GY_OK);
    assert_result(gy_world_start_physics(w), GY_OK);
    tick(w, 2);
    assert_result(gy_body_get_state(w, hero, &s), GY_OK);
    assert_true(s.has_body);
    assert_false(s.failed);
    assert_true(gy_vec3_is_finite(s.pose.position));
    assert_result(gy_body_get_state(w, platform, &s), GY_OK);
    assert_true(s.has_body);
    destroy_world(w, &ta);
}

/* ---- 5: a body that faults before its first publish; geometry errors ------------------------ */

static void test_ranges_a_body_faulting_before_its_first_publish_stays_where_it_was(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_world *w = make_world(&ta, false);
    gy_entity e = entity(w, "rocket", gy_v3(5, 7, 9));
    desc d = shaped(GY_BODY_DYNAMIC, sphere(0.5));
    d.d.body.gravity_factor = GY_MAX_GRAVITY_FACTOR; /* past the bound within its first step */
    assert_result(gy_body_add(w, e, with(&d)), GY_OK);
    tick(w, 3);
    gy_physics_state s;
    assert_result(gy_body_get_state(w, e, &s), GY_OK);
    assert_true(s.faulted);
    assert_near(s.pose.position.x, 5.0, 1e-5);
    assert_near(s.pose.position.y, 7.0, 1e-5);
    assert_near(s.pose.position.z, 9.0, 1e-5);
    destroy_world(w, &ta);
}

static void test_ranges_geometry_errors_are_the_documented_ones(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_world *w = make_world(&ta, false);
    gy_vec3 pts[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    uint32_t idx[3] = {0, 1, 2};
    gy_geometry g;
    gy_hull_def hd = {pts, 4};
    gy_mesh_def md = {pts, 4, idx, 3};
    pts[3].y = NAN;
    assert_result(gy_geometry_create_hull(w, &hd, &g), GY_ERR_NON_FINITE);
    assert_result(gy_geometry_create_mesh(w, &md, &g), GY_ERR_NON_FINITE);
    pts[3].y = 1e300;
    assert_result(gy_geometry_create_hull(w, &hd, &g), GY_ERR_INVALID_MESH);
    assert_result(gy_geometry_create_mesh(w, &md, &g), GY_ERR_INVALID_MESH);
    const double e = GY_MAX_LOCAL_EXTENT;
    gy_vec3 edge[4] = {{-e, -e, -e}, {e, -e, -e}, {-e, e, -e}, {-e, -e, e}};
    hd.points = edge;
    assert_result(gy_geometry_create_hull(w, &hd, &g), GY_OK);
    gy_geometry_release(w, g);
    destroy_world(w, &ta);
}

/* ---- 4: nothing non-finite reaches the game -------------------------------------------------- */

typedef struct finite_events {
    uint32_t events, enters, exits, bad;
} finite_events;

static void count_event(void *ctx, gy_world *w, const gy_collision_event *ev)
{
    (void)w;
    finite_events *f = ctx;
    f->events++;
    f->enters += ev->kind == GY_COLLISION_ENTER;
    f->exits += ev->kind == GY_COLLISION_EXIT;
    if (!gy_vec3_is_finite(ev->point) || !gy_vec3_is_finite(ev->normal) ||
        !gy_is_finite(ev->penetration) || !gy_is_finite(ev->normal_impulse) ||
        !gy_is_finite(ev->tangent_impulse))
        f->bad++;
}

/* The largest sensor accepted swallowing bodies: every event finite, every ENTER exited. */
static void test_ranges_collision_events_from_a_huge_sensor_are_finite(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_world *w = make_world(&ta, false);
    finite_events f = {0};
    desc s = shaped(GY_BODY_TRIGGER, box(GY_MAX_SHAPE_SIZE, GY_MAX_SHAPE_SIZE, 2));
    gy_entity sensor = entity(w, "sensor", gy_v3(0, 0, 0));
    assert_result(gy_body_add(w, sensor, with(&s)), GY_OK);
    assert_result(gy_entity_set_collision_callback(w, sensor, count_event, &f), GY_OK);
    for (int i = 0; i < 3; i++) {
        desc b = shaped(GY_BODY_DYNAMIC, sphere(0.5));
        b.d.body.gravity_factor = 0.0;
        gy_entity e = entity(w, "ball", gy_v3(i * 2.0, 0, 0));
        assert_result(gy_body_add(w, e, with(&b)), GY_OK);
        assert_result(gy_entity_set_collision_callback(w, e, count_event, &f), GY_OK);
    }
    tick(w, 5);
    assert_result(gy_world_stop_physics(w), GY_OK);
    tick(w, 1);
    assert_true(f.enters > 0);
    assert_int_equal(f.enters, f.exits);
    assert_int_equal(f.bad, 0);
    destroy_world(w, &ta);
}

int main(int argc, char **argv)
{
    adapter = argc > 1 ? argv[1] : "ode";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranges_shape_sizes_beyond_what_a_middleware_handles_are_refused),
        cmocka_unit_test(test_ranges_mass_damping_and_gravity_factor_are_bounded),
        cmocka_unit_test(test_ranges_the_edges_of_each_range_run),
        cmocka_unit_test(test_ranges_query_extents_are_refused_alike_live_and_snapshot),
        cmocka_unit_test(test_ranges_a_cast_across_the_whole_range_returns),
        cmocka_unit_test(test_ranges_a_stopped_world_refuses_what_a_running_one_does),
        cmocka_unit_test(test_ranges_restart_leaves_out_only_the_body_that_cannot_be_built),
        cmocka_unit_test(test_ranges_restart_after_a_character_reported_a_huge_velocity),
        cmocka_unit_test(test_ranges_a_body_faulting_before_its_first_publish_stays_where_it_was),
        cmocka_unit_test(test_ranges_geometry_errors_are_the_documented_ones),
        cmocka_unit_test(test_ranges_collision_events_from_a_huge_sensor_are_finite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
