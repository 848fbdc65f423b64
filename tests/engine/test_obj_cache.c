/* The OBJ cache shared across scene loads: a cell streamed twice parses its mesh once, a changed
 * file is parsed again, holds are released with the scenes, and the cache outlives its World. */
#include "test_world_fixture.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gyre/obj_cache.h"

typedef struct fixture {
    char dir[64];
    char cell[128];
    char obj[128];
    gy_test_allocator ta;
} fixture;

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* A 1 m tetrahedron terrain piece (4 vertices, 4 triangles). */
static const char k_tetra[] = "v 0 0 0\nv 1 0 0\nv 0 0 1\nv 0 1 0\n"
                              "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n";

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/gyre_obj_cache_XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->cell, sizeof f->cell, "%s/cell.json", f->dir);
    snprintf(f->obj, sizeof f->obj, "%s/terrain.obj", f->dir);
    write_text(f->obj, k_tetra);
    /* Two colliders naming the same file, one Mesh and one Hull: one entry per load. */
    write_text(f->cell,
               "{\"format\": \"gyre.scene\", \"version\": 1, \"entities\": ["
               "{\"name\": \"ground\", \"components\": {\"physics\": {\"body_type\": \"Static\","
               " \"shape\": \"Mesh\", \"collision\": \"terrain.obj\"}}},"
               "{\"name\": \"rock\", \"transform\": {\"position\": [5, 0, 0]}, \"components\":"
               " {\"physics\": {\"body_type\": \"Static\", \"shape\": \"Hull\","
               " \"collision\": \"terrain.obj\"}}}]}");
    gy_test_allocator_init(&f->ta);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    unlink(f->cell);
    unlink(f->obj);
    rmdir(f->dir);
    free(f);
    return 0;
}

static gy_scene *load_cell(fixture *f, gy_obj_cache *cache)
{
    gy_scene *s = NULL;
    assert_result(gy_scene_load_file_cached(f->cell, cache, &f->ta.base, &s, NULL), GY_OK);
    assert_non_null(s);
    return s;
}

static void streaming_the_same_cell_twice_parses_its_mesh_once(void **state)
{
    fixture *f = *state;
    gy_world_def c = wfx_config(&f->ta, true);
    c.physics.backend = "ode";
    gy_world *w = wfx_world_with(&c);
    gy_obj_cache *cache = gy_world_obj_cache(w);
    assert_non_null(cache);

    gy_scene *a = load_cell(f, cache);
    gy_scene_instance *ia = NULL, *ib = NULL;
    assert_result(gy_scene_load_additive(w, a, gy_v3(0, 0, 0), 0, NULL, &ia, NULL), GY_OK);
    gy_scene *b = load_cell(f, cache);
    assert_result(gy_scene_load_additive(w, b, gy_v3(20, 0, 0), 0, NULL, &ib, NULL), GY_OK);
    wfx_tick(w, 2);

    gy_obj_cache_stats st = gy_obj_cache_get_stats(cache);
    assert_int_equal(st.parses, 1);
    assert_int_equal(st.hits, 1);
    assert_int_equal(st.entries, 1);
    assert_int_equal(st.bytes, 4 * sizeof(gy_vec3) + 12 * sizeof(uint32_t));
    gy_world_stats ws;
    gy_world_get_stats(w, &ws);
    assert_int_equal(ws.obj_parses, 1);
    assert_int_equal(ws.obj_hits, 1);
    assert_int_equal(ws.obj_entries, 1);
    /* Both loads read the one parsed copy. */
    assert_ptr_equal(a->entities[0].physics->colliders[0].vertices,
                     b->entities[0].physics->colliders[0].vertices);
    assert_ptr_equal(a->entities[1].physics->colliders[0].vertices,
                     b->entities[0].physics->colliders[0].vertices);

    /* The entry goes with its last holder. */
    assert_result(gy_scene_unload(w, ia, 0), GY_OK);
    gy_scene_free(a);
    assert_int_equal(gy_obj_cache_get_stats(cache).entries, 1);
    assert_result(gy_scene_unload(w, ib, 0), GY_OK);
    gy_scene_free(b);
    st = gy_obj_cache_get_stats(cache);
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.bytes, 0);
    wfx_destroy(w, &f->ta);
}

static void a_changed_file_is_parsed_again(void **state)
{
    fixture *f = *state;
    gy_obj_cache *cache = NULL;
    assert_result(gy_obj_cache_create(&f->ta.base, &cache), GY_OK);
    gy_scene *a = load_cell(f, cache);

    /* A different size: a fifth vertex (unused by the faces). */
    char bigger[256];
    snprintf(bigger, sizeof bigger, "%sv 2 2 2\n", k_tetra);
    write_text(f->obj, bigger);
    gy_scene *b = load_cell(f, cache);
    assert_int_equal(gy_obj_cache_get_stats(cache).parses, 2);
    assert_int_equal(a->entities[0].physics->colliders[0].vertex_count, 4);
    assert_int_equal(b->entities[0].physics->colliders[0].vertex_count, 5);

    /* The same size, another mtime. */
    struct stat st;
    assert_int_equal(stat(f->obj, &st), 0);
    struct timespec times[2] = {st.st_atim, st.st_mtim};
    times[1].tv_sec -= 100;
    assert_int_equal(utimensat(AT_FDCWD, f->obj, times, 0), 0);
    gy_scene *c = load_cell(f, cache);
    assert_int_equal(gy_obj_cache_get_stats(cache).parses, 3);
    assert_true(c->entities[0].physics->colliders[0].vertices !=
                b->entities[0].physics->colliders[0].vertices);
    /* Unchanged since: a hit. */
    gy_scene *d = load_cell(f, cache);
    assert_int_equal(gy_obj_cache_get_stats(cache).parses, 3);
    assert_int_equal(gy_obj_cache_get_stats(cache).entries, 3);

    gy_scene_free(a);
    gy_scene_free(b);
    gy_scene_free(c);
    gy_scene_free(d);
    assert_int_equal(gy_obj_cache_get_stats(cache).entries, 0);
    gy_obj_cache_release(cache);
    assert_int_equal(f->ta.live_blocks, 0);
}

static void a_scene_outlives_the_world_that_owns_the_cache(void **state)
{
    fixture *f = *state;
    gy_world_def c = wfx_config(&f->ta, true);
    c.start_stopped = true;
    gy_world *w = wfx_world_with(&c);
    gy_scene *a = load_cell(f, gy_world_obj_cache(w));
    assert_result(gy_world_destroy(w, NULL), GY_OK);
    assert_true(f->ta.live_blocks > 0); /* the scene's holds keep the cache */
    assert_int_equal(a->entities[0].physics->colliders[0].vertex_count, 4);
    gy_scene_free(a);
    assert_int_equal(f->ta.live_blocks, 0);
    assert_int_equal(f->ta.live_bytes, 0);
}

static void failures_are_reported_and_not_cached(void **state)
{
    fixture *f = *state;
    gy_obj_cache *cache = NULL;
    assert_result(gy_obj_cache_create(NULL, NULL), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_obj_cache_create(&f->ta.base, &cache), GY_OK);
    const gy_obj_mesh *m = (const gy_obj_mesh *)&f->ta; /* overwritten with NULL */
    char err[256] = "";
    assert_result(gy_obj_cache_acquire(NULL, f->obj, NULL, &m, err, sizeof err),
                  GY_ERR_INVALID_ARGUMENT);
    assert_null(m);
    assert_result(gy_obj_cache_acquire(cache, NULL, NULL, &m, err, sizeof err),
                  GY_ERR_INVALID_ARGUMENT);

    char missing[160];
    snprintf(missing, sizeof missing, "%s/missing.obj", f->dir);
    assert_result(gy_obj_cache_acquire(cache, missing, "missing.obj", &m, err, sizeof err),
                  GY_ERR_IO);
    assert_non_null(strstr(err, "missing.obj"));
    write_text(missing, "v 0 0 0\nf 1 2 3\n");
    assert_result(gy_obj_cache_acquire(cache, missing, "missing.obj", &m, err, sizeof err),
                  GY_ERR_PARSE);
    assert_non_null(strstr(err, "missing.obj:2"));
    unlink(missing);
    gy_obj_cache_stats st = gy_obj_cache_get_stats(cache);
    assert_int_equal(st.parses, 2);
    assert_int_equal(st.entries, 0);

    /* A mesh the cache does not hold changes nothing. */
    gy_obj_mesh foreign = {0};
    assert_result(gy_obj_cache_acquire(cache, f->obj, NULL, &m, err, sizeof err), GY_OK);
    assert_result(gy_obj_cache_unref(cache, &foreign), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_obj_cache_unref(NULL, m), GY_ERR_INVALID_ARGUMENT);
    assert_int_equal(gy_obj_cache_get_stats(cache).entries, 1);
    assert_result(gy_obj_cache_unref(cache, m), GY_OK);
    assert_int_equal(gy_obj_cache_get_stats(cache).entries, 0);
    gy_obj_cache_release(cache);
    assert_int_equal(f->ta.live_blocks, 0);

    /* A scene naming a file that cannot be read fails and holds nothing. */
    assert_result(gy_obj_cache_create(&f->ta.base, &cache), GY_OK);
    unlink(f->obj);
    gy_scene *s = NULL;
    gy_scene_errors *errors = NULL;
    assert_result(gy_scene_load_file_cached(f->cell, cache, &f->ta.base, &s, &errors),
                  GY_ERR_PARSE);
    assert_null(s);
    assert_non_null(errors);
    gy_scene_errors_free(errors);
    assert_int_equal(gy_obj_cache_get_stats(cache).entries, 0);
    gy_obj_cache_release(cache);
    assert_int_equal(f->ta.live_blocks, 0);
}

typedef struct racer {
    gy_obj_cache *cache;
    const char *path;
    uint32_t rounds;
    uint64_t vertex_sum; /* checksum: vertices seen across the rounds */
    int failures;
} racer;

static void *race(void *arg)
{
    racer *r = arg;
    for (uint32_t i = 0; i < r->rounds; i++) {
        const gy_obj_mesh *m = NULL;
        if (gy_obj_cache_acquire(r->cache, r->path, NULL, &m, NULL, 0) != GY_OK) {
            r->failures++;
            continue;
        }
        r->vertex_sum += m->vertex_count;
        if (gy_obj_cache_unref(r->cache, m) != GY_OK)
            r->failures++;
    }
    return NULL;
}

/* Loader threads sharing one cache: every acquire is a parse or a hit, every mesh read whole. */
static void threads_share_the_cache(void **state)
{
    fixture *f = *state;
    gy_obj_cache *cache = NULL;
    assert_result(gy_obj_cache_create(&f->ta.base, &cache), GY_OK);
    enum { THREADS = 4, ROUNDS = 500 };
    racer r[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        r[i] = (racer){cache, f->obj, ROUNDS, 0, 0};
        assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(r[i].failures, 0);
        assert_int_equal(r[i].vertex_sum, 4u * ROUNDS);
    }
    gy_obj_cache_stats st = gy_obj_cache_get_stats(cache);
    assert_int_equal(st.parses + st.hits, (uint64_t)THREADS * ROUNDS);
    assert_true(st.parses >= 1);
    assert_int_equal(st.entries, 0);
    gy_obj_cache_release(cache);
    assert_int_equal(f->ta.live_blocks, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(streaming_the_same_cell_twice_parses_its_mesh_once, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_changed_file_is_parsed_again, setup, teardown),
        cmocka_unit_test_setup_teardown(a_scene_outlives_the_world_that_owns_the_cache, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(failures_are_reported_and_not_cached, setup, teardown),
        cmocka_unit_test_setup_teardown(threads_share_the_cache, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
