/* Replays the fuzz corpus without libFuzzer: every file in tests/fuzz/corpus/<target>/ (seeds and
 * every crash a fuzzer ever found) goes through the same entry point as the libFuzzer target, so
 * plain, ASan and TSan builds all re-check the regressions. Argument: the corpus folder. */
#include "test_support.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_entry.h"
#include "gyre/math.h"
#include "gyre/physics/commands.h"

static const char *corpus_root;

typedef const char *(*entry_fn)(const uint8_t *data, size_t size);

static const char *scene_entry(const uint8_t *data, size_t size)
{
    return gy_fuzz_scene(data, size, GY_FUZZ_DATA_DIR);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static uint8_t *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
    }
    fclose(f);
    *size = len;
    return buf;
}

/* Runs every file of corpus/<target> (sorted, so failures are reproducible) through `fn`. */
static void replay(const char *target, entry_fn fn, uint32_t min_files)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", corpus_root, target);
    DIR *d = opendir(dir);
    if (d == NULL)
        fail_msg("cannot open corpus folder %s", dir);
    char **names = NULL;
    uint32_t count = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (count == cap) {
            cap = cap ? cap * 2 : 64;
            names = realloc(names, cap * sizeof *names);
            assert_non_null(names);
        }
        names[count] = strdup(de->d_name);
        assert_non_null(names[count]);
        count++;
    }
    closedir(d);
    qsort(names, count, sizeof *names, by_name);
    /* An empty or missing corpus would make this test pass without checking anything. */
    if (count < min_files)
        fail_msg("%s holds %u files, expected at least %u", dir, count, min_files);
    for (uint32_t i = 0; i < count; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        size_t size = 0;
        uint8_t *data = read_all(path, &size);
        const char *bad = fn(data, size);
        free(data);
        if (bad != NULL)
            fail_msg("%s: %s", path, bad);
        free(names[i]);
    }
    free(names);
    print_message("replayed %u %s inputs\n", count, target);
}

static void test_fuzz_regressions_obj_corpus_holds(void **state)
{
    (void)state;
    replay("obj", gy_fuzz_obj, 8);
}

static void test_fuzz_regressions_scene_corpus_holds(void **state)
{
    (void)state;
    replay("scene", scene_entry, 8);
}

static void test_fuzz_regressions_commands_corpus_holds(void **state)
{
    (void)state;
    replay("commands", gy_fuzz_commands, 6);
}

static void test_fuzz_regressions_capture_corpus_holds(void **state)
{
    (void)state;
    replay("capture", gy_fuzz_capture, 6);
}

/* The smallest inputs (nothing at all, a few bytes of binary) are where off-by-one reads hide;
 * every entry takes them cleanly. */
static void test_fuzz_regressions_entries_accept_empty_and_garbage(void **state)
{
    (void)state;
    const uint8_t garbage[] = {0xff, 0x00, '{', '[', '"', 0x80, '\n', 'f', ' ', '9'};
    assert_null(gy_fuzz_obj(NULL, 0));
    assert_null(gy_fuzz_obj(garbage, sizeof garbage));
    assert_null(gy_fuzz_scene(garbage, 0, GY_FUZZ_DATA_DIR));
    assert_null(gy_fuzz_scene(garbage, sizeof garbage, GY_FUZZ_DATA_DIR));
    assert_null(gy_fuzz_commands(garbage, 0));
    assert_null(gy_fuzz_commands(garbage, sizeof garbage));
    assert_null(gy_fuzz_capture(garbage, 0));
    assert_null(gy_fuzz_capture(garbage, sizeof garbage));
}

/* A jointed body teleported to a finite but huge position makes ODE abort the process inside its
 * step (a quaternion goes non-finite); corpus/commands/pose_out_of_range.bin carries such
 * commands as raw bytes. The same values through the public record functions are refused. */
static void test_fuzz_regressions_huge_finite_values_are_refused_at_record(void **state)
{
    (void)state;
    gy_physics_def d = gy_default_physics_def();
    d.lockstep = true;
    gy_physics *p = NULL;
    assert_result(gy_physics_create(&d, &p), GY_OK);
    assert_result(gy_physics_start(p, NULL), GY_OK);
    gy_collider_def c = gy_default_collider_def();
    c.shape.type = GY_SHAPE_BOX;
    c.shape.box_size = gy_v3(1, 1, 1);
    gy_physics_body_def b;
    memset(&b, 0, sizeof b);
    b.def = gy_default_body_def();
    b.colliders = &c;
    b.collider_count = 1;
    for (uint32_t i = 0; i < 2; i++) {
        b.def.pose.position = gy_v3(2.0 * i, 1, 0);
        gy_physics_body_ref ref;
        assert_result(gy_physics_record_create_body(p, &b, &ref), GY_OK);
        assert_int_equal(ref.index, i);           /* the lowest free */
        assert_int_equal(ref.generation, i + 1u); /* a fresh pool counts from 1 */
    }
    gy_physics_joint_def j;
    memset(&j, 0, sizeof j);
    j.a.index = 0;
    j.a.generation = 1;
    j.b.index = 1;
    j.b.generation = 2;
    j.def = gy_default_joint_def();
    j.def.type = GY_JOINT_BALL;
    j.def.anchor = gy_v3(1, 1, 0);
    gy_physics_joint_ref joint;
    assert_result(gy_physics_record_create_joint(p, &j, &joint), GY_OK);
    assert_result(gy_physics_step(p, 1, 0), GY_OK);

    const double huge = 1e300, edge = GY_PHYSICS_MAX_MAGNITUDE;
    gy_pose pose = gy_pose_identity();
    pose.position = gy_v3(huge, -huge, 0);
    assert_result(gy_physics_record_set_pose(p, (gy_physics_body_ref){1, 2}, pose),
                  GY_ERR_INVALID_ARGUMENT);
    gy_vec3 v = gy_v3(0, huge, 0);
    assert_result(gy_physics_record_set_linear_velocity(p, (gy_physics_body_ref){1, 2}, v),
                  GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_physics_record_set_angular_velocity(p, (gy_physics_body_ref){1, 2}, v),
                  GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_physics_record_add_force(p, (gy_physics_body_ref){1, 2}, v),
                  GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_physics_record_add_torque(p, (gy_physics_body_ref){1, 2}, v),
                  GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_physics_record_add_impulse(p, (gy_physics_body_ref){1, 2}, v),
                  GY_ERR_INVALID_ARGUMENT);
    assert_result(
        gy_physics_record_add_impulse_at(p, (gy_physics_body_ref){1, 2}, gy_v3(0, 1, 0), v),
        GY_ERR_INVALID_ARGUMENT);
    b.def.pose.position = gy_v3(0, huge, 0);
    gy_physics_body_ref refused;
    assert_result(gy_physics_record_create_body(p, &b, &refused), GY_ERR_INVALID_ARGUMENT);
    j.def.anchor = gy_v3(huge, 0, 0);
    assert_result(gy_physics_record_create_joint(p, &j, &joint), GY_ERR_INVALID_ARGUMENT);
    /* The bound itself is accepted, and the world survives it. */
    pose.position = gy_v3(edge, -edge, edge);
    assert_result(gy_physics_record_set_pose(p, (gy_physics_body_ref){1, 2}, pose), GY_OK);
    assert_result(gy_physics_record_add_force(p, (gy_physics_body_ref){0, 1}, gy_v3(edge, 0, 0)),
                  GY_OK);
    assert_result(gy_physics_step(p, 30, 0), GY_OK);
    assert_result(gy_physics_stop(p), GY_OK);
    gy_physics_destroy(p);
}

int main(int argc, char **argv)
{
    corpus_root = argc > 1 ? argv[1] : "tests/fuzz/corpus";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fuzz_regressions_obj_corpus_holds),
        cmocka_unit_test(test_fuzz_regressions_scene_corpus_holds),
        cmocka_unit_test(test_fuzz_regressions_commands_corpus_holds),
        cmocka_unit_test(test_fuzz_regressions_capture_corpus_holds),
        cmocka_unit_test(test_fuzz_regressions_entries_accept_empty_and_garbage),
        cmocka_unit_test(test_fuzz_regressions_huge_finite_values_are_refused_at_record),
    };
    return cmocka_run_group_tests_name("fuzz_regressions", tests, NULL, NULL);
}
