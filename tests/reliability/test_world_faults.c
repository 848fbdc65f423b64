/* Fault injection at the World level, the way a game uses Gyre: a scene loaded from JSON,
 * instantiated into a World (before the physics start, or additively into a running World) and
 * ticked in lockstep, with the fault-injecting adapter (tests/support/fault_backend.h) plugged in
 * through the World's physics definition and every allocation going through a counting allocator.
 *
 *   - Adapter refusals: for each category (bodies, resources, joints) the Nth create fails, for
 *     every N the scene makes (until a run injects nothing). A model of the scene predicts every
 *     object's fate — created, failed with the injected code, or failed with GY_ERR_STALE_HANDLE
 *     because a resource or body it needs failed (the subsystem then never asks the adapter) — and
 *     the World must show exactly that on the entity: the component marked failed with the error,
 *     a warning naming the entity, the joint FAILED, the geometry counted failed; every other body
 *     created. Teardown must leave the adapter holding nothing and the allocator empty.
 *   - Allocation failures: the counting allocator fails its Nth allocation, for every N a clean
 *     run makes, over scene load → World create → instantiate → physics start → ticks →
 *     teardown, and over an additive load into a running World. Every failure ends in
 *     GY_ERR_OUT_OF_MEMORY with nothing created (the World as it was), and nothing leaks.
 *
 * Arguments: the scenes folder (sample scenes and the OBJ files they name), then the adapter to
 * wrap (default "ode"; meson runs the suite once per compiled-in adapter). */
#include "test_support.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault_backend.h"
#include "test_scene.h"
#include "gyre/gyre.h"

#define TIMEOUT_NS 20000000000ull /* per lockstep tick: generous for TSan on a shared machine */
#define DT         (1.0 / 60.0)
#define MAX_OBJS   64
#define MAX_DEPS   8

static const char *scenes_dir;
static const char *adapter;

/* ---- a logger that keeps what it was told (the World logs from two threads) ------------------ */

typedef struct log_capture {
    pthread_mutex_t mu;
    char text[16384];
    size_t len;
    uint32_t warnings, errors;
} log_capture;

static void capture_log(void *ctx, gy_log_level level, const char *message)
{
    log_capture *c = ctx;
    pthread_mutex_lock(&c->mu);
    if (level == GY_LOG_WARN)
        c->warnings++;
    else if (level == GY_LOG_ERROR)
        c->errors++;
    size_t n = strlen(message);
    if (c->len + n + 2u < sizeof c->text) {
        memcpy(c->text + c->len, message, n);
        c->len += n;
        c->text[c->len++] = '\n';
        c->text[c->len] = '\0';
    }
    pthread_mutex_unlock(&c->mu);
}

static void log_init(log_capture *c, gy_logger *logger)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    logger->log = capture_log;
    logger->ctx = c;
}

static bool log_has(log_capture *c, const char *a, const char *b)
{
    /* A line holding both pieces. */
    pthread_mutex_lock(&c->mu);
    bool found = false;
    for (const char *line = c->text; !found && *line != '\0';) {
        const char *end = strchr(line, '\n');
        size_t n = end != NULL ? (size_t)(end - line) : strlen(line);
        char buf[512];
        if (n >= sizeof buf)
            n = sizeof buf - 1u;
        memcpy(buf, line, n);
        buf[n] = '\0';
        found = strstr(buf, a) != NULL && (b == NULL || strstr(buf, b) != NULL);
        line = end != NULL ? end + 1 : line + n;
    }
    pthread_mutex_unlock(&c->mu);
    return found;
}

/* ---- scenes ---------------------------------------------------------------------------------- */

/* Every kind of object the World turns into adapter creates: an inline mesh, a hull from an OBJ
 * file shared by two bodies, a kinematic child listed before its static parent, an inactive
 * component (no body), an entity without physics, and joints to the world and between bodies. */
static const char *const k_scene =
    "{'format':'gyre.scene','version':1,'name':'world faults','entities':["
    "{'name':'floor','components':{'physics':{'body_type':'Static','shape':'Mesh',"
    " 'vertices':[[-20,0,-20],[20,0,-20],[20,0,20],[-20,0,20]],'indices':[0,2,1,0,3,2]}}},"
    "{'name':'crate','transform':{'position':[0,0.5,0]},"
    " 'components':{'physics':{'shape':'Box','box_size':[1,1,1],'mass':2}}},"
    "{'name':'rock_a','transform':{'position':[3,2,0]},"
    " 'components':{'physics':{'shape':'Hull','collision':'rock.obj'}}},"
    "{'name':'rock_b','transform':{'position':[6,2,0]},"
    " 'components':{'physics':{'shape':'Hull','collision':'rock.obj'}}},"
    "{'name':'lamp','parent':'post','transform':{'position':[0,2.5,0]},"
    " 'components':{'physics':{'body_type':'Kinematic','shape':'Sphere','radius':0.2}}},"
    "{'name':'post','transform':{'position':[-4,2,0]},"
    " 'components':{'physics':{'body_type':'Static','shape':'Box','box_size':[0.2,4,0.2]}}},"
    "{'name':'bob','transform':{'position':[-2,3,0]},"
    " 'components':{'physics':{'shape':'Sphere','radius':0.2}}},"
    "{'name':'sleeper','transform':{'position':[0,1,5]},"
    " 'components':{'physics':{'is_active':false,'shape':'Box','box_size':[1,1,1]}}},"
    "{'name':'marker','transform':{'position':[0,5,0]}}],"
    "'joints':["
    "{'type':'Hinge','a':'bob','anchor':[-2,4,0],'axis':[0,0,1]},"
    "{'type':'Ball','a':'rock_b','b':'rock_a','anchor':[4.5,2,0]},"
    "{'type':'Distance','a':'crate','b':'bob','anchor':[0,0.5,0]}]}";

/* Loaded additively into a running World: a hull body jointed to the world, a static slab. */
static const char *const k_extra =
    "{'format':'gyre.scene','version':1,'name':'extra','entities':["
    "{'name':'x_slab','components':{'physics':{'body_type':'Static','shape':'Box',"
    " 'box_size':[4,1,4]}}},"
    "{'name':'x_rock','transform':{'position':[0,2,0]},"
    " 'components':{'physics':{'shape':'Hull','collision':'rock.obj'}}},"
    "{'name':'x_ball','parent':'x_slab','transform':{'position':[1,1,1]}}],"
    "'joints':[{'type':'Ball','a':'x_rock','anchor':[0,3,0]}]}";

/* ---- the model: the adapter creates a scene makes, in the order the adapter sees them --------- */

typedef enum obj_kind { OBJ_RESOURCE = 0, OBJ_BODY = 1, OBJ_JOINT = 2 } obj_kind;

typedef struct model_obj {
    obj_kind kind;
    int32_t index; /* scene entity (body), scene joint (joint), resource ordinal (resource) */
    int32_t deps[MAX_DEPS];
    uint32_t dep_count;
} model_obj;

typedef struct model {
    model_obj objs[MAX_OBJS];
    uint32_t count;
    uint32_t per_kind[3];
    /* resource identity, as the loader shares it: shape type and array pointers */
    struct {
        gy_shape_type type;
        const gy_vec3 *vertices;
        const uint32_t *indices;
    } res[MAX_OBJS];
    uint32_t res_count;
} model;

static gy_fault_kind fault_kind_of(obj_kind k)
{
    return k == OBJ_BODY ? GY_FAULT_BODY : k == OBJ_RESOURCE ? GY_FAULT_RESOURCE : GY_FAULT_JOINT;
}

static uint32_t push_obj(model *m, obj_kind kind, int32_t index)
{
    assert_true(m->count < MAX_OBJS);
    model_obj *o = &m->objs[m->count];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->index = index;
    m->per_kind[kind]++;
    return m->count++;
}

static void add_dep(model_obj *o, uint32_t dep)
{
    for (uint32_t i = 0; i < o->dep_count; i++)
        if (o->deps[i] == (int32_t)dep)
            return;
    assert_true(o->dep_count < MAX_DEPS);
    o->deps[o->dep_count++] = (int32_t)dep;
}

static bool entity_active_h(const gy_scene *s, int32_t i)
{
    for (; i >= 0; i = s->entities[i].parent)
        if (!s->entities[i].active)
            return false;
    return true;
}

/* The creates in the order a load into a running World records them: per physics entity in
 * scene order, its new geometry then its body; then the joints in scene order. A start from a
 * stopped World bootstraps resources, then bodies, then joints, each in that same order
 * (`bootstrap` reorders the list so). Bodies that are not effective make no create, nor do
 * joints on them (they wait). */
static void build_model(const gy_scene *s, bool bootstrap, model *m)
{
    memset(m, 0, sizeof *m);
    int32_t body_obj[256];
    assert_true(s->entity_count <= 256);
    for (uint32_t i = 0; i < s->entity_count; i++) {
        body_obj[i] = -1;
        const gy_scene_physics *p = s->entities[i].physics;
        if (p == NULL || !p->is_active || !entity_active_h(s, (int32_t)i))
            continue;
        int32_t deps[MAX_DEPS];
        uint32_t dep_count = 0;
        for (uint32_t c = 0; c < p->collider_count; c++) {
            const gy_scene_collider *sc = &p->colliders[c];
            gy_shape_type t = sc->def.shape.type;
            if ((t != GY_SHAPE_HULL && t != GY_SHAPE_MESH) || sc->vertices == NULL)
                continue;
            uint32_t r = 0;
            while (r < m->res_count && !(m->res[r].type == t && m->res[r].vertices == sc->vertices &&
                                         m->res[r].indices == sc->indices))
                r++;
            int32_t obj = -1;
            if (r == m->res_count) {
                m->res[r].type = t;
                m->res[r].vertices = sc->vertices;
                m->res[r].indices = sc->indices;
                m->res_count++;
                obj = (int32_t)push_obj(m, OBJ_RESOURCE, (int32_t)r);
            } else {
                for (uint32_t k = 0; k < m->count; k++)
                    if (m->objs[k].kind == OBJ_RESOURCE && m->objs[k].index == (int32_t)r)
                        obj = (int32_t)k;
            }
            assert_true(dep_count < MAX_DEPS);
            deps[dep_count++] = obj;
        }
        uint32_t b = push_obj(m, OBJ_BODY, (int32_t)i);
        for (uint32_t d = 0; d < dep_count; d++)
            add_dep(&m->objs[b], (uint32_t)deps[d]);
        body_obj[i] = (int32_t)b;
    }
    for (uint32_t j = 0; j < s->joint_count; j++) {
        const gy_scene_joint *sj = &s->joints[j];
        if (body_obj[sj->a] < 0 || (sj->b >= 0 && body_obj[sj->b] < 0))
            continue;
        uint32_t o = push_obj(m, OBJ_JOINT, (int32_t)j);
        add_dep(&m->objs[o], (uint32_t)body_obj[sj->a]);
        if (sj->b >= 0)
            add_dep(&m->objs[o], (uint32_t)body_obj[sj->b]);
    }
    if (!bootstrap)
        return;
    /* Stable partition by kind, dependencies renumbered. */
    model_obj sorted[MAX_OBJS];
    uint32_t where[MAX_OBJS];
    uint32_t n = 0;
    for (int kind = OBJ_RESOURCE; kind <= OBJ_JOINT; kind++)
        for (uint32_t k = 0; k < m->count; k++)
            if ((int)m->objs[k].kind == kind) {
                where[k] = n;
                sorted[n++] = m->objs[k];
            }
    for (uint32_t k = 0; k < n; k++)
        for (uint32_t d = 0; d < sorted[k].dep_count; d++)
            sorted[k].deps[d] = (int32_t)where[sorted[k].deps[d]];
    memcpy(m->objs, sorted, (size_t)n * sizeof *sorted);
}

/* Each object's fate under the wrapper's configuration; returns the failures injected. */
static uint32_t predict(const model *m, const gy_fault_backend *fb, gy_result *expect)
{
    uint64_t calls[GY_FAULT_KIND_COUNT] = {0};
    uint64_t any = 0;
    uint32_t injected = 0;
    for (uint32_t i = 0; i < m->count; i++) {
        const model_obj *o = &m->objs[i];
        bool dep_failed = false;
        for (uint32_t d = 0; d < o->dep_count; d++)
            dep_failed = dep_failed || expect[o->deps[d]] != GY_OK;
        if (dep_failed) {
            expect[i] = GY_ERR_STALE_HANDLE; /* refused before the adapter is asked */
            continue;
        }
        gy_fault_kind k = fault_kind_of(o->kind);
        uint64_t n = ++calls[k], a = ++any;
        bool fail = (fb->fail_at[k] != 0 && n == fb->fail_at[k]) ||
                    (fb->fail_any_at != 0 && a == fb->fail_any_at);
        expect[i] = fail ? fb->fail_result : GY_OK;
        injected += fail;
    }
    return injected;
}

/* ---- World setup ----------------------------------------------------------------------------- */

static gy_world_def world_config(const gy_scene *scene, gy_fault_backend *fb,
                                 const gy_logger *logger, bool start_stopped)
{
    gy_world_def c = gy_default_world_def();
    assert_result(gy_scene_get_world_def(scene, adapter, &c), GY_OK);
    c.physics.backend_table = &fb->table;
    c.physics.lockstep = true;
    c.allocator = &fb->allocator; /* how the wrapper finds itself; forwards to fb->target */
    c.logger = logger;
    c.step_timeout_ns = TIMEOUT_NS;
    c.start_stopped = start_stopped;
    return c;
}

static uint32_t physics_bodies(gy_world *w)
{
    gy_physics_stats s;
    gy_physics_get_stats(gy_world_physics(w), &s);
    return s.bodies;
}

/* ---- adapter refusals ------------------------------------------------------------------------ */

typedef struct sweep_totals {
    uint32_t runs;
    uint32_t injected[3]; /* per category */
    uint32_t stale;       /* objects refused because something they need failed */
} sweep_totals;

/* Instantiates `scene` with `fb` as configured (bootstrap: into a stopped World, then start;
 * else additively into a running one), ticks, and checks every object against the model. */
static uint32_t run_refusals(const gy_scene *scene, bool bootstrap, gy_fault_backend *fb,
                             const char *what, sweep_totals *totals)
{
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    fb->target = &ta.base;
    gy_fault_backend_reset(fb);
    log_capture logs;
    gy_logger logger;
    log_init(&logs, &logger);
    model m;
    build_model(scene, bootstrap, &m);

    gy_world_def cfg = world_config(scene, fb, &logger, bootstrap);
    gy_world *w = NULL;
    assert_result(gy_world_create(&cfg, &w), GY_OK);
    gy_scene_instance *inst = NULL;
    if (bootstrap) {
        assert_result(gy_scene_instantiate(w, scene, gy_v3(0, 0, 0), &ta.base, &inst, NULL),
                      GY_OK);
        assert_result(gy_world_start_physics(w), GY_OK);
    } else {
        assert_result(gy_scene_load_additive(w, scene, gy_v3(0, 0, 0), 0, &ta.base, &inst, NULL),
                      GY_OK);
    }
    for (int i = 0; i < 4; i++)
        assert_result(gy_world_tick(w, DT), GY_OK);

    gy_result expect[MAX_OBJS];
    uint32_t injected = predict(&m, fb, expect);
    if (gy_fault_backend_get(&fb->injected) != injected)
        fail_msg("%s: %llu failures injected, the model expected %u", what,
                 (unsigned long long)gy_fault_backend_get(&fb->injected), injected);

    uint32_t failed_bodies = 0, failed_res = 0, failures = 0;
    for (uint32_t i = 0; i < m.count; i++) {
        const model_obj *o = &m.objs[i];
        if (expect[i] != GY_OK) {
            failures++;
            if (expect[i] == GY_ERR_STALE_HANDLE)
                totals->stale++;
            else
                totals->injected[o->kind]++;
        }
        if (o->kind == OBJ_BODY) {
            gy_entity e = inst->entities[o->index];
            const char *name = scene->entities[o->index].name;
            gy_physics_state st;
            assert_result(gy_body_get_state(w, e, &st), GY_OK);
            if (expect[i] == GY_OK) {
                if (st.failed || !st.has_body)
                    fail_msg("%s: '%s' should have its body (failed %d: %s, has_body %d)", what,
                             name, st.failed, gy_result_name(st.error), st.has_body);
                assert_result(st.error, GY_OK);
            } else {
                if (!st.failed || st.error != expect[i] || st.has_body)
                    fail_msg("%s: '%s' should be failed with %s (failed %d: %s, has_body %d)",
                             what, name, gy_result_name(expect[i]), st.failed,
                             gy_result_name(st.error), st.has_body);
                char quoted[128];
                snprintf(quoted, sizeof quoted, "'%s'", name);
                if (!log_has(&logs, quoted, "body create failed"))
                    fail_msg("%s: no warning names '%s'", what, name);
                /* Writes to a failed body are refused, never silently dropped. */
                if (st.motion != GY_MOTION_STATIC)
                    assert_result(gy_body_set_linear_velocity(w, e, gy_v3(0, 0, 0)),
                                  GY_ERR_INACTIVE);
                failed_bodies++;
            }
        } else if (o->kind == OBJ_JOINT) {
            gy_joint_status js;
            assert_result(gy_joint_get_status(w, inst->joints[o->index], &js), GY_OK);
            const gy_scene_joint *sj = &scene->joints[o->index];
            if (js != (expect[i] == GY_OK ? GY_JOINT_LIVE : GY_JOINT_FAILED))
                fail_msg("%s: joint %d (on '%s') status %d, expected %s", what, o->index,
                         scene->entities[sj->a].name, (int)js, gy_result_name(expect[i]));
            if (expect[i] != GY_OK) {
                char quoted[128];
                snprintf(quoted, sizeof quoted, "'%s'", scene->entities[sj->a].name);
                if (!log_has(&logs, "refused a joint", quoted))
                    fail_msg("%s: no warning names the joint on '%s'", what,
                             scene->entities[sj->a].name);
            }
        } else if (expect[i] != GY_OK) {
            failed_res++;
            if (!log_has(&logs, "refused a runtime", NULL))
                fail_msg("%s: the refused resource was not reported", what);
        }
    }
    /* Bodies the model does not know (not effective) have none and are not failed. */
    for (uint32_t e = 0; e < scene->entity_count; e++) {
        bool modelled = false;
        for (uint32_t i = 0; i < m.count; i++)
            modelled = modelled || (m.objs[i].kind == OBJ_BODY && m.objs[i].index == (int32_t)e);
        if (modelled || scene->entities[e].physics == NULL)
            continue;
        gy_physics_state st;
        assert_result(gy_body_get_state(w, inst->entities[e], &st), GY_OK);
        assert_false(st.failed);
        assert_false(st.has_body);
    }
    gy_world_stats ws;
    gy_world_get_stats(w, &ws);
    assert_int_equal(ws.bodies_failed, failed_bodies);
    gy_geometry_stats gs;
    gy_geometry_get_stats(w, &gs);
    assert_int_equal(gs.failed, failed_res);
    assert_int_equal(gs.resident, m.res_count);
    gy_physics_stats ps;
    gy_physics_get_stats(gy_world_physics(w), &ps);
    assert_int_equal(ps.creates_failed, failures);
    assert_int_equal(ps.bodies, m.per_kind[OBJ_BODY] - failed_bodies);

    /* The scene keeps running around the hole, then goes. */
    for (int i = 0; i < 2; i++)
        assert_result(gy_world_tick(w, DT), GY_OK);
    gy_scene_instance_free(inst);
    gy_world_teardown td;
    assert_result(gy_world_destroy(w, &td), GY_OK);
    assert_true(td.adapter_checked);
    if (td.adapter_live_objects != 0 || fb->live_at_destroy != 0)
        fail_msg("%s: the adapter still held %u objects after teardown (%u at world destroy)",
                 what, td.adapter_live_objects, fb->live_at_destroy);
    assert_int_equal(gy_fault_backend_get(&fb->worlds_created), 1);
    assert_int_equal(gy_fault_backend_get(&fb->worlds_destroyed), 1);
    if (ta.live_blocks != 0 || ta.live_bytes != 0)
        fail_msg("%s: %lld blocks (%lld bytes) leaked", what, (long long)ta.live_blocks,
                 (long long)ta.live_bytes);
    pthread_mutex_destroy(&logs.mu);
    totals->runs++;
    return injected;
}

/* For each category, N = 1, 2, ... until a run injects nothing. The code cycles so the error on
 * the component is seen to be the adapter's own. */
static void sweep_refusals(gy_scene *scene, const char *label, bool bootstrap)
{
    static const gy_result codes[] = {GY_ERR_BACKEND, GY_ERR_OUT_OF_MEMORY, GY_ERR_CAPACITY,
                                      GY_ERR_INVALID_SHAPE};
    gy_fault_backend *fb = calloc(1, sizeof *fb);
    assert_non_null(fb);
    assert_result(gy_fault_backend_init(fb, adapter, NULL), GY_OK);
    sweep_totals t;
    memset(&t, 0, sizeof t);
    model m;
    build_model(scene, bootstrap, &m);
    for (int kind = 0; kind < GY_FAULT_KIND_COUNT; kind++) {
        for (uint64_t n = 1;; n++) {
            memset(fb->fail_at, 0, sizeof fb->fail_at);
            fb->fail_any_at = 0;
            fb->fail_at[kind] = n;
            fb->fail_result = codes[n % (sizeof codes / sizeof codes[0])];
            char what[128];
            snprintf(what, sizeof what, "%s (%s), category %d, create %llu", label,
                     bootstrap ? "bootstrap" : "additive", kind, (unsigned long long)n);
            uint32_t injected = run_refusals(scene, bootstrap, fb, what, &t);
            if (injected == 0)
                break;
        }
    }
    /* Every create of the scene was made to fail once. */
    assert_int_equal(t.injected[OBJ_RESOURCE], m.per_kind[OBJ_RESOURCE]);
    assert_int_equal(t.injected[OBJ_BODY], m.per_kind[OBJ_BODY]);
    assert_int_equal(t.injected[OBJ_JOINT], m.per_kind[OBJ_JOINT]);
    print_message("%s (%s): %u runs; refused %u resources, %u bodies, %u joints; %u dependants "
                  "failed stale\n",
                  label, bootstrap ? "bootstrap" : "additive", t.runs, t.injected[OBJ_RESOURCE],
                  t.injected[OBJ_BODY], t.injected[OBJ_JOINT], t.stale);
    free(fb);
}

static void test_world_refusals_test_scene_bootstrap(void **state)
{
    (void)state;
    gy_scene *s = gy_test_load_scene(k_scene, scenes_dir, NULL, NULL);
    model m;
    build_model(s, true, &m);
    /* The scene's shape, which the sweep relies on: mesh + shared hull, 7 effective bodies. */
    assert_int_equal(m.per_kind[OBJ_RESOURCE], 2);
    assert_int_equal(m.per_kind[OBJ_BODY], 7);
    assert_int_equal(m.per_kind[OBJ_JOINT], 3);
    sweep_refusals(s, "test scene", true);
    gy_scene_free(s);
}

/* The teardown's leak check, shown failing: the wrapper leaves one adapter object behind per
 * body release, and both the World's report and the count at world destroy must say so. */
static void test_world_teardown_reports_an_injected_leak(void **state)
{
    (void)state;
    gy_scene *s = gy_test_load_scene(k_scene, scenes_dir, NULL, NULL);
    model m;
    build_model(s, true, &m);
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    gy_fault_backend *fb = calloc(1, sizeof *fb);
    assert_non_null(fb);
    assert_result(gy_fault_backend_init(fb, adapter, &ta.base), GY_OK);
    fb->leak_per_body_release = true;
    log_capture logs;
    gy_logger logger;
    log_init(&logs, &logger);
    gy_world_def cfg = world_config(s, fb, &logger, true);
    gy_world *w = NULL;
    assert_result(gy_world_create(&cfg, &w), GY_OK);
    gy_scene_instance *inst = NULL;
    assert_result(gy_scene_instantiate(w, s, gy_v3(0, 0, 0), &ta.base, &inst, NULL), GY_OK);
    assert_result(gy_world_start_physics(w), GY_OK);
    for (int i = 0; i < 4; i++)
        assert_result(gy_world_tick(w, DT), GY_OK);
    assert_int_equal(physics_bodies(w), m.per_kind[OBJ_BODY]);
    gy_scene_instance_free(inst);
    gy_world_teardown td;
    assert_result(gy_world_destroy(w, &td), GY_OK);
    /* Every body is released at teardown: one leaked object each, seen by both checks. */
    uint32_t bodies = m.per_kind[OBJ_BODY];
    assert_int_equal(gy_fault_backend_get(&fb->leaked), bodies);
    assert_true(td.adapter_checked);
    assert_int_equal(td.adapter_live_objects, bodies);
    assert_int_equal(fb->live_at_destroy, bodies);
    assert_true(log_has(&logs, "adapter objects still alive", NULL));
    assert_int_equal(ta.live_blocks, 0);
    pthread_mutex_destroy(&logs.mu);
    free(fb);
    gy_scene_free(s);
}

static void test_world_refusals_test_scene_additive(void **state)
{
    (void)state;
    gy_scene *s = gy_test_load_scene(k_scene, scenes_dir, NULL, NULL);
    sweep_refusals(s, "test scene", false);
    gy_scene_free(s);
}

static void test_world_refusals_sample_scenes(void **state)
{
    (void)state;
    static const char *const files[] = {"joints.json", "level_mesh.json", "compound.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        gy_scene *s = gy_test_load_scene_file(scenes_dir, files[i]);
        sweep_refusals(s, files[i], true);
        sweep_refusals(s, files[i], false);
        gy_scene_free(s);
    }
}

/* ---- allocation failures over a whole load and run ------------------------------------------- */

typedef enum alloc_phase {
    PHASE_LOAD,
    PHASE_CREATE,
    PHASE_INSTANTIATE,
    PHASE_START,
    PHASE_RAN,
    PHASE_COUNT
} alloc_phase;

static const char *const k_phase_names[PHASE_COUNT] = {"scene load", "World create",
                                                        "instantiate", "physics start", "ran"};

/* The World must hold nothing (entities, components, joints, geometry). */
static void assert_world_empty(gy_world *w, uint64_t n, const char *when)
{
    gy_world_stats ws;
    gy_world_get_stats(w, &ws);
    gy_geometry_stats gs;
    gy_geometry_get_stats(w, &gs);
    if (ws.entities != 0 || ws.bodies != 0 || ws.joints != 0 || gs.resident != 0)
        fail_msg("allocation %llu failed in %s: %u entities, %u bodies, %u joints, %u geometries "
                 "left",
                 (unsigned long long)n, when, ws.entities, ws.bodies, ws.joints, gs.resident);
}

static void teardown_checked(gy_world *w, gy_fault_backend *fb, uint64_t n)
{
    bool ran = gy_world_physics_running(w);
    gy_world_teardown td;
    gy_result r = gy_world_destroy(w, &td);
    /* Teardown itself may meet the failing allocation; it still frees everything. */
    if (r != GY_OK && r != GY_ERR_OUT_OF_MEMORY)
        fail_msg("allocation %llu failing: teardown returned %s", (unsigned long long)n,
                 gy_result_name(r));
    if (ran && r == GY_OK) {
        assert_true(td.adapter_checked);
        if (td.adapter_live_objects != 0)
            fail_msg("allocation %llu failing: %u adapter objects left after teardown",
                     (unsigned long long)n, td.adapter_live_objects);
    }
    if (fb->live_at_destroy != 0)
        fail_msg("allocation %llu failing: the adapter held %u objects at world destroy",
                 (unsigned long long)n, fb->live_at_destroy);
    assert_int_equal(gy_fault_backend_get(&fb->worlds_created),
                     gy_fault_backend_get(&fb->worlds_destroyed));
}

/* Three ticks, then every body is there or failed with a reason, every joint live or failed
 * (nothing silent, nothing stuck). `clean`: no failure is left to meet, so everything is live. */
static void check_run(gy_world *w, const gy_scene *scene, const gy_scene_instance *inst,
                      uint64_t n, bool clean)
{
    for (int i = 0; i < 3; i++) {
        gy_result r = gy_world_tick(w, DT);
        if (r == GY_ERR_OUT_OF_MEMORY) /* the publish could not stage: the batch stays open */
            r = gy_world_tick(w, DT);
        assert_result(r, GY_OK);
    }
    for (uint32_t i = 0; i < scene->entity_count; i++) {
        const gy_scene_entity *se = &scene->entities[i];
        if (se->physics == NULL || !se->physics->is_active)
            continue;
        gy_physics_state st;
        assert_result(gy_body_get_state(w, inst->entities[i], &st), GY_OK);
        bool explained = st.failed && !clean && (st.error == GY_ERR_OUT_OF_MEMORY ||
                                                 st.error == GY_ERR_STALE_HANDLE);
        if (!st.has_body && !explained)
            fail_msg("allocation %llu failing: '%s' has no body (failed %d: %s)",
                     (unsigned long long)n, se->name, st.failed, gy_result_name(st.error));
    }
    for (uint32_t j = 0; j < scene->joint_count; j++) {
        gy_joint_status js;
        assert_result(gy_joint_get_status(w, inst->joints[j], &js), GY_OK);
        if (js != GY_JOINT_LIVE && !(js == GY_JOINT_FAILED && !clean))
            fail_msg("allocation %llu failing: joint %u on '%s' is %d", (unsigned long long)n, j,
                     scene->entities[scene->joints[j].a].name, (int)js);
    }
}

/* One load + run with allocation `n` failing (0: none). Returns the phase it got through. */
static alloc_phase run_allocation(uint64_t n, uint64_t *total, log_capture *logs)
{
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    ta.fail_at = n;
    gy_fault_backend fb; /* pass-through: leak accounting at world_destroy */
    assert_result(gy_fault_backend_init(&fb, adapter, &ta.base), GY_OK);
    gy_logger logger = {capture_log, logs};
    alloc_phase phase = PHASE_LOAD;

    gy_result r;
    gy_scene *scene = gy_test_load_scene(k_scene, scenes_dir, &ta.base, &r);
    if (r != GY_OK) {
        assert_result(r, GY_ERR_OUT_OF_MEMORY);
        assert_null(scene);
        goto done;
    }
    phase = PHASE_CREATE;
    gy_world_def cfg = world_config(scene, &fb, &logger, true);
    gy_world *w = NULL;
    r = gy_world_create(&cfg, &w);
    if (r != GY_OK) {
        assert_result(r, GY_ERR_OUT_OF_MEMORY);
        assert_null(w);
        goto done;
    }
    phase = PHASE_INSTANTIATE;
    gy_scene_instance *inst = NULL;
    int32_t bad = 99;
    r = gy_scene_instantiate(w, scene, gy_v3(0, 0, 0), &ta.base, &inst, &bad);
    if (r != GY_OK) {
        assert_result(r, GY_ERR_OUT_OF_MEMORY);
        assert_null(inst);
        assert_true(bad >= -1 && bad < (int32_t)scene->entity_count);
        assert_world_empty(w, n, "instantiate");
        /* Nothing was queued for the physics side either: a start builds an empty world. */
        assert_result(gy_world_start_physics(w), GY_OK);
        assert_result(gy_world_tick(w, DT), GY_OK);
        assert_int_equal(physics_bodies(w), 0);
        assert_int_equal(gy_fault_backend_get(&fb.calls_any), 0);
        teardown_checked(w, &fb, n);
        goto done;
    }
    phase = PHASE_START;
    r = gy_world_start_physics(w);
    if (r != GY_OK) {
        assert_result(r, GY_ERR_OUT_OF_MEMORY);
        assert_false(gy_world_physics_running(w));
        assert_int_equal(fb.worlds_created, fb.worlds_destroyed);
        /* The scene is still in the World, and the next start (the failure spent) builds all of
         * it, as if the first had never been made. */
        assert_int_equal(gy_world_entity_count(w), scene->entity_count);
        assert_result(gy_world_start_physics(w), GY_OK);
        check_run(w, scene, inst, n, true);
        gy_scene_instance_free(inst);
        teardown_checked(w, &fb, n);
        goto done;
    }
    phase = PHASE_RAN;
    check_run(w, scene, inst, n, false);
    gy_scene_instance_free(inst);
    teardown_checked(w, &fb, n);
done:
    gy_scene_free(scene);
    if (ta.live_blocks != 0 || ta.live_bytes != 0)
        fail_msg("allocation %llu failed in %s: %lld blocks (%lld bytes) leaked",
                 (unsigned long long)n, k_phase_names[phase], (long long)ta.live_blocks,
                 (long long)ta.live_bytes);
    if (total != NULL)
        *total = ta.calls;
    return phase;
}

static void test_world_allocation_sweep_over_load_and_run(void **state)
{
    (void)state;
    log_capture logs;
    gy_logger unused;
    log_init(&logs, &unused);
    uint64_t total = 0;
    assert_int_equal(run_allocation(0, &total, &logs), PHASE_RAN);
    assert_true(total > 10);
    uint32_t by_phase[PHASE_COUNT] = {0};
    for (uint64_t n = 1; n <= total + 2; n++) {
        logs.len = 0;
        logs.text[0] = '\0';
        by_phase[run_allocation(n, NULL, &logs)]++;
    }
    print_message("allocation sweep: %llu allocations per clean run; failed in scene load %u, "
                  "World create %u, instantiate %u, physics start %u; ran %u\n",
                  (unsigned long long)total, by_phase[PHASE_LOAD], by_phase[PHASE_CREATE],
                  by_phase[PHASE_INSTANTIATE], by_phase[PHASE_START], by_phase[PHASE_RAN]);
    for (int p = 0; p < PHASE_COUNT; p++)
        if (by_phase[p] == 0)
            fail_msg("the sweep never failed in %s", k_phase_names[p]);
    pthread_mutex_destroy(&logs.mu);
}

/* ---- allocation failures in an additive load into a running World ---------------------------- */

typedef struct world_snapshot {
    uint32_t entities, bodies, joints, geometries, physics_bodies;
} world_snapshot;

static world_snapshot snapshot(gy_world *w)
{
    gy_world_stats ws;
    gy_world_get_stats(w, &ws);
    gy_geometry_stats gs;
    gy_geometry_get_stats(w, &gs);
    world_snapshot s = {ws.entities, ws.bodies, ws.joints, gs.resident, physics_bodies(w)};
    return s;
}

/* Fails allocation `at` (1-based, counted from `armed`), and with `persistent` every one after it
 * too — memory that stays short, as it does in a real out-of-memory — until disarmed. Forwards to
 * the counting allocator, which keeps the leak accounting. */
typedef struct failing_alloc {
    gy_allocator base;
    const gy_allocator *inner;
    uint64_t calls; /* allocations attempted since armed */
    uint64_t at;    /* 0: never fail */
    bool persistent;
} failing_alloc;

static bool fa_fails(failing_alloc *f)
{
    uint64_t n = __atomic_add_fetch(&f->calls, 1, __ATOMIC_RELAXED);
    uint64_t at = __atomic_load_n(&f->at, __ATOMIC_RELAXED);
    return at != 0 && (f->persistent ? n >= at : n == at);
}

static void *fa_alloc(void *ctx, size_t size)
{
    failing_alloc *f = ctx;
    return fa_fails(f) ? NULL : f->inner->alloc(f->inner->ctx, size);
}

static void *fa_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size)
{
    failing_alloc *f = ctx;
    if (new_size > old_size && fa_fails(f))
        return NULL;
    return f->inner->realloc(f->inner->ctx, ptr, old_size, new_size);
}

static void fa_free(void *ctx, void *ptr, size_t size)
{
    failing_alloc *f = ctx;
    f->inner->free(f->inner->ctx, ptr, size);
}

static void failing_arm(failing_alloc *f, uint64_t at, bool persistent)
{
    __atomic_store_n(&f->calls, 0, __ATOMIC_RELAXED);
    f->persistent = persistent;
    __atomic_store_n(&f->at, at, __ATOMIC_RELAXED);
}

/* The base scene runs; the extra scene is loaded additively with allocation `k` of the load
 * (counted from its start) failing — only that one, or with `persistent` every one from it on
 * until the load returns. Returns true when the load succeeded. */
static bool run_additive(uint64_t k, bool persistent, const gy_scene *extra,
                         uint64_t *load_allocs)
{
    gy_test_allocator ta;
    gy_test_allocator_init(&ta);
    failing_alloc fa = {{fa_alloc, fa_realloc, fa_free, NULL}, &ta.base, 0, 0, false};
    fa.base.ctx = &fa;
    gy_fault_backend fb;
    assert_result(gy_fault_backend_init(&fb, adapter, &fa.base), GY_OK);
    log_capture logs;
    gy_logger logger;
    log_init(&logs, &logger);
    gy_scene *base = gy_test_load_scene(k_scene, scenes_dir, &ta.base, NULL);
    gy_world_def cfg = world_config(base, &fb, &logger, false);
    gy_world *w = NULL;
    assert_result(gy_world_create(&cfg, &w), GY_OK);
    gy_scene_instance *bi = NULL;
    assert_result(gy_scene_load_additive(w, base, gy_v3(0, 0, 0), 0, &ta.base, &bi, NULL), GY_OK);
    for (int i = 0; i < 2; i++)
        assert_result(gy_world_tick(w, DT), GY_OK);
    world_snapshot before = snapshot(w);
    assert_int_equal(before.physics_bodies, 7);

    uint64_t body_creates = gy_fault_backend_get(&fb.calls[GY_FAULT_BODY]);
    uint64_t joint_creates = gy_fault_backend_get(&fb.calls[GY_FAULT_JOINT]);
    failing_arm(&fa, k, persistent);
    gy_scene_instance *xi = NULL;
    int32_t bad = 99;
    gy_result r = gy_scene_load_additive(w, extra, gy_v3(10, 0, 0), 0, &fa.base, &xi, &bad);
    uint64_t used = __atomic_load_n(&fa.calls, __ATOMIC_RELAXED);
    failing_arm(&fa, 0, false); /* only the load is swept; the rest must run clean */
    if (load_allocs != NULL)
        *load_allocs = used;
    bool ok = r == GY_OK;
    if (!ok) {
        assert_result(r, GY_ERR_OUT_OF_MEMORY);
        assert_null(xi);
        assert_true(bad >= -1 && bad < (int32_t)extra->entity_count);
        /* The running World is untouched: same entities, components, joints, geometry. */
        world_snapshot now = snapshot(w);
        if (memcmp(&now, &before, sizeof now) != 0)
            fail_msg("additive allocation %llu failed%s: the World changed (%u/%u entities, "
                     "%u/%u bodies, %u/%u joints, %u/%u geometries)",
                     (unsigned long long)k, persistent ? " (and every one after)" : "",
                     now.entities, before.entities, now.bodies,
                     before.bodies, now.joints, before.joints, now.geometries, before.geometries);
        assert_true(gy_entity_is_null(gy_world_find_entity(w, "x_rock")));
    }
    for (int i = 0; i < 3; i++)
        assert_result(gy_world_tick(w, DT), GY_OK);
    world_snapshot after = snapshot(w);
    if (!ok) {
        /* Nothing reached the adapter either: each body create was cancelled by its release in
         * the same batch, and no joint was asked for. (A hull the load had already recorded is
         * built and released again in that batch: nothing of it remains.) */
        assert_int_equal(after.physics_bodies, before.physics_bodies);
        assert_int_equal(after.entities, before.entities);
        assert_int_equal(gy_fault_backend_get(&fb.calls[GY_FAULT_BODY]), body_creates);
        assert_int_equal(gy_fault_backend_get(&fb.calls[GY_FAULT_JOINT]), joint_creates);
        /* Nothing stale was left behind either: the same load now succeeds whole. */
        assert_result(gy_scene_load_additive(w, extra, gy_v3(10, 0, 0), 0, &fa.base, &xi, &bad),
                      GY_OK);
        for (int i = 0; i < 2; i++)
            assert_result(gy_world_tick(w, DT), GY_OK);
        after = snapshot(w);
    }
    assert_int_equal(after.entities, before.entities + 3);
    assert_int_equal(after.physics_bodies, before.physics_bodies + 2);
    gy_joint_status js;
    assert_result(gy_joint_get_status(w, xi->joints[0], &js), GY_OK);
    assert_int_equal(js, GY_JOINT_LIVE);
    gy_physics_state xs;
    assert_result(gy_body_get_state(w, gy_world_find_entity(w, "x_rock"), &xs), GY_OK);
    assert_true(xs.has_body);
    /* The base scene kept every body, and keeps simulating. */
    for (uint32_t i = 0; i < base->entity_count; i++) {
        const gy_scene_entity *se = &base->entities[i];
        assert_true(gy_entity_is_valid(w, bi->entities[i]));
        if (se->physics == NULL || !se->physics->is_active)
            continue;
        gy_physics_state st;
        assert_result(gy_body_get_state(w, bi->entities[i], &st), GY_OK);
        assert_true(st.has_body);
        assert_false(st.failed);
    }
    gy_physics_state crate;
    assert_result(gy_body_get_state(w, bi->entities[1], &crate), GY_OK);
    assert_true(crate.tick > 0);
    assert_true(gy_vec3_is_finite(crate.pose.position));
    gy_scene_instance_free(bi);
    gy_scene_instance_free(xi);
    gy_world_teardown td;
    assert_result(gy_world_destroy(w, &td), GY_OK);
    assert_true(td.adapter_checked);
    assert_int_equal(td.adapter_live_objects, 0);
    assert_int_equal(fb.live_at_destroy, 0);
    gy_scene_free(base);
    if (ta.live_blocks != 0 || ta.live_bytes != 0)
        fail_msg("additive allocation %llu failed: %lld blocks (%lld bytes) leaked",
                 (unsigned long long)k, (long long)ta.live_blocks, (long long)ta.live_bytes);
    pthread_mutex_destroy(&logs.mu);
    return ok;
}

static void sweep_additive(bool persistent)
{
    gy_scene *extra = gy_test_load_scene(k_extra, scenes_dir, NULL, NULL);
    uint64_t per_load = 0;
    assert_true(run_additive(0, false, extra, &per_load));
    assert_true(per_load > 5);
    uint32_t failed = 0, absorbed = 0;
    for (uint64_t k = 1; k <= per_load + 1u; k++) {
        uint64_t used = 0;
        bool ok = run_additive(k, persistent, extra, &used);
        if (k > per_load)
            assert_true(ok && used < k); /* past the load: nothing was injected */
        else if (ok)
            absorbed++; /* a failure the World absorbed without refusing the load */
        else
            failed++;
    }
    print_message("additive sweep (%s): %llu allocations per load; %u failed loads left the World "
                  "untouched, %u failures absorbed\n",
                  persistent ? "from N on" : "Nth only", (unsigned long long)per_load, failed,
                  absorbed);
    assert_true(failed > 0);
    gy_scene_free(extra);
}

static void test_world_allocation_sweep_over_additive_load(void **state)
{
    (void)state;
    sweep_additive(false);
}

/* Memory that stays short: the rollback itself must not need any (it once did, to list the
 * subtree of each entity it destroyed, and left the partly loaded scene in the World). */
static void test_world_allocation_sweep_over_additive_load_persistent(void **state)
{
    (void)state;
    sweep_additive(true);
}

int main(int argc, char **argv)
{
    scenes_dir = argc > 1 ? argv[1] : "scenes";
    adapter = argc > 2 ? argv[2] : "ode";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_world_refusals_test_scene_bootstrap),
        cmocka_unit_test(test_world_teardown_reports_an_injected_leak),
        cmocka_unit_test(test_world_refusals_test_scene_additive),
        cmocka_unit_test(test_world_refusals_sample_scenes),
        cmocka_unit_test(test_world_allocation_sweep_over_load_and_run),
        cmocka_unit_test(test_world_allocation_sweep_over_additive_load),
        cmocka_unit_test(test_world_allocation_sweep_over_additive_load_persistent),
    };
    return cmocka_run_group_tests_name("world_faults", tests, NULL, NULL);
}
