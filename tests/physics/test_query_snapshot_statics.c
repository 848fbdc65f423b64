/* The query snapshot stores static entries once: the writer and its published buffers share
 * them, a change copies only what it touches, and a reader never sees a shared part change or go
 * away under a view it holds. */
#include "test_query_snapshot_fixture.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "gyre/math.h"
#include "query_snapshot.h"

/* A static 1 m box at x = 3 slot whose height says which tick set it. */
static double height_of(uint64_t tick)
{
    return 1.0 + 0.01 * (double)(tick % 97);
}

static gy_snapshot_entry static_box(uint32_t slot, uint64_t tick)
{
    gy_snapshot_entry e = gy_default_snapshot_entry();
    e.shape.type = GY_SHAPE_BOX;
    e.shape.box_size = gy_v3(1, height_of(tick), 1);
    e.pose.position = gy_v3(3.0 * slot, 0, 0);
    e.body.generation = (uint32_t)tick;
    e.body.index = slot;
    e.motion = GY_MOTION_STATIC;
    return e;
}

/* Sets static boxes at slots `first` to `end` - 1, as set by `tick`. */
static void set_statics(gy_query_snapshot *qs, uint32_t first, uint32_t end, uint64_t tick)
{
    for (uint32_t s = first; s < end; s++) {
        gy_snapshot_entry e = static_box(s, tick);
        assert_result(gy_query_snapshot_set(qs, s, &e), GY_OK);
    }
}

/* The generation the view shows at `slot` (0: empty), checked against its shape. */
static uint32_t shown(const gy_snapshot_view *v, uint32_t slot)
{
    gy_snapshot_entry_info info;
    if (gy_snapshot_view_get(v, slot, &info) != GY_OK)
        return 0;
    if (info.entry.shape.box_size.y != height_of(info.entry.body.generation) ||
        info.entry.body.index != slot)
        return UINT32_MAX;
    return info.entry.body.generation;
}

/* How many entries a ray straight down through slot `slot`'s box hits (each slot is 3 m apart). */
static uint32_t hits_down_through(const gy_snapshot_view *v, uint32_t slot)
{
    gy_snapshot_hit hits[4];
    uint32_t n = 0;
    assert_result(gy_snapshot_view_raycast(v, gy_v3(3.0 * slot, 10, 0), gy_v3(0, -20, 0), NULL,
                                           GY_COLLECT_ALL, hits, 4, &n),
                  GY_OK);
    return n;
}

enum { STATICS = 2000 };

static void test_query_snapshot_statics_are_stored_once_for_all_buffers(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_query_snapshot *qs = qfx_make_snapshot(&ta.base);
    set_statics(qs, 0, STATICS, 1);
    qfx_publish_read(qs, 1);
    int64_t one_buffer = ta.live_bytes;
    const gy_snapshot_view *v = NULL;
    for (uint64_t t = 2; t <= 4; t++)
        v = qfx_publish_read(qs, t); /* every buffer now shows the statics */
    gy_query_snapshot_stats st;
    gy_query_snapshot_get_stats(qs, &st);
    assert_int_equal(st.static_page_copies, 0);
    assert_true(st.static_pages > 0 && st.static_pages <= STATICS / 16u);
    /* The other two buffers added page directories only: no entries, no tree nodes. */
    assert_true(ta.live_bytes - one_buffer < (int64_t)STATICS * 2);
    for (uint32_t s = 0; s < STATICS; s++)
        assert_int_equal(shown(v, s), 1);
    gy_query_snapshot_destroy(qs);
    assert_int_equal(ta.live_bytes, 0);
}

static void test_query_snapshot_static_change_copies_only_its_page(void **state)
{
    (void)state;
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    set_statics(qs, 0, STATICS, 1);
    const gy_snapshot_view *old = NULL;
    for (uint64_t t = 1; t <= 3; t++)
        old = qfx_publish_read(qs, t);
    gy_query_snapshot_stats s0, s1;
    gy_query_snapshot_get_stats(qs, &s0);
    /* Three changes to statics of one page, then a removal and a teleport elsewhere. */
    set_statics(qs, 64, 67, 4);
    assert_result(gy_query_snapshot_remove(qs, 1000), GY_OK);
    gy_pose far = {gy_v3(3.0 * 1500, 50, 0), gy_quat_identity()};
    assert_result(gy_query_snapshot_move(qs, 1500, far), GY_OK);
    gy_query_snapshot_get_stats(qs, &s1);
    assert_int_equal(s1.static_page_copies - s0.static_page_copies, 2);
    assert_result(gy_query_snapshot_publish(qs, 4), GY_OK);
    gy_query_snapshot_get_stats(qs, &s1);
    assert_int_equal(s1.static_page_copies - s0.static_page_copies, 3); /* the removal's page */
    /* The reader has not acquired since tick 3: its view is untouched. */
    for (uint32_t s = 0; s < STATICS; s++)
        assert_int_equal(shown(old, s), 1);
    const gy_snapshot_view *v = gy_query_snapshot_acquire(qs);
    assert_int_equal(gy_snapshot_view_tick(v), 4);
    for (uint32_t s = 0; s < STATICS; s++) {
        uint32_t want = s >= 64 && s < 67 ? 4u : s == 1000 ? 0u : 1u;
        assert_int_equal(shown(v, s), want);
    }
    gy_snapshot_hit h;
    uint32_t n = 0;
    assert_result(gy_snapshot_view_raycast(v, gy_v3(3.0 * 1500, 60, 0), gy_v3(0, -20, 0), NULL,
                                           GY_COLLECT_CLOSEST, &h, 1, &n),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_int_equal(h.slot, 1500);
    assert_result(gy_snapshot_view_raycast(v, gy_v3(3.0 * 1000, 10, 0), gy_v3(0, -20, 0), NULL,
                                           GY_COLLECT_CLOSEST, &h, 1, &n),
                  GY_OK);
    assert_int_equal(n, 0);
    gy_query_snapshot_destroy(qs);
}

/* A static that becomes a mover and back, within one publish and across publishes, is shown once
 * and with its latest motion. */
static void test_query_snapshot_static_turned_mover_is_shown_once(void **state)
{
    (void)state;
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    gy_snapshot_entry e = static_box(5, 1);
    assert_result(gy_query_snapshot_set(qs, 5, &e), GY_OK);
    qfx_publish_read(qs, 1);
    for (uint64_t t = 2; t <= 12; t++) {
        e = static_box(5, t);
        e.motion = t % 2 ? GY_MOTION_STATIC : GY_MOTION_DYNAMIC;
        if (t % 3 == 0) { /* and back again before the publish */
            gy_snapshot_entry other = e;
            other.motion = t % 2 ? GY_MOTION_DYNAMIC : GY_MOTION_STATIC;
            assert_result(gy_query_snapshot_set(qs, 5, &other), GY_OK);
        }
        assert_result(gy_query_snapshot_set(qs, 5, &e), GY_OK);
        const gy_snapshot_view *v = qfx_publish_read(qs, t);
        gy_snapshot_entry_info info;
        assert_result(gy_snapshot_view_get(v, 5, &info), GY_OK);
        assert_int_equal(info.entry.motion, e.motion);
        assert_int_equal(info.entry.body.generation, (uint32_t)t);
        assert_int_equal(hits_down_through(v, 5), 1);
        gy_query_snapshot_stats st;
        gy_query_snapshot_get_stats(qs, &st);
        assert_int_equal(st.entries, 1);
    }
    gy_query_snapshot_destroy(qs);
}

/* A host that makes no query never takes a view, so one buffer stays with the reader and is
 * never written. The statics added before must not stay owed to that buffer: once every other
 * list caught up, a publish looks only at what changed since, however many statics there are. */
static void test_query_snapshot_publish_without_reader_skips_settled_statics(void **state)
{
    (void)state;
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    set_statics(qs, 0, STATICS, 1);
    gy_snapshot_entry mover = static_box(STATICS, 1);
    mover.motion = GY_MOTION_DYNAMIC;
    assert_result(gy_query_snapshot_set(qs, STATICS, &mover), GY_OK);
    for (uint64_t t = 1; t <= 4; t++)
        assert_result(gy_query_snapshot_publish(qs, t), GY_OK);
    gy_query_snapshot_stats before, after;
    gy_query_snapshot_get_stats(qs, &before);
    for (uint64_t t = 5; t <= 14; t++) {
        mover.pose.position.y = 0.1 * (double)t;
        assert_result(gy_query_snapshot_set(qs, STATICS, &mover), GY_OK);
        assert_result(gy_query_snapshot_publish(qs, t), GY_OK);
    }
    gy_query_snapshot_get_stats(qs, &after);
    /* Ten publishes of one moving entry: the mover (and nothing else) once per publish. */
    assert_int_equal(after.slots_walked - before.slots_walked, 10);
    /* The buffer the reader held all along, taken at last, is whole and current. */
    const gy_snapshot_view *v = qfx_publish_read(qs, 15);
    for (uint32_t s = 0; s < STATICS; s++)
        assert_int_equal(shown(v, s), 1);
    gy_snapshot_entry_info info;
    assert_result(gy_snapshot_view_get(v, STATICS, &info), GY_OK);
    assert_true(fabs(info.entry.pose.position.y - 1.4) < 1e-12);
    gy_query_snapshot_destroy(qs);
}

/* A mover turned static while the reader holds a buffer that shows it moving: that buffer still
 * owes the change, and shows the entry as static (once) when the reader takes it again. */
static void test_query_snapshot_mover_turned_static_reaches_the_held_buffer(void **state)
{
    (void)state;
    gy_query_snapshot *qs = qfx_make_snapshot(NULL);
    gy_snapshot_entry e = static_box(7, 1);
    e.motion = GY_MOTION_DYNAMIC;
    assert_result(gy_query_snapshot_set(qs, 7, &e), GY_OK);
    for (uint64_t t = 1; t <= 3; t++)
        qfx_publish_read(qs, t); /* every buffer shows it moving */
    e = static_box(7, 4);
    assert_result(gy_query_snapshot_set(qs, 7, &e), GY_OK);
    set_statics(qs, 100, 100 + STATICS, 4);
    for (uint64_t t = 4; t <= 9; t++)
        assert_result(gy_query_snapshot_publish(qs, t), GY_OK); /* the reader holds tick 3 */
    for (uint64_t t = 10; t <= 12; t++) {
        const gy_snapshot_view *v = qfx_publish_read(qs, t);
        gy_snapshot_entry_info info;
        assert_result(gy_snapshot_view_get(v, 7, &info), GY_OK);
        assert_int_equal(info.entry.motion, GY_MOTION_STATIC);
        assert_int_equal(info.entry.body.generation, 4);
        assert_int_equal(hits_down_through(v, 7), 1);
    }
    gy_query_snapshot_destroy(qs);
}

/* ---- a reader thread against a writer streaming statics ------------------------------------ */

/* Enough statics that the static tree is mostly edited in place, sometimes rebuilt. */
enum { PAGES = 40, SLOTS = PAGES * 32, STREAM_TICKS = 2400 };

/* Whether tick t (which rewrites page t % PAGES) removes that page's statics: a fifth of the
 * pages at a time. */
static bool removes(uint64_t t)
{
    return (t / PAGES + t % PAGES) % 5 == 4;
}

/* What slot `s` holds at tick t: each tick rewrites one page's 32 statics, or removes them.
 * Returns the generation (the tick that set it) or 0 when empty. */
static uint32_t expected(uint64_t tick, uint32_t s)
{
    uint64_t page = s / 32u, last = 1;
    for (uint64_t t = tick; t >= 2; t--)
        if (t % PAGES == page) {
            last = t;
            break;
        }
    if (last == 1)
        return 1;
    return removes(last) ? 0u : (uint32_t)last;
}

typedef struct stream_ctx {
    gy_query_snapshot *qs;
    uint64_t published;  /* atomic: the writer's last tick */
    uint64_t final_tick; /* atomic: 0 until the writer is done */
    uint64_t checks, wrong, holds, timeouts, distinct;
    uint64_t checksum, expected_sum;
    uint64_t wait_for; /* the tick a held view waits for */
} stream_ctx;

static bool writer_reached(void *arg)
{
    stream_ctx *c = arg;
    return __atomic_load_n(&c->published, __ATOMIC_ACQUIRE) >= c->wait_for ||
           __atomic_load_n(&c->final_tick, __ATOMIC_ACQUIRE) != 0;
}

/* Checks every slot and a ray of the view against what its tick must show; adds the generations
 * seen and expected to the checksums. Returns the mismatches. */
static uint64_t check_view(stream_ctx *c, const gy_snapshot_view *v, gy_test_rng *r)
{
    uint64_t tick = gy_snapshot_view_tick(v), bad = 0;
    for (uint32_t s = 0; s < SLOTS; s++) {
        uint32_t got = shown(v, s), want = expected(tick, s);
        c->checksum += got;
        c->expected_sum += want;
        bad += got != want;
    }
    uint32_t s = (uint32_t)(gy_test_rnd(r) * SLOTS);
    gy_snapshot_hit h;
    uint32_t n = 0;
    gy_snapshot_view_raycast(v, gy_v3(3.0 * s, 10, 0), gy_v3(0, -20, 0), NULL, GY_COLLECT_CLOSEST,
                             &h, 1, &n);
    uint32_t want = expected(tick, s);
    if (want == 0)
        bad += n != 0;
    else
        bad += n != 1 || h.slot != s || h.body.generation != want ||
               fabs(h.point.y - 0.5 * height_of(want)) > 1e-9 || h.tick != tick;
    return bad;
}

static void *stream_reader(void *arg)
{
    stream_ctx *c = arg;
    gy_test_rng r = {4242};
    uint64_t last = 0;
    for (uint64_t k = 1;; k++) {
        uint64_t final = __atomic_load_n(&c->final_tick, __ATOMIC_ACQUIRE);
        const gy_snapshot_view *v = gy_query_snapshot_acquire(c->qs);
        if (v == NULL)
            continue;
        uint64_t tick = gy_snapshot_view_tick(v);
        c->distinct += tick != last;
        last = tick;
        c->wrong += check_view(c, v, &r);
        c->checks++;
        if (k % 16 == 0 && final == 0) {
            /* Hold this view while the writer publishes four more ticks (streaming pages the
             * view shares), then check it again: it must not have changed. */
            c->wait_for = tick + 4;
            if (!gy_test_wait_until(writer_reached, c, 30.0))
                c->timeouts++;
            c->wrong += check_view(c, v, &r);
            c->holds++;
        }
        if (final != 0 && tick == final)
            return NULL;
    }
}

static void test_query_snapshot_reader_never_sees_shared_statics_change(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_query_snapshot *qs = qfx_make_snapshot(&ta.base);
    set_statics(qs, 0, SLOTS, 1);
    /* A mover shares the pages' slot range with nothing, so mover pages are exercised too. */
    gy_snapshot_entry m = static_box(SLOTS, 1);
    m.motion = GY_MOTION_DYNAMIC;
    m.pose.position.y = -50;
    assert_result(gy_query_snapshot_set(qs, SLOTS, &m), GY_OK);
    assert_result(gy_query_snapshot_publish(qs, 1), GY_OK);
    stream_ctx c;
    memset(&c, 0, sizeof c);
    c.qs = qs;
    c.published = 1;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, stream_reader, &c), 0);
    uint64_t removed_slots = 0;
    for (uint64_t t = 2; t <= STREAM_TICKS; t++) {
        uint32_t page = (uint32_t)(t % PAGES);
        bool remove = removes(t);
        for (uint32_t s = page * 32u; s < page * 32u + 32u; s++) {
            if (remove) {
                gy_result r = gy_query_snapshot_remove(qs, s);
                assert_true(r == GY_OK || r == GY_ERR_STALE_HANDLE);
                removed_slots += r == GY_OK;
            } else {
                gy_snapshot_entry e = static_box(s, t);
                assert_result(gy_query_snapshot_set(qs, s, &e), GY_OK);
            }
        }
        m.pose.position.x = (double)(t % 10);
        assert_result(gy_query_snapshot_move(qs, SLOTS, m.pose), GY_OK);
        assert_result(gy_query_snapshot_publish(qs, t), GY_OK);
        __atomic_store_n(&c.published, t, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&c.final_tick, (uint64_t)STREAM_TICKS, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_true(c.checks > 0);
    assert_true(c.distinct > 1);
    assert_true(c.holds > 0);
    assert_true(removed_slots > 0);
    assert_int_equal(c.timeouts, 0);
    assert_int_equal(c.wrong, 0);
    assert_int_equal(c.checksum, c.expected_sum);
    gy_query_snapshot_stats st;
    gy_query_snapshot_get_stats(qs, &st);
    assert_true(st.static_page_copies > 0);
    assert_true(st.static_tree_switches > 0);
    assert_true(st.static_edits > 0);    /* the large tree edited in place... */
    assert_true(st.static_rebuilds > 1); /* ...and rebuilt when most of it left */
    gy_query_snapshot_destroy(qs);
    assert_int_equal(ta.live_bytes, 0);
    assert_int_equal(ta.live_blocks, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_snapshot_statics_are_stored_once_for_all_buffers),
        cmocka_unit_test(test_query_snapshot_static_change_copies_only_its_page),
        cmocka_unit_test(test_query_snapshot_static_turned_mover_is_shown_once),
        cmocka_unit_test(test_query_snapshot_publish_without_reader_skips_settled_statics),
        cmocka_unit_test(test_query_snapshot_mover_turned_static_reaches_the_held_buffer),
        cmocka_unit_test(test_query_snapshot_reader_never_sees_shared_statics_change),
    };
    return cmocka_run_group_tests_name("query_snapshot_statics", tests, NULL, NULL);
}
