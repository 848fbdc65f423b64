/* Scene barrier: lets the game thread open a mutation window (additive load/unload, recreating
 * bodies) during which the physics thread does not step, without joining the thread.
 *
 * Threading contract
 *   - Physics thread (the one that called _attach_physics, until _detach_physics):
 *     gy_scene_barrier_safe_point, _pace_until, _set_activity, _detach_physics.
 *   - Game thread (any thread except the attached physics thread; one mutation at a time):
 *     gy_scene_barrier_begin_mutation, _end_mutation, _poll_watchdog.
 *   - Any thread: gy_scene_barrier_wake, gy_scene_barrier_get_stats, gy_clock_now_ns and the
 *     World-lock notes (which act on the calling thread).
 *   - No thread may be using it during _create and _destroy.
 *
 * Behaviour
 *   - While no physics thread is attached the safe point is held, so a mutation is granted at once.
 *   - _safe_point (between steps): grants a pending request and returns only after that mutation
 *     ends. A request made mid-step is therefore granted at the end of that step, never inside it.
 *   - _pace_until(deadline) holds the safe point for the whole wait: the game thread grants itself
 *     a mutation with one compare-and-swap on the barrier's state word (no syscall, no wake-up of
 *     the physics thread). The physics thread sleeps (absolute deadline) until a spin margin
 *     before the deadline and then spins; it never returns while a mutation is open, and keeps
 *     pacing after one ends.
 *   - Misuse returns an error and never hangs: nested begin (GY_ERR_MISUSE), end without begin
 *     (GY_ERR_MISUSE), begin or end from the physics thread or end from a thread other than the
 *     one that began (GY_ERR_WRONG_THREAD), a second game thread beginning while a mutation is
 *     requested or open (GY_ERR_BUSY), physics calls from another thread (GY_ERR_WRONG_THREAD).
 *   - Lock order (barrier first, then World lock): with the `lock_checks` build option the engine
 *     reports World-lock acquire/release through gy_world_lock_note_*; requesting the barrier
 *     while the calling thread holds a World lock aborts the process with a message. The depth is
 *     kept in a thread-local counter (the one piece of thread-local state in Gyre: the question is
 *     "does this thread hold a lock", which no context object can answer).
 *   - Watchdog: a grant, or a command-batch acknowledgement (when a command queue is watched),
 *     slower than `watchdog_ns` is reported once per request/batch through the watchdog callback
 *     (or the logger), with both threads' states. */
#ifndef GYRE_SCENE_BARRIER_H
#define GYRE_SCENE_BARRIER_H

#include "gyre/clock.h"
#include "gyre/command_queue.h"
#include "gyre/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gy_scene_barrier gy_scene_barrier;

/* What the physics thread is doing, as the barrier sees it. */
typedef enum gy_physics_phase {
    GY_PHYSICS_DETACHED = 0, /* no physics thread attached: safe point held */
    GY_PHYSICS_RUNNING,      /* between safe points (draining, stepping, publishing) */
    GY_PHYSICS_PACING,       /* inside _pace_until, safe point held */
    GY_PHYSICS_PARKED        /* waiting for an open mutation to end */
} gy_physics_phase;

/* What the game thread is doing, as the barrier sees it. */
typedef enum gy_game_phase {
    GY_GAME_IDLE = 0,
    GY_GAME_REQUESTING, /* inside _begin_mutation, not granted yet */
    GY_GAME_MUTATING    /* between a granted _begin_mutation and _end_mutation */
} gy_game_phase;

typedef enum gy_watchdog_event {
    GY_WATCHDOG_GRANT = 0, /* a mutation request waited longer than the bound */
    GY_WATCHDOG_BATCH_ACK  /* a published command batch stayed unacknowledged longer */
} gy_watchdog_event;

/* Both threads' state when the watchdog fires. */
typedef struct gy_watchdog_report {
    gy_watchdog_event event;
    uint64_t waited_ns; /* how long the grant / acknowledgement has been waited for so far */
    uint64_t bound_ns;
    gy_game_phase game;
    gy_physics_phase physics;
    const char *physics_activity; /* last label from _set_activity ("" if none) */
    uint64_t physics_phase_ns;    /* time since the physics thread last passed a safe point or
                                     entered/left pacing */
    uint64_t safe_points;         /* safe points + paces the physics thread has passed */
    uint64_t batch_seq;           /* BATCH_ACK: the unacknowledged batch; else 0 */
    uint64_t batches_published;   /* from the watched command queue (0 if none) */
    uint64_t batches_acknowledged;
    uint32_t batches_staged;
} gy_watchdog_report;

/* Called on the game thread (inside _begin_mutation or _poll_watchdog). */
typedef void (*gy_watchdog_fn)(void *ctx, const gy_watchdog_report *report);

typedef struct gy_scene_barrier_def {
    const gy_allocator *allocator; /* NULL: default */
    /* _pace_until sleeps until this long before the deadline, then spins. 0 = 1 ms. */
    uint64_t spin_margin_ns;
    /* _begin_mutation spins this long for a mid-step grant before sleeping. 0 = 200 µs. */
    uint64_t grant_spin_ns;
    /* Watchdog bound for grants and batch acknowledgements. 0 = 250 ms; UINT64_MAX = off. */
    uint64_t watchdog_ns;
    gy_watchdog_fn watchdog; /* NULL: log a warning through `logger` */
    void *watchdog_ctx;
    const gy_logger *logger; /* NULL: stderr */
    /* Optional: whose batch acknowledgements _poll_watchdog watches. Not owned. */
    const gy_command_queue *commands;
} gy_scene_barrier_def;

typedef struct gy_scene_barrier_stats {
    uint64_t mutations;            /* granted begin_mutation calls */
    uint64_t grants_immediate;     /* granted by the game thread itself (pacing or detached) */
    uint64_t grants_at_safe_point; /* granted by the physics thread at the end of a step */
    uint64_t grant_max_ns;         /* slowest request → grant */
    uint64_t mutation_max_ns;      /* longest open window */
    uint64_t safe_points;          /* safe points and paces passed by the physics thread */
    uint64_t paces;                /* _pace_until calls */
    uint64_t watchdog_reports;
    uint64_t timeouts; /* begin_mutation calls that gave up */
} gy_scene_barrier_stats;

/* Creates a barrier (no physics thread attached). GY_ERR_OUT_OF_MEMORY. */
gy_result gy_scene_barrier_create(const gy_scene_barrier_def *def, gy_scene_barrier **out);

/* Frees it. NULL is ignored. */
void gy_scene_barrier_destroy(gy_scene_barrier *b);

/* ---- physics thread ------------------------------------------------------------------------- */

/* Physics thread, first call: registers the calling thread and releases the safe point (the thread
 * is now "running"). Waits for a mutation that is open to end first. GY_ERR_BUSY if another thread
 * is attached. */
gy_result gy_scene_barrier_attach_physics(gy_scene_barrier *b);

/* Physics thread, last call before it exits: holds the safe point for good (granting a pending
 * request) and forgets the thread. GY_ERR_WRONG_THREAD from another thread. */
gy_result gy_scene_barrier_detach_physics(gy_scene_barrier *b);

/* Physics thread, between steps: when a mutation was requested, grants it and returns after it
 * ends; otherwise returns at once (no syscall, no lock). GY_OK or GY_ERR_WRONG_THREAD. */
gy_result gy_scene_barrier_safe_point(gy_scene_barrier *b);

/* Physics thread: waits until gy_clock_now_ns() >= deadline_ns holding the safe point (see the
 * header comment) and returns with no mutation open. Returns early if gy_scene_barrier_wake was
 * called since the last pace (then *woken, optional, is true). GY_OK or GY_ERR_WRONG_THREAD. */
gy_result gy_scene_barrier_pace_until(gy_scene_barrier *b, uint64_t deadline_ns, bool *woken);

/* Physics thread: a static label naming what it is doing ("drain", "step", ...) for watchdog
 * reports. The string must outlive the barrier. */
void gy_scene_barrier_set_activity(gy_scene_barrier *b, const char *label);

/* Any thread: makes the physics thread's current (or next) _pace_until return early, e.g. to stop
 * it or to hand it a lockstep tick. This one does wake a sleeping thread. */
void gy_scene_barrier_wake(gy_scene_barrier *b);

/* ---- game thread ----------------------------------------------------------------------------- */

/* Game thread: requests a mutation window and waits until it is granted. Granted at once when the
 * physics thread is pacing or detached; at the end of its current step otherwise. GY_OK (window
 * open), GY_ERR_TIMEOUT after timeout_ns (0 = no limit; the request is withdrawn), or a misuse
 * error (see the header comment). Aborts under lock_checks if the thread holds a World lock. */
gy_result gy_scene_barrier_begin_mutation(gy_scene_barrier *b, uint64_t timeout_ns);

/* Game thread: closes the window; the physics thread resumes. GY_OK or a misuse error. */
gy_result gy_scene_barrier_end_mutation(gy_scene_barrier *b);

/* Game thread: true between a granted begin and its end on this barrier. */
bool gy_scene_barrier_in_mutation(const gy_scene_barrier *b);

/* Game thread (e.g. once per tick): checks the watched command queue's oldest unacknowledged batch
 * against the bound and reports it (once per batch). Returns true when it reported. */
bool gy_scene_barrier_poll_watchdog(gy_scene_barrier *b);

/* ---- any thread ------------------------------------------------------------------------------ */

void gy_scene_barrier_get_stats(const gy_scene_barrier *b, gy_scene_barrier_stats *out);

/* The physics and game phases right now (a racy but consistent-per-field view for diagnostics). */
gy_physics_phase gy_scene_barrier_physics_phase(const gy_scene_barrier *b);
gy_game_phase gy_scene_barrier_game_phase(const gy_scene_barrier *b);

/* ---- World-lock order checks (calling thread) ----------------------------------------------- */

/* True when the build tracks World-lock depth (meson option lock_checks). */
bool gy_world_lock_checks_enabled(void);

/* The engine calls these right after taking / right before dropping a World lock (shared or
 * exclusive). No-ops when checks are compiled out. A release without an acquire aborts. */
void gy_world_lock_note_acquired(void);
void gy_world_lock_note_released(void);

/* World locks the calling thread holds (always 0 when checks are compiled out). */
uint32_t gy_world_lock_depth(void);

#ifdef __cplusplus
}
#endif

#endif /* GYRE_SCENE_BARRIER_H */
