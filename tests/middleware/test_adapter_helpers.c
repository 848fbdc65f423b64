/* Helpers the front end gives the drivers: a hull shrunk by a margin, a body's inverse inertia,
 * damping loss, extent and sleep turn limit (adapter_common.c), the closed-form ray test
 * (queries.c), the bounce rule (contacts.c) and which bodies a joint connects (records.c). */
#include "test_support.h"

#include <math.h>

#include "../../middleware/src/adapter_common.h"
#include "../../middleware/src/contacts.h"
#include "../../middleware/src/queries.h"
#include "../../middleware/src/records.h"
#include "gyre/math.h"

static void build_box_hull(gy_test_allocator *ta, gy_vec3 half, gy_hull *out)
{
    gy_vec3 p[8];
    for (int i = 0; i < 8; i++)
        p[i] = gy_v3(i & 1 ? half.x : -half.x, i & 2 ? half.y : -half.y, i & 4 ? half.z : -half.z);
    assert_result(gy_hull_build(&ta->base, p, 8, out), GY_OK);
}

/* Shrinking `h` by `margin` gives no points; then the points and the hull are freed, no leak. */
static void shrink_to_nothing(gy_test_allocator *ta, gy_hull *h, double margin,
                              gy_adapter_hull_points *out)
{
    assert_result(gy_adapter_hull_shrink(&ta->base, h, margin, out), GY_OK);
    assert_int_equal(out->count, 0);
    gy_adapter_hull_points_free(&ta->base, out);
    gy_hull_free(&ta->base, h);
    assert_int_equal(ta->live_blocks, 0);
}

static void test_hull_shrink_moves_box_faces_in_and_one_past_the_hull_leaves_nothing(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_hull h;
    build_box_hull(&ta, gy_v3(1.0, 0.5, 2.0), &h);
    gy_adapter_hull_points out = {0};
    assert_result(gy_adapter_hull_shrink(&ta.base, &h, 0.1, &out), GY_OK);
    /* Two triangles a face share its plane: six planes, eight corners, each counted once. */
    assert_int_equal(out.count, 8);
    for (uint32_t i = 0; i < out.count; i++) {
        assert_near(fabs(out.items[i].x), 0.9, 1e-12);
        assert_near(fabs(out.items[i].y), 0.4, 1e-12);
        assert_near(fabs(out.items[i].z), 1.9, 1e-12);
        for (uint32_t k = 0; k < i; k++)
            assert_true(gy_v3_len(gy_v3_sub(out.items[i], out.items[k])) > 0.5);
    }
    /* A margin past the smallest half-size leaves no solid. */
    shrink_to_nothing(&ta, &h, 0.6, &out);
}

static void test_hull_shrink_gives_nothing_over_the_plane_limit(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_hull h;
    gy_adapter_hull_points out = {0};
    /* A ball of 200 points has far more distinct face planes than the limit. */
    gy_vec3 p[200];
    for (int i = 0; i < 200; i++) {
        double z = 1.0 - (2.0 * i + 1.0) / 200.0, r = sqrt(1.0 - z * z), a = 2.39996323 * i;
        p[i] = gy_v3(r * cos(a), r * sin(a), z);
    }
    assert_result(gy_hull_build(&ta.base, p, 200, &h), GY_OK);
    assert_true(h.triangle_count > GY_ADAPTER_HULL_SHRINK_MAX_PLANES);
    out.count = 5; /* emptied first */
    shrink_to_nothing(&ta, &h, 0.01, &out);
}

static void test_ray_shape_enters_leaves_from_inside_and_meets_planes_from_either_side(void **state)
{
    (void)state;
    double t;
    gy_vec3 n;
    /* A sphere of radius 1 from 3 m out: hit 2 m along, the normal facing the ray. */
    gy_shape sphere = {.type = GY_SHAPE_SPHERE, .radius = 1.0};
    assert_true(gy_adapter_ray_shape(&sphere, NULL, gy_v3(-3, 0, 0), gy_v3(1, 0, 0), 10.0, &t, &n));
    assert_near(t, 2.0, 1e-12);
    assert_near(n.x, -1.0, 1e-12);
    assert_false(gy_adapter_ray_shape(&sphere, NULL, gy_v3(-3, 0, 0), gy_v3(1, 0, 0), 1.5, &t, &n));
    /* From inside a capsule (along Y), up its axis: where it leaves, the normal turned back. */
    gy_shape capsule = {.type = GY_SHAPE_CAPSULE, .radius = 0.5, .height = 3.0};
    assert_true(gy_adapter_ray_shape(&capsule, NULL, gy_v3(0, 0, 0), gy_v3(0, 1, 0), 5.0, &t, &n));
    assert_near(t, 1.5, 1e-12);
    assert_near(n.y, -1.0, 1e-12);
    /* A plane y = 2 given as 2y = 4, from below and from above; behind the ray, nothing. */
    gy_shape plane = {.type = GY_SHAPE_PLANE, .normal = gy_v3(0, 2, 0), .offset = 4.0};
    assert_true(gy_adapter_ray_shape(&plane, NULL, gy_v3(1, 0, 0), gy_v3(0, 1, 0), 5.0, &t, &n));
    assert_near(t, 2.0, 1e-12);
    assert_near(n.y, -1.0, 1e-12);
    assert_true(gy_adapter_ray_shape(&plane, NULL, gy_v3(1, 5, 0), gy_v3(0, -1, 0), 5.0, &t, &n));
    assert_near(t, 3.0, 1e-12);
    assert_near(n.y, 1.0, 1e-12);
    assert_false(gy_adapter_ray_shape(&plane, NULL, gy_v3(1, 5, 0), gy_v3(0, 1, 0), 5.0, &t, &n));
    assert_false(gy_adapter_ray_shape(&plane, NULL, gy_v3(1, 0, 0), gy_v3(1, 0, 0), 5.0, &t, &n));
    /* A hull without its data, and a mesh: no closed-form test. */
    gy_shape hull = {.type = GY_SHAPE_HULL}, mesh = {.type = GY_SHAPE_MESH};
    assert_false(gy_adapter_ray_shape(&hull, NULL, gy_v3(-3, 0, 0), gy_v3(1, 0, 0), 9.0, &t, &n));
    assert_false(gy_adapter_ray_shape(&mesh, NULL, gy_v3(-3, 0, 0), gy_v3(1, 0, 0), 9.0, &t, &n));
}

static void test_hull_shrink_out_of_memory_leaves_nothing(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    /* A twelve-sided prism: 24 corners, more than the array's first room. */
    gy_vec3 p[24];
    for (int i = 0; i < 24; i++)
        p[i] = gy_v3(cos(GY_PI * (i / 2) / 6.0), i % 2 ? 1.0 : -1.0, sin(GY_PI * (i / 2) / 6.0));
    gy_hull h;
    assert_result(gy_hull_build(&ta.base, p, 24, &h), GY_OK);
    gy_adapter_hull_points out = {0};
    assert_result(gy_adapter_hull_shrink(&ta.base, &h, 0.1, &out), GY_OK);
    assert_int_equal(out.count, 24);
    gy_adapter_hull_points_free(&ta.base, &out);
    ta.fail_at = ta.calls + 1u;
    assert_result(gy_adapter_hull_shrink(&ta.base, &h, 0.1, &out), GY_ERR_OUT_OF_MEMORY);
    assert_int_equal(out.count, 0);
    assert_null(out.items);
    /* A failure on growing, after some points were kept, frees them too. */
    ta.fail_at = ta.calls + 2u;
    assert_result(gy_adapter_hull_shrink(&ta.base, &h, 0.1, &out), GY_ERR_OUT_OF_MEMORY);
    assert_null(out.items);
    ta.fail_at = 0;
    gy_hull_free(&ta.base, &h);
    assert_int_equal(ta.live_blocks, 0);
}

/* A tensor times its inverse is the identity; a singular one has the zero matrix. */
static void test_inertia_inverse_undoes_the_tensor_and_zeroes_a_singular_one(void **state)
{
    (void)state;
    gy_mat3 m = {{{4.0, 1.0, -2.0}, {1.0, 3.0, 0.5}, {-2.0, 0.5, 5.0}}};
    gy_mat3 p = gy_mat3_mul(m, gy_adapter_inertia_inverse(m));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            assert_near(p.m[i][j], i == j ? 1.0 : 0.0, 1e-14);
    gy_mat3 d = gy_adapter_inertia_inverse(gy_mat3_diag(2.0, 4.0, 0.5));
    assert_near(d.m[0][0], 0.5, 0.0);
    assert_near(d.m[1][1], 0.25, 0.0);
    assert_near(d.m[2][2], 2.0, 0.0);
    gy_mat3 s = {{{1.0, 2.0, 3.0}, {2.0, 4.0, 6.0}, {0.0, 1.0, 1.0}}};
    gy_mat3 z = gy_adapter_inertia_inverse(s);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            assert_true(z.m[i][j] == 0.0);
}

/* A step keeps exp(-d dt) of the velocity: it removes the rest, whatever the step's length. */
static void test_damping_loss_compounds_to_the_rate_over_any_steps(void **state)
{
    (void)state;
    assert_near(gy_adapter_damping_loss(0.5, 1.0), 1.0 - exp(-0.5), 0.0);
    assert_near(gy_adapter_damping_loss(0.0, 0.25), 0.0, 0.0);
    double kept = 1.0;
    for (int i = 0; i < 4; i++)
        kept *= 1.0 - gy_adapter_damping_loss(0.5, 0.25);
    assert_near(kept, exp(-0.5), 1e-15);
}

/* The bounce rule both drivers ask: restitution above zero, an approach above the minimum speed,
 * and a point the substep closes; the speed it leaves at is gy_adapter_bounce_speed's. */
static void test_contact_bounce_needs_restitution_speed_and_a_point_the_substep_closes(void **state)
{
    (void)state;
    const double h = 1.0 / 240.0, g = 9.81, v = 3.0;
    double leave = -1.0;
    /* Found at the surface with no pull: it leaves at e times its approach. */
    assert_true(gy_adapter_contact_bounce(0.5, v, 0.0, 0.0, h, &leave));
    assert_near(leave, 1.5, 1e-12);
    /* Overlapped or a little apart, pulled by gravity: the front end's energy-keeping speed. */
    assert_true(gy_adapter_contact_bounce(0.8, v, -0.01, g, h, &leave));
    assert_true(leave == gy_adapter_bounce_speed(v, -0.01, g, 0.8, h));
    double reach = v * h + 0.5 * g * h * h; /* how far the substep closes the gap */
    assert_true(gy_adapter_contact_bounce(0.8, v, 0.999 * reach, g, h, &leave));
    assert_true(leave == gy_adapter_bounce_speed(v, 0.999 * reach, g, 0.8, h));
    /* Still apart at the substep's end: solved as resting. */
    assert_false(gy_adapter_contact_bounce(0.8, v, 1.001 * reach, g, h, &leave));
    assert_true(leave == 0.0);
    /* No restitution, or an approach at or below the minimum (or not a number): no bounce. */
    assert_false(gy_adapter_contact_bounce(0.0, v, 0.0, g, h, &leave));
    assert_false(gy_adapter_contact_bounce(0.5, GY_ADAPTER_BOUNCE_MIN_VELOCITY, 0.0, g, h, &leave));
    assert_true(
        gy_adapter_contact_bounce(0.5, 1.01 * GY_ADAPTER_BOUNCE_MIN_VELOCITY, 0.0, g, h, &leave));
    assert_false(gy_adapter_contact_bounce(0.5, -v, 0.0, g, h, &leave));
    assert_false(gy_adapter_contact_bounce(0.5, NAN, 0.0, g, h, &leave));
    assert_false(gy_adapter_contact_bounce(NAN, v, 0.0, g, h, &leave));
    assert_true(leave == 0.0);
}

/* A point's row aims by the rules in order: a bounce wins over the contact layer (a bouncing
 * point inside the layer's range leaves at its bounce speed, no overlap correction), a resting
 * point in the layer's range aims for the layer, and anything deeper or further apart keeps the
 * vendor's row. */
static void test_contact_aim_bounce_before_layer_before_vendor(void **state)
{
    (void)state;
    const double h = 1.0 / 240.0, erp = 0.2, g = 9.81, v = 3.0;
    double target = -1.0, expect = 0.0;
    /* 1 mm deep, approaching fast with restitution: it bounces, though in the layer's range. */
    assert_int_equal(gy_adapter_contact_aim(0.5, v, -1e-3, g, 1e-3, erp, h, &target),
                     GY_ADAPTER_AIM_BOUNCE);
    assert_true(target == gy_adapter_bounce_speed(v, -1e-3, g, 0.5, h));
    /* The same point without restitution, or approaching too slowly to bounce: the layer. */
    assert_true(gy_adapter_contact_layer(1e-3, erp, h, &expect));
    assert_int_equal(gy_adapter_contact_aim(0.0, v, -1e-3, g, 1e-3, erp, h, &target),
                     GY_ADAPTER_AIM_LAYER);
    assert_true(target == expect);
    assert_int_equal(gy_adapter_contact_aim(0.5, 0.5 * GY_ADAPTER_BOUNCE_MIN_VELOCITY, -1e-3, g,
                                            1e-3, erp, h, &target),
                     GY_ADAPTER_AIM_LAYER);
    assert_true(target == expect);
    /* Deeper than the solver's depth, or further apart than the layer: the vendor's row. */
    assert_int_equal(gy_adapter_contact_aim(0.0, v, -0.05, g, 0.05, erp, h, &target),
                     GY_ADAPTER_AIM_VENDOR);
    assert_true(target == 0.0);
    assert_int_equal(gy_adapter_contact_aim(0.0, 0.0, 0.01, g, -0.01, erp, h, &target),
                     GY_ADAPTER_AIM_VENDOR);
}

/* A body's extent is the sphere about its centre of mass holding every solid collider, whatever
 * its shape and local pose (a sensor counts only on a body of sensors), and the sleep rule's turn
 * limit is the turn that moves that far a point at the sleep speed, capped for small bodies. */
static void test_body_extent_holds_every_solid_collider_and_sets_the_turn_limit(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_hull hull;
    build_box_hull(&ta, gy_v3(0.3, 0.4, 1.2), &hull);
    gy_adapter_resource res = {.kind = GY_SHAPE_HULL, .hull = hull};
    gy_collider_def c[5];
    for (int i = 0; i < 5; i++)
        c[i] = gy_default_collider_def();
    c[0].shape.type = GY_SHAPE_SPHERE, c[0].shape.radius = 0.5;
    c[1].shape.type = GY_SHAPE_BOX, c[1].shape.box_size = gy_v3(2, 4, 4); /* half-diagonal 3 */
    c[1].local_pose.position = gy_v3(0, 0, 10);
    c[2].shape.type = GY_SHAPE_CAPSULE, c[2].shape.radius = 0.2, c[2].shape.height = 3.0;
    c[2].local_pose.position = gy_v3(-12, 0, 0);
    c[3].shape.type = GY_SHAPE_CYLINDER, c[3].shape.radius = 3.0, c[3].shape.height = 8.0;
    c[3].local_pose.position = gy_v3(0, 9, 0);
    c[4].shape.type = GY_SHAPE_HULL;
    c[4].local_pose.position = gy_v3(0, -11, 0);
    gy_adapter_resource *r[5] = {NULL, NULL, NULL, NULL, &res};
    gy_vec3 com = gy_v3(0, 0, 1);
    /* Each alone: its distance from the centre of mass plus its own reach. */
    double alone[5] = {sqrt(1.0) + 0.5, 9.0 + 3.0, sqrt(145.0) + 1.5, sqrt(82.0) + 5.0,
                       sqrt(122.0) + sqrt(0.09 + 0.16 + 1.44)};
    for (int i = 0; i < 5; i++)
        assert_near(gy_adapter_body_extent(&c[i], 1, &r[i], com), alone[i], 1e-12);
    double most = 0.0;
    for (int i = 0; i < 5; i++)
        most = fmax(most, alone[i]);
    assert_near(gy_adapter_body_extent(c, 5, r, com), most, 1e-12);
    /* The sensors are left out while a solid collider is left; a body of sensors only is held
     * whole. */
    c[2].is_sensor = true;
    c[3].is_sensor = true;
    assert_near(gy_adapter_body_extent(c, 5, r, com), fmax(alone[1], alone[4]), 1e-12);
    c[0].is_sensor = c[1].is_sensor = c[4].is_sensor = true;
    assert_near(gy_adapter_body_extent(c, 5, r, com), most, 1e-12);
    assert_near(gy_adapter_body_extent(c, 0, r, com), 0.0, 0.0);
    /* The turn limit: GY_ADAPTER_SLEEP_LINEAR_SPEED at the extent, capped for small bodies. */
    assert_near(gy_adapter_sleep_turn(2.0), GY_ADAPTER_SLEEP_LINEAR_SPEED / 2.0, 1e-15);
    assert_near(gy_adapter_sleep_turn(0.01), GY_ADAPTER_SLEEP_ANGULAR_SPEED, 0.0);
    assert_near(gy_adapter_sleep_turn(0.0), GY_ADAPTER_SLEEP_ANGULAR_SPEED, 0.0);
    gy_hull_free(&ta.base, &hull);
    assert_int_equal(ta.live_blocks, 0);
}

/* Joints listed on their moving bodies: two bodies are jointed while any joint between them
 * lasts, in either order, whichever list the joint sits in and wherever in it; a static is found
 * through its moving partner, and a joint to the world joins nothing. */
static void test_bodies_jointed_while_any_joint_between_them_lasts(void **state)
{
    (void)state;
    gy_adapter_motion ma = {0}, mb = {0};
    gy_adapter_body a = {.motion = &ma, .type = GY_MOTION_DYNAMIC};
    gy_adapter_body b = {.motion = &mb, .type = GY_MOTION_KINEMATIC};
    gy_adapter_body s = {.type = GY_MOTION_STATIC};
    gy_adapter_joint to_static = {.a = &a, .b = &s}, first = {.a = &a, .b = &b};
    gy_adapter_joint to_world = {.a = &b}, second = {.a = &b, .b = &a};
    gy_adapter_joint *all[] = {&to_static, &first, &to_world, &second};
    for (int i = 0; i < 4; i++)
        gy_adapter_joint_attach(all[i]);
    assert_int_equal(a.joint_count, 3);
    assert_int_equal(b.joint_count, 3);
    assert_int_equal(s.joint_count, 1);
    assert_true(gy_adapter_bodies_jointed(&a, &s) && gy_adapter_bodies_jointed(&s, &a));
    assert_true(gy_adapter_bodies_jointed(&a, &b) && gy_adapter_bodies_jointed(&b, &a));
    assert_false(gy_adapter_bodies_jointed(&b, &s) || gy_adapter_bodies_jointed(&s, &b));
    assert_false(gy_adapter_bodies_jointed(&a, &a));
    /* The first of the two a-b joints sits in the middle of both lists. */
    gy_adapter_joint_detach(&first);
    assert_true(gy_adapter_bodies_jointed(&a, &b) && gy_adapter_bodies_jointed(&b, &a));
    gy_adapter_joint_detach(&second);
    assert_false(gy_adapter_bodies_jointed(&a, &b) || gy_adapter_bodies_jointed(&b, &a));
    assert_true(gy_adapter_bodies_jointed(&s, &a));
    gy_adapter_joint_detach(&to_static);
    assert_false(gy_adapter_bodies_jointed(&s, &a));
    gy_adapter_joint_detach(&to_world);
    assert_int_equal(a.joint_count + b.joint_count + s.joint_count, 0);
    assert_null(ma.joints);
    assert_null(mb.joints);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hull_shrink_moves_box_faces_in_and_one_past_the_hull_leaves_nothing),
        cmocka_unit_test(test_hull_shrink_gives_nothing_over_the_plane_limit),
        cmocka_unit_test(test_hull_shrink_out_of_memory_leaves_nothing),
        cmocka_unit_test(test_inertia_inverse_undoes_the_tensor_and_zeroes_a_singular_one),
        cmocka_unit_test(test_damping_loss_compounds_to_the_rate_over_any_steps),
        cmocka_unit_test(
            test_contact_bounce_needs_restitution_speed_and_a_point_the_substep_closes),
        cmocka_unit_test(test_contact_aim_bounce_before_layer_before_vendor),
        cmocka_unit_test(
            test_ray_shape_enters_leaves_from_inside_and_meets_planes_from_either_side),
        cmocka_unit_test(test_bodies_jointed_while_any_joint_between_them_lasts),
        cmocka_unit_test(test_body_extent_holds_every_solid_collider_and_sets_the_turn_limit),
    };
    return cmocka_run_group_tests_name("adapter helpers", tests, NULL, NULL);
}
