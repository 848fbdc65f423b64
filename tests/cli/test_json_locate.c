/* The JSON path locator of the command line (engine/cli/json_locate.h): nested objects and
 * arrays, keys with escapes and non-ASCII characters, columns in code points, long keys as the
 * loader cuts them, missing members (the nearest enclosing value), and the paths the scene loader
 * really writes. */
#include "test_support.h"

#include <string.h>

#include "gyre/scene.h"
#include "json_locate.h"

static gy_cli_location locate(const char *text, const char *path)
{
    gy_cli_location loc = {0, 0, false};
    assert_true(gy_cli_json_locate(text, strlen(text), path, &loc));
    return loc;
}

static void assert_at(const char *text, const char *path, uint32_t line, uint32_t column,
                      bool exact)
{
    gy_cli_location loc = locate(text, path);
    if (loc.line != line || loc.column != column || loc.exact != exact)
        fail_msg("%s: at %u:%u%s, expected %u:%u%s", path, loc.line, loc.column,
                 loc.exact ? "" : " (not exact)", line, column, exact ? "" : " (not exact)");
}

static void test_locate_nested_objects_and_arrays(void **state)
{
    (void)state;
    const char *text = "{\n"
                       "  \"a\": 1,\n"
                       "  \"b\": { \"c\": [10, 20, [30, [40, 41]]], \"d\": {} },\n"
                       "  \"e\": [ {\"f\": true}, {\"f\": null} ]\n"
                       "}\n";
    assert_at(text, "a", 2, 8, true);
    assert_at(text, "b", 3, 8, true);
    assert_at(text, "b.c", 3, 15, true);
    assert_at(text, "b.c[1]", 3, 20, true);
    assert_at(text, "b.c[2]", 3, 24, true);
    assert_at(text, "b.c[2][1][1]", 3, 34, true);
    assert_at(text, "b.d", 3, 46, true);
    assert_at(text, "e[1].f", 4, 29, true);
    assert_at(text, "(root)", 1, 1, true);
    assert_at(text, "", 1, 1, true);
}

static void test_locate_missing_member_is_the_enclosing_value(void **state)
{
    (void)state;
    const char *text = "{\"b\": {\"c\": [1, 2]},\n \"e\": 3}";
    assert_at(text, "b.x", 1, 7, false);       /* the object that lacks x */
    assert_at(text, "b.c[5]", 1, 13, false);   /* the array too short */
    assert_at(text, "b.c[0].y", 1, 14, false); /* a number has no members */
    assert_at(text, "zzz", 1, 1, false);
    assert_at(text, "e", 2, 7, true);
}

static void test_locate_skips_strings_holding_brackets_and_escapes(void **state)
{
    (void)state;
    /* Values before the target hold quotes, backslashes and brackets that must not count. */
    const char *text =
        "{\"s\": \"a \\\" ] } [ { \\\\\", \"t\": [\"]\", \"\\\"\", {\"u\": \"}\"}],\n"
        "\"v\": 7}";
    assert_at(text, "v", 2, 6, true);
    assert_at(text, "t[2].u", 1, 49, true);
}

static void test_locate_keys_with_escapes_and_unicode(void **state)
{
    (void)state;
    /* Keys that are not plain identifiers are bracketed and quoted, unescaped, as the loader
     * writes them. Columns count code points: "é" and "😀" are one column each. */
    const char *text = "{\"caf\\u00e9\": 1, \"na\\\"me\": 2, \"x y\": 3,\n"
                       " \"\\ud83d\\ude00\": {\"k\": 4}, \"été\": [5, \"ü\", 6], \"tab\\t\": 7}";
    assert_at(text, "[\"café\"]", 1, 15, true);
    assert_at(text, "[\"na\"me\"]", 1, 28, true);
    assert_at(text, "[\"x y\"]", 1, 38, true);
    assert_at(text, "[\"😀\"].k", 2, 24, true);
    assert_at(text, "[\"été\"][2]", 2, 44, true);
    assert_at(text, "[\"tab\t\"]", 2, 57, true);
    /* A plain spelling of a key that needs brackets is not that key. */
    assert_at(text, "café", 1, 1, false);
}

static void test_locate_long_keys_as_the_loader_cuts_them(void **state)
{
    (void)state;
    char key[71];
    memset(key, 'k', 70);
    key[70] = '\0';
    char text[200], path[100];
    snprintf(text, sizeof text, "{\"short\": 0, \"%s\": {\"x\": 1}}", key);
    snprintf(path, sizeof path, "%.61s....x", key);
    assert_at(text, path, 1, 94, true);
    snprintf(path, sizeof path, "%.61s...", key);
    assert_at(text, path, 1, 88, true);
}

static void test_locate_byte_order_mark_and_bad_text(void **state)
{
    (void)state;
    assert_at("\xEF\xBB\xBF{\"a\": 1}", "a", 1, 8, true);
    gy_cli_location loc;
    assert_false(gy_cli_json_locate("", 0, "a", &loc));
    assert_false(gy_cli_json_locate("  \n ", 4, "a", &loc));
    /* Cut-off or malformed text ends the search where the text ends, never beyond. */
    assert_at("{\"a\": [1, 2", "a[5]", 1, 7, false);
    assert_at("{\"a\": {\"b\"", "a.b", 1, 7, false);
    assert_at("{\"a\": \"unterminated", "b", 1, 1, false);
    assert_at("{\"a\\u12", "b", 1, 1, false);
    /* Only `len` bytes are read: what follows them is not part of the text. */
    const char *text = "{\"a\": 1}{\"b\": 2}";
    assert_true(gy_cli_json_locate(text, 8, "b", &loc));
    assert_false(loc.exact);
}

/* A locator used for many paths answers each as a fresh search would, whatever came before:
 * forwards, backwards, siblings, deeper, shallower, missing members, the root. */
static void test_locator_reuse_gives_the_same_answers(void **state)
{
    (void)state;
    const char *text = "{\n"
                       "  \"a\": 1,\n"
                       "  \"b\": { \"c\": [10, 20, [30, [40, 41]]], \"d\": {} },\n"
                       "  \"e\": [ {\"f\": true}, {\"f\": null, \"\u00e9t\u00e9\": [1, 2]} ],\n"
                       "  \"x\": \"\u00fc\u00fc\u00fc\"\n"
                       "}\n";
    static const char *const paths[] = {"b.c[2][1][1]",
                                        "b.c[2][1][0]",
                                        "b.c[1]",
                                        "e[1].f",
                                        "e[0].f",
                                        "b.d",
                                        "e[1][\"été\"][1]",
                                        "e[1].zzz",
                                        "e[1].f",
                                        "(root)",
                                        "x",
                                        "a",
                                        "b.c[9]",
                                        "b.c[2][1][1]",
                                        "e[1][\"été\"]",
                                        "e[1][\"été\"][0]",
                                        "e[0].f.g",
                                        "",
                                        "b",
                                        "x"};
    gy_cli_json_locator L;
    gy_cli_json_locator_init(&L, text, strlen(text));
    const char *previous = "-";
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
            size_t k = round == 0 ? i : sizeof paths / sizeof paths[0] - 1 - i;
            gy_cli_location reused = {0, 0, false}, fresh = locate(text, paths[k]);
            assert_true(gy_cli_json_locator_find(&L, paths[k], &reused));
            if (reused.line != fresh.line || reused.column != fresh.column ||
                reused.exact != fresh.exact)
                fail_msg("%s after %s: %u:%u%s, fresh %u:%u%s", paths[k], previous, reused.line,
                         reused.column, reused.exact ? "" : "?", fresh.line, fresh.column,
                         fresh.exact ? "" : "?");
            previous = paths[k];
        }
    }
}

/* The paths the scene loader writes for its errors lead to the offending values. */
static void test_locate_the_loaders_error_paths(void **state)
{
    (void)state;
    const char *text = "{\n"
                       "  \"format\": \"gyre.scene\", \"version\": 1,\n"
                       "  \"materials\": { \"ice rink\": { \"friction\": -1 } },\n"
                       "  \"entities\": [\n"
                       "    { \"name\": \"a\" },\n"
                       "    { \"name\": \"b\", \"components\": { \"physics\": {\n"
                       "        \"shape\": \"Sphere\", \"radius\": 0.5, \"mass\": -2,\n"
                       "        \"fricton\": 0.5 } } }\n"
                       "  ]\n"
                       "}\n";
    gy_scene *scene = NULL;
    gy_scene_errors *errors = NULL;
    assert_result(gy_scene_load_string(text, strlen(text), NULL, NULL, &scene, &errors),
                  GY_ERR_PARSE);
    assert_non_null(errors);
    struct {
        const char *path;
        uint32_t line, column;
    } want[] = {{"materials[\"ice rink\"].friction", 3, 44},
                {"entities[1].components.physics.mass", 7, 51},
                {"entities[1].components.physics.fricton", 8, 20}};
    size_t found = 0;
    for (uint32_t i = 0; i < errors->count; i++) {
        gy_cli_location loc = locate(text, errors->items[i].path);
        assert_true(loc.exact);
        for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
            if (strcmp(errors->items[i].path, want[k].path) != 0)
                continue;
            found++;
            assert_int_equal(loc.line, want[k].line);
            assert_int_equal(loc.column, want[k].column);
        }
    }
    assert_int_equal(found, 3);
    gy_scene_errors_free(errors);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_locate_nested_objects_and_arrays),
        cmocka_unit_test(test_locate_missing_member_is_the_enclosing_value),
        cmocka_unit_test(test_locate_skips_strings_holding_brackets_and_escapes),
        cmocka_unit_test(test_locate_keys_with_escapes_and_unicode),
        cmocka_unit_test(test_locate_long_keys_as_the_loader_cuts_them),
        cmocka_unit_test(test_locate_byte_order_mark_and_bad_text),
        cmocka_unit_test(test_locator_reuse_gives_the_same_answers),
        cmocka_unit_test(test_locate_the_loaders_error_paths),
    };
    return cmocka_run_group_tests_name("json_locate", tests, NULL, NULL);
}
