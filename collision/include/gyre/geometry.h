/* Backend-neutral geometry: convex hulls and mass properties. Adapters use these so that every
 * middleware gives a body the same mass, centre of mass and inertia for the same colliders.
 *
 * Threading: pure functions; call from any thread. */
#ifndef GYRE_GEOMETRY_H
#define GYRE_GEOMETRY_H

#include "gyre/shape.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A convex hull built from a point cloud: triangles wound counter-clockwise seen from outside, and
 * one outward plane per triangle (coplanar triangles are not merged). */
typedef struct gy_hull {
    gy_vec3 *vertices; /* hull vertices (a subset of the input points) */
    uint32_t vertex_count;
    uint32_t *triangles; /* 3 indices into vertices per triangle */
    uint32_t triangle_count;
    double (*planes)[4]; /* per triangle: nx, ny, nz, d with dot(n, p) = d on the plane */
    gy_vec3 centroid;    /* centre of volume */
    double volume;       /* m³ */
} gy_hull;

/* Builds the convex hull of `count` points in one go (gy_hull_build_begin, then finish) (≥ 4,
 * finite, not all coplanar) with `allocator` (NULL: the default allocator). Points closer than
 * ~1e-9 × the cloud's extent to the hull's surface do not become vertices; duplicates are merged.
 * Returns GY_ERR_INVALID_MESH for degenerate input (coplanar or collinear points, too few),
 * GY_ERR_NON_FINITE, GY_ERR_INVALID_ARGUMENT (NULL out or points), or GY_ERR_OUT_OF_MEMORY; *out is
 * untouched on failure. */
gy_result gy_hull_build(const gy_allocator *allocator, const gy_vec3 *points, uint32_t count,
                        gy_hull *out);

/* A hull build in progress: gy_hull_build's work cut into slices a caller runs one at a time (the
 * physics thread builds runtime hulls this way under its per-tick geometry budget). The slices
 * give the one-shot build's hull exactly, vertex for vertex and face for face. */
typedef struct gy_hull_builder gy_hull_builder;

/* Starts building the hull of `count` points with `allocator` (NULL: the default allocator).
 * The points must stay readable and unchanged until the build is finished or cancelled; they are
 * checked by the slices, in gy_hull_build's order. Returns GY_ERR_INVALID_ARGUMENT (NULL points or
 * out) or GY_ERR_OUT_OF_MEMORY, with *out NULL. */
gy_result gy_hull_build_begin(const gy_allocator *allocator, const gy_vec3 *points, uint32_t count,
                              gy_hull_builder **out);

/* Does about `units` units of the build and adds the units done to *done_units (when non-NULL);
 * true once the build is done (built or failed: gy_hull_build_finish tells which). A unit is a
 * point visited by a pass, a face a point is measured against, or a triangle copied out; a slice
 * stops once it has spent `units`, so it goes over by at most one item: one added point's cone
 * (3 units a face it sees, 2 h² + h for a horizon of h edges) or one pending point measured
 * against the faces of the newest cone (1 unit and a unit a face); in practice a few hundred
 * units (233 at most for a 16,384-point sphere cut flat, run in slices of 1 unit). A cloud of n
 * points all on its hull (a sphere) costs about 1.5 n² units, a cloud of mostly inner points about
 * 50 n. NULL: true. */
bool gy_hull_build_run(gy_hull_builder *b, uint64_t units, uint64_t *done_units);

/* Ends a build: runs whatever is left (none once gy_hull_build_run returned true), moves the hull
 * to *out and frees the builder. Returns the build's result, gy_hull_build's errors; *out is
 * untouched on failure, and the builder is freed either way (GY_ERR_INVALID_ARGUMENT: b NULL, or
 * out NULL). */
gy_result gy_hull_build_finish(gy_hull_builder *b, gy_hull *out);

/* Drops a build at any point, freeing everything it allocated. NULL is ignored. */
void gy_hull_build_cancel(gy_hull_builder *b);

/* Whether gy_hull_build would build the hull of these points, in time linear in their count: the
 * same errors (GY_ERR_INVALID_MESH, GY_ERR_NON_FINITE, GY_ERR_INVALID_ARGUMENT) but for running
 * out of memory while the hull grows. */
gy_result gy_hull_check(const gy_allocator *allocator, const gy_vec3 *points, uint32_t count);

/* Copies a built hull into *out with `allocator` (NULL: the default): GY_ERR_INVALID_ARGUMENT for
 * a NULL or empty hull or out, GY_ERR_OUT_OF_MEMORY (then *out is untouched). */
gy_result gy_hull_copy(const gy_allocator *allocator, const gy_hull *hull, gy_hull *out);

/* Frees what gy_hull_build allocated (with the same allocator) and zeroes *hull. */
void gy_hull_free(const gy_allocator *allocator, gy_hull *hull);

/* Clips the line o + t·d by a hull's face planes (all in the hull's frame): the one ray-versus-
 * hull test. False when the line misses; otherwise the entry and exit parameters and the faces
 * they cross (UINT32_MAX when the line never crosses into one, i.e. t is infinite). */
bool gy_hull_clip_line(const gy_hull *h, gy_vec3 o, gy_vec3 d, double *t_in, uint32_t *f_in,
                       double *t_out, uint32_t *f_out);

/* Where the line o + t·d crosses a solid primitive given in its own frame: the parameters at
 * which it enters and leaves and the outward normals there (unit; zero where t is infinite, i.e.
 * the line runs parallel to a side it never crosses). d need not be unit: t counts lengths of d.
 * These are Gyre's one set of ray-versus-shape tests: the query snapshot and the drivers' live
 * queries all answer rays through them. */
typedef struct gy_line_span {
    double t_in, t_out;
    gy_vec3 n_in, n_out;
} gy_line_span;

/* A sphere of radius r about the origin. False when the line misses. */
bool gy_line_sphere(gy_vec3 o, gy_vec3 d, double r, gy_line_span *out);

/* A box of half extents `half` about the origin. */
bool gy_line_box(gy_vec3 o, gy_vec3 d, gy_vec3 half, gy_line_span *out);

/* A capsule along Y: radius r around the core segment from y = -half_core to y = half_core. */
bool gy_line_capsule(gy_vec3 o, gy_vec3 d, double r, double half_core, gy_line_span *out);

/* A cylinder along Y of radius r between y = -half_height and y = half_height. */
bool gy_line_cylinder(gy_vec3 o, gy_vec3 d, double r, double half_height, gy_line_span *out);

/* A hull (gy_hull_clip_line, with the faces' normals); false too when the line never enters or
 * never leaves through a face. */
bool gy_line_hull(gy_vec3 o, gy_vec3 d, const gy_hull *h, gy_line_span *out);

/* The hit of a ray (t from 0 to t_max) on a span: its entry. A ray that starts inside the solid
 * hits nothing unless `from_inside`, when it reports where it leaves with the normal turned back
 * along the ray (the convention of ODE's ray tests, kept by the live queries). */
bool gy_line_span_hit(const gy_line_span *s, double t_max, bool from_inside, double *t, gy_vec3 *n);

/* Mass properties of a solid: mass, centre of mass (in the frame the shape was given in) and the
 * inertia tensor about that centre of mass. */
typedef struct gy_mass {
    double mass;
    gy_vec3 center;
    gy_mat3 inertia;
} gy_mass;

/* Volume of a shape in m³. Planes and meshes have no volume (returns 0). Hulls need `hull`.
 * Invalid parameters (non-finite, non-positive sizes, a missing hull) give 0. */
double gy_shape_volume(const gy_shape *shape, const gy_hull *hull);

/* Mass properties of a shape of uniform `density` (kg/m³) in its own local frame (capsules and
 * cylinders along Y). `hull` is required for GY_SHAPE_HULL and ignored otherwise. Planes, meshes,
 * invalid parameters and a non-finite or non-positive density give zero mass and inertia. */
gy_mass gy_shape_mass(const gy_shape *shape, const gy_hull *hull, double density);

/* Moves mass properties into a parent frame by `pose` (rotates the tensor, moves the centre). */
gy_mass gy_mass_transform(gy_mass m, gy_pose pose);

/* Combines two bodies of mass with the parallel-axis theorem about their joint centre of mass.
 * When both are massless the tensors are summed and the centre is a's. */
gy_mass gy_mass_add(gy_mass a, gy_mass b);

/* Scales mass and inertia to a total mass (centre unchanged). A zero-mass input stays unchanged. */
gy_mass gy_mass_scale_to(gy_mass m, double total);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_GEOMETRY_H */
