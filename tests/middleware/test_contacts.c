/* The front end's contact rules (middleware/src/contacts.c) that every driver shares: a one-way
 * platform's verdict on a pair is taken at its first contact and kept until the two separate. */
#include "test_support.h"

#include <math.h>
#include <string.h>

#include "../../middleware/src/contacts.h"
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
    f->platform.rare = &f->platform_rare;
    f->other.owner = &f->other_body;
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

    assert_result(err, GY_OK);
    gy_adapter_contacts_fini(&f.c);
    assert_int_equal(f.ta.live_bytes, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contacts_one_way_acceptance_is_kept_until_the_pair_separates),
    };
    return cmocka_run_group_tests_name("front-end contacts", tests, NULL, NULL);
}
