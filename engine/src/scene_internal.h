/* Scene loading internals shared by scene_json.c (arena, errors, paths, typed reads),
 * scene_load.c (entry points, top level),
 * scene_entities.c (entities, physics, hierarchy), scene_colliders.c and scene_script.c (joints,
 * script).
 * Internal cross-file helpers carry the gy_scn_ prefix. */
#ifndef GYRE_ENGINE_SCENE_INTERNAL_H
#define GYRE_ENGINE_SCENE_INTERNAL_H

#include <cjson/cJSON.h>

#include "gyre/array.h"
#include "gyre/hash_map.h"
#include "gyre/obj.h"
#include "gyre/obj_cache.h"
#include "gyre/scene.h"

/* ---- arena: every byte of a description, released in one go ---------------------------------- */

typedef struct gy_scn_block gy_scn_block;
typedef struct gy_scn_adopted gy_scn_adopted;

typedef struct gy_scn_arena {
    const gy_allocator *a;
    gy_scn_block *blocks;
    gy_scn_adopted *adopted; /* separately allocated arrays the arena frees too */
    unsigned char *cur;
    size_t left;
} gy_scn_arena;

/* Zeroed, 16-byte aligned; NULL when out of memory (or the size overflows). */
void *gy_scn_arena_alloc(gy_scn_arena *ar, size_t size);
/* count × size with an overflow check. */
void *gy_scn_arena_array(gy_scn_arena *ar, size_t count, size_t size);
char *gy_scn_arena_strdup(gy_scn_arena *ar, const char *s);
/* Takes ownership of `ptr` (allocated with ar->a, `size` bytes); on failure frees it at once. */
bool gy_scn_arena_adopt(gy_scn_arena *ar, void *ptr, size_t size);
void gy_scn_arena_release(gy_scn_arena *ar);

/* ---- name → index map (keys borrowed from the cJSON tree) ------------------------------------ */

/* One name: names whose hashes are equal chain through `next`. */
typedef struct gy_scn_name {
    const char *key;
    int32_t value;
    uint32_t next; /* index of the next name with the same hash, or UINT32_MAX */
} gy_scn_name;

GY_ARRAY_DEFINE(gy_scn_name_array, gy_scn_name)

typedef struct gy_scn_names {
    const gy_allocator *a;
    gy_scn_name_array names; /* in insertion order */
    gy_hash_map first;       /* 64-bit hash of a name -> index of the first name with it */
} gy_scn_names;

/* Sized for `expected` names; false when out of memory. */
bool gy_scn_names_init(gy_scn_names *m, const gy_allocator *a, uint32_t expected);
void gy_scn_names_free(gy_scn_names *m);
int32_t gy_scn_names_find(const gy_scn_names *m, const char *key);
/* Inserts key → value unless present; returns the existing value, or -1 when inserted. Never
 * grows: init with room for every name (a name beyond that is not stored). */
int32_t gy_scn_names_put(gy_scn_names *m, const char *key, int32_t value);

/* ---- the loader ------------------------------------------------------------------------------ */

#define GY_SCN_PATH_MAX 768u

/* An OBJ file read once per load, shared by every collider that names it. */
typedef struct gy_scn_obj_cache {
    struct gy_scn_obj_cache *next;
    const char *resolved;    /* arena */
    gy_obj_mesh mesh;        /* arrays adopted by the arena, or the shared cache's (see held) */
    const gy_obj_mesh *held; /* the shared cache's entry this load holds, or NULL */
    gy_result result;
    const char *error; /* arena copy of the loader's message when result != GY_OK */
} gy_scn_obj_cache;

typedef struct gy_scn_loader {
    const gy_allocator *a;
    gy_scn_arena arena;
    gy_scene *scene;
    gy_scene_errors *errors;
    bool oom;
    char path[GY_SCN_PATH_MAX];
    size_t path_len;
    const char *base_dir; /* "" for the current directory */
    gy_scn_names entity_names;
    gy_scn_names material_names;
    gy_scn_obj_cache *objs;
    gy_obj_cache *cache; /* shared across loads, or NULL: parse every file here */
} gy_scn_loader;

/* What a loaded gy_scene owns (its internal_): the arena, and its holds on shared meshes. */
typedef struct gy_scn_owned {
    gy_scn_arena arena;
    gy_obj_cache *cache; /* one reference while objs holds entries; NULL without a cache */
    gy_scn_obj_cache *objs;
} gy_scn_owned;

/* The accepted ranges (gyre/backend/backend.h), checked where a number was written: false (and an
 * error at `key`) when v is outside [lo, hi], or a component of `v3` beyond `limit`. */
bool gy_scn_in_range(gy_scn_loader *L, const char *key, double v, double lo, double hi);
bool gy_scn_vec3_within(gy_scn_loader *L, const char *key, gy_vec3 v, double limit);

/* Errors recorded so far (to tell whether a part of the file added any). */
uint32_t gy_scn_error_count(const gy_scn_loader *L);

/* Outcome of reading one optional field. */
typedef enum gy_scn_got { GY_SCN_ABSENT, GY_SCN_OK, GY_SCN_BAD } gy_scn_got;

/* Path stack: push returns a mark to pop back to. Keys longer than 64 bytes are shortened. */
size_t gy_scn_push_key(gy_scn_loader *L, const char *key);
size_t gy_scn_push_index(gy_scn_loader *L, size_t index);
void gy_scn_pop(gy_scn_loader *L, size_t mark);

/* Records an error at the current path (or the path plus `key` when key is non-NULL). */
void gy_scn_error(gy_scn_loader *L, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Records an error with an explicit path (file-level problems). */
void gy_scn_error_path(gy_scn_loader *L, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A short description of a JSON value for messages: `"text"` (shortened), a number, `true`,
 * `an array`, ... */
const char *gy_scn_describe(const cJSON *v, char *buf, size_t size);
const char *gy_scn_type_name(const cJSON *v);

/* Checks an object's keys against one or two allowed lists: unknown keys (except x_*) and
 * duplicates are errors. The current path must be the object's. */
void gy_scn_check_keys(gy_scn_loader *L, const cJSON *obj, const char *const *allowed, size_t n,
                       const char *const *allowed2, size_t n2);

/* Typed reads of obj[key]; on GY_SCN_BAD the error is already recorded at path.key. */
gy_scn_got gy_scn_number(gy_scn_loader *L, const cJSON *obj, const char *key, double *out);
gy_scn_got gy_scn_integer(gy_scn_loader *L, const cJSON *obj, const char *key, double lo, double hi,
                          double *out);
gy_scn_got gy_scn_uint32(gy_scn_loader *L, const cJSON *obj, const char *key, uint32_t *out);
gy_scn_got gy_scn_bool(gy_scn_loader *L, const cJSON *obj, const char *key, bool *out);
gy_scn_got gy_scn_string(gy_scn_loader *L, const cJSON *obj, const char *key, const char **out);
gy_scn_got gy_scn_vec3(gy_scn_loader *L, const cJSON *obj, const char *key, gy_vec3 *out);
/* A quaternion [x, y, z, w], normalised; zero length is an error. */
gy_scn_got gy_scn_quat(gy_scn_loader *L, const cJSON *obj, const char *key, gy_quat *out);
/* `key` (quaternion) or `key_euler` (degrees, Y then X then Z); both given is an error. */
gy_scn_got gy_scn_rotation(gy_scn_loader *L, const cJSON *obj, const char *key,
                           const char *euler_key, gy_quat *out);
/* A number that must satisfy lo < v (or lo <= v when inclusive); error names the bound. */
gy_scn_got gy_scn_number_min(gy_scn_loader *L, const cJSON *obj, const char *key, double lo,
                             bool inclusive, double *out);
/* One of `names` (count n); *out receives its index. */
gy_scn_got gy_scn_enum(gy_scn_loader *L, const cJSON *obj, const char *key,
                       const char *const *names, size_t n, int *out);
/* A single value (not a field) as a vec3 at the current path; false after recording an error. */
bool gy_scn_value_vec3(gy_scn_loader *L, const cJSON *v, gy_vec3 *out);

/* Joins base_dir and a relative path into the arena (absolute paths are copied). */
const char *gy_scn_resolve(gy_scn_loader *L, const char *rel);

/* Loads (or finds in the per-load cache) an OBJ file; NULL on failure after recording an error at
 * the current path + key, or when out of memory. */
const gy_scn_obj_cache *gy_scn_load_obj(gy_scn_loader *L, const char *key, const char *rel);

/* ---- colliders (scene_colliders.c) ----------------------------------------------------------- */

#define GY_SCN_COLLIDER_KEY_COUNT 25u
/* Every collider key; the first 9 are shape-specific. */
extern const char *const gy_scn_collider_keys[GY_SCN_COLLIDER_KEY_COUNT];
extern const char *const gy_scn_body_type_names[GY_BODY_TYPE_COUNT];

/* What a collider needs to know about its body. */
typedef struct gy_scn_collider_ctx {
    gy_body_type body_type;
    bool character; /* Capsule forced, radius 0.3 and height 1.8 by default */
} gy_scn_collider_ctx;

/* One collider from `c` (an element of `colliders`, or the physics object itself for the inline
 * collider; the caller checked the keys). *volume receives its volume in m³ (0 for planes, meshes
 * and invalid shapes). */
void gy_scn_load_collider(gy_scn_loader *L, const cJSON *c, const gy_scn_collider_ctx *ctx,
                          gy_scene_collider *out, double *volume);

uint32_t gy_scn_array_count(const cJSON *v);
bool gy_scn_has_key(const cJSON *obj, const char *key);

/* The passes, in order. Each records errors and keeps going. */
void gy_scn_load_entities(gy_scn_loader *L, const cJSON *entities);
void gy_scn_check_hierarchy(gy_scn_loader *L);
void gy_scn_load_joints(gy_scn_loader *L, const cJSON *joints);
void gy_scn_load_script(gy_scn_loader *L, const cJSON *script);

/* Looks up an entity name at obj[key] (required unless `optional`); -1 after an error or when
 * absent. */
int32_t gy_scn_entity_ref(gy_scn_loader *L, const cJSON *obj, const char *key, bool optional,
                          bool *present);

#endif
