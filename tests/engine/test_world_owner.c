/* The World's thread contract, in every build type: calls from a thread that does not own the
 * World are refused (GY_ERR_WRONG_THREAD) and change nothing; ownership is handed over
 * explicitly; the World lock reports misuse instead of deadlocking; streaming requested from a
 * callback is deferred to the end of that dispatch and performed, never a hang or an abort; and
 * gy_world_tick runs the batch-acknowledgement watchdog. */
#include "test_world_fixture.h"

#include <pthread.h>

#include "test_scene.h"

/* ---- a recording logger ------------------------------------------------------------------------
 */

typedef struct msg_log {
    pthread_mutex_t mutex;
    uint32_t errors, matches;
    const char *needle;
    char first_error[512];
} msg_log;

static void msg_log_fn(void *ctx, gy_log_level level, const char *message)
{
    msg_log *l = ctx;
    pthread_mutex_lock(&l->mutex);
    if (level >= GY_LOG_ERROR && l->errors++ == 0)
        snprintf(l->first_error, sizeof l->first_error, "%s", message);
    if (l->needle != NULL && strstr(message, l->needle) != NULL)
        l->matches++;
    pthread_mutex_unlock(&l->mutex);
}

/* ---- calls from another thread -----------------------------------------------------------------
 */

typedef struct intruder {
    gy_world *w;
    gy_entity e;
    gy_scene *scene;
    uint32_t refused, calls; /* how many returned the refusal / were made */
    bool valid_seen, count_seen, pose_ok;
} intruder;

static void expect_refused(intruder *t, gy_result r)
{
    t->calls++;
    t->refused += r == GY_ERR_WRONG_THREAD;
}

static void *intrude(void *arg)
{
    intruder *t = arg;
    gy_entity made = gy_entity_null();
    expect_refused(t, gy_world_tick(t->w, WFX_DT));
    expect_refused(t, gy_entity_create(t->w, NULL, &made));
    expect_refused(t, gy_entity_destroy(t->w, t->e));
    expect_refused(t, gy_entity_set_local_position(t->w, t->e, gy_v3(5, 5, 5)));
    wfx_desc d = wfx_sphere(GY_BODY_DYNAMIC, 0.5);
    expect_refused(t, gy_body_add(t->w, t->e, wfx_d(&d)));
    expect_refused(t, gy_body_apply_impulse(t->w, t->e, gy_v3(1, 0, 0)));
    gy_world_hit hit;
    uint32_t n = 0;
    expect_refused(t, gy_world_raycast(t->w, gy_v3(0, 5, 0), gy_v3(0, -10, 0), NULL,
                                       GY_COLLECT_CLOSEST, &hit, 1, &n, NULL));
    gy_scene_instance *inst = NULL;
    expect_refused(t, gy_scene_load_additive(t->w, t->scene, gy_v3(0, 0, 0), 0, NULL, &inst, NULL));
    expect_refused(t, gy_world_stop_physics(t->w));
    expect_refused(t, gy_world_release_ownership(t->w));
    expect_refused(t, gy_world_destroy(t->w, NULL));
    gy_pose p;
    t->pose_ok = gy_entity_get_world_pose(t->w, t->e, &p) == GY_OK;
    /* Answers that are not a gy_result give their empty value. */
    t->valid_seen = gy_entity_is_valid(t->w, t->e);
    t->count_seen = gy_world_entity_count(t->w) != 0;
    (void)made;
    (void)inst;
    return NULL;
}

static gy_scene *one_ball_scene(void)
{
    return gy_test_load_scene(
        "{ 'format': 'gyre.scene', 'version': 1, 'entities': ["
        "  { 'name': 'cell_ball', 'transform': { 'position': [0, 3, 0] },"
        "    'components': { 'physics': { 'shape': 'Sphere', 'radius': 0.25 } } } ] }",
        ".", NULL, NULL);
}

static void test_owner_calls_from_another_thread_are_refused(void **state)
{
    (void)state;
    msg_log log = {PTHREAD_MUTEX_INITIALIZER, 0, 0, NULL, {0}};
    gy_logger logger = {msg_log_fn, &log};
    gy_world_def c = wfx_config(NULL, true);
    c.logger = &logger;
    gy_world *w = wfx_world_with(&c);
    wfx_ground(w);
    gy_entity e = wfx_entity(w, "plain", gy_v3(1, 2, 3));
    intruder t;
    memset(&t, 0, sizeof t);
    t.w = w;
    t.e = e;
    t.scene = one_ball_scene();
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, intrude, &t), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(t.refused, t.calls);
    assert_false(t.pose_ok);
    assert_false(t.valid_seen);
    assert_false(t.count_seen);
    /* Nothing changed, and the owner goes on as before. */
    assert_int_equal(gy_world_entity_count(w), 2);
    assert_true(gy_entity_is_valid(w, e));
    assert_true(gy_world_physics_running(w));
    assert_false(gy_body_exists(w, e));
    gy_pose p = wfx_world_pose(w, e);
    assert_near(p.position.x, 1.0, 0.0);
    gy_world_stats s;
    gy_world_get_stats(w, &s);
    assert_int_equal(s.ticks, 0);
    assert_int_equal(s.wrong_thread_calls, t.calls + 3u); /* and the three answers above */
    /* The first refusal is logged, naming the call; the rest are only counted. */
    assert_int_equal(log.errors, 1);
    assert_non_null(strstr(log.first_error, "gy_world_tick"));
    wfx_tick(w, 2);
    gy_scene_free(t.scene);
    wfx_destroy(w, NULL);
}

/* ---- hand-over and lock holders ---------------------------------------------------------------
 */

typedef enum tool_job { JOB_TAKE_AND_TICK, JOB_WRITE_LOCKED, JOB_READ_LOCKED } tool_job;

typedef struct tool {
    gy_world *w;
    gy_entity e;
    tool_job job;
    gy_result results[6];
} tool;

static void *tool_main(void *arg)
{
    tool *t = arg;
    gy_entity made;
    gy_pose p;
    switch (t->job) {
    case JOB_TAKE_AND_TICK:
        t->results[0] = gy_world_take_ownership(t->w);
        t->results[1] = gy_world_tick(t->w, WFX_DT);
        t->results[2] = gy_entity_create(t->w, NULL, &made);
        t->results[3] = gy_world_release_ownership(t->w);
        break;
    case JOB_WRITE_LOCKED:
        t->results[0] = gy_world_lock_write(t->w);
        t->results[1] = gy_entity_create(t->w, NULL, &made);
        t->results[2] = gy_world_tick(t->w, WFX_DT); /* holds the lock: misuse, not a hang */
        t->results[3] = gy_world_unlock_write(t->w);
        t->results[4] = gy_entity_create(t->w, NULL, &made);
        break;
    case JOB_READ_LOCKED:
        t->results[0] = gy_world_lock_read(t->w);
        t->results[1] = gy_entity_get_world_pose(t->w, t->e, &p);
        t->results[2] = gy_entity_create(t->w, NULL, &made);
        t->results[3] = gy_world_unlock_read(t->w);
        t->results[4] = gy_entity_get_world_pose(t->w, t->e, &p);
        break;
    }
    return NULL;
}

static void run_tool(tool *t)
{
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, tool_main, t), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
}

static void test_owner_hand_over_and_lock_holders(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    gy_entity e = wfx_entity(w, "e", gy_v3(0, 1, 0));
    /* Taking a World that is owned fails, also for its owner. */
    assert_result(gy_world_take_ownership(w), GY_ERR_BUSY);

    /* Handed to another thread, which ticks it and hands it back. */
    assert_result(gy_world_release_ownership(w), GY_OK);
    assert_result(gy_world_tick(w, WFX_DT), GY_ERR_WRONG_THREAD); /* nobody owns it now */
    tool t = {w, e, JOB_TAKE_AND_TICK, {0}};
    run_tool(&t);
    assert_result(t.results[0], GY_OK);
    assert_result(t.results[1], GY_OK);
    assert_result(t.results[2], GY_OK);
    assert_result(t.results[3], GY_OK);
    assert_result(gy_world_take_ownership(w), GY_OK);
    assert_int_equal(gy_world_entity_count(w), 2);

    /* A tool holding the write side may change the World, but not tick it. */
    tool wt = {w, e, JOB_WRITE_LOCKED, {0}};
    run_tool(&wt);
    assert_result(wt.results[0], GY_OK);
    assert_result(wt.results[1], GY_OK);
    assert_result(wt.results[2], GY_ERR_MISUSE);
    assert_result(wt.results[3], GY_OK);
    assert_result(wt.results[4], GY_ERR_WRONG_THREAD);
    assert_int_equal(gy_world_entity_count(w), 3);

    /* A tool holding the read side may read, not change. */
    tool rt = {w, e, JOB_READ_LOCKED, {0}};
    run_tool(&rt);
    assert_result(rt.results[0], GY_OK);
    assert_result(rt.results[1], GY_OK);
    assert_result(rt.results[2], GY_ERR_WRONG_THREAD);
    assert_result(rt.results[3], GY_OK);
    assert_result(rt.results[4], GY_ERR_WRONG_THREAD);
    assert_int_equal(gy_world_entity_count(w), 3);
    wfx_tick(w, 1);
    wfx_destroy(w, NULL);
}

/* ---- lock misuse --------------------------------------------------------------------------------
 */

static void test_owner_lock_misuse_is_an_error_not_a_hang(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    assert_result(gy_world_lock_write(NULL), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_world_unlock_write(w), GY_ERR_MISUSE); /* not held */
    assert_result(gy_world_unlock_read(w), GY_ERR_MISUSE);
    assert_result(gy_world_lock_write(w), GY_OK);
    assert_result(gy_world_lock_write(w), GY_ERR_MISUSE); /* not recursive */
    assert_result(gy_world_lock_read(w), GY_ERR_MISUSE);
    assert_result(gy_world_tick(w, WFX_DT), GY_ERR_MISUSE);      /* would wait for itself */
    assert_result(gy_world_destroy(w, NULL), GY_ERR_MISUSE);     /* nothing freed */
    assert_result(gy_world_release_ownership(w), GY_ERR_MISUSE); /* hand over with the lock */
    assert_result(gy_world_unlock_read(w), GY_ERR_MISUSE);
    assert_result(gy_world_unlock_write(w), GY_OK);
    assert_result(gy_world_lock_read(w), GY_OK);
    assert_result(gy_world_lock_read(w), GY_ERR_MISUSE);
    assert_result(gy_world_lock_write(w), GY_ERR_MISUSE);
    assert_result(gy_world_unlock_write(w), GY_ERR_MISUSE);
    assert_result(gy_world_unlock_read(w), GY_OK);
    wfx_tick(w, 2); /* the lock is whole again */
    wfx_destroy(w, NULL);
}

/* Inside a tick the owner holds the write side: a callback taking the lock gets an error. */
static void lock_in_update(void *ctx, gy_world *w, double dt)
{
    (void)dt;
    gy_result *r = ctx;
    r[0] = gy_world_lock_write(w);
    r[1] = gy_world_lock_read(w);
    r[2] = gy_world_unlock_write(w);
    r[3] = gy_world_tick(w, WFX_DT);
}

static void test_owner_lock_inside_a_tick_is_an_error(void **state)
{
    (void)state;
    gy_result r[4] = {GY_OK, GY_OK, GY_OK, GY_OK};
    gy_world_def c = wfx_config(NULL, true);
    c.update = lock_in_update;
    c.update_ctx = r;
    gy_world *w = wfx_world_with(&c);
    wfx_tick(w, 1);
    assert_result(r[0], GY_ERR_MISUSE);
    assert_result(r[1], GY_ERR_MISUSE);
    assert_result(r[2], GY_ERR_MISUSE); /* the tick's own hold is not the callback's to drop */
    assert_result(r[3], GY_ERR_MISUSE);
    wfx_destroy(w, NULL);
}

/* ---- streaming from callbacks -------------------------------------------------------------------
 */

typedef struct trigger {
    gy_scene *scene;
    gy_scene_instance *loaded;
    gy_result load_result;
    bool pending_in_callback, null_in_callback;
    uint32_t enters;
    bool unload_now;
    gy_result unload_result;
} trigger;

/* "A trigger loads the next cell": on the first ENTER, an additive load. */
static void load_on_enter(void *ctx, gy_world *w, const gy_collision_event *e)
{
    trigger *t = ctx;
    if (e->kind != GY_COLLISION_ENTER || t->enters++ > 0)
        return;
    t->load_result =
        gy_scene_load_additive(w, t->scene, gy_v3(10, 0, 0), 0, NULL, &t->loaded, NULL);
    if (t->loaded != NULL) {
        t->pending_in_callback = t->loaded->pending;
        t->null_in_callback = gy_entity_is_null(t->loaded->entities[0]);
    }
}

static void unload_in_update(void *ctx, gy_world *w, double dt)
{
    (void)dt;
    trigger *t = ctx;
    if (!t->unload_now)
        return;
    t->unload_now = false;
    t->unload_result = gy_scene_unload(w, t->loaded, 0);
}

typedef struct tick_wait {
    gy_world *w;
    const uint32_t *count;
} tick_wait;

/* One frame per poll, until the callback has counted something. */
static bool tick_until_counted(void *ctx)
{
    tick_wait *t = ctx;
    wfx_tick(t->w, 1);
    return *t->count > 0;
}

static void streaming_from_callbacks(bool lockstep)
{
    trigger t;
    memset(&t, 0, sizeof t);
    t.scene = one_ball_scene();
    gy_world_def c = wfx_config(NULL, lockstep);
    c.update = unload_in_update;
    c.update_ctx = &t;
    gy_world *w = wfx_world_with(&c);
    gy_entity ground = wfx_ground(w);
    wfx_ball(w, "ball", gy_v3(0, 0.6, 0));
    assert_result(gy_entity_set_collision_callback(w, ground, load_on_enter, &t), GY_OK);
    /* Real time: the ball lands when the physics thread gets to it. */
    tick_wait tw = {w, &t.enters};
    assert_true(gy_test_wait_until(tick_until_counted, &tw, 20.0));
    assert_result(t.load_result, GY_OK);
    assert_non_null(t.loaded);
    assert_true(t.pending_in_callback);
    assert_true(t.null_in_callback);
    /* Performed when the tick that dispatched it ended. */
    assert_false(t.loaded->pending);
    assert_result(t.loaded->result, GY_OK);
    gy_entity cell_ball = t.loaded->entities[0];
    assert_true(gy_entity_is_valid(w, cell_ball));
    assert_true(gy_body_exists(w, cell_ball));
    gy_pose p = wfx_world_pose(w, cell_ball);
    assert_near(p.position.x, 10.0, 1e-9);
    gy_world_stats s;
    gy_world_get_stats(w, &s);
    assert_int_equal(s.streams_deferred, 1);
    /* The next ticks run (this is where a deadlocked World lock used to hang). */
    wfx_tick(w, 3);
    /* An unload from the update callback is deferred the same way. */
    t.unload_now = true;
    wfx_tick(w, 1);
    assert_result(t.unload_result, GY_OK);
    assert_false(gy_entity_is_valid(w, cell_ball));
    gy_world_get_stats(w, &s);
    assert_int_equal(s.streams_deferred, 2);
    wfx_tick(w, 2);
    gy_scene_free(t.scene);
    wfx_destroy(w, NULL);
}

static void test_owner_streaming_from_a_callback_is_deferred_lockstep(void **state)
{
    (void)state;
    streaming_from_callbacks(true);
}

static void test_owner_streaming_from_a_callback_is_deferred_real_time(void **state)
{
    (void)state;
    streaming_from_callbacks(false);
}

/* A replace asked for in the update callback: stop, load, start once the tick has ended. */
typedef struct replacer {
    gy_scene *scene;
    gy_scene_instance *made;
    gy_result result;
    bool fire;
} replacer;

static void replace_in_update(void *ctx, gy_world *w, double dt)
{
    (void)dt;
    replacer *r = ctx;
    if (!r->fire)
        return;
    r->fire = false;
    r->result = gy_scene_load_replace(w, NULL, r->scene, NULL, &r->made, NULL);
}

static void test_owner_replace_from_a_callback_is_deferred(void **state)
{
    (void)state;
    replacer r;
    memset(&r, 0, sizeof r);
    r.scene = one_ball_scene();
    r.fire = true;
    gy_world_def c = wfx_config(NULL, true);
    c.update = replace_in_update;
    c.update_ctx = &r;
    gy_world *w = wfx_world_with(&c);
    wfx_tick(w, 1);
    assert_result(r.result, GY_OK);
    assert_non_null(r.made);
    assert_false(r.made->pending);
    assert_result(r.made->result, GY_OK);
    assert_true(gy_world_physics_running(w));
    assert_true(gy_body_exists(w, r.made->entities[0]));
    wfx_tick(w, 2);
    gy_scene_instance_free(r.made);
    gy_scene_free(r.scene);
    wfx_destroy(w, NULL);
}

/* Freeing a pending instance inside the dispatch cancels its load. */
static void load_then_free(void *ctx, gy_world *w, double dt)
{
    (void)dt;
    trigger *t = ctx;
    if (t->enters++ > 0)
        return;
    gy_scene_instance *inst = NULL;
    t->load_result = gy_scene_load_additive(w, t->scene, gy_v3(0, 0, 0), 0, NULL, &inst, NULL);
    gy_scene_instance_free(inst);
}

static void test_owner_freeing_a_pending_load_cancels_it(void **state)
{
    (void)state;
    trigger t;
    memset(&t, 0, sizeof t);
    t.scene = one_ball_scene();
    gy_world_def c = wfx_config(NULL, true);
    c.update = load_then_free;
    c.update_ctx = &t;
    gy_world *w = wfx_world_with(&c);
    wfx_tick(w, 2);
    assert_result(t.load_result, GY_OK);
    assert_int_equal(gy_world_entity_count(w), 0);
    gy_scene_free(t.scene);
    wfx_destroy(w, NULL);
}

/* ---- the watchdog -------------------------------------------------------------------------------
 */

/* A batch the physics thread cannot acknowledge (it is parked by an open mutation window) is
 * reported by the next gy_world_tick through the World's logger. */
static void test_owner_tick_runs_the_batch_watchdog(void **state)
{
    (void)state;
    msg_log log = {PTHREAD_MUTEX_INITIALIZER, 0, 0, "batch acknowledgement", {0}};
    gy_logger logger = {msg_log_fn, &log};
    gy_world_def c = wfx_config(NULL, false);
    c.logger = &logger;
    c.physics.watchdog_ns = 1; /* any batch unacknowledged when the tick polls */
    gy_world *w = wfx_world_with(&c);
    gy_barrier *b = gy_physics_barrier(gy_world_physics(w));
    assert_result(gy_barrier_begin_mutation(b, 0), GY_OK);
    wfx_ball(w, "ball", gy_v3(0, 2, 0));
    /* Publishes the create, then polls: the physics thread is parked, so the batch is still
     * unacknowledged and reported once. */
    wfx_tick(w, 1);
    assert_result(gy_barrier_end_mutation(b), GY_OK);
    pthread_mutex_lock(&log.mutex);
    uint32_t matches = log.matches;
    pthread_mutex_unlock(&log.mutex);
    assert_int_equal(matches, 1);
    wfx_destroy(w, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_owner_calls_from_another_thread_are_refused),
        cmocka_unit_test(test_owner_hand_over_and_lock_holders),
        cmocka_unit_test(test_owner_lock_misuse_is_an_error_not_a_hang),
        cmocka_unit_test(test_owner_lock_inside_a_tick_is_an_error),
        cmocka_unit_test(test_owner_streaming_from_a_callback_is_deferred_lockstep),
        cmocka_unit_test(test_owner_streaming_from_a_callback_is_deferred_real_time),
        cmocka_unit_test(test_owner_replace_from_a_callback_is_deferred),
        cmocka_unit_test(test_owner_freeing_a_pending_load_cancels_it),
        cmocka_unit_test(test_owner_tick_runs_the_batch_watchdog),
    };
    return cmocka_run_group_tests_name("world_owner", tests, NULL, NULL);
}
