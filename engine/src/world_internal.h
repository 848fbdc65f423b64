/* Private to the World (world*.c, host_loop.c) and its tests: the gy_world object, the component
 * store, and the cross-file helpers (prefix gy_w_).
 *
 * Layout. Entities live in a slot table (generation, hierarchy links, flags; names and callbacks
 * in cold records) with their local poses beside it. Components and the data only some entities
 * have live in gy_w_store instances: dense arrays with a sparse entity-slot → dense index map,
 * swap-removed, so pointers into a store are valid only until its next add or remove. Physics
 * components are in such a store, each with a store index (a dense slot kept for the component's
 * life and reused after it) that indexes the World's per-body arrays, and the gy_physics_body_ref
 * the physics subsystem issued its body (index and generation), which names it in commands,
 * replies and proxies. Geometry and joints sit in handle pools (gyre/handle_pool.h). */
#ifndef GY_WORLD_INTERNAL_H
#define GY_WORLD_INTERNAL_H

#include <assert.h>
#include <pthread.h>
#include <string.h>

#include "gyre/array.h"
#include "gyre/backend/backend.h" /* the contract's validators: the World checks definitions against its ranges */
#include "gyre/physics/character.h"
#include "gyre/handle_pool.h"
#include "gyre/hash_map.h"
#include "gyre/math.h"
#include "gyre/physics/commands.h"
#include "gyre/scene_instance.h"
#include "gyre/world.h"
#include "gyre/world_physics.h"

#define GY_W_NONE         UINT32_MAX
#define GY_W_MAX_ENTITIES (1u << 24)
#define GY_W_MAX_DT       0.25
#define GY_W_STORE_FREE   0x80000000u /* see gy_world.store_owner */

/* ---- small arrays ---------------------------------------------------------------------------- */

/* gy_array_reserve, zeroing the new part. */
gy_result gy_w_reserve_zeroed(const gy_allocator *a, void **array, uint32_t *capacity,
                              uint32_t need, size_t elem);

/* gy_array_reserve growing by an eighth rather than doubling: for the arrays with an entry per
 * entity or body, where a level holds hundreds of thousands and doubling's slack (about a third
 * of the array on average) would be the largest single cost; an eighth leaves about 6%. A large
 * array's realloc moves pages rather than copying them, so the more frequent growth costs little
 * time. */
gy_result gy_w_grow(const gy_allocator *a, void **array, uint32_t *capacity, uint32_t need,
                    size_t elem);

/* ---- tables by ref index --------------------------------------------------------------------- */

/* The World's handle of each joint or geometry by the index of the ref the physics subsystem
 * issued it (gy_physics_joint_ref, gy_physics_resource_ref), and how many of that pool's refs the
 * World holds: issued to it and not released, which counts the ref of an entry forgotten because
 * its release could not be recorded (the pool keeps it live). The pool issues indices from 1,
 * lowest free first, so with `held` live the next is at most held + 1 (gy_w_ref_table_reserve):
 * room for it is taken before a create is recorded, and nothing after the record can fail. */
typedef struct gy_w_ref_table {
    uint64_t *handles; /* ref index → handle (0: none) */
    uint32_t capacity;
    uint32_t held;
} gy_w_ref_table;

/* Room for the entries of the next `more` refs the pool issues. GY_ERR_OUT_OF_MEMORY with nothing
 * changed. */
gy_result gy_w_ref_table_reserve(const gy_allocator *a, gy_w_ref_table *t, uint32_t more);
/* The handle at `index`, or 0. */
static inline uint64_t gy_w_ref_table_get(const gy_w_ref_table *t, uint32_t index)
{
    return index < t->capacity ? t->handles[index] : 0u;
}
/* `index` names `handle` (room reserved; were it not, by refs recorded past the World, the entry
 * is left out rather than written out of bounds). */
static inline void gy_w_ref_table_set(gy_w_ref_table *t, uint32_t index, uint64_t handle)
{
    assert(index < t->capacity);
    if (index < t->capacity)
        t->handles[index] = handle;
}
/* A create was recorded: its ref names `handle` (room reserved). */
static inline void gy_w_ref_table_issued(gy_w_ref_table *t, uint32_t index, uint64_t handle)
{
    gy_w_ref_table_set(t, index, handle);
    t->held++;
}
/* A release was recorded: its ref is the pool's again. */
static inline void gy_w_ref_table_released(gy_w_ref_table *t)
{
    assert(t->held > 0);
    t->held--;
}
/* `index` no longer names `handle` (it may name the next one already). */
static inline void gy_w_ref_table_forget(gy_w_ref_table *t, uint32_t index, uint64_t handle)
{
    if (index < t->capacity && t->handles[index] == handle)
        t->handles[index] = 0;
}
/* Physics stopped: the pool issued nothing that is live. */
void gy_w_ref_table_clear(gy_w_ref_table *t);
void gy_w_ref_table_free(const gy_allocator *a, gy_w_ref_table *t);

/* ---- the component store --------------------------------------------------------------------- */

/* The entity slot a component names by itself (for a store whose components know it). */
typedef uint32_t (*gy_w_store_entity_fn)(const void *ctx, const void *component);

typedef struct gy_w_store {
    size_t elem;      /* bytes per component */
    uint32_t *sparse; /* entity slot → dense index + 1 (0: none) */
    uint32_t sparse_capacity;
    /* dense index → entity slot, kept only without entity_of: a swap-remove reads the entity of
     * the component it moves from one or the other */
    uint32_t *dense_entity;
    uint32_t entity_capacity;
    gy_w_store_entity_fn entity_of;
    const void *entity_ctx;
    unsigned char *data; /* dense component data */
    uint32_t count, capacity;
} gy_w_store;

void gy_w_store_init(gy_w_store *s, size_t elem);
/* A store whose components name their entity (entity_of(ctx, component)), which then keeps no
 * dense → entity table. */
void gy_w_store_init_named(gy_w_store *s, size_t elem, gy_w_store_entity_fn entity_of,
                           const void *ctx);
void gy_w_store_fini(gy_w_store *s, const gy_allocator *a);
/* Adds a zeroed component for `entity` (which must have none); *out points at it. */
gy_result gy_w_store_add(gy_w_store *s, const gy_allocator *a, uint32_t entity, void **out);
/* Dense access for iteration. */
static inline void *gy_w_store_at(const gy_w_store *s, uint32_t dense)
{
    return s->data + (size_t)dense * s->elem;
}
/* The entity's component or NULL (inline: every per-body pass goes through it). */
static inline void *gy_w_store_get(const gy_w_store *s, uint32_t entity)
{
    if (entity >= s->sparse_capacity || s->sparse[entity] == 0)
        return NULL;
    return gy_w_store_at(s, s->sparse[entity] - 1u);
}
/* Swap-removes the entity's component (if any). */
void gy_w_store_remove(gy_w_store *s, uint32_t entity);

/* ---- entities -------------------------------------------------------------------------------- */

/* What every entity needs, 28 bytes: a level holds hundreds of thousands. Sibling lists (a
 * parent's children, the roots) are doubly linked and the first entry's prev_sibling names the
 * last, so no list keeps a tail; a free slot's next_sibling links the free list. What few
 * entities have (a name, callbacks, joints) is in a cold record (gy_w_entity_cold). */
typedef struct gy_w_entity {
    uint32_t generation;
    uint32_t parent, first_child, next_sibling, prev_sibling; /* slots or GY_W_NONE */
    uint32_t cold; /* index in w->cold, or GY_W_NONE: no name, callbacks or joints */
    bool live : 1;
    bool active : 1;     /* own flag */
    bool active_h : 1;   /* active in the hierarchy */
    bool dirty_game : 1; /* local changed by the game (or reparented): bodies below follow it */
    bool dirty_phys : 1; /* world set from physics: children follow, local re-derived */
    bool queued : 1;     /* in the dirty list */
} gy_w_entity;

/* An entity's name, callbacks and joint count, kept only while it has one of them. */
typedef struct gy_w_entity_cold {
    char *name; /* NULL: none */
    size_t name_size;
    gy_collision_fn on_collision;
    void *collision_ctx;
    gy_body_event_fn on_body_event;
    void *body_event_ctx;
    uint32_t joints;    /* joints naming this entity */
    uint32_t next_free; /* in w->cold's free list */
} gy_w_entity_cold;

/* An entity's transform is its local pose (w->local, by slot). Its scale is in w->scales while
 * not (1, 1, 1). Its world pose is stored apart only for a child (w->child_world): a root's world
 * pose is its local one (gy_w_world_of). The world scale is not stored; it is composed when
 * asked for. */
/* ---- render interpolation ---------------------------------------------------------------------
 */

#define GY_W_SAMPLES 3

/* What a body is drawn from, by store_index: its newest physics results, each with the tick it
 * stands for. Three results bracket any render time up to two steps behind the newest (the
 * largest render delay), also when the host sees only every other publish. They form a ring:
 * result k (0 the oldest) is in ring slot (head + k) mod GY_W_SAMPLES, its pose and tick in
 * w->samples[slot][mover]. Only a component whose motion is not Static has a mover index (a
 * dense index over those components, w->mover_store): a static never gets a result, so a static
 * level pays no samples. A new result overwrites one slot, so the capture writes one 32-byte
 * sample and this 16-byte record per body, and a render pass reads the record and the samples
 * that bracket the render time: the samples of one slot are contiguous across movers, streams
 * both passes walk in order. With no results (count 0) a recorded body is drawn at its held pose
 * (gy_w_body_held): the pose it was created or last teleported at, which is its entity's stored
 * world pose but while the game has moved the entity and the propagation has not yet teleported
 * the body (then a side record, w->held, keeps it). */
typedef struct gy_w_motion {
    gy_entity entity;
    uint32_t animating_at; /* index in w->animating, or GY_W_NONE */
    uint32_t mover : 24;   /* index in w->samples, or GY_W_NO_MOVER (a static) */
    uint32_t count : 4;    /* results held, up to GY_W_SAMPLES (0 without a mover) */
    uint32_t head : 4;     /* ring slot of the oldest */
} gy_w_motion;

/* The most bodies the drawn list (gy_world_render_poses) holds at their held pose in one frame:
 * more (a level's statics made at once, a stop) are listed in the frames that follow, in the
 * order they were held. Sized so that a burst of 50,000 takes about a third of a second at 60 Hz
 * while the list costs 128 KB beyond its movers. */
#define GY_W_HELD_PER_FRAME 2048u

#define GY_W_NO_MOVER 0xffffffu /* gy_w_motion.mover; movers stay below it (reserve_moved) */

/* One result's pose, as published, and its tick: the result stands for simulated time tick ×
 * step. Only the low 32 bits are kept, read against the newest capture's (w->frame_tick): a
 * sample is taken to be less than 2^31 ticks (a year at 60 Hz) from it. */
typedef struct gy_w_sample {
    float position[3];
    float rotation[4]; /* x, y, z, w */
    uint32_t tick;     /* low 32 bits */
} gy_w_sample;

/* A held pose kept apart from its entity's stored world pose (gy_w_body_held_keep), and the store
 * index it is of. */
typedef struct gy_w_held {
    gy_pose pose;
    uint32_t store_index;
} gy_w_held;

/* ---- results --------------------------------------------------------------------------------- */

/* What the capture reads of a body, by store_index: a publish walks these 16-byte records (with the
 * samples, by store index, and the proxies, by the index each names) and never the component, and
 * the sync learns from them alone that a body follows its transform. What the capture does not read
 * is apart, in gy_w_result_rare: every byte here is read for every awake body at every publish.
 * Valid for the component's life (its store index is).
 *
 * A body's velocities, awake and faulted flags and state tick are its proxy's in the publish the
 * newest capture took in and kept (w->kept, gy_physics_keep_frame) while `kept_state` holds: the
 * capture then writes none of them. Before that proxy can stop speaking for the body (the capture
 * refuses a newer one, a release, teleport, settle, stop, a fault reply) gy_w_result_own copies
 * them here, where they are read from until a capture takes a proxy in again. */
typedef struct gy_w_result {
    uint32_t generation; /* of the body the capture watches: gy_w_body.ref's while tracked */
    uint32_t moved_at;   /* moved since the last sync: its entry in w->moved, if that names it */
    uint16_t teleports_sent;
    uint16_t teleports_seen;
    bool have_proxy : 1; /* a proxy of this generation was taken in */
    bool awake : 1;
    bool faulted : 1;
    bool is_character : 1; /* desc.is_character */
    bool kept_state : 1;   /* velocities, awake, faulted, state tick: w->kept[proxy]'s */
    bool is_static : 1;    /* the component's motion is Static (or Trigger) */
    /* A physics-driven root without children (most bodies): the entity's world and local poses
     * are its body's pose (gy_w_body_pose), read through the body; the stored ones are stale
     * until gy_w_transform_unfollow writes them back. Spares the sync a write per body per
     * tick. */
    bool follows : 1;
    /* Its proxy's index (gy_w_body.ref's while tracked); kept_state's proxy is there too. */
    uint32_t proxy : 24;
} gy_w_result;
_Static_assert(sizeof(gy_w_result) == 16, "the capture walks these records");

/* The rest of a body's capture record, by store_index, which no capture visit reads: its place
 * in the tracked list and, while not kept_state and not settled, its state tick (two words, so
 * the record holds no padding). */
typedef struct gy_w_result_rare {
    uint32_t tracked_at; /* index in w->tracked, or GY_W_NONE */
    uint32_t state_tick_lo, state_tick_hi;
} gy_w_result_rare;

/* A moving body's velocities as the game knows them, by mover index (gy_w_motion.mover), while
 * not kept_state (a result's, a character's reply, or the description's until a result comes).
 * A static's are zero (a description with others is refused), so a static level pays none; a
 * mover leaving is swap-removed with its samples (gy_w_render_mover). */
typedef struct gy_w_velocity {
    gy_vec3 lin, ang;
} gy_w_velocity;

/* ---- physics components ---------------------------------------------------------------------- */

/* A character's state as its last CHARACTER_STATE reply gave it. */
typedef struct gy_w_character_state {
    gy_vec3 ground_normal, platform_velocity;
    gy_entity ground;
    bool grounded, hit_ceiling;
    uint8_t ground_state; /* gy_ground_state */
} gy_w_character_state;

/* A component's authored description as the World keeps it, in one block: this record, the
 * colliders (desc.colliders points just after it), then a character's state. A block that names
 * no geometry and holds no character is shared by every component with an identical description
 * (a level's statics repeat a handful): `refs` counts them, and a component about to change its
 * own takes a private copy first (world_body.c). The per-body fields is_active (the component's,
 * gy_w_body) and body.user_data (w->user_data) sit here at true and 0. */
typedef struct gy_w_def {
    struct gy_w_def *next; /* the next shared block with the same hash */
    uint64_t hash;
    uint32_t refs;
    bool shared; /* in the table */
    gy_physics_component_def desc;
} gy_w_def;

/* One per body, so only what every body needs is here: a static level holds hundreds of
 * thousands. Its entity is its store index's owner (gy_w_body_slot). */
typedef struct gy_w_body {
    /* results (the capture's: w->results by store index and w->velocities by mover; what it is
     * drawn from: w->motion by store index, and its held pose: gy_w_body_held) */
    /* authored (hull/mesh colliders name their geometry); never NULL */
    gy_w_def *def;
    gy_body_id body;
    /* The body's ref as the physics subsystem issued it in this physics run (generation 0 when
     * none): what commands name it by, and its proxy's index. */
    gy_physics_body_ref ref;
    /* The component's store index, kept for its life: its entity is its owner, and the World's
     * arrays by store index (w->results, w->motion) hold its records. */
    uint32_t store : 24;
    uint32_t motion : 3;   /* gy_motion_type */
    uint32_t error : 5;    /* gy_result (a small enum: the record stays at 32 bytes) */
    uint32_t pairs : 27;   /* touching pairs of this body in the World's pair set */
    uint32_t recorded : 1; /* a create is recorded (the subsystem's pool holds `ref`) */
    /* A static body whose proxy confirmed the game's newest pose: nothing about it changes until
     * the World itself touches it (teleport, release, stop), so no capture visits it, and its
     * state tick is every capture's (w->frame_tick) while this holds. */
    uint32_t settled : 1;
    /* the body as the game knows it */
    uint32_t assigned : 1; /* BODY_ASSIGNED seen */
    uint32_t failed : 1;
    uint32_t is_active : 1; /* the description's is_active: the component switch */
} gy_w_body;
_Static_assert(sizeof(gy_w_body) == 32, "a static level holds hundreds of thousands");
_Static_assert(GY_PHYSICS_MAX_STORE_INDEX <= (1u << 24), "gy_w_body.store holds a store index");
_Static_assert(GY_MOTION_TYPE_COUNT <= 8, "gy_w_body.motion holds a gy_motion_type");
_Static_assert(GY_RESULT_COUNT <= 32, "gy_w_body.error holds a gy_result");

/* The character state of a character's component (after its colliders), or NULL. */
static inline gy_w_character_state *gy_w_character_state_of(const gy_w_body *c)
{
    const gy_physics_component_def *d = &c->def->desc;
    if (!d->is_character)
        return NULL;
    return (gy_w_character_state *)(void *)(d->colliders + d->collider_count);
}

/* ---- geometry, joints, pairs ----------------------------------------------------------------- */

typedef struct gy_w_geometry {
    /* while created in this physics run (its index maps back in w->geo_refs); else null */
    gy_physics_resource_ref ref;
    bool is_mesh;
    bool creator;
    bool created; /* a create is recorded in this physics run */
    bool failed;
    uint32_t pins;
    gy_vec3 *vertices;
    uint32_t vertex_count;
    uint32_t *indices;
    uint32_t index_count;
    uint64_t handle;
} gy_w_geometry;

typedef struct gy_w_joint {
    uint32_t a, b;    /* entity slots; b GY_W_NONE: the world */
    gy_joint_def def; /* anchor and axis in a's frame */
    gy_joint_status status;
    /* while LIVE, and BROKEN or FAILED until released, in this physics run (its index maps back
     * in w->joint_refs); else null */
    gy_physics_joint_ref ref;
    uint32_t a_generation, b_generation; /* of the bodies it was created between */
    uint64_t handle;
    bool has_state;       /* a state reply arrived since it last went live */
    gy_joint_state state; /* the last one */
} gy_w_joint;

/* A touching collider pair as the game has seen it (between ENTER and EXIT). */
typedef struct gy_w_pair {
    uint32_t gen_a, gen_b;
    uint16_t col_a, col_b;
    gy_entity ent_a, ent_b;
    gy_vec3 point, normal; /* last geometry, A's view */
    double penetration;
    uint64_t tick;
} gy_w_pair;

/* A collision callback call waiting to be made (synthesized EXITs). */
typedef struct gy_w_pending {
    gy_collision_fn fn;
    void *ctx;
    gy_collision_event event;
} gy_w_pending;

/* A streaming call (additive load, unload, replace) made from inside a dispatch, performed when
 * the dispatching call ends (scene_instance.c). */
typedef enum gy_w_stream_kind {
    GY_W_STREAM_NONE = 0, /* cancelled (its instance was freed first) */
    GY_W_STREAM_LOAD,
    GY_W_STREAM_UNLOAD,
    GY_W_STREAM_REPLACE
} gy_w_stream_kind;

typedef struct gy_w_stream {
    gy_w_stream_kind kind;
    const gy_scene *scene;
    gy_vec3 offset;
    uint64_t timeout_ns;
    gy_scene_instance *instance; /* load, replace: the pending record; unload: the one to unload */
    gy_scene_instance *previous; /* replace */
} gy_w_stream;

/* The most threads that may hold the World's read lock at once. */
#define GY_W_MAX_READERS 32u

/* ---- the World --------------------------------------------------------------------------------
 */

typedef struct gy_w_recording gy_w_recording;
typedef struct gy_w_replay gy_w_replay;

struct gy_world {
    const gy_allocator *alloc;     /* &meter.allocator: everything but the World object */
    const gy_allocator *raw_alloc; /* the host's (or the default), which holds the object */
    gy_allocator_meter meter;
    gy_obj_cache *obj_cache; /* raw_alloc; shared with the scenes loaded through it */
    const gy_logger *logger;
    gy_physics *physics;
    bool lockstep;
    double step_dt;
    uint32_t max_catchup;
    uint64_t step_timeout_ns;
    gy_world_update_fn update;
    void *update_ctx;
    pthread_rwlock_t lock;
    /* Thread ownership (world.c, gy_w_enter). Read by any thread, so every field is accessed
     * atomically. */
    uint32_t owner_state; /* GY_W_OWNED / GY_W_UNOWNED / GY_W_CLAIMING */
    pthread_t owner;
    uint32_t writer_held; /* the write lock is held by `writer` */
    pthread_t writer;
    uint32_t reader_slots;               /* readers[] entries taken */
    uint32_t reader_ready;               /* readers[] entries holding their thread */
    pthread_t readers[GY_W_MAX_READERS]; /* threads holding the read lock */
    uint64_t wrong_thread_calls;
    uint32_t wrong_thread_logged;
    bool run_characters; /* Gyre's controller moves is_character bodies (no host hook) */

    /* entities */
    gy_w_entity *ents;
    gy_pose *local; /* local poses by slot, parallel to ents */
    uint32_t local_capacity;
    uint32_t ent_capacity, ent_high, ent_live, free_head;
    uint32_t first_root;    /* the roots' list (gy_w_entity) */
    gy_w_entity_cold *cold; /* names and callbacks (gy_w_entity.cold) */
    uint32_t cold_count, cold_capacity, cold_free;
    gy_w_store child_world; /* gy_pose: world poses of entities with a parent */
    gy_w_store scales;      /* gy_vec3: local scales other than (1, 1, 1) */
    gy_u32_array dirty;     /* entity slots with dirty_game / dirty_phys */
    bool dirty_overflow;    /* the dirty list could not grow: propagate everything */

    /* physics components */
    gy_w_store bodies; /* gy_w_body */
    /* Shared descriptions: content hash -> the first with that hash (others chain via next). */
    gy_hash_map defs;
    /* The host's body.user_data by store index, for the components whose value is not 0: most
     * bodies set none, so they pay nothing for it. */
    gy_hash_map user_data;
    /* Store indices of the components each capture visits: every recorded body but the settled
     * statics, so a publish costs what can move, not the world's size. */
    gy_u32_array tracked;
    gy_u32_array moved; /* store indices of the components moved since the last sync */
    uint32_t movers;    /* components whose motion is not Static (world_body.c, reserve_moved) */
    bool kill_plane;    /* world_kill.c */
    double kill_y;
    gy_u32_array doomed; /* entity handles' slots found below the kill plane this tick */
    /* store_index → entity slot; a free index holds GY_W_STORE_FREE | the next free one (the
     * free list, so giving one back never allocates), and every such value is GY_W_NONE or
     * above GY_W_MAX_ENTITIES: no entity's slot */
    uint32_t *store_owner;
    uint32_t store_capacity, store_high;
    /* The components whose body ref's index is not their store index (a body re-created after
     * others were released, a restart with inactive components): ref index → store index. Most
     * bodies are issued their store index and pay nothing here (gy_w_body_by_ref). */
    gy_hash_map ref_store;
    gy_w_result *results;           /* by store_index */
    gy_w_result_rare *results_rare; /* by store_index */
    /* The publish the newest capture took in, kept unchanged until the next capture (the
     * physics thread never writes it meanwhile): the kept_state bodies' velocities and flags. */
    const gy_proxy *const *kept; /* its pages (gy_proxy_in) */
    uint32_t kept_count;
    gy_w_velocity *velocities; /* by mover (gy_w_motion.mover) */
    uint32_t results_capacity, results_rare_capacity, velocities_capacity;
    uint32_t store_free; /* first free store index, or GY_W_NONE */
    gy_collider_def *col_scratch;
    uint32_t col_scratch_capacity;

    /* geometry */
    gy_handle_pool geo_pool;
    gy_w_ref_table geo_refs; /* resource refs */
    uint64_t geo_created, geo_freed;

    /* joints */
    gy_handle_pool joint_pool;
    gy_w_ref_table joint_refs; /* joint refs */
    uint32_t joints_pending;

    /* touching pairs: dense array + index (pair key -> dense index) */
    gy_w_pair *pairs;
    uint32_t pair_count, pair_capacity;
    gy_hash_map pair_index;
    gy_w_pending *pending;
    uint32_t pending_count, pending_capacity;
    bool dispatching;

    /* host loop */
    double acc;
    double alpha;
    /* render time (world_render.c) */
    gy_physics_clock_fn clock; /* the physics def's tick clock (the host clock of real time) */
    void *clock_ctx;
    double render_delay; /* configured; 0: automatic */
    double delay;        /* in use, simulated seconds */
    double latency;      /* automatic delay: recent due → publish time, simulated seconds */
    double render_time;  /* what is drawn, simulated seconds */
    bool render_started;
    uint64_t render_tick;  /* seen_tick at the last render-time update */
    uint64_t due_ns;       /* tick clock: when frame_tick was due */
    uint64_t published_ns; /* tick clock: when frame_tick was published */
    uint64_t clock_ns;     /* tick clock at the last render-time update */
    uint64_t pivot_ns;     /* last time scale or hold change (tick clock) ... */
    double pivot_time;     /* ... and the simulated time the clock stood at then */
    gy_w_motion *motion;   /* by store_index */
    uint32_t motion_capacity;
    /* The held poses kept apart (gy_w_body_held_keep): few, and only for a while (the game moved
     * a held body's entity and no propagation has teleported it yet), so a body pays nothing
     * for a pose its entity already stores. held_index: store index → index in `held`. */
    gy_w_held *held;
    uint32_t held_count, held_capacity;
    gy_hash_map held_index;
    gy_w_sample *samples[GY_W_SAMPLES]; /* by ring slot, then mover (see gy_w_motion) */
    uint32_t samples_capacity[GY_W_SAMPLES];
    uint32_t *mover_store; /* mover → its store index; dense: a mover leaving is swap-removed */
    uint32_t mover_count, mover_store_capacity;
    /* Store indices whose drawn pose may change: the movers with results, and any body listed
     * once at its held pose (creation, teleport, stop), statics too. */
    gy_u32_array animating;
    /* The moved bodies whose transform does not follow them (gy_w_result.follows), listed as
     * the capture marks them: the only ones gy_w_sync has work for. */
    gy_u32_array writeback;
    gy_render_pose *render; /* this frame's drawn poses that changed (gy_world_render_poses) */
    uint32_t render_count, render_capacity;
    gy_entity *moved_out; /* this tick's moved bodies (gy_world_moved_bodies) */
    uint32_t moved_out_count, moved_out_capacity;
    /* The next tick's, parallel to w->moved (the capture writes an entity as it marks its body
     * moved, while the sample is at hand); the sync swaps it with moved_out. */
    gy_entity *moved_next;
    uint32_t moved_next_capacity;
    double time_scale;
    bool hold;
    bool in_tick;
    bool tearing_down; /* inside gy_world_destroy */
    /* streaming requested from inside a dispatch (scene_instance.c) */
    gy_w_stream *streams;
    uint32_t stream_count, stream_capacity;
    bool streaming;      /* the queue is being run */
    uint64_t frame_tick; /* tick of the newest proxies captured */
    uint64_t frame_seq;  /* the last command batch applied before them */
    /* Replies gy_w_drain may still take this tick (UINT32_MAX: all; a replay gives the count
     * the run took), and how many it took. */
    uint32_t reply_budget;
    uint32_t replies_taken;
    uint64_t seen_tick; /* frame_tick as of the last sync (what the next drain may rely on) */

    /* query scratch */
    gy_hit *hit_scratch;
    uint32_t hit_capacity;
    gy_snapshot_hit *snap_scratch;
    uint32_t snap_capacity;

    gy_world_stats stats;

    /* capture and replay of the thread boundary (world_capture.c); NULL when off */
    gy_w_recording *recording;
    gy_w_replay *replay;
};

/* ---- cross-file helpers ---------------------------------------------------------------------- */

/* world_capture.c: after each tick's physics, the frame record and the physics thread's records
 * so far (no-op unless capturing); the replay's stand-in for the lockstep tick loop; freeing. */
void gy_w_recording_frame(gy_world *w, double dt);
void gy_w_recording_tick_begin(gy_world *w);
gy_result gy_w_replay_run(gy_world *w);
void gy_w_recording_free(gy_world *w);

/* world.c: thread ownership. Every public World call starts with one of these (a check of the
 * calling thread against the owner and the World lock's holders, always on):
 *   gy_w_enter       — calls that change the World: the owner, or the holder of the write lock;
 *   gy_w_enter_read  — calls that only read it: also a holder of the read lock.
 * GY_ERR_INVALID_ARGUMENT for a NULL World, GY_ERR_WRONG_THREAD from any other thread (counted,
 * and the first one logged with `fn`, the public function's name). */
enum { GY_W_UNOWNED = 0, GY_W_CLAIMING = 1, GY_W_OWNED = 2 };
gy_result gy_w_enter(const gy_world *w, const char *fn);
gy_result gy_w_enter_read(const gy_world *w, const char *fn);
/* True inside a call that runs host callbacks (gy_world_tick, or the EXITs of a stop): streaming
 * is deferred to the end of that call. */
static inline bool gy_w_in_dispatch(const gy_world *w)
{
    return w->in_tick || w->dispatching;
}

/* scene_instance.c: deferred streaming */
/* Performs the streaming calls deferred during the dispatch that just ended, in request order,
 * including any those cause. No-op when nothing is queued or the queue is already being run. */
void gy_w_streams_run(gy_world *w);
/* Teardown: queued requests are dropped (their pending instances keep GY_ERR_MISUSE). */
void gy_w_streams_fini(gy_world *w);

/* world.c */
/* Frees the World and everything it holds (no physics-side teardown). */
void gy_w_free(gy_world *w);
/* Slot of a live entity handle, or GY_W_NONE. */
uint32_t gy_w_entity_slot(const gy_world *w, gy_entity e);
gy_entity gy_w_entity_handle(const gy_world *w, uint32_t slot);
/* The entity's stored world pose: a child's own, a root's local pose (a root's two are one). */
static inline gy_pose *gy_w_world_of(const gy_world *w, uint32_t slot)
{
    if (w->ents[slot].parent == GY_W_NONE)
        return &w->local[slot];
    gy_pose *p = gy_w_store_get(&w->child_world, slot);
    assert(p != NULL);
    return p;
}
/* The entity's name, or "" (for messages). */
const char *gy_w_entity_name(const gy_world *w, uint32_t slot);
/* The entity's cold record, or NULL when it has none. */
static inline gy_w_entity_cold *gy_w_cold_of(const gy_world *w, uint32_t slot)
{
    uint32_t c = w->ents[slot].cold;
    return c != GY_W_NONE ? &w->cold[c] : NULL;
}
/* The entity's cold record, made if it has none (NULL: out of memory, nothing changed). Valid
 * until the next one is made. */
gy_w_entity_cold *gy_w_cold_get(gy_world *w, uint32_t slot);
/* Gives the entity's record back once it holds nothing (`all`: the entity goes; the name is
 * freed and the record given back whatever it holds). */
void gy_w_cold_trim(gy_world *w, uint32_t slot, bool all);
/* Joints naming the entity. */
static inline uint32_t gy_w_joints_of(const gy_world *w, uint32_t slot)
{
    const gy_w_entity_cold *c = gy_w_cold_of(w, slot);
    return c != NULL ? c->joints : 0u;
}
/* An entity whose transform follows its body (gy_w_result.follows) gets its stored poses
 * back and stops following: called before anything reads or writes the stored poses or links
 * the entity into a hierarchy. */
void gy_w_transform_unfollow(gy_world *w, uint32_t slot);
/* World pose now, composed up the hierarchy where anything on the path is dirty. */
gy_pose gy_w_world_pose(const gy_world *w, uint32_t slot);
/* Queues an entity for propagation. */
void gy_w_mark_dirty(gy_world *w, uint32_t slot, bool game);
/* Propagates dirty transforms; bodies moved by the game are teleported. */
void gy_w_propagate(gy_world *w);
/* Calls fn for the entity and every descendant, parents before children. */
void gy_w_walk_subtree(gy_world *w, uint32_t slot, void (*fn)(gy_world *, uint32_t, void *),
                       void *ctx);
bool gy_w_running(const gy_world *w);

/* world_body.c */
/* The component store of the bodies (w->bodies): a component's entity is its store index's
 * owner, so the store keeps no table of its own for it. */
void gy_w_bodies_init(gy_world *w);
static inline gy_w_body *gy_w_body_of(const gy_world *w, uint32_t slot)
{
    return gy_w_store_get(&w->bodies, slot);
}
/* The entity slot of a component: its store index's owner. */
static inline uint32_t gy_w_body_slot(const gy_world *w, const gy_w_body *c)
{
    return w->store_owner[c->store];
}
/* The capture's record of a component, and its velocities: NULL for a static (no mover), whose
 * velocities are zero. */
static inline gy_w_result *gy_w_result_of(const gy_world *w, const gy_w_body *c)
{
    return &w->results[c->store];
}
static inline gy_w_velocity *gy_w_velocity_of(const gy_world *w, const gy_w_body *c)
{
    uint32_t mover = w->motion[c->store].mover;
    return mover != GY_W_NO_MOVER ? &w->velocities[mover] : NULL;
}
/* Store index `s`'s state tick (gy_w_result_rare). */
static inline void gy_w_set_state_tick(gy_world *w, uint32_t s, uint64_t tick)
{
    w->results_rare[s].state_tick_lo = (uint32_t)tick;
    w->results_rare[s].state_tick_hi = (uint32_t)(tick >> 32);
}
/* The velocities, flags and state tick of store index `s` from the proxy of `frame` (a kept
 * publish of tick `tick`, `count` proxies) into its record, when they are read there
 * (kept_state); nothing otherwise. */
static inline void gy_w_result_own(gy_world *w, uint32_t s, const gy_proxy *const *frame,
                                   uint32_t count, uint64_t tick)
{
    gy_w_result *st = &w->results[s];
    if (!st->kept_state)
        return;
    st->kept_state = false;
    assert(frame != NULL && st->proxy < count);
    if (frame == NULL || st->proxy >= count)
        return;
    const gy_proxy *q = gy_proxy_in(frame, st->proxy);
    /* A character's body keeps zero velocity; its motion comes with CHARACTER_STATE. A static's
     * stay zero. */
    uint32_t mover = w->motion[s].mover;
    if (!st->is_character && mover != GY_W_NO_MOVER) {
        gy_w_velocity *v = &w->velocities[mover];
        v->lin = gy_v3(q->linear_velocity[0], q->linear_velocity[1], q->linear_velocity[2]);
        v->ang = gy_v3(q->angular_velocity[0], q->angular_velocity[1], q->angular_velocity[2]);
    }
    st->awake = (q->flags & GY_PROXY_AWAKE) != 0;
    st->faulted = (q->flags & GY_PROXY_FAULT) != 0;
    gy_w_set_state_tick(w, s, tick);
}
/* The same for a component, from the publish kept now: before the World changes any of them or
 * the body stops being captured. */
static inline void gy_w_body_own_state(gy_world *w, const gy_w_body *c)
{
    gy_w_result_own(w, c->store, w->kept, w->kept_count, w->frame_tick);
}
/* The tick of the newest result the game knows of the body (gy_physics_state.tick), and whether
 * that result had it awake. */
uint64_t gy_w_body_state_tick(const gy_world *w, const gy_w_body *c);
bool gy_w_body_awake(const gy_world *w, const gy_w_body *c);
/* Whether the entity's transform follows its body (gy_w_result.follows). */
static inline bool gy_w_follows_body(const gy_world *w, uint32_t slot)
{
    const gy_w_body *c = gy_w_body_of(w, slot);
    return c != NULL && gy_w_result_of(w, c)->follows;
}
/* The component whose current body `ref` names, or NULL. */
gy_w_body *gy_w_body_by_ref(const gy_world *w, gy_physics_body_ref ref);
/* Creates or releases the body to match effective enable. */
gy_result gy_w_body_refresh(gy_world *w, uint32_t slot);
/* Releases the body (if recorded) and removes the component. */
void gy_w_body_destroy(gy_world *w, uint32_t slot);
/* Records a teleport of a recorded body to `pose`, which its entity's stored world pose is (or
 * is made by the caller at once): its held pose from now on. GY_OK, or the refusal (logged; the
 * held pose is then unchanged). */
gy_result gy_w_body_teleport_record(gy_world *w, gy_w_body *c, gy_pose pose);
/* After a stop: forgets every physics-side fact. */
void gy_w_bodies_stopped(gy_world *w);
/* Teardown: frees every component's description (no geometry is unpinned) and the table. */
void gy_w_bodies_fini(gy_world *w);
/* The capture and sync lists. Both hold at most one entry per component and their capacity is
 * reserved at gy_body_add, so these never allocate. */
void gy_w_body_track(gy_world *w, gy_w_body *c);
void gy_w_body_untrack(gy_world *w, gy_w_body *c);
/* Inline: the capture marks every body that moved. A body is in the list when the entry at its
 * index names it, so the sync empties the list by setting its count to 0. */
static inline void gy_w_body_mark_moved(gy_world *w, uint32_t store_index)
{
    gy_w_result *st = &w->results[store_index];
    uint32_t at = st->moved_at;
    if (at < w->moved.count && w->moved.items[at] == store_index)
        return;
    assert(w->moved.count < w->moved.capacity);
    at = w->moved.count++;
    if (st->moved_at != at) /* mostly the same place as last tick: the record stays clean */
        st->moved_at = at;
    w->moved.items[at] = store_index;
    w->moved_next[at] = w->motion[store_index].entity;
    assert(w->writeback.count < w->writeback.capacity);
    if (!st->follows && w->writeback.count < w->writeback.capacity)
        w->writeback.items[w->writeback.count++] = store_index;
}
void gy_w_body_unmark_moved(gy_world *w, gy_w_body *c);
/* Settled (see gy_w_body) from the capture on: untracked. */
void gy_w_body_settle(gy_world *w, gy_w_body *c);
/* The state tick a settled body had is made its own again (it is about to be touched). */
void gy_w_body_unsettle(gy_world *w, gy_w_body *c);
/* Builds the bootstrap and starts physics. */
gy_result gy_w_start(gy_world *w);

/* world_geometry.c */
gy_w_geometry *gy_w_geometry_get(const gy_world *w, uint64_t handle);
void gy_w_geometry_pin(gy_world *w, uint64_t handle);
void gy_w_geometry_unpin(gy_world *w, uint64_t handle);
/* Creates World geometry owned by nobody yet (creator reference held). */
gy_result gy_w_geometry_create(gy_world *w, bool is_mesh, const gy_vec3 *vertices,
                               uint32_t vertex_count, const uint32_t *indices, uint32_t index_count,
                               uint64_t *out);
/* A CREATE_FAILED reply for the resource `ref` names (ignored unless it is the live one). */
void gy_w_geometry_failed(gy_world *w, gy_physics_resource_ref ref, gy_result r);
void gy_w_geometry_stopped(gy_world *w);
/* Fills resource descs (caller frees them with gy_w_geometry_free_bootstrap). */
gy_result gy_w_geometry_bootstrap(gy_world *w, gy_physics_resource_def **out, uint32_t *count,
                                  gy_mesh_def **meshes, gy_hull_def **hulls);
/* After a successful gy_physics_start: `refs` is what it issued to the bootstrap list, in its
 * order. */
void gy_w_geometry_started(gy_world *w, const gy_physics_resource_ref *refs, uint32_t count);
/* Teardown: drops every creator reference (returns how many were outstanding). */
uint32_t gy_w_geometry_reclaim(gy_world *w);
void gy_w_geometry_fini(gy_world *w);

/* world_joint.c */
/* A body of entity `slot` went away: its live joints become pending again. */
void gy_w_joints_body_released(gy_world *w, uint32_t slot);
/* The entity is being destroyed: its joints are released. */
void gy_w_joints_entity_destroyed(gy_world *w, uint32_t slot);
/* Records creates for pending joints whose bodies are both recorded. */
void gy_w_joints_flush(gy_world *w);
/* Replies about the joint `ref` names (ignored unless it is the live one there). */
void gy_w_joint_failed(gy_world *w, gy_physics_joint_ref ref);
void gy_w_joint_broken(gy_world *w, gy_physics_joint_ref ref);
void gy_w_joint_state_reply(gy_world *w, gy_physics_joint_ref ref,
                            const gy_physics_joint_state_reply *r);
void gy_w_joints_stopped(gy_world *w);
/* Bootstrap list for joints whose bodies are both in it (marks them LIVE on success). */
gy_result gy_w_joints_bootstrap(gy_world *w, gy_physics_joint_def **out, uint32_t *count);
/* After gy_physics_start: LIVE when `ok`, else pending again. `refs`: what the start issued to
 * the `count` joints of the list (read when `ok`). */
void gy_w_joints_started(gy_world *w, const gy_physics_joint_ref *refs, uint32_t count, bool ok);
void gy_w_joints_fini(gy_world *w);

/* world_events.c */
/* Drains replies and dispatches collision events (pending synthesized EXITs first and last). */
void gy_w_drain(gy_world *w);
/* Body c is going away: EXIT for each of its pairs, queued. Costs nothing for a body that touches
 * nothing (most of a streamed cell's statics). */
void gy_w_pairs_body_released(gy_world *w, gy_w_body *c);
/* Queues EXIT for every pair (after stop) and clears them. */
void gy_w_pairs_clear(gy_world *w);
/* Calls the pending callbacks (and those they cause). */
void gy_w_flush_pending(gy_world *w);
void gy_w_events_fini(gy_world *w);

/* world_character.c */
/* The controller settings of a character description (its one capsule collider). */
gy_result gy_w_character_def(const gy_physics_component_def *d, gy_character_def *out);
/* What a body's create command carries as its character description: *out filled and returned
 * for a character the World's controller runs, NULL otherwise (not one, or a host hook). */
const gy_character_def *gy_w_character_of(const gy_world *w, const gy_w_body *c,
                                          gy_character_def *out);
void gy_w_character_reply(gy_world *w, const gy_reply *r);

/* world_render.c */
/* Capacity for `moved` moved-list entries and movers, and `stores` store indices (gy_body_add),
 * so the per-frame passes and gy_w_render_mover never allocate. */
gy_result gy_w_render_reserve(gy_world *w, uint32_t moved, uint32_t stores);
/* The body's component became one that moves (true: gets a mover index) or Static (false: its
 * samples go; its body was released first, and a create sets its held pose). Never allocates. */
void gy_w_render_mover(gy_world *w, gy_w_body *c, bool moves);
/* A store index was given to entity `slot` (no samples yet). */
void gy_w_render_claim(gy_world *w, uint32_t store_index, uint32_t slot);
/* A store index went back (its mover first): never drawn again. */
void gy_w_render_release(gy_world *w, uint32_t store_index);
/* The body is drawn at its held pose from now on (creation, teleport, stop) until results
 * come. */
void gy_w_render_hold(gy_world *w, const gy_w_body *c);
/* A new result `q` of tick `tick` for the body; `from_hold`: the body was drawn at its held pose
 * until now (creation, teleport), which is then the sample one step before. */
void gy_w_render_push(gy_world *w, uint32_t store_index, const gy_proxy *q, uint64_t tick,
                      bool from_hold);
/* The ring slot of result `k` of a body (0 the oldest). */
static inline uint32_t gy_w_ring_slot(const gy_w_motion *m, uint32_t k)
{
    uint32_t slot = m->head + k;
    return slot >= GY_W_SAMPLES ? slot - GY_W_SAMPLES : slot;
}
/* Adds the newest result, of tick `tick`, over the oldest when the ring is full. Inline: the
 * capture calls it for every body that moved. */
static inline void gy_w_render_put(gy_world *w, uint32_t store_index, const float *position,
                                   const float *rotation, uint64_t tick)
{
    gy_w_motion *m = &w->motion[store_index];
    /* Read before the ring's fields are written: a read of the word a narrower store just wrote
     * waits for that store to retire. */
    uint32_t mover = m->mover;
    assert(mover != GY_W_NO_MOVER);
    uint32_t slot;
    if (m->count == GY_W_SAMPLES) {
        slot = m->head;
        m->head = gy_w_ring_slot(m, 1) & 0xfu;
    } else {
        slot = gy_w_ring_slot(m, m->count);
        m->count = (m->count + 1u) & 0xfu;
    }
    gy_w_sample *d = &w->samples[slot][mover];
    memcpy(d->position, position, sizeof d->position);
    memcpy(d->rotation, rotation, sizeof d->rotation);
    d->tick = (uint32_t)tick;
}
/* Lists the body as one whose drawn pose may change. */
static inline void gy_w_render_animate(gy_world *w, uint32_t store_index)
{
    gy_w_motion *m = &w->motion[store_index];
    if (m->animating_at != GY_W_NONE)
        return;
    assert(w->animating.count < w->animating.capacity);
    m->animating_at = w->animating.count;
    w->animating.items[w->animating.count++] = store_index;
}
/* The held pose (read while the body is recorded and has no samples) is its entity's stored
 * world pose unless a side record in w->held keeps another. Whether body `c`, whose held pose is
 * `pose`, must have that record: recorded (else the pose is never read) and `pose` not its
 * entity's stored world pose. A record may exist beyond that (it then holds the stored pose);
 * none exists for a body with samples or without a record. */
bool gy_w_body_held_keep(const gy_world *w, const gy_w_body *c, gy_pose pose);
/* The held pose of a recorded body with no samples. */
gy_pose gy_w_body_held(const gy_world *w, const gy_w_body *c);
/* Before the entity's stored world pose is written while the body is held (recorded, no
 * samples): its held pose is copied into a side record, if none keeps it yet, with room left for
 * `spare` more. GY_OK, or GY_ERR_OUT_OF_MEMORY with nothing changed.
 *
 * The calls that can fail leave room for one record beyond those kept (gy_body_add, and the
 * calls that keep one: spare 1), so the propagation, which cannot fail, finds it for the body it
 * teleports (spare 0): a recorded teleport gives the record back at once, and only a body whose
 * teleport was refused keeps one. */
gy_result gy_w_body_hold_apart(gy_world *w, const gy_w_body *c, uint32_t spare);
/* The body's held pose is `pose` from now on (the body is held): kept apart when
 * gy_w_body_held_keep says so, which then needs gy_w_held_reserve's room (GY_ERR_OUT_OF_MEMORY
 * otherwise, nothing changed). */
gy_result gy_w_body_set_held(gy_world *w, const gy_w_body *c, gy_pose pose);
/* Room for `more` side records beyond those kept, so as many gy_w_body_set_held cannot fail. */
gy_result gy_w_held_reserve(gy_world *w, uint32_t more);
/* The side record of store index `s` goes (its held pose is its entity's, or no longer read). */
void gy_w_held_drop(gy_world *w, uint32_t s);
/* The body's pose as the game knows it: its newest result (the newest sample, which is the proxy
 * as taken in), or its held pose when it has no samples. Read on demand, so the capture writes
 * only the samples. */
gy_pose gy_w_body_pose(const gy_world *w, const gy_w_body *c);

/* world_kill.c: at the end of a tick, destroys the entities whose Dynamic body or character fell
 * below the kill plane (their EXITs, then a KILLED event each). */
void gy_w_kill_below(gy_world *w);
/* The drawn pose of a body component at the current render time. */
gy_pose gy_w_render_body(const gy_world *w, const gy_w_body *c);
/* After the sync: moves the render time on (`dt`: the frame's host time, used in lockstep) and
 * fills the list of drawn poses that changed. */
void gy_w_render_frame(gy_world *w, double dt);
/* The time scale or hold changes now (real time: the host clock's rate of simulated time). */
void gy_w_render_rate_change(gy_world *w);
void gy_w_render_free(gy_world *w);

/* world.c */
/* The pose an entity is drawn at (bodies: gy_w_render_body; others follow their parent). */
gy_pose gy_w_render_pose(const gy_world *w, uint32_t slot);

/* host_loop.c */
/* Reads the newest proxies into the components and their render samples; returns ticks advanced.
 */
uint64_t gy_w_capture(gy_world *w);
/* Lists the moved bodies, makes their transforms follow them (or writes the captured pose into
 * those that cannot: children, parents, queued) and propagates. */
void gy_w_sync(gy_world *w);

#endif /* GY_WORLD_INTERNAL_H */
