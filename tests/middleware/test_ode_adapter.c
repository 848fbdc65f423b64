/* ODE adapter specifics that the shared contract suite does not pin down: statics live in no ODE
 * space, only in the front end's grid; the records a collider and a failed create leave; a
 * contact put to sleep between substeps. The checks look at the front end's grid and the
 * adapter's records (ode_internal.h). Statics streamed in and out are test_frontend_streaming.c's,
 * on every adapter; statics placed over or removed under sleeping bodies are the contract
 * suite's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

#include "../../middleware/ode/ode_internal.h"
#include "gyre/backend/backend.h"
#include "gyre/math.h"

#define DT (1.0 / 60.0)

typedef struct fixture {
    const gy_backend *be;
    gy_backend_world *w;
    gy_test_allocator ta;
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    if (fx == NULL)
        return -1;
    *state = fx;
    fx->be = gy_backend_find("ode");
    if (fx->be == NULL)
        return -1;
    gy_test_allocator_init(&fx->ta);
    gy_backend_world_def wd = gy_default_backend_world_def();
    wd.allocator = &fx->ta.base;
    if (fx->be->world_create(&wd, &fx->w) != GY_OK)
        return -1;
    return fx->be->bind_thread(fx->w) == GY_OK ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    int rc = 0;
    if (fx->w != NULL) {
        fx->be->unbind_thread(fx->w);
        fx->be->world_destroy(fx->w);
    }
    if (fx->ta.live_blocks != 0) {
        print_error("world_destroy left %lld blocks allocated\n", (long long)fx->ta.live_blocks);
        rc = -1;
    }
    free(fx);
    return rc;
}

static gy_body_id create(fixture *fx, gy_motion_type type, gy_vec3 at, gy_collider_def cd)
{
    gy_body_def bd = gy_default_body_def();
    bd.type = type;
    bd.pose.position = at;
    gy_body_id id = {0};
    assert_result(fx->be->body_create(fx->w, &bd, &cd, 1, &id, NULL), GY_OK);
    return id;
}

static gy_collider_def box(gy_vec3 size)
{
    gy_collider_def c = gy_default_collider_def();
    c.shape.type = GY_SHAPE_BOX;
    c.shape.box_size = size;
    return c;
}

static gy_collider_def sphere(double radius)
{
    gy_collider_def c = gy_default_collider_def();
    c.shape.type = GY_SHAPE_SPHERE;
    c.shape.radius = radius;
    return c;
}

static void step_n(fixture *fx, int n)
{
    for (int i = 0; i < n; i++)
        assert_result(fx->be->step(fx->w, DT), GY_OK);
}

static gy_body_state state_of(fixture *fx, gy_body_id id)
{
    gy_body_state s;
    assert_result(fx->be->body_get_state(fx->w, id, &s), GY_OK);
    return s;
}

/* The contact between two bodies after the last step, or NULL. */
static const gy_contact *find_contact(fixture *fx, gy_body_id a, gy_body_id b)
{
    const gy_contact *c = NULL;
    uint32_t n = fx->be->contacts(fx->w, &c);
    for (uint32_t i = 0; i < n; i++)
        if ((c[i].body_a.bits == a.bits && c[i].body_b.bits == b.bits) ||
            (c[i].body_a.bits == b.bits && c[i].body_b.bits == a.bits))
            return &c[i];
    return NULL;
}

static void expect_empty(fixture *fx)
{
    gy_backend_counters c;
    fx->be->get_counters(fx->w, &c);
    assert_int_equal(c.live_objects, 0);
}

/* ---- streaming statics ---------------------------------------------------------------------- */

static gy_ode_collider *collider_of(fixture *fx, gy_body_id id)
{
    gy_ode_body *b = gy_handle_pool_get(gy_frontend_driver_world(fx->w)->records->bodies, id.bits);
    assert_non_null(b);
    assert_int_equal(b->collider_count, 1);
    return gy_ode_body_collider(b, 0);
}

/* Statics are in no ODE space (removing from ODE's quadtree was linear in the statics it held);
 * dynamic colliders are in the dynamic space. */
static void test_ode_statics_are_in_no_space(void **state)
{
    fixture *fx = *state;
    gy_body_id s = create(fx, GY_MOTION_STATIC, gy_v3(0, 0.5, 0), box(gy_v3(1, 1, 1)));
    gy_body_id d = create(fx, GY_MOTION_DYNAMIC, gy_v3(0, 3, 0), sphere(0.5));
    /* A static box has no geom of its own: the world's shared box geom, in no space, is posed
     * for it. */
    assert_null(collider_of(fx, s)->geom);
    assert_null(
        dGeomGetSpace(gy_ode_collider_geom(gy_frontend_driver_world(fx->w), collider_of(fx, s))));
    assert_ptr_equal(dGeomGetSpace(collider_of(fx, d)->geom),
                     gy_frontend_driver_world(fx->w)->dynamic_space);
    /* Still collided: the sphere lands on the box (centre at 1.5 m within 2 cm). */
    step_n(fx, 90);
    assert_near(state_of(fx, d).pose.position.y, 1.5, 0.02);
    assert_result(fx->be->body_release(fx->w, d), GY_OK);
    assert_result(fx->be->body_release(fx->w, s), GY_OK);
    expect_empty(fx);
}

/* Mesh and hull statics outside any space still collide: ODE's trimesh and convex tests get
 * their AABBs and poses from the geoms themselves. */
static void test_ode_mesh_and_hull_statics_hold_bodies(void **state)
{
    fixture *fx = *state;
    static const gy_vec3 quad[4] = {{-5, 0, -5}, {5, 0, -5}, {5, 0, 5}, {-5, 0, 5}};
    static const uint32_t tris[6] = {0, 3, 2, 0, 2, 1};
    static const gy_vec3 cube[8] = {{-1, -1, -1}, {1, -1, -1}, {-1, 1, -1}, {1, 1, -1},
                                    {-1, -1, 1},  {1, -1, 1},  {-1, 1, 1},  {1, 1, 1}};
    gy_mesh_def md = {quad, 4, tris, 6};
    gy_hull_def hd = {cube, 8};
    gy_resource_id mesh, hull;
    assert_result(fx->be->mesh_create(fx->w, &md, &mesh), GY_OK);
    assert_result(fx->be->hull_create(fx->w, &hd, &hull), GY_OK);
    gy_collider_def mc = gy_default_collider_def();
    mc.shape.type = GY_SHAPE_MESH;
    mc.shape.resource = mesh;
    gy_collider_def hc = gy_default_collider_def();
    hc.shape.type = GY_SHAPE_HULL;
    hc.shape.resource = hull;
    gy_body_id floor = create(fx, GY_MOTION_STATIC, gy_v3(0, 0, 0), mc);
    gy_body_id block = create(fx, GY_MOTION_STATIC, gy_v3(20, 1, 0), hc); /* top at y = 2 */
    gy_body_id ball = create(fx, GY_MOTION_DYNAMIC, gy_v3(0, 2, 0), sphere(0.5));
    gy_body_id crate = create(fx, GY_MOTION_DYNAMIC, gy_v3(20, 3, 0), box(gy_v3(1, 1, 1)));
    assert_null(dGeomGetSpace(collider_of(fx, floor)->geom));
    step_n(fx, 120);
    /* Resting on top: the ball's centre 0.5 m above the mesh, the crate's 0.5 m above the hull,
     * within 2 cm. */
    assert_near(state_of(fx, ball).pose.position.y, 0.5, 0.02);
    assert_near(state_of(fx, crate).pose.position.y, 2.5, 0.02);
    assert_non_null(find_contact(fx, ball, floor));
    assert_non_null(find_contact(fx, crate, block));

    assert_result(fx->be->body_release(fx->w, crate), GY_OK);
    assert_result(fx->be->body_release(fx->w, ball), GY_OK);
    assert_result(fx->be->body_release(fx->w, block), GY_OK);
    assert_result(fx->be->body_release(fx->w, floor), GY_OK);
    fx->be->resource_release(fx->w, mesh);
    fx->be->resource_release(fx->w, hull);
    expect_empty(fx);
}

/* ---- collider side records ------------------------------------------------------------------ */

static gy_ode_body *body_of(fixture *fx, gy_body_id id)
{
    gy_ode_body *b = gy_handle_pool_get(gy_frontend_driver_world(fx->w)->records->bodies, id.bits);
    assert_non_null(b);
    return b;
}

/* The entries the front end's static grid lists (a collider spanning several cells counts in
 * each). */
static uint32_t grid_items(const gy_static_grid *g)
{
    uint32_t n = g->big_count;
    for (uint32_t i = 0; i < g->cells.count; i++)
        n += g->cells.items[i].count;
    return n;
}

static bool same_bits(const void *a, const void *b, size_t n)
{
    return memcmp(a, b, n) == 0;
}

/* A body's collider records lie back to back right after its record in its one block (a
 * static's record stops before the motion part, and each of its collider records follows its
 * entry in the front end's static grid, which holds the collider's box), each aligned, each
 * naming the body, each the record the front end's collider handle resolves to; a static has no
 * ODE body. */
static void test_ode_collider_records_follow_the_body_record(void **state)
{
    fixture *fx = *state;
    gy_collider_def cols[3] = {box(gy_v3(1, 1, 1)), box(gy_v3(2, 1, 1)), box(gy_v3(1, 2, 1))};
    for (int k = 0; k < 2; k++) {
        gy_body_def bd = gy_default_body_def();
        bd.type = k == 0 ? GY_MOTION_STATIC : GY_MOTION_DYNAMIC;
        gy_body_id id = {0};
        gy_collider_id cids[3];
        assert_result(fx->be->body_create(fx->w, &bd, cols, 3, &id, cids), GY_OK);
        gy_ode_body *b = body_of(fx, id);
        assert_int_equal(b->collider_count, 3);
        size_t record = k == 0 ? GY_ODE_STATIC_BODY_SIZE : sizeof(gy_ode_body);
        size_t entry = k == 0 ? GY_ADAPTER_GRID_ENTRY_SIZE : 0u;
        for (uint32_t i = 0; i < 3; i++) {
            gy_ode_collider *c = gy_ode_body_collider(b, i);
            assert_ptr_equal(c, (char *)b + record + entry + i * (entry + sizeof(gy_ode_collider)));
            assert_int_equal((uintptr_t)c % _Alignof(gy_ode_collider), 0);
            if (k == 0) {
                const gy_static_grid_item *g = gy_adapter_collider_grid(&c->base);
                double box[6];
                gy_ode_collider_box(gy_frontend_driver_world(fx->w), c, box);
                const double held[6] = {g->box.min.x, g->box.max.x, g->box.min.y,
                                        g->box.max.y, g->box.min.z, g->box.max.z};
                assert_true(same_bits(box, held, sizeof box));
            }
            assert_ptr_equal(gy_ode_owner(c), b);
            assert_ptr_equal(gy_handle_pool_get(gy_frontend_driver_world(fx->w)->records->colliders,
                                                cids[i].bits),
                             c);
        }
        if (k == 0)
            assert_null(gy_ode_dbody(b));
        else
            assert_non_null(gy_ode_dbody(b));
    }
}

/* A collider whose definition sets a local pose or plane numbers keeps them in its side record
 * and gives them back exactly (rotation normalised as at creation); a default one has none and
 * reads the identity. Queries see the colliders where their definitions put them. */
static void test_ode_collider_side_record_gives_back_local_pose_and_plane(void **state)
{
    fixture *fx = *state;
    gy_collider_def posed = box(gy_v3(1, 1, 1));
    posed.local_pose.position = gy_v3(1.25, -0.5, 3.0);
    posed.local_pose.rotation = (gy_quat){0.0, 0.6, 0.0, 0.8000004}; /* stored normalised */
    gy_collider_def plane = gy_default_collider_def();
    plane.shape.type = GY_SHAPE_PLANE;
    plane.shape.normal = gy_v3(0.0, 0.6, 0.8);
    plane.shape.offset = -2.5;
    gy_collider_def cols[3] = {box(gy_v3(1, 1, 1)), posed, plane};
    gy_body_def bd = gy_default_body_def();
    bd.type = GY_MOTION_STATIC;
    gy_body_id id = {0};
    assert_result(fx->be->body_create(fx->w, &bd, cols, 3, &id, NULL), GY_OK);
    gy_ode_body *b = body_of(fx, id);
    assert_int_equal(b->collider_count, 3);

    const gy_adapter_collider *plain = &gy_ode_body_collider(b, 0)->base;
    assert_null(plain->rare);
    gy_pose identity = gy_pose_identity();
    gy_pose got = gy_adapter_collider_local_pose(plain);
    assert_true(same_bits(&got, &identity, sizeof got));

    const gy_adapter_collider *moved = &gy_ode_body_collider(b, 1)->base;
    assert_non_null(moved->rare);
    gy_pose want = posed.local_pose;
    want.rotation = gy_quat_normalize(posed.local_pose.rotation);
    got = gy_adapter_collider_local_pose(moved);
    assert_true(same_bits(&got, &want, sizeof got));
    gy_shape shape = gy_adapter_collider_shape(moved);
    assert_int_equal(shape.type, GY_SHAPE_BOX);
    assert_true(same_bits(&shape.box_size, &posed.shape.box_size, sizeof shape.box_size));

    const gy_adapter_collider *flat = &gy_ode_body_collider(b, 2)->base;
    assert_non_null(flat->rare);
    shape = gy_adapter_collider_shape(flat);
    assert_int_equal(shape.type, GY_SHAPE_PLANE);
    assert_true(same_bits(&shape.normal, &plane.shape.normal, sizeof shape.normal));
    assert_true(same_bits(&shape.offset, &plane.shape.offset, sizeof shape.offset));

    /* A ray down through the posed box's centre meets its top (it is turned about Y only). */
    gy_hit hit;
    uint32_t count = 0;
    assert_result(fx->be->raycast(fx->w, gy_v3(1.25, 5.0, 3.0), gy_v3(0, -10, 0), NULL,
                                  GY_COLLECT_CLOSEST, &hit, 1, &count),
                  GY_OK);
    assert_int_equal(count, 1);
    assert_near(hit.point.y, 0.0, 1e-9);
    assert_result(fx->be->body_release(fx->w, id), GY_OK);
    expect_empty(fx);
}

/* body_create under an allocator failing each allocation in turn: the side records made before
 * the driver builds the body are freed with every failure, which leaves none of its colliders in
 * the front end's static grid (some may have been indexed before the failure), and a success
 * leaves nothing behind once released. */
static void test_ode_body_create_failures_free_side_records(void **state)
{
    fixture *fx = *state;
    gy_collider_def posed = box(gy_v3(1, 1, 1));
    posed.local_pose.position = gy_v3(0.5, 0, 0);
    gy_collider_def plane = gy_default_collider_def();
    plane.shape.type = GY_SHAPE_PLANE;
    plane.shape.normal = gy_v3(0, 1, 0);
    plane.shape.offset = -1.0;
    gy_collider_def conveyor = box(gy_v3(2, 0.2, 2));
    conveyor.surface_velocity = gy_v3(1, 0, 0);
    gy_collider_def cols[3] = {posed, plane, conveyor};
    gy_body_def bd = gy_default_body_def();
    bd.type = GY_MOTION_STATIC;
    bool done = false;
    int failures = 0;
    for (uint64_t k = 1; k <= 64 && !done; k++) {
        gy_body_id id = {0};
        fx->ta.fail_at = fx->ta.calls + k;
        gy_result r = fx->be->body_create(fx->w, &bd, cols, 3, &id, NULL);
        fx->ta.fail_at = 0;
        if (r == GY_OK) {
            done = true;
            assert_non_null(gy_ode_body_collider(body_of(fx, id), 0)->base.rare);
            assert_result(fx->be->body_release(fx->w, id), GY_OK);
        } else {
            assert_result(r, GY_ERR_OUT_OF_MEMORY);
            assert_int_equal(grid_items(gy_frontend_static_grid(fx->w)), 0);
            failures++;
        }
        expect_empty(fx);
    }
    assert_true(done);
    assert_true(failures >= 3); /* at least the three side records failed in turn */
    /* A side record lost on a failure would still be allocated at teardown (it checks). */
}

/* A static is marked placed (gy_adapter_body.placed) from its creation until the end of the next
 * step, also when the front end's list of marked statics could not grow: the static is made all
 * the same and the step clears every body's mark. Eight statics made and released fill the list
 * (they stay listed until a step) and leave the pools room, so the last allocation of the next
 * static's creation is the list's growth, the first failure a creation survives. */
static void test_ode_static_placed_mark_lasts_one_step_even_when_its_list_cannot_grow(void **state)
{
    fixture *fx = *state;
    const gy_handle_pool *bodies = gy_frontend_driver_world(fx->w)->records->bodies;
    gy_body_id made[8];
    for (int i = 0; i < 8; i++)
        made[i] = create(fx, GY_MOTION_STATIC, gy_v3(0, 0, 0), box(gy_v3(2, 1, 2)));
    for (int i = 0; i < 8; i++)
        assert_result(fx->be->body_release(fx->w, made[i]), GY_OK);
    gy_body_def bd = gy_default_body_def();
    bd.type = GY_MOTION_STATIC;
    gy_collider_def cd = box(gy_v3(2, 1, 2));
    gy_body_id first = {0};
    bool survived_a_failure = false;
    for (uint64_t k = 1; k <= 256 && first.bits == 0; k++) {
        fx->ta.fail_at = fx->ta.calls + k;
        gy_result r = fx->be->body_create(fx->w, &bd, &cd, 1, &first, NULL);
        survived_a_failure = r == GY_OK && fx->ta.calls >= fx->ta.fail_at;
        fx->ta.fail_at = 0;
        if (r != GY_OK)
            assert_result(r, GY_ERR_OUT_OF_MEMORY);
    }
    assert_true(survived_a_failure);
    const gy_ode_body *a = gy_handle_pool_get(bodies, first.bits);
    assert_true(a->base.placed);
    assert_result(fx->be->step(fx->w, DT), GY_OK);
    assert_false(a->base.placed);

    /* Moved, it is marked again; this time the list holds it. */
    gy_body_id second = create(fx, GY_MOTION_STATIC, gy_v3(5, 0, 0), box(gy_v3(1, 1, 1)));
    const gy_ode_body *b = gy_handle_pool_get(bodies, second.bits);
    assert_result(
        fx->be->body_set_pose(fx->w, first, (gy_pose){gy_v3(0, 1, 0), gy_quat_identity()}), GY_OK);
    assert_true(a->base.placed && b->base.placed);
    assert_result(fx->be->step(fx->w, DT), GY_OK);
    assert_false(a->base.placed || b->base.placed);
    assert_result(fx->be->body_release(fx->w, second), GY_OK);
    assert_result(fx->be->body_release(fx->w, first), GY_OK);
    expect_empty(fx);
}

/* ---- contact reports ------------------------------------------------------------------------ */

/* Steps world `w` (a 0.2 m ball resting on a static floor) until the ball falls asleep, every
 * contact joint feedback slot holding an upward 10 kN before each step as a harder contact
 * elsewhere may have left it. *before: the floor contact's normal impulse the step before the
 * ball fell asleep, *asleep: on the step it did; *mg_dt: the ball's weight times the step. */
static void ball_falls_asleep_over_leftovers(const gy_backend *be, gy_backend_world *w,
                                             double *before, double *asleep, double *mg_dt)
{
    gy_body_def bd = gy_default_body_def();
    bd.type = GY_MOTION_STATIC;
    bd.pose.position = gy_v3(0, -0.5, 0);
    gy_collider_def floor = box(gy_v3(10, 1, 10)), ball = sphere(0.1);
    gy_body_id floor_id = {0}, ball_id = {0};
    assert_result(be->body_create(w, &bd, &floor, 1, &floor_id, NULL), GY_OK);
    bd.type = GY_MOTION_DYNAMIC;
    bd.pose.position = gy_v3(0, 0.099, 0);
    assert_result(be->body_create(w, &bd, &ball, 1, &ball_id, NULL), GY_OK);
    gy_driver_world *dw = gy_frontend_driver_world(w);
    const gy_ode_body *b = gy_handle_pool_get(dw->records->bodies, ball_id.bits);
    *mg_dt = b->motion.mass * 9.81 * DT;
    *before = -1.0;
    *asleep = -1.0;
    for (int i = 0; i < 600 && *asleep < 0.0; i++) {
        for (uint32_t k = 0; k < dw->feedback_block_count; k++)
            for (uint32_t s = 0; s < GY_ODE_FEEDBACK_BLOCK; s++) {
                dJointFeedback *fb = &dw->feedback_blocks[k][s];
                fb->f1[0] = fb->f1[2] = 0.0;
                fb->f1[1] = 1e4;
            }
        assert_result(be->step(w, DT), GY_OK);
        const gy_contact *c = NULL;
        uint32_t n = be->contacts(w, &c);
        assert_int_equal(n, 1);
        gy_body_state st;
        assert_result(be->body_get_state(w, ball_id, &st), GY_OK);
        if (st.awake)
            *before = c[0].normal_impulse;
        else
            *asleep = c[0].normal_impulse;
    }
    assert_true(*before >= 0.0 && *asleep >= 0.0);
    assert_result(be->body_release(w, ball_id), GY_OK);
    assert_result(be->body_release(w, floor_id), GY_OK);
}

/* dWorldQuickStep puts bodies to sleep before it solves: a body's contact joints are not solved
 * on the step it falls asleep, and their feedback slots keep what some earlier contact left. The
 * contact then reports as a pair already asleep does: its last report's impulse (about m g dt
 * for a resting ball), never the leftover (166 N·s here). */
static void test_ode_contact_put_to_sleep_reports_its_last_impulse_not_a_leftover(void **state)
{
    fixture *fx = *state;
    double before, asleep, mg_dt;
    ball_falls_asleep_over_leftovers(fx->be, fx->w, &before, &asleep, &mg_dt);
    assert_near(before, mg_dt, 0.1 * mg_dt);
    assert_near(asleep, before, 1e-12 * before);
    expect_empty(fx);
}

/* With substeps, a contact left unsolved in a later substep of the step it falls asleep reports
 * what its solved substeps gave, scaled to the whole step; one unsolved from the first substep
 * its last report's impulse. Either way about m g dt, never the leftover. */
static void test_ode_contact_put_to_sleep_between_substeps_reports_about_its_weight(void **state)
{
    fixture *fx = *state;
    gy_backend_world_def wd = gy_default_backend_world_def();
    wd.allocator = &fx->ta.base;
    wd.substeps = 4;
    gy_backend_world *w = NULL;
    assert_result(fx->be->world_create(&wd, &w), GY_OK);
    assert_result(fx->be->bind_thread(w), GY_OK);
    double before, asleep, mg_dt;
    ball_falls_asleep_over_leftovers(fx->be, w, &before, &asleep, &mg_dt);
    assert_near(before, mg_dt, 0.1 * mg_dt);
    assert_near(asleep, mg_dt, 0.1 * mg_dt);
    fx->be->unbind_thread(w);
    fx->be->world_destroy(w);
}

#define ODE_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        ODE_TEST(test_ode_statics_are_in_no_space),
        ODE_TEST(test_ode_mesh_and_hull_statics_hold_bodies),
        ODE_TEST(test_ode_collider_records_follow_the_body_record),
        ODE_TEST(test_ode_collider_side_record_gives_back_local_pose_and_plane),
        ODE_TEST(test_ode_body_create_failures_free_side_records),
        ODE_TEST(test_ode_static_placed_mark_lasts_one_step_even_when_its_list_cannot_grow),
        ODE_TEST(test_ode_contact_put_to_sleep_reports_its_last_impulse_not_a_leftover),
        ODE_TEST(test_ode_contact_put_to_sleep_between_substeps_reports_about_its_weight),
    };
    return cmocka_run_group_tests_name("ode_adapter", tests, NULL, NULL);
}
