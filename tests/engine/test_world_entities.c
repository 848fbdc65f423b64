/* The World's entities: generational handles, names, active flags, the hierarchy and transform
 * propagation, the component store's bookkeeping, the World lock, and memory. Physics is left
 * stopped unless a test needs it. */
#include "test_world_fixture.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gyre/handle_pool.h"

static gy_world *stopped_world(gy_test_allocator *ta)
{
    gy_world_def c = wfx_config(ta, true);
    c.start_stopped = true;
    return wfx_world_with(&c);
}

static void assert_vec_near(gy_vec3 a, gy_vec3 b, double tol)
{
    assert_near(a.x, b.x, tol);
    assert_near(a.y, b.y, tol);
    assert_near(a.z, b.z, tol);
}

/* ---- handles --------------------------------------------------------------------------------- */

static void test_entity_handle_reuse_rejects_the_old_handle(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = stopped_world(&ta);
    gy_entity a = wfx_entity(w, "a", gy_v3(1, 2, 3));
    assert_true(gy_entity_is_valid(w, a));
    assert_result(gy_entity_destroy(w, a), GY_OK);
    assert_false(gy_entity_is_valid(w, a));
    gy_entity b = wfx_entity(w, "b", gy_v3(0, 0, 0));
    /* Same slot, new generation: the old handle must never reach the new entity. */
    assert_int_equal(gy_handle_slot(a.bits), gy_handle_slot(b.bits));
    assert_int_not_equal(gy_handle_generation(a.bits), gy_handle_generation(b.bits));
    assert_false(gy_entity_is_valid(w, a));
    assert_result(gy_entity_set_local_position(w, a, gy_v3(9, 9, 9)), GY_ERR_STALE_HANDLE);
    assert_result(gy_entity_destroy(w, a), GY_ERR_STALE_HANDLE);
    assert_null(gy_entity_name(w, a));
    assert_string_equal(gy_entity_name(w, b), "b");
    gy_pose p = wfx_world_pose(w, b);
    assert_near(p.position.x, 0.0, 0.0);
    /* Null and made-up handles. */
    assert_false(gy_entity_is_valid(w, gy_entity_null()));
    gy_entity junk = {gy_handle_make(5000, 1)};
    assert_false(gy_entity_is_valid(w, junk));
    assert_result(gy_entity_set_active(w, junk, false), GY_ERR_STALE_HANDLE);
    assert_int_equal(gy_world_entity_count(w), 1);
    wfx_destroy(w, &ta);
}

static void test_entity_many_create_destroy_cycles_keep_handles_unique(void **state)
{
    (void)state;
    gy_world *w = stopped_world(NULL);
    enum { N = 64, ROUNDS = 50 };
    gy_entity live[N];
    gy_entity dead[N * ROUNDS];
    uint32_t dead_count = 0;
    for (uint32_t i = 0; i < N; i++)
        live[i] = wfx_entity(w, NULL, gy_v3(0, 0, 0));
    for (uint32_t round = 0; round < ROUNDS; round++) {
        for (uint32_t i = round % 3; i < N; i += 3) {
            assert_result(gy_entity_destroy(w, live[i]), GY_OK);
            dead[dead_count++] = live[i];
            live[i] = wfx_entity(w, NULL, gy_v3((double)i, 0, 0));
        }
    }
    for (uint32_t i = 0; i < dead_count; i++)
        assert_false(gy_entity_is_valid(w, dead[i]));
    for (uint32_t i = 0; i < N; i++) {
        assert_true(gy_entity_is_valid(w, live[i]));
        for (uint32_t j = i + 1; j < N; j++)
            assert_false(gy_entity_equal(live[i], live[j]));
    }
    assert_int_equal(gy_world_entity_count(w), N);
    wfx_destroy(w, NULL);
}

static void test_entity_names_and_lookup(void **state)
{
    (void)state;
    gy_world *w = stopped_world(NULL);
    gy_entity a = wfx_entity(w, "crate", gy_v3(0, 0, 0));
    gy_entity b = wfx_entity(w, NULL, gy_v3(0, 0, 0));
    assert_true(gy_entity_equal(gy_world_find_entity(w, "crate"), a));
    assert_true(gy_entity_is_null(gy_world_find_entity(w, "nothing")));
    assert_string_equal(gy_entity_name(w, b), "");
    assert_result(gy_entity_destroy(w, a), GY_OK);
    assert_true(gy_entity_is_null(gy_world_find_entity(w, "crate")));
    wfx_destroy(w, NULL);
}

static void test_entity_validation_errors(void **state)
{
    (void)state;
    gy_world *w = stopped_world(NULL);
    gy_entity_def d = gy_default_entity_def();
    gy_entity e;
    d.position.y = NAN;
    assert_result(gy_entity_create(w, &d, &e), GY_ERR_NON_FINITE);
    assert_true(gy_entity_is_null(e));
    d = gy_default_entity_def();
    d.rotation = (gy_quat){0, 0, 0, 2};
    assert_result(gy_entity_create(w, &d, &e), GY_ERR_INVALID_ARGUMENT);
    d = gy_default_entity_def();
    d.scale = gy_v3(1, 0, 1);
    assert_result(gy_entity_create(w, &d, &e), GY_ERR_INVALID_ARGUMENT);
    d = gy_default_entity_def();
    d.scale = gy_v3(1, INFINITY, 1);
    assert_result(gy_entity_create(w, &d, &e), GY_ERR_NON_FINITE);
    d = gy_default_entity_def();
    d.parent.bits = gy_handle_make(77, 3);
    assert_result(gy_entity_create(w, &d, &e), GY_ERR_STALE_HANDLE);
    assert_result(gy_entity_create(w, NULL, NULL), GY_ERR_INVALID_ARGUMENT);
    assert_int_equal(gy_world_entity_count(w), 0);
    e = wfx_entity(w, "ok", gy_v3(0, 0, 0));
    assert_result(gy_entity_set_local_position(w, e, gy_v3(INFINITY, 0, 0)), GY_ERR_NON_FINITE);
    assert_result(gy_entity_set_local_rotation(w, e, (gy_quat){NAN, 0, 0, 1}), GY_ERR_NON_FINITE);
    assert_result(gy_entity_set_local_rotation(w, e, (gy_quat){0.5, 0, 0, 0.5}),
                  GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_entity_set_local_scale(w, e, gy_v3(-1, 1, 1)), GY_ERR_INVALID_ARGUMENT);
    gy_pose bad = {gy_v3(0, NAN, 0), gy_quat_identity()};
    assert_result(gy_entity_set_world_pose(w, e, bad), GY_ERR_NON_FINITE);
    /* Nothing changed. */
    gy_pose p = wfx_world_pose(w, e);
    assert_near(p.position.x, 0.0, 0.0);
    assert_near(p.rotation.w, 1.0, 0.0);
    assert_result(gy_world_tick(w, NAN), GY_ERR_NON_FINITE);
    assert_result(gy_world_tick(w, -1.0), GY_ERR_INVALID_ARGUMENT);
    wfx_destroy(w, NULL);
}

/* ---- hierarchy ------------------------------------------------------------------------------- */

static void test_hierarchy_propagates_world_transforms(void **state)
{
    (void)state;
    gy_world *w = stopped_world(NULL);
    gy_entity_def d = gy_default_entity_def();
    d.position = gy_v3(1, 0, 0);
    d.rotation = gy_quat_axis_angle(gy_v3(0, 1, 0), GY_PI / 2.0); /* +x → -z */
    d.scale = gy_v3(2, 2, 2);
    gy_entity parent;
    assert_result(gy_entity_create(w, &d, &parent), GY_OK);
    d = gy_default_entity_def();
    d.parent = parent;
    d.position = gy_v3(1, 0, 0);
    d.scale = gy_v3(1, 3, 1);
    gy_entity child;
    assert_result(gy_entity_create(w, &d, &child), GY_OK);
    d = gy_default_entity_def();
    d.parent = child;
    d.position = gy_v3(0, 1, 0);
    gy_entity grandchild;
    assert_result(gy_entity_create(w, &d, &grandchild), GY_OK);
    /* Positions compose rigidly (scale is for rendering only). */
    assert_vec_near(wfx_world_pose(w, child).position, gy_v3(1, 0, -1), 1e-12);
    assert_vec_near(wfx_world_pose(w, grandchild).position, gy_v3(1, 1, -1), 1e-12);
    gy_vec3 s;
    assert_result(gy_entity_get_world_scale(w, grandchild, &s), GY_OK);
    assert_vec_near(s, gy_v3(2, 6, 2), 1e-12);

    /* Moving the parent moves the subtree: read both before and after propagation. */
    assert_result(gy_entity_set_local_position(w, parent, gy_v3(0, 5, 0)), GY_OK);
    assert_vec_near(wfx_world_pose(w, grandchild).position, gy_v3(0, 6, -1), 1e-12);
    gy_world_update_transforms(w);
    assert_vec_near(wfx_world_pose(w, grandchild).position, gy_v3(0, 6, -1), 1e-12);
    gy_pose r = wfx_render_pose(w, grandchild);
    assert_vec_near(r.position, gy_v3(0, 6, -1), 1e-12);
    /* A tick propagates too (physics stopped: nothing else happens). */
    assert_result(gy_entity_set_local_rotation(w, parent, gy_quat_identity()), GY_OK);
    wfx_tick(w, 1);
    assert_vec_near(wfx_world_pose(w, grandchild).position, gy_v3(1, 6, 0), 1e-12);

    /* Setting a world pose derives the local one from the parent. */
    gy_pose target = {gy_v3(10, 10, 10), gy_quat_identity()};
    assert_result(gy_entity_set_world_pose(w, grandchild, target), GY_OK);
    gy_pose local;
    assert_result(gy_entity_get_local_pose(w, grandchild, &local), GY_OK);
    assert_vec_near(local.position, gy_v3(9, 5, 10), 1e-12);
    assert_vec_near(wfx_world_pose(w, grandchild).position, target.position, 1e-12);
    wfx_destroy(w, NULL);
}

static void test_hierarchy_reparent_order_and_cycles(void **state)
{
    (void)state;
    gy_world *w = stopped_world(NULL);
    gy_entity a = wfx_entity(w, "a", gy_v3(0, 0, 0));
    gy_entity b = wfx_entity(w, "b", gy_v3(5, 0, 0));
    gy_entity c1 = wfx_entity(w, "c1", gy_v3(1, 0, 0));
    gy_entity c2 = wfx_entity(w, "c2", gy_v3(2, 0, 0));
    assert_result(gy_entity_set_parent(w, c1, a), GY_OK);
    assert_result(gy_entity_set_parent(w, c2, a), GY_OK);
    assert_true(gy_entity_equal(gy_entity_first_child(w, a), c1));
    assert_true(gy_entity_equal(gy_entity_next_sibling(w, c1), c2));
    assert_true(gy_entity_is_null(gy_entity_next_sibling(w, c2)));
    assert_true(gy_entity_equal(gy_entity_parent(w, c2), a));
    /* No cycles. */
    assert_result(gy_entity_set_parent(w, a, c1), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_entity_set_parent(w, a, a), GY_ERR_INVALID_ARGUMENT);
    /* Reparenting keeps the local pose. */
    assert_result(gy_entity_set_parent(w, c1, b), GY_OK);
    assert_vec_near(wfx_world_pose(w, c1).position, gy_v3(6, 0, 0), 1e-12);
    assert_true(gy_entity_equal(gy_entity_first_child(w, a), c2));
    assert_result(gy_entity_set_parent(w, c1, gy_entity_null()), GY_OK);
    assert_true(gy_entity_is_null(gy_entity_parent(w, c1)));
    assert_vec_near(wfx_world_pose(w, c1).position, gy_v3(1, 0, 0), 1e-12);
    wfx_destroy(w, NULL);
}

static void test_hierarchy_destroy_takes_the_subtree(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = stopped_world(&ta);
    gy_entity root = wfx_entity(w, "root", gy_v3(0, 0, 0));
    gy_entity kids[8];
    for (uint32_t i = 0; i < 8; i++) {
        gy_entity_def d = gy_default_entity_def();
        d.parent = i < 4 ? root : kids[i - 4];
        assert_result(gy_entity_create(w, &d, &kids[i]), GY_OK);
    }
    gy_entity other = wfx_entity(w, "other", gy_v3(0, 0, 0));
    assert_int_equal(gy_world_entity_count(w), 10);
    assert_result(gy_entity_destroy(w, kids[1]), GY_OK); /* and kids[5] */
    assert_false(gy_entity_is_valid(w, kids[5]));
    assert_int_equal(gy_world_entity_count(w), 8);
    assert_result(gy_entity_destroy(w, root), GY_OK);
    for (uint32_t i = 0; i < 8; i++)
        assert_false(gy_entity_is_valid(w, kids[i]));
    assert_true(gy_entity_is_valid(w, other));
    assert_int_equal(gy_world_entity_count(w), 1);
    wfx_destroy(w, &ta);
}

static void test_hierarchy_active_flags(void **state)
{
    (void)state;
    gy_world *w = stopped_world(NULL);
    gy_entity p = wfx_entity(w, "p", gy_v3(0, 0, 0));
    gy_entity_def d = gy_default_entity_def();
    d.parent = p;
    gy_entity c;
    assert_result(gy_entity_create(w, &d, &c), GY_OK);
    assert_true(gy_entity_is_active_in_hierarchy(w, c));
    assert_result(gy_entity_set_active(w, p, false), GY_OK);
    assert_true(gy_entity_is_active(w, c));
    assert_false(gy_entity_is_active_in_hierarchy(w, c));
    /* A child created under an inactive parent starts inactive in the hierarchy. */
    gy_entity c2;
    assert_result(gy_entity_create(w, &d, &c2), GY_OK);
    assert_false(gy_entity_is_active_in_hierarchy(w, c2));
    assert_result(gy_entity_set_parent(w, c2, gy_entity_null()), GY_OK);
    assert_true(gy_entity_is_active_in_hierarchy(w, c2));
    assert_result(gy_entity_set_active(w, p, true), GY_OK);
    assert_true(gy_entity_is_active_in_hierarchy(w, c));
    wfx_destroy(w, NULL);
}

/* ---- memory ---------------------------------------------------------------------------------- */

static void test_world_survives_every_allocation_failure(void **state)
{
    (void)state;
    /* Build a small world with every allocation in turn failing: each step either succeeds or
     * reports GY_ERR_OUT_OF_MEMORY, and the teardown gives every byte back. */
    for (uint64_t k = 1; k < 400; k++) {
        gy_test_allocator ta;
        gy_test_allocator_init(&ta);
        ta.fail_at = k;
        gy_world_def c = wfx_config(&ta, true);
        c.start_stopped = true;
        gy_world *w = NULL;
        gy_result r = gy_world_create(&c, &w);
        if (r != GY_OK) {
            assert_result(r, GY_ERR_OUT_OF_MEMORY);
            assert_int_equal(ta.live_blocks, 0);
            continue;
        }
        gy_entity prev = gy_entity_null();
        for (uint32_t i = 0; i < 40; i++) {
            gy_entity_def d = gy_default_entity_def();
            d.name = "node";
            d.parent = prev;
            gy_entity e;
            r = gy_entity_create(w, &d, &e);
            if (r != GY_OK) {
                assert_result(r, GY_ERR_OUT_OF_MEMORY);
                continue;
            }
            wfx_desc b = wfx_sphere(GY_BODY_DYNAMIC, 0.5);
            r = gy_body_add(w, e, wfx_d(&b));
            if (r != GY_OK)
                assert_result(r, GY_ERR_OUT_OF_MEMORY);
            if (i % 7 == 3)
                r = gy_entity_destroy(w, e);
            else
                prev = e;
            if (r != GY_OK)
                assert_result(r, GY_ERR_OUT_OF_MEMORY);
        }
        gy_world_destroy(w, NULL);
        assert_int_equal(ta.live_blocks, 0);
    }
}

/* The calls that now allocate a side record on first use (a root becoming a child: its world
 * pose; a scale other than 1; a name or callback's cold record) either succeed or report
 * GY_ERR_OUT_OF_MEMORY with the entity exactly as it was. Each allocation in turn fails. */
static void test_side_records_refused_for_memory_change_nothing(void **state)
{
    (void)state;
    const gy_pose at = {gy_v3(1, 2, 3), gy_quat_identity()};
    uint32_t refused[3] = {0, 0, 0};
    for (uint64_t k = 1; k < 64; k++) {
        gy_test_allocator ta;
        gy_test_allocator_init(&ta);
        gy_world *w = stopped_world(&ta);
        gy_entity root = wfx_entity(w, NULL, gy_v3(0, 5, 0));
        gy_entity e = wfx_entity(w, NULL, at.position);
        ta.fail_at = ta.calls + k;

        gy_result r = gy_entity_set_parent(w, e, root);
        if (r != GY_OK) {
            assert_result(r, GY_ERR_OUT_OF_MEMORY);
            refused[0]++;
            assert_true(gy_entity_is_null(gy_entity_parent(w, e)));
            assert_true(gy_entity_is_null(gy_entity_first_child(w, root)));
            gy_pose p;
            assert_result(gy_entity_get_world_pose(w, e, &p), GY_OK);
            assert_vec_near(p.position, at.position, 0.0);
        }
        r = gy_entity_set_local_scale(w, root, gy_v3(2, 2, 2));
        gy_vec3 sc;
        assert_result(gy_entity_get_local_scale(w, root, &sc), GY_OK);
        if (r != GY_OK) {
            assert_result(r, GY_ERR_OUT_OF_MEMORY);
            refused[1]++;
            assert_vec_near(sc, gy_v3(1, 1, 1), 0.0);
        } else {
            assert_vec_near(sc, gy_v3(2, 2, 2), 0.0);
        }
        r = gy_entity_set_collision_callback(w, root, wfx_on_collision, NULL);
        if (r != GY_OK) {
            assert_result(r, GY_ERR_OUT_OF_MEMORY);
            refused[2]++;
        }
        gy_world_destroy(w, NULL);
        assert_int_equal(ta.live_blocks, 0);
    }
    for (int i = 0; i < 3; i++)
        assert_true(refused[i] > 0); /* each call was refused for memory at least once */
}

/* A joint's counts (kept in its entities' cold records) and a body's user data (kept in a side
 * table) either are stored or the call reports GY_ERR_OUT_OF_MEMORY with nothing changed and
 * nothing leaked. Each allocation in turn fails. */
static void test_joint_counts_and_user_data_refused_for_memory_change_nothing(void **state)
{
    (void)state;
    uint32_t refused[2] = {0, 0};
    for (uint64_t k = 1; k < 64; k++) {
        gy_test_allocator ta;
        gy_test_allocator_init(&ta);
        gy_world *w = stopped_world(&ta);
        gy_entity a = wfx_entity(w, NULL, gy_v3(0, 5, 0));
        gy_entity b = wfx_entity(w, NULL, gy_v3(1, 5, 0));
        wfx_add(w, a, wfx_box(GY_BODY_DYNAMIC, gy_v3(1, 1, 1)));
        wfx_add(w, b, wfx_box(GY_BODY_DYNAMIC, gy_v3(1, 1, 1)));
        gy_joint_def jd = gy_default_joint_def();
        gy_joint j;
        ta.fail_at = ta.calls + k;

        gy_result r = gy_joint_create(w, a, b, &jd, &j);
        gy_world_stats st;
        gy_world_get_stats(w, &st);
        if (r != GY_OK) {
            assert_result(r, GY_ERR_OUT_OF_MEMORY);
            refused[0]++;
            assert_int_equal(st.joints, 0);
        } else {
            assert_int_equal(st.joints, 1);
            assert_result(gy_joint_release(w, j), GY_OK);
        }
        r = gy_body_set_user_data(w, b, 9u);
        if (r != GY_OK) {
            assert_result(r, GY_ERR_OUT_OF_MEMORY);
            refused[1]++;
            assert_int_equal(gy_body_get_user_data(w, b), 0u);
        } else {
            assert_int_equal(gy_body_get_user_data(w, b), 9u);
        }
        assert_result(gy_entity_destroy(w, a), GY_OK);
        gy_world_destroy(w, NULL);
        assert_int_equal(ta.live_blocks, 0);
    }
    for (int i = 0; i < 2; i++)
        assert_true(refused[i] > 0); /* each call was refused for memory at least once */
}

/* ---- the World lock -------------------------------------------------------------------------- */

typedef struct tick_thread {
    gy_world *w;
    int done;
} tick_thread;

static void *run_tick(void *arg)
{
    tick_thread *t = arg;
    /* The World is handed to this thread for the tick and handed back after. */
    gy_result r = gy_world_take_ownership(t->w);
    if (r == GY_OK)
        r = gy_world_tick(t->w, WFX_DT);
    if (r == GY_OK)
        r = gy_world_release_ownership(t->w);
    __atomic_store_n(&t->done, r == GY_OK ? 1 : -1, __ATOMIC_RELEASE);
    return NULL;
}

static bool tick_done(void *ctx)
{
    tick_thread *t = ctx;
    return __atomic_load_n(&t->done, __ATOMIC_ACQUIRE) != 0;
}

static void test_world_lock_excludes_tick_and_notes_depth(void **state)
{
    (void)state;
    gy_world *w = stopped_world(NULL);
    assert_int_equal(gy_world_lock_depth(), 0);
    assert_result(gy_world_release_ownership(w), GY_OK);
    assert_result(gy_world_lock_read(w), GY_OK);
    if (gy_world_lock_checks_enabled())
        assert_int_equal(gy_world_lock_depth(), 1);
    /* A tick on the (new) owner thread waits for the tool's read lock. */
    tick_thread t = {w, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, run_tick, &t), 0);
    assert_false(gy_test_wait_until(tick_done, &t, 0.1));
    assert_result(gy_world_unlock_read(w), GY_OK);
    assert_int_equal(gy_world_lock_depth(), 0);
    assert_true(gy_test_wait_until(tick_done, &t, 20.0));
    pthread_join(th, NULL);
    assert_int_equal(t.done, 1);
    assert_result(gy_world_take_ownership(w), GY_OK);
    assert_result(gy_world_lock_write(w), GY_OK);
    if (gy_world_lock_checks_enabled())
        assert_int_equal(gy_world_lock_depth(), 1);
    assert_result(gy_world_unlock_write(w), GY_OK);
    assert_int_equal(gy_world_lock_depth(), 0);
    gy_world_stats s;
    gy_world_get_stats(w, &s);
    assert_int_equal(s.ticks, 1);
    wfx_destroy(w, NULL);
}

/* Lock order: requesting the scene barrier while holding the World lock aborts (lock_checks
 * builds), in a child process so the test can watch it die. */
static void test_world_lock_then_barrier_aborts(void **state)
{
    (void)state;
    if (!gy_world_lock_checks_enabled())
        skip();
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        gy_world_def c = gy_default_world_def();
        c.start_stopped = true;
        gy_world *w = NULL;
        if (gy_world_create(&c, &w) != GY_OK)
            _exit(2);
        /* Barrier first, then the lock: fine. */
        gy_barrier *b = gy_physics_barrier(gy_world_physics(w));
        if (gy_barrier_begin_mutation(b, 0) != GY_OK)
            _exit(3);
        if (gy_world_lock_write(w) != GY_OK || gy_world_unlock_write(w) != GY_OK)
            _exit(4);
        gy_barrier_end_mutation(b);
        /* The inversion. */
        if (gy_world_lock_write(w) != GY_OK)
            _exit(5);
        gy_barrier_begin_mutation(b, 0);
        _exit(0); /* not reached */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
}

/* Sibling lists without tails, world poses stored only for children, scales only when not unit,
 * names and callbacks in records kept only while an entity has one: every way in and out. */
/* Counts the events it is given (ctx: a uint32_t). */
static void count_body_events(void *ctx, gy_world *world, const gy_body_event *event)
{
    (void)world;
    (void)event;
    (*(uint32_t *)ctx)++;
}

static void test_entity_side_records_in_and_out(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = stopped_world(&ta);
    gy_entity p = wfx_entity(w, "p", gy_v3(10, 0, 0));
    gy_entity k[4];
    for (int i = 0; i < 4; i++) {
        k[i] = wfx_entity(w, NULL, gy_v3(i, 0, 0));
        assert_result(gy_entity_set_parent(w, k[i], p), GY_OK);
    }
    /* Out of the middle, the end and the front; then appended again. */
    assert_result(gy_entity_destroy(w, k[1]), GY_OK);
    assert_result(gy_entity_set_parent(w, k[3], gy_entity_null()), GY_OK);
    assert_result(gy_entity_set_parent(w, k[0], gy_entity_null()), GY_OK);
    assert_true(gy_entity_equal(gy_entity_first_child(w, p), k[2]));
    assert_true(gy_entity_is_null(gy_entity_next_sibling(w, k[2])));
    assert_result(gy_entity_set_parent(w, k[0], p), GY_OK);
    assert_result(gy_entity_set_parent(w, k[3], p), GY_OK);
    assert_true(gy_entity_equal(gy_entity_first_child(w, p), k[2]));
    assert_true(gy_entity_equal(gy_entity_next_sibling(w, k[2]), k[0]));
    assert_true(gy_entity_equal(gy_entity_next_sibling(w, k[0]), k[3]));
    assert_true(gy_entity_is_null(gy_entity_next_sibling(w, k[3])));
    gy_world_update_transforms(w);
    assert_vec_near(wfx_world_pose(w, k[3]).position, gy_v3(13, 0, 0), 0.0);
    /* A root's world pose is its local one; a child's is composed. */
    assert_vec_near(wfx_world_pose(w, p).position, gy_v3(10, 0, 0), 0.0);
    assert_result(gy_entity_set_local_position(w, p, gy_v3(20, 0, 0)), GY_OK);
    gy_world_update_transforms(w);
    assert_vec_near(wfx_world_pose(w, k[0]).position, gy_v3(20, 0, 0), 0.0);
    /* Scales: set, composed, back to unit. */
    gy_vec3 s;
    assert_result(gy_entity_set_local_scale(w, p, gy_v3(2, 3, 4)), GY_OK);
    assert_result(gy_entity_set_local_scale(w, k[0], gy_v3(0.5, 1, 1)), GY_OK);
    assert_result(gy_entity_get_world_scale(w, k[0], &s), GY_OK);
    assert_vec_near(s, gy_v3(1, 3, 4), 0.0);
    assert_result(gy_entity_set_local_scale(w, p, gy_v3(1, 1, 1)), GY_OK);
    assert_result(gy_entity_get_local_scale(w, p, &s), GY_OK);
    assert_vec_near(s, gy_v3(1, 1, 1), 0.0);
    assert_result(gy_entity_get_world_scale(w, k[0], &s), GY_OK);
    assert_vec_near(s, gy_v3(0.5, 1, 1), 0.0);
    /* Callbacks come and go; the name stays. */
    static wfx_events ev;
    uint32_t body_events = 0;
    assert_result(gy_entity_set_collision_callback(w, p, wfx_on_collision, &ev), GY_OK);
    assert_result(gy_entity_set_body_callback(w, p, count_body_events, &body_events), GY_OK);
    assert_result(gy_entity_set_collision_callback(w, p, NULL, NULL), GY_OK);
    assert_result(gy_entity_set_body_callback(w, p, NULL, NULL), GY_OK);
    assert_string_equal(gy_entity_name(w, p), "p");
    assert_true(gy_entity_equal(gy_world_find_entity(w, "p"), p));
    /* An unnamed entity gets a record for a callback and gives it back. */
    assert_result(gy_entity_set_body_callback(w, k[2], count_body_events, &body_events), GY_OK);
    assert_result(gy_entity_set_body_callback(w, k[2], NULL, NULL), GY_OK);
    assert_result(gy_entity_set_collision_callback(w, k[3], NULL, NULL), GY_OK);
    assert_string_equal(gy_entity_name(w, k[2]), "");
    assert_result(gy_entity_destroy(w, p), GY_OK);
    assert_int_equal(gy_world_entity_count(w), 0u); /* its subtree went with it */
    wfx_destroy(w, &ta);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entity_handle_reuse_rejects_the_old_handle),
        cmocka_unit_test(test_entity_many_create_destroy_cycles_keep_handles_unique),
        cmocka_unit_test(test_entity_names_and_lookup),
        cmocka_unit_test(test_entity_validation_errors),
        cmocka_unit_test(test_hierarchy_propagates_world_transforms),
        cmocka_unit_test(test_hierarchy_reparent_order_and_cycles),
        cmocka_unit_test(test_hierarchy_destroy_takes_the_subtree),
        cmocka_unit_test(test_hierarchy_active_flags),
        cmocka_unit_test(test_entity_side_records_in_and_out),
        cmocka_unit_test(test_world_survives_every_allocation_failure),
        cmocka_unit_test(test_side_records_refused_for_memory_change_nothing),
        cmocka_unit_test(test_joint_counts_and_user_data_refused_for_memory_change_nothing),
        cmocka_unit_test(test_world_lock_excludes_tick_and_notes_depth),
        cmocka_unit_test(test_world_lock_then_barrier_aborts),
    };
    return cmocka_run_group_tests_name("world_entities", tests, NULL, NULL);
}
