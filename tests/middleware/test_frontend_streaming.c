/* The front end's static grid under streaming, on one adapter named on the command line
 * (argv[1]): cells of statics created and released along a long walk are found by queries while
 * resident and never after, and the grid's emptied cells are trimmed. Both adapters keep their
 * statics in the front end's grid, so this runs unchanged on each; it looks at the grid itself
 * (driver.h's gy_frontend_static_grid) where the contract suites see only the public API. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

#include "../../middleware/src/driver.h"
#include "gyre/backend/backend.h"
#include "gyre/math.h"

#include "contract_fixture.h"

static gy_collider_def box_def(gy_vec3 size)
{
    gy_collider_def c = gy_default_collider_def();
    c.shape.type = GY_SHAPE_BOX;
    c.shape.box_size = size;
    return c;
}

/* A static 0.6 x 1 x 0.6 m box centred at `at`. */
static gy_body_id static_box(fixture *fx, gy_vec3 at)
{
    gy_body_def bd = gy_default_body_def();
    bd.type = GY_MOTION_STATIC;
    bd.pose.position = at;
    gy_collider_def cd = box_def(gy_v3(0.6, 1, 0.6));
    gy_body_id id = {0};
    assert_result(fx->be->body_create(fx->w, &bd, &cd, 1, &id, NULL), GY_OK);
    return id;
}

static void expect_empty(fixture *fx)
{
    gy_backend_counters c;
    fx->be->get_counters(fx->w, &c);
    assert_int_equal(c.live_objects, 0);
}

#define CELL        8.0 /* two grid cells a side */
#define PER_CELL    20
#define WINDOW      16  /* resident cells */
#define WALK        400 /* cells loaded along the walk */
#define CHECK_EVERY 25

typedef struct cell_rng {
    uint64_t s;
} cell_rng;

static double unit(cell_rng *r)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(r->s >> 11) * (1.0 / 9007199254740992.0);
}

/* Cell k of the walk: a 2 × (WALK / 2) strip along X. Its statics' centres go in `at`. */
static void load_cell(fixture *fx, int k, gy_body_id *ids, gy_vec3 *at)
{
    cell_rng r = {(uint64_t)k * 7919u + 1u};
    double x0 = (k / 2) * CELL - 200.0, z0 = (k % 2) * CELL - CELL;
    for (int i = 0; i < PER_CELL; i++) {
        at[i] = gy_v3(x0 + 0.5 + unit(&r) * (CELL - 1.0), 0.5, z0 + 0.5 + unit(&r) * (CELL - 1.0));
        ids[i] = static_box(fx, at[i]);
    }
}

/* Every resident static is found by a ray down through its centre, a ray through a released
 * static's centre finds nothing, and an overlap over the whole strip finds exactly the residents.
 */
static void check_resident(fixture *fx, gy_body_id (*ids)[PER_CELL], gy_vec3 (*at)[PER_CELL],
                           int first, int last, const gy_vec3 *gone, int gone_count)
{
    gy_hit hit;
    uint32_t n;
    for (int k = first; k < last; k++)
        for (int i = 0; i < PER_CELL; i++) {
            gy_vec3 p = at[k % WINDOW][i];
            assert_result(fx->be->raycast(fx->w, gy_v3(p.x, 5, p.z), gy_v3(0, -10, 0), NULL,
                                          GY_COLLECT_CLOSEST, &hit, 1, &n),
                          GY_OK);
            assert_int_equal(n, 1);
            /* Statics in a cell may overlap; the hit is one of the boxes over this point. */
            assert_near(hit.point.y, 1.0, 1e-9);
        }
    for (int i = 0; i < gone_count; i++) {
        /* Released boxes may sit under a resident one only if cells overlap, which they do not. */
        assert_result(fx->be->raycast(fx->w, gy_v3(gone[i].x, 5, gone[i].z), gy_v3(0, -10, 0), NULL,
                                      GY_COLLECT_ANY, &hit, 1, &n),
                      GY_OK);
        assert_int_equal(n, 0);
    }
    gy_hit *hits = calloc(WINDOW * PER_CELL + 1, sizeof *hits);
    assert_non_null(hits);
    gy_collider_def big = box_def(gy_v3(4000, 10, 100)); /* the whole strip */
    gy_pose pose = gy_pose_identity();
    assert_result(fx->be->overlap(fx->w, &big.shape, pose, NULL, GY_COLLECT_ALL, hits,
                                  WINDOW * PER_CELL + 1, &n),
                  GY_OK);
    assert_int_equal(n, (uint32_t)((last - first) * PER_CELL));
    for (uint32_t h = 0; h < n; h++) {
        bool found = false;
        for (int k = first; k < last && !found; k++)
            for (int i = 0; i < PER_CELL && !found; i++)
                found = hits[h].body.bits == ids[k % WINDOW][i].bits;
        assert_true(found);
    }
    free(hits);
}

/* Cells of statics created and released oldest first along a long walk: queries keep finding
 * exactly the resident statics, and the grid's cell table stays proportional to them instead of
 * growing with every place that ever held geometry. */
static void test_streamed_statics_found_and_grid_trimmed(void **state)
{
    fixture *fx = *state;
    gy_body_id(*ids)[PER_CELL] = calloc(WINDOW, sizeof *ids);
    gy_vec3(*at)[PER_CELL] = calloc(WINDOW, sizeof *at);
    assert_non_null(ids);
    assert_non_null(at);
    gy_vec3 gone[PER_CELL];
    for (int k = 0; k < WINDOW; k++)
        load_cell(fx, k, ids[k], at[k]);
    uint32_t peak_cells = 0;
    for (int k = WINDOW; k < WALK; k++) {
        int slot = k % WINDOW;
        for (int i = 0; i < PER_CELL; i++) {
            gone[i] = at[slot][i];
            assert_result(fx->be->body_release(fx->w, ids[slot][i]), GY_OK);
        }
        load_cell(fx, k, ids[slot], at[slot]);
        const gy_static_grid *g = gy_frontend_static_grid(fx->w);
        if (g->cells.count > peak_cells)
            peak_cells = g->cells.count;
        if (k % CHECK_EVERY == 0)
            check_resident(fx, ids, at, k + 1 - WINDOW, k + 1, gone, PER_CELL);
    }
    /* A streamed cell covers 2 × 2 grid cells, so the residents use at most 64 and the walk
     * touched 1,600. Emptied cells are kept until there are 64 of them and they outnumber the
     * others; one load adds at most 4 before the next release trims. */
    const gy_static_grid *g = gy_frontend_static_grid(fx->w);
    assert_true(g->cells.count - g->cells_empty <= WINDOW * 4u);
    assert_true(peak_cells <= WINDOW * 4u + 64u + 4u);
    check_resident(fx, ids, at, WALK - WINDOW, WALK, gone, 0);

    for (int k = 0; k < WINDOW; k++)
        for (int i = 0; i < PER_CELL; i++)
            assert_result(fx->be->body_release(fx->w, ids[k][i]), GY_OK);
    free(ids);
    free(at);
    expect_empty(fx);
}

int main(int argc, char **argv)
{
    int status = contract_select_backend(argc, argv, "streamed statics");
    if (status != 0)
        return status;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_streamed_statics_found_and_grid_trimmed, setup,
                                        teardown),
    };
    return cmocka_run_group_tests_name("streamed statics", tests, NULL, NULL);
}
