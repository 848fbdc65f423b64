/* The scene barrier as a host sees it: mutation windows during which the physics thread does not
 * step (additive loads and unloads, recreating bodies) without joining the thread, its counters
 * and phases for diagnostics, and the clock every deadline and timestamp is read on. The physics
 * thread's side (attaching, safe points, pacing) is private to the subsystem; gy_physics_barrier
 * hands out the subsystem's barrier.
 *
 * Threading contract
 *   - Game thread (any thread except the physics thread; one mutation at a time):
 *     gy_barrier_begin_mutation, _end_mutation, _in_mutation, _poll_watchdog.
 *   - Any thread: gy_barrier_get_stats, the phase readers, gy_clock_now_ns and the
 *     World-lock notes (which act on the calling thread).
 *
 * Behaviour
 *   - A mutation is granted at once while the physics thread paces between ticks or is not
 *     running, else at the end of its current step, never inside one.
 *   - Misuse returns an error and never hangs: nested begin (GY_ERR_MISUSE), end without begin
 *     (GY_ERR_MISUSE), begin or end from the physics thread or end from a thread other than the
 *     one that began (GY_ERR_WRONG_THREAD), a second game thread beginning while a mutation is
 *     requested or open (GY_ERR_BUSY).
 *   - Lock order (barrier first, then World lock): with the `lock_checks` build option the engine
 *     reports World-lock acquire/release through gy_world_lock_note_*; requesting the barrier
 *     while the calling thread holds a World lock aborts the process with a message. The depth is
 *     kept in a thread-local counter (the one piece of thread-local state in Gyre: the question is
 *     "does this thread hold a lock", which no context object can answer).
 *   - Watchdog: a grant, or a command-batch acknowledgement, slower than the subsystem's
 *     `watchdog_ns` is reported once per request/batch through the logger, with both threads'
 *     states. */
#ifndef GYRE_PHYSICS_BARRIER_H
#define GYRE_PHYSICS_BARRIER_H

#include "gyre/clock.h"
#include "gyre/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The barrier between the game thread's mutations and the physics thread's steps. */
typedef struct gy_barrier gy_barrier;

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

typedef struct gy_barrier_stats {
    uint64_t mutations;            /* granted begin_mutation calls */
    uint64_t grants_immediate;     /* granted by the game thread itself (pacing or detached) */
    uint64_t grants_at_safe_point; /* granted by the physics thread at the end of a step */
    uint64_t grant_max_ns;         /* slowest request → grant */
    uint64_t mutation_max_ns;      /* longest open window */
    uint64_t safe_points;          /* safe points and paces passed by the physics thread */
    uint64_t paces;                /* _pace_until calls */
    uint64_t watchdog_reports;
    uint64_t timeouts; /* begin_mutation calls that gave up */
} gy_barrier_stats;

/* ---- game thread ----------------------------------------------------------------------------- */

/* Game thread: requests a mutation window and waits until it is granted. Granted at once when the
 * physics thread is pacing or detached; at the end of its current step otherwise. GY_OK (window
 * open), GY_ERR_TIMEOUT after timeout_ns (0 = no limit; the request is withdrawn), or a misuse
 * error (see the header comment). Aborts under lock_checks if the thread holds a World lock. */
gy_result gy_barrier_begin_mutation(gy_barrier *b, uint64_t timeout_ns);

/* Game thread: closes the window; the physics thread resumes. GY_OK or a misuse error. */
gy_result gy_barrier_end_mutation(gy_barrier *b);

/* Game thread: true between a granted begin and its end on this barrier. */
bool gy_barrier_in_mutation(const gy_barrier *b);

/* Game thread (e.g. once per tick): checks the watched command queue's oldest unacknowledged batch
 * against the bound and reports it (once per batch). Returns true when it reported. */
bool gy_barrier_poll_watchdog(gy_barrier *b);

/* ---- any thread ------------------------------------------------------------------------------ */

void gy_barrier_get_stats(const gy_barrier *b, gy_barrier_stats *out);

/* The physics and game phases right now (a racy but consistent-per-field view for diagnostics). */
gy_physics_phase gy_barrier_physics_phase(const gy_barrier *b);
gy_game_phase gy_barrier_game_phase(const gy_barrier *b);

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

#endif /* GYRE_PHYSICS_BARRIER_H */
