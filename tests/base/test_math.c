/* The base math the layers share: the turn between two rotations, checked against rotations built
 * from a known axis and angle (the analytic answer) to 1e-12. */
#include "test_support.h"

#include <math.h>

#include "gyre/math.h"

/* A turn of `angle` about unit `axis` applied after `from` is found again, axis and angle, for
 * angles up to pi and for either sign of the quaternion. */
static void test_math_turn_recovers_axis_and_angle(void **state)
{
    (void)state;
    const gy_vec3 axes[] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.48, 0.6, 0.64}};
    const double angles[] = {1e-6, 0.25, 1.0, 2.5, 3.1};
    gy_quat from = gy_quat_from_euler_deg(gy_v3(10.0, -35.0, 70.0));
    for (size_t i = 0; i < sizeof axes / sizeof axes[0]; i++) {
        for (size_t k = 0; k < sizeof angles / sizeof angles[0]; k++) {
            gy_quat to = gy_quat_mul(gy_quat_axis_angle(axes[i], angles[k]), from);
            for (int flip = 0; flip < 2; flip++) {
                gy_quat t = to;
                if (flip) {
                    t.x = -t.x;
                    t.y = -t.y;
                    t.z = -t.z;
                    t.w = -t.w;
                }
                gy_vec3 axis;
                double s;
                double angle = gy_quat_turn(from, t, &axis, &s);
                assert_near(angle, angles[k], 1e-9);
                assert_near(s, sin(angles[k] / 2.0), 1e-12);
                assert_near(axis.x / s, axes[i].x, 1e-6);
                assert_near(axis.y / s, axes[i].y, 1e-6);
                assert_near(axis.z / s, axes[i].z, 1e-6);
            }
        }
    }
}

/* The shorter way round: a turn of more than pi is answered as the opposite turn under pi. */
static void test_math_turn_takes_the_shorter_way_round(void **state)
{
    (void)state;
    gy_quat from = gy_quat_identity();
    gy_quat to = gy_quat_axis_angle(gy_v3(0, 1, 0), 1.5 * GY_PI);
    gy_vec3 axis;
    double s;
    double angle = gy_quat_turn(from, to, &axis, &s);
    assert_near(angle, 0.5 * GY_PI, 1e-12);
    assert_near(axis.y / s, -1.0, 1e-12);
}

/* No turn, or one too small to give an axis, is angle 0. */
static void test_math_turn_of_nothing_is_zero(void **state)
{
    (void)state;
    gy_quat q = gy_quat_from_euler_deg(gy_v3(5.0, 50.0, -20.0));
    gy_vec3 axis;
    double s;
    assert_true(gy_quat_turn(q, q, &axis, &s) == 0.0);
    assert_true(s <= 1e-12);
    gy_quat tiny = gy_quat_mul(gy_quat_axis_angle(gy_v3(1, 0, 0), 1e-13), q);
    assert_true(gy_quat_turn(q, tiny, &axis, &s) == 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_math_turn_recovers_axis_and_angle),
        cmocka_unit_test(test_math_turn_takes_the_shorter_way_round),
        cmocka_unit_test(test_math_turn_of_nothing_is_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
