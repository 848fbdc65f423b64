/* The Bullet adapter: world lifecycle, thread binding, counters and the table Gyre looks up as
 * "bullet". Bodies and resources live in bullet_body.cpp, joints in bullet_joint.cpp, the step in
 * bullet_step.cpp and queries in bullet_query.cpp. docs/middleware.md explains the mapping. */
#include <string.h>

#include "bullet_internal.h"

#define GY_BT_MAX_BOUND_THREADS                                                                    \
    (sizeof(((gy_backend_world *)nullptr)->bound_threads) / sizeof(pthread_t))

/* Below this approach speed (m/s) contacts do not bounce, so resting bodies settle (the ODE
 * adapter uses the same value). */
#define RESTITUTION_MIN_VELOCITY 0.1

gy_backend_world::gy_backend_world(const gy_world_def &d, const gy_allocator *a)
    : allocator(a), logger(d.logger), def(d), filter(), config(), dispatcher(&config, this),
      broadphase(), solver(), world(&dispatcher, &broadphase, &solver, &config),
      fixed(0.0, nullptr, nullptr), probe(), query_stack(), query_storage(), query_shape(nullptr),
      bodies(), colliders(), joints(), resources(), thread_lock(), bound_threads(), bound_count(0),
      moving(nullptr), moving_count(0), moving_capacity(0), body_counts(), sensor_count(0),
      resource_count(0), contacts(nullptr), pairs(nullptr), contact_count(0), contact_capacity(0),
      prev_contacts(nullptr), prev_pairs(nullptr), prev_count(0), prev_capacity(0), pair_map(),
      one_way(nullptr), one_way_count(0), one_way_capacity(0), breakable_list(nullptr),
      breakable_count(0), breakable_capacity(0), broken(nullptr), broken_user(nullptr),
      broken_count(0), broken_capacity(0), scratch(nullptr), scratch_count(0), scratch_capacity(0),
      step_index(0), substep_index(0), aabbs_stale(false), substep_dt(0.0), step_error(GY_OK)
{
    gy_handle_pool_init(&bodies, a);
    gy_handle_pool_init(&colliders, a);
    gy_handle_pool_init(&joints, a);
    gy_handle_pool_init(&resources, a);

    broadphase.getOverlappingPairCache()->setOverlapFilterCallback(&filter);
    dispatcher.setNearCallback(gy_bt_near_callback);
    world.setGravity(gy_bt_vec(d.gravity));
    /* Statics keep their broadphase boxes; only moving objects are refreshed each step. */
    world.setForceUpdateAllAabbs(false);
    btContactSolverInfo &si = world.getSolverInfo();
    si.m_numIterations = (int)d.solver_iterations;
    /* Two friction directions per contact in a fixed frame about the normal, cached between steps
     * so warm starting stays coherent (with velocity-dependent directions a 10-box stack wobbles
     * by 10 cm and more at 10 iterations; with these it settles within 3 cm). Bullet clamps the
     * pair to the friction cone. Conveyor contacts set their own frame and surface motion. */
    si.m_solverMode |= SOLVER_USE_2_FRICTION_DIRECTIONS | SOLVER_ENABLE_FRICTION_DIRECTION_CACHING |
                       SOLVER_DISABLE_VELOCITY_DEPENDENT_FRICTION_DIRECTION;
    si.m_restitutionVelocityThreshold = RESTITUTION_MIN_VELOCITY;
    /* A box or hull meeting a plane gets the corners of its face in one step: Bullet's default
     * adds one point per step, so a box landing deep (fast) was pushed out at one corner and
     * tipped onto an edge. Perturbing until the manifold holds 4 points, not Bullet's usual 3,
     * keeps a sliding box on a stable tripod: at 3, a box sliding faster than the contact
     * breaking distance per step lost its stale points after the check and stood on one corner
     * every other step (the normal impulse alternated 0.07 / 0.63 N·s for 0.33). */
    config.setPlaneConvexMultipointIterations(3, 4);
}

gy_backend_world::~gy_backend_world()
{
    if (query_shape != nullptr)
        query_shape->~btConvexShape();
    gy_handle_pool_fini(&bodies);
    gy_handle_pool_fini(&colliders);
    gy_handle_pool_fini(&joints);
    gy_handle_pool_fini(&resources);
}

bool gy_bt_thread_ok(const gy_backend_world *w)
{
#ifdef NDEBUG
    (void)w;
    return true;
#else
    gy_backend_world *mw = const_cast<gy_backend_world *>(w);
    pthread_t self = pthread_self();
    bool ok = false;
    pthread_mutex_lock(&mw->thread_lock);
    for (uint32_t i = 0; i < mw->bound_count; i++)
        if (pthread_equal(mw->bound_threads[i], self)) {
            ok = true;
            break;
        }
    pthread_mutex_unlock(&mw->thread_lock);
    return ok;
#endif
}

bool gy_bt_filter_accepts(const gy_query_filter *f, const gy_bt_collider *c)
{
    gy_query_filter def;
    if (f == nullptr) {
        def = gy_default_query_filter();
        f = &def;
    }
    if ((c->category & f->mask) == 0)
        return false;
    if ((f->motion_types & GY_MOTION_BIT(c->body->type)) == 0)
        return false;
    if (c->is_sensor && !f->include_sensors)
        return false;
    if (f->ignore_body.bits != 0 && f->ignore_body.bits == c->body->id.bits)
        return false;
    if (f->ignore_collider.bits != 0 && f->ignore_collider.bits == c->id.bits)
        return false;
    return true;
}

bool gy_bt_pair_filter::needBroadphaseCollision(btBroadphaseProxy *p0, btBroadphaseProxy *p1) const
{
    const gy_bt_body *a = gy_bt_body_of(static_cast<btCollisionObject *>(p0->m_clientObject));
    const gy_bt_body *b = gy_bt_body_of(static_cast<btCollisionObject *>(p1->m_clientObject));
    if (a == nullptr || b == nullptr || a == b)
        return false;
    if ((a->category_union & b->mask_union) == 0 || (b->category_union & a->mask_union) == 0)
        return false;
    if (a->type == GY_MOTION_STATIC && b->type == GY_MOTION_STATIC)
        return false;
    if (a->type != GY_MOTION_DYNAMIC && b->type != GY_MOTION_DYNAMIC)
        return a->has_sensor || b->has_sensor;
    return true;
}

/* ---- world ---------------------------------------------------------------------------------- */

static gy_result check_world_def(const gy_world_def *d)
{
    if (!gy_vec3_is_finite(d->gravity) || !gy_is_finite(d->world_half_extent))
        return GY_ERR_NON_FINITE;
    if (d->substeps > 16 || d->solver_iterations > 255 || d->world_half_extent < 0.0)
        return GY_ERR_INVALID_ARGUMENT;
    return GY_OK;
}

static void world_free(gy_backend_world *w)
{
    const gy_allocator *a = w->allocator;
    gy_bt_step_fini(w);
    gy_free(a, w->moving, (size_t)w->moving_capacity * sizeof *w->moving);
    gy_free(a, w->breakable_list, (size_t)w->breakable_capacity * sizeof *w->breakable_list);
    gy_free(a, w->scratch, (size_t)w->scratch_capacity * sizeof *w->scratch);
    pthread_mutex_destroy(&w->thread_lock);
    w->~gy_backend_world();
    gy_free(a, w, sizeof *w);
}

static gy_result bt_world_create(const gy_world_def *def_in, gy_backend_world **out)
{
    if (out == nullptr)
        return GY_ERR_INVALID_ARGUMENT;
    *out = nullptr;
    gy_world_def def = def_in != nullptr ? *def_in : gy_default_world_def();
    gy_result r = check_world_def(&def);
    if (r != GY_OK)
        return r;
    if (def.substeps == 0)
        def.substeps = 1;
    if (def.solver_iterations == 0)
        def.solver_iterations = 10;
    if (def.world_half_extent == 0.0)
        def.world_half_extent = 4096.0;
    const gy_allocator *a = gy_allocator_or_default(def.allocator);
    def.allocator = a;

    void *mem = gy_alloc_zeroed(a, sizeof(gy_backend_world));
    if (mem == nullptr)
        return GY_ERR_OUT_OF_MEMORY;
    gy_backend_world *w = new (mem) gy_backend_world(def, a);
    if (pthread_mutex_init(&w->thread_lock, nullptr) != 0) {
        w->~gy_backend_world();
        gy_free(a, w, sizeof *w);
        return GY_ERR_BACKEND;
    }
    *out = w;
    return GY_OK;
}

static void bt_world_destroy(gy_backend_world *w)
{
    if (w == nullptr)
        return;
#ifndef NDEBUG
    pthread_mutex_lock(&w->thread_lock);
    bool someone_bound = w->bound_count > 0;
    pthread_mutex_unlock(&w->thread_lock);
    if (someone_bound && !gy_bt_thread_ok(w)) {
        gy_log(w->logger, GY_LOG_ERROR,
               "bullet: world_destroy from a thread that is not bound while another is; ignored");
        return;
    }
#endif
    /* Nothing is left to wake or report: dropping the reports first keeps teardown linear. */
    w->contact_count = 0;
    w->prev_count = 0;
    w->one_way_count = 0;
    gy_bt_joint_release_all(w);
    gy_bt_body_release_all(w);
    gy_bt_resource_release_all(w);
    world_free(w);
}

/* Bullet keeps no per-thread state that a caller must set up, so binding only records who may
 * call (checked in debug builds). */
static gy_result bt_bind_thread(gy_backend_world *w)
{
    if (w == nullptr)
        return GY_ERR_INVALID_ARGUMENT;
    pthread_t self = pthread_self();
    gy_result r = GY_OK;
    pthread_mutex_lock(&w->thread_lock);
    bool already = false;
    for (uint32_t i = 0; i < w->bound_count; i++)
        if (pthread_equal(w->bound_threads[i], self))
            already = true;
    if (!already) {
        if (w->bound_count >= GY_BT_MAX_BOUND_THREADS)
            r = GY_ERR_CAPACITY;
        else
            w->bound_threads[w->bound_count++] = self;
    }
    pthread_mutex_unlock(&w->thread_lock);
    return r;
}

static void bt_unbind_thread(gy_backend_world *w)
{
    if (w == nullptr)
        return;
    pthread_t self = pthread_self();
    pthread_mutex_lock(&w->thread_lock);
    for (uint32_t i = 0; i < w->bound_count; i++) {
        if (pthread_equal(w->bound_threads[i], self)) {
            w->bound_threads[i] = w->bound_threads[--w->bound_count];
            break;
        }
    }
    pthread_mutex_unlock(&w->thread_lock);
}

static gy_result bt_set_gravity(gy_backend_world *w, gy_vec3 g)
{
    if (w == nullptr)
        return GY_ERR_INVALID_ARGUMENT;
    if (!gy_bt_thread_ok(w))
        return GY_ERR_WRONG_THREAD;
    if (!gy_vec3_is_finite(g))
        return GY_ERR_NON_FINITE;
    w->def.gravity = g;
    w->world.setGravity(gy_bt_vec(g));
    /* Bodies carry their own gravity (scaled by their factor); sleepers would otherwise hang in
     * the air under the new one. */
    for (uint32_t i = 0; i < w->moving_count; i++) {
        gy_bt_body *b = w->moving[i];
        if (b->type == GY_MOTION_DYNAMIC)
            b->rb->setGravity(gy_bt_vec(g) * b->gravity_factor);
        gy_bt_body_wake(b);
    }
    return GY_OK;
}

static bool body_awake(const gy_bt_body *b)
{
    if (b->type == GY_MOTION_KINEMATIC)
        return true;
    return b->type == GY_MOTION_DYNAMIC && b->rb->isActive();
}

static void bt_get_counters(gy_backend_world *w, gy_backend_counters *out)
{
    if (out == nullptr)
        return;
    memset(out, 0, sizeof *out);
    if (w == nullptr || !gy_bt_thread_ok(w))
        return;
    for (int t = 0; t < GY_MOTION_TYPE_COUNT; t++)
        out->bodies[t] = w->body_counts[t];
    for (uint32_t i = 0; i < w->moving_count; i++)
        if (body_awake(w->moving[i]))
            out->awake_bodies++;
    out->colliders = w->colliders.live;
    out->sensors = w->sensor_count;
    out->contact_pairs = w->contact_count;
    out->joints = w->joints.live;
    out->resources = w->resource_count;
    out->live_objects = w->bodies.live + w->colliders.live + w->joints.live + w->resource_count;
}

static uint32_t bt_contacts(gy_backend_world *w, const gy_contact **out)
{
    if (out != nullptr)
        *out = nullptr;
    if (w == nullptr || out == nullptr || !gy_bt_thread_ok(w))
        return 0;
    *out = w->contact_count > 0 ? w->contacts : nullptr;
    return w->contact_count;
}

static uint32_t bt_broken_joints(gy_backend_world *w, const gy_joint_id **out,
                                 const uint64_t **user)
{
    if (out != nullptr)
        *out = nullptr;
    if (user != nullptr)
        *user = nullptr;
    if (w == nullptr || !gy_bt_thread_ok(w))
        return 0;
    if (out != nullptr)
        *out = w->broken;
    if (user != nullptr)
        *user = w->broken_user;
    return w->broken_count;
}

static gy_result bt_step(gy_backend_world *w, double dt)
{
    if (w == nullptr)
        return GY_ERR_INVALID_ARGUMENT;
    if (!gy_bt_thread_ok(w))
        return GY_ERR_WRONG_THREAD;
    if (!gy_is_finite(dt))
        return GY_ERR_NON_FINITE;
    if (!(dt > 0.0))
        return GY_ERR_INVALID_ARGUMENT;
    return gy_bt_step(w, dt);
}

/* Queries share the broadphase's ray stack, the world's probe object and its query shape
 * storage, so two may not run at once. */
extern "C" const gy_backend gy_bullet_backend_table = {
    .name = "bullet",
    .flags = GY_BACKEND_QUERIES_EXCLUSIVE,
    .world_create = bt_world_create,
    .world_destroy = bt_world_destroy,
    .bind_thread = bt_bind_thread,
    .unbind_thread = bt_unbind_thread,
    .set_gravity = bt_set_gravity,
    .mesh_create = gy_bt_mesh_create,
    .hull_create = gy_bt_hull_create,
    .resource_release = gy_bt_resource_release,
    .body_create = gy_bt_body_create,
    .body_release = gy_bt_body_release,
    .body_get_state = gy_bt_body_get_state,
    .body_set_pose = gy_bt_body_set_pose,
    .body_set_linear_velocity = gy_bt_body_set_linear_velocity,
    .body_set_angular_velocity = gy_bt_body_set_angular_velocity,
    .body_add_force = gy_bt_body_add_force,
    .body_add_torque = gy_bt_body_add_torque,
    .body_add_impulse = gy_bt_body_add_impulse,
    .body_add_impulse_at = gy_bt_body_add_impulse_at,
    .body_move_kinematic = gy_bt_body_move_kinematic,
    .body_point_velocity = gy_bt_body_point_velocity,
    .joint_create = gy_bt_joint_create,
    .joint_release = gy_bt_joint_release,
    .step = bt_step,
    .contacts = bt_contacts,
    .broken_joints = bt_broken_joints,
    .raycast = gy_bt_raycast,
    .shape_cast = gy_bt_shape_cast,
    .overlap = gy_bt_overlap,
    .get_counters = bt_get_counters,
};
