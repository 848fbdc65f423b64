/* A cache of parsed OBJ files shared across scene loads, so loading (streaming) the same cell
 * twice parses its mesh once.
 *
 * Entries are keyed by the resolved path plus the file's size and modification time when it was
 * looked up: a file rewritten since (a different size or mtime) is parsed again into a new entry,
 * and the old entry lives on for whoever still holds it. Entries are reference counted: each
 * acquire adds one, each release drops one, and an entry is freed when its last holder releases
 * it. The cache object is reference counted too (its creator holds one reference, every entry
 * holds one), so a scene may outlive the World that owns the cache.
 *
 * Each World owns one (gy_world_obj_cache); gy_scene_load_file_cached uses it.
 *
 * Threading: every call may be made from any thread; a mutex guards the table (parsing happens
 * outside it). */
#ifndef GYRE_OBJ_CACHE_H
#define GYRE_OBJ_CACHE_H

#include "gyre/obj.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gy_obj_cache gy_obj_cache;

/* Counters for diagnostics. */
typedef struct gy_obj_cache_stats {
    uint64_t parses;  /* files read and parsed (successfully or not) */
    uint64_t hits;    /* acquires answered from a live entry */
    uint32_t entries; /* live entries (each held by at least one user) */
    uint64_t bytes;   /* vertex and index bytes held by live entries */
} gy_obj_cache_stats;

/* Creates an empty cache holding one reference (NULL allocator: default). GY_ERR_INVALID_ARGUMENT
 * for NULL out, GY_ERR_OUT_OF_MEMORY, GY_ERR_IO when its mutex cannot be created. */
gy_result gy_obj_cache_create(const gy_allocator *allocator, gy_obj_cache **out);

/* Adds a reference to the cache (NULL is ignored). */
void gy_obj_cache_retain(gy_obj_cache *cache);

/* Drops a reference; the cache is freed with its last one (NULL is ignored). */
void gy_obj_cache_release(gy_obj_cache *cache);

/* The parsed mesh of the file at `path` (`name` for messages, NULL: the path), parsing it when no
 * live entry has the same path, size and mtime. On GY_OK *out points at the entry's mesh, valid
 * until the matching gy_obj_cache_unref. Failures are gy_obj_load_file's (with its message in
 * `error`); a failed parse is not cached. GY_ERR_INVALID_ARGUMENT for NULL cache, path or out. */
gy_result gy_obj_cache_acquire(gy_obj_cache *cache, const char *path, const char *name,
                               const gy_obj_mesh **out, char *error, size_t error_size);

/* Releases one hold on a mesh from gy_obj_cache_acquire (NULL is ignored; a mesh the cache does
 * not hold returns GY_ERR_INVALID_ARGUMENT and changes nothing). */
gy_result gy_obj_cache_unref(gy_obj_cache *cache, const gy_obj_mesh *mesh);

/* Current counters; zeroes for NULL. */
gy_obj_cache_stats gy_obj_cache_get_stats(gy_obj_cache *cache);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_OBJ_CACHE_H */
