/* `gyre run`: options, the World set-up, the game loop (lockstep or paced), collision events,
 * teardown and the exit code. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "gyre/backend/backend.h"
#include "gyre/capture.h"
#include "gyre/math.h"
#include "gyre/physics/commands.h"
#include "page.h"

#define MAX_TICKS 1000000000ull /* --seconds × step_hz */
/* Real time: give up when the physics thread has not advanced for this long. */
#define STALL_NS          10000000000ull
#define PROGRESS_AFTER_NS 1000000000ull
#define PROGRESS_EVERY_NS 250000000ull

void gy_cli_run_usage(FILE *out)
{
    fputs(
        "usage: gyre run SCENE.json [options]\n"
        "\n"
        "Loads the scene, starts the physics thread, runs the scene's script and writes a\n"
        "report. Lockstep by default: deterministic, as fast as the machine allows.\n"
        "\n"
        "options:\n"
        "  --seconds S       simulated seconds to run (default 10)\n"
        "  --backend NAME    middleware adapter (default: the scene's, else ode)\n"
        "  --realtime        pace in wall-clock time at the scene's step_hz, as a host would\n"
        "  --report FILE     write the report JSON to FILE ('-' for stdout)\n"
        "  --events FILE     write every collision event as a JSON line to FILE\n"
        "  --trace FILE      write a per-tick CSV of every physics entity to FILE\n"
        "  --junit FILE      write the expects as JUnit XML to FILE, one test case each\n"
        "  --html FILE       write a page a browser opens: the run in 3D with a timeline\n"
        "  --capture FILE    record the thread boundary (and the scene's files) for 'gyre replay'\n"
        "  --quiet           no progress line, no notes (warnings and failures still)\n"
        "  --strict          an expect the run ended before reaching fails the run\n"
        "  -h, --help        this help\n"
        "\n"
        "SIGINT or SIGTERM ends the run early with complete files (the report says\n"
        "\"interrupted\": true); every file is written under a temporary name and renamed\n"
        "when complete.\n"
        "\n"
        "exit codes: 0 ran and every expect held; 1 an expect failed, a spawn failed or a\n"
        "            runtime fault (with --strict: an expect not reached); 2 usage error,\n"
        "            unreadable file or invalid scene; 130 / 143 interrupted by SIGINT / SIGTERM\n",
        out);
}

/* ---- options --------------------------------------------------------------------------------- */

/* One line naming the problem and where help is (not the whole usage, which would bury it). */
static int usage_error(const char *fmt, const char *arg)
{
    fputs("gyre run: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("; see 'gyre run --help'\n", stderr);
    return GY_CLI_EXIT_USAGE;
}

static const char *const k_run_options[] = {"--seconds", "--backend", "--realtime", "--report",
                                            "--events",  "--trace",   "--quiet",    "--junit",
                                            "--strict",  "--html",    "--capture",  "--help"};

const char *gy_cli_run_nearest_option(const char *word)
{
    return gy_cli_nearest(word, k_run_options, sizeof k_run_options / sizeof k_run_options[0]);
}

static int parse_options(int argc, char **argv, gy_cli_options *o)
{
    memset(o, 0, sizeof *o);
    o->seconds = 10.0;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        gy_cli_arg kind = gy_cli_common_arg(a, &options_done, &o->scene_path);
        if (kind == GY_CLI_ARG_SECOND_SCENE)
            return usage_error("one scene file only (got a second one: '%s')", a);
        if (kind == GY_CLI_ARG_HELP) {
            gy_cli_run_usage(stdout);
            return -1;
        }
        if (kind == GY_CLI_ARG_TAKEN)
            continue;
        if (strcmp(a, "--realtime") == 0) {
            o->realtime = true;
        } else if (strcmp(a, "--quiet") == 0) {
            o->quiet = true;
        } else if (strcmp(a, "--strict") == 0) {
            o->strict = true;
        } else if (gy_cli_option_value(argc, argv, &i, "--seconds", &v)) {
            if (v == NULL)
                return usage_error("%s needs a value", "--seconds");
            if (!gy_cli_parse_number(v, 0.0, HUGE_VAL, &o->seconds))
                return usage_error("--seconds needs a finite number >= 0 (got '%s')", v);
        } else if (gy_cli_option_value(argc, argv, &i, "--backend", &v)) {
            if (v == NULL || v[0] == '\0')
                return usage_error("%s needs an adapter name", "--backend");
            o->backend = v;
        } else if (gy_cli_option_value(argc, argv, &i, "--report", &v)) {
            if (v == NULL || v[0] == '\0')
                return usage_error("%s needs a file name (or - for stdout)", "--report");
            o->report_path = v;
        } else if (gy_cli_option_value(argc, argv, &i, "--events", &v)) {
            if (v == NULL || v[0] == '\0')
                return usage_error("%s needs a file name (or - for stdout)", "--events");
            o->events_path = v;
        } else if (gy_cli_option_value(argc, argv, &i, "--trace", &v)) {
            if (v == NULL || v[0] == '\0')
                return usage_error("%s needs a file name (or - for stdout)", "--trace");
            o->trace_path = v;
        } else if (gy_cli_option_value(argc, argv, &i, "--junit", &v)) {
            if (v == NULL || v[0] == '\0')
                return usage_error("%s needs a file name (or - for stdout)", "--junit");
            o->junit_path = v;
        } else if (gy_cli_option_value(argc, argv, &i, "--html", &v)) {
            if (v == NULL || v[0] == '\0')
                return usage_error("%s needs a file name (or - for stdout)", "--html");
            o->html_path = v;
        } else if (gy_cli_option_value(argc, argv, &i, "--capture", &v)) {
            if (v == NULL || v[0] == '\0' || strcmp(v, "-") == 0)
                return usage_error("%s needs a file name", "--capture");
            o->capture_path = v;
        } else {
            return gy_cli_unknown("gyre run", "option", a, k_run_options,
                                  sizeof k_run_options / sizeof k_run_options[0]);
        }
    }
    if (o->scene_path == NULL)
        return usage_error("%s", "no scene file given");
    int to_stdout = 0;
    to_stdout += o->report_path != NULL && strcmp(o->report_path, "-") == 0;
    to_stdout += o->events_path != NULL && strcmp(o->events_path, "-") == 0;
    to_stdout += o->trace_path != NULL && strcmp(o->trace_path, "-") == 0;
    to_stdout += o->junit_path != NULL && strcmp(o->junit_path, "-") == 0;
    to_stdout += o->html_path != NULL && strcmp(o->html_path, "-") == 0;
    if (to_stdout > 1)
        return usage_error("%s", "only one of --report, --events, --trace, --junit and --html can "
                                 "go to stdout");
    return GY_CLI_EXIT_OK;
}

static void backend_list(FILE *out)
{
    for (uint32_t i = 0; i < gy_backend_count(); i++)
        fprintf(out, "%s%s", i ? ", " : "", gy_backend_at(i)->name);
}

/* ---- entities and events --------------------------------------------------------------------- */

static gy_result index_put(gy_cli_runner *R, gy_entity e, uint32_t value)
{
    R->ent_index.allocator = R->alloc;
    return gy_hash_map_put(&R->ent_index, gy_map_key_of(e.bits), value);
}

int32_t gy_cli_entity_index(const gy_cli_runner *R, gy_entity e)
{
    const uint64_t *i = gy_hash_map_find(&R->ent_index, gy_map_key_of(e.bits));
    return i != NULL ? (int32_t)*i : -1;
}

const char *gy_cli_entity_name(const gy_cli_runner *R, gy_entity e)
{
    int32_t i = gy_cli_entity_index(R, e);
    return i >= 0 ? R->ents[i].name : "?";
}

/* The World calls both sides of a pair, one right after the other: the second call is the
 * mirror of the first and is counted once. */
static bool is_mirror(const gy_collision_event *x, const gy_collision_event *y)
{
    return x->kind == y->kind && gy_entity_equal(x->self, y->other) &&
           gy_entity_equal(x->other, y->self) && x->self_collider == y->other_collider &&
           x->other_collider == y->self_collider && x->tick == y->tick &&
           x->synthesized == y->synthesized;
}

static bool same_pair(gy_entity a, gy_entity b, gy_entity x, gy_entity y)
{
    return (gy_entity_equal(a, x) && gy_entity_equal(b, y)) ||
           (gy_entity_equal(a, y) && gy_entity_equal(b, x));
}

static void on_collision(void *ctx, gy_world *world, const gy_collision_event *ev)
{
    (void)world;
    gy_cli_runner *R = ctx;
    if (R->have_last_event && is_mirror(&R->last_event, ev)) {
        R->have_last_event = false;
        return;
    }
    R->last_event = *ev;
    R->have_last_event = true;
    /* A synthesized EXIT (a body went away) happened at the tick the game removed it. */
    uint64_t tick = ev->synthesized
                        ? R->tick
                        : (uint64_t)(uint32_t)((uint32_t)ev->tick - (uint32_t)R->base_tick);
    if ((unsigned)ev->kind < 3u)
        R->events[ev->kind]++;
    if (R->events_out != NULL)
        gy_cli_write_event(R, ev, tick);
    if (R->page != NULL)
        gy_cli_page_record_event(R, ev, tick);
    for (uint32_t i = 0; i < R->watch_count; i++) {
        gy_cli_watch *w = &R->watches[i];
        const gy_scene_action *a = w->action;
        if (w->seen || (int)a->expect_event.kind != (int)ev->kind ||
            !same_pair(w->a, w->b, ev->self, ev->other))
            continue;
        double hz = (double)R->step_hz;
        uint64_t first = gy_cli_tick_for(R, a->expect_event.since);
        double last = floor(a->at * hz + 1e-6);
        if (tick >= first && (double)tick <= last) {
            w->seen = true;
            w->seen_tick = tick;
        }
    }
}

/* The script's name for a World body event kind. */
static gy_scene_event_kind body_kind(gy_body_event_kind k)
{
    return k == GY_BODY_EVENT_SLEEP  ? GY_SCENE_EVENT_SLEEP
           : k == GY_BODY_EVENT_WAKE ? GY_SCENE_EVENT_WAKE
                                     : GY_SCENE_EVENT_KILLED;
}

static void on_body_event(void *ctx, gy_world *world, const gy_body_event *ev)
{
    (void)world;
    gy_cli_runner *R = ctx;
    gy_scene_event_kind kind = body_kind(ev->kind);
    /* Counted from the start of the run, as collision events are. */
    uint64_t tick = ev->tick >= R->base_tick ? ev->tick - R->base_tick : 0u;
    R->events[kind]++;
    if (R->events_out != NULL)
        gy_cli_write_body_event(R, kind, ev->entity, tick);
    if (R->page != NULL)
        gy_cli_page_record_body_event(R, kind, ev->entity, tick);
    for (uint32_t i = 0; i < R->watch_count; i++) {
        gy_cli_watch *w = &R->watches[i];
        const gy_scene_action *a = w->action;
        if (w->seen || a->expect_event.kind != kind || !gy_entity_equal(w->a, ev->entity))
            continue;
        uint64_t first = gy_cli_tick_for(R, a->expect_event.since);
        double last = floor(a->at * (double)R->step_hz + 1e-6);
        if (tick >= first && (double)tick <= last) {
            w->seen = true;
            w->seen_tick = tick;
        }
    }
}

gy_result gy_cli_track_instance(gy_cli_runner *R, const gy_scene_instance *inst)
{
    const gy_scene *s = inst->scene;
    for (uint32_t i = 0; i < s->entity_count; i++) {
        if (s->entities[i].physics == NULL)
            continue;
        gy_result r = gy_array_reserve(R->alloc, (void **)&R->ents, &R->ent_capacity,
                                       R->ent_count + 1u, sizeof *R->ents);
        if (r == GY_OK)
            r = index_put(R, inst->entities[i], R->ent_count);
        if (r != GY_OK)
            return r;
        gy_cli_entity *e = &R->ents[R->ent_count++];
        e->handle = inst->entities[i];
        e->name = s->entities[i].name;
        e->physics = s->entities[i].physics;
        r = gy_entity_set_collision_callback(R->world, e->handle, on_collision, R);
        if (r == GY_OK)
            r = gy_entity_set_body_callback(R->world, e->handle, on_body_event, R);
        if (r != GY_OK)
            return r;
    }
    return GY_OK;
}

/* ---- the loop -------------------------------------------------------------------------------- */

static uint64_t current_tick(const gy_cli_runner *R)
{
    uint64_t t = gy_world_physics_tick(R->world);
    return t > R->base_tick ? t - R->base_tick : 0u;
}

/* A body the backend could not create or that went non-finite ends the run (exit 1). */
static bool check_faults(gy_cli_runner *R)
{
    gy_physics_stats ps;
    gy_physics_get_stats(gy_world_physics(R->world), &ps);
    gy_world_stats ws;
    gy_world_get_stats(R->world, &ws);
    if (ps.bodies > R->bodies_peak)
        R->bodies_peak = ps.bodies;
    if (ps.bodies_faulted == 0 && ws.bodies_failed == 0)
        return false;
    char t[64];
    gy_cli_format_number(t, sizeof t, (double)R->tick * R->dt, false);
    bool found = false;
    for (uint32_t i = 0; i < R->ent_count; i++) {
        gy_physics_state st;
        if (gy_body_get_state(R->world, R->ents[i].handle, &st) != GY_OK)
            continue;
        if (st.faulted) {
            fprintf(stderr,
                    "gyre: runtime fault at t = %s s: entity '%s': the physics backend produced a "
                    "non-finite state (body frozen)\n",
                    t, R->ents[i].name);
            found = true;
        } else if (st.failed) {
            fprintf(stderr,
                    "gyre: runtime fault at t = %s s: entity '%s': body creation failed: %s\n", t,
                    R->ents[i].name, gy_result_message(st.error));
            found = true;
        }
    }
    if (!found)
        fprintf(stderr,
                "gyre: runtime fault at t = %s s: %llu body fault(s), %u failed body "
                "creation(s)\n",
                t, (unsigned long long)ps.bodies_faulted, ws.bodies_failed);
    R->fault = true;
    return true;
}

typedef struct progress {
    bool on;
    bool shown;
    uint64_t start_ns, next_ns;
} progress;

static void progress_update(gy_cli_runner *R, progress *p)
{
    if (!p->on)
        return;
    uint64_t now = gy_clock_now_ns();
    if (now < p->next_ns)
        return;
    p->next_ns = now + PROGRESS_EVERY_NS;
    double wall = (double)(now - p->start_ns) * 1e-9;
    gy_physics_stats ps;
    gy_physics_get_stats(gy_world_physics(R->world), &ps);
    fprintf(stderr, "\rgyre: t = %.2f / %.2f s   %.0f ticks/s   %u bodies awake   ",
            (double)R->tick * R->dt, (double)R->total_ticks * R->dt,
            wall > 0.0 ? (double)R->tick / wall : 0.0, ps.awake);
    p->shown = true;
}

static void progress_clear(progress *p)
{
    if (p->shown)
        fputs("\r                                                                      \r", stderr);
}

static void sleep_until(uint64_t deadline_ns)
{
    struct timespec ts = {(time_t)(deadline_ns / 1000000000ull),
                          (long)(deadline_ns % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR &&
           gy_cli_signal_caught() == 0) {
    }
}

static void simulate(gy_cli_runner *R)
{
    progress prog = {0};
    prog.on = !R->opt.quiet && isatty(STDERR_FILENO);
    prog.start_ns = gy_clock_now_ns();
    prog.next_ns = prog.start_ns + PROGRESS_AFTER_NS;
    uint64_t period_ns = 1000000000ull / R->step_hz;
    uint64_t last_ns = gy_clock_now_ns(), next_ns = last_ns + period_ns;
    uint64_t progress_ns = last_ns, progress_tick = 0;
    uint64_t traced = UINT64_MAX;
    for (;;) {
        if (R->trace_out != NULL && R->tick != traced) {
            gy_cli_write_trace_rows(R);
            traced = R->tick;
        }
        if (R->page != NULL)
            gy_cli_page_record_tick(R);
        gy_cli_script_run_due(R);
        if (R->spawn_failed || check_faults(R) || R->tick >= R->total_ticks)
            break;
        if (gy_cli_signal_caught() != 0) {
            R->interrupted = true;
            break;
        }
        gy_cli_script_apply_forces(R);
        if (R->replay != NULL && gy_world_replay_frames_left(R->world) == 0)
            break;
        double dt = R->dt;
        if (R->opt.realtime && R->replay == NULL) {
            sleep_until(next_ns);
            uint64_t now = gy_clock_now_ns();
            dt = (double)(now - last_ns) * 1e-9;
            last_ns = now;
            next_ns += period_ns;
            if (next_ns < now)
                next_ns = now + period_ns; /* fell behind: do not try to catch up in a burst */
        }
        gy_result r = gy_world_tick(R->world, dt);
        if (r != GY_OK) {
            fprintf(stderr, "gyre: runtime fault: the world tick failed: %s\n",
                    gy_result_message(r));
            R->fault = true;
            break;
        }
        R->tick = current_tick(R);
        if (R->replay != NULL && gy_cli_replay_check(R))
            break;
        if (R->tick != progress_tick) {
            progress_tick = R->tick;
            progress_ns = gy_clock_now_ns();
        } else if (gy_clock_now_ns() - progress_ns > STALL_NS) {
            fprintf(stderr, "gyre: runtime fault: the physics thread made no progress for %llu s\n",
                    (unsigned long long)(STALL_NS / 1000000000ull));
            R->fault = true;
            break;
        }
        progress_update(R, &prog);
    }
    progress_clear(&prog);
}

/* ---- set-up and teardown --------------------------------------------------------------------- */

static int set_up(gy_cli_runner *R)
{
    R->scene = gy_cli_load_scene(R->opt.scene_path);
    if (R->scene == NULL)
        return GY_CLI_EXIT_USAGE;
    const char *backend = R->opt.backend != NULL            ? R->opt.backend
                          : R->scene->world.backend != NULL ? R->scene->world.backend
                                                            : "ode";
    if (gy_backend_find(backend) == NULL && R->opt.backend != NULL) {
        fprintf(stderr, "gyre run: unknown backend '%s' (--backend; available: ", backend);
        backend_list(stderr);
        fputs(")\n", stderr);
        return GY_CLI_EXIT_USAGE;
    }
    if (gy_backend_find(backend) == NULL) {
        char msg[512];
        int n = snprintf(msg, sizeof msg, "unknown backend '%.100s' (available: ", backend);
        for (uint32_t i = 0; i < gy_backend_count() && n > 0 && (size_t)n < sizeof msg; i++)
            n += snprintf(msg + n, sizeof msg - (size_t)n, "%s%s", i ? ", " : "",
                          gy_backend_at(i)->name);
        if (n > 0 && (size_t)n < sizeof msg)
            snprintf(msg + n, sizeof msg - (size_t)n, "; --backend overrides it)");
        gy_cli_print_error_at(stderr, R->opt.scene_path, "physics.backend", msg);
        return GY_CLI_EXIT_USAGE;
    }
    R->backend = backend;
    gy_world_def cfg = gy_default_world_def();
    gy_scene_get_world_def(R->scene, backend, &cfg);
    cfg.physics.lockstep = !R->opt.realtime || R->replay != NULL;
    cfg.start_stopped = true;
    R->step_hz = cfg.physics.step_hz;
    R->dt = 1.0 / (double)R->step_hz;
    double ticks = round(R->opt.seconds * (double)R->step_hz);
    if (ticks > (double)MAX_TICKS) {
        fprintf(stderr, "gyre run: --seconds %g is too long at %u Hz (at most %llu ticks)\n",
                R->opt.seconds, R->step_hz, MAX_TICKS);
        return GY_CLI_EXIT_USAGE;
    }
    R->total_ticks = (uint64_t)ticks;
    gy_result r = gy_world_create(&cfg, &R->world);
    if (r != GY_OK) {
        fprintf(stderr, "gyre run: cannot create the world (backend %s): %s\n", backend,
                gy_result_message(r));
        return GY_CLI_EXIT_FAILED;
    }
    int32_t bad = -1;
    r = gy_scene_instantiate(R->world, R->scene, gy_v3(0, 0, 0), R->alloc, &R->instance, &bad);
    if (r != GY_OK) {
        gy_cli_print_refused(stderr, R->opt.scene_path, R->scene, bad, r);
        return GY_CLI_EXIT_USAGE;
    }
    r = gy_cli_track_instance(R, R->instance);
    if (r == GY_OK)
        r = gy_cli_script_init(R);
    if (r != GY_OK) {
        fprintf(stderr, "gyre run: %s\n", gy_result_message(r));
        return GY_CLI_EXIT_FAILED;
    }
    /* Taken before the thread starts: a real-time thread may step before start returns, and
     * tick 0 is the state the run starts from. */
    R->base_tick = gy_physics_tick(gy_world_physics(R->world));
    if (R->capture_out != NULL) {
        int status = gy_cli_capture_begin(R, R->capture_out);
        if (status != GY_CLI_EXIT_OK)
            return status;
    }
    r = gy_world_start_physics(R->world);
    if (r != GY_OK) {
        fprintf(stderr, "gyre run: cannot start physics (backend %s): %s\n", backend,
                gy_result_message(r));
        return GY_CLI_EXIT_FAILED;
    }
    if (R->replay != NULL) {
        int status = gy_cli_replay_begin(R);
        if (status != GY_CLI_EXIT_OK)
            return status;
    }
    R->tick = 0;
    return GY_CLI_EXIT_OK;
}

static double ms(double seconds)
{
    return seconds * 1000.0;
}

/* Counters and timing, then the orderly teardown (which yields live_objects_at_exit). */
static void tear_down(gy_cli_runner *R, gy_cli_counters *c, gy_cli_timing *t)
{
    memset(c, 0, sizeof *c);
    t->step_mean_ms = t->step_p50_ms = t->step_p99_ms = t->step_max_ms = NAN;
    if (R->world == NULL)
        return;
    gy_physics *p = gy_world_physics(R->world);
    gy_physics_stats ps;
    gy_physics_get_stats(p, &ps);
    gy_world_stats ws;
    gy_world_get_stats(R->world, &ws);
    c->commands = ps.commands_applied;
    c->commands_dropped_stale = ps.commands_dropped_stale;
    c->replies = ws.replies_handled;
    c->bodies_peak = R->bodies_peak > ps.bodies ? R->bodies_peak : ps.bodies;
    gy_physics_get_geometry_stats(p, &c->geometry);
    if (ps.ticks > 0)
        t->step_mean_ms = ms((double)ps.step_ns * 1e-9 / (double)ps.ticks);
    gy_physics_diagnostics d;
    if (gy_physics_get_diagnostics(p, &d) == GY_OK) {
        c->replies_dropped = d.replies_dropped;
        if (d.step.samples > 0) {
            t->step_p50_ms = ms(d.step.p50);
            t->step_p99_ms = ms(d.step.p99);
            t->step_max_ms = ms(d.step.max);
        }
    }
    gy_world_teardown td;
    memset(&td, 0, sizeof td);
    gy_result r = gy_world_destroy(R->world, &td);
    R->world = NULL;
    if (r != GY_OK)
        fprintf(stderr, "gyre: teardown: %s\n", gy_result_message(r));
    c->live_known = td.adapter_checked;
    c->live_objects_at_exit = td.adapter_live_objects;
    if (!td.adapter_checked)
        fputs("gyre: warning: teardown could not count the objects left in the backend "
              "(live_objects_at_exit is null)\n",
              stderr);
    else if (td.adapter_live_objects != 0)
        fprintf(stderr, "gyre: warning: %u backend objects still alive after teardown (a leak)\n",
                td.adapter_live_objects);
}

static void free_runner(gy_cli_runner *R)
{
    const gy_allocator *a = R->alloc;
    if (R->world != NULL)
        gy_world_destroy(R->world, NULL);
    for (uint32_t i = 0; i < R->spawn_count; i++) {
        gy_scene_instance_free(R->spawned[i].instance);
        gy_scene_free(R->spawned[i].scene);
    }
    if (R->spawned != NULL)
        gy_free(a, R->spawned, (size_t)R->spawn_capacity * sizeof *R->spawned);
    gy_scene_instance_free(R->instance);
    gy_scene_free(R->scene);
    if (R->ents != NULL)
        gy_free(a, R->ents, (size_t)R->ent_capacity * sizeof *R->ents);
    gy_hash_map_fini(&R->ent_index);
    if (R->expects != NULL)
        gy_free(a, R->expects, (size_t)R->expect_capacity * sizeof *R->expects);
    if (R->raycasts != NULL)
        gy_free(a, R->raycasts, (size_t)R->raycast_capacity * sizeof *R->raycasts);
    if (R->forces != NULL)
        gy_free(a, R->forces, (size_t)R->force_capacity * sizeof *R->forces);
    if (R->watches != NULL)
        gy_free(a, R->watches, (size_t)R->watch_count * sizeof *R->watches);
    if (R->finals != NULL)
        gy_free(a, R->finals, (size_t)R->ent_count * sizeof *R->finals);
    gy_cli_page_release(R);
}

int gy_cli_run_main(int argc, char **argv)
{
    gy_cli_runner R;
    memset(&R, 0, sizeof R);
    R.alloc = gy_default_allocator();
    int status = parse_options(argc, argv, &R.opt);
    if (status != GY_CLI_EXIT_OK)
        return status < 0 ? GY_CLI_EXIT_OK : status;
    return gy_cli_execute(&R, "gyre run");
}

int gy_cli_execute(gy_cli_runner *RP, const char *who)
{
    uint64_t start_ns = gy_clock_now_ns();
    gy_cli_runner R = *RP;
    int status = GY_CLI_EXIT_OK;
    gy_cli_signals_install();
    gy_cli_output report, events, trace, junit, html;
    memset(&html, 0, sizeof html);
    memset(&report, 0, sizeof report);
    memset(&events, 0, sizeof events);
    memset(&trace, 0, sizeof trace);
    memset(&junit, 0, sizeof junit);
    bool outputs_ok = true;
    if (R.opt.report_path != NULL)
        outputs_ok &= gy_cli_output_open(&report, R.opt.report_path, who, "--report");
    if (outputs_ok && R.opt.junit_path != NULL)
        outputs_ok &= gy_cli_output_open(&junit, R.opt.junit_path, who, "--junit");
    if (outputs_ok && R.opt.events_path != NULL)
        outputs_ok &= gy_cli_output_open(&events, R.opt.events_path, who, "--events");
    if (outputs_ok && R.opt.trace_path != NULL) {
        outputs_ok &= gy_cli_output_open(&trace, R.opt.trace_path, who, "--trace");
        if (trace.f != NULL)
            gy_cli_write_trace_header(trace.f);
    }
    if (outputs_ok && R.opt.html_path != NULL)
        outputs_ok &= gy_cli_output_open(&html, R.opt.html_path, who, "--html");
    gy_cli_output capture;
    memset(&capture, 0, sizeof capture);
    if (outputs_ok && R.opt.capture_path != NULL) {
        outputs_ok &= gy_cli_output_open(&capture, R.opt.capture_path, who, "--capture");
        R.capture_out = &capture;
    }
    R.events_out = events.f;
    R.trace_out = trace.f;
    if (!outputs_ok) {
        status = GY_CLI_EXIT_USAGE;
    } else {
        status = set_up(&R);
    }
    if (status == GY_CLI_EXIT_OK && html.f != NULL && gy_cli_page_begin(&R) != GY_OK) {
        fputs("gyre run: --html: out of memory\n", stderr);
        status = GY_CLI_EXIT_FAILED;
    }
    if (status == GY_CLI_EXIT_OK) {
        R.ran = true;
        simulate(&R);
        gy_cli_script_finish(&R);
        if (gy_cli_snapshot_entities(&R) != GY_OK)
            fputs("gyre: out of memory taking the final state\n", stderr);
        int capture_status = GY_CLI_EXIT_OK;
        if (R.capture_out != NULL) {
            capture_status = gy_cli_capture_end(&R, R.capture_out);
            R.capture_ok = capture_status == GY_CLI_EXIT_OK;
        }
        if (R.replay != NULL)
            capture_status = gy_cli_replay_end(&R);
        gy_cli_counters counters;
        gy_cli_timing timing;
        tear_down(&R, &counters, &timing);
        timing.wall_seconds = (double)(gy_clock_now_ns() - start_ns) * 1e-9;
        if (report.f != NULL)
            gy_cli_write_report(report.f, &R, &counters, &timing);
        if (junit.f != NULL)
            gy_cli_write_junit(junit.f, &R, &timing);
        bool page_failed = html.f != NULL && !gy_cli_page_finish(&R, html.f);
        if (page_failed)
            gy_cli_output_discard(&html); /* an older page of that name stays as it was */
        bool unreached = false;
        for (uint32_t i = 0; i < R.expect_count; i++)
            unreached |= R.expects[i].passed < 0;
        status = R.fault || R.spawn_failed || R.expect_failed || (R.opt.strict && unreached) ||
                         page_failed || capture_status != GY_CLI_EXIT_OK
                     ? GY_CLI_EXIT_FAILED
                     : GY_CLI_EXIT_OK;
        if (R.opt.strict && unreached)
            fputs("gyre: --strict: the run ended before some expects were reached\n", stderr);
        if (R.interrupted) {
            fprintf(stderr,
                    "gyre: interrupted by %s at t = %.3f s; the files hold the run so far\n",
                    gy_cli_signal_caught() == SIGINT ? "SIGINT" : "SIGTERM", (double)R.tick * R.dt);
            status = gy_cli_interrupted_exit();
        }
        if (!R.opt.quiet) {
            uint32_t held = 0, reached = 0;
            for (uint32_t i = 0; i < R.expect_count; i++) {
                held += R.expects[i].passed == 1;
                reached += R.expects[i].passed >= 0;
            }
            char t[64];
            gy_cli_format_number(t, sizeof t, (double)R.tick * R.dt, false);
            fprintf(stderr,
                    "gyre: %s: %llu ticks (%s s simulated) in %.2f s; %u of %u expects "
                    "held\n",
                    R.opt.scene_path, (unsigned long long)R.tick, t, timing.wall_seconds, held,
                    reached);
        }
    }
    /* A run that never started (bad scene, an output that could not be created) leaves no file;
     * one that ran keeps what it wrote, interrupted or failed. */
    int write_failed = 0;
    if (R.ran) {
        write_failed = gy_cli_output_commit(&report) | gy_cli_output_commit(&events) |
                       gy_cli_output_commit(&trace) | gy_cli_output_commit(&junit) |
                       gy_cli_output_commit(&html);
        /* A capture that could not be completed is no capture: never leave a partial one. */
        if (R.capture_ok)
            write_failed |= gy_cli_output_commit(&capture);
        else
            gy_cli_output_discard(&capture);
    } else {
        gy_cli_output_discard(&report);
        gy_cli_output_discard(&events);
        gy_cli_output_discard(&trace);
        gy_cli_output_discard(&junit);
        gy_cli_output_discard(&html);
        gy_cli_output_discard(&capture);
    }
    if (write_failed && status == GY_CLI_EXIT_OK)
        status = GY_CLI_EXIT_FAILED;
    free_runner(&R);
    return status;
}
