/* The pages `--html FILE` writes (docs/viewing.md): one self-contained HTML file a browser opens,
 * with the data of a run (colliders, a pose per frame, events, expects, plotted series) or of a
 * soak (series over time with their gates, histograms). Prefix gy_cli_page_.
 *
 * The writer knows nothing of where the data comes from: a run, a replay or a soak feeds it, then
 * gy_cli_page_write writes the page. Recording never fails loudly: running out of memory marks
 * the page, and gy_cli_page_write then refuses with false, so a run is never cut short by its
 * picture. Everything here runs on the program's main thread. */
#ifndef GY_CLI_PAGE_H
#define GY_CLI_PAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gyre/scene.h"

/* Most frames a run page holds: longer runs record every Nth tick (the page says which). */
#define GY_CLI_PAGE_MAX_FRAMES 3600u
/* Most entity-frames a run page holds: scenes with many entities get fewer frames. */
#define GY_CLI_PAGE_MAX_ENTITY_FRAMES 1000000u
/* Most events a run page holds per kind; the rest are counted and shown as dropped. */
#define GY_CLI_PAGE_MAX_EVENTS 100000u
/* Most bins of a series over time (ten a second, at least 20; each keeps the mean and the maximum
 * of its samples). */
#define GY_CLI_PAGE_SERIES_BINS 600u

typedef enum gy_cli_page_kind {
    GY_CLI_PAGE_RUN, /* the scene in 3D over time */
    GY_CLI_PAGE_SOAK /* series and histograms */
} gy_cli_page_kind;

typedef struct gy_cli_page gy_cli_page;

/* An empty page, or NULL when out of memory. */
gy_cli_page *gy_cli_page_create(gy_cli_page_kind kind);
/* Frees a page (NULL is fine). */
void gy_cli_page_free(gy_cli_page *page);

/* A line of the page's header, such as ("scene", "scenes/pile.json"); both strings are copied.
 * Shown in the order given. */
void gy_cli_page_set_info(gy_cli_page *page, const char *key, const char *value);

/* ---- run pages ------------------------------------------------------------------------------- */

/* The timeline: ticks at `step_hz` (> 0), `planned_ticks` to run, `entities` expected (both only
 * size the frame stride: at most GY_CLI_PAGE_MAX_FRAMES frames and about
 * GY_CLI_PAGE_MAX_ENTITY_FRAMES entity-frames). Call once, before recording. */
void gy_cli_page_set_timeline(gy_cli_page *page, double step_hz, uint64_t planned_ticks,
                              uint32_t entities);

/* Declares the next entity (indices count from 0 in the order declared) with its name and its
 * authored physics component (its colliders are copied; hull points become the hull's
 * triangles). Mesh and hull arrays shared by several colliders (the same pointer) are written
 * once. Returns the index, or -1 when out of memory. */
int32_t gy_cli_page_add_entity(gy_cli_page *page, const char *name,
                               const gy_scene_physics *physics);

/* Entities declared so far. */
int32_t gy_cli_page_entity_count(const gy_cli_page *page);

/* True when `tick` starts a frame the page has not held yet (every stride-th tick); the page then
 * holds that frame, with whatever entities are recorded in it (none: an empty frame). */
bool gy_cli_page_begin_frame(gy_cli_page *page, uint64_t tick);

/* Records an entity's world pose, linear velocity (m/s) and sleep state at `tick`. Ticks for one
 * entity must not go back; a tick that is not a frame, or a frame already recorded for the
 * entity, is ignored; an entity not recorded at a frame is absent there (not yet spawned,
 * destroyed). Non-finite values count as absent. */
void gy_cli_page_record(gy_cli_page *page, uint64_t tick, int32_t entity, const gy_pose *pose,
                        gy_vec3 velocity, bool awake);

/* Declares the next joint (indices from 0): its type ("ball", "hinge", ...), the entities it
 * joins (`b` -1: the world) and its world anchor when created. Drawn for the frames it is
 * marked live. Returns the index, or -1 when out of memory. */
int32_t gy_cli_page_add_joint(gy_cli_page *page, const char *type, int32_t a, int32_t b,
                              gy_vec3 anchor);
/* Marks the joint live (created, not broken) at `tick`. */
void gy_cli_page_joint_live(gy_cli_page *page, int32_t joint, uint64_t tick);

/* Records an event at `tick`: `kind` ("enter", "stay", "exit", "sleep", ...; copied once per
 * kind), entities `a` and `b` (-1: none), and for contacts the point and normal (NULL: none). */
void gy_cli_page_event(gy_cli_page *page, uint64_t tick, const char *kind, int32_t a, int32_t b,
                       const gy_vec3 *point, const gy_vec3 *normal);

/* Records a checked expectation due at `tick` (`at` seconds): `passed` 1 held, 0 failed, -1 not
 * reached; `label` names what was checked (an entity, an event); `detail` says how it went. */
void gy_cli_page_expect(gy_cli_page *page, uint64_t tick, double at, const char *label, int passed,
                        const char *detail);

/* ---- series and histograms (both kinds) ----------------------------------------------------- */

/* A quantity over [0, duration_s] seconds in bins of a tenth of a second (at least 20, at most
 * GY_CLI_PAGE_SERIES_BINS), drawn with `gate` (a limit, NAN for none) as a line. Returns its index,
 * or -1 when out of memory. */
int32_t gy_cli_page_add_series(gy_cli_page *page, const char *name, const char *unit,
                               double duration_s, double gate);
/* Puts a series in a group (copied; NULL: none). The series of a group share one plot, a line
 * each (the mean of each bin, empty bins bridged), under the group's name; a series without a
 * group has a plot of its own with the mean and the maximum of each bin. */
void gy_cli_page_set_series_group(gy_cli_page *page, int32_t series, const char *group);
/* Adds a sample at `t` seconds (clamped into the range; non-finite samples are ignored). */
void gy_cli_page_sample(gy_cli_page *page, int32_t series, double t, double value);

/* A distribution as `n` (value, count) pairs in increasing value, with its summary line
 * (`summary`, e.g. "p50 3 us, p99 12 us") and `gate` (NAN: none). */
void gy_cli_page_add_histogram(gy_cli_page *page, const char *name, const char *unit,
                               const double *values, const uint64_t *counts, uint32_t n,
                               const char *summary, double gate);

/* ---- output ---------------------------------------------------------------------------------- */

/* Writes the page. False when recording ran out of memory (nothing useful is written then) or
 * the data cannot be assembled; write errors show in ferror(f). */
bool gy_cli_page_write(const gy_cli_page *page, FILE *f);

#endif /* GY_CLI_PAGE_H */
