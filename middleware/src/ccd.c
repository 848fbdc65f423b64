/* Continuous collision: the sweep shared by the adapters (see ccd.h). */
#include "ccd.h"

#include <math.h>

/* Bisections refining the sphere's time of impact: 2^-12 of a step no longer than its radius. */
#define SPHERE_BISECTIONS 12
/* Bound on the body-geometry refinement (each halves the interval; 40 reach 1e-12 of the path,
 * far below GY_ADAPTER_CCD_DEPTH on any path a double can hold). */
#define BODY_BISECTIONS_MAX 60

/* The first fraction of the path from s (length len, direction dir) at which the sphere touches
 * candidate i; negative when it never does. *free_at is the last fraction known free. */
static double sphere_toi(const gy_adapter_ccd_probe *p, uint32_t i, gy_vec3 s, gy_vec3 dir,
                         double len, double radius, double *free_at)
{
    double t_free = 0.0, t_hit = -1.0;
    /* Steps no longer than the radius: the sphere cannot skip any surface the path crosses. */
    int steps = (int)ceil(len / radius);
    for (int k = 1; k <= steps; k++) {
        double t = fmin(len, (double)k * radius);
        if (p->sphere_touches(p->ctx, i, gy_v3_mad(s, dir, t), radius)) {
            t_hit = t;
            break;
        }
        t_free = t;
    }
    if (t_hit < 0.0)
        return -1.0;
    for (int k = 0; k < SPHERE_BISECTIONS; k++) {
        double t = 0.5 * (t_free + t_hit);
        if (p->sphere_touches(p->ctx, i, gy_v3_mad(s, dir, t), radius))
            t_hit = t;
        else
            t_free = t;
    }
    *free_at = t_free / len;
    return t_hit / len;
}

bool gy_adapter_ccd_sweep(const gy_adapter_ccd_probe *p, uint32_t count, gy_vec3 start, gy_vec3 end,
                          double radius, double inner, gy_adapter_ccd_hit *out)
{
    if (!(radius > 0.0))
        return false;
    double best = INFINITY, best_free = 0.0;
    uint32_t hit = UINT32_MAX;
    for (uint32_t i = 0; i < count; i++) {
        /* In the candidate's frame the body starts displaced by the candidate's motion. */
        gy_vec3 s = gy_v3_add(start, p->displacement(p->ctx, i));
        gy_vec3 d = gy_v3_sub(end, s);
        double len = gy_v3_len(d);
        if (!(len > radius))
            continue; /* the discrete step cannot have skipped it */
        if (p->sphere_touches(p->ctx, i, s, radius))
            continue; /* already touching: the discrete solver's business */
        double free_at = 0.0;
        double t = sphere_toi(p, i, s, gy_v3_scale(d, 1.0 / len), len, radius, &free_at);
        if (t >= 0.0 && t < best) {
            best = t;
            best_free = free_at;
            hit = i;
        }
    }
    if (hit == UINT32_MAX)
        return false;

    gy_vec3 moved = p->displacement(p->ctx, hit);
    gy_vec3 s = gy_v3_add(start, moved);
    gy_vec3 d = gy_v3_sub(end, s);
    double len = gy_v3_len(d);
    out->candidate = hit;
    out->fraction = best;
    /* Refine on the body's own shape: first touch lies between a free start and the sphere's
     * hit (the sphere is inside the body). Stop once the overlap along the path is at most
     * GY_ADAPTER_CCD_DEPTH, and place the body on the touching side. */
    double lo = 0.0, hi = best;
    if (!p->body_touches(p->ctx, hit, s) && p->body_touches(p->ctx, hit, gy_v3_mad(s, d, hi))) {
        for (int k = 0; k < BODY_BISECTIONS_MAX && (hi - lo) * len > GY_ADAPTER_CCD_DEPTH; k++) {
            double t = 0.5 * (lo + hi);
            if (p->body_touches(p->ctx, hit, gy_v3_mad(s, d, t)))
                hi = t;
            else
                lo = t;
        }
        out->fraction = hi;
        out->com = gy_v3_mad(s, d, hi);
        out->rewind = gy_v3_scale(moved, hi - 1.0);
        return true;
    }
    /* The body touched the candidate at the start already, or the sphere pokes out of it (a
     * dumbbell): back off from the sphere's hit by the part of the inner sphere it left out. */
    double t = fmax(0.0, best_free - (inner - radius) / len);
    out->fraction = t;
    out->com = gy_v3_mad(s, d, t);
    out->rewind = gy_v3_scale(moved, t - 1.0);
    return true;
}
