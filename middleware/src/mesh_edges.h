/* Internal edges of triangle meshes: which edges may push a body with a normal of their own, and
 * the correction every adapter applies to a contact against a mesh triangle. Two triangles that
 * meet flat (or in a valley) form a surface that a body slides over as over one plane, but a
 * narrow phase that sees one triangle at a time finds the shared edge and pushes the body back
 * from it ("ghost collisions": a box sliding across a tessellated floor slows at every edge, or
 * catches one and stops). An edge is active when it is on the mesh's boundary or is a convex ridge
 * sharper than GY_ADAPTER_EDGE_COPLANAR_COS; a contact whose closest feature on its triangle is the
 * inside of the face or inactive edges only takes the face normal. Built once per mesh resource;
 * read-only afterwards, so any thread may read it. Private to middleware/, plain C. */
#ifndef GYRE_MESH_EDGES_H
#define GYRE_MESH_EDGES_H

#include <stdbool.h>
#include <stdint.h>

#include "gyre/backend/backend.h"
#include "gyre/core.h"
#include "gyre/math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Neighbouring faces closer to parallel than this (cos 5°) meet flat: their edge is inactive. */
#define GY_ADAPTER_EDGE_COPLANAR_COS 0.9961946980917455

/* A mesh's triangles with their face normals and active edges. */
typedef struct gy_adapter_mesh_edges {
    gy_vec3 *vertices; /* copied from the definition (mesh frame) */
    uint32_t *indices; /* 3 per triangle */
    gy_vec3 *normals;  /* unit (v1 − v0) × (v2 − v0) per triangle; zero when degenerate */
    uint8_t *active;   /* per triangle: bit k set when edge k (corner k to corner k + 1) is */
    uint32_t vertex_count, triangle_count;
} gy_adapter_mesh_edges;

/* Builds the edge data of a valid mesh definition (gy_validate_mesh_def), its edges classified by
 * gy_mesh_classify_edges' classifier. Vertices at the same position count as one, so a triangle
 * soup gets its adjacency too. GY_ERR_OUT_OF_MEMORY leaves *out empty. */
gy_result gy_adapter_mesh_edges_build(const gy_allocator *al, const gy_mesh_def *def,
                                      gy_adapter_mesh_edges *out);

/* As gy_adapter_mesh_edges_build, with the active edges given (gy_backend.mesh_create_piece);
 * NULL classifies them from this mesh alone. */
gy_result gy_adapter_mesh_edges_build_piece(const gy_allocator *al, const gy_mesh_def *def,
                                            const uint8_t *active_edges,
                                            gy_adapter_mesh_edges *out);

/* Frees what gy_adapter_mesh_edges_build made (an empty record is fine). */
void gy_adapter_mesh_edges_free(const gy_allocator *al, gy_adapter_mesh_edges *e);

/* A contact on triangle `tri` at `point` with unit `*normal` from the mesh towards the other body
 * (both in the mesh frame): when the contact lies on the face's inside or on inactive edges and
 * its normal is not the face normal, *normal becomes the face normal and the answer is true.
 * Contacts from behind the face, on active edges, or naming no triangle are left alone. */
bool gy_adapter_mesh_edges_fix_normal(const gy_adapter_mesh_edges *e, int64_t tri, gy_vec3 point,
                                      gy_vec3 *normal);

#ifdef __cplusplus
}
#endif

#endif
