/* GJK distance and conservative-advancement time of impact between rounded convex shapes
 * (gyre/convex.h). */
#include "gyre/convex.h"

#include <math.h>
#include <string.h>

/* Advancement steps before a cast gives up on a graze. */
#define CAST_STEPS 96
/* Iterations of GJK; each adds a support point, and it converges in far fewer. */
#define GJK_ITERATIONS 96

static gy_vec3 local_support(const gy_convex *c, gy_vec3 d)
{
    switch (c->core) {
    case GY_CONVEX_POINT:
        return gy_v3(0, 0, 0);
    case GY_CONVEX_SEGMENT:
        return gy_v3(0.0, d.y >= 0.0 ? c->half_length : -c->half_length, 0.0);
    case GY_CONVEX_BOX:
        return gy_v3(d.x >= 0.0 ? c->half.x : -c->half.x, d.y >= 0.0 ? c->half.y : -c->half.y,
                     d.z >= 0.0 ? c->half.z : -c->half.z);
    case GY_CONVEX_CYLINDER: {
        double l = sqrt(d.x * d.x + d.z * d.z), r = c->half.x;
        gy_vec3 s = gy_v3(0.0, d.y >= 0.0 ? c->half.y : -c->half.y, 0.0);
        if (l > 0.0) {
            s.x = r * d.x / l;
            s.z = r * d.z / l;
        }
        return s;
    }
    default: {
        uint32_t best = 0;
        double best_dot = -INFINITY;
        for (uint32_t i = 0; i < c->point_count; i++) {
            double k = gy_v3_dot(c->points[i], d);
            if (k > best_dot) {
                best_dot = k;
                best = i;
            }
        }
        return c->points[best];
    }
    }
}

gy_vec3 gy_convex_support(const gy_convex *c, gy_vec3 d)
{
    gy_vec3 ld = gy_quat_rotate(gy_quat_conj(c->pose.rotation), d);
    return gy_pose_apply(c->pose, local_support(c, ld));
}

/* Closest point to the origin on segment s[0]s[1]; keeps in s the vertices it depends on. */
static gy_vec3 closest_segment(gy_vec3 *s, int *n)
{
    gy_vec3 a = s[0], ab = gy_v3_sub(s[1], s[0]);
    double len2 = gy_v3_len_sq(ab), t = len2 > 0.0 ? -gy_v3_dot(a, ab) / len2 : 0.0;
    if (t <= 0.0) {
        *n = 1;
        return a;
    }
    if (t >= 1.0) {
        s[0] = s[1];
        *n = 1;
        return s[0];
    }
    *n = 2;
    return gy_v3_mad(a, ab, t);
}

/* Closest point to the origin on triangle s[0..2] (Voronoi regions, after Ericson, "Real-Time
 * Collision Detection" 5.1.5); keeps in s the vertices it depends on. */
static gy_vec3 closest_triangle(gy_vec3 *s, int *n)
{
    gy_vec3 a = s[0], b = s[1], c = s[2];
    gy_vec3 ab = gy_v3_sub(b, a), ac = gy_v3_sub(c, a);
    double d1 = -gy_v3_dot(ab, a), d2 = -gy_v3_dot(ac, a);
    if (d1 <= 0.0 && d2 <= 0.0) {
        *n = 1;
        return a;
    }
    double d3 = -gy_v3_dot(ab, b), d4 = -gy_v3_dot(ac, b);
    if (d3 >= 0.0 && d4 <= d3) {
        s[0] = b;
        *n = 1;
        return b;
    }
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
        double den = d1 - d3;
        *n = 2;
        return gy_v3_mad(a, ab, den > 0.0 ? d1 / den : 0.0);
    }
    double d5 = -gy_v3_dot(ab, c), d6 = -gy_v3_dot(ac, c);
    if (d6 >= 0.0 && d5 <= d6) {
        s[0] = c;
        *n = 1;
        return c;
    }
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
        double den = d2 - d6;
        s[1] = c;
        *n = 2;
        return gy_v3_mad(a, ac, den > 0.0 ? d2 / den : 0.0);
    }
    double va = d3 * d6 - d5 * d4;
    if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
        double den = (d4 - d3) + (d5 - d6);
        s[0] = b;
        s[1] = c;
        *n = 2;
        return gy_v3_mad(b, gy_v3_sub(c, b), den > 0.0 ? (d4 - d3) / den : 0.0);
    }
    double sum = va + vb + vc;
    if (!(sum > 0.0)) {
        /* Degenerate (collinear) triangle that fell through: its closest edge decides. */
        gy_vec3 best = a, e[2];
        double best_d = INFINITY;
        int best_n = 1;
        gy_vec3 keep[2] = {a, a};
        for (int i = 0; i < 3; i++) {
            e[0] = s[i];
            e[1] = s[(i + 1) % 3];
            int m;
            gy_vec3 p = closest_segment(e, &m);
            if (gy_v3_len_sq(p) < best_d) {
                best_d = gy_v3_len_sq(p);
                best = p;
                best_n = m;
                keep[0] = e[0];
                keep[1] = e[1];
            }
        }
        s[0] = keep[0];
        s[1] = keep[1];
        *n = best_n;
        return best;
    }
    *n = 3;
    return gy_v3_add(a, gy_v3_add(gy_v3_scale(ab, vb / sum), gy_v3_scale(ac, vc / sum)));
}

/* Closest point to the origin on tetrahedron s[0..3]; *n = 4 when the origin is inside. */
static gy_vec3 closest_tetrahedron(gy_vec3 *s, int *n)
{
    static const int faces[4][4] = {{0, 1, 2, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {1, 3, 2, 0}};
    gy_vec3 a = s[0];
    double vol = gy_v3_dot(gy_v3_sub(s[3], a), gy_v3_cross(gy_v3_sub(s[1], a), gy_v3_sub(s[2], a)));
    double scale = gy_v3_len_sq(gy_v3_sub(s[1], a)) + gy_v3_len_sq(gy_v3_sub(s[2], a)) +
                   gy_v3_len_sq(gy_v3_sub(s[3], a));
    bool flat = fabs(vol) <= 1e-12 * scale * sqrt(scale);
    double best_d = INFINITY;
    gy_vec3 best = a, keep[3] = {a, a, a};
    int best_n = 0;
    for (int f = 0; f < 4; f++) {
        gy_vec3 p0 = s[faces[f][0]], p1 = s[faces[f][1]], p2 = s[faces[f][2]], q = s[faces[f][3]];
        gy_vec3 nrm = gy_v3_cross(gy_v3_sub(p1, p0), gy_v3_sub(p2, p0));
        double side_o = -gy_v3_dot(p0, nrm), side_q = gy_v3_dot(gy_v3_sub(q, p0), nrm);
        if (!flat && side_o * side_q >= 0.0)
            continue; /* the origin is on the inner side of this face */
        gy_vec3 tri[3] = {p0, p1, p2};
        int m;
        gy_vec3 p = closest_triangle(tri, &m);
        if (gy_v3_len_sq(p) < best_d) {
            best_d = gy_v3_len_sq(p);
            best = p;
            best_n = m;
            keep[0] = tri[0];
            keep[1] = tri[1];
            keep[2] = tri[2];
        }
    }
    if (best_n == 0) {
        *n = 4;
        return gy_v3(0, 0, 0);
    }
    s[0] = keep[0];
    s[1] = keep[1];
    s[2] = keep[2];
    *n = best_n;
    return best;
}

static void segment_weights(gy_vec3 s0, gy_vec3 s1, gy_vec3 v, double *w0, double *w1)
{
    gy_vec3 e = gy_v3_sub(s1, s0);
    double len2 = gy_v3_len_sq(e);
    double t = len2 > 0.0 ? gy_v3_dot(gy_v3_sub(v, s0), e) / len2 : 0.0;
    t = fmin(fmax(t, 0.0), 1.0);
    *w0 = 1.0 - t;
    *w1 = t;
}

/* Barycentric weights of v, the closest point of simplex s[0..n) to the origin. A triangle whose
 * two vertices (nearly) coincide, as GJK builds against curved supports, leaves the plane solve
 * ill-conditioned: weights that do not rebuild v are replaced by the best edge's. */
static void weights(const gy_vec3 *s, int n, gy_vec3 v, double *w)
{
    w[0] = 1.0;
    w[1] = w[2] = 0.0;
    if (n == 2) {
        segment_weights(s[0], s[1], v, &w[0], &w[1]);
    } else if (n == 3) {
        gy_vec3 e0 = gy_v3_sub(s[1], s[0]), e1 = gy_v3_sub(s[2], s[0]), p = gy_v3_sub(v, s[0]);
        double d00 = gy_v3_dot(e0, e0), d01 = gy_v3_dot(e0, e1), d11 = gy_v3_dot(e1, e1);
        double d20 = gy_v3_dot(p, e0), d21 = gy_v3_dot(p, e1);
        double den = d00 * d11 - d01 * d01;
        if (den > 0.0) {
            w[1] = (d11 * d20 - d01 * d21) / den;
            w[2] = (d00 * d21 - d01 * d20) / den;
            w[0] = 1.0 - w[1] - w[2];
        }
        gy_vec3 rebuilt = gy_v3_add(gy_v3_scale(s[0], w[0]),
                                    gy_v3_add(gy_v3_scale(s[1], w[1]), gy_v3_scale(s[2], w[2])));
        double scale = fmax(fmax(d00, d11), gy_v3_len_sq(s[0]));
        if (den > 0.0 && gy_v3_len_sq(gy_v3_sub(rebuilt, v)) <= 1e-20 * fmax(scale, 1e-30))
            return;
        double best = INFINITY;
        for (int i = 0; i < 3; i++) {
            int j = (i + 1) % 3, k = (i + 2) % 3;
            double wi, wj;
            segment_weights(s[i], s[j], v, &wi, &wj);
            gy_vec3 q = gy_v3_add(gy_v3_scale(s[i], wi), gy_v3_scale(s[j], wj));
            double err = gy_v3_len_sq(gy_v3_sub(q, v));
            if (err < best) {
                best = err;
                w[i] = wi;
                w[j] = wj;
                w[k] = 0.0;
            }
        }
    }
}

/* GJK: the distance between the cores, with *dir the vector from b's closest point to a's (the
 * Minkowski difference's point nearest the origin: exact even where the closest points, rebuilt
 * from the simplex's weights, are not). */
static double gjk(const gy_convex *a, const gy_convex *b, gy_vec3 *dir, gy_vec3 *on_a,
                  gy_vec3 *on_b)
{
    /* s holds Minkowski-difference vertices, sa and sb the support points that made each; the
     * closest_* helpers keep a subset of s, found again by value to carry sa and sb along. */
    gy_vec3 s[4], sa[4], sb[4], old[4], olda[4], oldb[4];
    int n = 0;
    gy_vec3 v = gy_v3_sub(a->pose.position, b->pose.position);
    if (gy_v3_len_sq(v) == 0.0)
        v = gy_v3(1, 0, 0);
    gy_vec3 pa = gy_convex_support(a, gy_v3_neg(v)), pb = gy_convex_support(b, v);
    v = gy_v3_sub(pa, pb);
    double max_w2 = gy_v3_len_sq(v);
    bool done = false;
    for (int iter = 0; iter < GJK_ITERATIONS && !done; iter++) {
        double vv = gy_v3_len_sq(v);
        if (vv <= 1e-24 * fmax(max_w2, 1.0)) {
            *dir = gy_v3(0, 0, 0);
            return 0.0;
        }
        gy_vec3 wa = gy_convex_support(a, gy_v3_neg(v)), wb = gy_convex_support(b, v);
        gy_vec3 w = gy_v3_sub(wa, wb);
        if (vv - gy_v3_dot(v, w) <= 1e-12 * vv)
            break; /* no support point gets meaningfully closer */
        for (int i = 0; i < n && !done; i++)
            done = gy_v3_len_sq(gy_v3_sub(s[i], w)) <= 1e-24 * fmax(max_w2, 1.0);
        if (done)
            break; /* a repeated vertex: converged as far as doubles go */
        max_w2 = fmax(max_w2, gy_v3_len_sq(w));
        s[n] = w;
        sa[n] = wa;
        sb[n] = wb;
        n++;
        int before = n;
        memcpy(old, s, sizeof s);
        memcpy(olda, sa, sizeof sa);
        memcpy(oldb, sb, sizeof sb);
        switch (n) {
        case 1:
            v = s[0];
            break;
        case 2:
            v = closest_segment(s, &n);
            break;
        case 3:
            v = closest_triangle(s, &n);
            break;
        default:
            v = closest_tetrahedron(s, &n);
            if (n == 4) {
                *dir = gy_v3(0, 0, 0);
                return 0.0;
            }
            break;
        }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < before; j++)
                if (s[i].x == old[j].x && s[i].y == old[j].y && s[i].z == old[j].z) {
                    sa[i] = olda[j];
                    sb[i] = oldb[j];
                    break;
                }
    }
    if (on_a != NULL && on_b != NULL) {
        if (n == 0) {
            *on_a = pa;
            *on_b = pb;
        } else {
            double w[3];
            weights(s, n, v, w);
            *on_a = gy_v3(0, 0, 0);
            *on_b = gy_v3(0, 0, 0);
            for (int i = 0; i < n; i++) {
                *on_a = gy_v3_mad(*on_a, sa[i], w[i]);
                *on_b = gy_v3_mad(*on_b, sb[i], w[i]);
            }
        }
    }
    *dir = v;
    return gy_v3_len(v);
}

double gy_convex_closest(const gy_convex *a, const gy_convex *b, gy_vec3 *on_a, gy_vec3 *on_b)
{
    gy_vec3 dir;
    return gjk(a, b, &dir, on_a, on_b);
}

bool gy_convex_overlap(const gy_convex *a, const gy_convex *b, double tolerance)
{
    return gy_convex_closest(a, b, NULL, NULL) <= a->radius + b->radius + tolerance;
}

bool gy_convex_cast(const gy_convex *a, gy_vec3 translation, const gy_convex *b, double from,
                    double max_fraction, double touch, gy_convex_hit *out)
{
    double length = gy_v3_len(translation);
    gy_vec3 back = length > 0.0 ? gy_v3_scale(translation, -1.0 / length) : gy_v3(0, -1, 0);
    double radii = a->radius + b->radius;
    gy_convex moved = *a;
    double t = from > 0.0 ? from : 0.0;
    for (int step = 0; step < CAST_STEPS; step++) {
        moved.pose.position = gy_v3_mad(a->pose.position, translation, t);
        gy_vec3 pa, pb, dir;
        double dist = gjk(&moved, b, &dir, &pa, &pb);
        double gap = dist - radii;
        if (!(dist > 0.0)) {
            /* Cores meet: only possible from the start (advancement stops short of contact). */
            out->fraction = t;
            out->normal = back;
            out->point = gy_convex_support(b, gy_v3_neg(back));
            return true;
        }
        /* The normal from GJK's own vector: the closest points can be off where its simplex is
         * nearly degenerate, and a wrong normal would read as the gap no longer closing. */
        gy_vec3 n = gy_v3_scale(dir, 1.0 / dist);
        double closing = -gy_v3_dot(translation, n);
        /* Aim half the stopping gap short of contact: advancing by the whole gap can land flat
         * faces exactly on each other, where the cores meet and the contact is lost. */
        double next = closing > 0.0 ? t + (gap - 0.5 * GY_CONVEX_CAST_GAP) / closing : t;
        /* A cast so long that the doubles near t cannot hold a step of the remaining gap (1e-6 m
         * of 1e12 m) has arrived as closely as it can. */
        bool arrived = closing > 0.0 && t > 0.0 && !(next > t);
        if (gap <= (t > 0.0 ? GY_CONVEX_CAST_GAP : touch) || arrived) {
            out->fraction = t;
            out->normal = n;
            out->point = gy_v3_mad(pb, n, b->radius);
            return true;
        }
        if (!(closing > 1e-12 * length))
            return false; /* the gap never shrinks again */
        t = next;
        if (t > max_fraction)
            return false;
    }
    return false;
}
