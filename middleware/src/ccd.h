/* Continuous collision, the policy every adapter applies after a substep's solve: a fast body is
 * swept from where it started the substep to where the solve left it, against every candidate
 * collider in that collider's own frame (its motion over the substep subtracted), so two fast
 * bodies closing on each other meet as surely as a fast body and a wall. On a hit the body is put
 * back where it first touches, overlapping by at most GY_ADAPTER_CCD_DEPTH, with its velocity
 * untouched: the next substep's contacts find the pair, the solver exchanges momentum with
 * restitution as for any other contact, and the pair is reported like any other.
 *
 * The adapter answers geometric questions through gy_adapter_ccd_probe; the sweep decides what
 * to ask. Private to middleware/, plain C. */
#ifndef GYRE_CCD_H
#define GYRE_CCD_H

#include <stdbool.h>
#include <stdint.h>

#include "gyre/math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How far past first touch (m, along the path) a body may be placed: the next substep's
 * narrow phase needs an overlap to see the pair, and its push-out speed (ERP × depth / h,
 * about 0.02 m/s at 60 Hz) stays negligible. */
#define GY_ADAPTER_CCD_DEPTH 1e-3

/* The adapter's answers about candidate `i` (an index into its own list). */
typedef struct gy_adapter_ccd_probe {
    void *ctx;
    /* Whether a sphere of `radius` centred at `center` touches candidate i, as it is now. */
    bool (*sphere_touches)(void *ctx, uint32_t i, gy_vec3 center, double radius);
    /* Whether the swept body's solid colliders touch candidate i with the body's centre of mass
     * at `com` (its rotation as now). */
    bool (*body_touches)(void *ctx, uint32_t i, gy_vec3 com);
    /* How far candidate i's body moved in this substep (zero for statics and sleepers). */
    gy_vec3 (*displacement)(void *ctx, uint32_t i);
} gy_adapter_ccd_probe;

/* The result of a sweep that hit. The two touch at the time of impact: a dynamic candidate is put
 * back there too (moved by `rewind`, the part of its substep's motion after it) and the body at
 * com + rewind. A static or kinematic candidate stays where it is and the body goes to `com`,
 * touching it there. */
typedef struct gy_adapter_ccd_hit {
    uint32_t candidate;
    double fraction; /* of the substep, at first touch */
    gy_vec3 com;     /* the body's centre of mass, touching the candidate where it is now */
    gy_vec3 rewind;  /* −(1 − fraction) × the candidate's displacement */
} gy_adapter_ccd_hit;

/* Sweeps a sphere of `radius` (inside the body; GY_ADAPTER_CCD_SHRINK of `inner`, the body's
 * inner radius) from `start` to `end` (the body's centre of mass at the substep's start and now)
 * against `count` candidates. A candidate the sphere already touches at the start (in its frame)
 * is left to the discrete solver, as is one the body moves less than `radius` relative to.
 * Returns true with the earliest hit; never allocates. */
bool gy_adapter_ccd_sweep(const gy_adapter_ccd_probe *p, uint32_t count, gy_vec3 start, gy_vec3 end,
                          double radius, double inner, gy_adapter_ccd_hit *out);

#ifdef __cplusplus
}
#endif

#endif
