/* Characters under the physics subsystem (lockstep, a real physics thread): a body created with a
 * `character` description is registered with the subsystem's own controller by its create command
 * and unregistered by its release (also across stop/start and when the create fails), and its
 * sensor pairs begin and end in the tick of the move, under the adapter's pair rules. */
#include "test_physics_fixture.h"

#include "fault_backend.h"
#include "gyre/physics/character.h"

#define RADIUS 0.3
#define HEIGHT 1.8
/* Body origin of a capsule resting on the fixture floor (top face y = 0): half height + skin. */
#define REST (0.5 * HEIGHT + 0.01)

/* A kinematic capsule character; `s` must outlive the record or start call. */
static fx_body fx_character(uint32_t store_index, uint32_t attachment, gy_vec3 position,
                            const gy_character_def *s)
{
    gy_shape capsule = gy_default_collider_def().shape;
    capsule.type = GY_SHAPE_CAPSULE;
    capsule.radius = RADIUS;
    capsule.height = HEIGHT;
    fx_body b = fx_shaped(store_index, attachment, GY_MOTION_KINEMATIC, position, capsule);
    b.desc.character = s;
    return b;
}

/* A static box trigger spanning [x0, x0 + 1] in x, 3 m tall, 4 m deep. */
static fx_body fx_trigger(uint32_t store_index, uint32_t attachment, double x0)
{
    fx_body b =
        fx_box(store_index, attachment, GY_MOTION_STATIC, gy_v3(x0 + 0.5, 1.5, 0), gy_v3(1, 3, 4));
    b.collider.is_sensor = true;
    return b;
}

/* CHARACTER_STATE replies for one body generation. */
static uint32_t count_states(const fx_replies *rs, uint32_t generation)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < rs->count; i++)
        n += rs->r[i].type == GY_PHYSICS_REPLY_CHARACTER_STATE &&
             gy_reply_as_character(&rs->r[i])->generation == generation;
    return n;
}

static gy_character_group_stats character_stats(const gy_physics *p)
{
    gy_character_group_stats st;
    assert_result(gy_physics_get_character_stats(p, &st), GY_OK);
    return st;
}

/* ---- the description ------------------------------------------------------------------------- */

static void test_physics_character_description_is_validated(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    gy_character_def s = gy_default_character_def();
    fx_body b = fx_character(1, 2, gy_v3(0, REST, 0), &s);
    b.desc.def.type = GY_MOTION_DYNAMIC;
    assert_result(fx_record(p, &b, NULL), GY_ERR_INVALID_ARGUMENT);
    b = fx_character(1, 2, gy_v3(0, REST, 0), &s);
    b.collider.shape.type = GY_SHAPE_SPHERE;
    assert_result(fx_record(p, &b, NULL), GY_ERR_INVALID_ARGUMENT);
    b = fx_character(1, 2, gy_v3(0, REST, 0), &s);
    gy_collider_def two[2] = {b.collider, b.collider};
    b.desc.colliders = two;
    b.desc.collider_count = 2;
    gy_physics_body_ref ref;
    assert_result(gy_physics_record_create_body(p, &b.desc, &ref), GY_ERR_INVALID_ARGUMENT);
    gy_character_def bad = s;
    bad.radius = -1.0;
    b = fx_character(1, 2, gy_v3(0, REST, 0), &bad);
    assert_result(fx_record(p, &b, NULL), GY_ERR_INVALID_ARGUMENT);
    bad = s;
    bad.step_offset = NAN;
    b = fx_character(1, 2, gy_v3(0, REST, 0), &bad);
    assert_result(fx_record(p, &b, NULL), GY_ERR_NON_FINITE);
    /* Nothing was recorded by the refusals: the slot is still free. */
    b = fx_character(1, 2, gy_v3(0, REST, 0), &s);
    assert_result(fx_record(p, &b, NULL), GY_OK);
    /* The set belongs to the physics thread while it runs. */
    gy_character_group_stats st;
    assert_result(gy_physics_get_character_stats(p, &st), GY_ERR_MISUSE);
    assert_result(gy_physics_get_character_stats(NULL, &st), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_physics_stop(p), GY_OK);
    /* A bootstrap list is checked the same way (nothing starts). */
    b = fx_character(1, 2, gy_v3(0, REST, 0), &bad);
    gy_physics_bootstrap boot = {NULL, 0, fx_desc(&b), 1, NULL, 0, NULL, NULL, NULL};
    assert_result(gy_physics_start(p, &boot), GY_ERR_NON_FINITE);
    assert_false(gy_physics_running(p));
    gy_physics_destroy(p);
}

/* ---- registration ---------------------------------------------------------------------------- */

static void
test_physics_character_registers_with_its_create_and_leaves_with_its_release(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_physics *p = fx_lockstep(&ta.base);
    gy_character_def s = gy_default_character_def();
    static fx_replies rs;
    memset(&rs, 0, sizeof rs);

    fx_create(p, fx_floor(0, 1));
    fx_create(p, fx_character(1, 2, gy_v3(0, REST, 0), &s));
    fx_step(p, 3);
    fx_drain(p, &rs);
    /* Registered by the create, before the first step's move: one state per tick. */
    assert_int_equal(count_states(&rs, 2), 3);

    /* Moved by the subsystem's controller with the game's intent: 2 m/s for 0.5 s. */
    assert_result(
        gy_physics_record_character_intent(p, (gy_physics_body_ref){1, 2}, gy_v3(2, 0, 0), 0),
        GY_OK);
    fx_step(p, 30);
    rs.count = 0;
    fx_drain(p, &rs);
    assert_int_equal(count_states(&rs, 2), 30);
    const gy_proxy *px = fx_proxies(p, NULL, NULL);
    assert_near(px[1].position[0], 1.0, 1e-4);
    assert_near(px[1].position[1], REST, 2e-3);

    /* Released and re-created at the same store index in one batch: the new attachment is a
     * fresh character (a registration left behind would refuse it: CREATE_FAILED). */
    rs.count = 0;
    assert_result(gy_physics_record_release_body(p, (gy_physics_body_ref){1, 2}), GY_OK);
    fx_create(p, fx_character(1, 3, gy_v3(0, REST, 0), &s));
    fx_step(p, 2);
    fx_drain(p, &rs);
    assert_int_equal(fx_count_type(&rs, GY_PHYSICS_REPLY_CREATE_FAILED), 0);
    assert_int_equal(count_states(&rs, 2), 0);
    assert_int_equal(count_states(&rs, 3), 2);
    /* It starts still: the old character's intent went with it. */
    px = fx_proxies(p, NULL, NULL);
    assert_near(px[1].position[0], 0.0, 1e-6);

    rs.count = 0;
    assert_result(gy_physics_record_release_body(p, (gy_physics_body_ref){1, 3}), GY_OK);
    fx_step(p, 2);
    fx_drain(p, &rs);
    assert_int_equal(fx_count_type(&rs, GY_PHYSICS_REPLY_CHARACTER_STATE), 0);

    assert_result(gy_physics_stop(p), GY_OK);
    gy_character_group_stats st = character_stats(p);
    assert_int_equal(st.characters, 0);
    assert_int_equal(st.moves, 3 + 30 + 2);
    assert_int_equal(st.move_errors, 0);
    assert_int_equal(st.replies_failed, 0);
    assert_int_equal(st.inputs_applied, 1);

    /* A bootstrap registers its characters too; a stop forgets them. */
    fx_body floor = fx_floor(0, 1), hero = fx_character(1, 7, gy_v3(0, REST, 0), &s);
    gy_physics_body_def boot_bodies[2] = {*fx_desc(&floor), *fx_desc(&hero)};
    gy_physics_body_ref refs[2];
    gy_physics_bootstrap boot = {NULL, 0, boot_bodies, 2, NULL, 0, refs, NULL, NULL};
    assert_result(gy_physics_start(p, &boot), GY_OK);
    fx_step(p, 2);
    rs.count = 0;
    fx_drain(p, &rs);
    assert_int_equal(count_states(&rs, refs[1].generation), 2);
    assert_result(gy_physics_stop(p), GY_OK);
    st = character_stats(p);
    assert_int_equal(st.characters, 0);
    assert_int_equal(st.moves, 3 + 30 + 2 + 2);
    gy_physics_destroy(p);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_physics_character_whose_create_fails_is_not_registered(void **state)
{
    (void)state;
    gy_fault_backend fb;
    assert_result(gy_fault_backend_init(&fb, gy_backend_at(0)->name, NULL), GY_OK);
    fb.fail_at[GY_FAULT_BODY] = 2; /* the character's */
    gy_physics_def d = gy_default_physics_def();
    d.lockstep = true;
    d.allocator = &fb.allocator;
    d.backend_table = &fb.table;
    gy_physics *p = fx_physics(&d);
    assert_result(gy_physics_start(p, NULL), GY_OK);
    gy_character_def s = gy_default_character_def();
    static fx_replies rs;
    memset(&rs, 0, sizeof rs);

    fx_create(p, fx_floor(0, 1));
    fx_create(p, fx_character(1, 2, gy_v3(0, REST, 0), &s));
    fx_step(p, 2);
    fx_drain(p, &rs);
    assert_int_equal(fx_count_type(&rs, GY_PHYSICS_REPLY_CREATE_FAILED), 1);
    assert_int_equal(fx_count_type(&rs, GY_PHYSICS_REPLY_CHARACTER_STATE), 0);

    /* The game gives the slot up and tries again: the store index is free in the set too. */
    rs.count = 0;
    assert_result(gy_physics_record_release_body(p, (gy_physics_body_ref){1, 2}), GY_OK);
    fx_create(p, fx_character(1, 3, gy_v3(0, REST, 0), &s));
    fx_step(p, 2);
    fx_drain(p, &rs);
    assert_int_equal(fx_count_type(&rs, GY_PHYSICS_REPLY_CREATE_FAILED), 0);
    assert_int_equal(count_states(&rs, 3), 2);

    /* Released, the character and the floor leave nothing in the adapter (the failed create
     * never made anything there). */
    assert_result(gy_physics_record_release_body(p, (gy_physics_body_ref){1, 3}), GY_OK);
    assert_result(gy_physics_record_release_body(p, (gy_physics_body_ref){0, 1}), GY_OK);
    fx_step(p, 1);
    assert_result(gy_physics_stop(p), GY_OK);
    gy_character_group_stats st = character_stats(p);
    assert_int_equal(st.characters, 0);
    assert_int_equal(st.moves, 2);
    assert_int_equal(fb.worlds_destroyed, 1);
    assert_int_equal(fb.live_at_destroy, 0);
    gy_physics_destroy(p);
}

/* ---- sensors --------------------------------------------------------------------------------- */

typedef struct pair_log {
    uint32_t sensor; /* attachment of the sensor watched */
    uint32_t enters, stays, exits;
    uint32_t enter_tick, exit_tick;
    uint32_t first_a; /* attachment on side A at the ENTER */
    bool flipped;     /* a later event had the other orientation */
    float enter_normal_x;
} pair_log;

static void log_pairs(const fx_replies *rs, uint32_t character, pair_log *logs, uint32_t n)
{
    for (uint32_t i = 0; i < rs->count; i++) {
        const gy_reply *r = &rs->r[i];
        if (r->type < GY_PHYSICS_REPLY_COLLISION_ENTER || r->type > GY_PHYSICS_REPLY_COLLISION_EXIT)
            continue;
        const gy_physics_collision *c = gy_reply_as_collision(r);
        for (uint32_t k = 0; k < n; k++) {
            pair_log *l = &logs[k];
            bool ours = (c->generation_a == character && c->generation_b == l->sensor) ||
                        (c->generation_a == l->sensor && c->generation_b == character);
            if (!ours)
                continue;
            if (r->type == GY_PHYSICS_REPLY_COLLISION_ENTER) {
                if (l->enters++ == 0) {
                    l->enter_tick = c->tick;
                    l->first_a = c->generation_a;
                    l->enter_normal_x = c->normal[0];
                }
            } else if (r->type == GY_PHYSICS_REPLY_COLLISION_STAY) {
                l->stays++;
            } else if (l->exits++ == 0) {
                l->exit_tick = c->tick;
            }
            if (l->enters > 0 && c->generation_a != l->first_a)
                l->flipped = true;
        }
    }
}

static void test_physics_character_sensor_pairs_follow_the_move_in_its_tick(void **state)
{
    (void)state;
    gy_physics *p = fx_lockstep(NULL);
    gy_character_def s = gy_default_character_def();
    static fx_replies rs;
    memset(&rs, 0, sizeof rs);
    /* Triggers on both sides of the character in creation order (side A is the lower collider
     * handle, whichever that is), and one whose mask ignores the character's category. */
    fx_create(p, fx_floor(0, 1));
    fx_create(p, fx_trigger(1, 10, 1.52));
    fx_create(p, fx_character(2, 20, gy_v3(0, REST, 0), &s));
    fx_create(p, fx_trigger(3, 30, 3.52));
    fx_body masked = fx_trigger(4, 40, 5.52);
    masked.collider.mask = 2u; /* the capsule's category is 1 */
    fx_create(p, masked);
    fx_step(p, 2);
    assert_result(
        gy_physics_record_character_intent(p, (gy_physics_body_ref){2, 20}, gy_v3(3, 0, 0), 0),
        GY_OK);

    pair_log logs[3] = {{.sensor = 10}, {.sensor = 30}, {.sensor = 40}};
    uint32_t inside[2] = {0, 0}, apart[2] = {0, 0};
    /* Off the 5 cm grid the walk moves on, so no tick ends exactly touching a face. */
    const double lo[2] = {1.52, 3.52};
    for (int i = 0; i < 150; i++) {
        fx_step(p, 1);
        uint64_t tick = 0;
        const gy_proxy *px = fx_proxies(p, NULL, &tick);
        double x = px[2].position[0];
        for (int k = 0; k < 2; k++) {
            if (inside[k] == 0 && x + RADIUS > lo[k])
                inside[k] = (uint32_t)tick;
            if (apart[k] == 0 && x - RADIUS > lo[k] + 1.0)
                apart[k] = (uint32_t)tick;
        }
        rs.count = 0;
        fx_drain(p, &rs);
        log_pairs(&rs, 20, logs, 3);
    }
    assert_true(apart[1] > 0);
    for (int k = 0; k < 2; k++) {
        const pair_log *l = &logs[k];
        assert_int_equal(l->enters, 1);
        assert_int_equal(l->exits, 1);
        assert_int_equal(l->enter_tick, inside[k]);
        assert_int_equal(l->exit_tick, apart[k]);
        /* One STAY per tick in between: the pair never flickers. */
        assert_int_equal(l->stays, apart[k] - inside[k] - 1u);
        assert_false(l->flipped);
        /* The normal points from side A to side B; the trigger lies ahead (+x) of the capsule. */
        if (l->first_a == 20)
            assert_true(l->enter_normal_x > 0.5f);
        else
            assert_true(l->enter_normal_x < -0.5f);
    }
    assert_int_equal(logs[2].enters + logs[2].stays + logs[2].exits, 0);

    /* Walk back into the second trigger and leave by release: its EXIT comes with the release. */
    assert_result(
        gy_physics_record_character_intent(p, (gy_physics_body_ref){2, 20}, gy_v3(-3, 0, 0), 0),
        GY_OK);
    pair_log back[1] = {{.sensor = 30}};
    uint32_t release_tick = 0;
    for (int i = 0; i < 150 && release_tick == 0; i++) {
        fx_step(p, 1);
        rs.count = 0;
        fx_drain(p, &rs);
        log_pairs(&rs, 20, back, 1);
        if (back[0].enters == 1) {
            assert_result(gy_physics_record_release_body(p, (gy_physics_body_ref){2, 20}), GY_OK);
            release_tick = (uint32_t)gy_physics_tick(p) + 1u;
        }
    }
    assert_true(release_tick > 0);
    fx_step(p, 1);
    rs.count = 0;
    fx_drain(p, &rs);
    log_pairs(&rs, 20, back, 1);
    assert_int_equal(back[0].exits, 1);
    assert_int_equal(back[0].exit_tick, release_tick);
    gy_physics_destroy(p);
}

/* ---- solids --------------------------------------------------------------------------------- */

static gy_physics *lockstep_on(const char *adapter)
{
    gy_physics_def d = gy_default_physics_def();
    d.lockstep = true;
    d.backend = adapter;
    gy_physics *p = fx_physics(&d);
    assert_result(gy_physics_start(p, NULL), GY_OK);
    return p;
}

/* One tick: steps, drains, logs the character's pairs with `logs`. */
static void step_logged(gy_physics *p, fx_replies *rs, uint32_t character, pair_log *logs,
                        uint32_t n)
{
    fx_step(p, 1);
    rs->count = 0;
    fx_drain(p, rs);
    log_pairs(rs, character, logs, n);
}

static void solid_pairs_on(const char *adapter)
{
    gy_physics *p = lockstep_on(adapter);
    gy_character_def s = gy_default_character_def();
    static fx_replies rs;
    memset(&rs, 0, sizeof rs);
    /* The character starts 0.5 m above the floor. Ahead of it (+x): a solid wall whose face is at
     * x = 3, beyond a response-off wall spanning [1.52, 2.02]. Over it, a one-way platform 0.2 m
     * thick with its top at y = 2.6. */
    fx_create(p, fx_floor(0, 1));
    fx_create(p, fx_character(1, 10, gy_v3(0, REST + 0.5, 0), &s));
    fx_create(p, fx_box(2, 20, GY_MOTION_STATIC, gy_v3(3.5, 1.5, 0), gy_v3(1, 3, 4)));
    fx_body ghost = fx_box(3, 30, GY_MOTION_STATIC, gy_v3(1.77, 1.5, 0), gy_v3(0.5, 3, 4));
    ghost.collider.contact_response = false;
    fx_create(p, ghost);
    fx_body oneway = fx_box(4, 40, GY_MOTION_STATIC, gy_v3(0, 2.5, 0), gy_v3(1.5, 0.2, 4));
    oneway.collider.one_way = true;
    fx_create(p, oneway);
    pair_log logs[4] = {{.sensor = 1}, {.sensor = 20}, {.sensor = 30}, {.sensor = 40}};

    /* Falling, then landing: the floor is entered in the tick the character lands, not before,
     * and stays touched every tick it stands there. */
    uint32_t landed = 0;
    for (int i = 0; i < 60 && landed == 0; i++) {
        step_logged(p, &rs, 10, logs, 4);
        uint64_t tick = 0;
        const gy_proxy *px = fx_proxies(p, NULL, &tick);
        if (px[1].position[1] < REST + 1e-3)
            landed = (uint32_t)tick;
    }
    assert_true(landed > 0);
    assert_int_equal(logs[0].enters, 1);
    assert_int_equal(logs[0].enter_tick, landed);
    for (int i = 0; i < 10; i++)
        step_logged(p, &rs, 10, logs, 4);
    assert_int_equal(logs[0].stays, 10);
    assert_int_equal(logs[0].exits, 0);

    /* A jump up through the one-way platform's underside touches nothing there; it lands on top
     * and touches it from then on; the floor is left in the jump's tick. */
    assert_result(gy_physics_record_character_jump(p, (gy_physics_body_ref){1, 10}, 8.0), GY_OK);
    for (int i = 0; i < 120 && logs[3].enters == 0; i++)
        step_logged(p, &rs, 10, logs, 4);
    assert_int_equal(logs[0].exits, 1);
    assert_int_equal(logs[3].enters, 1);
    /* Entered in the tick it landed on top, not while it passed through. */
    uint64_t tick = 0;
    assert_true(fabs(fx_proxies(p, NULL, &tick)[1].position[1] - (2.6 + REST)) < 1e-3);
    for (int i = 0; i < 5; i++)
        step_logged(p, &rs, 10, logs, 4);
    assert_int_equal(logs[3].stays, 5);

    /* Walk off the platform, then at the walls: through the response-off one (entered and left),
     * and against the solid one, which is touched every tick from then on. */
    assert_result(
        gy_physics_record_character_intent(p, (gy_physics_body_ref){1, 10}, gy_v3(3, 0, 0), 0),
        GY_OK);
    for (int i = 0; i < 120; i++)
        step_logged(p, &rs, 10, logs, 4);
    assert_int_equal(logs[3].exits, 1);
    assert_int_equal(logs[2].enters, 1);
    assert_int_equal(logs[2].exits, 1);
    assert_int_equal(logs[1].enters, 1);
    assert_int_equal(logs[1].exits, 0);
    assert_true(logs[1].stays > 10);
    assert_false(logs[1].flipped);
    /* It rests a skin from the wall's face, touching it across the gap. */
    assert_true(fabs(fx_proxies(p, NULL, &tick)[1].position[0] - (3.0 - RADIUS - 0.01)) < 2e-3);
    /* Off the platform's edge and down: the floor is entered again. */
    assert_int_equal(logs[0].enters, 2);
    gy_physics_destroy(p);
}

static void test_physics_character_touches_solids_as_bodies_do_ode(void **state)
{
    (void)state;
    solid_pairs_on("ode");
}

static void test_physics_character_touches_solids_as_bodies_do_bullet(void **state)
{
    (void)state;
    solid_pairs_on("bullet");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_physics_character_description_is_validated),
        cmocka_unit_test(
            test_physics_character_registers_with_its_create_and_leaves_with_its_release),
        cmocka_unit_test(test_physics_character_whose_create_fails_is_not_registered),
        cmocka_unit_test(test_physics_character_sensor_pairs_follow_the_move_in_its_tick),
        cmocka_unit_test(test_physics_character_touches_solids_as_bodies_do_ode),
        cmocka_unit_test(test_physics_character_touches_solids_as_bodies_do_bullet),
    };
    return cmocka_run_group_tests_name("physics_characters", tests, NULL, NULL);
}
