/* The front end's contact rules (middleware/src/contacts.c) that every driver shares: a one-way
 * platform's verdict on a pair is taken at its first contact and kept until the two separate; the
 * pre-solve hook's settings (report geometry, a carried pair found again, axis locks, gravity's
 * pull, the contact layer's target, a conveyor's friction row). */
#include "test_support.h"

#include <math.h>
#include <string.h>

#include "../../middleware/src/contacts.h"
#include "../../middleware/src/driver.h"
#include "gyre/math.h"

typedef struct fixture {
    gy_test_allocator ta;
    gy_adapter_contacts c;
    gy_adapter_body platform_body, other_body;
    gy_adapter_collider platform, other;
    gy_adapter_collider_rare platform_rare;
} fixture;

/* A platform facing +Y at the origin and a collider of another body. */
static void fixture_init(fixture *f)
{
    memset(f, 0, sizeof *f);
    gy_test_allocator_init(&f->ta);
    gy_adapter_contacts_init(&f->c, &f->ta.base, sizeof(gy_adapter_pair));
    f->platform.owner = &f->platform_body;
    f->platform.one_way = true;
    f->platform_rare.one_way_normal = gy_v3(0, 1, 0);
    f->platform_rare.one_way_slop = 0.05;
    f->platform_rare.local_pose = gy_pose_identity();
    f->platform.rare = &f->platform_rare;
    f->other.owner = &f->other_body;
}

/* Every step went without an error, and the report gave back all it took. */
static void fixture_fini(fixture *f, gy_result err)
{
    assert_result(err, GY_OK);
    gy_adapter_contacts_fini(&f->c);
    assert_int_equal(f->ta.live_bytes, 0);
}

/* A fixture whose platform and other collider have ids `platform_id` and `other_id`, at its
 * first step, with their pair in the report (its index). */
static uint32_t fixture_pair(fixture *f, uint64_t platform_id, uint64_t other_id, gy_result *err)
{
    fixture_init(f);
    f->platform.id.bits = platform_id;
    f->other.id.bits = other_id;
    gy_adapter_contacts_begin_step(&f->c);
    bool is_new = false;
    uint32_t i = gy_adapter_contacts_pair(&f->c, &f->platform, &f->other, &is_new, err);
    assert_true(is_new);
    return i;
}

/* A contact of the other body at the platform's top: `rise` its upward speed (m/s), `depth` the
 * overlap (m), its centre of mass 0.5 m above the point. */
static gy_adapter_one_way_contact contact(const fixture *f, double rise, double depth)
{
    gy_adapter_one_way_contact oc;
    oc.platform = &f->platform;
    oc.other = &f->other;
    oc.normal = gy_v3(0, 1, 0);
    oc.one_way = gy_v3(0, 1, 0);
    oc.velocity = gy_v3(0, rise, 0);
    oc.other_com = gy_v3(0, 0.5, 0);
    oc.point = gy_v3(0, 0, 0);
    oc.penetration = depth;
    return oc;
}

static void test_contacts_one_way_acceptance_is_kept_until_the_pair_separates(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f);
    gy_result err = GY_OK;
    bool accepted = false;

    /* Step 1: a landing, judged and accepted. */
    gy_adapter_contacts_begin_step(&f.c);
    assert_false(gy_adapter_contact_one_way_known(&f.c, &f.platform, &f.other, &accepted));
    gy_adapter_one_way_contact landing = contact(&f, -2.0, 0.08);
    assert_true(gy_adapter_contact_one_way(&f.c, &landing, &err));
    gy_adapter_contacts_end_step(&f.c);

    /* Step 2: the solver pushes the deep landing out faster than the rising limit. Judged
     * afresh that contact would be refused; the pair's verdict stands instead. */
    gy_adapter_contacts_begin_step(&f.c);
    gy_adapter_one_way_contact pushed = contact(&f, 1.0, 0.08);
    assert_false(gy_one_way_accepts(pushed.normal, pushed.one_way, pushed.velocity,
                                    pushed.other_com, pushed.point, pushed.penetration,
                                    gy_adapter_collider_one_way_slop(&f.platform)));
    assert_true(gy_adapter_contact_one_way_known(&f.c, &f.platform, &f.other, &accepted));
    assert_true(accepted);
    gy_adapter_contacts_end_step(&f.c);

    /* Step 3: no contact (separated); the verdict is forgotten at the step's end. */
    gy_adapter_contacts_begin_step(&f.c);
    gy_adapter_contacts_end_step(&f.c);
    gy_adapter_contacts_begin_step(&f.c);
    assert_false(gy_adapter_contact_one_way_known(&f.c, &f.platform, &f.other, &accepted));
    /* Now the rising body is judged anew, and refused until it leaves again. */
    assert_false(gy_adapter_contact_one_way(&f.c, &pushed, &err));
    gy_adapter_contacts_end_step(&f.c);
    gy_adapter_contacts_begin_step(&f.c);
    assert_true(gy_adapter_contact_one_way_known(&f.c, &f.platform, &f.other, &accepted));
    assert_false(accepted);
    gy_adapter_contacts_end_step(&f.c);

    fixture_fini(&f, err);
}

/* A pair is the same report entry whichever collider the driver names first; its geometry is
 * given from either side and reported from collider a (the smaller id) towards b. */
static void test_contacts_pair_and_geometry_are_the_same_from_either_collider(void **state)
{
    (void)state;
    fixture f;
    gy_result err = GY_OK;
    uint32_t i = fixture_pair(&f, 7, 3, &err); /* the other is collider a */
    bool is_new;
    uint32_t k = gy_adapter_contacts_pair(&f.c, &f.other, &f.platform, &is_new, &err);
    assert_false(is_new);
    assert_int_equal(i, k);
    assert_int_equal(f.c.current.count, 1);
    const gy_adapter_pair *p = gy_adapter_contacts_record(&f.c, i);
    assert_ptr_equal(p->a, &f.other);
    assert_ptr_equal(p->b, &f.platform);

    /* From the platform (b) up towards the other (a), 2 cm deep: reported from a down to b. */
    gy_adapter_contacts_geometry(&f.c, i, &f.platform, gy_v3(1, 0, 0), gy_v3(0, 1, 0), -0.02);
    const gy_contact *ct = &f.c.current.contacts[i];
    assert_true(ct->point.x == 1.0 && ct->normal.y == -1.0 && ct->normal.x == 0.0);
    assert_true(ct->penetration == 0.02);
    /* From a, 1 mm apart, in the next pass: the same normal, no penetration. */
    gy_adapter_contacts_begin_pass(&f.c);
    gy_adapter_contacts_geometry(&f.c, i, &f.other, gy_v3(2, 0, 0), gy_v3(0, -1, 0), 0.001);
    assert_true(ct->point.x == 2.0 && ct->normal.y == -1.0);
    assert_true(ct->penetration == 0.0);

    fixture_fini(&f, err);
}

/* Of the points one pass gives a pair, the report keeps the deepest; the next pass's first point
 * replaces it, however shallow. */
static void test_contacts_geometry_keeps_the_deepest_point_of_a_pass(void **state)
{
    (void)state;
    fixture f;
    gy_result err = GY_OK;
    uint32_t i = fixture_pair(&f, 1, 2, &err);
    const gy_contact *ct = &f.c.current.contacts[i];
    gy_adapter_contacts_begin_pass(&f.c);
    gy_adapter_contacts_geometry(&f.c, i, &f.platform, gy_v3(1, 0, 0), gy_v3(0, 1, 0), 0.002);
    assert_true(ct->point.x == 1.0 && ct->penetration == 0.0); /* a new pair's first point */
    gy_adapter_contacts_geometry(&f.c, i, &f.platform, gy_v3(2, 0, 0), gy_v3(0, 1, 0), -0.01);
    assert_true(ct->point.x == 2.0 && ct->penetration == 0.01);
    gy_adapter_contacts_geometry(&f.c, i, &f.platform, gy_v3(3, 0, 0), gy_v3(0, 1, 0), -0.005);
    assert_true(ct->point.x == 2.0 && ct->penetration == 0.01); /* shallower: kept out */
    gy_adapter_contacts_geometry(&f.c, i, &f.platform, gy_v3(4, 0, 0), gy_v3(0, 1, 0), -0.02);
    assert_true(ct->point.x == 4.0 && ct->penetration == 0.02);

    gy_adapter_contacts_begin_pass(&f.c);
    gy_adapter_contacts_geometry(&f.c, i, &f.platform, gy_v3(5, 0, 0), gy_v3(0, 1, 0), 0.001);
    assert_true(ct->point.x == 5.0 && ct->penetration == 0.0);
    fixture_fini(&f, err);
}

/* A pair carried over from the last step and found again starts its impulses afresh, named as
 * its bodies are now; a pair found this step is left alone. */
static void test_contacts_refresh_restarts_only_a_carried_pair(void **state)
{
    (void)state;
    fixture f;
    gy_result err = GY_OK;
    uint32_t i = fixture_pair(&f, 1, 2, &err);
    f.c.current.contacts[i].normal_impulse = 3.0;
    gy_adapter_contacts_end_step(&f.c);

    gy_adapter_contacts_begin_step(&f.c);
    uint32_t k = gy_adapter_contacts_carry(&f.c, 0, &err);
    gy_adapter_contacts_record(&f.c, k)->carried = true;
    gy_adapter_contacts_record(&f.c, k)->tangent = gy_v3(1, 0, 0);
    f.other_body.user_data = 42;
    assert_true(gy_adapter_contacts_refresh(&f.c, k));
    const gy_adapter_pair *p = gy_adapter_contacts_record(&f.c, k);
    assert_false(p->carried);
    assert_true(f.c.current.contacts[k].normal_impulse == 0.0 && p->tangent.x == 0.0);
    assert_int_equal(f.c.current.contacts[k].user_b, 42);
    f.c.current.contacts[k].normal_impulse = 1.0;
    assert_false(gy_adapter_contacts_refresh(&f.c, k));
    assert_true(f.c.current.contacts[k].normal_impulse == 1.0);

    fixture_fini(&f, err);
}

/* A pair is locked only when neither body can move along the normal at all. */
static void test_contacts_locked_needs_both_bodies_held_along_the_normal(void **state)
{
    (void)state;
    gy_adapter_motion m = {.gravity_factor = 1.0};
    gy_adapter_body floor = {.type = GY_MOTION_STATIC};
    gy_adapter_body box = {.type = GY_MOTION_DYNAMIC, .motion = &m};
    gy_vec3 up = gy_v3(0, 1, 0), slanted = gy_v3(0.6, 0.8, 0);
    assert_false(gy_adapter_contact_locked(&floor, &box, up));
    m.lock_linear[1] = true;
    assert_true(gy_adapter_contact_locked(&floor, &box, up));
    assert_true(gy_adapter_contact_locked(&box, &floor, up));
    assert_false(gy_adapter_contact_locked(&floor, &box, slanted)); /* x is free */
    m.lock_linear[0] = true;
    assert_true(gy_adapter_contact_locked(&floor, &box, slanted));
}

/* Gravity pulls a contact closed by the difference of its bodies' shares along the normal. */
static void test_contacts_pull_is_gravity_along_the_normal_by_share(void **state)
{
    (void)state;
    gy_adapter_motion falls_twice = {.gravity_factor = 2.0};
    gy_adapter_motion carried = {.gravity_factor = 5.0}; /* a kinematic body falls with none */
    gy_adapter_body ball = {.type = GY_MOTION_DYNAMIC, .motion = &falls_twice};
    gy_adapter_body floor = {.type = GY_MOTION_STATIC};
    gy_adapter_body lift = {.type = GY_MOTION_KINEMATIC, .motion = &carried};
    gy_vec3 g = gy_v3(0, -10, 0), up = gy_v3(0, 1, 0);
    assert_true(gy_adapter_contact_pull(g, up, &ball, &floor) == 20.0);
    assert_true(gy_adapter_contact_pull(g, up, &ball, &lift) == 20.0);
    assert_true(gy_adapter_contact_pull(g, gy_v3(0, -1, 0), &floor, &ball) == 20.0);
}

/* The layer's range and target: from the layer apart to the solver depth deep, an approach while
 * shallower than the layer, none at it, a push deeper; outside the range the vendor's row. */
static void test_contacts_layer_settles_points_in_its_range_to_the_layer(void **state)
{
    (void)state;
    double h = 0.01, erp = 0.5, v = 1.0;
    assert_true(gy_adapter_contact_layer(GY_ADAPTER_CONTACT_LAYER, erp, h, &v) && v == 0.0);
    assert_true(gy_adapter_contact_layer(0.0, erp, h, &v) && v < 0.0);
    assert_true(gy_adapter_contact_layer(-GY_ADAPTER_CONTACT_LAYER, erp, h, &v));
    assert_true(fabs(v - (-2.0 * GY_ADAPTER_CONTACT_LAYER) * 50.0) < 1e-15);
    assert_true(gy_adapter_contact_layer(0.002, erp, h, &v) && v > 0.0);
    assert_true(gy_adapter_contact_layer(GY_ADAPTER_SOLVER_DEPTH, erp, h, &v));
    assert_true(fabs(v - (GY_ADAPTER_SOLVER_DEPTH - GY_ADAPTER_CONTACT_LAYER) * 50.0) < 1e-15);
    /* Apart beyond the layer, deeper than the solver takes, or not a depth: the vendor's row. */
    assert_false(gy_adapter_contact_layer(-GY_ADAPTER_CONTACT_LAYER * 1.01, erp, h, &v));
    assert_true(v == 0.0);
    assert_false(gy_adapter_contact_layer(GY_ADAPTER_SOLVER_DEPTH * 1.01, erp, h, &v));
    assert_false(gy_adapter_contact_layer(NAN, erp, h, &v));
}

/* A scripted driver whose bodies are turned half a turn about +X when they carry a platform. */
static gy_pose scripted_body_pose(gy_driver_world *w, gy_driver_collider *c)
{
    (void)w;
    gy_pose p = {gy_v3(0, 0, 0), gy_quat_identity()};
    if (gy_driver_collider_rec(c)->one_way)
        p.rotation = (gy_quat){1, 0, 0, 0};
    return p;
}

/* A conveyor's surface motion is taken in the world through the driver, and its friction row runs
 * along the part of it in the contact's surface. */
static void test_contacts_conveyor_row_follows_the_turned_surface(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f);
    const gy_driver d = {.collider_body_pose = scripted_body_pose};
    gy_adapter_contacts_bind(&f.c, &d, NULL);
    gy_vec3 surf = gy_v3(9, 9, 9);
    /* Neither collider moves its surface: no conveyor, nothing written. */
    assert_false(gy_adapter_contact_surface(&f.c, &f.other, &f.platform, &surf));
    assert_true(surf.x == 9.0);

    /* The belt (a platform here, so its body is turned) runs along its local +Z at 2 m/s: in the
     * world that is -Z. */
    f.platform_rare.surface_velocity = gy_v3(0, 0, 2);
    assert_true(gy_adapter_contact_surface(&f.c, &f.other, &f.platform, &surf));
    assert_true(surf.x == 0.0 && surf.y == 0.0 && surf.z == -2.0);

    /* On a tilted contact the row keeps the part along the surface. */
    gy_vec3 n = gy_v3(0, 0.6, 0.8), t;
    double speed = 0.0;
    assert_true(gy_adapter_contact_conveyor(surf, n, &t, &speed));
    assert_true(fabs(gy_v3_dot(t, n)) < 1e-15);
    assert_true(fabs(speed - 1.2) < 1e-12);
    assert_true(fabs(t.y - 0.96) < 1e-12 && fabs(t.z + 0.72) < 1e-12);
    /* Surface motion straight along the normal gives no row. */
    assert_false(gy_adapter_contact_conveyor(gy_v3(0, 1.2, 1.6), n, &t, &speed));
    fixture_fini(&f, GY_OK);
}

/* The body-level prefilter refuses no pair the collider gate would take (every combination of
 * type, sensor flag and a few filters, bodies of one and of two colliders), and does refuse pairs
 * whose filters cannot meet. */
static void test_contacts_body_prefilter_refuses_nothing_the_gate_takes(void **state)
{
    (void)state;
    const uint32_t bits[] = {0x1u, 0x2u, 0x3u, 0x80000000u};
    gy_adapter_body bodies[2] = {{.type = GY_MOTION_DYNAMIC}, {.type = GY_MOTION_DYNAMIC}};
    uint32_t taken = 0, refused = 0;
    for (int k = 0; k < 3 * 3 * 2 * 2 * 4 * 4 * 4 * 4; k++) {
        int r = k;
        uint8_t ta = (uint8_t)(r % 3), tb = (uint8_t)((r /= 3) % 3);
        bool sa = (r /= 3) % 2, sb = (r /= 2) % 2;
        uint32_t ca = bits[(r /= 2) % 4], ma = bits[(r /= 4) % 4], cb = bits[(r /= 4) % 4],
                 mb = bits[(r /= 4) % 4];
        bodies[0].type = ta;
        bodies[1].type = tb;
        gy_adapter_collider a = {.owner = &bodies[0],
                                 .category = ca,
                                 .mask = ma,
                                 .body_type = ta,
                                 .is_sensor = sa,
                                 .contact_response = true};
        gy_adapter_collider b = {.owner = &bodies[1],
                                 .category = cb,
                                 .mask = mb,
                                 .body_type = tb,
                                 .is_sensor = sb,
                                 .contact_response = true};
        /* A second collider on b that takes everything and is no sensor. */
        gy_adapter_collider b2 = {.owner = &bodies[1],
                                  .category = UINT32_MAX,
                                  .mask = UINT32_MAX,
                                  .body_type = tb,
                                  .contact_response = true};
        gy_adapter_body_gate ga = {0, 0, false}, gb = {0, 0, false}, gb2;
        gy_adapter_body_gate_add(&ga, &a);
        gy_adapter_body_gate_add(&gb, &b);
        gb2 = gb;
        gy_adapter_body_gate_add(&gb2, &b2);
        bool gate = gy_adapter_contact_gate(&a, &b, false) != GY_ADAPTER_CONTACT_SKIP;
        bool gate2 = gate || gy_adapter_contact_gate(&a, &b2, false) != GY_ADAPTER_CONTACT_SKIP;
        bool may = gy_adapter_bodies_may_pair(ta, ga, tb, gb);
        if (gate && !may)
            fail_msg("case %d: the gate takes a pair the prefilter refuses", k);
        if (gate2 && !gy_adapter_bodies_may_pair(ta, ga, tb, gb2))
            fail_msg(
                "case %d: the gate takes a pair of the two-collider body the prefilter refuses", k);
        taken += gate;
        refused += !may;
    }
    assert_true(taken > 0 && refused > 0);
    /* Filters that cannot meet are refused whatever the types. */
    gy_adapter_body_gate x = {0x1u, 0x1u, true}, y = {0x2u, 0x2u, true};
    assert_false(gy_adapter_bodies_may_pair(GY_MOTION_DYNAMIC, x, GY_MOTION_DYNAMIC, y));
    /* Widening: a new category or mask bit, not a narrower one. */
    gy_adapter_body_gate wide = {0x3u, 0x1u, false}, narrow = {0x1u, 0x1u, false};
    assert_true(gy_adapter_body_gate_widened(narrow, wide));
    assert_false(gy_adapter_body_gate_widened(wide, narrow));
}

/* Two colliders of one body never touch, whatever their filters say. */
static void test_contacts_gate_skips_colliders_of_one_body(void **state)
{
    (void)state;
    gy_adapter_body body = {.type = GY_MOTION_DYNAMIC}, other_body = {.type = GY_MOTION_DYNAMIC};
    gy_adapter_collider a = {.owner = &body,
                             .category = UINT32_MAX,
                             .mask = UINT32_MAX,
                             .body_type = GY_MOTION_DYNAMIC,
                             .contact_response = true};
    gy_adapter_collider b = a;
    assert_int_equal(gy_adapter_contact_gate(&a, &b, false), GY_ADAPTER_CONTACT_SKIP);
    b.owner = &other_body;
    assert_int_equal(gy_adapter_contact_gate(&a, &b, false), GY_ADAPTER_CONTACT_SOLVE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contacts_one_way_acceptance_is_kept_until_the_pair_separates),
        cmocka_unit_test(test_contacts_gate_skips_colliders_of_one_body),
        cmocka_unit_test(test_contacts_body_prefilter_refuses_nothing_the_gate_takes),
        cmocka_unit_test(test_contacts_pair_and_geometry_are_the_same_from_either_collider),
        cmocka_unit_test(test_contacts_geometry_keeps_the_deepest_point_of_a_pass),
        cmocka_unit_test(test_contacts_refresh_restarts_only_a_carried_pair),
        cmocka_unit_test(test_contacts_locked_needs_both_bodies_held_along_the_normal),
        cmocka_unit_test(test_contacts_pull_is_gravity_along_the_normal_by_share),
        cmocka_unit_test(test_contacts_layer_settles_points_in_its_range_to_the_layer),
        cmocka_unit_test(test_contacts_conveyor_row_follows_the_turned_surface),
    };
    return cmocka_run_group_tests_name("front-end contacts", tests, NULL, NULL);
}
