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

/* The point maximising `measure`, or among points within eps of that maximum the one farthest from
 * `a`. The tie-break matters: points on a hull face tie with its corners, and a simplex point is
 * never removed again, so it must be a true corner. Distance from a point is strictly convex, so
 * its maximum over the tied face is one of the face's corners. */
static uint32_t farthest(const gy_vec3 *pts, uint32_t count, gy_vec3 a, gy_vec3 u,
                         double (*measure)(gy_vec3, gy_vec3, gy_vec3), double eps, double *best)
{
    double top = -1.0;
    for (uint32_t i = 0; i < count; i++)
        top = fmax(top, measure(pts[i], a, u));
    uint32_t pick = 0;
    double far = -1.0;
    for (uint32_t i = 0; i < count; i++) {
        double reach = gy_v3_len_sq(gy_v3_sub(pts[i], a));
        if (measure(pts[i], a, u) >= top - eps && reach > far) {
            far = reach;
            pick = i;
        }
    }
    *best = top;
    return pick;
}

/* The four corners the hull starts from, or GY_ERR_INVALID_MESH when the cloud spans no volume
 * (coincident, collinear or coplanar within eps). */
static gy_result pick_simplex(const gy_vec3 *pts, uint32_t count, double eps, uint32_t out[4])
{
    /* The lexicographically smallest point is always a corner. */
    uint32_t i0 = 0;
    for (uint32_t i = 1; i < count; i++) {
        gy_vec3 p = pts[i], q = pts[i0];
        if (p.x < q.x || (p.x == q.x && (p.y < q.y || (p.y == q.y && p.z < q.z))))
            i0 = i;
    }
    gy_vec3 a = pts[i0];
    uint32_t i1 = 0;
    double far = -1.0;
    for (uint32_t i = 0; i < count; i++) {
        double reach = gy_v3_len(gy_v3_sub(pts[i], a));
        if (reach > far) {
            far = reach;
            i1 = i;
        }
    }
    if (!(far > eps))
        return GY_ERR_INVALID_MESH;

    double best;
    gy_vec3 axis = gy_v3_normalize(gy_v3_sub(pts[i1], a));
    uint32_t i2 = farthest(pts, count, a, axis, line_dist, eps, &best);
    if (!(best > eps))
        return GY_ERR_INVALID_MESH;

    gy_vec3 n = gy_v3_normalize(gy_v3_cross(gy_v3_sub(pts[i1], a), gy_v3_sub(pts[i2], a)));
    uint32_t i3 = farthest(pts, count, a, n, plane_offset, eps, &best);
    if (!(best > eps))
        return GY_ERR_INVALID_MESH;
    out[0] = i0;
    out[1] = i1;
    out[2] = i2;
    out[3] = i3;
    return GY_OK;
}

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

    for (uint32_t i = 0; i < w->count; i++) {
        if (i == s[0] || i == s[1] || i == s[2] || i == s[3])
            continue;
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

/* Replaces the faces the point `pi` sees by a cone from the horizon to it. */
static gy_result add_point(hull_work *w, uint32_t pi, uint32_t start)
{
    gy_vec3 p = w->pts[pi];
    gy_result r = find_horizon(w, p, start);
    if (r != GY_OK)
        return r;
    if (!horizon_is_loop(w)) {
        clear_visible(w);
        return GY_OK;
    }
    uint32_t first_new = w->face_count;
    for (uint32_t i = 0; i < w->horizon_count; i++) {
        hull_horizon *h = &w->horizon[i];
        r = face_push(w, h->a, h->b, pi, &h->cone);
        if (r != GY_OK)
            return r;
    }
    for (uint32_t i = 0; i < w->horizon_count; i++) {
        const hull_horizon *h = &w->horizon[i];
        hull_face *cone = &w->faces[h->cone];
        hull_face *out = &w->faces[h->outside];
        uint32_t back = face_edge(out, h->b, h->a);
        assert(back < 3);
        cone->nb[0] = h->outside;
        out->nb[back] = h->cone;
        for (uint32_t j = 0; j < w->horizon_count; j++) {
            if (w->horizon[j].a == h->b)
                cone->nb[1] = w->horizon[j].cone; /* edge b -> p */
            if (w->horizon[j].b == h->a)
                cone->nb[2] = w->horizon[j].cone; /* edge p -> a */
        }
    }

    /* Points owned by a removed face move to a new face they lie above, else to any face; a
     * point above none is inside for good, since the hull only grows. */
    uint32_t keep = 0;
    for (uint32_t i = 0; i < w->pending_count; i++) {
        hull_pending q = w->pending[i];
        if (w->faces[q.face].visible) {
            gy_vec3 x = w->pts[q.point];
            q.face = NO_FACE;
            q.dist = w->eps;
            for (uint32_t f = first_new; f < w->face_count; f++) {
                double dist = face_dist(&w->faces[f], x);
                if (dist > q.dist) {
                    q.dist = dist;
                    q.face = f;
                }
            }
            for (uint32_t f = 0; q.face == NO_FACE && f < first_new; f++) {
                const hull_face *fa = &w->faces[f];
                if (fa->alive && !fa->visible && face_dist(fa, x) > w->eps) {
                    q.face = f;
                    q.dist = face_dist(fa, x);
                }
            }
            if (q.face == NO_FACE)
                continue;
        }
        w->pending[keep++] = q;
    }
    w->pending_count = keep;
    for (uint32_t i = 0; i < w->seen_count; i++)
        w->faces[w->seen[i]].alive = false;
    clear_visible(w);
    return GY_OK;
}

/* The pending point to add next (and in *face, a face it lies above): the one farthest above its
 * face, or among the points that tie
 * with it above that face the one farthest from the face's first corner. Points tying above a
 * face include points in the middle of a future hull face; the strictly convex tie-break picks a
 * corner of it, so flat parts of the hull get no extra vertices. */
static uint32_t next_point(const hull_work *w, uint32_t *face)
{
    uint32_t best = 0;
    for (uint32_t i = 1; i < w->pending_count; i++)
        if (w->pending[i].dist > w->pending[best].dist)
            best = i;
    *face = w->pending[best].face;
    const hull_face *f = &w->faces[*face];
    gy_vec3 corner = w->pts[f->v[0]];
    double cutoff = fmax(w->pending[best].dist - w->eps, w->eps);
    double far = gy_v3_len_sq(gy_v3_sub(w->pts[w->pending[best].point], corner));
    uint32_t pick = best;
    for (uint32_t i = 0; i < w->pending_count; i++) {
        gy_vec3 p = w->pts[w->pending[i].point];
        double reach = gy_v3_len_sq(gy_v3_sub(p, corner));
        if (reach > far && face_dist(f, p) > cutoff) {
            far = reach;
            pick = i;
        }
    }
    return pick;
}

/* Volume, centroid and second moment ∫ x xᵀ dV (about `ref`) of a closed, outward-wound triangle
 * mesh (`second` may be NULL), summed over the signed tetrahedra (ref, a, b, c). Each tetrahedron's
 * second moment is det/120 · (s sᵀ + a aᵀ + b bᵀ + c cᵀ) with s = a + b + c, the
 * canonical-tetrahedron covariance mapped through [a b c]. */
static void solid_integrals(const gy_vec3 *v, const uint32_t *tri, uint32_t tri_count, gy_vec3 ref,
                            double *volume, gy_vec3 *centroid, gy_mat3 *second)
{
    double vol6 = 0.0;
    gy_vec3 first = gy_v3(0, 0, 0);
    gy_mat3 c = gy_mat3_zero();
    for (uint32_t t = 0; t < tri_count; t++) {
        gy_vec3 a = gy_v3_sub(v[tri[3 * t]], ref);
        gy_vec3 b = gy_v3_sub(v[tri[3 * t + 1]], ref);
        gy_vec3 d = gy_v3_sub(v[tri[3 * t + 2]], ref);
        double det = gy_v3_dot(a, gy_v3_cross(b, d));
        gy_vec3 s = gy_v3_add(gy_v3_add(a, b), d);
        vol6 += det;
        first = gy_v3_mad(first, s, det);
        const double *pa = &a.x, *pb = &b.x, *pd = &d.x, *ps = &s.x;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                c.m[i][j] += det * (ps[i] * ps[j] + pa[i] * pa[j] + pb[i] * pb[j] + pd[i] * pd[j]);
    }
    *volume = vol6 / 6.0;
    *centroid = vol6 != 0.0 ? gy_v3_add(ref, gy_v3_scale(first, 1.0 / (4.0 * vol6))) : ref;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            c.m[i][j] /= 120.0;
    if (second != NULL)
        *second = c;
}

static void work_free(hull_work *w)
{
    gy_free(w->al, w->faces, (size_t)w->face_cap * sizeof *w->faces);
    gy_free(w->al, w->pending, (size_t)w->count * sizeof *w->pending);
    gy_free(w->al, w->seen, (size_t)w->seen_cap * sizeof *w->seen);
    gy_free(w->al, w->horizon, (size_t)w->horizon_cap * sizeof *w->horizon);
}

/* Copies the live faces out with vertices renumbered densely. */
static gy_result hull_emit(hull_work *w, gy_hull *out)
{
    gy_hull h;
    memset(&h, 0, sizeof h);
    uint32_t *remap = gy_alloc(w->al, (size_t)w->count * sizeof *remap);
    if (remap == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < w->count; i++)
        remap[i] = NO_FACE;
    for (uint32_t f = 0; f < w->face_count; f++) {
        const hull_face *fa = &w->faces[f];
        if (!fa->alive)
            continue;
        h.triangle_count++;
        for (int k = 0; k < 3; k++)
            if (remap[fa->v[k]] == NO_FACE)
                remap[fa->v[k]] = h.vertex_count++;
    }
    h.vertices = gy_alloc(w->al, (size_t)h.vertex_count * sizeof *h.vertices);
    h.triangles = gy_alloc(w->al, (size_t)h.triangle_count * 3 * sizeof *h.triangles);
    h.planes = gy_alloc(w->al, (size_t)h.triangle_count * sizeof *h.planes);
    if (h.vertices == NULL || h.triangles == NULL || h.planes == NULL) {
        gy_free(w->al, remap, (size_t)w->count * sizeof *remap);
        gy_hull_free(w->al, &h);
        return GY_ERR_OUT_OF_MEMORY;
    }
    for (uint32_t i = 0; i < w->count; i++)
        if (remap[i] != NO_FACE)
            h.vertices[remap[i]] = w->pts[i];
    uint32_t t = 0;
    for (uint32_t f = 0; f < w->face_count; f++) {
        const hull_face *fa = &w->faces[f];
        if (!fa->alive)
            continue;
        for (int k = 0; k < 3; k++)
            h.triangles[3 * t + k] = remap[fa->v[k]];
        h.planes[t][0] = fa->n.x;
        h.planes[t][1] = fa->n.y;
        h.planes[t][2] = fa->n.z;
        h.planes[t][3] = fa->d;
        t++;
    }
    gy_free(w->al, remap, (size_t)w->count * sizeof *remap);

    /* Integrating about a point inside keeps the tetrahedra small and the sums well conditioned. */
    gy_vec3 ref = gy_v3(0, 0, 0);
    for (uint32_t i = 0; i < h.vertex_count; i++)
        ref = gy_v3_add(ref, h.vertices[i]);
    ref = gy_v3_scale(ref, 1.0 / (double)h.vertex_count);
    solid_integrals(h.vertices, h.triangles, h.triangle_count, ref, &h.volume, &h.centroid, NULL);
    *out = h;
    return GY_OK;
}

gy_result gy_hull_build(const gy_allocator *allocator, const gy_vec3 *points, uint32_t count,
                        gy_hull *out)
{
    if (out == NULL || points == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < count; i++)
        if (!gy_vec3_is_finite(points[i]))
            return GY_ERR_NON_FINITE;
    if (count < 4)
        return GY_ERR_INVALID_MESH;

    gy_vec3 lo = points[0], hi = points[0];
    for (uint32_t i = 1; i < count; i++) {
        lo = gy_v3_min(lo, points[i]);
        hi = gy_v3_max(hi, points[i]);
    }
    double extent = gy_v3_len(gy_v3_sub(hi, lo));
    double reach = fmax(gy_v3_len(lo), gy_v3_len(hi));
    /* Relative to the cloud's size for geometric degeneracy, and to its distance from the origin
     * for the rounding of plane offsets. */
    double eps = 1e-9 * extent + 64.0 * DBL_EPSILON * reach;
    if (!gy_is_finite(eps))
        return GY_ERR_NON_FINITE; /* finite points so far apart that their distances overflow */
    if (!(extent > 0.0))
        return GY_ERR_INVALID_MESH;

    uint32_t simplex[4];
    gy_result r = pick_simplex(points, count, eps, simplex);
    if (r != GY_OK)
        return r;

    hull_work w;
    memset(&w, 0, sizeof w);
    w.al = gy_allocator_or_default(allocator);
    w.pts = points;
    w.count = count;
    w.eps = eps;
    w.pending = gy_alloc(w.al, (size_t)count * sizeof *w.pending);
    if (w.pending == NULL)
        return GY_ERR_OUT_OF_MEMORY;

    r = hull_start(&w, simplex);
    while (r == GY_OK && w.pending_count > 0) {
        uint32_t face;
        uint32_t next = next_point(&w, &face);
        uint32_t point = w.pending[next].point;
        w.pending[next] = w.pending[--w.pending_count];
        r = add_point(&w, point, face);
    }
    if (r == GY_OK)
        r = hull_emit(&w, out);
    work_free(&w);
    return r;
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
