/* The middleware contract, checked against one adapter named on the command line (argv[1], e.g.
 * "ode"; an optional argv[2] is a cmocka test-name filter). Only the public headers are used, so
 * every adapter runs this file unchanged.
 *
 * Physics checks compare with the analytic answer at dt = 1/60 s and state their tolerance next
 * to the assert. Every test gets a fresh world whose allocator counts blocks; the teardown fails
 * when world_destroy leaves any behind. Tests release what they create and end with
 * expect_empty(), so release paths are checked too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

#include "gyre/backend/backend.h"
#include "gyre/math.h"

#define DT      (1.0 / 60.0)
#define GRAVITY 9.81

#include "contract_fixture.h"

/* ---- definitions -------------------------------------------------------------------------------
 */

static gy_collider_def sphere_def(double radius)
{
    gy_collider_def c = gy_default_collider_def();
    c.shape.type = GY_SHAPE_SPHERE;
    c.shape.radius = radius;
    return c;
}

static gy_collider_def box_def(gy_vec3 size)
{
    gy_collider_def c = gy_default_collider_def();
    c.shape.type = GY_SHAPE_BOX;
    c.shape.box_size = size;
    return c;
}

static gy_collider_def capsule_def(double radius, double height)
{
    gy_collider_def c = gy_default_collider_def();
    c.shape.type = GY_SHAPE_CAPSULE;
    c.shape.radius = radius;
    c.shape.height = height;
    return c;
}

/* The ground: y = 0, normal up. */
static gy_collider_def plane_def(void)
{
    gy_collider_def c = gy_default_collider_def();
    c.shape.type = GY_SHAPE_PLANE;
    c.shape.normal = gy_v3(0, 1, 0);
    c.shape.offset = 0.0;
    return c;
}

static gy_collider_def resource_def(gy_shape_type type, gy_resource_id id)
{
    gy_collider_def c = gy_default_collider_def();
    c.shape.type = type;
    c.shape.resource = id;
    return c;
}

static gy_body_def body_at(gy_motion_type type, gy_vec3 position)
{
    gy_body_def b = gy_default_body_def();
    b.type = type;
    b.pose.position = position;
    return b;
}

static gy_shape sphere_shape(double radius)
{
    gy_shape s = {0};
    s.type = GY_SHAPE_SPHERE;
    s.radius = radius;
    return s;
}

static gy_shape box_shape(gy_vec3 size)
{
    gy_shape s = {0};
    s.type = GY_SHAPE_BOX;
    s.box_size = size;
    return s;
}

static gy_quat quat4(double x, double y, double z, double w)
{
    gy_quat q = {x, y, z, w};
    return q;
}

static gy_pose pose_at(gy_vec3 p)
{
    gy_pose t = gy_pose_identity();
    t.position = p;
    return t;
}

/* A unit cube's corners (half-size 0.5) and a regular octahedron of radius 0.5. */
static const gy_vec3 cube_points[8] = {{-0.5, -0.5, -0.5}, {0.5, -0.5, -0.5}, {-0.5, 0.5, -0.5},
                                       {0.5, 0.5, -0.5},   {-0.5, -0.5, 0.5}, {0.5, -0.5, 0.5},
                                       {-0.5, 0.5, 0.5},   {0.5, 0.5, 0.5}};
static const gy_vec3 octahedron_points[6] = {{0.5, 0, 0},  {-0.5, 0, 0}, {0, 0.5, 0},
                                             {0, -0.5, 0}, {0, 0, 0.5},  {0, 0, -0.5}};

/* A 2 m square at y = 0 in two triangles wound counter-clockwise from above: triangle 0 covers
 * z > x, triangle 1 covers z < x. */
static const gy_vec3 quad_vertices[4] = {{-1, 0, -1}, {1, 0, -1}, {1, 0, 1}, {-1, 0, 1}};
static const uint32_t quad_indices[6] = {0, 3, 2, 0, 2, 1};

/* ---- calls that must succeed -------------------------------------------------------------------
 */

static gy_body_id create_body(fixture *fx, const gy_body_def *bd, const gy_collider_def *cd,
                              uint32_t n, gy_collider_id *cids)
{
    gy_body_id id = {0};
    assert_result(fx->be->body_create(fx->w, bd, cd, n, &id, cids), GY_OK);
    assert_true(id.bits != 0);
    return id;
}

static gy_body_id create_ground(fixture *fx)
{
    gy_body_def bd = body_at(GY_MOTION_STATIC, gy_v3(0, 0, 0));
    gy_collider_def cd = plane_def();
    return create_body(fx, &bd, &cd, 1, NULL);
}

/* The ground plane with friction coefficient `mu`. */
static gy_body_id create_ground_with_friction(fixture *fx, double mu)
{
    gy_body_def bd = body_at(GY_MOTION_STATIC, gy_v3(0, 0, 0));
    gy_collider_def cd = plane_def();
    cd.material.friction = mu;
    return create_body(fx, &bd, &cd, 1, NULL);
}

static void release_body(fixture *fx, gy_body_id id)
{
    assert_result(fx->be->body_release(fx->w, id), GY_OK);
}

static gy_resource_id create_hull(fixture *fx, const gy_vec3 *points, uint32_t count)
{
    gy_hull_def hd = {points, count};
    gy_resource_id id = {0};
    assert_result(fx->be->hull_create(fx->w, &hd, &id), GY_OK);
    assert_true(id.bits != 0);
    return id;
}

static gy_resource_id create_quad_mesh(fixture *fx)
{
    gy_mesh_def md = {quad_vertices, 4, quad_indices, 6};
    gy_resource_id id = {0};
    assert_result(fx->be->mesh_create(fx->w, &md, &id), GY_OK);
    assert_true(id.bits != 0);
    return id;
}

static gy_joint_id create_joint(fixture *fx, const gy_joint_def *jd)
{
    gy_joint_id id = {0};
    assert_result(fx->be->joint_create(fx->w, jd, &id), GY_OK);
    assert_true(id.bits != 0);
    return id;
}

static void step_n(fixture *fx, int n)
{
    for (int i = 0; i < n; i++)
        assert_result(fx->be->step(fx->w, DT), GY_OK);
}

static gy_body_state body_state(fixture *fx, gy_body_id id)
{
    gy_body_state s;
    memset(&s, 0, sizeof s);
    assert_result(fx->be->body_get_state(fx->w, id, &s), GY_OK);
    return s;
}

static gy_vec3 body_position(fixture *fx, gy_body_id id)
{
    return body_state(fx, id).pose.position;
}

static gy_backend_counters counters(fixture *fx)
{
    gy_backend_counters c;
    memset(&c, 0xff, sizeof c);
    fx->be->get_counters(fx->w, &c);
    return c;
}

static uint32_t contacts(fixture *fx, const gy_contact **out)
{
    *out = NULL;
    uint32_t n = fx->be->contacts(fx->w, out);
    if (n > 0)
        assert_non_null(*out);
    return n;
}

/* The contact between two bodies after the last step, in either order, or NULL. */
static const gy_contact *find_contact(fixture *fx, gy_body_id a, gy_body_id b)
{
    const gy_contact *c;
    uint32_t n = contacts(fx, &c);
    for (uint32_t i = 0; i < n; i++)
        if ((c[i].body_a.bits == a.bits && c[i].body_b.bits == b.bits) ||
            (c[i].body_a.bits == b.bits && c[i].body_b.bits == a.bits))
            return &c[i];
    return NULL;
}

static gy_query_filter default_filter(void)
{
    return gy_default_query_filter();
}

/* ---- asserts -----------------------------------------------------------------------------------
 */

#define assert_vec_near(actual, expected, tol)                                                     \
    assert_vec_near_((actual), (expected), (tol), #actual, __FILE__, __LINE__)
static void assert_vec_near_(gy_vec3 a, gy_vec3 e, double tol, const char *expr, const char *file,
                             int line)
{
    char name[200];
    snprintf(name, sizeof name, "(%s).x", expr);
    gy_test_assert_near_(a.x, e.x, tol, name, file, line);
    snprintf(name, sizeof name, "(%s).y", expr);
    gy_test_assert_near_(a.y, e.y, tol, name, file, line);
    snprintf(name, sizeof name, "(%s).z", expr);
    gy_test_assert_near_(a.z, e.z, tol, name, file, line);
}

#define expect_counters_equal(before, after, what)                                                 \
    expect_counters_equal_((before), (after), (what), __FILE__, __LINE__)
static void expect_counters_equal_(gy_backend_counters b, gy_backend_counters a, const char *what,
                                   const char *file, int line)
{
    const uint32_t *pb = &b.bodies[0];
    const uint32_t *pa = &a.bodies[0];
    static const char *const names[] = {
        "bodies[static]", "bodies[kinematic]", "bodies[dynamic]", "awake_bodies", "colliders",
        "sensors",        "contact_pairs",     "joints",          "resources",    "live_objects"};
    _Static_assert(sizeof(gy_backend_counters) == sizeof names / sizeof names[0] * 4,
                   "counter names out of date");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (pb[i] != pa[i]) {
            print_error("%s: counter %s changed from %u to %u\n", what, names[i], pb[i], pa[i]);
            _fail(file, line);
        }
    }
}

#define expect_empty(fx) expect_empty_((fx), __FILE__, __LINE__)
static void expect_empty_(fixture *fx, const char *file, int line)
{
    gy_backend_counters zero;
    memset(&zero, 0, sizeof zero);
    gy_backend_counters c = counters(fx);
    zero.contact_pairs = c.contact_pairs; /* pairs of the last step, not live objects */
    expect_counters_equal_(zero, c, "after releasing everything", file, line);
}

static bool hits_contain(const gy_hit *h, uint32_t n, gy_body_id b)
{
    for (uint32_t i = 0; i < n; i++)
        if (h[i].body.bits == b.bits)
            return true;
    return false;
}

/* The hits name exactly the bodies in `want` (m of them), each once. */
#define expect_hit_bodies(hits, n, want, m, what)                                                  \
    expect_hit_bodies_((hits), (n), (want), (m), (what), __FILE__, __LINE__)
static void expect_hit_bodies_(const gy_hit *hits, uint32_t n, const gy_body_id *want, uint32_t m,
                               const char *what, const char *file, int line)
{
    if (n != m) {
        print_error("%s: %u hits, expected %u\n", what, n, m);
        _fail(file, line);
    }
    for (uint32_t i = 0; i < m; i++) {
        uint32_t seen = 0;
        for (uint32_t j = 0; j < n; j++)
            seen += hits[j].body.bits == want[i].bits;
        if (seen != 1) {
            print_error("%s: expected body #%u (0x%llx) once, found %u times\n", what, i,
                        (unsigned long long)want[i].bits, seen);
            _fail(file, line);
        }
    }
}

/* Angle of a unit quaternion's rotation, 0..π. */
static double quat_angle(gy_quat q)
{
    double w = fmin(1.0, fabs(q.w));
    return 2.0 * acos(w);
}

/* Signed rotation about one axis of a quaternion known to rotate about that axis only. */
static double quat_twist(gy_quat q, gy_vec3 axis)
{
    double s = q.x * axis.x + q.y * axis.y + q.z * axis.z;
    double a = 2.0 * atan2(s, q.w);
    if (a > GY_PI)
        a -= 2.0 * GY_PI;
    if (a < -GY_PI)
        a += 2.0 * GY_PI;
    return a;
}

/* ---- motion ------------------------------------------------------------------------------------
 */

static void test_contract_free_fall_matches_analytic(void **state)
{
    fixture *fx = *state;
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(1, 100, -2));
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    gy_collider_def cd = sphere_def(0.5);
    gy_body_id b = create_body(fx, &bd, &cd, 1, NULL);

    step_n(fx, 60);
    gy_body_state s = body_state(fx, b);
    const double t = 60 * DT;
    /* y0 − g t²/2 after 1 s within 2 cm; v = −g t within 1 cm/s; no sideways drift. */
    assert_near(s.pose.position.y, 100.0 - 0.5 * GRAVITY * t * t, 0.02);
    assert_near(s.linear_velocity.y, -GRAVITY * t, 0.01);
    assert_near(s.pose.position.x, 1.0, 1e-9);
    assert_near(s.pose.position.z, -2.0, 1e-9);
    assert_true(s.awake);

    release_body(fx, b);
    expect_empty(fx);
}

/* A fresh world without gravity stepping in `substeps`, holding one undamped 2 kg ball of radius
 * 0.5 m at the origin (I = 2/5 m r² = 0.2 kg·m²), which it returns. */
static gy_body_id free_ball(fixture *fx, uint32_t substeps)
{
    close_world(fx);
    gy_backend_world_def wd = fixture_world_def(fx);
    wd.gravity = gy_v3(0, 0, 0);
    wd.substeps = substeps;
    assert_int_equal(open_world(fx, &wd), 0);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0, 0));
    bd.mass = 2.0;
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    gy_collider_def cd = sphere_def(0.5);
    return create_body(fx, &bd, &cd, 1, NULL);
}

static void test_contract_force_acts_for_the_whole_step_at_any_substep_count(void **state)
{
    fixture *fx = *state;
    const uint32_t subs[] = {1, 2, 4};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        gy_body_id b = free_ball(fx, subs[i]);
        /* One step of 1/30 s in `subs` substeps (a host stepping at 30 Hz). */
        const double dt = 2.0 * DT, f = 6.0, torque = 0.5;
        assert_result(fx->be->body_add_force(fx->w, b, gy_v3(f, 0, 0)), GY_OK);
        assert_result(fx->be->body_add_torque(fx->w, b, gy_v3(0, torque, 0)), GY_OK);
        assert_result(fx->be->step(fx->w, dt), GY_OK);
        gy_body_state s = body_state(fx, b);
        /* Δv = F dt / m and Δω = τ dt / I (I = 2/5 m r² = 0.2 kg·m²) whatever the substeps:
         * a constant force over one step has no discretisation error, so 1e-9. */
        assert_near(s.linear_velocity.x, f * dt / 2.0, 1e-9);
        assert_near(s.angular_velocity.y, torque * dt / 0.2, 1e-9);
        /* Forces last one step: the next step adds nothing. */
        assert_result(fx->be->step(fx->w, dt), GY_OK);
        assert_near(body_state(fx, b).linear_velocity.x, f * dt / 2.0, 1e-9);
        release_body(fx, b);
        expect_empty(fx);
    }
}

/* One rule for what the host adds (the front end's): a force added to a sleeper wakes it and acts
 * for exactly the next step, and one dropped by putting the body to sleep never acts. */
static void test_contract_force_on_a_sleeper_wakes_it_and_acts_for_one_step(void **state)
{
    fixture *fx = *state;
    gy_body_id b = free_ball(fx, 2);
    const double f = 6.0, torque = 0.5;

    /* Added, then dropped with the body put to sleep: woken again, it gets nothing. */
    assert_result(fx->be->body_add_force(fx->w, b, gy_v3(f, 0, 0)), GY_OK);
    assert_result(fx->be->body_add_torque(fx->w, b, gy_v3(0, torque, 0)), GY_OK);
    assert_result(fx->be->body_set_awake(fx->w, b, false), GY_OK);
    assert_result(fx->be->step(fx->w, DT), GY_OK);
    assert_result(fx->be->body_set_awake(fx->w, b, true), GY_OK);
    assert_result(fx->be->step(fx->w, DT), GY_OK);
    gy_body_state s = body_state(fx, b);
    assert_true(s.linear_velocity.x == 0.0 && s.angular_velocity.y == 0.0);

    /* Added to a sleeper: it wakes and moves by F·dt/m and τ·dt/I (I = 0.2 kg·m²), once. */
    assert_result(fx->be->body_set_awake(fx->w, b, false), GY_OK);
    assert_result(fx->be->body_add_force(fx->w, b, gy_v3(f, 0, 0)), GY_OK);
    assert_result(fx->be->body_add_torque(fx->w, b, gy_v3(0, torque, 0)), GY_OK);
    assert_result(fx->be->step(fx->w, DT), GY_OK);
    s = body_state(fx, b);
    assert_true(s.awake);
    assert_near(s.linear_velocity.x, f * DT / 2.0, 1e-9);
    assert_near(s.angular_velocity.y, torque * DT / 0.2, 1e-9);
    for (int i = 0; i < 3; i++)
        assert_result(fx->be->step(fx->w, DT), GY_OK);
    s = body_state(fx, b);
    assert_near(s.linear_velocity.x, f * DT / 2.0, 1e-9);
    assert_near(s.angular_velocity.y, torque * DT / 0.2, 1e-9);
    release_body(fx, b);
    expect_empty(fx);
}

static void test_contract_gravity_and_gravity_factor_apply(void **state)
{
    fixture *fx = *state;
    gy_collider_def cd = sphere_def(0.5);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 50, 0));
    bd.linear_damping = 0.0;
    gy_body_id normal = create_body(fx, &bd, &cd, 1, NULL);
    bd.pose.position.x = 5;
    bd.gravity_factor = 2.0;
    gy_body_id doubled = create_body(fx, &bd, &cd, 1, NULL);
    bd.pose.position.x = 10;
    bd.gravity_factor = 0.0;
    gy_body_id floating = create_body(fx, &bd, &cd, 1, NULL);

    step_n(fx, 60);
    /* Velocity after 1 s is −g·factor·t (exact for any first-order integrator): 1 mm/s. */
    assert_near(body_state(fx, normal).linear_velocity.y, -GRAVITY, 1e-3);
    assert_near(body_state(fx, doubled).linear_velocity.y, -2.0 * GRAVITY, 2e-3);
    assert_near(body_state(fx, floating).linear_velocity.y, 0.0, 1e-9);
    assert_near(body_position(fx, floating).y, 50.0, 1e-9);

    /* New gravity applies from the next step on: 1 s of 3 m/s² along x gives 3 m/s. */
    assert_result(fx->be->set_gravity(fx->w, gy_v3(3, 0, 0)), GY_OK);
    assert_result(fx->be->body_set_linear_velocity(fx->w, normal, gy_v3(0, 0, 0)), GY_OK);
    step_n(fx, 60);
    gy_body_state s = body_state(fx, normal);
    assert_vec_near(s.linear_velocity, gy_v3(3, 0, 0), 1e-3);

    release_body(fx, normal);
    release_body(fx, doubled);
    release_body(fx, floating);
    expect_empty(fx);
}

static void test_contract_box_comes_to_rest_and_sleeps(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 1.5, 0));
    gy_collider_def cd = box_def(gy_v3(1, 1, 1));
    gy_body_id box = create_body(fx, &bd, &cd, 1, NULL);

    int slept_at = -1;
    for (int i = 1; i <= 180; i++) {
        step_n(fx, 1);
        if (!body_state(fx, box).awake && slept_at < 0)
            slept_at = i;
    }
    /* Asleep within 3 s (inf when it never slept), resting on the plane within 2 cm. */
    double sleep_time = slept_at < 0 ? INFINITY : slept_at * DT;
    assert_between(sleep_time, 0.0, 3.0);
    gy_body_state s = body_state(fx, box);
    assert_false(s.awake);
    assert_near(s.pose.position.y, 0.5, 0.02);
    assert_int_equal(counters(fx).awake_bodies, 0);

    /* Any write to the body's motion wakes it at once. */
    assert_result(fx->be->body_add_impulse(fx->w, box, gy_v3(0, 1, 0)), GY_OK);
    assert_true(body_state(fx, box).awake);
    assert_int_equal(counters(fx).awake_bodies, 1);

    release_body(fx, box);
    release_body(fx, ground);
    expect_empty(fx);
}

/* A body sleeps by how fast its points move: a 0.1 m ball rolling on a floor at 3 cm/s (0.3 rad/s)
 * falls asleep, as a box sliding that slowly would. */
static void test_contract_small_ball_rolling_slowly_falls_asleep(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx);
    const double r = 0.1, v = 0.03;
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, r, 0));
    bd.linear_damping = bd.angular_damping = 0.0;
    bd.linear_velocity = gy_v3(v, 0, 0);
    bd.angular_velocity = gy_v3(0, 0, -v / r); /* rolling without slipping along +x */
    gy_collider_def cd = sphere_def(r);
    gy_body_id ball = create_body(fx, &bd, &cd, 1, NULL);
    int slept_at = -1;
    for (int i = 1; i <= 120 && slept_at < 0; i++) {
        step_n(fx, 1);
        if (!body_state(fx, ball).awake)
            slept_at = i;
    }
    /* Asleep within 2 s (the rule needs 0.4 s of rest), on the floor, having rolled on its way. */
    double sleep_time = slept_at < 0 ? INFINITY : slept_at * DT;
    assert_between(sleep_time, 0.0, 2.0);
    gy_body_state s = body_state(fx, ball);
    assert_near(s.pose.position.y, r, 0.01);
    assert_true(s.pose.position.x > 0.5 * v * sleep_time);
    release_body(fx, ball);
    release_body(fx, ground);
    expect_empty(fx);
}

/* A 4 m beam turning at 0.1 rad/s about the vertical, lying on a frictionless floor, sweeps its
 * tips at 0.2 m/s: it stays awake and keeps turning, though a small body turning that slowly
 * would sleep. On the floor rather than in free flight, since ODE never puts a body to sleep in
 * mid-air. */
static void test_contract_long_beam_turning_slowly_stays_awake(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground_with_friction(fx, 0.0);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0.05, 0));
    bd.linear_damping = bd.angular_damping = 0.0;
    bd.angular_velocity = gy_v3(0, 0.1, 0);
    gy_collider_def cd = box_def(gy_v3(4, 0.1, 0.1));
    cd.material.friction = 0.0;
    gy_body_id beam = create_body(fx, &bd, &cd, 1, NULL);
    for (int i = 1; i <= 180; i++) {
        step_n(fx, 1);
        assert_true(body_state(fx, beam).awake);
    }
    gy_body_state s = body_state(fx, beam);
    assert_near(s.angular_velocity.y, 0.1, 1e-3);
    assert_near(quat_angle(s.pose.rotation), 0.1 * 180 * DT, 1e-3);
    assert_near(s.pose.position.y, 0.05, 0.01);
    release_body(fx, beam);
    release_body(fx, ground);
    expect_empty(fx);
}

/* ---- live changes to a body --------------------------------------------------------------------
 * Sleep, mass, material and filter change in place: no body is recreated, so touching pairs whose
 * verdict did not change keep touching. */

static void test_contract_set_awake_sleeps_in_place_and_wakes_into_free_fall(void **state)
{
    fixture *fx = *state;
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 20, 0));
    bd.linear_damping = 0.0;
    gy_collider_def cd = sphere_def(0.5);
    gy_body_id b = create_body(fx, &bd, &cd, 1, NULL);
    step_n(fx, 30);
    assert_true(body_state(fx, b).awake);

    assert_result(fx->be->body_set_awake(fx->w, b, false), GY_OK);
    gy_body_state s = body_state(fx, b);
    assert_false(s.awake);
    assert_vec_near(s.linear_velocity, gy_v3(0, 0, 0), 0.0);
    step_n(fx, 60);
    /* Asleep in mid-air: exactly where it was put to sleep. */
    gy_body_state later = body_state(fx, b);
    assert_false(later.awake);
    assert_vec_near(later.pose.position, s.pose.position, 0.0);
    assert_int_equal(counters(fx).awake_bodies, 0);

    assert_result(fx->be->body_set_awake(fx->w, b, true), GY_OK);
    assert_true(body_state(fx, b).awake);
    step_n(fx, 60);
    /* Woken at rest: it falls g t²/2 in 1 s, within 2 cm (the free-fall tolerance). */
    const double t = 60 * DT;
    assert_near(body_position(fx, b).y, s.pose.position.y - 0.5 * GRAVITY * t * t, 0.02);

    /* Only dynamic bodies sleep. */
    gy_body_id ground = create_ground(fx);
    assert_result(fx->be->body_set_awake(fx->w, ground, false), GY_ERR_INVALID_MOTION);
    assert_result(fx->be->body_set_awake(fx->w, ground, true), GY_ERR_INVALID_MOTION);
    release_body(fx, ground);
    release_body(fx, b);
    assert_result(fx->be->body_set_awake(fx->w, b, true), GY_ERR_STALE_HANDLE);
    expect_empty(fx);
}

/* A body made with allow_sleeping off and put to sleep by the host is, once woken, again a body
 * that never sleeps: resting on the ground for far longer than the sleep time (and longer than
 * any vendor's own deactivation clock), it stays awake. */
static void test_contract_woken_body_that_may_not_sleep_stays_awake_at_rest(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0.5, 0));
    bd.allow_sleeping = false;
    gy_collider_def cd = box_def(gy_v3(1, 1, 1));
    gy_body_id b = create_body(fx, &bd, &cd, 1, NULL);
    step_n(fx, 60);
    assert_true(body_state(fx, b).awake);

    for (int round = 0; round < 2; round++) {
        assert_result(fx->be->body_set_awake(fx->w, b, false), GY_OK);
        step_n(fx, 10);
        assert_false(body_state(fx, b).awake); /* the host's word holds while nothing wakes it */
        assert_result(fx->be->body_set_awake(fx->w, b, true), GY_OK);
        /* Five seconds at rest, checked at every step: never asleep again. */
        for (int i = 0; i < 300; i++) {
            step_n(fx, 1);
            assert_true(body_state(fx, b).awake);
        }
    }
    assert_int_equal(counters(fx).awake_bodies, 1);
    release_body(fx, b);
    release_body(fx, ground);
    expect_empty(fx);
}

/* Every write to a sleeping body wakes it at once, whatever the driver: the front end wakes it
 * after the driver's setter. */
static void test_contract_every_write_wakes_a_sleeping_body(void **state)
{
    fixture *fx = *state;
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 20, 0));
    gy_collider_def cd = sphere_def(0.5);
    gy_collider_id cid = {0};
    gy_body_id b = create_body(fx, &bd, &cd, 1, &cid);
    const gy_vec3 small = gy_v3(0.0, 0.1, 0.0);
    for (int write = 0; write < 9; write++) {
        assert_result(fx->be->body_set_awake(fx->w, b, false), GY_OK);
        assert_false(body_state(fx, b).awake);
        gy_result r = GY_ERR_MISUSE;
        switch (write) {
        case 0:
            r = fx->be->body_set_linear_velocity(fx->w, b, small);
            break;
        case 1:
            r = fx->be->body_set_angular_velocity(fx->w, b, small);
            break;
        case 2:
            r = fx->be->body_add_force(fx->w, b, small);
            break;
        case 3:
            r = fx->be->body_add_torque(fx->w, b, small);
            break;
        case 4:
            r = fx->be->body_add_impulse(fx->w, b, small);
            break;
        case 5:
            r = fx->be->body_add_impulse_at(fx->w, b, small, gy_v3(0.5, 20.0, 0.0));
            break;
        case 6:
            r = fx->be->body_set_mass(fx->w, b, 2.0);
            break;
        case 7:
            r = fx->be->collider_set_filter(fx->w, cid, 1u, ~0u);
            break;
        default:
            r = fx->be->body_set_pose(fx->w, b, body_state(fx, b).pose);
            break;
        }
        assert_result(r, GY_OK);
        assert_true(body_state(fx, b).awake);
    }
    release_body(fx, b);
    expect_empty(fx);
}

static void test_contract_sleeper_struck_keeps_the_momentum_it_takes(void **state)
{
    fixture *fx = *state;
    assert_result(fx->be->set_gravity(fx->w, gy_v3(0, 0, 0)), GY_OK);
    /* Two equal balls, restitution 1, in zero gravity: one put to sleep, the other sent into
     * it at 1 m/s. An elastic head-on hit hands the whole velocity over. */
    gy_collider_def cd = sphere_def(0.25);
    cd.material.restitution = 1.0;
    gy_body_def sd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0, 0));
    sd.linear_damping = 0.0;
    sd.angular_damping = 0.0;
    gy_body_id sleeper = create_body(fx, &sd, &cd, 1, NULL);
    assert_result(fx->be->body_set_awake(fx->w, sleeper, false), GY_OK);
    gy_body_def md = body_at(GY_MOTION_DYNAMIC, gy_v3(-1, 0, 0));
    md.linear_damping = 0.0;
    md.angular_damping = 0.0;
    md.linear_velocity = gy_v3(1, 0, 0);
    gy_body_id mover = create_body(fx, &md, &cd, 1, NULL);
    step_n(fx, 60);
    /* Struck after 0.5 s; from 0.5 s after the hit, for 2 s, the struck ball must keep moving at 1
     * m/s (within 2 %: a hit found up to a step late) and stay awake: a body moving that fast is
     * not at rest, whatever it was before. Its momentum and the striker's add up to the 1 kg·m/s
     * given. */
    for (int i = 0; i < 120; i++) {
        step_n(fx, 1);
        gy_body_state s = body_state(fx, sleeper);
        if (!s.awake || fabs(s.linear_velocity.x - 1.0) > 0.02)
            fail_msg("step %d after the hit: struck ball %s at %.4f m/s, expected awake at 1 m/s",
                     i + 1, s.awake ? "awake" : "asleep", s.linear_velocity.x);
    }
    assert_near(body_state(fx, mover).linear_velocity.x, 0.0, 0.02);
    release_body(fx, mover);
    release_body(fx, sleeper);
    expect_empty(fx);
}

static void test_contract_set_gravity_wakes_sleeper_which_moves_with_new_g(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0.5, 0));
    bd.linear_damping = 0.0;
    gy_collider_def cd = box_def(gy_v3(1, 1, 1));
    gy_body_id box = create_body(fx, &bd, &cd, 1, NULL);
    for (int i = 0; i < 240 && body_state(fx, box).awake; i++)
        step_n(fx, 1);
    assert_false(body_state(fx, box).awake);
    double y0 = body_position(fx, box).y;

    /* Gravity turned upwards: the sleeper wakes and rises y0 + a t²/2 (a = 4 m/s²). */
    assert_result(fx->be->set_gravity(fx->w, gy_v3(0, 4, 0)), GY_OK);
    assert_true(body_state(fx, box).awake);
    step_n(fx, 60);
    const double t = 60 * DT;
    /* 1 s of a = 4 m/s² from rest: 2 m within 2 cm (the free-fall tolerance). */
    assert_near(body_position(fx, box).y, y0 + 0.5 * 4.0 * t * t, 0.02);

    release_body(fx, box);
    release_body(fx, ground);
    expect_empty(fx);
}

static void test_contract_set_mass_scales_impulse_response(void **state)
{
    fixture *fx = *state;
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 5, 0));
    bd.gravity_factor = 0.0;
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    gy_collider_def cd = box_def(gy_v3(1, 1, 1)); /* 1000 kg */
    gy_body_id light = create_body(fx, &bd, &cd, 1, NULL);
    bd.pose.position.x = 5;
    gy_body_id heavy = create_body(fx, &bd, &cd, 1, NULL);

    assert_result(fx->be->body_set_mass(fx->w, light, 2.0), GY_OK);
    assert_result(fx->be->body_set_mass(fx->w, heavy, 8.0), GY_OK);
    /* A central impulse J gives J / m exactly; an off-centre one a spin that scales as 1 / m too
     * (the inertia scales with the mass). */
    assert_result(fx->be->body_add_impulse(fx->w, light, gy_v3(4, 0, 0)), GY_OK);
    assert_result(fx->be->body_add_impulse(fx->w, heavy, gy_v3(4, 0, 0)), GY_OK);
    assert_near(body_state(fx, light).linear_velocity.x, 2.0, 1e-9);
    assert_near(body_state(fx, heavy).linear_velocity.x, 0.5, 1e-9);
    gy_vec3 top_light = gy_v3_add(body_position(fx, light), gy_v3(0, 0.5, 0));
    gy_vec3 top_heavy = gy_v3_add(body_position(fx, heavy), gy_v3(0, 0.5, 0));
    assert_result(fx->be->body_add_impulse_at(fx->w, light, gy_v3(0, 0, 1), top_light), GY_OK);
    assert_result(fx->be->body_add_impulse_at(fx->w, heavy, gy_v3(0, 0, 1), top_heavy), GY_OK);
    /* Unit cube: I = m/6, so ω = r J / I = 0.5 · 6 / m about x: 1.5 and 0.375 rad/s. */
    assert_near(gy_v3_len(body_state(fx, light).angular_velocity), 1.5, 1e-6);
    assert_near(gy_v3_len(body_state(fx, heavy).angular_velocity), 0.375, 1e-6);

    assert_result(fx->be->body_set_mass(fx->w, light, 0.0), GY_ERR_INVALID_ARGUMENT);
    assert_result(fx->be->body_set_mass(fx->w, light, NAN), GY_ERR_NON_FINITE);
    gy_body_id ground = create_ground(fx);
    assert_result(fx->be->body_set_mass(fx->w, ground, 3.0), GY_ERR_INVALID_MOTION);
    /* Refused calls changed nothing. */
    assert_result(fx->be->body_add_impulse(fx->w, light, gy_v3(-4, 0, 0)), GY_OK);
    assert_near(body_state(fx, light).linear_velocity.x, 0.0, 1e-9);

    release_body(fx, ground);
    release_body(fx, light);
    release_body(fx, heavy);
    expect_empty(fx);
}

static void test_contract_set_material_changes_the_bounce(void **state)
{
    fixture *fx = *state;
    gy_body_def gd = body_at(GY_MOTION_STATIC, gy_v3(0, 0, 0));
    gy_collider_def gc = plane_def();
    gy_body_id g = create_body(fx, &gd, &gc, 1, NULL);
    const double r = 0.25, h = 2.0;
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, h + r, 0));
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    bd.allow_sleeping = false;
    gy_collider_def bc = sphere_def(r); /* restitution 0 */
    gy_collider_id ball_collider;
    gy_body_id b = create_body(fx, &bd, &bc, 1, &ball_collider);

    gy_material bouncy = gy_default_material();
    bouncy.restitution = 0.8; /* max combine: the pair bounces with 0.8 */
    assert_result(fx->be->collider_set_material(fx->w, ball_collider, &bouncy), GY_OK);
    gy_material bad = bouncy;
    bad.friction = -1.0;
    assert_result(fx->be->collider_set_material(fx->w, ball_collider, &bad),
                  GY_ERR_INVALID_ARGUMENT);
    bad.friction = NAN;
    assert_result(fx->be->collider_set_material(fx->w, ball_collider, &bad), GY_ERR_NON_FINITE);
    assert_result(fx->be->collider_set_material(fx->w, ball_collider, NULL),
                  GY_ERR_INVALID_ARGUMENT);

    bool rising = false;
    double apex = -INFINITY, v_in = 0.0;
    for (int i = 0; i < 300; i++) {
        step_n(fx, 1);
        gy_body_state s = body_state(fx, b);
        if (!rising) {
            v_in = fmin(v_in, s.linear_velocity.y);
            rising = v_in < -1.0 && s.linear_velocity.y > 0.0;
        }
        if (rising) {
            apex = fmax(apex, s.pose.position.y);
            if (s.linear_velocity.y <= 0.0)
                break;
        }
    }
    /* Rebound to e² h = 0.64 h, ± 15% (the restitution test's tolerance). */
    assert_near(apex - r, 0.64 * h, 0.15 * 0.64 * h);

    release_body(fx, b);
    release_body(fx, g);
    assert_result(fx->be->collider_set_material(fx->w, ball_collider, &bouncy),
                  GY_ERR_STALE_HANDLE);
    expect_empty(fx);
}

static void test_contract_set_filter_stops_and_starts_collision_in_place(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx); /* category 1 */
    gy_collider_def cd = box_def(gy_v3(1, 1, 1));
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0.5, 0));
    gy_collider_id base_c, top_c;
    gy_body_id base = create_body(fx, &bd, &cd, 1, &base_c);
    bd.pose.position.y = 1.5;
    gy_body_id top = create_body(fx, &bd, &cd, 1, &top_c);
    for (int i = 0; i < 300 && body_state(fx, top).awake; i++)
        step_n(fx, 1);
    assert_false(body_state(fx, top).awake);
    assert_non_null(find_contact(fx, ground, base));
    assert_non_null(find_contact(fx, base, top));

    /* The base changes category (every mask still accepts it: the same verdicts): both of its
     * pairs stay in every step's report, and it stays where it rests. */
    assert_result(fx->be->collider_set_filter(fx->w, base_c, 4u | 8u, ~0u), GY_OK);
    for (int i = 0; i < 30; i++) {
        step_n(fx, 1);
        assert_non_null(find_contact(fx, ground, base));
        assert_non_null(find_contact(fx, base, top));
    }
    assert_near(body_position(fx, base).y, 0.5, 0.02);

    /* The top box stops accepting the base: it was asleep on it, and now falls through it. */
    assert_result(fx->be->collider_set_filter(fx->w, top_c, 2u, ~(4u | 8u)), GY_OK);
    step_n(fx, 1);
    assert_null(find_contact(fx, base, top));
    step_n(fx, 20);
    assert_true(body_position(fx, top).y < 1.5 - 0.1);
    assert_null(find_contact(fx, base, top));
    /* It still accepts the ground (category 1): it lands there, inside the base. */
    step_n(fx, 60);
    assert_non_null(find_contact(fx, ground, top));

    /* Back to the default filter: the two overlap again, so the pair is found and pushed apart. */
    assert_result(fx->be->collider_set_filter(fx->w, top_c, 1u, ~0u), GY_OK);
    step_n(fx, 1);
    assert_non_null(find_contact(fx, base, top));

    assert_result(fx->be->collider_set_filter(fx->w, (gy_collider_id){0}, 1u, 1u),
                  GY_ERR_STALE_HANDLE);
    release_body(fx, top);
    release_body(fx, base);
    release_body(fx, ground);
    expect_empty(fx);
}

static void test_contract_collider_policy_is_read_in_world_space(void **state)
{
    fixture *fx = *state;
    /* A kinematic conveyor turned 90° about Y, one-way toward local +x, response off. */
    gy_collider_def cd = box_def(gy_v3(2, 0.2, 2));
    cd.surface_velocity = gy_v3(1.5, 0, 0);
    cd.one_way = true;
    cd.one_way_normal = gy_v3(2, 0, 0); /* normalised by the adapter */
    cd.contact_response = false;
    gy_body_def bd = body_at(GY_MOTION_KINEMATIC, gy_v3(0, 1, 0));
    bd.pose.rotation = gy_quat_axis_angle(gy_v3(0, 1, 0), 0.5 * GY_PI);
    gy_collider_id c;
    gy_body_id b = create_body(fx, &bd, &cd, 1, &c);
    gy_collider_policy pol;
    assert_result(fx->be->collider_get_policy(fx->w, c, &pol), GY_OK);
    assert_false(pol.is_sensor);
    assert_false(pol.contact_response);
    assert_true(pol.one_way);
    /* Local +x turned 90° about +Y is world -z. */
    assert_near(pol.one_way_normal.x, 0, 1e-12);
    assert_near(pol.one_way_normal.z, -1, 1e-12);
    assert_near(pol.surface_velocity.x, 0, 1e-12);
    assert_near(pol.surface_velocity.y, 0, 1e-12);
    assert_near(pol.surface_velocity.z, -1.5, 1e-12);
    /* It follows the body: a quarter turn back, and the directions are local again. */
    gy_pose back = {gy_v3(0, 1, 0), gy_quat_identity()};
    assert_result(fx->be->body_set_pose(fx->w, b, back), GY_OK);
    assert_result(fx->be->collider_get_policy(fx->w, c, &pol), GY_OK);
    assert_near(pol.one_way_normal.x, 1, 1e-12);
    assert_near(pol.surface_velocity.x, 1.5, 1e-12);
    /* A sensor says so. */
    gy_collider_def sd = box_def(gy_v3(1, 1, 1));
    sd.is_sensor = true;
    gy_body_def sb = body_at(GY_MOTION_STATIC, gy_v3(5, 1, 0));
    gy_collider_id sc;
    gy_body_id s = create_body(fx, &sb, &sd, 1, &sc);
    assert_result(fx->be->collider_get_policy(fx->w, sc, &pol), GY_OK);
    assert_true(pol.is_sensor);
    assert_false(pol.one_way);
    assert_result(fx->be->collider_get_policy(fx->w, sc, NULL), GY_ERR_INVALID_ARGUMENT);
    assert_result(fx->be->collider_get_policy(NULL, sc, &pol), GY_ERR_INVALID_ARGUMENT);
    release_body(fx, s);
    release_body(fx, b);
    assert_result(fx->be->collider_get_policy(fx->w, c, &pol), GY_ERR_STALE_HANDLE);
    assert_result(fx->be->collider_get_policy(fx->w, (gy_collider_id){0}, &pol),
                  GY_ERR_STALE_HANDLE);
    expect_empty(fx);
}

/* ---- statics and sleepers ----------------------------------------------------------------------
 * Neither side of a pair between a sleeper and a static is awake, so middleware does not collide
 * it by itself: geometry streamed in (or moved, or removed) around a resting body must still reach
 * it. */

static gy_body_id create_one(fixture *fx, gy_motion_type type, gy_vec3 at, gy_collider_def cd)
{
    gy_body_def bd = body_at(type, at);
    return create_body(fx, &bd, &cd, 1, NULL);
}

/* A 1 m box resting on a support whose top is at `top`, stepped until it sleeps, then asleep for
 * a while longer so its pairs are no longer collided. */
static gy_body_id sleeping_box(fixture *fx, double top)
{
    gy_body_id b =
        create_one(fx, GY_MOTION_DYNAMIC, gy_v3(0, top + 0.5, 0), box_def(gy_v3(1, 1, 1)));
    for (int i = 0; i < 240 && body_state(fx, b).awake; i++)
        step_n(fx, 1);
    assert_false(body_state(fx, b).awake);
    step_n(fx, 10);
    assert_false(body_state(fx, b).awake);
    return b;
}

/* Waking a body starts the sleep rule over, even one still awake: a box resting on the ground
 * for most of the sleep time (0.4 s at rest, after a full window of samples; docs/middleware.md)
 * and woken then stays awake for a whole sleep time from the wake, rather than sleeping when the
 * rest it had before would have run out. Then it sleeps. */
static void test_contract_waking_a_resting_body_starts_its_sleep_time_over(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx);
    gy_body_id b = create_one(fx, GY_MOTION_DYNAMIC, gy_v3(0, 0.5, 0), box_def(gy_v3(1, 1, 1)));
    step_n(fx, 20); /* at rest for 1/3 s: not yet asleep */
    assert_true(body_state(fx, b).awake);
    assert_result(fx->be->body_set_awake(fx->w, b, true), GY_OK);
    for (int i = 0; i < 22; i++) { /* 22 more steps: 42 from the start, 22 from the wake */
        step_n(fx, 1);
        assert_true(body_state(fx, b).awake);
    }
    for (int i = 0; i < 180 && body_state(fx, b).awake; i++)
        step_n(fx, 1);
    assert_false(body_state(fx, b).awake);
    release_body(fx, b);
    release_body(fx, ground);
    expect_empty(fx);
}

/* A body falling past a wall 5 mm away, which it never touches, falls exactly as one in the
 * open: nothing acted on it, so every correction a free-flying body gets is its too (a vendor may
 * keep points apart up to its breaking distance; one that took no impulse is no contact). */
static void test_contract_fall_past_a_wall_it_never_touches_is_free_fall(void **state)
{
    fixture *fx = *state;
    gy_body_id wall = create_one(fx, GY_MOTION_STATIC, gy_v3(0, 100, 0), box_def(gy_v3(1, 200, 4)));
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(1.005, 100, 0));
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    gy_collider_def cd = sphere_def(0.5);
    gy_body_id near = create_body(fx, &bd, &cd, 1, NULL);
    bd.pose.position = gy_v3(50, 100, 0);
    gy_body_id open = create_body(fx, &bd, &cd, 1, NULL);
    for (int i = 0; i < 60; i++) {
        step_n(fx, 1);
        gy_body_state a = body_state(fx, near), b = body_state(fx, open);
        assert_near(a.pose.position.y, b.pose.position.y, 1e-9);
        assert_near(a.linear_velocity.y, b.linear_velocity.y, 1e-9);
        assert_near(a.pose.position.x, 1.005, 1e-9);
        assert_null(find_contact(fx, near, wall));
    }
    release_body(fx, open);
    release_body(fx, near);
    release_body(fx, wall);
    expect_empty(fx);
}

static void test_contract_static_created_over_sleeper_wakes_it(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx);
    gy_body_id b = sleeping_box(fx, 0.0);

    /* A wall whose left face cuts 10 cm into the box's right side. */
    gy_body_id wall = create_one(fx, GY_MOTION_STATIC, gy_v3(0.9, 1.0, 0), box_def(gy_v3(1, 2, 1)));
    step_n(fx, 1);
    assert_true(body_state(fx, b).awake);
    assert_non_null(find_contact(fx, b, wall));
    step_n(fx, 60);
    /* Pushed clear of the wall: its right face at x <= 0.4, within 1 cm. */
    assert_true(body_position(fx, b).x <= -0.1 + 0.01);

    release_body(fx, wall);
    release_body(fx, b);
    release_body(fx, ground);
    expect_empty(fx);
}

static void test_contract_static_moved_onto_sleeper_wakes_it(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx);
    gy_body_id b = sleeping_box(fx, 0.0);
    gy_body_id wall = create_one(fx, GY_MOTION_STATIC, gy_v3(50, 1.0, 0), box_def(gy_v3(1, 2, 1)));
    step_n(fx, 5);
    assert_false(body_state(fx, b).awake);

    /* Teleported so that its right face cuts 10 cm into the box's left side. */
    assert_result(fx->be->body_set_pose(fx->w, wall, pose_at(gy_v3(-0.9, 1.0, 0))), GY_OK);
    step_n(fx, 1);
    assert_true(body_state(fx, b).awake);
    assert_non_null(find_contact(fx, b, wall));
    step_n(fx, 60);
    assert_true(body_position(fx, b).x >= 0.1 - 0.01);

    release_body(fx, wall);
    release_body(fx, b);
    release_body(fx, ground);
    expect_empty(fx);
}

/* A crate resting on a kinematic lift that stands still falls asleep like one on the ground, and
 * falls once the lift is put elsewhere: a kinematic body joins no island, so the sleeper it
 * leaves is woken by the move itself, not left hanging in the air. */
static void test_contract_kinematic_moved_away_wakes_the_sleeper_it_held(void **state)
{
    fixture *fx = *state;
    gy_body_id lift =
        create_one(fx, GY_MOTION_KINEMATIC, gy_v3(0, 2, 0), box_def(gy_v3(4, 0.2, 4)));
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 2.6, 0));
    gy_collider_def cd = box_def(gy_v3(1, 1, 1));
    gy_body_id crate = create_body(fx, &bd, &cd, 1, NULL);
    step_n(fx, 300);
    double rest = body_position(fx, crate).y;
    assert_near(rest, 2.6, 0.02);
    assert_false(body_state(fx, crate).awake);

    gy_pose away = gy_pose_identity();
    away.position = gy_v3(20, 2, 0);
    assert_result(fx->be->body_set_pose(fx->w, lift, away), GY_OK);
    step_n(fx, 30);
    /* Falling freely from rest for 0.5 s: g t²/2 = 1.23 m, within the free-fall 2 cm. */
    const double t = 30 * DT;
    assert_true(body_state(fx, crate).awake);
    assert_near(body_position(fx, crate).y, rest - 0.5 * GRAVITY * t * t, 0.02);
    release_body(fx, crate);
    release_body(fx, lift);
    expect_empty(fx);
}

/* A kinematic wall moving at a steady velocity (never re-posed, so only its velocity makes it
 * take part in a step) sweeps into a sleeping box: the pair is collided, the box is woken and
 * pushed ahead of the wall. Neither side is awake by the vendor's measure, so a rule that missed
 * the moving kinematic body would leave the box asleep inside the wall. */
/* A kinematic 1 x 2 x 1 m wall centred at (x, 1, 0), moving along +X at `speed`, never re-posed. */
static gy_body_id kinematic_wall(fixture *fx, double x, double speed)
{
    gy_body_def wd = body_at(GY_MOTION_KINEMATIC, gy_v3(x, 1.0, 0));
    wd.linear_velocity = gy_v3(speed, 0, 0);
    gy_collider_def wc = box_def(gy_v3(1, 2, 1));
    return create_body(fx, &wd, &wc, 1, NULL);
}

static void test_contract_kinematic_sweeping_into_a_sleeper_wakes_and_pushes_it(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx);
    gy_body_id b = sleeping_box(fx, 0.0);
    gy_body_id wall = kinematic_wall(fx, -3.0, 1.0);
    /* Its right face reaches the box's left face (x = -0.5) after 2 s. */
    step_n(fx, 110);
    assert_false(body_state(fx, b).awake);
    step_n(fx, 70);
    /* After 3 s the wall's right face is at x = 0.5: the box, pushed, keeps its left face there
     * within 5 cm of overlap. */
    assert_true(body_state(fx, b).awake);
    assert_true(body_position(fx, b).x >= 1.0 - 0.05);
    release_body(fx, wall);
    release_body(fx, b);
    release_body(fx, ground);
    expect_empty(fx);
}

/* A kinematic body moving into a sleeper wakes it in time for the solve of the very step it
 * first touches in: from the first step that reports the pair, the box moves with the wall (at
 * 3 m/s, half a step's travel from it), and the wall is no more than one step's travel (5 cm)
 * into it. */
static void test_contract_kinematic_striking_a_sleeper_moves_it_in_the_step_it_touches(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx);
    gy_body_id b = sleeping_box(fx, 0.0);
    gy_body_id wall = kinematic_wall(fx, -1.0 - 0.5 * 3.0 * DT, 3.0);
    int touched = -1;
    for (int i = 1; i <= 10 && touched < 0; i++) {
        step_n(fx, 1);
        if (find_contact(fx, wall, b) != NULL)
            touched = i;
    }
    assert_true(touched > 0);
    gy_body_state s = body_state(fx, b);
    if (!s.awake || !(s.linear_velocity.x > 1.0))
        fail_msg("step %d, the first to report the pair: the box is %s at %.3f m/s", touched,
                 s.awake ? "awake" : "asleep", s.linear_velocity.x);
    /* The wall's right face against the box's left face. */
    double into = (body_position(fx, wall).x + 0.5) - (s.pose.position.x - 0.5);
    assert_true(into <= 3.0 * DT + 1e-3);
    release_body(fx, wall);
    release_body(fx, b);
    release_body(fx, ground);
    expect_empty(fx);
}

/* Only statics that touch a sleeper wake it: one whose bounding box overlaps the sleeper's but
 * whose shape stays clear, and one far away, leave it asleep. */
static void test_contract_static_near_sleeper_leaves_it_asleep(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx);
    gy_body_id b = sleeping_box(fx, 0.0);

    /* A 0.5 m ball off the box's top corner (0.5, 1, 0.5): 0.61 m from it, boxes overlapping. */
    gy_body_id ball = create_one(fx, GY_MOTION_STATIC, gy_v3(0.85, 1.35, 0.85), sphere_def(0.5));
    gy_body_id far = create_one(fx, GY_MOTION_STATIC, gy_v3(30, 0.5, 0), box_def(gy_v3(1, 1, 1)));
    step_n(fx, 1);
    assert_false(body_state(fx, b).awake);
    assert_null(find_contact(fx, b, ball));
    assert_int_equal(counters(fx).awake_bodies, 0);

    release_body(fx, far);
    release_body(fx, ball);
    release_body(fx, b);
    release_body(fx, ground);
    expect_empty(fx);
}

/* A sensor streamed in around a sleeper reports the overlap at the next step and keeps reporting
 * it; it does not push the sleeper. */
static void test_contract_static_sensor_created_over_sleeper_is_reported(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx);
    gy_body_id b = sleeping_box(fx, 0.0);
    gy_vec3 rest = body_position(fx, b);

    gy_collider_def sc = box_def(gy_v3(4, 4, 4));
    sc.is_sensor = true;
    gy_body_id zone = create_one(fx, GY_MOTION_STATIC, gy_v3(0, 1, 0), sc);
    step_n(fx, 1);
    const gy_contact *ct = find_contact(fx, b, zone);
    assert_non_null(ct);
    assert_true(ct->is_sensor);
    /* Still reported a second later with the box asleep, which has not moved (1 mm). */
    step_n(fx, 60);
    assert_false(body_state(fx, b).awake);
    assert_non_null(find_contact(fx, b, zone));
    assert_near(gy_v3_len(gy_v3_sub(body_position(fx, b), rest)), 0.0, 1e-3);

    release_body(fx, zone);
    release_body(fx, b);
    release_body(fx, ground);
    expect_empty(fx);
}

/* Releasing a static under a sleeper wakes it at once, also when the pair has only been carried
 * over from earlier reports for many steps. */
static void test_contract_static_released_under_sleeper_wakes_it(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx);
    gy_body_id support =
        create_one(fx, GY_MOTION_STATIC, gy_v3(0, 0.5, 0), box_def(gy_v3(2, 1, 2)));
    gy_body_id b = sleeping_box(fx, 1.0);
    step_n(fx, 30);
    assert_false(body_state(fx, b).awake);
    assert_non_null(find_contact(fx, b, support));

    release_body(fx, support);
    assert_true(body_state(fx, b).awake);
    step_n(fx, 30);
    /* Fallen onto the ground: centre at 0.5 m within 2 cm. */
    assert_near(body_position(fx, b).y, 0.5, 0.02);

    release_body(fx, b);
    release_body(fx, ground);
    expect_empty(fx);
}

/* Drops a ball of radius 0.25 from `h` metres (its lowest point above the plane). Returns the
 * height its lowest point reaches after the first bounce, and in *speed_ratio the ratio of its
 * speed just after the bounce to its speed just before. */
static double rebound(fixture *fx, double h, gy_material ball, gy_material ground,
                      double *speed_ratio)
{
    gy_body_def gd = body_at(GY_MOTION_STATIC, gy_v3(0, 0, 0));
    gy_collider_def gc = plane_def();
    gc.material = ground;
    gy_body_id g = create_body(fx, &gd, &gc, 1, NULL);
    const double r = 0.25;
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, h + r, 0));
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    bd.allow_sleeping = false;
    gy_collider_def bc = sphere_def(r);
    bc.material = ball;
    gy_body_id b = create_body(fx, &bd, &bc, 1, NULL);

    bool rising = false;
    double apex = -INFINITY, v_in = 0.0, v_out = 0.0;
    for (int i = 0; i < 300; i++) {
        step_n(fx, 1);
        gy_body_state s = body_state(fx, b);
        if (!rising) {
            if (s.linear_velocity.y < v_in)
                v_in = s.linear_velocity.y;
            rising = v_in < -1.0 && s.linear_velocity.y > 0.0;
            if (rising)
                v_out = s.linear_velocity.y;
        }
        if (rising) {
            apex = fmax(apex, s.pose.position.y);
            if (s.linear_velocity.y <= 0.0)
                break;
        }
    }
    release_body(fx, b);
    release_body(fx, g);
    *speed_ratio = v_in < 0.0 ? v_out / -v_in : 0.0;
    return apex - r;
}

static void test_contract_restitution_rebounds_to_e_squared_height(void **state)
{
    fixture *fx = *state;
    gy_material m = gy_default_material();
    m.restitution = 0.8;
    const double h = 2.0;
    double ratio;
    double height = rebound(fx, h, m, m, &ratio);
    /* e = 0.8 on 0.8 (max combine): rebound to e² h = 0.64 h, ± 15%. */
    assert_near(height, 0.64 * h, 0.15 * 0.64 * h);
    expect_empty(fx);
}

static void test_contract_restitution_combine_uses_higher_precedence_mode(void **state)
{
    fixture *fx = *state;
    gy_material ball = gy_default_material();
    ball.restitution = 0.8;
    ball.restitution_combine = GY_COMBINE_MULTIPLY;
    gy_material ground = gy_default_material();
    ground.restitution = 0.5;
    ground.restitution_combine = GY_COMBINE_AVERAGE;
    double ratio;
    rebound(fx, 2.0, ball, ground, &ratio);
    /* Multiply outranks average: e = 0.8 × 0.5 = 0.4 (average would be 0.65, min 0.5, max 0.8).
     * Measured as the speed ratio across the bounce, ± 10%: a slow bounce's rebound height also
     * depends on how deep the ball already was when its contact began (up to one step of travel).
     */
    assert_near(ratio, 0.4, 0.04);
    expect_empty(fx);
}

/* A restitution-0 ball of radius 0.25 dropped from 2 m: the highest its centre gets once it has
 * touched the ground, above its resting height. */
static double dead_drop_rise(fixture *fx)
{
    gy_body_id g = create_ground(fx);
    const double r = 0.25;
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 2.0 + r, 0));
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    bd.allow_sleeping = false;
    gy_collider_def bc = sphere_def(r);
    gy_body_id b = create_body(fx, &bd, &bc, 1, NULL);
    double top = -INFINITY;
    bool landed = false;
    for (int i = 0; i < 180; i++) {
        step_n(fx, 1);
        gy_vec3 p = body_position(fx, b);
        landed = landed || p.y < r;
        if (landed)
            top = fmax(top, p.y);
    }
    release_body(fx, b);
    release_body(fx, g);
    return top - r;
}

/* A 1 m box created `depth` metres into the ground in gravity `g` (m/s², down), no damping: the
 * highest its centre gets above its resting height (0.5 m) over `steps`, and its velocity at the
 * end. */
static double pushed_out_box(fixture *fx, double depth, double g, int steps, gy_vec3 *velocity)
{
    assert_result(fx->be->set_gravity(fx->w, gy_v3(0, -g, 0)), GY_OK);
    gy_body_id ground = create_ground(fx);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0.5 - depth, 0));
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    bd.allow_sleeping = false;
    gy_collider_def bc = box_def(gy_v3(1, 1, 1));
    gy_body_id b = create_body(fx, &bd, &bc, 1, NULL);
    double top = -INFINITY;
    for (int i = 0; i < steps; i++) {
        step_n(fx, 1);
        top = fmax(top, body_position(fx, b).y);
    }
    *velocity = body_state(fx, b).linear_velocity;
    release_body(fx, b);
    release_body(fx, ground);
    return top - 0.5;
}

/* A box created 5 mm into the ground in zero gravity, within the depth the contact rows correct
 * through the velocities (GY_ADAPTER_SOLVER_DEPTH): the rows push it out at their correction
 * speed (ERP x depth / h, 6 to 12 cm/s), and once its overlap is closed the front end's give-back
 * takes that speed back through its centre of mass on every adapter, in the substep after the
 * overlap closes: it rises at most that substep's travel above rest (2 mm at 12 cm/s), and after
 * 1 s it moves at under 1 cm/s (kept, the correction speed would carry it away at 6 cm/s or more).
 */
static void test_contract_shallow_overlap_is_left_without_its_correction_speed(void **state)
{
    fixture *fx = *state;
    gy_vec3 v;
    double over = pushed_out_box(fx, 0.005, 0.0, 60, &v);
    assert_between(over, -0.001, 0.002);
    assert_between(gy_v3_len(v), 0.0, 0.01);
    expect_empty(fx);
}

static void test_contract_penetration_recovery_adds_no_energy(void **state)
{
    fixture *fx = *state;
    /* Restitution 0 from 2 m: the ball lands at 6.3 m/s, up to 10 cm (one step) into the ground.
     * Undoing that overlap must not throw it back up: its centre rises at most 5 mm above rest
     * (a leftover 0.3 m/s would lift it that far; pushing out at the speed that closes a 7 cm
     * overlap in a step would bounce it 10 cm). */
    double rise = dead_drop_rise(fx);
    assert_between(rise, -INFINITY, 0.005);

    /* A box created 4 cm into the ground comes up to rest without overshooting: at most 2 mm
     * above its resting height over 2 s, and still after that (1 cm/s, a sixth of what gravity
     * adds in one step). */
    gy_vec3 v;
    double over = pushed_out_box(fx, 0.04, GRAVITY, 120, &v);
    assert_between(over, -INFINITY, 0.002);
    assert_between(gy_v3_len(v), 0.0, 0.01);

    /* In zero gravity a box created 1 m into the ground (its bottom half overlapping) is pushed
     * out and then stays where it was left: after 3 s it is out (centre at 0.5 m within 1 cm) and
     * moves at under 1 cm/s, where a correction speed left in the body carries it away for good
     * (at up to the solver's correction cap). */
    double zero_g_over = pushed_out_box(fx, 1.0, 0.0, 180, &v);
    assert_between(zero_g_over, -0.01, 0.01);
    assert_between(gy_v3_len(v), 0.0, 0.01);
    expect_empty(fx);
}

/* A ball of radius 0.25 with restitution `e` on a ground of restitution `e`, dropped from `h`
 * metres (its lowest point); fills the heights its lowest point reaches after each of the first
 * `n` bounces. */
static void bounce_apexes(fixture *fx, double e, double h, double *apex, int n)
{
    gy_body_def gd = body_at(GY_MOTION_STATIC, gy_v3(0, 0, 0));
    gy_collider_def gc = plane_def();
    gc.material.restitution = e;
    gy_body_id g = create_body(fx, &gd, &gc, 1, NULL);
    const double r = 0.25;
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, h + r, 0));
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    bd.allow_sleeping = false;
    gy_collider_def bc = sphere_def(r);
    bc.material.restitution = e;
    gy_body_id b = create_body(fx, &bd, &bc, 1, NULL);
    double vy = 0.0, top = -INFINITY;
    int k = 0;
    for (int i = 0; i < 2000 && k < n; i++) {
        step_n(fx, 1);
        gy_body_state s = body_state(fx, b);
        if (s.linear_velocity.y > 0.0)
            top = fmax(top, s.pose.position.y - r);
        if (vy > 0.0 && s.linear_velocity.y <= 0.0) {
            apex[k++] = top;
            top = -INFINITY;
        }
        vy = s.linear_velocity.y;
    }
    assert_int_equal(k, n);
    release_body(fx, b);
    release_body(fx, g);
}

static void test_contract_restitution_is_exact_across_bounces(void **state)
{
    fixture *fx = *state;
    /* Each bounce keeps e² of the height: a ball meets the ground up to one step (10 cm at
     * 6.3 m/s) before or after the surface, and rebounding with e times the speed it has there
     * gains or loses that much height per bounce. The apex is sampled once a step (g dt²/8 =
     * 0.3 mm) and the bounce step is integrated by semi-implicit Euler (g dt² = 2.7 mm): 1 cm. */
    const double h = 2.0;
    double apex[3];
    bounce_apexes(fx, 1.0, h, apex, 3);
    for (int k = 0; k < 3; k++)
        if (fabs(apex[k] - h) > 0.01)
            fail_msg("e = 1: bounce %d rose to %.4f m, expected %.4f m", k + 1, apex[k], h);
    bounce_apexes(fx, 0.9, h, apex, 3);
    double want = h;
    for (int k = 0; k < 3; k++) {
        want *= 0.81;
        if (fabs(apex[k] - want) > 0.01)
            fail_msg("e = 0.9: bounce %d rose to %.4f m, expected %.4f m", k + 1, apex[k], want);
    }

    /* In zero gravity a ball meeting the ground at 60 m/s (a metre a step) leaves at e·v,
     * whatever gap or depth the contact is found at: within 1 cm/s, what a nearly hard contact
     * gives way at the 8 kN·s this takes (ODE's CFM 1e-9 costs 1.2 mm/s). */
    assert_result(fx->be->set_gravity(fx->w, gy_v3(0, 0, 0)), GY_OK);
    gy_body_def gd = body_at(GY_MOTION_STATIC, gy_v3(0, 0, 0));
    gy_collider_def gc = plane_def();
    gc.material.restitution = 1.0;
    gy_body_id g = create_body(fx, &gd, &gc, 1, NULL);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 5.3, 0));
    bd.linear_velocity = gy_v3(0, -60, 0);
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    gy_collider_def bc = sphere_def(0.25);
    bc.material.restitution = 1.0;
    gy_body_id b = create_body(fx, &bd, &bc, 1, NULL);
    step_n(fx, 12);
    assert_near(body_state(fx, b).linear_velocity.y, 60.0, 0.01);
    release_body(fx, b);
    release_body(fx, g);
    expect_empty(fx);
}

/* A bouncing contact corrects no overlap (its row aims at the rebound alone), so when the ball
 * leaves, the overlap correction takes none of its rebound back: at e = 0.8 and e = 0.5 too each
 * bounce keeps e² of the height, within the 1 cm above. */
static void test_contract_bounce_keeps_its_rebound_when_the_ball_leaves(void **state)
{
    fixture *fx = *state;
    const double es[] = {0.8, 0.5};
    for (size_t i = 0; i < sizeof es / sizeof es[0]; i++) {
        double apex[3], want = 2.0;
        bounce_apexes(fx, es[i], want, apex, 3);
        for (int k = 0; k < 3; k++) {
            want *= es[i] * es[i];
            if (fabs(apex[k] - want) > 0.01)
                fail_msg("e = %.1f: bounce %d rose to %.4f m, expected %.4f m", es[i], k + 1,
                         apex[k], want);
        }
    }
    expect_empty(fx);
}

static const char *const k_mode_names[4] = {"average", "min", "multiply", "max"};

/* gy_combine(0.5, row, 0.8, column), written out by hand: the pair uses the mode of higher
 * precedence, max > multiply > min > average. */
static const double k_combine_table[4][4] = {
    /* average  min   multiply  max */
    {0.65, 0.5, 0.4, 0.8}, /* average */
    {0.5, 0.5, 0.4, 0.8},  /* min */
    {0.4, 0.4, 0.4, 0.8},  /* multiply */
    {0.8, 0.8, 0.8, 0.8},  /* max */
};

static void test_contract_combine_precedence_table(void **state)
{
    (void)state;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            double want = k_combine_table[a][b];
            double got = gy_combine(0.5, (gy_combine_mode)a, 0.8, (gy_combine_mode)b);
            double swapped = gy_combine(0.8, (gy_combine_mode)b, 0.5, (gy_combine_mode)a);
            if (fabs(got - want) > 1e-12 || fabs(swapped - want) > 1e-12)
                fail_msg("%s with %s: %g (swapped %g), expected %g", k_mode_names[a],
                         k_mode_names[b], got, swapped, want);
        }
}

static void test_contract_restitution_pairs_follow_the_precedence_table(void **state)
{
    fixture *fx = *state;
    /* Every pair of modes, with the bouncier material on the ball and then on the ground: the
     * pair's restitution must not depend on which collider holds which value. Restitution
     * 0.5 and 0.8 (the table above) give 0.4 to 0.8; measured as the speed ratio across the
     * first bounce, ± 10% (see the combine test above). */
    for (int swap = 0; swap < 2; swap++)
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) {
                gy_material ball = gy_default_material(), ground = gy_default_material();
                ball.restitution = swap ? 0.8 : 0.5;
                ground.restitution = swap ? 0.5 : 0.8;
                ball.restitution_combine = (gy_combine_mode)(swap ? b : a);
                ground.restitution_combine = (gy_combine_mode)(swap ? a : b);
                double ratio, want = k_combine_table[a][b];
                rebound(fx, 2.0, ball, ground, &ratio);
                if (fabs(ratio - want) > 0.1 * want)
                    fail_msg("ball %.1f (%s) on ground %.1f (%s): speed ratio %.3f, expected %.2f",
                             ball.restitution, k_mode_names[ball.restitution_combine],
                             ground.restitution, k_mode_names[ground.restitution_combine], ratio,
                             want);
            }
    expect_empty(fx);
}

/* A 0.5 m box placed at rest on a 30° ramp, no damping; returns how far the box moved down the
 * slope after `seconds`, and its total displacement in *moved. The ramp is created first. */
static double ramp_slide_pair(fixture *fx, gy_material box, gy_material ramp, double seconds,
                              double *moved)
{
    const double theta = 30.0 * GY_PI / 180.0;
    gy_quat q = gy_quat_axis_angle(gy_v3(0, 0, 1), theta);
    gy_vec3 normal = gy_quat_rotate(q, gy_v3(0, 1, 0));
    gy_vec3 uphill = gy_quat_rotate(q, gy_v3(1, 0, 0));

    gy_body_def rd = body_at(GY_MOTION_STATIC, gy_v3(0, 0, 0));
    rd.pose.rotation = q;
    gy_collider_def rc = box_def(gy_v3(12, 0.5, 4));
    rc.material = ramp;
    gy_body_id ramp_id = create_body(fx, &rd, &rc, 1, NULL);

    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0, 0));
    bd.pose.rotation = q;
    bd.pose.position = gy_v3_add(gy_v3_scale(normal, 0.25 + 0.25), gy_v3_scale(uphill, 3.0));
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    gy_collider_def bc = box_def(gy_v3(0.5, 0.5, 0.5));
    bc.material = box;
    gy_body_id body = create_body(fx, &bd, &bc, 1, NULL);

    gy_vec3 start = bd.pose.position;
    step_n(fx, (int)lround(seconds / DT));
    gy_vec3 d = gy_v3_sub(body_position(fx, body), start);
    release_body(fx, body);
    release_body(fx, ramp_id);
    *moved = gy_v3_len(d);
    return -gy_v3_dot(d, uphill);
}

/* ramp_slide_pair with friction `mu` on both. */
static double ramp_slide(fixture *fx, double mu, double seconds, double *moved)
{
    gy_material m = gy_default_material();
    m.friction = mu;
    return ramp_slide_pair(fx, m, m, seconds, moved);
}

/* d = ½ g (sin θ − μ cos θ) t² down a 30° ramp. */
static double coulomb_slide(double mu, double t)
{
    const double theta = 30.0 * GY_PI / 180.0;
    return 0.5 * GRAVITY * (sin(theta) - mu * cos(theta)) * t * t;
}

static void test_contract_ramp_slides_coulomb_distance(void **state)
{
    fixture *fx = *state;
    const double theta = 30.0 * GY_PI / 180.0, mu = 0.45, t = 2.0;
    double moved;
    double d = ramp_slide(fx, mu, t, &moved);
    double expected = 0.5 * GRAVITY * (sin(theta) - mu * cos(theta)) * t * t;
    /* d = ½ g (sin θ − μ cos θ) t² = 2.16 m after 2 s, within 10%. */
    assert_near(d, expected, 0.10 * expected);
    expect_empty(fx);
}

static void test_contract_ramp_holds_above_friction_angle(void **state)
{
    fixture *fx = *state;
    double moved;
    double d = ramp_slide(fx, 0.7, 2.0, &moved);
    /* tan 30° = 0.577 < μ = 0.7: the box holds, moving less than 1 cm in 2 s. */
    assert_near(d, 0.0, 0.01);
    assert_between(moved, 0.0, 0.01);
    expect_empty(fx);
}

static void test_contract_ramp_friction_pair_is_symmetric(void **state)
{
    fixture *fx = *state;
    /* Ice (0.1) on rough (0.8) and rough on ice, averaged: μ = 0.45 either way, so both boxes
     * slide d = ½ g (sin θ − μ cos θ) t² = 2.16 m in 2 s, within 10%. */
    gy_material ice = gy_default_material(), rough = gy_default_material();
    ice.friction = 0.1;
    rough.friction = 0.8;
    const double t = 2.0, expected = coulomb_slide(0.45, t);
    double moved;
    double ice_on_rough = ramp_slide_pair(fx, ice, rough, t, &moved);
    double rough_on_ice = ramp_slide_pair(fx, rough, ice, t, &moved);
    if (fabs(ice_on_rough - expected) > 0.1 * expected ||
        fabs(rough_on_ice - expected) > 0.1 * expected)
        fail_msg("ice box on a rough ramp slid %.3f m, rough box on an icy ramp %.3f m; both "
                 "should slide %.3f m",
                 ice_on_rough, rough_on_ice, expected);
    expect_empty(fx);
}

static void test_contract_friction_multiply_outranks_min(void **state)
{
    fixture *fx = *state;
    /* 0.5 (multiply) against 0.8 (min): μ = 0.4, whichever collider holds which mode, so the box
     * slides 3.01 m in 2 s within 10% (min would give μ = 0.5 and 1.31 m). */
    const double t = 2.0, expected = coulomb_slide(0.4, t);
    for (int swap = 0; swap < 2; swap++) {
        gy_material box = gy_default_material(), ramp = gy_default_material();
        box.friction = 0.5;
        box.friction_combine = swap ? GY_COMBINE_MIN : GY_COMBINE_MULTIPLY;
        ramp.friction = 0.8;
        ramp.friction_combine = swap ? GY_COMBINE_MULTIPLY : GY_COMBINE_MIN;
        double moved;
        double d = ramp_slide_pair(fx, box, ramp, t, &moved);
        if (fabs(d - expected) > 0.1 * expected)
            fail_msg("box 0.5 (%s) on ramp 0.8 (%s): slid %.3f m, expected %.3f m",
                     k_mode_names[box.friction_combine], k_mode_names[ramp.friction_combine], d,
                     expected);
    }
    expect_empty(fx);
}

/* A 1 m box resting on the ground, both with friction `mu`, no damping, given `v0` and `w0` once
 * its contact has settled; returns the box after `steps` more steps and its start in *start. */
static gy_body_state slide_on_ground(fixture *fx, double mu, gy_vec3 v0, gy_vec3 w0, int steps,
                                     gy_vec3 *start)
{
    gy_body_id ground = create_ground_with_friction(fx, mu);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0.5, 0));
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    bd.allow_sleeping = false;
    gy_collider_def bc = box_def(gy_v3(1, 1, 1));
    bc.material.friction = mu;
    gy_body_id box = create_body(fx, &bd, &bc, 1, NULL);
    step_n(fx, 10);
    *start = body_position(fx, box);
    assert_result(fx->be->body_set_linear_velocity(fx->w, box, v0), GY_OK);
    assert_result(fx->be->body_set_angular_velocity(fx->w, box, w0), GY_OK);
    step_n(fx, steps);
    gy_body_state s = body_state(fx, box);
    release_body(fx, box);
    release_body(fx, ground);
    return s;
}

static void test_contract_friction_brakes_a_spin_by_coulomb_torque(void **state)
{
    fixture *fx = *state;
    /* Corners slip at 1.06 m/s, 1.8 cm per step, so contact points stay put between steps. */
    const double mu = 0.1, w0 = 1.5, t = 0.25;
    /* A cube on a plane stands on its four bottom corners, each slipping perpendicular to its
     * arm r = √2/2 m: the friction torque is μ m g r, against I = m/6, so ω falls by
     * 6 μ g r = 4.16 rad/s² (to 0.46 rad/s after 0.25 s) at any yaw. */
    const double alpha = 6.0 * mu * GRAVITY * sqrt(0.5);
    gy_vec3 start;
    gy_body_state s =
        slide_on_ground(fx, mu, gy_v3(0, 0, 0), gy_v3(0, w0, 0), (int)lround(t / DT), &start);
    /* One step of braking (α h = 0.07 rad/s) covers where within a step the contacts settled. A
     * pyramid fixed to the world axes brakes a cube that faces them √2 as hard (to 0.03 rad/s). */
    assert_near(s.angular_velocity.y, w0 - alpha * t, alpha * DT);
    assert_near(gy_v3_len(gy_v3_sub(s.pose.position, start)), 0.0, 0.005);
    expect_empty(fx);
}

/* A 1 m box sliding at 5 m/s on a friction-0.5 plane along `deg` degrees from +X; returns its
 * travel along that heading and, in *side, its travel across it. */
static double slide_at_angle(fixture *fx, double deg, double *side)
{
    const double v0 = 5.0, a = deg * GY_PI / 180.0;
    gy_vec3 dir = gy_v3(cos(a), 0.0, sin(a)), start;
    /* 1.5 s: the slide stops after v0/(μ g) = 1.02 s. */
    gy_body_state s = slide_on_ground(fx, 0.5, gy_v3_scale(dir, v0), gy_v3(0, 0, 0), 90, &start);
    gy_vec3 d = gy_v3_sub(s.pose.position, start);
    double along = gy_v3_dot(d, dir);
    *side = gy_v3_len(gy_v3_sub(gy_v3(d.x, 0.0, d.z), gy_v3_scale(dir, along)));
    assert_near(gy_v3_len(s.linear_velocity), 0.0, 1e-3);
    return along;
}

static void test_contract_friction_is_isotropic_in_the_plane(void **state)
{
    fixture *fx = *state;
    /* Coulomb friction stops a slide at v0²/(2 μ g) = 2.548 m whatever its heading. Stepped at
     * 60 Hz, velocity updated before position, the sum falls short by up to v0 h / 2 (4.2 cm):
     * each heading is held to one step of travel, v0 h = 8.3 cm, of the analytic answer, and to
     * 1 cm across its heading. A pyramid fixed to the world axes turns a 30° slide towards the
     * diagonal; a box left on one corner for a step is kicked sideways. */
    const double v0 = 5.0, mu = 0.5, want = v0 * v0 / (2.0 * mu * GRAVITY);
    double side;
    double axis = slide_at_angle(fx, 0.0, &side);
    assert_near(axis, want, v0 * DT);
    assert_near(side, 0.0, 0.01);
    const double angles[] = {30.0, 60.0};
    for (int i = 0; i < 2; i++) {
        double d = slide_at_angle(fx, angles[i], &side);
        print_message("slide at %.0f deg: %.4f m along (axis %.4f, analytic %.4f), %.4f m across\n",
                      angles[i], d, axis, want, side);
        assert_near(d, want, v0 * DT);
        assert_near(side, 0.0, 0.01);
    }
    expect_empty(fx);
}

static void test_contract_ten_box_stack_stands(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx);
    gy_body_id boxes[10];
    gy_collider_def cd = box_def(gy_v3(1, 1, 1));
    for (int i = 0; i < 10; i++) {
        gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0.5 + i, 0));
        boxes[i] = create_body(fx, &bd, &cd, 1, NULL);
    }
    gy_vec3 top0 = body_position(fx, boxes[9]);
    /* Throughout 10 s the top box stays within 5 cm of where it started (sampled at every step:
     * a stack that sways and comes back is not standing), and by then the stack sleeps. */
    double most = 0.0;
    for (int i = 0; i < 600; i++) {
        step_n(fx, 1);
        most = fmax(most, gy_v3_len(gy_v3_sub(body_position(fx, boxes[9]), top0)));
    }
    print_message("10-box stack: the top moved at most %.4f m in 10 s\n", most);
    assert_between(most, 0.0, 0.05);
    assert_false(body_state(fx, boxes[9]).awake);
    for (int i = 0; i < 10; i++)
        release_body(fx, boxes[i]);
    release_body(fx, ground);
    expect_empty(fx);
}

/* ---- sensors, response, conveyor, one-way, filtering -------------------------------------------
 */

/* A sphere falls through a 2 m static box at the origin whose collider is `zone`; a twin falls far
 * away. Checks that the pair is reported with `expect_sensor` and no impulse, that the sphere
 * moves exactly like its twin, and that it ends below the box. */
static void fall_through_zone(fixture *fx, gy_collider_def zone, bool expect_sensor)
{
    gy_body_def zd = body_at(GY_MOTION_STATIC, gy_v3(0, 0, 0));
    gy_body_id z = create_body(fx, &zd, &zone, 1, NULL);
    gy_collider_def sc = sphere_def(0.25);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 3, 0));
    gy_body_id ball = create_body(fx, &bd, &sc, 1, NULL);
    bd.pose.position.x = 20;
    gy_body_id twin = create_body(fx, &bd, &sc, 1, NULL);

    int reported = 0;
    for (int i = 0; i < 90; i++) {
        step_n(fx, 1);
        const gy_contact *all;
        uint32_t n = contacts(fx, &all);
        assert_int_equal(counters(fx).contact_pairs, n);
        const gy_contact *c = find_contact(fx, z, ball);
        if (c != NULL) {
            reported++;
            assert_int_equal(c->is_sensor, expect_sensor);
            assert_near(c->normal_impulse, 0.0, 1e-12);
        }
        gy_body_state s = body_state(fx, ball), t = body_state(fx, twin);
        /* Not pushed: the same path as the twin, to 1 µm. */
        assert_near(s.pose.position.y, t.pose.position.y, 1e-6);
        assert_near(s.pose.position.x, 0.0, 1e-6);
        assert_near(s.linear_velocity.y, t.linear_velocity.y, 1e-6);
    }
    /* The ball spends about 0.2 s inside the box: 12 steps; ask for at least 5 reports. */
    assert_between(reported, 5, 90);
    assert_between(body_position(fx, ball).y, -INFINITY, -1.5);

    release_body(fx, ball);
    release_body(fx, twin);
    release_body(fx, z);
}

static void test_contract_sensor_reports_overlap_without_pushing(void **state)
{
    fixture *fx = *state;
    gy_collider_def zone = box_def(gy_v3(2, 2, 2));
    zone.is_sensor = true;
    fall_through_zone(fx, zone, true);
    expect_empty(fx);

    /* Counted as a sensor while it lives. */
    gy_body_def zd = body_at(GY_MOTION_STATIC, gy_v3(0, 0, 0));
    gy_body_id z = create_body(fx, &zd, &zone, 1, NULL);
    assert_int_equal(counters(fx).sensors, 1);
    assert_int_equal(counters(fx).colliders, 1);
    release_body(fx, z);
    expect_empty(fx);
}

static void test_contract_sensor_reports_on_the_step_of_first_overlap(void **state)
{
    fixture *fx = *state;
    close_world(fx);
    gy_backend_world_def wd = fixture_world_def(fx);
    wd.gravity = gy_v3(0, 0, 0);
    assert_int_equal(open_world(fx, &wd), 0);
    /* A 2 m sensor box at the origin; a sphere of radius 0.25 coasting at 3 m/s along X from
     * x = -3. Its surface reaches the box face (x = -1) at x = -1.25, after 1.75 / 3 s =
     * 35 steps; it leaves the far side (x = 1.25) after 4.25 / 3 s = 85 steps. */
    gy_collider_def zone = box_def(gy_v3(2, 2, 2));
    zone.is_sensor = true;
    gy_body_def zd = body_at(GY_MOTION_STATIC, gy_v3(0, 0, 0));
    gy_body_id z = create_body(fx, &zd, &zone, 1, NULL);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(-3, 0, 0));
    bd.linear_velocity = gy_v3(3, 0, 0);
    bd.linear_damping = 0.0;
    gy_collider_def sc = sphere_def(0.25);
    gy_body_id ball = create_body(fx, &bd, &sc, 1, NULL);
    int first = -1, last = -1;
    for (int i = 1; i <= 100; i++) {
        step_n(fx, 1);
        if (find_contact(fx, z, ball) != NULL) {
            if (first < 0)
                first = i;
            last = i;
        }
    }
    /* The report after a step describes the poses that step ended with: the pair is reported
     * from the first step that ends overlapping (the 36th: the 35th ends exactly touching, which
     * rounding may or may not count) to the last (the 84th or 85th). */
    assert_in_range(first, 35, 36);
    assert_in_range(last, 84, 85);
    release_body(fx, ball);
    release_body(fx, z);
    expect_empty(fx);
}

static void test_contract_contact_response_off_reports_without_pushing(void **state)
{
    fixture *fx = *state;
    gy_collider_def zone = box_def(gy_v3(2, 2, 2));
    zone.contact_response = false;
    fall_through_zone(fx, zone, false);
    expect_empty(fx);
}

static void test_contract_category_mask_disables_collision(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx); /* category 1 */
    gy_collider_def ghost_c = box_def(gy_v3(1, 1, 1));
    ghost_c.category = 2u;
    ghost_c.mask = ~1u;
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 2, 0));
    gy_body_id ghost = create_body(fx, &bd, &ghost_c, 1, NULL);
    gy_collider_def solid_c = box_def(gy_v3(1, 1, 1));
    bd.pose.position.x = 3;
    gy_body_id solid = create_body(fx, &bd, &solid_c, 1, NULL);

    bool ghost_touched = false;
    for (int i = 0; i < 90; i++) {
        step_n(fx, 1);
        ghost_touched = ghost_touched || find_contact(fx, ground, ghost) != NULL;
    }
    /* The masked box falls through (no contact reported); the default one rests at 0.5 m. */
    assert_false(ghost_touched);
    assert_between(body_position(fx, ghost).y, -INFINITY, -1.0);
    assert_near(body_position(fx, solid).y, 0.5, 0.02);

    release_body(fx, ghost);
    release_body(fx, solid);
    release_body(fx, ground);
    expect_empty(fx);
}

static void test_contract_conveyor_carries_box(void **state)
{
    fixture *fx = *state;
    /* The belt body is turned 90° about Y, so its local +X (the belt direction) is world −Z. */
    gy_body_def cd_body = body_at(GY_MOTION_STATIC, gy_v3(0, -0.5, 0));
    cd_body.pose.rotation = gy_quat_axis_angle(gy_v3(0, 1, 0), 0.5 * GY_PI);
    gy_collider_def belt = box_def(gy_v3(20, 1, 4));
    belt.surface_velocity = gy_v3(2, 0, 0);
    gy_body_id conveyor = create_body(fx, &cd_body, &belt, 1, NULL);

    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0.25, 0));
    gy_collider_def bc = box_def(gy_v3(0.5, 0.5, 0.5));
    gy_body_id box = create_body(fx, &bd, &bc, 1, NULL);

    step_n(fx, 120);
    gy_body_state s = body_state(fx, box);
    /* Friction (μ 0.5) brings the box to the belt speed in ~0.4 s; after 2 s it moves at 2 m/s
     * along world −Z (± 10%) and has travelled ≈ 3.6 m; it does not drift sideways. */
    assert_near(s.linear_velocity.z, -2.0, 0.2);
    assert_between(s.pose.position.z, -4.2, -3.0);
    assert_near(s.pose.position.x, 0.0, 0.05);
    assert_near(s.pose.position.y, 0.25, 0.03);

    release_body(fx, box);
    release_body(fx, conveyor);
    expect_empty(fx);
}

/* A static one-way platform at (0, 3, 0), `width` by 0.2 by 4 m, its one-way side up (top at
 * 3.1 m). */
static gy_body_id one_way_platform(fixture *fx, double width)
{
    gy_body_def pd = body_at(GY_MOTION_STATIC, gy_v3(0, 3, 0));
    gy_collider_def pc = box_def(gy_v3(width, 0.2, 4));
    pc.one_way = true;
    pc.one_way_normal = gy_v3(0, 1, 0);
    return create_body(fx, &pd, &pc, 1, NULL);
}

static void test_contract_one_way_platform_passes_from_below_holds_from_above(void **state)
{
    fixture *fx = *state;
    gy_body_id platform = one_way_platform(fx, 4);
    const double top = 3.1, r = 0.25;

    gy_collider_def sc = sphere_def(r);
    gy_body_def up = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 1, 0));
    up.linear_velocity = gy_v3(0, 10, 0); /* free apex at 1 + 10²/2g = 6.1 m */
    up.linear_damping = 0.0;
    gy_body_id launched = create_body(fx, &up, &sc, 1, NULL);
    gy_body_def down = body_at(GY_MOTION_DYNAMIC, gy_v3(1.2, 5, 0));
    gy_body_id dropped = create_body(fx, &down, &sc, 1, NULL);

    double apex = -INFINITY;
    for (int i = 0; i < 180; i++) {
        step_n(fx, 1);
        apex = fmax(apex, body_position(fx, launched).y);
    }
    /* From below it passes (apex well above the platform, not stopped at 2.65 m); it comes down
     * on top and stays there like the dropped one: resting at top + r within 5 cm. */
    assert_between(apex, 5.5, 6.5);
    gy_body_state a = body_state(fx, launched), b = body_state(fx, dropped);
    assert_near(a.pose.position.y, top + r, 0.05);
    assert_near(a.linear_velocity.y, 0.0, 0.1);
    assert_near(b.pose.position.y, top + r, 0.05);
    assert_near(b.linear_velocity.y, 0.0, 0.1);

    release_body(fx, launched);
    release_body(fx, dropped);
    release_body(fx, platform);
    expect_empty(fx);
}

/* Bodies created resting slightly below the top (3.1 m), within the slop (default 5 cm; 10 cm set
 * on the second platform), land on it: the solver pushing them out of the overlap is not taken
 * for a rise through the platform. They come to rest on the top, centre at top + r (± 5 mm). */
static void test_contract_one_way_platform_lands_bodies_within_its_slop(void **state)
{
    fixture *fx = *state;
    gy_body_def pd = body_at(GY_MOTION_STATIC, gy_v3(0, 3, 0));
    gy_collider_def pc = box_def(gy_v3(4, 0.2, 4));
    pc.one_way = true;
    assert_near(pc.one_way_slop, GY_DEFAULT_ONE_WAY_SLOP, 0.0);
    gy_body_id platform = create_body(fx, &pd, &pc, 1, NULL);
    gy_body_def pd2 = body_at(GY_MOTION_STATIC, gy_v3(10, 3, 0));
    pc.one_way_slop = 0.1;
    gy_body_id wide = create_body(fx, &pd2, &pc, 1, NULL);
    const double top = 3.1, r = 0.25;
    gy_collider_def sc = sphere_def(r);
    gy_collider_def bc = box_def(gy_v3(2 * r, 2 * r, 2 * r));
    gy_body_def d = body_at(GY_MOTION_DYNAMIC, gy_v3(0, top + r - 0.02, 0));
    gy_body_id ball = create_body(fx, &d, &sc, 1, NULL);
    d.pose.position = gy_v3(1, top + r - 0.04, 0);
    gy_body_id crate = create_body(fx, &d, &bc, 1, NULL);
    d.pose.position = gy_v3(10, top + r - 0.08, 0);
    gy_body_id deep = create_body(fx, &d, &sc, 1, NULL);
    step_n(fx, 60);
    assert_near(body_position(fx, ball).y, top + r, 0.005);
    assert_near(body_position(fx, crate).y, top + r, 0.005);
    assert_near(body_position(fx, deep).y, top + r, 0.005);
    release_body(fx, ball);
    release_body(fx, crate);
    release_body(fx, deep);
    release_body(fx, wide);
    release_body(fx, platform);
    expect_empty(fx);
}

/* A one-way verdict is taken on the pair's deepest point, whatever order the narrow phase hands
 * the points over in. A thin slab, tilted 8° either way and weightless, is created cutting up
 * into a one-way platform (its low edge 15 cm under the top, the high one 1 cm: under the 5 cm
 * slop) and rising at 2 m/s, its centre above the top. Judged on its deepest point it rises
 * through the platform (faster than the platform lets a body rise, deeper than the slop) and
 * flies free, pose for pose; judged on a shallow point the platform would take it and push it
 * out. */
static void test_contract_one_way_platform_judges_a_tilted_body_by_its_deepest_point(void **state)
{
    fixture *fx = *state;
    gy_body_id platform = one_way_platform(fx, 6);
    const double top = 3.1, tilt = 8.0 * M_PI / 180.0, half_w = 0.5, half_h = 0.1;
    gy_collider_def sc = box_def(gy_v3(2 * half_w, 2 * half_h, 1));
    for (int side = -1; side <= 1; side += 2) {
        /* The low bottom edge 15 cm under the top: the centre is half_w sin + half_h cos above it.
         */
        double low = top - 0.15;
        gy_vec3 c0 = gy_v3(side * 1.5, low + half_w * sin(tilt) + half_h * cos(tilt), 0);
        gy_body_def bd = body_at(GY_MOTION_DYNAMIC, c0);
        bd.pose.rotation = gy_quat_axis_angle(gy_v3(0, 0, 1), side * tilt);
        bd.linear_velocity = gy_v3(0, 2, 0);
        bd.linear_damping = 0.0;
        bd.angular_damping = 0.0;
        bd.gravity_factor = 0.0;
        bd.allow_sleeping = false;
        gy_body_id slab = create_body(fx, &bd, &sc, 1, NULL);
        for (int i = 1; i <= 6; i++) {
            step_n(fx, 1);
            gy_body_state st = body_state(fx, slab);
            gy_vec3 free = gy_v3(c0.x, c0.y + 2.0 * i * DT, c0.z);
            if (gy_v3_len(gy_v3_sub(st.pose.position, free)) > 1e-9 ||
                gy_v3_len(st.angular_velocity) > 1e-9)
                fail_msg("tilt %+d: step %d: at (%.9f, %.9f), spinning %.3g rad/s: not free flight",
                         side, i, st.pose.position.x, st.pose.position.y,
                         gy_v3_len(st.angular_velocity));
        }
        release_body(fx, slab);
    }
    release_body(fx, platform);
    expect_empty(fx);
}

/* Memory running out in the step a body first lands on a one-way platform (each allocation of
 * that step failed in turn, in a fresh world each time): the step reports GY_ERR_OUT_OF_MEMORY or
 * succeeds, and the platform still holds the ball (created 1 cm into its top, within the slop)
 * over the next half second; nothing leaks. A driver that holds a pair's points back until its
 * verdict (Bullet) judges on those it has when it cannot hold more. */
static void test_contract_one_way_landing_when_memory_runs_out_still_holds(void **state)
{
    fixture *fx = *state;
    const double top = 3.1, r = 0.25;
    bool failed_once = false, done = false;
    for (uint64_t k = 1; k <= 256 && !done; k++) {
        close_world(fx);
        gy_backend_world_def wd = fixture_world_def(fx);
        assert_int_equal(open_world(fx, &wd), 0);
        gy_body_id platform = one_way_platform(fx, 4);
        gy_body_id ball =
            create_one(fx, GY_MOTION_DYNAMIC, gy_v3(0, top + r - 0.01, 0), sphere_def(r));
        uint64_t before = fx->ta.calls;
        fx->ta.fail_at = before + k;
        gy_result res = fx->be->step(fx->w, DT);
        done = fx->ta.calls < fx->ta.fail_at; /* the step asked for fewer than k */
        fx->ta.fail_at = 0;
        if (res != GY_OK)
            assert_result(res, GY_ERR_OUT_OF_MEMORY);
        failed_once = failed_once || res != GY_OK;
        step_n(fx, 30);
        if (body_position(fx, ball).y < top + r - 0.05)
            fail_msg("allocation %llu of the landing step failed: the ball fell to %.3f m",
                     (unsigned long long)k, body_position(fx, ball).y);
        release_body(fx, ball);
        release_body(fx, platform);
        expect_empty(fx);
    }
    assert_true(done);
    assert_true(failed_once);
}

static void test_contract_one_way_platform_ignores_a_hit_on_its_edge(void **state)
{
    fixture *fx = *state;
    gy_body_id platform = one_way_platform(fx, 4);
    /* A ball 5 cm above the top face (3.1 m) rolls, weightless, into the platform's edge: the
     * first contact's normal is about 80° from the one-way normal, so the pair does not count
     * (only normals within 60° do) until the two separate, and the ball goes straight across. */
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(-3, 3.15, 0));
    bd.linear_velocity = gy_v3(3, 0, 0);
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    bd.gravity_factor = 0.0;
    bd.allow_sleeping = false;
    gy_collider_def sc = sphere_def(0.25);
    gy_body_id ball = create_body(fx, &bd, &sc, 1, NULL);
    step_n(fx, 120);
    /* 2 s at 3 m/s: x = 3 m, past the far edge, height and speed unchanged (± 2 cm, 2 cm/s). */
    gy_body_state st = body_state(fx, ball);
    assert_near(st.pose.position.x, 3.0, 0.02);
    assert_near(st.pose.position.y, 3.15, 0.02);
    assert_near(st.linear_velocity.x, 3.0, 0.02);
    release_body(fx, ball);
    release_body(fx, platform);
    expect_empty(fx);
}

/* ---- queries -----------------------------------------------------------------------------------
 */

static void test_contract_raycast_hits_plane_at_distance_with_normal(void **state)
{
    fixture *fx = *state;
    gy_body_def gd = body_at(GY_MOTION_STATIC, gy_v3(0, 0, 0));
    gd.user_data = 0xfeed;
    gy_collider_def gc = plane_def();
    gy_collider_id gcid;
    gy_body_id ground = create_body(fx, &gd, &gc, 1, &gcid);
    gy_query_filter f = default_filter();
    gy_hit hit;
    uint32_t n = 99;

    assert_result(fx->be->raycast(fx->w, gy_v3(0.3, 5, -0.2), gy_v3(0, -10, 0), &f,
                                  GY_COLLECT_CLOSEST, &hit, 1, &n),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_int_equal(hit.body.bits, ground.bits);
    assert_int_equal(hit.collider.bits, gcid.bits);
    assert_int_equal(hit.user_data, 0xfeed);
    assert_int_equal(hit.triangle, -1);
    /* 5 m down a 10 m ray: fraction 0.5, normal +Y, to 1e-6. */
    assert_near(hit.fraction, 0.5, 1e-6);
    assert_near(hit.distance, 5.0, 1e-6);
    assert_vec_near(hit.point, gy_v3(0.3, 0, -0.2), 1e-6);
    assert_vec_near(hit.normal, gy_v3(0, 1, 0), 1e-6);
    assert_near(hit.penetration, 0.0, 1e-9);

    /* Oblique: from (0,4,0) along (6,-8,0) meets y = 0 halfway, at (3,0,0). */
    assert_result(fx->be->raycast(fx->w, gy_v3(0, 4, 0), gy_v3(6, -8, 0), &f, GY_COLLECT_CLOSEST,
                                  &hit, 1, &n),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_near(hit.fraction, 0.5, 1e-6);
    assert_near(hit.distance, 5.0, 1e-6);
    assert_vec_near(hit.point, gy_v3(3, 0, 0), 1e-6);
    assert_vec_near(hit.normal, gy_v3(0, 1, 0), 1e-6);

    /* Too short, or pointing away: no hit. */
    assert_result(fx->be->raycast(fx->w, gy_v3(0, 5, 0), gy_v3(0, -4.9, 0), &f, GY_COLLECT_CLOSEST,
                                  &hit, 1, &n),
                  GY_OK);
    assert_int_equal(n, 0);
    assert_result(
        fx->be->raycast(fx->w, gy_v3(0, 5, 0), gy_v3(0, 10, 0), &f, GY_COLLECT_ALL, &hit, 1, &n),
        GY_OK);
    assert_int_equal(n, 0);

    release_body(fx, ground);
    expect_empty(fx);
}

/* Four spheres (r 0.5) on the +X axis: A static at x 2 (category 1), B dynamic at 4 (category 2),
 * C kinematic at 6 (category 4), D a static sensor at 8 (category 8). */
typedef struct filter_scene {
    gy_body_id a, b, c, d;
    gy_collider_id ca, cb, cc, cd;
} filter_scene;

static filter_scene make_filter_scene(fixture *fx)
{
    filter_scene s;
    gy_collider_def col = sphere_def(0.5);
    gy_body_def bd = body_at(GY_MOTION_STATIC, gy_v3(2, 0, 0));
    bd.user_data = 'A';
    col.category = 1;
    s.a = create_body(fx, &bd, &col, 1, &s.ca);
    bd = body_at(GY_MOTION_DYNAMIC, gy_v3(4, 0, 0));
    bd.user_data = 'B';
    col.category = 2;
    s.b = create_body(fx, &bd, &col, 1, &s.cb);
    bd = body_at(GY_MOTION_KINEMATIC, gy_v3(6, 0, 0));
    bd.user_data = 'C';
    col.category = 4;
    s.c = create_body(fx, &bd, &col, 1, &s.cc);
    bd = body_at(GY_MOTION_STATIC, gy_v3(8, 0, 0));
    bd.user_data = 'D';
    col.category = 8;
    col.is_sensor = true;
    s.d = create_body(fx, &bd, &col, 1, &s.cd);
    return s;
}

static void release_filter_scene(fixture *fx, filter_scene *s)
{
    release_body(fx, s->a);
    release_body(fx, s->b);
    release_body(fx, s->c);
    release_body(fx, s->d);
}

enum { QUERY_RAY, QUERY_OVERLAP, QUERY_CAST };

/* Runs one query kind across the filter scene: a ray from the origin along +X 10 m, a 10×2×2 box
 * overlap covering all four spheres, or a small sphere cast along the same line. */
static uint32_t scene_query(fixture *fx, int kind, const gy_query_filter *f, gy_collector c,
                            gy_hit *hits, uint32_t cap)
{
    uint32_t n = UINT32_MAX;
    if (kind == QUERY_RAY) {
        assert_result(fx->be->raycast(fx->w, gy_v3(0, 0, 0), gy_v3(10, 0, 0), f, c, hits, cap, &n),
                      GY_OK);
    } else if (kind == QUERY_OVERLAP) {
        gy_shape s = box_shape(gy_v3(10, 2, 2));
        assert_result(fx->be->overlap(fx->w, &s, pose_at(gy_v3(5, 0, 0)), f, c, hits, cap, &n),
                      GY_OK);
    } else {
        gy_shape s = sphere_shape(0.1);
        assert_result(fx->be->shape_cast(fx->w, &s, pose_at(gy_v3(0, 0, 0)), gy_v3(10, 0, 0), f, c,
                                         hits, cap, &n),
                      GY_OK);
    }
    assert_true(n <= cap);
    return n;
}

/* One closest hit of a ray against the world; false when it misses. */
static bool ray_closest(fixture *fx, gy_vec3 origin, gy_vec3 translation, gy_hit *hit)
{
    gy_query_filter f = default_filter();
    uint32_t n = 0;
    assert_result(fx->be->raycast(fx->w, origin, translation, &f, GY_COLLECT_CLOSEST, hit, 1, &n),
                  GY_OK);
    return n == 1;
}

static void test_contract_raycast_from_inside_a_capsule_reports_its_exit(void **state)
{
    fixture *fx = *state;
    /* A capsule of radius 0.5 and height 3 standing along Y at (1, 2, 0): its surface is 1.5 m
     * above and below the centre on the axis, 0.5 m out sideways. */
    gy_body_def bd = body_at(GY_MOTION_STATIC, gy_v3(1, 2, 0));
    gy_collider_def cd = capsule_def(0.5, 3.0);
    gy_body_id cap = create_body(fx, &bd, &cd, 1, NULL);
    const struct {
        gy_vec3 origin, dir;
        double exit;
    } rays[] = {
        {{1, 2, 0}, {0, 1, 0}, 1.5},  /* along the axis, up from the centre */
        {{1, 2, 0}, {0, -1, 0}, 1.5}, /* along the axis, down */
        {{1.2, 2.5, 0}, {0, 1, 0}, 0.5 + sqrt(0.25 - 0.04)}, /* parallel to the axis, into a cap */
        {{1, 2.3, 0}, {1, 0, 0}, 0.5},                       /* across the cylinder */
    };
    for (size_t i = 0; i < sizeof rays / sizeof rays[0]; i++) {
        gy_hit h;
        bool hit = ray_closest(fx, rays[i].origin, gy_v3_scale(rays[i].dir, 4.0), &h);
        assert_true(hit);
        /* Exact geometry: where the ray leaves the capsule, normal facing back along the ray. */
        assert_near(h.distance, rays[i].exit, 1e-6);
        assert_vec_near(h.point, gy_v3_mad(rays[i].origin, rays[i].dir, rays[i].exit), 1e-6);
        assert_true(gy_v3_dot(h.normal, rays[i].dir) < 0.0);
    }
    release_body(fx, cap);
    expect_empty(fx);
}

static void test_contract_query_filter_fields_exclude(void **state)
{
    fixture *fx = *state;
    filter_scene s = make_filter_scene(fx);
    static const char *const kind_name[] = {"raycast", "overlap", "shape_cast"};
    for (int kind = QUERY_RAY; kind <= QUERY_CAST; kind++) {
        gy_hit hits[8];
        char what[96];
        gy_query_filter f = default_filter();
        uint32_t n = scene_query(fx, kind, &f, GY_COLLECT_ALL, hits, 8);
        snprintf(what, sizeof what, "%s, default filter (sensors out)", kind_name[kind]);
        expect_hit_bodies(hits, n, ((gy_body_id[]){s.a, s.b, s.c}), 3, what);

        f.include_sensors = true;
        n = scene_query(fx, kind, &f, GY_COLLECT_ALL, hits, 8);
        snprintf(what, sizeof what, "%s, include_sensors", kind_name[kind]);
        expect_hit_bodies(hits, n, ((gy_body_id[]){s.a, s.b, s.c, s.d}), 4, what);

        f = default_filter();
        f.mask = 2;
        n = scene_query(fx, kind, &f, GY_COLLECT_ALL, hits, 8);
        snprintf(what, sizeof what, "%s, mask 2", kind_name[kind]);
        expect_hit_bodies(hits, n, ((gy_body_id[]){s.b}), 1, what);

        f.mask = 8;
        f.include_sensors = true;
        n = scene_query(fx, kind, &f, GY_COLLECT_ALL, hits, 8);
        snprintf(what, sizeof what, "%s, mask 8 with sensors", kind_name[kind]);
        expect_hit_bodies(hits, n, ((gy_body_id[]){s.d}), 1, what);

        f = default_filter();
        f.mask = 0;
        n = scene_query(fx, kind, &f, GY_COLLECT_ALL, hits, 8);
        snprintf(what, sizeof what, "%s, mask 0", kind_name[kind]);
        expect_hit_bodies(hits, n, ((gy_body_id[]){s.a}), 0, what);

        f = default_filter();
        f.motion_types = GY_MOTION_BIT(GY_MOTION_DYNAMIC);
        n = scene_query(fx, kind, &f, GY_COLLECT_ALL, hits, 8);
        snprintf(what, sizeof what, "%s, dynamic only", kind_name[kind]);
        expect_hit_bodies(hits, n, ((gy_body_id[]){s.b}), 1, what);

        f.motion_types = GY_MOTION_BIT(GY_MOTION_STATIC) | GY_MOTION_BIT(GY_MOTION_KINEMATIC);
        n = scene_query(fx, kind, &f, GY_COLLECT_ALL, hits, 8);
        snprintf(what, sizeof what, "%s, static and kinematic", kind_name[kind]);
        expect_hit_bodies(hits, n, ((gy_body_id[]){s.a, s.c}), 2, what);

        f.motion_types = GY_MOTION_BIT(GY_MOTION_STATIC);
        f.include_sensors = true;
        n = scene_query(fx, kind, &f, GY_COLLECT_ALL, hits, 8);
        snprintf(what, sizeof what, "%s, static with sensors", kind_name[kind]);
        expect_hit_bodies(hits, n, ((gy_body_id[]){s.a, s.d}), 2, what);

        f = default_filter();
        f.ignore_body = s.a;
        n = scene_query(fx, kind, &f, GY_COLLECT_ALL, hits, 8);
        snprintf(what, sizeof what, "%s, ignore_body A", kind_name[kind]);
        expect_hit_bodies(hits, n, ((gy_body_id[]){s.b, s.c}), 2, what);

        f = default_filter();
        f.ignore_collider = s.cc;
        n = scene_query(fx, kind, &f, GY_COLLECT_ALL, hits, 8);
        snprintf(what, sizeof what, "%s, ignore_collider C", kind_name[kind]);
        expect_hit_bodies(hits, n, ((gy_body_id[]){s.a, s.b}), 2, what);
    }
    release_filter_scene(fx, &s);
    expect_empty(fx);
}

static void test_contract_query_collectors_any_closest_all(void **state)
{
    fixture *fx = *state;
    filter_scene s = make_filter_scene(fx);
    gy_query_filter f = default_filter();
    gy_hit hits[8];

    /* any: exactly one of the three solid spheres. */
    uint32_t n = scene_query(fx, QUERY_RAY, &f, GY_COLLECT_ANY, hits, 8);
    assert_int_equal(n, 1);
    assert_true(hits_contain(hits, 1, s.a) || hits_contain(hits, 1, s.b) ||
                hits_contain(hits, 1, s.c));

    /* closest: A, its near surface at x 1.5 (fraction 0.15), normal −X, to 1e-6. */
    n = scene_query(fx, QUERY_RAY, &f, GY_COLLECT_CLOSEST, hits, 8);
    assert_int_equal(n, 1);
    assert_int_equal(hits[0].body.bits, s.a.bits);
    assert_int_equal(hits[0].collider.bits, s.ca.bits);
    assert_int_equal(hits[0].user_data, 'A');
    assert_int_equal(hits[0].triangle, -1);
    assert_near(hits[0].fraction, 0.15, 1e-6);
    assert_near(hits[0].distance, 1.5, 1e-6);
    assert_vec_near(hits[0].point, gy_v3(1.5, 0, 0), 1e-6);
    assert_vec_near(hits[0].normal, gy_v3(-1, 0, 0), 1e-6);

    /* all: every solid sphere, each at its own entry point (x 1.5, 3.5, 5.5). */
    n = scene_query(fx, QUERY_RAY, &f, GY_COLLECT_ALL, hits, 8);
    expect_hit_bodies(hits, n, ((gy_body_id[]){s.a, s.b, s.c}), 3, "raycast all");
    for (uint32_t i = 0; i < n; i++) {
        double x = hits[i].body.bits == s.a.bits ? 1.5 : hits[i].body.bits == s.b.bits ? 3.5 : 5.5;
        assert_near(hits[i].distance, x, 1e-6);
        assert_near(hits[i].fraction, x / 10.0, 1e-7);
        assert_vec_near(hits[i].normal, gy_v3(-1, 0, 0), 1e-6);
    }

    /* The same through a sphere cast of radius 0.1: entry 0.1 m earlier. */
    n = scene_query(fx, QUERY_CAST, &f, GY_COLLECT_CLOSEST, hits, 8);
    assert_int_equal(n, 1);
    assert_int_equal(hits[0].body.bits, s.a.bits);
    assert_near(hits[0].distance, 1.4, 0.01);
    n = scene_query(fx, QUERY_CAST, &f, GY_COLLECT_ANY, hits, 8);
    assert_int_equal(n, 1);
    n = scene_query(fx, QUERY_OVERLAP, &f, GY_COLLECT_ANY, hits, 8);
    assert_int_equal(n, 1);
    assert_true(hits_contain(hits, 1, s.a) || hits_contain(hits, 1, s.b) ||
                hits_contain(hits, 1, s.c));

    release_filter_scene(fx, &s);
    expect_empty(fx);
}

static void test_contract_query_all_never_writes_past_capacity(void **state)
{
    fixture *fx = *state;
    filter_scene s = make_filter_scene(fx);
    gy_query_filter f = default_filter();
    f.include_sensors = true; /* four candidates */

    for (int kind = QUERY_RAY; kind <= QUERY_CAST; kind++) {
        for (uint32_t cap = 0; cap <= 3; cap++) {
            gy_hit hits[8], guard;
            memset(hits, 0xa5, sizeof hits);
            memset(&guard, 0xa5, sizeof guard);
            uint32_t n = scene_query(fx, kind, &f, GY_COLLECT_ALL, hits, cap);
            /* Exactly `cap` of the four are written; entries from `cap` on stay untouched. */
            assert_int_equal(n, cap);
            for (uint32_t i = cap; i < 8; i++)
                assert_memory_equal(&hits[i], &guard, sizeof guard);
            for (uint32_t i = 0; i < n; i++) {
                assert_true(hits_contain(&hits[i], 1, s.a) || hits_contain(&hits[i], 1, s.b) ||
                            hits_contain(&hits[i], 1, s.c) || hits_contain(&hits[i], 1, s.d));
                for (uint32_t j = 0; j < i; j++)
                    assert_true(hits[i].body.bits != hits[j].body.bits);
            }
        }
    }
    release_filter_scene(fx, &s);
    expect_empty(fx);
}

static void test_contract_raycast_mesh_reports_triangle(void **state)
{
    fixture *fx = *state;
    gy_resource_id mesh = create_quad_mesh(fx);
    gy_body_def bd = body_at(GY_MOTION_STATIC, gy_v3(0, 1, 0));
    gy_collider_def cd = resource_def(GY_SHAPE_MESH, mesh);
    gy_body_id body = create_body(fx, &bd, &cd, 1, NULL);
    gy_query_filter f = default_filter();
    gy_hit hit;
    uint32_t n;

    /* (0.5, −0.5) lies in triangle 1 (z < x), (−0.5, 0.5) in triangle 0; the quad sits at y 1. */
    assert_result(fx->be->raycast(fx->w, gy_v3(0.5, 5, -0.5), gy_v3(0, -10, 0), &f,
                                  GY_COLLECT_CLOSEST, &hit, 1, &n),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_int_equal(hit.body.bits, body.bits);
    assert_int_equal(hit.triangle, 1);
    assert_near(hit.distance, 4.0, 1e-6);
    assert_vec_near(hit.point, gy_v3(0.5, 1, -0.5), 1e-6);
    assert_vec_near(hit.normal, gy_v3(0, 1, 0), 1e-6);

    assert_result(fx->be->raycast(fx->w, gy_v3(-0.5, 5, 0.5), gy_v3(0, -10, 0), &f, GY_COLLECT_ALL,
                                  &hit, 1, &n),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_int_equal(hit.triangle, 0);
    assert_near(hit.distance, 4.0, 1e-6);

    /* Outside the quad: nothing. */
    assert_result(fx->be->raycast(fx->w, gy_v3(1.5, 5, 0), gy_v3(0, -10, 0), &f, GY_COLLECT_CLOSEST,
                                  &hit, 1, &n),
                  GY_OK);
    assert_int_equal(n, 0);

    release_body(fx, body);
    fx->be->resource_release(fx->w, mesh);
    expect_empty(fx);
}

static void test_contract_shape_casts_hit_wall_at_fraction_with_normal(void **state)
{
    fixture *fx = *state;
    /* A wall whose near face is the plane x = 4.5. */
    gy_body_def wd = body_at(GY_MOTION_STATIC, gy_v3(5, 0, 0));
    gy_collider_def wc = box_def(gy_v3(1, 10, 10));
    gy_body_id wall = create_body(fx, &wd, &wc, 1, NULL);
    gy_resource_id hull = create_hull(fx, octahedron_points, 6);

    gy_shape shapes[4] = {sphere_shape(0.5), box_shape(gy_v3(1, 1, 1)), {0}, {0}};
    shapes[2].type = GY_SHAPE_CAPSULE;
    shapes[2].radius = 0.5;
    shapes[2].height = 2.0;
    shapes[3].type = GY_SHAPE_HULL;
    shapes[3].resource = hull;
    static const char *const names[] = {"sphere", "box", "capsule", "hull"};
    gy_query_filter f = default_filter();

    for (int i = 0; i < 4; i++) {
        gy_hit hit;
        uint32_t n = 99;
        print_message("shape cast: %s\n", names[i]);
        assert_result(fx->be->shape_cast(fx->w, &shapes[i], pose_at(gy_v3(0, 0, 0)),
                                         gy_v3(10, 0, 0), &f, GY_COLLECT_CLOSEST, &hit, 1, &n),
                      GY_OK);
        assert_int_equal(n, 1);
        assert_int_equal(hit.body.bits, wall.bits);
        /* Every shape reaches 0.5 m ahead of its centre: contact after 4 m of 10 (1 cm). */
        assert_near(hit.distance, 4.0, 0.01);
        assert_near(hit.fraction, 0.4, 0.001);
        assert_near(hit.point.x, 4.5, 0.01);
        assert_vec_near(hit.normal, gy_v3(-1, 0, 0), 0.02);
        assert_int_equal(hit.triangle, -1);

        /* Upwards, parallel to the wall: no hit. */
        assert_result(fx->be->shape_cast(fx->w, &shapes[i], pose_at(gy_v3(0, 0, 0)),
                                         gy_v3(0, 10, 0), &f, GY_COLLECT_CLOSEST, &hit, 1, &n),
                      GY_OK);
        assert_int_equal(n, 0);
    }

    /* A box turned 45° about Y leads with an edge 0.5√2 ahead: contact after 4.5 − 0.707 m. */
    gy_pose turned = gy_pose_identity();
    turned.rotation = gy_quat_axis_angle(gy_v3(0, 1, 0), 0.25 * GY_PI);
    gy_hit hit;
    uint32_t n;
    assert_result(fx->be->shape_cast(fx->w, &shapes[1], turned, gy_v3(10, 0, 0), &f,
                                     GY_COLLECT_CLOSEST, &hit, 1, &n),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_near(hit.distance, 4.5 - 0.5 * sqrt(2.0), 0.01);

    /* Starting 0.3 m inside the wall: fraction 0, penetration 0.3 (2 cm), normal out of the wall.
     */
    assert_result(fx->be->shape_cast(fx->w, &shapes[0], pose_at(gy_v3(4.3, 0, 0)), gy_v3(10, 0, 0),
                                     &f, GY_COLLECT_CLOSEST, &hit, 1, &n),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_int_equal(hit.body.bits, wall.bits);
    assert_near(hit.fraction, 0.0, 1e-12);
    assert_near(hit.distance, 0.0, 1e-12);
    assert_near(hit.penetration, 0.3, 0.02);
    assert_vec_near(hit.normal, gy_v3(-1, 0, 0), 0.05);

    release_body(fx, wall);
    fx->be->resource_release(fx->w, hull);
    expect_empty(fx);
}

/* A cast that only grazes: a 0.3 m ball passing a 1 m ball (and a cylinder, standing) with its
 * path 1 mm inside touching distance overlaps them only over 10 cm of its 10.5 m travel. The time
 * of impact is exact (within 1e-4 m) and the normal points from the target's centre to the ball's
 * at contact: x² + 1.299² = 1.3², so contact at x = -0.05098 m. */
static void test_contract_shape_cast_finds_a_grazing_contact(void **state)
{
    fixture *fx = *state;
    const double offset = 1.3 - 0.001, x_touch = -sqrt(1.3 * 1.3 - offset * offset);
    gy_query_filter f = default_filter();
    gy_shape probe = sphere_shape(0.3);
    for (int k = 0; k < 2; k++) {
        gy_body_def bd = body_at(GY_MOTION_STATIC, gy_v3(0, 0, 0));
        gy_collider_def cd = sphere_def(1.0);
        if (k == 1) {
            cd.shape.type = GY_SHAPE_CYLINDER;
            cd.shape.radius = 1.0;
            cd.shape.height = 4.0;
        }
        gy_body_id target = create_body(fx, &bd, &cd, 1, NULL);
        /* Past the ball in z (the cylinder stands along y, so its round side is grazed too). */
        gy_hit hit;
        uint32_t n = 99;
        assert_result(fx->be->shape_cast(fx->w, &probe, pose_at(gy_v3(-5.25, 0, offset)),
                                         gy_v3(10.5, 0, 0), &f, GY_COLLECT_CLOSEST, &hit, 1, &n),
                      GY_OK);
        print_message("graze %s: %u hit(s), distance %.6f (expected %.6f)\n",
                      k == 0 ? "sphere" : "cylinder", n, n ? hit.distance : -1.0, x_touch + 5.25);
        assert_int_equal(n, 1);
        assert_int_equal(hit.body.bits, target.bits);
        assert_near(hit.distance, x_touch + 5.25, 1e-4);
        assert_vec_near(hit.normal, gy_v3_normalize(gy_v3(x_touch, 0, offset)), 1e-3);
        /* 2 mm further out it misses. */
        assert_result(fx->be->shape_cast(fx->w, &probe, pose_at(gy_v3(-5.25, 0, 1.302)),
                                         gy_v3(10.5, 0, 0), &f, GY_COLLECT_CLOSEST, &hit, 1, &n),
                      GY_OK);
        assert_int_equal(n, 0);
        release_body(fx, target);
    }
    expect_empty(fx);
}

static void test_contract_overlap_finds_touching_colliders(void **state)
{
    fixture *fx = *state;
    gy_body_def bd = body_at(GY_MOTION_STATIC, gy_v3(0.5, 0, 0));
    gy_collider_def small = box_def(gy_v3(0.4, 0.4, 0.4));
    gy_body_id inside = create_body(fx, &bd, &small, 1, NULL);
    gy_collider_def ball = sphere_def(0.5);
    bd = body_at(GY_MOTION_DYNAMIC, gy_v3(3, 0, 0));
    gy_body_id apart = create_body(fx, &bd, &ball, 1, NULL);
    bd = body_at(GY_MOTION_KINEMATIC, gy_v3(-1.2, 0, 0));
    gy_body_id grazing = create_body(fx, &bd, &ball, 1, NULL);
    gy_body_def gd = body_at(GY_MOTION_STATIC, gy_v3(0, 0, 0));
    gy_collider_def far_plane = plane_def();
    far_plane.shape.offset = -5.0; /* the plane y = −5 */
    gy_body_id ground = create_body(fx, &gd, &far_plane, 1, NULL);

    gy_query_filter f = default_filter();
    gy_shape probe = sphere_shape(1.0);
    gy_hit hits[8];
    uint32_t n;
    /* A 1 m sphere at the origin overlaps the small box and, by 0.3 m, the kinematic ball at
     * x −1.2; not the ball at x 3 nor the plane 5 m below. */
    assert_result(
        fx->be->overlap(fx->w, &probe, gy_pose_identity(), &f, GY_COLLECT_ALL, hits, 8, &n), GY_OK);
    expect_hit_bodies(hits, n, ((gy_body_id[]){inside, grazing}), 2, "sphere overlap");
    for (uint32_t i = 0; i < n; i++) {
        assert_true(hits[i].penetration > 0.0);
        if (hits[i].body.bits == grazing.bits)
            assert_near(hits[i].penetration, 0.3, 0.02);
    }
    assert_false(hits_contain(hits, n, apart));

    /* Moved onto the far ball: only it. */
    gy_shape cube = box_shape(gy_v3(1, 1, 1));
    assert_result(
        fx->be->overlap(fx->w, &cube, pose_at(gy_v3(3.8, 0, 0)), &f, GY_COLLECT_ALL, hits, 8, &n),
        GY_OK);
    expect_hit_bodies(hits, n, ((gy_body_id[]){apart}), 1, "box overlap");
    /* Down into the plane: only the plane. */
    assert_result(
        fx->be->overlap(fx->w, &cube, pose_at(gy_v3(10, -5.2, 0)), &f, GY_COLLECT_ALL, hits, 8, &n),
        GY_OK);
    expect_hit_bodies(hits, n, ((gy_body_id[]){ground}), 1, "plane overlap");
    /* In empty space: nothing. */
    assert_result(
        fx->be->overlap(fx->w, &cube, pose_at(gy_v3(10, 0, 0)), &f, GY_COLLECT_ALL, hits, 8, &n),
        GY_OK);
    assert_int_equal(n, 0);

    release_body(fx, inside);
    release_body(fx, apart);
    release_body(fx, grazing);
    release_body(fx, ground);
    expect_empty(fx);
}

/* ---- joints ------------------------------------------------------------------------------------
 */

static void test_contract_hinge_pendulum_small_angle_period(void **state)
{
    fixture *fx = *state;
    const double L = 1.0, theta0 = 5.0 * GY_PI / 180.0;
    const gy_vec3 pivot = gy_v3(0, 5, 0);
    gy_body_def bd =
        body_at(GY_MOTION_DYNAMIC, gy_v3_add(pivot, gy_v3(L * sin(theta0), -L * cos(theta0), 0)));
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    bd.allow_sleeping = false; /* it is nearly still at each turning point */
    gy_collider_def cd = sphere_def(0.05);
    gy_body_id bob = create_body(fx, &bd, &cd, 1, NULL);
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_HINGE;
    jd.a = bob;
    jd.anchor = pivot;
    jd.axis = gy_v3(0, 0, 1);
    gy_joint_id hinge = create_joint(fx, &jd);

    double crossings[32];
    int nc = 0;
    double prev = body_position(fx, bob).x - pivot.x;
    for (int i = 1; i <= 600 && nc < 32; i++) {
        step_n(fx, 1);
        double x = body_position(fx, bob).x - pivot.x;
        if ((prev > 0.0 && x <= 0.0) || (prev < 0.0 && x >= 0.0))
            crossings[nc++] = (i - 1) * DT + DT * prev / (prev - x);
        prev = x;
    }
    assert_between(nc, 4, 32);
    double period = 2.0 * (crossings[nc - 1] - crossings[0]) / (nc - 1);
    double expected = 2.0 * GY_PI * sqrt(L / GRAVITY);
    /* Zero crossings of the bob's x are half a period apart: T within 5% of 2π√(L/g). */
    assert_near(period, expected, 0.05 * expected);
    /* The rod length holds to 1 cm. */
    assert_near(gy_v3_len(gy_v3_sub(body_position(fx, bob), pivot)), L, 0.01);

    assert_result(fx->be->joint_release(fx->w, hinge), GY_OK);
    release_body(fx, bob);
    expect_empty(fx);
}

/* A static unit box at the origin and a dynamic one 20 cm into it (never sleeping), held to it by
 * a fixed joint at its centre; `jd` is left as that joint's definition. */
static gy_joint_id box_jointed_into_post(fixture *fx, gy_body_id *post, gy_body_id *box,
                                         gy_joint_def *jd)
{
    *post = create_one(fx, GY_MOTION_STATIC, gy_v3(0, 0, 0), box_def(gy_v3(1, 1, 1)));
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0.8, 0));
    bd.allow_sleeping = false;
    gy_collider_def cd = box_def(gy_v3(1, 1, 1));
    *box = create_body(fx, &bd, &cd, 1, NULL);
    *jd = gy_default_joint_def();
    jd->type = GY_JOINT_FIXED;
    jd->a = *box;
    jd->b = *post;
    jd->anchor = gy_v3(0, 0.8, 0);
    return create_joint(fx, jd);
}

/* A body jointed to a static does not collide with it (as with another body) while the joint
 * lasts, and does again once the joint is released. */
static void test_contract_joint_to_static_disables_their_contacts(void **state)
{
    fixture *fx = *state;
    gy_body_id post, box;
    gy_joint_def jd;
    gy_joint_id j = box_jointed_into_post(fx, &post, &box, &jd);
    for (int i = 0; i < 30; i++) {
        step_n(fx, 1);
        assert_null(find_contact(fx, box, post));
    }
    /* Held where it was by the joint alone (nothing pushed it out), within 1 cm. */
    assert_near(body_position(fx, box).y, 0.8, 0.01);

    assert_result(fx->be->joint_release(fx->w, j), GY_OK);
    step_n(fx, 1);
    assert_non_null(find_contact(fx, box, post));
    release_body(fx, box);
    release_body(fx, post);
    expect_empty(fx);
}

/* Bodies joined by any of several joints do not collide: a box held to a static post by two
 * joints and a second box held to the first, all overlapping. Each pair collides again only once
 * its last joint is gone, and the post's remaining joint holds after its first is released. */
static void test_contract_jointed_bodies_collide_again_only_when_their_last_joint_goes(void **state)
{
    fixture *fx = *state;
    gy_body_id post, a;
    gy_joint_def jd;
    gy_joint_id held = box_jointed_into_post(fx, &post, &a, &jd);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0.8, 0.8, 0)); /* 20 cm into a */
    bd.allow_sleeping = false;
    gy_collider_def cd = box_def(gy_v3(1, 1, 1));
    gy_body_id b = create_body(fx, &bd, &cd, 1, NULL);
    jd.type = GY_JOINT_BALL;
    gy_joint_id pinned = create_joint(fx, &jd);
    jd.type = GY_JOINT_FIXED;
    jd.a = b;
    jd.b = a;
    jd.anchor = gy_v3(0.8, 0.8, 0);
    gy_joint_id pair = create_joint(fx, &jd);
    for (int i = 0; i < 20; i++) {
        step_n(fx, 1);
        assert_null(find_contact(fx, a, post));
        assert_null(find_contact(fx, a, b));
    }
    /* One of the post's two joints goes: the other still joins them and holds a in place. */
    assert_result(fx->be->joint_release(fx->w, held), GY_OK);
    for (int i = 0; i < 20; i++) {
        step_n(fx, 1);
        assert_null(find_contact(fx, a, post));
        assert_null(find_contact(fx, a, b));
    }
    assert_near(body_position(fx, a).y, 0.8, 0.01);
    assert_result(fx->be->joint_release(fx->w, pinned), GY_OK);
    step_n(fx, 1);
    assert_non_null(find_contact(fx, a, post));
    assert_null(find_contact(fx, a, b));
    assert_result(fx->be->joint_release(fx->w, pair), GY_OK);
    step_n(fx, 1);
    assert_non_null(find_contact(fx, a, b));
    release_body(fx, b);
    release_body(fx, a);
    release_body(fx, post);
    expect_empty(fx);
}

/* Releasing a body takes exactly its joints, on either side of them: a moving body's, then a
 * static's, while the others' joints stay and keep working; a joint taken that way is stale. */
static void test_contract_releasing_a_body_takes_exactly_its_joints(void **state)
{
    fixture *fx = *state;
    gy_body_id post = create_one(fx, GY_MOTION_STATIC, gy_v3(0, 0, 0), box_def(gy_v3(1, 1, 1)));
    gy_body_id body[3];
    for (int i = 0; i < 3; i++) {
        gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(3.0 * (i + 1), 5, 0));
        gy_collider_def cd = sphere_def(0.5);
        body[i] = create_body(fx, &bd, &cd, 1, NULL);
    }
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_BALL;
    const gy_body_id ends[5][2] = {
        {body[0], post}, {body[1], post}, {body[0], body[1]}, {body[2], body[1]}, {body[2], {0}}};
    gy_joint_id j[5];
    for (int i = 0; i < 5; i++) {
        jd.a = ends[i][0];
        jd.b = ends[i][1];
        jd.anchor = body_position(fx, ends[i][0]);
        j[i] = create_joint(fx, &jd);
    }
    assert_int_equal(counters(fx).joints, 5);
    release_body(fx, body[0]); /* a of two joints */
    assert_int_equal(counters(fx).joints, 3);
    assert_result(fx->be->joint_release(fx->w, j[0]), GY_ERR_STALE_HANDLE);
    assert_result(fx->be->joint_release(fx->w, j[2]), GY_ERR_STALE_HANDLE);
    step_n(fx, 5);
    release_body(fx, post); /* b of one */
    assert_int_equal(counters(fx).joints, 2);
    assert_result(fx->be->joint_release(fx->w, j[1]), GY_ERR_STALE_HANDLE);
    step_n(fx, 5);
    release_body(fx, body[1]); /* b of the last it had */
    assert_int_equal(counters(fx).joints, 1);
    /* The one left still holds its body to the world where it was made. */
    gy_vec3 held = body_position(fx, body[2]);
    step_n(fx, 30);
    assert_near(gy_v3_len(gy_v3_sub(body_position(fx, body[2]), held)), 0.0, 0.01);
    assert_result(fx->be->joint_release(fx->w, j[4]), GY_OK);
    release_body(fx, body[2]);
    expect_empty(fx);
}

static void test_contract_breakable_joint_breaks_above_force_holds_below(void **state)
{
    fixture *fx = *state;
    /* Two 2 kg balls held in place by ball joints at their centres: each joint carries m g =
     * 19.6 N. One breaks at 10 N, the other holds at 40 N. */
    gy_collider_def cd = sphere_def(0.2);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 5, 0));
    bd.mass = 2.0;
    gy_body_id held = create_body(fx, &bd, &cd, 1, NULL);
    bd.pose.position.x = 5;
    gy_body_id dropped = create_body(fx, &bd, &cd, 1, NULL);

    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_BALL;
    jd.breakable = true;
    jd.a = held;
    jd.anchor = gy_v3(0, 5, 0);
    jd.break_force = 40.0;
    jd.user_data = 111;
    gy_joint_id strong = create_joint(fx, &jd);
    jd.a = dropped;
    jd.anchor = gy_v3(5, 5, 0);
    jd.break_force = 10.0;
    jd.user_data = 222;
    gy_joint_id weak = create_joint(fx, &jd);
    assert_int_equal(counters(fx).joints, 2);

    int weak_reports = 0, strong_reports = 0, reported_step = -1;
    for (int i = 0; i < 120; i++) {
        step_n(fx, 1);
        const gy_joint_id *ids = NULL;
        const uint64_t *user = NULL;
        uint32_t n = fx->be->broken_joints(fx->w, &ids, &user);
        for (uint32_t k = 0; k < n; k++) {
            if (ids[k].bits == weak.bits) {
                weak_reports++;
                reported_step = i;
                assert_int_equal(user[k], 222);
            }
            strong_reports += ids[k].bits == strong.bits;
        }
    }
    /* The weak joint breaks, reported once, in the first or second step (it carries the load from
     * the first), and its handle is stale; the strong one holds its ball within 1 cm. */
    assert_int_equal(weak_reports, 1);
    assert_between(reported_step, 0, 1);
    assert_int_equal(strong_reports, 0);
    assert_result(fx->be->joint_release(fx->w, weak), GY_ERR_STALE_HANDLE);
    assert_int_equal(counters(fx).joints, 1);
    assert_between(body_position(fx, dropped).y, -INFINITY, 5.0 - 1.0);
    assert_vec_near(body_position(fx, held), gy_v3(0, 5, 0), 0.01);

    assert_result(fx->be->joint_release(fx->w, strong), GY_OK);
    release_body(fx, held);
    release_body(fx, dropped);
    expect_empty(fx);
}

static void test_contract_fixed_joint_holds_bodies_together(void **state)
{
    fixture *fx = *state;
    gy_collider_def cd = box_def(gy_v3(0.5, 0.5, 0.5));
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 5, 0));
    bd.allow_sleeping = false;
    gy_body_id a = create_body(fx, &bd, &cd, 1, NULL);
    bd.pose.position = gy_v3(1, 5, 0);
    gy_body_id b = create_body(fx, &bd, &cd, 1, NULL);
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_FIXED;
    jd.a = a;
    jd.b = b;
    jd.anchor = gy_v3(0.5, 5, 0);
    gy_joint_id j = create_joint(fx, &jd);

    /* An off-centre kick sets the pair spinning while it falls. */
    assert_result(fx->be->body_add_impulse_at(fx->w, b, gy_v3(0, 100, 50), gy_v3(1.2, 5.1, 0)),
                  GY_OK);
    for (int i = 0; i < 120; i++) {
        step_n(fx, 1);
        gy_pose pa = body_state(fx, a).pose, pb = body_state(fx, b).pose;
        gy_pose rel = gy_pose_mul(gy_pose_inverse(pa), pb);
        /* B stays 1 m along A's X (1 cm) and unrotated relative to A (0.02 rad). */
        assert_vec_near(rel.position, gy_v3(1, 0, 0), 0.01);
        assert_between(quat_angle(rel.rotation), 0.0, 0.02);
    }
    assert_between(gy_v3_len(body_state(fx, a).angular_velocity), 0.2, INFINITY);

    assert_result(fx->be->joint_release(fx->w, j), GY_OK);
    release_body(fx, a);
    release_body(fx, b);
    expect_empty(fx);
}

static void test_contract_fixed_joint_holds_a_heavy_body_without_sagging(void **state)
{
    fixture *fx = *state;
    /* An 8 t, 1 m box welded by a side face's centre to a static one beside it (a cantilever).
     * A weld is rigid: the box should not move. Gravity pulls it g dt² = 2.7 mm out of place in a
     * step before the weld pulls back; the weld must hold it within 5 mm, asleep or awake, for
     * 3 s. */
    gy_body_id top = create_one(fx, GY_MOTION_STATIC, gy_v3(-1, 4.5, 0), box_def(gy_v3(1, 1, 1)));
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 4.5, 0));
    bd.mass = 8000.0;
    gy_collider_def cd = box_def(gy_v3(1, 1, 1));
    gy_body_id box = create_body(fx, &bd, &cd, 1, NULL);
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_FIXED;
    jd.a = box;
    jd.b = top;
    jd.anchor = gy_v3(-0.5, 4.5, 0);
    gy_joint_id j = create_joint(fx, &jd);
    double sag = 0.0;
    for (int i = 0; i < 180; i++) {
        step_n(fx, 1);
        sag = fmax(sag, gy_v3_len(gy_v3_sub(body_position(fx, box), bd.pose.position)));
    }
    assert_between(sag, 0.0, 0.005);
    assert_result(fx->be->joint_release(fx->w, j), GY_OK);
    release_body(fx, box);
    release_body(fx, top);
    expect_empty(fx);
}

static void test_contract_slider_limits_stop_at_limit(void **state)
{
    fixture *fx = *state;
    gy_collider_def cd = box_def(gy_v3(0.5, 0.5, 0.5));
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 5, 0));
    bd.linear_damping = 0.0;
    bd.allow_sleeping = false;
    gy_body_id body = create_body(fx, &bd, &cd, 1, NULL);
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_SLIDER;
    jd.a = body;
    jd.anchor = gy_v3(0, 5, 0);
    jd.axis = gy_v3(1, 0, 0);
    jd.has_limits = true;
    jd.limit_min = -0.2;
    jd.limit_max = 0.5;
    gy_joint_id j = create_joint(fx, &jd);

    const double speed = 1.5, travel = speed * DT;
    assert_result(fx->be->body_set_linear_velocity(fx->w, body, gy_v3(speed, 0, 0)), GY_OK);
    double hi = -INFINITY;
    for (int i = 0; i < 60; i++) {
        step_n(fx, 1);
        hi = fmax(hi, body_position(fx, body).x);
    }
    /* Stops at +0.5 m: overshoot at most one step of travel (+1 cm), settles within 1 cm; the
     * slider holds it against gravity (1 cm). */
    assert_between(hi, 0.5 - 0.01, 0.5 + travel + 0.01);
    gy_vec3 p = body_position(fx, body);
    assert_near(p.x, 0.5, 0.01);
    assert_near(p.y, 5.0, 0.01);
    assert_near(p.z, 0.0, 0.01);

    assert_result(fx->be->body_set_linear_velocity(fx->w, body, gy_v3(-speed, 0, 0)), GY_OK);
    double lo = INFINITY;
    for (int i = 0; i < 60; i++) {
        step_n(fx, 1);
        lo = fmin(lo, body_position(fx, body).x);
    }
    assert_between(lo, -0.2 - travel - 0.01, -0.2 + 0.01);
    assert_near(body_position(fx, body).x, -0.2, 0.01);

    assert_result(fx->be->joint_release(fx->w, j), GY_OK);
    release_body(fx, body);
    expect_empty(fx);
}

static void test_contract_slider_hitting_its_limit_fast_stops_and_stays(void **state)
{
    fixture *fx = *state;
    /* A slider driven into its limit at 10 m/s (17 cm a step) stops there for good: an
     * inelastic stop. After the step it arrives, for 2 s, the body stays within 5 mm of the
     * limit (it may land up to a few mm past it in the step of the hit) and, once the stop has
     * had the step after the landing to take the approach speed out, moves under 5 mm/s (no
     * rebound, no creeping back off). */
    gy_collider_def cd = box_def(gy_v3(0.5, 0.5, 0.5));
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 5, 0));
    bd.linear_damping = 0.0;
    bd.allow_sleeping = false;
    gy_body_id body = create_body(fx, &bd, &cd, 1, NULL);
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_SLIDER;
    jd.a = body;
    jd.anchor = gy_v3(0, 5, 0);
    jd.axis = gy_v3(1, 0, 0);
    jd.has_limits = true;
    jd.limit_min = -0.2;
    jd.limit_max = 0.42;
    gy_joint_id j = create_joint(fx, &jd);
    assert_result(fx->be->body_set_linear_velocity(fx->w, body, gy_v3(10, 0, 0)), GY_OK);
    int arrived = -1;
    for (int i = 0; i < 160; i++) {
        step_n(fx, 1);
        gy_body_state s = body_state(fx, body);
        if (arrived < 0 && s.pose.position.x > 0.42 - 0.005)
            arrived = i;
        bool away = fabs(s.pose.position.x - 0.42) > 0.005;
        bool moving = i > arrived + 1 && fabs(s.linear_velocity.x) > 0.005;
        if (arrived >= 0 && (away || moving))
            fail_msg("step %d (%d after arriving): x %.4f m, v %.4f m/s; expected 0.42 m, at rest",
                     i, i - arrived, s.pose.position.x, s.linear_velocity.x);
    }
    assert_true(arrived >= 0);
    assert_result(fx->be->joint_release(fx->w, j), GY_OK);
    release_body(fx, body);
    expect_empty(fx);
}

static void test_contract_hinge_limits_stop_at_limit(void **state)
{
    fixture *fx = *state;
    /* Two 1 m rods start horizontal, hinged at one end about +Z with limits [−0.5, 0.5] rad.
     * Gravity swings the one pointing +X down (negative angle) onto limit_min and the one pointing
     * −X down (positive angle) onto limit_max, and then holds each against its stop. */
    const gy_vec3 axis = gy_v3(0, 0, 1);
    const double lo = -0.5, hi = 0.5;
    gy_collider_def cd = box_def(gy_v3(1, 0.1, 0.1));
    gy_body_id rods[2];
    gy_joint_id joints[2];
    const gy_vec3 pivots[2] = {{0, 5, 0}, {5, 5, 0}};
    for (int i = 0; i < 2; i++) {
        double side = i == 0 ? 1.0 : -1.0;
        gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3_add(pivots[i], gy_v3(0.5 * side, 0, 0)));
        rods[i] = create_body(fx, &bd, &cd, 1, NULL);
        gy_joint_def jd = gy_default_joint_def();
        jd.type = GY_JOINT_HINGE;
        jd.a = rods[i];
        jd.anchor = pivots[i];
        jd.axis = axis;
        jd.has_limits = true;
        jd.limit_min = lo;
        jd.limit_max = hi;
        joints[i] = create_joint(fx, &jd);
    }
    double extreme[2] = {0.0, 0.0};
    for (int step = 0; step < 120; step++) {
        step_n(fx, 1);
        for (int i = 0; i < 2; i++) {
            double a = quat_twist(body_state(fx, rods[i]).pose.rotation, axis);
            extreme[i] = i == 0 ? fmin(extreme[i], a) : fmax(extreme[i], a);
        }
    }
    /* Angular speed on reaching the stop: ½ I ω² = m g (L/2) sin 0.5 with I about the pivot. */
    const double inertia = (1.0 + 0.01) / 12.0 + 0.25; /* per kg */
    const double travel = sqrt(2.0 * GRAVITY * 0.5 * sin(0.5) / inertia) * DT;
    for (int i = 0; i < 2; i++) {
        double limit = i == 0 ? lo : hi, sign = i == 0 ? -1.0 : 1.0;
        double angle = quat_twist(body_state(fx, rods[i]).pose.rotation, axis);
        print_message("rod %d: extreme %.4f, final %.4f rad\n", i, extreme[i], angle);
        /* Overshoot at most one step's rotation at impact (+0.01 rad); at rest on the stop within
         * 0.01 rad; the pivot end stays on the pivot (1 cm). */
        assert_between(sign * extreme[i], sign * limit - 0.01, sign * limit + travel + 0.01);
        assert_near(angle, limit, 0.01);
        gy_vec3 end = gy_pose_apply(body_state(fx, rods[i]).pose, gy_v3(0.5 * sign, 0, 0));
        assert_vec_near(end, pivots[i], 0.01);
    }

    for (int i = 0; i < 2; i++) {
        assert_result(fx->be->joint_release(fx->w, joints[i]), GY_OK);
        release_body(fx, rods[i]);
    }
    expect_empty(fx);
}

static void test_contract_distance_joint_keeps_distance(void **state)
{
    fixture *fx = *state;
    gy_collider_def cd = sphere_def(0.1);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(2, 5, 0));
    bd.linear_velocity = gy_v3(0, 0, 3);
    bd.allow_sleeping = false;
    gy_body_id swing = create_body(fx, &bd, &cd, 1, NULL);
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_DISTANCE;
    jd.a = swing;
    jd.anchor = gy_v3(0, 5, 0);
    jd.distance = -1.0; /* the creation distance, 2 m */
    gy_joint_id j = create_joint(fx, &jd);

    for (int i = 0; i < 120; i++) {
        step_n(fx, 1);
        /* A rod, not a rope: 2 m ± 2 cm at every step while it swings under gravity. */
        gy_vec3 arm = gy_v3_sub(body_position(fx, swing), jd.anchor);
        assert_near(gy_v3_len(arm), 2.0, 0.02);
        /* Its state is that length and the rate it grows at (the ball's velocity along the
         * arm), to rounding. */
        gy_joint_state js;
        assert_result(fx->be->joint_get_state(fx->w, j, &js), GY_OK);
        assert_near(js.position, gy_v3_len(arm), 1e-9);
        double rate = gy_v3_dot(body_state(fx, swing).linear_velocity, arm) / gy_v3_len(arm);
        assert_near(js.velocity, rate, 1e-9);
    }
    assert_result(fx->be->joint_release(fx->w, j), GY_OK);

    /* Between two bodies with an explicit distance: B (weightless) is pulled from 2 m to 1.5 m. */
    bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 5, 0));
    bd.gravity_factor = 0.0;
    bd.allow_sleeping = false;
    gy_body_id other = create_body(fx, &bd, &cd, 1, NULL);
    assert_result(fx->be->body_set_pose(fx->w, swing, pose_at(gy_v3(2, 5, 0))), GY_OK);
    assert_result(fx->be->body_set_linear_velocity(fx->w, swing, gy_v3(0, 0, 0)), GY_OK);
    jd.a = swing;
    jd.b = other;
    jd.anchor = gy_v3(0, 5, 0);
    jd.distance = 1.5;
    j = create_joint(fx, &jd);
    assert_result(fx->be->set_gravity(fx->w, gy_v3(0, 0, 0)), GY_OK);
    for (int i = 0; i < 120; i++) {
        step_n(fx, 1);
        /* Measured between a's origin and the anchor b carries (its origin here). */
        gy_vec3 between = gy_v3_sub(body_position(fx, swing), body_position(fx, other));
        gy_vec3 v =
            gy_v3_sub(body_state(fx, swing).linear_velocity, body_state(fx, other).linear_velocity);
        gy_joint_state js;
        assert_result(fx->be->joint_get_state(fx->w, j, &js), GY_OK);
        assert_near(js.position, gy_v3_len(between), 1e-9);
        assert_near(js.velocity, gy_v3_dot(v, between) / gy_v3_len(between), 1e-9);
    }
    double d = gy_v3_len(gy_v3_sub(body_position(fx, swing), body_position(fx, other)));
    assert_near(d, 1.5, 0.03);

    assert_result(fx->be->joint_release(fx->w, j), GY_OK);
    release_body(fx, swing);
    release_body(fx, other);
    expect_empty(fx);
}

static void test_contract_ccd_sphere_does_not_tunnel_thin_wall(void **state)
{
    fixture *fx = *state;
    gy_body_def wd = body_at(GY_MOTION_STATIC, gy_v3(5, 0, 0));
    gy_collider_def wc = box_def(gy_v3(0.05, 2, 2));
    gy_body_id wall = create_body(fx, &wd, &wc, 1, NULL);
    /* A 5 cm sphere (radius 2.5 cm) at 100 m/s moves 1.67 m per step. */
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0, 0));
    bd.linear_velocity = gy_v3(100, 0, 0);
    bd.continuous = true;
    bd.gravity_factor = 0.0;
    gy_collider_def cd = sphere_def(0.025);
    gy_body_id bullet = create_body(fx, &bd, &cd, 1, NULL);

    for (int i = 0; i < 30; i++) {
        step_n(fx, 1);
        /* Its centre never gets past the middle of the 5 cm wall at x 5. */
        assert_between(body_position(fx, bullet).x, -INFINITY, 5.0);
    }
    assert_between(body_position(fx, bullet).x, -INFINITY, 5.0 - 0.025 + 0.01);

    release_body(fx, bullet);
    release_body(fx, wall);
    expect_empty(fx);
}

static void test_contract_ccd_hit_is_reported_as_a_contact(void **state)
{
    fixture *fx = *state;
    /* The 100 m/s bullet of the tunnelling test, stopped by the thin wall on the step it would
     * have passed it: that step's report names the pair, with the wall's normal (−X from the
     * bullet's side) and the impulse that stopped it (m v = 6.5 N·s for a 2.5 cm radius sphere of
     * 1000 kg/m³, within 10 %: the discrete solver may take part of it on the next step). */
    gy_body_def wd = body_at(GY_MOTION_STATIC, gy_v3(5, 0, 0));
    gy_collider_def wc = box_def(gy_v3(0.05, 2, 2));
    gy_body_id wall = create_body(fx, &wd, &wc, 1, NULL);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0, 0));
    bd.linear_velocity = gy_v3(100, 0, 0);
    bd.linear_damping = 0.0;
    bd.continuous = true;
    bd.gravity_factor = 0.0;
    gy_collider_def cd = sphere_def(0.025);
    gy_body_id bullet = create_body(fx, &bd, &cd, 1, NULL);
    const double m = 1000.0 * 4.0 / 3.0 * GY_PI * 0.025 * 0.025 * 0.025;
    double impulse = 0.0;
    bool seen = false;
    for (int i = 0; i < 10; i++) {
        step_n(fx, 1);
        const gy_contact *c = find_contact(fx, bullet, wall);
        if (c != NULL) {
            seen = true;
            impulse += c->normal_impulse;
        }
    }
    assert_true(seen);
    assert_near(impulse, m * 100.0, 0.1 * m * 100.0);
    release_body(fx, bullet);
    release_body(fx, wall);
    expect_empty(fx);
}

static void test_contract_ccd_hit_hands_momentum_to_the_struck_body(void **state)
{
    fixture *fx = *state;
    assert_result(fx->be->set_gravity(fx->w, gy_v3(0, 0, 0)), GY_OK);
    /* A 10 cm continuous ball at 100 m/s (1.67 m a step) strikes an equal ball at rest, both
     * restitution 1: head-on, the struck ball leaves at 100 m/s and the striker stops. Momentum
     * is conserved within 3 % (the discrete solver may take part of the hit a step later), and
     * the hit is reported. */
    gy_collider_def cd = sphere_def(0.05);
    cd.material.restitution = 1.0;
    gy_body_def rd = body_at(GY_MOTION_DYNAMIC, gy_v3(5, 0, 0));
    rd.linear_damping = 0.0;
    rd.angular_damping = 0.0;
    gy_body_id rest = create_body(fx, &rd, &cd, 1, NULL);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0, 0));
    bd.linear_velocity = gy_v3(100, 0, 0);
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    bd.continuous = true;
    gy_body_id striker = create_body(fx, &bd, &cd, 1, NULL);
    bool seen = false;
    for (int i = 0; i < 6; i++) {
        step_n(fx, 1);
        seen = seen || find_contact(fx, striker, rest) != NULL;
    }
    assert_true(seen);
    double vs = body_state(fx, striker).linear_velocity.x;
    double vr = body_state(fx, rest).linear_velocity.x;
    assert_near(vs + vr, 100.0, 3.0);
    assert_near(vr, 100.0, 3.0);
    release_body(fx, striker);
    release_body(fx, rest);
    expect_empty(fx);
}

static void test_contract_ccd_sphere_rebounds_off_bouncy_wall(void **state)
{
    fixture *fx = *state;
    gy_body_def wd = body_at(GY_MOTION_STATIC, gy_v3(5, 0, 0));
    gy_collider_def wc = box_def(gy_v3(0.05, 2, 2));
    wc.material.restitution = 0.9;
    gy_body_id wall = create_body(fx, &wd, &wc, 1, NULL);
    /* The same 100 m/s bullet as above (restitution 0, combined by max with the wall's 0.9). */
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0, 0));
    bd.linear_velocity = gy_v3(100, 0, 0);
    bd.linear_damping = 0.0;
    bd.continuous = true;
    bd.gravity_factor = 0.0;
    gy_collider_def cd = sphere_def(0.025);
    gy_body_id bullet = create_body(fx, &bd, &cd, 1, NULL);

    step_n(fx, 10);
    /* It comes back at e × 100 = 90 m/s, within 10%, on the near side of the wall. */
    gy_body_state s = body_state(fx, bullet);
    assert_near(s.linear_velocity.x, -90.0, 9.0);
    assert_between(s.pose.position.x, -INFINITY, 5.0);

    release_body(fx, bullet);
    release_body(fx, wall);
    expect_empty(fx);
}

static void test_contract_compound_hangs_with_com_below_pivot(void **state)
{
    fixture *fx = *state;
    /* A dumbbell: spheres at local x −0.5 (density 9) and +0.5 (density 1), equal volumes, so the
     * centre of mass is at local x −0.4. Hung from a ball joint at the body origin it swings until
     * the centre of mass is straight below the pivot. */
    gy_collider_def cd[2] = {sphere_def(0.2), sphere_def(0.2)};
    cd[0].local_pose.position = gy_v3(-0.5, 0, 0);
    cd[0].density = 9.0;
    cd[1].local_pose.position = gy_v3(0.5, 0, 0);
    cd[1].density = 1.0;
    const gy_vec3 pivot = gy_v3(0, 5, 0);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, pivot);
    bd.angular_damping = 2.0;
    bd.linear_damping = 0.5;
    gy_body_id dumbbell = create_body(fx, &bd, cd, 2, NULL);
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_BALL;
    jd.a = dumbbell;
    jd.anchor = pivot;
    gy_joint_id j = create_joint(fx, &jd);

    step_n(fx, 600);
    gy_pose p = body_state(fx, dumbbell).pose;
    /* COM 0.4 m straight below the pivot (2 cm); the dense end 0.5 m below (3 cm). Equal weights
     * would leave it horizontal. */
    assert_vec_near(gy_pose_apply(p, gy_v3(-0.4, 0, 0)), gy_v3(0, 4.6, 0), 0.02);
    assert_vec_near(gy_pose_apply(p, gy_v3(-0.5, 0, 0)), gy_v3(0, 4.5, 0), 0.03);

    assert_result(fx->be->joint_release(fx->w, j), GY_OK);
    release_body(fx, dumbbell);
    expect_empty(fx);
}

/* ---- mass, locks, kinematics -------------------------------------------------------------------
 */

static void test_contract_mass_from_density_and_volume(void **state)
{
    fixture *fx = *state;
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0, 0));
    bd.gravity_factor = 0.0;
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;

    /* A 1 m cube of density 2: 2000 kg. J = 100 N·s gives Δv = 0.05 m/s. */
    gy_collider_def cube = box_def(gy_v3(1, 1, 1));
    cube.density = 2.0;
    gy_body_id b = create_body(fx, &bd, &cube, 1, NULL);
    assert_result(fx->be->body_add_impulse(fx->w, b, gy_v3(100, 0, 0)), GY_OK);
    assert_vec_near(body_state(fx, b).linear_velocity, gy_v3(100.0 / 2000.0, 0, 0), 1e-9);
    /* Off-centre at +0.5 Y: also ω = I⁻¹ (r × J) with I = m/6 = 333.3 kg·m² → ω_z = −0.15. */
    assert_result(fx->be->body_add_impulse_at(fx->w, b, gy_v3(100, 0, 0), gy_v3(0, 0.5, 0)), GY_OK);
    gy_body_state s = body_state(fx, b);
    assert_vec_near(s.linear_velocity, gy_v3(0.1, 0, 0), 1e-9);
    assert_vec_near(s.angular_velocity, gy_v3(0, 0, -0.15), 1e-9);
    release_body(fx, b);

    /* A sphere of radius 0.5, density 1: 1000 × 4/3 π 0.125 = 523.6 kg. */
    gy_collider_def ball = sphere_def(0.5);
    b = create_body(fx, &bd, &ball, 1, NULL);
    assert_result(fx->be->body_add_impulse(fx->w, b, gy_v3(0, 0, 100)), GY_OK);
    double m = 1000.0 * 4.0 / 3.0 * GY_PI * 0.125;
    assert_vec_near(body_state(fx, b).linear_velocity, gy_v3(0, 0, 100.0 / m), 1e-9);
    release_body(fx, b);

    /* A compound of two 1 m cubes at x −1 (density 3) and +1 (density 1): 4000 kg, COM at x −0.5,
     * I_yy = Σ m/6 + m d² = 3666.7 kg·m². An impulse through the COM only translates it; the same
     * impulse at the body origin (0.5 m from the COM) also turns it: ω_y = −200 / 3666.7. */
    gy_collider_def pair[2] = {box_def(gy_v3(1, 1, 1)), box_def(gy_v3(1, 1, 1))};
    pair[0].local_pose.position = gy_v3(-1, 0, 0);
    pair[0].density = 3.0;
    pair[1].local_pose.position = gy_v3(1, 0, 0);
    b = create_body(fx, &bd, pair, 2, NULL);
    assert_result(fx->be->body_add_impulse_at(fx->w, b, gy_v3(0, 0, 400), gy_v3(-0.5, 0, 0)),
                  GY_OK);
    s = body_state(fx, b);
    assert_vec_near(s.linear_velocity, gy_v3(0, 0, 0.1), 1e-9);
    assert_vec_near(s.angular_velocity, gy_v3(0, 0, 0), 1e-9);
    assert_result(fx->be->body_add_impulse_at(fx->w, b, gy_v3(0, 0, 400), gy_v3(0, 0, 0)), GY_OK);
    s = body_state(fx, b);
    assert_vec_near(s.linear_velocity, gy_v3(0, 0, 0.2), 1e-9);
    assert_vec_near(s.angular_velocity, gy_v3(0, -200.0 / (11000.0 / 3.0), 0), 1e-9);
    release_body(fx, b);

    /* The same compound with mass = 8 kg: the total is scaled, Δv = J / 8. */
    bd.mass = 8.0;
    b = create_body(fx, &bd, pair, 2, NULL);
    assert_result(fx->be->body_add_impulse_at(fx->w, b, gy_v3(0, 0, 4), gy_v3(-0.5, 0, 0)), GY_OK);
    s = body_state(fx, b);
    assert_vec_near(s.linear_velocity, gy_v3(0, 0, 0.5), 1e-9);
    assert_vec_near(s.angular_velocity, gy_v3(0, 0, 0), 1e-9);
    release_body(fx, b);

    /* Expert override: 10 kg, COM at local (0, 0.2, 0), inertia diag(1, 2, 3). J = (0,0,10) at
     * 1 m above the COM: Δv_z = 1, ω = I⁻¹ (r × J) = (10, 0, 0). */
    bd.mass = 10.0;
    bd.has_mass_properties = true;
    bd.mass_properties.center_of_mass = gy_v3(0, 0.2, 0);
    bd.mass_properties.inertia = gy_mat3_diag(1, 2, 3);
    b = create_body(fx, &bd, &cube, 1, NULL);
    assert_result(fx->be->body_add_impulse_at(fx->w, b, gy_v3(0, 0, 10), gy_v3(0, 1.2, 0)), GY_OK);
    s = body_state(fx, b);
    assert_vec_near(s.linear_velocity, gy_v3(0, 0, 1), 1e-9);
    assert_vec_near(s.angular_velocity, gy_v3(10, 0, 0), 1e-9);
    /* The pose stays the body origin: it has not moved before a step. */
    assert_vec_near(s.pose.position, gy_v3(0, 0, 0), 1e-12);
    release_body(fx, b);
    expect_empty(fx);
}

static void test_contract_axis_locks_hold(void **state)
{
    fixture *fx = *state;
    gy_collider_def cd = sphere_def(0.5);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 50, 0));
    bd.mass = 1.0;
    bd.linear_damping = 0.0;
    bd.lock_linear[0] = true;
    gy_body_id slider = create_body(fx, &bd, &cd, 1, NULL);
    bd = body_at(GY_MOTION_DYNAMIC, gy_v3(10, 50, 0));
    bd.mass = 1.0;
    bd.angular_damping = 0.0;
    bd.lock_angular[1] = true;
    gy_body_id spinner = create_body(fx, &bd, &cd, 1, NULL);

    assert_result(fx->be->body_add_impulse(fx->w, slider, gy_v3(3, 0, 2)), GY_OK);
    for (int i = 0; i < 60; i++) {
        assert_result(fx->be->body_add_force(fx->w, slider, gy_v3(50, 0, 0)), GY_OK);
        assert_result(fx->be->body_add_torque(fx->w, spinner, gy_v3(0.1, 0.1, 0)), GY_OK);
        step_n(fx, 1);
    }
    gy_body_state s = body_state(fx, slider);
    /* Locked X stays put (1 mm); Z moves at the 2 m/s it was given (1 cm); Y falls freely. */
    assert_near(s.pose.position.x, 0.0, 1e-3);
    assert_near(s.linear_velocity.x, 0.0, 1e-3);
    assert_near(s.pose.position.z, 2.0, 0.01);
    assert_near(s.linear_velocity.y, -GRAVITY, 0.01);
    /* Locked rotation about Y: none (1e-3 rad/s) while the X torque spins it. */
    gy_body_state t = body_state(fx, spinner);
    assert_near(t.angular_velocity.y, 0.0, 1e-3);
    assert_between(t.angular_velocity.x, 0.1, INFINITY);

    /* Put elsewhere, it holds its locked X there: the held coordinates are the new pose's. */
    gy_pose moved = {gy_v3(3, 50, 0), gy_quat_identity()};
    assert_result(fx->be->body_set_pose(fx->w, slider, moved), GY_OK);
    assert_result(fx->be->body_add_impulse(fx->w, slider, gy_v3(3, 0, 0)), GY_OK);
    for (int i = 0; i < 30; i++) {
        assert_result(fx->be->body_add_force(fx->w, slider, gy_v3(50, 0, 0)), GY_OK);
        step_n(fx, 1);
    }
    assert_near(body_state(fx, slider).pose.position.x, 3.0, 1e-3);

    release_body(fx, slider);
    release_body(fx, spinner);
    expect_empty(fx);
}

static void test_contract_translation_locked_box_keeps_spinning_on_a_floor_it_overlaps(void **state)
{
    fixture *fx = *state;
    /* A 1 m box locked in translation, created 1 cm, 3 cm or 10 cm into a friction-1 floor and
     * spinning at 2 rad/s about Y. The locks hold it where it is and carry its weight; the floor
     * can neither move it nor be pushed out of, so it takes no load and its friction brakes
     * nothing: after 1 s the box still spins at 2 rad/s (1 %) where it was (1 mm), and the pair is
     * reported without impulse. */
    gy_body_id ground = create_ground_with_friction(fx, 1.0);
    const double depths[] = {0.01, 0.03, 0.1};
    for (int i = 0; i < 4; i++) {
        /* The last one tumbles about X instead: its corners dip into the floor and out, which
         * the pair's rows could only meet through its spin, so they are left out as well. */
        gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0.5 - depths[i % 3], 0));
        bd.linear_damping = 0.0;
        bd.angular_damping = 0.0;
        bd.allow_sleeping = false;
        bd.angular_velocity = i < 3 ? gy_v3(0, 2, 0) : gy_v3(2, 0, 0);
        bd.lock_linear[0] = bd.lock_linear[1] = bd.lock_linear[2] = true;
        gy_collider_def bc = box_def(gy_v3(1, 1, 1));
        bc.material.friction = 1.0;
        gy_body_id box = create_body(fx, &bd, &bc, 1, NULL);
        step_n(fx, 60);
        gy_body_state s = body_state(fx, box);
        const gy_contact *c = find_contact(fx, box, ground);
        if (fabs(gy_v3_len(s.angular_velocity) - 2.0) > 0.02 ||
            gy_v3_len(gy_v3_sub(s.pose.position, bd.pose.position)) > 0.001 || c == NULL ||
            c->normal_impulse != 0.0)
            fail_msg(
                "%.0f cm deep (%s): spin %.4f rad/s, moved %.2g m, contact %s, impulse %.4g N s",
                depths[i % 3] * 100.0, i < 3 ? "about Y" : "tumbling about X",
                gy_v3_len(s.angular_velocity),
                gy_v3_len(gy_v3_sub(s.pose.position, bd.pose.position)),
                c != NULL ? "reported" : "missing", c != NULL ? c->normal_impulse : 0.0);
        release_body(fx, box);
    }
    release_body(fx, ground);
    expect_empty(fx);
}

static void test_contract_axis_locks_take_an_impulse_as_physics_does(void **state)
{
    fixture *fx = *state;
    assert_result(fx->be->set_gravity(fx->w, gy_v3(0, 0, 0)), GY_OK);
    /* A 1 × 2 × 3 m box of 6 kg (principal axes along the world's) struck off-centre, for each of
     * the 63 combinations of locked axes. The locks' reactions act through the centre of mass,
     * so the impulse J at arm r gives v = J/m and ω_k = (r × J)_k / I_k on the free axes, zero on
     * the locked ones, whatever else is locked. Read after one step, in which the box turns by
     * ω·h and a free box's ω wanders by up to about |ω|² h (1.5e-3 rad/s here): within 5e-3;
     * taking the moment of the impulse without its locked part is off by 0.1 and more. */
    const double m = 6.0, ix = m / 12.0 * (4 + 9), iy = m / 12.0 * (1 + 9), iz = m / 12.0 * (1 + 4);
    const gy_vec3 j = gy_v3(3, -2, 5), arm = gy_v3(0.4, 0.3, -0.2);
    const gy_vec3 torque = gy_v3_cross(arm, j);
    const double want_v[3] = {j.x / m, j.y / m, j.z / m};
    const double want_w[3] = {torque.x / ix, torque.y / iy, torque.z / iz};
    for (int mask = 1; mask < 64; mask++) {
        gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0, 0));
        bd.mass = m;
        bd.linear_damping = 0.0;
        bd.angular_damping = 0.0;
        for (int k = 0; k < 3; k++) {
            bd.lock_linear[k] = (mask >> k) & 1;
            bd.lock_angular[k] = (mask >> (k + 3)) & 1;
        }
        gy_collider_def cd = box_def(gy_v3(1, 2, 3));
        gy_body_id b = create_body(fx, &bd, &cd, 1, NULL);
        assert_result(fx->be->body_add_impulse_at(fx->w, b, j, arm), GY_OK);
        step_n(fx, 1);
        gy_body_state s = body_state(fx, b);
        const double v[3] = {s.linear_velocity.x, s.linear_velocity.y, s.linear_velocity.z};
        const double w[3] = {s.angular_velocity.x, s.angular_velocity.y, s.angular_velocity.z};
        for (int k = 0; k < 3; k++) {
            double ev = bd.lock_linear[k] ? 0.0 : want_v[k];
            double ew = bd.lock_angular[k] ? 0.0 : want_w[k];
            if (fabs(v[k] - ev) > 1e-6 || fabs(w[k] - ew) > 5e-3)
                fail_msg("locks %02o, axis %d: v %.6f (want %.6f), ω %.6f (want %.6f)", mask, k,
                         v[k], ev, w[k], ew);
        }
        release_body(fx, b);
    }
    expect_empty(fx);
}

static void test_contract_axis_lock_holds_against_contacts(void **state)
{
    fixture *fx = *state;
    /* A 30° ramp that falls away along +X, slippery, and a box locked on X resting on it: the
     * contact pushes it down the slope, i.e. along X, every step; it must stay where it was put
     * (1 mm over 2 s) instead of creeping down. */
    gy_quat q = gy_quat_axis_angle(gy_v3(0, 0, 1), -30.0 * GY_PI / 180.0);
    gy_body_def rd = body_at(GY_MOTION_STATIC, gy_v3(0, 0, 0));
    rd.pose.rotation = q;
    gy_collider_def rc = box_def(gy_v3(12, 0.5, 4));
    rc.material.friction = 0.05;
    gy_body_id ramp = create_body(fx, &rd, &rc, 1, NULL);
    gy_vec3 normal = gy_quat_rotate(q, gy_v3(0, 1, 0));
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3_scale(normal, 0.5));
    bd.pose.rotation = q;
    bd.lock_linear[0] = true;
    bd.allow_sleeping = false;
    gy_collider_def bc = box_def(gy_v3(0.5, 0.5, 0.5));
    bc.material.friction = 0.05;
    gy_body_id box = create_body(fx, &bd, &bc, 1, NULL);
    double x0 = bd.pose.position.x;
    step_n(fx, 120);
    gy_body_state s = body_state(fx, box);
    assert_near(s.pose.position.x, x0, 1e-3);
    assert_near(s.linear_velocity.x, 0.0, 1e-3);
    release_body(fx, box);
    release_body(fx, ramp);
    expect_empty(fx);
}

static void test_contract_kinematic_reaches_target_in_one_step(void **state)
{
    fixture *fx = *state;
    gy_body_def bd = body_at(GY_MOTION_KINEMATIC, gy_v3(0, 0, 0));
    gy_collider_def cd = box_def(gy_v3(1, 1, 1));
    gy_body_id k = create_body(fx, &bd, &cd, 1, NULL);

    gy_pose target = pose_at(gy_v3(1, 2, 3));
    target.rotation = gy_quat_axis_angle(gy_v3(0, 1, 0), 0.5);
    for (int round = 0; round < 2; round++) {
        assert_result(fx->be->body_move_kinematic(fx->w, k, target, DT), GY_OK);
        step_n(fx, 1);
        gy_body_state s = body_state(fx, k);
        /* At the target after one step: 1 µm, and the rotations agree to 1e-6. */
        assert_vec_near(s.pose.position, target.position, 1e-6);
        double dot = s.pose.rotation.x * target.rotation.x + s.pose.rotation.y * target.rotation.y +
                     s.pose.rotation.z * target.rotation.z + s.pose.rotation.w * target.rotation.w;
        assert_near(fabs(dot), 1.0, 1e-6);
        /* Second target: somewhere else, turned about another axis. */
        target = pose_at(gy_v3(-2, 0.5, 1));
        target.rotation = gy_quat_axis_angle(gy_v3(1, 0, 0), -0.3);
    }
    /* Dynamic bodies are moved by forces, not targets. */
    gy_body_def dd = body_at(GY_MOTION_DYNAMIC, gy_v3(5, 0, 0));
    gy_body_id d = create_body(fx, &dd, &cd, 1, NULL);
    assert_result(fx->be->body_move_kinematic(fx->w, d, target, DT), GY_ERR_INVALID_MOTION);

    release_body(fx, k);
    release_body(fx, d);
    expect_empty(fx);
}

static void test_contract_kinematic_keeps_velocity(void **state)
{
    fixture *fx = *state;
    gy_body_def bd = body_at(GY_MOTION_KINEMATIC, gy_v3(0, 5, 0));
    bd.linear_velocity = gy_v3(1, 0, 0);
    bd.angular_velocity = gy_v3(0, 1, 0);
    gy_collider_def cd = box_def(gy_v3(1, 1, 1));
    gy_body_id k = create_body(fx, &bd, &cd, 1, NULL);

    step_n(fx, 60);
    gy_body_state s = body_state(fx, k);
    /* 1 s at 1 m/s and 1 rad/s: no gravity, no damping, velocity unchanged (1e-6). */
    assert_vec_near(s.pose.position, gy_v3(1, 5, 0), 1e-6);
    assert_vec_near(s.linear_velocity, gy_v3(1, 0, 0), 1e-9);
    assert_vec_near(s.angular_velocity, gy_v3(0, 1, 0), 1e-9);
    assert_near(quat_twist(s.pose.rotation, gy_v3(0, 1, 0)), 1.0, 1e-3);
    assert_true(s.awake);

    /* Velocity writes work; forces are for dynamic bodies only. */
    assert_result(fx->be->body_set_linear_velocity(fx->w, k, gy_v3(0, 0, -2)), GY_OK);
    step_n(fx, 30);
    assert_vec_near(body_position(fx, k), gy_v3(1, 5, -1), 1e-6);
    assert_result(fx->be->body_add_force(fx->w, k, gy_v3(1, 0, 0)), GY_ERR_INVALID_MOTION);
    assert_result(fx->be->body_add_impulse(fx->w, k, gy_v3(1, 0, 0)), GY_ERR_INVALID_MOTION);

    release_body(fx, k);
    expect_empty(fx);
}

static void test_contract_point_velocity_of_rotating_body(void **state)
{
    fixture *fx = *state;
    gy_collider_def cd = box_def(gy_v3(1, 1, 1));
    gy_body_def bd = body_at(GY_MOTION_KINEMATIC, gy_v3(0, 0, 0));
    bd.linear_velocity = gy_v3(1, 0, 0);
    bd.angular_velocity = gy_v3(0, 2, 0);
    gy_body_id k = create_body(fx, &bd, &cd, 1, NULL);
    gy_vec3 v;
    /* v + ω × r: at (1,0,0) → (1,0,−2); at (0,0,1) → (3,0,0). */
    assert_result(fx->be->body_point_velocity(fx->w, k, gy_v3(1, 0, 0), &v), GY_OK);
    assert_vec_near(v, gy_v3(1, 0, -2), 1e-9);
    assert_result(fx->be->body_point_velocity(fx->w, k, gy_v3(0, 0, 1), &v), GY_OK);
    assert_vec_near(v, gy_v3(3, 0, 0), 1e-9);

    /* A dynamic body whose only collider sits at local (1,0,0) has its COM there: spinning with
     * the COM at rest, the COM point is still and the body origin moves at ω × (−1,0,0). */
    gy_collider_def off = sphere_def(0.5);
    off.local_pose.position = gy_v3(1, 0, 0);
    gy_body_def dd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0, 0));
    dd.gravity_factor = 0.0;
    gy_body_id d = create_body(fx, &dd, &off, 1, NULL);
    assert_result(fx->be->body_set_angular_velocity(fx->w, d, gy_v3(0, 2, 0)), GY_OK);
    assert_result(fx->be->body_point_velocity(fx->w, d, gy_v3(1, 0, 0), &v), GY_OK);
    assert_vec_near(v, gy_v3(0, 0, 0), 1e-9);
    assert_result(fx->be->body_point_velocity(fx->w, d, gy_v3(0, 0, 0), &v), GY_OK);
    assert_vec_near(v, gy_v3(0, 0, 2), 1e-9);

    gy_body_id ground = create_ground(fx);
    assert_result(fx->be->body_point_velocity(fx->w, ground, gy_v3(3, 0, 1), &v), GY_OK);
    assert_vec_near(v, gy_v3(0, 0, 0), 0.0);

    release_body(fx, k);
    release_body(fx, d);
    release_body(fx, ground);
    expect_empty(fx);
}

/* ---- contacts and counters ---------------------------------------------------------------------
 */

/* More pairs than a report's first block holds (64): every resting ball is reported once per
 * step with its own weight, awake and while carried over asleep, and a release drops exactly its
 * pairs. */
static void test_contract_resting_box_keeps_its_contact(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx);
    /* A 1 m box created exactly resting on the ground: it touches from the start and never
     * leaves, so the pair is reported after every step. Settling moves it by far less than a
     * millimetre, which must not open and close the contact. */
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0.5, 0));
    gy_collider_def cd = box_def(gy_v3(1, 1, 1));
    gy_body_id box = create_body(fx, &bd, &cd, 1, NULL);
    for (int i = 1; i <= 60; i++) {
        step_n(fx, 1);
        if (find_contact(fx, ground, box) == NULL)
            fail_msg("step %d: the resting box's contact is not reported", i);
    }
    assert_near(body_position(fx, box).y, 0.5, 0.005);
    release_body(fx, box);
    release_body(fx, ground);
    expect_empty(fx);
}

/* The resting-pair hysteresis is one rule on every adapter: a box leaving the ground slowly
 * (0.4 mm a step, no gravity) stays reported while the gap is under a millimetre, although no
 * solve pushes on it any more, and leaves the report once the gap is past it. */
static void test_contract_resting_pair_parting_under_a_millimetre_stays_reported(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0.5, 0));
    bd.gravity_factor = 0.0;
    bd.linear_damping = 0.0;
    bd.linear_velocity = gy_v3(0, 0.024, 0);
    gy_collider_def cd = box_def(gy_v3(1, 1, 1));
    gy_body_id box = create_body(fx, &bd, &cd, 1, NULL);
    step_n(fx, 1);
    assert_non_null(find_contact(fx, ground, box)); /* touching at the start */
    step_n(fx, 1);
    assert_near(body_position(fx, box).y, 0.5008, 1e-5);
    if (find_contact(fx, ground, box) == NULL)
        fail_msg("0.8 mm apart, the resting pair is no longer reported");
    step_n(fx, 2);
    assert_near(body_position(fx, box).y, 0.5016, 1e-5);
    if (find_contact(fx, ground, box) != NULL)
        fail_msg("1.6 mm apart, the pair is still reported");
    release_body(fx, box);
    release_body(fx, ground);
    expect_empty(fx);
}

/* Two boxes that part by less than the hysteresis and come to rest a step apart in time: the
 * pair is reported as resting, yet neither wakes the other (they do not touch), so both fall
 * asleep and stay asleep. */
static void test_contract_boxes_resting_just_apart_both_fall_asleep(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0.5, 0));
    gy_collider_def cd = box_def(gy_v3(1, 1, 1));
    gy_body_id a = create_body(fx, &bd, &cd, 1, NULL);
    step_n(fx, 12); /* a's sleep time is well on when b comes */
    bd.pose.position = gy_v3(0.9999, 0.5, 0);
    bd.linear_velocity = gy_v3(0.12, 0, 0); /* friction stops it about half a millimetre on */
    gy_body_id b = create_body(fx, &bd, &cd, 1, NULL);
    step_n(fx, 1);
    assert_non_null(find_contact(fx, a, b)); /* touching at the start */
    int changes = 0, asleep_at = -1;
    bool was = true;
    for (int i = 2; i <= 300; i++) {
        step_n(fx, 1);
        bool awake = body_state(fx, a).awake || body_state(fx, b).awake;
        changes += awake != was;
        was = awake;
        if (!awake && asleep_at < 0)
            asleep_at = i;
    }
    double gap = body_position(fx, b).x - body_position(fx, a).x - 1.0;
    print_message("    gap %.3f mm, both asleep from step %d, %d changes\n", gap * 1e3, asleep_at,
                  changes);
    assert_between(gap, 0.0, 1e-3);
    assert_non_null(find_contact(fx, a, b)); /* still reported: within the hysteresis */
    assert_between(asleep_at, 1, 180);
    assert_false(body_state(fx, a).awake || body_state(fx, b).awake);
    assert_int_equal(changes, 1);
    release_body(fx, a);
    release_body(fx, b);
    release_body(fx, ground);
    expect_empty(fx);
}

static void test_contract_many_resting_pairs_each_reported_once(void **state)
{
    fixture *fx = *state;
    enum { SIDE = 12, BALLS = SIDE * SIDE };
    gy_body_id ground = create_ground(fx);
    gy_body_id balls[BALLS];
    const double m = 1.5;
    for (int i = 0; i < BALLS; i++) {
        /* 2 m apart: the balls touch only the ground. */
        gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(2.0 * (i % SIDE), 0.5, 2.0 * (i / SIDE)));
        bd.mass = m;
        bd.user_data = (uint64_t)i;
        gy_collider_def cd = sphere_def(0.5);
        balls[i] = create_body(fx, &bd, &cd, 1, NULL);
    }
    for (int step = 0; step < 150; step++) {
        step_n(fx, 1);
        if (step < 20 && step % 5 != 0)
            continue;
        const gy_contact *all;
        uint32_t n = contacts(fx, &all);
        assert_int_equal(n, BALLS);
        assert_int_equal(counters(fx).contact_pairs, BALLS);
        bool seen[BALLS] = {false};
        for (uint32_t k = 0; k < n; k++) {
            bool ground_first = all[k].body_a.bits == ground.bits;
            assert_int_equal(ground_first ? all[k].body_a.bits : all[k].body_b.bits, ground.bits);
            uint64_t who = ground_first ? all[k].user_b : all[k].user_a;
            assert_true(who < BALLS);
            assert_false(seen[who]);
            seen[who] = true;
            /* Each carries its own weight, m g dt per step within 20%. */
            assert_near(all[k].normal_impulse, m * GRAVITY * DT, 0.2 * m * GRAVITY * DT);
        }
    }
    /* Asleep by now, and still reported. */
    assert_int_equal(counters(fx).awake_bodies, 0);

    for (int i = 0; i < BALLS; i += 2)
        release_body(fx, balls[i]);
    step_n(fx, 1);
    const gy_contact *all;
    uint32_t n = contacts(fx, &all);
    assert_int_equal(n, BALLS / 2);
    for (uint32_t k = 0; k < n; k++)
        assert_int_equal((all[k].body_a.bits == ground.bits ? all[k].user_b : all[k].user_a) % 2,
                         1);

    for (int i = 1; i < BALLS; i += 2)
        release_body(fx, balls[i]);
    release_body(fx, ground);
    expect_empty(fx);
}

static void test_contract_contact_report_for_resting_box(void **state)
{
    fixture *fx = *state;
    gy_body_def gd = body_at(GY_MOTION_STATIC, gy_v3(0, 0, 0));
    gd.user_data = 7;
    gy_collider_def gc = plane_def();
    gy_collider_id gcid;
    gy_body_id ground = create_body(fx, &gd, &gc, 1, &gcid);
    const double m = 2.0;
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0.5, 0));
    bd.mass = m;
    bd.allow_sleeping = false;
    bd.user_data = 9;
    gy_collider_def bc = box_def(gy_v3(1, 1, 1));
    gy_collider_id bcid;
    gy_body_id box = create_body(fx, &bd, &bc, 1, &bcid);

    step_n(fx, 60);
    for (int i = 0; i < 60; i++) {
        step_n(fx, 1);
        const gy_contact *all;
        uint32_t n = contacts(fx, &all);
        /* One pair: the box and the plane, in stable collider order. */
        assert_int_equal(n, 1);
        assert_int_equal(counters(fx).contact_pairs, 1);
        const gy_contact *c = &all[0];
        bool plane_first = c->body_a.bits == ground.bits;
        assert_int_equal(plane_first ? c->body_b.bits : c->body_a.bits, box.bits);
        assert_int_equal(plane_first ? c->collider_a.bits : c->collider_b.bits, gcid.bits);
        assert_int_equal(plane_first ? c->collider_b.bits : c->collider_a.bits, bcid.bits);
        assert_true(c->collider_a.bits < c->collider_b.bits);
        assert_int_equal(c->user_a, plane_first ? 7 : 9);
        assert_int_equal(c->user_b, plane_first ? 9 : 7);
        assert_false(c->is_sensor);
        /* Normal from A to B: up when the plane is A. */
        assert_vec_near(c->normal, gy_v3(0, plane_first ? 1 : -1, 0), 1e-3);
        assert_between(c->penetration, 0.0, 0.02);
        assert_near(c->point.y, 0.0, 0.02);
        assert_between(fabs(c->point.x), 0.0, 0.51);
        assert_between(fabs(c->point.z), 0.0, 0.51);
        /* The plane carries the weight: m g dt per step within 20%. */
        assert_near(c->normal_impulse, m * GRAVITY * DT, 0.2 * m * GRAVITY * DT);
        assert_between(c->tangent_impulse, 0.0, 0.05 * m * GRAVITY * DT);
    }

    release_body(fx, box);
    release_body(fx, ground);
    expect_empty(fx);
}

/* A resting pair reports its weight over the step it is asked for: a box asleep on a plane (its
 * pair carried over without being solved again) reports m g dt whatever dt, a step twice as long
 * carrying twice the impulse, and so does the same box awake. */
static void test_contract_resting_contact_reports_its_weight_over_any_step_length(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_one(fx, GY_MOTION_STATIC, gy_v3(0, 0, 0), plane_def());
    const double m = 2.0;
    /* Also with a sensor in the world (far off): the end of a step then runs the sensor pass. */
    gy_collider_def zone = box_def(gy_v3(1, 1, 1));
    zone.is_sensor = true;
    gy_body_id far = {0};
    for (int run = 0; run < 4; run++) {
        bool sleeps = run % 2 == 1;
        if (run == 2)
            far = create_one(fx, GY_MOTION_STATIC, gy_v3(50, 1, 0), zone);
        gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0.5, 0));
        bd.mass = m;
        bd.allow_sleeping = sleeps;
        gy_collider_def bc = box_def(gy_v3(1, 1, 1));
        gy_body_id box = create_body(fx, &bd, &bc, 1, NULL);
        step_n(fx, 120);
        assert_true(body_state(fx, box).awake == !sleeps);
        const double steps[] = {DT, 2.0 * DT, 0.5 * DT, DT};
        for (int k = 0; k < 4; k++) {
            assert_result(fx->be->step(fx->w, steps[k]), GY_OK);
            const gy_contact *c = find_contact(fx, box, ground);
            assert_non_null(c);
            /* The plane carries the weight: m g dt within 20%. */
            if (fabs(c->normal_impulse - m * GRAVITY * steps[k]) > 0.2 * m * GRAVITY * steps[k])
                fail_msg("run %d (%s%s), step %d of %.4f s: %.4f N s, not m g dt = %.4f", run,
                         sleeps ? "asleep" : "awake", run >= 2 ? ", a sensor about" : "", k,
                         steps[k], c->normal_impulse, m * GRAVITY * steps[k]);
        }
        release_body(fx, box);
    }
    release_body(fx, far);
    release_body(fx, ground);
    expect_empty(fx);
}

/* Substeps: a box resting on the ground falls asleep at some substep boundary inside a step, and
 * that step reports its weight over the whole step (m g dt within 20%), as the steps before it
 * (fresh solves) and after it (carried over) do: the substeps it slept through are not missing. */
static void
test_contract_resting_contact_reports_its_weight_through_the_step_it_sleeps_in(void **state)
{
    fixture *fx = *state;
    const uint32_t subs[] = {2, 4};
    const double m = 2.0;
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        close_world(fx);
        gy_backend_world_def wd = fixture_world_def(fx);
        wd.substeps = subs[i];
        assert_int_equal(open_world(fx, &wd), 0);
        gy_body_id ground = create_one(fx, GY_MOTION_STATIC, gy_v3(0, 0, 0), plane_def());
        gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0.5, 0));
        bd.mass = m;
        gy_collider_def bc = box_def(gy_v3(1, 1, 1));
        gy_body_id box = create_body(fx, &bd, &bc, 1, NULL);
        int slept = -1;
        for (int k = 1; k <= 180 && slept < 0; k++) {
            step_n(fx, 1);
            const gy_contact *c = find_contact(fx, box, ground);
            assert_non_null(c);
            if (k > 10 && fabs(c->normal_impulse - m * GRAVITY * DT) > 0.2 * m * GRAVITY * DT)
                fail_msg("%u substeps, step %d (%s): %.4f N s, not m g dt = %.4f", subs[i], k,
                         body_state(fx, box).awake ? "awake" : "fell asleep in it",
                         c->normal_impulse, m * GRAVITY * DT);
            if (!body_state(fx, box).awake)
                slept = k;
        }
        assert_true(slept > 0);
        release_body(fx, box);
        release_body(fx, ground);
    }
}

static void test_contract_counters_track_live_objects(void **state)
{
    fixture *fx = *state;
    expect_empty(fx);
    gy_resource_id hull = create_hull(fx, cube_points, 8);
    gy_resource_id mesh = create_quad_mesh(fx);
    gy_backend_counters c = counters(fx);
    assert_int_equal(c.resources, 2);
    assert_int_equal(c.live_objects, 2);

    gy_collider_def sc[2] = {plane_def(), box_def(gy_v3(1, 1, 1))};
    sc[1].is_sensor = true;
    gy_body_def sd = body_at(GY_MOTION_STATIC, gy_v3(0, 0, 0));
    gy_body_id s = create_body(fx, &sd, sc, 2, NULL);
    gy_body_def kd = body_at(GY_MOTION_KINEMATIC, gy_v3(0, 5, 0));
    gy_collider_def kc = resource_def(GY_SHAPE_MESH, mesh);
    gy_body_id k = create_body(fx, &kd, &kc, 1, NULL);
    gy_collider_def dc[2] = {sphere_def(0.5), resource_def(GY_SHAPE_HULL, hull)};
    dc[1].local_pose.position = gy_v3(1, 0, 0);
    gy_body_def dd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 10, 0));
    gy_body_id d1 = create_body(fx, &dd, dc, 2, NULL);
    dd.pose.position.x = 5;
    gy_body_id d2 = create_body(fx, &dd, &dc[0], 1, NULL);
    gy_joint_def jd = gy_default_joint_def();
    jd.a = d1;
    jd.b = d2;
    jd.anchor = gy_v3(2.5, 10, 0);
    create_joint(fx, &jd);

    c = counters(fx);
    assert_int_equal(c.bodies[GY_MOTION_STATIC], 1);
    assert_int_equal(c.bodies[GY_MOTION_KINEMATIC], 1);
    assert_int_equal(c.bodies[GY_MOTION_DYNAMIC], 2);
    assert_int_equal(c.colliders, 6);
    assert_int_equal(c.sensors, 1);
    assert_int_equal(c.joints, 1);
    assert_int_equal(c.resources, 2);
    assert_int_equal(c.live_objects, 4 + 6 + 1 + 2);
    assert_int_equal(c.awake_bodies, 2u + (body_state(fx, k).awake ? 1u : 0u));
    assert_false(body_state(fx, s).awake);

    /* Releasing a body takes its colliders and joints with it. */
    release_body(fx, d2);
    c = counters(fx);
    assert_int_equal(c.bodies[GY_MOTION_DYNAMIC], 1);
    assert_int_equal(c.colliders, 5);
    assert_int_equal(c.joints, 0);
    assert_int_equal(c.live_objects, 3 + 5 + 0 + 2);

    /* Creator references dropped: the resources live on in their colliders. */
    fx->be->resource_release(fx->w, hull);
    fx->be->resource_release(fx->w, mesh);
    c = counters(fx);
    assert_int_equal(c.resources, 2);
    assert_int_equal(c.live_objects, 3 + 5 + 0 + 2);
    release_body(fx, d1);
    c = counters(fx);
    assert_int_equal(c.resources, 1);
    assert_int_equal(c.colliders, 3);
    assert_int_equal(c.live_objects, 2 + 3 + 0 + 1);
    release_body(fx, k);
    c = counters(fx);
    assert_int_equal(c.resources, 0);
    assert_int_equal(c.bodies[GY_MOTION_KINEMATIC], 0);
    assert_int_equal(c.live_objects, 1 + 2);
    release_body(fx, s);
    expect_empty(fx);
}

static void test_contract_resources_are_refcounted(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx);
    gy_resource_id hull = create_hull(fx, cube_points, 8);
    gy_collider_def hc = resource_def(GY_SHAPE_HULL, hull);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 2, 0));
    gy_body_id first = create_body(fx, &bd, &hc, 1, NULL);
    bd.pose.position.x = 3;
    gy_body_id second = create_body(fx, &bd, &hc, 1, NULL);

    /* The creator lets go; both bodies keep working (they fall and rest on the ground). */
    fx->be->resource_release(fx->w, hull);
    assert_int_equal(counters(fx).resources, 1);
    fx->be->resource_release(fx->w, hull); /* already released: no-op */
    assert_int_equal(counters(fx).resources, 1);
    step_n(fx, 120);
    assert_near(body_position(fx, first).y, 0.5, 0.03);
    assert_near(body_position(fx, second).y, 0.5, 0.03);
    gy_query_filter f = default_filter();
    gy_hit hit;
    uint32_t n;
    assert_result(fx->be->raycast(fx->w, gy_v3(0, 5, 0), gy_v3(0, -10, 0), &f, GY_COLLECT_CLOSEST,
                                  &hit, 1, &n),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_int_equal(hit.body.bits, first.bits);
    assert_near(hit.distance, 4.0, 0.03);

    /* It dies with the last body using it. */
    release_body(fx, first);
    assert_int_equal(counters(fx).resources, 1);
    release_body(fx, second);
    assert_int_equal(counters(fx).resources, 0);

    /* Now stale: colliders cannot use it; releasing again, or null, or junk, is a no-op. */
    gy_backend_counters before = counters(fx);
    gy_body_id none = {0};
    assert_result(fx->be->body_create(fx->w, &bd, &hc, 1, &none, NULL), GY_ERR_STALE_HANDLE);
    fx->be->resource_release(fx->w, hull);
    fx->be->resource_release(fx->w, (gy_resource_id){0});
    fx->be->resource_release(fx->w, (gy_resource_id){0x0000777700000123ull});
    expect_counters_equal(before, counters(fx), "stale resource use and release");

    release_body(fx, ground);
    expect_empty(fx);
}

/* ---- handles -----------------------------------------------------------------------------------
 */

static void test_contract_create_release_cycles_leave_nothing(void **state)
{
    fixture *fx = *state;
    gy_collider_def cd = sphere_def(0.5);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0, 0));
    gy_body_id first = {0}, prev = {0};
    gy_collider_id first_collider = {0};
    gy_body_state s;
    const int cycles = 100000;
    for (int i = 0; i < cycles; i++) {
        gy_body_id id = {0};
        gy_collider_id cid = {0};
        gy_result r = fx->be->body_create(fx->w, &bd, &cd, 1, &id, &cid);
        if (r != GY_OK || id.bits == 0 || id.bits == prev.bits) {
            print_error("cycle %d: create returned %s, id 0x%llx (previous 0x%llx)\n", i,
                        gy_result_name(r), (unsigned long long)id.bits,
                        (unsigned long long)prev.bits);
            fail();
        }
        if (i == 0) {
            first = id;
            first_collider = cid;
        }
        /* The previous handle is stale, even where its slot was reused. */
        if (prev.bits != 0 && fx->be->body_get_state(fx->w, prev, &s) != GY_ERR_STALE_HANDLE) {
            print_error("cycle %d: released body 0x%llx still resolves\n", i,
                        (unsigned long long)prev.bits);
            fail();
        }
        if (fx->be->body_release(fx->w, id) != GY_OK) {
            print_error("cycle %d: release failed\n", i);
            fail();
        }
        prev = id;
    }
    expect_empty(fx);

    /* Joints and resources recycle cleanly too (fewer rounds: each is costlier). */
    gy_body_id a = create_body(fx, &bd, &cd, 1, NULL);
    gy_joint_id first_joint = {0};
    gy_resource_id first_resource = {0};
    for (int i = 0; i < 2000; i++) {
        gy_joint_def jd = gy_default_joint_def();
        jd.a = a;
        gy_joint_id j = create_joint(fx, &jd);
        assert_result(fx->be->joint_release(fx->w, j), GY_OK);
        gy_resource_id h = create_hull(fx, octahedron_points, 6);
        fx->be->resource_release(fx->w, h);
        if (i == 0) {
            first_joint = j;
            first_resource = h;
        }
    }
    release_body(fx, a);
    expect_empty(fx);

    /* Every kind of stale handle is rejected. */
    assert_result(fx->be->body_get_state(fx->w, first, &s), GY_ERR_STALE_HANDLE);
    assert_result(fx->be->body_release(fx->w, first), GY_ERR_STALE_HANDLE);
    assert_result(fx->be->joint_release(fx->w, first_joint), GY_ERR_STALE_HANDLE);
    gy_collider_def hc = resource_def(GY_SHAPE_HULL, first_resource);
    gy_body_id none;
    assert_result(fx->be->body_create(fx->w, &bd, &hc, 1, &none, NULL), GY_ERR_STALE_HANDLE);
    fx->be->resource_release(fx->w, first_resource);
    gy_query_filter f = default_filter();
    f.ignore_collider = first_collider;
    gy_hit hit;
    uint32_t n;
    assert_result(
        fx->be->raycast(fx->w, gy_v3(0, 1, 0), gy_v3(0, -2, 0), &f, GY_COLLECT_ANY, &hit, 1, &n),
        GY_ERR_STALE_HANDLE);
    expect_empty(fx);
}

static void test_contract_released_handles_are_stale(void **state)
{
    fixture *fx = *state;
    gy_collider_def cd = sphere_def(0.5);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0, 0));
    gy_collider_id cid;
    gy_body_id dyn = create_body(fx, &bd, &cd, 1, &cid);
    bd.type = GY_MOTION_KINEMATIC;
    gy_body_id kin = create_body(fx, &bd, &cd, 1, NULL);
    release_body(fx, dyn);
    release_body(fx, kin);
    /* Something new may take the freed slots; the old handles must still be rejected. */
    bd.type = GY_MOTION_DYNAMIC;
    gy_body_id fresh = create_body(fx, &bd, &cd, 1, NULL);
    gy_body_id fresh2 = create_body(fx, &bd, &cd, 1, NULL);

    const gy_body_id stale[] = {dyn, kin, {0}, {0x0000000500000400ull}};
    for (size_t i = 0; i < sizeof stale / sizeof stale[0]; i++) {
        gy_body_id id = stale[i];
        gy_body_state s;
        gy_vec3 v;
        print_message("stale body #%zu: 0x%llx\n", i, (unsigned long long)id.bits);
        assert_result(fx->be->body_get_state(fx->w, id, &s), GY_ERR_STALE_HANDLE);
        assert_result(fx->be->body_set_pose(fx->w, id, gy_pose_identity()), GY_ERR_STALE_HANDLE);
        assert_result(fx->be->body_set_linear_velocity(fx->w, id, gy_v3(1, 0, 0)),
                      GY_ERR_STALE_HANDLE);
        assert_result(fx->be->body_set_angular_velocity(fx->w, id, gy_v3(1, 0, 0)),
                      GY_ERR_STALE_HANDLE);
        assert_result(fx->be->body_add_force(fx->w, id, gy_v3(1, 0, 0)), GY_ERR_STALE_HANDLE);
        assert_result(fx->be->body_add_torque(fx->w, id, gy_v3(1, 0, 0)), GY_ERR_STALE_HANDLE);
        assert_result(fx->be->body_add_impulse(fx->w, id, gy_v3(1, 0, 0)), GY_ERR_STALE_HANDLE);
        assert_result(fx->be->body_add_impulse_at(fx->w, id, gy_v3(1, 0, 0), gy_v3(0, 0, 0)),
                      GY_ERR_STALE_HANDLE);
        assert_result(fx->be->body_move_kinematic(fx->w, id, gy_pose_identity(), DT),
                      GY_ERR_STALE_HANDLE);
        assert_result(fx->be->body_point_velocity(fx->w, id, gy_v3(0, 0, 0), &v),
                      GY_ERR_STALE_HANDLE);
        assert_result(fx->be->body_release(fx->w, id), GY_ERR_STALE_HANDLE);

        gy_joint_def jd = gy_default_joint_def();
        jd.a = id;
        gy_joint_id j;
        assert_result(fx->be->joint_create(fx->w, &jd, &j),
                      id.bits == 0 ? GY_ERR_INVALID_ARGUMENT : GY_ERR_STALE_HANDLE);
        if (id.bits != 0) {
            jd.a = fresh;
            jd.b = id;
            assert_result(fx->be->joint_create(fx->w, &jd, &j), GY_ERR_STALE_HANDLE);
        }
    }

    /* A joint dies with either body, and its handle goes stale. */
    gy_joint_def jd = gy_default_joint_def();
    jd.a = fresh;
    jd.b = fresh2;
    gy_joint_id j = create_joint(fx, &jd);
    gy_joint_id j2 = create_joint(fx, &jd);
    assert_result(fx->be->joint_release(fx->w, j2), GY_OK);
    assert_result(fx->be->joint_release(fx->w, j2), GY_ERR_STALE_HANDLE);
    gy_backend_counters expected = {{0, 0, 2}, 2, 2, 0, 0, 1, 0, 5};
    expected.contact_pairs = counters(fx).contact_pairs;
    expect_counters_equal(expected, counters(fx), "two bodies and a joint");
    release_body(fx, fresh2);
    assert_result(fx->be->joint_release(fx->w, j), GY_ERR_STALE_HANDLE);
    assert_result(fx->be->joint_release(fx->w, (gy_joint_id){0}), GY_ERR_STALE_HANDLE);

    /* Stale ids in a query filter. */
    gy_query_filter f = default_filter();
    gy_hit hit;
    uint32_t n;
    gy_shape probe = sphere_shape(0.5);
    f.ignore_collider = cid;
    assert_result(
        fx->be->raycast(fx->w, gy_v3(0, 1, 0), gy_v3(0, -2, 0), &f, GY_COLLECT_ALL, &hit, 1, &n),
        GY_ERR_STALE_HANDLE);
    assert_result(
        fx->be->overlap(fx->w, &probe, gy_pose_identity(), &f, GY_COLLECT_ALL, &hit, 1, &n),
        GY_ERR_STALE_HANDLE);
    assert_result(fx->be->shape_cast(fx->w, &probe, gy_pose_identity(), gy_v3(1, 0, 0), &f,
                                     GY_COLLECT_ALL, &hit, 1, &n),
                  GY_ERR_STALE_HANDLE);
    f = default_filter();
    f.ignore_body = dyn;
    assert_result(
        fx->be->raycast(fx->w, gy_v3(0, 1, 0), gy_v3(0, -2, 0), &f, GY_COLLECT_ALL, &hit, 1, &n),
        GY_ERR_STALE_HANDLE);

    release_body(fx, fresh);
    expect_empty(fx);
}

/* ---- invalid input -----------------------------------------------------------------------------
 */

#define reject_body(fx, bd, cd, n, expected, what)                                                 \
    reject_body_((fx), (bd), (cd), (n), (expected), (what), __FILE__, __LINE__)
static void reject_body_(fixture *fx, const gy_body_def *bd, const gy_collider_def *cd, uint32_t n,
                         gy_result expected, const char *what, const char *file, int line)
{
    gy_backend_counters before = counters(fx);
    gy_body_id id = {0};
    gy_collider_id cids[4];
    gy_result r = fx->be->body_create(fx->w, bd, cd, n, &id, n <= 4 ? cids : NULL);
    gy_test_assert_result_(r, expected, what, file, line);
    expect_counters_equal_(before, counters(fx), what, file, line);
}

static void test_contract_invalid_body_defs_rejected(void **state)
{
    fixture *fx = *state;
    gy_body_def bd;
    gy_collider_def cd = sphere_def(0.5);
#define BODY_CASE(stmt, code)                                                                      \
    do {                                                                                           \
        bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 1, 0));                                           \
        stmt;                                                                                      \
        reject_body(fx, &bd, &cd, 1, code, #stmt);                                                 \
    } while (0)
    BODY_CASE(bd.pose.position.x = NAN, GY_ERR_NON_FINITE);
    BODY_CASE(bd.pose.position.y = INFINITY, GY_ERR_NON_FINITE);
    BODY_CASE(bd.pose.position.z = -INFINITY, GY_ERR_NON_FINITE);
    BODY_CASE(bd.pose.rotation.w = NAN, GY_ERR_NON_FINITE);
    BODY_CASE(bd.pose.rotation.x = INFINITY, GY_ERR_NON_FINITE);
    BODY_CASE(bd.pose.rotation = quat4(0, 0, 0, 2), GY_ERR_INVALID_ARGUMENT);
    BODY_CASE(bd.pose.rotation = quat4(0, 0, 0, 0), GY_ERR_INVALID_ARGUMENT);
    BODY_CASE(bd.linear_velocity.z = NAN, GY_ERR_NON_FINITE);
    BODY_CASE(bd.angular_velocity.x = INFINITY, GY_ERR_NON_FINITE);
    BODY_CASE(bd.mass = NAN, GY_ERR_NON_FINITE);
    BODY_CASE(bd.mass = INFINITY, GY_ERR_NON_FINITE);
    BODY_CASE(bd.mass = -1.0, GY_ERR_INVALID_ARGUMENT);
    BODY_CASE(bd.linear_damping = NAN, GY_ERR_NON_FINITE);
    BODY_CASE(bd.angular_damping = -INFINITY, GY_ERR_NON_FINITE);
    BODY_CASE(bd.linear_damping = -0.1, GY_ERR_INVALID_ARGUMENT);
    BODY_CASE(bd.angular_damping = -0.1, GY_ERR_INVALID_ARGUMENT);
    BODY_CASE(bd.gravity_factor = NAN, GY_ERR_NON_FINITE);
    BODY_CASE(bd.type = (gy_motion_type)7, GY_ERR_INVALID_ARGUMENT);
    BODY_CASE((bd.mass = 1.0, bd.has_mass_properties = true,
               bd.mass_properties.inertia = gy_mat3_diag(1, 1, 1),
               bd.mass_properties.center_of_mass.y = NAN),
              GY_ERR_NON_FINITE);
    BODY_CASE((bd.mass = 1.0, bd.has_mass_properties = true,
               bd.mass_properties.inertia = gy_mat3_diag(1, NAN, 1)),
              GY_ERR_NON_FINITE);
    BODY_CASE((bd.mass = 1.0, bd.has_mass_properties = true,
               bd.mass_properties.inertia = gy_mat3_diag(1, -1, 1)),
              GY_ERR_INVALID_ARGUMENT);
    BODY_CASE(
        (bd.mass = 1.0, bd.has_mass_properties = true, bd.mass_properties.inertia = gy_mat3_zero()),
        GY_ERR_INVALID_ARGUMENT);
    BODY_CASE((bd.has_mass_properties = true, bd.mass_properties.inertia = gy_mat3_diag(1, 1, 1)),
              GY_ERR_INVALID_ARGUMENT);
#undef BODY_CASE
    bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 1, 0));
    reject_body(fx, NULL, &cd, 1, GY_ERR_INVALID_ARGUMENT, "NULL body def");
    reject_body(fx, &bd, NULL, 1, GY_ERR_INVALID_ARGUMENT, "NULL colliders");
    expect_empty(fx);
}

static void test_contract_invalid_shapes_and_colliders_rejected(void **state)
{
    fixture *fx = *state;
    gy_body_def bd;
    gy_collider_def cd;
    gy_resource_id mesh = create_quad_mesh(fx);
#define COLLIDER_CASE(motion, base, stmt, code)                                                    \
    do {                                                                                           \
        bd = body_at(motion, gy_v3(0, 1, 0));                                                      \
        cd = base;                                                                                 \
        stmt;                                                                                      \
        reject_body(fx, &bd, &cd, 1, code, #motion ": " #base ", " #stmt);                         \
    } while (0)
    const gy_motion_type DYN = GY_MOTION_DYNAMIC, KIN = GY_MOTION_KINEMATIC, STA = GY_MOTION_STATIC;
    /* Sizes. */
    COLLIDER_CASE(DYN, sphere_def(0.5), cd.shape.radius = 0.0, GY_ERR_INVALID_SHAPE);
    COLLIDER_CASE(DYN, sphere_def(0.5), cd.shape.radius = -1.0, GY_ERR_INVALID_SHAPE);
    COLLIDER_CASE(STA, sphere_def(0.5), cd.shape.radius = NAN, GY_ERR_NON_FINITE);
    COLLIDER_CASE(DYN, sphere_def(0.5), cd.shape.radius = INFINITY, GY_ERR_NON_FINITE);
    COLLIDER_CASE(DYN, box_def(gy_v3(1, 1, 1)), cd.shape.box_size.x = 0.0, GY_ERR_INVALID_SHAPE);
    COLLIDER_CASE(STA, box_def(gy_v3(1, 1, 1)), cd.shape.box_size.y = -1.0, GY_ERR_INVALID_SHAPE);
    COLLIDER_CASE(DYN, box_def(gy_v3(1, 1, 1)), cd.shape.box_size.z = NAN, GY_ERR_NON_FINITE);
    COLLIDER_CASE(DYN, capsule_def(0.5, 2), cd.shape.height = 1.0, GY_ERR_INVALID_SHAPE);
    COLLIDER_CASE(DYN, capsule_def(0.5, 2), cd.shape.height = 0.5, GY_ERR_INVALID_SHAPE);
    COLLIDER_CASE(KIN, capsule_def(0.5, 2), cd.shape.radius = 0.0, GY_ERR_INVALID_SHAPE);
    COLLIDER_CASE(DYN, capsule_def(0.5, 2), cd.shape.height = NAN, GY_ERR_NON_FINITE);
    COLLIDER_CASE(DYN, capsule_def(0.5, 2), cd.shape.radius = INFINITY, GY_ERR_NON_FINITE);
    COLLIDER_CASE(DYN, capsule_def(0.5, 2),
                  (cd.shape.type = GY_SHAPE_CYLINDER, cd.shape.height = 0.0), GY_ERR_INVALID_SHAPE);
    COLLIDER_CASE(DYN, capsule_def(0.5, 2),
                  (cd.shape.type = GY_SHAPE_CYLINDER, cd.shape.radius = -0.5),
                  GY_ERR_INVALID_SHAPE);
    COLLIDER_CASE(DYN, capsule_def(0.5, 2),
                  (cd.shape.type = GY_SHAPE_CYLINDER, cd.shape.radius = NAN), GY_ERR_NON_FINITE);
    /* Planes: statics only, with a usable normal. */
    COLLIDER_CASE(DYN, plane_def(), (void)0, GY_ERR_INVALID_MOTION);
    COLLIDER_CASE(KIN, plane_def(), (void)0, GY_ERR_INVALID_MOTION);
    COLLIDER_CASE(STA, plane_def(), cd.shape.normal = gy_v3(0, 0, 0), GY_ERR_INVALID_SHAPE);
    COLLIDER_CASE(STA, plane_def(), cd.shape.normal.y = NAN, GY_ERR_NON_FINITE);
    COLLIDER_CASE(STA, plane_def(), cd.shape.offset = INFINITY, GY_ERR_NON_FINITE);
    /* Meshes: never dynamic; resources must be live. */
    COLLIDER_CASE(DYN, resource_def(GY_SHAPE_MESH, mesh), (void)0, GY_ERR_INVALID_MOTION);
    COLLIDER_CASE(STA, resource_def(GY_SHAPE_MESH, (gy_resource_id){0}), (void)0,
                  GY_ERR_STALE_HANDLE);
    COLLIDER_CASE(DYN, resource_def(GY_SHAPE_HULL, (gy_resource_id){0}), (void)0,
                  GY_ERR_STALE_HANDLE);
    COLLIDER_CASE(DYN, sphere_def(0.5), cd.shape.type = (gy_shape_type)99, GY_ERR_INVALID_ARGUMENT);
    /* Collider fields. */
    COLLIDER_CASE(DYN, sphere_def(0.5), cd.local_pose.position.x = NAN, GY_ERR_NON_FINITE);
    COLLIDER_CASE(DYN, sphere_def(0.5), cd.local_pose.rotation.y = INFINITY, GY_ERR_NON_FINITE);
    COLLIDER_CASE(DYN, sphere_def(0.5), cd.local_pose.rotation = quat4(1, 1, 0, 0),
                  GY_ERR_INVALID_ARGUMENT);
    COLLIDER_CASE(DYN, sphere_def(0.5), cd.density = 0.0, GY_ERR_INVALID_ARGUMENT);
    COLLIDER_CASE(DYN, sphere_def(0.5), cd.density = -2.0, GY_ERR_INVALID_ARGUMENT);
    COLLIDER_CASE(DYN, sphere_def(0.5), cd.density = NAN, GY_ERR_NON_FINITE);
    COLLIDER_CASE(DYN, sphere_def(0.5), cd.material.friction = -0.1, GY_ERR_INVALID_ARGUMENT);
    COLLIDER_CASE(DYN, sphere_def(0.5), cd.material.friction = NAN, GY_ERR_NON_FINITE);
    COLLIDER_CASE(DYN, sphere_def(0.5), cd.material.restitution = -0.5, GY_ERR_INVALID_ARGUMENT);
    COLLIDER_CASE(STA, sphere_def(0.5), cd.material.restitution = INFINITY, GY_ERR_NON_FINITE);
    COLLIDER_CASE(DYN, sphere_def(0.5), cd.material.friction_combine = (gy_combine_mode)9,
                  GY_ERR_INVALID_ARGUMENT);
    COLLIDER_CASE(DYN, sphere_def(0.5), cd.material.restitution_combine = (gy_combine_mode)9,
                  GY_ERR_INVALID_ARGUMENT);
    COLLIDER_CASE(STA, box_def(gy_v3(1, 1, 1)), cd.surface_velocity.x = NAN, GY_ERR_NON_FINITE);
    COLLIDER_CASE(STA, box_def(gy_v3(1, 1, 1)), (cd.one_way = true, cd.one_way_normal.z = NAN),
                  GY_ERR_NON_FINITE);
    COLLIDER_CASE(STA, box_def(gy_v3(1, 1, 1)),
                  (cd.one_way = true, cd.one_way_normal = gy_v3(0, 0, 0)), GY_ERR_INVALID_ARGUMENT);
    COLLIDER_CASE(STA, box_def(gy_v3(1, 1, 1)), (cd.one_way = true, cd.one_way_slop = NAN),
                  GY_ERR_NON_FINITE);
    COLLIDER_CASE(STA, box_def(gy_v3(1, 1, 1)), (cd.one_way = true, cd.one_way_slop = -0.01),
                  GY_ERR_INVALID_ARGUMENT);
#undef COLLIDER_CASE

    /* One bad collider in a compound rejects the whole body. */
    gy_collider_def pair[3] = {sphere_def(0.5), box_def(gy_v3(1, 1, 1)), sphere_def(0.5)};
    pair[2].shape.radius = NAN;
    bd = body_at(DYN, gy_v3(0, 1, 0));
    reject_body(fx, &bd, pair, 3, GY_ERR_NON_FINITE, "compound with a NaN third collider");
    pair[2] = plane_def();
    reject_body(fx, &bd, pair, 3, GY_ERR_INVALID_MOTION, "dynamic compound with a plane");

    fx->be->resource_release(fx->w, mesh);
    expect_empty(fx);
}

/* A piece of a larger mesh: without its edge flags, or with a flag naming a fourth edge, it is
 * refused and nothing is made; with them it is a mesh resource like any other. */
static void test_contract_mesh_piece_needs_valid_edge_flags(void **state)
{
    fixture *fx = *state;
    gy_backend_counters before = counters(fx);
    gy_resource_id id;
    gy_mesh_def md = {quad_vertices, 4, quad_indices, 6};
    const uint8_t bad[2] = {7, 8}, good[2] = {3, 6};
    assert_result(fx->be->mesh_create_piece(fx->w, &md, NULL, &id), GY_ERR_INVALID_ARGUMENT);
    assert_result(fx->be->mesh_create_piece(fx->w, &md, bad, &id), GY_ERR_INVALID_ARGUMENT);
    md.index_count = 5;
    assert_result(fx->be->mesh_create_piece(fx->w, &md, good, &id), GY_ERR_INVALID_MESH);
    md.index_count = 6;
    expect_counters_equal(before, counters(fx), "refused pieces");
    assert_result(fx->be->mesh_create_piece(fx->w, &md, good, &id), GY_OK);
    assert_true(id.bits != 0);
    fx->be->resource_release(fx->w, id);
    expect_empty(fx);
}

static void test_contract_invalid_resources_rejected(void **state)
{
    fixture *fx = *state;
    gy_backend_counters before = counters(fx);
    gy_resource_id id;
    const gy_vec3 nan_vertices[4] = {{-1, 0, -1}, {1, 0, -1}, {1, NAN, 1}, {-1, 0, 1}};
    const uint32_t out_of_range[6] = {0, 3, 2, 0, 2, 4};
#define MESH_CASE(v, vc, i, ic, code)                                                              \
    do {                                                                                           \
        gy_mesh_def md = {(v), (vc), (i), (ic)};                                                   \
        id.bits = 0;                                                                               \
        assert_result(fx->be->mesh_create(fx->w, &md, &id), code);                                 \
        expect_counters_equal(before, counters(fx), "mesh " #v ", " #vc ", " #i ", " #ic);         \
    } while (0)
    MESH_CASE(quad_vertices, 4, out_of_range, 6, GY_ERR_INVALID_MESH);
    MESH_CASE(quad_vertices, 4, quad_indices, 4, GY_ERR_INVALID_MESH);
    MESH_CASE(quad_vertices, 4, quad_indices, 5, GY_ERR_INVALID_MESH);
    MESH_CASE(quad_vertices, 4, quad_indices, 0, GY_ERR_INVALID_MESH);
    MESH_CASE(quad_vertices, 0, quad_indices, 6, GY_ERR_INVALID_MESH);
    MESH_CASE(NULL, 4, quad_indices, 6, GY_ERR_INVALID_MESH);
    MESH_CASE(quad_vertices, 4, NULL, 6, GY_ERR_INVALID_MESH);
    MESH_CASE(nan_vertices, 4, quad_indices, 6, GY_ERR_NON_FINITE);
#undef MESH_CASE
    assert_result(fx->be->mesh_create(fx->w, NULL, &id), GY_ERR_INVALID_MESH);

    const gy_vec3 coplanar[5] = {{0, 0, 0}, {1, 0, 0}, {0, 0, 1}, {1, 0, 1}, {0.5, 0, 2}};
    const gy_vec3 collinear[4] = {{0, 0, 0}, {1, 1, 1}, {2, 2, 2}, {3, 3, 3}};
    const gy_vec3 same[4] = {{1, 2, 3}, {1, 2, 3}, {1, 2, 3}, {1, 2, 3}};
    const gy_vec3 nan_point[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, INFINITY}};
#define HULL_CASE(p, n, code)                                                                      \
    do {                                                                                           \
        gy_hull_def hd = {(p), (n)};                                                               \
        id.bits = 0;                                                                               \
        assert_result(fx->be->hull_create(fx->w, &hd, &id), code);                                 \
        expect_counters_equal(before, counters(fx), "hull " #p ", " #n);                           \
    } while (0)
    HULL_CASE(cube_points, 3, GY_ERR_INVALID_MESH);
    HULL_CASE(cube_points, 0, GY_ERR_INVALID_MESH);
    HULL_CASE(NULL, 8, GY_ERR_INVALID_MESH);
    HULL_CASE(coplanar, 5, GY_ERR_INVALID_MESH);
    HULL_CASE(collinear, 4, GY_ERR_INVALID_MESH);
    HULL_CASE(same, 4, GY_ERR_INVALID_MESH);
    HULL_CASE(nan_point, 4, GY_ERR_NON_FINITE);
#undef HULL_CASE
    assert_result(fx->be->hull_create(fx->w, NULL, &id), GY_ERR_INVALID_MESH);
    expect_empty(fx);
}

static void test_contract_invalid_joint_defs_rejected(void **state)
{
    fixture *fx = *state;
    gy_collider_def cd = sphere_def(0.5);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0, 0));
    gy_body_id a = create_body(fx, &bd, &cd, 1, NULL);
    bd.pose.position.x = 2;
    gy_body_id b = create_body(fx, &bd, &cd, 1, NULL);
    bd = body_at(GY_MOTION_STATIC, gy_v3(5, 0, 0));
    gy_body_id s = create_body(fx, &bd, &cd, 1, NULL);
    gy_backend_counters before = counters(fx);
    gy_joint_def jd;
#define JOINT_CASE(type_, stmt, code)                                                              \
    do {                                                                                           \
        jd = gy_default_joint_def();                                                               \
        jd.type = type_;                                                                           \
        jd.a = a;                                                                                  \
        jd.b = b;                                                                                  \
        jd.anchor = gy_v3(1, 0, 0);                                                                \
        jd.axis = gy_v3(0, 0, 1);                                                                  \
        stmt;                                                                                      \
        gy_joint_id j = {0};                                                                       \
        gy_test_assert_result_(fx->be->joint_create(fx->w, &jd, &j), code, #type_ ": " #stmt,      \
                               __FILE__, __LINE__);                                                \
        expect_counters_equal(before, counters(fx), #type_ ": " #stmt);                            \
    } while (0)
    JOINT_CASE(GY_JOINT_BALL, jd.anchor.x = NAN, GY_ERR_NON_FINITE);
    JOINT_CASE(GY_JOINT_FIXED, jd.anchor.z = INFINITY, GY_ERR_NON_FINITE);
    JOINT_CASE(GY_JOINT_HINGE, jd.axis.y = NAN, GY_ERR_NON_FINITE);
    JOINT_CASE(GY_JOINT_SLIDER, (jd.has_limits = true, jd.limit_min = NAN), GY_ERR_NON_FINITE);
    JOINT_CASE(GY_JOINT_HINGE, (jd.has_limits = true, jd.limit_max = INFINITY), GY_ERR_NON_FINITE);
    JOINT_CASE(GY_JOINT_DISTANCE, jd.distance = NAN, GY_ERR_NON_FINITE);
    JOINT_CASE(GY_JOINT_BALL, (jd.breakable = true, jd.break_force = INFINITY), GY_ERR_NON_FINITE);
    /* Non-finite numbers are rejected even in fields the joint type ignores. */
    JOINT_CASE(GY_JOINT_HINGE, jd.distance = NAN, GY_ERR_NON_FINITE);
    JOINT_CASE(GY_JOINT_BALL, jd.limit_min = NAN, GY_ERR_NON_FINITE);
    JOINT_CASE(GY_JOINT_FIXED, jd.break_force = NAN, GY_ERR_NON_FINITE);
    JOINT_CASE(GY_JOINT_DISTANCE, jd.axis.x = INFINITY, GY_ERR_NON_FINITE);
    /* Structure. */
    JOINT_CASE(GY_JOINT_BALL, jd.a = (gy_body_id){0}, GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_BALL, jd.b = a, GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_HINGE, jd.axis = gy_v3(0, 0, 0), GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_SLIDER, jd.axis = gy_v3(0, 0, 0), GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_HINGE, (jd.has_limits = true, jd.limit_min = 0.5, jd.limit_max = 0.1),
               GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_SLIDER, (jd.has_limits = true, jd.limit_min = 1.0, jd.limit_max = -1.0),
               GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_BALL, (jd.breakable = true, jd.break_force = 0.0), GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE(GY_JOINT_BALL, (jd.breakable = true, jd.break_force = -5.0),
               GY_ERR_INVALID_ARGUMENT);
    JOINT_CASE((gy_joint_type)9, (void)0, GY_ERR_INVALID_ARGUMENT);
    /* A must not be static (B may be: that is the world, or a static anchor). */
    JOINT_CASE(GY_JOINT_BALL, jd.a = s, GY_ERR_INVALID_MOTION);
#undef JOINT_CASE
    gy_joint_id j;
    assert_result(fx->be->joint_create(fx->w, NULL, &j), GY_ERR_INVALID_ARGUMENT);
    expect_counters_equal(before, counters(fx), "NULL joint def");

    release_body(fx, a);
    release_body(fx, b);
    release_body(fx, s);
    expect_empty(fx);
}

static void test_contract_invalid_calls_rejected(void **state)
{
    fixture *fx = *state;
    gy_collider_def cd = sphere_def(0.5);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 3, 0));
    bd.linear_velocity = gy_v3(1, 2, 3);
    gy_body_id d = create_body(fx, &bd, &cd, 1, NULL);
    bd = body_at(GY_MOTION_KINEMATIC, gy_v3(3, 3, 0));
    gy_body_id k = create_body(fx, &bd, &cd, 1, NULL);
    bd = body_at(GY_MOTION_STATIC, gy_v3(-3, 3, 0));
    gy_body_id s = create_body(fx, &bd, &cd, 1, NULL);
    gy_body_state d0 = body_state(fx, d);
    const gy_vec3 nan3 = gy_v3(0, NAN, 0), inf3 = gy_v3(INFINITY, 0, 0);
    gy_pose bad_pose = pose_at(nan3);
    gy_pose bad_rot = gy_pose_identity();
    bad_rot.rotation.w = NAN;
    gy_pose skew_rot = gy_pose_identity();
    skew_rot.rotation = quat4(0, 0.5, 0, 0.5);
    gy_vec3 v;

    /* World calls. */
    assert_result(fx->be->step(fx->w, 0.0), GY_ERR_INVALID_ARGUMENT);
    assert_result(fx->be->step(fx->w, -DT), GY_ERR_INVALID_ARGUMENT);
    assert_result(fx->be->step(fx->w, NAN), GY_ERR_NON_FINITE);
    assert_result(fx->be->step(fx->w, INFINITY), GY_ERR_NON_FINITE);
    assert_result(fx->be->set_gravity(fx->w, nan3), GY_ERR_NON_FINITE);
    assert_result(fx->be->set_gravity(fx->w, inf3), GY_ERR_NON_FINITE);

    /* Body calls with non-finite or malformed arguments. */
    assert_result(fx->be->body_set_pose(fx->w, d, bad_pose), GY_ERR_NON_FINITE);
    assert_result(fx->be->body_set_pose(fx->w, d, bad_rot), GY_ERR_NON_FINITE);
    assert_result(fx->be->body_set_pose(fx->w, d, skew_rot), GY_ERR_INVALID_ARGUMENT);
    assert_result(fx->be->body_set_linear_velocity(fx->w, d, inf3), GY_ERR_NON_FINITE);
    assert_result(fx->be->body_set_angular_velocity(fx->w, d, nan3), GY_ERR_NON_FINITE);
    assert_result(fx->be->body_add_force(fx->w, d, nan3), GY_ERR_NON_FINITE);
    assert_result(fx->be->body_add_torque(fx->w, d, inf3), GY_ERR_NON_FINITE);
    assert_result(fx->be->body_add_impulse(fx->w, d, nan3), GY_ERR_NON_FINITE);
    assert_result(fx->be->body_add_impulse_at(fx->w, d, inf3, gy_v3(0, 3, 0)), GY_ERR_NON_FINITE);
    assert_result(fx->be->body_add_impulse_at(fx->w, d, gy_v3(1, 0, 0), nan3), GY_ERR_NON_FINITE);
    assert_result(fx->be->body_point_velocity(fx->w, d, nan3, &v), GY_ERR_NON_FINITE);
    assert_result(fx->be->body_point_velocity(fx->w, d, gy_v3(0, 0, 0), NULL),
                  GY_ERR_INVALID_ARGUMENT);
    assert_result(fx->be->body_get_state(fx->w, d, NULL), GY_ERR_INVALID_ARGUMENT);
    assert_result(fx->be->body_move_kinematic(fx->w, k, bad_pose, DT), GY_ERR_NON_FINITE);
    assert_result(fx->be->body_move_kinematic(fx->w, k, bad_rot, DT), GY_ERR_NON_FINITE);
    assert_result(fx->be->body_move_kinematic(fx->w, k, skew_rot, DT), GY_ERR_INVALID_ARGUMENT);
    assert_result(fx->be->body_move_kinematic(fx->w, k, gy_pose_identity(), NAN),
                  GY_ERR_NON_FINITE);
    assert_result(fx->be->body_move_kinematic(fx->w, k, gy_pose_identity(), 0.0),
                  GY_ERR_INVALID_ARGUMENT);
    /* Forces are for dynamic bodies. */
    assert_result(fx->be->body_add_force(fx->w, s, gy_v3(1, 0, 0)), GY_ERR_INVALID_MOTION);
    assert_result(fx->be->body_add_torque(fx->w, s, gy_v3(1, 0, 0)), GY_ERR_INVALID_MOTION);
    assert_result(fx->be->body_add_impulse_at(fx->w, k, gy_v3(1, 0, 0), gy_v3(3, 3, 0)),
                  GY_ERR_INVALID_MOTION);
    assert_result(fx->be->body_move_kinematic(fx->w, s, gy_pose_identity(), DT),
                  GY_ERR_INVALID_MOTION);

    /* Nothing was changed by the rejected calls. */
    gy_body_state d1 = body_state(fx, d);
    assert_memory_equal(&d0.pose, &d1.pose, sizeof d0.pose);
    assert_vec_near(d1.linear_velocity, d0.linear_velocity, 0.0);
    assert_vec_near(d1.angular_velocity, d0.angular_velocity, 0.0);

    /* Queries. */
    gy_query_filter f = default_filter();
    gy_hit hits[2];
    uint32_t n;
    gy_shape ball = sphere_shape(0.5);
    assert_result(fx->be->raycast(fx->w, nan3, gy_v3(1, 0, 0), &f, GY_COLLECT_ALL, hits, 2, &n),
                  GY_ERR_NON_FINITE);
    assert_result(fx->be->raycast(fx->w, gy_v3(0, 0, 0), inf3, &f, GY_COLLECT_ALL, hits, 2, &n),
                  GY_ERR_NON_FINITE);
    assert_result(
        fx->be->raycast(fx->w, gy_v3(0, 0, 0), gy_v3(1, 0, 0), &f, GY_COLLECT_ALL, NULL, 2, &n),
        GY_ERR_INVALID_ARGUMENT);
    assert_result(
        fx->be->raycast(fx->w, gy_v3(0, 0, 0), gy_v3(1, 0, 0), &f, GY_COLLECT_ALL, hits, 2, NULL),
        GY_ERR_INVALID_ARGUMENT);
    assert_result(
        fx->be->raycast(fx->w, gy_v3(0, 0, 0), gy_v3(1, 0, 0), &f, (gy_collector)7, hits, 2, &n),
        GY_ERR_INVALID_ARGUMENT);
    f.motion_types = 0x8u;
    assert_result(
        fx->be->raycast(fx->w, gy_v3(0, 0, 0), gy_v3(1, 0, 0), &f, GY_COLLECT_ALL, hits, 2, &n),
        GY_ERR_INVALID_ARGUMENT);
    f = default_filter();
    assert_result(
        fx->be->shape_cast(fx->w, &ball, bad_pose, gy_v3(1, 0, 0), &f, GY_COLLECT_ALL, hits, 2, &n),
        GY_ERR_NON_FINITE);
    assert_result(
        fx->be->shape_cast(fx->w, &ball, skew_rot, gy_v3(1, 0, 0), &f, GY_COLLECT_ALL, hits, 2, &n),
        GY_ERR_INVALID_ARGUMENT);
    assert_result(
        fx->be->shape_cast(fx->w, &ball, gy_pose_identity(), nan3, &f, GY_COLLECT_ALL, hits, 2, &n),
        GY_ERR_NON_FINITE);
    assert_result(fx->be->overlap(fx->w, &ball, bad_rot, &f, GY_COLLECT_ALL, hits, 2, &n),
                  GY_ERR_NON_FINITE);
    gy_shape bad = sphere_shape(0.0);
    assert_result(fx->be->overlap(fx->w, &bad, gy_pose_identity(), &f, GY_COLLECT_ALL, hits, 2, &n),
                  GY_ERR_INVALID_SHAPE);
    bad = sphere_shape(NAN);
    assert_result(fx->be->shape_cast(fx->w, &bad, gy_pose_identity(), gy_v3(1, 0, 0), &f,
                                     GY_COLLECT_ALL, hits, 2, &n),
                  GY_ERR_NON_FINITE);
    assert_result(fx->be->overlap(fx->w, NULL, gy_pose_identity(), &f, GY_COLLECT_ALL, hits, 2, &n),
                  GY_ERR_INVALID_ARGUMENT);
    /* Only sphere, box, capsule and hull may be cast. */
    gy_shape cyl = {0};
    cyl.type = GY_SHAPE_CYLINDER;
    cyl.radius = 0.5;
    cyl.height = 1.0;
    assert_result(fx->be->shape_cast(fx->w, &cyl, gy_pose_identity(), gy_v3(1, 0, 0), &f,
                                     GY_COLLECT_ALL, hits, 2, &n),
                  GY_ERR_UNSUPPORTED);
    gy_shape hull = {0};
    hull.type = GY_SHAPE_HULL;
    hull.resource.bits = 0x0000000300000002ull;
    assert_result(fx->be->shape_cast(fx->w, &hull, gy_pose_identity(), gy_v3(1, 0, 0), &f,
                                     GY_COLLECT_ALL, hits, 2, &n),
                  GY_ERR_STALE_HANDLE);

    release_body(fx, d);
    release_body(fx, k);
    release_body(fx, s);
    expect_empty(fx);
}

static void test_contract_invalid_world_defs_rejected(void **state)
{
    fixture *fx = *state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
#define WORLD_CASE(stmt, code)                                                                     \
    do {                                                                                           \
        gy_backend_world_def wd = gy_default_backend_world_def();                                  \
        wd.allocator = &ta.base;                                                                   \
        stmt;                                                                                      \
        gy_backend_world *w = NULL;                                                                \
        gy_result r = fx->be->world_create(&wd, &w);                                               \
        gy_test_assert_result_(r, code, #stmt, __FILE__, __LINE__);                                \
        if (r == GY_OK)                                                                            \
            fx->be->world_destroy(w);                                                              \
        assert_int_equal(ta.live_blocks, 0);                                                       \
    } while (0)
    WORLD_CASE(wd.gravity.y = NAN, GY_ERR_NON_FINITE);
    WORLD_CASE(wd.gravity.x = -INFINITY, GY_ERR_NON_FINITE);
    WORLD_CASE(wd.world_half_extent = NAN, GY_ERR_NON_FINITE);
    WORLD_CASE(wd.world_half_extent = -1.0, GY_ERR_INVALID_ARGUMENT);
    WORLD_CASE(wd.substeps = 17, GY_ERR_INVALID_ARGUMENT);
    WORLD_CASE(wd.solver_iterations = 256, GY_ERR_INVALID_ARGUMENT);
#undef WORLD_CASE
    gy_backend_world_def wd = gy_default_backend_world_def();
    assert_result(fx->be->world_create(&wd, NULL), GY_ERR_INVALID_ARGUMENT);
}

/* ---- lifecycle and allocation ------------------------------------------------------------------
 */

static void test_contract_world_destroy_releases_live_objects(void **state)
{
    fixture *fx = *state;
    gy_body_id ground = create_ground(fx);
    (void)ground;
    gy_resource_id held = create_hull(fx, cube_points, 8);         /* creator keeps it, unused */
    gy_resource_id shared = create_hull(fx, octahedron_points, 6); /* in use, creator let go */
    gy_resource_id mesh = create_quad_mesh(fx);
    (void)held;
    gy_collider_def hc = resource_def(GY_SHAPE_HULL, shared);
    gy_body_id prev = {0};
    for (int i = 0; i < 6; i++) {
        gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0.5 + 1.1 * i, 0));
        gy_collider_def bc = i % 2 ? box_def(gy_v3(1, 1, 1)) : hc;
        gy_body_id b = create_body(fx, &bd, &bc, 1, NULL);
        if (prev.bits != 0) {
            gy_joint_def jd = gy_default_joint_def();
            jd.type = i % 3 == 0 ? GY_JOINT_HINGE : GY_JOINT_DISTANCE;
            jd.a = b;
            jd.b = prev;
            jd.anchor = gy_v3(0, 1.1 * i, 0);
            jd.breakable = i == 5;
            jd.break_force = 1e6;
            create_joint(fx, &jd);
        }
        prev = b;
    }
    fx->be->resource_release(fx->w, shared);
    gy_body_def kd = body_at(GY_MOTION_KINEMATIC, gy_v3(5, 0, 0));
    gy_collider_def kc = resource_def(GY_SHAPE_MESH, mesh);
    create_body(fx, &kd, &kc, 1, NULL);
    gy_body_def sd = body_at(GY_MOTION_STATIC, gy_v3(-5, 1, 0));
    gy_collider_def sc = box_def(gy_v3(2, 2, 2));
    sc.is_sensor = true;
    create_body(fx, &sd, &sc, 1, NULL);
    step_n(fx, 30);
    const gy_contact *c;
    assert_true(contacts(fx, &c) > 0);
    assert_true(counters(fx).live_objects > 10);

    /* Destroying the world with all of that alive frees every block it allocated. */
    close_world(fx);
    assert_int_equal(fx->ta.live_blocks, 0);
    assert_int_equal(fx->ta.live_bytes, 0);
    assert_true(fx->ta.allocs > 0);

    /* A world can be created again at once, and an empty one also frees everything. */
    gy_backend_world_def wd = fixture_world_def(fx);
    assert_int_equal(open_world(fx, &wd), 0);
    close_world(fx);
    assert_int_equal(fx->ta.live_blocks, 0);
}

static void test_contract_out_of_memory_fails_cleanly(void **state)
{
    fixture *fx = *state;
    /* world_create: fail each allocation in turn until it succeeds; nothing leaks. */
    bool created = false;
    for (uint64_t k = 1; k <= 256 && !created; k++) {
        gy_test_allocator ta;
        gy_test_allocator_init(&ta);
        ta.fail_at = k;
        gy_backend_world_def wd = gy_default_backend_world_def();
        wd.allocator = &ta.base;
        gy_backend_world *w = NULL;
        gy_result r = fx->be->world_create(&wd, &w);
        if (r == GY_OK) {
            created = true;
            fx->be->world_destroy(w);
        } else {
            gy_test_assert_result_(r, GY_ERR_OUT_OF_MEMORY, "world_create", __FILE__, __LINE__);
        }
        assert_int_equal(ta.live_blocks, 0);
    }
    assert_true(created);

    /* body_create, hull_create, mesh_create and joint_create in a fresh world, where pools must
     * grow: every failure is GY_ERR_OUT_OF_MEMORY and leaves the counters as they were. The
     * capsule's surface velocity gives it the side record of the few colliders that set one. */
    gy_collider_def parts[3] = {sphere_def(0.5), box_def(gy_v3(1, 1, 1)), capsule_def(0.2, 1)};
    parts[1].local_pose.position = gy_v3(1, 0, 0);
    parts[2].surface_velocity = gy_v3(0, 0, 1);
    gy_body_def bd = body_at(GY_MOTION_DYNAMIC, gy_v3(0, 0, 0));
    gy_body_id bodies[2] = {{0}, {0}};
    gy_resource_id hull = {0}, mesh = {0};
    gy_joint_id joint = {0};
    for (int what = 0; what < 5; what++) {
        bool done = false;
        for (uint64_t k = 1; k <= 256 && !done; k++) {
            gy_backend_counters before = counters(fx);
            fx->ta.fail_at = fx->ta.calls + k;
            gy_result r;
            if (what < 2) {
                r = fx->be->body_create(fx->w, &bd, parts, 3, &bodies[what], NULL);
            } else if (what == 2) {
                gy_hull_def hd = {cube_points, 8};
                r = fx->be->hull_create(fx->w, &hd, &hull);
            } else if (what == 3) {
                gy_mesh_def md = {quad_vertices, 4, quad_indices, 6};
                r = fx->be->mesh_create(fx->w, &md, &mesh);
            } else {
                gy_joint_def jd = gy_default_joint_def();
                jd.a = bodies[0];
                jd.b = bodies[1];
                r = fx->be->joint_create(fx->w, &jd, &joint);
            }
            fx->ta.fail_at = 0;
            if (r == GY_OK) {
                done = true;
            } else {
                gy_test_assert_result_(r, GY_ERR_OUT_OF_MEMORY, "create under failing allocator",
                                       __FILE__, __LINE__);
                expect_counters_equal(before, counters(fx), "failed create");
            }
        }
        assert_true(done);
    }
    /* The world still works. */
    step_n(fx, 5);
    assert_result(fx->be->joint_release(fx->w, joint), GY_OK);
    release_body(fx, bodies[0]);
    release_body(fx, bodies[1]);
    fx->be->resource_release(fx->w, hull);
    fx->be->resource_release(fx->w, mesh);
    expect_empty(fx);
}

/* The collider a ray straight down through (x, z) hits first, or 0. */
static uint64_t collider_below(fixture *fx, double x, double z)
{
    gy_query_filter f = default_filter();
    gy_hit hit;
    uint32_t n = 0;
    assert_result(fx->be->raycast(fx->w, gy_v3(x, 10, z), gy_v3(0, -20, 0), &f, GY_COLLECT_CLOSEST,
                                  &hit, 1, &n),
                  GY_OK);
    return n == 1 ? hit.collider.bits : 0u;
}

/* A static of three boxes put elsewhere while allocations fail: each failure is
 * GY_ERR_OUT_OF_MEMORY and leaves every box where it was and found there (the front end has the
 * driver put the static back and re-indexes what it had moved); the first success moves them
 * all. */
static void test_contract_static_set_pose_out_of_memory_leaves_it_where_it_was(void **state)
{
    fixture *fx = *state;
    gy_collider_def parts[3] = {box_def(gy_v3(1, 1, 1)), box_def(gy_v3(1, 1, 1)),
                                box_def(gy_v3(1, 1, 1))};
    parts[1].local_pose.position = gy_v3(8, 0, 0);
    parts[2].local_pose.position = gy_v3(0, 0, 8);
    gy_body_def bd = body_at(GY_MOTION_STATIC, gy_v3(0, 0, 0));
    gy_collider_id ids[3];
    gy_body_id b = create_body(fx, &bd, parts, 3, ids);
    /* Moved by (8, 0, 8): each box lands where another was, or nowhere yet. */
    const double shift = 8.0;
    bool moved = false;
    uint32_t failures = 0;
    for (uint64_t k = 1; k <= 256 && !moved; k++) {
        fx->ta.fail_at = fx->ta.calls + k;
        gy_result r = fx->be->body_set_pose(fx->w, b, pose_at(gy_v3(shift, 0, shift)));
        fx->ta.fail_at = 0;
        moved = r == GY_OK;
        if (!moved) {
            failures++;
            assert_result(r, GY_ERR_OUT_OF_MEMORY);
            assert_int_equal(collider_below(fx, 0, 0), ids[0].bits);
            assert_int_equal(collider_below(fx, 8, 0), ids[1].bits);
            assert_int_equal(collider_below(fx, 0, 8), ids[2].bits);
            assert_int_equal(collider_below(fx, 16, 8), 0);
        }
    }
    assert_true(moved && failures > 0); /* the new places needed room */
    assert_int_equal(collider_below(fx, 8, 8), ids[0].bits);
    assert_int_equal(collider_below(fx, 16, 8), ids[1].bits);
    assert_int_equal(collider_below(fx, 8, 16), ids[2].bits);
    assert_int_equal(collider_below(fx, 0, 0), 0);
    release_body(fx, b);
    expect_empty(fx);
}

/* A static put elsewhere that runs out of memory part-way attempts no allocation after the one
 * that failed, going back. Its first box leaves a cell that other statics fill, its second takes
 * the room the first left there, and its third needs a new cell. Put back in the reverse of the
 * order they moved, each box finds the room it left; in the same order the first would find its
 * old cell full, and the cell would have to grow. The cell is filled to every count up to 17, so
 * that one of them reaches its capacity however the grid grows cells; each round moves to cells
 * never used before. The static is made under failing allocations too: a failure leaves none of
 * its boxes found (test_ode_adapter.c checks the grid holds none). */
static void test_contract_static_set_pose_out_of_memory_allocates_nothing_going_back(void **state)
{
    fixture *fx = *state;
    gy_collider_def one = box_def(gy_v3(1, 1, 1));
    gy_body_def at_origin = body_at(GY_MOTION_STATIC, gy_v3(0, 0, 0));
    gy_body_id fillers[17];
    uint32_t failures = 0;
    for (uint32_t fill = 0; fill < 17; fill++) {
        /* Every box in the middle of a 4 m cell (the front end's static grid): one cell each. */
        gy_collider_def parts[3] = {one, one, one};
        double away = 8.0 * (fill + 1);
        parts[0].local_pose.position = gy_v3(2, 0, 2);
        parts[1].local_pose.position = gy_v3(2 + away, 0, 2);
        parts[2].local_pose.position = gy_v3(2, 0, 18);
        gy_body_def bd = body_at(GY_MOTION_STATIC, gy_v3(2, 0, 2));
        for (uint32_t i = 0; i < fill; i++)
            fillers[i] = create_body(fx, &bd, &one, 1, NULL);
        gy_collider_id ids[3];
        gy_body_id b = {0};
        for (uint64_t k = 1; k <= 256 && b.bits == 0; k++) {
            fx->ta.fail_at = fx->ta.calls + k;
            gy_result r = fx->be->body_create(fx->w, &at_origin, parts, 3, &b, ids);
            fx->ta.fail_at = 0;
            if (r != GY_OK) {
                assert_result(r, GY_ERR_OUT_OF_MEMORY);
                assert_int_equal(collider_below(fx, 2 + away, 2), 0);
                assert_int_equal(collider_below(fx, 2, 18), 0);
            }
        }
        assert_true(b.bits != 0);
        bool moved = false;
        for (uint64_t k = 1; k <= 256 && !moved; k++) {
            uint64_t fail_at = fx->ta.calls + k;
            fx->ta.fail_at = fail_at;
            gy_result r = fx->be->body_set_pose(fx->w, b, pose_at(gy_v3(-away, 0, 0)));
            uint64_t calls = fx->ta.calls;
            fx->ta.fail_at = 0;
            moved = r == GY_OK;
            if (moved)
                continue;
            failures++;
            assert_result(r, GY_ERR_OUT_OF_MEMORY);
            assert_int_equal(calls, fail_at);
            assert_int_equal(collider_below(fx, 2 + away, 2), ids[1].bits);
            assert_int_equal(collider_below(fx, 2, 18), ids[2].bits);
        }
        assert_true(moved);
        assert_int_equal(collider_below(fx, 2 - away, 2), ids[0].bits);
        assert_int_equal(collider_below(fx, 2 - away, 18), ids[2].bits);
        release_body(fx, b);
        for (uint32_t i = 0; i < fill; i++)
            release_body(fx, fillers[i]);
    }
    assert_true(failures > 0);
    expect_empty(fx);
}

/* ---- main --------------------------------------------------------------------------------------
 */

/* The shared pose check every boundary uses (adapters, the physics subsystem's records, the
 * query snapshot): which fault gives which error. */
static void test_contract_validate_pose_names_the_fault(void **state)
{
    (void)state;
    gy_pose p = gy_pose_identity();
    assert_result(gy_validate_pose(p), GY_OK);
    p.rotation = gy_quat_axis_angle(gy_v3(0, 1, 0), 0.7);
    assert_result(gy_validate_pose(p), GY_OK);
    p.position.y = NAN;
    assert_result(gy_validate_pose(p), GY_ERR_NON_FINITE);
    p = gy_pose_identity();
    p.rotation.z = INFINITY;
    assert_result(gy_validate_pose(p), GY_ERR_NON_FINITE);
    p = gy_pose_identity();
    p.rotation.w = 1.01; /* finite, not unit */
    assert_result(gy_validate_pose(p), GY_ERR_INVALID_ARGUMENT);
    p.rotation.w = 1.0005; /* within the 1e-3 tolerance */
    assert_result(gy_validate_pose(p), GY_OK);
}

/* The mass check body_set_mass uses: which fault gives which error. */
static void test_contract_validate_mass_names_the_fault(void **state)
{
    (void)state;
    assert_result(gy_validate_mass(1.0), GY_OK);
    assert_result(gy_validate_mass(GY_MIN_MASS), GY_OK);
    assert_result(gy_validate_mass(GY_MAX_MASS), GY_OK);
    /* Below the creation range, down to a denormal (its inverse is infinite), and above it. */
    assert_result(gy_validate_mass(GY_MIN_MASS / 10), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_validate_mass(1e-320), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_validate_mass(GY_MAX_MASS * 10), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_validate_mass(NAN), GY_ERR_NON_FINITE);
    assert_result(gy_validate_mass(INFINITY), GY_ERR_NON_FINITE);
    assert_result(gy_validate_mass(-INFINITY), GY_ERR_NON_FINITE);
    assert_result(gy_validate_mass(0.0), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_validate_mass(-0.0), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_validate_mass(-2.0), GY_ERR_INVALID_ARGUMENT);
}

/* The shape and pose check every shape cast and overlap starts with: the shape's fault first,
 * then the pose's, then a shape type queries do not take; the shape is only read. */
static void test_contract_validate_query_shape_names_the_fault(void **state)
{
    (void)state;
    gy_pose pose = gy_pose_identity();
    assert_result(gy_validate_query_shape(NULL, pose), GY_ERR_INVALID_ARGUMENT);

    gy_shape s;
    memset(&s, 0, sizeof s);
    s.type = GY_SHAPE_SPHERE;
    s.radius = 0.5;
    gy_shape kept = s;
    assert_result(gy_validate_query_shape(&s, pose), GY_OK);
    s.radius = NAN;
    assert_result(gy_validate_query_shape(&s, pose), GY_ERR_NON_FINITE);
    s.radius = -1.0;
    assert_result(gy_validate_query_shape(&s, pose), GY_ERR_INVALID_SHAPE);
    s = kept;

    gy_pose bad = pose;
    bad.position.x = INFINITY;
    assert_result(gy_validate_query_shape(&s, bad), GY_ERR_NON_FINITE);
    bad = pose;
    bad.rotation.w = 2.0; /* finite, not unit */
    assert_result(gy_validate_query_shape(&s, bad), GY_ERR_INVALID_ARGUMENT);
    s.radius = NAN; /* the shape's fault is named before the pose's */
    assert_result(gy_validate_query_shape(&s, bad), GY_ERR_NON_FINITE);
    s = kept;

    s.type = (gy_shape_type)GY_SHAPE_TYPE_COUNT;
    assert_result(gy_validate_query_shape(&s, pose), GY_ERR_INVALID_ARGUMENT);
    s = kept;
    s.type = GY_SHAPE_CYLINDER;
    s.height = 2.0;
    assert_result(gy_validate_query_shape(&s, pose), GY_ERR_UNSUPPORTED);
    memset(&s, 0, sizeof s);
    s.type = GY_SHAPE_PLANE;
    s.normal = gy_v3(0, 1, 0);
    assert_result(gy_validate_query_shape(&s, pose), GY_ERR_UNSUPPORTED);
    memset(&s, 0, sizeof s);
    s.type = GY_SHAPE_MESH;
    s.resource.bits = 5;
    assert_result(gy_validate_query_shape(&s, pose), GY_ERR_UNSUPPORTED);
    s.type = GY_SHAPE_HULL;
    assert_result(gy_validate_query_shape(&s, pose), GY_OK);
    s.resource.bits = 0; /* no hull named */
    assert_result(gy_validate_query_shape(&s, pose), GY_ERR_STALE_HANDLE);
    assert_int_equal(s.type, GY_SHAPE_HULL);
}

#define CONTRACT_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(int argc, char **argv)
{
    int status = contract_select_backend(argc, argv, "middleware contract");
    if (status != 0)
        return status;

    const struct CMUnitTest tests[] = {
        CONTRACT_TEST(test_contract_free_fall_matches_analytic),
        CONTRACT_TEST(test_contract_fall_past_a_wall_it_never_touches_is_free_fall),
        CONTRACT_TEST(test_contract_validate_pose_names_the_fault),
        CONTRACT_TEST(test_contract_validate_mass_names_the_fault),
        CONTRACT_TEST(test_contract_validate_query_shape_names_the_fault),
        CONTRACT_TEST(test_contract_gravity_and_gravity_factor_apply),
        CONTRACT_TEST(test_contract_force_acts_for_the_whole_step_at_any_substep_count),
        CONTRACT_TEST(test_contract_force_on_a_sleeper_wakes_it_and_acts_for_one_step),
        CONTRACT_TEST(test_contract_box_comes_to_rest_and_sleeps),
        CONTRACT_TEST(test_contract_small_ball_rolling_slowly_falls_asleep),
        CONTRACT_TEST(test_contract_long_beam_turning_slowly_stays_awake),
        CONTRACT_TEST(test_contract_set_awake_sleeps_in_place_and_wakes_into_free_fall),
        CONTRACT_TEST(test_contract_waking_a_resting_body_starts_its_sleep_time_over),
        CONTRACT_TEST(test_contract_woken_body_that_may_not_sleep_stays_awake_at_rest),
        CONTRACT_TEST(test_contract_static_set_pose_out_of_memory_leaves_it_where_it_was),
        CONTRACT_TEST(test_contract_static_set_pose_out_of_memory_allocates_nothing_going_back),
        CONTRACT_TEST(test_contract_every_write_wakes_a_sleeping_body),
        CONTRACT_TEST(test_contract_set_gravity_wakes_sleeper_which_moves_with_new_g),
        CONTRACT_TEST(test_contract_sleeper_struck_keeps_the_momentum_it_takes),
        CONTRACT_TEST(test_contract_set_mass_scales_impulse_response),
        CONTRACT_TEST(test_contract_set_material_changes_the_bounce),
        CONTRACT_TEST(test_contract_set_filter_stops_and_starts_collision_in_place),
        CONTRACT_TEST(test_contract_collider_policy_is_read_in_world_space),
        CONTRACT_TEST(test_contract_static_created_over_sleeper_wakes_it),
        CONTRACT_TEST(test_contract_static_moved_onto_sleeper_wakes_it),
        CONTRACT_TEST(test_contract_kinematic_moved_away_wakes_the_sleeper_it_held),
        CONTRACT_TEST(test_contract_kinematic_sweeping_into_a_sleeper_wakes_and_pushes_it),
        CONTRACT_TEST(test_contract_kinematic_striking_a_sleeper_moves_it_in_the_step_it_touches),
        CONTRACT_TEST(test_contract_static_near_sleeper_leaves_it_asleep),
        CONTRACT_TEST(test_contract_static_sensor_created_over_sleeper_is_reported),
        CONTRACT_TEST(test_contract_static_released_under_sleeper_wakes_it),
        CONTRACT_TEST(test_contract_restitution_rebounds_to_e_squared_height),
        CONTRACT_TEST(test_contract_restitution_combine_uses_higher_precedence_mode),
        CONTRACT_TEST(test_contract_penetration_recovery_adds_no_energy),
        CONTRACT_TEST(test_contract_shallow_overlap_is_left_without_its_correction_speed),
        CONTRACT_TEST(test_contract_restitution_is_exact_across_bounces),
        CONTRACT_TEST(test_contract_bounce_keeps_its_rebound_when_the_ball_leaves),
        CONTRACT_TEST(test_contract_combine_precedence_table),
        CONTRACT_TEST(test_contract_restitution_pairs_follow_the_precedence_table),
        CONTRACT_TEST(test_contract_ramp_slides_coulomb_distance),
        CONTRACT_TEST(test_contract_ramp_friction_pair_is_symmetric),
        CONTRACT_TEST(test_contract_friction_multiply_outranks_min),
        CONTRACT_TEST(test_contract_ramp_holds_above_friction_angle),
        CONTRACT_TEST(test_contract_ten_box_stack_stands),
        CONTRACT_TEST(test_contract_friction_brakes_a_spin_by_coulomb_torque),
        CONTRACT_TEST(test_contract_friction_is_isotropic_in_the_plane),
        CONTRACT_TEST(test_contract_sensor_reports_overlap_without_pushing),
        CONTRACT_TEST(test_contract_contact_response_off_reports_without_pushing),
        CONTRACT_TEST(test_contract_sensor_reports_on_the_step_of_first_overlap),
        CONTRACT_TEST(test_contract_category_mask_disables_collision),
        CONTRACT_TEST(test_contract_conveyor_carries_box),
        CONTRACT_TEST(test_contract_one_way_platform_passes_from_below_holds_from_above),
        CONTRACT_TEST(test_contract_one_way_platform_ignores_a_hit_on_its_edge),
        CONTRACT_TEST(test_contract_one_way_landing_when_memory_runs_out_still_holds),
        CONTRACT_TEST(test_contract_one_way_platform_judges_a_tilted_body_by_its_deepest_point),
        CONTRACT_TEST(test_contract_one_way_platform_lands_bodies_within_its_slop),
        CONTRACT_TEST(test_contract_raycast_hits_plane_at_distance_with_normal),
        CONTRACT_TEST(test_contract_raycast_from_inside_a_capsule_reports_its_exit),
        CONTRACT_TEST(test_contract_query_filter_fields_exclude),
        CONTRACT_TEST(test_contract_query_collectors_any_closest_all),
        CONTRACT_TEST(test_contract_query_all_never_writes_past_capacity),
        CONTRACT_TEST(test_contract_raycast_mesh_reports_triangle),
        CONTRACT_TEST(test_contract_shape_casts_hit_wall_at_fraction_with_normal),
        CONTRACT_TEST(test_contract_shape_cast_finds_a_grazing_contact),
        CONTRACT_TEST(test_contract_overlap_finds_touching_colliders),
        CONTRACT_TEST(test_contract_hinge_pendulum_small_angle_period),
        CONTRACT_TEST(test_contract_joint_to_static_disables_their_contacts),
        CONTRACT_TEST(test_contract_jointed_bodies_collide_again_only_when_their_last_joint_goes),
        CONTRACT_TEST(test_contract_releasing_a_body_takes_exactly_its_joints),
        CONTRACT_TEST(test_contract_breakable_joint_breaks_above_force_holds_below),
        CONTRACT_TEST(test_contract_fixed_joint_holds_bodies_together),
        CONTRACT_TEST(test_contract_fixed_joint_holds_a_heavy_body_without_sagging),
        CONTRACT_TEST(test_contract_slider_limits_stop_at_limit),
        CONTRACT_TEST(test_contract_slider_hitting_its_limit_fast_stops_and_stays),
        CONTRACT_TEST(test_contract_hinge_limits_stop_at_limit),
        CONTRACT_TEST(test_contract_distance_joint_keeps_distance),
        CONTRACT_TEST(test_contract_ccd_sphere_does_not_tunnel_thin_wall),
        CONTRACT_TEST(test_contract_ccd_sphere_rebounds_off_bouncy_wall),
        CONTRACT_TEST(test_contract_ccd_hit_is_reported_as_a_contact),
        CONTRACT_TEST(test_contract_ccd_hit_hands_momentum_to_the_struck_body),
        CONTRACT_TEST(test_contract_compound_hangs_with_com_below_pivot),
        CONTRACT_TEST(test_contract_mass_from_density_and_volume),
        CONTRACT_TEST(test_contract_axis_locks_hold),
        CONTRACT_TEST(test_contract_axis_lock_holds_against_contacts),
        CONTRACT_TEST(test_contract_axis_locks_take_an_impulse_as_physics_does),
        CONTRACT_TEST(test_contract_translation_locked_box_keeps_spinning_on_a_floor_it_overlaps),
        CONTRACT_TEST(test_contract_kinematic_reaches_target_in_one_step),
        CONTRACT_TEST(test_contract_kinematic_keeps_velocity),
        CONTRACT_TEST(test_contract_point_velocity_of_rotating_body),
        CONTRACT_TEST(test_contract_contact_report_for_resting_box),
        CONTRACT_TEST(test_contract_many_resting_pairs_each_reported_once),
        CONTRACT_TEST(test_contract_resting_box_keeps_its_contact),
        CONTRACT_TEST(test_contract_resting_pair_parting_under_a_millimetre_stays_reported),
        CONTRACT_TEST(test_contract_boxes_resting_just_apart_both_fall_asleep),
        CONTRACT_TEST(test_contract_resting_contact_reports_its_weight_over_any_step_length),
        CONTRACT_TEST(
            test_contract_resting_contact_reports_its_weight_through_the_step_it_sleeps_in),
        CONTRACT_TEST(test_contract_counters_track_live_objects),
        CONTRACT_TEST(test_contract_resources_are_refcounted),
        CONTRACT_TEST(test_contract_create_release_cycles_leave_nothing),
        CONTRACT_TEST(test_contract_released_handles_are_stale),
        CONTRACT_TEST(test_contract_invalid_body_defs_rejected),
        CONTRACT_TEST(test_contract_invalid_shapes_and_colliders_rejected),
        CONTRACT_TEST(test_contract_invalid_resources_rejected),
        CONTRACT_TEST(test_contract_mesh_piece_needs_valid_edge_flags),
        CONTRACT_TEST(test_contract_invalid_joint_defs_rejected),
        CONTRACT_TEST(test_contract_invalid_calls_rejected),
        CONTRACT_TEST(test_contract_invalid_world_defs_rejected),
        CONTRACT_TEST(test_contract_world_destroy_releases_live_objects),
        CONTRACT_TEST(test_contract_out_of_memory_fails_cleanly),
    };
    return cmocka_run_group_tests_name("contract", tests, NULL, NULL);
}
