/* Private to the physics subsystem (physics*.c) and its tests: the gy_physics object split by
 * owner (fixed settings, shared atomics, the game thread's part, the physics thread's part), the
 * physics-side roster and the cross-file helpers (prefix gy_phys_). */
#ifndef GY_PHYSICS_INTERNAL_H
#define GY_PHYSICS_INTERNAL_H

#include <pthread.h>
#include <stddef.h>

#include "gyre/array.h"
#include "gyre/geometry.h"
#include "gyre/physics/character.h"
#include "gyre/handle_pool.h"
#include "gyre/hash_map.h"
#include "command_queue.h"
#include "contact_events.h"
#include "gyre/physics/commands.h"
#include "query_snapshot.h"
#include "reply_queue.h"
#include "scene_barrier.h"
#include "table_growth.h"
#include "triple_buffer.h"

#ifndef GY_DIAGNOSTICS
#define GY_DIAGNOSTICS 1
#endif

/* ---- commands -------------------------------------------------------------------------------- */

typedef enum gy_phys_command_type {
    GY_PHYS_CMD_CREATE_BODY = 1,
    GY_PHYS_CMD_RELEASE_BODY,
    GY_PHYS_CMD_CREATE_JOINT,
    GY_PHYS_CMD_RELEASE_JOINT,
    GY_PHYS_CMD_CREATE_RESOURCE,
    GY_PHYS_CMD_RELEASE_RESOURCE,
    GY_PHYS_CMD_SET_POSE,
    GY_PHYS_CMD_SET_LINEAR_VELOCITY,
    GY_PHYS_CMD_SET_ANGULAR_VELOCITY,
    GY_PHYS_CMD_ADD_FORCE,
    GY_PHYS_CMD_ADD_TORQUE,
    GY_PHYS_CMD_ADD_IMPULSE,
    GY_PHYS_CMD_ADD_IMPULSE_AT,
    GY_PHYS_CMD_CHARACTER_INTENT,
    GY_PHYS_CMD_CHARACTER_JUMP,
    GY_PHYS_CMD_SET_AWAKE,    /* aux: 1 wake, 0 sleep */
    GY_PHYS_CMD_SET_MASS,     /* v[0]: kg */
    GY_PHYS_CMD_SET_MATERIAL, /* aux: collider | friction combine << 16 | restitution combine << 24;
                                 v[0], v[1]: friction, restitution */
    GY_PHYS_CMD_SET_FILTER,   /* aux: collider; v[0], v[1]: category, mask */
    GY_PHYS_CMD_SET_GRAVITY,  /* key and generation 0; v[0..2]: m/s² */
    GY_PHYS_CMD_SET_MOTOR,    /* key: joint index; aux: gy_motor_mode; v[0], v[1]: target,
                                 max_force */
    GY_PHYS_CMD_MOVE_KINEMATIC /* the target pose packed as SET_POSE's; aux: the dropped
                                  component (bits 0-1) | steps << 2 (1..GY_PHYS_MAX_MOVE_STEPS) */
} gy_phys_command_type;

/* Most steps one MOVE_KINEMATIC may take (what aux holds above its two low bits). */
#define GY_PHYS_MAX_MOVE_STEPS ((1u << 30) - 1u)

/* Body of a mutate or release command (56 bytes; the key is the body ref's index). SET_POSE packs
 * the rotation as its three smallest components (v[3..5]) with the index of the dropped one in
 * `aux`: a pose is 7 doubles and would not fit beside the generation otherwise, and the dropped
 * (largest, made positive) component is rebuilt to within an ulp or two. */
typedef struct gy_phys_cmd_body {
    uint32_t generation; /* of the ref the key indexes (body's, joint's or resource's) */
    uint32_t aux;
    double v[6];
} gy_phys_cmd_body;

/* Owned payloads; each starts with its allocation size so the release callback can free it. */
typedef struct gy_phys_body_payload {
    size_t size;
    uint32_t generation; /* issued to the body by the game side (the key is its index) */
    uint32_t collider_count;
    bool is_character;
    bool start_asleep;
    gy_character_def character; /* valid when is_character */
    gy_body_def def;
    gy_collider_def colliders[];
} gy_phys_body_payload;

typedef struct gy_phys_joint_payload {
    size_t size;
    gy_physics_joint_def desc;
    uint32_t generation; /* issued to the joint by the game side (the key is its index) */
} gy_phys_joint_payload;

/* Vertices (or hull points) follow the header, then indices. */
typedef struct gy_phys_resource_payload {
    size_t size;
    uint32_t is_mesh;
    uint32_t vertex_count;
    uint32_t index_count;
    uint32_t generation; /* issued to the resource by the game side (the key is its index) */
    gy_vec3 vertices[];
} gy_phys_resource_payload;

/* ---- physics-side roster --------------------------------------------------------------------- */

#define GY_PHYS_NONE       UINT32_MAX
#define GY_PHYS_LANES      8u /* sleepers revalidated every 8 publishes, body index % 8 */
#define GY_PHYS_PROXY_BUFS 4u /* proxy buffers: a triple buffer and one the reader keeps */
#define GY_PHYS_DIRTY_RING 8u /* per-publish dirty lists kept; older buffers get a full scan */
#define GY_PHYS_WINDOW     1024u

enum { GY_PHYS_LIST_NONE = 0, GY_PHYS_LIST_AWAKE = 1, GY_PHYS_LIST_LANE = 2 };

/* One body index (32 bytes: two records to a cache line in the awake loop). Its proxy's current
 * value is not kept here but in the proxy buffer the writer holds (gy_phys_proxy_of), which is
 * always up to date: a copy per body would be 64 more bytes a body. What few bodies need is kept
 * elsewhere: the colliders' count is their list's length, a body built in pieces is told by its
 * colliders (gy_phys_collider.head), and the teleported bodies whose partners may wake are the
 * wake scan's sorted list. */
typedef struct gy_phys_body {
    gy_body_id id; /* null: empty slot */
    /* Marks: the low 32 bits of a publish sequence (gy_phys_seq_mark), 0 for none. */
    uint32_t change_seq;     /* of the last change of its proxy */
    uint32_t read_mark;      /* of the publish it was last read back in */
    uint32_t touch_mark;     /* of the publish it was last queued for read-back */
    uint32_t generation;     /* of the live body's ref: what commands are checked against */
    uint32_t first_collider; /* collider slot, linked through gy_phys_collider.next */
    /* Its place in its list: a list holds body indices, below GY_PHYSICS_MAX_STORE_INDEX. */
    unsigned list_pos : 24;
    unsigned motion : 2;
    unsigned list : 2;       /* GY_PHYS_LIST_* */
    unsigned teleported : 1; /* a SET_POSE since its last read */
    unsigned fault : 1;
    unsigned character : 1; /* registered with the subsystem's character set */
    /* Its one collider is moved in the query snapshot with exactly the body's pose: the awake
     * loop then moves it without reading the collider's record (a cache miss per body). */
    unsigned snapshot_follows : 1;
} gy_phys_body;

_Static_assert(GY_PHYSICS_MAX_STORE_INDEX <= (1u << 24), "list_pos holds a body index");
_Static_assert(GY_MOTION_TYPE_COUNT <= 4, "motion holds a gy_motion_type");

/* One adapter collider, by its handle's slot (also its query-snapshot slot); 24 bytes. Its body
 * is not kept: the colliders are reached from their body, and a hit or contact names the body
 * itself (its user data holds the body index). */
typedef struct gy_phys_collider {
    /* The generation of the adapter's handle, which with the slot makes the handle
     * (gy_phys_collider_id): live and filter changes name it. */
    uint32_t generation;
    uint32_t next;
    uint32_t mask; /* its collide mask (the characters' sensor pass checks sensors' masks) */
    /* Its local pose in gy_phys_sim.locals, or GY_PHYS_NONE for the identity (the world pose is
     * the body's): most colliders have none, and a pose in every record would be 56 of its
     * bytes. */
    uint32_t local;
    /* A piece of a mesh built in pieces: the slot of its first piece, whose handle the contact
     * events see every piece under, as one collider; else its own slot. */
    uint32_t head;
    bool live : 1;
    bool in_snapshot : 1; /* has a query-snapshot entry (planes are placed once, never moved) */
    bool is_plane : 1;
    bool is_sensor : 1;
    bool character : 1; /* a registered character's (non-sensor) capsule: its pairs come from the
                           overlaps after the move, not from the step's contact list */
} gy_phys_collider;

_Static_assert(sizeof(gy_phys_body) == 32 && sizeof(gy_phys_collider) == 24, "roster records");

/* A registered character, as the sensor pass needs it. */
typedef struct gy_phys_character {
    gy_physics_body_ref body;
    gy_collider_id collider; /* its capsule */
    gy_shape shape;
    gy_shape touch_shape;  /* the capsule grown by the contact offset: what it touches */
    double contact_offset; /* 2 × skin_width: a solid this close is touched */
    uint32_t category, mask;
    bool probe; /* the capsule is not a sensor: its pairs are found by the pass */
} gy_phys_character;

/* A kinematic body travelling to `target` by velocity: step k of `steps` aims at the pose k/steps
 * of the way from `start` (the last step at `target` itself), so it arrives exactly. */
typedef struct gy_phys_move {
    gy_pose start, target;
    gy_physics_body_ref body;
    uint32_t steps, done; /* steps in all; steps taken */
} gy_phys_move;

typedef struct gy_phys_joint {
    gy_joint_id id;
    uint32_t a_store, b_store; /* b_store GY_PHYS_NONE: the world */
    uint32_t generation;       /* of the joint's ref */
    bool live;
} gy_phys_joint;

typedef struct gy_phys_resource {
    gy_resource_id id; /* a mesh built in pieces: its first piece */
    gy_snapshot_geometry *geometry;
    /* A runtime mesh larger than one slice's piece: one adapter mesh per piece (owned array, or
     * NULL), each a collider of its own on every body naming the resource. */
    gy_resource_id *pieces;
    uint32_t piece_count;
    uint32_t generation; /* of the resource's ref */
    bool live;
} gy_phys_resource;

/* A runtime mesh or hull waiting for, or under, its build (physics_geometry.c). */
typedef struct gy_phys_geo_job {
    gy_phys_resource_payload *payload; /* owned: the definition the command carried */
    gy_snapshot_mesh_build *build;     /* mesh: its query blob, built in slices */
    gy_hull_builder *hull_build;       /* hull: its hull, built in slices */
    gy_hull hull;                      /* hull: built, for the adapter's and the blob's copies */
    uint64_t units_left;               /* estimate, for the queue's size */
    uint32_t key, generation;          /* the resource's ref */
    bool ready; /* the query blob (hulls: the hull) is done; the adapter's slice is next */
    /* A mesh of more triangles than a piece (gy_phys_geo_piece_triangles): the whole mesh's edge
     * flags (classified in one slice), the pieces built so far, and a vertex remap scratch. */
    uint8_t *active_edges;
    gy_mesh_edge_classifier *classify;
    gy_resource_id *pieces;
    uint32_t *remap;
    gy_vec3 *piece_vertices;
    uint32_t *piece_indices;
    uint32_t pieces_built, piece_count;
} gy_phys_geo_job;

/* A body whose create waits for the runtime geometry it names. */
typedef struct gy_phys_parked_body {
    gy_phys_body_payload *payload; /* owned */
    uint32_t store_index;
} gy_phys_parked_body;

/* A page of GY_PROXY_PAGE proxies. `refs` counts the buffers whose page table names it: a page
 * named by one buffer is that buffer's own, one named by several is read-only (the writer copies
 * it before writing, gy_phys_proxy_write). Only the writer reads or changes `refs` and `next`,
 * and a buffer's table changes only while the writer holds the buffer, so a page the reader can
 * see is never written, and is freed only once no table names it. */
typedef struct gy_phys_page {
    uint32_t refs;
    struct gy_phys_page *next; /* in the free pool */
    gy_proxy proxies[GY_PROXY_PAGE];
} gy_phys_page;

/* Free pages kept for copies (a change in a shared page) instead of going back to the allocator:
 * a burst of at most this many pages copies without allocating. */
#define GY_PHYS_PAGE_POOL 64u

/* The per-buffer page table behind the triple buffer; the writer grows it only in its own
 * buffer. The buffer the writer holds is the current value of every body index below
 * gy_phys_sim.body_count: the read-back and the roster write it in place (copying a shared page
 * first), and the publish that hands it over first brings the next one up to date from it.
 * pages[i] is set for every page below the count's; past it, an entry may be left from a larger
 * world (still counted in its page's refs). */
typedef struct gy_phys_frame {
    gy_proxy **pages; /* each a gy_phys_page's proxies */
    uint32_t count;
    uint32_t page_capacity;
    uint64_t tick;
    uint64_t due_ns;       /* tick clock: when `tick` was due */
    uint64_t published_ns; /* tick clock: when it was published */
    uint64_t applied_seq;  /* the last command batch applied before it */
} gy_phys_frame;

/* A window of timings for the diagnostics sampler. */
typedef struct gy_phys_window {
    uint64_t ns[GY_PHYS_WINDOW];
    uint32_t next, count;
} gy_phys_window;

/* Counters written by one thread, read anywhere (relaxed atomics). */
typedef struct gy_phys_counters {
    uint64_t ticks, iterations, publishes;
    uint64_t commands_applied, commands_dropped_stale, commands_failed;
    uint64_t creates_cancelled, creates_failed;
    uint64_t catchup_steps_dropped, catchup_ns_dropped, rebases;
    uint64_t proxies_read, proxies_changed, proxies_written, full_scans;
    uint64_t bodies_faulted;
    /* Runtime geometry (physics_geometry.c). */
    uint64_t geo_jobs, geo_parked, geo_bytes_pending, geo_units_pending;
    uint64_t geo_tick_units, geo_tick_adapter_units, geo_tick_ns, geo_max_tick_units;
    uint64_t geo_max_tick_ns;
    uint64_t geo_built, geo_cancelled, geo_parked_cancelled, geo_slices;
    uint64_t geo_piece_triangles_max;
    uint64_t step_ns, adapter_step_ns, publish_ns, cpu_ns;
    uint32_t bodies, awake;
} gy_phys_counters;

/* The capture buffer (physics_capture.c). `buf`, `capacity` and `failed` are the game thread's
 * (set while the physics thread is parked or stopped); `head` and `overflow_tick` are written by
 * the physics thread, `tail` by the game thread; `active` and `overflowed` are flags. */
typedef struct gy_phys_capture {
    unsigned char *buf;
    uint64_t capacity; /* a power of two */
    uint64_t head, tail;
    uint64_t overflow_tick;
    uint32_t active;
    uint32_t overflowed;
    gy_result failed; /* the writer's first error */
} gy_phys_capture;

/* Fixed after create: the settings and the channels between the threads (each channel states its
 * own threading contract in its header). Either thread reads it; nobody writes it. */
typedef struct gy_phys_config {
    const gy_backend *backend;
    const gy_allocator *alloc;     /* every allocation but the object itself: through `meter` */
    const gy_allocator *raw_alloc; /* the definition's, which holds the object */
    const gy_allocator_meter *meter;
    const gy_logger *logger;
    double step_dt;
    double step_eps;
    uint64_t period_ns;
    uint32_t step_hz;
    uint32_t max_catchup;
    uint64_t budget_ns;
    uint64_t geo_budget; /* runtime geometry units per tick */
    bool lockstep;
    bool queries_exclusive;
    gy_physics_clock_fn clock;
    void *clock_ctx;
    gy_physics_character_fn move_characters;
    void *character_ctx;
    gy_character_group *characters; /* the pointer is fixed; the set is physics side */

    gy_command_queue *commands;
    gy_reply_queue *replies;
    gy_barrier *barrier;
    gy_triple_buffer *proxy_tb;
    gy_query_snapshot *snapshot;
#if GY_DIAGNOSTICS
    gy_triple_buffer *diag_tb;
#endif
} gy_phys_config;

/* Touched by both threads: atomics, the locks and what they guard, and the buffers the triple
 * buffer hands from one thread to the other. */
typedef struct gy_phys_shared {
    uint32_t hold;
    uint32_t hold_epoch;
    uint64_t time_scale_bits; /* a double */
    uint32_t stop_requested;
    uint32_t generation;
    uint64_t lockstep_target; /* lockstep ticks requested so far */
    uint64_t lockstep_seq;    /* the batch the next lockstep tick drains up to */
    uint64_t lockstep_done;
    /* Steps in each requested iteration: 1, or 0 (drain and publish only) and 2..16 (a real-time
     * run's catch-up iteration, stepped before one publish) in a replay. */
    uint32_t lockstep_steps;
    uint32_t game_waiting;
    gy_phys_counters counters;
    uint64_t replies_rejected;

    pthread_mutex_t wait_mutex; /* lockstep completion and start hand-shake */
    pthread_cond_t wait_cond;
    bool thread_ready;         /* under wait_mutex */
    gy_result thread_result;   /* under wait_mutex */
    pthread_rwlock_t sim_lock; /* held (write) by the physics thread while it touches the world */

    gy_phys_capture cap;
    /* Owned by whichever thread holds the buffer: the proxy exchange has a fourth, so the game
     * thread can keep the publish its World last took in (gy_physics_keep_frame). */
    gy_phys_frame frames[GY_PHYS_PROXY_BUFS];
} gy_phys_shared;

/* A game-side pool of refs (bodies', joints', resources'): the generation of the ref live at each
 * index (0: none) and the next generation to issue. Generations come from one counter per pool,
 * never reused, so a generation alone tells two bodies apart (the reply filter, the World's pair
 * set and the adapters' user_data rely on it); the index is the host's, because proxies and the
 * host's own tables share it. The one table the record functions check commands, and the reply
 * filter replies, against. */
typedef struct gy_phys_ids {
    uint32_t *live; /* the generation live at each index, 0: free */
    uint32_t capacity;
    uint32_t next;      /* 0 once 2^32 - 1 generations were issued */
    uint32_t first;     /* the lowest index issued (joints and resources keep 0 for none) */
    uint32_t free_from; /* every index in [first, free_from) is live */
} gy_phys_ids;

/* The game thread's part. */
typedef struct gy_phys_game {
    const gy_phys_config *cfg;
    gy_phys_shared *sh;
    gy_backend_world_def world_def; /* the physics thread reads it while starting only */
    pthread_t thread;
    bool replaying;   /* gy_physics_set_replay: the game's own batches are discarded */
    bool replay_open; /* a replay batch has commands not yet sealed */
    bool running;
    bool game_bound;           /* the game thread called bind_thread on this world (live queries) */
    uint64_t lockstep_wait_ns; /* how long the last gy_physics_step waited, per tick */
    gy_phys_ids ids;           /* bodies' */
    gy_phys_ids joint_ids;     /* joints' */
    gy_phys_ids resource_ids;  /* resources' */
    const gy_physics_bootstrap *bootstrap; /* read by the physics thread during start only */
} gy_phys_game;

/* The physics thread's part: its own while the thread runs, the game thread's while it does not
 * (start and stop order them through thread create and join). Live queries read `world`,
 * `bodies` and `colliders` from the game thread under the sim lock, inside which alone they
 * change. */
typedef struct gy_phys_sim {
    const gy_phys_config *cfg;
    gy_phys_shared *sh;
    gy_backend_world *world;
    uint64_t tick;   /* mirrors counters.ticks */
    uint64_t due_ns; /* tick clock: when the simulation's clock reached `tick` */
    /* Sequence of the publish being prepared (1, 2, ...). It skips every value whose low 32 bits
     * are 0, where every body's marks are cleared: marks keep 32 bits (a roster record 16 bytes
     * smaller) and still never match an old publish. */
    uint64_t pub_seq;
    /* The publish sequence each buffer was last brought up to. */
    uint64_t written_seq[GY_PHYS_PROXY_BUFS];
    uint32_t frame; /* the proxy buffer the writer holds (the current values) */
    /* A page table for the next buffer to hold, made before a publish when that buffer's may be
     * too small to take the current values (so a failure skips the publish, losing nothing). */
    gy_proxy **spare;
    uint32_t spare_capacity;
    /* The mark of the last change of a proxy in each page (gy_phys_mark_changed): a page that
     * has not changed in GY_PHYS_DIRTY_RING publishes is shared by the buffers that catch up. */
    uint32_t *page_marks;
    uint32_t page_mark_capacity;
    gy_phys_page *free_pages; /* the pool, linked through next */
    uint32_t free_page_count;
    uint32_t pool_quiet; /* publishes since a page was last taken (the pool is freed after 64) */
    gy_phys_body *bodies;
    uint32_t body_capacity;
    uint32_t body_count; /* highest store index used + 1 */
    uint32_t live_bodies;
    uint32_t movable_bodies; /* live dynamic and kinematic bodies */
    gy_phys_collider *colliders;
    uint32_t collider_capacity;
    /* Each collider's index in its body's create list, by slot: apart from the records because
     * every collision event looks two up, in no useful order, and a 2-byte table stays in cache
     * where 40-byte records do not. */
    uint16_t *collider_index;
    uint32_t collider_index_capacity;
    /* The colliders' local poses other than the identity, by gy_phys_collider.local; the free
     * entries are listed in local_free, which can always hold every entry (a release never
     * allocates). */
    gy_pose *locals;
    uint32_t local_count, local_capacity;
    gy_u32_array local_free;
    gy_phys_joint *joints;
    uint32_t joint_capacity, joint_count;
    gy_phys_resource *resources;
    uint32_t resource_capacity;
    /* Runtime geometry built in slices under a per-tick budget (physics_geometry.c). */
    gy_phys_geo_job *geo_jobs; /* in arrival order; the first is the one being built */
    uint32_t geo_job_count, geo_job_capacity;
    gy_phys_parked_body *parked;
    uint32_t parked_count, parked_capacity;
    uint64_t geo_tick;         /* the tick whose drains geo_tick_units counts */
    uint64_t geo_tick_units;   /* units spent by those drains so far */
    uint64_t geo_tick_adapter; /* of those, adapter builds */
    uint64_t geo_tick_ns;
    uint64_t geo_max_units, geo_max_ns; /* most in one tick since the last diagnostics sample */
    gy_phys_move *moves;                /* kinematic moves under way, dense (swap-remove) */
    uint32_t move_count, move_capacity;
    gy_u32_array awake;
    gy_u32_array lanes[GY_PHYS_LANES];
    gy_u32_array touched;       /* re-read at the coming publish */
    gy_u32_array retouch;       /* re-read at the publish after (teleport flag clearing) */
    gy_u32_array disturbed;     /* teleported this publish (gy_phys_wake_disturbed sorts it) */
    uint32_t disturbed_scanned; /* of those, how many the last wake scan saw */
    gy_u32_array dirty[GY_PHYS_DIRTY_RING]; /* store indices changed at publish seq s: [s % 8] */
    /* The lists a burst of creations fills with every body once, trimmed once quiet. */
    gy_phys_burst dirty_burst[GY_PHYS_DIRTY_RING];
    gy_phys_burst touched_burst, disturbed_burst;
    gy_hash_map release_set; /* generations released in a batch */
    gy_command **scratch;    /* a batch's lifecycle commands */
    uint32_t scratch_capacity;
    gy_collider_def *collider_scratch;
    gy_collider_id *collider_ids;
    uint32_t collider_scratch_capacity;
    uint32_t collider_ids_capacity;
    gy_physics_character_input *inputs;
    uint32_t input_count, input_capacity;
    gy_contact_tracker tracker;
    gy_phys_character *chars; /* registered characters, dense (swap-remove) */
    uint32_t char_count, char_capacity;
    gy_contact *char_contacts; /* the step's contacts with the characters' sensor pairs replaced */
    uint32_t char_contact_capacity;
    /* The step's contacts with every piece of a mesh built in pieces named as its first piece
     * (physics_publish.c), while pieced_bodies > 0. */
    gy_contact *piece_contacts;
    uint32_t piece_contact_capacity;
    uint32_t pieced_bodies;
    gy_hit *char_hits;
    uint32_t char_hit_capacity;
    uint32_t step_contacts;  /* contacts the adapter listed in the last step */
    uint32_t tick_events;    /* collision events of the last tick */
    uint64_t events;         /* collision events so far */
    bool drained_any;        /* this iteration applied at least one command */
    uint64_t reads, changes; /* of the current read-back */

#if GY_DIAGNOSTICS
    gy_phys_window win_step, win_publish, win_pacing;
    uint64_t diag_sample;
    uint64_t diag_last_ns;
    uint64_t diag_last_tick;
    uint64_t diag_last_events; /* `events` at the previous sample */
    uint64_t diag_sort[GY_PHYS_WINDOW];
#endif
} gy_phys_sim;

/* The subsystem: one part per owner. A function that runs on one thread takes that thread's part
 * (which reaches the fixed settings and the shared atomics), never the whole. */
struct gy_physics {
    gy_phys_config cfg;
    gy_phys_shared sh;
    gy_phys_game game;
    gy_phys_sim sim;
    gy_allocator_meter own_meter; /* cfg.meter when the definition gave none */
};

/* ---- helpers shared across physics*.c -------------------------------------------------------- */

/* The current proxy of body index `s` (below body_count): in the buffer the writer holds.
 * Physics thread, or the game thread while that one is parked or stopped. */
static inline const gy_proxy *gy_phys_proxy_of(const gy_phys_sim *p, uint32_t s)
{
    return &p->sh->frames[p->frame].pages[s >> GY_PROXY_PAGE_SHIFT][s & (GY_PROXY_PAGE - 1u)];
}

/* The adapter's handle of the collider at `slot`. */
static inline gy_collider_id gy_phys_collider_id(const gy_phys_sim *p, uint32_t slot)
{
    return (gy_collider_id){gy_handle_make(slot, p->colliders[slot].generation)};
}

static inline gy_phys_page *gy_phys_page_of(gy_proxy *proxies)
{
    return (gy_phys_page *)(void *)((char *)proxies - offsetof(gy_phys_page, proxies));
}

/* physics_publish.c: copies the writer's page of body index `s` when other buffers share it;
 * NULL when that copy could not be made (out of memory). */
gy_proxy *gy_phys_unshare(gy_phys_sim *p, uint32_t s);

/* The proxy of body index `s` (below body_count) to write, in the buffer the writer holds:
 * its page copied first when shared. NULL: out of memory, nothing changed. Same threads as
 * gy_phys_proxy_of. */
static inline gy_proxy *gy_phys_proxy_write(gy_phys_sim *p, uint32_t s)
{
    gy_proxy *page = p->sh->frames[p->frame].pages[s >> GY_PROXY_PAGE_SHIFT];
    if (gy_phys_page_of(page)->refs > 1u)
        return gy_phys_unshare(p, s);
    return &page[s & (GY_PROXY_PAGE - 1u)];
}

/* A body's mark for publish sequence `seq` (never 0: see gy_phys_sim.pub_seq). */
static inline uint32_t gy_phys_seq_mark(uint64_t seq)
{
    return (uint32_t)seq;
}

static inline void gy_phys_add(uint64_t *c, uint64_t n)
{
    __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}
static inline void gy_phys_set32(uint32_t *c, uint32_t v)
{
    __atomic_store_n(c, v, __ATOMIC_RELAXED);
}
static inline void gy_phys_set64(uint64_t *c, uint64_t v)
{
    __atomic_store_n(c, v, __ATOMIC_RELAXED);
}
static inline uint64_t gy_phys_get(const uint64_t *c)
{
    return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/* physics_record.c (game thread): the payload release callback (any thread that discards a
 * command), the pool of body refs and the checks every recorded description passes. */
void gy_phys_release_payload(void *ctx, gy_command *cmd);
/* Releases every ref, then issues one to each of a bootstrap list's bodies, joints and resources
 * into b->body_refs, b->joint_refs and b->resource_refs (start). GY_ERR_CAPACITY /
 * GY_ERR_OUT_OF_MEMORY leave no ref live and none issued. */
gy_result gy_phys_ids_reset(gy_phys_game *p, const gy_physics_bootstrap *b);
/* Releases every ref (a start that failed, destroy's storage aside). */
void gy_phys_ids_clear(gy_phys_game *p);
/* The ref the last start issued to the bootstrap list's i-th body, joint or resource (a start
 * issues them in list order, from the lowest index up). */
gy_physics_body_ref gy_phys_bootstrap_body_ref(const gy_phys_game *p, uint32_t i);
gy_physics_joint_ref gy_phys_bootstrap_joint_ref(const gy_phys_game *p, uint32_t i);
gy_physics_resource_ref gy_phys_bootstrap_resource_ref(const gy_phys_game *p, uint32_t i);
void gy_phys_ids_free(gy_phys_game *p);
/* Validates a body description (game side and bootstrap). */
gy_result gy_phys_validate_body_def(const gy_physics_body_def *d);
gy_result gy_phys_validate_joint_def(const gy_physics_joint_def *d);
gy_result gy_phys_validate_resource_def(const gy_physics_resource_def *d);

/* physics_apply.c (physics thread): the batch dispatcher. */
/* Applies one whole batch (lifecycle first, creates cancelled by a later release skipped). */
void gy_phys_apply_batch(gy_phys_sim *p, gy_command_batch *batch);
/* Drains every ready batch; returns how many. */
uint32_t gy_phys_drain(gy_phys_sim *p);

/* physics_capture.c (physics thread): records a batch about to be applied, and the state after
 * a publish that followed a step (inside the sim lock). No-ops unless capturing. */
void gy_phys_capture_batch(gy_phys_sim *p, const gy_command_batch *batch);
void gy_phys_capture_state(gy_phys_sim *p);
/* Frees a capture buffer still held (destroy). */
void gy_phys_capture_free(gy_physics *p);

/* physics_world.c: roster operations on the physics thread (inside the sim lock). */
/* `character` (NULL: none) registers the body's character once it exists; `asleep`: a Dynamic
 * body is put to sleep before its first step; `bootstrap`: the colliders name the bootstrap
 * list's resources by index alone (their generations were issued by the start, not the host). */
void gy_phys_create_body(gy_phys_sim *p, gy_physics_body_ref ref, const gy_body_def *def,
                         const gy_collider_def *colliders, uint32_t count,
                         const gy_character_def *character, bool asleep, bool bootstrap);
/* Releases the body `ref` names if it is live; false (nothing done) otherwise. */
bool gy_phys_release_body(gy_phys_sim *p, gy_physics_body_ref ref);
/* The joint at desc->index with the ref's `generation`. */
void gy_phys_create_joint(gy_phys_sim *p, const gy_physics_joint_def *desc,
                          gy_physics_joint_ref ref);
/* False (nothing changed) when `ref` names no live joint there. */
bool gy_phys_release_joint(gy_phys_sim *p, gy_physics_joint_ref ref);
void gy_phys_create_resource(gy_phys_sim *p, gy_physics_resource_ref ref, bool is_mesh,
                             const gy_vec3 *vertices, uint32_t vertex_count,
                             const uint32_t *indices, uint32_t index_count);
/* False (nothing changed) when `ref` names no live resource there. */
bool gy_phys_release_resource(gy_phys_sim *p, gy_physics_resource_ref ref);
/* Makes a built resource live as `ref` (taking the blob's creator reference, and the array of
 * `piece_count` adapter meshes of a mesh built in pieces, else NULL and 0); grows the table as
 * needed. GY_ERR_OUT_OF_MEMORY changes nothing. */
gy_result gy_phys_install_resource(gy_phys_sim *p, gy_physics_resource_ref ref, gy_resource_id id,
                                   gy_snapshot_geometry *g, gy_resource_id *pieces,
                                   uint32_t piece_count);
/* Fails a create: counts it and sends CREATE_FAILED. */
void gy_phys_reply_failed(gy_phys_sim *p, gy_physics_object_kind kind, uint32_t key,
                          uint32_t generation, gy_result result);

/* ---- runtime geometry in slices (physics_geometry.c) ----------------------------------------- */

/* CREATE_RESOURCE: takes the command's payload into a job at the back of the queue. */
void gy_phys_geo_enqueue(gy_phys_sim *p, gy_command *c);
/* CREATE_BODY: true when the body names geometry still queued, and was parked (its payload
 * taken) to be created when that geometry is ready. */
bool gy_phys_geo_park(gy_phys_sim *p, gy_command *c);
/* RELEASE_BODY of a parked body: drops it. True when one was parked. */
bool gy_phys_geo_unpark(gy_phys_sim *p, gy_physics_body_ref ref);
/* RELEASE_RESOURCE of a queued resource: cancels its job. True when `ref`'s was queued. */
bool gy_phys_geo_cancel(gy_phys_sim *p, gy_physics_resource_ref ref);
/* The most adapter colliders a body may have (its colliders with a mesh's pieces counted). */
#define GY_PHYS_MAX_ADAPTER_COLLIDERS (1u << 20)
/* Units one triangle of an adapter mesh build is charged: about what the adapter's tree and edge
 * table take per triangle in units of the query blob's build, timed (bench section `geometry`). */
#define GY_PHYS_GEO_TRIANGLE_UNITS 256u
/* Units a runtime hull's adapter slice is charged per vertex and per triangle of the built hull
 * (the adapter's copy, the query blob's copy, their walks, the body's mass integral): timed at
 * about 20 ns an item with Bullet (0.87 ms for 14,370 vertices and 28,736 triangles), about three
 * query-blob units. */
#define GY_PHYS_GEO_HULL_ITEM_UNITS 3u
/* Units per point a hull build is estimated at in the queue's size (the build of a cloud of mostly
 * inner points; one whose points are all on the hull costs about 1.5 n² units). */
#define GY_PHYS_GEO_HULL_POINT_UNITS 48u
/* The fewest triangles a piece holds, however small the budget. */
#define GY_PHYS_GEO_MIN_PIECE 64u
/* Triangles in one piece of a runtime mesh under `budget`: budget / GY_PHYS_GEO_TRIANGLE_UNITS,
 * at least GY_PHYS_GEO_MIN_PIECE. A mesh of more is made in pieces. */
uint32_t gy_phys_geo_piece_triangles(uint64_t budget);
/* Spends what is left of this tick's budget on the queue. */
void gy_phys_geo_run(gy_phys_sim *p);
/* The most units and time one tick spent since the previous call (diagnostics). */
void gy_phys_geo_take_max(gy_phys_sim *p, uint64_t *units, uint64_t *ns);
/* Drops every job and parked body (reset and teardown). */
void gy_phys_geo_clear(gy_phys_sim *p);
/* Forgets everything physics-side (after the thread is joined, before world_destroy). */
void gy_phys_reset_world_state(gy_phys_sim *p);
/* Frees the roster's memory (destroy). */
void gy_phys_free_world_state(gy_phys_sim *p);

/* physics_character.c: Gyre's character controller under the subsystem, the one place that calls
 * it (character.c calls nothing of the subsystem's: the hook reaches back through its ops). */
/* Creates the subsystem's set (create; the thread is not running). */
gy_result gy_phys_characters_create(const gy_allocator *a, gy_vec3 gravity,
                                    gy_character_group **out);
void gy_phys_characters_destroy(gy_character_group *set);
/* The world's gravity changed: the physics thread's, or the game thread's while stopped. */
gy_result gy_phys_characters_set_gravity(gy_character_group *set, gy_vec3 gravity);
/* Checks a body description's character settings (game side and bootstrap). */
gy_result gy_phys_character_validate(const gy_character_def *settings);
/* The rest runs on the physics thread. */
/* Registers the character of a body just created by the adapter (before the roster takes it).
 * GY_ERR_OUT_OF_MEMORY or the set's error, nothing registered. */
gy_result gy_phys_character_register(gy_phys_sim *p, gy_physics_body_ref ref,
                                     const gy_character_def *settings,
                                     const gy_collider_def *capsule, gy_collider_id capsule_id);
/* Unregisters the character of a body being released (no-op for other bodies). */
void gy_phys_character_unregister(gy_phys_sim *p, uint32_t store_index);
/* Forgets every character (the world stopped). */
void gy_phys_characters_reset(gy_phys_sim *p);
/* After a step: Gyre's controller, then the host's hook. Inside the sim lock. */
void gy_phys_move_characters(gy_phys_sim *p, bool with_inputs);
/* The step's contacts for the tracker: the adapter's list with every pair of a character's
 * capsule and a sensor replaced by what an overlap of the capsule where the move left it finds,
 * so a character's sensor pairs begin and end in the tick of the move. Without characters (or
 * on a failure, logged) the adapter's list itself. Valid until the next call. */
uint32_t gy_phys_character_contacts(gy_phys_sim *p, const gy_contact *contacts, uint32_t count,
                                    const gy_contact **out);
void gy_phys_characters_free(gy_phys_sim *p);

/* physics_moves.c: kinematic bodies travelling to a target (MOVE_KINEMATIC), physics thread. */
/* Starts (or restarts) the move of the body at store_index from where it is now. */
gy_result gy_phys_move_begin(gy_phys_sim *p, gy_physics_body_ref ref, gy_pose target,
                             uint32_t steps);
/* Ends the body's move where it is, at rest (a teleport, a velocity write or a release overrides
 * it); no-op without one. */
void gy_phys_move_cancel(gy_phys_sim *p, uint32_t store_index);
/* Before a step: sets each moving body's velocities for this step's share of its move. */
void gy_phys_moves_before_step(gy_phys_sim *p);
/* After a step (and the characters it carried): a body that arrived stops there. */
void gy_phys_moves_after_step(gy_phys_sim *p);
void gy_phys_moves_free(gy_phys_sim *p);

/* physics_publish.c */
/* After a step: collision bookkeeping for `tick` (tracker update, touches, joint wake-ups, joint
 * breaks). Inside the sim lock. */
void gy_phys_after_step(gy_phys_sim *p, uint64_t tick);
/* Reads back every candidate body and updates proxies and the snapshot entries (inside the lock).
 */
void gy_phys_read_back(gy_phys_sim *p);
/* The first part of the read-back, the awake list alone: called right after the last step of an
 * iteration, before the collision bookkeeping, while the adapter's bodies are still in cache (the
 * bookkeeping's tables would push them out). Only after the iteration's last step: a body read
 * is not read again until the next publish. Inside the lock. */
void gy_phys_read_awake(gy_phys_sim *p);

/* Makes the proxy buffer the writer holds span body indices below `need` (new ones empty).
 * GY_ERR_OUT_OF_MEMORY changes nothing. */
gy_result gy_phys_cover_frame(gy_phys_sim *p, uint32_t need);
/* Frees every proxy page and page table (destroy). */
void gy_phys_free_pages(gy_phys_sim *p);
/* Publishes the proxy buffer (and brings the next one up to date), the snapshot, commits replies
 * (outside the lock), and opens the next publish sequence. */
void gy_phys_publish(gy_phys_sim *p);
/* Prepares publish sequence p->pub_seq (clears its dirty list). */
void gy_phys_begin_publish(gy_phys_sim *p);
/* After a drain: touches the contact partners of teleported bodies (the adapter wakes bodies a
 * static or sleeper was moved away from). Inside the sim lock. */
void gy_phys_wake_disturbed(gy_phys_sim *p);
/* The contact tracker's on_event (ctx: the gy_physics): pushes the event as a collision reply;
 * an EXIT touches both bodies. */
void gy_phys_contact_event(void *ctx, const gy_contact_event *ev);

/* physics_diag.c */
void gy_phys_window_add(gy_phys_window *w, uint64_t ns);
/* Mean, median, 99th percentile and maximum of a window (`scratch` holds GY_PHYS_WINDOW values;
 * the window itself is left as it is). */
gy_physics_timing gy_phys_timing_of(const gy_phys_window *w, uint64_t *scratch);
/* Samples at 5 Hz (real time) or every step_hz/5 ticks (lockstep). */
void gy_phys_diag_maybe_sample(gy_phys_sim *p, uint64_t real_now);
gy_result gy_phys_diag_create(gy_physics *p);
void gy_phys_diag_destroy(gy_physics *p);

#endif /* GY_PHYSICS_INTERNAL_H */
