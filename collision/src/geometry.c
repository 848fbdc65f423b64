/* Convex hulls and mass properties shared by every adapter, so that the same colliders give the
 * same mass, centre of mass and inertia whichever middleware simulates them.
 *
 * The hull is a quickhull: start from a tetrahedron of extreme points, give every remaining point
 * to one face it lies above, then repeatedly add the point farthest above its face, replacing the
 * faces it sees by a cone to it. Choosing the farthest point first keeps each added point a true
 * extreme point, which is what keeps the incremental step numerically sane. */
#include "gyre/geometry.h"

#include <assert.h>
#include <float.h>
#include <string.h>

#include "gyre/math.h"

#define NO_FACE UINT32_MAX

typedef struct hull_face {
    uint32_t v[3];  /* input point indices, counter-clockwise seen from outside */
    uint32_t nb[3]; /* face across edge v[i] -> v[(i + 1) % 3] */
    gy_vec3 n;      /* outward unit normal */
    double d;       /* dot(n, p) = d on the plane */
    bool alive;
    bool visible; /* scratch mark while one point is being added */
} hull_face;

/* A point not yet known to be inside: the face it lies farthest above so far. */
typedef struct hull_pending {
    uint32_t point;
    uint32_t face;
    double dist;
} hull_pending;

/* An edge of the region the new point sees, kept in the winding of the visible face it bounds. */
typedef struct hull_horizon {
    uint32_t a, b;
    uint32_t outside; /* the face beyond the edge that stays */
    uint32_t cone;    /* the new face built on the edge */
} hull_horizon;

typedef struct hull_work {
    const gy_allocator *al;
    const gy_vec3 *pts;
    uint32_t count;
    double eps;
    hull_face *faces;
    uint32_t face_count, face_cap;
    hull_pending *pending;
    uint32_t pending_count;
    uint32_t *seen; /* faces the point being added sees */
    uint32_t seen_count, seen_cap;
    hull_horizon *horizon;
    uint32_t horizon_count, horizon_cap;
} hull_work;

static double face_dist(const hull_face *f, gy_vec3 p)
{
    return gy_v3_dot(f->n, p) - f->d;
}

static void face_set_plane(hull_work *w, hull_face *f)
{
    gy_vec3 a = w->pts[f->v[0]], b = w->pts[f->v[1]], c = w->pts[f->v[2]];
    f->n = gy_v3_normalize(gy_v3_cross(gy_v3_sub(b, a), gy_v3_sub(c, a)));
    /* Averaging the three vertices keeps the plane centred on the triangle's rounding error. */
    f->d = (gy_v3_dot(f->n, a) + gy_v3_dot(f->n, b) + gy_v3_dot(f->n, c)) / 3.0;
}

static gy_result face_push(hull_work *w, uint32_t a, uint32_t b, uint32_t c, uint32_t *out)
{
    gy_result r = gy_array_reserve(w->al, (void **)&w->faces, &w->face_cap, w->face_count + 1,
                                   sizeof *w->faces);
    if (r != GY_OK)
        return r;
    hull_face *f = &w->faces[w->face_count];
    memset(f, 0, sizeof *f);
    f->v[0] = a;
    f->v[1] = b;
    f->v[2] = c;
    f->nb[0] = f->nb[1] = f->nb[2] = NO_FACE;
    f->alive = true;
    face_set_plane(w, f);
    *out = w->face_count++;
    return GY_OK;
}

/* Index of the edge of `f` that runs a -> b, or 3. */
static uint32_t face_edge(const hull_face *f, uint32_t a, uint32_t b)
{
    for (uint32_t i = 0; i < 3; i++)
        if (f->v[i] == a && f->v[(i + 1) % 3] == b)
            return i;
    return 3;
}

/* Distance of p from the line through a along unit u (line) or from the plane through a with
 * unit normal u (plane). */
static double line_dist(gy_vec3 p, gy_vec3 a, gy_vec3 u)
{
    return gy_v3_len(gy_v3_cross(gy_v3_sub(p, a), u));
}

static double plane_offset(gy_vec3 p, gy_vec3 a, gy_vec3 u)
{
    return fabs(gy_v3_dot(gy_v3_sub(p, a), u));
}

/* The tetrahedron the hull starts from, its faces linked to their neighbours. */
static gy_result hull_start(hull_work *w, const uint32_t s[4])
{
    /* Wind the base away from the apex so every face of the tetrahedron points outwards. */
    gy_vec3 n =
        gy_v3_cross(gy_v3_sub(w->pts[s[1]], w->pts[s[0]]), gy_v3_sub(w->pts[s[2]], w->pts[s[0]]));
    uint32_t a = s[0], b = s[1], c = s[2], apex = s[3];
    if (gy_v3_dot(n, gy_v3_sub(w->pts[apex], w->pts[a])) > 0.0) {
        b = s[2];
        c = s[1];
    }
    const uint32_t tri[4][3] = {{a, b, c}, {a, apex, b}, {b, apex, c}, {c, apex, a}};
    for (int i = 0; i < 4; i++) {
        uint32_t idx;
        gy_result r = face_push(w, tri[i][0], tri[i][1], tri[i][2], &idx);
        if (r != GY_OK)
            return r;
    }
    for (uint32_t f = 0; f < 4; f++)
        for (uint32_t e = 0; e < 3; e++) {
            hull_face *fa = &w->faces[f];
            for (uint32_t g = 0; g < 4; g++) {
                if (g != f && face_edge(&w->faces[g], fa->v[(e + 1) % 3], fa->v[e]) < 3)
                    fa->nb[e] = g;
            }
        }
    return GY_OK;
}

/* Lists (in w->seen) and marks the faces `p` sees, connected to `start`, and collects the edges
 * around them. */
static gy_result find_horizon(hull_work *w, gy_vec3 p, uint32_t start)
{
    w->seen_count = 0;
    w->horizon_count = 0;
    gy_result r = gy_array_reserve(w->al, (void **)&w->seen, &w->seen_cap, 1, sizeof *w->seen);
    if (r != GY_OK)
        return r;
    w->faces[start].visible = true;
    w->seen[w->seen_count++] = start;
    for (uint32_t i = 0; i < w->seen_count; i++) {
        uint32_t f = w->seen[i];
        for (uint32_t e = 0; e < 3; e++) {
            uint32_t g = w->faces[f].nb[e];
            assert(g != NO_FACE);
            if (w->faces[g].visible || !(face_dist(&w->faces[g], p) > w->eps))
                continue;
            r = gy_array_reserve(w->al, (void **)&w->seen, &w->seen_cap, w->seen_count + 1,
                                 sizeof *w->seen);
            if (r != GY_OK)
                return r;
            w->faces[g].visible = true;
            w->seen[w->seen_count++] = g;
        }
    }
    /* Horizon edges are taken once every visible face is known: a face may be reached later
     * through another neighbour. */
    for (uint32_t i = 0; i < w->seen_count; i++) {
        const hull_face *fa = &w->faces[w->seen[i]];
        for (uint32_t e = 0; e < 3; e++) {
            uint32_t g = fa->nb[e];
            if (w->faces[g].visible)
                continue;
            r = gy_array_reserve(w->al, (void **)&w->horizon, &w->horizon_cap, w->horizon_count + 1,
                                 sizeof *w->horizon);
            if (r != GY_OK)
                return r;
            w->horizon[w->horizon_count++] =
                (hull_horizon){fa->v[e], fa->v[(e + 1) % 3], g, NO_FACE};
        }
    }
    return GY_OK;
}

/* True when the horizon is one simple loop, the only shape a cone can close. Rounding near
 * coplanar faces can make the visible region ring-shaped; such a point is within eps of the hull
 * anyway and is dropped. */
static bool horizon_is_loop(const hull_work *w)
{
    uint32_t h = w->horizon_count;
    if (h < 3)
        return false;
    for (uint32_t i = 0; i < h; i++)
        for (uint32_t j = i + 1; j < h; j++)
            if (w->horizon[i].a == w->horizon[j].a || w->horizon[i].b == w->horizon[j].b)
                return false;
    uint32_t at = 0, steps = 0;
    do {
        uint32_t next = h;
        for (uint32_t j = 0; j < h; j++)
            if (w->horizon[j].a == w->horizon[at].b)
                next = j;
        if (next == h)
            return false;
        at = next;
        steps++;
    } while (at != 0 && steps <= h);
    return steps == h;
}

static void clear_visible(hull_work *w)
{
    for (uint32_t i = 0; i < w->seen_count; i++)
        w->faces[w->seen[i]].visible = false;
}

static void work_free(hull_work *w)
{
    gy_free(w->al, w->faces, (size_t)w->face_cap * sizeof *w->faces);
    gy_free(w->al, w->pending, (size_t)w->count * sizeof *w->pending);
    gy_free(w->al, w->seen, (size_t)w->seen_cap * sizeof *w->seen);
    gy_free(w->al, w->horizon, (size_t)w->horizon_cap * sizeof *w->horizon);
}

/* ---- the build in slices --------------------------------------------------------------------
 *
 * The build is a sequence of stages. The passes over the points and over the pending points are
 * resumable at any item, so a slice stops within one item of its budget; what is not a pass (the
 * tetrahedron, one added point's cone, the emitted arrays' allocation) is one item. A unit is a
 * point or pending point visited (4 when its distance to the tetrahedron's four faces is taken), a
 * face looked at, a triangle copied, or a triangle's term of the volume integral (4). */

typedef enum hull_stage {
    STAGE_CHECK,      /* every point finite; the cloud's bounds */
    STAGE_CORNER,     /* the lexicographically smallest point, always a corner */
    STAGE_FAR,        /* the point farthest from it */
    STAGE_LINE_TOP,   /* the greatest distance from the line through those two */
    STAGE_LINE_PICK,  /* the point to take among those tied with it */
    STAGE_PLANE_TOP,  /* the greatest distance from the plane through those three */
    STAGE_PLANE_PICK, /* the point to take among those tied with it */
    STAGE_ASSIGN,     /* every other point given to a tetrahedron face it lies above */
    STAGE_NEXT_TOP,   /* the pending point farthest above its face */
    STAGE_NEXT_PICK,  /* the point to add among those tied with it above that face */
    STAGE_CONE,       /* the faces it sees replaced by a cone to it */
    STAGE_REASSIGN,   /* the pending points of removed faces moved to faces they lie above */
    STAGE_EMIT_MARK,  /* live faces counted, their vertices numbered densely */
    STAGE_EMIT_VERTS, /* vertices copied */
    STAGE_EMIT_FACES, /* triangles and planes copied */
    STAGE_EMIT_REF,   /* the mean vertex, a point inside to integrate about */
    STAGE_EMIT_MASS,  /* volume and centroid */
    STAGE_DONE,
} hull_stage;

/* Running sums of solid_integrals. */
typedef struct hull_integrals {
    double vol6;
    gy_vec3 first;
    gy_mat3 c;
} hull_integrals;

struct gy_hull_builder {
    hull_work w;
    hull_stage stage;
    gy_result result; /* the first failure; the build is then done */
    uint32_t at;      /* next item of the stage's pass */
    gy_vec3 lo, hi;
    uint32_t simplex[4];
    gy_vec3 origin, axis; /* the simplex search's line or plane; origin: the tie-break's corner */
    double top, far;      /* a pass's greatest measure (or cutoff), and its tie-break's reach */
    uint32_t pick;
    uint32_t point, face; /* the point being added, a face it lies above */
    uint32_t first_new;   /* the first face of its cone */
    uint32_t keep;        /* pending points kept so far by the reassignment */
    uint32_t scan;        /* the face the reassigned point's search of every face resumes at */
    uint32_t *remap;      /* input point -> hull vertex, NO_FACE for none */
    uint32_t emitted;
    gy_hull hull;
    gy_vec3 ref;
    hull_integrals sums;
};

static void integrals_add(hull_integrals *s, const gy_vec3 *v, const uint32_t *tri, gy_vec3 ref)
{
    gy_vec3 a = gy_v3_sub(v[tri[0]], ref);
    gy_vec3 b = gy_v3_sub(v[tri[1]], ref);
    gy_vec3 d = gy_v3_sub(v[tri[2]], ref);
    double det = gy_v3_dot(a, gy_v3_cross(b, d));
    gy_vec3 sum = gy_v3_add(gy_v3_add(a, b), d);
    s->vol6 += det;
    s->first = gy_v3_mad(s->first, sum, det);
    const double *pa = &a.x, *pb = &b.x, *pd = &d.x, *ps = &sum.x;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            s->c.m[i][j] += det * (ps[i] * ps[j] + pa[i] * pa[j] + pb[i] * pb[j] + pd[i] * pd[j]);
}

static void integrals_end(const hull_integrals *s, gy_vec3 ref, double *volume, gy_vec3 *centroid,
                          gy_mat3 *second)
{
    *volume = s->vol6 / 6.0;
    *centroid = s->vol6 != 0.0 ? gy_v3_add(ref, gy_v3_scale(s->first, 1.0 / (4.0 * s->vol6))) : ref;
    if (second == NULL)
        return;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            second->m[i][j] = s->c.m[i][j] / 120.0;
}

/* Volume, centroid and second moment ∫ x xᵀ dV (about `ref`) of a closed, outward-wound triangle
 * mesh (`second` may be NULL), summed over the signed tetrahedra (ref, a, b, c). Each tetrahedron's
 * second moment is det/120 · (s sᵀ + a aᵀ + b bᵀ + c cᵀ) with s = a + b + c, the
 * canonical-tetrahedron covariance mapped through [a b c]. */
static void solid_integrals(const gy_vec3 *v, const uint32_t *tri, uint32_t tri_count, gy_vec3 ref,
                            double *volume, gy_vec3 *centroid, gy_mat3 *second)
{
    hull_integrals s;
    memset(&s, 0, sizeof s);
    for (uint32_t t = 0; t < tri_count; t++)
        integrals_add(&s, v, &tri[3 * t], ref);
    integrals_end(&s, ref, volume, centroid, second);
}

static void builder_fail(gy_hull_builder *b, gy_result r)
{
    b->result = r;
    b->stage = STAGE_DONE;
}

/* Moves to `stage`, its pass starting at item `at`. */
static void builder_enter(gy_hull_builder *b, hull_stage stage, uint32_t at)
{
    b->stage = stage;
    b->at = at;
}

/* Ends the bounds pass with the checks of the cloud as a whole. */
static void end_check(gy_hull_builder *b)
{
    hull_work *w = &b->w;
    if (w->count < 4) {
        builder_fail(b, GY_ERR_INVALID_MESH);
        return;
    }
    double extent = gy_v3_len(gy_v3_sub(b->hi, b->lo));
    double reach = fmax(gy_v3_len(b->lo), gy_v3_len(b->hi));
    /* Relative to the cloud's size for geometric degeneracy, and to its distance from the origin
     * for the rounding of plane offsets. */
    w->eps = 1e-9 * extent + 64.0 * DBL_EPSILON * reach;
    if (!gy_is_finite(w->eps))
        builder_fail(b, GY_ERR_NON_FINITE); /* finite points so far apart that distances overflow */
    else if (!(extent > 0.0))
        builder_fail(b, GY_ERR_INVALID_MESH);
    else
        builder_enter(b, STAGE_CORNER, 1);
}

static double simplex_measure(const gy_hull_builder *b, gy_vec3 p)
{
    return b->stage == STAGE_LINE_TOP || b->stage == STAGE_LINE_PICK
               ? line_dist(p, b->origin, b->axis)
               : plane_offset(p, b->origin, b->axis);
}

/* Ends a simplex pick: the corner found, or GY_ERR_INVALID_MESH when the cloud is collinear
 * (line) or coplanar (plane) within eps. */
static void end_simplex_pick(gy_hull_builder *b)
{
    const gy_vec3 *pts = b->w.pts;
    if (!(b->top > b->w.eps)) {
        builder_fail(b, GY_ERR_INVALID_MESH);
        return;
    }
    if (b->stage == STAGE_LINE_PICK) {
        b->simplex[2] = b->pick;
        b->axis = gy_v3_normalize(gy_v3_cross(gy_v3_sub(pts[b->simplex[1]], b->origin),
                                              gy_v3_sub(pts[b->simplex[2]], b->origin)));
        b->top = -1.0;
        builder_enter(b, STAGE_PLANE_TOP, 0);
        return;
    }
    b->simplex[3] = b->pick;
    b->w.pending = gy_alloc(b->w.al, (size_t)b->w.count * sizeof *b->w.pending);
    gy_result r = b->w.pending == NULL ? GY_ERR_OUT_OF_MEMORY : hull_start(&b->w, b->simplex);
    if (r != GY_OK)
        builder_fail(b, r);
    else
        builder_enter(b, STAGE_ASSIGN, 0);
}

/* Gives point i to the tetrahedron face it lies farthest above, if any. */
static void assign_point(hull_work *w, const uint32_t s[4], uint32_t i)
{
    if (i == s[0] || i == s[1] || i == s[2] || i == s[3])
        return;
    uint32_t best_face = NO_FACE;
    double best = w->eps;
    for (uint32_t f = 0; f < 4; f++) {
        double dist = face_dist(&w->faces[f], w->pts[i]);
        if (dist > best) {
            best = dist;
            best_face = f;
        }
    }
    if (best_face != NO_FACE)
        w->pending[w->pending_count++] = (hull_pending){i, best_face, best};
}

/* Starts choosing the next pending point, or emitting the hull when none is left. */
static void next_or_emit(gy_hull_builder *b)
{
    if (b->w.pending_count > 0) {
        b->pick = 0;
        builder_enter(b, STAGE_NEXT_TOP, 1);
        return;
    }
    b->remap = gy_alloc(b->w.al, (size_t)b->w.count * sizeof *b->remap);
    if (b->remap == NULL) {
        builder_fail(b, GY_ERR_OUT_OF_MEMORY);
        return;
    }
    memset(b->remap, 0xff, (size_t)b->w.count * sizeof *b->remap);
    builder_enter(b, STAGE_EMIT_MARK, 0);
}

/* Replaces the faces the point being added sees by a cone from their horizon to it; returns the
 * units spent. A point whose visible region is not a simple loop is dropped (horizon_is_loop). */
static uint64_t add_cone(gy_hull_builder *b)
{
    hull_work *w = &b->w;
    gy_result r = find_horizon(w, w->pts[b->point], b->face);
    uint64_t h = w->horizon_count;
    uint64_t cost = 3u * (uint64_t)w->seen_count + 2u * h * h + h;
    if (r != GY_OK) {
        builder_fail(b, r);
        return cost;
    }
    if (!horizon_is_loop(w)) {
        clear_visible(w);
        next_or_emit(b);
        return cost;
    }
    b->first_new = w->face_count;
    for (uint32_t i = 0; i < w->horizon_count; i++) {
        hull_horizon *e = &w->horizon[i];
        r = face_push(w, e->a, e->b, b->point, &e->cone);
        if (r != GY_OK) {
            builder_fail(b, r);
            return cost;
        }
    }
    for (uint32_t i = 0; i < w->horizon_count; i++) {
        const hull_horizon *e = &w->horizon[i];
        hull_face *cone = &w->faces[e->cone];
        hull_face *out = &w->faces[e->outside];
        uint32_t back = face_edge(out, e->b, e->a);
        assert(back < 3);
        cone->nb[0] = e->outside;
        out->nb[back] = e->cone;
        for (uint32_t j = 0; j < w->horizon_count; j++) {
            if (w->horizon[j].a == e->b)
                cone->nb[1] = w->horizon[j].cone; /* edge b -> p */
            if (w->horizon[j].b == e->a)
                cone->nb[2] = w->horizon[j].cone; /* edge p -> a */
        }
    }
    b->keep = 0;
    b->scan = NO_FACE;
    builder_enter(b, STAGE_REASSIGN, 0);
    return cost;
}

/* Pending point b->at after a cone was built: a point owned by a removed face moves to a new face
 * it lies above, else to any face; a point above none is inside for good, since the hull only
 * grows. The search of every face is long late in a large build, so it stops after `room` units
 * and resumes at face b->scan in the next call. Returns the units spent (the point, and the faces
 * it was measured against); b->at moves on once the point is done. */
static uint64_t reassign_point(gy_hull_builder *b, uint64_t room)
{
    hull_work *w = &b->w;
    gy_vec3 x = w->pts[w->pending[b->at].point];
    uint64_t cost = 0;
    if (b->scan == NO_FACE) {
        hull_pending q = w->pending[b->at];
        cost = 1;
        if (w->faces[q.face].visible) {
            q.face = NO_FACE;
            q.dist = w->eps;
            for (uint32_t f = b->first_new; f < w->face_count; f++) {
                double dist = face_dist(&w->faces[f], x);
                if (dist > q.dist) {
                    q.dist = dist;
                    q.face = f;
                }
            }
            cost += w->face_count - b->first_new;
        }
        if (q.face != NO_FACE) {
            w->pending[b->keep++] = q;
            b->at++;
            return cost;
        }
        b->scan = 0;
    }
    for (uint32_t f = b->scan; f < b->first_new; f++) {
        if (cost >= room) {
            b->scan = f;
            return cost;
        }
        cost++;
        const hull_face *fa = &w->faces[f];
        if (fa->alive && !fa->visible && face_dist(fa, x) > w->eps) {
            w->pending[b->keep++] = (hull_pending){w->pending[b->at].point, f, face_dist(fa, x)};
            break;
        }
    }
    b->scan = NO_FACE;
    b->at++;
    return cost;
}

/* Allocates the hull's arrays once its size is known. */
static void emit_alloc(gy_hull_builder *b)
{
    const gy_allocator *al = b->w.al;
    gy_hull *h = &b->hull;
    h->vertices = gy_alloc(al, (size_t)h->vertex_count * sizeof *h->vertices);
    h->triangles = gy_alloc(al, (size_t)h->triangle_count * 3 * sizeof *h->triangles);
    h->planes = gy_alloc(al, (size_t)h->triangle_count * sizeof *h->planes);
    if (h->vertices == NULL || h->triangles == NULL || h->planes == NULL)
        builder_fail(b, GY_ERR_OUT_OF_MEMORY);
    else
        builder_enter(b, STAGE_EMIT_VERTS, 0);
}

/* The simplex search's passes: each finds the greatest measure, then among the points within
 * eps of it the one farthest from the first corner. The tie-break matters: points on a hull face
 * tie with its corners, and a simplex point is never removed again, so it must be a true corner.
 * Distance from a point is strictly convex, so its maximum over the tied face is a corner. */
static uint64_t simplex_step(gy_hull_builder *b, uint32_t i)
{
    const hull_work *w = &b->w;
    const gy_vec3 *pts = w->pts;
    switch (b->stage) {
    case STAGE_CORNER:
        if (i == w->count) {
            b->origin = pts[b->pick];
            b->simplex[0] = b->pick;
            b->far = -1.0;
            builder_enter(b, STAGE_FAR, 0);
            return 1;
        }
        gy_vec3 p = pts[i], q = pts[b->pick];
        if (p.x < q.x || (p.x == q.x && (p.y < q.y || (p.y == q.y && p.z < q.z))))
            b->pick = i;
        break;
    case STAGE_FAR:
        if (i == w->count) {
            if (!(b->far > w->eps)) {
                builder_fail(b, GY_ERR_INVALID_MESH);
                return 1;
            }
            b->simplex[1] = b->pick;
            b->axis = gy_v3_normalize(gy_v3_sub(pts[b->pick], b->origin));
            b->top = -1.0;
            builder_enter(b, STAGE_LINE_TOP, 0);
            return 1;
        }
        double reach = gy_v3_len(gy_v3_sub(pts[i], b->origin));
        if (reach > b->far) {
            b->far = reach;
            b->pick = i;
        }
        break;
    case STAGE_LINE_TOP:
    case STAGE_PLANE_TOP:
        if (i == w->count) {
            b->pick = 0;
            b->far = -1.0;
            builder_enter(b, b->stage + 1, 0);
            return 1;
        }
        b->top = fmax(b->top, simplex_measure(b, pts[i]));
        break;
    default: /* STAGE_LINE_PICK, STAGE_PLANE_PICK */
        if (i == w->count) {
            end_simplex_pick(b);
            return 4;
        }
        double far = gy_v3_len_sq(gy_v3_sub(pts[i], b->origin));
        if (simplex_measure(b, pts[i]) >= b->top - w->eps && far > b->far) {
            b->far = far;
            b->pick = i;
        }
        break;
    }
    b->at++;
    return 1;
}

/* The passes that choose the next point: the pending point farthest above its face, then among
 * the points tied with it above that face the one farthest from the face's first corner. Points
 * tying above a face include points in the middle of a future hull face; the strictly convex
 * tie-break picks a corner of it, so flat parts of the hull get no extra vertices. */
static uint64_t next_step(gy_hull_builder *b, uint32_t i, uint64_t room)
{
    hull_work *w = &b->w;
    const gy_vec3 *pts = w->pts;
    /* The hottest passes of the build: a run of items per call, not one. */
    uint32_t end = room < (uint64_t)(w->pending_count - i) ? i + (uint32_t)room : w->pending_count;
    if (b->stage == STAGE_NEXT_TOP) {
        if (i >= w->pending_count) {
            const hull_pending *best = &w->pending[b->pick];
            b->face = best->face;
            b->origin = pts[w->faces[b->face].v[0]];
            b->top = fmax(best->dist - w->eps, w->eps);
            b->far = gy_v3_len_sq(gy_v3_sub(pts[best->point], b->origin));
            builder_enter(b, STAGE_NEXT_PICK, 0);
            return 1;
        }
        uint32_t pick = b->pick;
        double top = w->pending[pick].dist;
        for (uint32_t k = i; k < end; k++)
            if (w->pending[k].dist > top) {
                top = w->pending[k].dist;
                pick = k;
            }
        b->pick = pick;
    } else {
        if (i == w->pending_count) {
            b->point = w->pending[b->pick].point;
            w->pending[b->pick] = w->pending[--w->pending_count];
            builder_enter(b, STAGE_CONE, 0);
            return 1;
        }
        const hull_face *f = &w->faces[b->face];
        gy_vec3 origin = b->origin;
        double far = b->far, cutoff = b->top;
        uint32_t pick = b->pick;
        for (uint32_t k = i; k < end; k++) {
            gy_vec3 p = pts[w->pending[k].point];
            double reach = gy_v3_len_sq(gy_v3_sub(p, origin));
            if (reach > far && face_dist(f, p) > cutoff) {
                far = reach;
                pick = k;
            }
        }
        b->far = far;
        b->pick = pick;
    }
    b->at = end;
    return end - i;
}

/* The passes that copy the hull out with its vertices renumbered densely, then integrate it. */
static uint64_t emit_step(gy_hull_builder *b, uint32_t i)
{
    const hull_work *w = &b->w;
    gy_hull *h = &b->hull;
    uint64_t cost = 1;
    switch (b->stage) {
    case STAGE_EMIT_MARK:
        if (i == w->face_count) {
            emit_alloc(b);
            return 1;
        }
        if (w->faces[i].alive) {
            h->triangle_count++;
            for (int k = 0; k < 3; k++)
                if (b->remap[w->faces[i].v[k]] == NO_FACE)
                    b->remap[w->faces[i].v[k]] = h->vertex_count++;
        }
        break;
    case STAGE_EMIT_VERTS:
        if (i == w->count) {
            b->emitted = 0;
            builder_enter(b, STAGE_EMIT_FACES, 0);
            return 1;
        }
        if (b->remap[i] != NO_FACE)
            h->vertices[b->remap[i]] = w->pts[i];
        break;
    case STAGE_EMIT_FACES:
        if (i == w->face_count) {
            b->ref = gy_v3(0, 0, 0);
            builder_enter(b, STAGE_EMIT_REF, 0);
            return 1;
        }
        if (w->faces[i].alive) {
            const hull_face *fa = &w->faces[i];
            uint32_t t = b->emitted++;
            for (int k = 0; k < 3; k++)
                h->triangles[3 * t + k] = b->remap[fa->v[k]];
            h->planes[t][0] = fa->n.x;
            h->planes[t][1] = fa->n.y;
            h->planes[t][2] = fa->n.z;
            h->planes[t][3] = fa->d;
        }
        break;
    case STAGE_EMIT_REF:
        /* Integrating about a point inside keeps the tetrahedra small and the sums well
         * conditioned. */
        if (i == h->vertex_count) {
            b->ref = gy_v3_scale(b->ref, 1.0 / (double)h->vertex_count);
            memset(&b->sums, 0, sizeof b->sums);
            builder_enter(b, STAGE_EMIT_MASS, 0);
            return 1;
        }
        b->ref = gy_v3_add(b->ref, h->vertices[i]);
        break;
    default: /* STAGE_EMIT_MASS */
        if (i == h->triangle_count) {
            integrals_end(&b->sums, b->ref, &h->volume, &h->centroid, NULL);
            b->stage = STAGE_DONE;
            return 1;
        }
        integrals_add(&b->sums, h->vertices, &h->triangles[3 * i], b->ref);
        cost = 4;
        break;
    }
    b->at++;
    return cost;
}

/* Does one item of the current stage (a run of items of at most `room` units for the hottest
 * passes); returns its units. */
static uint64_t builder_step(gy_hull_builder *b, uint64_t room)
{
    hull_work *w = &b->w;
    uint32_t i = b->at;
    switch (b->stage) {
    case STAGE_CHECK:
        if (i == w->count) {
            end_check(b);
            return 1;
        }
        if (!gy_vec3_is_finite(w->pts[i])) {
            builder_fail(b, GY_ERR_NON_FINITE);
            return 1;
        }
        b->lo = i == 0 ? w->pts[0] : gy_v3_min(b->lo, w->pts[i]);
        b->hi = i == 0 ? w->pts[0] : gy_v3_max(b->hi, w->pts[i]);
        b->at++;
        return 1;
    case STAGE_CORNER:
    case STAGE_FAR:
    case STAGE_LINE_TOP:
    case STAGE_LINE_PICK:
    case STAGE_PLANE_TOP:
    case STAGE_PLANE_PICK:
        return simplex_step(b, i);
    case STAGE_ASSIGN:
        if (i == w->count) {
            next_or_emit(b);
            return 1;
        }
        assign_point(w, b->simplex, i);
        b->at++;
        return 4;
    case STAGE_NEXT_TOP:
    case STAGE_NEXT_PICK:
        return next_step(b, i, room);
    case STAGE_CONE:
        return add_cone(b);
    case STAGE_REASSIGN:
        if (i == w->pending_count) {
            w->pending_count = b->keep;
            for (uint32_t k = 0; k < w->seen_count; k++)
                w->faces[w->seen[k]].alive = false;
            clear_visible(w);
            next_or_emit(b);
            return 1u + w->seen_count;
        }
        uint64_t spent = 0;
        while (b->at < w->pending_count && spent < room)
            spent += reassign_point(b, room - spent);
        return spent;
    case STAGE_EMIT_MARK:
    case STAGE_EMIT_VERTS:
    case STAGE_EMIT_FACES:
    case STAGE_EMIT_REF:
    case STAGE_EMIT_MASS:
        return emit_step(b, i);
    case STAGE_DONE:
        break;
    }
    return 0;
}

gy_result gy_hull_build_begin(const gy_allocator *allocator, const gy_vec3 *points, uint32_t count,
                              gy_hull_builder **out)
{
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (points == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    const gy_allocator *al = gy_allocator_or_default(allocator);
    gy_hull_builder *b = gy_alloc_zeroed(al, sizeof *b);
    if (b == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    b->w.al = al;
    b->w.pts = points;
    b->w.count = count;
    b->stage = STAGE_CHECK;
    b->result = GY_OK;
    *out = b;
    return GY_OK;
}

bool gy_hull_build_run(gy_hull_builder *b, uint64_t units, uint64_t *done_units)
{
    if (b == NULL)
        return true;
    uint64_t used = 0;
    while (b->stage != STAGE_DONE && used < units)
        used += builder_step(b, units - used);
    if (done_units != NULL)
        *done_units += used;
    return b->stage == STAGE_DONE;
}

void gy_hull_build_cancel(gy_hull_builder *b)
{
    if (b == NULL)
        return;
    const gy_allocator *al = b->w.al;
    work_free(&b->w);
    gy_free(al, b->remap, (size_t)b->w.count * sizeof *b->remap);
    gy_hull_free(al, &b->hull);
    gy_free(al, b, sizeof *b);
}

gy_result gy_hull_build_finish(gy_hull_builder *b, gy_hull *out)
{
    if (b == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_hull_build_run(b, UINT64_MAX, NULL);
    gy_result r = out == NULL ? GY_ERR_INVALID_ARGUMENT : b->result;
    if (r == GY_OK) {
        *out = b->hull;
        memset(&b->hull, 0, sizeof b->hull);
    }
    gy_hull_build_cancel(b);
    return r;
}

gy_result gy_hull_check(const gy_allocator *allocator, const gy_vec3 *points, uint32_t count)
{
    gy_hull_builder *b;
    gy_result r = gy_hull_build_begin(allocator, points, count, &b);
    if (r != GY_OK)
        return r;
    /* Every failure but memory is found by the time the tetrahedron is built. */
    while (b->stage < STAGE_ASSIGN)
        builder_step(b, UINT64_MAX);
    r = b->result;
    gy_hull_build_cancel(b);
    return r;
}

gy_result gy_hull_build(const gy_allocator *allocator, const gy_vec3 *points, uint32_t count,
                        gy_hull *out)
{
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_hull_builder *b;
    gy_result r = gy_hull_build_begin(allocator, points, count, &b);
    return r == GY_OK ? gy_hull_build_finish(b, out) : r;
}

gy_result gy_hull_copy(const gy_allocator *allocator, const gy_hull *hull, gy_hull *out)
{
    if (hull == NULL || out == NULL || hull->vertices == NULL || hull->triangles == NULL ||
        hull->planes == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    const gy_allocator *al = gy_allocator_or_default(allocator);
    gy_hull h = *hull;
    h.vertices = gy_alloc(al, (size_t)h.vertex_count * sizeof *h.vertices);
    h.triangles = gy_alloc(al, (size_t)h.triangle_count * 3 * sizeof *h.triangles);
    h.planes = gy_alloc(al, (size_t)h.triangle_count * sizeof *h.planes);
    if (h.vertices == NULL || h.triangles == NULL || h.planes == NULL) {
        gy_hull_free(al, &h);
        return GY_ERR_OUT_OF_MEMORY;
    }
    memcpy(h.vertices, hull->vertices, (size_t)h.vertex_count * sizeof *h.vertices);
    memcpy(h.triangles, hull->triangles, (size_t)h.triangle_count * 3 * sizeof *h.triangles);
    memcpy(h.planes, hull->planes, (size_t)h.triangle_count * sizeof *h.planes);
    *out = h;
    return GY_OK;
}

void gy_hull_free(const gy_allocator *allocator, gy_hull *hull)
{
    if (hull == NULL)
        return;
    const gy_allocator *al = gy_allocator_or_default(allocator);
    gy_free(al, hull->vertices, (size_t)hull->vertex_count * sizeof *hull->vertices);
    gy_free(al, hull->triangles, (size_t)hull->triangle_count * 3 * sizeof *hull->triangles);
    gy_free(al, hull->planes, (size_t)hull->triangle_count * sizeof *hull->planes);
    memset(hull, 0, sizeof *hull);
}

bool gy_hull_clip_line(const gy_hull *h, gy_vec3 o, gy_vec3 d, double *t_in, uint32_t *f_in,
                       double *t_out, uint32_t *f_out)
{
    *t_in = -INFINITY;
    *t_out = INFINITY;
    *f_in = *f_out = UINT32_MAX;
    for (uint32_t i = 0; i < h->triangle_count; i++) {
        const double *pl = h->planes[i];
        gy_vec3 n = gy_v3(pl[0], pl[1], pl[2]);
        double denom = gy_v3_dot(n, d), num = pl[3] - gy_v3_dot(n, o);
        if (denom == 0.0) {
            if (num < 0.0)
                return false; /* parallel to the face and outside it */
            continue;
        }
        double t = num / denom;
        if (denom < 0.0) {
            if (t > *t_in) {
                *t_in = t;
                *f_in = i;
            }
        } else if (t < *t_out) {
            *t_out = t;
            *f_out = i;
        }
        if (*t_in > *t_out)
            return false;
    }
    return true;
}

/* ---- lines through primitive solids ---------------------------------------------------------- */

bool gy_line_sphere(gy_vec3 o, gy_vec3 d, double r, gy_line_span *out)
{
    double a = gy_v3_dot(d, d), b = gy_v3_dot(o, d), c = gy_v3_dot(o, o) - r * r;
    double disc = b * b - a * c;
    if (!(a > 0.0) || !(disc >= 0.0))
        return false;
    double s = sqrt(disc);
    out->t_in = (-b - s) / a;
    out->t_out = (-b + s) / a;
    out->n_in = gy_v3_normalize(gy_v3_mad(o, d, out->t_in));
    out->n_out = gy_v3_normalize(gy_v3_mad(o, d, out->t_out));
    return true;
}

static void span_all(gy_line_span *s)
{
    s->t_in = -INFINITY;
    s->t_out = INFINITY;
    s->n_in = s->n_out = gy_v3(0.0, 0.0, 0.0);
}

/* Narrows *s to the slab |x[axis]| <= half; false when the line misses it. */
static bool span_slab(const double o[3], const double d[3], int axis, double half, gy_line_span *s)
{
    if (d[axis] == 0.0)
        return o[axis] >= -half && o[axis] <= half && s->t_in <= s->t_out;
    double t1 = (-half - o[axis]) / d[axis], t2 = (half - o[axis]) / d[axis];
    double e[3] = {0.0, 0.0, 0.0};
    e[axis] = d[axis] > 0.0 ? 1.0 : -1.0; /* the face the line leaves through */
    gy_vec3 out_n = gy_v3(e[0], e[1], e[2]);
    if (t1 > t2) {
        double t = t1;
        t1 = t2;
        t2 = t;
    }
    if (t1 > s->t_in) {
        s->t_in = t1;
        s->n_in = gy_v3_neg(out_n);
    }
    if (t2 < s->t_out) {
        s->t_out = t2;
        s->n_out = out_n;
    }
    return s->t_in <= s->t_out;
}

bool gy_line_box(gy_vec3 o, gy_vec3 d, gy_vec3 half, gy_line_span *out)
{
    const double oo[3] = {o.x, o.y, o.z}, dd[3] = {d.x, d.y, d.z};
    span_all(out);
    return span_slab(oo, dd, 0, half.x, out) && span_slab(oo, dd, 1, half.y, out) &&
           span_slab(oo, dd, 2, half.z, out);
}

bool gy_line_cylinder(gy_vec3 o, gy_vec3 d, double r, double half_height, gy_line_span *out)
{
    span_all(out);
    double a = d.x * d.x + d.z * d.z, c = o.x * o.x + o.z * o.z - r * r;
    if (a == 0.0) {
        if (c > 0.0)
            return false; /* along the axis, outside the side */
    } else {
        double b = o.x * d.x + o.z * d.z, disc = b * b - a * c;
        if (!(disc >= 0.0))
            return false;
        double s = sqrt(disc);
        out->t_in = (-b - s) / a;
        out->t_out = (-b + s) / a;
        gy_vec3 pi = gy_v3_mad(o, d, out->t_in), po = gy_v3_mad(o, d, out->t_out);
        out->n_in = gy_v3_normalize(gy_v3(pi.x, 0.0, pi.z));
        out->n_out = gy_v3_normalize(gy_v3(po.x, 0.0, po.z));
    }
    const double oo[3] = {o.x, o.y, o.z}, dd[3] = {d.x, d.y, d.z};
    return span_slab(oo, dd, 1, half_height, out);
}

/* A capsule is convex and the union of its core cylinder and two end spheres, so the line's span
 * through it is the union of its spans through the three. */
bool gy_line_capsule(gy_vec3 o, gy_vec3 d, double r, double half_core, gy_line_span *out)
{
    gy_line_span parts[3];
    bool got[3] = {gy_line_cylinder(o, d, r, half_core, &parts[0]),
                   gy_line_sphere(gy_v3_sub(o, gy_v3(0.0, half_core, 0.0)), d, r, &parts[1]),
                   gy_line_sphere(gy_v3_add(o, gy_v3(0.0, half_core, 0.0)), d, r, &parts[2])};
    bool any = false;
    for (int i = 0; i < 3; i++) {
        if (!got[i])
            continue;
        if (!any || parts[i].t_in < out->t_in) {
            out->t_in = parts[i].t_in;
            out->n_in = parts[i].n_in;
        }
        if (!any || parts[i].t_out > out->t_out) {
            out->t_out = parts[i].t_out;
            out->n_out = parts[i].n_out;
        }
        any = true;
    }
    return any;
}

bool gy_line_hull(gy_vec3 o, gy_vec3 d, const gy_hull *h, gy_line_span *out)
{
    uint32_t f_in, f_out;
    if (!gy_hull_clip_line(h, o, d, &out->t_in, &f_in, &out->t_out, &f_out) || f_in == UINT32_MAX ||
        f_out == UINT32_MAX)
        return false;
    const double *a = h->planes[f_in], *b = h->planes[f_out];
    out->n_in = gy_v3(a[0], a[1], a[2]);
    out->n_out = gy_v3(b[0], b[1], b[2]);
    return true;
}

bool gy_line_span_hit(const gy_line_span *s, double t_max, bool from_inside, double *t, gy_vec3 *n)
{
    if (s->t_in >= 0.0) {
        *t = s->t_in;
        *n = s->n_in;
    } else if (from_inside && s->t_out >= 0.0) {
        *t = s->t_out;
        *n = gy_v3_neg(s->n_out);
    } else {
        return false;
    }
    return isfinite(*t) && *t <= t_max;
}

/* ---- mass properties ------------------------------------------------------------------------- */

static bool shape_params_ok(const gy_shape *s)
{
    switch (s->type) {
    case GY_SHAPE_SPHERE:
        return gy_is_finite(s->radius) && s->radius > 0.0;
    case GY_SHAPE_BOX:
        return gy_vec3_is_finite(s->box_size) && s->box_size.x > 0.0 && s->box_size.y > 0.0 &&
               s->box_size.z > 0.0;
    case GY_SHAPE_CAPSULE:
    case GY_SHAPE_CYLINDER:
        return gy_is_finite(s->radius) && gy_is_finite(s->height) && s->radius > 0.0 &&
               s->height > 0.0;
    default:
        return false;
    }
}

static bool hull_ok(const gy_hull *h)
{
    return h != NULL && h->vertices != NULL && h->triangles != NULL && h->triangle_count >= 4;
}

/* Length of a capsule's cylindrical part; a capsule shorter than its two caps is a sphere. */
static double capsule_shaft(const gy_shape *s)
{
    return fmax(0.0, s->height - 2.0 * s->radius);
}

double gy_shape_volume(const gy_shape *shape, const gy_hull *hull)
{
    if (shape == NULL)
        return 0.0;
    if (shape->type == GY_SHAPE_HULL)
        return hull_ok(hull) ? hull->volume : 0.0;
    if (!shape_params_ok(shape))
        return 0.0;
    double r = shape->radius;
    switch (shape->type) {
    case GY_SHAPE_SPHERE:
        return 4.0 / 3.0 * GY_PI * r * r * r;
    case GY_SHAPE_BOX:
        return shape->box_size.x * shape->box_size.y * shape->box_size.z;
    case GY_SHAPE_CAPSULE:
        return GY_PI * r * r * capsule_shaft(shape) + 4.0 / 3.0 * GY_PI * r * r * r;
    case GY_SHAPE_CYLINDER:
        return GY_PI * r * r * shape->height;
    default:
        return 0.0;
    }
}

static gy_mass hull_mass(const gy_hull *h, double density)
{
    gy_mass m;
    double volume;
    gy_mat3 c;
    solid_integrals(h->vertices, h->triangles, h->triangle_count, h->centroid, &volume, &m.center,
                    &c);
    /* Integrated about the stored centroid, the recomputed centre differs from it only by
     * rounding; move the second moment onto the exact centre with the parallel-axis term. */
    gy_vec3 g = gy_v3_sub(m.center, h->centroid);
    const double *pg = &g.x;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            c.m[i][j] -= volume * pg[i] * pg[j];
    double tr = c.m[0][0] + c.m[1][1] + c.m[2][2];
    m.mass = density * volume;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            m.inertia.m[i][j] = density * ((i == j ? tr : 0.0) - c.m[i][j]);
    return m;
}

gy_mass gy_shape_mass(const gy_shape *shape, const gy_hull *hull, double density)
{
    gy_mass m;
    memset(&m, 0, sizeof m);
    if (shape == NULL || !gy_is_finite(density) || density <= 0.0)
        return m;
    if (shape->type == GY_SHAPE_HULL)
        return hull_ok(hull) ? hull_mass(hull, density) : m;
    if (!shape_params_ok(shape))
        return m;
    double r = shape->radius, r2 = r * r;
    m.mass = density * gy_shape_volume(shape, hull);
    switch (shape->type) {
    case GY_SHAPE_SPHERE: {
        double i = 0.4 * m.mass * r2;
        m.inertia = gy_mat3_diag(i, i, i);
        break;
    }
    case GY_SHAPE_BOX: {
        double x2 = shape->box_size.x * shape->box_size.x;
        double y2 = shape->box_size.y * shape->box_size.y;
        double z2 = shape->box_size.z * shape->box_size.z;
        double k = m.mass / 12.0;
        m.inertia = gy_mat3_diag(k * (y2 + z2), k * (x2 + z2), k * (x2 + y2));
        break;
    }
    case GY_SHAPE_CYLINDER: {
        double h2 = shape->height * shape->height;
        double side = m.mass * (3.0 * r2 + h2) / 12.0;
        m.inertia = gy_mat3_diag(side, 0.5 * m.mass * r2, side);
        break;
    }
    case GY_SHAPE_CAPSULE: {
        /* Shaft plus two hemispheres; each cap's centre of mass sits 3r/8 beyond the shaft end,
         * which gives the 3·L·r/8 cross term about the capsule's centre. */
        double l = capsule_shaft(shape);
        double shaft = density * GY_PI * r2 * l;
        double caps = density * 4.0 / 3.0 * GY_PI * r2 * r;
        double axial = shaft * 0.5 * r2 + caps * 0.4 * r2;
        double side =
            shaft * (l * l / 12.0 + r2 / 4.0) + caps * (0.4 * r2 + l * l / 4.0 + 3.0 * l * r / 8.0);
        m.inertia = gy_mat3_diag(side, axial, side);
        break;
    }
    default:
        break;
    }
    return m;
}

gy_mass gy_mass_transform(gy_mass m, gy_pose pose)
{
    gy_mat3 rot = gy_quat_to_mat3(gy_quat_normalize(pose.rotation));
    gy_mass r = m;
    r.center = gy_v3_add(gy_mat3_apply(rot, m.center), pose.position);
    r.inertia = gy_mat3_mul(gy_mat3_mul(rot, m.inertia), gy_mat3_transpose(rot));
    /* Keep the tensor exactly symmetric; the two products round the halves differently. */
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++) {
            double s = 0.5 * (r.inertia.m[i][j] + r.inertia.m[j][i]);
            r.inertia.m[i][j] = r.inertia.m[j][i] = s;
        }
    return r;
}

/* Inertia of `m` about `about`: its own tensor plus m (|d|² E − d dᵀ), d = centre − about. */
static gy_mat3 inertia_about(gy_mass m, gy_vec3 about)
{
    gy_vec3 d = gy_v3_sub(m.center, about);
    const double *pd = &d.x;
    double d2 = gy_v3_dot(d, d);
    gy_mat3 r = m.inertia;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            r.m[i][j] += m.mass * ((i == j ? d2 : 0.0) - pd[i] * pd[j]);
    return r;
}

gy_mass gy_mass_add(gy_mass a, gy_mass b)
{
    gy_mass r;
    r.mass = a.mass + b.mass;
    if (!(r.mass > 0.0)) {
        /* Massless parts have no centre to weigh; keep the first one's. */
        r.center = a.center;
        r.inertia = gy_mat3_add(a.inertia, b.inertia);
        return r;
    }
    r.center = gy_v3_scale(gy_v3_add(gy_v3_scale(a.center, a.mass), gy_v3_scale(b.center, b.mass)),
                           1.0 / r.mass);
    r.inertia = gy_mat3_add(inertia_about(a, r.center), inertia_about(b, r.center));
    return r;
}

gy_mass gy_mass_scale_to(gy_mass m, double total)
{
    if (!(m.mass > 0.0) || !gy_is_finite(m.mass) || !gy_is_finite(total))
        return m;
    double k = total / m.mass;
    m.mass = total;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            m.inertia.m[i][j] *= k;
    return m;
}
