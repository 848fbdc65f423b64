/* Commands for a host that drives the physics subsystem itself, without the World: bodies named
 * joints and resources by the gy_physics_body_ref / gy_physics_joint_ref /
 * gy_physics_resource_ref their create returned, recorded into the open batch and sealed by
 * gy_physics_publish, and the bootstrap lists a hard start rebuilds the world from. A host using
 * the World never calls these: the World records its own commands, and one recorded behind its back
 * would leave it out of step with the simulation.
 *
 * Threading: the game thread (the one that calls gy_physics_start), like gyre/physics/physics.h. */
#ifndef GYRE_PHYSICS_COMMANDS_H
#define GYRE_PHYSICS_COMMANDS_H

#include <stddef.h>

#include "gyre/core.h"
#include "gyre/physics/command.h"
#include "gyre/physics/physics.h"
#include "gyre/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The character controller's definition (gyre/physics/character.h). */
typedef struct gy_character_def gy_character_def;

/* A body: what CREATE_BODY carries. Hull and mesh colliders name their resource by its full ref
 * in `shape.resource.bits`, packed by gy_physics_resource_ref_bits (index low, generation high).
 * Recording refuses a ref that is not live; the physics thread refuses the body (CREATE_FAILED,
 * stale handle) when the resource live in that slot when the body is created has another
 * generation. In a bootstrap list the resources are the list's own, named by index alone: the
 * start issues the list's i-th resource index i + 1 (the generations here are not read). */
typedef struct gy_physics_body_def {
    gy_body_def def; /* user_data is overwritten (Gyre keeps the body's ref) */
    const gy_collider_def *colliders;
    uint32_t collider_count; /* 1..65535 */
    /* NULL: an ordinary body. Otherwise the body is a character that Gyre's controller moves on
     * the physics thread with these settings (copied): it must be Kinematic with exactly one
     * collider, a capsule, whose radius and height the settings should repeat. The character is
     * registered when the create succeeds and unregistered when the body is released (or the
     * world stops); a failed create registers nothing. */
    const gy_character_def *character;
    /* A Dynamic body created asleep (before its first step: no SLEEP reply for it); ignored for
     * other bodies. */
    bool start_asleep;
} gy_physics_body_def;

/* A joint between two bodies; a null `b`: the world. In a bootstrap list the bodies are the
 * list's own, named by index alone: the start issues the list's i-th body index i (the
 * generations here are not read). The def's `a`, `b` and user_data are ignored. */
typedef struct gy_physics_joint_def {
    gy_physics_body_ref a, b;
    gy_joint_def def;
} gy_physics_joint_def;

/* A mesh or hull resource; exactly one of mesh/hull is non-NULL. Data is read during start. */
typedef struct gy_physics_resource_def {
    const gy_mesh_def *mesh;
    const gy_hull_def *hull;
} gy_physics_resource_def;

/* What a hard start rebuilds the world from: resources first, then bodies, then joints. Each is
 * handled like its create command (replies included). */
struct gy_physics_bootstrap {
    const gy_physics_resource_def *resources;
    uint32_t resource_count;
    const gy_physics_body_def *bodies;
    uint32_t body_count;
    const gy_physics_joint_def *joints;
    uint32_t joint_count;
    /* Where the start writes the refs it issues to the bodies, one per body in list order: what
     * later commands name them by (NULL: not reported). The start empties the pools and issues
     * in list order: the i-th body gets index i, the i-th joint and resource index i + 1, and
     * generations follow the pools' counters, so a host that keeps none of the refs knows only
     * their indices and that they are new. */
    gy_physics_body_ref *body_refs;
    /* The same for the joints and the resources, one per entry in list order (NULL: not
     * reported). */
    gy_physics_joint_ref *joint_refs;
    gy_physics_resource_ref *resource_refs;
};

/* ---- commands (game thread; recorded into the open batch, nothing happens until publish) ----- */
/* All validate first: GY_ERR_NON_FINITE / GY_ERR_INVALID_ARGUMENT and nothing is recorded.
 * GY_ERR_MISUSE when not running. Body, joint and resource commands check the ref against the
 * game side's pool of live refs: GY_ERR_STALE_HANDLE when it is null, released, or issued before
 * the last start. On the physics thread, a
 * command whose ref no longer names the body, joint or resource there (e.g. its create failed) is
 * dropped and counted (commands_dropped_stale). */

/* Largest magnitude accepted for a position, velocity, force, torque, impulse or joint anchor
 * component in commands and bootstrap lists (GY_ERR_INVALID_ARGUMENT beyond it): the shared
 * GY_MAX_MAGNITUDE (gyre/backend/backend.h, with every other range). Far beyond any game's scale;
 * it keeps the adapter's arithmetic finite: ODE aborts the process when a body's quaternion goes
 * non-finite, which finite inputs from about 1e105 (angular) or 1e155 cause. */
#define GY_PHYSICS_MAX_MAGNITUDE GY_MAX_MAGNITUDE

/* Issues the body's ref into *out (untouched on error): the lowest index with no live body (so the
 * proxies, indexed by it, stay as dense as the live bodies) and the pool's next generation.
 * GY_ERR_INVALID_ARGUMENT for a NULL out; GY_ERR_CAPACITY once 2^32 - 1 refs have been issued
 * (generations are never reused) or GY_PHYSICS_MAX_STORE_INDEX bodies are live. */
gy_result gy_physics_record_create_body(gy_physics *p, const gy_physics_body_def *desc,
                                        gy_physics_body_ref *out);
/* The ref is released at once: later commands naming it are refused, and its index is the next
 * create's if no lower one is free. */
gy_result gy_physics_record_release_body(gy_physics *p, gy_physics_body_ref body);
/* Issues the joint's ref into *out (untouched on error), as create_body does (indices from 1: 0
 * names no joint); its bodies' refs must be live (GY_ERR_STALE_HANDLE). */
gy_result gy_physics_record_create_joint(gy_physics *p, const gy_physics_joint_def *desc,
                                         gy_physics_joint_ref *out);
/* The ref is released at once: later commands naming it are refused. */
gy_result gy_physics_record_release_joint(gy_physics *p, gy_physics_joint_ref joint);
/* A live hinge's or slider's motor (checked by gy_validate_joint_motor), applied at the drain. */
gy_result gy_physics_record_set_motor(gy_physics *p, gy_physics_joint_ref joint,
                                      const gy_joint_motor *motor);
/* Issues the resource's ref into *out (untouched on error), as create_body does (indices from 1:
 * 0 names no resource). */
gy_result gy_physics_record_create_resource(gy_physics *p, const gy_physics_resource_def *desc,
                                            gy_physics_resource_ref *out);
/* The ref is released at once; bodies already using the resource keep it. */
gy_result gy_physics_record_release_resource(gy_physics *p, gy_physics_resource_ref resource);

/* Teleport: the proxy of the tick it is applied in carries GY_PROXY_TELEPORTED. */
gy_result gy_physics_record_set_pose(gy_physics *p, gy_physics_body_ref body, gy_pose pose);
gy_result gy_physics_record_set_linear_velocity(gy_physics *p, gy_physics_body_ref body, gy_vec3 v);
/* A Kinematic body (not a character) travels from where it is when the command is applied to
 * `target` by velocity over `steps` physics steps (1..2^30 - 1), arriving exactly, then stops:
 * it pushes and carries what it meets, unlike a teleport. A teleport, a velocity write or a new
 * move ends it. Other bodies refuse it on the physics thread (counted as failed). */
gy_result gy_physics_record_move_kinematic(gy_physics *p, gy_physics_body_ref body, gy_pose target,
                                           uint32_t steps);
/* How many physics steps `seconds` spans (rounded up, at least 1), or 0 when it is negative,
 * non-finite or longer than a move may last. Any thread. */
uint32_t gy_physics_steps_for(const gy_physics *p, double seconds);
gy_result gy_physics_record_set_angular_velocity(gy_physics *p, gy_physics_body_ref body,
                                                 gy_vec3 w);
/* Forces and torques act on the next step only (N, N·m); impulses apply once (N·s). Never merged:
 * two records are two applications. */
gy_result gy_physics_record_add_force(gy_physics *p, gy_physics_body_ref body, gy_vec3 force);
gy_result gy_physics_record_add_torque(gy_physics *p, gy_physics_body_ref body, gy_vec3 torque);
gy_result gy_physics_record_add_impulse(gy_physics *p, gy_physics_body_ref body, gy_vec3 impulse);
gy_result gy_physics_record_add_impulse_at(gy_physics *p, gy_physics_body_ref body, gy_vec3 impulse,
                                           gy_vec3 world_point);
/* Stored for the character hook (see gy_physics_character_input). */
gy_result gy_physics_record_character_intent(gy_physics *p, gy_physics_body_ref body,
                                             gy_vec3 velocity, uint32_t flags);
gy_result gy_physics_record_character_jump(gy_physics *p, gy_physics_body_ref body, double speed);

/* Live changes to a body, applied at the drain without recreating it (touching pairs whose
 * filter verdict is unchanged keep touching: no EXIT/ENTER). Dynamic bodies only for awake and
 * mass (the adapter refuses others: the command is counted as failed). `collider` is the index in
 * the body's create list; an index past its colliders fails on the physics thread likewise.
 * Awake: false puts the body to sleep at rest, true wakes it. Mass: kg > 0 (mass and inertia
 * scale together). Material: checked by gy_validate_material. Filter: category and mask as in
 * gy_collider_def (the query snapshot and the characters' sensor pass follow). */
gy_result gy_physics_record_set_awake(gy_physics *p, gy_physics_body_ref body, bool awake);
gy_result gy_physics_record_set_mass(gy_physics *p, gy_physics_body_ref body, double mass);
gy_result gy_physics_record_set_material(gy_physics *p, gy_physics_body_ref body, uint32_t collider,
                                         const gy_material *material);
gy_result gy_physics_record_set_filter(gy_physics *p, gy_physics_body_ref body, uint32_t collider,
                                       uint32_t category, uint32_t mask);

/* World gravity, m/s² (finite, each component within GY_PHYSICS_MAX_MAGNITUDE). Running: recorded
 * like a command and applied at the drain, where every body wakes and Gyre's character controller
 * takes it too. Stopped: kept for the next start. Either way later starts use it. */
gy_result gy_physics_record_set_gravity(gy_physics *p, gy_vec3 gravity);

/* The gravity last set (or the definition's): what the next start uses. Game thread. */
gy_vec3 gy_physics_gravity(const gy_physics *p);

/* Seals what was recorded since the last publish into one batch (see command_queue.h); *seq
 * (optional) receives its sequence. Real time: the physics thread drains it at its next
 * iteration. GY_ERR_MISUSE when not running. */
gy_result gy_physics_publish(gy_physics *p, uint64_t *seq);

/* ---- replay ---------------------------------------------------------------------------------- */

/* Replay: appends one recorded command to the replay batch. A payload-carrying command
 * (create body, joint, resource) gets a copy of `payload` after it is checked as the record_*
 * functions check their descriptions; GY_ERR_INVALID_ARGUMENT for a payload that does not match
 * its command or a command type that is unknown; nothing is recorded then. */
gy_result gy_physics_replay_command(gy_physics *p, gy_command_ring ring, const gy_command *cmd,
                                    const void *payload, size_t payload_size);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_PHYSICS_COMMANDS_H */
