/* `gyre conform`: one scene run twice and compared: on two middleware adapters (or twice on the
 * same one), or once against a run saved earlier (`--baseline`).
 *
 * Each run is exactly `gyre run SCENE --quiet --backend NAME` (lockstep, so each side is
 * deterministic), made in this process through gy_cli_run_main with its report, event lines and
 * trace written to a private temporary folder. A saved run is the same three files, written by an
 * earlier `gyre run --report --events --trace`; its events and trace are optional. The files are
 * then read back and compared: final pose and velocity per entity, positions tick by tick (largest
 * difference, first divergence), collision events per pair of entity names, expects and raycasts.
 * Differences are reported, never failed on: two middlewares agree with the analytic answers the
 * scenes check, not with each other to the last digit. Only a failed run or an exceeded
 * --max-position-diff gate makes the exit code 1. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "conform.h"
#include "gyre/backend/backend.h"
#include "gyre/hash_map.h"
#include "gyre/math.h"

/* A position difference above this (m) counts as "differs" (a millimetre: well above the
 * micrometre the reports print, well below anything a player could see). */
#define DIVERGED_M 0.001

void gy_cli_conform_usage(FILE *out)
{
    fputs("usage: gyre conform SCENE.json [options]\n"
          "       gyre conform [SCENE.json] --baseline REPORT [options]\n"
          "\n"
          "Runs the scene on two middleware adapters, lockstep, as `gyre run` does, and compares\n"
          "the runs: final poses and velocities, positions tick by tick, collision events per\n"
          "pair of entities, expects and raycasts. Differences are reported, not failed.\n"
          "With --baseline, compares one run with a run saved earlier instead (the scene may\n"
          "then be left out: the saved report names it).\n"
          "\n"
          "options:\n"
          "  --backends A,B            the two adapters, the same one twice allowed (default: the\n"
          "                            first two compiled in)\n"
          "  --baseline REPORT         compare against this `gyre run --report` file: one run on\n"
          "                            its backend for its sim_seconds (unless --seconds)\n"
          "  --baseline-events FILE    the saved run's --events file (else events per pair are\n"
          "                            not compared)\n"
          "  --baseline-trace FILE     the saved run's --trace file (else positions over the run\n"
          "                            are not compared)\n"
          "  --seconds S               simulated seconds per run (default 10)\n"
          "  --report FILE             write the comparison as JSON to FILE ('-' for stdout)\n"
          "  --max-position-diff M     gate: exit 1 when an entity's final positions differ by\n"
          "                            more than M metres\n"
          "  --quiet                   no summary (warnings and failed expects still)\n"
          "  -h, --help                this help\n"
          "\n"
          "exit codes: 0 both runs held every expect and no gate was exceeded; 1 a run failed\n"
          "            (expect, spawn, runtime fault) or a gate was exceeded; 2 usage error,\n"
          "            unknown adapter, unreadable or invalid scene\n",
          out);
}

/* ---- options --------------------------------------------------------------------------------- */

typedef struct options {
    const char *scene;
    char backends[2][64];
    const char *seconds; /* passed through to each run, already checked */
    bool seconds_given;
    char seconds_text[64];                                   /* a baseline's sim_seconds */
    const char *baseline, *baseline_events, *baseline_trace; /* NULL: none */
    const char *report;
    double max_position_diff; /* NAN: no gate */
    bool quiet;
} options;

/* One line naming the problem and where help is. */
static int usage_error(const char *fmt, const char *arg)
{
    fputs("gyre conform: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("; see 'gyre conform --help'\n", stderr);
    return GY_CLI_EXIT_USAGE;
}

static const char *const k_conform_options[] = {
    "--backends",       "--seconds",           "--report", "--baseline", "--baseline-events",
    "--baseline-trace", "--max-position-diff", "--quiet",  "--help"};

static void backend_list(FILE *out)
{
    for (uint32_t i = 0; i < gy_backend_count(); i++)
        fprintf(out, "%s%s", i ? ", " : "", gy_backend_at(i)->name);
}

static int unknown_backend(const char *name)
{
    fprintf(stderr, "gyre conform: unknown backend '%s' (available: ", name);
    backend_list(stderr);
    fputs(")\n", stderr);
    return GY_CLI_EXIT_USAGE;
}

/* "A,B": two adapters compiled in (the same one twice compares a run with itself: lockstep
 * runs are deterministic, so any difference is a bug). */
static int parse_backends(const char *v, options *o)
{
    const char *comma = strchr(v, ',');
    if (comma == NULL || strchr(comma + 1, ',') != NULL || comma == v || comma[1] == '\0')
        return usage_error("--backends needs two adapter names, as A,B (got '%s')", v);
    size_t la = (size_t)(comma - v), lb = strlen(comma + 1);
    if (la >= sizeof o->backends[0] || lb >= sizeof o->backends[1])
        return usage_error("--backends: name too long in '%s'", v);
    memcpy(o->backends[0], v, la);
    o->backends[0][la] = '\0';
    memcpy(o->backends[1], comma + 1, lb + 1);
    for (int k = 0; k < 2; k++)
        if (gy_backend_find(o->backends[k]) == NULL)
            return unknown_backend(o->backends[k]);
    return GY_CLI_EXIT_OK;
}

static int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->seconds = "10";
    o->max_position_diff = NAN;
    bool backends_given = false, options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        gy_cli_arg kind = gy_cli_common_arg(a, &options_done, &o->scene);
        if (kind == GY_CLI_ARG_SECOND_SCENE)
            return usage_error("one scene file only (got a second one: '%s')", a);
        if (kind == GY_CLI_ARG_HELP) {
            gy_cli_conform_usage(stdout);
            return -1;
        }
        if (kind == GY_CLI_ARG_TAKEN)
            continue;
        if (strcmp(a, "--quiet") == 0) {
            o->quiet = true;
        } else if (gy_cli_option_value(argc, argv, &i, "--backends", &v)) {
            if (v == NULL)
                return usage_error("%s needs two adapter names, as A,B", "--backends");
            int r = parse_backends(v, o);
            if (r != GY_CLI_EXIT_OK)
                return r;
            backends_given = true;
        } else if (gy_cli_option_value(argc, argv, &i, "--seconds", &v)) {
            double s;
            if (!gy_cli_parse_number(v, 0.0, HUGE_VAL, &s))
                return usage_error("--seconds needs a finite number >= 0 (got '%s')",
                                   v != NULL ? v : "");
            o->seconds = v;
            o->seconds_given = true;
        } else if (gy_cli_option_value(argc, argv, &i, "--baseline", &v)) {
            if (v == NULL || v[0] == '\0')
                return usage_error("%s needs a report file (from gyre run --report)", "--baseline");
            o->baseline = v;
        } else if (gy_cli_option_value(argc, argv, &i, "--baseline-events", &v)) {
            if (v == NULL || v[0] == '\0')
                return usage_error("%s needs an events file (from gyre run --events)",
                                   "--baseline-events");
            o->baseline_events = v;
        } else if (gy_cli_option_value(argc, argv, &i, "--baseline-trace", &v)) {
            if (v == NULL || v[0] == '\0')
                return usage_error("%s needs a trace file (from gyre run --trace)",
                                   "--baseline-trace");
            o->baseline_trace = v;
        } else if (gy_cli_option_value(argc, argv, &i, "--report", &v)) {
            if (v == NULL || v[0] == '\0')
                return usage_error("%s needs a file name (or - for stdout)", "--report");
            o->report = v;
        } else if (gy_cli_option_value(argc, argv, &i, "--max-position-diff", &v)) {
            if (!gy_cli_parse_number(v, 0.0, HUGE_VAL, &o->max_position_diff))
                return usage_error("--max-position-diff needs a finite number >= 0 (got '%s')",
                                   v != NULL ? v : "");
        } else {
            return gy_cli_unknown("gyre conform", "option", a, k_conform_options,
                                  sizeof k_conform_options / sizeof k_conform_options[0]);
        }
    }
    if (o->baseline == NULL && (o->baseline_events != NULL || o->baseline_trace != NULL))
        return usage_error("%s", "--baseline-events and --baseline-trace go with --baseline");
    if (o->baseline != NULL) {
        if (backends_given)
            return usage_error("%s", "--baseline runs on the saved run's backend: leave out "
                                     "--backends");
        return GY_CLI_EXIT_OK; /* scene, backend and seconds may come from the saved report */
    }
    if (o->scene == NULL)
        return usage_error("%s", "no scene file given");
    if (!backends_given) {
        if (gy_backend_count() < 2) {
            fputs("gyre conform: needs two middleware adapters, and this build has one (", stderr);
            backend_list(stderr);
            fputs(")\n", stderr);
            return GY_CLI_EXIT_USAGE;
        }
        for (uint32_t k = 0; k < 2; k++)
            snprintf(o->backends[k], sizeof o->backends[k], "%s", gy_backend_at(k)->name);
    }
    return GY_CLI_EXIT_OK;
}

/* ---- the two runs ---------------------------------------------------------------------------- */

enum { FILE_REPORT, FILE_EVENTS, FILE_TRACE, FILE_KINDS };
static const char *const k_file_names[FILE_KINDS] = {"report.json", "events.jsonl", "trace.csv"};
static const char *const k_kinds[3] = {"enter", "stay", "exit"};

typedef struct run {
    const char *backend;
    char label[96]; /* how messages name this side: the backend, "saved ode", "ode (2)" */
    bool saved;     /* a run saved earlier (--baseline): its paths are the user's files */
    int exit_code;  /* -1 for a saved run: not known */
    char paths[FILE_KINDS][4096];
    cJSON *report;
    cJSON *entities, *expects, *raycasts; /* arrays inside report */
    double events[3];
} run;

static bool make_paths(const char *dir, run *r, int side)
{
    for (int k = 0; k < FILE_KINDS; k++) {
        int n = snprintf(r->paths[k], sizeof r->paths[k], "%s/%d.%s", dir, side, k_file_names[k]);
        if (n < 0 || (size_t)n >= sizeof r->paths[k])
            return false;
    }
    return true;
}

static int run_scene(const options *o, run *r)
{
    char *argv[] = {"run",
                    (char *)o->scene,
                    "--quiet",
                    "--backend",
                    (char *)r->backend,
                    "--seconds",
                    (char *)o->seconds,
                    "--report",
                    r->paths[FILE_REPORT],
                    "--events",
                    r->paths[FILE_EVENTS],
                    "--trace",
                    r->paths[FILE_TRACE],
                    NULL};
    return gy_cli_run_main((int)(sizeof argv / sizeof argv[0]) - 1, argv);
}

static bool load_report(run *r)
{
    size_t size = 0;
    char *text = gy_cli_read_text(r->paths[FILE_REPORT], &size);
    if (text == NULL)
        return false;
    r->report = cJSON_ParseWithLength(text, size);
    gy_cli_free_text(text, size);
    if (r->report == NULL)
        return false;
    r->entities = cJSON_GetObjectItemCaseSensitive(r->report, "entities");
    r->expects = cJSON_GetObjectItemCaseSensitive(r->report, "expects");
    r->raycasts = cJSON_GetObjectItemCaseSensitive(r->report, "raycasts");
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(r->report, "events");
    for (int k = 0; k < 3; k++)
        r->events[k] = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ev, k_kinds[k]));
    return cJSON_IsArray(r->entities) && cJSON_IsArray(r->expects) && cJSON_IsArray(r->raycasts);
}

static double number_at(const cJSON *o, const char *key)
{
    return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

static const char *string_at(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* n numbers of an array member; NAN for anything missing or null. */
static void numbers_at(const cJSON *o, const char *key, double *out, int n)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    for (int i = 0; i < n; i++)
        out[i] = cJSON_GetNumberValue(cJSON_GetArrayItem(a, i));
}

static double distance3(const double *a, const double *b)
{
    return gy_v3_len(gy_v3(a[0] - b[0], a[1] - b[1], a[2] - b[2]));
}

/* The angle between two orientations, degrees. */
static double angle_deg(const double *qa, const double *qb)
{
    double d = fabs(qa[0] * qb[0] + qa[1] * qb[1] + qa[2] * qb[2] + qa[3] * qb[3]);
    double na = sqrt(qa[0] * qa[0] + qa[1] * qa[1] + qa[2] * qa[2] + qa[3] * qa[3]);
    double nb = sqrt(qb[0] * qb[0] + qb[1] * qb[1] + qb[2] * qb[2] + qb[3] * qb[3]);
    if (!(na > 0.0) || !(nb > 0.0))
        return NAN;
    d /= na * nb;
    return 2.0 * acos(d > 1.0 ? 1.0 : d) * 180.0 / GY_PI;
}

/* ---- final state --------------------------------------------------------------------------- */

typedef struct entity_diff {
    const char *name; /* in run a's report */
    double position, rotation_deg, velocity;
    int awake[2];   /* -1 null */
    double run_max; /* over the trace; NAN when the trace could not be compared */
    double run_max_t;
} entity_diff;

typedef struct comparison {
    entity_diff *entities;
    uint32_t entity_count;
    bool entity_lists_match;
    double final_max;
    const char *final_max_entity;
    uint32_t final_differ; /* entities whose final positions differ by more than DIVERGED_M */

    bool trace_ok;
    uint64_t trace_rows;
    char trace_problem[160];
    double run_max, run_max_t;
    const char *run_max_entity;
    double first_divergence_t; /* NAN: never */
    const char *first_divergence_entity;
} comparison;

static int awake_of(const cJSON *e)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(e, "awake");
    return cJSON_IsBool(a) ? cJSON_IsTrue(a) : -1;
}

static bool compare_entities(const run *a, const run *b, comparison *c)
{
    int na = cJSON_GetArraySize(a->entities), nb = cJSON_GetArraySize(b->entities);
    c->entity_lists_match = na == nb;
    c->entity_count = (uint32_t)(na < nb ? na : nb);
    c->entities = c->entity_count ? gy_alloc_zeroed(gy_default_allocator(),
                                                    (size_t)c->entity_count * sizeof *c->entities)
                                  : NULL;
    if (c->entity_count && c->entities == NULL)
        return false;
    c->final_max = 0.0;
    for (uint32_t i = 0; i < c->entity_count; i++) {
        const cJSON *ea = cJSON_GetArrayItem(a->entities, (int)i);
        const cJSON *eb = cJSON_GetArrayItem(b->entities, (int)i);
        entity_diff *d = &c->entities[i];
        d->name = string_at(ea, "name");
        const char *nb_name = string_at(eb, "name");
        if (d->name == NULL || nb_name == NULL || strcmp(d->name, nb_name) != 0)
            c->entity_lists_match = false;
        double pa[3], pb[3], qa[4], qb[4], va[3], vb[3];
        numbers_at(ea, "position", pa, 3);
        numbers_at(eb, "position", pb, 3);
        numbers_at(ea, "rotation", qa, 4);
        numbers_at(eb, "rotation", qb, 4);
        numbers_at(ea, "linear_velocity", va, 3);
        numbers_at(eb, "linear_velocity", vb, 3);
        d->position = distance3(pa, pb);
        d->rotation_deg = angle_deg(qa, qb);
        d->velocity = distance3(va, vb);
        d->awake[0] = awake_of(ea);
        d->awake[1] = awake_of(eb);
        d->run_max = NAN;
        d->run_max_t = NAN;
        if (d->position > DIVERGED_M)
            c->final_differ++;
        if (d->position > c->final_max || c->final_max_entity == NULL) {
            c->final_max = d->position;
            c->final_max_entity = d->name;
        }
    }
    return true;
}

/* ---- traces ---------------------------------------------------------------------------------- */

typedef struct trace_row {
    unsigned long long tick;
    double t;
    char entity[256];
    double p[3];
} trace_row;

/* Parses `tick,t,entity,x,y,z,...`; the entity may be quoted CSV style. */
static bool parse_row(const char *line, trace_row *r)
{
    char *end = NULL;
    r->tick = strtoull(line, &end, 10);
    if (end == line || *end != ',')
        return false;
    const char *p = end + 1;
    r->t = strtod(p, &end);
    if (end == p || *end != ',')
        return false;
    p = end + 1;
    size_t n = 0;
    if (*p == '"') {
        for (p++; *p != '\0'; p++) {
            if (*p == '"') {
                if (p[1] != '"')
                    break;
                p++;
            }
            if (n + 1 >= sizeof r->entity)
                return false;
            r->entity[n++] = *p;
        }
        if (*p != '"')
            return false;
        p++;
    } else {
        for (; *p != '\0' && *p != ','; p++) {
            if (n + 1 >= sizeof r->entity)
                return false;
            r->entity[n++] = *p;
        }
    }
    r->entity[n] = '\0';
    for (int k = 0; k < 3; k++) {
        if (*p != ',')
            return false;
        p++;
        r->p[k] = strtod(p, &end);
        if (end == p)
            return false;
        p = end;
    }
    return true;
}

/* Where this name sits in the final entity list (a hint first: rows repeat in report order). */
static entity_diff *find_entity(comparison *c, const char *name, uint32_t *hint)
{
    for (uint32_t k = 0; k < c->entity_count; k++) {
        uint32_t i = (*hint + k) % c->entity_count;
        if (c->entities[i].name != NULL && strcmp(c->entities[i].name, name) == 0) {
            *hint = i + 1;
            return &c->entities[i];
        }
    }
    return NULL;
}

static void compare_traces(const run *a, const run *b, comparison *c)
{
    c->first_divergence_t = NAN;
    c->run_max = 0.0;
    c->run_max_t = NAN;
    FILE *fa = a->paths[FILE_TRACE][0] ? fopen(a->paths[FILE_TRACE], "r") : NULL;
    FILE *fb = b->paths[FILE_TRACE][0] ? fopen(b->paths[FILE_TRACE], "r") : NULL;
    char *la = NULL, *lb = NULL;
    size_t ca = 0, cb = 0;
    bool header = true;
    uint32_t hint = 0;
    c->trace_ok = fa != NULL && fb != NULL;
    if (a->paths[FILE_TRACE][0] == '\0' || b->paths[FILE_TRACE][0] == '\0')
        snprintf(c->trace_problem, sizeof c->trace_problem,
                 "the saved run has no trace (--baseline-trace)");
    else if (!c->trace_ok)
        snprintf(c->trace_problem, sizeof c->trace_problem, "a trace file could not be read");
    while (c->trace_ok) {
        ssize_t ra = getline(&la, &ca, fa), rb = getline(&lb, &cb, fb);
        if (ra < 0 || rb < 0) {
            if (ra >= 0 || rb >= 0) {
                c->trace_ok = false;
                snprintf(c->trace_problem, sizeof c->trace_problem, "the %s trace has more rows",
                         ra >= 0 ? a->label : b->label);
            }
            break;
        }
        if (header) {
            header = false;
            continue;
        }
        trace_row ta, tb;
        if (!parse_row(la, &ta) || !parse_row(lb, &tb)) {
            c->trace_ok = false;
            snprintf(c->trace_problem, sizeof c->trace_problem, "unreadable trace row %llu",
                     (unsigned long long)c->trace_rows + 1u);
            break;
        }
        if (ta.tick != tb.tick || strcmp(ta.entity, tb.entity) != 0) {
            /* A spawn or destroy happened on one side only (a failed run stops early). */
            c->trace_ok = false;
            snprintf(c->trace_problem, sizeof c->trace_problem,
                     "the runs' entities differ from tick %llu",
                     ta.tick < tb.tick ? ta.tick : tb.tick);
            break;
        }
        c->trace_rows++;
        double d = distance3(ta.p, tb.p);
        entity_diff *e = find_entity(c, ta.entity, &hint);
        if (e != NULL && !(d <= e->run_max)) {
            e->run_max = d;
            e->run_max_t = ta.t;
        }
        if (d > c->run_max) {
            c->run_max = d;
            c->run_max_t = ta.t;
            c->run_max_entity = e != NULL ? e->name : NULL;
        }
        if (d > DIVERGED_M && isnan(c->first_divergence_t)) {
            c->first_divergence_t = ta.t;
            c->first_divergence_entity = e != NULL ? e->name : NULL;
        }
    }
    free(la);
    free(lb);
    if (fa != NULL)
        fclose(fa);
    if (fb != NULL)
        fclose(fb);
}

/* ---- events per pair of entity names --------------------------------------------------------- */

typedef struct pair_stats {
    char *a, *b;             /* sorted: strcmp(a, b) <= 0 */
    uint64_t counts[2][3];   /* per run, per kind */
    double first_enter_t[2]; /* NAN: none */
    uint32_t next;           /* the next pair with the same hash, or UINT32_MAX */
} pair_stats;

typedef struct pair_table {
    pair_stats *items; /* in the order first seen */
    uint32_t count, capacity;
    gy_hash_map first; /* hash of the two names -> index of the first pair with it */
} pair_table;

static uint64_t hash_names(const char *a, const char *b)
{
    uint64_t h = 14695981039346656037u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)a; *p; p++)
        h = (h ^ *p) * 1099511628211u;
    h = (h ^ 0xffu) * 1099511628211u;
    for (const unsigned char *p = (const unsigned char *)b; *p; p++)
        h = (h ^ *p) * 1099511628211u;
    return h;
}

static char *copy_string(const char *s)
{
    size_t n = strlen(s) + 1u;
    char *c = gy_alloc(gy_default_allocator(), n);
    if (c != NULL)
        memcpy(c, s, n);
    return c;
}

static pair_stats *table_get(pair_table *t, const char *x, const char *y)
{
    const char *a = strcmp(x, y) <= 0 ? x : y, *b = a == x ? y : x;
    uint64_t *first;
    bool inserted;
    if (gy_hash_map_upsert(&t->first, gy_map_key_of(hash_names(a, b)), &first, &inserted) != GY_OK)
        return NULL;
    for (uint32_t i = inserted ? UINT32_MAX : (uint32_t)*first; i != UINT32_MAX;
         i = t->items[i].next) {
        pair_stats *p = &t->items[i];
        if (strcmp(p->a, a) == 0 && strcmp(p->b, b) == 0)
            return p;
    }
    /* A new hash's entry is made before the pair: undone when the pair cannot be. */
    if (gy_array_reserve(gy_default_allocator(), (void **)&t->items, &t->capacity, t->count + 1u,
                         sizeof *t->items) != GY_OK) {
        if (inserted)
            gy_hash_map_remove(&t->first, gy_map_key_of(hash_names(a, b)), NULL);
        return NULL;
    }
    pair_stats *p = &t->items[t->count];
    memset(p, 0, sizeof *p);
    p->a = copy_string(a);
    p->b = copy_string(b);
    if (p->a == NULL || p->b == NULL) {
        if (p->a != NULL)
            gy_free(gy_default_allocator(), p->a, strlen(p->a) + 1u);
        if (p->b != NULL)
            gy_free(gy_default_allocator(), p->b, strlen(p->b) + 1u);
        if (inserted)
            gy_hash_map_remove(&t->first, gy_map_key_of(hash_names(a, b)), NULL);
        return NULL;
    }
    p->first_enter_t[0] = p->first_enter_t[1] = NAN;
    p->next = inserted ? UINT32_MAX : (uint32_t)*first;
    *first = t->count++;
    return p;
}

static void table_free(pair_table *t)
{
    const gy_allocator *al = gy_default_allocator();
    for (uint32_t i = 0; i < t->count; i++) {
        gy_free(al, t->items[i].a, strlen(t->items[i].a) + 1u);
        gy_free(al, t->items[i].b, strlen(t->items[i].b) + 1u);
    }
    if (t->items != NULL)
        gy_free(al, t->items, (size_t)t->capacity * sizeof *t->items);
    gy_hash_map_fini(&t->first);
}

/* Adds one run's event lines to the table; false when the file is unreadable or out of memory. */
static bool read_events(const run *r, int side, pair_table *t)
{
    FILE *f = fopen(r->paths[FILE_EVENTS], "r");
    if (f == NULL)
        return false;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    bool ok = true;
    while (ok && (n = getline(&line, &cap, f)) >= 0) {
        cJSON *ev = cJSON_ParseWithLength(line, (size_t)n);
        const char *kind = string_at(ev, "kind"), *a = string_at(ev, "a"), *b = string_at(ev, "b");
        int k = -1;
        for (int i = 0; kind != NULL && i < 3; i++)
            if (strcmp(kind, k_kinds[i]) == 0)
                k = i;
        /* Body lifecycle lines (sleep, wake, killed, joint_broken) are not pairs. */
        bool lifecycle = k < 0 && kind != NULL &&
                         (strcmp(kind, "sleep") == 0 || strcmp(kind, "wake") == 0 ||
                          strcmp(kind, "killed") == 0 || strcmp(kind, "joint_broken") == 0);
        if (lifecycle) {
            /* counted nowhere: the comparison is of pairs */
        } else if (k < 0 || a == NULL || b == NULL) {
            ok = false;
        } else {
            pair_stats *p = table_get(t, a, b);
            ok = p != NULL;
            if (ok) {
                p->counts[side][k]++;
                if (k == 0 && isnan(p->first_enter_t[side]))
                    p->first_enter_t[side] = number_at(ev, "t");
            }
        }
        cJSON_Delete(ev);
    }
    free(line);
    fclose(f);
    return ok;
}

typedef struct event_summary {
    uint32_t only[2];          /* pairs seen by one run only */
    uint32_t enter_differs;    /* pairs seen by both, with different enter counts */
    double max_first_enter_dt; /* between the runs' first enters of a pair both saw */
    const pair_stats *max_first_enter_pair;
} event_summary;

static bool seen(const pair_stats *p, int side)
{
    return p->counts[side][0] + p->counts[side][1] + p->counts[side][2] > 0;
}

static void summarize_events(const pair_table *t, event_summary *s)
{
    memset(s, 0, sizeof *s);
    for (uint32_t i = 0; i < t->count; i++) {
        const pair_stats *p = &t->items[i];
        bool s0 = seen(p, 0), s1 = seen(p, 1);
        if (s0 != s1) {
            s->only[s0 ? 0 : 1]++;
            continue;
        }
        if (p->counts[0][0] != p->counts[1][0])
            s->enter_differs++;
        double dt = fabs(p->first_enter_t[0] - p->first_enter_t[1]);
        if (dt > s->max_first_enter_dt) {
            s->max_first_enter_dt = dt;
            s->max_first_enter_pair = p;
        }
    }
}

/* ---- output ---------------------------------------------------------------------------------- */

static void pair_of_numbers(FILE *f, double a, double b)
{
    fputc('[', f);
    gy_cli_json_number(f, a);
    fputs(", ", f);
    gy_cli_json_number(f, b);
    fputc(']', f);
}

static void json_bool_or_null(FILE *f, int v)
{
    fputs(v < 0 ? "null" : v ? "true" : "false", f);
}

static int passed_of(const cJSON *x)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(x, "passed");
    return cJSON_IsBool(p) ? cJSON_IsTrue(p) : -1;
}

static void count_expects(const run *r, int *held, int *reached)
{
    *held = *reached = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, r->expects)
    {
        int p = passed_of(x);
        *held += p == 1;
        *reached += p >= 0;
    }
}

static void write_report(FILE *f, const options *o, const run *r, const comparison *c,
                         const pair_table *t, const event_summary *es, bool events_compared)
{
    fputs("{\n  \"gyre_version\": ", f);
    gy_cli_json_string(f, string_at(r[0].report, "gyre_version"));
    fputs(",\n  \"scene\": ", f);
    gy_cli_json_string(f, o->scene);
    fputs(",\n  \"backends\": [", f);
    gy_cli_json_string(f, r[0].backend);
    fputs(", ", f);
    gy_cli_json_string(f, r[1].backend);
    fputs("],\n  \"baseline\": ", f);
    gy_cli_json_string(f, o->baseline);
    fputs(",\n  \"runs\": [", f);
    for (int s = 0; s < 2; s++) {
        int held, reached;
        count_expects(&r[s], &held, &reached);
        fputs(s ? ",\n    " : "\n    ", f);
        fputs("{ \"backend\": ", f);
        gy_cli_json_string(f, r[s].backend);
        if (r[s].saved)
            fputs(", \"exit_code\": null, \"ticks\": ", f);
        else
            fprintf(f, ", \"exit_code\": %d, \"ticks\": ", r[s].exit_code);
        gy_cli_json_number(f, number_at(r[s].report, "ticks"));
        fprintf(f, ", \"expects_held\": %d, \"expects_reached\": %d, \"events\": { ", held,
                reached);
        for (int k = 0; k < 3; k++) {
            fprintf(f, "%s\"%s\": ", k ? ", " : "", k_kinds[k]);
            gy_cli_json_number(f, r[s].events[k]);
        }
        fputs(" } }", f);
    }
    fputs("\n  ],\n  \"final\": { \"entities_match\": ", f);
    fputs(c->entity_lists_match ? "true" : "false", f);
    fputs(", \"max_position_diff\": ", f);
    gy_cli_json_number(f, c->final_max);
    fputs(", \"entity\": ", f);
    gy_cli_json_string(f, c->final_max_entity);
    fprintf(f, ", \"entities_over_1mm\": %u },\n", c->final_differ);
    fputs("  \"trace\": { \"compared\": ", f);
    fputs(c->trace_ok ? "true" : "false", f);
    fputs(", \"problem\": ", f);
    gy_cli_json_string(f, c->trace_ok ? NULL : c->trace_problem);
    fprintf(f, ", \"rows\": %llu, \"max_position_diff\": ", (unsigned long long)c->trace_rows);
    gy_cli_json_number(f, c->run_max);
    fputs(", \"entity\": ", f);
    gy_cli_json_string(f, c->run_max_entity);
    fputs(", \"t\": ", f);
    gy_cli_json_number(f, c->run_max_t);
    fputs(", \"first_over_1mm_t\": ", f);
    gy_cli_json_number(f, c->first_divergence_t);
    fputs(", \"first_over_1mm_entity\": ", f);
    gy_cli_json_string(f, c->first_divergence_entity);
    fputs(" },\n  \"entities\": [", f);
    for (uint32_t i = 0; i < c->entity_count; i++) {
        const entity_diff *d = &c->entities[i];
        fputs(i ? ",\n    " : "\n    ", f);
        fputs("{ \"name\": ", f);
        gy_cli_json_string(f, d->name);
        fputs(", \"position_diff\": ", f);
        gy_cli_json_number(f, d->position);
        fputs(", \"rotation_diff_deg\": ", f);
        gy_cli_json_number(f, d->rotation_deg);
        fputs(", \"velocity_diff\": ", f);
        gy_cli_json_number(f, d->velocity);
        fputs(", \"awake\": [", f);
        json_bool_or_null(f, d->awake[0]);
        fputs(", ", f);
        json_bool_or_null(f, d->awake[1]);
        fputs("], \"run_max_position_diff\": ", f);
        gy_cli_json_number(f, d->run_max);
        fputs(", \"run_max_t\": ", f);
        gy_cli_json_number(f, d->run_max_t);
        fputs(" }", f);
    }
    fputs(c->entity_count ? "\n  ],\n" : "],\n", f);
    fprintf(f, "  \"events\": { \"compared\": %s, \"pairs\": ", events_compared ? "true" : "false");
    gy_cli_json_number(f, (double)t->count);
    fputs(", \"pairs_only_in\": ", f);
    pair_of_numbers(f, es->only[0], es->only[1]);
    fprintf(f, ", \"pairs_enter_count_differs\": %u, \"max_first_enter_dt\": ", es->enter_differs);
    gy_cli_json_number(f, es->max_first_enter_dt);
    fputs(",\n    \"differing_pairs\": [", f);
    uint32_t listed = 0;
    for (uint32_t i = 0; i < t->count; i++) {
        const pair_stats *p = &t->items[i];
        bool same = true;
        for (int k = 0; k < 3 && same; k++)
            same = p->counts[0][k] == p->counts[1][k];
        if (same && !(fabs(p->first_enter_t[0] - p->first_enter_t[1]) > 0.0))
            continue;
        fputs(listed++ ? ",\n      " : "\n      ", f);
        fputs("{ \"a\": ", f);
        gy_cli_json_string(f, p->a);
        fputs(", \"b\": ", f);
        gy_cli_json_string(f, p->b);
        for (int k = 0; k < 3; k++) {
            fprintf(f, ", \"%s\": ", k_kinds[k]);
            pair_of_numbers(f, (double)p->counts[0][k], (double)p->counts[1][k]);
        }
        fputs(", \"first_enter_t\": ", f);
        pair_of_numbers(f, p->first_enter_t[0], p->first_enter_t[1]);
        fputs(" }", f);
    }
    fputs(listed ? "\n    ] },\n" : "] },\n", f);

    fputs("  \"expects\": [", f);
    int ne = cJSON_GetArraySize(r[0].expects), ne1 = cJSON_GetArraySize(r[1].expects);
    for (int i = 0; i < (ne > ne1 ? ne : ne1); i++) {
        const cJSON *x0 = cJSON_GetArrayItem(r[0].expects, i);
        const cJSON *x1 = cJSON_GetArrayItem(r[1].expects, i);
        const cJSON *x = x0 != NULL ? x0 : x1;
        fputs(i ? ",\n    " : "\n    ", f);
        fputs("{ \"at\": ", f);
        gy_cli_json_number(f, number_at(x, "at"));
        fputs(", \"entity\": ", f);
        gy_cli_json_string(f, string_at(x, "entity"));
        fputs(", \"passed\": [", f);
        json_bool_or_null(f, x0 != NULL ? passed_of(x0) : -1);
        fputs(", ", f);
        json_bool_or_null(f, x1 != NULL ? passed_of(x1) : -1);
        fputs("], \"detail\": [", f);
        gy_cli_json_string(f, string_at(x0, "detail"));
        fputs(", ", f);
        gy_cli_json_string(f, string_at(x1, "detail"));
        fputs("] }", f);
    }
    fputs(ne || ne1 ? "\n  ],\n" : "],\n", f);

    fputs("  \"raycasts\": [", f);
    int nr = cJSON_GetArraySize(r[0].raycasts), nr1 = cJSON_GetArraySize(r[1].raycasts);
    for (int i = 0; i < (nr < nr1 ? nr : nr1); i++) {
        const cJSON *c0 = cJSON_GetArrayItem(r[0].raycasts, i);
        const cJSON *c1 = cJSON_GetArrayItem(r[1].raycasts, i);
        fputs(i ? ",\n    " : "\n    ", f);
        fputs("{ \"label\": ", f);
        gy_cli_json_string(f, string_at(c0, "label"));
        fputs(", \"entity\": [", f);
        gy_cli_json_string(f, string_at(c0, "entity"));
        fputs(", ", f);
        gy_cli_json_string(f, string_at(c1, "entity"));
        fputs("], \"distance\": ", f);
        pair_of_numbers(f, number_at(c0, "distance"), number_at(c1, "distance"));
        fputs(" }", f);
    }
    fputs(nr && nr1 ? "\n  ]\n}\n" : "]\n}\n", f);
}

static void write_summary(const options *o, const run *r, const comparison *c,
                          const event_summary *es, uint32_t pairs, bool events_compared)
{
    char a[64], b[64], t[64];
    fprintf(stderr, "gyre conform: %s: %s vs %s\n", o->scene, r[0].label, r[1].label);
    for (int s = 0; s < 2; s++) {
        int held, reached;
        count_expects(&r[s], &held, &reached);
        char what[4200];
        if (r[s].saved)
            snprintf(what, sizeof what, "from %s", o->baseline);
        else
            snprintf(what, sizeof what, "exit %d", r[s].exit_code);
        fprintf(stderr, "  %-8s %s, %d of %d expects held, events enter/stay/exit %.0f/%.0f/%.0f\n",
                r[s].label, what, held, reached, r[s].events[0], r[s].events[1], r[s].events[2]);
    }
    gy_cli_format_number(a, sizeof a, c->final_max, false);
    fprintf(stderr,
            "  final positions: largest difference %s m ('%s'); %u of %u entities differ by "
            "more than 1 mm%s\n",
            a, c->final_max_entity != NULL ? c->final_max_entity : "-", c->final_differ,
            c->entity_count, c->entity_lists_match ? "" : " (the runs' entity lists differ)");
    if (c->trace_ok && !(c->run_max > 0.0)) {
        fputs("  over the run: no difference\n", stderr);
    } else if (c->trace_ok) {
        gy_cli_format_number(a, sizeof a, c->run_max, false);
        gy_cli_format_number(t, sizeof t, c->run_max_t, false);
        gy_cli_format_number(b, sizeof b, c->first_divergence_t, false);
        fprintf(stderr, "  over the run: largest difference %s m ('%s' at t = %s s)", a,
                c->run_max_entity != NULL ? c->run_max_entity : "-", t);
        if (isnan(c->first_divergence_t))
            fputs("; never more than 1 mm\n", stderr);
        else
            fprintf(stderr, "; first above 1 mm at t = %s s ('%s')\n", b,
                    c->first_divergence_entity != NULL ? c->first_divergence_entity : "-");
    } else {
        fprintf(stderr, "  over the run: not compared: %s\n", c->trace_problem);
    }
    int ne = cJSON_GetArraySize(r[0].expects), changed = 0;
    for (int i = 0; i < ne && i < cJSON_GetArraySize(r[1].expects); i++)
        changed += passed_of(cJSON_GetArrayItem(r[0].expects, i)) !=
                   passed_of(cJSON_GetArrayItem(r[1].expects, i));
    if (changed > 0)
        fprintf(stderr, "  expects: %d of %d with a different outcome in the two runs\n", changed,
                ne);
    if (!events_compared) {
        fputs("  collision pairs: not compared: the saved run has no events file "
              "(--baseline-events)\n",
              stderr);
        return;
    }
    gy_cli_format_number(a, sizeof a, es->max_first_enter_dt, false);
    fprintf(stderr,
            "  collision pairs: %u; only on %s: %u, only on %s: %u; enter counts differ "
            "for %u; first enters up to %s s apart\n",
            pairs, r[0].label, es->only[0], r[1].label, es->only[1], es->enter_differs, a);
}

/* ---- the subcommand -------------------------------------------------------------------------- */

/* Removes the runs' temporary files (never a saved run's: those are the user's). */
static void remove_files(const char *dir, run *r)
{
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < FILE_KINDS && !r[s].saved; k++)
            if (r[s].paths[k][0] != '\0')
                unlink(r[s].paths[k]);
    rmdir(dir);
}

/* Copies `path` into a run's path slot; false when it does not fit. */
static bool set_path(char *slot, size_t size, const char *path)
{
    int n = snprintf(slot, size, "%s", path != NULL ? path : "");
    return n >= 0 && (size_t)n < size;
}

/* Reads the saved run (--baseline) into side 0 and takes from it what the options left open: the
 * scene, the backend (always) and the simulated seconds. Prints why and returns false when the
 * report is unusable. */
static bool load_baseline(options *o, run *r)
{
    r->saved = true;
    r->exit_code = -1;
    if (!set_path(r->paths[FILE_REPORT], sizeof r->paths[FILE_REPORT], o->baseline) ||
        !set_path(r->paths[FILE_EVENTS], sizeof r->paths[FILE_EVENTS], o->baseline_events) ||
        !set_path(r->paths[FILE_TRACE], sizeof r->paths[FILE_TRACE], o->baseline_trace)) {
        fputs("gyre conform: a --baseline file name is too long\n", stderr);
        return false;
    }
    if (!load_report(r)) {
        fprintf(stderr, "gyre conform: --baseline %s: not a readable `gyre run` report\n",
                o->baseline);
        return false;
    }
    const char *backend = string_at(r->report, "backend");
    double seconds = number_at(r->report, "sim_seconds");
    if (backend == NULL || gy_backend_find(backend) == NULL || !gy_is_finite(seconds) ||
        seconds < 0.0) {
        fprintf(stderr,
                "gyre conform: --baseline %s: its backend ('%s') is not an adapter of this build, "
                "or it has no sim_seconds\n",
                o->baseline, backend != NULL ? backend : "");
        return false;
    }
    for (int k = 0; k < 2; k++)
        snprintf(o->backends[k], sizeof o->backends[k], "%s", backend);
    if (!o->seconds_given) {
        gy_cli_format_number(o->seconds_text, sizeof o->seconds_text, seconds, false);
        o->seconds = o->seconds_text;
    }
    if (o->scene == NULL)
        o->scene = string_at(r->report, "scene");
    if (o->scene == NULL) {
        fprintf(stderr, "gyre conform: --baseline %s names no scene; give the scene file\n",
                o->baseline);
        return false;
    }
    return true;
}

int gy_cli_conform_main(int argc, char **argv)
{
    options o;
    int status = parse_options(argc, argv, &o);
    if (status != GY_CLI_EXIT_OK)
        return status < 0 ? GY_CLI_EXIT_OK : status;

    run r[2];
    memset(r, 0, sizeof r);
    if (o.baseline != NULL && !load_baseline(&o, &r[0])) {
        cJSON_Delete(r[0].report);
        return GY_CLI_EXIT_USAGE;
    }
    gy_cli_output out;
    memset(&out, 0, sizeof out);
    if (o.report != NULL && !gy_cli_output_open(&out, o.report, "gyre conform", "--report")) {
        cJSON_Delete(r[0].report);
        return GY_CLI_EXIT_USAGE;
    }
    FILE *report = out.f;

    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    int n = snprintf(dir, sizeof dir, "%s/gyre-conform-XXXXXX",
                     tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (n < 0 || (size_t)n >= sizeof dir || mkdtemp(dir) == NULL) {
        fprintf(stderr, "gyre conform: cannot create a temporary folder: %s\n", strerror(errno));
        gy_cli_output_discard(&out);
        cJSON_Delete(r[0].report);
        return GY_CLI_EXIT_FAILED;
    }
    bool ok = true;
    bool same = strcmp(o.backends[0], o.backends[1]) == 0;
    for (int s = 0; s < 2 && ok; s++) {
        r[s].backend = o.backends[s];
        if (r[s].saved)
            snprintf(r[s].label, sizeof r[s].label, "saved %s", r[s].backend);
        else if (same && o.baseline == NULL)
            snprintf(r[s].label, sizeof r[s].label, "%s (%d)", r[s].backend, s + 1);
        else
            snprintf(r[s].label, sizeof r[s].label, "%s", r[s].backend);
        if (!r[s].saved)
            ok = make_paths(dir, &r[s], s);
    }
    for (int s = 0; s < 2 && ok; s++) {
        if (r[s].saved)
            continue;
        r[s].exit_code = run_scene(&o, &r[s]);
        if (r[s].exit_code == GY_CLI_EXIT_FAILED) /* right under the run's own messages */
            fprintf(stderr, "gyre conform: the %s run failed (exit 1)\n", r[s].label);
        if (r[s].exit_code == GY_CLI_EXIT_USAGE) {
            status = GY_CLI_EXIT_USAGE; /* the run said why (invalid scene, unreadable file) */
            ok = false;
        } else if (!load_report(&r[s])) {
            fprintf(stderr, "gyre conform: the %s run wrote no readable report\n", r[s].label);
            status = GY_CLI_EXIT_FAILED;
            ok = false;
        }
    }

    comparison c;
    memset(&c, 0, sizeof c);
    pair_table pairs;
    memset(&pairs, 0, sizeof pairs);
    event_summary es;
    memset(&es, 0, sizeof es);
    bool events_compared = r[0].paths[FILE_EVENTS][0] != '\0';
    if (ok) {
        ok = compare_entities(&r[0], &r[1], &c);
        if (ok) {
            compare_traces(&r[0], &r[1], &c);
            if (events_compared)
                ok = read_events(&r[0], 0, &pairs) && read_events(&r[1], 1, &pairs);
        }
        if (!ok) {
            fputs("gyre conform: could not read the runs' outputs (out of memory or unreadable "
                  "event lines)\n",
                  stderr);
            status = GY_CLI_EXIT_FAILED;
        }
    }
    if (ok) {
        summarize_events(&pairs, &es);
        if (!o.quiet)
            write_summary(&o, r, &c, &es, pairs.count, events_compared);
        if (report != NULL) {
            write_report(report, &o, r, &c, &pairs, &es, events_compared);
            if (gy_cli_output_commit(&out) != 0)
                status = GY_CLI_EXIT_FAILED;
        }
        for (int s = 0; s < 2; s++)
            if (!r[s].saved && r[s].exit_code != GY_CLI_EXIT_OK)
                status = GY_CLI_EXIT_FAILED;
        if (!isnan(o.max_position_diff) && c.final_max > o.max_position_diff) {
            char a[64], b[64];
            gy_cli_format_number(a, sizeof a, c.final_max, false);
            gy_cli_format_number(b, sizeof b, o.max_position_diff, false);
            fprintf(stderr,
                    "gyre conform: gate: '%s' ends %s m apart in the two runs (%s vs %s; "
                    "--max-position-diff %s)\n",
                    c.final_max_entity != NULL ? c.final_max_entity : "-", a, r[0].label,
                    r[1].label, b);
            status = GY_CLI_EXIT_FAILED;
        }
    }
    gy_cli_output_discard(&out); /* no comparison was made: no report */
    table_free(&pairs);
    if (c.entities != NULL)
        gy_free(gy_default_allocator(), c.entities, (size_t)c.entity_count * sizeof *c.entities);
    for (int s = 0; s < 2; s++)
        cJSON_Delete(r[s].report);
    remove_files(dir, r);
    return status;
}
