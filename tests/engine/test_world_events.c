/* Collision callbacks over the real physics thread (lockstep): order and pairing — every ENTER gets
 * its EXIT, on separation, on destroy, on switch-off, on update, on remove and on stop — both
 * sides' views, and callbacks that change the World. */
#include "test_world_fixture.h"

typedef struct scene {
    gy_world *w;
    gy_entity ground, ball;
    wfx_events ground_ev, ball_ev;
} scene;

/* A ball dropped from just above the ground, resting on it after `ticks`. */
static void resting_ball(scene *s, uint32_t ticks)
{
    memset(s, 0, sizeof *s);
    s->w = wfx_world(NULL);
    s->ground = wfx_ground(s->w);
    s->ball = wfx_ball(s->w, "ball", gy_v3(0, 0.6, 0));
    assert_result(
        gy_entity_set_collision_callback(s->w, s->ground, wfx_on_collision, &s->ground_ev), GY_OK);
    assert_result(gy_entity_set_collision_callback(s->w, s->ball, wfx_on_collision, &s->ball_ev),
                  GY_OK);
    wfx_tick(s->w, ticks);
}

static void test_events_enter_stay_exit_in_order_from_both_sides(void **state)
{
    (void)state;
    scene s;
    resting_ball(&s, 30);
    assert_true(s.ball_ev.count >= 2);
    const gy_collision_event *first = &s.ball_ev.ev[0];
    assert_int_equal(first->kind, GY_COLLISION_ENTER);
    assert_true(gy_entity_equal(first->self, s.ball));
    assert_true(gy_entity_equal(first->other, s.ground));
    assert_false(first->synthesized);
    /* From the ball towards the ground is down; the ground sees the opposite. */
    assert_near(first->normal.y, -1.0, 1e-3);
    assert_near(s.ground_ev.ev[0].normal.y, 1.0, 1e-3);
    assert_true(gy_entity_equal(s.ground_ev.ev[0].self, s.ground));
    assert_int_equal(s.ground_ev.count, s.ball_ev.count);
    for (uint32_t i = 1; i < s.ball_ev.count; i++)
        assert_int_equal(s.ball_ev.ev[i].kind, GY_COLLISION_STAY);
    /* One STAY per tick after the ENTER, ticks increasing. */
    for (uint32_t i = 1; i < s.ball_ev.count; i++)
        assert_int_equal(s.ball_ev.ev[i].tick, s.ball_ev.ev[i - 1].tick + 1);
    /* Lift it away: one EXIT, with zero impulse. */
    gy_pose up = {gy_v3(0, 5, 0), gy_quat_identity()};
    assert_result(gy_body_teleport(s.w, s.ball, up), GY_OK);
    wfx_tick(s.w, 2);
    assert_int_equal(wfx_count_kind(&s.ball_ev, GY_COLLISION_EXIT), 1);
    const gy_collision_event *last = &s.ball_ev.ev[s.ball_ev.count - 1];
    assert_int_equal(last->kind, GY_COLLISION_EXIT);
    assert_near(last->normal_impulse, 0.0, 0.0);
    assert_int_equal(wfx_check_pairing(&s.ball_ev, false), 1);
    assert_int_equal(wfx_check_pairing(&s.ground_ev, false), 1);
    gy_world_stats ws;
    gy_world_get_stats(s.w, &ws);
    assert_int_equal(ws.touching_pairs, 0);
    /* Falls back: a second ENTER. */
    wfx_tick(s.w, 90);
    assert_true(wfx_count_kind(&s.ball_ev, GY_COLLISION_ENTER) >= 2);
    wfx_check_pairing(&s.ball_ev, true);
    wfx_destroy(s.w, NULL);
}

static void test_events_exit_when_the_entity_is_destroyed(void **state)
{
    (void)state;
    scene s;
    resting_ball(&s, 20);
    uint32_t n = s.ground_ev.count;
    assert_result(gy_entity_destroy(s.w, s.ball), GY_OK);
    /* Dispatched at the next drain, on the game thread; both sides get it. */
    assert_int_equal(s.ground_ev.count, n);
    wfx_tick(s.w, 3);
    assert_int_equal(s.ground_ev.count, n + 1);
    const gy_collision_event *e = &s.ground_ev.ev[n];
    assert_int_equal(e->kind, GY_COLLISION_EXIT);
    assert_true(e->synthesized);
    assert_true(gy_entity_equal(e->other, s.ball)); /* a stale handle now, but the right one */
    assert_false(gy_entity_is_valid(s.w, e->other));
    assert_int_equal(s.ball_ev.ev[s.ball_ev.count - 1].kind, GY_COLLISION_EXIT);
    /* The physics thread's own EXIT for that pair was not reported a second time. */
    assert_int_equal(wfx_check_pairing(&s.ground_ev, false), 1);
    assert_int_equal(wfx_check_pairing(&s.ball_ev, false), 1);
    wfx_destroy(s.w, NULL);
}

static void test_events_exit_on_switch_off_update_and_remove(void **state)
{
    (void)state;
    scene s;
    resting_ball(&s, 20);
    /* Switched off. */
    assert_result(gy_body_set_active(s.w, s.ball, false), GY_OK);
    wfx_tick(s.w, 2);
    assert_int_equal(wfx_count_kind(&s.ball_ev, GY_COLLISION_EXIT), 1);
    assert_int_equal(wfx_check_pairing(&s.ball_ev, false), 1);
    /* On again: it is recreated where it was, touching again. */
    assert_result(gy_body_set_active(s.w, s.ball, true), GY_OK);
    wfx_tick(s.w, 10);
    assert_int_equal(wfx_count_kind(&s.ball_ev, GY_COLLISION_ENTER), 2);
    /* Updated: the old body's pairs exit, the new body enters again. */
    wfx_desc d = wfx_sphere(GY_BODY_DYNAMIC, 0.5);
    assert_result(gy_body_update(s.w, s.ball, wfx_d(&d)), GY_OK);
    wfx_tick(s.w, 10);
    assert_int_equal(wfx_count_kind(&s.ball_ev, GY_COLLISION_EXIT), 2);
    assert_int_equal(wfx_count_kind(&s.ball_ev, GY_COLLISION_ENTER), 3);
    /* Removed. */
    assert_result(gy_body_remove(s.w, s.ball), GY_OK);
    wfx_tick(s.w, 3);
    assert_int_equal(wfx_check_pairing(&s.ball_ev, false), 3);
    assert_int_equal(wfx_check_pairing(&s.ground_ev, false), 3);
    gy_world_stats ws;
    gy_world_get_stats(s.w, &ws);
    assert_int_equal(ws.touching_pairs, 0);
    assert_true(ws.exits_synthesized >= 3);
    wfx_destroy(s.w, NULL);
}

static void test_events_exit_on_stop_and_enter_after_start(void **state)
{
    (void)state;
    scene s;
    resting_ball(&s, 20);
    assert_result(gy_world_stop_physics(s.w), GY_OK);
    /* Before stop returns. */
    assert_int_equal(wfx_check_pairing(&s.ball_ev, false), 1);
    assert_int_equal(wfx_check_pairing(&s.ground_ev, false), 1);
    assert_result(gy_world_start_physics(s.w), GY_OK);
    wfx_tick(s.w, 5);
    assert_int_equal(wfx_count_kind(&s.ball_ev, GY_COLLISION_ENTER), 2);
    wfx_check_pairing(&s.ball_ev, true);
    wfx_destroy(s.w, NULL);
}

/* A callback that destroys the ball on its first contact: the ground still gets ENTER then EXIT,
 * and nothing is dispatched for the ball afterwards. */
typedef struct destroyer {
    gy_entity victim;
    uint32_t calls;
    wfx_events ev;
} destroyer;

static void destroy_on_enter(void *ctx, gy_world *w, const gy_collision_event *e)
{
    destroyer *d = ctx;
    d->calls++;
    wfx_on_collision(&d->ev, w, e);
    if (e->kind == GY_COLLISION_ENTER && gy_entity_is_valid(w, d->victim))
        assert_result(gy_entity_destroy(w, d->victim), GY_OK);
}

static void test_events_callback_may_destroy_entities(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    gy_entity ground = wfx_ground(w);
    gy_entity ball = wfx_ball(w, "ball", gy_v3(0, 0.6, 0));
    destroyer d;
    memset(&d, 0, sizeof d);
    d.victim = ball;
    wfx_events ball_ev;
    memset(&ball_ev, 0, sizeof ball_ev);
    assert_result(gy_entity_set_collision_callback(w, ground, destroy_on_enter, &d), GY_OK);
    assert_result(gy_entity_set_collision_callback(w, ball, wfx_on_collision, &ball_ev), GY_OK);
    wfx_tick(w, 30);
    assert_false(gy_entity_is_valid(w, ball));
    assert_int_equal(d.ev.count, 2);
    assert_int_equal(d.ev.ev[0].kind, GY_COLLISION_ENTER);
    assert_int_equal(d.ev.ev[1].kind, GY_COLLISION_EXIT);
    /* The ball was called for the ENTER it was in the middle of, then its EXIT. */
    assert_int_equal(ball_ev.count, 2);
    assert_int_equal(ball_ev.ev[1].kind, GY_COLLISION_EXIT);
    assert_int_equal(wfx_physics_stats(w).bodies, 1);
    wfx_destroy(w, NULL);
}

/* A pile of boxes settling and then removed one by one: across all callbacks, pairing holds. */
static void test_events_pairing_holds_in_a_pile(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    static wfx_events rec[9];
    memset(rec, 0, sizeof rec);
    gy_entity ground = wfx_ground(w);
    assert_result(gy_entity_set_collision_callback(w, ground, wfx_on_collision, &rec[8]), GY_OK);
    gy_entity boxes[8];
    for (uint32_t i = 0; i < 8; i++) {
        boxes[i] = wfx_entity(w, NULL, gy_v3(0.1 * (i % 2), 0.5 + 1.05 * i, 0));
        wfx_add(w, boxes[i], wfx_box(GY_BODY_DYNAMIC, gy_v3(1, 1, 1)));
        assert_result(gy_entity_set_collision_callback(w, boxes[i], wfx_on_collision, &rec[i]),
                      GY_OK);
    }
    wfx_tick(w, 90);
    for (uint32_t i = 0; i < 8; i++) {
        assert_result(
            i % 2 ? gy_entity_destroy(w, boxes[i]) : gy_body_set_active(w, boxes[i], false), GY_OK);
        wfx_tick(w, 4);
    }
    for (uint32_t i = 0; i < 9; i++) {
        assert_int_equal(rec[i].overflow, 0);
        assert_true(wfx_check_pairing(&rec[i], false) >= 1);
    }
    wfx_destroy(w, NULL);
}

/* A reply flood: 64 spheres resting on the ground send 64 STAYs a tick into a 31-slot reply ring,
 * so STAYs are dropped (and counted); then all are lifted in one frame and their 64 EXITs must
 * all arrive, leaving no pair open. */
typedef struct flood_ball {
    uint32_t enters, exits;
} flood_ball;

static void count_flood_event(void *ctx, gy_world *w, const gy_collision_event *e)
{
    (void)w;
    flood_ball *b = ctx;
    b->enters += e->kind == GY_COLLISION_ENTER;
    b->exits += e->kind == GY_COLLISION_EXIT;
}

static void test_world_event_flood_keeps_every_enter_and_exit(void **state)
{
    (void)state;
    enum { BALLS = 64 };
    gy_world_def c = wfx_config(NULL, true);
    c.physics.reply_capacity = 31;
    gy_world *w = wfx_world_with(&c);
    wfx_ground(w);
    gy_entity balls[BALLS];
    static flood_ball rec[BALLS];
    memset(rec, 0, sizeof rec);
    for (uint32_t i = 0; i < BALLS; i++) {
        balls[i] = wfx_ball(w, NULL, gy_v3(-14.0 + 4.0 * (i % 8), 0.5, -14.0 + 4.0 * (i / 8)));
        assert_result(gy_entity_set_collision_callback(w, balls[i], count_flood_event, &rec[i]),
                      GY_OK);
    }
    wfx_tick(w, 20);
    gy_world_stats ws;
    gy_world_get_stats(w, &ws);
    assert_int_equal(ws.touching_pairs, BALLS);
    assert_true(wfx_physics_stats(w).replies_dropped > 0); /* STAYs went */
    for (uint32_t i = 0; i < BALLS; i++) {
        assert_int_equal(rec[i].enters, 1);
        assert_int_equal(rec[i].exits, 0);
    }
    /* Lifted 10 m: every pair separates in the same physics tick. */
    for (uint32_t i = 0; i < BALLS; i++) {
        gy_pose p = wfx_world_pose(w, balls[i]);
        p.position.y = 10.0;
        assert_result(gy_entity_set_world_pose(w, balls[i], p), GY_OK);
    }
    /* The EXITs past the ring's capacity wait in the overflow and arrive over the next drains
     * (31 a tick); the balls take far longer than this to fall back. */
    for (uint32_t t = 0; t < 10 && ws.touching_pairs > 0; t++) {
        wfx_tick(w, 1);
        gy_world_get_stats(w, &ws);
    }
    assert_int_equal(ws.touching_pairs, 0);
    assert_int_equal(ws.exits_synthesized, 0); /* the physics thread's own EXITs, all of them */
    for (uint32_t i = 0; i < BALLS; i++) {
        assert_int_equal(rec[i].enters, 1);
        assert_int_equal(rec[i].exits, 1);
    }
    wfx_destroy(w, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_enter_stay_exit_in_order_from_both_sides),
        cmocka_unit_test(test_events_exit_when_the_entity_is_destroyed),
        cmocka_unit_test(test_events_exit_on_switch_off_update_and_remove),
        cmocka_unit_test(test_events_exit_on_stop_and_enter_after_start),
        cmocka_unit_test(test_events_callback_may_destroy_entities),
        cmocka_unit_test(test_events_pairing_holds_in_a_pile),
        cmocka_unit_test(test_world_event_flood_keeps_every_enter_and_exit),
    };
    return cmocka_run_group_tests_name("world_events", tests, NULL, NULL);
}
