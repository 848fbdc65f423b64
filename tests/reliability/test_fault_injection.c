/* Fault injection: every failure ends in a clear error, with zero leaks and zero crashes.
 *
 *   - Adapter faults: the fault-injecting wrapper (tests/support/fault_backend.h) makes the Nth
 *     body, resource or joint create (per category, and overall) fail, swept over every call a
 *     small scene makes through gy_physics (a bootstrap at start plus creates recorded while it
 *     runs). A model of the scene predicts each object's fate — created, failed with the injected
 *     code, or failed with GY_ERR_STALE_HANDLE because something it needs failed — and the replies
 *     must match it exactly. Everything created is then released, and the adapter must hold no
 *     object when its world is destroyed.
 *   - Allocation faults: the counting allocator fails its Nth allocation, swept over the whole
 *     create → start → run → stop → destroy of the same scene, and over the scene loader.
 *
 * Arguments: the tests/fuzz folder (scene seeds and the OBJ files they name), then the adapter
 * to wrap (default "ode"; meson runs the suite once per compiled-in adapter). */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault_backend.h"
#include "gyre/math.h"
#include "gyre/physics/commands.h"
#include "gyre/scene.h"
#include "physics_state.h"

#define TIMEOUT_NS 20000000000ull

static const char *fuzz_dir;
static const char *adapter;

/* ---- a quiet logger (failures are expected here; their messages are noise) --------------------
 */

typedef struct log_count {
    uint32_t warnings, errors;
} log_count;

static void count_log(void *ctx, gy_log_level level, const char *message)
{
    (void)message;
    log_count *c = ctx;
    if (level == GY_LOG_WARN)
        __atomic_add_fetch(&c->warnings, 1, __ATOMIC_RELAXED);
    else if (level == GY_LOG_ERROR)
        __atomic_add_fetch(&c->errors, 1, __ATOMIC_RELAXED);
}

/* ---- the scene ------------------------------------------------------------------------------- */

/* Objects in the order the adapter sees them: the bootstrap (resources, bodies, joints), then one
 * batch recorded while running (resource, bodies, joint). `dep` names up to two objects that must
 * exist first (index into the object list, -1 none). */
typedef enum obj_kind { OBJ_RESOURCE, OBJ_BODY, OBJ_JOINT } obj_kind;

typedef struct scene_obj {
    obj_kind kind;
    uint32_t key; /* resource key, store index or joint key */
    int dep[2];
    bool runtime; /* recorded after start rather than bootstrapped */
} scene_obj;

enum { R1, R2, B0, B1, B2, B3, B4, J1, J2, R3, B5, B6, J3, OBJ_COUNT };

static const scene_obj k_objs[OBJ_COUNT] = {
    [R1] = {OBJ_RESOURCE, 1, {-1, -1}, false}, /* hull */
    [R2] = {OBJ_RESOURCE, 2, {-1, -1}, false}, /* mesh */
    [B0] = {OBJ_BODY, 0, {R2, -1}, false},     /* static mesh floor */
    [B1] = {OBJ_BODY, 1, {-1, -1}, false},     /* dynamic box */
    [B2] = {OBJ_BODY, 2, {R1, -1}, false},     /* dynamic hull */
    [B3] = {OBJ_BODY, 3, {-1, -1}, false},     /* dynamic sphere */
    [B4] = {OBJ_BODY, 4, {-1, -1}, false},     /* pendulum box */
    [J1] = {OBJ_JOINT, 1, {B4, -1}, false},    /* hinge to the world */
    [J2] = {OBJ_JOINT, 2, {B2, B3}, false},    /* ball */
    [R3] = {OBJ_RESOURCE, 3, {-1, -1}, true},  /* hull */
    [B5] = {OBJ_BODY, 5, {R3, -1}, true},      /* dynamic hull */
    [B6] = {OBJ_BODY, 6, {-1, -1}, true},      /* kinematic sphere */
    [J3] = {OBJ_JOINT, 3, {B5, B1}, true},     /* distance */
};

static gy_fault_kind fault_kind_of(obj_kind k)
{
    return k == OBJ_BODY ? GY_FAULT_BODY : k == OBJ_RESOURCE ? GY_FAULT_RESOURCE : GY_FAULT_JOINT;
}

static gy_physics_object_kind reply_kind_of(obj_kind k)
{
    return k == OBJ_BODY       ? GY_PHYSICS_OBJECT_BODY
           : k == OBJ_RESOURCE ? GY_PHYSICS_OBJECT_RESOURCE
                               : GY_PHYSICS_OBJECT_JOINT;
}

/* The ref a resource at slot `index` is labelled with (generation 300 + index): the one a
 * collider names it by. */
static gy_physics_resource_ref label_of_resource(uint32_t index)
{
    return (gy_physics_resource_ref){index, 300u + index};
}

/* Geometry and descriptions, kept alive for the whole run. */
typedef struct scene_data {
    gy_vec3 hull[8];
    gy_vec3 mesh_v[4];
    uint32_t mesh_i[6];
    gy_mesh_def mesh;
    gy_hull_def hull_def;
    gy_physics_resource_def res[3];
    gy_collider_def col[7];
    gy_physics_body_def body[7];
    gy_physics_joint_def joint[3];
    gy_physics_bootstrap boot;
} scene_data;

static void scene_init(scene_data *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < 8; i++)
        s->hull[i] = gy_v3(i & 1 ? 0.4 : -0.4, i & 2 ? 0.4 : -0.4, i & 4 ? 0.4 : -0.4);
    s->mesh_v[0] = gy_v3(-20, 0, -20);
    s->mesh_v[1] = gy_v3(20, 0, -20);
    s->mesh_v[2] = gy_v3(20, 0, 20);
    s->mesh_v[3] = gy_v3(-20, 0, 20);
    const uint32_t idx[6] = {0, 2, 1, 0, 3, 2};
    memcpy(s->mesh_i, idx, sizeof idx);
    s->mesh = (gy_mesh_def){s->mesh_v, 4, s->mesh_i, 6};
    s->hull_def = (gy_hull_def){s->hull, 8};
    /* Resource i and joint i take index i + 1, body i index i (the start issues them so, and
     * create_labelled makes the pools issue them so). */
    s->res[0] = (gy_physics_resource_def){NULL, &s->hull_def};
    s->res[1] = (gy_physics_resource_def){&s->mesh, NULL};
    s->res[2] = (gy_physics_resource_def){NULL, &s->hull_def};

    for (uint32_t i = 0; i < 7; i++) {
        gy_collider_def *c = &s->col[i];
        *c = gy_default_collider_def();
        c->shape.type = GY_SHAPE_BOX;
        c->shape.box_size = gy_v3(0.5, 0.5, 0.5);
        gy_physics_body_def *b = &s->body[i];
        /* named by generation 100 + i (see start_labelled, create_labelled) */
        b->def = gy_default_body_def();
        b->def.pose.position = gy_v3(1.5 * (double)i - 4.0, 1.0 + 0.5 * (double)i, 0);
        b->colliders = c;
        b->collider_count = 1;
    }
    s->body[0].def.type = GY_MOTION_STATIC;
    s->body[0].def.pose.position = gy_v3(0, 0, 0);
    s->col[0].shape.type = GY_SHAPE_MESH;
    s->col[0].shape.resource.bits = gy_physics_resource_ref_bits(label_of_resource(2));
    s->col[2].shape.type = GY_SHAPE_HULL;
    s->col[2].shape.resource.bits = gy_physics_resource_ref_bits(label_of_resource(1));
    s->col[3].shape.type = GY_SHAPE_SPHERE;
    s->col[3].shape.radius = 0.3;
    s->col[5].shape.type = GY_SHAPE_HULL;
    s->col[5].shape.resource.bits = gy_physics_resource_ref_bits(label_of_resource(3));
    s->body[6].def.type = GY_MOTION_KINEMATIC;
    s->col[6].shape.type = GY_SHAPE_SPHERE;
    s->col[6].shape.radius = 0.25;

    s->joint[0] = (gy_physics_joint_def){.a.index = 4, .a.generation = 104};
    s->joint[0].def = gy_default_joint_def();
    s->joint[0].def.type = GY_JOINT_HINGE;
    s->joint[0].def.anchor = gy_v3(2, 4.5, 0);
    s->joint[0].def.axis = gy_v3(0, 0, 1);
    s->joint[1] = (gy_physics_joint_def){
        .a.index = 2, .a.generation = 102, .b.index = 3, .b.generation = 103};
    s->joint[1].def = gy_default_joint_def();
    s->joint[1].def.type = GY_JOINT_BALL;
    s->joint[1].def.anchor = gy_v3(-0.25, 2.25, 0);
    s->joint[2] = (gy_physics_joint_def){
        .a.index = 5, .a.generation = 105, .b.index = 1, .b.generation = 101};
    s->joint[2].def = gy_default_joint_def();
    s->joint[2].def.type = GY_JOINT_DISTANCE;
    s->joint[2].def.anchor = gy_v3(-2.5, 1.5, 0);

    s->boot = (gy_physics_bootstrap){s->res, 2, s->body, 5, s->joint, 2, NULL, NULL, NULL};
}

/* The scene's bodies are named by generation 100 + index, its joints by 200 + index and its
 * resources by 300 + index: the pools' counters are moved there before each create (the start
 * issues the bootstrap's in list order: bodies 100 to 104, joints 201 and 202, resources 301 and
 * 302). */
static gy_result start_labelled(gy_physics *p, scene_data *s)
{
    p->game.ids.next = 100u;
    p->game.joint_ids.next = 201u;
    p->game.resource_ids.next = 301u;
    return gy_physics_start(p, &s->boot);
}

/* Records the create of the scene's resource, body or joint `i` with its pool's counter moved to
 * the object's label (see start_labelled); when the create is recorded, its ref carries it. */
static gy_result create_labelled(gy_physics *p, scene_data *s, obj_kind kind, uint32_t i)
{
    uint32_t label, generation = 0;
    gy_result r;
    if (kind == OBJ_RESOURCE) {
        gy_physics_resource_ref ref = {0, 0};
        label = p->game.resource_ids.next = 300u + i + 1u;
        p->game.resource_ids.free_from = i + 1u;
        r = gy_physics_record_create_resource(p, &s->res[i], &ref);
        generation = ref.generation;
    } else if (kind == OBJ_JOINT) {
        gy_physics_joint_ref ref = {0, 0};
        label = p->game.joint_ids.next = 200u + i + 1u;
        p->game.joint_ids.free_from = i + 1u;
        r = gy_physics_record_create_joint(p, &s->joint[i], &ref);
        generation = ref.generation;
    } else {
        gy_physics_body_ref ref = {0, 0};
        label = p->game.ids.next = 100u + i;
        p->game.ids.free_from = i;
        r = gy_physics_record_create_body(p, &s->body[i], &ref);
        generation = ref.generation;
    }
    if (r == GY_OK)
        assert_int_equal(generation, label);
    return r;
}

/* ---- what happened to each object ------------------------------------------------------------ */

typedef struct outcome {
    bool assigned[OBJ_COUNT];  /* BODY_ASSIGNED seen */
    int32_t failed[OBJ_COUNT]; /* CREATE_FAILED code, or GY_OK when none */
    uint32_t failed_replies[OBJ_COUNT];
    uint32_t assigned_replies[OBJ_COUNT];
    uint32_t unexpected; /* replies naming nothing in the scene */
} outcome;

static int find_obj(obj_kind kind, uint32_t key)
{
    for (int i = 0; i < OBJ_COUNT; i++)
        if (k_objs[i].kind == kind && k_objs[i].key == key)
            return i;
    return -1;
}

static void on_reply(void *ctx, const gy_reply *r)
{
    outcome *o = ctx;
    if (r->type == GY_PHYSICS_REPLY_BODY_ASSIGNED) {
        int i = find_obj(OBJ_BODY, r->key);
        if (i < 0 || gy_reply_as_body(r)->body_generation != 100u + r->key) {
            o->unexpected++;
            return;
        }
        o->assigned[i] = true;
        o->assigned_replies[i]++;
    } else if (r->type == GY_PHYSICS_REPLY_CREATE_FAILED) {
        const gy_physics_failure_reply *f = gy_reply_as_failure(r);
        obj_kind k = f->kind == GY_PHYSICS_OBJECT_BODY       ? OBJ_BODY
                     : f->kind == GY_PHYSICS_OBJECT_RESOURCE ? OBJ_RESOURCE
                                                             : OBJ_JOINT;
        int i = find_obj(k, r->key);
        if (i < 0 || reply_kind_of(k) != (gy_physics_object_kind)f->kind) {
            o->unexpected++;
            return;
        }
        o->failed[i] = f->result;
        o->failed_replies[i]++;
    }
}

/* The model: which create fails, given the wrapper's configuration. Returns the injected count. */
static uint32_t predict(const gy_fault_backend *fb, gy_result expect[OBJ_COUNT])
{
    uint64_t calls[GY_FAULT_KIND_COUNT] = {0};
    uint64_t any = 0;
    uint32_t injected = 0;
    for (int i = 0; i < OBJ_COUNT; i++) {
        const scene_obj *o = &k_objs[i];
        if ((o->dep[0] >= 0 && expect[o->dep[0]] != GY_OK) ||
            (o->dep[1] >= 0 && expect[o->dep[1]] != GY_OK)) {
            expect[i] = GY_ERR_STALE_HANDLE; /* refused before the adapter is asked */
            continue;
        }
        gy_fault_kind k = fault_kind_of(o->kind);
        uint64_t n = ++calls[k], m = ++any;
        bool fail = (fb->fail_at[k] != 0 && n == fb->fail_at[k]) ||
                    (fb->fail_any_at != 0 && m == fb->fail_any_at);
        expect[i] = fail ? fb->fail_result : GY_OK;
        injected += fail;
    }
    return injected;
}

/* ---- one run through gy_physics with the wrapper --------------------------------------------- */

static void record_runtime_creates(gy_physics *p, scene_data *s)
{
    assert_result(create_labelled(p, s, OBJ_RESOURCE, 2), GY_OK);
    assert_result(create_labelled(p, s, OBJ_BODY, 5), GY_OK);
    assert_result(create_labelled(p, s, OBJ_BODY, 6), GY_OK);
    assert_result(create_labelled(p, s, OBJ_JOINT, 2), GY_OK);
}

/* Records the release of every object that exists (joints, bodies, then resources). */
static void record_releases(gy_physics *p, const gy_result state[OBJ_COUNT])
{
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < OBJ_COUNT; i++) {
            const scene_obj *o = &k_objs[i];
            if (state[i] != GY_OK)
                continue;
            if (pass == 0 && o->kind == OBJ_JOINT)
                assert_result(gy_physics_record_release_joint(
                                  p, (gy_physics_joint_ref){o->key, 200u + o->key}),
                              GY_OK);
            if (pass == 1 && o->kind == OBJ_BODY)
                assert_result(
                    gy_physics_record_release_body(p, (gy_physics_body_ref){o->key, 100u + o->key}),
                    GY_OK);
            if (pass == 2 && o->kind == OBJ_RESOURCE)
                assert_result(gy_physics_record_release_resource(
                                  p, (gy_physics_resource_ref){o->key, 300u + o->key}),
                              GY_OK);
        }
}

/* Runs the scene with `fb` as configured and checks every object against the model. Returns the
 * number of objects the adapter still held when its world was destroyed. */
static uint32_t run_scene(gy_fault_backend *fb, const char *what)
{
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    fb->target = &ta.base;
    gy_fault_backend_reset(fb);
    log_count logs = {0};
    gy_logger logger = {count_log, &logs};
    scene_data s;
    scene_init(&s);

    gy_physics_def d = gy_default_physics_def();
    d.backend_table = &fb->table;
    d.allocator = &fb->allocator;
    d.logger = &logger;
    d.lockstep = true;
    gy_physics *p = NULL;
    assert_result(gy_physics_create(&d, &p), GY_OK);
    assert_result(start_labelled(p, &s), GY_OK);
    record_runtime_creates(p, &s);
    assert_result(gy_physics_step(p, 3, TIMEOUT_NS), GY_OK);
    outcome o;
    memset(&o, 0, sizeof o);
    gy_physics_drain_replies(p, on_reply, &o);

    gy_result expect[OBJ_COUNT];
    uint32_t injected = predict(fb, expect);
    assert_int_equal(gy_fault_backend_get(&fb->injected), injected);
    assert_int_equal(o.unexpected, 0);
    uint32_t failures = 0;
    for (int i = 0; i < OBJ_COUNT; i++) {
        const scene_obj *ob = &k_objs[i];
        if (expect[i] == GY_OK) {
            if (o.failed_replies[i] != 0)
                fail_msg("%s: object %d (key %u) should exist but failed with %s", what, i, ob->key,
                         gy_result_name((gy_result)o.failed[i]));
            if (ob->kind == OBJ_BODY)
                assert_int_equal(o.assigned_replies[i], 1);
        } else {
            /* Exactly one failure reply carrying the code, and never an assignment. */
            if (o.failed_replies[i] != 1 || o.failed[i] != (int32_t)expect[i])
                fail_msg("%s: object %d (key %u) expected one CREATE_FAILED %s, got %u (%s)", what,
                         i, ob->key, gy_result_name(expect[i]), o.failed_replies[i],
                         gy_result_name((gy_result)o.failed[i]));
            assert_int_equal(o.assigned_replies[i], 0);
            failures++;
        }
    }
    gy_physics_stats st;
    gy_physics_get_stats(p, &st);
    assert_int_equal(st.creates_failed, failures);

    /* A failed body leaves its proxy slot empty; a created one is live with its attachment. */
    const gy_proxy *const *px = NULL;
    uint32_t count = 0;
    assert_result(gy_physics_read_proxies(p, &px, &count, NULL, NULL), GY_OK);
    for (int i = 0; i < OBJ_COUNT; i++) {
        if (k_objs[i].kind != OBJ_BODY)
            continue;
        uint32_t si = k_objs[i].key;
        bool live = si < count && (gy_proxy_in(px, si)->flags & GY_PROXY_LIVE) != 0;
        assert_int_equal(live, expect[i] == GY_OK);
        if (live)
            assert_int_equal(gy_proxy_in(px, si)->generation, 100u + si);
    }

    /* Release everything that exists: the adapter must end up holding nothing. */
    record_releases(p, expect);
    assert_result(gy_physics_step(p, 2, TIMEOUT_NS), GY_OK);
    memset(&o, 0, sizeof o);
    gy_physics_drain_replies(p, on_reply, &o);
    gy_physics_get_stats(p, &st);
    assert_int_equal(st.commands_dropped_stale, 0);
    assert_int_equal(st.commands_failed, 0);
    assert_int_equal(st.bodies, 0);
    assert_result(gy_physics_stop(p), GY_OK);
    assert_false(gy_physics_running(p));
    uint32_t live = fb->live_at_destroy;
    gy_physics_destroy(p);
    assert_int_equal(gy_fault_backend_get(&fb->worlds_created), 1);
    assert_int_equal(gy_fault_backend_get(&fb->worlds_destroyed), 1);
    if (ta.live_blocks != 0)
        fail_msg("%s: %lld blocks leaked", what, (long long)ta.live_blocks);
    return live;
}

/* run_scene, and the adapter must end up holding nothing. */
static void run_adapter_faults(gy_fault_backend *fb, const char *what)
{
    uint32_t live = run_scene(fb, what);
    if (live != 0)
        fail_msg("%s: the adapter still held %u objects when its world was destroyed", what, live);
}

static gy_fault_backend *new_fault_backend(void)
{
    gy_fault_backend *fb = calloc(1, sizeof *fb);
    assert_non_null(fb);
    assert_result(gy_fault_backend_init(fb, adapter, NULL), GY_OK);
    return fb;
}

/* ---- adapter fault tests --------------------------------------------------------------------- */

static void test_fault_backend_passes_a_clean_run_through(void **state)
{
    (void)state;
    gy_fault_backend *fb = new_fault_backend();
    run_adapter_faults(fb, "clean");
    /* The scene's shape, which the sweeps below rely on. */
    assert_int_equal(fb->calls[GY_FAULT_BODY], 7);
    assert_int_equal(fb->calls[GY_FAULT_RESOURCE], 3);
    assert_int_equal(fb->calls[GY_FAULT_JOINT], 3);
    assert_int_equal(fb->calls_any, 13);
    assert_int_equal(fb->injected, 0);
    free(fb);
}

static void test_fault_backend_leak_check_reports_an_injected_leak(void **state)
{
    (void)state;
    gy_fault_backend *fb = new_fault_backend();
    fb->leak_per_body_release = true;
    /* The world is destroyed by the game thread after the physics thread has let it go: the
     * count must still be the adapter's, one object per body the scene releases (all seven). */
    uint32_t live = run_scene(fb, "leaky");
    assert_int_equal(gy_fault_backend_get(&fb->leaked), 7);
    assert_int_equal(live, 7);
    assert_int_equal(fb->max_live_at_destroy, 7);
    free(fb);
}

static void test_fault_backend_refuses_a_world_without_its_allocator(void **state)
{
    (void)state;
    gy_fault_backend *fb = new_fault_backend();
    gy_backend_world_def wd = gy_default_backend_world_def();
    gy_backend_world *w = NULL;
    assert_result(fb->table.world_create(&wd, &w), GY_ERR_INVALID_ARGUMENT);
    assert_null(w);
    free(fb);
}

/* Sweeps N over every call of one category (and one past the last: nothing fails). The injected
 * code cycles so each reply is seen to carry the adapter's own code, not a generic one. */
static void sweep_category(int category)
{
    static const gy_result codes[] = {GY_ERR_BACKEND, GY_ERR_OUT_OF_MEMORY, GY_ERR_CAPACITY,
                                      GY_ERR_INVALID_SHAPE};
    const uint64_t calls[] = {7, 3, 3, 13}; /* bodies, resources, joints, overall */
    gy_fault_backend *fb = new_fault_backend();
    for (uint64_t n = 1; n <= calls[category] + 1; n++) {
        memset(fb->fail_at, 0, sizeof fb->fail_at);
        fb->fail_any_at = 0;
        if (category < GY_FAULT_KIND_COUNT)
            fb->fail_at[category] = n;
        else
            fb->fail_any_at = n;
        fb->fail_result = codes[n % (sizeof codes / sizeof codes[0])];
        char what[64];
        snprintf(what, sizeof what, "category %d, call %llu", category, (unsigned long long)n);
        run_adapter_faults(fb, what);
        assert_int_equal(fb->injected, n <= calls[category] ? 1u : 0u);
    }
    free(fb);
}

static void test_fault_body_create_sweep_ends_in_clear_errors(void **state)
{
    (void)state;
    sweep_category(GY_FAULT_BODY);
}

static void test_fault_resource_create_sweep_ends_in_clear_errors(void **state)
{
    (void)state;
    sweep_category(GY_FAULT_RESOURCE);
}

static void test_fault_joint_create_sweep_ends_in_clear_errors(void **state)
{
    (void)state;
    sweep_category(GY_FAULT_JOINT);
}

static void test_fault_any_create_sweep_ends_in_clear_errors(void **state)
{
    (void)state;
    sweep_category(GY_FAULT_KIND_COUNT);
}

/* ---- allocation faults through gy_physics ---------------------------------------------------- */

typedef struct alloc_run {
    bool created, started;
    uint32_t record_refusals; /* record calls that returned GY_ERR_OUT_OF_MEMORY */
    uint32_t bodies_settled;  /* bodies with an assignment or a failure reply */
    uint32_t create_failures;
} alloc_run;

/* One whole create → start → run → release → stop → destroy with the allocator failing its
 * fail_at-th allocation. Every step either succeeds or returns GY_ERR_OUT_OF_MEMORY; every body
 * the physics side was asked for ends with exactly one reply; nothing leaks. */
static alloc_run run_allocation_faults(gy_test_allocator *ta, uint64_t fail_at)
{
    alloc_run run;
    memset(&run, 0, sizeof run);
    gy_test_allocator_init(ta);
    ta->fail_at = fail_at;
    gy_fault_backend fb; /* pass-through: only for its leak accounting at world_destroy */
    assert_result(gy_fault_backend_init(&fb, adapter, &ta->base), GY_OK);
    log_count logs = {0};
    gy_logger logger = {count_log, &logs};
    scene_data s;
    scene_init(&s);

    gy_physics_def d = gy_default_physics_def();
    d.backend_table = &fb.table;
    d.allocator = &fb.allocator;
    d.logger = &logger;
    d.lockstep = true;
    gy_physics *p = NULL;
    gy_result r = gy_physics_create(&d, &p);
    if (r != GY_OK) {
        assert_result(r, GY_ERR_OUT_OF_MEMORY);
        assert_null(p);
        assert_int_equal(ta->live_blocks, 0);
        return run;
    }
    run.created = true;
    r = start_labelled(p, &s);
    if (r != GY_OK) {
        /* A failed start leaves nothing running and nothing behind. */
        assert_result(r, GY_ERR_OUT_OF_MEMORY);
        assert_false(gy_physics_running(p));
        assert_int_equal(fb.worlds_created, fb.worlds_destroyed);
        gy_physics_destroy(p);
        assert_int_equal(ta->live_blocks, 0);
        return run;
    }
    run.started = true;
    bool asked[7] = {true, true, true, true, true, false, false};
    const gy_result rr[4] = {
        create_labelled(p, &s, OBJ_RESOURCE, 2),
        create_labelled(p, &s, OBJ_BODY, 5),
        create_labelled(p, &s, OBJ_BODY, 6),
        create_labelled(p, &s, OBJ_JOINT, 2),
    };
    for (int i = 0; i < 4; i++) {
        if (rr[i] == GY_OK)
            continue;
        /* A refused record leaves the slot free, so a later joint on the body, or a body on the
         * resource (body 5 is a hull on it), is stale. */
        bool stale_ok = (i == 3 || (i == 1 && rr[0] != GY_OK)) && rr[i] == GY_ERR_STALE_HANDLE;
        if (!(rr[i] == GY_ERR_OUT_OF_MEMORY || stale_ok))
            fail_msg("record %d returned %s", i, gy_result_name(rr[i]));
        run.record_refusals++;
    }
    asked[5] = rr[1] == GY_OK;
    asked[6] = rr[2] == GY_OK;
    r = gy_physics_step(p, 3, TIMEOUT_NS);
    if (r == GY_ERR_OUT_OF_MEMORY) /* publish could not stage: the batch stays open, try again */
        r = gy_physics_step(p, 3, TIMEOUT_NS);
    assert_result(r, GY_OK);
    outcome o;
    memset(&o, 0, sizeof o);
    gy_physics_drain_replies(p, on_reply, &o);
    assert_int_equal(o.unexpected, 0);
    gy_result state[OBJ_COUNT];
    for (int i = 0; i < OBJ_COUNT; i++) {
        const scene_obj *ob = &k_objs[i];
        state[i] = o.failed_replies[i] ? (gy_result)o.failed[i] : GY_OK;
        if (o.failed_replies[i] > 1 || (o.failed_replies[i] && o.assigned_replies[i]))
            fail_msg("object %d: %u failures, %u assignments", i, o.failed_replies[i],
                     o.assigned_replies[i]);
        if (o.failed_replies[i]) {
            run.create_failures++;
            if (state[i] != GY_ERR_OUT_OF_MEMORY && state[i] != GY_ERR_STALE_HANDLE)
                fail_msg("object %d failed with %s", i, gy_result_name(state[i]));
        }
        if (ob->kind == OBJ_BODY) {
            if (!asked[ob->key]) {
                state[i] = GY_ERR_OUT_OF_MEMORY; /* never recorded: nothing to release */
                assert_int_equal(o.failed_replies[i] + o.assigned_replies[i], 0);
                continue;
            }
            /* Nothing silent: every body asked for is either assigned or reported failed. */
            if (o.failed_replies[i] + o.assigned_replies[i] != 1)
                fail_msg("body %u: no reply (allocation %llu failed)", ob->key,
                         (unsigned long long)fail_at);
            run.bodies_settled++;
        } else if (ob->runtime && rr[ob->kind == OBJ_RESOURCE ? 0 : 3] != GY_OK) {
            state[i] = GY_ERR_OUT_OF_MEMORY;
        }
    }

    /* Release what exists. A release refused for memory is an error the caller sees; then the
     * world still holds that object at stop, which world_destroy frees (not a leak). */
    bool all_released = true;
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < OBJ_COUNT; i++) {
            const scene_obj *ob = &k_objs[i];
            if (state[i] != GY_OK)
                continue;
            gy_result x = GY_OK;
            if (pass == 0 && ob->kind == OBJ_JOINT)
                x = gy_physics_record_release_joint(
                    p, (gy_physics_joint_ref){ob->key, 200u + ob->key});
            else if (pass == 1 && ob->kind == OBJ_BODY)
                x = gy_physics_record_release_body(p,
                                                   (gy_physics_body_ref){ob->key, 100u + ob->key});
            else if (pass == 2 && ob->kind == OBJ_RESOURCE)
                x = gy_physics_record_release_resource(
                    p, (gy_physics_resource_ref){ob->key, 300u + ob->key});
            if (x != GY_OK) {
                assert_result(x, GY_ERR_OUT_OF_MEMORY);
                all_released = false;
            }
        }
    r = gy_physics_step(p, 2, TIMEOUT_NS);
    if (r == GY_ERR_OUT_OF_MEMORY)
        r = gy_physics_step(p, 2, TIMEOUT_NS);
    assert_result(r, GY_OK);
    gy_physics_drain_replies(p, on_reply, &o);
    assert_result(gy_physics_stop(p), GY_OK);
    if (all_released && fb.live_at_destroy != 0)
        fail_msg("allocation %llu failed: adapter held %u objects at destroy",
                 (unsigned long long)fail_at, fb.live_at_destroy);
    gy_physics_destroy(p);
    if (ta->live_blocks != 0)
        fail_msg("allocation %llu failed: %lld blocks leaked", (unsigned long long)fail_at,
                 (long long)ta->live_blocks);
    return run;
}

static void test_fault_allocation_sweep_over_physics_lifecycle(void **state)
{
    (void)state;
    gy_test_allocator ta;
    alloc_run clean = run_allocation_faults(&ta, 0);
    assert_true(clean.started);
    assert_int_equal(clean.create_failures, 0);
    assert_int_equal(clean.bodies_settled, 7);
    uint64_t total = ta.calls;
    assert_true(total > 10);
    uint32_t create_fail = 0, start_fail = 0, ran = 0;
    for (uint64_t n = 1; n <= total + 2; n++) {
        alloc_run run = run_allocation_faults(&ta, n);
        create_fail += !run.created;
        start_fail += run.created && !run.started;
        ran += run.started;
    }
    print_message("allocation sweep: %llu allocations per run; create failed %u, start failed "
                  "%u, ran %u\n",
                  (unsigned long long)total, create_fail, start_fail, ran);
    /* Each phase was reached by the sweep (the numbers prove the sweep covered all three). */
    assert_true(create_fail > 0);
    assert_true(start_fail > 0);
    assert_true(ran > 0);
}

/* ---- allocation faults in the scene loader --------------------------------------------------- */

static char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1u);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

/* Loads `file` (a seed in tests/fuzz/corpus/scene) with allocation N failing, for every N the
 * load makes: the result is `expect` or GY_ERR_OUT_OF_MEMORY (then no scene and no error list),
 * and nothing leaks either way. */
static void sweep_scene_load(const char *file, gy_result expect)
{
    char path[4096], data_dir[4096];
    snprintf(path, sizeof path, "%s/corpus/scene/%s", fuzz_dir, file);
    snprintf(data_dir, sizeof data_dir, "%s/data", fuzz_dir);
    size_t len = 0;
    char *text = read_text(path, &len);
    gy_test_allocator ta;
    uint64_t total = 0;
    uint32_t oom = 0;
    for (uint64_t n = 0; n == 0 || n <= total + 1; n++) {
        gy_test_allocator_init(&ta);
        ta.fail_at = n;
        gy_scene *scene = NULL;
        gy_scene_errors *errors = NULL;
        gy_result r = gy_scene_load_string(text, len, data_dir, &ta.base, &scene, &errors);
        if (n == 0) {
            assert_result(r, expect);
            total = ta.calls;
        } else if (r == GY_ERR_OUT_OF_MEMORY) {
            assert_null(scene);
            assert_null(errors);
            oom++;
        } else {
            if (r != expect)
                fail_msg("%s, allocation %llu failing: %s instead of %s or out of memory", file,
                         (unsigned long long)n, gy_result_name(r), gy_result_name(expect));
        }
        if (r == GY_OK) {
            assert_non_null(scene);
            assert_null(errors);
        } else if (r != GY_ERR_OUT_OF_MEMORY) {
            assert_null(scene);
            assert_non_null(errors);
            assert_true(errors->count > 0);
        }
        gy_scene_free(scene);
        gy_scene_errors_free(errors);
        if (ta.live_blocks != 0)
            fail_msg("%s, allocation %llu failing: %lld blocks leaked", file, (unsigned long long)n,
                     (long long)ta.live_blocks);
    }
    free(text);
    print_message("%s: %llu allocations, %u sweeps ended out of memory\n", file,
                  (unsigned long long)total, oom);
    assert_true(total > 0);
    assert_true(oom > 0);
}

static void test_fault_scene_load_sweep_valid_scene(void **state)
{
    (void)state;
    sweep_scene_load("everything.json", GY_OK);
}

static void test_fault_scene_load_sweep_scene_with_obj_files(void **state)
{
    (void)state;
    sweep_scene_load("geometry.json", GY_OK);
}

static void test_fault_scene_load_sweep_invalid_scene(void **state)
{
    (void)state;
    sweep_scene_load("bad_references.json", GY_ERR_PARSE);
}

int main(int argc, char **argv)
{
    fuzz_dir = argc > 1 ? argv[1] : "tests/fuzz";
    adapter = argc > 2 ? argv[2] : "ode";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fault_backend_passes_a_clean_run_through),
        cmocka_unit_test(test_fault_backend_leak_check_reports_an_injected_leak),
        cmocka_unit_test(test_fault_backend_refuses_a_world_without_its_allocator),
        cmocka_unit_test(test_fault_body_create_sweep_ends_in_clear_errors),
        cmocka_unit_test(test_fault_resource_create_sweep_ends_in_clear_errors),
        cmocka_unit_test(test_fault_joint_create_sweep_ends_in_clear_errors),
        cmocka_unit_test(test_fault_any_create_sweep_ends_in_clear_errors),
        cmocka_unit_test(test_fault_allocation_sweep_over_physics_lifecycle),
        cmocka_unit_test(test_fault_scene_load_sweep_valid_scene),
        cmocka_unit_test(test_fault_scene_load_sweep_scene_with_obj_files),
        cmocka_unit_test(test_fault_scene_load_sweep_invalid_scene),
    };
    return cmocka_run_group_tests_name("fault_injection", tests, NULL, NULL);
}
