/* ODE adapter: mesh and hull resources, bodies and their colliders, and the per-body calls.
 *
 * ODE integrates a body about its origin and wants the centre of mass there, so a dynamic body's
 * dBody sits at the Gyre body's centre of mass and every geom is offset by -com; the Gyre origin
 * pose is recovered on read. Static bodies have no dBody: their geoms are posed in the world, and
 * the front end indexes them in its static grid by their AABBs (gy_ode_collider_box). Mass, centre
 * of mass and inertia come from geometry.c so every adapter agrees. */
#include <assert.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "gyre/math.h"
#include "ode_internal.h"

/* Sleep: ODE's per-body auto-disable set to the shared rule (GY_ADAPTER_SLEEP_*, whose thresholds
 * ODE's defaults never reach in a pile at 10 solver iterations). Since ODE re-enables a disabled
 * body that touches an enabled one, a pile sleeps as a whole. */

/* ---- resources ------------------------------------------------------------------------------ */

void gy_ode_resource_free(gy_driver_world *w, gy_adapter_resource *rec)
{
    const gy_allocator *a = w->allocator;
    gy_ode_resource *r = (gy_ode_resource *)rec;
    if (r->trimesh != NULL)
        dGeomTriMeshDataDestroy(r->trimesh);
    if (r->base.kind == GY_SHAPE_HULL)
        gy_free(a, r->convex_polys, (size_t)r->base.hull.triangle_count * 4u * sizeof(unsigned));
    gy_adapter_resource_fini(a, &r->base);
    gy_free(a, r, sizeof *r);
}

gy_result gy_ode_mesh_create(gy_driver_world *w, gy_adapter_resource *rec)
{
    (void)w;
    gy_ode_resource *r = (gy_ode_resource *)rec;
    /* ODE reads the record's copies in place: its index type must be Gyre's. */
    _Static_assert(sizeof(dTriIndex) == sizeof(uint32_t), "ODE built with 16-bit mesh indices");
    r->trimesh = dGeomTriMeshDataCreate();
    dGeomTriMeshDataBuildDouble(r->trimesh, r->base.vertices, 3 * (int)sizeof(double),
                                (int)r->base.vertex_count, (const dTriIndex *)r->base.indices,
                                (int)r->base.index_count, 3 * (int)sizeof(dTriIndex));
    /* ODE's hull-against-mesh collider refuses a mesh without its face angles (an internal
     * error). Internal edges are the front end's rule (gy_adapter_contact_mesh_edges), not
     * ODE's: its concave-edge flags changed nothing any test or scene sees. */
    dGeomTriMeshDataPreprocess2(r->trimesh, 1u << dTRIDATAPREPROCESS_BUILD_FACE_ANGLES, NULL);
    return GY_OK;
}

gy_result gy_ode_hull_create(gy_driver_world *w, gy_adapter_resource *rec)
{
    const gy_allocator *a = w->allocator;
    gy_ode_resource *r = (gy_ode_resource *)rec;
    const gy_hull *h = &r->base.hull;
    r->convex_polys = gy_alloc(a, (size_t)h->triangle_count * 4u * sizeof(unsigned));
    if (r->convex_polys == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    for (uint32_t f = 0; f < h->triangle_count; f++) {
        r->convex_polys[4u * f] = 3u;
        for (uint32_t k = 0; k < 3u; k++)
            r->convex_polys[4u * f + 1u + k] = h->triangles[3u * f + k];
    }
    return GY_OK;
}

/* ---- body helpers --------------------------------------------------------------------------- */

gy_quat gy_ode_shape_axis_fix(gy_shape_type t)
{
    if (t == GY_SHAPE_CAPSULE || t == GY_SHAPE_CYLINDER)
        return gy_quat_axis_angle(gy_v3(1.0, 0.0, 0.0), -0.5 * GY_PI);
    return gy_quat_identity();
}

gy_vec3 gy_ode_body_com(const gy_ode_body *b)
{
    if (gy_ode_dbody(b) == NULL)
        return b->pose.position; /* a static's centre of mass is its origin */
    return gy_ode_vec(dBodyGetPosition(b->body));
}

gy_pose gy_ode_body_pose(const gy_ode_body *b)
{
    if (gy_ode_dbody(b) == NULL)
        return b->pose;
    gy_pose p;
    p.rotation = gy_ode_quat_from_ode(dBodyGetQuaternion(b->body));
    p.position =
        gy_v3_sub(gy_ode_vec(dBodyGetPosition(b->body)), gy_quat_rotate(p.rotation, b->com_local));
    return p;
}

gy_vec3 gy_ode_body_velocity_at(const gy_ode_body *b, gy_vec3 p)
{
    if (gy_ode_dbody(b) == NULL)
        return gy_v3(0.0, 0.0, 0.0);
    dVector3 v;
    dBodyGetPointVel(b->body, p.x, p.y, p.z, v);
    return gy_ode_vec(v);
}

void gy_ode_body_wake(gy_driver_world *w, gy_ode_body *b)
{
    (void)w;
    dBodyEnable(b->body);
}

void gy_ode_body_apply_damping(gy_ode_body *b, double dt)
{
    if (b->base.type != GY_MOTION_DYNAMIC)
        return;
    /* ODE scales velocity by (1 - scale) once per step. */
    dBodySetLinearDamping(b->body, gy_adapter_damping_loss(b->motion.linear_damping, dt));
    dBodySetAngularDamping(b->body, gy_adapter_damping_loss(b->motion.angular_damping, dt));
}

static dGeomID make_geom(const gy_shape *s, gy_ode_resource *res, dSpaceID space)
{
    switch (s->type) {
    case GY_SHAPE_SPHERE:
        return dCreateSphere(space, s->radius);
    case GY_SHAPE_BOX:
        return dCreateBox(space, s->box_size.x, s->box_size.y, s->box_size.z);
    case GY_SHAPE_CAPSULE:
        return dCreateCapsule(space, s->radius, s->height - 2.0 * s->radius);
    case GY_SHAPE_CYLINDER:
        return dCreateCylinder(space, s->radius, s->height);
    case GY_SHAPE_PLANE: {
        double l = gy_v3_len(s->normal);
        return dCreatePlane(space, s->normal.x / l, s->normal.y / l, s->normal.z / l,
                            s->offset / l);
    }
    case GY_SHAPE_HULL:
        return dCreateConvex(space, &res->base.hull.planes[0][0], res->base.hull.triangle_count,
                             &res->base.hull.vertices[0].x, res->base.hull.vertex_count,
                             res->convex_polys);
    case GY_SHAPE_MESH:
        return dCreateTriMesh(space, res->trimesh, NULL, NULL, NULL);
    default:
        return NULL;
    }
}

/* Poses geom `g` of a static collider in the world from its body's pose. Planes are
 * world-space. */
static void pose_static_geom(const gy_ode_body *b, const gy_ode_collider *c, dGeomID g)
{
    if (c->base.shape_type == GY_SHAPE_PLANE)
        return;
    gy_pose wp = gy_pose_mul(b->pose, gy_adapter_collider_local_pose(&c->base));
    dQuaternion q;
    gy_ode_quat_to_ode(gy_quat_mul(wp.rotation, gy_ode_shape_axis_fix(c->base.shape_type)), q);
    dGeomSetPosition(g, wp.position.x, wp.position.y, wp.position.z);
    dGeomSetQuaternion(g, q);
}

/* ---- shared geoms of static primitives ------------------------------------------------------ */

/* The slot of a shape's shared geom, or -1 when a static of that shape keeps its own geom
 * (planes, hulls and meshes: ODE keeps per-geom data for them). */
static int shared_slot(gy_shape_type t)
{
    switch (t) {
    case GY_SHAPE_SPHERE:
        return 0;
    case GY_SHAPE_BOX:
        return 1;
    case GY_SHAPE_CAPSULE:
        return 2;
    case GY_SHAPE_CYLINDER:
        return 3;
    default:
        return -1;
    }
}

void gy_ode_static_geoms_init(gy_driver_world *w)
{
    w->static_geoms[0] = dCreateSphere(NULL, 1.0);
    w->static_geoms[1] = dCreateBox(NULL, 1.0, 1.0, 1.0);
    w->static_geoms[2] = dCreateCapsule(NULL, 1.0, 1.0);
    w->static_geoms[3] = dCreateCylinder(NULL, 1.0, 1.0);
    for (int k = 0; k < 4; k++) {
        dGeomSetData(w->static_geoms[k], NULL);
        w->static_posed[k] = NULL;
    }
}

void gy_ode_static_geoms_fini(gy_driver_world *w)
{
    for (int k = 0; k < 4; k++)
        if (w->static_geoms[k] != NULL)
            dGeomDestroy(w->static_geoms[k]);
}

/* After a static moves, changes filter or goes, no shared geom stands for it any more. */
static void static_geoms_forget(gy_driver_world *w, const gy_ode_collider *c)
{
    int k = shared_slot(c->base.shape_type);
    if (k >= 0 && w->static_posed[k] == c) {
        w->static_posed[k] = NULL;
        dGeomSetData(w->static_geoms[k], NULL);
    }
}

dGeomID gy_ode_static_geom(gy_driver_world *w, gy_ode_collider *c)
{
    int k = shared_slot(c->base.shape_type);
    /* Only a static primitive is made without a geom of its own (make_geom). */
    assert(k >= 0 && c->geom == NULL);
    if (k < 0)
        return c->geom;
    dGeomID g = w->static_geoms[k];
    if (w->static_posed[k] == c)
        return g;
    /* The same parameters, pose and bits as the geom make_geom would have made for it. */
    const gy_shape shape = gy_adapter_collider_shape(&c->base);
    const gy_shape *s = &shape;
    switch (s->type) {
    case GY_SHAPE_SPHERE:
        dGeomSphereSetRadius(g, s->radius);
        break;
    case GY_SHAPE_BOX:
        dGeomBoxSetLengths(g, s->box_size.x, s->box_size.y, s->box_size.z);
        break;
    case GY_SHAPE_CAPSULE:
        dGeomCapsuleSetParams(g, s->radius, s->height - 2.0 * s->radius);
        break;
    default:
        dGeomCylinderSetParams(g, s->radius, s->height);
        break;
    }
    pose_static_geom(gy_ode_owner(c), c, g);
    dGeomSetData(g, c);
    dGeomSetCategoryBits(g, c->base.category);
    dGeomSetCollideBits(g, c->base.mask);
    w->static_posed[k] = c;
    return g;
}

/* Poses a static collider's own geom, or has its shared geom posed again when next asked. */
static void place_static_geom(gy_driver_world *w, const gy_ode_body *b, gy_ode_collider *c)
{
    if (c->geom != NULL)
        pose_static_geom(b, c, c->geom);
    else
        static_geoms_forget(w, c);
}

static void set_dbody_pose(gy_ode_body *b, gy_pose pose)
{
    gy_vec3 com = gy_pose_apply(pose, b->com_local);
    dQuaternion q;
    gy_ode_quat_to_ode(pose.rotation, q);
    dBodySetPosition(b->body, com.x, com.y, com.z);
    dBodySetQuaternion(b->body, q);
}

/* Bytes of a body's block: the body record and its collider records (a static's with their grid
 * entries), one allocation (a static level is mostly one-collider bodies; each allocation costs a
 * header). */
static size_t body_block_size(gy_motion_type type, uint32_t n)
{
    return gy_ode_body_record_size(type) + (size_t)n * gy_ode_collider_size(type);
}

static void body_free(gy_driver_world *w, gy_ode_body *b)
{
    for (uint32_t i = 0; i < b->collider_count; i++) {
        gy_ode_collider *c = gy_ode_body_record(b, i);
        if (c->geom != NULL)
            dGeomDestroy(c->geom);
        static_geoms_forget(w, c);
    }
    if (gy_ode_dbody(b) != NULL) {
        if (b->lock_lmotor != NULL)
            dJointDestroy(b->lock_lmotor);
        if (b->lock_amotor != NULL)
            dJointDestroy(b->lock_amotor);
        dBodyDestroy(b->body);
    }
    gy_free(w->allocator, b, body_block_size(b->base.type, b->collider_count));
}

/* ---- body create / release ------------------------------------------------------------------ */

static void setup_dynamic(gy_driver_world *w, gy_ode_body *b, const gy_body_def *def,
                          const gy_mass *m, const dMass *dm, double sleep_turn)
{
    dBodySetMass(b->body, dm);
    b->inv_inertia = gy_adapter_inertia_inverse(m->inertia);
    dBodySetGravityMode(b->body, b->motion.gravity_factor == 1.0 ? 1 : 0);
    dBodySetLinearDampingThreshold(b->body, 0.0);
    dBodySetAngularDampingThreshold(b->body, 0.0);
    if (w->damping_dt > 0.0)
        gy_ode_body_apply_damping(b, w->damping_dt);
    if (def->allow_sleeping) {
        dBodySetAutoDisableFlag(b->body, 1);
        /* ODE squares these itself (it compares squared average speeds). */
        dBodySetAutoDisableLinearThreshold(b->body, GY_ADAPTER_SLEEP_LINEAR_SPEED);
        dBodySetAutoDisableAngularThreshold(b->body, sleep_turn);
        dBodySetAutoDisableAverageSamplesCount(b->body, GY_ADAPTER_SLEEP_SAMPLES);
        dBodySetAutoDisableSteps(b->body, 1);
        dBodySetAutoDisableTime(b->body, GY_ADAPTER_SLEEP_TIME);
    } else {
        dBodySetAutoDisableFlag(b->body, 0);
    }
}

gy_result gy_ode_body_create(gy_driver_world *w, const gy_body_def *def,
                             const gy_collider_def *cols, uint32_t n,
                             gy_adapter_resource *const *res,
                             const gy_adapter_collider_rare *const *rare, const gy_mass *mp,
                             double sleep_turn, gy_ode_body **out, gy_ode_collider **colliders)
{
    gy_result r = GY_OK;
    const gy_allocator *a = w->allocator;
    const gy_mass mass = *mp;
    dMass dm = {0};
    if (def->type == GY_MOTION_DYNAMIC) {
        dMassSetParameters(&dm, mass.mass, 0.0, 0.0, 0.0, mass.inertia.m[0][0],
                           mass.inertia.m[1][1], mass.inertia.m[2][2], mass.inertia.m[0][1],
                           mass.inertia.m[0][2], mass.inertia.m[1][2]);
        if (!dMassCheck(&dm))
            r = GY_ERR_INVALID_ARGUMENT;
    }

    /* Everything that can fail is done before any ODE object exists. */
    gy_ode_body *b = NULL;
    if (r == GY_OK) {
        b = gy_alloc_zeroed(a, body_block_size(def->type, n));
        if (b == NULL)
            r = GY_ERR_OUT_OF_MEMORY;
        else
            b->base.type = def->type; /* body_free reads it */
    }
    if (r == GY_OK)
        b->collider_count = n;
    if (r != GY_OK) {
        if (b != NULL)
            body_free(w, b);
        return r;
    }

    gy_adapter_body_record_init(&b->base, def, def->type == GY_MOTION_STATIC ? NULL : &b->motion);
    b->pose = def->pose;
    b->pose.rotation = gy_quat_normalize(def->pose.rotation);
    if (def->type != GY_MOTION_STATIC)
        b->com_local = def->type == GY_MOTION_DYNAMIC ? mass.center : gy_v3(0.0, 0.0, 0.0);

    if (def->type != GY_MOTION_STATIC) {
        b->body = dBodyCreate(w->world);
        dBodySetData(b->body, b);
        set_dbody_pose(b, b->pose);
        dBodySetLinearVel(b->body, def->linear_velocity.x, def->linear_velocity.y,
                          def->linear_velocity.z);
        dBodySetAngularVel(b->body, def->angular_velocity.x, def->angular_velocity.y,
                           def->angular_velocity.z);
        if (def->type == GY_MOTION_DYNAMIC) {
            setup_dynamic(w, b, def, &mass, &dm, sleep_turn);
        } else {
            dBodySetKinematic(b->body);
            dBodySetAutoDisableFlag(b->body, 0);
            dBodySetGravityMode(b->body, 0);
            /* Kinematic targets can turn far in one step; integrate the rotation exactly. */
            dBodySetFiniteRotationMode(b->body, 1);
        }
    }

    /* Statics stay out of ODE's spaces: the grid finds them (see ode_internal.h). */
    dSpaceID space = def->type == GY_MOTION_STATIC ? NULL : w->dynamic_space;
    for (uint32_t i = 0; i < n; i++) {
        gy_ode_collider *c = gy_ode_body_record(b, i);
        const gy_collider_def *cd = &cols[i];
        gy_adapter_collider_record_init(&c->base, cd, &b->base, res[i], rare[i]);
        if (space == NULL && shared_slot(c->base.shape_type) >= 0) {
            place_static_geom(w, b, c); /* no geom of its own */
            continue;
        }
        c->geom = make_geom(&cd->shape, gy_ode_collider_resource(c), space);
        dGeomSetData(c->geom, c);
        dGeomSetCategoryBits(c->geom, c->base.category);
        dGeomSetCollideBits(c->geom, c->base.mask);
        if (gy_ode_dbody(b) != NULL) {
            gy_pose local = gy_adapter_collider_local_pose(&c->base);
            gy_vec3 off = gy_v3_sub(local.position, b->com_local);
            dQuaternion q;
            gy_ode_quat_to_ode(
                gy_quat_mul(local.rotation, gy_ode_shape_axis_fix(c->base.shape_type)), q);
            dGeomSetBody(c->geom, b->body);
            dGeomSetOffsetPosition(c->geom, off.x, off.y, off.z);
            dGeomSetOffsetQuaternion(c->geom, q);
        } else {
            place_static_geom(w, b, c);
        }
    }

    for (uint32_t i = 0; i < n; i++)
        colliders[i] = gy_ode_body_record(b, i);
    if (b->base.type == GY_MOTION_DYNAMIC)
        gy_ode_locks_build(w, b);
    *out = b;
    return GY_OK;
}

uint32_t gy_ode_body_collider_count(const gy_ode_body *b)
{
    return b->collider_count;
}

gy_ode_collider *gy_ode_body_collider(gy_ode_body *b, uint32_t i)
{
    return gy_ode_body_record(b, i);
}

void gy_ode_body_release(gy_driver_world *w, gy_ode_body *b)
{
    body_free(w, b); /* its geoms before the front end frees the trimesh data they may use */
}

/* ---- per-body calls ------------------------------------------------------------------------- */

void gy_ode_body_get_state(gy_driver_world *w, gy_ode_body *b, gy_body_state *out)
{
    (void)w;
    out->pose = gy_ode_body_pose(b);
    if (gy_ode_dbody(b) != NULL) {
        out->linear_velocity = gy_ode_vec(dBodyGetLinearVel(b->body));
        out->angular_velocity = gy_ode_vec(dBodyGetAngularVel(b->body));
        out->awake = dBodyIsEnabled(b->body) != 0;
    }
}

void gy_ode_body_set_pose(gy_driver_world *w, gy_ode_body *b, gy_pose pose)
{
    if (gy_ode_dbody(b) != NULL) {
        set_dbody_pose(b, pose); /* the front end marks a kinematic one moving (gy_driver_wake) */
        return;
    }
    b->pose = pose; /* a static: its geoms follow (the front end re-indexes them) */
    for (uint32_t i = 0; i < b->collider_count; i++)
        place_static_geom(w, b, gy_ode_body_record(b, i));
}

void gy_ode_body_set_linear_velocity(gy_driver_world *w, gy_ode_body *b, gy_vec3 v)
{
    (void)w;
    dBodySetLinearVel(b->body, v.x, v.y, v.z);
}

void gy_ode_body_set_angular_velocity(gy_driver_world *w, gy_ode_body *b, gy_vec3 v)
{
    (void)w;
    dBodySetAngularVel(b->body, v.x, v.y, v.z);
}

gy_vec3 gy_ode_body_point_velocity(gy_driver_world *w, gy_ode_body *b, gy_vec3 p)
{
    (void)w;
    return gy_ode_body_velocity_at(b, p);
}

void gy_ode_body_put_asleep(gy_driver_world *w, gy_ode_body *b)
{
    (void)w;
    dBodyDisable(b->body);
}

void gy_ode_body_set_mass(gy_driver_world *w, gy_ode_body *b, double mass)
{
    (void)w;
    dMass dm;
    dBodyGetMass(b->body, &dm);
    double ratio = b->motion.mass / mass;
    dMassAdjust(&dm, mass);
    dBodySetMass(b->body, &dm);
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            b->inv_inertia.m[i][k] *= ratio;
}

void gy_ode_collider_filter_changed(gy_driver_world *w, gy_ode_collider *c)
{
    if (c->geom != NULL) {
        dGeomSetCategoryBits(c->geom, c->base.category);
        dGeomSetCollideBits(c->geom, c->base.mask);
    } else {
        static_geoms_forget(w, c);
    }
}
