/* Queries with entity results (live and snapshot), joints between entities, and characters driven
 * through the World, over the real physics thread (lockstep). */
#include "test_world_fixture.h"

#define G 9.81

/* ---- queries --------------------------------------------------------------------------------- */

typedef struct query_scene {
    gy_world *w;
    gy_entity ground, near_box, far_box, sensor;
} query_scene;

static void build(query_scene *s)
{
    s->w = wfx_world(NULL);
    s->ground = wfx_ground(s->w);
    s->near_box = wfx_entity(s->w, "near", gy_v3(0, 1, 0));
    wfx_add(s->w, s->near_box, wfx_box(GY_BODY_STATIC, gy_v3(1, 1, 1)));
    s->far_box = wfx_entity(s->w, "far", gy_v3(0, 1, 5));
    wfx_desc fb = wfx_box(GY_BODY_KINEMATIC, gy_v3(1, 1, 1));
    fb.collider.def.category = 2;
    wfx_add(s->w, s->far_box, fb);
    s->sensor = wfx_entity(s->w, "sensor", gy_v3(0, 1, -5));
    wfx_add(s->w, s->sensor, wfx_box(GY_BODY_TRIGGER, gy_v3(1, 1, 1)));
    wfx_tick(s->w, 2);
}

static void test_queries_live_raycast_returns_entities(void **state)
{
    (void)state;
    query_scene s;
    build(&s);
    gy_world_hit hits[8];
    uint32_t n;
    uint64_t tick = 0;
    /* Along +z at box height: near box first. */
    assert_result(gy_world_raycast(s.w, gy_v3(0, 1, -2), gy_v3(0, 0, 10), NULL, GY_COLLECT_CLOSEST,
                                   hits, 8, &n, &tick),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_true(gy_entity_equal(hits[0].entity, s.near_box));
    assert_near(hits[0].point.z, -0.5, 1e-6);
    assert_near(hits[0].normal.z, -1.0, 1e-6);
    assert_near(hits[0].distance, 1.5, 1e-6);
    assert_int_equal(tick, 2);
    /* All: both boxes (the trigger is behind the origin and sensors are off by default). */
    assert_result(gy_world_raycast(s.w, gy_v3(0, 1, -10), gy_v3(0, 0, 20), NULL, GY_COLLECT_ALL,
                                   hits, 8, &n, NULL),
                  GY_OK);
    assert_int_equal(n, 2);
    gy_world_query_filter f = gy_default_world_query_filter();
    f.include_sensors = true;
    assert_result(gy_world_raycast(s.w, gy_v3(0, 1, -10), gy_v3(0, 0, 20), &f, GY_COLLECT_ALL, hits,
                                   8, &n, NULL),
                  GY_OK);
    assert_int_equal(n, 3);
    /* Ignore an entity, filter by category and motion. */
    f = gy_default_world_query_filter();
    f.ignore = s.near_box;
    assert_result(gy_world_raycast(s.w, gy_v3(0, 1, -2), gy_v3(0, 0, 10), &f, GY_COLLECT_CLOSEST,
                                   hits, 8, &n, NULL),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_true(gy_entity_equal(hits[0].entity, s.far_box));
    f = gy_default_world_query_filter();
    f.mask = 2;
    assert_result(gy_world_raycast(s.w, gy_v3(0, 1, -2), gy_v3(0, 0, 10), &f, GY_COLLECT_ALL, hits,
                                   8, &n, NULL),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_true(gy_entity_equal(hits[0].entity, s.far_box));
    f = gy_default_world_query_filter();
    f.motion_types = GY_MOTION_BIT(GY_MOTION_STATIC);
    assert_result(gy_world_raycast(s.w, gy_v3(0, 1, -2), gy_v3(0, 0, 10), &f, GY_COLLECT_ALL, hits,
                                   8, &n, NULL),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_true(gy_entity_equal(hits[0].entity, s.near_box));
    /* A body removed this frame is not reported, even before the physics thread drops it. */
    assert_result(gy_body_remove(s.w, s.near_box), GY_OK);
    assert_result(gy_world_raycast(s.w, gy_v3(0, 1, -2), gy_v3(0, 0, 10), NULL, GY_COLLECT_ALL,
                                   hits, 8, &n, NULL),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_true(gy_entity_equal(hits[0].entity, s.far_box));
    /* Errors. */
    assert_result(gy_world_raycast(s.w, gy_v3(NAN, 0, 0), gy_v3(0, 0, 1), NULL, GY_COLLECT_ANY,
                                   hits, 8, &n, NULL),
                  GY_ERR_NON_FINITE);
    gy_entity dead = wfx_entity(s.w, "dead", gy_v3(0, 0, 0));
    assert_result(gy_entity_destroy(s.w, dead), GY_OK);
    f.ignore = dead;
    assert_result(gy_world_raycast(s.w, gy_v3(0, 1, 0), gy_v3(0, 0, 1), &f, GY_COLLECT_ANY, hits, 8,
                                   &n, NULL),
                  GY_ERR_STALE_HANDLE);
    assert_result(gy_world_raycast(s.w, gy_v3(0, 1, 0), gy_v3(0, 0, 1), NULL, GY_COLLECT_ANY, NULL,
                                   8, &n, NULL),
                  GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_world_stop_physics(s.w), GY_OK);
    assert_result(gy_world_raycast(s.w, gy_v3(0, 1, 0), gy_v3(0, 0, 1), NULL, GY_COLLECT_ANY, hits,
                                   8, &n, NULL),
                  GY_ERR_INACTIVE);
    wfx_destroy(s.w, NULL);
}

static void test_queries_shape_cast_and_overlap(void **state)
{
    (void)state;
    query_scene s;
    build(&s);
    gy_world_hit hits[8];
    uint32_t n;
    gy_shape ball;
    memset(&ball, 0, sizeof ball);
    ball.type = GY_SHAPE_SPHERE;
    ball.radius = 0.25;
    gy_pose at = {gy_v3(0, 1, -3), gy_quat_identity()};
    assert_result(gy_world_shape_cast(s.w, &ball, at, gy_v3(0, 0, 10), NULL, GY_COLLECT_CLOSEST,
                                      hits, 8, &n, NULL),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_true(gy_entity_equal(hits[0].entity, s.near_box));
    assert_near(hits[0].distance, 2.25, 1e-4);
    at.position = gy_v3(0, 1, 5.6);
    assert_result(gy_world_overlap(s.w, &ball, at, NULL, GY_COLLECT_ALL, hits, 8, &n, NULL), GY_OK);
    assert_int_equal(n, 1);
    assert_true(gy_entity_equal(hits[0].entity, s.far_box));
    wfx_destroy(s.w, NULL);
}

static void test_queries_snapshot_matches_live(void **state)
{
    (void)state;
    query_scene s;
    build(&s);
    gy_world_hit live[8], snap[8];
    uint32_t nl, ns;
    uint64_t tl, ts;
    for (int i = -8; i <= 8; i++) {
        gy_vec3 o = gy_v3(0.1 * i, 1.2, -9), t = gy_v3(0, -0.1, 18);
        assert_result(gy_world_raycast(s.w, o, t, NULL, GY_COLLECT_CLOSEST, live, 8, &nl, &tl),
                      GY_OK);
        assert_result(
            gy_world_snapshot_raycast(s.w, o, t, NULL, GY_COLLECT_CLOSEST, snap, 8, &ns, &ts),
            GY_OK);
        assert_int_equal(nl, ns);
        assert_int_equal(tl, ts);
        for (uint32_t k = 0; k < nl; k++) {
            assert_true(gy_entity_equal(live[k].entity, snap[k].entity));
            assert_near(live[k].distance, snap[k].distance, 1e-5);
        }
    }
    gy_world_query_filter f = gy_default_world_query_filter();
    f.ignore = s.near_box;
    assert_result(gy_world_snapshot_raycast(s.w, gy_v3(0, 1, -2), gy_v3(0, 0, 10), &f,
                                            GY_COLLECT_CLOSEST, snap, 8, &ns, NULL),
                  GY_OK);
    assert_int_equal(ns, 1);
    assert_true(gy_entity_equal(snap[0].entity, s.far_box));
    gy_shape probe;
    memset(&probe, 0, sizeof probe);
    probe.type = GY_SHAPE_BOX;
    probe.box_size = gy_v3(0.5, 0.5, 12);
    gy_pose at = {gy_v3(0, 1, 0), gy_quat_identity()};
    f = gy_default_world_query_filter();
    f.include_sensors = true;
    assert_result(
        gy_world_snapshot_overlap(s.w, &probe, at, &f, GY_COLLECT_ALL, snap, 8, &ns, NULL), GY_OK);
    assert_int_equal(ns, 3); /* near, far, sensor; the ground's top is at 0 */
    wfx_destroy(s.w, NULL);
}

/* A hull made as World geometry sweeps and overlaps like the adapters' hulls: an octahedron of
 * radius 0.5 reaches 0.5 m ahead of its centre, so it meets the wall's face at z = -0.5 after
 * 2 m. */
static void test_queries_snapshot_shape_cast_with_world_hull(void **state)
{
    (void)state;
    query_scene s;
    build(&s);
    static const gy_vec3 octahedron[] = {{0.5, 0, 0},  {-0.5, 0, 0}, {0, 0.5, 0},
                                         {0, -0.5, 0}, {0, 0, 0.5},  {0, 0, -0.5}};
    gy_hull_def hd = {octahedron, 6};
    gy_geometry g;
    assert_result(gy_geometry_create_hull(s.w, &hd, &g), GY_OK);
    gy_shape hull;
    memset(&hull, 0, sizeof hull);
    hull.type = GY_SHAPE_HULL;
    hull.resource.bits = g.bits;
    gy_pose at = {gy_v3(0, 1, -3), gy_quat_identity()};
    gy_world_hit hit;
    uint32_t n;
    assert_result(gy_world_snapshot_shape_cast(s.w, &hull, at, gy_v3(0, 0, 10), NULL,
                                               GY_COLLECT_CLOSEST, &hit, 1, &n, NULL),
                  GY_OK);
    assert_int_equal(n, 1);
    assert_true(gy_entity_equal(hit.entity, s.near_box));
    assert_near(hit.distance, 2.0, 1e-5);
    assert_near(hit.normal.z, -1.0, 1e-6);
    /* The same hull overlaps the wall once its tip is past the face (1 mm in), not 1 mm short. */
    gy_pose in = {gy_v3(0, 1, -0.999), gy_quat_identity()},
            out = {gy_v3(0, 1, -1.001), in.rotation};
    assert_result(
        gy_world_snapshot_overlap(s.w, &hull, in, NULL, GY_COLLECT_ALL, &hit, 1, &n, NULL), GY_OK);
    assert_int_equal(n, 1);
    assert_true(gy_entity_equal(hit.entity, s.near_box));
    assert_result(
        gy_world_snapshot_overlap(s.w, &hull, out, NULL, GY_COLLECT_ALL, &hit, 1, &n, NULL), GY_OK);
    assert_int_equal(n, 0);
    gy_geometry_release(s.w, g);
    wfx_tick(s.w, 1);
    assert_result(gy_world_snapshot_shape_cast(s.w, &hull, at, gy_v3(0, 0, 10), NULL,
                                               GY_COLLECT_CLOSEST, &hit, 1, &n, NULL),
                  GY_ERR_STALE_HANDLE);
    assert_int_equal(n, 0);
    assert_result(
        gy_world_snapshot_overlap(s.w, &hull, in, NULL, GY_COLLECT_ALL, &hit, 1, &n, NULL),
        GY_ERR_STALE_HANDLE);
    assert_int_equal(n, 0);
    wfx_destroy(s.w, NULL);
}

/* The physics thread runs free while the game thread sweeps shapes through the snapshot: every
 * cast must see a whole publish (the static wall at its exact time of impact, the tick never going
 * back), and the casts must span several publishes. Waits on publishes with a deadline, not on a
 * sleep. */
static void test_queries_snapshot_shape_cast_while_physics_steps(void **state)
{
    (void)state;
    gy_world_def c = wfx_config(NULL, false);
    gy_world *w = wfx_world_with(&c);
    wfx_ground(w);
    gy_entity wall = wfx_entity(w, "wall", gy_v3(0, 1, 0));
    wfx_add(w, wall, wfx_box(GY_BODY_STATIC, gy_v3(1, 1, 1)));
    /* Balls falling beside the path keep the moving tree changing at every publish. */
    for (int i = 0; i < 8; i++) {
        char name[16];
        snprintf(name, sizeof name, "ball%d", i);
        wfx_ball(w, name, gy_v3(3.0 + i, 2.0 + 0.5 * i, 0));
    }
    gy_shape shapes[3];
    memset(shapes, 0, sizeof shapes);
    shapes[0].type = GY_SHAPE_SPHERE;
    shapes[0].radius = 0.25;
    shapes[1].type = GY_SHAPE_BOX;
    shapes[1].box_size = gy_v3(0.5, 0.5, 0.5);
    shapes[2].type = GY_SHAPE_CAPSULE;
    shapes[2].radius = 0.25;
    shapes[2].height = 1.0;
    /* Each reaches 0.25 m ahead of its centre along +z: the wall's face z = -0.5 is 2.25 m on. */
    const double expected = 2.25;
    uint64_t first = 0, last = 0, casts = 0, missed = 0, wrong = 0, backwards = 0, hits_from = 0;
    bool seen = false;
    double checksum = 0.0;
    double deadline = gy_test_now() + 60.0;
    while (gy_test_now() < deadline && (casts < hits_from + 3000 || last < first + 10)) {
        assert_result(gy_world_tick(w, 0.001), GY_OK);
        for (int k = 0; k < 3; k++, casts++) {
            gy_pose at = {gy_v3(0, 1, -3), gy_quat_identity()};
            gy_world_hit hit;
            uint32_t n = 0;
            uint64_t tick = 0;
            gy_result r = gy_world_snapshot_shape_cast(w, &shapes[k], at, gy_v3(0, 0, 10), NULL,
                                                       GY_COLLECT_CLOSEST, &hit, 1, &n, &tick);
            if (r == GY_ERR_BUSY)
                continue; /* nothing published yet */
            assert_result(r, GY_OK);
            if (first == 0)
                first = tick;
            backwards += tick < last;
            last = tick > last ? tick : last;
            if (n != 1) {
                missed += seen; /* the wall arrives with the first publish that holds it */
                continue;
            }
            if (!seen)
                hits_from = casts;
            seen = true;
            wrong += !gy_entity_equal(hit.entity, wall) || fabs(hit.distance - expected) > 1e-4;
            checksum += hit.distance;
        }
    }
    print_message("%llu casts over ticks %llu..%llu, checksum %.6f\n", (unsigned long long)casts,
                  (unsigned long long)first, (unsigned long long)last, checksum);
    assert_true(last >= first + 10); /* the physics thread stepped throughout */
    assert_true(seen);
    assert_int_equal(missed, 0);
    assert_int_equal(wrong, 0);
    assert_int_equal(backwards, 0);
    assert_near(checksum, expected * (double)(casts - hits_from), 1e-4 * (double)casts);
    wfx_destroy(w, NULL);
}

/* ---- joints ---------------------------------------------------------------------------------- */

static double dist(gy_vec3 a, gy_vec3 b)
{
    return gy_v3_len(gy_v3_sub(a, b));
}

static void test_joints_pendulum_survives_switch_off_and_on(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    gy_entity bob = wfx_ball(w, "bob", gy_v3(2, 10, 0));
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_BALL;
    jd.anchor = gy_v3(0, 10, 0);
    gy_joint j;
    assert_result(gy_joint_create(w, bob, gy_entity_null(), &jd, &j), GY_OK);
    gy_joint_status st;
    assert_result(gy_joint_get_status(w, j, &st), GY_OK);
    assert_int_equal(st, GY_JOINT_LIVE);
    wfx_tick(w, 45);
    gy_vec3 p = wfx_state(w, bob).pose.position;
    assert_near(dist(p, gy_v3(0, 10, 0)), 2.0, 0.02); /* swinging on its 2 m arm */
    assert_true(p.y < 9.5);
    /* Off: the joint waits; on: it is recreated at the body's anchor in its own frame. */
    assert_result(gy_body_set_active(w, bob, false), GY_OK);
    assert_result(gy_joint_get_status(w, j, &st), GY_OK);
    assert_int_equal(st, GY_JOINT_PENDING);
    assert_result(gy_body_set_active(w, bob, true), GY_OK);
    wfx_tick(w, 1);
    assert_result(gy_joint_get_status(w, j, &st), GY_OK);
    assert_int_equal(st, GY_JOINT_LIVE);
    wfx_tick(w, 60);
    assert_near(dist(wfx_state(w, bob).pose.position, gy_v3(0, 10, 0)), 2.0, 0.02);
    /* Stop/start keeps it too. */
    assert_result(gy_world_stop_physics(w), GY_OK);
    assert_result(gy_world_start_physics(w), GY_OK);
    assert_result(gy_joint_get_status(w, j, &st), GY_OK);
    assert_int_equal(st, GY_JOINT_LIVE);
    wfx_tick(w, 60);
    assert_near(dist(wfx_state(w, bob).pose.position, gy_v3(0, 10, 0)), 2.0, 0.02);
    /* Released: it falls free. */
    assert_result(gy_joint_release(w, j), GY_OK);
    assert_result(gy_joint_release(w, j), GY_ERR_STALE_HANDLE);
    wfx_tick(w, 60);
    assert_true(wfx_state(w, bob).pose.position.y < 6.0);
    wfx_destroy(w, NULL);
}

static void test_joints_break_and_validation(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    gy_entity a = wfx_ball(w, "a", gy_v3(0, 10, 0));
    gy_entity b = wfx_ball(w, "b", gy_v3(0, 8, 0));
    gy_entity wall = wfx_entity(w, "wall", gy_v3(5, 0, 0));
    wfx_add(w, wall, wfx_box(GY_BODY_STATIC, gy_v3(1, 1, 1)));
    gy_entity plain = wfx_entity(w, "plain", gy_v3(0, 0, 0));
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_FIXED;
    jd.anchor = gy_v3(0, 10, 0);
    jd.breakable = true;
    jd.break_force = 1.0; /* b's weight alone breaks it */
    gy_joint j;
    assert_result(gy_joint_create(w, a, gy_entity_null(), &jd, &j), GY_OK);
    gy_joint j2;
    jd.breakable = false;
    assert_result(gy_joint_create(w, b, a, &jd, &j2), GY_OK);
    wfx_tick(w, 10);
    gy_joint_status st;
    assert_result(gy_joint_get_status(w, j, &st), GY_OK);
    assert_int_equal(st, GY_JOINT_BROKEN);
    assert_result(gy_joint_get_status(w, j2, &st), GY_OK);
    assert_int_equal(st, GY_JOINT_LIVE);
    assert_true(wfx_state(w, a).pose.position.y < 10.0);
    /* Validation. */
    assert_result(gy_joint_create(w, plain, gy_entity_null(), &jd, &j), GY_ERR_MISUSE);
    assert_result(gy_joint_create(w, a, a, &jd, &j), GY_ERR_MISUSE);
    assert_result(gy_joint_create(w, wall, gy_entity_null(), &jd, &j), GY_ERR_INVALID_MOTION);
    jd.anchor.x = NAN;
    assert_result(gy_joint_create(w, a, gy_entity_null(), &jd, &j), GY_ERR_NON_FINITE);
    jd = gy_default_joint_def();
    jd.type = GY_JOINT_HINGE;
    jd.axis = gy_v3(0, 0, 0);
    assert_result(gy_joint_create(w, a, gy_entity_null(), &jd, &j), GY_ERR_INVALID_ARGUMENT);
    /* Destroying an entity releases its joints. */
    assert_result(gy_entity_destroy(w, b), GY_OK);
    assert_result(gy_joint_get_status(w, j2, &st), GY_ERR_STALE_HANDLE);
    gy_world_stats ws;
    gy_world_get_stats(w, &ws);
    assert_int_equal(ws.joints, 1); /* the broken one, until released */
    wfx_destroy(w, NULL);
}

/* The room for a joint's entry in the World's table of joint refs is taken before its create is
 * recorded: refused for memory, gy_joint_create reports GY_ERR_OUT_OF_MEMORY and records nothing
 * (no create answered by a release in the same batch), and the same call succeeds once memory is
 * there again. A joint whose create alone was refused (the command's copy) waits and is recorded
 * by the next tick, once. Every allocation of the call is refused in turn. */
typedef struct joint_call {
    gy_entity a, b;
    gy_joint_def def;
    gy_joint j;
} joint_call;

static gy_result create_joint(gy_world *w, void *ctx)
{
    joint_call *c = ctx;
    return gy_joint_create(w, c->a, c->b, &c->def, &c->j);
}

static void test_joints_ref_table_refused_for_memory_records_nothing(void **state)
{
    (void)state;
    uint32_t refused = 0;
    for (uint64_t k = 1; k < 10; k++) {
        gy_test_allocator ta;
        gy_test_allocator_init(&ta);
        gy_world *w = wfx_world(&ta);
        joint_call c = {.a = wfx_ball(w, "a", gy_v3(0, 10, 0)),
                        .b = wfx_ball(w, "b", gy_v3(0, 8, 0)),
                        .def = gy_default_joint_def()};
        wfx_tick(w, 2);
        c.def.type = GY_JOINT_BALL;
        c.def.anchor = gy_v3(0, 9, 0);
        if (wfx_refused_records_nothing(w, &ta, k, create_joint, &c)) {
            refused++;
            gy_world_stats ws;
            gy_world_get_stats(w, &ws);
            assert_int_equal(ws.joints, 0);
            wfx_call_records_one(w, create_joint, &c);
        }
        assert_int_equal(wfx_joint_status(w, c.j), GY_JOINT_LIVE);
        gy_backend_counters bc;
        assert_result(gy_physics_get_adapter_counters(gy_world_physics(w), &bc, NULL), GY_OK);
        assert_int_equal(bc.joints, 1);
        wfx_destroy(w, &ta);
    }
    assert_true(refused > 0);
}

/* A broken joint keeps its ref in the physics subsystem's pool until the game releases it, which
 * records the ref's release (it reaches the physics thread, where the adapter released the joint
 * as it broke, and is dropped and counted there), and destroying its entity does the same: the
 * next joint takes the index again, so joints made, broken and released over and over hold the
 * World's and the physics side's tables at their size. */
static void test_joints_broken_joint_gives_its_ref_back_when_released(void **state)
{
    (void)state;
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_world *w = wfx_world(&ta);
    gy_entity a = wfx_ball(w, "a", gy_v3(0, 10, 0));
    gy_joint_def jd = gy_default_joint_def();
    jd.type = GY_JOINT_BALL;
    jd.breakable = true;
    jd.break_force = 1.0; /* a's weight alone breaks it */
    int64_t bytes_early = 0;
    for (uint32_t cycle = 0; cycle <= 40; cycle++) {
        /* Back where it hangs from, at rest. */
        assert_result(gy_entity_set_local_position(w, a, gy_v3(0, 10, 0)), GY_OK);
        assert_result(gy_body_set_linear_velocity(w, a, gy_v3(0, 0, 0)), GY_OK);
        wfx_tick(w, 1);
        jd.anchor = gy_v3(0, 10.5, 0);
        gy_joint j;
        assert_result(gy_joint_create(w, a, gy_entity_null(), &jd, &j), GY_OK);
        uint64_t stale = wfx_physics_stats(w).commands_dropped_stale;
        for (uint32_t t = 0; t < 30 && wfx_joint_status(w, j) != GY_JOINT_BROKEN; t++)
            wfx_tick(w, 1);
        assert_int_equal(wfx_joint_status(w, j), GY_JOINT_BROKEN);
        wfx_tick(w, 2);
        assert_int_equal(wfx_physics_stats(w).commands_dropped_stale, stale);
        if (cycle == 40) {
            assert_result(gy_entity_destroy(w, a), GY_OK);
        } else {
            assert_result(gy_joint_release(w, j), GY_OK);
        }
        wfx_tick(w, 2);
        assert_int_equal(wfx_physics_stats(w).commands_dropped_stale - stale, 1);
        if (cycle == 4)
            bytes_early = ta.live_bytes;
        if (cycle == 39)
            assert_int_equal(ta.live_bytes, bytes_early);
    }
    wfx_destroy(w, &ta);
}

/* ---- characters ------------------------------------------------------------------------------ */

static gy_entity character(gy_world *w, gy_vec3 feet)
{
    gy_entity e = wfx_entity(w, "hero", gy_v3(feet.x, feet.y + 0.9, feet.z));
    gy_shape cap;
    memset(&cap, 0, sizeof cap);
    cap.type = GY_SHAPE_CAPSULE;
    cap.radius = 0.3;
    cap.height = 1.8;
    wfx_desc d = wfx_shape(GY_BODY_KINEMATIC, cap);
    d.desc.is_character = true;
    wfx_add(w, e, d);
    return e;
}

static void test_character_walks_jumps_and_lands(void **state)
{
    (void)state;
    gy_world *w = wfx_world(NULL);
    gy_entity ground = wfx_ground(w);
    gy_entity hero = character(w, gy_v3(0, 0.05, 0));
    wfx_tick(w, 10);
    gy_physics_state s = wfx_state(w, hero);
    assert_true(s.grounded);
    assert_int_equal(s.ground_state, GY_GROUND_WALKABLE);
    assert_true(gy_entity_equal(s.ground, ground));
    assert_near(s.ground_normal.y, 1.0, 1e-3);
    assert_near(s.pose.position.y, 0.9, 0.03);
    assert_result(gy_character_set_intent(w, hero, gy_v3(2, 0, 0), 0), GY_OK);
    wfx_tick(w, 60);
    s = wfx_state(w, hero);
    assert_near(s.pose.position.x, 2.0, 0.1);
    assert_near(s.linear_velocity.x, 2.0, 0.05);
    assert_true(s.grounded);
    assert_result(gy_character_set_intent(w, hero, gy_v3(0, 0, 0), 0), GY_OK);
    assert_result(gy_character_jump(w, hero, 5.0), GY_OK);
    assert_result(gy_character_jump(w, hero, 0.0), GY_ERR_INVALID_ARGUMENT);
    assert_result(gy_character_jump(w, hero, NAN), GY_ERR_NON_FINITE);
    wfx_tick(w, 10);
    s = wfx_state(w, hero);
    assert_false(s.grounded);
    assert_int_equal(s.ground_state, GY_GROUND_AIRBORNE);
    assert_true(s.pose.position.y > 1.5);
    wfx_tick(w, 90);
    s = wfx_state(w, hero);
    assert_true(s.grounded);
    assert_near(s.pose.position.y, 0.9, 0.03);
    /* Re-added as a character after removal: registered again, under its new attachment. */
    assert_result(gy_body_remove(w, hero), GY_OK);
    gy_shape cap;
    memset(&cap, 0, sizeof cap);
    cap.type = GY_SHAPE_CAPSULE;
    cap.radius = 0.3;
    cap.height = 1.8;
    wfx_desc d = wfx_shape(GY_BODY_KINEMATIC, cap);
    d.desc.is_character = true;
    wfx_add(w, hero, d);
    assert_result(gy_character_set_intent(w, hero, gy_v3(0, 0, -1), 0), GY_OK);
    wfx_tick(w, 30);
    s = wfx_state(w, hero);
    assert_true(s.grounded);
    assert_near(s.pose.position.z, -0.5, 0.05);
    /* Stop/start: still a character. */
    assert_result(gy_world_stop_physics(w), GY_OK);
    assert_result(gy_world_start_physics(w), GY_OK);
    assert_result(gy_character_set_intent(w, hero, gy_v3(0, 0, 1), 0), GY_OK);
    double z0 = wfx_state(w, hero).pose.position.z;
    wfx_tick(w, 30);
    assert_near(wfx_state(w, hero).pose.position.z, z0 + 0.5, 0.05);
    wfx_destroy(w, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queries_live_raycast_returns_entities),
        cmocka_unit_test(test_queries_shape_cast_and_overlap),
        cmocka_unit_test(test_queries_snapshot_matches_live),
        cmocka_unit_test(test_queries_snapshot_shape_cast_with_world_hull),
        cmocka_unit_test(test_queries_snapshot_shape_cast_while_physics_steps),
        cmocka_unit_test(test_joints_pendulum_survives_switch_off_and_on),
        cmocka_unit_test(test_joints_break_and_validation),
        cmocka_unit_test(test_joints_ref_table_refused_for_memory_records_nothing),
        cmocka_unit_test(test_joints_broken_joint_gives_its_ref_back_when_released),
        cmocka_unit_test(test_character_walks_jumps_and_lands),
    };
    return cmocka_run_group_tests_name("world_queries", tests, NULL, NULL);
}
