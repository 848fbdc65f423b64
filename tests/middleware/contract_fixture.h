/* The fixture every contract suite shares: the adapter under test (named on the command line), a
 * fresh world per test whose allocator counts blocks, and a teardown that fails when
 * world_destroy leaves any behind. Included by one test file per program. */
#ifndef GY_TEST_CONTRACT_FIXTURE_H
#define GY_TEST_CONTRACT_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "test_support.h"

#include "gyre/backend/backend.h"

/* The adapter under test; set once by contract_select_backend before any test runs. */
static const gy_backend *backend;

typedef struct fixture {
    const gy_backend *be;
    gy_backend_world *w;
    gy_test_allocator ta;
} fixture;

static inline gy_backend_world_def fixture_world_def(fixture *fx)
{
    gy_backend_world_def wd = gy_default_backend_world_def();
    wd.allocator = &fx->ta.base;
    return wd;
}

static inline int open_world(fixture *fx, const gy_backend_world_def *wd)
{
    gy_result r = fx->be->world_create(wd, &fx->w);
    if (r != GY_OK) {
        print_error("world_create failed: %s\n", gy_result_name(r));
        fx->w = NULL;
        return -1;
    }
    r = fx->be->bind_thread(fx->w);
    if (r != GY_OK) {
        print_error("bind_thread failed: %s\n", gy_result_name(r));
        return -1;
    }
    return 0;
}

static inline void close_world(fixture *fx)
{
    if (fx->w != NULL) {
        fx->be->unbind_thread(fx->w);
        fx->be->world_destroy(fx->w);
        fx->w = NULL;
    }
}

static inline int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    if (fx == NULL)
        return -1;
    fx->be = backend;
    gy_test_allocator_init(&fx->ta);
    *state = fx;
    gy_backend_world_def wd = fixture_world_def(fx);
    return open_world(fx, &wd);
}

static inline int teardown(void **state)
{
    fixture *fx = *state;
    int rc = 0;
    close_world(fx);
    if (fx->ta.live_blocks != 0 || fx->ta.live_bytes != 0) {
        print_error("world_destroy left %lld blocks (%lld bytes) allocated\n",
                    (long long)fx->ta.live_blocks, (long long)fx->ta.live_bytes);
        rc = -1;
    }
    free(fx);
    return rc;
}

/* Reads `argv[1]` (the adapter) and the optional `argv[2]` (a cmocka test-name filter) and sets
 * `backend`. 0 when the suite may run; otherwise the exit status, the problem printed. */
static inline int contract_select_backend(int argc, char **argv, const char *suite)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s BACKEND [TEST_NAME_FILTER]\n", argv[0]);
        return 2;
    }
    backend = gy_backend_find(argv[1]);
    if (backend == NULL) {
        fprintf(stderr, "%s: no adapter named '%s' is compiled in\n", argv[0], argv[1]);
        return 2;
    }
    if (argc > 2)
        cmocka_set_test_filter(argv[2]);
    printf("%s: adapter '%s'\n", suite, backend->name);
    return 0;
}

#endif /* GY_TEST_CONTRACT_FIXTURE_H */
