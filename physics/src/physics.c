/* The physics subsystem: creation, start/stop, the physics thread's loop (real time and
 * lockstep), the time rules, live queries and counters. */
#include <math.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "gyre/math.h"
#include "physics_roster.h"

#define MAX_WALL_DT_NS 100000000u /* wall dt is clamped to 0.1 s */
/* The shortest pace: a tick clock that stands still just short of a step (an injected one) must
 * not make the thread spin. */
#define MIN_PACE_NS      50000u
#define MAX_TIME_SCALE   64.0
#define MAX_CATCHUP      GY_PHYSICS_MAX_CATCHUP
#define LOCKSTEP_SPIN_NS 20000u /* the game spins this long before sleeping on a tick */
/* ...unless ticks have been taking longer than this: the spin would be CPU burnt for nothing. */
#define LOCKSTEP_SPIN_LIMIT_NS 200000u
#define LOCKSTEP_IDLE_NS                                                                           \
    3600000000000ull /* an idle lockstep thread paces toward this far deadline */

/* ---- small helpers --------------------------------------------------------------------------- */

static uint64_t clock_default(void *ctx)
{
    (void)ctx;
    return gy_clock_now_ns();
}

static uint64_t now_clock(const gy_phys_config *p)
{
    return p->clock(p->clock_ctx);
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool stop_requested(const gy_phys_shared *p)
{
    return __atomic_load_n(&p->stop_requested, __ATOMIC_ACQUIRE) != 0;
}

static double effective_scale(const gy_phys_shared *p)
{
    if (__atomic_load_n(&p->hold, __ATOMIC_ACQUIRE))
        return 0.0;
    uint64_t bits = __atomic_load_n(&p->time_scale_bits, __ATOMIC_RELAXED);
    double s;
    memcpy(&s, &bits, sizeof s);
    return s;
}

static void sim_lock(gy_phys_shared *p)
{
    pthread_rwlock_wrlock(&p->sim_lock);
}

/* Releases the simulation lock however it was taken: the step's write lock or a live query's
 * (query_begin: shared, or exclusive where the adapter asks). */
static void sim_unlock(gy_phys_shared *p)
{
    pthread_rwlock_unlock(&p->sim_lock);
}

static bool body_awake_cb(void *ctx, gy_body_id body)
{
    gy_phys_sim *p = ctx;
    gy_body_state st;
    if (p->cfg->backend->body_get_state(p->world, body, &st) != GY_OK)
        return true;
    return st.awake;
}

/* ---- definition ------------------------------------------------------------------------------ */

gy_physics_def gy_default_physics_def(void)
{
    gy_physics_def d;
    memset(&d, 0, sizeof d);
    const gy_backend *be = gy_backend_at(0);
    d.backend = be != NULL ? be->name : NULL;
    d.world = gy_default_backend_world_def();
    d.step_hz = 60;
    d.max_catchup_steps = 4;
    d.frame_budget_s = 1.0 / 60.0;
    d.geometry_budget = GY_PHYSICS_DEFAULT_GEOMETRY_BUDGET;
    return d;
}

static gy_result check_def(const gy_physics_def *def)
{
    if (def->step_hz != 0 && (def->step_hz < 10 || def->step_hz > 1000))
        return GY_ERR_INVALID_ARGUMENT;
    if (def->max_catchup_steps > MAX_CATCHUP)
        return GY_ERR_INVALID_ARGUMENT;
    if (!gy_is_finite(def->frame_budget_s) || !gy_vec3_is_finite(def->world.gravity))
        return GY_ERR_NON_FINITE;
    if (def->frame_budget_s < 0.0)
        return GY_ERR_INVALID_ARGUMENT;
    return GY_OK;
}

/* ---- create / destroy ------------------------------------------------------------------------ */

gy_result gy_physics_create(const gy_physics_def *def, gy_physics **out)
{
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    *out = NULL;
    gy_physics_def d = def != NULL ? *def : gy_default_physics_def();
    gy_result r = check_def(&d);
    if (r != GY_OK)
        return r;
    const gy_backend *be = d.backend_table != NULL ? d.backend_table
                           : d.backend != NULL     ? gy_backend_find(d.backend)
                                                   : gy_backend_at(0);
    if (be == NULL)
        return GY_ERR_UNKNOWN_BACKEND;
    const gy_allocator *raw = gy_allocator_or_default(d.allocator);
    gy_physics *p = gy_alloc_zeroed(raw, sizeof *p);
    if (p == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    p->cfg.raw_alloc = raw;
    p->game.cfg = p->sim.cfg = &p->cfg;
    p->game.ids.next = 1; /* generation 0 is the null ref's */
    p->game.joint_ids.next = 1;
    p->game.resource_ids.next = 1;
    p->game.joint_ids.first = p->game.joint_ids.free_from = 1; /* index 0: no joint */
    p->game.resource_ids.first = p->game.resource_ids.free_from = 1;
    p->game.sh = p->sim.sh = &p->sh;
    /* Without a meter from the host, everything after the object itself is counted by its own. */
    const gy_allocator *a = raw;
    if (d.meter != NULL) {
        p->cfg.meter = d.meter;
    } else {
        gy_allocator_meter_init(&p->own_meter, raw);
        p->cfg.meter = &p->own_meter;
        a = &p->own_meter.allocator;
    }
    p->cfg.backend = be;
    p->cfg.alloc = a;
    p->cfg.logger = d.logger;
    p->game.world_def = d.world;
    p->game.world_def.allocator = a;
    p->game.world_def.logger = d.logger;
    p->cfg.step_hz = d.step_hz ? d.step_hz : 60u;
    p->cfg.step_dt = 1.0 / (double)p->cfg.step_hz;
    /* Accumulated time within a millionth of a step of a whole step counts as that step, so
     * rounding never turns 6 steps' worth into 5.999999 (or leaves a sliver that fires later). */
    p->cfg.step_eps = p->cfg.step_dt * 1e-6;
    p->cfg.period_ns = (uint64_t)llround(1e9 / (double)p->cfg.step_hz);
    p->cfg.max_catchup = d.max_catchup_steps ? d.max_catchup_steps : 4u;
    p->cfg.budget_ns =
        d.frame_budget_s > 0.0 ? (uint64_t)llround(d.frame_budget_s * 1e9) : p->cfg.period_ns;
    p->cfg.lockstep = d.lockstep;
    p->cfg.geo_budget = d.geometry_budget ? d.geometry_budget : GY_PHYSICS_DEFAULT_GEOMETRY_BUDGET;
    p->cfg.queries_exclusive = (be->flags & GY_BACKEND_QUERIES_EXCLUSIVE) != 0;
    p->cfg.clock = d.clock != NULL ? d.clock : clock_default;
    p->cfg.clock_ctx = d.clock_ctx;
    p->cfg.move_characters = d.move_characters;
    p->cfg.character_ctx = d.character_ctx;
    double one = 1.0;
    memcpy(&p->sh.time_scale_bits, &one, sizeof one);
    p->sim.pub_seq = 1;

    bool mutex = false, cond = false, rwlock = false;
    pthread_condattr_t ca;
    pthread_rwlockattr_t ra;
    if (pthread_mutex_init(&p->sh.wait_mutex, NULL) == 0)
        mutex = true;
    if (pthread_condattr_init(&ca) == 0) {
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        cond = pthread_cond_init(&p->sh.wait_cond, &ca) == 0;
        pthread_condattr_destroy(&ca);
    }
    if (pthread_rwlockattr_init(&ra) == 0) {
        /* The step must not starve behind a stream of shared readers. */
        pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
        rwlock = pthread_rwlock_init(&p->sh.sim_lock, &ra) == 0;
        pthread_rwlockattr_destroy(&ra);
    }
    if (!mutex || !cond || !rwlock) {
        if (mutex)
            pthread_mutex_destroy(&p->sh.wait_mutex);
        if (cond)
            pthread_cond_destroy(&p->sh.wait_cond);
        if (rwlock)
            pthread_rwlock_destroy(&p->sh.sim_lock);
        gy_free(a, p, sizeof *p);
        return GY_ERR_OUT_OF_MEMORY;
    }

    gy_command_queue_def cq = {a, d.lifecycle_capacity,    d.mutate_capacity,
                               0, gy_phys_release_payload, p};
    gy_reply_queue_def rq = {a, d.reply_capacity};
    r = gy_command_queue_create(&cq, &p->cfg.commands);
    if (r == GY_OK)
        r = gy_reply_queue_create(&rq, &p->cfg.replies);
    if (r == GY_OK) {
        gy_barrier_def bd;
        memset(&bd, 0, sizeof bd);
        bd.allocator = a;
        bd.watchdog_ns = d.watchdog_ns;
        bd.logger = d.logger;
        bd.commands = p->cfg.commands;
        r = gy_barrier_create(&bd, &p->cfg.barrier);
    }
    if (r == GY_OK) {
        gy_triple_buffer_def td;
        memset(&td, 0, sizeof td);
        td.size = sizeof(gy_phys_frame);
        for (uint32_t i = 0; i < GY_PHYS_PROXY_BUFS; i++)
            td.buffers[i] = &p->sh.frames[i];
        td.reader_keeps = true;
        td.allocator = a;
        r = gy_triple_buffer_create(&td, &p->cfg.proxy_tb);
        if (r == GY_OK)
            p->sim.frame = gy_triple_buffer_write_index(p->cfg.proxy_tb);
    }
    if (r == GY_OK) {
        gy_query_snapshot_def qd = {a, 0};
        r = gy_query_snapshot_create(&qd, &p->cfg.snapshot);
    }
    if (r == GY_OK)
        r = gy_phys_diag_create(p);
    if (r == GY_OK) {
        r = gy_phys_characters_create(a, p->game.world_def.gravity, &p->cfg.characters);
    }
    gy_contact_tracker_def td = {a, body_awake_cb, &p->sim, gy_phys_contact_event, &p->sim};
    gy_contact_tracker_init(&p->sim.tracker, &td);
    if (r != GY_OK) {
        gy_physics_destroy(p);
        return r;
    }
    *out = p;
    return GY_OK;
}

void gy_physics_destroy(gy_physics *p)
{
    if (p == NULL)
        return;
    if (p->game.running) {
        if (gy_barrier_in_mutation(p->cfg.barrier))
            gy_barrier_end_mutation(p->cfg.barrier);
        gy_physics_stop(p);
    }
    gy_phys_reset_world_state(&p->sim);
    gy_contact_tracker_fini(&p->sim.tracker);
    gy_phys_characters_destroy(p->cfg.characters);
    gy_phys_diag_destroy(p);
    gy_query_snapshot_destroy(p->cfg.snapshot);
    gy_triple_buffer_destroy(p->cfg.proxy_tb);
    gy_barrier_destroy(p->cfg.barrier);
    gy_reply_queue_destroy(p->cfg.replies);
    gy_command_queue_destroy(p->cfg.commands);
    gy_phys_free_world_state(&p->sim);
    gy_phys_capture_free(p);
    gy_phys_ids_free(&p->game);
    pthread_mutex_destroy(&p->sh.wait_mutex);
    pthread_cond_destroy(&p->sh.wait_cond);
    pthread_rwlock_destroy(&p->sh.sim_lock);
    gy_free(p->cfg.raw_alloc, p, sizeof *p);
}

/* ---- the tick -------------------------------------------------------------------------------- */

/* Lockstep: drains until the batch the request named is in (the game flushes staged batches
 * while it waits). Real time: whatever is ready. */
static void drain_commands(gy_phys_sim *p, bool lockstep)
{
    uint64_t want = lockstep ? __atomic_load_n(&p->sh->lockstep_seq, __ATOMIC_ACQUIRE) : 0u;
    for (;;) {
        sim_lock(p->sh);
        gy_phys_drain(p);
        gy_phys_geo_run(p); /* queued geometry goes on even when no batch came */
        gy_phys_wake_disturbed(p);
        sim_unlock(p->sh);
        if (!lockstep || gy_command_queue_acknowledged(p->cfg->commands) >= want ||
            stop_requested(p->sh))
            return;
        sched_yield();
    }
}

/* One step. `last`: no other step follows before the publish, so the awake bodies are read back
 * right here (see gy_phys_read_awake); the time that takes counts as publish time and is
 * returned. */
static uint64_t step_once(gy_phys_sim *p, bool with_inputs, bool last)
{
    const gy_backend *be = p->cfg->backend;
    uint64_t t0 = gy_clock_now_ns(), read_ns = 0;
    gy_barrier_set_activity(p->cfg->barrier, "step");
    sim_lock(p->sh);
    /* Every tick has its geometry budget, however the ticks fall into iterations: a real-time
     * run's catch-up steps and its lockstep replay then finish each job on the same tick. */
    gy_phys_geo_run(p);
    gy_phys_moves_before_step(p);
    uint64_t s0 = gy_clock_now_ns();
    gy_result r = be->step(p->world, p->cfg->step_dt);
    gy_phys_add(&p->sh->counters.adapter_step_ns, gy_clock_now_ns() - s0);
    if (r != GY_OK)
        gy_log(p->cfg->logger, GY_LOG_ERROR, "physics: adapter step failed: %s",
               gy_result_message(r));
    p->tick++;
    __atomic_store_n(&p->sh->counters.ticks, p->tick, __ATOMIC_RELAXED);
    gy_phys_move_characters(p, with_inputs);
    gy_phys_moves_after_step(p);
    if (last) {
        uint64_t r0 = gy_clock_now_ns();
        gy_phys_read_awake(p);
        read_ns = gy_clock_now_ns() - r0;
    }
    gy_phys_after_step(p, p->tick);
    sim_unlock(p->sh);
    uint64_t dt = gy_clock_now_ns() - t0 - read_ns;
    gy_phys_add(&p->sh->counters.step_ns, dt);
#if GY_DIAGNOSTICS
    gy_phys_window_add(&p->win_step, dt);
#endif
    return read_ns;
}

/* When the simulation's clock reached the tick just stepped, on the tick clock: `acc` simulated
 * seconds (those not stepped) before `started`, at the current time scale. Hosts draw from this
 * (gy_proxy_frame.due_ns), so it stands still when the thread is late: lateness shows as
 * published_ns - due_ns, not as a tick that seems to have come late. */
static uint64_t due_time(const gy_phys_sim *p, double acc, uint64_t started)
{
    double scale = effective_scale(p->sh);
    if (!(scale > 0.0) || acc <= 0.0)
        return started;
    double back = acc / scale * 1e9;
    return back >= (double)started ? 0u : started - (uint64_t)back;
}

/* One iteration after the time rules: drain → steps → publish. `acc` is the accumulator in
 * seconds (real time), `started` the iteration's start on the tick clock. */
static void run_iteration(gy_phys_sim *p, double *acc, uint64_t started, bool lockstep)
{
    uint64_t cpu0 = thread_cpu_ns();
    p->drained_any = false;
    gy_barrier_set_activity(p->cfg->barrier, "drain");
    drain_commands(p, lockstep);
    uint32_t steps = 0;
    uint64_t early_read_ns = 0;
    uint32_t goal = lockstep ? __atomic_load_n(&p->sh->lockstep_steps, __ATOMIC_ACQUIRE) : 0u;
    for (;;) {
        if (lockstep) {
            if (steps >= goal)
                break;
        } else {
            if (*acc + p->cfg->step_eps < p->cfg->step_dt || steps >= p->cfg->max_catchup)
                break;
            if (steps > 0 && now_clock(p->cfg) - started >= p->cfg->budget_ns)
                break;
        }
        /* Last for sure when the rules above will stop the loop whatever the clock says (the
         * frame budget can still stop it earlier: the read-back then simply happens later). */
        bool last = lockstep ? steps + 1u >= goal
                             : *acc - p->cfg->step_dt + p->cfg->step_eps < p->cfg->step_dt ||
                                   steps + 1u >= p->cfg->max_catchup;
        early_read_ns += step_once(p, steps == 0, last);
        if (steps == 0)
            p->input_count = 0; /* one-off inputs reach exactly one tick */
        if (!lockstep)
            *acc = fmax(0.0, *acc - p->cfg->step_dt);
        steps++;
        gy_barrier_safe_point(p->cfg->barrier);
    }
    if (!lockstep && *acc + p->cfg->step_eps >= p->cfg->step_dt) {
        double k = floor((*acc + p->cfg->step_eps) / p->cfg->step_dt);
        *acc = fmax(0.0, *acc - k * p->cfg->step_dt);
        gy_phys_add(&p->sh->counters.catchup_steps_dropped, (uint64_t)k);
        gy_phys_add(&p->sh->counters.catchup_ns_dropped,
                    (uint64_t)llround(k * p->cfg->step_dt * 1e9));
    }
    if (steps > 0)
        p->due_ns = lockstep ? now_clock(p->cfg) : due_time(p, *acc, started);
    if (steps > 0 || p->drained_any) {
        uint64_t t0 = gy_clock_now_ns();
        gy_barrier_set_activity(p->cfg->barrier, "publish");
        sim_lock(p->sh);
        gy_phys_read_back(p);
        if (steps > 0)
            gy_phys_capture_state(p);
        sim_unlock(p->sh);
        gy_phys_publish(p);
        uint64_t dt = gy_clock_now_ns() - t0 + early_read_ns;
        gy_phys_add(&p->sh->counters.publish_ns, dt);
#if GY_DIAGNOSTICS
        gy_phys_window_add(&p->win_publish, dt);
#endif
    }
    gy_phys_add(&p->sh->counters.iterations, 1);
    gy_phys_add(&p->sh->counters.cpu_ns, thread_cpu_ns() - cpu0);
#if GY_DIAGNOSTICS
    gy_phys_diag_maybe_sample(p, gy_clock_now_ns());
#endif
    gy_barrier_set_activity(p->cfg->barrier, "pace");
}

static void realtime_loop(gy_phys_sim *p)
{
    uint64_t real_now = gy_clock_now_ns();
    uint64_t deadline = real_now + p->cfg->period_ns;
    uint64_t last = now_clock(p->cfg);
    double acc = 0.0;
    uint32_t seen_epoch = __atomic_load_n(&p->sh->hold_epoch, __ATOMIC_ACQUIRE);
    while (!stop_requested(p->sh)) {
        bool woken = false;
        gy_barrier_pace_until(p->cfg->barrier, deadline, &woken);
        if (stop_requested(p->sh))
            break;
        real_now = gy_clock_now_ns();
#if GY_DIAGNOSTICS
        if (!woken && real_now >= deadline)
            gy_phys_window_add(&p->win_pacing, real_now - deadline);
#endif
        uint64_t now = now_clock(p->cfg);
        uint32_t epoch = __atomic_load_n(&p->sh->hold_epoch, __ATOMIC_ACQUIRE);
        if (epoch != seen_epoch) {
            /* A hold began or ended since the last iteration (perhaps both, while this thread
             * slept): the time since then is not the simulation's to catch up. */
            seen_epoch = epoch;
            acc = 0.0;
            last = now;
            deadline = real_now + p->cfg->period_ns;
            gy_phys_add(&p->sh->counters.rebases, 1);
        } else {
            uint64_t dt = now > last ? now - last : 0u;
            last = now;
            if (dt > MAX_WALL_DT_NS)
                dt = MAX_WALL_DT_NS;
            acc += (double)dt * 1e-9 * effective_scale(p->sh);
        }
        run_iteration(p, &acc, now, false);
        /* Wake when the next tick falls due (the accumulator reaches a step): results then go
         * out as their time comes, where a fixed grid of periods would hold each one back by
         * the grid's phase, up to a period (hosts draw a step behind the newest result, so that
         * delay would be theirs too). */
        double scale = effective_scale(p->sh);
        uint64_t wait = p->cfg->period_ns;
        if (scale > 0.0 && acc < p->cfg->step_dt)
            wait = (uint64_t)llround((p->cfg->step_dt - acc) / scale * 1e9);
        if (wait > p->cfg->period_ns * 16u)
            wait = p->cfg->period_ns * 16u; /* a tiny time scale: look again now and then */
        if (wait < MIN_PACE_NS)
            wait = MIN_PACE_NS;
        deadline = real_now + wait;
    }
}

static void lockstep_loop(gy_phys_sim *p)
{
    double acc = 0.0;
    while (!stop_requested(p->sh)) {
        uint64_t done = __atomic_load_n(&p->sh->lockstep_done, __ATOMIC_RELAXED);
        uint64_t target = __atomic_load_n(&p->sh->lockstep_target, __ATOMIC_ACQUIRE);
        if (done < target) {
            run_iteration(p, &acc, 0, true);
            __atomic_store_n(&p->sh->lockstep_done, done + 1u, __ATOMIC_SEQ_CST);
            /* The game waits for its whole request: waking it for every tick of a longer one
             * would cost it a wake and a sleep per tick. Taking the mutex orders this against a
             * game thread between its check and its wait; signalling after the unlock keeps the
             * woken game thread from running straight into the held mutex. */
            if (done + 1u >= target && __atomic_load_n(&p->sh->game_waiting, __ATOMIC_SEQ_CST)) {
                pthread_mutex_lock(&p->sh->wait_mutex);
                pthread_mutex_unlock(&p->sh->wait_mutex);
                pthread_cond_broadcast(&p->sh->wait_cond);
            }
            continue;
        }
        /* Idle: hold the safe point until the game asks for ticks (gy_barrier_wake). */
        gy_barrier_pace_until(p->cfg->barrier, gy_clock_now_ns() + LOCKSTEP_IDLE_NS, NULL);
    }
}

/* `ref` with the generation of the body the bootstrap created at its index; unchanged when none
 * is there (the joint's create then fails as one naming a released body does). */
static gy_physics_body_ref bootstrap_ref(const gy_phys_sim *p, gy_physics_body_ref ref)
{
    if (ref.index < p->body_count && p->bodies[ref.index].id.bits != 0)
        ref.generation = p->bodies[ref.index].generation;
    return ref;
}

static void bootstrap(gy_physics *p, const gy_physics_bootstrap *b)
{
    if (b == NULL)
        return;
    for (uint32_t i = 0; i < b->resource_count; i++) {
        const gy_physics_resource_def *d = &b->resources[i];
        /* Issued by the start, as the bodies' are. */
        gy_physics_resource_ref ref = gy_phys_bootstrap_resource_ref(&p->game, i);
        if (d->mesh != NULL)
            gy_phys_create_resource(&p->sim, ref, true, d->mesh->vertices, d->mesh->vertex_count,
                                    d->mesh->indices, d->mesh->index_count);
        else
            gy_phys_create_resource(&p->sim, ref, false, d->hull->points, d->hull->point_count,
                                    NULL, 0);
    }
    for (uint32_t i = 0; i < b->body_count; i++) {
        const gy_physics_body_def *d = &b->bodies[i];
        /* Issued by the start before this thread was created (which orders the read). */
        gy_physics_body_ref ref = gy_phys_bootstrap_body_ref(&p->game, i);
        gy_phys_create_body(&p->sim, ref, &d->def, d->colliders, d->collider_count, d->character,
                            d->start_asleep, true);
    }
    /* The list's joints name its bodies by index: the refs were issued by this start. */
    for (uint32_t i = 0; i < b->joint_count; i++) {
        gy_physics_joint_def d = b->joints[i];
        d.a = bootstrap_ref(&p->sim, d.a);
        if (d.b.generation != 0) /* null: the world */
            d.b = bootstrap_ref(&p->sim, d.b);
        gy_phys_create_joint(&p->sim, &d, gy_phys_bootstrap_joint_ref(&p->game, i));
    }
}

static void *physics_main(void *arg)
{
    gy_physics *p = arg;
    const gy_backend *be = p->cfg.backend;
    gy_result r = be->bind_thread(p->sim.world);
    bool bound = r == GY_OK;
    if (r == GY_OK)
        r = gy_barrier_attach_physics(p->cfg.barrier);
    if (r == GY_OK) {
        gy_barrier_set_activity(p->cfg.barrier, "bootstrap");
        sim_lock(&p->sh);
        bootstrap(p, p->game.bootstrap);
        p->sim.due_ns = now_clock(&p->cfg);
        gy_phys_read_back(&p->sim);
        sim_unlock(&p->sh);
        gy_phys_publish(&p->sim);
    }
    pthread_mutex_lock(&p->sh.wait_mutex);
    p->sh.thread_result = r;
    p->sh.thread_ready = true;
    pthread_cond_broadcast(&p->sh.wait_cond);
    pthread_mutex_unlock(&p->sh.wait_mutex);
    if (r == GY_OK) {
        if (p->cfg.lockstep)
            lockstep_loop(&p->sim);
        else
            realtime_loop(&p->sim);
        /* Every ENTER gets its EXIT, also when the world stops. */
        gy_barrier_set_activity(p->cfg.barrier, "stop");
        sim_lock(&p->sh);
        if (gy_contact_tracker_stop(&p->sim.tracker, p->sim.tick + 1u) != GY_OK)
            gy_log(p->cfg.logger, GY_LOG_ERROR,
                   "physics: exit events at stop lost (out of memory)");
        sim_unlock(&p->sh);
        gy_reply_queue_commit(p->cfg.replies);
        gy_barrier_detach_physics(p->cfg.barrier);
    }
    if (bound)
        be->unbind_thread(p->sim.world);
    return NULL;
}

/* ---- start / stop ---------------------------------------------------------------------------- */

static gy_result check_bootstrap(const gy_physics_bootstrap *b)
{
    if (b == NULL)
        return GY_OK;
    if ((b->resource_count && b->resources == NULL) || (b->body_count && b->bodies == NULL) ||
        (b->joint_count && b->joints == NULL))
        return GY_ERR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < b->resource_count; i++) {
        gy_result r = gy_phys_validate_resource_def(&b->resources[i]);
        if (r != GY_OK)
            return r;
    }
    for (uint32_t i = 0; i < b->body_count; i++) {
        gy_result r = gy_phys_validate_body_def(&b->bodies[i]);
        if (r != GY_OK)
            return r;
    }
    for (uint32_t i = 0; i < b->joint_count; i++) {
        gy_result r = gy_phys_validate_joint_def(&b->joints[i]);
        if (r != GY_OK)
            return r;
    }
    return GY_OK;
}

gy_result gy_physics_start(gy_physics *p, const gy_physics_bootstrap *bootstrap)
{
    if (p == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (p->game.running)
        return GY_ERR_MISUSE;
    gy_result r = check_bootstrap(bootstrap);
    if (r != GY_OK)
        return r;
    /* A start that fails issues nothing: the next one hands out the same generations. */
    uint32_t next = p->game.ids.next, joint_next = p->game.joint_ids.next,
             resource_next = p->game.resource_ids.next;
    r = gy_phys_ids_reset(&p->game, bootstrap);
    if (r == GY_OK)
        r = p->cfg.backend->world_create(&p->game.world_def, &p->sim.world);
    if (r != GY_OK) {
        gy_phys_ids_clear(&p->game);
        p->game.ids.next = next;
        p->game.joint_ids.next = joint_next;
        p->game.resource_ids.next = resource_next;
        return r;
    }
    __atomic_store_n(&p->sh.generation, p->sh.generation + 1u, __ATOMIC_RELAXED);
    __atomic_store_n(&p->sh.stop_requested, 0u, __ATOMIC_RELAXED);
    p->game.bootstrap = bootstrap;
    p->sh.thread_ready = false;
    p->game.game_bound = false;
    gy_phys_invalidate_buffers(&p->sim);
    if (pthread_create(&p->game.thread, NULL, physics_main, p) != 0) {
        p->cfg.backend->world_destroy(p->sim.world);
        p->sim.world = NULL;
        gy_phys_ids_clear(&p->game);
        p->game.ids.next = next;
        p->game.joint_ids.next = joint_next;
        p->game.resource_ids.next = resource_next;
        return GY_ERR_BACKEND;
    }
    pthread_mutex_lock(&p->sh.wait_mutex);
    while (!p->sh.thread_ready)
        pthread_cond_wait(&p->sh.wait_cond, &p->sh.wait_mutex);
    r = p->sh.thread_result;
    pthread_mutex_unlock(&p->sh.wait_mutex);
    p->game.bootstrap = NULL;
    if (r != GY_OK) {
        pthread_join(p->game.thread, NULL);
        gy_phys_reset_world_state(&p->sim);
        p->cfg.backend->world_destroy(p->sim.world);
        p->sim.world = NULL;
        gy_phys_ids_clear(&p->game);
        p->game.ids.next = next;
        p->game.joint_ids.next = joint_next;
        p->game.resource_ids.next = resource_next;
        return r;
    }
    p->game.running = true;
    return GY_OK;
}

gy_result gy_physics_stop(gy_physics *p)
{
    if (p == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    /* The thread is parked inside the window: joining it there would never return. */
    if (!p->game.running || gy_barrier_in_mutation(p->cfg.barrier))
        return GY_ERR_MISUSE;
    __atomic_store_n(&p->sh.stop_requested, 1u, __ATOMIC_RELEASE);
    gy_barrier_wake(p->cfg.barrier);
    pthread_join(p->game.thread, NULL);
    p->game.running = false;
    gy_command_queue_discard_sealed(p->cfg.commands);
    gy_command_queue_discard_open(p->cfg.commands);
    /* Ticks asked for but never run are forgotten with the world. */
    __atomic_store_n(&p->sh.lockstep_done, p->sh.lockstep_target, __ATOMIC_RELAXED);
    if (p->game.game_bound) {
        p->cfg.backend->unbind_thread(p->sim.world);
        p->game.game_bound = false;
    }
    gy_phys_reset_world_state(&p->sim);
    p->cfg.backend->world_destroy(p->sim.world);
    p->sim.world = NULL;
    return GY_OK;
}

bool gy_physics_running(const gy_physics *p)
{
    return p != NULL && p->game.running;
}

gy_barrier *gy_physics_barrier(gy_physics *p)
{
    return p != NULL ? p->cfg.barrier : NULL;
}

const gy_backend *gy_physics_backend(const gy_physics *p)
{
    return p != NULL ? p->cfg.backend : NULL;
}

/* ---- time ------------------------------------------------------------------------------------ */

static bool lockstep_done(gy_phys_shared *p, uint64_t target)
{
    return __atomic_load_n(&p->lockstep_done, __ATOMIC_SEQ_CST) >= target;
}

/* Lockstep: `ticks` iterations of `steps` steps each before their publish (0: drain and publish
 * only). */
static gy_result lockstep_request(gy_physics *p, uint32_t ticks, uint64_t timeout_ns,
                                  uint32_t steps);

gy_result gy_physics_step(gy_physics *p, uint32_t ticks, uint64_t timeout_ns)
{
    return lockstep_request(p, ticks, timeout_ns, 1u);
}

gy_result gy_physics_replay_drain(gy_physics *p, uint64_t timeout_ns)
{
    if (p != NULL && !p->game.replaying)
        return GY_ERR_MISUSE;
    return lockstep_request(p, 1, timeout_ns, 0u);
}

gy_result gy_physics_replay_steps(gy_physics *p, uint32_t steps, uint64_t timeout_ns)
{
    if (p != NULL && !p->game.replaying)
        return GY_ERR_MISUSE;
    if (p == NULL || steps == 0 || steps > MAX_CATCHUP)
        return GY_ERR_INVALID_ARGUMENT;
    return lockstep_request(p, 1, timeout_ns, steps);
}

static gy_result lockstep_request(gy_physics *p, uint32_t ticks, uint64_t timeout_ns,
                                  uint32_t steps)
{
    if (p == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (!p->game.running || !p->cfg.lockstep || gy_barrier_in_mutation(p->cfg.barrier))
        return GY_ERR_MISUSE;
    /* A request that timed out may still be running: its kind must not change under it. */
    if (!lockstep_done(&p->sh, p->sh.lockstep_target) &&
        __atomic_load_n(&p->sh.lockstep_steps, __ATOMIC_RELAXED) != steps)
        return GY_ERR_BUSY;
    uint64_t seq;
    gy_result r = gy_physics_publish(p, &seq);
    if (r != GY_OK)
        return r;
    if (ticks == 0)
        return GY_OK;
    uint64_t start = gy_clock_now_ns();
    uint64_t deadline = timeout_ns ? start + timeout_ns : UINT64_MAX;
    __atomic_store_n(&p->sh.lockstep_seq, seq, __ATOMIC_RELEASE);
    /* Read by the physics thread only inside the iterations this request asks for. */
    __atomic_store_n(&p->sh.lockstep_steps, steps, __ATOMIC_RELEASE);
    uint64_t target = p->sh.lockstep_target + ticks;
    __atomic_store_n(&p->sh.lockstep_target, target, __ATOMIC_RELEASE);
    gy_barrier_wake(p->cfg.barrier);
    /* Most ticks are short: spin first, then sleep on the condition. While batches wait in
     * game-side staging, keep flushing them: the physics thread is draining toward them. */
    uint64_t spin = p->game.lockstep_wait_ns <= LOCKSTEP_SPIN_LIMIT_NS ? LOCKSTEP_SPIN_NS : 0u;
    while (gy_clock_now_ns() - start < spin) {
        if (lockstep_done(&p->sh, target)) {
            p->game.lockstep_wait_ns = (gy_clock_now_ns() - start) / ticks;
            return GY_OK;
        }
        gy_command_queue_flush(p->cfg.commands);
    }
    r = GY_OK;
    pthread_mutex_lock(&p->sh.wait_mutex);
    __atomic_store_n(&p->sh.game_waiting, 1u, __ATOMIC_SEQ_CST);
    while (!lockstep_done(&p->sh, target)) {
        uint64_t now = gy_clock_now_ns();
        if (now >= deadline) {
            r = GY_ERR_TIMEOUT;
            break;
        }
        /* The physics thread signals the request's last tick; the timed wake is only for
         * staged batches (flushed as the ring drains) and a guard. Every wake costs the game
         * thread CPU: at 20 ms, a long request woke it several times. */
        bool staged = gy_command_queue_flush(p->cfg.commands) > 0;
        uint64_t wake = now + (staged ? 100000u : 1000000000u);
        if (wake > deadline)
            wake = deadline;
        struct timespec ts = {(time_t)(wake / 1000000000u), (long)(wake % 1000000000u)};
        pthread_cond_timedwait(&p->sh.wait_cond, &p->sh.wait_mutex, &ts);
    }
    __atomic_store_n(&p->sh.game_waiting, 0u, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&p->sh.wait_mutex);
    p->game.lockstep_wait_ns = (gy_clock_now_ns() - start) / ticks;
    return r;
}

gy_result gy_physics_set_time_scale(gy_physics *p, double scale)
{
    if (p == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (!gy_is_finite(scale))
        return GY_ERR_NON_FINITE;
    if (scale < 0.0 || scale > MAX_TIME_SCALE)
        return GY_ERR_INVALID_ARGUMENT;
    uint64_t bits;
    memcpy(&bits, &scale, sizeof bits);
    __atomic_store_n(&p->sh.time_scale_bits, bits, __ATOMIC_RELAXED);
    return GY_OK;
}

void gy_physics_set_hold(gy_physics *p, bool hold)
{
    if (p == NULL)
        return;
    uint32_t v = hold ? 1u : 0u;
    if (__atomic_exchange_n(&p->sh.hold, v, __ATOMIC_ACQ_REL) != v)
        __atomic_fetch_add(&p->sh.hold_epoch, 1u, __ATOMIC_ACQ_REL);
}

uint32_t gy_physics_hold_epoch(const gy_physics *p)
{
    return p != NULL ? __atomic_load_n(&p->sh.hold_epoch, __ATOMIC_ACQUIRE) : 0u;
}

uint64_t gy_physics_tick(const gy_physics *p)
{
    return p != NULL ? __atomic_load_n(&p->sh.counters.ticks, __ATOMIC_RELAXED) : 0u;
}

/* ---- reading --------------------------------------------------------------------------------- */

gy_result gy_physics_read_frame(gy_physics *p, gy_proxy_frame *out)
{
    if (p == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    const gy_phys_frame *f = gy_triple_buffer_read(p->cfg.proxy_tb, &out->tick, &out->fresh);
    if (f == NULL)
        return GY_ERR_BUSY;
    out->pages = (const gy_proxy *const *)f->pages;
    out->count = f->count;
    out->time = (double)out->tick * p->cfg.step_dt;
    out->due_ns = f->due_ns;
    out->published_ns = f->published_ns;
    out->applied_seq = f->applied_seq;
    return GY_OK;
}

const gy_proxy *const *gy_physics_keep_frame(gy_physics *p, uint32_t *count)
{
    const gy_phys_frame *f = p != NULL ? gy_triple_buffer_keep(p->cfg.proxy_tb) : NULL;
    if (count != NULL)
        *count = f != NULL ? f->count : 0u;
    return f != NULL ? (const gy_proxy *const *)f->pages : NULL;
}

gy_result gy_physics_read_proxies(gy_physics *p, const gy_proxy *const **pages, uint32_t *count,
                                  uint64_t *tick, bool *fresh)
{
    if (p == NULL || pages == NULL || count == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_proxy_frame f;
    gy_result r = gy_physics_read_frame(p, &f);
    *pages = f.pages;
    *count = f.count;
    if (tick != NULL)
        *tick = f.tick;
    if (fresh != NULL)
        *fresh = f.fresh;
    return r;
}

const gy_snapshot_view *gy_physics_acquire_query_view(gy_physics *p)
{
    return p != NULL ? gy_query_snapshot_acquire(p->cfg.snapshot) : NULL;
}

/* ---- live queries ---------------------------------------------------------------------------- */

static gy_result query_begin(gy_physics *p, uint64_t *tick)
{
    if (p == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    if (!p->game.running)
        return GY_ERR_MISUSE;
    if (p->cfg.queries_exclusive)
        pthread_rwlock_wrlock(&p->sh.sim_lock);
    else
        pthread_rwlock_rdlock(&p->sh.sim_lock);
    if (!p->game.game_bound) {
        gy_result r = p->cfg.backend->bind_thread(p->sim.world);
        if (r != GY_OK) {
            sim_unlock(&p->sh);
            return r;
        }
        p->game.game_bound = true;
    }
    if (tick != NULL)
        *tick = __atomic_load_n(&p->sh.counters.ticks, __ATOMIC_RELAXED);
    return GY_OK;
}

gy_result gy_physics_raycast(gy_physics *p, gy_vec3 origin, gy_vec3 translation,
                             const gy_query_filter *filter, gy_collector collector, gy_hit *hits,
                             uint32_t capacity, uint32_t *count, uint64_t *tick)
{
    gy_result r = query_begin(p, tick);
    if (r != GY_OK)
        return r;
    r = p->cfg.backend->raycast(p->sim.world, origin, translation, filter, collector, hits,
                                capacity, count);
    sim_unlock(&p->sh);
    return r;
}

gy_result gy_physics_shape_cast(gy_physics *p, const gy_shape *shape, gy_pose pose,
                                gy_vec3 translation, const gy_query_filter *filter,
                                gy_collector collector, gy_hit *hits, uint32_t capacity,
                                uint32_t *count, uint64_t *tick)
{
    gy_result r = query_begin(p, tick);
    if (r != GY_OK)
        return r;
    r = p->cfg.backend->shape_cast(p->sim.world, shape, pose, translation, filter, collector, hits,
                                   capacity, count);
    sim_unlock(&p->sh);
    return r;
}

gy_result gy_physics_overlap(gy_physics *p, const gy_shape *shape, gy_pose pose,
                             const gy_query_filter *filter, gy_collector collector, gy_hit *hits,
                             uint32_t capacity, uint32_t *count, uint64_t *tick)
{
    gy_result r = query_begin(p, tick);
    if (r != GY_OK)
        return r;
    r = p->cfg.backend->overlap(p->sim.world, shape, pose, filter, collector, hits, capacity,
                                count);
    sim_unlock(&p->sh);
    return r;
}

gy_result gy_physics_get_adapter_counters(gy_physics *p, gy_backend_counters *out, uint64_t *tick)
{
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    gy_result r = query_begin(p, tick);
    if (r != GY_OK)
        return r;
    p->cfg.backend->get_counters(p->sim.world, out);
    sim_unlock(&p->sh);
    return GY_OK;
}

/* ---- counters -------------------------------------------------------------------------------- */

void gy_physics_get_stats(const gy_physics *p, gy_physics_stats *out)
{
    if (out == NULL)
        return;
    memset(out, 0, sizeof *out);
    if (p == NULL)
        return;
    const gy_phys_counters *c = &p->sh.counters;
    out->ticks = gy_phys_get(&c->ticks);
    out->iterations = gy_phys_get(&c->iterations);
    out->publishes = gy_phys_get(&c->publishes);
    out->commands_applied = gy_phys_get(&c->commands_applied);
    out->commands_dropped_stale = gy_phys_get(&c->commands_dropped_stale);
    out->commands_failed = gy_phys_get(&c->commands_failed);
    out->creates_cancelled = gy_phys_get(&c->creates_cancelled);
    out->creates_failed = gy_phys_get(&c->creates_failed);
    out->catchup_steps_dropped = gy_phys_get(&c->catchup_steps_dropped);
    out->catchup_time_dropped_s = (double)gy_phys_get(&c->catchup_ns_dropped) * 1e-9;
    out->rebases = gy_phys_get(&c->rebases);
    out->proxies_read = gy_phys_get(&c->proxies_read);
    out->proxies_changed = gy_phys_get(&c->proxies_changed);
    out->proxies_written = gy_phys_get(&c->proxies_written);
    out->full_scans = gy_phys_get(&c->full_scans);
    out->bodies_faulted = gy_phys_get(&c->bodies_faulted);
    out->replies_rejected = gy_phys_get(&p->sh.replies_rejected);
    gy_reply_queue_stats rs;
    gy_reply_queue_get_stats(p->cfg.replies, &rs);
    out->replies_dropped = rs.dropped;
    out->step_ns = gy_phys_get(&c->step_ns);
    out->adapter_step_ns = gy_phys_get(&c->adapter_step_ns);
    out->publish_ns = gy_phys_get(&c->publish_ns);
    out->cpu_ns = gy_phys_get(&c->cpu_ns);
    out->bodies = __atomic_load_n(&c->bodies, __ATOMIC_RELAXED);
    out->awake = __atomic_load_n(&c->awake, __ATOMIC_RELAXED);
    out->generation = __atomic_load_n(&p->sh.generation, __ATOMIC_RELAXED);
}
