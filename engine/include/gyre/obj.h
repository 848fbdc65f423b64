/* Wavefront OBJ geometry for hull and mesh colliders.
 *
 * Only what collision needs is read: `v` lines (positions; an optional w or vertex colours after
 * x y z are ignored) and `f` lines (polygons triangulated as fans; `i`, `i/t`, `i//n` and `i/t/n`
 * forms; 1-based indices, negative ones counting back from the last vertex defined so far). Every
 * other statement (vt, vn, o, g, s, usemtl, mtllib, l, p, ...) is ignored. A face may only use
 * vertices defined above it.
 *
 * Threading: pure functions over their arguments; call from any thread. */
#ifndef GYRE_OBJ_H
#define GYRE_OBJ_H

#include "gyre/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest OBJ file read, in bytes. */
#define GY_OBJ_MAX_FILE_BYTES (64u * 1024u * 1024u)

/* Triangles from an OBJ file. Both arrays are allocated with the allocator given to the loader,
 * sized exactly (vertex_count and index_count elements); either is NULL when its count is 0. */
typedef struct gy_obj_mesh {
    gy_vec3 *vertices; /* metres, as written in the file */
    uint32_t vertex_count;
    uint32_t *indices; /* 0-based, 3 per triangle, each < vertex_count */
    uint32_t index_count;
} gy_obj_mesh;

/* Parses OBJ text of `length` bytes (need not be NUL-terminated). `name` is used in messages
 * (NULL: "(obj)"). On failure *out is untouched and, when `error` is non-NULL, it receives one
 * message `name:line: what` (truncated to error_size). Returns GY_OK, GY_ERR_PARSE (malformed line
 * or index out of range), GY_ERR_NON_FINITE (a coordinate overflows or is nan/inf),
 * GY_ERR_CAPACITY (more than 2^32 - 1 vertices or indices), GY_ERR_OUT_OF_MEMORY or
 * GY_ERR_INVALID_ARGUMENT (NULL text with a non-zero length, or NULL out). */
gy_result gy_obj_parse(const char *text, size_t length, const char *name,
                       const gy_allocator *allocator, gy_obj_mesh *out, char *error,
                       size_t error_size);

/* Reads and parses the file at `path`. `name` is used in messages (NULL: the path). Besides
 * gy_obj_parse's results: GY_ERR_IO when the file cannot be opened or read (the message names
 * `name`, the path when it differs, and the reason), GY_ERR_CAPACITY when it is larger than
 * GY_OBJ_MAX_FILE_BYTES. */
gy_result gy_obj_load_file(const char *path, const char *name, const gy_allocator *allocator,
                           gy_obj_mesh *out, char *error, size_t error_size);

/* Frees the arrays (with the allocator that loaded them; NULL: default) and zeroes *mesh. */
void gy_obj_mesh_free(const gy_allocator *allocator, gy_obj_mesh *mesh);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_OBJ_H */
