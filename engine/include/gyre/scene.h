/* Scene files (`gyre.scene` version 1, see docs/scene-format.md): parsing and validation into an
 * in-memory description that the engine instantiates.
 *
 * Loading validates everything first and reports every error found (up to GY_SCENE_MAX_ERRORS),
 * each as a JSON path plus a message, printable as `path: message`. A scene with any error yields
 * no description at all. Referenced OBJ files are read during loading; `spawn` scene files are not
 * (only checked to be readable), so a scene may spawn itself.
 *
 * The description is plain data: every default applied, every name resolved to an index, every
 * angle in radians, every quaternion unit length, materials and per-collider overrides folded into
 * each collider. It is one block of memory owned by the gy_scene; gy_scene_free releases it.
 *
 * Threading: loading touches only its arguments (and the files named); call from any thread. A
 * loaded gy_scene is immutable and may be read from several threads. */
#ifndef GYRE_SCENE_H
#define GYRE_SCENE_H

#include <stdio.h>

#include "gyre/types.h"
#include "gyre/core.h"
#include "gyre/obj_cache.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- limits ---------------------------------------------------------------------------------- */

/* Largest scene file read, in bytes. */
#define GY_SCENE_MAX_FILE_BYTES (64u * 1024u * 1024u)
/* Deepest JSON nesting accepted (a scene itself needs about 10 levels; the rest is for x_ data).
 * Checked before cJSON sees the text, so a deep document costs no recursion at all. */
#define GY_SCENE_MAX_DEPTH 256u
/* Most JSON values (scalars and containers) accepted, bounding the parser's memory
 * (~80 bytes per value). Large meshes belong in OBJ files. */
#define GY_SCENE_MAX_VALUES 4000000u
/* Errors kept in a gy_scene_errors; further ones are only counted. */
#define GY_SCENE_MAX_ERRORS 1000u

/* ---- errors ---------------------------------------------------------------------------------- */

/* One problem: `path` is a JSON path such as `entities[3].components.physics.mass`, or for
 * problems with the file itself (unreadable, malformed JSON) the file name, with `:line:column`
 * where one is known. */
typedef struct gy_scene_error {
    const char *path;
    const char *message;
} gy_scene_error;

typedef struct gy_scene_errors {
    gy_scene_error *items; /* in the order found: document order within each pass */
    uint32_t count;        /* items kept */
    uint32_t total;        /* errors found; more than count once GY_SCENE_MAX_ERRORS is reached */
    /* private */
    const gy_allocator *allocator_;
    uint32_t capacity_;
} gy_scene_errors;

/* Writes `path: message` (NUL-terminated, truncated to size) and returns the full length, like
 * snprintf. */
size_t gy_scene_error_format(const gy_scene_error *error, char *buf, size_t size);

/* Prints every error as `prefix` + `path: message` + newline, then a line counting any that were
 * not kept. `prefix` may be NULL. */
void gy_scene_errors_print(const gy_scene_errors *errors, FILE *out, const char *prefix);

/* Frees an error list (NULL is fine). */
void gy_scene_errors_free(gy_scene_errors *errors);

/* ---- the description ------------------------------------------------------------------------- */

/* World settings from the `physics` object, defaults applied. */
typedef struct gy_scene_world {
    gy_vec3 gravity;            /* m/s², default {0, -9.81, 0} */
    double step_hz;             /* 10..1000, default 60 */
    uint32_t substeps;          /* 1..16, default 1 */
    uint32_t solver_iterations; /* 1..255, default 10 */
    const char *backend;        /* adapter name, or NULL when the scene names none (use "ode") */
    bool has_kill_y;            /* a kill plane (default none) */
    double kill_y;              /* metres: see gy_world_def.kill_y */
    uint32_t geometry_budget;   /* units per tick (gy_physics_def.geometry_budget); 0 = default */
} gy_scene_world;

/* A named material as written (unnamed keys filled from the default material). */
typedef struct gy_scene_material {
    const char *name;
    gy_material material;
} gy_scene_material;

/* The one body type of the public API: scene files ("body_type") and the World's physics
 * component (gy_physics_component_def.body_type) both use it. */
typedef enum gy_body_type {
    GY_BODY_DYNAMIC,
    GY_BODY_STATIC,
    GY_BODY_KINEMATIC,
    GY_BODY_TRIGGER, /* a static body whose colliders are all sensors */
    GY_BODY_TYPE_COUNT
} gy_body_type;

/* One collider. `def` is ready for the middleware except for hull and mesh shapes, whose
 * `def.shape.resource` is null: the engine creates the resource from the geometry below (colliders
 * that name the same OBJ file share the same arrays, so pointer equality finds sharing).
 * Material, per-collider friction/restitution overrides and a Trigger's sensor flag are already
 * applied to `def`. Plane normals are unit length (offset rescaled to match). */
typedef struct gy_scene_collider {
    gy_collider_def def;
    const char *material;    /* the `materials` name used, or NULL for the default material */
    const char *collision;   /* the OBJ file's resolved path, or NULL */
    const gy_vec3 *vertices; /* Hull: its points; Mesh: its vertices; NULL for other shapes */
    uint32_t vertex_count;
    const uint32_t *indices; /* Mesh only: 3 per triangle, each < vertex_count */
    uint32_t index_count;
} gy_scene_collider;

/* A collider of `shape` (gyre/world_physics.h has gy_sphere, gy_box, gy_capsule) with
 * gy_default_collider_def()'s settings, no material name, no OBJ file and no inline geometry. */
gy_scene_collider gy_default_scene_collider(gy_shape shape);

/* The `components.physics` object. */
typedef struct gy_scene_physics {
    gy_body_type body_type; /* Kinematic for a character controller */
    bool is_active;         /* the component switch; default true */
    /* Middleware-ready body: type from body_type (Trigger → Static), velocities, damping, gravity
     * factor, sleeping, continuous, locks. `pose` is identity: the engine sets the world pose.
     * `mass` is 0 for "from the colliders' volume" unless the file gave one; when only
     * `mass_properties` was given, mass is already derived from the colliders' volume at
     * 1000 kg/m³ × density (sensors excluded unless all are sensors; 1 kg without volume). */
    gy_body_def body;
    /* A Dynamic body created asleep (at every creation): it stays put, even in mid-air, until it
     * is touched, pushed, written to or woken; no sleep event for it. Default false. */
    bool start_asleep;
    bool is_character;  /* is_character_controller */
    double max_slope;   /* radians, 0 < max_slope < π/2, default 45° (stored for every body) */
    double step_offset; /* metres ≥ 0, default 0.3 */
    gy_scene_collider *colliders; /* the inline collider first, then `colliders` in order */
    uint32_t collider_count;
} gy_scene_physics;

typedef struct gy_scene_entity {
    const char *name; /* unique within the scene */
    bool active;      /* the entity's own flag; default true */
    int32_t parent;   /* index into gy_scene.entities, or -1 (parents may come after children) */
    gy_vec3 position; /* local to the parent, metres */
    gy_quat rotation; /* local, unit length */
    gy_vec3 scale;    /* render scale only; default {1, 1, 1} */
    gy_scene_physics *physics; /* NULL: no physics component */
} gy_scene_entity;

/* A joint. `def` is middleware-ready except for the body handles (null: the engine fills them
 * from a and b): type, world-space anchor, unit axis (default {0, 1, 0}), limits in radians
 * (Hinge) or metres (Slider), distance (-1 = at creation), breakable and break_force (N), motor
 * (target in radians, rad/s, metres or m/s), spring, cone angle and twist limits (radians). */
typedef struct gy_scene_joint {
    const char *name; /* NULL when unnamed */
    int32_t a;        /* entity index; has a non-static physics body */
    int32_t b;        /* entity index with a physics body, or -1 for the world */
    gy_joint_def def;
} gy_scene_joint;

typedef enum gy_scene_action_type {
    GY_SCENE_ACTION_SET_VELOCITY,
    GY_SCENE_ACTION_SET_ANGULAR_VELOCITY,
    GY_SCENE_ACTION_APPLY_IMPULSE,
    GY_SCENE_ACTION_APPLY_FORCE,
    GY_SCENE_ACTION_TELEPORT,
    GY_SCENE_ACTION_SET_ACTIVE,
    GY_SCENE_ACTION_SET_ENTITY_ACTIVE,
    GY_SCENE_ACTION_DESTROY,
    GY_SCENE_ACTION_SPAWN,
    GY_SCENE_ACTION_JUMP,
    GY_SCENE_ACTION_RAYCAST,
    GY_SCENE_ACTION_EXPECT,
    GY_SCENE_ACTION_EXPECT_EVENT,
    GY_SCENE_ACTION_SET_MOTOR,
    GY_SCENE_ACTION_MOVE_KINEMATIC,
    GY_SCENE_ACTION_SET_GRAVITY,
    GY_SCENE_ACTION_APPLY_TORQUE,
    GY_SCENE_ACTION_WAKE,
    GY_SCENE_ACTION_TYPE_COUNT
} gy_scene_action_type;

/* The pair kinds first (enter, stay, exit: between a and b), then the body kinds (of a alone). */
typedef enum gy_scene_event_kind {
    GY_SCENE_EVENT_ENTER,
    GY_SCENE_EVENT_STAY,
    GY_SCENE_EVENT_EXIT,
    GY_SCENE_EVENT_SLEEP,
    GY_SCENE_EVENT_WAKE,
    GY_SCENE_EVENT_KILLED,
    GY_SCENE_EVENT_KIND_COUNT
} gy_scene_event_kind;

/* The arguments of each script action (the members of gy_scene_action's union), as named types so
 * the header is valid C++ too. */
typedef struct gy_scene_velocity_action {
    gy_vec3 value; /* m/s or rad/s */
} gy_scene_velocity_action;

typedef struct gy_scene_impulse_action {
    gy_vec3 value; /* N·s */
    bool has_point;
    gy_vec3 point; /* world space; else the centre of mass */
} gy_scene_impulse_action;

typedef struct gy_scene_force_action {
    gy_vec3 value;   /* N (a torque: N·m, world axes) */
    double duration; /* seconds > 0, or 0 for exactly one tick (the default) */
} gy_scene_force_action;

typedef struct gy_scene_gravity_action {
    gy_vec3 value; /* m/s² */
} gy_scene_gravity_action;

typedef struct gy_scene_teleport_action {
    gy_vec3 position;
    bool has_rotation;
    gy_quat rotation; /* unit; keep the current rotation when !has_rotation */
} gy_scene_teleport_action;

typedef struct gy_scene_move_action {
    gy_vec3 position; /* world space */
    bool has_rotation;
    gy_quat rotation; /* unit; keep the current rotation when !has_rotation */
    double duration;  /* seconds >= 0; 0 (the default): one tick */
} gy_scene_move_action;

typedef struct gy_scene_active_action {
    bool value;
} gy_scene_active_action;

typedef struct gy_scene_spawn_action {
    const char *scene; /* path resolved against the scene file's folder */
    gy_vec3 offset;    /* added to the spawned scene's root positions; default 0 */
} gy_scene_spawn_action;

typedef struct gy_scene_jump_action {
    double speed; /* m/s > 0 */
} gy_scene_jump_action;

typedef struct gy_scene_raycast_action {
    const char *label;
    gy_vec3 origin;
    gy_vec3 direction; /* non-zero; its length is the range */
    uint32_t mask;     /* default all bits */
} gy_scene_raycast_action;

typedef struct gy_scene_expect_action {
    bool has_position;
    bool position_set[3]; /* false: that component was null (don't care) */
    gy_vec3 position;     /* world space */
    bool has_velocity;
    bool velocity_set[3];
    gy_vec3 velocity;
    bool has_grounded, grounded; /* the entity is a character when has_grounded */
    bool has_awake, awake;       /* the entity is Dynamic when has_awake */
    bool has_angular_velocity;
    bool angular_velocity_set[3];
    gy_vec3 angular_velocity; /* rad/s */
    /* The entity is a character when has_ground_state; the value is a gy_ground_state
     * (0 airborne, 1 walkable, 2 steep). */
    bool has_ground_state;
    uint8_t ground_state;
    double tolerance; /* > 0, default 0.01 (metres, m/s or rad/s per component) */
} gy_scene_expect_action;

typedef struct gy_scene_motor_action {
    int32_t joint;      /* index in joints[]; that joint has a motor */
    gy_motor_mode mode; /* velocity or position */
    double target;      /* rad/s or m/s; rad (from degrees) or m */
    bool has_max_force; /* false: keep the joint's current max_force */
    double max_force;
} gy_scene_motor_action;

typedef struct gy_scene_expect_event_action {
    gy_scene_event_kind kind;
    int32_t a, b; /* entity indices with physics, a != b; either order matches; b is -1 for the
                     body kinds */
    double since; /* seconds, 0 ≤ since ≤ at, default 0 */
} gy_scene_expect_event_action;

/* One `script` entry. Which union member is meaningful follows `type`:
 *   SET_VELOCITY, SET_ANGULAR_VELOCITY → velocity;  APPLY_IMPULSE → impulse;
 *   APPLY_FORCE, APPLY_TORQUE → force;  SET_GRAVITY → gravity;  TELEPORT → teleport;
 *   SET_ACTIVE, SET_ENTITY_ACTIVE → active;  DESTROY, WAKE → (none);  SPAWN → spawn;  JUMP → jump;
 *   RAYCAST → raycast;  EXPECT → expect;  EXPECT_EVENT → expect_event;  SET_MOTOR → motor;
 *   MOVE_KINEMATIC → move.
 * Validation already checked that the entity suits the action (e.g. a Dynamic body for impulses
 * and forces, a character for jump). */
typedef struct gy_scene_action {
    gy_scene_action_type type;
    double at;      /* seconds ≥ 0: applied at the first game tick whose time is ≥ at */
    uint32_t index; /* position in the file's `script` array (for messages: script[index]) */
    int32_t entity; /* entity index, or -1 for spawn, raycast, expect_event, set_motor and
                       set_gravity */
    union {
        gy_scene_velocity_action velocity;
        gy_scene_impulse_action impulse;
        gy_scene_force_action force;
        gy_scene_gravity_action gravity;
        gy_scene_teleport_action teleport;
        gy_scene_move_action move;
        gy_scene_active_action active;
        gy_scene_spawn_action spawn;
        gy_scene_jump_action jump;
        gy_scene_raycast_action raycast;
        gy_scene_expect_action expect;
        gy_scene_motor_action motor;
        gy_scene_expect_event_action expect_event;
    };
} gy_scene_action;

typedef struct gy_scene {
    const char *name;     /* the optional display name, or NULL */
    const char *source;   /* the file path given to gy_scene_load_file, or NULL for a string */
    const char *base_dir; /* folder relative paths were resolved against ("." for the cwd) */
    gy_scene_world world;
    gy_scene_material *materials; /* as named in the file, in file order */
    uint32_t material_count;
    gy_scene_entity *entities; /* in file order */
    uint32_t entity_count;
    gy_scene_joint *joints; /* in file order */
    uint32_t joint_count;
    gy_scene_action *actions; /* sorted by `at`, file order kept for equal times */
    uint32_t action_count;
    /* private */
    void *internal_;
} gy_scene;

/* ---- loading --------------------------------------------------------------------------------- */

/* Reads, parses and validates a scene file. Relative paths inside it (OBJ files, spawned scenes)
 * resolve against the file's folder. `allocator` NULL: default. On success *out receives the
 * scene and *errors (when errors is non-NULL) NULL. On failure *out is NULL and *errors receives
 * the list (free it with gy_scene_errors_free), except on GY_ERR_OUT_OF_MEMORY and
 * GY_ERR_INVALID_ARGUMENT where it is NULL. Returns:
 *   GY_OK; GY_ERR_IO (the file cannot be read); GY_ERR_CAPACITY (larger than
 *   GY_SCENE_MAX_FILE_BYTES); GY_ERR_PARSE (malformed JSON, or any validation error);
 *   GY_ERR_OUT_OF_MEMORY (nothing leaks); GY_ERR_INVALID_ARGUMENT (NULL path or out).
 * The JSON parser (cJSON) allocates its temporary tree with malloc, outside `allocator`. */
gy_result gy_scene_load_file(const char *path, const gy_allocator *allocator, gy_scene **out,
                             gy_scene_errors **errors);

/* As gy_scene_load_file, with the OBJ files taken from `cache` (gyre/obj_cache.h; NULL: parsed
 * for this load alone): a file already held by an earlier load, unchanged since (same size and
 * mtime), is not read again. The scene holds its meshes until gy_scene_free, so it may outlive
 * whoever created the cache. */
gy_result gy_scene_load_file_cached(const char *path, gy_obj_cache *cache,
                                    const gy_allocator *allocator, gy_scene **out,
                                    gy_scene_errors **errors);

/* As gy_scene_load_file, from `length` bytes of JSON text (need not be NUL-terminated). Relative
 * paths resolve against `base_dir` (NULL: the current directory). File-level messages name the
 * text "(string)". */
gy_result gy_scene_load_string(const char *json, size_t length, const char *base_dir,
                               const gy_allocator *allocator, gy_scene **out,
                               gy_scene_errors **errors);

/* Frees a scene (NULL is fine). */
void gy_scene_free(gy_scene *scene);

/* ---- helpers --------------------------------------------------------------------------------- */

/* Index of the entity named `name`, or -1. Linear in the entity count. */
int32_t gy_scene_find_entity(const gy_scene *scene, const char *name);

/* File spellings: "Dynamic", "set_velocity", "enter" ... ("?" when out of range). */
const char *gy_body_type_name(gy_body_type type);
const char *gy_scene_action_name(gy_scene_action_type type);
const char *gy_scene_event_kind_name(gy_scene_event_kind kind);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_SCENE_H */
