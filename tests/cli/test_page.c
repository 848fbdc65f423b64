/* The page writer (engine/cli/page.h) without a browser: what it writes for names that could end
 * the page's script element, how many frames it keeps, spans of presence and gaps, non-finite
 * states, the event cap, and series bins. tests/cli/test_pages.py opens real pages in Chromium. */
#include "test_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gyre/math.h"
#include "gyre/world_physics.h"
#include "page.h"

/* The whole page `pg` writes, NUL-terminated (free it). */
/* The page as a string (free it). Written to a temporary file and read back: with an
 * open_memstream buffer gcc's -O3 flow analysis takes the string for a pointer into a local. */
static char *page_text(const gy_cli_page *pg)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_true(gy_cli_page_write(pg, f));
    long size = ftell(f);
    assert_true(size >= 0);
    rewind(f);
    char *text = malloc((size_t)size + 1u);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
    text[size] = '\0';
    assert_int_equal(fclose(f), 0);
    return text;
}

static size_t count(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = strstr(text, what); p != NULL; p = strstr(p + 1, what))
        n++;
    return n;
}

static gy_scene_physics *box_body(void)
{
    static gy_scene_collider collider;
    static gy_scene_physics physics;
    collider = gy_default_scene_collider(gy_box(gy_v3(1, 1, 1)));
    memset(&physics, 0, sizeof physics);
    physics.body_type = GY_BODY_DYNAMIC;
    physics.colliders = &collider;
    physics.collider_count = 1;
    return &physics;
}

static gy_pose at(double x)
{
    gy_pose p = {{x, 0, 0}, {0, 0, 0, 1}};
    return p;
}

static void test_page_names_cannot_end_the_script(void **state)
{
    (void)state;
    gy_cli_page *pg = gy_cli_page_create(GY_CLI_PAGE_RUN);
    assert_non_null(pg);
    gy_cli_page_set_info(pg, "scene", "</script><script>alert(1)</script>");
    gy_cli_page_set_timeline(pg, 60, 10, 1);
    assert_int_equal(gy_cli_page_add_entity(pg, "</SCRIPT>", box_body()), 0);
    char *empty = page_text(pg);
    gy_cli_page_free(pg);
    /* The template's own script elements end twice (data, viewer); nothing else may. */
    assert_int_equal(count(empty, "</script>"), 2);
    assert_int_equal(count(empty, "</SCRIPT>"), 0);
    assert_non_null(strstr(empty, "\\u003c/script>\\u003cscript>"));
    free(empty);
}

static void test_page_keeps_at_most_its_frames(void **state)
{
    (void)state;
    gy_cli_page *pg = gy_cli_page_create(GY_CLI_PAGE_RUN);
    gy_cli_page_set_timeline(pg, 60, 600, 1);
    uint32_t frames = 0;
    for (uint64_t t = 0; t <= 600; t++)
        frames += gy_cli_page_begin_frame(pg, t);
    assert_int_equal(frames, 601); /* a short run keeps every tick */
    gy_cli_page_free(pg);

    pg = gy_cli_page_create(GY_CLI_PAGE_RUN);
    gy_cli_page_set_timeline(pg, 60, 216000, 1); /* an hour */
    frames = 0;
    for (uint64_t t = 0; t <= 216000; t++)
        frames += gy_cli_page_begin_frame(pg, t);
    assert_true(frames <= GY_CLI_PAGE_MAX_FRAMES);
    assert_true(frames >= GY_CLI_PAGE_MAX_FRAMES / 2);
    gy_cli_page_free(pg);

    pg = gy_cli_page_create(GY_CLI_PAGE_RUN);
    gy_cli_page_set_timeline(pg, 60, 600, 10000); /* many entities: fewer frames */
    frames = 0;
    for (uint64_t t = 0; t <= 600; t++)
        frames += gy_cli_page_begin_frame(pg, t);
    assert_true((uint64_t)frames * 10000u <= GY_CLI_PAGE_MAX_ENTITY_FRAMES + 10000u);
    gy_cli_page_free(pg);
}

static void test_page_spans_hold_short_gaps_and_skip_non_finite(void **state)
{
    (void)state;
    gy_cli_page *pg = gy_cli_page_create(GY_CLI_PAGE_RUN);
    gy_cli_page_set_timeline(pg, 60, 100, 3);
    gy_cli_page_add_entity(pg, "held", box_body());
    gy_cli_page_add_entity(pg, "split", box_body());
    gy_cli_page_add_entity(pg, "nan", box_body());
    gy_pose held = at(1), split = at(2), bad = at(NAN);
    for (uint64_t t = 0; t <= 40; t++) {
        gy_cli_page_begin_frame(pg, t);
        if (t == 0 || t == 3) /* a gap of two frames is held */
            gy_cli_page_record(pg, t, 0, &held, gy_v3(0, 0, 0), true);
        if (t <= 2 || t >= 30) /* a gap longer than the hold starts a new span */
            gy_cli_page_record(pg, t, 1, &split, gy_v3(0, 0, 0), false);
        gy_cli_page_record(pg, t, 2, &bad, gy_v3(0, 0, 0), true);
    }
    char *text = page_text(pg);
    gy_cli_page_free(pg);
    assert_non_null(strstr(text, "\"name\":\"held\",\"body\":\"Dynamic\""));
    assert_non_null(strstr(text, "\"spans\":[0,4]"));
    assert_non_null(strstr(text, "\"spans\":[0,3,30,11]"));
    assert_non_null(strstr(text, "\"spans\":[],\"frames\":\"\""));
    assert_non_null(strstr(text, "\"frames\":41,"));
    free(text);
}

static void test_page_events_beyond_the_cap_are_counted(void **state)
{
    (void)state;
    gy_cli_page *pg = gy_cli_page_create(GY_CLI_PAGE_RUN);
    gy_cli_page_set_timeline(pg, 60, 10, 2);
    gy_cli_page_add_entity(pg, "a", box_body());
    gy_cli_page_add_entity(pg, "b", box_body());
    gy_vec3 p = gy_v3(0, 0, 0), n = gy_v3(0, 1, 0);
    for (uint32_t i = 0; i < GY_CLI_PAGE_MAX_EVENTS + 5u; i++)
        gy_cli_page_event(pg, i / 100u, "stay", 0, 1, &p, &n);
    gy_cli_page_event(pg, 0, "enter", 0, 1, &p, &n);
    char *text = page_text(pg);
    gy_cli_page_free(pg);
    char want[128];
    snprintf(want, sizeof want, "{\"kind\":\"stay\",\"count\":%u,\"dropped\":5}",
             GY_CLI_PAGE_MAX_EVENTS);
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(text, "{\"kind\":\"enter\",\"count\":1,\"dropped\":0}"));
    free(text);
}

static void test_page_series_keep_mean_and_max_per_bin(void **state)
{
    (void)state;
    gy_cli_page *pg = gy_cli_page_create(GY_CLI_PAGE_SOAK);
    int32_t s = gy_cli_page_add_series(pg, "wait", "us", 2.0, 25.0); /* 20 bins of 0.1 s */
    assert_int_equal(s, 0);
    gy_cli_page_sample(pg, s, 0.01, 1.0);
    gy_cli_page_sample(pg, s, 0.02, 3.0);
    gy_cli_page_sample(pg, s, 1.95, 7.0);
    gy_cli_page_sample(pg, s, 5.0, 9.0); /* past the end: the last bin */
    gy_cli_page_sample(pg, s, 0.5, NAN); /* ignored */
    char *text = page_text(pg);
    gy_cli_page_free(pg);
    assert_non_null(strstr(text, "\"gate\":25,\"mean\":[2,null,"));
    assert_non_null(strstr(text, ",null,8],\"max\":[3,null,"));
    assert_non_null(strstr(text, ",null,9]}"));
    free(text);
}

static void test_page_series_carry_their_group(void **state)
{
    (void)state;
    gy_cli_page *pg = gy_cli_page_create(GY_CLI_PAGE_RUN);
    int32_t alone = gy_cli_page_add_series(pg, "bodies awake", "bodies", 2.0, NAN);
    int32_t live = gy_cli_page_add_series(pg, "live", "bytes", 2.0, NAN);
    int32_t peak = gy_cli_page_add_series(pg, "peak", "bytes", 2.0, NAN);
    gy_cli_page_set_series_group(pg, live, "allocator");
    gy_cli_page_set_series_group(pg, peak, "</script>");
    gy_cli_page_set_series_group(pg, peak, "allocator"); /* replaces the first */
    gy_cli_page_set_series_group(pg, alone + 3, "none"); /* no such series: ignored */
    gy_cli_page_set_series_group(pg, -1, "none");
    char *text = page_text(pg);
    gy_cli_page_free(pg);
    assert_non_null(strstr(text, "{\"name\":\"bodies awake\",\"group\":null,\"unit\":\"bodies\""));
    assert_non_null(strstr(text, "{\"name\":\"live\",\"group\":\"allocator\",\"unit\":\"bytes\""));
    assert_non_null(strstr(text, "{\"name\":\"peak\",\"group\":\"allocator\",\"unit\":\"bytes\""));
    assert_null(strstr(text, "\"none\""));
    assert_null(strstr(text, "script>\""));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_page_names_cannot_end_the_script),
        cmocka_unit_test(test_page_keeps_at_most_its_frames),
        cmocka_unit_test(test_page_spans_hold_short_gaps_and_skip_non_finite),
        cmocka_unit_test(test_page_events_beyond_the_cap_are_counted),
        cmocka_unit_test(test_page_series_keep_mean_and_max_per_bin),
        cmocka_unit_test(test_page_series_carry_their_group),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
