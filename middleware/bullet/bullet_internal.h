/* Private to the Bullet adapter: the records behind its handles and the layout of its world. Only
 * files in middleware/bullet/ include this header (and Bullet's). C++ stays in this folder; the
 * rest of Gyre sees the C table gy_bullet_backend_table.
 *
 * Frames: Bullet integrates a body about its centre of mass with a diagonal inertia tensor, so a
 * dynamic body's btRigidBody sits at the Gyre body's centre of mass, turned onto the principal
 * axes of its inertia (`principal`, the Bullet body frame expressed in the Gyre body frame).
 * Colliders are children of a btCompoundShape at principal⁻¹ · local_pose; a body whose single
 * collider would sit at the identity uses that collider's shape directly. Static and kinematic
 * bodies have principal = identity. */
#ifndef GYRE_BULLET_INTERNAL_H
#define GYRE_BULLET_INTERNAL_H

#include <btBulletCollisionCommon.h>
#include <cstddef>
#include <btBulletDynamicsCommon.h>
#include <new>
#include <pthread.h>

#include "../src/driver.h"
#include "../src/joint_drive.h"
#include "../src/records.h"
#include "gyre/backend/backend.h"
#include "gyre/geometry.h"
#include "gyre/handle_pool.h"
#include "gyre/hash_map.h"
#include "gyre/math.h"

/* The driver records are the front end's opaque gy_driver_* types (driver.h). */
typedef gy_driver_body gy_bt_body;
typedef gy_driver_collider gy_bt_collider;
typedef gy_driver_joint gy_bt_joint;

/* ---- resources ------------------------------------------------------------------------------ */

/* A mesh or hull resource: the shared head (id, kind, references, hull) and Bullet's data. Its
 * Bullet shape is shared by every collider that uses it (colliders are told apart by child index,
 * never by shape). Standard layout with `base` first, so the two convert by reinterpret_cast. */
struct gy_bt_resource {
    gy_adapter_resource base;
    /* Mesh: Bullet's mesh interface over the head's copies, and the BVH shape. */
    btTriangleIndexVertexArray *mesh_array;
    btBvhTriangleMeshShape *mesh_shape;
    /* Hull: (base.hull is the built hull, exact planes for rays) the shape colliders use (points
     * pulled in by its margin so margin + points give back the hull's faces) and an unshrunk one
     * with a tiny margin for casting the hull itself. */
    btConvexHullShape *hull_shape;
    btConvexHullShape *hull_query_shape;
};

/* ---- colliders and bodies ------------------------------------------------------------------- */

struct gy_driver_collider {
    gy_adapter_collider base; /* first: the Gyre record (records.h); planes keep their world
                               * normal and offset in its side record */
    /* Its body is base.owner's record and its resource its shape's user pointer (the
     * gy_bt_collider_* accessors below): a level's statics keep neither twice. */
    uint32_t index;  /* child index in the body's compound, and position in body->colliders */
    bool owns_shape; /* bt_shape lives in the body's block; else the resource's or a shared one */
    btCollisionShape *bt_shape; /* owned (primitives), shared, or the resource's */
};

/* A moving body's motion state, in its block (bullet_body.cpp); statics have none. */
struct gy_bt_motion {
    gy_adapter_motion shared; /* the Gyre record's motion part (base.motion points here) */
    /* Bullet body frame in the Gyre body frame (the principal axes about the centre of mass);
     * its inverse is computed where needed (gy_bt_principal_inv), not kept. */
    btTransform principal;
    /* Kinematic: the velocities it moves with (Bullet recomputes its own from the poses). */
    btVector3 kin_linear, kin_angular;
    /* Dynamic bodies: the front end's sleep rule's state (step.c), in the body's block; NULL
     * for kinematic ones, which never sleep by it. */
    gy_adapter_sleep *sleep;
    /* The last static passes (bullet_step.cpp) that looked for its statics while it was active,
     * and that took it at all. */
    uint64_t static_pass, static_done;
};

struct gy_driver_body {
    gy_adapter_body base; /* first: the Gyre record (records.h) */
    /* The btRigidBody constraints and the solver see: a moving body's own (== object); for a
     * static, an anchor at its pose made with its first joint (Bullet joins bodies only), never
     * in the world, NULL while no joint holds it. */
    btRigidBody *rb;
    btCompoundShape *compound;  /* NULL when the single collider's shape is the root */
    gy_bt_collider **colliders; /* in the body's own block (bullet_body.cpp) */
    uint32_t collider_count;
    gy_adapter_body_gate gate; /* the broadphase prefilter over all its colliders */
    uint32_t block_size; /* bytes of the one block holding the body, its colliders and shapes */
    /* What it gives back when all its overlaps close (the front end's, overlap.h). */
    gy_adapter_settle settle;
    uint32_t static_pairs; /* its records in the world's static pairs (bullet_step.cpp) */

    /* A moving body's btRigidBody in Bullet's world (== rb); NULL for a static, which is no
     * Bullet object at all (a level holds them by the hundred thousand): its pose follows the
     * record (gy_bt_static) and its colliders sit in the front end's static grid. */
    btCollisionObject *object() const
    {
        return base.motion != nullptr ? rb : nullptr;
    }
    /* Dynamic and kinematic bodies: their motion state, in the body's block, where the Gyre
     * record's motion part points (its first member); NULL for statics, which a level holds by
     * the thousand and which never move by it. Derived, not kept: a static carries no pointer
     * that is always NULL. */
    gy_bt_motion *motion() const
    {
        return reinterpret_cast<gy_bt_motion *>(base.motion);
    }
};

/* A static body's record: the body, then its pose (the Bullet frame of its colliders: statics
 * have principal = identity). */
struct gy_bt_static {
    gy_bt_body body;
    gy_pose pose;
};

/* A static collider's record: its entry in the front end's static grid (records.h), then the
 * collider. */
struct gy_bt_static_collider {
    gy_static_grid_item grid;
    gy_bt_collider collider;
};
static_assert(offsetof(gy_bt_static_collider, collider) == GY_ADAPTER_GRID_ENTRY_SIZE,
              "a static collider's record follows its grid entry");

/* ---- joints --------------------------------------------------------------------------------- */

struct gy_driver_joint {
    gy_adapter_joint base; /* first: the Gyre record (records.h) */
    btTypedConstraint *constraint;
    size_t constraint_size;
    gy_bt_body *a, *b;
    btJointFeedback feedback; /* the solver's force on each body: breaks and joint state */
};

/* A collider's body: the record its Gyre part's owner opens. */
static inline gy_bt_body *gy_bt_collider_body(const gy_bt_collider *c)
{
    return reinterpret_cast<gy_bt_body *>(c->base.owner);
}

/* A mesh or hull collider's resource (it holds one reference), named by the resource's shape's
 * user pointer; NULL for primitives, whose shapes' user pointers stay NULL. */
static inline gy_bt_resource *gy_bt_collider_resource(const gy_bt_collider *c)
{
    return static_cast<gy_bt_resource *>(c->bt_shape->getUserPointer());
}

/* The front end reads the records through their Gyre parts (driver.h). */
static_assert(offsetof(gy_bt_body, base) == 0, "a body record starts with its Gyre part");
static_assert(offsetof(gy_bt_collider, base) == 0, "a collider record starts with its Gyre part");
static_assert(offsetof(gy_bt_joint, base) == 0, "a joint record starts with its Gyre part");

/* ---- step records --------------------------------------------------------------------------- */

/* A moving body's pair with a static body (bullet_step.cpp): Bullet's algorithm for the two,
 * run with the world's scratch object standing in for the static; its manifolds are in the
 * dispatcher's list like any broadphase pair's. */
struct gy_bt_static_pair {
    gy_bt_body *moving, *fixed;
    btCollisionAlgorithm *algorithm;
    uint64_t seen; /* the last static pass that found the two boxes overlapping */
};

GY_ARRAY_DEFINE(gy_bt_static_pairs, gy_bt_static_pair)

/* A raw point on its way into a manifold (bullet_step.cpp's contact result): `normal_on_b`
 * points from b's object to a's, `depth` is the signed distance. */
struct gy_bt_raw_point {
    gy_bt_collider *ca, *cb;
    btPersistentManifold *manifold;
    const btCollisionObject *oa, *ob;
    int tri_a, tri_b;
    btVector3 normal_on_b, point_on_b;
    btScalar depth;
};

GY_ARRAY_DEFINE(gy_bt_raw_points, gy_bt_raw_point)

/* ---- Bullet plumbing ------------------------------------------------------------------------ */

/* The dispatcher knows its world so the near callback (a plain function pointer) can reach it;
 * after Bullet's broadphase pairs it collides moving bodies with the statics of the grid. */
class gy_bt_dispatcher : public btCollisionDispatcher
{
  public:
    explicit gy_bt_dispatcher(btCollisionConfiguration *config, gy_driver_world *w)
        : btCollisionDispatcher(config), world(w)
    {
    }
    /* Jointed bodies never collide (bullet_step.cpp). */
    bool needsCollision(const btCollisionObject *o0, const btCollisionObject *o1) override;
    void dispatchAllCollisionPairs(btOverlappingPairCache *pairs, const btDispatcherInfo &info,
                                   btDispatcher *dispatcher) override;
    gy_driver_world *world;
};

/* Whether two bodies' colliders may pair at all (the front end's gy_adapter_bodies_may_pair over
 * their gates; Bullet's own filter holds 16-bit groups in an int). */
static inline bool gy_bt_bodies_may_pair(const gy_bt_body *a, const gy_bt_body *b)
{
    return gy_adapter_bodies_may_pair(a->base.type, a->gate, b->base.type, b->gate);
}

/* Broadphase prefilter (moving bodies only: statics are in the grid): gy_bt_bodies_may_pair,
 * which the static pass applies too. */
class gy_bt_pair_filter : public btOverlapFilterCallback
{
  public:
    bool needBroadphaseCollision(btBroadphaseProxy *p0, btBroadphaseProxy *p1) const override;
};

/* Bullet's sequential-impulse solver with the front end's contact rules (bullet_step.cpp): each
 * point's first friction direction along its slip, and its normal row aimed as
 * gy_adapter_contact_aim says (a bounce at its bounce speed with no penetration part, where
 * Bullet adds the two: a ball of e = 0.8 meeting a plane 2 cm deep at 6.3 m/s left it 0.47 m/s
 * faster than e·v, at 120 Hz; a resting point at the contact layer). Other points keep Bullet's
 * rows. */
class gy_bt_solver : public btSequentialImpulseConstraintSolver
{
  protected:
    void convertContacts(btPersistentManifold **manifolds, int count,
                         const btContactSolverInfo &info) override;
};

/* Storage big enough for any primitive shape a query builds in place. */
union gy_bt_query_shape_storage {
    alignas(16) unsigned char sphere[sizeof(btSphereShape)];
    alignas(16) unsigned char box[sizeof(btBoxShape)];
    alignas(16) unsigned char capsule[sizeof(btCapsuleShape)];
};

struct gy_driver_world {
    gy_driver_world(const gy_backend_world_def &d, const gy_allocator *a);
    ~gy_driver_world();

    const gy_allocator *allocator;
    const gy_logger *logger;
    gy_backend_world_def def;

    /* Bullet's core, constructed in this order and destroyed in reverse. */
    gy_bt_pair_filter filter;
    btDefaultCollisionConfiguration config;
    gy_bt_dispatcher dispatcher;
    btDbvtBroadphase broadphase;
    gy_bt_solver solver;
    btDiscreteDynamicsWorld world;
    btRigidBody fixed;       /* the world side of joints with no body b; never added */
    btCollisionObject probe; /* queries' stand-in for the query shape; never added */
    /* The stand-in for whichever static is being collided or queried (gy_bt_static_object);
     * never added. */
    btCollisionObject scratch;
    btAlignedObjectArray<const btDbvtNode *> query_stack; /* overlap traversal, grown to peak */
    btManifoldArray refresh_manifolds; /* a pair's manifolds while it is collided, grown to peak */
    /* The solved force on the first body of each point listed for the overlap correction
     * (gy_adapter_point.force), grown to peak. */
    btAlignedObjectArray<btVector3> point_forces;
    gy_bt_query_shape_storage query_storage;
    btConvexShape *query_shape; /* the primitive currently built in query_storage, or NULL */

    /* The front end's (driver.h): its handle pools (it gives and takes back the ids), and the
     * two of its parts read most, by their own names. */
    const gy_driver_records *records;
    const gy_handle_pool *resources; /* payload: gy_bt_resource* */

    /* Primitive shapes shared by static colliders of the same type and size (bullet_body.cpp):
     * shape key -> gy_bt_shared_shape*. */
    gy_hash_map shared_shapes;
    /* The moving bodies' pairs with static bodies (found through the front end's static grid):
     * (moving, static) -> index in static_pairs. */
    gy_hash_map static_pair_map;
    gy_bt_static_pairs static_pairs;
    /* The points of the pair being collided that await a one-way verdict (bullet_step.cpp),
     * grown to peak. */
    gy_bt_raw_points held_points;
    uint64_t static_pass; /* stamps the static passes (bullet_step.cpp) */
    bool statics_on;      /* this pass has statics or static pairs to look at */
    const gy_driver_moving *moving; /* the front end's: every dynamic and kinematic body */
    gy_adapter_tally *tally;        /* the front end's: bodies by motion type, sensors, resources */

    /* The front end's contact report (its records are the front end's own gy_adapter_pair, whose
     * tangent sums the impulse on a's body) and one-way verdicts, which the contact result
     * feeds. */
    gy_adapter_contacts *contacts;

    bool aabbs_stale; /* bodies moved since Bullet last refreshed their broadphase boxes */
    double substep_dt;
    bool sensor_pass;     /* colliding at the step's end poses, sensor pairs only */
    gy_result step_error; /* first allocation failure inside the current step */
};

/* ---- conversions ---------------------------------------------------------------------------- */

static inline btVector3 gy_bt_vec(gy_vec3 v)
{
    return btVector3(v.x, v.y, v.z);
}
static inline gy_vec3 gy_bt_from_vec(const btVector3 &v)
{
    return gy_v3(v.x(), v.y(), v.z());
}
static inline btQuaternion gy_bt_quat(gy_quat q)
{
    return btQuaternion(q.x, q.y, q.z, q.w);
}
static inline gy_quat gy_bt_from_quat(const btQuaternion &q)
{
    gy_quat r = {q.x(), q.y(), q.z(), q.w()};
    return r;
}
static inline btTransform gy_bt_transform(gy_pose p)
{
    return btTransform(gy_bt_quat(p.rotation), gy_bt_vec(p.position));
}
static inline gy_pose gy_bt_from_transform(const btTransform &t)
{
    gy_pose p;
    p.position = gy_bt_from_vec(t.getOrigin());
    p.rotation = gy_quat_normalize(gy_bt_from_quat(t.getRotation()));
    return p;
}

/* Placement-constructs a T in a block from the world's allocator; NULL when out of memory. */
template <class T, class... Args> T *gy_bt_new(const gy_allocator *a, Args &&...args)
{
    void *mem = gy_alloc(a, sizeof(T));
    if (mem == nullptr)
        return nullptr;
    return new (mem) T(static_cast<Args &&>(args)...);
}

/* Destroys and frees what gy_bt_new made (T must be the constructed type). */
template <class T> void gy_bt_delete(const gy_allocator *a, T *p)
{
    if (p == nullptr)
        return;
    p->~T();
    gy_free(a, p, sizeof(T));
}

/* ---- shared helpers ------------------------------------------------------------------------- */

/* The Bullet record behind a resource pool payload (or a resolved collider resource). */
static inline gy_bt_resource *gy_bt_resource_of(void *r)
{
    return reinterpret_cast<gy_bt_resource *>(static_cast<gy_adapter_resource *>(r));
}

/* The Gyre body frame in the Bullet one (principal⁻¹), computed as at creation. */
static inline btTransform gy_bt_principal_inv(const gy_bt_motion *m)
{
    return m->principal.inverse();
}

/* A static's pose. */
static inline const gy_pose &gy_bt_static_pose(const gy_bt_body *b)
{
    return reinterpret_cast<const gy_bt_static *>(b)->pose;
}

/* The Gyre body behind a Bullet collision object, or NULL for the world's own objects (the
 * scratch object names the static it was last posed as). */
static inline gy_bt_body *gy_bt_body_of(const btCollisionObject *o)
{
    return o != nullptr ? static_cast<gy_bt_body *>(o->getUserPointer()) : nullptr;
}

/* Bodies (bullet_body.cpp). */
gy_pose gy_bt_body_pose(const gy_bt_body *b);
/* The Bullet frame of a body's colliders: a moving body's centre of mass frame, a static's pose. */
btTransform gy_bt_body_frame(const gy_bt_body *b);
/* Poses the world's scratch object as static `b` (shape, transform, user pointer) and returns it.
 */
btCollisionObject *gy_bt_static_object(gy_driver_world *w, gy_bt_body *b);
/* Calls visit(ctx, c) for each static collider whose grid box overlaps [lo, hi], until it
 * returns false (gy_driver_statics_visit, with Bullet's vectors). */
typedef bool (*gy_bt_static_visitor)(void *ctx, gy_bt_collider *c);
void gy_bt_statics_visit(gy_driver_world *w, const btVector3 &lo, const btVector3 &hi,
                         gy_bt_static_visitor visit, void *ctx);
/* Destroys the static pairs of a body (before it is released, moved or refiltered). */
void gy_bt_static_pairs_drop(gy_driver_world *w, gy_bt_body *b);
btVector3 gy_bt_body_com(const gy_bt_body *b);
btVector3 gy_bt_body_velocity_at(const gy_bt_body *b, const btVector3 &world_point);
/* A collider's pose in the Bullet body frame: its compound child's transform, or for a body whose
 * one collider is the root shape the same product it was built with (not stored per collider). */
btTransform gy_bt_collider_child(const gy_bt_collider *c);
/* World transform of a collider's frame (its Gyre local pose, in the world). */
btTransform gy_bt_collider_transform(const gy_bt_collider *c);
/* The driver entry body_wake: a dynamic body only. */
void gy_bt_body_wake(gy_driver_world *w, gy_bt_body *b);
/* Moves a dynamic or kinematic body's centre of mass frame, keeping Bullet's caches in step. */
void gy_bt_body_place(gy_driver_world *w, gy_bt_body *b, const btTransform &com_frame);
/* The driver entries of the same names (driver.h). */
gy_result gy_bt_body_create(gy_driver_world *w, const gy_body_def *def, const gy_collider_def *cols,
                            uint32_t n, gy_adapter_resource *const *res,
                            const gy_adapter_collider_rare *const *rare, const gy_mass *mass,
                            double sleep_turn, gy_bt_body **out, gy_bt_collider **colliders);
uint32_t gy_bt_body_collider_count(const gy_bt_body *b);
gy_bt_collider *gy_bt_body_collider(gy_bt_body *b, uint32_t i);
void gy_bt_body_release(gy_driver_world *w, gy_bt_body *b);
void gy_bt_body_get_state(gy_driver_world *w, gy_bt_body *b, gy_body_state *out);
void gy_bt_body_set_pose(gy_driver_world *w, gy_bt_body *b, gy_pose pose);
void gy_bt_collider_box(gy_driver_world *w, gy_bt_collider *c, double box[6]);
void gy_bt_body_set_linear_velocity(gy_driver_world *w, gy_bt_body *b, gy_vec3 v);
void gy_bt_body_set_angular_velocity(gy_driver_world *w, gy_bt_body *b, gy_vec3 v);
gy_vec3 gy_bt_body_point_velocity(gy_driver_world *w, gy_bt_body *b, gy_vec3 world_point);
void gy_bt_body_put_asleep(gy_driver_world *w, gy_bt_body *b);
void gy_bt_body_set_mass(gy_driver_world *w, gy_bt_body *b, double mass);
void gy_bt_collider_filter_changed(gy_driver_world *w, gy_bt_collider *c);

/* Resources (bullet_body.cpp). */
gy_result gy_bt_mesh_create(gy_driver_world *w, gy_adapter_resource *rec);
gy_result gy_bt_hull_create(gy_driver_world *w, gy_adapter_resource *rec);
void gy_bt_resource_free(gy_driver_world *w, gy_adapter_resource *r);

/* Joints (bullet_joint.cpp). */
/* Puts a static's anchor (b->rb, non-NULL) at the static's pose. */
void gy_bt_anchor_place(gy_bt_body *b);
gy_result gy_bt_joint_create(gy_driver_world *w, const gy_joint_def *def, gy_bt_body *a,
                             gy_bt_body *b, gy_bt_joint **out);
void gy_bt_joint_release(gy_driver_world *w, gy_bt_joint *j);
/* The larger constraint force (N) the last solve applied to either body (driver.h). */
double gy_bt_joint_force(gy_driver_world *w, gy_bt_joint *j);
void gy_bt_joint_coordinate(gy_driver_world *w, gy_bt_joint *j, double *position, double *rate);
gy_vec3 gy_bt_joint_axis(gy_driver_world *w, gy_bt_joint *j);
void gy_bt_joint_motor_set(gy_driver_world *w, gy_bt_joint *j, bool on, double velocity,
                           double max_force, double h);
void gy_bt_joint_set_spring(gy_driver_world *w, gy_bt_joint *j, double erp, double cfm, double h);
void gy_bt_joint_set_limit_rows(gy_driver_world *w, gy_bt_joint *j, const gy_joint_limit_row *rows,
                                uint32_t n, double h);
void gy_bt_joint_rotations(gy_driver_world *w, gy_bt_joint *j, gy_quat *qa, gy_quat *qb);
void gy_bt_joint_get_state(gy_driver_world *w, gy_bt_joint *j, gy_joint_state *out);

/* The driver's table (bullet_backend.cpp), which the step hands the front end's joint drive. */
extern "C" const gy_driver gy_bullet_driver;

/* Step (bullet_step.cpp). */
void gy_bt_near_callback(btBroadphasePair &pair, btCollisionDispatcher &dispatcher,
                         const btDispatcherInfo &info);
extern "C" const gy_driver_step gy_bt_step;

/* Overlap tests let GJK give up once it has proved a gap this wide (metres); Bullet's convex
 * cast stops once the gap is under it. */
#define GY_BT_PROBE_GAP 1e-3

/* Query primitives (bullet_query.cpp): the driver entries of the same names (driver.h). */
void gy_bt_ray_walk(gy_driver_world *w, gy_vec3 origin, gy_vec3 dir, double length,
                    gy_adapter_search *s);
void gy_bt_shape_walk(gy_driver_world *w, const gy_shape *shape, gy_pose pose, gy_vec3 translation,
                      double length, bool cast, gy_adapter_search *s);
bool gy_bt_ray_test(gy_driver_world *w, gy_driver_query *q, gy_bt_collider *c, gy_driver_hit *out);
bool gy_bt_shape_contact(gy_driver_world *w, gy_driver_query *q, gy_bt_collider *c, double t,
                         gy_driver_hit *out);
bool gy_bt_cast_sweep(gy_driver_world *w, gy_driver_query *q, gy_bt_collider *c, double hi,
                      gy_driver_hit *out);
gy_pose gy_bt_collider_body_pose(gy_driver_world *w, gy_bt_collider *c);

/* Builds a query shape (sphere, box, capsule in the world's scratch storage, or a hull
 * resource's query shape) and makes it the probe's shape; NULL for other shape types. */
btConvexShape *gy_bt_probe_shape(gy_driver_world *w, const gy_shape *s);

/* Refreshes moving bodies' broadphase boxes if a step moved them since (queries call this). */
void gy_bt_refresh_aabbs(gy_driver_world *w);

/* Collision test of the world's probe (shape and transform already set) against one collider,
 * with Bullet's GJK/EPA on the stack. Returns true when they overlap or touch, with the
 * deepest point on the collider, the normal out of the collider (towards the probe), the
 * penetration (≥ 0) and the mesh triangle (or -1). */
bool gy_bt_probe_contact(gy_driver_world *w, const gy_bt_collider *c, btVector3 *point,
                         btVector3 *normal, double *penetration, int32_t *triangle);

/* Time of impact of the probe shape swept from `from` to `to` (rotation fixed) against one
 * collider, as a fraction below `limit`; false when it does not hit before `limit`. */
bool gy_bt_probe_sweep(gy_driver_world *w, const gy_bt_collider *c, const btTransform &from,
                       const btTransform &to, double limit, double *fraction, btVector3 *point,
                       btVector3 *normal, int32_t *triangle);

/* Calls visit(ctx, body) for every moving body whose broadphase box the swept box (aabb_min/max
 * moved from `from` to `to`) touches, then visit_static(ctx, c) for every static collider whose
 * grid box the swept box's bounds touch. Never allocates once warmed up. */
typedef void (*gy_bt_body_visitor)(void *ctx, gy_bt_body *b);
void gy_bt_sweep_bodies(gy_driver_world *w, const btVector3 &from, const btVector3 &to,
                        const btVector3 &aabb_min, const btVector3 &aabb_max,
                        gy_bt_body_visitor visit, gy_bt_static_visitor visit_static, void *ctx);
/* The collision object a collider's body is in a Bullet call: a moving body's own, or the
 * world's scratch object posed as the static. */
btCollisionObject *gy_bt_collider_object(gy_driver_world *w, const gy_bt_collider *c);

#endif
