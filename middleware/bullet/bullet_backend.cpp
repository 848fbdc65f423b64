/* The Bullet driver: world lifecycle and the driver table the front end runs "bullet" on. Bodies
 * and resources live in bullet_body.cpp, joints in bullet_joint.cpp, the step in bullet_step.cpp
 * and queries in bullet_query.cpp. docs/middleware.md explains the mapping. */
#include <string.h>

#include "bullet_internal.h"

gy_driver_world::gy_driver_world(const gy_backend_world_def &d, const gy_allocator *a)
    : allocator(a), logger(d.logger), def(d), filter(), config(), dispatcher(&config, this),
      broadphase(), solver(), world(&dispatcher, &broadphase, &solver, &config),
      fixed(0.0, nullptr, nullptr), probe(), scratch(), query_stack(), query_storage(),
      query_shape(nullptr), records(nullptr), resources(nullptr), static_pairs(), static_pass(0),
      statics_on(false), moving(nullptr), tally(nullptr), contacts(nullptr), aabbs_stale(false),
      substep_dt(0.0), sensor_pass(false), step_error(GY_OK)
{
    gy_hash_map_init(&shared_shapes, a);
    gy_hash_map_init(&static_pair_map, a);
    /* As a static btCollisionObject is once added: asleep, so Bullet's islands and solver take
     * it for the fixed world. */
    scratch.setActivationState(ISLAND_SLEEPING);
    broadphase.getOverlappingPairCache()->setOverlapFilterCallback(&filter);
    dispatcher.setNearCallback(gy_bt_near_callback);
    world.setGravity(gy_bt_vec(d.gravity));
    /* Statics keep their broadphase boxes; only moving objects are refreshed each step. */
    world.setForceUpdateAllAabbs(false);
    btContactSolverInfo &si = world.getSolverInfo();
    si.m_numIterations = (int)d.solver_iterations;
    /* Two friction directions per contact, in a frame the adapter sets (marked initialised, so
     * cached): along the slip when the contact slips, else fixed about the normal, with the warm
     * start carried into a turned frame as a vector (Bullet's own velocity-dependent directions,
     * re-picked without that, let a 10-box stack wobble by 10 cm and more at 10 iterations).
     * Conveyor contacts set their own frame and surface motion. */
    si.m_solverMode |= SOLVER_USE_2_FRICTION_DIRECTIONS | SOLVER_ENABLE_FRICTION_DIRECTION_CACHING |
                       SOLVER_DISABLE_VELOCITY_DEPENDENT_FRICTION_DIRECTION;
    si.m_restitutionVelocityThreshold = GY_ADAPTER_BOUNCE_MIN_VELOCITY;
    /* Overlap deeper than GY_ADAPTER_SOLVER_DEPTH is undone by split impulse, in positions only
     * (Bullet's default splits only beyond 4 cm); the speed that corrects the rest is given back
     * when the body leaves (the front end's overlap.c). Splitting all of it leaves a 10-box stack
     * without the velocity correction that keeps it upright at 10 iterations: it falls within 5 s
     * at any m_erp2 tried. */
    si.m_splitImpulse = 1;
    si.m_splitImpulsePenetrationThreshold = -GY_ADAPTER_SOLVER_DEPTH;
    /* A box or hull meeting a plane gets the corners of its face in one step: Bullet's default
     * adds one point per step, so a box landing deep (fast) was pushed out at one corner and
     * tipped onto an edge. Perturbing until the manifold holds 4 points, not Bullet's usual 3,
     * keeps a sliding box on a stable tripod: at 3, a box sliding faster than the contact
     * breaking distance per step lost its stale points after the check and stood on one corner
     * every other step (the normal impulse alternated 0.07 / 0.63 N·s for 0.33). Four
     * perturbations refill a manifold emptied of stale points (gy_bt_near_callback) with the
     * four corners; at 3 a box sliding at 4 m/s stood on three and was braked 4 % too hard. */
    config.setPlaneConvexMultipointIterations(4, 4);
}

gy_driver_world::~gy_driver_world()
{
    if (query_shape != nullptr)
        query_shape->~btConvexShape();
    gy_hash_map_fini(&shared_shapes);
    /* The bodies, and with them their static pairs, went before the world. */
    gy_bt_static_pairs_free(allocator, &static_pairs);
    gy_bt_raw_points_free(allocator, &held_points);
    gy_hash_map_fini(&static_pair_map);
}

bool gy_bt_pair_filter::needBroadphaseCollision(btBroadphaseProxy *p0, btBroadphaseProxy *p1) const
{
    const gy_bt_body *a = gy_bt_body_of(static_cast<btCollisionObject *>(p0->m_clientObject));
    const gy_bt_body *b = gy_bt_body_of(static_cast<btCollisionObject *>(p1->m_clientObject));
    return a != nullptr && b != nullptr && a != b && gy_bt_bodies_may_pair(a, b);
}

/* ---- world ---------------------------------------------------------------------------------- */

static void world_free(gy_driver_world *w)
{
    const gy_allocator *a = w->allocator;
    w->~gy_driver_world();
    gy_free(a, w, sizeof *w);
}

static gy_result bt_world_create(const gy_backend_world_def *def_in, const gy_driver_records *rec,
                                 gy_driver_world **out)
{
    const gy_backend_world_def def = *def_in;
    const gy_allocator *a = def.allocator;
    void *mem = gy_alloc_zeroed(a, sizeof(gy_driver_world));
    if (mem == nullptr)
        return GY_ERR_OUT_OF_MEMORY;
    gy_driver_world *w = new (mem) gy_driver_world(def, a);
    w->records = rec;
    w->resources = rec->resources;
    w->moving = rec->moving;
    w->tally = rec->tally;
    w->contacts = rec->contacts;
    *out = w;
    return GY_OK;
}

static void bt_world_destroy(gy_driver_world *w)
{
    world_free(w);
}

static void bt_set_gravity(gy_driver_world *w, gy_vec3 g)
{
    w->def.gravity = g;
    w->world.setGravity(gy_bt_vec(g));
    /* Bodies carry their own gravity (scaled by their factor). */
    for (uint32_t i = 0; i < w->moving->count; i++) {
        gy_bt_body *b = w->moving->items[i];
        if (b->base.type == GY_MOTION_DYNAMIC)
            b->rb->setGravity(gy_bt_vec(g) * b->motion()->shared.gravity_factor);
    }
}

/* Bullet keeps no per-thread state that a caller must set up: no thread hooks. */
extern "C" const gy_driver gy_bullet_driver = {
    .name = "bullet",
    .built_hull_max_vertices = 0, /* btConvexHullShape takes its points in linear time */
    .pair_size = sizeof(gy_adapter_pair),
    .resource_size = sizeof(gy_bt_resource),
    .cast_sweep_slack = 2.0 * GY_BT_PROBE_GAP,
    .world_create = bt_world_create,
    .world_destroy = bt_world_destroy,
    .thread_setup = nullptr,
    .thread_cleanup = nullptr,
    .set_gravity = bt_set_gravity,
    .mesh_create = gy_bt_mesh_create,
    .hull_create = gy_bt_hull_create,
    .resource_free = gy_bt_resource_free,
    .body_create = gy_bt_body_create,
    .body_release = gy_bt_body_release,
    .body_collider_count = gy_bt_body_collider_count,
    .body_collider = gy_bt_body_collider,
    .body_wake = gy_bt_body_wake,
    .body_get_state = gy_bt_body_get_state,
    .body_set_pose = gy_bt_body_set_pose,
    .body_set_linear_velocity = gy_bt_body_set_linear_velocity,
    .body_set_angular_velocity = gy_bt_body_set_angular_velocity,
    .body_point_velocity = gy_bt_body_point_velocity,
    .body_put_asleep = gy_bt_body_put_asleep,
    .body_set_mass = gy_bt_body_set_mass,
    .collider_box = gy_bt_collider_box,
    .collider_filter_changed = gy_bt_collider_filter_changed,
    .joint_create = gy_bt_joint_create,
    .joint_release = gy_bt_joint_release,
    .joint_get_state = gy_bt_joint_get_state,
    .joint_coordinate = gy_bt_joint_coordinate,
    .joint_axis = gy_bt_joint_axis,
    .joint_motor_set = gy_bt_joint_motor_set,
    .joint_set_limit_rows = gy_bt_joint_set_limit_rows,
    .joint_set_spring = gy_bt_joint_set_spring,
    .joint_rotations = gy_bt_joint_rotations,
    .joint_force = gy_bt_joint_force,
    .step = &gy_bt_step,
    .ray_walk = gy_bt_ray_walk,
    .shape_walk = gy_bt_shape_walk,
    .ray_test = gy_bt_ray_test,
    .shape_contact = gy_bt_shape_contact,
    .cast_sweep = gy_bt_cast_sweep,
    .collider_body_pose = gy_bt_collider_body_pose,
};
