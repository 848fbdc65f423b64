/* The ODE driver: world lifecycle and the driver table the front end runs "ode" on. Bodies and
 * resources live in ode_body.c, joints in ode_joint.c, the step in ode_step.c, queries in
 * ode_query.c (statics through the front end's grid). docs/middleware.md explains the mapping.
 */
#include <string.h>

#include "gyre/math.h"
#include "ode_internal.h"

/* Global solver settings. Contact softness itself is set per contact in ode_step.c. */
#define ODE_WORLD_ERP 0.2
#define ODE_WORLD_CFM 1e-6
/* Caps the velocity ERP uses to undo penetration, so a deep overlap separates gently. */
#define ODE_MAX_CORRECTING_VEL 5.0
#ifndef GY_ODE_RNG_SEED
#define GY_ODE_RNG_SEED 1ul
#endif

void gy_ode_quat_to_ode(gy_quat q, dQuaternion out)
{
    out[0] = q.w;
    out[1] = q.x;
    out[2] = q.y;
    out[3] = q.z;
}

gy_quat gy_ode_quat_from_ode(const dReal *q)
{
    gy_quat r = {q[1], q[2], q[3], q[0]};
    return r;
}

static void world_free(gy_driver_world *w)
{
    const gy_allocator *a = w->allocator;
    gy_ode_static_geoms_fini(w);
    if (w->ccd_sphere != NULL)
        dGeomDestroy(w->ccd_sphere);
    if (w->ccd_box != NULL)
        dGeomDestroy(w->ccd_box);
    if (w->contact_group != NULL)
        dJointGroupDestroy(w->contact_group);
    if (w->dynamic_space != NULL)
        dSpaceDestroy(w->dynamic_space); /* empty by now; colliders own their geoms */
    if (w->world != NULL)
        dWorldDestroy(w->world);
    gy_ode_step_fini(w);
    dCloseODE();
    gy_free(a, w, sizeof *w);
}

static gy_result ode_world_create(const gy_backend_world_def *def_in, const gy_driver_records *rec,
                                  gy_driver_world **out)
{
    const gy_backend_world_def def = *def_in;
    const gy_allocator *a = def.allocator;
    gy_driver_world *w = gy_alloc_zeroed(a, sizeof *w);
    if (w == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    w->allocator = a;
    w->logger = def.logger;
    w->def = def;
    w->records = rec;
    w->resources = rec->resources;
    w->moving = rec->moving;
    w->tally = rec->tally;
    w->contacts = rec->contacts;
    /* ODE counts dInitODE2/dCloseODE pairs, so each world holds one reference. */
    if (!dInitODE2(0)) {
        gy_free(a, w, sizeof *w);
        return GY_ERR_BACKEND;
    }
    w->damping_dt = -1.0;
    w->rng_seed = GY_ODE_RNG_SEED;

    w->world = dWorldCreate();
    dWorldSetGravity(w->world, def.gravity.x, def.gravity.y, def.gravity.z);
    dWorldSetQuickStepNumIterations(w->world, (int)def.solver_iterations);
    dWorldSetERP(w->world, ODE_WORLD_ERP);
    dWorldSetCFM(w->world, ODE_WORLD_CFM);
    /* Contacts sink this far before ERP pushes back (and are pulled down to it: ode_step.c), so
     * resting contacts persist instead of flickering on and off every step. */
    dWorldSetContactSurfaceLayer(w->world, GY_ADAPTER_CONTACT_LAYER);
    dWorldSetContactMaxCorrectingVel(w->world, ODE_MAX_CORRECTING_VEL);
    dWorldSetAutoDisableFlag(w->world, 0); /* per body, see ode_body.c */

    w->dynamic_space = dSweepAndPruneSpaceCreate(NULL, dSAP_AXES_XZY);
    dSpaceSetCleanup(w->dynamic_space, 0); /* colliders own their geoms */
    w->contact_group = dJointGroupCreate(0);
    w->ccd_sphere = dCreateSphere(NULL, 1.0);
    w->ccd_box = dCreateBox(NULL, 1.0, 1.0, 1.0);
    dGeomSetData(w->ccd_sphere, NULL);
    dGeomSetData(w->ccd_box, NULL);
    gy_ode_static_geoms_init(w);

    gy_result r = gy_ode_query_init(w);
    if (r != GY_OK) {
        world_free(w);
        return r;
    }
    *out = w;
    return GY_OK;
}

static void ode_world_destroy(gy_driver_world *w)
{
    gy_ode_query_fini(w);
    world_free(w);
}

/* ODE keeps per-thread collision data, set up for each thread that binds. */
static gy_result ode_thread_setup(void)
{
    return dAllocateODEDataForThread(dAllocateMaskAll) ? GY_OK : GY_ERR_BACKEND;
}

static void ode_set_gravity(gy_driver_world *w, gy_vec3 g)
{
    w->def.gravity = g;
    dWorldSetGravity(w->world, g.x, g.y, g.z);
}

const gy_driver gy_ode_driver = {
    .name = "ode",
    /* dCreateConvex pairs up a hull's edges by comparing each with every one before it: 0.27 ms
     * for 256 vertices, 0.9 ms for 512, 9 ms for 1,024, 219 ms for 4,096 (docs/physics-thread.md).
     */
    .built_hull_max_vertices = 256,
    .pair_size = sizeof(gy_adapter_pair),
    .resource_size = sizeof(gy_ode_resource),
    .world_create = ode_world_create,
    .world_destroy = ode_world_destroy,
    .thread_setup = ode_thread_setup,
    .thread_cleanup = dCleanupODEAllDataForThread,
    .set_gravity = ode_set_gravity,
    .mesh_create = gy_ode_mesh_create,
    .hull_create = gy_ode_hull_create,
    .resource_free = gy_ode_resource_free,
    .body_create = gy_ode_body_create,
    .body_release = gy_ode_body_release,
    .body_collider_count = gy_ode_body_collider_count,
    .body_collider = gy_ode_body_collider,
    .body_wake = gy_ode_body_wake,
    .body_get_state = gy_ode_body_get_state,
    .body_set_pose = gy_ode_body_set_pose,
    .body_set_linear_velocity = gy_ode_body_set_linear_velocity,
    .body_set_angular_velocity = gy_ode_body_set_angular_velocity,
    .body_point_velocity = gy_ode_body_point_velocity,
    .body_put_asleep = gy_ode_body_put_asleep,
    .body_set_mass = gy_ode_body_set_mass,
    .collider_box = gy_ode_collider_box,
    .collider_filter_changed = gy_ode_collider_filter_changed,
    .joint_create = gy_ode_joint_create,
    .joint_release = gy_ode_joint_release,
    .joint_get_state = gy_ode_joint_get_state,
    .joint_coordinate = gy_ode_joint_coordinate,
    .joint_axis = gy_ode_joint_axis,
    .joint_motor_set = gy_ode_joint_motor_set,
    .joint_set_limit_rows = gy_ode_joint_set_limit_rows,
    .joint_set_spring = gy_ode_joint_set_spring,
    .joint_rotations = gy_ode_joint_rotations,
    .joint_force = gy_ode_joint_force,
    .step = &gy_ode_step,
    .ray_walk = gy_ode_ray_walk,
    .shape_walk = gy_ode_shape_walk,
    .ray_test = gy_ode_ray_test,
    .shape_contact = gy_ode_shape_contact,
    .cast_sweep = NULL,
    .collider_body_pose = gy_ode_collider_body_pose,
};
