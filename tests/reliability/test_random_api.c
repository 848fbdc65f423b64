/* A seeded host program that drives a World through random mixes of valid and invalid calls:
 * every body type and shape, runtime geometry, joints, characters, live and snapshot queries,
 * additive scene loads through the scene barrier, stop/start, time scale, stale handles and calls
 * made from inside collision callbacks. After every frame it checks what the game can see (every
 * result a documented code, every valid call accepted, every pose, velocity, event and hit
 * finite, every ENTER followed by exactly one EXIT) and at teardown that nothing leaked.
 *
 * Arguments: adapter name, number of seeds (default 4; GYRE_RANDOM_SEEDS overrides), frames per
 * seed (default 100; GYRE_RANDOM_FRAMES overrides), first seed (default 1;
 * GYRE_RANDOM_FIRST_SEED). Odd seeds run in real time, even ones in lockstep. A failure prints the
 * seed, frame and call; GYRE_RANDOM_TRACE=1 prints every call and event. */
#include "test_support.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gyre/gyre.h"

#define MAX_ENTS   40u
#define MAX_DEAD   16u
#define MAX_JOINTS 16u
#define MAX_OPEN   512u
#define DT         (1.0 / 60.0)

static const char *adapter = "ode";
static uint64_t seed_count = 4, frame_count = 100, first_seed = 1;

typedef struct open_pair {
    uint64_t self, other;
    uint16_t sc, oc;
} open_pair;

typedef struct rt {
    gy_world *w;
    gy_test_rng rng;
    gy_test_allocator ta;
    uint64_t seed;
    uint32_t frame;
    const char *call;
    gy_entity ents[MAX_ENTS];
    uint32_t n_ents;
    gy_entity dead[MAX_DEAD];
    uint32_t n_dead;
    gy_joint joints[MAX_JOINTS];
    uint32_t n_joints;
    gy_joint released_joint;
    gy_geometry hull, mesh;
    gy_scene *scene;
    gy_scene_instance *loaded;
    open_pair open[MAX_OPEN];
    uint32_t n_open;
    uint32_t depth; /* callback nesting */
    uint64_t tick_before;
    bool trace; /* GYRE_RANDOM_TRACE set: every call and event to stderr */
    /* Tallies, printed per seed. */
    uint64_t calls, refused, events, callback_calls;
} rt;

static void fail_at(const rt *t, const char *what, gy_result r)
{
    print_error("seed %llu frame %u call %s: %s (%s)\n", (unsigned long long)t->seed, t->frame,
                t->call != NULL ? t->call : "-", what, gy_result_name(r));
    fail();
}

/* The result is one of the `n` codes the call documents. */
static gy_result allowed(rt *t, gy_result r, const gy_result *codes, uint32_t n)
{
    t->calls++;
    t->refused += r != GY_OK;
    for (uint32_t i = 0; i < n; i++)
        if (r == codes[i])
            return r;
    fail_at(t, "undocumented result", r);
    return r;
}

#define ALLOW(t, name, expr, ...)                                                                  \
    do {                                                                                           \
        static const gy_result codes_[] = {GY_OK, __VA_ARGS__};                                    \
        (t)->call = (name);                                                                        \
        allowed((t), (expr), codes_, sizeof codes_ / sizeof codes_[0]);                            \
    } while (0)

/* A call that is valid where it is made must succeed. */
static void must_succeed(rt *t, const char *name, gy_result r)
{
    t->call = name;
    t->calls++;
    if (r != GY_OK)
        fail_at(t, "a valid call refused", r);
}

/* ---- values ---------------------------------------------------------------------------------- */

static double rnd(rt *t)
{
    return gy_test_rnd(&t->rng);
}

static uint32_t pick(rt *t, uint32_t n)
{
    return n == 0 ? 0 : (uint32_t)(rnd(t) * n) % n;
}

/* A number a hostile or careless host could pass: NaN, infinities, huge, tiny, negative, the
 * edges of the ranges and just past them. */
static double hostile(rt *t)
{
    static const double v[] = {NAN,    INFINITY, -INFINITY, 1e300, -1e300, 1e100, 1e-17, 0.0,
                               -1.0,   1e13,     -1e13,     1e12,  -1e12,  2e12,  1e39,  1e-300,
                               1e20,   -1e20,    1e21,      1e6,   2e6,    1e-5,  5e-6,  DBL_MAX,
                               -1e-30, 1e3,      1001.0,    1e12,  1e-6,   1e-7,  1e24,  1e25};
    return v[pick(t, sizeof v / sizeof v[0])];
}

/* Mostly in range; one time in `odds` hostile. */
static double num(rt *t, double lo, double hi, uint32_t odds)
{
    return pick(t, odds) == 0 ? hostile(t) : lo + (hi - lo) * rnd(t);
}

static gy_vec3 vec(rt *t, double lo, double hi, uint32_t odds)
{
    return gy_v3(num(t, lo, hi, odds), num(t, lo, hi, odds), num(t, lo, hi, odds));
}

static gy_quat rot(rt *t)
{
    if (pick(t, 12) == 0) {
        gy_quat bad = {hostile(t), 0, 0, hostile(t)};
        return bad;
    }
    gy_quat q = {rnd(t) - 0.5, rnd(t) - 0.5, rnd(t) - 0.5, rnd(t) - 0.5 + 1e-3};
    return gy_quat_normalize(q);
}

static gy_pose pose(rt *t, double extent, uint32_t odds)
{
    gy_pose p = {vec(t, -extent, extent, odds), rot(t)};
    return p;
}

static gy_shape shape(rt *t, bool queries, uint32_t odds)
{
    gy_shape s;
    memset(&s, 0, sizeof s);
    uint32_t k = pick(t, queries ? 4 : 7);
    double r = num(t, 0.1, 1.0, odds);
    switch (k) {
    case 0:
        s.type = GY_SHAPE_SPHERE;
        s.radius = r;
        break;
    case 1:
        s.type = GY_SHAPE_BOX;
        s.box_size = vec(t, 0.1, 2.0, odds);
        break;
    case 2:
        s.type = GY_SHAPE_CAPSULE;
        s.radius = r;
        s.height = num(t, 2.5 * (isfinite(r) ? fmin(r, 1.0) : 1.0), 3.0, odds);
        break;
    case 3:
        s.type = t->hull.bits != 0 ? GY_SHAPE_HULL : GY_SHAPE_SPHERE;
        s.radius = r;
        s.resource.bits = t->hull.bits;
        break;
    case 4:
        s.type = GY_SHAPE_CYLINDER;
        s.radius = r;
        s.height = num(t, 0.1, 2.0, odds);
        break;
    case 5:
        s.type = GY_SHAPE_MESH;
        s.resource.bits = t->mesh.bits;
        break;
    default:
        /* Static bodies only (others: GY_ERR_INVALID_MOTION); far below, so it rarely matters. */
        s.type = GY_SHAPE_PLANE;
        s.normal = vec(t, -0.2, 0.2, odds);
        s.normal.y = 1.0;
        s.offset = num(t, -60, -40, odds);
        break;
    }
    return s;
}

/* ---- the game's view ------------------------------------------------------------------------ */

static gy_entity any_entity(rt *t)
{
    uint32_t k = pick(t, 10);
    if (k == 0 && t->n_dead > 0)
        return t->dead[pick(t, t->n_dead)];
    if (k == 1)
        return gy_entity_null();
    return t->n_ents > 0 ? t->ents[pick(t, t->n_ents)] : gy_entity_null();
}

static void forget_entity(rt *t, gy_entity e)
{
    for (uint32_t i = 0; i < t->n_ents; i++) {
        if (t->ents[i].bits == e.bits) {
            t->ents[i] = t->ents[--t->n_ents];
            break;
        }
    }
    if (t->n_dead < MAX_DEAD)
        t->dead[t->n_dead++] = e;
    else
        t->dead[pick(t, MAX_DEAD)] = e;
    /* Its pairs stay open: their EXITs still come (self already destroyed). */
}

static bool finite_event(const gy_collision_event *e)
{
    return gy_vec3_is_finite(e->point) && gy_vec3_is_finite(e->normal) &&
           gy_is_finite(e->penetration) && gy_is_finite(e->normal_impulse) &&
           gy_is_finite(e->tangent_impulse);
}

static void random_call(rt *t, bool from_callback);

static void on_collision(void *ctx, gy_world *w, const gy_collision_event *e)
{
    rt *t = ctx;
    (void)w;
    t->events++;
    if (t->trace)
        fprintf(stderr, "f%u ev kind %d self %llx other %llx %u %u synth %d\n", t->frame, e->kind,
                (unsigned long long)e->self.bits, (unsigned long long)e->other.bits,
                e->self_collider, e->other_collider, e->synthesized);
    t->call = "collision callback";
    if (!finite_event(e))
        fail_at(t, "a collision event with a non-finite number", GY_OK);
    uint32_t at = t->n_open;
    for (uint32_t i = 0; i < t->n_open; i++)
        if (t->open[i].self == e->self.bits && t->open[i].other == e->other.bits &&
            t->open[i].sc == e->self_collider && t->open[i].oc == e->other_collider)
            at = i;
    if (e->kind == GY_COLLISION_ENTER) {
        if (at != t->n_open)
            fail_at(t, "ENTER for a pair already entered", GY_OK);
        if (t->n_open == MAX_OPEN)
            fail_at(t, "more open pairs than the test tracks", GY_OK);
        t->open[t->n_open++] =
            (open_pair){e->self.bits, e->other.bits, e->self_collider, e->other_collider};
    } else if (at == t->n_open) {
        fail_at(t, e->kind == GY_COLLISION_EXIT ? "EXIT without ENTER" : "STAY without ENTER",
                GY_OK);
    } else if (e->kind == GY_COLLISION_EXIT) {
        t->open[at] = t->open[--t->n_open];
    }
    /* Calls from inside the callback (never scene loads or streaming: those wait for the
     * barrier the dispatching tick holds). */
    if (t->depth == 0 && pick(t, 6) == 0) {
        t->depth++;
        t->callback_calls++;
        random_call(t, true);
        t->depth--;
    }
}

static gy_entity new_entity(rt *t, gy_entity parent)
{
    if (t->n_ents >= MAX_ENTS)
        return gy_entity_null();
    gy_entity_def d = gy_default_entity_def();
    d.parent = parent;
    d.position = vec(t, -3, 3, 16);
    d.position.y = 0.3 * fabs(d.position.y) + 0.6; /* near the floor and each other */
    d.rotation = rot(t);
    gy_entity e = gy_entity_null();
    ALLOW(t, "gy_entity_create", gy_entity_create(t->w, &d, &e), GY_ERR_NON_FINITE,
          GY_ERR_INVALID_ARGUMENT, GY_ERR_STALE_HANDLE);
    if (gy_entity_is_null(e))
        return e;
    t->ents[t->n_ents++] = e;
    ALLOW(t, "gy_entity_set_collision_callback",
          gy_entity_set_collision_callback(t->w, e, on_collision, t), GY_ERR_STALE_HANDLE);
    return e;
}

static void add_body(rt *t, gy_entity e, bool update)
{
    gy_physics_component_def d = gy_default_physics_component_def();
    gy_scene_collider cols[2];
    memset(cols, 0, sizeof cols);
    uint32_t odds = pick(t, 3) == 0 ? 6 : 1000;
    /* Half dynamic, so things fall, touch and report. */
    d.body_type = pick(t, 2) == 0 ? GY_BODY_DYNAMIC
                                  : (gy_body_type)pick(t, GY_BODY_TYPE_COUNT);
    d.body.mass = pick(t, 3) == 0 ? num(t, 0.5, 20, odds) : 0.0;
    d.body.linear_damping = num(t, 0, 1, odds);
    d.body.angular_damping = num(t, 0, 1, odds);
    d.body.gravity_factor = num(t, 0.5, 2, odds);
    d.body.linear_velocity = vec(t, -2, 2, odds);
    d.body.angular_velocity = vec(t, -2, 2, odds);
    d.is_active = pick(t, 8) != 0;
    uint32_t n = 1 + pick(t, 2);
    for (uint32_t i = 0; i < n; i++) {
        cols[i].def = gy_default_collider_def();
        cols[i].def.shape = shape(t, false, odds);
        cols[i].def.local_pose = i == 0 ? gy_pose_identity() : pose(t, 1.0, odds);
        cols[i].def.density = num(t, 0.2, 3, odds);
        cols[i].def.material.friction = num(t, 0, 1, odds);
        cols[i].def.material.restitution = num(t, 0, 0.8, odds);
        cols[i].def.is_sensor = pick(t, 10) == 0;
    }
    if (pick(t, 5) == 0) {
        /* A character: one kinematic capsule. */
        d.body_type = GY_BODY_KINEMATIC;
        d.is_character = true;
        n = 1;
        cols[0].def.shape.type = GY_SHAPE_CAPSULE;
        cols[0].def.shape.radius = 0.4;
        cols[0].def.shape.height = num(t, 1.2, 2.0, odds);
        cols[0].def.is_sensor = false;
    }
    d.colliders = cols;
    d.collider_count = n;
    if (update)
        ALLOW(t, "gy_body_update", gy_body_update(t->w, e, &d), GY_ERR_STALE_HANDLE, GY_ERR_MISUSE,
              GY_ERR_INVALID_ARGUMENT, GY_ERR_NON_FINITE, GY_ERR_INVALID_SHAPE,
              GY_ERR_INVALID_MOTION, GY_ERR_INVALID_MESH);
    else
        ALLOW(t, "gy_body_add", gy_body_add(t->w, e, &d), GY_ERR_STALE_HANDLE, GY_ERR_MISUSE,
              GY_ERR_INVALID_ARGUMENT, GY_ERR_NON_FINITE, GY_ERR_INVALID_SHAPE,
              GY_ERR_INVALID_MOTION, GY_ERR_INVALID_MESH);
}

static void query(rt *t, bool snapshot)
{
    gy_world_hit hits[8];
    uint32_t n = 0;
    gy_world_query_filter f = gy_default_world_query_filter();
    if (pick(t, 4) == 0)
        f.ignore = any_entity(t);
    f.include_sensors = pick(t, 2) == 0;
    gy_collector c = (gy_collector)pick(t, 3);
    uint32_t odds = pick(t, 2) == 0 ? 5 : 1000;
    gy_shape s = shape(t, true, odds);
    gy_pose p = pose(t, 10, odds);
    gy_vec3 o = vec(t, -10, 10, odds), d = vec(t, -20, 20, odds);
    gy_result r;
    switch (pick(t, 3) + (snapshot ? 3 : 0)) {
    case 0:
        t->call = "gy_world_raycast";
        r = gy_world_raycast(t->w, o, d, &f, c, hits, 8, &n, NULL);
        break;
    case 1:
        t->call = "gy_world_shape_cast";
        r = gy_world_shape_cast(t->w, &s, p, d, &f, c, hits, 8, &n, NULL);
        break;
    case 2:
        t->call = "gy_world_overlap";
        r = gy_world_overlap(t->w, &s, p, &f, c, hits, 8, &n, NULL);
        break;
    case 3:
    case 4:
        t->call = "gy_world_snapshot_raycast";
        r = gy_world_snapshot_raycast(t->w, o, d, &f, c, hits, 8, &n, NULL);
        break;
    default:
        t->call = "gy_world_snapshot_overlap";
        r = gy_world_snapshot_overlap(t->w, &s, p, &f, c, hits, 8, &n, NULL);
        break;
    }
    static const gy_result codes[] = {GY_OK,
                                      GY_ERR_INVALID_ARGUMENT,
                                      GY_ERR_NON_FINITE,
                                      GY_ERR_INVALID_SHAPE,
                                      GY_ERR_STALE_HANDLE,
                                      GY_ERR_INACTIVE,
                                      GY_ERR_BUSY,
                                      GY_ERR_UNSUPPORTED};
    allowed(t, r, codes, sizeof codes / sizeof codes[0]);
    if (r != GY_OK && n != 0)
        fail_at(t, "hits reported with an error", r);
    for (uint32_t i = 0; r == GY_OK && i < n && i < 8; i++)
        if (!gy_vec3_is_finite(hits[i].point) || !gy_vec3_is_finite(hits[i].normal) ||
            !gy_is_finite(hits[i].fraction) || !gy_is_finite(hits[i].distance) ||
            !gy_is_finite(hits[i].penetration))
            fail_at(t, "a query hit with a non-finite number", r);
}

static void joint(rt *t)
{
    if (pick(t, 3) == 0 && t->n_joints > 0) {
        uint32_t k = pick(t, t->n_joints);
        ALLOW(t, "gy_joint_release", gy_joint_release(t->w, t->joints[k]), GY_ERR_STALE_HANDLE);
        t->released_joint = t->joints[k];
        t->joints[k] = t->joints[--t->n_joints];
        return;
    }
    if (pick(t, 5) == 0) {
        gy_joint_status st;
        ALLOW(t, "gy_joint_get_status (stale)", gy_joint_get_status(t->w, t->released_joint, &st),
              GY_ERR_STALE_HANDLE);
        return;
    }
    uint32_t odds = pick(t, 2) == 0 ? 5 : 1000;
    gy_joint_def d = gy_default_joint_def();
    d.type = (gy_joint_type)pick(t, GY_JOINT_TYPE_COUNT);
    d.anchor = vec(t, -8, 8, odds);
    d.axis = vec(t, -1, 1, odds);
    d.has_limits = pick(t, 2) == 0;
    d.limit_min = -num(t, 0, 1, odds);
    d.limit_max = num(t, 0, 1, odds);
    d.breakable = pick(t, 3) == 0;
    d.break_force = num(t, 10, 1000, odds);
    gy_entity a = any_entity(t), b = pick(t, 3) == 0 ? gy_entity_null() : any_entity(t);
    gy_joint j = {0};
    ALLOW(t, "gy_joint_create", gy_joint_create(t->w, a, b, &d, &j), GY_ERR_STALE_HANDLE,
          GY_ERR_MISUSE, GY_ERR_INVALID_MOTION, GY_ERR_NON_FINITE, GY_ERR_INVALID_ARGUMENT);
    if (j.bits != 0 && t->n_joints < MAX_JOINTS)
        t->joints[t->n_joints++] = j;
}

static const char scene_json[] =
    "{\"format\": \"gyre.scene\", \"version\": 1, \"entities\": ["
    "{\"name\": \"crate\", \"transform\": {\"position\": [0, 3, 0]},"
    " \"components\": {\"physics\": {\"shape\": \"Box\", \"box_size\": [1, 1, 1]}}},"
    "{\"name\": \"pad\", \"transform\": {\"position\": [0, 0.5, 0]},"
    " \"components\": {\"physics\": {\"body_type\": \"Trigger\", \"shape\": \"Sphere\","
    " \"radius\": 2}}},"
    "{\"name\": \"hinged\", \"transform\": {\"position\": [2, 4, 0]},"
    " \"components\": {\"physics\": {\"shape\": \"Sphere\", \"radius\": 0.3}}}],"
    " \"joints\": [{\"name\": \"pin\", \"type\": \"Hinge\", \"a\": \"hinged\","
    " \"anchor\": [2, 5, 0], \"axis\": [0, 0, 1]}]}";

/* One random call. From a callback, never a scene load or stop/start (the dispatching tick holds
 * the barrier and the World; stop/start there are documented misuse, checked below). */
static void random_call(rt *t, bool from_callback)
{
    gy_entity e = any_entity(t);
    if (t->trace)
        fprintf(stderr, "f%u cb%d e %llx\n", t->frame, from_callback, (unsigned long long)e.bits);
    uint32_t odds = pick(t, 2) == 0 ? 5 : 1000;
    switch (pick(t, from_callback ? 16 : 20)) {
    case 0:
        new_entity(t, pick(t, 4) == 0 ? any_entity(t) : gy_entity_null());
        break;
    case 1:
        add_body(t, pick(t, 4) == 0 ? e : new_entity(t, gy_entity_null()), false);
        break;
    case 2:
        add_body(t, e, true);
        break;
    case 3:
        ALLOW(t, "gy_body_set_linear_velocity",
              gy_body_set_linear_velocity(t->w, e, vec(t, -10, 10, odds)), GY_ERR_STALE_HANDLE,
              GY_ERR_MISUSE, GY_ERR_NON_FINITE, GY_ERR_INVALID_ARGUMENT, GY_ERR_INVALID_MOTION,
              GY_ERR_INACTIVE);
        break;
    case 4:
        ALLOW(t, "gy_body_apply_impulse_at",
              gy_body_apply_impulse_at(t->w, e, vec(t, -10, 10, odds), vec(t, -10, 10, odds)),
              GY_ERR_STALE_HANDLE, GY_ERR_MISUSE, GY_ERR_NON_FINITE, GY_ERR_INVALID_ARGUMENT,
              GY_ERR_INVALID_MOTION, GY_ERR_INACTIVE);
        ALLOW(t, "gy_body_apply_torque", gy_body_apply_torque(t->w, e, vec(t, -10, 10, odds)),
              GY_ERR_STALE_HANDLE, GY_ERR_MISUSE, GY_ERR_NON_FINITE, GY_ERR_INVALID_ARGUMENT,
              GY_ERR_INVALID_MOTION, GY_ERR_INACTIVE);
        break;
    case 5:
        ALLOW(t, "gy_body_teleport", gy_body_teleport(t->w, e, pose(t, 10, odds)),
              GY_ERR_STALE_HANDLE, GY_ERR_NON_FINITE, GY_ERR_INVALID_ARGUMENT);
        break;
    case 6:
        ALLOW(t, "gy_character_set_intent",
              gy_character_set_intent(t->w, e, vec(t, -5, 5, odds), pick(t, 4)),
              GY_ERR_STALE_HANDLE, GY_ERR_MISUSE, GY_ERR_NON_FINITE, GY_ERR_INVALID_ARGUMENT,
              GY_ERR_INACTIVE);
        ALLOW(t, "gy_character_jump", gy_character_jump(t->w, e, num(t, 0.5, 6, odds)),
              GY_ERR_STALE_HANDLE, GY_ERR_MISUSE, GY_ERR_NON_FINITE, GY_ERR_INVALID_ARGUMENT,
              GY_ERR_INACTIVE);
        break;
    case 7:
    case 8:
        query(t, pick(t, 2) == 0);
        break;
    case 9:
        joint(t);
        break;
    case 10:
        ALLOW(t, "gy_body_set_active", gy_body_set_active(t->w, e, pick(t, 2) == 0),
              GY_ERR_STALE_HANDLE, GY_ERR_MISUSE);
        break;
    case 11:
        ALLOW(t, "gy_entity_set_active", gy_entity_set_active(t->w, e, pick(t, 3) != 0),
              GY_ERR_STALE_HANDLE);
        break;
    case 12:
        if (t->n_ents > 16 || pick(t, 6) == 0) {
            gy_result r = gy_entity_destroy(t->w, e);
            ALLOW(t, "gy_entity_destroy", r, GY_ERR_STALE_HANDLE);
            if (r == GY_OK) {
                /* Its subtree went with it: forget every entity no longer valid. */
                for (uint32_t i = 0; i < t->n_ents;)
                    if (!gy_entity_is_valid(t->w, t->ents[i]))
                        forget_entity(t, t->ents[i]);
                    else
                        i++;
                forget_entity(t, e);
            }
        }
        break;
    case 13:
        if (pick(t, 2) == 0)
            break;
        ALLOW(t, "gy_body_remove", gy_body_remove(t->w, e), GY_ERR_STALE_HANDLE, GY_ERR_MISUSE);
        break;
    case 14:
        ALLOW(t, "gy_entity_set_local_position",
              gy_entity_set_local_position(t->w, e, vec(t, -8, 8, odds)), GY_ERR_STALE_HANDLE,
              GY_ERR_NON_FINITE, GY_ERR_INVALID_ARGUMENT);
        break;
    case 15:
        if (from_callback) {
            /* Re-entering the host loop, stop/start or teardown from a callback is refused. */
            gy_result r[4] = {gy_world_tick(t->w, DT), gy_world_stop_physics(t->w),
                              gy_world_start_physics(t->w), gy_world_destroy(t->w, NULL)};
            t->call = "tick, stop, start or destroy from a callback";
            for (int i = 0; i < 4; i++)
                if (r[i] != GY_ERR_MISUSE)
                    fail_at(t, "not refused as misuse", r[i]);
        } else {
            ALLOW(t, "gy_world_set_time_scale", gy_world_set_time_scale(t->w, num(t, 0, 3, odds)),
                  GY_ERR_NON_FINITE, GY_ERR_INVALID_ARGUMENT);
        }
        break;
    case 16:
        if (pick(t, gy_world_physics_running(t->w) ? 12 : 2) != 0)
            break; /* stops are rarer than the rest: a stopped World has no contacts */
        if (gy_world_physics_running(t->w))
            must_succeed(t, "gy_world_stop_physics", gy_world_stop_physics(t->w));
        else
            must_succeed(t, "gy_world_start_physics", gy_world_start_physics(t->w));
        break;
    case 17:
        if (pick(t, 3) != 0)
            break;
        if (t->loaded == NULL) {
            gy_vec3 at = vec(t, -5, 5, odds);
            ALLOW(t, "gy_scene_load_additive",
                  gy_scene_load_additive(t->w, t->scene, at, 0, NULL, &t->loaded, NULL),
                  GY_ERR_NON_FINITE, GY_ERR_INVALID_ARGUMENT);
        } else {
            must_succeed(t, "gy_scene_unload", gy_scene_unload(t->w, t->loaded, 0));
            t->loaded = NULL;
            for (uint32_t i = 0; i < t->n_ents;)
                if (!gy_entity_is_valid(t->w, t->ents[i]))
                    forget_entity(t, t->ents[i]);
                else
                    i++;
        }
        break;
    default: {
        gy_geometry g = {0};
        gy_vec3 pts[5] = {{-1, 0, -1}, {1, 0, -1}, {0, 0, 1}, {0, 1.5, 0}, {0, 0, 0}};
        pts[pick(t, 5)].y = num(t, -1, 1, odds);
        gy_hull_def hd = {pts, 5};
        ALLOW(t, "gy_geometry_create_hull", gy_geometry_create_hull(t->w, &hd, &g),
              GY_ERR_NON_FINITE, GY_ERR_INVALID_MESH);
        if (g.bits != 0)
            gy_geometry_release(t->w, g);
        break;
    }
    }
}

/* Everything the game can read is finite, every frame. */
static void check_frame(rt *t)
{
    t->call = "frame check";
    for (uint32_t i = 0; i < t->n_ents; i++) {
        gy_pose p;
        if (gy_entity_get_world_pose(t->w, t->ents[i], &p) != GY_OK)
            fail_at(t, "a live entity without a pose", GY_OK);
        if (!gy_vec3_is_finite(p.position) || !gy_quat_is_finite(p.rotation))
            fail_at(t, "a non-finite world pose", GY_OK);
        if (gy_entity_get_render_pose(t->w, t->ents[i], &p) == GY_OK &&
            (!gy_vec3_is_finite(p.position) || !gy_quat_is_finite(p.rotation)))
            fail_at(t, "a non-finite render pose", GY_OK);
        gy_physics_state s;
        gy_result r = gy_body_get_state(t->w, t->ents[i], &s);
        if (r == GY_OK &&
            (!gy_vec3_is_finite(s.pose.position) || !gy_quat_is_finite(s.pose.rotation) ||
             !gy_vec3_is_finite(s.linear_velocity) || !gy_vec3_is_finite(s.angular_velocity)))
            fail_at(t, "a non-finite body state", r);
        if (r != GY_OK && r != GY_ERR_MISUSE)
            fail_at(t, "gy_body_get_state", r);
        if (r == GY_OK && s.failed && s.error == GY_OK)
            fail_at(t, "a failed body without its error", r);
    }
}

static bool physics_advanced(void *ctx)
{
    rt *t = ctx;
    gy_world_tick(t->w, 0.0); /* syncs the newest publish */
    return gy_world_physics_tick(t->w) > t->tick_before;
}

/* Warnings are expected by the hundred (refused bodies, faults); the checks are on results. */
static void drop_log(void *ctx, gy_log_level level, const char *message)
{
    (void)ctx;
    (void)level;
    (void)message;
}

static void run_seed(uint64_t seed)
{
    static rt t;
    memset(&t, 0, sizeof t);
    t.seed = seed;
    t.trace = getenv("GYRE_RANDOM_TRACE") != NULL;
    t.rng.s = seed * 0x9e3779b97f4a7c15ull + 1u;
    gy_test_allocator_init(&t.ta);
    gy_world_def c = gy_default_world_def();
    c.physics.backend = adapter;
    c.physics.lockstep = seed % 2 == 0;
    c.allocator = &t.ta.base;
    c.step_timeout_ns = 20000000000ull;
    static const gy_logger quiet = {drop_log, NULL};
    c.logger = &quiet;
    assert_result(gy_world_create(&c, &t.w), GY_OK);
    gy_scene_errors *errs = NULL;
    assert_result(
        gy_scene_load_string(scene_json, sizeof scene_json - 1, NULL, NULL, &t.scene, &errs),
        GY_OK);
    static const gy_vec3 hull_pts[] = {{-0.5, -0.5, -0.5},
                                       {0.5, -0.5, -0.5},
                                       {-0.5, 0.5, -0.5},
                                       {-0.5, -0.5, 0.5},
                                       {0.5, 0.5, 0.5}};
    gy_hull_def hd = {hull_pts, 5};
    assert_result(gy_geometry_create_hull(t.w, &hd, &t.hull), GY_OK);
    static const gy_vec3 mesh_pts[] = {{-20, 0, -20}, {20, 0, -20}, {20, 0, 20}, {-20, 0, 20}};
    static const uint32_t mesh_idx[] = {0, 2, 1, 0, 3, 2};
    gy_mesh_def md = {mesh_pts, 4, mesh_idx, 6};
    assert_result(gy_geometry_create_mesh(t.w, &md, &t.mesh), GY_OK);
    /* A floor the bodies land on, so contacts (and events) happen; kept out of the random picks
     * so it stays. */
    gy_entity floor = new_entity(&t, gy_entity_null());
    t.n_ents = 0;
    gy_physics_component_def fd = gy_default_physics_component_def();
    gy_scene_collider fc;
    memset(&fc, 0, sizeof fc);
    fc.def = gy_default_collider_def();
    fc.def.shape.type = GY_SHAPE_BOX;
    fc.def.shape.box_size = gy_v3(40, 1, 40);
    fd.body_type = GY_BODY_STATIC;
    fd.colliders = &fc;
    fd.collider_count = 1;
    if (!gy_entity_is_null(floor)) {
        assert_result(gy_entity_set_local_position(t.w, floor, gy_v3(0, -0.5, 0)), GY_OK);
        assert_result(gy_body_add(t.w, floor, &fd), GY_OK);
    }
    for (t.frame = 0; t.frame < frame_count; t.frame++) {
        uint32_t ops = 4 + pick(&t, 8);
        for (uint32_t i = 0; i < ops; i++)
            random_call(&t, false);
        t.call = "gy_world_tick";
        gy_result r = gy_world_tick(t.w, pick(&t, 20) == 0 ? hostile(&t) : DT);
        static const gy_result tick_codes[] = {GY_OK, GY_ERR_NON_FINITE, GY_ERR_INVALID_ARGUMENT};
        allowed(&t, r, tick_codes, 3);
        check_frame(&t);
        if (t.trace) {
            gy_world_stats ws;
            gy_world_get_stats(t.w, &ws);
            fprintf(stderr,
                    "frame %u: %u entities, %u bodies (%u effective, %u failed), %u pairs, running "
                    "%d\n",
                    t.frame, ws.entities, ws.bodies, ws.bodies_effective, ws.bodies_failed,
                    ws.touching_pairs, gy_world_physics_running(t.w));
        }
        if (!c.physics.lockstep) {
            /* Real time: let the physics thread step between frames (a condition with a
             * timeout; a frozen time scale or a stopped World just waits it out). */
            t.tick_before = gy_world_physics_tick(t.w);
            gy_test_wait_until(physics_advanced, &t, 0.05);
        }
    }
    /* Teardown: a stop delivers an EXIT for every pair still open, then nothing leaks. */
    if (gy_world_physics_running(t.w))
        must_succeed(&t, "gy_world_stop_physics", gy_world_stop_physics(t.w));
    t.call = "after stop";
    if (t.n_open != 0)
        fail_at(&t, "an ENTER never followed by its EXIT", GY_OK);
    must_succeed(&t, "gy_world_start_physics", gy_world_start_physics(t.w));
    must_succeed(&t, "gy_world_tick", gy_world_tick(t.w, DT));
    check_frame(&t);
    if (t.loaded != NULL)
        gy_scene_instance_free(t.loaded);
    gy_geometry_release(t.w, t.hull);
    gy_geometry_release(t.w, t.mesh);
    gy_world_teardown rep;
    t.call = "gy_world_destroy";
    assert_result(gy_world_destroy(t.w, &rep), GY_OK);
    if (!rep.adapter_checked || rep.adapter_live_objects != 0)
        fail_at(&t, "adapter objects left at teardown", GY_OK);
    gy_scene_free(t.scene);
    if (t.ta.live_blocks != 0 || t.ta.live_bytes != 0)
        fail_at(&t, "memory left at teardown", GY_OK);
    print_message("seed %llu (%s, %s): %llu calls, %llu refused, %llu events, %llu calls from "
                  "callbacks\n",
                  (unsigned long long)seed, adapter, seed % 2 == 0 ? "lockstep" : "real time",
                  (unsigned long long)t.calls, (unsigned long long)t.refused,
                  (unsigned long long)t.events, (unsigned long long)t.callback_calls);
}

static void test_random_api_keeps_every_invariant(void **state)
{
    (void)state;
    for (uint64_t s = first_seed; s < first_seed + seed_count; s++)
        run_seed(s);
}

static uint64_t arg_or_env(int argc, char **argv, int i, const char *env, uint64_t dflt)
{
    const char *v = getenv(env);
    if (v == NULL || *v == '\0')
        v = argc > i ? argv[i] : NULL;
    return v != NULL ? strtoull(v, NULL, 10) : dflt;
}

int main(int argc, char **argv)
{
    adapter = argc > 1 ? argv[1] : "ode";
    seed_count = arg_or_env(argc, argv, 2, "GYRE_RANDOM_SEEDS", 4);
    frame_count = arg_or_env(argc, argv, 3, "GYRE_RANDOM_FRAMES", 100);
    first_seed = arg_or_env(argc, argv, 4, "GYRE_RANDOM_FIRST_SEED", 1);
    if (first_seed == 0)
        first_seed = 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_api_keeps_every_invariant),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
