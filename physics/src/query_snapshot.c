#include "query_snapshot.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "bvh.h"
#include "gyre/backend/backend.h"
#include "gyre/convex.h"
#include "gyre/geometry.h"
#include "gyre/math.h"
#include "table_growth.h"
#include "triple_buffer.h"

/* Entries fall into three groups: two trees and the plane list. */
enum { TREE_STATIC = 0, TREE_MOVING = 1, TREE_COUNT = 2, GROUP_PLANES = 2, GROUP_COUNT = 3 };
#define GROUP_NONE 0xffu
/* Dirty bits 0..2 belong to the three buffers, bit 3 to the writer's own trees; bit BOX_SHIFT + b
 * says that the slot's tree box changed too (not only its entry) since list b last caught up. */
#define MASTER_BIT     3u
#define DIRTY_LISTS    4u
#define BOX_SHIFT      4u
#define REBUILD_PERIOD 64u
/* Statics join and leave the static tree in place (insert/remove, see bvh.h) instead of a rebuild
 * when the tree holds at least this many and at most a quarter of them changed: streaming adds
 * and removes a few hundred statics per tick, and rebuilding 100,000 takes ~70 ms. Smaller trees
 * rebuild (cheap, and the best tree). */
#define EDIT_MIN_STATICS 1024u
/* static_flags bits */
#define IN_STATIC_TREE 1u /* a leaf of the writer's static tree (valid unless pending) */
#define STATIC_PENDING 2u /* joined or left the static group since the tree was last updated */
/* Overlaps count as touching within this many metres (GJK converges only approximately on curved
 * shapes). */
#define TOUCH_TOLERANCE 1e-7
/* A kinematic or dynamic collider's tree box is its bounds grown by this much on every side, and
 * is replaced only when the bounds leave it (as Box2D's dynamic tree does): a resting or jittering
 * body keeps its box, so its publish copies the entry and refits nothing. Queries test entries
 * exactly after the box test, so the margin changes which subtrees a query visits, never its
 * answer. */
#define MOVING_MARGIN 0.1

/* Where a moving entry's box was last made: while no point of the shape can have moved more than
 * the margin since, the box still holds it, which is cheaper to show than recomputing bounds. */
typedef struct qs_anchor {
    gy_pose pose;       /* the entry's pose when its box was made */
    double turn_radius; /* how far the points that define the bounds lie from the pose's origin */
} qs_anchor;

struct gy_snapshot_geometry {
    const gy_allocator *allocator;
    uint32_t refs; /* writer thread only; readers never look at it */
    gy_shape_type type;
    gy_vec3 local_min, local_max;
    /* Mesh: own copies of the definition and a tree over its triangles. */
    gy_vec3 *vertices;
    uint32_t vertex_count;
    uint32_t *indices;
    uint32_t triangle_count;
    gy_bvh tree;
    /* Hull: vertices, triangles and one outward plane per triangle. */
    gy_hull hull;
    /* Plane: unit normal and offset. A plane's four numbers live here rather than in its entry
     * so that every entry is a word shorter; planes are few, and created by the writer only. */
    double plane[4];
};

/* One collider as the writer holds it and as each buffer publishes it (96 bytes). */
typedef struct qs_entry {
    gy_pose pose;
    union {
        /* sphere: r | box: half extents | capsule: r, half segment | cylinder: r, half height */
        double p[3];
        gy_snapshot_geometry *geometry; /* hull, mesh, plane (read it through blob_of) */
    };
    uint32_t category;
    gy_physics_body_ref body;
    uint8_t type;
    uint8_t motion;
    uint8_t sensor;
    uint8_t live;
} qs_entry;
_Static_assert(sizeof(gy_snapshot_geometry *) > 8 || sizeof(qs_entry) <= 96, "entry packing");

/* The blob a live entry uses, or NULL for a shape without one. */
static inline gy_snapshot_geometry *blob_of(const qs_entry *e)
{
    return e->live && (e->type == GY_SHAPE_HULL || e->type == GY_SHAPE_MESH ||
                       e->type == GY_SHAPE_PLANE)
               ? e->geometry
               : NULL;
}

/* Entries are kept in pages of PAGE_SLOTS consecutive slots, one directory (an array of page
 * pointers, NULL where no entry of its kind lives) per holder. Static entries live in static
 * pages that the writer and every buffer share: a page is immutable once a buffer holds it, and
 * the writer copies it before changing it (copy-on-write), so a static that does not change is
 * stored once however many buffers show it. Kinematic, dynamic and plane entries live in mover
 * pages that each holder keeps for itself, as they change every tick. */
#define PAGE_SHIFT 5u
#define PAGE_SLOTS (1u << PAGE_SHIFT)

typedef struct qs_page {
    /* Static pages: the directories holding it (writer thread only; readers never look at it).
     * A page whose count is 1 is held by the writer alone and may be written in place. */
    uint32_t refs;
    struct qs_page *next; /* in the pool of spare pages */
    qs_entry e[PAGE_SLOTS];
} qs_page;

typedef struct qs_dir {
    qs_page **pages; /* by slot >> PAGE_SHIFT */
    uint32_t count;  /* pages the directory spans */
    uint32_t capacity;
} qs_dir;

/* A copy of the static tree. The writer edits one of them (its master) and every buffer holds
 * one; a copy a buffer holds is never written, so the buffers share the master as long as
 * statics stay put. When they change while a buffer holds the master, the writer brings a copy no
 * buffer holds up to date (the nodes its mirror log names, or a whole copy after a rebuild) and
 * edits that one instead: of three copies, the two buffers the writer is not writing hold at most
 * two. Copies are numbered by their mirror log (GY_BVH_MIRRORS of them). */
typedef struct qs_tree {
    gy_bvh bvh;
    uint32_t refs;    /* buffers holding it, plus one while it is the master (writer thread) */
    uint64_t version; /* the static tree build it was last made equal to (version[TREE_STATIC]) */
} qs_tree;

struct gy_snapshot_view {
    uint64_t tick;
    uint64_t sequence; /* which publish filled it (1-based) */
    uint32_t slot_limit;
    qs_dir statics;          /* shared with the writer and the other buffers */
    uint64_t static_version; /* the writer's static_version when `statics` was last synced */
    qs_dir movers;           /* this buffer's own */
    const gy_bvh *trees[TREE_COUNT]; /* the static copy it holds, and its own moving tree */
    qs_tree *static_tree;
    gy_bvh moving_tree;
    uint64_t tree_version[TREE_COUNT];
    uint32_t *planes;
    uint32_t plane_count;
    uint32_t plane_capacity;
    uint64_t plane_version;
};

struct gy_query_snapshot {
    const gy_allocator *alloc;
    gy_triple_buffer *tb;
    gy_snapshot_view views[3];

    /* Per-slot arrays, all `capacity` long, carved from one block so growth is all-or-nothing. */
    void *block;
    size_t block_size;
    uint32_t capacity;
    uint32_t slot_limit; /* one past the highest slot ever set */
    /* The writer's entries: `statics` holds the static group's entries (and, until the next
     * publish clears them, those of statics that left it), `movers` everything else. */
    qs_dir statics, movers;
    uint64_t static_version; /* bumped whenever a page pointer in `statics` changes */
    qs_page *pool;           /* spare pages, reused before allocating */
    uint64_t churn_seen;     /* static page copies + tree switches after the last publish */
    uint32_t quiet;          /* publishes since the last one that copied a page or switched trees */
    uint32_t *member_pos;    /* index in members[group] */
    uint32_t *members[GROUP_COUNT]; /* slots per group; grown as a group grows, never shrunk */
    uint32_t member_capacity[GROUP_COUNT];
    /* Slots changed since some buffer (or the trees) last caught up: one list for all four, each
     * slot on it once while any of its low dirty_bits is set, so a static costs one word here
     * rather than one per list. Each catching up walks it and skips the slots not dirty for it;
     * a slot changed once stays on it for three publishes at most. */
    uint32_t *dirty;
    uint32_t *static_pending; /* slots marked STATIC_PENDING */
    uint8_t *group;
    uint8_t *dirty_bits;
    uint8_t *static_flags;

    uint32_t member_count[GROUP_COUNT];
    /* By position in members[TREE_MOVING] (member_pos), so statics carry none: a static's tree
     * box is its exact bounds, computed from its entry where a build, an insert or a refit needs
     * it, while a mover's is grown by MOVING_MARGIN and kept until the bounds leave it. */
    qs_anchor *anchors;
    uint32_t anchor_capacity;
    gy_bvh_box *mover_boxes;
    uint32_t mover_box_capacity;
    uint32_t dirty_count;
    uint32_t box_dirty_count[DIRTY_LISTS]; /* slots whose tree box changed, per list */
    uint32_t static_pending_count;
    uint64_t version[GROUP_COUNT]; /* bumped whenever a group's tree or list is rebuilt */
    bool membership_changed[GROUP_COUNT];
    bool moved_since_build[TREE_COUNT];
    /* Current topology and bounds: the master static copy, and the moving tree (copied into
     * buffers after builds). */
    gy_bvh *trees[TREE_COUNT];
    gy_bvh moving_tree;
    qs_tree *static_trees[GY_BVH_MIRRORS]; /* NULL where none was made (or it was retired) */
    uint32_t master;
    bool static_tree_stale;        /* a static's box changed since the last publish */
    gy_bvh_editor static_editor;   /* attached to the master; logs what each other copy lacks */
    gy_bvh_builder builder;        /* the moving tree's */
    gy_bvh_builder static_builder; /* kept while statics change, like the spare copies */
    gy_query_snapshot_stats stats;
};

/* ---- geometry blobs ----------------------------------------------------------------------------
 */

static void geometry_free(gy_snapshot_geometry *g)
{
    const gy_allocator *a = g->allocator;
    if (g->type == GY_SHAPE_MESH) {
        gy_free(a, g->vertices, (size_t)g->vertex_count * sizeof *g->vertices);
        gy_free(a, g->indices, (size_t)g->triangle_count * 3u * sizeof *g->indices);
        gy_bvh_fini(&g->tree, a);
    } else if (g->type == GY_SHAPE_HULL) {
        gy_hull_free(a, &g->hull);
    }
    gy_free(a, g, sizeof *g);
}

static void geometry_ref(gy_snapshot_geometry *g)
{
    if (g != NULL)
        g->refs++;
}

static void geometry_unref(gy_snapshot_geometry *g)
{
    if (g == NULL)
        return;
    assert(g->refs > 0);
    if (--g->refs == 0)
        geometry_free(g);
}

static void bounds_of(const gy_vec3 *v, uint32_t n, gy_vec3 *lo, gy_vec3 *hi)
{
    *lo = *hi = v[0];
    for (uint32_t i = 1; i < n; i++) {
        *lo = gy_v3_min(*lo, v[i]);
        *hi = gy_v3_max(*hi, v[i]);
    }
}

struct gy_snapshot_mesh_build {
    const gy_allocator *allocator;
    gy_mesh_def def; /* the caller's arrays */
    gy_snapshot_geometry *g;
    gy_bvh_builder builder;
    gy_bvh_build_state state;
    uint32_t phase; /* 0: copying vertices, 1: boxing triangles, 2: the tree, 3: done */
    uint32_t cursor;
};

void gy_snapshot_mesh_build_cancel(gy_snapshot_mesh_build *b)
{
    if (b == NULL)
        return;
    const gy_allocator *a = b->allocator;
    if (b->g != NULL)
        geometry_free(b->g);
    gy_bvh_builder_fini(&b->builder, a);
    gy_free(a, b, sizeof *b);
}

gy_result gy_snapshot_mesh_build_begin(const gy_allocator *allocator, const gy_mesh_def *def,
                                       gy_snapshot_mesh_build **out)
{
    if (out == NULL || def == NULL || def->vertex_count == 0 || def->index_count < 3u)
        return GY_ERR_INVALID_ARGUMENT;
    *out = NULL;
    const gy_allocator *a = gy_allocator_or_default(allocator);
    uint32_t tris = def->index_count / 3u;
    gy_snapshot_mesh_build *b = gy_alloc_zeroed(a, sizeof *b);
    if (b == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    b->allocator = a;
    b->def = *def;
    gy_snapshot_geometry *g = gy_alloc_zeroed(a, sizeof *g);
    if (g == NULL) {
        gy_free(a, b, sizeof *b);
        return GY_ERR_OUT_OF_MEMORY;
    }
    g->allocator = a;
    g->type = GY_SHAPE_MESH;
    g->refs = 1;
    gy_bvh_init(&g->tree, false);
    /* Counts first, so geometry_free frees whatever the allocations below made. */
    g->vertex_count = def->vertex_count;
    g->triangle_count = tris;
    g->vertices = gy_alloc(a, (size_t)def->vertex_count * sizeof *g->vertices);
    g->indices = gy_alloc(a, (size_t)tris * 3u * sizeof *g->indices);
    b->g = g;
    if (g->vertices == NULL || g->indices == NULL ||
        gy_bvh_build_begin(&g->tree, &b->builder, a, NULL, tris, NULL, 0, &b->state) != GY_OK) {
        gy_snapshot_mesh_build_cancel(b);
        return GY_ERR_OUT_OF_MEMORY;
    }
    *out = b;
    return GY_OK;
}

bool gy_snapshot_mesh_build_run(gy_snapshot_mesh_build *b, uint64_t units, uint64_t *done_units)
{
    gy_snapshot_geometry *g = b->g;
    uint64_t used = 0;
    if (b->phase == 0 && used < units) {
        uint64_t n = g->vertex_count - b->cursor;
        n = n < units - used ? n : units - used;
        for (uint32_t i = b->cursor; i < b->cursor + (uint32_t)n; i++) {
            gy_vec3 v = b->def.vertices[i];
            g->vertices[i] = v;
            g->local_min = i == 0 ? v : gy_v3_min(g->local_min, v);
            g->local_max = i == 0 ? v : gy_v3_max(g->local_max, v);
        }
        b->cursor += (uint32_t)n;
        used += n;
        if (b->cursor == g->vertex_count) {
            b->phase = 1;
            b->cursor = 0;
        }
    }
    if (b->phase == 1 && used < units) {
        uint64_t n = g->triangle_count - b->cursor;
        n = n < units - used ? n : units - used;
        for (uint32_t t = b->cursor; t < b->cursor + (uint32_t)n; t++) {
            const uint32_t *ix = &b->def.indices[3u * t];
            memcpy(&g->indices[3u * t], ix, 3u * sizeof *ix);
            gy_vec3 lo, hi, v[3] = {g->vertices[ix[0]], g->vertices[ix[1]], g->vertices[ix[2]]};
            bounds_of(v, 3, &lo, &hi);
            b->builder.items[t] = t;
            b->builder.boxes[t] = gy_bvh_box_from(lo, hi);
        }
        b->cursor += (uint32_t)n;
        used += n;
        if (b->cursor == g->triangle_count)
            b->phase = 2;
    }
    if (b->phase == 2 && used < units &&
        gy_bvh_build_run(&g->tree, &b->builder, &b->state, units - used, &used))
        b->phase = 3;
    if (done_units != NULL)
        *done_units += used;
    return b->phase == 3;
}

uint64_t gy_snapshot_mesh_build_units(const gy_mesh_def *def)
{
    uint64_t tris = def->index_count / 3u;
    /* The tree visits each item about twice per level (bounds, bins, partition ~ three passes
     * over ~log2(n) levels); counted as 3 log2(n) per triangle. */
    uint64_t levels = 1;
    while ((1ull << levels) < tris)
        levels++;
    return def->vertex_count + tris + 3u * levels * tris;
}

gy_snapshot_geometry *gy_snapshot_mesh_build_finish(gy_snapshot_mesh_build *b)
{
    if (b == NULL || b->phase != 3)
        return NULL;
    gy_snapshot_geometry *g = b->g;
    b->g = NULL;
    gy_snapshot_mesh_build_cancel(b);
    return g;
}

gy_result gy_snapshot_geometry_create_mesh(const gy_allocator *allocator, const gy_mesh_def *def,
                                           gy_snapshot_geometry **out)
{
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_result r = gy_validate_mesh_def(def);
    if (r != GY_OK)
        return r;
    gy_snapshot_mesh_build *b;
    r = gy_snapshot_mesh_build_begin(allocator, def, &b);
    if (r != GY_OK)
        return r;
    gy_snapshot_mesh_build_run(b, UINT64_MAX, NULL);
    *out = gy_snapshot_mesh_build_finish(b);
    return GY_OK;
}

/* Wraps a hull (moved in; freed on failure) in a new blob holding the creator reference. */
static gy_result hull_blob(const gy_allocator *a, gy_hull *hull, gy_snapshot_geometry **out)
{
    gy_snapshot_geometry *g = gy_alloc_zeroed(a, sizeof *g);
    if (g == NULL) {
        gy_hull_free(a, hull);
        return GY_ERR_OUT_OF_MEMORY;
    }
    g->hull = *hull;
    g->allocator = a;
    g->type = GY_SHAPE_HULL;
    g->refs = 1;
    bounds_of(g->hull.vertices, g->hull.vertex_count, &g->local_min, &g->local_max);
    *out = g;
    return GY_OK;
}

/* A hull blob from points (`from_points`: def) or from a hull built elsewhere (built: taken once
 * it is valid), each validated first. */
static gy_result hull_geometry(const gy_allocator *allocator, bool from_points,
                               const gy_hull_def *def, gy_hull *built, gy_snapshot_geometry **out)
{
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_result r = from_points ? gy_validate_hull_def(def) : gy_validate_hull(built);
    if (r != GY_OK)
        return r;
    const gy_allocator *a = gy_allocator_or_default(allocator);
    gy_hull hull;
    if (from_points) {
        r = gy_hull_build(a, def->points, def->point_count, &hull);
        if (r != GY_OK)
            return r;
    } else {
        hull = *built;
        memset(built, 0, sizeof *built);
    }
    return hull_blob(a, &hull, out);
}

gy_result gy_snapshot_geometry_create_hull(const gy_allocator *allocator, const gy_hull_def *def,
                                           gy_snapshot_geometry **out)
{
    return hull_geometry(allocator, true, def, NULL, out);
}

gy_result gy_snapshot_geometry_create_hull_built(const gy_allocator *allocator, gy_hull *hull,
                                                 gy_snapshot_geometry **out)
{
    return hull_geometry(allocator, false, NULL, hull, out);
}

void gy_snapshot_geometry_release(gy_snapshot_geometry *g)
{
    geometry_unref(g);
}

uint32_t gy_snapshot_geometry_refs(const gy_snapshot_geometry *g)
{
    return g != NULL ? g->refs : 0u;
}

/* ---- pages ------------------------------------------------------------------------------------
 */

/* A zeroed page, from the pool when it has one. */
static qs_page *page_get(gy_query_snapshot *qs)
{
    qs_page *p = qs->pool;
    if (p != NULL)
        qs->pool = p->next;
    else if ((p = gy_alloc(qs->alloc, sizeof *p)) == NULL)
        return NULL;
    memset(p, 0, sizeof *p);
    return p;
}

/* Pages go back to the pool rather than the allocator, so that streaming statics in and out
 * (which copies pages) allocates nothing once it has reached its peak. */
static void page_put(gy_query_snapshot *qs, qs_page *p)
{
    p->next = qs->pool;
    qs->pool = p;
}

/* A buffer takes a static page: it holds one reference per entry on their blobs, as it did when
 * it held its own copies. */
static void page_hold(qs_page *p)
{
    p->refs++;
    for (uint32_t i = 0; i < PAGE_SLOTS; i++)
        if (p->e[i].live)
            geometry_ref(blob_of(&p->e[i]));
}

/* A buffer lets go of a static page; the last holder returns it to the pool. */
static void page_drop(gy_query_snapshot *qs, qs_page *p)
{
    for (uint32_t i = 0; i < PAGE_SLOTS; i++)
        if (p->e[i].live)
            geometry_unref(blob_of(&p->e[i]));
    assert(p->refs > 0);
    if (--p->refs == 0)
        page_put(qs, p);
}

/* Makes the directory span `count` pages (new ones NULL). */
static gy_result dir_reserve(const gy_allocator *a, qs_dir *d, uint32_t count)
{
    if (count <= d->count)
        return GY_OK;
    if (gy_phys_table_reserve(a, (void **)&d->pages, &d->capacity, count, sizeof *d->pages) !=
        GY_OK)
        return GY_ERR_OUT_OF_MEMORY;
    d->count = count;
    return GY_OK;
}

/* The entry of `slot` in a directory known to hold its page. */
static inline const qs_entry *dir_at(const qs_dir *d, uint32_t slot)
{
    return &d->pages[slot >> PAGE_SHIFT]->e[slot & (PAGE_SLOTS - 1u)];
}

/* ---- entries -----------------------------------------------------------------------------------
 */

gy_snapshot_entry gy_default_snapshot_entry(void)
{
    gy_snapshot_entry e;
    memset(&e, 0, sizeof e);
    e.shape.type = GY_SHAPE_SPHERE;
    e.shape.radius = 0.5;
    e.pose = gy_pose_identity();
    e.category = 1u;
    e.motion = GY_MOTION_DYNAMIC;
    return e;
}

gy_snapshot_filter gy_default_snapshot_filter(void)
{
    gy_snapshot_filter f = {UINT32_MAX, GY_MOTION_ALL, false, {0u, 0u}};
    return f;
}

/* The rotation's second column (a capsule's or cylinder's axis), without the rest of the matrix. */
static inline gy_vec3 rotated_y(gy_quat q)
{
    gy_mat3 m = gy_quat_to_mat3(q);
    return gy_v3(m.m[0][1], m.m[1][1], m.m[2][1]);
}

/* World half extents of a local box of half extents h under rotation m. */
static inline gy_vec3 rotated_extent(const gy_mat3 *m, gy_vec3 h)
{
    return gy_v3(fabs(m->m[0][0]) * h.x + fabs(m->m[0][1]) * h.y + fabs(m->m[0][2]) * h.z,
                 fabs(m->m[1][0]) * h.x + fabs(m->m[1][1]) * h.y + fabs(m->m[1][2]) * h.z,
                 fabs(m->m[2][0]) * h.x + fabs(m->m[2][1]) * h.y + fabs(m->m[2][2]) * h.z);
}

/* Exact world bounds (before float rounding) of a bounded entry. */
static void entry_bounds(const qs_entry *e, gy_vec3 *lo, gy_vec3 *hi)
{
    /* The matrix only where the shape needs it (a sphere does not): this runs for every moved
     * collider at every publish. */
    gy_vec3 c = e->pose.position, ext;
    switch ((gy_shape_type)e->type) {
    case GY_SHAPE_SPHERE:
        ext = gy_v3(e->p[0], e->p[0], e->p[0]);
        break;
    case GY_SHAPE_BOX: {
        gy_mat3 m = gy_quat_to_mat3(e->pose.rotation);
        ext = rotated_extent(&m, gy_v3(e->p[0], e->p[1], e->p[2]));
        break;
    }
    case GY_SHAPE_CAPSULE: {
        gy_vec3 y = rotated_y(e->pose.rotation);
        ext = gy_v3(fabs(y.x) * e->p[1] + e->p[0], fabs(y.y) * e->p[1] + e->p[0],
                    fabs(y.z) * e->p[1] + e->p[0]);
        break;
    }
    case GY_SHAPE_CYLINDER: {
        /* A disc of radius r with unit normal y spans r·sqrt(1 - y_i²) along world axis i. */
        gy_vec3 y = rotated_y(e->pose.rotation);
        double r = e->p[0], h = e->p[1];
        ext = gy_v3(fabs(y.x) * h + r * sqrt(fmax(0.0, 1.0 - y.x * y.x)),
                    fabs(y.y) * h + r * sqrt(fmax(0.0, 1.0 - y.y * y.y)),
                    fabs(y.z) * h + r * sqrt(fmax(0.0, 1.0 - y.z * y.z)));
        break;
    }
    case GY_SHAPE_HULL:
    case GY_SHAPE_MESH: {
        const gy_snapshot_geometry *g = e->geometry;
        gy_mat3 m = gy_quat_to_mat3(e->pose.rotation);
        gy_vec3 lc = gy_v3_scale(gy_v3_add(g->local_min, g->local_max), 0.5);
        c = gy_pose_apply(e->pose, lc);
        ext = rotated_extent(&m, gy_v3_sub(g->local_max, lc));
        break;
    }
    default:
        assert(!"bounded shape expected");
        ext = gy_v3(0, 0, 0);
        break;
    }
    *lo = gy_v3_sub(c, ext);
    *hi = gy_v3_add(c, ext);
}

static gy_bvh_box entry_box(const qs_entry *e)
{
    gy_vec3 lo, hi;
    entry_bounds(e, &lo, &hi);
    return gy_bvh_box_from(lo, hi);
}

/* The bounds entry_bounds computes are those of points (corners, segment ends, rims, the local
 * box of a hull) no farther than this from the pose's origin. */
static double turn_radius(const qs_entry *e)
{
    switch ((gy_shape_type)e->type) {
    case GY_SHAPE_SPHERE:
        return 0.0;
    case GY_SHAPE_BOX:
        return sqrt(e->p[0] * e->p[0] + e->p[1] * e->p[1] + e->p[2] * e->p[2]);
    case GY_SHAPE_CAPSULE:
        return e->p[1]; /* the segment's ends; the radius turns with them */
    case GY_SHAPE_CYLINDER:
        return sqrt(e->p[0] * e->p[0] + e->p[1] * e->p[1]);
    case GY_SHAPE_HULL:
    case GY_SHAPE_MESH: {
        const gy_snapshot_geometry *g = e->geometry;
        gy_vec3 c = gy_v3(fmax(fabs(g->local_min.x), fabs(g->local_max.x)),
                          fmax(fabs(g->local_min.y), fabs(g->local_max.y)),
                          fmax(fabs(g->local_min.z), fabs(g->local_max.z)));
        return gy_v3_len(c);
    }
    default:
        return 0.0;
    }
}

/* True when no point of the entry can have left its box since the anchor: a point at distance r
 * from the origin moves by at most |Δposition| + 2·r·sin(θ/2) under a turn by θ, and
 * cos(θ/2) = |q0·q1|. The factor below the margin covers rounding in this estimate. */
static inline bool still_inside(const qs_anchor *a, const qs_entry *e)
{
    gy_vec3 d = gy_v3_sub(e->pose.position, a->pose.position);
    gy_quat q0 = a->pose.rotation, q1 = e->pose.rotation;
    double c = q0.x * q1.x + q0.y * q1.y + q0.z * q1.z + q0.w * q1.w;
    double s2 = 1.0 - c * c; /* sin²(θ/2); a ternary, not fmax, which is a call */
    double moved = sqrt(gy_v3_dot(d, d)) + 2.0 * a->turn_radius * sqrt(s2 > 0.0 ? s2 : 0.0);
    return moved <= 0.999 * MOVING_MARGIN;
}

/* The writer's entry of a slot in a group (its static page for statics, its mover page for the
 * rest); NULL for an empty slot. */
static inline qs_entry *writer_entry(const gy_query_snapshot *qs, uint32_t slot)
{
    uint8_t g = qs->group[slot];
    if (g == GROUP_NONE)
        return NULL;
    return (qs_entry *)dir_at(g == TREE_STATIC ? &qs->statics : &qs->movers, slot);
}

/* The writer's static entry of `slot`, in a page no buffer holds: a page a buffer holds is copied
 * first, and a missing one made. NULL when that needs memory and there is none (nothing changed
 * then). The copy needs no blob references: the writer holds one per static-group entry, however
 * many pages it has held them in. */
static qs_entry *static_for_write(gy_query_snapshot *qs, uint32_t slot)
{
    qs_page **pp = &qs->statics.pages[slot >> PAGE_SHIFT], *p = *pp;
    if (p == NULL || p->refs > 1) {
        qs_page *n = page_get(qs);
        if (n == NULL)
            return NULL;
        if (p != NULL) {
            memcpy(n->e, p->e, sizeof n->e);
            p->refs--; /* still held by a buffer */
            qs->stats.static_page_copies++;
        }
        n->refs = 1;
        *pp = n;
        qs->static_version++;
    }
    return &(*pp)->e[slot & (PAGE_SLOTS - 1u)];
}

/* The writer's mover entry of `slot`, its page made if missing; NULL without memory. */
static qs_entry *mover_for_write(gy_query_snapshot *qs, uint32_t slot)
{
    qs_page **pp = &qs->movers.pages[slot >> PAGE_SHIFT];
    if (*pp == NULL && (*pp = page_get(qs)) == NULL)
        return NULL;
    return &(*pp)->e[slot & (PAGE_SLOTS - 1u)];
}

/* Brings the writer's tree box of a bounded entry in `group` up to date: for the moving tree its
 * bounds grown by MOVING_MARGIN, where an unforced update keeps a box that still holds the bounds;
 * a static's box is its exact (outward-rounded) bounds, computed from its entry when the static
 * tree is next updated, so here it is only marked stale. Returns whether the box changed. The
 * moves that keep their box (most, and the ones that come by the thousand per tick) are decided
 * by still_inside before this is called. */
static __attribute__((noinline)) bool update_box(gy_query_snapshot *qs, uint32_t slot,
                                                 uint8_t group, bool force)
{
    if (group == TREE_STATIC) {
        qs->static_tree_stale = true;
        return true;
    }
    const qs_entry *e = writer_entry(qs, slot);
    gy_vec3 lo, hi;
    entry_bounds(e, &lo, &hi);
    gy_bvh_box *b = &qs->mover_boxes[qs->member_pos[slot]];
    /* Turned or moved farther than the estimate allows, but the bounds may still fit (a box keeps
     * its bounds under a quarter turn about an axis, say). */
    if (!force && b->min[0] <= lo.x && b->min[1] <= lo.y && b->min[2] <= lo.z &&
        hi.x <= b->max[0] && hi.y <= b->max[1] && hi.z <= b->max[2])
        return false;
    const gy_vec3 m = gy_v3(MOVING_MARGIN, MOVING_MARGIN, MOVING_MARGIN);
    lo = gy_v3_sub(lo, m);
    hi = gy_v3_add(hi, m);
    qs_anchor *a = &qs->anchors[qs->member_pos[slot]];
    a->pose = e->pose;
    if (force)
        a->turn_radius = turn_radius(e);
    *b = gy_bvh_box_from(lo, hi);
    return true;
}

/* The writer's current tree box of a slot in tree group g. */
static gy_bvh_box tree_box(const gy_query_snapshot *qs, uint8_t g, uint32_t slot)
{
    return g == TREE_MOVING ? qs->mover_boxes[qs->member_pos[slot]]
                            : entry_box(writer_entry(qs, slot));
}

static uint8_t group_of(const qs_entry *e)
{
    if (!e->live)
        return GROUP_NONE;
    if (e->type == GY_SHAPE_PLANE)
        return GROUP_PLANES;
    return e->motion == GY_MOTION_STATIC ? TREE_STATIC : TREE_MOVING;
}

/* Checks and converts a definition; on success *out holds a live entry. A plane's numbers go to
 * plane[4] (its entry's record is the caller's to make); queries, which take no planes, pass
 * NULL. */
static gy_result entry_from_def(const gy_snapshot_entry *d, qs_entry *out, double *plane)
{
    if (d == NULL || (unsigned)d->motion >= GY_MOTION_TYPE_COUNT ||
        (unsigned)d->shape.type >= GY_SHAPE_TYPE_COUNT)
        return GY_ERR_INVALID_ARGUMENT;
    if (!gy_vec3_is_finite(d->pose.position) || !gy_quat_is_finite(d->pose.rotation))
        return GY_ERR_NON_FINITE;
    if (!gy_quat_is_unit(d->pose.rotation))
        return GY_ERR_INVALID_ARGUMENT;
    const gy_shape *s = &d->shape;
    bool blob = s->type == GY_SHAPE_HULL || s->type == GY_SHAPE_MESH;
    if (blob) {
        if (d->geometry == NULL || d->geometry->type != s->type)
            return GY_ERR_INVALID_MESH;
    } else {
        if (d->geometry != NULL)
            return GY_ERR_INVALID_ARGUMENT;
        gy_result r = gy_validate_shape(s);
        if (r != GY_OK)
            return r;
    }
    memset(out, 0, sizeof *out);
    out->pose.position = d->pose.position;
    out->pose.rotation = gy_quat_normalize(d->pose.rotation);
    switch (s->type) {
    case GY_SHAPE_SPHERE:
        out->p[0] = s->radius;
        break;
    case GY_SHAPE_BOX:
        out->p[0] = 0.5 * s->box_size.x;
        out->p[1] = 0.5 * s->box_size.y;
        out->p[2] = 0.5 * s->box_size.z;
        break;
    case GY_SHAPE_CAPSULE:
        out->p[0] = s->radius;
        out->p[1] = 0.5 * s->height - s->radius;
        break;
    case GY_SHAPE_CYLINDER:
        out->p[0] = s->radius;
        out->p[1] = 0.5 * s->height;
        break;
    case GY_SHAPE_PLANE: {
        if (plane == NULL)
            return GY_ERR_UNSUPPORTED;
        double len = gy_v3_len(s->normal);
        plane[0] = s->normal.x / len;
        plane[1] = s->normal.y / len;
        plane[2] = s->normal.z / len;
        plane[3] = s->offset / len;
        break;
    }
    default:
        out->geometry = d->geometry;
        break;
    }
    out->category = d->category;
    out->body = d->body;
    out->type = (uint8_t)s->type;
    out->motion = (uint8_t)d->motion;
    out->sensor = d->is_sensor ? 1u : 0u;
    out->live = 1u;
    return GY_OK;
}

/* ---- writer ------------------------------------------------------------------------------------
 */

/* Layout of the per-slot block for `cap` slots: offsets of each array, largest alignment first. */
typedef struct slot_layout {
    size_t member_pos, dirty, static_pending, group, dirty_bits, static_flags, size;
} slot_layout;

static slot_layout layout_for(uint32_t cap)
{
    slot_layout l;
    size_t o = 0, n = cap;
    l.member_pos = o;
    o += n * sizeof(uint32_t);
    l.dirty = o;
    o += n * sizeof(uint32_t);
    l.static_pending = o;
    o += n * sizeof(uint32_t);
    l.group = o;
    o += n;
    l.dirty_bits = o;
    o += n;
    l.static_flags = o;
    o += n;
    l.size = o;
    return l;
}

static void carry(char *dst, const void *src, size_t elem, uint32_t old, uint32_t add, int fill)
{
    if (old)
        memcpy(dst, src, old * elem);
    memset(dst + old * elem, fill, add * elem);
}

static gy_result grow_slots(gy_query_snapshot *qs, uint32_t need)
{
    if (need <= qs->capacity)
        return GY_OK;
    /* By a quarter (table_growth.h), in whole pages: the slots live as long as the world. */
    uint64_t cap = gy_phys_table_capacity(qs->capacity, 64u, need);
    cap = (cap + PAGE_SLOTS - 1u) & ~(uint64_t)(PAGE_SLOTS - 1u);
    if (cap > GY_QUERY_SNAPSHOT_MAX_SLOTS)
        cap = GY_QUERY_SNAPSHOT_MAX_SLOTS;
    /* Directories first: growing them further than the block is harmless. */
    if (dir_reserve(qs->alloc, &qs->statics, (uint32_t)(cap >> PAGE_SHIFT)) != GY_OK ||
        dir_reserve(qs->alloc, &qs->movers, (uint32_t)(cap >> PAGE_SHIFT)) != GY_OK)
        return GY_ERR_OUT_OF_MEMORY;
    slot_layout l = layout_for((uint32_t)cap);
    char *b = gy_alloc(qs->alloc, l.size);
    if (b == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    uint32_t old = qs->capacity, add = (uint32_t)cap - old;
    /* Per-slot state is copied; the new tail starts empty. */
    carry(b + l.member_pos, qs->member_pos, sizeof(uint32_t), old, add, 0xff);
    carry(b + l.group, qs->group, 1, old, add, (int)GROUP_NONE);
    carry(b + l.dirty_bits, qs->dirty_bits, 1, old, add, 0);
    carry(b + l.static_flags, qs->static_flags, 1, old, add, 0);
    carry(b + l.static_pending, qs->static_pending, sizeof(uint32_t), qs->static_pending_count,
          (uint32_t)cap - qs->static_pending_count, 0);
    if (qs->dirty_count)
        memcpy(b + l.dirty, qs->dirty, (size_t)qs->dirty_count * sizeof *qs->dirty);
    qs->dirty = (uint32_t *)(void *)(b + l.dirty);
    gy_free(qs->alloc, qs->block, qs->block_size);
    qs->block = b;
    qs->block_size = l.size;
    qs->capacity = (uint32_t)cap;
    qs->member_pos = (uint32_t *)(void *)(b + l.member_pos);
    qs->group = (uint8_t *)(b + l.group);
    qs->dirty_bits = (uint8_t *)(b + l.dirty_bits);
    qs->static_flags = (uint8_t *)(b + l.static_flags);
    qs->static_pending = (uint32_t *)(void *)(b + l.static_pending);
    qs->stats.slot_capacity = qs->capacity;
    return GY_OK;
}

gy_result gy_query_snapshot_create(const gy_query_snapshot_def *def, gy_query_snapshot **out)
{
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_query_snapshot_def d = def != NULL ? *def : (gy_query_snapshot_def){0};
    if (d.initial_slots > GY_QUERY_SNAPSHOT_MAX_SLOTS)
        return GY_ERR_INVALID_ARGUMENT;
    const gy_allocator *a = gy_allocator_or_default(d.allocator);
    gy_query_snapshot *qs = gy_alloc_zeroed(a, sizeof *qs);
    if (qs == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    qs->alloc = a;
    gy_bvh_init(&qs->moving_tree, true);
    qs->trees[TREE_MOVING] = &qs->moving_tree;
    for (int v = 0; v < 3; v++) {
        gy_bvh_init(&qs->views[v].moving_tree, true);
        qs->views[v].trees[TREE_MOVING] = &qs->views[v].moving_tree;
    }
    gy_bvh_editor_init(&qs->static_editor);
    /* Logging starts with the first other copy (see own_static_tree). */
    gy_bvh_editor_set_logging(&qs->static_editor, a, false);
    qs->static_trees[0] = gy_alloc_zeroed(a, sizeof *qs->static_trees[0]);
    if (qs->static_trees[0] == NULL) {
        gy_query_snapshot_destroy(qs);
        return GY_ERR_OUT_OF_MEMORY;
    }
    gy_bvh_init(&qs->static_trees[0]->bvh, true);
    qs->static_trees[0]->bvh.editor = &qs->static_editor;
    qs->static_trees[0]->refs = 1;
    qs->trees[TREE_STATIC] = &qs->static_trees[0]->bvh;
    gy_triple_buffer_def tbd = {
        sizeof(gy_snapshot_view), {&qs->views[0], &qs->views[1], &qs->views[2], NULL}, a, false};
    gy_result r = gy_triple_buffer_create(&tbd, &qs->tb);
    if (r == GY_OK)
        r = grow_slots(qs, d.initial_slots ? d.initial_slots : 64u);
    if (r != GY_OK) {
        gy_query_snapshot_destroy(qs);
        return r;
    }
    *out = qs;
    return GY_OK;
}

/* Frees static tree copy i (retired, or at destroy). */
static void tree_free(gy_query_snapshot *qs, uint32_t i)
{
    qs_tree *t = qs->static_trees[i];
    if (t == NULL)
        return;
    gy_bvh_fini(&t->bvh, qs->alloc);
    gy_free(qs->alloc, t, sizeof *t);
    qs->static_trees[i] = NULL;
}

/* Frees a directory of mover pages (its own) and the blob references of their entries. */
static void dir_free(gy_query_snapshot *qs, qs_dir *d)
{
    for (uint32_t i = 0; i < d->count; i++) {
        qs_page *p = d->pages[i];
        if (p == NULL)
            continue;
        for (uint32_t k = 0; k < PAGE_SLOTS; k++)
            if (p->e[k].live)
                geometry_unref(blob_of(&p->e[k]));
        gy_free(qs->alloc, p, sizeof *p);
    }
    gy_free(qs->alloc, d->pages, (size_t)d->capacity * sizeof *d->pages);
}

void gy_query_snapshot_destroy(gy_query_snapshot *qs)
{
    if (qs == NULL)
        return;
    const gy_allocator *a = qs->alloc;
    for (int v = 0; v < 3; v++) {
        gy_snapshot_view *view = &qs->views[v];
        for (uint32_t i = 0; i < view->statics.count; i++)
            if (view->statics.pages[i] != NULL)
                page_drop(qs, view->statics.pages[i]);
        dir_free(qs, &view->movers);
        gy_free(a, view->statics.pages, (size_t)view->statics.capacity * sizeof(qs_page *));
        gy_free(a, view->planes, (size_t)view->plane_capacity * sizeof *view->planes);
        gy_bvh_fini(&view->moving_tree, a);
    }
    /* The writer holds a blob reference for each static-group entry (not for those of statics
     * removed since the last publish, whose entries linger in their pages until it). */
    for (uint32_t i = 0; i < qs->statics.count; i++) {
        qs_page *p = qs->statics.pages[i];
        if (p == NULL)
            continue;
        for (uint32_t k = 0; k < PAGE_SLOTS; k++)
            if (qs->group[i * PAGE_SLOTS + k] == TREE_STATIC)
                geometry_unref(blob_of(&p->e[k]));
        if (--p->refs == 0)
            page_put(qs, p);
    }
    gy_free(a, qs->statics.pages, (size_t)qs->statics.capacity * sizeof(qs_page *));
    dir_free(qs, &qs->movers);
    while (qs->pool != NULL) {
        qs_page *p = qs->pool;
        qs->pool = p->next;
        gy_free(a, p, sizeof *p);
    }
    gy_bvh_fini(&qs->moving_tree, a);
    for (uint32_t i = 0; i < GY_BVH_MIRRORS; i++)
        tree_free(qs, i);
    gy_bvh_builder_fini(&qs->builder, a);
    gy_bvh_builder_fini(&qs->static_builder, a);
    gy_bvh_editor_fini(&qs->static_editor, a);
    gy_free(a, qs->block, qs->block_size);
    gy_free(a, qs->anchors, (size_t)qs->anchor_capacity * sizeof *qs->anchors);
    gy_free(a, qs->mover_boxes, (size_t)qs->mover_box_capacity * sizeof *qs->mover_boxes);
    for (int g = 0; g < GROUP_COUNT; g++)
        gy_free(a, qs->members[g], (size_t)qs->member_capacity[g] * sizeof *qs->members[g]);
    gy_triple_buffer_destroy(qs->tb);
    gy_free(a, qs, sizeof *qs);
}

/* Marks the slot dirty for every list it is not dirty for yet (putting it on the dirty list if
 * it was dirty for none), and with `box` marks its tree box changed for every list. */
static inline void mark_dirty(gy_query_snapshot *qs, uint32_t slot, bool box)
{
    const unsigned all = (1u << DIRTY_LISTS) - 1u;
    unsigned bits = qs->dirty_bits[slot];
    unsigned missing = ~bits & all;
    unsigned box_missing = box ? ~(bits >> BOX_SHIFT) & all : 0u;
    if ((missing | box_missing) == 0)
        return;
    qs->dirty_bits[slot] = (uint8_t)(bits | missing | (box_missing << BOX_SHIFT));
    if ((bits & all) == 0)
        qs->dirty[qs->dirty_count++] = slot;
    for (; box_missing != 0; box_missing &= box_missing - 1u)
        qs->box_dirty_count[__builtin_ctz(box_missing)]++;
}

/* The static tree's membership changes are kept per slot until the tree is next updated. */
static void note_static_change(gy_query_snapshot *qs, uint8_t g, uint32_t slot)
{
    if (g != TREE_STATIC || (qs->static_flags[slot] & STATIC_PENDING))
        return;
    qs->static_flags[slot] |= STATIC_PENDING;
    qs->static_pending[qs->static_pending_count++] = slot;
}

static void group_add(gy_query_snapshot *qs, uint8_t g, uint32_t slot)
{
    qs->member_pos[slot] = qs->member_count[g];
    qs->members[g][qs->member_count[g]++] = slot;
    qs->membership_changed[g] = true;
    note_static_change(qs, g, slot);
}

static void group_remove(gy_query_snapshot *qs, uint8_t g, uint32_t slot)
{
    uint32_t pos = qs->member_pos[slot], last = qs->members[g][--qs->member_count[g]];
    assert(qs->members[g][pos] == slot);
    qs->members[g][pos] = last;
    qs->member_pos[last] = pos;
    if (g == TREE_MOVING) {
        qs->anchors[pos] = qs->anchors[qs->member_count[g]];
        qs->mover_boxes[pos] = qs->mover_boxes[qs->member_count[g]];
    }
    qs->membership_changed[g] = true;
    note_static_change(qs, g, slot);
}

/* The record for a plane set at `slot`: the one its entry has when the numbers are the same (a
 * plane set again allocates nothing), else a new one with no references; NULL without memory. */
static gy_snapshot_geometry *plane_record(gy_query_snapshot *qs, uint32_t slot,
                                          const double plane[4])
{
    const qs_entry *old = writer_entry(qs, slot);
    if (old != NULL && old->type == GY_SHAPE_PLANE &&
        memcmp(old->geometry->plane, plane, sizeof old->geometry->plane) == 0)
        return old->geometry;
    gy_snapshot_geometry *g = gy_alloc_zeroed(qs->alloc, sizeof *g);
    if (g == NULL)
        return NULL;
    g->allocator = qs->alloc;
    g->type = GY_SHAPE_PLANE;
    memcpy(g->plane, plane, sizeof g->plane);
    return g;
}

gy_result gy_query_snapshot_set(gy_query_snapshot *qs, uint32_t slot, const gy_snapshot_entry *e)
{
    if (qs == NULL || slot >= GY_QUERY_SNAPSHOT_MAX_SLOTS)
        return GY_ERR_INVALID_ARGUMENT;
    qs_entry n;
    double plane[4];
    gy_result r = entry_from_def(e, &n, plane);
    if (r != GY_OK)
        return r;
    r = grow_slots(qs, slot + 1u);
    if (r != GY_OK)
        return r;
    uint8_t old_group = qs->group[slot], new_group = group_of(&n);
    if (new_group != old_group) {
        /* Per group rather than per slot: a level of statics carries no mover lists. */
        r = gy_phys_table_reserve(qs->alloc, (void **)&qs->members[new_group],
                                  &qs->member_capacity[new_group], qs->member_count[new_group] + 1u,
                                  sizeof *qs->members[new_group]);
        if (r != GY_OK)
            return r;
    }
    if (new_group == TREE_MOVING && old_group != TREE_MOVING) {
        r = gy_phys_table_reserve(qs->alloc, (void **)&qs->anchors, &qs->anchor_capacity,
                                  qs->member_count[TREE_MOVING] + 1u, sizeof *qs->anchors);
        if (r == GY_OK)
            r = gy_phys_table_reserve(qs->alloc, (void **)&qs->mover_boxes, &qs->mover_box_capacity,
                                      qs->member_count[TREE_MOVING] + 1u, sizeof *qs->mover_boxes);
        if (r != GY_OK)
            return r;
    }
    qs_entry *dst =
        new_group == TREE_STATIC ? static_for_write(qs, slot) : mover_for_write(qs, slot);
    if (dst == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    if (n.type == GY_SHAPE_PLANE && (n.geometry = plane_record(qs, slot, plane)) == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    if (slot >= qs->slot_limit)
        qs->slot_limit = slot + 1u;
    geometry_ref(blob_of(&n));
    qs_entry *old = writer_entry(qs, slot);
    if (old != NULL) {
        geometry_unref(blob_of(old));
        /* A mover's entry is the writer's own: cleared now. A static's is in a page buffers may
         * share: it lingers, unreferenced, until the next publish clears it. */
        if (old != dst && old_group != TREE_STATIC)
            memset(old, 0, sizeof *old);
    }
    *dst = n;
    /* Membership first: a moving entry's anchor is found by its place in the group. */
    if (old_group != new_group) {
        if (old_group != GROUP_NONE)
            group_remove(qs, old_group, slot);
        group_add(qs, new_group, slot);
        qs->group[slot] = new_group;
    }
    if (new_group != GROUP_PLANES)
        update_box(qs, slot, new_group, true);
    mark_dirty(qs, slot, true);
    return GY_OK;
}

gy_result gy_query_snapshot_move(gy_query_snapshot *qs, uint32_t slot, gy_pose pose)
{
    if (qs == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (slot >= qs->slot_limit || qs->group[slot] == GROUP_NONE)
        return GY_ERR_STALE_HANDLE;
    /* gy_quat_is_unit then gy_quat_normalize, sharing their one square root (the same arithmetic,
     * so the same bits): this runs for every moved collider at every publish. A non-finite
     * component makes the length non-finite, so the unit test also rejects those; which error
     * it was is sorted out only on the way out. */
    gy_quat q = pose.rotation;
    double l = sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
    if (!(fabs(l - 1.0) <= 1e-3) || !gy_vec3_is_finite(pose.position))
        return gy_vec3_is_finite(pose.position) && gy_quat_is_finite(q) ? GY_ERR_INVALID_ARGUMENT
                                                                        : GY_ERR_NON_FINITE;
    uint8_t g = qs->group[slot];
    qs_entry *e = g == TREE_STATIC ? static_for_write(qs, slot) : writer_entry(qs, slot);
    if (e == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    e->pose.position = pose.position;
    /* An adapter's rotation is normalised every step, and its length then mostly rounds to
     * exactly 1, where dividing would change no bit: the four divisions are skipped. */
    e->pose.rotation = l == 1.0 ? q : (gy_quat){q.x / l, q.y / l, q.z / l, q.w / l};
    bool box = g != GROUP_PLANES &&
               !(g == TREE_MOVING && still_inside(&qs->anchors[qs->member_pos[slot]], e)) &&
               update_box(qs, slot, g, false);
    mark_dirty(qs, slot, box);
    return GY_OK;
}

gy_result gy_query_snapshot_set_category(gy_query_snapshot *qs, uint32_t slot, uint32_t category)
{
    if (qs == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (slot >= qs->slot_limit || qs->group[slot] == GROUP_NONE)
        return GY_ERR_STALE_HANDLE;
    qs_entry *e =
        qs->group[slot] == TREE_STATIC ? static_for_write(qs, slot) : writer_entry(qs, slot);
    if (e == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    e->category = category;
    mark_dirty(qs, slot, false);
    return GY_OK;
}

gy_result gy_query_snapshot_remove(gy_query_snapshot *qs, uint32_t slot)
{
    if (qs == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (slot >= qs->slot_limit || qs->group[slot] == GROUP_NONE)
        return GY_ERR_STALE_HANDLE;
    qs_entry *e = writer_entry(qs, slot);
    geometry_unref(blob_of(e));
    /* A static's entry lingers in its shared page until the next publish clears it, so removing
     * never needs a page copy (memory). */
    if (qs->group[slot] != TREE_STATIC)
        memset(e, 0, sizeof *e);
    group_remove(qs, qs->group[slot], slot);
    qs->group[slot] = GROUP_NONE;
    mark_dirty(qs, slot, true);
    return GY_OK;
}

/* Refits `trees` (the writer's or a buffer's) for the slots whose box changed for list `b`,
 * except the trees marked in `skip`: path by path, or in one sweep where that touches fewer nodes
 * (when most of a tree moved), and clears those box marks. moved[g] tells whether any box of tree
 * g changed. */
static void refit_trees(gy_query_snapshot *qs, gy_bvh *const trees[TREE_COUNT], unsigned b,
                        const bool skip[TREE_COUNT], bool moved[TREE_COUNT])
{
    moved[0] = moved[1] = false;
    if (qs->box_dirty_count[b] == 0)
        return;
    const uint32_t *list = qs->dirty, n = qs->dirty_count;
    const uint8_t box_bit = (uint8_t)(1u << (BOX_SHIFT + b));
    uint32_t count[TREE_COUNT] = {0, 0};
    for (uint32_t i = 0; i < n; i++) {
        uint8_t g = qs->group[list[i]];
        if (g < TREE_COUNT && (qs->dirty_bits[list[i]] & box_bit))
            count[g]++;
    }
    bool by_path = false, sweep[TREE_COUNT];
    for (int g = 0; g < TREE_COUNT; g++) {
        /* Refit by path, a slot counts as moved only if its box changed: a static just inserted
         * into its tree in place is listed here too, but has not moved. */
        moved[g] = count[g] > 0 && (skip[g] || trees[g]->node_count > 0);
        /* Statics keep no boxes to sweep over; they seldom move, and never most of them at once
         * but when a level is moved as a whole. */
        sweep[g] = !skip[g] && g == TREE_MOVING &&
                   (uint64_t)count[g] * (trees[g]->depth + 1u) > trees[g]->node_count;
        if (sweep[g])
            qs->stats.nodes_refit +=
                gy_bvh_refit_all_indexed(trees[g], qs->mover_boxes, qs->member_pos);
        else if (!skip[g] && count[g] > 0) {
            by_path = true;
            moved[g] = false;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = list[i];
        if (!(qs->dirty_bits[s] & box_bit))
            continue;
        qs->dirty_bits[s] &= (uint8_t)~box_bit;
        uint8_t g = qs->group[s];
        if (by_path && g < TREE_COUNT && !skip[g] && !sweep[g]) {
            uint32_t changed = gy_bvh_refit_item(trees[g], s, tree_box(qs, g, s));
            qs->stats.nodes_refit += changed;
            moved[g] = moved[g] || changed > 0;
        }
    }
    qs->box_dirty_count[b] = 0;
}

/* Whether buffer `b` holds a live entry of `slot` among its movers (the writer may read every
 * buffer: only it writes them). */
static bool buffer_holds_mover(const gy_query_snapshot *qs, unsigned b, uint32_t slot)
{
    const gy_snapshot_view *v = gy_triple_buffer_buffer(qs->tb, b);
    uint32_t pi = slot >> PAGE_SHIFT;
    return pi < v->movers.count && v->movers.pages[pi] != NULL && dir_at(&v->movers, slot)->live;
}

/* Drops the slots dirty for no list any more from the dirty list (after a list caught up).
 * A slot that is static or empty now can only ever clear a buffer's mover entry, so a buffer
 * holding none for it has nothing to catch up on and loses its mark here. Without that, the
 * buffer the reader holds (never written while it is held: a host that makes no query never
 * lets it go) would keep every static ever added on the list, and every publish would walk
 * them all. */
static void compact_dirty(gy_query_snapshot *qs)
{
    const unsigned all = (1u << DIRTY_LISTS) - 1u, buffers = all & ~(1u << MASTER_BIT);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < qs->dirty_count; i++) {
        uint32_t s = qs->dirty[i];
        unsigned bits = qs->dirty_bits[s];
        uint8_t g = qs->group[s];
        if ((bits & buffers) != 0 && (g == GROUP_NONE || g == TREE_STATIC)) {
            for (unsigned b = 0; b < MASTER_BIT; b++) {
                if (!(bits & (1u << b)) || buffer_holds_mover(qs, b, s))
                    continue;
                bits &= ~(1u << b);
                if (bits & (1u << (BOX_SHIFT + b))) {
                    bits &= ~(1u << (BOX_SHIFT + b));
                    qs->box_dirty_count[b]--;
                }
            }
            qs->dirty_bits[s] = (uint8_t)bits;
        }
        if (bits & all)
            qs->dirty[kept++] = s;
    }
    qs->dirty_count = kept;
}

/* After a static tree build: every pending slot is in the tree exactly when it is static. */
static void settle_static_pending(gy_query_snapshot *qs)
{
    for (uint32_t i = 0; i < qs->static_pending_count; i++) {
        uint32_t s = qs->static_pending[i];
        qs->static_flags[s] = qs->group[s] == TREE_STATIC ? IN_STATIC_TREE : 0u;
    }
    qs->static_pending_count = 0;
}

/* Applies the pending static membership changes to the writer's static tree in place: removals
 * first, then insertions. Only when that beats a rebuild (see EDIT_MIN_STATICS). On an allocation
 * failure the slots not done stay pending and the next publish rebuilds. */
static gy_result edit_static_tree(gy_query_snapshot *qs, bool *edited)
{
    *edited = false;
    gy_bvh *t = qs->trees[TREE_STATIC];
    uint32_t n = qs->member_count[TREE_STATIC], changes = qs->static_pending_count;
    if (!qs->membership_changed[TREE_STATIC] || t->node_count == 0 || n < EDIT_MIN_STATICS ||
        (uint64_t)changes * 4u > n)
        return GY_OK;
    /* A slot that left and joined again holds a different collider (its slot was reused): it is
     * taken out and inserted where it now is, rather than refit across the world. */
    for (uint32_t i = 0; i < changes; i++) {
        uint32_t s = qs->static_pending[i];
        if (qs->static_flags[s] & IN_STATIC_TREE) {
            gy_bvh_remove(t, s);
            qs->static_flags[s] &= (uint8_t)~IN_STATIC_TREE;
        }
    }
    uint32_t done = 0;
    for (; done < changes; done++) {
        uint32_t s = qs->static_pending[done];
        if (!(qs->static_flags[s] & IN_STATIC_TREE) && qs->group[s] == TREE_STATIC) {
            if (gy_bvh_insert(t, qs->alloc, s, tree_box(qs, TREE_STATIC, s), qs->capacity) != GY_OK)
                break;
            qs->static_flags[s] |= IN_STATIC_TREE;
        }
        qs->static_flags[s] &= (uint8_t)~STATIC_PENDING;
    }
    if (done < changes) {
        memmove(qs->static_pending, qs->static_pending + done,
                (size_t)(changes - done) * sizeof *qs->static_pending);
        qs->static_pending_count = changes - done;
        return GY_ERR_OUT_OF_MEMORY;
    }
    qs->static_pending_count = 0;
    qs->membership_changed[TREE_STATIC] = false;
    *edited = true;
    return GY_OK;
}

/* Makes the master static copy one no buffer holds, when statics changed (or the periodic
 * rebuild is due) while a buffer holds it. The buffer about to be written lets go of its copy
 * first, so one of the three copies is always free. Fails only for memory, changing nothing the
 * next publish cannot redo. */
static gy_result own_static_tree(gy_query_snapshot *qs, uint64_t sequence)
{
    qs_tree *m = qs->static_trees[qs->master];
    bool changing = qs->membership_changed[TREE_STATIC] || qs->static_tree_stale ||
                    (sequence % REBUILD_PERIOD == 0 && qs->moved_since_build[TREE_STATIC]);
    if (!changing)
        return GY_OK;
    gy_snapshot_view *w = gy_triple_buffer_write_buffer(qs->tb);
    if (w->static_tree != NULL) {
        w->static_tree->refs--;
        w->static_tree = NULL;
        w->trees[TREE_STATIC] = NULL;
    }
    if (m->refs == 1)
        return GY_OK; /* no buffer the reader can reach holds it: edited in place */
    uint32_t pick = 0;
    while (pick < GY_BVH_MIRRORS && (pick == qs->master || (qs->static_trees[pick] != NULL &&
                                                            qs->static_trees[pick]->refs != 0)))
        pick++;
    assert(pick < GY_BVH_MIRRORS);
    if (pick == GY_BVH_MIRRORS)
        return GY_ERR_OUT_OF_MEMORY; /* unreachable: two buffers hold at most two copies */
    /* The master logs its edits for the other copies only while there are any. */
    if (gy_bvh_editor_set_logging(&qs->static_editor, qs->alloc, true) != GY_OK)
        return GY_ERR_OUT_OF_MEMORY;
    qs_tree *t = qs->static_trees[pick];
    if (t == NULL) {
        if ((t = gy_alloc_zeroed(qs->alloc, sizeof *t)) == NULL)
            return GY_ERR_OUT_OF_MEMORY;
        gy_bvh_init(&t->bvh, true);
        t->version = UINT64_MAX;
        qs->static_trees[pick] = t;
    }
    /* A copy holds as many nodes as the master, so a copy that becomes the master grows no
     * sooner than the master did. */
    if (gy_bvh_reserve_nodes(&t->bvh, qs->alloc, m->bvh.node_capacity) != GY_OK)
        return GY_ERR_OUT_OF_MEMORY;
    if (t->version == m->version) {
        if (gy_bvh_mirror(&t->bvh, &m->bvh, pick, qs->alloc, qs->capacity) != GY_OK)
            return GY_ERR_OUT_OF_MEMORY;
    } else {
        if (gy_bvh_copy(&t->bvh, &m->bvh, qs->alloc, qs->capacity) != GY_OK)
            return GY_ERR_OUT_OF_MEMORY;
        gy_bvh_editor_forget(&qs->static_editor, pick);
        t->version = m->version;
        qs->stats.tree_copies++;
    }
    m->bvh.editor = NULL;
    m->refs--;
    t->bvh.editor = &qs->static_editor;
    t->refs = 1;
    qs->master = pick;
    qs->trees[TREE_STATIC] = &t->bvh;
    qs->stats.static_tree_switches++;
    return GY_OK;
}

/* Rebuilds the writer's tree g over its group, each member with its current tree box. */
static gy_result build_tree(gy_query_snapshot *qs, uint8_t g)
{
    gy_bvh_builder *builder = g == TREE_STATIC ? &qs->static_builder : &qs->builder;
    gy_bvh_build_state state;
    uint32_t n = qs->member_count[g];
    /* The static tree is mostly built once, at its full size, so its nodes are reserved to fit
     * rather than doubled: 2n - 1 and room for n/16 more statics inserted in place. */
    if (g == TREE_STATIC && n > 0 && n <= GY_BVH_MAX_ITEMS / 4u &&
        gy_bvh_reserve_nodes(qs->trees[g], qs->alloc, 2u * n - 1u + n / 8u) != GY_OK)
        return GY_ERR_OUT_OF_MEMORY;
    gy_result r =
        gy_bvh_build_begin(qs->trees[g], builder, qs->alloc, NULL, n, NULL, qs->capacity, &state);
    if (r != GY_OK)
        return r;
    for (uint32_t i = 0; i < n; i++) {
        builder->items[i] = qs->members[g][i];
        builder->boxes[i] = tree_box(qs, g, qs->members[g][i]);
    }
    gy_bvh_build_run(qs->trees[g], builder, &state, UINT64_MAX, NULL);
    return GY_OK;
}

/* Brings the writer's trees up to date: statics join and leave the static tree in place when
 * that pays, moved paths are refit, and a tree is rebuilt where its membership changed otherwise
 * or the periodic rebuild is due. */
static gy_result update_trees(gy_query_snapshot *qs, uint64_t sequence)
{
    bool moved[TREE_COUNT], edited;
    gy_result er = edit_static_tree(qs, &edited);
    if (er != GY_OK)
        return er;
    if (edited)
        qs->stats.static_edits++;
    refit_trees(qs, qs->trees, MASTER_BIT, qs->membership_changed, moved);
    for (uint32_t i = 0; i < qs->dirty_count; i++)
        qs->dirty_bits[qs->dirty[i]] &= (uint8_t) ~(1u << MASTER_BIT);
    compact_dirty(qs);
    for (int g = 0; g < TREE_COUNT; g++)
        qs->moved_since_build[g] = qs->moved_since_build[g] || moved[g];
    bool periodic = sequence % REBUILD_PERIOD == 0;
    for (int g = 0; g < TREE_COUNT; g++) {
        if (!qs->membership_changed[g] && !(periodic && qs->moved_since_build[g]))
            continue;
        gy_result r = build_tree(qs, (uint8_t)g);
        if (r != GY_OK) {
            qs->membership_changed[g] = true; /* retried by the next publish */
            return r;
        }
        qs->membership_changed[g] = false;
        qs->moved_since_build[g] = false;
        qs->version[g]++;
        if (g == TREE_STATIC) {
            settle_static_pending(qs);
            qs->stats.static_rebuilds++;
        } else {
            qs->stats.moving_rebuilds++;
        }
    }
    if (qs->membership_changed[GROUP_PLANES]) {
        qs->membership_changed[GROUP_PLANES] = false;
        qs->version[GROUP_PLANES]++;
    }
    return GY_OK;
}

/* Clears the lingering entries of statics that left the static group (removed, or now movers)
 * since the last publish, before any buffer can take their pages. Runs before the static tree
 * settles its pending list, which names every such slot. */
static gy_result clear_left_statics(gy_query_snapshot *qs)
{
    for (uint32_t i = 0; i < qs->static_pending_count; i++) {
        uint32_t s = qs->static_pending[i];
        const qs_page *p = qs->statics.pages[s >> PAGE_SHIFT];
        if (qs->group[s] == TREE_STATIC || p == NULL || !p->e[s & (PAGE_SLOTS - 1u)].live)
            continue;
        qs_entry *e = static_for_write(qs, s);
        if (e == NULL)
            return GY_ERR_OUT_OF_MEMORY; /* those done stay done; the rest are redone */
        memset(e, 0, sizeof *e);
    }
    return GY_OK;
}

/* Points buffer `v` at the writer's static pages: a page it already holds costs nothing, so
 * untouched statics cost nothing per publish. */
static gy_result share_statics(gy_query_snapshot *qs, gy_snapshot_view *v)
{
    if (v->static_version == qs->static_version)
        return GY_OK;
    if (dir_reserve(qs->alloc, &v->statics, qs->statics.count) != GY_OK)
        return GY_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < qs->statics.count; i++) {
        qs_page *w = qs->statics.pages[i], *old = v->statics.pages[i];
        if (w == old)
            continue;
        if (w != NULL)
            page_hold(w);
        if (old != NULL)
            page_drop(qs, old);
        v->statics.pages[i] = w;
    }
    v->static_version = qs->static_version;
    return GY_OK;
}

/* Makes buffer `b` equal to the writer's state. Everything that can fail (growth) happens before
 * anything that matters is changed, so a failed write is simply redone by the next publish. */
static gy_result write_view(gy_query_snapshot *qs, gy_snapshot_view *v, uint32_t b)
{
    if (dir_reserve(qs->alloc, &v->movers, qs->movers.count) != GY_OK)
        return GY_ERR_OUT_OF_MEMORY;
    const uint8_t bit = (uint8_t)(1u << b);
    for (uint32_t i = 0; i < qs->dirty_count; i++) {
        uint32_t s = qs->dirty[i];
        if (!(qs->dirty_bits[s] & bit))
            continue;
        qs_page **pp = &v->movers.pages[s >> PAGE_SHIFT];
        uint8_t g = qs->group[s];
        if (*pp == NULL && g != GROUP_NONE && g != TREE_STATIC && (*pp = page_get(qs)) == NULL)
            return GY_ERR_OUT_OF_MEMORY;
    }
    if (share_statics(qs, v) != GY_OK)
        return GY_ERR_OUT_OF_MEMORY;
    if (v->plane_version != qs->version[GROUP_PLANES]) {
        if (gy_array_reserve(qs->alloc, (void **)&v->planes, &v->plane_capacity,
                             qs->member_count[GROUP_PLANES], sizeof *v->planes) != GY_OK)
            return GY_ERR_OUT_OF_MEMORY;
        if (qs->member_count[GROUP_PLANES])
            memcpy(v->planes, qs->members[GROUP_PLANES],
                   (size_t)qs->member_count[GROUP_PLANES] * sizeof *v->planes);
        v->plane_count = qs->member_count[GROUP_PLANES];
        v->plane_version = qs->version[GROUP_PLANES];
    }
    /* The static tree is not copied: the buffer holds the master, already up to date. */
    bool copied[TREE_COUNT] = {true, false};
    if (v->tree_version[TREE_MOVING] != qs->version[TREE_MOVING]) {
        /* The writer's tree already includes every change, so the copy needs no refit. */
        if (gy_bvh_copy(&v->moving_tree, &qs->moving_tree, qs->alloc, qs->capacity) != GY_OK)
            return GY_ERR_OUT_OF_MEMORY;
        v->tree_version[TREE_MOVING] = qs->version[TREE_MOVING];
        copied[TREE_MOVING] = true;
        qs->stats.tree_copies++;
    }
    qs_tree *master = qs->static_trees[qs->master];
    if (v->static_tree != master) {
        master->refs++;
        if (v->static_tree != NULL)
            v->static_tree->refs--;
        v->static_tree = master;
        v->trees[TREE_STATIC] = &master->bvh;
    }
    qs->stats.slots_walked += qs->dirty_count;
    for (uint32_t i = 0; i < qs->dirty_count; i++) {
        uint32_t s = qs->dirty[i];
        if (!(qs->dirty_bits[s] & bit))
            continue;
        qs->dirty_bits[s] &= (uint8_t)~bit;
        qs_page *vp = v->movers.pages[s >> PAGE_SHIFT];
        if (vp == NULL)
            continue; /* neither a mover now nor in this buffer before */
        qs_entry *dst = &vp->e[s & (PAGE_SLOTS - 1u)];
        uint8_t g = qs->group[s];
        const qs_entry *src = g != GROUP_NONE && g != TREE_STATIC ? writer_entry(qs, s) : NULL;
        if (src != NULL) {
            if (blob_of(dst) != blob_of(src)) {
                geometry_ref(blob_of(src));
                geometry_unref(blob_of(dst));
            }
            *dst = *src;
        } else if (dst->live) {
            geometry_unref(blob_of(dst));
            memset(dst, 0, sizeof *dst);
        } else {
            continue;
        }
        qs->stats.entries_written++;
    }
    /* The buffer's other trees have the writer's topology, and the writer's bounds are current
     * (update_trees ran first): where a refit would sweep the whole tree, copying its nodes gives
     * the same boxes for less work. */
    const gy_bvh *w = &qs->moving_tree;
    if (!copied[TREE_MOVING] && w->node_count > 0 &&
        (uint64_t)qs->box_dirty_count[b] * (w->depth + 1u) > w->node_count) {
        gy_bvh_copy_bounds(&v->moving_tree, w);
        copied[TREE_MOVING] = true;
    }
    bool moved[TREE_COUNT];
    gy_bvh *const own[TREE_COUNT] = {NULL, &v->moving_tree};
    refit_trees(qs, own, b, copied, moved);
    compact_dirty(qs);
    v->slot_limit = qs->slot_limit;
    return GY_OK;
}

gy_result gy_query_snapshot_publish(gy_query_snapshot *qs, uint64_t tick)
{
    if (qs == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    uint64_t sequence = qs->stats.publishes + 1u;
    gy_result r = clear_left_statics(qs);
    if (r == GY_OK)
        r = own_static_tree(qs, sequence);
    if (r == GY_OK)
        r = update_trees(qs, sequence);
    if (r != GY_OK)
        return r;
    qs_tree *master = qs->static_trees[qs->master];
    master->version = qs->version[TREE_STATIC];
    gy_bvh_editor_forget(&qs->static_editor, qs->master); /* it has its own edits */
    qs->static_tree_stale = false;
    gy_snapshot_view *v = gy_triple_buffer_write_buffer(qs->tb);
    r = write_view(qs, v, gy_triple_buffer_write_index(qs->tb));
    if (r != GY_OK)
        return r;
    v->tick = tick;
    v->sequence = sequence;
    qs->stats.publishes = sequence;
    gy_triple_buffer_publish(qs->tb, tick);
    /* Streaming statics copies pages and switches tree copies at every publish or so, and takes
     * spares from the pool; once statics have stayed put for a while the spares (with the edit
     * logs and the static tree's build scratch, which only changing statics use) go back to the
     * allocator, so a level that stopped changing keeps one copy of its statics. A static tree
     * edited in place keeps its spares for REBUILD_PERIOD publishes, so that streaming in bursts
     * a few ticks apart neither allocates nor copies the whole tree again; a smaller one is
     * rebuilt (and so copied whole) at every change anyway and lets go after two. */
    uint64_t churn = qs->stats.static_page_copies + qs->stats.static_tree_switches;
    qs->quiet = churn != qs->churn_seen ? 0u : qs->quiet + 1u;
    qs->churn_seen = churn;
    uint32_t keep = qs->member_count[TREE_STATIC] >= EDIT_MIN_STATICS ? REBUILD_PERIOD : 2u;
    if (qs->quiet >= keep) {
        while (qs->pool != NULL) {
            qs_page *p = qs->pool;
            qs->pool = p->next;
            gy_free(qs->alloc, p, sizeof *p);
        }
        bool others = false;
        for (uint32_t i = 0; i < GY_BVH_MIRRORS; i++) {
            if (i != qs->master && qs->static_trees[i] != NULL && qs->static_trees[i]->refs == 0)
                tree_free(qs, i);
            others = others || (i != qs->master && qs->static_trees[i] != NULL);
        }
        /* With no other copy left, nothing needs the master's logs: the next copy is whole. */
        if (!others)
            gy_bvh_editor_set_logging(&qs->static_editor, qs->alloc, false);
        gy_bvh_builder_fini(&qs->static_builder, qs->alloc);
    }
    return GY_OK;
}

void gy_query_snapshot_get_stats(const gy_query_snapshot *qs, gy_query_snapshot_stats *out)
{
    if (qs == NULL || out == NULL)
        return;
    *out = qs->stats;
    out->static_entries = qs->member_count[TREE_STATIC];
    out->moving_entries = qs->member_count[TREE_MOVING];
    out->planes = qs->member_count[GROUP_PLANES];
    out->entries = out->static_entries + out->moving_entries + out->planes;
    out->static_pages = 0;
    for (uint32_t i = 0; i < qs->statics.count; i++)
        out->static_pages += qs->statics.pages[i] != NULL;
}

/* ---- reader: views -----------------------------------------------------------------------------
 */

const gy_snapshot_view *gy_query_snapshot_acquire(gy_query_snapshot *qs)
{
    return qs != NULL ? gy_triple_buffer_read(qs->tb, NULL, NULL) : NULL;
}

uint64_t gy_snapshot_view_tick(const gy_snapshot_view *v)
{
    return v != NULL ? v->tick : 0u;
}

/* A live entry of the view, static or not; NULL for an empty slot. */
static const qs_entry *view_entry(const gy_snapshot_view *v, uint32_t slot)
{
    if (slot >= v->slot_limit)
        return NULL;
    uint32_t pi = slot >> PAGE_SHIFT;
    const qs_dir *dirs[2] = {&v->statics, &v->movers};
    for (int k = 0; k < 2; k++)
        if (pi < dirs[k]->count && dirs[k]->pages[pi] != NULL && dir_at(dirs[k], slot)->live)
            return dir_at(dirs[k], slot);
    return NULL;
}

gy_result gy_snapshot_view_get(const gy_snapshot_view *v, uint32_t slot,
                               gy_snapshot_entry_info *out)
{
    if (v == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    const qs_entry *e = view_entry(v, slot);
    if (e == NULL)
        return GY_ERR_STALE_HANDLE;
    gy_snapshot_entry *d = &out->entry;
    memset(out, 0, sizeof *out);
    d->shape.type = (gy_shape_type)e->type;
    switch ((gy_shape_type)e->type) {
    case GY_SHAPE_SPHERE:
        d->shape.radius = e->p[0];
        break;
    case GY_SHAPE_BOX:
        d->shape.box_size = gy_v3(2.0 * e->p[0], 2.0 * e->p[1], 2.0 * e->p[2]);
        break;
    case GY_SHAPE_CAPSULE:
        d->shape.radius = e->p[0];
        d->shape.height = 2.0 * (e->p[1] + e->p[0]);
        break;
    case GY_SHAPE_CYLINDER:
        d->shape.radius = e->p[0];
        d->shape.height = 2.0 * e->p[1];
        break;
    case GY_SHAPE_PLANE:
        d->shape.normal =
            gy_v3(e->geometry->plane[0], e->geometry->plane[1], e->geometry->plane[2]);
        d->shape.offset = e->geometry->plane[3];
        break;
    default:
        d->geometry = e->geometry;
        break;
    }
    d->pose = e->pose;
    d->category = e->category;
    d->motion = (gy_motion_type)e->motion;
    d->is_sensor = e->sensor != 0;
    d->body = e->body;
    if (e->type == GY_SHAPE_PLANE) {
        out->bounds_min = gy_v3(-INFINITY, -INFINITY, -INFINITY);
        out->bounds_max = gy_v3(INFINITY, INFINITY, INFINITY);
    } else {
        /* The entry's own bounds: a moving entry's tree box is larger (MOVING_MARGIN). */
        gy_bvh_box b = entry_box(e);
        out->bounds_min = gy_v3(b.min[0], b.min[1], b.min[2]);
        out->bounds_max = gy_v3(b.max[0], b.max[1], b.max[2]);
    }
    return GY_OK;
}

uint32_t gy_snapshot_view_slot_limit(const gy_snapshot_view *v)
{
    return v != NULL ? v->slot_limit : 0u;
}

uint32_t gy_snapshot_view_visit_nodes(const gy_snapshot_view *v, gy_snapshot_node_fn fn, void *ctx)
{
    _Static_assert(GY_SNAPSHOT_MAX_DEPTH == GY_BVH_MAX_DEPTH, "tree depth bound");
    if (v == NULL || fn == NULL)
        return 0u;
    uint32_t visited = 0;
    for (int t = 0; t < TREE_COUNT; t++) {
        const gy_bvh *tree = v->trees[t];
        if (tree->node_count == 0)
            continue;
        /* Depth-first from the root: an edited tree is not stored parents-first and may hold
         * free pairs, so its array cannot be walked in order. A node at depth d leaves at most
         * one sibling per level above it on the stack. */
        uint32_t stack[GY_BVH_MAX_DEPTH + 2], depth[GY_BVH_MAX_DEPTH + 2];
        uint32_t top = 0;
        stack[top] = 0;
        depth[top++] = 0;
        while (top > 0) {
            top--;
            uint32_t n = stack[top], d = depth[top];
            const gy_bvh_node *node = &tree->nodes[n];
            gy_snapshot_node out;
            out.tree = (gy_snapshot_tree)t;
            out.depth = d;
            out.leaf = (node->link & GY_BVH_LEAF_BIT) != 0;
            out.slot = out.leaf ? node->link & ~GY_BVH_LEAF_BIT : UINT32_MAX;
            out.min = gy_v3(node->box.min[0], node->box.min[1], node->box.min[2]);
            out.max = gy_v3(node->box.max[0], node->box.max[1], node->box.max[2]);
            fn(ctx, &out);
            visited++;
            if (!out.leaf && top + 2 <= GY_BVH_MAX_DEPTH + 2) {
                stack[top] = node->link + 1u;
                depth[top++] = d + 1u;
                stack[top] = node->link;
                depth[top++] = d + 1u;
            }
        }
    }
    return visited;
}

gy_result gy_snapshot_geometry_triangles(const gy_snapshot_geometry *g, gy_snapshot_triangles *out)
{
    if (g == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (g->type == GY_SHAPE_MESH) {
        out->vertices = g->vertices;
        out->vertex_count = g->vertex_count;
        out->indices = g->indices;
        out->triangle_count = g->triangle_count;
    } else {
        out->vertices = g->hull.vertices;
        out->vertex_count = g->hull.vertex_count;
        out->indices = g->hull.triangles;
        out->triangle_count = g->hull.triangle_count;
    }
    return GY_OK;
}

static bool accepts(const gy_snapshot_filter *f, const qs_entry *e)
{
    return (e->category & f->mask) != 0 && (f->motion_types & GY_MOTION_BIT(e->motion)) != 0 &&
           (!e->sensor || f->include_sensors) &&
           (f->ignore_body.generation == 0 || e->body.generation != f->ignore_body.generation);
}

static gy_result check_query_args(const gy_snapshot_view *v, const gy_snapshot_filter *filter,
                                  gy_collector collector, const gy_snapshot_hit *hits,
                                  uint32_t capacity, const uint32_t *count)
{
    if (v == NULL || count == NULL || (hits == NULL && capacity > 0) ||
        (unsigned)collector > GY_COLLECT_ALL)
        return GY_ERR_INVALID_ARGUMENT;
    if (filter != NULL && (filter->motion_types & ~GY_MOTION_ALL) != 0)
        return GY_ERR_INVALID_ARGUMENT;
    return GY_OK;
}

/* ---- exact ray tests, in the shape's local frame ---------------------------------------------
 * Solids through collision/'s line spans (gy_line_*); triangles here. A hit is at t in [0, t_max]
 * with the local outward normal; a ray starting inside a solid does not hit it. */

typedef struct ray_hit {
    double t;
    gy_vec3 normal;
    int32_t triangle;
} ray_hit;

/* Two-sided ray/triangle (Möller–Trumbore); the normal faces the ray. */
static bool ray_triangle(gy_vec3 o, gy_vec3 d, gy_vec3 a, gy_vec3 b, gy_vec3 c, double t_max,
                         ray_hit *h)
{
    gy_vec3 e1 = gy_v3_sub(b, a), e2 = gy_v3_sub(c, a);
    gy_vec3 p = gy_v3_cross(d, e2);
    double det = gy_v3_dot(e1, p);
    gy_vec3 n = gy_v3_cross(e1, e2);
    double nn = gy_v3_len_sq(n);
    if (nn == 0.0 || fabs(det) <= 1e-14 * sqrt(nn) * gy_v3_len(d))
        return false; /* degenerate triangle, or a ray in its plane */
    double inv = 1.0 / det;
    gy_vec3 s = gy_v3_sub(o, a);
    double u = gy_v3_dot(s, p) * inv;
    if (u < 0.0 || u > 1.0)
        return false;
    gy_vec3 q = gy_v3_cross(s, e1);
    double v = gy_v3_dot(d, q) * inv;
    if (v < 0.0 || u + v > 1.0)
        return false;
    double t = gy_v3_dot(e2, q) * inv;
    if (t < 0.0 || t > t_max)
        return false;
    h->t = t;
    n = gy_v3_scale(n, 1.0 / sqrt(nn));
    h->normal = gy_v3_dot(n, d) > 0.0 ? gy_v3_neg(n) : n;
    return true;
}

typedef struct mesh_ray {
    const gy_snapshot_geometry *g;
    gy_vec3 o, d;
    ray_hit *best;
    bool found;
} mesh_ray;

static double mesh_ray_visit(void *ctx, uint32_t tri, double t_max)
{
    mesh_ray *m = ctx;
    const uint32_t *ix = &m->g->indices[3u * tri];
    const gy_vec3 *v = m->g->vertices;
    if (ray_triangle(m->o, m->d, v[ix[0]], v[ix[1]], v[ix[2]], t_max, m->best)) {
        m->best->triangle = (int32_t)tri;
        m->found = true;
        return m->best->t;
    }
    return t_max;
}

/* The span of a line (entry frame) through an entry's solid primitive. */
static bool line_span(const qs_entry *e, gy_vec3 o, gy_vec3 d, gy_line_span *span)
{
    switch ((gy_shape_type)e->type) {
    case GY_SHAPE_SPHERE:
        return gy_line_sphere(o, d, e->p[0], span);
    case GY_SHAPE_BOX:
        return gy_line_box(o, d, gy_v3(e->p[0], e->p[1], e->p[2]), span);
    case GY_SHAPE_CAPSULE:
        return gy_line_capsule(o, d, e->p[0], e->p[1], span);
    case GY_SHAPE_CYLINDER:
        return gy_line_cylinder(o, d, e->p[0], e->p[1], span);
    case GY_SHAPE_HULL:
        return gy_line_hull(o, d, &e->geometry->hull, span);
    default:
        return false;
    }
}

/* Exact test of a world ray against one entry; on a hit, h holds t, the world normal and the
 * triangle. */
static bool ray_entry(const qs_entry *e, gy_vec3 o, gy_vec3 d, double t_max, ray_hit *h)
{
    h->triangle = -1;
    if (e->type == GY_SHAPE_PLANE) {
        const double *pl = e->geometry->plane;
        gy_vec3 n = gy_v3(pl[0], pl[1], pl[2]);
        double above = gy_v3_dot(n, o) - pl[3], den = gy_v3_dot(n, d);
        if (above < 0.0 || den >= 0.0)
            return false;
        double t = -above / den;
        if (t > t_max)
            return false;
        h->t = t;
        h->normal = n;
        return true;
    }
    gy_quat inv = gy_quat_conj(e->pose.rotation);
    gy_vec3 lo = gy_quat_rotate(inv, gy_v3_sub(o, e->pose.position));
    gy_vec3 ld = gy_quat_rotate(inv, d);
    bool hit;
    if (e->type == GY_SHAPE_MESH) {
        mesh_ray m = {e->geometry, lo, ld, h, false};
        gy_bvh_raycast(&e->geometry->tree, lo, ld, t_max, mesh_ray_visit, &m);
        hit = m.found;
    } else {
        gy_line_span span;
        hit =
            line_span(e, lo, ld, &span) && gy_line_span_hit(&span, t_max, false, &h->t, &h->normal);
    }
    if (hit)
        h->normal = gy_quat_rotate(e->pose.rotation, h->normal);
    return hit;
}

/* Where a ray or shape cast puts its hits, as its collector says: the closest so far, the first,
 * or every one until `capacity`. */
typedef struct hit_sink {
    gy_collector collector;
    gy_snapshot_hit *hits;
    uint32_t capacity, count;
    bool stop;
    bool have_best;
    gy_snapshot_hit best;
} hit_sink;

/* Takes a hit at fraction t; returns the fraction the search may still reach, or -1 to stop. */
static double sink_take(hit_sink *k, const gy_snapshot_hit *hit, double t, double t_max)
{
    switch (k->collector) {
    case GY_COLLECT_CLOSEST:
        if (k->have_best && !(t < k->best.fraction))
            return t_max;
        k->best = *hit;
        k->have_best = true;
        return t;
    case GY_COLLECT_ANY:
        k->hits[k->count++] = *hit;
        k->stop = true;
        return -1.0;
    default:
        k->hits[k->count++] = *hit;
        if (k->count == k->capacity) {
            k->stop = true;
            return -1.0;
        }
        return t_max;
    }
}

/* The number of hits the query reports (the closest one written out now). */
static uint32_t sink_finish(hit_sink *k)
{
    if (k->collector == GY_COLLECT_CLOSEST && k->have_best)
        k->hits[k->count++] = k->best;
    return k->count;
}

typedef struct ray_query {
    const gy_snapshot_view *v;
    const qs_dir *dir; /* the entries of the tree (or plane list) being walked */
    const gy_snapshot_filter *filter;
    gy_vec3 o, d;
    double length;
    hit_sink out;
} ray_query;

static gy_snapshot_hit make_hit(const ray_query *q, const qs_entry *e, uint32_t slot,
                                const ray_hit *h)
{
    gy_snapshot_hit out;
    out.body = e->body;
    out.slot = slot;
    out.triangle = h->triangle;
    out.fraction = h->t;
    out.distance = h->t * q->length;
    out.point = gy_v3_mad(q->o, q->d, h->t);
    out.normal = h->normal;
    out.tick = q->v->tick;
    return out;
}

static double ray_visit(void *ctx, uint32_t slot, double t_max)
{
    ray_query *q = ctx;
    const qs_entry *e = dir_at(q->dir, slot);
    ray_hit h;
    if (!accepts(q->filter, e) || !ray_entry(e, q->o, q->d, t_max, &h))
        return t_max;
    gy_snapshot_hit hit = make_hit(q, e, slot, &h);
    return sink_take(&q->out, &hit, h.t, t_max);
}

gy_result gy_snapshot_view_raycast(const gy_snapshot_view *v, gy_vec3 origin, gy_vec3 translation,
                                   const gy_snapshot_filter *filter, gy_collector collector,
                                   gy_snapshot_hit *hits, uint32_t capacity, uint32_t *count)
{
    gy_result r = check_query_args(v, filter, collector, hits, capacity, count);
    if (r != GY_OK)
        return r;
    *count = 0;
    /* The live raycast's range (gy_adapter_check_translation), so both refuse the same rays. */
    r = gy_validate_vector(origin, GY_MAX_MAGNITUDE);
    if (r == GY_OK)
        r = gy_validate_vector(translation, GY_MAX_MAGNITUDE);
    if (r != GY_OK)
        return r;
    gy_snapshot_filter def = gy_default_snapshot_filter();
    ray_query q = {v,
                   &v->movers,
                   filter ? filter : &def,
                   origin,
                   translation,
                   gy_v3_len(translation),
                   {collector, hits, capacity, 0, false, false, {.body = {0, 0}}}};
    if (capacity == 0 || !(q.length > 0.0))
        return GY_OK;
    double t_max = 1.0;
    for (uint32_t i = 0; i < v->plane_count && !q.out.stop; i++) {
        double t = ray_visit(&q, v->planes[i], t_max);
        if (t >= 0.0)
            t_max = t;
    }
    for (int g = 0; g < TREE_COUNT && !q.out.stop; g++) {
        q.dir = g == TREE_STATIC ? &v->statics : &v->movers;
        gy_bvh_raycast(v->trees[g], origin, translation, t_max, ray_visit, &q);
        if (q.out.have_best)
            t_max = q.out.best.fraction;
    }
    *count = sink_finish(&q.out);
    return GY_OK;
}

/* ---- exact overlap tests ------------------------------------------------------------------------
 * Convex shapes are a core (point, segment, box, cylinder or point cloud) plus a radius; two
 * overlap when GJK's distance between their cores is at most the sum of the radii (gyre/convex.h).
 */

/* The query or an entry as a rounded convex; false for planes and meshes. */
static bool convex_of_shape(gy_shape_type type, const double *p, const gy_snapshot_geometry *g,
                            gy_pose pose, gy_convex *c)
{
    memset(c, 0, sizeof *c);
    c->pose = pose;
    switch (type) {
    case GY_SHAPE_SPHERE:
        c->core = GY_CONVEX_POINT;
        c->radius = p[0];
        return true;
    case GY_SHAPE_CAPSULE:
        c->core = GY_CONVEX_SEGMENT;
        c->radius = p[0];
        c->half_length = p[1];
        return true;
    case GY_SHAPE_BOX:
        c->core = GY_CONVEX_BOX;
        c->half = gy_v3(p[0], p[1], p[2]);
        return true;
    case GY_SHAPE_CYLINDER:
        c->core = GY_CONVEX_CYLINDER;
        c->half = gy_v3(p[0], p[1], 0.0);
        return true;
    case GY_SHAPE_HULL:
        c->core = GY_CONVEX_CLOUD;
        c->points = g->hull.vertices;
        c->point_count = g->hull.vertex_count;
        return true;
    default:
        return false;
    }
}

static bool convex_overlap(const gy_convex *a, const gy_convex *b)
{
    return gy_convex_overlap(a, b, TOUCH_TOLERANCE);
}

/* Bounds of a query shape at `pose`: a hull's from its points, the others as an entry's. */
static void query_bounds(uint8_t type, const double p[3], const gy_hull_def *hull, gy_pose pose,
                         gy_vec3 *lo, gy_vec3 *hi)
{
    if (type == GY_SHAPE_HULL) {
        *lo = gy_v3(INFINITY, INFINITY, INFINITY);
        *hi = gy_v3(-INFINITY, -INFINITY, -INFINITY);
        for (uint32_t i = 0; i < hull->point_count; i++) {
            gy_vec3 q = gy_pose_apply(pose, hull->points[i]);
            *lo = gy_v3_min(*lo, q);
            *hi = gy_v3_max(*hi, q);
        }
        return;
    }
    qs_entry e;
    memset(&e, 0, sizeof e);
    e.type = type;
    memcpy(e.p, p, sizeof e.p);
    e.pose = pose;
    entry_bounds(&e, lo, hi);
}

typedef struct mesh_overlap {
    const gy_snapshot_geometry *g;
    const gy_convex *query; /* in the mesh's frame */
    int32_t triangle;
} mesh_overlap;

static bool mesh_triangle_visit(void *ctx, uint32_t tri)
{
    mesh_overlap *m = ctx;
    const uint32_t *ix = &m->g->indices[3u * tri];
    gy_vec3 pts[3] = {m->g->vertices[ix[0]], m->g->vertices[ix[1]], m->g->vertices[ix[2]]};
    gy_convex t;
    memset(&t, 0, sizeof t);
    t.core = GY_CONVEX_CLOUD;
    t.pose = gy_pose_identity();
    t.points = pts;
    t.point_count = 3;
    if (convex_overlap(m->query, &t)) {
        m->triangle = (int32_t)tri;
        return false;
    }
    return true;
}

typedef struct overlap_query {
    const gy_snapshot_view *v;
    const qs_dir *dir; /* the entries of the tree (or plane list) being walked */
    const gy_snapshot_filter *filter;
    gy_collector collector;
    gy_convex shape;
    uint8_t shape_type;
    double p[3];
    const gy_hull_def *hull; /* a hull query's points */
    gy_bvh_box box;
    gy_snapshot_hit *hits;
    uint32_t capacity, count;
} overlap_query;

/* Exact test of the query against one entry; *triangle gets the first overlapping mesh triangle. */
static bool overlap_entry(const overlap_query *q, const qs_entry *e, int32_t *triangle)
{
    *triangle = -1;
    gy_convex target;
    if (e->type == GY_SHAPE_PLANE) {
        const double *pl = e->geometry->plane;
        gy_vec3 n = gy_v3(pl[0], pl[1], pl[2]);
        double lowest = gy_v3_dot(n, gy_convex_support(&q->shape, gy_v3_neg(n))) - pl[3];
        return lowest <= q->shape.radius + TOUCH_TOLERANCE;
    }
    if (e->type == GY_SHAPE_MESH) {
        /* The query goes into the mesh's frame, where the triangle tree lives. */
        gy_pose to_local = gy_pose_mul(gy_pose_inverse(e->pose), q->shape.pose);
        gy_vec3 lo, hi;
        query_bounds(q->shape_type, q->p, q->hull, to_local, &lo, &hi);
        gy_bvh_box box = gy_bvh_box_from(lo, hi);
        gy_convex lq = q->shape;
        lq.pose = to_local;
        mesh_overlap m = {e->geometry, &lq, -1};
        gy_bvh_overlap(&e->geometry->tree, &box, mesh_triangle_visit, &m);
        *triangle = m.triangle;
        return m.triangle >= 0;
    }
    convex_of_shape((gy_shape_type)e->type, e->p, e->geometry, e->pose, &target);
    return convex_overlap(&q->shape, &target);
}

static bool overlap_visit(void *ctx, uint32_t slot)
{
    overlap_query *q = ctx;
    const qs_entry *e = dir_at(q->dir, slot);
    int32_t triangle;
    if (!accepts(q->filter, e) || !overlap_entry(q, e, &triangle))
        return true;
    gy_snapshot_hit *h = &q->hits[q->count++];
    memset(h, 0, sizeof *h);
    h->body = e->body;
    h->slot = slot;
    h->triangle = triangle;
    h->tick = q->v->tick;
    return q->collector == GY_COLLECT_ALL && q->count < q->capacity;
}

gy_result gy_snapshot_view_overlap(const gy_snapshot_view *v, const gy_shape *shape,
                                   const gy_hull_def *hull, gy_pose pose,
                                   const gy_snapshot_filter *filter, gy_collector collector,
                                   gy_snapshot_hit *hits, uint32_t capacity, uint32_t *count)
{
    gy_result r = check_query_args(v, filter, collector, hits, capacity, count);
    if (r != GY_OK)
        return r;
    *count = 0;
    if (shape == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (shape->type != GY_SHAPE_SPHERE && shape->type != GY_SHAPE_BOX &&
        shape->type != GY_SHAPE_CAPSULE && shape->type != GY_SHAPE_HULL)
        return (unsigned)shape->type < GY_SHAPE_TYPE_COUNT ? GY_ERR_UNSUPPORTED
                                                           : GY_ERR_INVALID_ARGUMENT;
    /* The same checks, in the same order, as the shape cast's. */
    r = gy_validate_shape(shape);
    if (r == GY_OK)
        r = gy_validate_pose(pose);
    if (r != GY_OK)
        return r;
    if (shape->type == GY_SHAPE_HULL) {
        if (hull == NULL)
            return GY_ERR_STALE_HANDLE;
        r = gy_validate_hull_def(hull);
        if (r != GY_OK)
            return r;
    }
    pose.rotation = gy_quat_normalize(pose.rotation);
    gy_snapshot_filter fdef = gy_default_snapshot_filter();
    overlap_query q;
    memset(&q, 0, sizeof q);
    q.v = v;
    q.filter = filter ? filter : &fdef;
    q.collector = collector;
    q.shape_type = (uint8_t)shape->type;
    if (shape->type == GY_SHAPE_HULL) {
        q.hull = hull;
        q.shape.core = GY_CONVEX_CLOUD;
        q.shape.pose = pose;
        q.shape.points = hull->points;
        q.shape.point_count = hull->point_count;
    } else {
        gy_snapshot_entry def = gy_default_snapshot_entry();
        def.shape = *shape;
        def.pose = pose;
        qs_entry qe;
        r = entry_from_def(&def, &qe, NULL);
        if (r != GY_OK)
            return r;
        memcpy(q.p, qe.p, sizeof qe.p);
        convex_of_shape((gy_shape_type)qe.type, qe.p, NULL, qe.pose, &q.shape);
    }
    gy_vec3 lo, hi;
    query_bounds(q.shape_type, q.p, q.hull, pose, &lo, &hi);
    q.box = gy_bvh_box_from(lo, hi);
    q.hits = hits;
    q.capacity = capacity;
    if (capacity == 0)
        return GY_OK;
    bool go = true;
    q.dir = &v->movers;
    for (uint32_t i = 0; i < v->plane_count && go; i++)
        go = overlap_visit(&q, v->planes[i]);
    for (int g = 0; g < TREE_COUNT && go; g++) {
        q.dir = g == TREE_STATIC ? &v->statics : &v->movers;
        go = gy_bvh_overlap(v->trees[g], &q.box, overlap_visit, &q);
    }
    *count = q.count;
    return GY_OK;
}

/* ---- shape casts ----------------------------------------------------------------------------
 * The moving shape's box, grown along the sweep, walks the trees nearer first (gy_bvh_sweep); each
 * candidate's time of impact comes from gy_convex_cast, or in closed form against a plane. */

typedef struct cast_query {
    const gy_snapshot_view *v;
    const qs_dir *dir; /* the entries of the tree (or plane list) being walked */
    const gy_snapshot_filter *filter;
    gy_convex shape; /* at fraction 0 */
    uint8_t shape_type;
    double p[3];
    const gy_hull_def *hull; /* the moving hull's points */
    double reach;            /* bounding radius about the pose's origin */
    gy_vec3 translation;
    double length;
    hit_sink out;
} cast_query;

/* Bounds of the moving shape at `pose`. */
static void cast_bounds(const cast_query *q, gy_pose pose, gy_vec3 *lo, gy_vec3 *hi)
{
    query_bounds(q->shape_type, q->p, q->hull, pose, lo, hi);
}

typedef struct mesh_cast {
    const gy_snapshot_geometry *g;
    const gy_convex *shape; /* in the mesh's frame */
    gy_vec3 translation;    /* in the mesh's frame */
    double from;
    bool found;
    gy_convex_hit hit;
    int32_t triangle;
} mesh_cast;

static double mesh_cast_visit(void *ctx, uint32_t tri, double t_max)
{
    mesh_cast *m = ctx;
    const uint32_t *ix = &m->g->indices[3u * tri];
    gy_vec3 pts[3] = {m->g->vertices[ix[0]], m->g->vertices[ix[1]], m->g->vertices[ix[2]]};
    gy_convex t;
    memset(&t, 0, sizeof t);
    t.core = GY_CONVEX_CLOUD;
    t.pose = gy_pose_identity();
    t.points = pts;
    t.point_count = 3;
    gy_convex_hit h;
    if (!gy_convex_cast(m->shape, m->translation, &t, m->from, t_max, TOUCH_TOLERANCE, &h) ||
        (m->found && !(h.fraction < m->hit.fraction)))
        return t_max;
    m->found = true;
    m->hit = h;
    m->triangle = (int32_t)tri;
    return h.fraction;
}

/* Time of impact of the query against one entry within [0, t_max]. */
static bool cast_entry(const cast_query *q, const qs_entry *e, double from, double t_max,
                       gy_convex_hit *h, int32_t *triangle)
{
    *triangle = -1;
    if (e->type == GY_SHAPE_PLANE) {
        const double *pl = e->geometry->plane;
        gy_vec3 n = gy_v3(pl[0], pl[1], pl[2]);
        gy_vec3 low = gy_convex_support(&q->shape, gy_v3_neg(n));
        double height = gy_v3_dot(n, low) - pl[3] - q->shape.radius;
        double t = 0.0;
        if (height > TOUCH_TOLERANCE) {
            double closing = -gy_v3_dot(n, q->translation);
            if (!(closing > 0.0) || height > t_max * closing)
                return false;
            t = height / closing;
        }
        h->fraction = t;
        h->normal = n;
        h->point = gy_v3_mad(gy_v3_mad(low, q->translation, t), n, -q->shape.radius);
        return true;
    }
    if (e->type == GY_SHAPE_MESH) {
        /* The cast goes into the mesh's frame, where the triangle tree lives. */
        gy_pose inv = gy_pose_inverse(e->pose);
        gy_convex local = q->shape;
        local.pose = gy_pose_mul(inv, q->shape.pose);
        gy_vec3 lo, hi;
        cast_bounds(q, local.pose, &lo, &hi);
        gy_vec3 center = gy_v3_scale(gy_v3_add(lo, hi), 0.5);
        gy_vec3 half = gy_v3_scale(gy_v3_sub(hi, lo), 0.5);
        mesh_cast m;
        memset(&m, 0, sizeof m);
        m.g = e->geometry;
        m.shape = &local;
        m.translation = gy_quat_rotate(inv.rotation, q->translation);
        m.from = from;
        gy_bvh_sweep(&e->geometry->tree, center, half, m.translation, t_max, mesh_cast_visit, &m);
        if (!m.found)
            return false;
        h->fraction = m.hit.fraction;
        h->point = gy_pose_apply(e->pose, m.hit.point);
        h->normal = gy_quat_rotate(e->pose.rotation, m.hit.normal);
        *triangle = m.triangle;
        return true;
    }
    gy_convex target;
    convex_of_shape((gy_shape_type)e->type, e->p, e->geometry, e->pose, &target);
    return gy_convex_cast(&q->shape, q->translation, &target, from, t_max, TOUCH_TOLERANCE, h);
}

/* Radius about the pose's origin of a sphere holding the whole entry. */
static double bounding_radius(const qs_entry *e)
{
    bool rounded = e->type == GY_SHAPE_SPHERE || e->type == GY_SHAPE_CAPSULE;
    return turn_radius(e) + (rounded ? e->p[0] : 0.0);
}

/* The first fraction in [0, t_max] at which the query's bounding sphere, swept, meets the entry's;
 * false when it never does. Cheaper than any exact test, it drops most of what the tree walk
 * offers and lets the exact test start where contact first becomes possible. */
static bool spheres_meet(const cast_query *q, const qs_entry *e, double t_max, double *from)
{
    if (e->type == GY_SHAPE_PLANE) {
        *from = 0.0;
        return true;
    }
    double r = q->reach + bounding_radius(e) + TOUCH_TOLERANCE;
    gy_vec3 rel = gy_v3_sub(q->shape.pose.position, e->pose.position);
    double a = gy_v3_len_sq(q->translation), b = gy_v3_dot(rel, q->translation);
    double c = gy_v3_len_sq(rel) - r * r;
    if (c <= 0.0) {
        *from = 0.0;
        return true;
    }
    double disc = b * b - a * c;
    if (!(a > 0.0) || disc < 0.0 || b >= 0.0)
        return false;
    double t = (-b - sqrt(disc)) / a;
    if (t > t_max)
        return false;
    *from = fmax(0.0, t * (1.0 - 1e-9) - 1e-12);
    return true;
}

static double cast_visit(void *ctx, uint32_t slot, double t_max)
{
    cast_query *q = ctx;
    const qs_entry *e = dir_at(q->dir, slot);
    gy_convex_hit h;
    int32_t triangle;
    double from;
    if (!accepts(q->filter, e) || !spheres_meet(q, e, t_max, &from) ||
        !cast_entry(q, e, from, t_max, &h, &triangle))
        return t_max;
    gy_snapshot_hit hit;
    hit.body = e->body;
    hit.slot = slot;
    hit.triangle = triangle;
    hit.fraction = h.fraction;
    hit.distance = h.fraction * q->length;
    hit.point = h.point;
    hit.normal = h.normal;
    hit.tick = q->v->tick;
    return sink_take(&q->out, &hit, hit.fraction, t_max);
}

gy_result gy_snapshot_view_shape_cast(const gy_snapshot_view *v, const gy_shape *shape,
                                      const gy_hull_def *hull, gy_pose pose, gy_vec3 translation,
                                      const gy_snapshot_filter *filter, gy_collector collector,
                                      gy_snapshot_hit *hits, uint32_t capacity, uint32_t *count)
{
    if (count != NULL)
        *count = 0;
    gy_result r = check_query_args(v, filter, collector, hits, capacity, count);
    if (r != GY_OK)
        return r;
    /* The same checks, in the same order, as the adapters' live casts. */
    r = gy_validate_query_shape(shape, pose);
    if (r != GY_OK)
        return r;
    if (shape->type == GY_SHAPE_HULL) {
        if (hull == NULL)
            return GY_ERR_STALE_HANDLE;
        r = gy_validate_hull_def(hull);
        if (r != GY_OK)
            return r;
    }
    r = gy_validate_vector(translation, GY_MAX_MAGNITUDE);
    if (r != GY_OK)
        return r;
    pose.rotation = gy_quat_normalize(pose.rotation);

    gy_snapshot_filter fdef = gy_default_snapshot_filter();
    cast_query q;
    memset(&q, 0, sizeof q);
    q.v = v;
    q.filter = filter ? filter : &fdef;
    q.out.collector = collector;
    q.shape_type = (uint8_t)shape->type;
    q.hull = hull;
    q.translation = translation;
    q.length = gy_v3_len(translation);
    q.out.hits = hits;
    q.out.capacity = capacity;
    if (shape->type == GY_SHAPE_HULL) {
        memset(&q.shape, 0, sizeof q.shape);
        q.shape.core = GY_CONVEX_CLOUD;
        q.shape.pose = pose;
        q.shape.points = hull->points;
        q.shape.point_count = hull->point_count;
        for (uint32_t i = 0; i < hull->point_count; i++)
            q.reach = fmax(q.reach, gy_v3_len(hull->points[i]));
    } else {
        gy_snapshot_entry def = gy_default_snapshot_entry();
        def.shape = *shape;
        def.pose = pose;
        qs_entry qe;
        r = entry_from_def(&def, &qe, NULL);
        if (r != GY_OK)
            return r;
        memcpy(q.p, qe.p, sizeof qe.p);
        convex_of_shape((gy_shape_type)qe.type, qe.p, NULL, pose, &q.shape);
        q.reach = bounding_radius(&qe);
    }
    if (capacity == 0)
        return GY_OK;
    gy_vec3 lo, hi;
    cast_bounds(&q, pose, &lo, &hi);
    gy_vec3 center = gy_v3_scale(gy_v3_add(lo, hi), 0.5);
    gy_vec3 half = gy_v3_add(gy_v3_scale(gy_v3_sub(hi, lo), 0.5),
                             gy_v3(TOUCH_TOLERANCE, TOUCH_TOLERANCE, TOUCH_TOLERANCE));
    double t_max = 1.0;
    q.dir = &v->movers;
    for (uint32_t i = 0; i < v->plane_count && !q.out.stop; i++) {
        double t = cast_visit(&q, v->planes[i], t_max);
        if (t >= 0.0)
            t_max = t;
    }
    for (int g = 0; g < TREE_COUNT && !q.out.stop; g++) {
        q.dir = g == TREE_STATIC ? &v->statics : &v->movers;
        gy_bvh_sweep(v->trees[g], center, half, translation, t_max, cast_visit, &q);
        if (q.out.have_best)
            t_max = q.out.best.fraction;
    }
    *count = sink_finish(&q.out);
    return GY_OK;
}
