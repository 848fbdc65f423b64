/* The character controller: a kinematic, upright capsule moved by collide-and-slide through the
 * middleware contract's queries only (shape_cast, overlap, raycast, body_point_velocity), so every
 * adapter gets the same behaviour. docs/character.md describes the algorithm and its limits.
 *
 * Two layers:
 *   - gy_character_move: one character, one tick. Reads the body's pose, moves the capsule and
 *     writes the new pose back (set_pose, velocities zeroed: the body never drifts during the next
 *     step, so the body's pose is always where the last move or a teleport put it).
 *   - gy_character_group: every character of a physics world keyed by its body's ref, with their
 *     settings, state and latest inputs. gy_character_group_hook has the gy_physics_character_fn
 *     signature. gy_physics owns one set and runs it on the physics thread after every step for
 *     the bodies created with a `character` description (gy_physics_body_def); a host may also
 *     run a set of its own as its move_characters hook.
 *
 * Threading contract: every function here runs on the thread that owns the backend world (the
 * physics thread under gy_physics, the test's thread when driving an adapter directly). Nothing
 * here takes locks; the hook runs inside the simulation lock.
 *
 * Units: metres, seconds, m/s, newtons. Y is up; slopes are measured against +Y. */
#ifndef GYRE_CHARACTER_H
#define GYRE_CHARACTER_H

#include "gyre/types.h"
#include "gyre/core.h"
#include "gyre/physics/physics.h"
#include "gyre/physics/reply.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- settings -------------------------------------------------------------------------------- */

/* Per-character settings; start from gy_default_character_def() (zero is meaningful for
 * several fields). Copied in, never kept by pointer. */
typedef struct gy_character_def {
    double radius;         /* capsule radius, > 0; default 0.3 (must match the body's collider) */
    double height;         /* capsule total height, caps included, > 2 radius; default 1.8 */
    double max_slope_deg;  /* steepest walkable slope, 0..89; default 45 */
    double step_offset;    /* tallest obstacle climbed without jumping, 0..height; default 0.3 */
    double snap_distance;  /* how far down the ground is followed while walking, >= 0;
                              default 0.3 */
    double skin_width;     /* gap kept between the capsule and solids, > 0 and < radius / 2;
                              default 0.01 */
    double max_push_force; /* N applied to a dynamic body walked into, >= 0; default 500 */
    uint32_t mask;         /* collider categories that block the character; default all bits */
} gy_character_def;

/* The defaults listed above. */
gy_character_def gy_default_character_def(void);

/* GY_OK, GY_ERR_INVALID_ARGUMENT (NULL or out of range) or GY_ERR_NON_FINITE. */
gy_result gy_validate_character_def(const gy_character_def *settings);

/* ---- one character, one tick ----------------------------------------------------------------- */

/* What holds a character up (gy_character_result.ground_state). */
typedef enum gy_ground_state {
    GY_GROUND_AIRBORNE = 0, /* nothing below within reach */
    GY_GROUND_WALKABLE = 1, /* standing on ground no steeper than max_slope_deg (grounded) */
    GY_GROUND_STEEP = 2     /* resting only on steeper ground: it slides down and cannot climb */
} gy_ground_state;

/* "airborne", "walkable" or "steep" (the scene format's and the report's words); NULL when out of
 * range. */
const char *gy_ground_state_name(gy_ground_state state);

/* One-way platforms a character is passing through at once, at most (further ones are judged
 * again at every touch). */
#define GY_CHARACTER_MAX_PASSING 4

/* What the controller remembers between ticks. Zero-initialise before the first move; treat the
 * fields as read-only. */
typedef struct gy_character_state {
    gy_vec3 position;      /* where the last move left the body (a different pose = teleport) */
    gy_vec3 velocity;      /* ballistic velocity while airborne (jumps, gravity), m/s */
    gy_vec3 inherited;     /* support velocity carried into the air at take-off, m/s */
    gy_vec3 ground_normal; /* walkable support normal, unit; zero when airborne */
    gy_vec3 ground_point;  /* where the ground was touched, world space */
    gy_body_id ground_body;
    gy_collider_id ground_collider;
    gy_pose ground_pose; /* the support body's pose at the end of the last move (carry) */
    uint64_t ground_user_data;
    /* One-way platforms the capsule entered without being accepted (from below, or rising): they
     * do not block it until the two separate, as for a body. */
    gy_collider_id passing[GY_CHARACTER_MAX_PASSING];
    uint32_t passing_count;
    bool grounded;
    bool has_position;
} gy_character_state;

/* A tick's input. */
typedef struct gy_character_input {
    /* Desired velocity, m/s. x and z walk (along the ground while grounded, full air control
     * while airborne); y > 0 while grounded jumps at y m/s (held: jumps again on landing). */
    gy_vec3 intent;
    double jump; /* > 0: a one-off jump at this speed, m/s (ignored while airborne); 0: none */
} gy_character_input;

/* What one move produced. */
typedef struct gy_character_result {
    gy_pose pose;          /* the body's new pose (rotation kept, turned by a rotating support) */
    gy_vec3 velocity;      /* displacement of this tick / dt, platform carry included, m/s */
    gy_vec3 ground_normal; /* unit; zero when airborne */
    gy_vec3 platform_velocity; /* the support's point velocity under the feet; zero when airborne
                                  or standing on something that does not move, m/s */
    gy_body_id ground_body;    /* null when airborne */
    gy_collider_id ground_collider; /* the support's collider; null when airborne */
    uint64_t ground_user_data;      /* the ground body's user_data (gy_physics: (index << 32) |
                                       generation      of its ref) */
    gy_ground_state ground_state;
    bool grounded;    /* ground_state == GY_GROUND_WALKABLE */
    bool hit_ceiling; /* upward motion was stopped by something above in this tick */
    bool jumped;      /* a jump started in this tick */
    bool teleported;  /* the body was not where the last move left it (a teleport came first) */
} gy_character_result;

/* Moves the character whose kinematic capsule body is `body` by one tick of `dt` seconds
 * (> 0) under `gravity` (m/s²): platform carry, penetration recovery, walking with steps and
 * slopes or ballistic flight, ground snap; pushes dynamic bodies it walks into (a force of at
 * most max_push_force, applied in the next step); writes the new pose to the body and zeroes its
 * velocities. The move starts from the body's current pose, so a teleport applied before the call
 * is kept and the tick's walk is added to it.
 * GY_ERR_INVALID_ARGUMENT (NULL, dt <= 0, negative jump, bad settings), GY_ERR_NON_FINITE, or the
 * adapter's error (e.g. GY_ERR_STALE_HANDLE for a released body); the body and *state are left
 * unchanged on error. */
gy_result gy_character_move(const gy_backend *backend, gy_backend_world *world, gy_body_id body,
                            const gy_character_def *settings, gy_vec3 gravity,
                            gy_character_state *state, const gy_character_input *input, double dt,
                            gy_character_result *out);

/* ---- replies --------------------------------------------------------------------------------- */

/* gy_character_reply.flags */
enum {
    GY_CHARACTER_GROUNDED = 1u << 0,
    GY_CHARACTER_CEILING = 1u << 1, /* upward motion stopped by a ceiling in this tick */
    GY_CHARACTER_JUMPED = 1u << 2,  /* a jump started in this tick */
    GY_CHARACTER_ON_BODY = 1u << 3, /* `ground` names the support */
    GY_CHARACTER_STEEP = 1u << 4    /* resting on ground steeper than its slope limit */
};

/* Body of a GY_PHYSICS_REPLY_CHARACTER_STATE reply (key: the character's body index), pushed
 * once per character per step by gy_character_group_hook as an essential reply. */
typedef struct gy_character_reply {
    uint32_t generation;        /* of the character's body ref (the key is its index) */
    uint32_t tick;              /* low 32 bits of the physics tick */
    uint32_t flags;             /* GY_CHARACTER_* */
    gy_physics_body_ref ground; /* the support's ref, from its user_data (GY_CHARACTER_ON_BODY) */
    float ground_normal[3];     /* unit; zero when airborne */
    float platform_velocity[3]; /* m/s */
    float velocity[3];          /* the character's velocity over the tick, m/s (the body itself
                                   keeps zero velocity, so its proxy shows none) */
} gy_character_reply;

#if defined(__cplusplus)
static_assert(sizeof(gy_character_reply) <= GY_REPLY_BODY_SIZE, "character reply too large");
#else
_Static_assert(sizeof(gy_character_reply) <= GY_REPLY_BODY_SIZE, "character reply too large");
#endif

/* Typed view of a CHARACTER_STATE reply's body. */
static inline const gy_character_reply *gy_reply_as_character(const gy_reply *r)
{
    return (const gy_character_reply *)(const void *)r->body.bytes;
}

/* ---- the set of characters ------------------------------------------------------------------- */

typedef struct gy_character_group gy_character_group;

typedef struct gy_character_group_def {
    const gy_allocator *allocator; /* NULL: default; used on the owning thread */
    gy_vec3 gravity;               /* m/s², default {0, -9.81, 0}: keep it equal to the world's */
} gy_character_group_def;

gy_character_group_def gy_default_character_group_def(void);

/* Counters (owning thread). */
typedef struct gy_character_group_stats {
    uint32_t characters;  /* registered now */
    uint64_t moves;       /* successful gy_character_move calls made by the hook */
    uint64_t move_errors; /* moves the adapter refused (the character is skipped that tick) */
    uint64_t inputs_applied;
    uint64_t inputs_stale;   /* inputs naming no registered character (or a stale ref) */
    uint64_t replies_failed; /* CHARACTER_STATE replies the reply queue could not take */
} gy_character_group_stats;

/* GY_ERR_INVALID_ARGUMENT (NULL out), GY_ERR_NON_FINITE (gravity), GY_ERR_OUT_OF_MEMORY. */
gy_result gy_character_group_create(const gy_character_group_def *def, gy_character_group **out);

/* NULL is ignored. */
void gy_character_group_destroy(gy_character_group *set);

/* The gravity characters fall under from the next move (owning thread). GY_ERR_INVALID_ARGUMENT
 * (NULL set), GY_ERR_NON_FINITE. */
gy_result gy_character_group_set_gravity(gy_character_group *set, gy_vec3 gravity);

/* Registers the character of the body `ref` names (index < GY_PHYSICS_MAX_STORE_INDEX, generation
 * != 0). `body` may be null under gy_physics: the hook then finds it each tick by its ref
 * (gy_physics_hook_body); without gy_physics it must be the capsule body. State starts fresh
 * (airborne until the first ground probe). Allocates while growing to its peak.
 * GY_ERR_MISUSE when the ref's index is taken; GY_ERR_INVALID_ARGUMENT / GY_ERR_NON_FINITE for
 * bad arguments or settings; GY_ERR_OUT_OF_MEMORY. */
gy_result gy_character_group_add(gy_character_group *set, gy_physics_body_ref ref,
                                 const gy_character_def *settings, gy_body_id body);

/* Unregisters the character. GY_ERR_STALE_HANDLE when `ref` is not the one registered at its
 * index; GY_ERR_INVALID_ARGUMENT for NULL. */
gy_result gy_character_group_remove(gy_character_group *set, gy_physics_body_ref ref);

/* Unregisters every character (a world that stopped), keeping memory and counters. NULL is
 * ignored. */
void gy_character_group_clear(gy_character_group *set);

/* Replaces a registered character's settings (state kept). Errors as for add and remove. */
gy_result gy_character_group_update(gy_character_group *set, gy_physics_body_ref ref,
                                    const gy_character_def *settings);

/* Reads a registered character's last move result (zero before its first move; *moved tells)
 * and state; every out pointer is optional. GY_ERR_STALE_HANDLE when not registered. */
gy_result gy_character_group_get(const gy_character_group *set, gy_physics_body_ref ref,
                                 gy_character_result *last, bool *moved, gy_character_state *state);

/* Applies one drained input: INTENT replaces the latest desired velocity (kept until the next
 * INTENT), JUMP arms a one-off jump consumed by the character's next move (a later JUMP before
 * that move replaces it). The input's `flags` are not used. Non-finite or negative values and
 * unknown characters are counted as stale and ignored. */
void gy_character_group_apply_input(gy_character_group *set, const gy_physics_character_input *in);

/* The gy_physics_character_fn (ctx: the set): applies sc's inputs, then moves every registered
 * character whose body exists by sc->dt, marks it for publish (gy_physics_hook_touch) and pushes
 * its CHARACTER_STATE reply. With sc->physics NULL (a bare adapter world, e.g. in tests) bodies
 * come from gy_character_group_add's `body` and nothing is touched or replied. */
void gy_character_group_hook(void *ctx, const gy_physics_step_context *sc);

void gy_character_group_get_stats(const gy_character_group *set, gy_character_group_stats *out);

/* The counters of the character set gy_physics runs for bodies created with a `character`
 * description; they accumulate across stop/start (`characters` is 0 once stopped). Game thread,
 * while the physics thread is stopped: the set belongs to that thread while it runs
 * (GY_ERR_MISUSE then). GY_ERR_INVALID_ARGUMENT for NULL. */
gy_result gy_physics_get_character_stats(const gy_physics *p, gy_character_group_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_CHARACTER_H */
