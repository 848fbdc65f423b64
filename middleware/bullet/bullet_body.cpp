/* Bullet adapter: mesh and hull resources, bodies and their colliders, and the per-body calls.
 *
 * Every Bullet object the adapter owns (shapes, rigid bodies, compounds, the mesh interface) is
 * constructed in a block from the world's allocator, and everything that can fail is allocated
 * before the first object is constructed, so a failed create leaves nothing behind. Bullet's own
 * arrays inside those objects use Bullet's allocator (docs/middleware.md lists them). Mass, centre
 * of mass and inertia come from geometry.c so every adapter agrees. */
#include <assert.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include <type_traits>

#include "bullet_internal.h"

static_assert(std::is_standard_layout<gy_bt_resource>::value,
              "gy_bt_resource and its gy_adapter_resource head must convert by reinterpret_cast");
static_assert(
    std::is_standard_layout<gy_bt_motion>::value && offsetof(gy_bt_motion, shared) == 0,
    "gy_bt_motion and the gy_adapter_motion it starts with must convert by reinterpret_cast");
/* Bullet's own sleep test compares instantaneous speeds with per-body thresholds; the adapter
 * decides instead (bullet_step.cpp), so Bullet's thresholds are set out of reach. */
#define BULLET_SLEEP_THRESHOLD 1e30
/* Collision margins. Boxes and cylinders keep theirs inside their extents (only edges round);
 * hull points are pulled in by theirs (gy_adapter_hull_shrink), so margin and points together
 * give back the hull's faces; a hull that cannot be shrunk keeps HULL_MIN_MARGIN around its
 * points. Either is capped at a tenth of the shape's smallest half-size. */
#define BOX_MARGIN      0.01
#define HULL_MARGIN     0.01
#define HULL_MIN_MARGIN 0.001
/* Casting a hull uses its exact points with a margin too small to matter. */
#define QUERY_HULL_MARGIN 1e-4

/* ---- resources ------------------------------------------------------------------------------ */

void gy_bt_resource_free(gy_driver_world *w, gy_adapter_resource *rec)
{
    const gy_allocator *a = w->allocator;
    gy_bt_resource *r = gy_bt_resource_of(rec);
    /* The BVH shape points into the mesh interface, which points into the copies. */
    gy_bt_delete(a, r->mesh_shape);
    gy_bt_delete(a, r->mesh_array);
    gy_bt_delete(a, r->hull_shape);
    gy_bt_delete(a, r->hull_query_shape);
    gy_adapter_resource_fini(a, &r->base);
    gy_free(a, r, sizeof *r);
}

gy_result gy_bt_mesh_create(gy_driver_world *w, gy_adapter_resource *rec)
{
    const gy_allocator *a = w->allocator;
    gy_bt_resource *r = gy_bt_resource_of(rec);
    void *array_mem = gy_alloc(a, sizeof(btTriangleIndexVertexArray));
    void *shape_mem = gy_alloc(a, sizeof(btBvhTriangleMeshShape));
    if (array_mem == nullptr || shape_mem == nullptr) {
        gy_free(a, array_mem, sizeof(btTriangleIndexVertexArray));
        gy_free(a, shape_mem, sizeof(btBvhTriangleMeshShape));
        return GY_ERR_OUT_OF_MEMORY;
    }
    /* PHY_INTEGER indices are read as unsigned ints: the head's copies serve as they are. */
    btIndexedMesh part;
    part.m_numTriangles = (int)(r->base.index_count / 3u);
    part.m_triangleIndexBase = reinterpret_cast<const unsigned char *>(r->base.indices);
    part.m_triangleIndexStride = 3 * (int)sizeof(uint32_t);
    part.m_numVertices = (int)r->base.vertex_count;
    part.m_vertexBase = reinterpret_cast<const unsigned char *>(r->base.vertices);
    part.m_vertexStride = 3 * (int)sizeof(double);
    part.m_indexType = PHY_INTEGER;
    part.m_vertexType = PHY_DOUBLE;
    r->mesh_array = new (array_mem) btTriangleIndexVertexArray();
    r->mesh_array->addIndexedMesh(part, PHY_INTEGER);
    r->mesh_shape = new (shape_mem) btBvhTriangleMeshShape(r->mesh_array, true, true);
    r->mesh_shape->setUserPointer(r); /* its colliders' resource (gy_bt_collider_resource) */
    return GY_OK;
}

gy_result gy_bt_hull_create(gy_driver_world *w, gy_adapter_resource *rec)
{
    if (rec->hull.vertex_count > (uint32_t)INT_MAX)
        return GY_ERR_INVALID_MESH;
    const gy_allocator *a = w->allocator;
    gy_bt_resource *r = gy_bt_resource_of(rec);
    const gy_hull *h = &r->base.hull;
    const double *points = &h->vertices[0].x;
    const int stride = (int)sizeof(gy_vec3);
    double margin = fmin(HULL_MARGIN, 0.1 * gy_adapter_hull_inner_radius(h));
    void *shape_mem = gy_alloc(a, sizeof(btConvexHullShape));
    void *query_mem = gy_alloc(a, sizeof(btConvexHullShape));
    gy_adapter_hull_points shrunk = {};
    if (shape_mem == nullptr || query_mem == nullptr ||
        (margin > HULL_MIN_MARGIN && gy_adapter_hull_shrink(a, h, margin, &shrunk) != GY_OK)) {
        gy_free(a, shape_mem, sizeof(btConvexHullShape));
        gy_free(a, query_mem, sizeof(btConvexHullShape));
        return GY_ERR_OUT_OF_MEMORY;
    }
    if (shrunk.count > 0) {
        r->hull_shape =
            new (shape_mem) btConvexHullShape(&shrunk.items[0].x, (int)shrunk.count, stride);
    } else {
        margin = fmin(HULL_MIN_MARGIN, 0.1 * gy_adapter_hull_inner_radius(h));
        r->hull_shape = new (shape_mem) btConvexHullShape(points, (int)h->vertex_count, stride);
    }
    gy_adapter_hull_points_free(a, &shrunk);
    /* No polyhedral features: Bullet's face clipping for hull pairs measures depth on the points
     * alone, which would sink stacked hulls by both margins. */
    r->hull_shape->setMargin(margin);
    r->hull_shape->setUserPointer(r); /* its colliders' resource (gy_bt_collider_resource) */
    r->hull_query_shape = new (query_mem) btConvexHullShape(points, (int)h->vertex_count, stride);
    r->hull_query_shape->setMargin(QUERY_HULL_MARGIN);
    return GY_OK;
}

/* ---- body helpers --------------------------------------------------------------------------- */

btVector3 gy_bt_body_com(const gy_bt_body *b)
{
    if (b->object() == nullptr)
        return gy_bt_vec(gy_bt_static_pose(b).position);
    return b->object()->getWorldTransform().getOrigin();
}

btTransform gy_bt_body_frame(const gy_bt_body *b)
{
    if (b->object() == nullptr)
        return gy_bt_transform(gy_bt_static_pose(b));
    return b->object()->getWorldTransform();
}

gy_pose gy_bt_body_pose(const gy_bt_body *b)
{
    if (b->object() == nullptr)
        return gy_bt_static_pose(b);
    return gy_bt_from_transform(b->object()->getWorldTransform() *
                                gy_bt_principal_inv(b->motion()));
}

btCollisionObject *gy_bt_static_object(gy_driver_world *w, gy_bt_body *b)
{
    btCollisionObject *o = &w->scratch;
    o->setCollisionShape(b->compound != nullptr ? static_cast<btCollisionShape *>(b->compound)
                                                : b->colliders[0]->bt_shape);
    btTransform t = gy_bt_body_frame(b);
    o->setWorldTransform(t);
    o->setInterpolationWorldTransform(t);
    o->setUserPointer(b);
    return o;
}

btVector3 gy_bt_body_velocity_at(const gy_bt_body *b, const btVector3 &p)
{
    switch (b->base.type) {
    case GY_MOTION_DYNAMIC:
        return b->rb->getVelocityInLocalPoint(p - gy_bt_body_com(b));
    case GY_MOTION_KINEMATIC:
        return b->motion()->kin_linear + b->motion()->kin_angular.cross(p - gy_bt_body_com(b));
    default:
        return btVector3(0, 0, 0);
    }
}

/* Planes live in the world; their shape is expressed in the body frame instead. */
static btTransform child_pose(const btTransform &principal_inv, const gy_bt_collider *c)
{
    if (c->base.shape_type == GY_SHAPE_PLANE)
        return btTransform::getIdentity();
    return principal_inv * gy_bt_transform(gy_adapter_collider_local_pose(&c->base));
}

btTransform gy_bt_collider_child(const gy_bt_collider *c)
{
    const gy_bt_body *b = gy_bt_collider_body(c);
    if (b->compound != nullptr)
        return b->compound->getChildTransform((int)c->index);
    /* The same product as at creation, where a static's principal⁻¹ was the identity's inverse. */
    static const btTransform identity_inv = btTransform::getIdentity().inverse();
    return child_pose(b->motion() != nullptr ? gy_bt_principal_inv(b->motion()) : identity_inv, c);
}

btTransform gy_bt_collider_transform(const gy_bt_collider *c)
{
    const gy_bt_body *b = gy_bt_collider_body(c);
    if (b->motion() == nullptr)
        return gy_bt_body_frame(b) * gy_bt_transform(gy_adapter_collider_local_pose(&c->base));
    const btTransform &com = b->object()->getWorldTransform();
    return com * gy_bt_principal_inv(b->motion()) *
           gy_bt_transform(gy_adapter_collider_local_pose(&c->base));
}

void gy_bt_body_wake(gy_driver_world *, gy_bt_body *b)
{
    b->rb->activate(true);
}

void gy_bt_body_place(gy_driver_world *w, gy_bt_body *b, const btTransform &com_frame)
{
    b->rb->setCenterOfMassTransform(com_frame);
    b->rb->setInterpolationWorldTransform(com_frame);
    w->world.updateSingleAabb(b->rb);
}

/* ---- body create ---------------------------------------------------------------------------- */

/* Principal axes: inertia = R diag(d) Rᵀ. The Bullet body frame is the centre of mass turned by
 * R, where Bullet's diagonal inertia is exact. */
static gy_result principal_frame(const gy_mass *m, btTransform *frame, btVector3 *diagonal)
{
    const double(*I)[3] = m->inertia.m;
    btMatrix3x3 t(I[0][0], I[0][1], I[0][2], I[1][0], I[1][1], I[1][2], I[2][0], I[2][1], I[2][2]);
    btMatrix3x3 rot;
    t.diagonalize(rot, 1e-15, 64);
    btVector3 d(t[0][0], t[1][1], t[2][2]);
    if (!(d.x() > 0.0) || !(d.y() > 0.0) || !(d.z() > 0.0) || !isfinite(d.x()) ||
        !isfinite(d.y()) || !isfinite(d.z()))
        return GY_ERR_INVALID_ARGUMENT;
    *frame = btTransform(rot, gy_bt_vec(m->center));
    *diagonal = d;
    return GY_OK;
}

static size_t owned_shape_size(gy_shape_type t)
{
    switch (t) {
    case GY_SHAPE_SPHERE:
        return sizeof(btSphereShape);
    case GY_SHAPE_BOX:
        return sizeof(btBoxShape);
    case GY_SHAPE_CAPSULE:
        return sizeof(btCapsuleShape);
    case GY_SHAPE_CYLINDER:
        return sizeof(btCylinderShape);
    case GY_SHAPE_PLANE:
        return sizeof(btStaticPlaneShape);
    default:
        return 0; /* hulls and meshes share their resource's shape */
    }
}

/* A plane collider's world plane (dot(n, p) = c, n unit) seen from a static body's frame. */
static void plane_in_body(const gy_shape *s, const btTransform &body, btVector3 *n, double *c)
{
    double l = gy_v3_len(s->normal);
    btVector3 nw = gy_bt_vec(s->normal) / l;
    double cw = s->offset / l;
    *n = body.getBasis().transpose() * nw;
    *c = cw - nw.dot(body.getOrigin());
}

/* Constructs a collider's own shape in `mem` (planes against the static body frame `body`). */
static btCollisionShape *build_shape(void *mem, const gy_shape *s, const btTransform &body)
{
    switch (s->type) {
    case GY_SHAPE_SPHERE:
        return new (mem) btSphereShape(s->radius);
    case GY_SHAPE_BOX: {
        btVector3 half = gy_bt_vec(s->box_size) * 0.5;
        btBoxShape *box = new (mem) btBoxShape(half);
        box->setMargin(fmin(BOX_MARGIN, 0.1 * half.minAxis()));
        return box;
    }
    case GY_SHAPE_CAPSULE: /* Bullet's capsule stands along Y and takes the cylinder part's height
                            */
        return new (mem) btCapsuleShape(s->radius, s->height - 2.0 * s->radius);
    case GY_SHAPE_CYLINDER: {
        btCylinderShape *cyl =
            new (mem) btCylinderShape(btVector3(s->radius, 0.5 * s->height, s->radius));
        cyl->setMargin(fmin(BOX_MARGIN, 0.1 * fmin(s->radius, 0.5 * s->height)));
        return cyl;
    }
    case GY_SHAPE_PLANE: {
        btVector3 n;
        double c;
        plane_in_body(s, body, &n, &c);
        return new (mem) btStaticPlaneShape(n, c);
    }
    default:
        return nullptr;
    }
}

/* ---- shared static shapes ------------------------------------------------------------------- */

/* A primitive shape shared by every static collider of the same type and size: a level's
 * thousands of identical crates and tiles keep one btBoxShape, not one each. Bullet reads a
 * shape's geometry only (never which object holds it), and colliders are told apart by child
 * index, so sharing changes no contact. Planes are not shared: their shape is expressed in their
 * body's frame. */
struct gy_bt_shared_shape {
    gy_bt_query_shape_storage storage; /* first: the shape lives here */
    gy_shape_type type;
    double dims[3]; /* sphere: radius; box: size; capsule and cylinder: radius, height */
    uint32_t refs;
    gy_map_key key;
};

static bool shape_shareable(const gy_shape *s)
{
    return s->type == GY_SHAPE_SPHERE || s->type == GY_SHAPE_BOX || s->type == GY_SHAPE_CAPSULE;
}

static void shape_dims(const gy_shape *s, double dims[3])
{
    dims[0] = s->type == GY_SHAPE_BOX ? s->box_size.x : s->radius;
    dims[1] = s->type == GY_SHAPE_BOX ? s->box_size.y : s->type == GY_SHAPE_CAPSULE ? s->height : 0;
    dims[2] = s->type == GY_SHAPE_BOX ? s->box_size.z : 0.0;
}

static uint64_t bits_of(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static gy_map_key shape_key(gy_shape_type type, const double dims[3])
{
    return gy_map_key_pair(bits_of(dims[0]) ^ (uint64_t)type,
                           bits_of(dims[1]) * 0x9E3779B97F4A7C15ull ^ bits_of(dims[2]));
}

/* The shared record a shared shape lives in. */
static gy_bt_shared_shape *shared_of(btCollisionShape *shape)
{
    return reinterpret_cast<gy_bt_shared_shape *>(shape);
}

/* A shared shape of `s`'s type and size with one more reference (built on first use), or NULL
 * when none can be had (out of memory, or another size under its key): the collider then owns
 * its shape. */
static btCollisionShape *shared_shape_ref(gy_driver_world *w, const gy_shape *s)
{
    double dims[3];
    shape_dims(s, dims);
    gy_map_key key = shape_key(s->type, dims);
    uint64_t *found = gy_hash_map_find(&w->shared_shapes, key);
    if (found != nullptr) {
        gy_bt_shared_shape *sh = reinterpret_cast<gy_bt_shared_shape *>((uintptr_t)*found);
        if (sh->type != s->type || memcmp(sh->dims, dims, sizeof dims) != 0)
            return nullptr;
        sh->refs++;
        return reinterpret_cast<btCollisionShape *>(&sh->storage);
    }
    void *mem = gy_alloc_zeroed(w->allocator, sizeof(gy_bt_shared_shape));
    if (mem == nullptr)
        return nullptr;
    gy_bt_shared_shape *sh = static_cast<gy_bt_shared_shape *>(mem);
    if (gy_hash_map_put(&w->shared_shapes, key, (uint64_t)(uintptr_t)sh) != GY_OK) {
        gy_free(w->allocator, mem, sizeof(gy_bt_shared_shape));
        return nullptr;
    }
    sh->type = s->type;
    memcpy(sh->dims, dims, sizeof dims);
    sh->refs = 1;
    sh->key = key;
    return build_shape(&sh->storage, s, btTransform::getIdentity()); /* not a plane: no frame */
}

static void shared_shape_unref(gy_driver_world *w, btCollisionShape *shape)
{
    gy_bt_shared_shape *sh = shared_of(shape);
    if (--sh->refs > 0)
        return;
    gy_hash_map_remove(&w->shared_shapes, sh->key, nullptr);
    shape->~btCollisionShape();
    gy_free(w->allocator, sh, sizeof *sh);
}

/* Raw blocks for one body, all allocated before anything is constructed in them: the body, its
 * collider pointers and records, its rigid body, its compound and the shapes it owns share one
 * allocation (each allocation costs a header, and a level is mostly one-collider statics). */
struct body_blocks {
    void *block;
    size_t size;
    gy_bt_body *body;
    gy_bt_collider **colliders;
    void **collider_mem;
    void **shape_mem;
    void *compound_mem;
    void *object_mem; /* moving bodies: the btRigidBody */
    void *sleep_mem;  /* dynamic bodies only */
    void *motion_mem; /* dynamic and kinematic bodies only */
    uint32_t n;
};

/* `x` rounded up to a multiple of `align` (a power of two). */
static size_t align_up(size_t x, size_t align)
{
    return (x + align - 1u) & ~(align - 1u);
}

static void blocks_free(const gy_allocator *a, body_blocks *k)
{
    gy_free(a, k->collider_mem, (size_t)k->n * sizeof(void *));
    gy_free(a, k->shape_mem, (size_t)k->n * sizeof(void *));
    gy_free(a, k->block, k->size);
    memset(k, 0, sizeof *k);
}

/* The most any part of a body's block needs; the allocator's blocks are aligned at least so. */
#define BLOCK_ALIGN 16u

/* `owned[i]`: collider i needs a shape of its own in the block. Parts in decreasing alignment,
 * each at its own (the Bullet object's is 16), so the block wastes little to padding. */
static gy_result blocks_alloc(const gy_allocator *a, body_blocks *k, const gy_collider_def *cols,
                              uint32_t n, bool compound, gy_motion_type type, const bool *owned)
{
    static_assert(alignof(gy_bt_body) <= BLOCK_ALIGN && alignof(gy_bt_collider) <= BLOCK_ALIGN &&
                      alignof(btRigidBody) <= BLOCK_ALIGN && alignof(gy_bt_static) <= BLOCK_ALIGN &&
                      alignof(gy_bt_static_collider) <= BLOCK_ALIGN &&
                      alignof(btCompoundShape) <= BLOCK_ALIGN &&
                      alignof(gy_bt_query_shape_storage) <= BLOCK_ALIGN &&
                      alignof(gy_bt_motion) <= BLOCK_ALIGN,
                  "a body block's parts fit its alignment");
    bool dynamic = type == GY_MOTION_DYNAMIC, moving = type != GY_MOTION_STATIC;
    memset(k, 0, sizeof *k);
    /* A static's pose follows its body (gy_bt_static); its colliders' records hold their grid
     * entries (gy_bt_static_collider). */
    size_t at = moving ? sizeof(gy_bt_body) : sizeof(gy_bt_static);
    size_t record_size = moving ? sizeof(gy_bt_collider) : sizeof(gy_bt_static_collider);
    size_t record_offset = moving ? 0 : offsetof(gy_bt_static_collider, collider);
    size_t motion_at = align_up(at, alignof(gy_bt_motion));
    if (moving)
        at = motion_at + sizeof(gy_bt_motion);
    size_t sleep_at = align_up(at, alignof(gy_adapter_sleep));
    if (dynamic)
        at = sleep_at + sizeof(gy_adapter_sleep);
    size_t object_at = align_up(at, BLOCK_ALIGN);
    if (moving)
        at = object_at + sizeof(btRigidBody);
    size_t compound_at = align_up(at, alignof(btCompoundShape));
    if (compound)
        at = compound_at + sizeof(btCompoundShape);
    size_t shapes_at = at;
    for (uint32_t i = 0; i < n; i++)
        if (owned[i])
            at = align_up(at, BLOCK_ALIGN) + owned_shape_size(cols[i].shape.type);
    size_t records_at = align_up(at, alignof(gy_bt_static_collider));
    at = records_at + (size_t)n * record_size;
    size_t colliders_at = align_up(at, alignof(gy_bt_collider *));
    at = colliders_at + (size_t)n * sizeof(gy_bt_collider *);
    if (at > UINT32_MAX) /* the body keeps its block's size in 32 bits */
        return GY_ERR_OUT_OF_MEMORY;
    k->size = at;
    k->block = gy_alloc_zeroed(a, at);
    bool ok = k->block != nullptr;
    if (ok && n > 0) {
        k->n = n;
        k->collider_mem = static_cast<void **>(gy_alloc_zeroed(a, (size_t)n * sizeof(void *)));
        k->shape_mem = static_cast<void **>(gy_alloc_zeroed(a, (size_t)n * sizeof(void *)));
        ok = k->collider_mem != nullptr && k->shape_mem != nullptr;
    }
    if (!ok) {
        blocks_free(a, k);
        return GY_ERR_OUT_OF_MEMORY;
    }
    unsigned char *base = static_cast<unsigned char *>(k->block);
    k->body = reinterpret_cast<gy_bt_body *>(base);
    k->colliders = reinterpret_cast<gy_bt_collider **>(base + colliders_at);
    k->object_mem = moving ? base + object_at : nullptr;
    k->sleep_mem = dynamic ? base + sleep_at : nullptr;
    k->motion_mem = moving ? base + motion_at : nullptr;
    k->compound_mem = compound ? base + compound_at : nullptr;
    for (uint32_t i = 0; i < n; i++) {
        k->collider_mem[i] = base + records_at + (size_t)i * record_size + record_offset;
        if (owned[i]) {
            shapes_at = align_up(shapes_at, BLOCK_ALIGN);
            k->shape_mem[i] = base + shapes_at;
            shapes_at += owned_shape_size(cols[i].shape.type);
        }
    }
    return GY_OK;
}

static void body_free(gy_driver_world *w, gy_bt_body *b);

/* Padded as Bullet pads broadphase boxes, so the pairs the static pass finds through the front
 * end's static grid are those the broadphase would. */
void gy_bt_collider_box(gy_driver_world *, gy_bt_collider *c, double box[6])
{
    btVector3 lo, hi;
    c->bt_shape->getAabb(gy_bt_body_frame(gy_bt_collider_body(c)) * gy_bt_collider_child(c), lo,
                         hi);
    btVector3 pad(gContactBreakingThreshold, gContactBreakingThreshold, gContactBreakingThreshold);
    lo -= pad;
    hi += pad;
    for (int k = 0; k < 3; k++) {
        box[2 * k] = lo[k];
        box[2 * k + 1] = hi[k];
    }
}

static bool transform_is_identity(const btTransform &t)
{
    btQuaternion q = t.getRotation();
    return t.getOrigin().length2() < 1e-24 && fabs(q.x()) + fabs(q.y()) + fabs(q.z()) < 1e-12;
}

gy_result gy_bt_body_create(gy_driver_world *w, const gy_body_def *def, const gy_collider_def *cols,
                            uint32_t n, gy_adapter_resource *const *res,
                            const gy_adapter_collider_rare *const *rare, const gy_mass *mp,
                            double sleep_turn, gy_bt_body **out, gy_bt_collider **colliders)
{
    (void)sleep_turn; /* the front end's sleep rule reads it from the motion part */
    gy_result r = GY_OK;
    const gy_allocator *a = w->allocator;

    gy_mass mass = *mp;
    btTransform principal = btTransform::getIdentity();
    btVector3 inertia(0, 0, 0);
    if (def->type == GY_MOTION_DYNAMIC)
        r = principal_frame(&mass, &principal, &inertia);

    btTransform principal_inv = principal.inverse();
    btTransform body_frame = gy_bt_transform(def->pose) * principal;
    body_frame.setRotation(body_frame.getRotation().normalized());
    bool compound = n != 1;
    /* Only read validated definitions: an out-of-range enum is undefined behaviour in C++. */
    if (r == GY_OK && n == 1 && cols[0].shape.type != GY_SHAPE_PLANE)
        compound = !transform_is_identity(principal_inv * gy_bt_transform(cols[0].local_pose));

    /* Everything that can fail is done before any Bullet object exists. A static's primitive
     * (not a plane) takes a shared shape when it can; a shape just added to the shared table is
     * built in place below (its references count this body). */
    body_blocks k{};
    bool small[8];
    bool *owned = n <= 8 ? small : static_cast<bool *>(gy_alloc(a, (size_t)n * sizeof(bool)));
    btCollisionShape **shared = nullptr;
    if (r == GY_OK && owned == nullptr)
        r = GY_ERR_OUT_OF_MEMORY;
    if (r == GY_OK && n > 0) {
        shared = static_cast<btCollisionShape **>(gy_alloc_zeroed(a, (size_t)n * sizeof(void *)));
        if (shared == nullptr)
            r = GY_ERR_OUT_OF_MEMORY;
    }
    for (uint32_t i = 0; r == GY_OK && i < n; i++) {
        owned[i] = res[i] == nullptr;
        if (owned[i] && def->type == GY_MOTION_STATIC && shape_shareable(&cols[i].shape)) {
            shared[i] = shared_shape_ref(w, &cols[i].shape);
            owned[i] = shared[i] == nullptr;
        }
    }
    if (r == GY_OK)
        r = blocks_alloc(a, &k, cols, n, compound, def->type, owned);
    if (owned != small)
        gy_free(a, owned, (size_t)n * sizeof(bool));
    if (r != GY_OK) {
        for (uint32_t i = 0; shared != nullptr && i < n; i++)
            if (shared[i] != nullptr)
                shared_shape_unref(w, shared[i]);
        gy_free(a, shared, (size_t)n * sizeof(void *));
        blocks_free(a, &k);
        return r;
    }

    /* Committed: nothing below can fail. */
    gy_bt_body *b = new (k.body) gy_bt_body();
    gy_bt_motion *motion = nullptr;
    if (k.motion_mem != nullptr) {
        motion = new (k.motion_mem) gy_bt_motion();
        motion->sleep = static_cast<gy_adapter_sleep *>(k.sleep_mem); /* zeroed: its start */
    }
    gy_adapter_body_record_init(&b->base, def, motion != nullptr ? &motion->shared : nullptr);
    b->colliders = k.colliders;
    b->collider_count = n;
    if (k.motion_mem != nullptr) {
        b->motion()->principal = principal;
        b->motion()->kin_linear = btVector3(0, 0, 0);
        b->motion()->kin_angular = btVector3(0, 0, 0);
    }

    for (uint32_t i = 0; i < n; i++) {
        const gy_collider_def *cd = &cols[i];
        gy_bt_collider *c = new (k.collider_mem[i]) gy_bt_collider();
        b->colliders[i] = c;
        c->index = i;
        gy_adapter_collider_record_init(&c->base, cd, &b->base, res[i], rare[i]);
        if (res[i] != nullptr) {
            gy_bt_resource *r = gy_bt_resource_of(res[i]);
            c->bt_shape = res[i]->kind == GY_SHAPE_MESH
                              ? static_cast<btCollisionShape *>(r->mesh_shape)
                              : static_cast<btCollisionShape *>(r->hull_shape);
        } else if (shared[i] != nullptr) {
            c->bt_shape = shared[i]; /* not owned and no resource: a shared shape */
        } else {
            c->owns_shape = true;
            c->bt_shape = build_shape(k.shape_mem[i], &cd->shape, body_frame);
        }
        gy_adapter_body_gate_add(&b->gate, &c->base);
        colliders[i] = c;
    }
    gy_free(a, shared, (size_t)n * sizeof(void *));
    gy_free(a, k.collider_mem, (size_t)n * sizeof(void *));
    gy_free(a, k.shape_mem, (size_t)n * sizeof(void *));
    b->block_size = (uint32_t)k.size;

    btCollisionShape *root = nullptr;
    if (compound) {
        b->compound = new (k.compound_mem) btCompoundShape(true, (int)n);
        for (uint32_t i = 0; i < n; i++)
            b->compound->addChildShape(child_pose(principal_inv, b->colliders[i]),
                                       b->colliders[i]->bt_shape);
        root = b->compound;
    } else {
        root = b->colliders[0]->bt_shape;
    }

    if (def->type == GY_MOTION_STATIC) {
        reinterpret_cast<gy_bt_static *>(b)->pose = gy_bt_from_transform(body_frame);
        *out = b;
        return GY_OK;
    }
    double m = def->type == GY_MOTION_DYNAMIC ? mass.mass : 0.0;
    btRigidBody::btRigidBodyConstructionInfo ci(m, nullptr, root, inertia);
    ci.m_startWorldTransform = body_frame;
    /* Bullet keeps (1 - c)^dt: c is the loss over one second, for any step length. */
    ci.m_linearDamping = gy_adapter_damping_loss(def->linear_damping, 1.0);
    ci.m_angularDamping = gy_adapter_damping_loss(def->angular_damping, 1.0);
    ci.m_linearSleepingThreshold = BULLET_SLEEP_THRESHOLD;
    ci.m_angularSleepingThreshold = BULLET_SLEEP_THRESHOLD;
    b->rb = new (k.object_mem) btRigidBody(ci);
    b->rb->setUserPointer(b);
    if (def->type == GY_MOTION_KINEMATIC)
        b->rb->setCollisionFlags(b->rb->getCollisionFlags() |
                                 btCollisionObject::CF_KINEMATIC_OBJECT);
    if (def->type == GY_MOTION_DYNAMIC) {
        /* Each body carries its own gravity, scaled by its factor. */
        b->rb->setFlags(b->rb->getFlags() | BT_DISABLE_WORLD_GRAVITY);
        b->rb->setGravity(gy_bt_vec(w->def.gravity) * b->motion()->shared.gravity_factor);
        /* The factors keep forces and contacts off locked axes, but a torque still turns through
         * the world inertia tensor onto a locked axis: the front end's projection removes it. */
        btVector3 lf(b->motion()->shared.lock_linear[0] ? 0 : 1,
                     b->motion()->shared.lock_linear[1] ? 0 : 1,
                     b->motion()->shared.lock_linear[2] ? 0 : 1);
        btVector3 af(b->motion()->shared.lock_angular[0] ? 0 : 1,
                     b->motion()->shared.lock_angular[1] ? 0 : 1,
                     b->motion()->shared.lock_angular[2] ? 0 : 1);
        b->rb->setLinearFactor(lf);
        b->rb->setAngularFactor(af);
        b->rb->setLinearVelocity(gy_bt_vec(def->linear_velocity));
        b->rb->setAngularVelocity(gy_bt_vec(def->angular_velocity));
    } else if (def->type == GY_MOTION_KINEMATIC) {
        b->motion()->kin_linear = gy_bt_vec(def->linear_velocity);
        b->motion()->kin_angular = gy_bt_vec(def->angular_velocity);
        b->rb->setLinearVelocity(b->motion()->kin_linear);
        b->rb->setAngularVelocity(b->motion()->kin_angular);
    }
    /* Filtering is the adapter's own (gy_bt_pair_filter), so the groups pass everything. */
    w->world.addRigidBody(b->rb, -1, -1);
    if (def->type == GY_MOTION_DYNAMIC && !def->allow_sleeping)
        b->rb->forceActivationState(DISABLE_DEACTIVATION);
    *out = b;
    return GY_OK;
}

uint32_t gy_bt_body_collider_count(const gy_bt_body *b)
{
    return b->collider_count;
}

gy_bt_collider *gy_bt_body_collider(gy_bt_body *b, uint32_t i)
{
    return b->colliders[i];
}

/* ---- body release --------------------------------------------------------------------------- */

void gy_bt_body_release(gy_driver_world *w, gy_bt_body *b)
{
    gy_bt_static_pairs_drop(w, b);
    if (b->base.type == GY_MOTION_STATIC) {
        /* Its joints went first, and the last one took the anchor (bullet_joint.cpp). */
        assert(b->rb == nullptr);
    } else {
        w->world.removeRigidBody(b->rb);
        b->rb->~btRigidBody();
    }
    body_free(w, b);
}

/* Destroys what a body's block holds (its Bullet object gone already) and frees it. */
static void body_free(gy_driver_world *w, gy_bt_body *b)
{
    const gy_allocator *a = w->allocator;
    if (b->compound != nullptr)
        b->compound->~btCompoundShape();
    for (uint32_t i = 0; i < b->collider_count; i++) {
        gy_bt_collider *c = b->colliders[i];
        /* A resource's shape is the resource's: the front end frees it with the resource. */
        if (c->owns_shape)
            c->bt_shape->~btCollisionShape();
        else if (gy_bt_collider_resource(c) == nullptr)
            shared_shape_unref(w, c->bt_shape);
        c->~gy_bt_collider();
    }
    size_t size = b->block_size;
    b->~gy_bt_body();
    gy_free(a, b, size);
}

/* ---- per-body calls ------------------------------------------------------------------------- */

void gy_bt_body_get_state(gy_driver_world *, gy_bt_body *b, gy_body_state *out)
{
    out->pose = gy_bt_body_pose(b);
    if (b->base.type == GY_MOTION_DYNAMIC) {
        out->linear_velocity = gy_bt_from_vec(b->rb->getLinearVelocity());
        out->angular_velocity = gy_bt_from_vec(b->rb->getAngularVelocity());
        out->awake = b->rb->isActive();
    } else if (b->base.type == GY_MOTION_KINEMATIC) {
        out->linear_velocity = gy_bt_from_vec(b->motion()->kin_linear);
        out->angular_velocity = gy_bt_from_vec(b->motion()->kin_angular);
    }
}

/* A static's new place is its pose, its joint anchor and its planes, which stay where they are in
 * the world, so their body-frame shapes are rebuilt in place (same type, same block). */
void gy_bt_body_set_pose(gy_driver_world *w, gy_bt_body *b, gy_pose pose)
{
    btTransform frame = b->motion() != nullptr ? gy_bt_transform(pose) * b->motion()->principal
                                               : gy_bt_transform(pose);
    if (b->base.type != GY_MOTION_STATIC) {
        gy_bt_body_place(w, b, frame);
        return;
    }
    /* A static (the front end re-indexes its boxes): its pairs go, since Bullet's algorithms cache
     * what they found against the old pose, and the static pass finds them again; the front end
     * wakes what it left. */
    gy_bt_static_pairs_drop(w, b);
    reinterpret_cast<gy_bt_static *>(b)->pose = gy_bt_from_transform(frame);
    if (b->rb != nullptr)
        gy_bt_anchor_place(b);
    for (uint32_t i = 0; i < b->collider_count; i++) {
        gy_bt_collider *c = b->colliders[i];
        if (c->base.shape_type != GY_SHAPE_PLANE)
            continue;
        gy_shape plane = gy_adapter_collider_shape(&c->base);
        c->bt_shape->~btCollisionShape();
        c->bt_shape = build_shape(c->bt_shape, &plane, frame);
    }
}

void gy_bt_body_set_linear_velocity(gy_driver_world *, gy_bt_body *b, gy_vec3 v)
{
    if (b->base.type == GY_MOTION_KINEMATIC)
        b->motion()->kin_linear = gy_bt_vec(v);
    b->rb->setLinearVelocity(gy_bt_vec(v));
}

void gy_bt_body_set_angular_velocity(gy_driver_world *, gy_bt_body *b, gy_vec3 v)
{
    if (b->base.type == GY_MOTION_KINEMATIC)
        b->motion()->kin_angular = gy_bt_vec(v);
    b->rb->setAngularVelocity(gy_bt_vec(v));
}

gy_vec3 gy_bt_body_point_velocity(gy_driver_world *, gy_bt_body *b, gy_vec3 p)
{
    return gy_bt_from_vec(gy_bt_body_velocity_at(b, gy_bt_vec(p)));
}

void gy_bt_body_put_asleep(gy_driver_world *, gy_bt_body *b)
{
    /* Bullet keeps an ISLAND_SLEEPING body asleep until an awake island reaches it. A body that
     * never sleeps by itself loses its DISABLE_DEACTIVATION here; once woken, the front end's
     * sleep rule tells it at every step that it does not want to sleep. */
    b->rb->forceActivationState(ISLAND_SLEEPING);
}

void gy_bt_body_set_mass(gy_driver_world *, gy_bt_body *b, double mass)
{
    const btVector3 &inv = b->rb->getInvInertiaDiagLocal();
    double scale = mass / b->motion()->shared.mass;
    btVector3 inertia(scale / inv.x(), scale / inv.y(), scale / inv.z());
    /* setMassProps also rescales the body's gravity force to the new mass. */
    b->rb->setMassProps(mass, inertia);
    b->rb->updateInertiaTensor();
}

void gy_bt_collider_filter_changed(gy_driver_world *w, gy_bt_collider *c)
{
    gy_bt_body *b = gy_bt_collider_body(c);
    gy_adapter_body_gate old = b->gate;
    b->gate = gy_adapter_body_gate{0, 0, false};
    for (uint32_t i = 0; i < b->collider_count; i++)
        gy_adapter_body_gate_add(&b->gate, &b->colliders[i]->base);
    /* The narrow phase checks every collider pair's filter, so a narrower filter needs nothing
     * more; pairs the broadphase refused under the old unions are only found again through a
     * new proxy. Pairs that stay are re-found at once, in the same step, so they keep touching. */
    if (!gy_adapter_body_gate_widened(old, b->gate))
        return;
    if (b->object() != nullptr) /* a static's new pairs are found by the static pass */
        w->world.refreshBroadphaseProxy(b->object());
}
