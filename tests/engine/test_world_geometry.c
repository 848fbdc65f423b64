/* Runtime collision geometry: creator references and component pins, release before the body is
 * built, over-release, inline vertices owned by a component, teardown reclamation with a warning,
 * validation, and 256 remeshes that end with nothing resident — in the World and in the adapter. */
#include "test_world_fixture.h"

/* A 2 × 2 quad of two triangles at height h, facing up. */
typedef struct quad {
    gy_vec3 v[4];
    uint32_t idx[6];
} quad;

static quad make_quad(double h, double size)
{
    quad q = {{{-size, h, -size}, {size, h, -size}, {size, h, size}, {-size, h, size}},
              {0, 2, 1, 0, 3, 2}};
    return q;
}

static gy_geometry make_mesh(gy_world *w, const quad *q)
{
    gy_mesh_def m = {q->v, 4, q->idx, 6};
    gy_geometry g;
    assert_result(gy_geometry_create_mesh(w, &m, &g), GY_OK);
    return g;
}

static wfx_desc mesh_desc(gy_geometry g)
{
    gy_shape s;
    memset(&s, 0, sizeof s);
    s.type = GY_SHAPE_MESH;
    s.resource.bits = g.bits;
    return wfx_shape(GY_BODY_STATIC, s);
}

static gy_geometry_stats geo_stats(gy_world *w)
{
    gy_geometry_stats s;
    gy_geometry_get_stats(w, &s);
    return s;
}

/* The adapter's resource count after everything so far (one tick applies what was recorded). */
static uint32_t adapter_resources(gy_world *w)
{
    wfx_tick(w, 1);
    gy_backend_counters c;
    assert_result(gy_physics_get_adapter_counters(gy_world_physics(w), &c, NULL), GY_OK);
    return c.resources;
}

static void test_geometry_remesh_256_times_ends_with_none_resident(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = wfx_world(&ta);
    gy_entity chunk = wfx_entity(w, "chunk", gy_v3(0, 0, 0));
    quad q = make_quad(0.0, 2.0);
    gy_geometry g = make_mesh(w, &q);
    gy_entity ball = wfx_ball(w, "ball", gy_v3(0, 3, 0));
    wfx_desc d = mesh_desc(g);
    assert_result(gy_body_add(w, chunk, wfx_d(&d)), GY_OK);
    gy_geometry_release(w, g);
    for (uint32_t i = 0; i < 256; i++) {
        q = make_quad(0.001 * (double)(i % 16), 2.0);
        g = make_mesh(w, &q);
        d = mesh_desc(g);
        assert_result(gy_body_update(w, chunk, wfx_d(&d)), GY_OK);
        /* The creator lets go at once, before the physics thread has built anything. */
        gy_geometry_release(w, g);
        gy_geometry_stats s = geo_stats(w);
        assert_int_equal(s.resident, 1);
        assert_int_equal(s.creator_refs, 0);
        assert_int_equal(s.pins, 1);
        if (i % 3 == 0)
            wfx_tick(w, 1);
    }
    wfx_tick(w, 2);
    assert_true(wfx_state(w, chunk).has_body);
    /* The ball rests on the last mesh. */
    wfx_tick(w, 60);
    assert_near(wfx_state(w, ball).pose.position.y, 0.5 + 0.001 * 15, 0.02);
    assert_int_equal(adapter_resources(w), 1);
    assert_result(gy_body_remove(w, chunk), GY_OK);
    gy_geometry_stats s = geo_stats(w);
    assert_int_equal(s.resident, 0);
    assert_int_equal(s.pins, 0);
    assert_int_equal(s.created, 257);
    assert_int_equal(s.freed, 257);
    assert_int_equal(adapter_resources(w), 0);
    wfx_destroy(w, &ta);
}

static void test_geometry_release_before_build_and_over_release(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    quad q = make_quad(0.0, 5.0);
    gy_geometry g = make_mesh(w, &q);
    gy_entity floor = wfx_entity(w, "floor", gy_v3(0, 0, 0));
    wfx_desc d = mesh_desc(g);
    assert_result(gy_body_add(w, floor, wfx_d(&d)), GY_OK);
    gy_geometry_release(w, g);
    gy_geometry_release(w, g); /* over-release: nothing */
    gy_geometry_release(w, (gy_geometry){0});
    gy_geometry_release(w, (gy_geometry){0x123456789ull});
    assert_true(gy_geometry_is_valid(w, g)); /* still pinned */
    assert_int_equal(geo_stats(w).resident, 1);
    wfx_tick(w, 1);
    assert_true(wfx_state(w, floor).has_body);
    /* The mesh is really there: a ray finds it. */
    gy_world_hit hit;
    uint32_t n;
    assert_result(gy_world_raycast(w, gy_v3(1, 5, 1), gy_v3(0, -10, 0), NULL, GY_COLLECT_CLOSEST,
                                   &hit, 1, &n, NULL),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_true(gy_entity_equal(hit.entity, floor));
    assert_near(hit.point.y, 0.0, 1e-6);
    assert_true(hit.triangle >= 0);
    /* A second component may pin it as long as it is resident. */
    gy_entity floor2 = wfx_entity(w, "floor2", gy_v3(0, -3, 0));
    assert_result(gy_body_add(w, floor2, wfx_d(&d)), GY_OK);
    assert_int_equal(geo_stats(w).pins, 2);
    assert_result(gy_entity_destroy(w, floor), GY_OK);
    assert_int_equal(geo_stats(w).pins, 1);
    assert_result(gy_body_remove(w, floor2), GY_OK);
    assert_false(gy_geometry_is_valid(w, g));
    assert_int_equal(geo_stats(w).resident, 0);
    /* Gone: naming it now is a stale handle. */
    assert_result(gy_body_add(w, floor2, wfx_d(&d)), GY_ERR_STALE_HANDLE);
    gy_geometry_release(w, g);
    wfx_destroy(w, NULL);
}

static void test_geometry_inline_vertices_belong_to_the_component(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    gy_vec3 pts[] = {{-0.5, -0.5, -0.5}, {0.5, -0.5, -0.5}, {0, 0.5, -0.5}, {0, 0, 0.5}};
    gy_physics_component_def d = gy_default_physics_component_def();
    gy_scene_collider cols[2];
    memset(cols, 0, sizeof cols);
    for (uint32_t i = 0; i < 2; i++) {
        cols[i].def = gy_default_collider_def();
        cols[i].def.shape.type = GY_SHAPE_HULL;
        cols[i].def.local_pose.position = gy_v3(i * 1.5, 0, 0);
        cols[i].vertices = pts;
        cols[i].vertex_count = 4;
    }
    d.colliders = cols;
    d.collider_count = 2;
    gy_entity e = wfx_entity(w, "rock", gy_v3(0, 5, 0));
    assert_result(gy_body_add(w, e, &d), GY_OK);
    gy_geometry_stats s = geo_stats(w);
    assert_int_equal(s.resident, 1); /* the two colliders share the arrays, so one geometry */
    assert_int_equal(s.creator_refs, 0);
    assert_int_equal(s.pins, 2);
    wfx_tick(w, 5);
    assert_true(wfx_state(w, e).has_body);
    assert_true(wfx_state(w, e).pose.position.y < 5.0);
    assert_result(gy_body_remove(w, e), GY_OK);
    assert_int_equal(geo_stats(w).resident, 0);
    wfx_destroy(w, NULL);
}

static void test_geometry_teardown_reclaims_and_warns(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    wfx_log log;
    memset(&log, 0, sizeof log);
    gy_logger logger = {wfx_log_fn, &log};
    gy_world_def c = wfx_config(&ta, true);
    c.logger = &logger;
    gy_world *w = wfx_world_with(&c);
    quad q = make_quad(0.0, 1.0);
    for (uint32_t i = 0; i < 3; i++)
        make_mesh(w, &q);
    gy_geometry used = make_mesh(w, &q);
    gy_entity e = wfx_entity(w, "m", gy_v3(0, 0, 0));
    wfx_desc d = mesh_desc(used);
    assert_result(gy_body_add(w, e, wfx_d(&d)), GY_OK);
    wfx_tick(w, 2);
    gy_geometry_stats s = geo_stats(w);
    assert_int_equal(s.resident, 4);
    assert_int_equal(s.creator_refs, 4);
    assert_int_equal(s.pins, 1);
    gy_world_teardown rep = wfx_destroy(w, &ta);
    assert_int_equal(rep.geometries_reclaimed, 4);
    assert_non_null(strstr(log.last_warning, "4 runtime geometries"));
}

static void test_geometry_validation(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    gy_geometry g;
    quad q = make_quad(0.0, 1.0);
    gy_mesh_def m = {q.v, 4, q.idx, 5};
    assert_result(gy_geometry_create_mesh(w, &m, &g), GY_ERR_INVALID_MESH);
    assert_int_equal(g.bits, 0);
    q.idx[2] = 9;
    m.index_count = 6;
    assert_result(gy_geometry_create_mesh(w, &m, &g), GY_ERR_INVALID_MESH);
    q = make_quad(0.0, 1.0);
    q.v[1].x = NAN;
    assert_result(gy_geometry_create_mesh(w, &m, &g), GY_ERR_NON_FINITE);
    gy_vec3 flat[] = {{0, 0, 0}, {1, 0, 0}, {0, 0, 1}, {1, 0, 1}};
    gy_hull_def h = {flat, 4};
    assert_result(gy_geometry_create_hull(w, &h, &g), GY_ERR_INVALID_MESH);
    h.point_count = 3;
    assert_result(gy_geometry_create_hull(w, &h, &g), GY_ERR_INVALID_MESH);
    assert_result(gy_geometry_create_mesh(NULL, &m, &g), GY_ERR_INVALID_ARGUMENT);
    assert_int_equal(geo_stats(w).resident, 0);
    /* A mesh used where a hull is expected, and a mesh on a dynamic body. */
    q = make_quad(0.0, 1.0);
    gy_geometry mesh = make_mesh(w, &q);
    gy_shape s;
    memset(&s, 0, sizeof s);
    s.type = GY_SHAPE_HULL;
    s.resource.bits = mesh.bits;
    gy_entity e = wfx_entity(w, "e", gy_v3(0, 0, 0));
    wfx_desc d = wfx_shape(GY_BODY_DYNAMIC, s);
    assert_result(gy_body_add(w, e, wfx_d(&d)), GY_ERR_INVALID_MESH);
    s.type = GY_SHAPE_MESH;
    d = wfx_shape(GY_BODY_DYNAMIC, s);
    assert_result(gy_body_add(w, e, wfx_d(&d)), GY_ERR_INVALID_MOTION);
    /* Inline data is validated too. */
    d = mesh_desc((gy_geometry){0});
    d.collider.vertices = q.v;
    d.collider.vertex_count = 4;
    d.collider.indices = q.idx;
    d.collider.index_count = 4;
    assert_result(gy_body_add(w, e, wfx_d(&d)), GY_ERR_INVALID_MESH);
    assert_int_equal(geo_stats(w).pins, 0);
    gy_geometry_release(w, mesh);
    assert_int_equal(geo_stats(w).resident, 0);
    wfx_destroy(w, NULL);
}

/* Geometry survives a hard stop/start: the restart rebuilds it from the World's copy. */
static void test_geometry_survives_stop_start(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    quad q = make_quad(0.0, 5.0);
    gy_geometry g = make_mesh(w, &q);
    gy_entity floor = wfx_entity(w, "floor", gy_v3(0, 0, 0));
    wfx_desc d = mesh_desc(g);
    assert_result(gy_body_add(w, floor, wfx_d(&d)), GY_OK);
    gy_entity ball = wfx_ball(w, "ball", gy_v3(0, 1, 0));
    wfx_tick(w, 30);
    assert_result(gy_world_stop_physics(w), GY_OK);
    gy_geometry_release(w, g);         /* pinned: stays */
    gy_geometry g2 = make_mesh(w, &q); /* made while stopped */
    assert_result(gy_world_start_physics(w), GY_OK);
    wfx_tick(w, 60);
    assert_near(wfx_state(w, ball).pose.position.y, 0.5, 0.02);
    assert_int_equal(adapter_resources(w), 2);
    gy_geometry_release(w, g2);
    assert_int_equal(adapter_resources(w), 1);
    wfx_destroy(w, NULL);
}

/* The room for a geometry's entry in the World's table of resource refs is taken before its
 * create is recorded: refused for memory, the create reports GY_ERR_OUT_OF_MEMORY and records
 * nothing (no create answered by a release in the same batch), and the same create succeeds once
 * memory is there again. Every allocation of the create is refused in turn. */
typedef struct mesh_call {
    gy_mesh_def def;
    gy_geometry g;
} mesh_call;

static gy_result create_mesh(gy_world *w, void *ctx)
{
    mesh_call *c = ctx;
    return gy_geometry_create_mesh(w, &c->def, &c->g);
}

static void test_geometry_ref_table_refused_for_memory_records_nothing(void **state)
{
    (void)state;
    uint32_t refused = 0;
    for (uint64_t k = 1; k < 10; k++) {
        gy_test_allocator ta;
        gy_test_allocator_init(&ta);
        gy_world *w = wfx_world(&ta);
        wfx_tick(w, 1);
        quad q = make_quad(0.0, 2.0);
        mesh_call c = {.def = {q.v, 4, q.idx, 6}};
        if (wfx_refused_records_nothing(w, &ta, k, create_mesh, &c)) {
            refused++;
            assert_int_equal(geo_stats(w).resident, 0);
            wfx_call_records_one(w, create_mesh, &c);
        }
        assert_int_equal(adapter_resources(w), 1);
        gy_geometry_release(w, c.g);
        assert_int_equal(adapter_resources(w), 0);
        wfx_destroy(w, &ta);
    }
    assert_true(refused > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geometry_remesh_256_times_ends_with_none_resident),
        cmocka_unit_test(test_geometry_release_before_build_and_over_release),
        cmocka_unit_test(test_geometry_inline_vertices_belong_to_the_component),
        cmocka_unit_test(test_geometry_teardown_reclaims_and_warns),
        cmocka_unit_test(test_geometry_validation),
        cmocka_unit_test(test_geometry_survives_stop_start),
        cmocka_unit_test(test_geometry_ref_table_refused_for_memory_records_nothing),
    };
    return cmocka_run_group_tests_name("world_geometry", tests, NULL, NULL);
}
