/* Wavefront OBJ loading for hull and mesh colliders: positions, fan-triangulated faces in every
 * index form, ignored statements, and errors that name the file and line. */
#include "test_support.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gyre/obj.h"

static const char *g_data_dir = ".";

static void data_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", g_data_dir, name);
}

/* Parses `text` with a counting allocator; on failure also checks that nothing stayed allocated. */
static gy_result parse(const char *text, gy_test_allocator *ta, gy_obj_mesh *out, char *err,
                       size_t err_size)
{
    gy_test_allocator_init(ta);
    gy_result r = gy_obj_parse(text, strlen(text), "test.obj", &ta->base, out, err, err_size);
    if (r != GY_OK)
        assert_int_equal(ta->live_blocks, 0);
    return r;
}

static void expect_error(const char *text, gy_result code, const char *message)
{
    gy_test_allocator ta;
    gy_obj_mesh m = {0};
    char err[256];
    gy_result r = parse(text, &ta, &m, err, sizeof err);
    if (r != code || strstr(err, message) == NULL)
        print_error("got %s \"%s\", expected %s \"%s\"\n", gy_result_name(r), err,
                    gy_result_name(code), message);
    assert_result(r, code);
    assert_non_null(strstr(err, message));
    assert_null(m.vertices);
}

static void test_obj_parse_triangles_and_fans(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_obj_mesh m;
    char err[256];
    const char *text = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0.5 2 0\n"
                       "f 1 2 3\n"
                       "f 1 3 4 5\n";
    assert_result(parse(text, &ta, &m, err, sizeof err), GY_OK);
    assert_int_equal(m.vertex_count, 5);
    assert_int_equal(m.index_count, 9);
    const uint32_t want[] = {0, 1, 2, 0, 2, 3, 0, 3, 4};
    for (int i = 0; i < 9; i++)
        assert_int_equal(m.indices[i], want[i]);
    assert_near(m.vertices[4].x, 0.5, 0.0);
    assert_near(m.vertices[4].y, 2.0, 0.0);
    gy_obj_mesh_free(&ta.base, &m);
    assert_int_equal(ta.live_blocks, 0);
    assert_null(m.vertices);
}

static void test_obj_parse_index_forms_and_relative_indices(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_obj_mesh m;
    char err[256];
    const char *text = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n"
                       "vt 0 0\nvn 0 0 1\n"
                       "f 1/1/1 2/1/1 3/1/1\n"
                       "f 1//1 2//1 4//1\n"
                       "f 1/1 3/1 4/1\n"
                       "f -3 -2 -1\n"
                       "f -4/-1/-1 -1/-1 -2//-1\n";
    assert_result(parse(text, &ta, &m, err, sizeof err), GY_OK);
    assert_int_equal(m.index_count, 15);
    const uint32_t want[] = {0, 1, 2, 0, 1, 3, 0, 2, 3, 1, 2, 3, 0, 3, 2};
    for (int i = 0; i < 15; i++)
        assert_int_equal(m.indices[i], want[i]);
    gy_obj_mesh_free(&ta.base, &m);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_obj_parse_ignores_other_statements(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_obj_mesh m;
    char err[256];
    const char *text = "# comment\r\n"
                       "mtllib a.mtl\r\n"
                       "o thing\r\n"
                       "\r\n"
                       "   \t\r\n"
                       "g group\r\n"
                       "v 1 2 3 1.0   # with w\r\n"
                       "v 4 5 6 0.1 0.2 0.3\r\n"
                       "v 7 8 9\r\n"
                       "vt 0.5 0.5\r\n"
                       "vn 0 1 0\r\n"
                       "vp 0.1\r\n"
                       "usemtl red\r\n"
                       "s 1\r\n"
                       "l 1 2\r\n"
                       "p 1\r\n"
                       "f 1 2 3 # trailing comment\r\n"
                       "v 10 11 12"; /* no final newline */
    assert_result(parse(text, &ta, &m, err, sizeof err), GY_OK);
    assert_int_equal(m.vertex_count, 4);
    assert_int_equal(m.index_count, 3);
    assert_near(m.vertices[0].z, 3.0, 0.0);
    assert_near(m.vertices[1].x, 4.0, 0.0);
    assert_near(m.vertices[3].z, 12.0, 0.0);
    gy_obj_mesh_free(&ta.base, &m);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_obj_parse_empty_text_gives_no_geometry(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_obj_mesh m;
    char err[256];
    assert_result(parse("", &ta, &m, err, sizeof err), GY_OK);
    assert_int_equal(m.vertex_count, 0);
    assert_int_equal(m.index_count, 0);
    assert_null(m.vertices);
    assert_null(m.indices);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_obj_parse_bad_face_names_file_and_line(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    char path[512], err[256];
    data_path(path, sizeof path, "bad_face.obj");
    gy_obj_mesh m = {0};
    assert_result(gy_obj_load_file(path, "level.obj", &ta.base, &m, err, sizeof err), GY_ERR_PARSE);
    assert_string_equal(err, "level.obj:12: face index 9 out of range (8 vertices)");
    assert_int_equal(ta.live_blocks, 0);
}

static void test_obj_parse_rejects_malformed_lines(void **state)
{
    (void)state;
    expect_error("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 0\n", GY_ERR_PARSE,
                 "test.obj:4: face index 0 is invalid (OBJ indices start at 1)");
    expect_error("v 0 0 0\nv 1 0 0\nf -3 1 2\n", GY_ERR_PARSE,
                 "test.obj:3: face index -3 out of range (2 vertices)");
    expect_error("v 0 0 0\nv 1 0 0\nf 1 2\n", GY_ERR_PARSE,
                 "test.obj:3: a face needs at least 3 vertices (got 2)");
    expect_error("v 0 0\n", GY_ERR_PARSE,
                 "test.obj:1: malformed vertex: needs x y z (got 2 numbers)");
    expect_error("\n\nv 0 zero 0\n", GY_ERR_PARSE,
                 "test.obj:3: malformed vertex: \"zero\" is not a number");
    expect_error("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 x 3\n", GY_ERR_PARSE,
                 "test.obj:4: malformed face: \"x\" is not an index");
    expect_error("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/a/1 2 3\n", GY_ERR_PARSE,
                 "test.obj:4: malformed face corner \"1/a/1\"");
    expect_error("v 0 0 0\nf /1 2 3\n", GY_ERR_PARSE,
                 "test.obj:2: malformed face: \"/1\" has no vertex index");
}

static void test_obj_parse_rejects_non_finite_vertices(void **state)
{
    (void)state;
    expect_error("v 0 1e999 0\n", GY_ERR_NON_FINITE,
                 "test.obj:1: non-finite vertex coordinate \"1e999\"");
    expect_error("v 0 0 0\nv nan 0 0\n", GY_ERR_NON_FINITE,
                 "test.obj:2: non-finite vertex coordinate \"nan\"");
    expect_error("v -inf 0 0\n", GY_ERR_NON_FINITE, "test.obj:1: non-finite vertex coordinate");
}

static void test_obj_load_file_reads_fixture(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    char path[512], err[256];
    data_path(path, sizeof path, "cube.obj");
    gy_obj_mesh m;
    assert_result(gy_obj_load_file(path, NULL, &ta.base, &m, err, sizeof err), GY_OK);
    assert_int_equal(m.vertex_count, 8);
    assert_int_equal(m.index_count, 36); /* 6 quads → 12 triangles */
    for (uint32_t i = 0; i < m.vertex_count; i++) {
        assert_near(fabs(m.vertices[i].x), 0.5, 0.0);
        assert_near(fabs(m.vertices[i].y), 0.5, 0.0);
        assert_near(fabs(m.vertices[i].z), 0.5, 0.0);
    }
    /* The last face used negative indices -7 -6 -2 -3 → vertices 2 3 7 6 (1-based). */
    assert_int_equal(m.indices[30], 1);
    assert_int_equal(m.indices[31], 2);
    assert_int_equal(m.indices[32], 6);
    assert_int_equal(m.indices[35], 5);
    gy_obj_mesh_free(&ta.base, &m);
    assert_int_equal(ta.live_blocks, 0);
}

static void test_obj_load_file_missing_names_the_path(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    char path[512], err[1024];
    data_path(path, sizeof path, "no_such_file.obj");
    gy_obj_mesh m = {0};
    assert_result(gy_obj_load_file(path, "meshes/no_such_file.obj", &ta.base, &m, err, sizeof err),
                  GY_ERR_IO);
    char want[1024];
    snprintf(want, sizeof want,
             "cannot read \"meshes/no_such_file.obj\" (resolved as \"%s\"): No such file or "
             "directory",
             path);
    assert_string_equal(err, want);
    data_path(path, sizeof path, "");
    assert_result(gy_obj_load_file(path, "dir", &ta.base, &m, err, sizeof err), GY_ERR_IO);
    snprintf(want, sizeof want, "cannot read \"dir\" (resolved as \"%s\"): is a directory", path);
    assert_string_equal(err, want);
    assert_int_equal(ta.live_blocks, 0);
}

/* Every allocation the loader makes may fail: each failure must report out-of-memory and free
 * everything, and the sweep must reach the allocation count of a successful parse. */
static void test_obj_parse_survives_every_allocation_failure(void **state)
{
    (void)state;
    char text[4096];
    size_t len = 0;
    for (int i = 0; i < 40; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "v %d %d %d\n", i, i * 2, i * 3);
    for (int i = 1; i + 4 <= 40; i += 2)
        len += (size_t)snprintf(text + len, sizeof text - len, "f %d %d %d %d\n", i, i + 1, i + 2,
                                i + 3);
    gy_test_allocator ta;
    uint64_t needed = 0;
    for (uint64_t k = 1; k < 1000; k++) {
        gy_test_allocator_init(&ta);
        ta.fail_at = k;
        gy_obj_mesh m = {0};
        gy_result r = gy_obj_parse(text, len, "sweep.obj", &ta.base, &m, NULL, 0);
        if (r == GY_OK) {
            needed = k;
            gy_obj_mesh_free(&ta.base, &m);
            assert_int_equal(ta.live_blocks, 0);
            break;
        }
        assert_result(r, GY_ERR_OUT_OF_MEMORY);
        assert_null(m.vertices);
        assert_int_equal(ta.live_blocks, 0);
    }
    assert_true(needed > 3); /* vertices, indices and the polygon buffer all grew */
}

int main(int argc, char **argv)
{
    if (argc > 1)
        g_data_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_obj_parse_triangles_and_fans),
        cmocka_unit_test(test_obj_parse_index_forms_and_relative_indices),
        cmocka_unit_test(test_obj_parse_ignores_other_statements),
        cmocka_unit_test(test_obj_parse_empty_text_gives_no_geometry),
        cmocka_unit_test(test_obj_parse_bad_face_names_file_and_line),
        cmocka_unit_test(test_obj_parse_rejects_malformed_lines),
        cmocka_unit_test(test_obj_parse_rejects_non_finite_vertices),
        cmocka_unit_test(test_obj_load_file_reads_fixture),
        cmocka_unit_test(test_obj_load_file_missing_names_the_path),
        cmocka_unit_test(test_obj_parse_survives_every_allocation_failure),
    };
    return cmocka_run_group_tests_name("obj_load", tests, NULL, NULL);
}
