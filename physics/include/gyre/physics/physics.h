/* The physics subsystem: one middleware adapter (found by name in the registry), one dedicated
 * physics thread, and the data paths between it and the game thread — sealed command batches in,
 * replies and collision events out, 64-byte proxies and a query snapshot published every tick,
 * live queries under a lock on the simulation. It knows nothing of the World: a body is named by
 * one gy_physics_body_ref, a slot and a generation the subsystem issued when it was created.
 *
 * Threading contract
 *   - The game thread (one thread, the one that calls gy_physics_start): every function here
 *     unless marked otherwise — recording commands, publishing them, stepping in lockstep, reading
 *     proxies and query views, draining replies, live queries, hold and time scale, start, stop,
 *     destroy, diagnostics.
 *   - Any thread: gy_physics_get_stats, gy_physics_hold_epoch, gy_physics_tick.
 *   - The physics thread: only the character hook and the gy_physics_hook_* functions it calls.
 *     The subsystem's own character set (bodies created with a `character` description) belongs
 *     to that thread too: characters are registered and unregistered by the commands that create
 *     and release their bodies, never by the game thread.
 *   - gy_physics_barrier gives the scene barrier for mutation windows (its own contract applies).
 *
 * The tick (real time): pace to the next deadline holding the safe point → take the time (wall dt
 * clamped to 0.1 s, times the effective time scale) → drain command batches (lifecycle, then
 * mutate) → up to max_catchup_steps steps of 1/step_hz, each followed by the characters (Gyre's
 * controller, then the host's hook), the characters' sensor overlaps and collision bookkeeping →
 * publish proxies, query snapshot, replies and events, diagnostics.
 * Lockstep runs the same drain → step → publish, one tick per request. docs/physics-thread.md has
 * the rules in full. */
#ifndef GYRE_PHYSICS_H
#define GYRE_PHYSICS_H

#include "gyre/core.h"
#include "gyre/physics/barrier.h"
#include "gyre/physics/capture_stream.h"
#include "gyre/physics/query.h"
#include "gyre/physics/reply.h"
#include "gyre/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gy_physics gy_physics;

#define GY_PHYSICS_MAX_STORE_INDEX (1u << 24) /* body indices and keys are below this */

/* gy_physics_body_ref (one body, as every command, reply and proxy names it):
 * gyre/physics/command.h. */

/* ---- proxies --------------------------------------------------------------------------------- */

/* gy_proxy.flags */
enum {
    GY_PROXY_LIVE = 1u << 0,   /* a body occupies the slot */
    GY_PROXY_AWAKE = 1u << 1,  /* awake at its last read (kinematic bodies always are) */
    GY_PROXY_MOTION_SHIFT = 2, /* bits 2-3: the gy_motion_type */
    GY_PROXY_MOTION_MASK = 3u << 2,
    GY_PROXY_TELEPORTED = 1u << 4, /* a SET_POSE was applied in the tick of this value: do not
                                      interpolate from the previous value */
    GY_PROXY_FAULT = 1u << 5       /* the adapter reported a non-finite rotation or a position
                                      or velocity component beyond GY_PHYSICS_MAX_MAGNITUDE; the
                                      body is frozen at its last published pose, at rest (again
                                      at every publish) until the next SET_POSE */
};

/* One body as published, per body index. Plain data, exactly 64 bytes. Poses are the body
 * origin in world space (float: proxies are for rendering and game logic, the simulation keeps
 * doubles). A slot without a body is all zero except `tick`. */
typedef struct gy_proxy {
    float position[3];
    float rotation[4]; /* x, y, z, w */
    float linear_velocity[3];
    float angular_velocity[3];
    uint32_t generation; /* the body's gy_physics_body_ref.generation; 0 when the slot is empty */
    uint32_t tick;       /* the physics tick at which this value last changed (low 32 bits) */
    uint16_t flags;      /* GY_PROXY_* */
    uint16_t teleports;  /* wrapping count of teleports applied to this body: a reader that
                            missed the TELEPORTED frame still sees the count change */
} gy_proxy;

#if defined(__cplusplus)
static_assert(sizeof(gy_proxy) == 64, "gy_proxy must be 64 bytes");
#else
_Static_assert(sizeof(gy_proxy) == 64, "gy_proxy must be 64 bytes");
#endif

static inline gy_motion_type gy_proxy_motion(const gy_proxy *p)
{
    return (gy_motion_type)((p->flags & GY_PROXY_MOTION_MASK) >> GY_PROXY_MOTION_SHIFT);
}

/* A publish's proxies are held in pages of GY_PROXY_PAGE, a table of page pointers per publish:
 * a page no body in it changed in lately is shared by every publish instead of copied into each,
 * so a body that never moves (a static) is held once. */
#define GY_PROXY_PAGE_SHIFT 5u
#define GY_PROXY_PAGE       (1u << GY_PROXY_PAGE_SHIFT)

/* The proxy of body index `index` in a publish's page table (below its count: not checked). */
static inline const gy_proxy *gy_proxy_in(const gy_proxy *const *pages, uint32_t index)
{
    return &pages[index >> GY_PROXY_PAGE_SHIFT][index & (GY_PROXY_PAGE - 1u)];
}

/* ---- replies --------------------------------------------------------------------------------- */

/* gy_reply.type values. Every reply's `flags` holds the low 16 bits of the world generation it
 * came from (gy_reply_generation); `key` is given per type. */
typedef enum gy_physics_reply_type {
    GY_PHYSICS_REPLY_BODY_ASSIGNED = 1, /* key: body index; body: gy_physics_body_reply */
    GY_PHYSICS_REPLY_CREATE_FAILED,     /* key: body / joint / resource index;
                                           body: gy_physics_failure_reply */
    GY_PHYSICS_REPLY_JOINT_BROKEN,      /* key: joint index; body: gy_physics_joint_reply */
    GY_PHYSICS_REPLY_CHARACTER_STATE,   /* key: body index; body: gy_character_reply
                                           (gyre/physics/character.h) */
    GY_PHYSICS_REPLY_BODY_FAULT,        /* key: body index; body: gy_physics_body_reply */
    GY_PHYSICS_REPLY_COLLISION_ENTER,   /* key: body index of side A; body: gy_physics_collision */
    GY_PHYSICS_REPLY_COLLISION_STAY,
    GY_PHYSICS_REPLY_COLLISION_EXIT,
    GY_PHYSICS_REPLY_JOINT_STATE, /* key: joint index; body: gy_physics_joint_state_reply */
    GY_PHYSICS_REPLY_BODY_SLEEP,  /* key: body index; body: gy_physics_body_reply (its tick: the
                                     publish that found the Dynamic body asleep) */
    GY_PHYSICS_REPLY_BODY_WAKE    /* likewise, awake again (none at creation, even asleep) */
} gy_physics_reply_type;

/* What a CREATE_FAILED reply was about. */
typedef enum gy_physics_object_kind {
    GY_PHYSICS_OBJECT_BODY = 0,
    GY_PHYSICS_OBJECT_JOINT = 1,
    GY_PHYSICS_OBJECT_RESOURCE = 2
} gy_physics_object_kind;

/* BODY_ASSIGNED and BODY_FAULT (the key and `body_generation` make the body's ref). */
typedef struct gy_physics_body_reply {
    uint32_t body_generation;
    uint32_t generation; /* full world generation */
    gy_body_id body;     /* the adapter's handle (valid for live-query filters) */
    uint64_t tick;       /* the tick it happened in (the next tick for an assignment) */
} gy_physics_body_reply;

/* CREATE_FAILED. */
typedef struct gy_physics_failure_reply {
    uint32_t body_generation; /* the failed body's, joint's or resource's ref's generation */
    uint32_t generation;
    uint32_t kind;  /* gy_physics_object_kind */
    int32_t result; /* the gy_result that failed it */
    uint64_t tick;  /* the physics tick whose drain refused the create (as BODY_ASSIGNED's) */
} gy_physics_failure_reply;

/* JOINT_BROKEN. */
typedef struct gy_physics_joint_reply {
    uint32_t generation;
    uint32_t joint_generation; /* the joint's ref's (key: its index) */
    uint64_t tick;
} gy_physics_joint_reply;

/* JOINT_STATE: a live joint after a tick in which one of its bodies was awake (droppable under
 * a flood: the next tick's reply replaces it). Floats, as proxies are. */
typedef struct gy_physics_joint_state_reply {
    uint32_t generation;
    uint32_t joint_generation; /* the joint's ref's (key: its index) */
    uint64_t tick;
    float position, velocity, twist; /* as gy_joint_state */
    float force[3], torque[3];
} gy_physics_joint_state_reply;

/* COLLISION_ENTER / _STAY / _EXIT: one collider pair in one tick. Side A's body index is the
 * reply's key (its ref: key and generation_a; side B's: index_b and generation_b). Exactly one
 * ENTER or STAY per touching pair per tick and one EXIT per ENTER (on separation, release of either
 * body, or stop); EXIT keeps the last geometry with zero impulses. Under a reply flood only STAY is
 * dropped (and counted in replies_dropped); ENTER and EXIT are essential replies like assignments,
 * so every pair the game saw open is closed. */
typedef struct gy_physics_collision {
    uint32_t generation_a, generation_b;
    uint32_t index_b;
    uint16_t collider_a, collider_b; /* index of the collider in its body's create list */
    uint32_t tick;                   /* low 32 bits of the physics tick */
    float point[3];                  /* deepest point, world space */
    float normal[3];                 /* unit, from A to B */
    float penetration;               /* metres, >= 0 */
    float normal_impulse;            /* N·s over the step */
    float tangent_impulse;           /* N·s, magnitude */
} gy_physics_collision;

#if defined(__cplusplus)
static_assert(sizeof(gy_physics_collision) <= GY_REPLY_BODY_SIZE, "collision reply too large");
#else
_Static_assert(sizeof(gy_physics_collision) <= GY_REPLY_BODY_SIZE, "collision reply too large");
_Static_assert(sizeof(gy_physics_body_reply) <= GY_REPLY_BODY_SIZE, "body reply too large");
#endif

/* Typed views of a reply's body (the reply must be of a matching type). */
static inline const gy_physics_body_reply *gy_reply_as_body(const gy_reply *r)
{
    return (const gy_physics_body_reply *)(const void *)r->body.bytes;
}
static inline const gy_physics_failure_reply *gy_reply_as_failure(const gy_reply *r)
{
    return (const gy_physics_failure_reply *)(const void *)r->body.bytes;
}
static inline const gy_physics_joint_reply *gy_reply_as_joint(const gy_reply *r)
{
    return (const gy_physics_joint_reply *)(const void *)r->body.bytes;
}
static inline const gy_physics_joint_state_reply *gy_reply_as_joint_state(const gy_reply *r)
{
    return (const gy_physics_joint_state_reply *)(const void *)r->body.bytes;
}
static inline const gy_physics_collision *gy_reply_as_collision(const gy_reply *r)
{
    return (const gy_physics_collision *)(const void *)r->body.bytes;
}
/* Low 16 bits of the world generation the reply came from. */
static inline uint16_t gy_reply_generation(const gy_reply *r)
{
    return r->flags;
}

/* ---- the character hook (filled by the character controller) --------------------------------- */

typedef enum gy_physics_character_input_kind {
    GY_CHARACTER_INTENT = 0, /* the latest desired velocity (`vector`, m/s) and `flags` */
    GY_CHARACTER_JUMP = 1    /* a one-off jump of `value` m/s, delivered to exactly one tick */
} gy_physics_character_input_kind;

/* One character command as drained, in record order. */
typedef struct gy_physics_character_input {
    gy_physics_body_ref body; /* the character's body */
    uint32_t kind;            /* gy_physics_character_input_kind */
    uint32_t flags;           /* controller-defined */
    gy_vec3 vector;
    double value;
} gy_physics_character_input;

/* What a hook may ask of the subsystem that runs it, behind the gy_physics_hook_* calls (physics
 * thread, inside the hook only). `self` is the step context's. */
typedef struct gy_physics_hook_ops {
    gy_body_id (*body)(void *self, gy_physics_body_ref ref);
    void (*touch)(void *self, uint32_t index);
    gy_result (*reply)(void *self, const gy_reply *r, gy_reply_class cls);
} gy_physics_hook_ops;

/* What the hook gets after each step (physics thread). Inputs are those drained before the
 * iteration's first step; later catch-up steps of the same iteration get none. */
typedef struct gy_physics_step_context {
    const gy_physics_hook_ops *ops; /* NULL: no subsystem runs the hook (a set driven directly) */
    void *self;                     /* the subsystem's state the ops act on */
    const gy_backend *backend;
    gy_backend_world *world; /* the hook may call the adapter: it runs inside the sim lock */
    uint64_t tick;           /* the tick just stepped */
    double dt;               /* seconds */
    const gy_physics_character_input *inputs;
    uint32_t input_count;
} gy_physics_step_context;

/* Runs on the physics thread after every step: commands first, step second, characters third
 * (after Gyre's own controller has moved the bodies created with a `character` description). */
typedef void (*gy_physics_character_fn)(void *ctx, const gy_physics_step_context *sc);

/* Hook only: the adapter body `ref` names while it is live, else the null id. */
gy_body_id gy_physics_hook_body(const gy_physics_step_context *sc, gy_physics_body_ref ref);
/* Hook only: re-read the body at this index for the coming publish (the hook moved it). */
void gy_physics_hook_touch(const gy_physics_step_context *sc, uint32_t index);
/* Hook only: pushes a reply (CHARACTER_STATE) with the world generation filled in. */
gy_result gy_physics_hook_reply(const gy_physics_step_context *sc, const gy_reply *r,
                                gy_reply_class cls);

/* ---- allocator meter ------------------------------------------------------------------------- */

/* Counts what passes through an allocator: the bytes live now and the most ever live at once.
 * Initialise it over the allocator to count, then pass &meter.allocator wherever an allocator is
 * taken; it must outlive every block allocated through it. Any thread (the counts are relaxed
 * atomics), so the game and physics threads may share one. The World meters its allocator this
 * way and hands the meter to the subsystem (gy_physics_def.meter), whose diagnostics report it. */
typedef struct gy_allocator_meter {
    gy_allocator allocator;    /* pass this one on */
    const gy_allocator *inner; /* where the blocks really come from */
    uint64_t live_bytes;       /* read with gy_allocator_meter_read, never directly */
    uint64_t peak_bytes;
} gy_allocator_meter;

/* Starts counting from zero over `inner` (NULL: the default allocator). NULL m is ignored. */
void gy_allocator_meter_init(gy_allocator_meter *m, const gy_allocator *inner);

/* Bytes live now and the peak (either pointer may be NULL; zeros for a NULL meter). Any thread. */
void gy_allocator_meter_read(const gy_allocator_meter *m, uint64_t *live, uint64_t *peak);

/* The allocator a meter counts for when `a` is a meter's own (&meter.allocator), else NULL: how a
 * wrapper that recognises its allocator by its functions finds it behind a meter. */
const gy_allocator *gy_allocator_meter_inner(const gy_allocator *a);

/* ---- definition ------------------------------------------------------------------------------ */

/* A clock in nanoseconds on a monotonic time base. */
typedef uint64_t (*gy_physics_clock_fn)(void *ctx);

/* The most steps one iteration takes (max_catchup_steps' upper bound). */
#define GY_PHYSICS_MAX_CATCHUP 16u

typedef struct gy_physics_def {
    const char *backend; /* registry name; default: the first adapter compiled in */
    gy_backend_world_def
        world;        /* gravity, substeps, solver iterations (allocator/logger overridden) */
    uint32_t step_hz; /* 10..1000, default 60 */
    uint32_t max_catchup_steps; /* steps per iteration, 1..16, default 4 */
    double frame_budget_s;      /* catch-up stops once an iteration has run this long; default one
                                   period (1 / step_hz); > 0 */
    bool lockstep; /* ticks only on request (gy_physics_step) instead of pacing in real time */
    uint32_t lifecycle_capacity; /* command rings (see command_queue.h); 0 = defaults */
    uint32_t mutate_capacity;
    uint32_t reply_capacity;       /* reply ring; 0 = 16,383 */
    uint64_t watchdog_ns;          /* scene-barrier watchdog bound; 0 = 250 ms */
    const gy_allocator *allocator; /* every allocation, adapter and queues included; NULL default */
    const gy_logger *logger;       /* NULL: stderr for warnings and errors */
    /* Time source for the tick's time rules (not for pacing deadlines, which stay on the
     * monotonic clock); NULL: gy_clock_now_ns. Tests inject one. */
    gy_physics_clock_fn clock;
    void *clock_ctx;
    /* A host's own character hook, run after Gyre's controller has moved the bodies created with
     * a `character` description (gy_physics_body_def); NULL: none. */
    gy_physics_character_fn move_characters;
    void *character_ctx;
    /* An adapter table used instead of the registry lookup by `backend` (NULL: look up by name).
     * For adapters that are not registered, such as the tests' fault-injecting wrapper. */
    const gy_backend *backend_table;
    /* The meter the diagnostics report allocator bytes from; `allocator` must pass through it
     * (the World gives its own, which also counts the World's tables). NULL: the subsystem meters
     * its own allocations. */
    const gy_allocator_meter *meter;
    /* Runtime geometry (meshes and hulls created while running) is built in slices of at most
     * this many units per tick: a unit is a vertex copied, a triangle boxed or an item visited
     * by the query tree's build (65,536 units take about 0.5 ms, docs/physics-thread.md). The
     * adapter's own build of a mesh, which cannot be cut, is charged its triangle count and runs
     * alone in a tick when larger than what is left. 0 = GY_PHYSICS_DEFAULT_GEOMETRY_BUDGET. */
    uint32_t geometry_budget;
} gy_physics_def;

/* The default geometry budget (units per tick). */
#define GY_PHYSICS_DEFAULT_GEOMETRY_BUDGET 65536u

/* The defaults listed above, with gy_default_backend_world_def(). */
gy_physics_def gy_default_physics_def(void);

/* ---- lifecycle ------------------------------------------------------------------------------- */

/* What a hard start rebuilds the world from (gyre/physics/commands.h). */
typedef struct gy_physics_bootstrap gy_physics_bootstrap;

/* Creates the subsystem (queues, buffers, barrier; no world, no thread). GY_ERR_UNKNOWN_BACKEND,
 * GY_ERR_INVALID_ARGUMENT / GY_ERR_NON_FINITE for a bad def, GY_ERR_OUT_OF_MEMORY. */
gy_result gy_physics_create(const gy_physics_def *def, gy_physics **out);

/* Stops (if running) and frees everything. NULL is ignored. */
void gy_physics_destroy(gy_physics *p);

/* Creates a new adapter world (world generation + 1), spawns the physics thread, builds the world
 * from `bootstrap` (NULL: empty) on it and returns once that is published. Every ref issued
 * before is released; the bootstrap's bodies get new ones (bootstrap->body_refs). GY_ERR_MISUSE
 * when already running; GY_ERR_INVALID_ARGUMENT / GY_ERR_NON_FINITE for a bad list (nothing
 * started); adapter errors. */
gy_result gy_physics_start(gy_physics *p, const gy_physics_bootstrap *bootstrap);

/* Hard stop: the physics thread pushes an EXIT for every touching pair, commits its replies and
 * exits; the thread is joined, command batches not yet drained (sealed or open) are discarded
 * with their payloads, and the adapter world is destroyed. Proxies keep their last publish (read
 * them to build the next bootstrap); replies stay queued. GY_ERR_MISUSE when not running or
 * called inside a mutation window (the thread is parked there). */
gy_result gy_physics_stop(gy_physics *p);

/* True between a successful start and stop. */
bool gy_physics_running(const gy_physics *p);

/* The scene barrier (mutation windows while the thread keeps running). */
gy_barrier *gy_physics_barrier(gy_physics *p);

/* The adapter table in use. */
const gy_backend *gy_physics_backend(const gy_physics *p);

/* ---- time ------------------------------------------------------------------------------------ */

/* Lockstep only: publishes the open batch, runs exactly `ticks` ticks (the first drains every
 * batch published so far) and returns once the last one is published. GY_ERR_MISUSE in real-time
 * mode, when not running or inside a mutation window; GY_ERR_TIMEOUT after timeout_ns (0 = none;
 * the ticks still run). */
gy_result gy_physics_step(gy_physics *p, uint32_t ticks, uint64_t timeout_ns);

/* The game's time scale, 0..64 (default 1); 0 freezes (commands are still applied and
 * published). GY_ERR_NON_FINITE, GY_ERR_INVALID_ARGUMENT. Real time only (lockstep ignores it). */
gy_result gy_physics_set_time_scale(gy_physics *p, double scale);

/* The host's hold (e.g. the app went to the background): wins over the time scale. Each change
 * of state bumps the hold epoch; setting the current state again does not. On its first
 * iteration after the epoch changed — even if it slept through a whole hold/resume cycle — the
 * physics thread drops accumulated time and rebases its clock, so held time never turns into
 * catch-up steps. Real time only (lockstep ticks run when asked). */
void gy_physics_set_hold(gy_physics *p, bool hold);

/* Any thread: the hold transition epoch (starts at 0). */
uint32_t gy_physics_hold_epoch(const gy_physics *p);

/* Any thread: ticks stepped so far (monotonic across stop/start). */
uint64_t gy_physics_tick(const gy_physics *p);

/* ---- reading results (game thread) ------------------------------------------------------------
 */

/* One proxy publish as the game thread reads it, with the time it stands for. */
typedef struct gy_proxy_frame {
    /* Pages of proxies by body index (gy_proxy_frame_at, gy_proxy_in); valid and unchanged
     * until the next read. */
    const gy_proxy *const *pages;
    uint32_t count;
    uint64_t tick; /* the physics tick it describes */
    double time;   /* the simulated time of that tick, seconds: tick / step_hz */
    /* On the tick clock (gy_physics_def.clock): when the simulation's clock reached `time`, i.e.
     * when the tick was due (real time: the iteration's clock reading less the accumulated time
     * not yet stepped, at the current time scale; lockstep: when it was stepped). Consecutive
     * ticks are due one step apart (divided by the time scale) however late the thread ran. */
    uint64_t due_ns;
    uint64_t published_ns; /* on the same clock: when it was published (>= due_ns) */
    /* The publish sequence of the last command batch applied before this publish (a real-time
     * iteration may drain a batch and publish without stepping: same tick, newer state). */
    uint64_t applied_seq;
    bool fresh; /* published since the previous read */
} gy_proxy_frame;

/* The proxy of body index `index` in the frame, or NULL at or past its count. */
static inline const gy_proxy *gy_proxy_frame_at(const gy_proxy_frame *f, uint32_t index)
{
    return index < f->count ? gy_proxy_in(f->pages, index) : NULL;
}

/* The latest proxy publish with its timing. GY_ERR_BUSY before the first publish (*out zeroed);
 * GY_ERR_INVALID_ARGUMENT for NULL. Wait-free. Shares the reader's position with
 * gy_physics_read_proxies (`fresh` is relative to whichever was called last). */
gy_result gy_physics_read_frame(gy_physics *p, gy_proxy_frame *out);

/* Keeps the publish the last read returned: its proxies stay valid and unchanged, whatever reads
 * follow, until the next keep and a read after it (the World keeps the publish it took in and
 * reads its bodies' velocities and flags there). Returns its pages (*count: how many), or NULL
 * before the first publish. Game thread, as the reads. */
const gy_proxy *const *gy_physics_keep_frame(gy_physics *p, uint32_t *count);

/* The latest proxy publish: *pages (read with gy_proxy_in) and *count stay valid and unchanged
 * until the next call. *tick: the tick it describes; *fresh: published since the previous call.
 * GY_ERR_BUSY before the first publish. Wait-free. */
gy_result gy_physics_read_proxies(gy_physics *p, const gy_proxy *const **pages, uint32_t *count,
                                  uint64_t *tick, bool *fresh);

/* The latest query snapshot (see query_snapshot.h for the view functions), or NULL before the
 * first publish. Lock-free; the view is valid until the next call. */
const gy_snapshot_view *gy_physics_acquire_query_view(gy_physics *p);

/* Calls fn for every committed reply, oldest first, except those it rejects (counted in
 * replies_rejected): BODY_ASSIGNED / CREATE_FAILED / BODY_FAULT for a body ref that is not (or no
 * longer) live, and any non-collision reply from an older world generation. Collision events are
 * never rejected (generations are never reissued, and every ENTER must meet its EXIT). Returns the
 * number passed to fn. */
uint32_t gy_physics_drain_replies(gy_physics *p, gy_reply_fn fn, void *ctx);

/* ---- live queries (game thread; exact, through the adapter) -----------------------------------
 */
/* Never overlap a step: they take the simulation lock, which the physics thread holds while it
 * drains, steps and reads back. Adapters that declare GY_BACKEND_QUERIES_EXCLUSIVE get exclusive
 * access; others share it between readers. *tick (optional) receives the tick the answer
 * describes. Arguments as in backend.h; hits' user_data is (index << 32) | generation of the
 * body's ref.
 * GY_ERR_MISUSE when not running. */
gy_result gy_physics_raycast(gy_physics *p, gy_vec3 origin, gy_vec3 translation,
                             const gy_query_filter *filter, gy_collector collector, gy_hit *hits,
                             uint32_t capacity, uint32_t *count, uint64_t *tick);
gy_result gy_physics_shape_cast(gy_physics *p, const gy_shape *shape, gy_pose pose,
                                gy_vec3 translation, const gy_query_filter *filter,
                                gy_collector collector, gy_hit *hits, uint32_t capacity,
                                uint32_t *count, uint64_t *tick);
gy_result gy_physics_overlap(gy_physics *p, const gy_shape *shape, gy_pose pose,
                             const gy_query_filter *filter, gy_collector collector, gy_hit *hits,
                             uint32_t capacity, uint32_t *count, uint64_t *tick);
/* The adapter's own counters now (live objects, bodies by motion type, ...), read like a live
 * query: between steps, under the simulation lock, whether or not the diagnostics sampler is
 * compiled in. What a teardown's leak check reads once the releases are applied. */
gy_result gy_physics_get_adapter_counters(gy_physics *p, gy_backend_counters *out, uint64_t *tick);

/* ---- capture and replay (game thread) ---------------------------------------------------------
 * Capture records the thread boundary as the physics thread saw it (gyre/physics/capture_stream.h):
 * every batch it drained with the tick it was applied before, and a state hash after every publish
 * that followed a step. The physics thread writes into a buffer allocated at begin and never waits
 * or allocates for it; the game thread empties it with gy_physics_capture_drain (the World does so
 * every tick). When the buffer is full the physics thread stops recording and the capture is marked
 * overflowed: gy_physics_capture_end then reports GY_ERR_CAPACITY (nothing is lost silently).
 * Replay feeds recorded batches back in at their ticks (lockstep). */

typedef struct gy_physics_capture_def {
    uint32_t buffer_bytes; /* the buffer between the threads; 0 = 16 MiB; 4 KiB .. 1 GiB */
} gy_physics_capture_def;

/* Starts recording; from a running subsystem the switch happens at a safe point (scene barrier).
 * GY_ERR_MISUSE when already capturing or inside a mutation window; GY_ERR_INVALID_ARGUMENT;
 * GY_ERR_OUT_OF_MEMORY. */
gy_result gy_physics_capture_begin(gy_physics *p, const gy_physics_capture_def *def);

/* Hands every complete record written so far to fn, in order. GY_ERR_MISUSE when not capturing;
 * fn's error is returned (the records it refused are dropped and the capture is marked failed). */
gy_result gy_physics_capture_drain(gy_physics *p, gy_capture_write_fn fn, void *ctx);

/* Stops recording (at a safe point when running), drains what is left to fn and frees the buffer.
 * *end_tick (optional) receives the physics tick at the end. GY_ERR_CAPACITY when the buffer
 * overflowed (*overflow_tick, optional, the tick whose record did not fit), fn's error when it
 * failed, else GY_OK; GY_ERR_MISUSE when not capturing. */
gy_result gy_physics_capture_end(gy_physics *p, gy_capture_write_fn fn, void *ctx,
                                 uint64_t *end_tick, uint64_t *overflow_tick);

/* Whether a capture is open. */
bool gy_physics_capturing(const gy_physics *p);

/* Replay mode (lockstep only): commands recorded through gy_physics_record_* are still checked
 * against the game-side view but never sealed (publish and step discard them); batches come only
 * through gy_physics_replay_command and gy_physics_replay_seal. GY_ERR_MISUSE in real time. */
gy_result gy_physics_set_replay(gy_physics *p, bool on);

/* Replay: one lockstep iteration that drains what was sealed and publishes without stepping (a
 * real-time run's iteration that applied a batch before its tick was due). Errors as
 * gy_physics_step; GY_ERR_MISUSE when not replaying; GY_ERR_BUSY while a step request that timed
 * out still runs (and gy_physics_step likewise while a timed-out drain request runs). */
gy_result gy_physics_replay_drain(gy_physics *p, uint64_t timeout_ns);

/* Replay: one lockstep iteration that steps `steps` ticks (1..16) before its one publish, as a
 * real-time run's catch-up iteration did. What the publish reads (a body that fell asleep or woke
 * is noticed there, at the publish's tick) then falls on the run's ticks. Errors as
 * gy_physics_replay_drain, and GY_ERR_INVALID_ARGUMENT for a count out of range. */
gy_result gy_physics_replay_steps(gy_physics *p, uint32_t steps, uint64_t timeout_ns);

/* As gy_physics_drain_replies, but hands over at most `max` committed replies (rejected ones
 * count); *taken (optional) receives how many were taken off the queue. */
uint32_t gy_physics_drain_replies_at_most(gy_physics *p, uint32_t max, gy_reply_fn fn, void *ctx,
                                          uint32_t *taken);

/* Replay: seals the replay batch (the next lockstep tick drains it). */
gy_result gy_physics_replay_seal(gy_physics *p);

/* ---- counters and diagnostics -----------------------------------------------------------------
 */

/* Live counters, each individually current from any thread (not one snapshot). */
typedef struct gy_physics_stats {
    uint64_t ticks;      /* steps so far */
    uint64_t iterations; /* loop iterations (paces or lockstep ticks) */
    uint64_t publishes;  /* proxy publishes */
    uint64_t commands_applied;
    uint64_t commands_dropped_stale; /* naming a body ref no longer live there */
    uint64_t commands_failed;        /* the adapter refused (e.g. a force on a static body) */
    uint64_t creates_cancelled;      /* create skipped: released later in the same batch */
    uint64_t creates_failed;
    uint64_t catchup_steps_dropped; /* whole steps of simulated time dropped */
    double catchup_time_dropped_s;
    uint64_t rebases;         /* hold-epoch changes acted on */
    uint64_t proxies_read;    /* bodies read back from the adapter */
    uint64_t proxies_changed; /* of which changed value */
    uint64_t proxies_written; /* proxies copied into publish buffers */
    uint64_t full_scans;      /* publishes that rewrote a whole buffer */
    uint64_t bodies_faulted;
    uint64_t replies_rejected; /* by gy_physics_drain_replies */
    uint64_t replies_dropped;  /* droppable replies (collision events) the full ring dropped */
    uint64_t step_ns;          /* total time in adapter steps (+ hook, events) */
    uint64_t adapter_step_ns;  /* of which the adapter's own step calls */
    uint64_t publish_ns;       /* total time in publish (read-back → replies commit) */
    uint64_t cpu_ns;           /* physics-thread CPU time in iterations (drain → publish),
                                  pacing and lockstep idling excluded */
    uint32_t bodies;           /* live bodies */
    uint32_t awake;            /* bodies on the awake list */
    uint32_t generation;       /* world generation (starts) */
} gy_physics_stats;

void gy_physics_get_stats(const gy_physics *p, gy_physics_stats *out);

/* Mean, median, 99th percentile and maximum over the sampler's window (the last 1,024 values). */
typedef struct gy_physics_timing {
    double mean, p50, p99, max; /* seconds */
    uint32_t samples;
} gy_physics_timing;

/* One diagnostics sample, taken at 5 Hz on the physics thread (every step_hz/5 ticks in
 * lockstep) and published as one copy. */
typedef struct gy_physics_diagnostics {
    uint64_t sample; /* 1, 2, ... */
    uint64_t tick;
    gy_backend_counters adapter;
    uint32_t command_ring_high_water[2]; /* lifecycle, mutate */
    uint32_t command_staged_high_water;
    uint32_t reply_high_water;
    uint64_t replies_dropped;
    uint64_t commands_dropped_stale;
    uint64_t catchup_steps_dropped;
    double catchup_time_dropped_s;
    gy_physics_timing step;         /* adapter step + hook + collision bookkeeping, per tick */
    gy_physics_timing publish;      /* per publish */
    gy_physics_timing pacing_error; /* tick start minus its deadline (real time only) */
    /* What the simulation holds, as of the sample's tick (the newest publish): */
    uint32_t bodies_awake;    /* dynamic and kinematic bodies on the awake list */
    uint32_t bodies_sleeping; /* dynamic bodies asleep */
    uint32_t bodies_static;
    uint32_t characters;       /* bodies Gyre's character controller moves */
    uint32_t contact_pairs;    /* collider pairs tracked as touching (sensor pairs included) */
    uint32_t contact_points;   /* deepest points the adapter reported in the last step, one per
                                  pair it listed (a sleeping pair stays tracked unlisted) */
    uint32_t events_last_tick; /* collision events (ENTER, STAY, EXIT) of the last tick */
    double events_per_tick;    /* their mean over the ticks since the previous sample */
    /* Body table: store indices holding a body, one past the highest in use, and the slots
     * allocated (grown on demand, never shrunk). */
    uint32_t body_slots_live;
    uint32_t body_slots_used;
    uint32_t body_slots_capacity;
    /* The allocator meter (gy_physics_def.meter): bytes live now and the peak so far. */
    uint64_t allocator_live_bytes;
    uint64_t allocator_peak_bytes;
    /* Runtime geometry (gy_physics_def.geometry_budget): the budget in units per tick, the
     * meshes and hulls queued or being built, the bodies waiting for them, their definitions'
     * bytes, and the most units and seconds one tick spent on them since the previous sample. */
    uint32_t geometry_budget;
    uint32_t geometry_jobs;
    uint32_t geometry_bodies_waiting;
    uint64_t geometry_bytes_pending;
    uint64_t geometry_tick_max_units;
    double geometry_tick_max_s;
} gy_physics_diagnostics;

/* Runtime geometry built in slices under gy_physics_def.geometry_budget (docs/physics-thread.md,
 * "Runtime geometry"). Counts are relaxed: exact once the physics thread is idle (lockstep
 * between steps, or stopped). */
typedef struct gy_physics_geometry_stats {
    uint32_t budget;             /* units per tick */
    uint32_t jobs;               /* meshes and hulls queued or being built */
    uint32_t bodies_waiting;     /* bodies whose create waits for them */
    uint64_t bytes_pending;      /* their definitions' bytes */
    uint64_t units_pending;      /* estimated units still to do */
    uint64_t tick_units;         /* units spent by the newest tick (its drains) */
    uint64_t tick_adapter_units; /* of those, charged to an adapter's uncut build */
    uint64_t tick_ns;            /* time the newest tick spent on geometry */
    uint64_t max_tick_units;     /* most one tick spent since start */
    uint64_t max_tick_ns;        /* most time one tick spent since start */
    uint64_t built, cancelled;   /* jobs finished (failed ones included) and cancelled */
    uint64_t bodies_cancelled;   /* waiting bodies released before their geometry was ready */
    uint64_t slices;             /* slices run */
    /* The most triangles one adapter mesh call was given (a piece of a large mesh); at most
     * max(geometry_budget / 256, 64). */
    uint64_t max_piece_triangles;
} gy_physics_geometry_stats;

/* Fills *out. GY_ERR_INVALID_ARGUMENT for NULL. Any thread. */
gy_result gy_physics_get_geometry_stats(gy_physics *p, gy_physics_geometry_stats *out);

/* The latest sample. GY_ERR_BUSY before the first; GY_ERR_UNSUPPORTED when the sampler is
 * compiled out (meson option diagnostics=false). */
gy_result gy_physics_get_diagnostics(gy_physics *p, gy_physics_diagnostics *out);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_PHYSICS_H */
