#include "fault_backend.h"

#include <stdio.h>
#include <string.h>

#include "gyre/geometry.h"
#include "gyre/physics/commands.h"

/* The wrapper's world: the wrapped adapter's world plus the way back to the wrapper. */
typedef struct fault_world {
    gy_fault_backend *fb;
    gy_backend_world *inner;
} fault_world;

static fault_world *fw(gy_backend_world *w)
{
    return (fault_world *)(void *)w;
}

/* Unwraps for delegation; NULL stays NULL so the wrapped adapter reports the misuse itself. */
static gy_backend_world *in(gy_backend_world *w)
{
    return w != NULL ? fw(w)->inner : NULL;
}

static const gy_backend *be(gy_backend_world *w)
{
    return fw(w)->fb->inner;
}

static uint64_t bump(uint64_t *c)
{
    return __atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

uint64_t gy_fault_backend_get(const uint64_t *counter)
{
    return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

/* Counts one create call of `kind`; true when this one is to fail. */
static bool inject(gy_fault_backend *fb, gy_fault_kind kind)
{
    uint64_t n = bump(&fb->calls[kind]);
    uint64_t m = bump(&fb->calls_any);
    bool fail = (fb->fail_at[kind] != 0 && n == fb->fail_at[kind]) ||
                (fb->fail_any_at != 0 && m == fb->fail_any_at);
    if (fail)
        bump(&fb->injected);
    return fail;
}

/* ---- the forwarding allocator -----------------------------------------------------------------
 */

static void *fa_alloc(void *ctx, size_t size)
{
    const gy_allocator *t = ((gy_fault_backend *)ctx)->target;
    return t->alloc(t->ctx, size);
}

static void *fa_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size)
{
    const gy_allocator *t = ((gy_fault_backend *)ctx)->target;
    return t->realloc(t->ctx, ptr, old_size, new_size);
}

static void fa_free(void *ctx, void *ptr, size_t size)
{
    const gy_allocator *t = ((gy_fault_backend *)ctx)->target;
    t->free(t->ctx, ptr, size);
}

/* ---- world ----------------------------------------------------------------------------------- */

static gy_result f_world_create(const gy_backend_world_def *def, gy_backend_world **out)
{
    if (def == NULL || out == NULL || def->allocator == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    /* The World and the subsystem count their bytes through a meter over the given allocator. */
    const gy_allocator *a = def->allocator;
    while (a->alloc != fa_alloc && gy_allocator_meter_inner(a) != NULL)
        a = gy_allocator_meter_inner(a);
    if (a->alloc != fa_alloc)
        return GY_ERR_INVALID_ARGUMENT;
    gy_fault_backend *fb = a->ctx;
    fault_world *w = gy_alloc(fb->target, sizeof *w);
    if (w == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    gy_backend_world_def d = *def;
    d.allocator = fb->target;
    w->fb = fb;
    w->inner = NULL;
    gy_result r = fb->inner->world_create(&d, &w->inner);
    if (r != GY_OK) {
        gy_free(fb->target, w, sizeof *w);
        return r;
    }
    bump(&fb->worlds_created);
    *out = (gy_backend_world *)(void *)w;
    return GY_OK;
}

static void f_world_destroy(gy_backend_world *w)
{
    if (w == NULL)
        return;
    fault_world *f = fw(w);
    gy_backend_counters c;
    memset(&c, 0, sizeof c);
    f->fb->inner->get_counters(f->inner, &c);
    __atomic_store_n(&f->fb->live_at_destroy, c.live_objects, __ATOMIC_RELAXED);
    if (c.live_objects > __atomic_load_n(&f->fb->max_live_at_destroy, __ATOMIC_RELAXED))
        __atomic_store_n(&f->fb->max_live_at_destroy, c.live_objects, __ATOMIC_RELAXED);
    f->fb->inner->world_destroy(f->inner);
    bump(&f->fb->worlds_destroyed);
    gy_free(f->fb->target, f, sizeof *f);
}

static gy_result f_bind_thread(gy_backend_world *w)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->bind_thread(in(w));
}

static void f_unbind_thread(gy_backend_world *w)
{
    if (w != NULL)
        be(w)->unbind_thread(in(w));
}

static gy_result f_set_gravity(gy_backend_world *w, gy_vec3 g)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->set_gravity(in(w), g);
}

/* ---- the three injected categories ----------------------------------------------------------- */

static gy_result f_mesh_create(gy_backend_world *w, const gy_mesh_def *def, gy_resource_id *out)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (inject(fw(w)->fb, GY_FAULT_RESOURCE))
        return fw(w)->fb->fail_result;
    return be(w)->mesh_create(in(w), def, out);
}

static gy_result f_hull_create(gy_backend_world *w, const gy_hull_def *def, gy_resource_id *out)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (inject(fw(w)->fb, GY_FAULT_RESOURCE))
        return fw(w)->fb->fail_result;
    return be(w)->hull_create(in(w), def, out);
}

static gy_result f_hull_create_built(gy_backend_world *w, const gy_hull *hull, gy_resource_id *out)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (inject(fw(w)->fb, GY_FAULT_RESOURCE))
        return fw(w)->fb->fail_result;
    return be(w)->hull_create_built(in(w), hull, out);
}

static gy_result f_body_create(gy_backend_world *w, const gy_body_def *def,
                               const gy_collider_def *colliders, uint32_t collider_count,
                               gy_body_id *out, gy_collider_id *collider_ids)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (inject(fw(w)->fb, GY_FAULT_BODY))
        return fw(w)->fb->fail_result;
    return be(w)->body_create(in(w), def, colliders, collider_count, out, collider_ids);
}

static gy_result f_joint_create(gy_backend_world *w, const gy_joint_def *def, gy_joint_id *out)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (inject(fw(w)->fb, GY_FAULT_JOINT))
        return fw(w)->fb->fail_result;
    return be(w)->joint_create(in(w), def, out);
}

/* ---- plain delegation ------------------------------------------------------------------------ */

static void f_resource_release(gy_backend_world *w, gy_resource_id id)
{
    if (w != NULL)
        be(w)->resource_release(in(w), id);
}

/* The injected leak: a tetrahedron hull that nothing will release. */
static void leak_one(gy_backend_world *w)
{
    static const gy_vec3 points[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    gy_hull_def def = {points, 4};
    gy_resource_id id;
    if (be(w)->hull_create(in(w), &def, &id) == GY_OK)
        bump(&fw(w)->fb->leaked);
}

static gy_result f_body_release(gy_backend_world *w, gy_body_id id)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_result r = be(w)->body_release(in(w), id);
    if (r == GY_OK && fw(w)->fb->leak_per_body_release)
        leak_one(w);
    return r;
}

static gy_result f_body_get_state(gy_backend_world *w, gy_body_id id, gy_body_state *out)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->body_get_state(in(w), id, out);
}

static gy_result f_body_set_pose(gy_backend_world *w, gy_body_id id, gy_pose pose)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->body_set_pose(in(w), id, pose);
}

static gy_result f_body_set_linear_velocity(gy_backend_world *w, gy_body_id id, gy_vec3 v)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->body_set_linear_velocity(in(w), id, v);
}

static gy_result f_body_set_angular_velocity(gy_backend_world *w, gy_body_id id, gy_vec3 v)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->body_set_angular_velocity(in(w), id, v);
}

static gy_result f_body_set_awake(gy_backend_world *w, gy_body_id id, bool awake)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->body_set_awake(in(w), id, awake);
}

static gy_result f_body_set_mass(gy_backend_world *w, gy_body_id id, double mass)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->body_set_mass(in(w), id, mass);
}

static gy_result f_collider_set_material(gy_backend_world *w, gy_collider_id id,
                                         const gy_material *m)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->collider_set_material(in(w), id, m);
}

static gy_result f_collider_set_filter(gy_backend_world *w, gy_collider_id id, uint32_t category,
                                       uint32_t mask)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT
                     : be(w)->collider_set_filter(in(w), id, category, mask);
}

static gy_result f_body_add_force(gy_backend_world *w, gy_body_id id, gy_vec3 f)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->body_add_force(in(w), id, f);
}

static gy_result f_body_add_torque(gy_backend_world *w, gy_body_id id, gy_vec3 t)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->body_add_torque(in(w), id, t);
}

static gy_result f_body_add_impulse(gy_backend_world *w, gy_body_id id, gy_vec3 j)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->body_add_impulse(in(w), id, j);
}

static gy_result f_body_add_impulse_at(gy_backend_world *w, gy_body_id id, gy_vec3 j, gy_vec3 p)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->body_add_impulse_at(in(w), id, j, p);
}

static gy_result f_body_move_kinematic(gy_backend_world *w, gy_body_id id, gy_pose target,
                                       double dt)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->body_move_kinematic(in(w), id, target, dt);
}

static gy_result f_collider_get_policy(gy_backend_world *w, gy_collider_id id,
                                       gy_collider_policy *out)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->collider_get_policy(in(w), id, out);
}

static gy_result f_body_point_velocity(gy_backend_world *w, gy_body_id id, gy_vec3 p, gy_vec3 *out)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->body_point_velocity(in(w), id, p, out);
}

static gy_result f_joint_release(gy_backend_world *w, gy_joint_id id)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->joint_release(in(w), id);
}

static gy_result f_joint_set_motor(gy_backend_world *w, gy_joint_id id, const gy_joint_motor *m)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->joint_set_motor(in(w), id, m);
}

static gy_result f_joint_get_state(gy_backend_world *w, gy_joint_id id, gy_joint_state *out)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->joint_get_state(in(w), id, out);
}

static gy_result f_step(gy_backend_world *w, double dt)
{
    return w == NULL ? GY_ERR_INVALID_ARGUMENT : be(w)->step(in(w), dt);
}

static uint32_t f_contacts(gy_backend_world *w, const gy_contact **out)
{
    if (w == NULL) {
        if (out != NULL)
            *out = NULL;
        return 0;
    }
    return be(w)->contacts(in(w), out);
}

static uint32_t f_broken_joints(gy_backend_world *w, const gy_joint_id **out, const uint64_t **user)
{
    if (w == NULL) {
        if (out != NULL)
            *out = NULL;
        if (user != NULL)
            *user = NULL;
        return 0;
    }
    return be(w)->broken_joints(in(w), out, user);
}

static gy_result f_raycast(gy_backend_world *w, gy_vec3 origin, gy_vec3 translation,
                           const gy_query_filter *filter, gy_collector collector, gy_hit *hits,
                           uint32_t capacity, uint32_t *count)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    return be(w)->raycast(in(w), origin, translation, filter, collector, hits, capacity, count);
}

static gy_result f_shape_cast(gy_backend_world *w, const gy_shape *shape, gy_pose pose,
                              gy_vec3 translation, const gy_query_filter *filter,
                              gy_collector collector, gy_hit *hits, uint32_t capacity,
                              uint32_t *count)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    return be(w)->shape_cast(in(w), shape, pose, translation, filter, collector, hits, capacity,
                             count);
}

static gy_result f_overlap(gy_backend_world *w, const gy_shape *shape, gy_pose pose,
                           const gy_query_filter *filter, gy_collector collector, gy_hit *hits,
                           uint32_t capacity, uint32_t *count)
{
    if (w == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    return be(w)->overlap(in(w), shape, pose, filter, collector, hits, capacity, count);
}

static void f_get_counters(gy_backend_world *w, gy_backend_counters *out)
{
    if (w == NULL) {
        if (out != NULL)
            memset(out, 0, sizeof *out);
        return;
    }
    be(w)->get_counters(in(w), out);
}

/* ---- set-up ---------------------------------------------------------------------------------- */

gy_result gy_fault_backend_init(gy_fault_backend *fb, const char *inner_name,
                                const gy_allocator *target)
{
    if (fb == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    memset(fb, 0, sizeof *fb);
    fb->inner = gy_backend_find(inner_name);
    if (fb->inner == NULL)
        return GY_ERR_UNKNOWN_BACKEND;
    fb->target = gy_allocator_or_default(target);
    fb->allocator = (gy_allocator){fa_alloc, fa_realloc, fa_free, fb};
    fb->fail_result = GY_ERR_BACKEND;
    snprintf(fb->name, sizeof fb->name, "fault:%s", fb->inner->name);
    fb->table = (gy_backend){
        .name = fb->name,
        .flags = fb->inner->flags,
        .world_create = f_world_create,
        .world_destroy = f_world_destroy,
        .bind_thread = f_bind_thread,
        .unbind_thread = f_unbind_thread,
        .set_gravity = f_set_gravity,
        .mesh_create = f_mesh_create,
        .hull_create = f_hull_create,
        .hull_create_built = f_hull_create_built,
        .resource_release = f_resource_release,
        .body_create = f_body_create,
        .body_release = f_body_release,
        .body_get_state = f_body_get_state,
        .body_set_pose = f_body_set_pose,
        .body_set_linear_velocity = f_body_set_linear_velocity,
        .body_set_angular_velocity = f_body_set_angular_velocity,
        .body_add_force = f_body_add_force,
        .body_set_awake = f_body_set_awake,
        .body_set_mass = f_body_set_mass,
        .collider_set_material = f_collider_set_material,
        .collider_set_filter = f_collider_set_filter,
        .collider_get_policy = f_collider_get_policy,
        .body_add_torque = f_body_add_torque,
        .body_add_impulse = f_body_add_impulse,
        .body_add_impulse_at = f_body_add_impulse_at,
        .body_move_kinematic = f_body_move_kinematic,
        .body_point_velocity = f_body_point_velocity,
        .joint_create = f_joint_create,
        .joint_release = f_joint_release,
        .joint_set_motor = f_joint_set_motor,
        .joint_get_state = f_joint_get_state,
        .step = f_step,
        .contacts = f_contacts,
        .broken_joints = f_broken_joints,
        .raycast = f_raycast,
        .shape_cast = f_shape_cast,
        .overlap = f_overlap,
        .get_counters = f_get_counters,
    };
    return GY_OK;
}

void gy_fault_backend_reset(gy_fault_backend *fb)
{
    memset(fb->calls, 0, sizeof fb->calls);
    fb->calls_any = 0;
    fb->injected = 0;
    fb->leaked = 0;
    fb->worlds_created = 0;
    fb->worlds_destroyed = 0;
    fb->live_at_destroy = 0;
    fb->max_live_at_destroy = 0;
}
