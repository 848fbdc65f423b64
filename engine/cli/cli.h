/* The `gyre` command line (docs/cli.md): private declarations shared by its sources. Prefix
 * gy_cli_. Everything here runs on the program's main thread, which is the World's game thread. */
#ifndef GY_CLI_H
#define GY_CLI_H

#include <stdio.h>

#include "gyre/core.h"
#include "gyre/hash_map.h"
#include "gyre/scene.h"
#include "gyre/scene_instance.h"
#include "gyre/world.h"
#include "gyre/world_physics.h"

/* Exit codes (docs/cli.md). */
enum {
    GY_CLI_EXIT_OK = 0,     /* ran; every expect held */
    GY_CLI_EXIT_FAILED = 1, /* ran; an expect failed, or a runtime fault */
    GY_CLI_EXIT_USAGE = 2   /* usage error, unreadable file, invalid scene */
};

/* ---- subcommands ------------------------------------------------------------------------------
 */

int gy_cli_run_main(int argc, char **argv); /* run.c; argv[0] is "run" */
void gy_cli_run_usage(FILE *out);
/* The option of `gyre run` nearest to `word` (gy_cli_nearest), or NULL. */
const char *gy_cli_run_nearest_option(const char *word);
int gy_cli_validate_main(int argc, char **argv); /* validate.c; argv[0] is "validate" */
int gy_cli_replay_main(int argc, char **argv);   /* capture.c; argv[0] is "replay" */
void gy_cli_replay_usage(FILE *out);
void gy_cli_validate_usage(FILE *out);

/* ---- argument helpers (args.c) ----------------------------------------------------------------
 */

/* Matches `--name VALUE` or `--name=VALUE` at argv[*i]; *i advances past a separate value. True
 * when argv[*i] is this option; *value is then its text, or NULL when the value is missing. */
bool gy_cli_option_value(int argc, char **argv, int *i, const char *name, const char **value);

/* What gy_cli_common_arg made of an argument. */
typedef enum gy_cli_arg {
    GY_CLI_ARG_OPTION,       /* an option for the subcommand to parse */
    GY_CLI_ARG_TAKEN,        /* the scene path, or "--" (options end) */
    GY_CLI_ARG_HELP,         /* -h or --help */
    GY_CLI_ARG_SECOND_SCENE, /* a second scene path: a usage error */
} gy_cli_arg;

/* The arguments run, soak and conform read alike: one scene path (an argument not starting with
 * '-', "-", or anything after "--"), "--", and -h / --help. */
gy_cli_arg gy_cli_common_arg(const char *a, bool *options_done, const char **scene_path);

/* The candidate nearest to `word` (a few edits away, fewer for short words, or a unique
 * abbreviation of it), comparing only what comes before any '=' in `word`; NULL when none is near
 * enough to be a likely typo. */
const char *gy_cli_nearest(const char *word, const char *const *candidates, size_t count);

/* Prints one line, `COMMAND: unknown WHAT 'word' (did you mean X?); see 'COMMAND --help'` (the
 * suggestion only when one is near), and returns GY_CLI_EXIT_USAGE. */
int gy_cli_unknown(const char *command, const char *what, const char *word,
                   const char *const *candidates, size_t count);

/* A whole file as a NUL-terminated block (free it with gy_cli_free_text); NULL when it cannot be
 * read. */
char *gy_cli_read_text(const char *path, size_t *size);
void gy_cli_free_text(char *text, size_t size);

/* A whole-string finite number in [lo, hi] (no trailing characters, no overflow). False for NULL
 * or "". */
bool gy_cli_parse_number(const char *v, double lo, double hi, double *out);

/* ---- output files and interrupts (output.c) -------------------------------------------------- */

/* A file being written under a temporary name beside `path` ("-": stdout, written directly). */
typedef struct gy_cli_output {
    FILE *f; /* NULL: not open */
    const char *path;
    const char *who; /* "gyre run", for messages */
    char *tmp;
} gy_cli_output;

/* Creates the temporary file. False (with a message naming `flag` and `path`) when it cannot. */
bool gy_cli_output_open(gy_cli_output *o, const char *path, const char *who, const char *flag);
/* Closes the file and renames it over `path`. 0, or 1 (with a message, the temporary removed)
 * when any write, the close or the rename failed. Nothing happens for an output never opened. */
int gy_cli_output_commit(gy_cli_output *o);
/* Closes and removes the temporary: an older file at `path` stays as it was. */
void gy_cli_output_discard(gy_cli_output *o);

/* SIGINT and SIGTERM set a flag instead of ending the process (once: a second one ends it). */
void gy_cli_signals_install(void);
/* The signal caught so far, or 0. */
int gy_cli_signal_caught(void);
/* The exit code of an interrupted command: 128 + the signal (130 SIGINT, 143 SIGTERM). */
int gy_cli_interrupted_exit(void);

/* ---- shared helpers (validate.c) ------------------------------------------------------------- */

/* Prints each error as `FILE:LINE:COLUMN: error: PATH: MESSAGE`, the position found in the file's
 * text (json_locate.h); problems with the file itself without PATH (and without a position when
 * it has none); then a line for any errors that were not kept. */
void gy_cli_print_scene_errors(FILE *out, const char *file, const gy_scene_errors *errors);

/* Prints one error about the value at JSON `path` of scene `file` as
 * gy_cli_print_scene_errors does, with its line and column. */
void gy_cli_print_error_at(FILE *out, const char *file, const char *path, const char *message);

/* Prints why the World refused a validated scene: the entity it refused (index into the scene's
 * entities; -1: none in particular) at its position in the file, and the result. */
void gy_cli_print_refused(FILE *out, const char *file, const gy_scene *scene, int32_t entity,
                          gy_result r);

/* Loads and validates a scene file. On failure prints every error (gy_cli_print_scene_errors),
 * or the reason the file could not be read, and returns NULL. */
gy_scene *gy_cli_load_scene(const char *path);
/* As gy_cli_load_scene, its OBJ files shared through `cache` (a World's, for spawns). */
gy_scene *gy_cli_load_scene_cached(const char *path, gy_obj_cache *cache);

/* ---- the runner's state (run.c, script.c, report.c) -------------------------------------------
 */

typedef struct gy_cli_options {
    const char *scene_path;
    double seconds;      /* simulated seconds, >= 0 */
    const char *backend; /* NULL: the scene's, else "ode" */
    bool realtime;
    bool quiet;
    const char *report_path; /* NULL: none; "-": stdout */
    const char *events_path;
    const char *trace_path;
    bool strict;              /* an expect the run never reached fails it */
    const char *junit_path;   /* NULL: none; "-": stdout */
    const char *html_path;    /* NULL: none; the page of the run (page.h) */
    const char *capture_path; /* --capture FILE; NULL: none */
} gy_cli_options;

/* A physics entity the runner reports on, in report order (scene order, spawned ones after). */
typedef struct gy_cli_entity {
    gy_entity handle;
    const char *name;                /* points into its gy_scene */
    const gy_scene_physics *physics; /* the authored component */
} gy_cli_entity;

/* One `expect` or `expect_event` outcome, in the order they were evaluated. */
typedef struct gy_cli_expect {
    double at;
    const char *entity; /* NULL for expect_event */
    int passed;         /* 1 held, 0 failed, -1 not reached before the run ended */
    char detail[320];
    const gy_scene_action *action; /* the script entry: what was expected, and its tolerance */
    /* What was measured when the check ran (nothing when not reached or the entity was gone). */
    bool measured;
    bool has_state;               /* expect: the entity had a physics body to read */
    gy_vec3 position, velocity;   /* expect: world position, linear velocity */
    gy_vec3 angular_velocity;     /* expect: rad/s */
    bool awake, grounded;         /* expect */
    gy_ground_state ground_state; /* expect */
    double first_event_t;         /* expect_event: the first matching event's time; NAN: none */
    const char *a, *b;            /* expect_event: the entities' names (b NULL when absent) */
} gy_cli_expect;

/* One `raycast` result. */
typedef struct gy_cli_raycast {
    const char *label;
    double at;
    bool hit;
    const char *entity; /* NULL without a hit */
    double distance;
    gy_vec3 point, normal;
} gy_cli_raycast;

/* An apply_force or apply_torque still being applied. */
typedef struct gy_cli_force {
    gy_entity entity;
    bool torque; /* apply_torque: value is N·m */
    gy_vec3 value;
    uint64_t end_tick; /* applied before every step while tick < end_tick */
} gy_cli_force;

/* An expect_event watching the event stream until its time comes. */
typedef struct gy_cli_watch {
    const gy_scene_action *action;
    gy_entity a, b;
    bool seen;
    uint64_t seen_tick;
} gy_cli_watch;

/* A snapshot of one entity at the end of the run (taken before teardown). */
typedef struct gy_cli_final {
    const char *name;
    gy_pose pose;
    gy_vec3 linear_velocity, angular_velocity;
    const char *body;
    int awake;        /* -1: null (not Dynamic) */
    int grounded;     /* -1: null (not a character) */
    int ground_state; /* gy_ground_state; -1: null (not a character) */
} gy_cli_final;

/* A scene loaded by `spawn`. */
typedef struct gy_cli_spawned {
    gy_scene *scene;
    gy_scene_instance *instance;
} gy_cli_spawned;

typedef struct gy_cli_replay gy_cli_replay;

typedef struct gy_cli_runner {
    gy_cli_options opt;
    const gy_allocator *alloc;
    gy_scene *scene;
    gy_scene_instance *instance;
    gy_cli_spawned *spawned; /* loaded by `spawn` (kept to the end: their names are used) */
    uint32_t spawn_count, spawn_capacity;
    gy_world *world;
    const char *backend;
    uint32_t step_hz;
    double dt;
    uint64_t base_tick;   /* physics tick at the start of the run */
    uint64_t tick;        /* ticks simulated so far (the state the World holds) */
    uint64_t total_ticks; /* ticks to run */

    gy_cli_entity *ents;
    uint32_t ent_count, ent_capacity;
    gy_hash_map ent_index; /* entity bits → ents index */

    uint64_t events[GY_SCENE_EVENT_KIND_COUNT]; /* by gy_scene_event_kind */
    gy_collision_event last_event;
    bool have_last_event;
    FILE *events_out;
    FILE *trace_out;

    uint32_t next_action;
    gy_cli_expect *expects;
    uint32_t expect_count, expect_capacity;
    gy_cli_raycast *raycasts;
    uint32_t raycast_count, raycast_capacity;
    gy_cli_force *forces;
    uint32_t force_count, force_capacity;
    gy_cli_watch *watches;
    uint32_t watch_count;

    bool expect_failed;
    bool interrupted; /* SIGINT or SIGTERM ended the run early */
    bool ran;         /* set-up succeeded and the loop ran: its files are kept */
    bool fault;       /* a runtime fault ended the run */
    bool spawn_failed;
    uint32_t bodies_peak;

    gy_cli_final *finals;
    uint32_t final_count;

    struct gy_cli_page *page;  /* --html: recorded as the run goes (run_page.c); NULL: none */
    int32_t page_awake;        /* its series of bodies awake */
    int32_t page_diag;         /* its first diagnostics series (run_page.c); -1: none */
    uint64_t page_diag_sample; /* the diagnostics sample it has last (0: none) */
    uint32_t page_instances;   /* instances whose joints it has: the root, then spawned ones */
    gy_joint *page_joints;     /* their handles, in the page's joint order */
    uint32_t page_joint_count, page_joint_capacity;
    gy_cli_output *capture_out; /* --capture: the file being written */
    bool capture_ok;            /* the capture ended complete */
    gy_cli_replay *replay;      /* `gyre replay`: the capture being run (capture.c) */
} gy_cli_runner;

/* run.c: everything after option parsing, for `run` and `replay` (`who` names the command in
 * messages). Returns the exit code. */
int gy_cli_execute(gy_cli_runner *R, const char *who);

/* capture.c */
/* --capture: begins the World's capture into `out` (the scene and the files it loads stored),
 * before physics starts. Returns an exit code (GY_CLI_EXIT_OK to go on). */
int gy_cli_capture_begin(gy_cli_runner *R, gy_cli_output *out);
/* Ends it once the run is over (real time: after holding the physics thread). */
int gy_cli_capture_end(gy_cli_runner *R, gy_cli_output *out);
/* Replay: enters replay mode (and --verify's own capture) once physics has started. */
int gy_cli_replay_begin(gy_cli_runner *R);
/* After each frame: true once --verify found a difference (printed). */
bool gy_cli_replay_check(gy_cli_runner *R);
/* After the loop: runs to the capture's end, finishes --verify, leaves replay mode. */
int gy_cli_replay_end(gy_cli_runner *R);

/* script.c */
/* Prepares the expect_event watches of the root scene. GY_ERR_OUT_OF_MEMORY. */
gy_result gy_cli_script_init(gy_cli_runner *R);
/* Runs every action due at the current tick, in script order. */
void gy_cli_script_run_due(gy_cli_runner *R);
/* Applies the forces of apply_force actions still running (before a step). */
void gy_cli_script_apply_forces(gy_cli_runner *R);
/* After the run: lists the expects that were never reached. */
void gy_cli_script_finish(gy_cli_runner *R);
/* The first tick whose simulated time is >= at. */
uint64_t gy_cli_tick_for(const gy_cli_runner *R, double at);
/* Registers the physics entities of a loaded instance (callbacks, report order). */
gy_result gy_cli_track_instance(gy_cli_runner *R, const gy_scene_instance *inst);
/* The name the runner knows an entity by ("?" when unknown). */
const char *gy_cli_entity_name(const gy_cli_runner *R, gy_entity e);
/* The entity's index in R->ents, or -1 when the runner does not know it. */
int32_t gy_cli_entity_index(const gy_cli_runner *R, gy_entity e);

/* run_page.c: the page of a run (--html). */
/* Creates R->page for the run set up in R. GY_ERR_OUT_OF_MEMORY. */
gy_result gy_cli_page_begin(gy_cli_runner *R);
/* Records the state at R->tick of every tracked entity, when the page keeps that tick. */
void gy_cli_page_record_tick(gy_cli_runner *R);
/* Records a collision event (the runner's tick numbering). */
void gy_cli_page_record_event(gy_cli_runner *R, const gy_collision_event *ev, uint64_t tick);
/* Records a body's sleep, wake or kill at `tick` (as the events file counts it). */
void gy_cli_page_record_body_event(gy_cli_runner *R, gy_scene_event_kind kind, gy_entity e,
                                   uint64_t tick);
/* Adds the expects and writes the page to f. False (with a message) when it cannot. */
bool gy_cli_page_finish(gy_cli_runner *R, FILE *f);
/* Frees the page and what recording it needed (nothing when there is none). */
void gy_cli_page_release(gy_cli_runner *R);

/* report.c */
/* Writes a number for people and programs: at most 6 decimals, trailing zeros trimmed, no "-0";
 * "null" (JSON) or "nan" (CSV) when not finite. */
void gy_cli_format_number(char *buf, size_t size, double v, bool json);
void gy_cli_json_string(FILE *f, const char *s);
/* A JSON number as the report writes it (gy_cli_format_number, non-finite as null). */
void gy_cli_json_number(FILE *f, double v);
void gy_cli_write_trace_header(FILE *f);
void gy_cli_write_trace_rows(gy_cli_runner *R);
void gy_cli_write_event(gy_cli_runner *R, const gy_collision_event *ev, uint64_t tick);
/* One body lifecycle line (sleep, wake, killed) of the events file: b and the contact fields
 * null. */
void gy_cli_write_body_event(gy_cli_runner *R, gy_scene_event_kind kind, gy_entity entity,
                             uint64_t tick);
/* Takes the final snapshot of every live tracked entity. GY_ERR_OUT_OF_MEMORY. */
gy_result gy_cli_snapshot_entities(gy_cli_runner *R);

typedef struct gy_cli_counters {
    uint64_t commands, commands_dropped_stale, replies, replies_dropped;
    uint32_t bodies_peak;
    bool live_known;
    uint32_t live_objects_at_exit;
    /* Runtime geometry built under the per-tick budget (reported only when some was queued). */
    gy_physics_geometry_stats geometry;
} gy_cli_counters;

typedef struct gy_cli_timing {
    double wall_seconds;
    double step_mean_ms, step_p50_ms, step_p99_ms, step_max_ms; /* NAN: unknown (null) */
} gy_cli_timing;

void gy_cli_write_report(FILE *f, const gy_cli_runner *R, const gy_cli_counters *counters,
                         const gy_cli_timing *timing);
/* The expects as JUnit XML (one test case per expect, plus one for the run itself when a fault
 * or a failed spawn ended it), for CI systems. */
void gy_cli_write_junit(FILE *f, const gy_cli_runner *R, const gy_cli_timing *timing);

#endif /* GY_CLI_H */
