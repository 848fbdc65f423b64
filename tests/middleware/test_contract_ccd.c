/* The middleware contract for continuous collision and for sliding over triangle meshes, checked
 * against one adapter named on the command line (argv[1]; an optional argv[2] is a cmocka
 * test-name filter), through the public headers only, so every adapter runs this file unchanged.
 *
 * Each check compares with the analytic answer at dt = 1/60 s and states its tolerance next to
 * the assert. Every test gets a fresh world whose allocator counts blocks; the teardown fails when
 * world_destroy leaves any behind. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

#include "gyre/backend/backend.h"
#include "gyre/math.h"

#define DT (1.0 / 60.0)

#include "contract_fixture.h"

/* A body of one collider: dynamic ones undamped, with no gravity unless `gravity`. */
static gy_body_id make_body(fixture *fx, gy_motion_type type, gy_vec3 p, gy_vec3 v, double mass,
                            bool continuous, const gy_collider_def *cd)
{
    gy_body_def bd = gy_default_body_def();
    bd.type = type;
    bd.pose.position = p;
    bd.linear_velocity = v;
    bd.mass = mass;
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    bd.gravity_factor = 0.0;
    bd.continuous = continuous;
    gy_body_id id = {0};
    assert_result(fx->be->body_create(fx->w, &bd, cd, 1, &id, NULL), GY_OK);
    return id;
}

static gy_collider_def box_def(gy_vec3 size, double friction, double restitution)
{
    gy_collider_def cd = gy_default_collider_def();
    cd.shape.type = GY_SHAPE_BOX;
    cd.shape.box_size = size;
    cd.material.friction = friction;
    cd.material.restitution = restitution;
    return cd;
}

static gy_collider_def sphere_def(double radius, double friction, double restitution)
{
    gy_collider_def cd = gy_default_collider_def();
    cd.shape.radius = radius;
    cd.material.friction = friction;
    cd.material.restitution = restitution;
    return cd;
}

static gy_body_state state_of(fixture *fx, gy_body_id b)
{
    gy_body_state s;
    assert_result(fx->be->body_get_state(fx->w, b, &s), GY_OK);
    return s;
}

/* Whether this step's contact report holds a pair naming both bodies. */
static bool reported(fixture *fx, gy_body_id a, gy_body_id b)
{
    const gy_contact *cs = NULL;
    uint32_t n = fx->be->contacts(fx->w, &cs);
    for (uint32_t i = 0; i < n; i++)
        if ((cs[i].body_a.bits == a.bits && cs[i].body_b.bits == b.bits) ||
            (cs[i].body_a.bits == b.bits && cs[i].body_b.bits == a.bits))
            return true;
    return false;
}

/* Steps until the two bodies' pair is reported (at most `max_steps`); the number of steps taken,
 * or -1 when it never was. */
static int step_until_reported(fixture *fx, gy_body_id a, gy_body_id b, int max_steps)
{
    for (int i = 1; i <= max_steps; i++) {
        assert_result(fx->be->step(fx->w, DT), GY_OK);
        if (reported(fx, a, b))
            return i;
    }
    return -1;
}

static void step_n(fixture *fx, int n)
{
    for (int i = 0; i < n; i++)
        assert_result(fx->be->step(fx->w, DT), GY_OK);
}

/* ---- continuous collision ------------------------------------------------------------------- */

static void test_ccd_bullet_stopped_by_thin_wall_reports_contact(void **state)
{
    fixture *fx = *state;
    gy_collider_def wc = box_def(gy_v3(0.05, 2, 2), 0.5, 0.0);
    gy_body_id wall =
        make_body(fx, GY_MOTION_STATIC, gy_v3(5, 0, 0), gy_v3(0, 0, 0), 0, false, &wc);
    /* A 5 cm sphere at 100 m/s moves 1.67 m per step, 33 times its size. */
    gy_collider_def cd = sphere_def(0.025, 0.5, 0.0);
    gy_body_id bullet =
        make_body(fx, GY_MOTION_DYNAMIC, gy_v3(0, 0, 0), gy_v3(100, 0, 0), 0, true, &cd);

    /* It reaches the wall in the third step; the contact is reported within the step after
     * continuous collision stops it there, like any other contact. */
    int steps = step_until_reported(fx, bullet, wall, 6);
    assert_between(steps, 1, 6);
    gy_body_state s = state_of(fx, bullet);
    /* Restitution 0: the solver removes the approach speed. What remains is the push out of the
     * at most 1 mm overlap it was placed with (ERP × 1 mm × 60 Hz, about 0.02 m/s): 1% of the
     * impact speed bounds it. */
    assert_near(s.linear_velocity.x, 0.0, 1.0);
    assert_between(s.pose.position.x, 5.0 - 0.025 - 0.025 - 0.01, 5.0 - 0.025 - 0.025 + 0.002);

    fx->be->body_release(fx->w, bullet);
    fx->be->body_release(fx->w, wall);
}

static void test_ccd_boxes_moving_towards_each_other_collide(void **state)
{
    fixture *fx = *state;
    gy_collider_def cd = box_def(gy_v3(0.2, 0.2, 0.2), 0.0, 0.0);
    /* 2 kg at +50 m/s and 1 kg at −40 m/s close at 1.5 m per step, 7.5 times their summed size:
     * stepped discretely they pass through each other between two steps. */
    gy_body_id a = make_body(fx, GY_MOTION_DYNAMIC, gy_v3(-4, 0, 0), gy_v3(50, 0, 0), 2, true, &cd);
    gy_body_id b = make_body(fx, GY_MOTION_DYNAMIC, gy_v3(4, 0, 0), gy_v3(-40, 0, 0), 1, true, &cd);

    int steps = step_until_reported(fx, a, b, 12);
    assert_between(steps, 1, 12);
    step_n(fx, 10);
    gy_body_state sa = state_of(fx, a), sb = state_of(fx, b);
    /* Perfectly inelastic (restitution 0): both move on at the common velocity
     * (2 × 50 − 40) / 3 = 20 m/s, a on the near side of b. The bodies were placed at the time of
     * impact with at most 1 mm of overlap, whose push-out separates them at no more than
     * ERP × 1 mm × 60 Hz ≈ 0.02 m/s; 2% of the closing speed (1.8 m/s) bounds that and the
     * iterative solver's remainder. Momentum is exchanged, never made: 1%. */
    assert_near(sa.linear_velocity.x, 20.0, 1.8);
    assert_near(sb.linear_velocity.x, 20.0, 1.8);
    assert_near(2.0 * sa.linear_velocity.x + sb.linear_velocity.x, 60.0, 0.6);
    assert_between(sb.pose.position.x - sa.pose.position.x, 0.2 - 0.01, 0.2 + 0.1);

    fx->be->body_release(fx->w, a);
    fx->be->body_release(fx->w, b);
}

static void test_ccd_box_hitting_resting_box_shares_momentum(void **state)
{
    fixture *fx = *state;
    gy_collider_def cd = box_def(gy_v3(0.2, 0.2, 0.2), 0.0, 0.0);
    /* The struck box rests (and falls asleep) for the 0.67 s the fast one takes to arrive. */
    gy_body_id target =
        make_body(fx, GY_MOTION_DYNAMIC, gy_v3(0, 0, 0), gy_v3(0, 0, 0), 1, false, &cd);
    gy_body_id shot =
        make_body(fx, GY_MOTION_DYNAMIC, gy_v3(-40, 0, 0), gy_v3(60, 0, 0), 1, true, &cd);

    int steps = step_until_reported(fx, shot, target, 50);
    assert_between(steps, 30, 50);
    step_n(fx, 5);
    gy_body_state ss = state_of(fx, shot), st = state_of(fx, target);
    /* Equal masses, restitution 0: both move on at 30 m/s. Tolerance as above: 2% of the impact
     * speed on each velocity, 1% on the momentum. */
    assert_near(ss.linear_velocity.x, 30.0, 1.2);
    assert_near(st.linear_velocity.x, 30.0, 1.2);
    assert_near(ss.linear_velocity.x + st.linear_velocity.x, 60.0, 0.6);
    assert_between(st.pose.position.x - ss.pose.position.x, 0.2 - 0.01, 0.2 + 0.1);

    fx->be->body_release(fx->w, shot);
    fx->be->body_release(fx->w, target);
}

static void test_ccd_angled_elastic_hit_obeys_equal_masses(void **state)
{
    fixture *fx = *state;
    /* Frictionless, restitution 1, equal 1 kg spheres of radius 5 cm; the struck one's centre is
     * 5 cm off the line of flight, so the line of centres at impact is 30° to it:
     * n = (cos 30°, sin 30°, 0). The struck sphere leaves along n with v·n = 60 cos 30°; the
     * other keeps the tangential part: (15, −25.98) and (45, 25.98) m/s, at right angles. */
    gy_collider_def cd = sphere_def(0.05, 0.0, 1.0);
    gy_body_id target =
        make_body(fx, GY_MOTION_DYNAMIC, gy_v3(0, 0.05, 0), gy_v3(0, 0, 0), 1, false, &cd);
    gy_body_id shot =
        make_body(fx, GY_MOTION_DYNAMIC, gy_v3(-3, 0, 0), gy_v3(60, 0, 0), 1, true, &cd);

    int steps = step_until_reported(fx, shot, target, 6);
    assert_between(steps, 1, 6);
    step_n(fx, 2);
    gy_vec3 vs = state_of(fx, shot).linear_velocity, vt = state_of(fx, target).linear_velocity;
    /* The body is placed up to 1 mm past first touch along its path, which turns the line of
     * centres by up to 1 mm × sin 30° / 10 cm = 0.005 rad: 0.3 m/s on a component. 2% of the
     * speed (1.2 m/s) bounds that and restitution's remainder. Momentum is conserved to 1%. */
    const double c30 = cos(GY_PI / 6.0), s30 = sin(GY_PI / 6.0), vn = 60.0 * c30;
    assert_near(vt.x, vn * c30, 1.2);
    assert_near(vt.y, vn * s30, 1.2);
    assert_near(vs.x, 60.0 - vn * c30, 1.2);
    assert_near(vs.y, -vn * s30, 1.2);
    assert_near(vs.x + vt.x, 60.0, 0.6);
    assert_near(vs.y + vt.y, 0.0, 0.6);

    fx->be->body_release(fx->w, shot);
    fx->be->body_release(fx->w, target);
}

/* ---- triangle meshes ------------------------------------------------------------------------ */

#define GRID_CELLS 16 /* a 16 m × 16 m floor of 1 m squares, two triangles each, at y = 0 */

/* A 16 m × 16 m static floor of 1 m squares at y = 0, two triangles each (a diagonal across
 * every square), with friction `friction`; its mesh in *mesh. */
static gy_body_id grid_floor(fixture *fx, double friction, gy_resource_id *mesh)
{
    gy_vec3 vertices[(GRID_CELLS + 1) * (GRID_CELLS + 1)];
    uint32_t indices[GRID_CELLS * GRID_CELLS * 6];
    uint32_t nv = 0, ni = 0;
    for (int z = 0; z <= GRID_CELLS; z++)
        for (int x = 0; x <= GRID_CELLS; x++)
            vertices[nv++] = gy_v3(x - GRID_CELLS / 2, 0, z - GRID_CELLS / 2);
    for (uint32_t z = 0; z < GRID_CELLS; z++)
        for (uint32_t x = 0; x < GRID_CELLS; x++) {
            uint32_t i0 = z * (GRID_CELLS + 1) + x, i1 = i0 + 1, i2 = i0 + GRID_CELLS + 1,
                     i3 = i2 + 1;
            /* Counter-clockwise seen from above: normals up. */
            uint32_t quad[6] = {i0, i2, i1, i1, i2, i3};
            for (int k = 0; k < 6; k++)
                indices[ni++] = quad[k];
        }
    gy_mesh_def md = {vertices, nv, indices, ni};
    assert_result(fx->be->mesh_create(fx->w, &md, mesh), GY_OK);
    gy_collider_def fc = gy_default_collider_def();
    fc.shape.type = GY_SHAPE_MESH;
    fc.shape.resource = *mesh;
    fc.material.friction = friction;
    return make_body(fx, GY_MOTION_STATIC, gy_v3(0, 0, 0), gy_v3(0, 0, 0), 0, false, &fc);
}

/* Slides a frictionless 0.5 m box, created resting on the tessellated floor, at 3 m/s along
 * `heading` (radians from +X in the floor plane) for 2 s, across about six edges between squares
 * and as many diagonals, and checks it glides as over a flat plane. */
static void slide_over_grid(fixture *fx, double heading)
{
    gy_resource_id mesh = {0};
    gy_body_id floor = grid_floor(fx, 0.0, &mesh);

    gy_body_def bd = gy_default_body_def();
    bd.pose.position = gy_v3(-3.0 * cos(heading) + 0.3, 0.25, -3.0 * sin(heading) + 0.3);
    bd.linear_velocity = gy_v3(3.0 * cos(heading), 0, 3.0 * sin(heading));
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    bd.allow_sleeping = false;
    gy_collider_def cd = box_def(gy_v3(0.5, 0.5, 0.5), 0.0, 0.0);
    gy_body_id box = {0};
    assert_result(fx->be->body_create(fx->w, &bd, &cd, 1, &box, NULL), GY_OK);

    double min_speed = INFINITY, high = -INFINITY;
    for (int i = 0; i < 120; i++) {
        step_n(fx, 1);
        gy_body_state s = state_of(fx, box);
        gy_vec3 v = s.linear_velocity;
        min_speed = fmin(min_speed, sqrt(v.x * v.x + v.z * v.z));
        high = fmax(high, s.pose.position.y);
    }
    gy_body_state s = state_of(fx, box);
    gy_vec3 v = s.linear_velocity;
    /* On a flat frictionless plane nothing acts along it: the speed stays 3 m/s exactly, at
     * every step, on its heading. An edge pushing back takes a bite each time it is crossed
     * (ODE lost about 2 mm/s per slide here, Bullet caught an edge and lost half its speed):
     * 1 mm/s over the whole slide allows none. */
    assert_near(min_speed, 3.0, 1e-3);
    assert_near(v.x, 3.0 * cos(heading), 1e-3);
    assert_near(v.z, 3.0 * sin(heading), 1e-3);
    /* Nothing lifts it over an edge: its centre never rises 1 cm above its half size (a box
     * tipped up on an edge rises by centimetres). How deep it rides is the narrow phase's
     * business, not the edges' (docs/middleware.md: Bullet's mesh manifold). */
    assert_between(high, 0.25 - 0.01, 0.25 + 0.01);
    assert_true(reported(fx, box, floor));

    fx->be->body_release(fx->w, box);
    fx->be->body_release(fx->w, floor);
    fx->be->resource_release(fx->w, mesh);
}

/* Rolls a 0.25 m ball, created resting on the tessellated floor, at 3 m/s along `heading` (rolling
 * without slipping: spin v / r about the horizontal axis across its heading) for 2 s, over about
 * six edges between squares and as many diagonals. On a plane nothing slows it, turns it or lifts
 * it; each edge used to kick the ball up and sideways on Bullet (0.37 m/s up, 0.6 m/s across) and
 * up on ODE (0.27 m/s). Its first 10 steps, while it settles into the contact layer, are not held
 * to it. */
static void roll_over_grid(fixture *fx, double heading)
{
    gy_resource_id mesh = {0};
    gy_body_id floor = grid_floor(fx, 0.5, &mesh);
    const double v0 = 3.0, r = 0.25;
    gy_vec3 dir = gy_v3(cos(heading), 0, sin(heading)),
            side = gy_v3(-sin(heading), 0, cos(heading));
    gy_body_def bd = gy_default_body_def();
    bd.pose.position = gy_v3(-3.0 * dir.x + 0.3, r, -3.0 * dir.z + 0.3);
    bd.linear_velocity = gy_v3_scale(dir, v0);
    bd.angular_velocity = gy_v3_scale(gy_v3_cross(gy_v3(0, 1, 0), dir), v0 / r);
    bd.linear_damping = 0.0;
    bd.angular_damping = 0.0;
    bd.allow_sleeping = false;
    gy_collider_def cd = sphere_def(r, 0.5, 0.0);
    gy_body_id ball = {0};
    assert_result(fx->be->body_create(fx->w, &bd, &cd, 1, &ball, NULL), GY_OK);

    double up = 0.0, across = 0.0, low = INFINITY, high = -INFINITY, slow = 0.0;
    for (int i = 0; i < 120; i++) {
        step_n(fx, 1);
        if (i < 10)
            continue;
        gy_body_state s = state_of(fx, ball);
        if (getenv("PROBE"))
            print_message("  %d x=%.3f z=%.3f y=%.4f vy=%.3f\n", i, s.pose.position.x,
                          s.pose.position.z, s.pose.position.y, s.linear_velocity.y);
        up = fmax(up, fabs(s.linear_velocity.y));
        across = fmax(across, fabs(gy_v3_dot(s.linear_velocity, side)));
        slow = fmax(slow, fabs(gy_v3_dot(s.linear_velocity, dir) - v0));
        low = fmin(low, s.pose.position.y);
        high = fmax(high, s.pose.position.y);
    }
    print_message("ball rolling at %.0f deg over mesh edges: up to %.2e m/s vertically, %.2e m/s "
                  "across, %.2e m/s off its speed, centre %.4f..%.4f m\n",
                  heading * 180.0 / GY_PI, up, across, slow, low, high);
    /* 1 cm/s vertically and 5 mm/s across (a rolling ball's heading held to 0.1°); its centre
     * within 2 mm of its radius, the contact layer and settling included. */
    assert_true(up < 0.01);
    assert_true(across < 5e-3);
    assert_true(slow < 0.01);
    assert_between(low, r - 0.002, r + 0.002);
    assert_between(high, r - 0.002, r + 0.002);
    assert_true(reported(fx, ball, floor));

    fx->be->body_release(fx->w, ball);
    fx->be->body_release(fx->w, floor);
    fx->be->resource_release(fx->w, mesh);
}

static void test_mesh_box_slides_across_square_edges_without_loss(void **state)
{
    slide_over_grid(*state, 0.0);
}

static void test_mesh_box_slides_across_diagonals_without_loss(void **state)
{
    slide_over_grid(*state, GY_PI / 6.0);
}

static void test_mesh_ball_rolls_across_edges_level_and_straight(void **state)
{
    roll_over_grid(*state, 0.0);
    roll_over_grid(*state, GY_PI / 6.0);
}

#define CCD_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(int argc, char **argv)
{
    int status = contract_select_backend(argc, argv, "continuous collision and mesh contract");
    if (status != 0)
        return status;
    const struct CMUnitTest tests[] = {
        CCD_TEST(test_ccd_bullet_stopped_by_thin_wall_reports_contact),
        CCD_TEST(test_ccd_boxes_moving_towards_each_other_collide),
        CCD_TEST(test_ccd_box_hitting_resting_box_shares_momentum),
        CCD_TEST(test_ccd_angled_elastic_hit_obeys_equal_masses),
        CCD_TEST(test_mesh_box_slides_across_square_edges_without_loss),
        CCD_TEST(test_mesh_box_slides_across_diagonals_without_loss),
        CCD_TEST(test_mesh_ball_rolls_across_edges_level_and_straight),
    };
    return cmocka_run_group_tests_name("continuous collision and mesh contract", tests, NULL, NULL);
}
