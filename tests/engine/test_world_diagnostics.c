/* The diagnostics sample's counts (bodies awake, asleep and static, characters, contact pairs and
 * points, events per tick, the body table, the allocator meter) for a known scene in a lockstep
 * World, for one adapter named on the command line (argv[1]); and the allocator meter itself. */
#include "test_world_fixture.h"

static const char *backend_name;

/* Ticks until a new sample is published; returns it. In lockstep one is taken every
 * step_hz / 5 = 12 ticks. */
static gy_physics_diagnostics next_sample(gy_world *w)
{
    gy_physics_diagnostics before, d;
    memset(&before, 0, sizeof before);
    gy_result r = gy_physics_get_diagnostics(gy_world_physics(w), &before);
    if (r == GY_ERR_UNSUPPORTED)
        skip();
    for (uint32_t i = 0; i < 100; i++) {
        wfx_tick(w, 1);
        if (gy_physics_get_diagnostics(gy_world_physics(w), &d) == GY_OK &&
            d.sample != before.sample)
            return d;
    }
    fail_msg("no diagnostics sample in 100 ticks");
    return d;
}

typedef struct scene {
    gy_test_allocator ta;
    gy_world *w;
    gy_entity ground, balls[2], sleeper, hero;
} scene;

static void build(scene *s)
{
    memset(s, 0, sizeof *s);
    gy_test_allocator_init(&s->ta);
    gy_world_def c = wfx_config(&s->ta, true);
    c.physics.backend = backend_name;
    s->w = wfx_world_with(&c);
    gy_physics_diagnostics d;
    if (gy_physics_get_diagnostics(gy_world_physics(s->w), &d) == GY_ERR_UNSUPPORTED) {
        wfx_destroy(s->w, &s->ta); /* the sampler is compiled out (diagnostics=false) */
        skip();
    }
    s->ground = wfx_ground(s->w);
    for (uint32_t i = 0; i < 2; i++) {
        wfx_desc d = wfx_sphere(GY_BODY_DYNAMIC, 0.5);
        d.desc.body.allow_sleeping = false;
        s->balls[i] = wfx_entity(s->w, NULL, gy_v3(3.0 * i, 0.5, 0));
        wfx_add(s->w, s->balls[i], d);
    }
    s->sleeper = wfx_entity(s->w, "sleeper", gy_v3(6, 0.5, 0));
    wfx_add(s->w, s->sleeper, wfx_box(GY_BODY_DYNAMIC, gy_v3(1, 1, 1)));
    gy_shape cap;
    memset(&cap, 0, sizeof cap);
    cap.type = GY_SHAPE_CAPSULE;
    cap.radius = 0.3;
    cap.height = 1.8;
    wfx_desc hero = wfx_shape(GY_BODY_KINEMATIC, cap);
    hero.desc.is_character = true;
    s->hero = wfx_entity(s->w, "hero", gy_v3(-5, 0.9, 0));
    wfx_add(s->w, s->hero, hero);
    wfx_tick(s->w, 2);
    assert_result(gy_body_set_awake(s->w, s->sleeper, false), GY_OK);
    wfx_tick(s->w, 40);
    assert_false(wfx_state(s->w, s->sleeper).awake);
}

static void test_diagnostics_count_bodies_characters_and_the_body_table(void **state)
{
    (void)state;
    scene s;
    build(&s);
    gy_physics_diagnostics d = next_sample(s.w);
    /* Two balls that may not sleep and the character (kinematic bodies are always awake). */
    assert_int_equal(d.bodies_awake, 3);
    assert_int_equal(d.bodies_sleeping, 1);
    assert_int_equal(d.bodies_static, 1);
    assert_int_equal(d.characters, 1);
    assert_int_equal(d.body_slots_live, 5);
    assert_int_equal(d.body_slots_used, 5);
    assert_true(d.body_slots_capacity >= 5);
    /* Removing a ball frees its slot; the highest slot in use stays. */
    assert_result(gy_body_remove(s.w, s.balls[0]), GY_OK);
    d = next_sample(s.w);
    assert_int_equal(d.body_slots_live, 4);
    assert_int_equal(d.bodies_awake, 2);
    assert_int_equal(d.body_slots_used, 5);
    wfx_destroy(s.w, &s.ta);
}

static void test_diagnostics_count_contacts_and_events_per_tick(void **state)
{
    (void)state;
    scene s;
    build(&s);
    gy_physics_diagnostics d = next_sample(s.w);
    gy_world_stats ws;
    gy_world_get_stats(s.w, &ws);
    /* Both balls, the sleeper and the character stand on the ground (a character reports the
     * solids it touches like a body). */
    assert_int_equal(d.contact_pairs, 4);
    assert_int_equal(ws.touching_pairs, 4);
    /* The adapter lists the awake pairs (a sleeping pair is kept without being listed). */
    assert_true(d.contact_points >= 2);
    /* At rest every tracked pair reports one STAY per tick, and nothing else happens. */
    assert_int_equal(d.events_last_tick, 4);
    assert_near(d.events_per_tick, 4.0, 1e-12);
    /* A ball lifted off the ground: its EXIT in one tick, then three pairs per tick. */
    assert_result(gy_body_teleport(s.w, s.balls[1], (gy_pose){gy_v3(3, 20, 0), gy_quat_identity()}),
                  GY_OK);
    d = next_sample(s.w);
    d = next_sample(s.w);
    assert_int_equal(d.contact_pairs, 3);
    assert_int_equal(d.events_last_tick, 3);
    assert_near(d.events_per_tick, 3.0, 1e-12);
    wfx_destroy(s.w, &s.ta);
}

static void test_diagnostics_allocator_bytes_follow_every_allocation(void **state)
{
    (void)state;
    scene s;
    build(&s);
    gy_physics_diagnostics a = next_sample(s.w);
    int64_t host_a = s.ta.live_bytes;
    assert_true(a.allocator_live_bytes > 0);
    assert_true(a.allocator_peak_bytes >= a.allocator_live_bytes);
    /* Everything the World and the subsystem hold comes from the host's allocator through the
     * meter, bar the World object itself: the host sees the same change the meter does. */
    static gy_vec3 points[256];
    for (uint32_t i = 0; i < 256; i++) {
        double t = (double)i * 0.7, z = -1.0 + 2.0 * (double)i / 255.0;
        double rr = sqrt(1.0 - z * z);
        points[i] = gy_v3(rr * cos(t), z, rr * sin(t));
    }
    gy_hull_def hd = {points, 256};
    gy_geometry g;
    assert_result(gy_geometry_create_hull(s.w, &hd, &g), GY_OK);
    gy_shape hull;
    memset(&hull, 0, sizeof hull);
    hull.type = GY_SHAPE_HULL;
    hull.resource.bits = g.bits;
    gy_entity rock = wfx_entity(s.w, "rock", gy_v3(10, 1, 0));
    wfx_add(s.w, rock, wfx_shape(GY_BODY_STATIC, hull));
    gy_geometry_release(s.w, g);
    next_sample(s.w);
    gy_physics_diagnostics b = next_sample(s.w);
    int64_t host_b = s.ta.live_bytes;
    assert_true(b.allocator_live_bytes > a.allocator_live_bytes);
    assert_int_equal((int64_t)b.allocator_live_bytes - (int64_t)a.allocator_live_bytes,
                     host_b - host_a);
    /* Gone again: live falls back, the peak stays. */
    assert_result(gy_entity_destroy(s.w, rock), GY_OK);
    next_sample(s.w);
    gy_physics_diagnostics c = next_sample(s.w);
    int64_t host_c = s.ta.live_bytes;
    assert_true(c.allocator_live_bytes < b.allocator_live_bytes);
    assert_int_equal((int64_t)c.allocator_live_bytes - (int64_t)b.allocator_live_bytes,
                     host_c - host_b);
    assert_true(c.allocator_peak_bytes >= b.allocator_live_bytes);
    wfx_destroy(s.w, &s.ta);
}

static void test_allocator_meter_counts_live_and_peak_bytes(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_allocator_meter m;
    gy_allocator_meter_init(&m, &ta.base);
    const gy_allocator *a = &m.allocator;
    uint64_t live, peak;
    void *p = gy_alloc(a, 100);
    void *q = gy_alloc(a, 50);
    assert_non_null(p);
    assert_non_null(q);
    p = gy_realloc(a, p, 100, 300);
    assert_non_null(p);
    gy_allocator_meter_read(&m, &live, &peak);
    assert_int_equal(live, 350);
    assert_int_equal(peak, 350);
    p = gy_realloc(a, p, 300, 20);
    gy_allocator_meter_read(&m, &live, &peak);
    assert_int_equal(live, 70);
    assert_int_equal(peak, 350);
    gy_free(a, p, 20);
    gy_free(a, q, 50);
    gy_allocator_meter_read(&m, &live, &peak);
    assert_int_equal(live, 0);
    assert_int_equal(peak, 350);
    assert_int_equal(ta.live_bytes, 0);
    /* A failed allocation counts nothing. */
    ta.fail_at = ta.calls + 1;
    assert_null(gy_alloc(a, 1000));
    gy_allocator_meter_read(&m, &live, &peak);
    assert_int_equal(live, 0);
    assert_int_equal(peak, 350);
    gy_allocator_meter_read(NULL, &live, &peak);
    assert_int_equal(live, 0);
    assert_int_equal(peak, 0);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s BACKEND [TEST_NAME_FILTER]\n", argv[0]);
        return 2;
    }
    backend_name = argv[1];
    if (argc > 2)
        cmocka_set_test_filter(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diagnostics_count_bodies_characters_and_the_body_table),
        cmocka_unit_test(test_diagnostics_count_contacts_and_events_per_tick),
        cmocka_unit_test(test_diagnostics_allocator_bytes_follow_every_allocation),
        cmocka_unit_test(test_allocator_meter_counts_live_and_peak_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
