/* Scene instances (gyre/scene_instance.h): a loaded scene made into World entities in scene
 * order with parents first, shared OBJ geometry, load offsets, all-or-nothing on failure, the
 * additive load under the scene barrier, the replace through hard stop/start, and unload. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gyre/gyre.h"
#include "test_scene.h"

#define DT         (1.0 / 60.0)
#define TIMEOUT_NS 20000000000ull /* per lockstep tick: generous for TSan on a shared machine */

static const char *g_scenes_dir = ".";

/* ---- helpers --------------------------------------------------------------------------------- */

static gy_scene *load_scene(const char *text)
{
    return gy_test_load_scene(text, g_scenes_dir, NULL, NULL);
}

/* A child listed before its parent, a joint, and two colliders naming the same OBJ file. */
static const char *const k_scene =
    "{'format':'gyre.scene','version':1,'entities':["
    "{'name':'lamp','parent':'cart','transform':{'position':[0,1,0]}},"
    "{'name':'cart','transform':{'position':[1,2,3]},"
    " 'components':{'physics':{'shape':'Box','box_size':[1,1,1]}}},"
    "{'name':'rock_a','transform':{'position':[5,1,0]},"
    " 'components':{'physics':{'shape':'Hull','collision':'rock.obj'}}},"
    "{'name':'rock_b','transform':{'position':[7,1,0]},"
    " 'components':{'physics':{'shape':'Hull','collision':'rock.obj'}}},"
    "{'name':'floor','components':{'physics':{'body_type':'Static','shape':'Plane','offset':-1}}}],"
    "'joints':[{'type':'Ball','a':'cart','anchor':[1,3,3]}]}";

static gy_world *make_world(gy_test_allocator *ta, bool stopped)
{
    gy_world_def c = gy_default_world_def();
    c.physics.lockstep = true;
    c.allocator = ta != NULL ? &ta->base : NULL;
    c.step_timeout_ns = TIMEOUT_NS;
    c.start_stopped = stopped;
    gy_world *w = NULL;
    assert_result(gy_world_create(&c, &w), GY_OK);
    return w;
}

static void destroy_world(gy_world *w, gy_test_allocator *ta)
{
    bool running = gy_world_physics_running(w);
    gy_world_teardown td;
    assert_result(gy_world_destroy(w, &td), GY_OK);
    if (running) {
        assert_true(td.adapter_checked);
        assert_int_equal(td.adapter_live_objects, 0);
    }
    if (ta != NULL) {
        assert_int_equal(ta->live_blocks, 0);
        assert_int_equal(ta->live_bytes, 0);
    }
}

static void tick(gy_world *w, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        assert_result(gy_world_tick(w, DT), GY_OK);
}

static uint32_t physics_bodies(gy_world *w)
{
    gy_physics_stats s;
    gy_physics_get_stats(gy_world_physics(w), &s);
    return s.bodies;
}

/* ---- tests ----------------------------------------------------------------------------------- */

static void test_instance_creates_entities_parents_first(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = make_world(&ta, false);
    gy_scene *scene = load_scene(k_scene);
    gy_scene_instance *inst = NULL;
    int32_t bad = 7;
    assert_result(gy_scene_instantiate(w, scene, gy_v3(0, 0, 0), NULL, &inst, &bad), GY_OK);
    assert_int_equal(bad, -1);
    assert_int_equal(inst->entity_count, 5);
    assert_int_equal(inst->joint_count, 1);
    assert_int_equal(gy_world_entity_count(w), 5);
    static const char *const names[] = {"lamp", "cart", "rock_a", "rock_b", "floor"};
    for (uint32_t i = 0; i < 5; i++)
        assert_string_equal(gy_entity_name(w, inst->entities[i]), names[i]);
    /* The lamp was listed first but hangs under the cart: transforms compose. */
    assert_true(gy_entity_equal(gy_entity_parent(w, inst->entities[0]), inst->entities[1]));
    gy_pose p;
    assert_result(gy_entity_get_world_pose(w, inst->entities[0], &p), GY_OK);
    assert_near(p.position.x, 1.0, 1e-12);
    assert_near(p.position.y, 3.0, 1e-12);
    assert_near(p.position.z, 3.0, 1e-12);
    assert_true(gy_body_exists(w, inst->entities[1]));
    assert_false(gy_body_exists(w, inst->entities[0]));
    gy_joint_status js;
    assert_result(gy_joint_get_status(w, inst->joints[0], &js), GY_OK);
    tick(w, 2);
    assert_int_equal(physics_bodies(w), 4);
    gy_scene_instance_free(inst);
    gy_scene_free(scene);
    destroy_world(w, &ta);
}

static void test_instance_shares_obj_geometry(void **state)
{
    (void)state;
    gy_world *w = make_world(NULL, false);
    gy_scene *scene = load_scene(k_scene);
    gy_scene_instance *inst = NULL;
    assert_result(gy_scene_instantiate(w, scene, gy_v3(0, 0, 0), NULL, &inst, NULL), GY_OK);
    gy_geometry_stats gs;
    gy_geometry_get_stats(w, &gs);
    /* Two rocks name rock.obj: one hull, pinned twice, no creator reference left behind. */
    assert_int_equal(gs.resident, 1);
    assert_int_equal(gs.hulls, 1);
    assert_int_equal(gs.pins, 2);
    assert_int_equal(gs.creator_refs, 0);
    gy_scene_instance_free(inst);
    gy_scene_free(scene);
    destroy_world(w, NULL);
}

static void test_instance_offset_moves_roots_anchors_and_planes(void **state)
{
    (void)state;
    gy_world *w = make_world(NULL, false);
    gy_scene *scene = load_scene(k_scene);
    gy_scene_instance *inst = NULL;
    assert_result(gy_scene_instantiate(w, scene, gy_v3(10, 2, 0), NULL, &inst, NULL), GY_OK);
    gy_pose p;
    assert_result(gy_entity_get_world_pose(w, inst->entities[1], &p), GY_OK);
    assert_near(p.position.x, 11.0, 1e-12); /* root: moved */
    assert_near(p.position.y, 4.0, 1e-12);
    gy_pose local;
    assert_result(gy_entity_get_local_pose(w, inst->entities[0], &local), GY_OK);
    assert_near(local.position.x, 0.0, 1e-12); /* child: local pose untouched */
    assert_near(local.position.y, 1.0, 1e-12);
    /* The plane y = -1 moved up by 2: a ray down from y = 5 at the origin hits it at y = 1. */
    tick(w, 1);
    gy_world_query_filter f = gy_default_world_query_filter();
    gy_world_hit hit;
    uint32_t n = 0;
    assert_result(gy_world_raycast(w, gy_v3(0, 5, 0), gy_v3(0, -10, 0), &f, GY_COLLECT_CLOSEST,
                                   &hit, 1, &n, NULL),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_true(gy_entity_equal(hit.entity, inst->entities[4]));
    assert_near(hit.point.y, 1.0, 1e-9);
    /* The joint anchor moved with the cart: the cart hangs still from it. */
    tick(w, 30);
    assert_result(gy_entity_get_world_pose(w, inst->entities[1], &p), GY_OK);
    assert_near(p.position.x, 11.0, 1e-3);
    assert_near(p.position.y, 4.0, 1e-3);
    gy_scene_instance_free(inst);
    gy_scene_free(scene);
    destroy_world(w, NULL);
}

/* Every allocation the load makes fails once in turn: each failure leaves the World as it was. */
static void test_instance_is_all_or_nothing_under_allocation_failure(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = make_world(&ta, true); /* stopped: no physics thread allocating meanwhile */
    gy_scene *scene = load_scene(k_scene);
    gy_scene_instance *inst = NULL;
    uint32_t failures = 0;
    for (uint64_t k = 1;; k++) {
        ta.fail_at = ta.calls + k;
        gy_result r = gy_scene_instantiate(w, scene, gy_v3(0, 0, 0), &ta.base, &inst, NULL);
        if (r == GY_OK)
            break;
        assert_result(r, GY_ERR_OUT_OF_MEMORY);
        assert_null(inst);
        assert_int_equal(gy_world_entity_count(w), 0);
        gy_geometry_stats gs;
        gy_geometry_get_stats(w, &gs);
        assert_int_equal(gs.resident, 0);
        gy_world_stats ws;
        gy_world_get_stats(w, &ws);
        assert_int_equal(ws.bodies, 0);
        assert_int_equal(ws.joints, 0);
        failures++;
        assert_true(k < 10000);
    }
    ta.fail_at = 0;
    assert_true(failures > 5);
    assert_int_equal(gy_world_entity_count(w), 5);
    assert_result(gy_world_start_physics(w), GY_OK);
    tick(w, 2);
    assert_int_equal(physics_bodies(w), 4);
    gy_scene_instance_free(inst);
    gy_scene_free(scene);
    destroy_world(w, &ta);
}

static void test_additive_load_goes_through_the_barrier(void **state)
{
    (void)state;
    gy_world *w = make_world(NULL, false);
    gy_scene *scene = load_scene(k_scene);
    gy_barrier *b = gy_physics_barrier(gy_world_physics(w));
    gy_barrier_stats before, after;
    gy_barrier_get_stats(b, &before);
    gy_scene_instance *one = NULL, *two = NULL;
    assert_result(gy_scene_load_additive(w, scene, gy_v3(0, 0, 0), 0, NULL, &one, NULL), GY_OK);
    tick(w, 1);
    assert_result(gy_scene_load_additive(w, scene, gy_v3(0, 0, 20), 0, NULL, &two, NULL), GY_OK);
    gy_barrier_get_stats(b, &after);
    assert_int_equal(after.mutations, before.mutations + 2);
    assert_false(gy_barrier_in_mutation(b));
    tick(w, 1);
    assert_int_equal(gy_world_entity_count(w), 10);
    assert_int_equal(physics_bodies(w), 8);
    /* Unload the first copy (also through the barrier); the second stays. */
    assert_result(gy_scene_unload(w, one, 0), GY_OK);
    tick(w, 1);
    assert_int_equal(gy_world_entity_count(w), 5);
    assert_int_equal(physics_bodies(w), 4);
    for (uint32_t i = 0; i < two->entity_count; i++)
        assert_true(gy_entity_is_valid(w, two->entities[i]));
    gy_scene_instance_free(two);
    gy_scene_free(scene);
    destroy_world(w, NULL);
}

static void test_replace_swaps_scenes_through_stop_and_start(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = make_world(&ta, false);
    gy_scene *first = load_scene(k_scene);
    gy_scene *second = load_scene("{'format':'gyre.scene','version':1,'entities':["
                                  "{'name':'ground','components':{'physics':{'body_type':'Static',"
                                  "'shape':'Plane'}}},"
                                  "{'name':'ball','transform':{'position':[0,1,0]},"
                                  "'components':{'physics':{'shape':'Sphere','radius':0.5}}}]}");
    gy_scene_instance *a = NULL, *b = NULL;
    assert_result(gy_scene_load_additive(w, first, gy_v3(0, 0, 0), 0, NULL, &a, NULL), GY_OK);
    tick(w, 3);
    gy_physics_stats ps;
    gy_physics_get_stats(gy_world_physics(w), &ps);
    uint32_t generation = ps.generation;

    assert_result(gy_scene_load_replace(w, a, second, NULL, &b, NULL), GY_OK);
    assert_true(gy_world_physics_running(w));
    gy_physics_get_stats(gy_world_physics(w), &ps);
    assert_int_equal(ps.generation, generation + 1); /* a new adapter world: a hard start */
    assert_int_equal(gy_world_entity_count(w), 2);
    tick(w, 2);
    assert_int_equal(physics_bodies(w), 2);
    assert_string_equal(gy_entity_name(w, b->entities[1]), "ball");
    gy_scene_instance_free(b);
    gy_scene_free(first);
    gy_scene_free(second);
    destroy_world(w, &ta);
}

/* A replace whose load fails keeps the previous scene and restarts physics. */
static void test_replace_failure_keeps_the_previous_scene(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = make_world(&ta, false);
    gy_scene *scene = load_scene(k_scene);
    gy_scene_instance *a = NULL, *b = NULL;
    assert_result(gy_scene_load_additive(w, scene, gy_v3(0, 0, 0), 0, NULL, &a, NULL), GY_OK);
    tick(w, 1);
    /* The instance record is the first allocation of the load after the stop. */
    gy_test_allocator rec;
    gy_test_allocator_init(&rec);
    rec.fail_at = 1;
    assert_result(gy_scene_load_replace(w, a, scene, &rec.base, &b, NULL), GY_ERR_OUT_OF_MEMORY);
    assert_null(b);
    assert_true(gy_world_physics_running(w));
    assert_int_equal(gy_world_entity_count(w), 5);
    for (uint32_t i = 0; i < a->entity_count; i++)
        assert_true(gy_entity_is_valid(w, a->entities[i]));
    tick(w, 2);
    assert_int_equal(physics_bodies(w), 4);
    gy_scene_instance_free(a);
    gy_scene_free(scene);
    destroy_world(w, &ta);
}

static void test_instance_rejects_bad_arguments(void **state)
{
    (void)state;
    gy_world *w = make_world(NULL, true);
    gy_scene *scene = load_scene(k_scene);
    gy_scene_instance *inst = (gy_scene_instance *)&inst;
    assert_result(gy_scene_instantiate(NULL, scene, gy_v3(0, 0, 0), NULL, &inst, NULL),
                  GY_ERR_INVALID_ARGUMENT);
    assert_null(inst);
    assert_result(gy_scene_instantiate(w, NULL, gy_v3(0, 0, 0), NULL, &inst, NULL),
                  GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_scene_instantiate(w, scene, gy_v3(0, NAN, 0), NULL, &inst, NULL),
                  GY_ERR_NON_FINITE);
    assert_result(gy_scene_load_additive(w, scene, gy_v3(INFINITY, 0, 0), 0, NULL, &inst, NULL),
                  GY_ERR_NON_FINITE);
    assert_int_equal(gy_world_entity_count(w), 0);
    assert_result(gy_scene_unload(w, NULL, 0), GY_OK);
    gy_world_def cfg = gy_default_world_def();
    assert_result(gy_scene_get_world_def(scene, NULL, &cfg), GY_OK);
    assert_string_equal(cfg.physics.backend, "ode");
    assert_int_equal(cfg.physics.step_hz, 60);
    assert_result(gy_scene_get_world_def(scene, "other", &cfg), GY_OK);
    assert_string_equal(cfg.physics.backend, "other");
    gy_scene_free(scene);
    destroy_world(w, NULL);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        g_scenes_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_instance_creates_entities_parents_first),
        cmocka_unit_test(test_instance_shares_obj_geometry),
        cmocka_unit_test(test_instance_offset_moves_roots_anchors_and_planes),
        cmocka_unit_test(test_instance_is_all_or_nothing_under_allocation_failure),
        cmocka_unit_test(test_additive_load_goes_through_the_barrier),
        cmocka_unit_test(test_replace_swaps_scenes_through_stop_and_start),
        cmocka_unit_test(test_replace_failure_keeps_the_previous_scene),
        cmocka_unit_test(test_instance_rejects_bad_arguments),
    };
    return cmocka_run_group_tests_name("scene_instance", tests, NULL, NULL);
}
