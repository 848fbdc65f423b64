/* `gyre soak SCENE.json` (docs/cli.md): a real-time streaming soak, two threads as a host runs.
 *
 * The physics thread paces itself at the scene's rate (60 Hz by default). This thread is the game
 * thread: at 60 frames per second it moves a focus point around a square loop and keeps a W x W
 * window of cells around it loaded, swapping `--cells` cells per second in and out additively
 * under the scene barrier (or, with --hard, with a hard stop/start), then ticks the World.
 *
 * Cells. Every cell is an instance of a generated scene (static boxes on a lattice, dynamic props
 * between them that never sleep) loaded at the cell's offset. W is chosen so a cell holds about
 * 156 statics (W = 8 for the default 10,000). A cell's template depends only on its position
 * modulo W, and every W x W window holds each residue exactly once, so the resident counts are
 * exactly --statics and --props at all times: a swap always unloads and loads cells of the same
 * residue (the window slides by one row or column).
 *
 * Frames follow the physics tick (unless --free-running), as a host that starts each frame on the
 * newest physics result does: when a frame is due while the physics thread is still inside an
 * iteration, the game thread sleeps until that iteration is published; and whenever it learns
 * when an iteration ended (that wait, or a grant that had to wait for a step), it moves its frame
 * clock to the middle of the physics thread's pacing time, half the idle part of a period after
 * the next iteration's expected end. Its requests then find the physics thread pacing and are
 * granted at once. The time spent waiting for a publish is reported apart (align_wait_us), never
 * hidden in the barrier wait. With --free-running the frame clock never adjusts and requests land
 * wherever the two 60 Hz clocks happen to put them.
 *
 * What is measured, per mutation window: request -> grant (barrier_wait_us), grant -> end
 * (mutation_us) and request -> end (swap_us); per physics iteration: CPU time from drain to
 * publish (step_ms) and publish wall time (publish_ms), and per tick the adapter step's wall time
 * with characters and contact bookkeeping (adapter_step_ms, what `gyre run` reports as step_ms),
 * all from the physics counters read a few times
 * per frame (iterations that fall between two readings share their total); per game frame: the
 * frame's work (frame_ms). In --hard mode the wait is the stop (join) and the window the edit
 * plus the restart. Distributions are log-bucketed histograms (< 1% error, fixed memory) so a
 * long soak does not grow its own memory; the World and scenes allocate through a counting
 * allocator, which must be back to zero after teardown (allocator_bytes_at_exit). */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "gyre/backend/backend.h"
#include "gyre/math.h"
#include "page.h"
#include "soak.h"

#ifndef GYRE_VERSION
#define GYRE_VERSION "unknown"
#endif

#define CELL_SIZE_M      16.0
#define STATICS_PER_CELL 156.25 /* 10,000 statics in an 8 x 8 window */
#define MAX_WINDOW       64u
#define GAME_HZ          60.0
#define PAIR_QUEUE       8192u
#define LEVEL_BLOCK      1024u /* level statics per block scene (a 32 x 32 lattice) */
#define LEVEL_SPACING_M  1.0
#define RSS_WINDOW_MAX   60u /* seconds in the first / last RSS window */
#define MAX_FRAME_DT_S   0.25
#define DEFAULT_WATCHDOG 250.0 /* ms */
#define PROGRESS_PERIOD  1000000000ull
#define GRANT_WAITED_NS  200000ull  /* a grant slower than this waited for a step */
#define TYPICAL_STEP_NS  4000000ull /* physics iteration estimate before any is measured */
/* --min-samples measures for at most this many times --seconds. */
#define MIN_SAMPLES_STRETCH 20.0

/* ---- counting allocator ---------------------------------------------------------------------- */

/* Both threads allocate through it: a mutex, since atomics belong to the physics core's own
 * modules. */

typedef struct counting {
    pthread_mutex_t mutex;
    int64_t live_bytes;
    int64_t peak_bytes;
    uint64_t allocs;
} counting;

static void count_add(counting *c, int64_t delta, bool allocated)
{
    pthread_mutex_lock(&c->mutex);
    c->live_bytes += delta;
    if (c->live_bytes > c->peak_bytes)
        c->peak_bytes = c->live_bytes;
    c->allocs += allocated;
    pthread_mutex_unlock(&c->mutex);
}

static void *count_alloc(void *ctx, size_t size)
{
    void *p = malloc(size);
    if (p != NULL)
        count_add(ctx, (int64_t)size, true);
    return p;
}

static void *count_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size)
{
    void *p = realloc(ptr, new_size);
    if (p != NULL || new_size == 0)
        count_add(ctx, (int64_t)new_size - (int64_t)(ptr != NULL ? old_size : 0u), p != NULL);
    return p;
}

static void count_free(void *ctx, void *ptr, size_t size)
{
    if (ptr == NULL)
        return;
    count_add(ctx, -(int64_t)size, false);
    free(ptr);
}

/* ---- log capture: the barrier's watchdog reports through the World's logger ------------------ */

typedef struct capture {
    pthread_mutex_t mutex;
    uint32_t watchdog_reports;
    uint32_t warnings;
    char first_watchdog[768];
} capture;

static void capture_log(void *ctx, gy_log_level level, const char *message)
{
    capture *c = ctx;
    if (level < GY_LOG_WARN)
        return;
    pthread_mutex_lock(&c->mutex);
    if (strncmp(message, "watchdog:", 9) == 0) {
        if (c->watchdog_reports++ == 0)
            snprintf(c->first_watchdog, sizeof c->first_watchdog, "%s", message);
    } else {
        c->warnings++;
    }
    pthread_mutex_unlock(&c->mutex);
    fprintf(stderr, "gyre soak: %s: %s\n", level == GY_LOG_ERROR ? "error" : "warning", message);
}

static uint32_t watchdog_reports(capture *c)
{
    pthread_mutex_lock(&c->mutex);
    uint32_t n = c->watchdog_reports;
    pthread_mutex_unlock(&c->mutex);
    return n;
}

/* ---- histograms: 64 sub-buckets per power of two, exact below 128 ---------------------------- */

#define HIST_BUCKETS 3776u /* 64 * 57 + 128: every uint64_t */

typedef struct hist {
    uint64_t counts[HIST_BUCKETS];
    uint64_t n;
    uint64_t min, max; /* exact */
} hist;

static uint32_t hist_bucket(uint64_t v)
{
    if (v < 128u)
        return (uint32_t)v;
    unsigned msb = 63u - (unsigned)__builtin_clzll(v);
    unsigned shift = msb - 6u;
    return 64u * shift + (uint32_t)(v >> shift);
}

static void hist_add_n(hist *h, uint64_t v, uint64_t times)
{
    if (times == 0)
        return;
    h->counts[hist_bucket(v)] += times;
    if (h->n == 0 || v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
    h->n += times;
}

static void hist_add(hist *h, uint64_t v)
{
    hist_add_n(h, v, 1u);
}

/* Nearest rank: the middle of the bucket holding the ceil(p * n)-th value, kept inside the
 * observed range. */
/* The values bucket `b` holds: [lo, hi]. */
static void hist_bucket_range(uint32_t b, double *lo, double *hi)
{
    if (b < 128u) {
        *lo = *hi = (double)b;
        return;
    }
    unsigned shift = b / 64u - 1u;
    uint64_t top = b - 64u * shift;
    *lo = (double)(top << shift);
    *hi = (double)(((top + 1u) << shift) - 1u);
}

static double hist_percentile(const hist *h, double p)
{
    if (h->n == 0)
        return 0.0;
    uint64_t rank = (uint64_t)ceil(p * (double)h->n);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (uint32_t b = 0; b < HIST_BUCKETS; b++) {
        seen += h->counts[b];
        if (seen < rank)
            continue;
        double lo, hi;
        hist_bucket_range(b, &lo, &hi);
        double v = 0.5 * (lo + hi);
        if (v < (double)h->min)
            v = (double)h->min;
        if (v > (double)h->max)
            v = (double)h->max;
        return v;
    }
    return (double)h->max;
}

/* ---- text building --------------------------------------------------------------------------- */

typedef struct strbuf {
    char *data;
    size_t len, cap;
    bool failed;
} strbuf;

static void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(strbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->data != NULL ? b->data + b->len : NULL,
                          b->data != NULL ? b->cap - b->len : 0u, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if (b->data != NULL && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap != 0 ? b->cap : 4096u;
        while (cap <= b->len + (size_t)n)
            cap *= 2u;
        char *d = realloc(b->data, cap);
        if (d == NULL) {
            b->failed = true;
            return;
        }
        b->data = d;
        b->cap = cap;
    }
}

/* splitmix64: a deterministic value in [0, 1) per (seed, index). */
static double unit_random(uint64_t seed, uint64_t index)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + index + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* A cell: `statics` static boxes standing on y = 0 on a k x k lattice, `props` dynamic spheres
 * and cubes (allow_sleeping false) resting on y = 0 at lattice corners, clear of every box. */
static void cell_json(strbuf *b, uint32_t statics, uint32_t props, uint64_t seed)
{
    uint32_t k = 2;
    while ((uint64_t)k * k < statics || (uint64_t)(k - 1u) * (k - 1u) < props)
        k++;
    double d = CELL_SIZE_M / (double)k;
    double r = fmin(0.25, 0.2 * d);
    sb_printf(b, "{\"format\":\"gyre.scene\",\"version\":1,\"name\":\"soak cell\",\"entities\":[");
    const char *sep = "";
    for (uint32_t i = 0; i < statics; i++) {
        double w = d * (0.3 + 0.2 * unit_random(seed, 3u * i));
        double depth = d * (0.3 + 0.2 * unit_random(seed, 3u * i + 1u));
        double h = 0.5 + 2.5 * unit_random(seed, 3u * i + 2u);
        double x = ((double)(i % k) + 0.5) * d, z = ((double)(i / k) + 0.5) * d;
        sb_printf(b,
                  "%s{\"name\":\"s%u\",\"transform\":{\"position\":[%.4f,%.4f,%.4f]},"
                  "\"components\":{\"physics\":{\"body_type\":\"Static\",\"shape\":\"Box\","
                  "\"box_size\":[%.4f,%.4f,%.4f]}}}",
                  sep, i, x, 0.5 * h, z, w, h, depth);
        sep = ",";
    }
    uint32_t corners = (k - 1u) * (k - 1u);
    for (uint32_t j = 0; j < props; j++) {
        uint32_t m = (uint32_t)((uint64_t)j * corners / props);
        double x = (double)(m % (k - 1u) + 1u) * d, z = (double)(m / (k - 1u) + 1u) * d;
        if (j % 2u == 0)
            sb_printf(b,
                      "%s{\"name\":\"p%u\",\"transform\":{\"position\":[%.4f,%.4f,%.4f]},"
                      "\"components\":{\"physics\":{\"shape\":\"Sphere\",\"radius\":%.4f,"
                      "\"mass\":2,\"allow_sleeping\":false}}}",
                      sep, j, x, r + 0.005, z, r);
        else
            sb_printf(b,
                      "%s{\"name\":\"p%u\",\"transform\":{\"position\":[%.4f,%.4f,%.4f]},"
                      "\"components\":{\"physics\":{\"shape\":\"Box\",\"box_size\":[%.4f,%.4f,"
                      "%.4f],\"mass\":2,\"allow_sleeping\":false}}}",
                      sep, j, x, r + 0.005, z, 2.0 * r, 2.0 * r, 2.0 * r);
        sep = ",";
    }
    sb_printf(b, "]}");
}

/* A block of the level: `count` static boxes on a 32 x 32 lattice, LEVEL_SPACING_M apart. */
static void level_json(strbuf *b, uint32_t count)
{
    sb_printf(b, "{\"format\":\"gyre.scene\",\"version\":1,\"name\":\"soak level block\","
                 "\"entities\":[");
    for (uint32_t i = 0; i < count; i++) {
        double h = 0.5 + 4.0 * unit_random(7u, i);
        sb_printf(b,
                  "%s{\"name\":\"l%u\",\"transform\":{\"position\":[%.3f,%.3f,%.3f]},"
                  "\"components\":{\"physics\":{\"body_type\":\"Static\",\"shape\":\"Box\","
                  "\"box_size\":[%.3f,%.3f,%.3f]}}}",
                  i ? "," : "", i, ((double)(i % 32u) + 0.5) * LEVEL_SPACING_M, 0.5 * h,
                  ((double)(i / 32u) + 0.5) * LEVEL_SPACING_M, 0.4 * LEVEL_SPACING_M, h,
                  0.4 * LEVEL_SPACING_M);
    }
    sb_printf(b, "]}");
}

/* ---- options --------------------------------------------------------------------------------- */

typedef struct gate {
    const char *flag;  /* the option, e.g. "--max-barrier-p99-us" */
    const char *value; /* what it bounds, for messages */
    bool set;
    double limit;
    double measured;
    bool passed;
} gate;

enum {
    GATE_BARRIER_P99,
    GATE_MUTATION_P99,
    GATE_STEP_P99,
    GATE_TICKS_MISSED,
    GATE_REPLIES_DROPPED,
    GATE_RSS_GROWTH,
    GATE_COUNT
};

typedef struct options {
    const char *scene_path;
    const char *backend;
    const char *report_path;
    const char *html_path; /* NULL: none; the soak's page (page.h) */
    double seconds;
    double cells;
    double warmup;
    double watchdog_ms;
    uint32_t statics, props, level_statics;
    uint32_t min_samples; /* measure on past --seconds until the counts reach this */
    bool hard;
    bool quiet;
    bool free_running;
    gate gates[GATE_COUNT];
} options;

void gy_cli_soak_usage(FILE *out)
{
    fputs(
        "usage: gyre soak SCENE.json [options]\n"
        "\n"
        "Streams cells in and out around a moving focus point in real time (the physics thread\n"
        "paced, the game thread swapping cells additively through the scene barrier) and reports\n"
        "barrier wait, mutation window, step times, counters, memory and leaks. SCENE.json is the\n"
        "level the cells stand on (ground at y = 0, e.g. scenes/soak.json).\n"
        "\n"
        "options:\n"
        "  --seconds S             wall-clock seconds measured (default 60), after the warm-up\n"
        "  --cells N               cells swapped in and out per second (default 64)\n"
        "  --statics N             static bodies resident at steady state (default 10000)\n"
        "  --props N               dynamic props kept awake (default 500)\n"
        "  --hard                  swap with a hard stop/start instead of the barrier\n"
        "  --report FILE           write the report JSON (- for stdout)\n"
        "  --html FILE             write a page a browser opens: barrier wait, mutation window\n"
        "                          and step time over time and as histograms, with the gates\n"
        "  --level-statics N       extra statics loaded once with the level, never streamed\n"
        "                          (default 0; the benchmark's 100,000-static world)\n"
        "  --warmup S              seconds streamed before measuring (default 1)\n"
        "  --min-samples N         measure on past --seconds until N mutation windows and N\n"
        "                          physics iterations have been measured and the body counts\n"
        "                          taken, for at most 20 times --seconds in all (default 0)\n"
        "  --watchdog-ms N         fail when a barrier grant or command batch waits longer\n"
        "                          (default 250)\n"
        "  --free-running          never align game frames to the physics publish (requests\n"
        "                          may land mid-step)\n"
        "  --backend NAME          middleware adapter (default: the scene's, else ode)\n"
        "  --quiet                 no progress line or summary\n"
        "\n"
        "gates (exit 1 when exceeded):\n"
        "  --max-barrier-p99-us N  barrier_wait_us.p99\n"
        "  --max-mutation-p99-us N mutation_us.p99\n"
        "  --max-step-p99-ms N     step_ms.p99 (physics CPU time per iteration)\n"
        "  --max-ticks-missed N    ticks_missed\n"
        "  --max-replies-dropped N replies_dropped\n"
        "  --max-rss-growth-pct N  rss_growth_pct (first vs last minute, or fifth of the run)\n"
        "A watchdog report, a leak (live_objects_at_exit or allocator_bytes_at_exit not 0) or a\n"
        "failed load also exit 1.\n"
        "\n"
        "SIGINT or SIGTERM ends the soak early and writes the report of what ran (with\n"
        "\"interrupted\": true); the report is written under a temporary name and renamed.\n"
        "\n"
        "exit codes: 0 every gate held; 1 a gate or the run failed; 2 usage error, unreadable\n"
        "            or invalid scene; 130 / 143 interrupted by SIGINT / SIGTERM\n",
        out);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gyre soak: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n(see gyre soak --help)\n", stderr);
    return GY_CLI_EXIT_USAGE;
}

static bool parse_count(const char *v, uint32_t hi, uint32_t *out)
{
    double d;
    if (!gy_cli_parse_number(v, 0, hi, &d) || d != floor(d))
        return false;
    *out = (uint32_t)d;
    return true;
}

/* Returns GY_CLI_EXIT_OK, GY_CLI_EXIT_USAGE, or -1 after printing the help. */
static int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->seconds = 60;
    o->cells = 64;
    o->statics = 10000;
    o->props = 500;
    o->warmup = 1;
    o->watchdog_ms = DEFAULT_WATCHDOG;
    static const struct {
        const char *flag, *value;
    } gate_names[GATE_COUNT] = {
        {"--max-barrier-p99-us", "barrier_wait_us.p99"},
        {"--max-mutation-p99-us", "mutation_us.p99"},
        {"--max-step-p99-ms", "step_ms.p99"},
        {"--max-ticks-missed", "ticks_missed"},
        {"--max-replies-dropped", "replies_dropped"},
        {"--max-rss-growth-pct", "rss_growth_pct"},
    };
    for (int g = 0; g < GATE_COUNT; g++) {
        o->gates[g].flag = gate_names[g].flag;
        o->gates[g].value = gate_names[g].value;
    }
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        gy_cli_arg kind = gy_cli_common_arg(a, &options_done, &o->scene_path);
        if (kind == GY_CLI_ARG_SECOND_SCENE)
            return usage_error("one scene file only (got a second one: '%s')", a);
        if (kind == GY_CLI_ARG_HELP) {
            gy_cli_soak_usage(stdout);
            return -1;
        }
        if (kind == GY_CLI_ARG_TAKEN)
            continue;
        if (strcmp(a, "--hard") == 0) {
            o->hard = true;
        } else if (strcmp(a, "--quiet") == 0) {
            o->quiet = true;
        } else if (strcmp(a, "--free-running") == 0) {
            o->free_running = true;
        } else if (gy_cli_option_value(argc, argv, &i, "--seconds", &v)) {
            if (!gy_cli_parse_number(v, 0.001, 7 * 86400.0, &o->seconds))
                return usage_error("--seconds needs a number of seconds > 0 (got '%s')",
                                   v ? v : "");
        } else if (gy_cli_option_value(argc, argv, &i, "--cells", &v)) {
            if (!gy_cli_parse_number(v, 0, 100000, &o->cells))
                return usage_error("--cells needs a rate 0..100000 per second (got '%s')",
                                   v ? v : "");
        } else if (gy_cli_option_value(argc, argv, &i, "--statics", &v)) {
            if (!parse_count(v, 4000000u, &o->statics))
                return usage_error("--statics needs a whole number 0..4000000 (got '%s')",
                                   v ? v : "");
        } else if (gy_cli_option_value(argc, argv, &i, "--props", &v)) {
            if (!parse_count(v, 200000u, &o->props))
                return usage_error("--props needs a whole number 0..200000 (got '%s')", v ? v : "");
        } else if (gy_cli_option_value(argc, argv, &i, "--level-statics", &v)) {
            if (!parse_count(v, 4000000u, &o->level_statics))
                return usage_error("--level-statics needs a whole number 0..4000000 (got '%s')",
                                   v ? v : "");
        } else if (gy_cli_option_value(argc, argv, &i, "--warmup", &v)) {
            if (!gy_cli_parse_number(v, 0, 3600, &o->warmup))
                return usage_error("--warmup needs a number of seconds 0..3600 (got '%s')",
                                   v ? v : "");
        } else if (gy_cli_option_value(argc, argv, &i, "--min-samples", &v)) {
            if (!parse_count(v, 1000000u, &o->min_samples))
                return usage_error("--min-samples needs a whole number 0..1000000 (got '%s')",
                                   v ? v : "");
        } else if (gy_cli_option_value(argc, argv, &i, "--watchdog-ms", &v)) {
            if (!gy_cli_parse_number(v, 0.001, 600000, &o->watchdog_ms))
                return usage_error("--watchdog-ms needs a number 0.001..600000 (got '%s')",
                                   v ? v : "");
        } else if (gy_cli_option_value(argc, argv, &i, "--backend", &v)) {
            if (v == NULL || *v == '\0')
                return usage_error("--backend needs an adapter name");
            o->backend = v;
        } else if (gy_cli_option_value(argc, argv, &i, "--report", &v)) {
            if (v == NULL || *v == '\0')
                return usage_error("--report needs a file name (or - for stdout)");
            o->report_path = v;
        } else if (gy_cli_option_value(argc, argv, &i, "--html", &v)) {
            if (v == NULL || *v == '\0')
                return usage_error("--html needs a file name (or - for stdout)");
            o->html_path = v;
        } else {
            bool matched = false;
            for (int g = 0; g < GATE_COUNT && !matched; g++) {
                if (!gy_cli_option_value(argc, argv, &i, o->gates[g].flag, &v))
                    continue;
                matched = true;
                if (!gy_cli_parse_number(v, 0, 1e15, &o->gates[g].limit))
                    return usage_error("%s needs a number >= 0 (got '%s')", o->gates[g].flag,
                                       v ? v : "");
                o->gates[g].set = true;
            }
            if (!matched) {
                static const char *const names[] = {"--seconds",
                                                    "--cells",
                                                    "--statics",
                                                    "--props",
                                                    "--level-statics",
                                                    "--warmup",
                                                    "--min-samples",
                                                    "--watchdog-ms",
                                                    "--backend",
                                                    "--report",
                                                    "--html",
                                                    "--hard",
                                                    "--quiet",
                                                    "--free-running",
                                                    "--help",
                                                    "--max-barrier-p99-us",
                                                    "--max-mutation-p99-us",
                                                    "--max-step-p99-ms",
                                                    "--max-ticks-missed",
                                                    "--max-replies-dropped",
                                                    "--max-rss-growth-pct"};
                return gy_cli_unknown("gyre soak", "option", a, names,
                                      sizeof names / sizeof names[0]);
            }
        }
    }
    if (o->scene_path == NULL)
        return usage_error("no scene file given");
    if (o->report_path != NULL && o->html_path != NULL && strcmp(o->report_path, "-") == 0 &&
        strcmp(o->html_path, "-") == 0)
        return usage_error("only one of --report and --html can go to stdout");
    if (o->statics == 0 && o->props == 0)
        return usage_error("--statics and --props are both 0: the cells would be empty");
    return GY_CLI_EXIT_OK;
}

/* ---- the soak's state ------------------------------------------------------------------------ */

typedef struct cell_key {
    int32_t x, z;
} cell_key;

typedef struct swap_pair {
    cell_key out, in;
} swap_pair;

typedef struct resident {
    cell_key key;
    gy_scene_instance *instance;
} resident;

/* Cumulative physics counters at one moment the physics thread was seen between iterations. */
typedef struct phys_mark {
    uint64_t at_ns;
    uint64_t iterations, ticks, cpu_ns, publish_ns, step_ns, dropped;
} phys_mark;

typedef struct soak {
    options opt;
    counting count;
    gy_allocator alloc;
    capture cap;
    gy_logger logger;

    gy_scene *scene;
    gy_scene_instance *base;
    gy_scene *templates[4]; /* [large statics + 2 * large props] */
    gy_scene *level_block, *level_tail;
    gy_world *world;
    gy_physics *physics;
    gy_barrier *barrier;
    const char *backend;
    uint32_t step_hz;

    /* layout */
    uint32_t W, h;         /* window side and half side (floor) */
    uint32_t base_statics; /* per cell; cells whose residue < rem_statics hold one more */
    uint32_t rem_statics;
    uint32_t base_props;
    uint32_t rem_props;
    int32_t loop_lo, loop_hi; /* the focus loop's corners, in cells */
    double loop_len;          /* cells */
    double speed;             /* cells per second along the loop */
    double u;                 /* position along the loop, cells */
    cell_key focus;
    resident *resident; /* W * W, by residue */
    swap_pair *queue;   /* ring of PAIR_QUEUE */
    uint32_t q_head, q_len;
    double budget;

    /* measurement */
    bool measuring;
    hist wait, window, swap, step, publish, adapter_step, frame, align;
    phys_mark last_mark, first_mark_measured, last_mark_measured;
    bool have_last_mark, have_first_measured;
    uint64_t measure_start_ns, measure_end_ns;
    uint64_t cells_swapped, windows, focus_stalls;
    uint64_t awake_sum, bodies_sum, awake_samples;
    uint32_t awake_min, awake_max;
    double rss_start_mb, rss_end_mb;
    double measured_s; /* the measured part of the run (shorter when it failed) */
    double rss_first_max, rss_last[RSS_WINDOW_MAX];
    uint32_t rss_samples, rss_window;
    uint64_t next_rss_ns;
    uint64_t next_progress_ns;
    bool progress_shown;
    uint64_t iteration_end_ns; /* when an iteration was last seen to end (0: not since the frame) */

    /* --html: the page, its series (barrier wait, mutation window, step) */
    gy_cli_page *page;
    int32_t page_series[3];

    /* outcome */
    bool failed;
    bool interrupted; /* SIGINT or SIGTERM ended the run early */
    char failure[1024];
    uint64_t commands, commands_dropped_stale, replies, replies_dropped;
    bool replies_dropped_known;
    uint32_t live_objects_at_exit;
    bool live_known;
    int64_t allocator_bytes_at_exit;
    double wall_seconds;
} soak;

static void fail(soak *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(soak *s, const char *fmt, ...)
{
    if (s->failed)
        return;
    s->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->failure, sizeof s->failure, fmt, ap);
    va_end(ap);
    fprintf(stderr, "gyre soak: %s\n", s->failure);
}

static uint32_t residue(const soak *s, cell_key c)
{
    int32_t w = (int32_t)s->W;
    int32_t x = ((c.x % w) + w) % w, z = ((c.z % w) + w) % w;
    return (uint32_t)x * s->W + (uint32_t)z;
}

static const gy_scene *template_for(const soak *s, cell_key c)
{
    uint32_t r = residue(s, c);
    return s->templates[(r < s->rem_statics ? 1 : 0) + (r < s->rem_props ? 2 : 0)];
}

static gy_vec3 cell_offset(cell_key c)
{
    return gy_v3((double)c.x * CELL_SIZE_M, 0.0, (double)c.z * CELL_SIZE_M);
}

static double rss_mb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return 0.0;
    unsigned long size = 0, resident_pages = 0;
    int n = fscanf(f, "%lu %lu", &size, &resident_pages);
    fclose(f);
    if (n != 2)
        return 0.0;
    return (double)resident_pages * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
}

/* ---- set-up ---------------------------------------------------------------------------------- */

static gy_result load_template(soak *s, strbuf *b, gy_scene **out)
{
    if (b->failed)
        return GY_ERR_OUT_OF_MEMORY;
    gy_scene_errors *errors = NULL;
    gy_result r = gy_scene_load_string(b->data, b->len, NULL, &s->alloc, out, &errors);
    if (r != GY_OK && errors != NULL)
        gy_scene_errors_print(errors, stderr, "gyre soak: generated cell: ");
    gy_scene_errors_free(errors);
    b->len = 0;
    return r;
}

static gy_result make_templates(soak *s)
{
    strbuf b = {0};
    gy_result r = GY_OK;
    for (uint32_t t = 0; t < 4 && r == GY_OK; t++) {
        uint32_t ns = s->base_statics + (t & 1u), np = s->base_props + (t >> 1);
        /* A template nobody uses (its residue class is empty) is not built. */
        if (((t & 1u) && s->rem_statics == 0) || ((t >> 1) && s->rem_props == 0))
            continue;
        if (ns + np == 0)
            continue;
        cell_json(&b, ns, np, 1000u + t);
        r = load_template(s, &b, &s->templates[t]);
    }
    if (r == GY_OK && s->opt.level_statics >= LEVEL_BLOCK) {
        level_json(&b, LEVEL_BLOCK);
        r = load_template(s, &b, &s->level_block);
    }
    if (r == GY_OK && s->opt.level_statics % LEVEL_BLOCK != 0) {
        level_json(&b, s->opt.level_statics % LEVEL_BLOCK);
        r = load_template(s, &b, &s->level_tail);
    }
    free(b.data);
    return r;
}

/* Level statics: blocks of 32 x 32 tiled in a square centred on the origin (inside the focus
 * loop for the sizes the benchmark uses). */
static gy_result load_level(soak *s)
{
    uint32_t n = s->opt.level_statics;
    uint32_t blocks = (n + LEVEL_BLOCK - 1u) / LEVEL_BLOCK;
    uint32_t side = 1;
    while (side * side < blocks)
        side++;
    double block_m = 32.0 * LEVEL_SPACING_M;
    double origin = -0.5 * (double)side * block_m;
    for (uint32_t i = 0; i < blocks; i++) {
        const gy_scene *sc =
            (i + 1u == blocks && s->level_tail != NULL) ? s->level_tail : s->level_block;
        gy_vec3 off = gy_v3(origin + (double)(i % side) * block_m, 0.0,
                            origin + (double)(i / side) * block_m);
        gy_scene_instance *inst = NULL;
        gy_result r = gy_scene_instantiate(s->world, sc, off, &s->alloc, &inst, NULL);
        if (r != GY_OK)
            return r;
        /* The World keeps the entities; teardown destroys them. */
        gy_scene_instance_free(inst);
    }
    return GY_OK;
}

static void plan_layout(soak *s)
{
    uint32_t W = (uint32_t)lround(sqrt((double)s->opt.statics / STATICS_PER_CELL));
    if (W < 2)
        W = 2;
    if (W > MAX_WINDOW)
        W = MAX_WINDOW;
    s->W = W;
    s->h = W / 2u;
    uint32_t cells = W * W;
    s->base_statics = s->opt.statics / cells;
    s->rem_statics = s->opt.statics % cells;
    s->base_props = s->opt.props / cells;
    s->rem_props = s->opt.props % cells;
    /* A square loop 4W cells on a side: the window never overlaps itself across the loop. */
    int32_t side = (int32_t)(4u * W);
    s->loop_lo = -side / 2;
    s->loop_hi = side / 2;
    s->loop_len = 4.0 * (double)side;
    s->speed = s->opt.cells / (double)W;
    s->u = 0.0;
    s->focus = (cell_key){s->loop_lo, s->loop_lo};
}

static gy_result load_cell(soak *s, cell_key c)
{
    uint32_t r = residue(s, c);
    resident *slot = &s->resident[r];
    const gy_scene *t = template_for(s, c);
    slot->key = c;
    slot->instance = NULL;
    if (t == NULL)
        return GY_OK;
    return gy_scene_instantiate(s->world, t, cell_offset(c), &s->alloc, &slot->instance, NULL);
}

static void unload_cell(soak *s, cell_key c)
{
    resident *slot = &s->resident[residue(s, c)];
    gy_scene_instance *inst = slot->instance;
    slot->instance = NULL;
    if (inst == NULL)
        return;
    /* Children before parents (the cells have none, but a template might). */
    for (uint32_t i = inst->entity_count; i-- > 0;) {
        gy_entity e = inst->entities[i];
        if (gy_entity_is_valid(s->world, e) && gy_entity_destroy(s->world, e) != GY_OK)
            fail(s, "a cell entity could not be destroyed");
    }
    gy_scene_instance_free(inst);
}

static int set_up(soak *s)
{
    s->scene = gy_cli_load_scene(s->opt.scene_path);
    if (s->scene == NULL)
        return GY_CLI_EXIT_USAGE;
    const char *backend = s->opt.backend != NULL            ? s->opt.backend
                          : s->scene->world.backend != NULL ? s->scene->world.backend
                                                            : "ode";
    if (gy_backend_find(backend) == NULL)
        return usage_error("unknown backend '%s'", backend);
    s->backend = backend;
    plan_layout(s);

    s->alloc = (gy_allocator){count_alloc, count_realloc, count_free, &s->count};
    s->logger = (gy_logger){capture_log, &s->cap};
    gy_result r = make_templates(s);
    if (r != GY_OK) {
        fprintf(stderr, "gyre soak: cannot build the cell scenes: %s\n", gy_result_message(r));
        return GY_CLI_EXIT_FAILED;
    }
    gy_world_def cfg = gy_default_world_def();
    gy_scene_get_world_def(s->scene, backend, &cfg);
    cfg.physics.lockstep = false;
    cfg.physics.watchdog_ns = (uint64_t)llround(s->opt.watchdog_ms * 1e6);
    cfg.allocator = &s->alloc;
    cfg.logger = &s->logger;
    cfg.start_stopped = true;
    s->step_hz = cfg.physics.step_hz;
    r = gy_world_create(&cfg, &s->world);
    if (r != GY_OK) {
        fprintf(stderr, "gyre soak: cannot create the world (backend %s): %s\n", backend,
                gy_result_message(r));
        return GY_CLI_EXIT_FAILED;
    }
    s->physics = gy_world_physics(s->world);
    s->barrier = gy_physics_barrier(s->physics);
    int32_t bad = -1;
    r = gy_scene_instantiate(s->world, s->scene, gy_v3(0, 0, 0), &s->alloc, &s->base, &bad);
    if (r != GY_OK) {
        gy_cli_print_refused(stderr, s->opt.scene_path, s->scene, bad, r);
        return GY_CLI_EXIT_USAGE;
    }
    if (s->opt.level_statics > 0 && (r = load_level(s)) != GY_OK) {
        fprintf(stderr, "gyre soak: cannot load the level statics: %s\n", gy_result_message(r));
        return GY_CLI_EXIT_FAILED;
    }
    s->resident = gy_alloc_zeroed(&s->alloc, (size_t)s->W * s->W * sizeof *s->resident);
    s->queue = gy_alloc(&s->alloc, (size_t)PAIR_QUEUE * sizeof *s->queue);
    if (s->resident == NULL || s->queue == NULL) {
        fputs("gyre soak: out of memory\n", stderr);
        return GY_CLI_EXIT_FAILED;
    }
    for (uint32_t i = 0; i < s->W; i++)
        for (uint32_t j = 0; j < s->W; j++) {
            cell_key c = {s->focus.x - (int32_t)s->h + (int32_t)i,
                          s->focus.z - (int32_t)s->h + (int32_t)j};
            if ((r = load_cell(s, c)) != GY_OK) {
                fprintf(stderr, "gyre soak: cannot load the first cells: %s\n",
                        gy_result_message(r));
                return GY_CLI_EXIT_FAILED;
            }
        }
    r = gy_world_start_physics(s->world);
    if (r != GY_OK) {
        fprintf(stderr, "gyre soak: cannot start physics (backend %s): %s\n", backend,
                gy_result_message(r));
        return GY_CLI_EXIT_FAILED;
    }
    return GY_CLI_EXIT_OK;
}

/* ---- streaming ------------------------------------------------------------------------------- */

/* The focus cell at loop position u (cells along the loop, from the corner loop_lo, loop_lo). */
static cell_key focus_at(const soak *s, double u)
{
    double side = (double)(s->loop_hi - s->loop_lo);
    int seg = (int)(u / side);
    double t = u - (double)seg * side;
    int32_t k = (int32_t)floor(t + 0.5);
    switch (seg & 3) {
    case 0:
        return (cell_key){s->loop_lo + k, s->loop_lo};
    case 1:
        return (cell_key){s->loop_hi, s->loop_lo + k};
    case 2:
        return (cell_key){s->loop_hi - k, s->loop_hi};
    default:
        return (cell_key){s->loop_lo, s->loop_hi - k};
    }
}

static void push_pair(soak *s, cell_key out, cell_key in)
{
    s->queue[(s->q_head + s->q_len) % PAIR_QUEUE] = (swap_pair){out, in};
    s->q_len++;
}

/* The window moves by one cell: W pairs, each unloading the cell that leaves and loading the one
 * that enters in the same row or column (so the same residue). */
static void step_focus(soak *s, int dx, int dz)
{
    int32_t a = s->focus.x - (int32_t)s->h, b = s->focus.z - (int32_t)s->h;
    int32_t W = (int32_t)s->W;
    for (int32_t j = 0; j < W; j++) {
        if (dx > 0)
            push_pair(s, (cell_key){a, b + j}, (cell_key){a + W, b + j});
        else if (dx < 0)
            push_pair(s, (cell_key){a + W - 1, b + j}, (cell_key){a - 1, b + j});
        else if (dz > 0)
            push_pair(s, (cell_key){a + j, b}, (cell_key){a + j, b + W});
        else
            push_pair(s, (cell_key){a + j, b + W - 1}, (cell_key){a + j, b - 1});
    }
    s->focus.x += dx;
    s->focus.z += dz;
}

static void advance_focus(soak *s, double dt)
{
    double u = fmod(s->u + s->speed * dt, s->loop_len);
    cell_key target = focus_at(s, u);
    while (s->focus.x != target.x || s->focus.z != target.z) {
        if (s->q_len + s->W > PAIR_QUEUE) {
            /* The swaps are this far behind: the focus waits for them. */
            s->focus_stalls++;
            return;
        }
        if (s->focus.x != target.x)
            step_focus(s, target.x > s->focus.x ? 1 : -1, 0);
        else
            step_focus(s, 0, target.z > s->focus.z ? 1 : -1);
    }
    s->u = u;
}

static void report_barrier_state(soak *s, const char *what, uint64_t waited_ns)
{
    static const char *const game[] = {"idle", "requesting", "mutating"};
    static const char *const phys[] = {"detached", "running", "pacing", "parked"};
    gy_barrier_stats bs;
    gy_barrier_get_stats(s->barrier, &bs);
    gy_game_phase gp = gy_barrier_game_phase(s->barrier);
    gy_physics_phase pp = gy_barrier_physics_phase(s->barrier);
    fail(s,
         "watchdog: %s after %.3f ms (bound %.0f ms); game thread %s, physics thread %s; "
         "%llu safe points passed, %llu mutations, slowest grant %.3f ms",
         what, (double)waited_ns / 1e6, s->opt.watchdog_ms, game[gp < 3 ? gp : 0],
         phys[pp < 4 ? pp : 0], (unsigned long long)bs.safe_points,
         (unsigned long long)bs.mutations, (double)bs.grant_max_ns / 1e6);
}

/* Performs `n` queued swaps in one mutation window (barrier) or one stop/start (hard). */
static void do_swaps(soak *s, uint32_t n)
{
    uint64_t t0 = gy_clock_now_ns(), t1, t2;
    gy_result r;
    if (s->opt.hard) {
        r = gy_world_stop_physics(s->world);
        t1 = gy_clock_now_ns();
        if (r != GY_OK) {
            fail(s, "hard stop failed: %s", gy_result_message(r));
            return;
        }
    } else {
        uint64_t bound = (uint64_t)llround(s->opt.watchdog_ms * 1e6);
        uint64_t timeout = 4u * bound > 1000000000u ? 4u * bound : 1000000000u;
        r = gy_barrier_begin_mutation(s->barrier, timeout);
        t1 = gy_clock_now_ns();
        if (r == GY_ERR_TIMEOUT) {
            report_barrier_state(s, "mutation grant timed out", t1 - t0);
            return;
        }
        if (r != GY_OK) {
            fail(s, "scene barrier: %s", gy_result_message(r));
            return;
        }
        r = gy_world_lock_write(s->world);
        if (r != GY_OK) {
            gy_barrier_end_mutation(s->barrier);
            fail(s, "World lock: %s", gy_result_message(r));
            return;
        }
    }
    gy_result load = GY_OK;
    for (uint32_t i = 0; i < n && load == GY_OK; i++) {
        swap_pair p = s->queue[s->q_head];
        s->q_head = (s->q_head + 1u) % PAIR_QUEUE;
        s->q_len--;
        const resident *slot = &s->resident[residue(s, p.out)];
        if (slot->key.x != p.out.x || slot->key.z != p.out.z) {
            fail(s, "internal error: cell (%d, %d) is not resident", p.out.x, p.out.z);
            break;
        }
        unload_cell(s, p.out);
        load = load_cell(s, p.in);
        if (s->measuring)
            s->cells_swapped++;
    }
    if (s->opt.hard) {
        r = gy_world_start_physics(s->world);
        if (r != GY_OK)
            fail(s, "hard start failed: %s", gy_result_message(r));
        /* The iterations around a restart are not the physics thread's step times. */
        s->have_last_mark = false;
    } else {
        r = gy_world_unlock_write(s->world);
        if (r != GY_OK)
            fail(s, "World lock: %s", gy_result_message(r));
        gy_barrier_end_mutation(s->barrier);
    }
    t2 = gy_clock_now_ns();
    if (!s->opt.hard && t1 - t0 > GRANT_WAITED_NS)
        s->iteration_end_ns = t1; /* granted at the safe point after a step */
    if (load != GY_OK)
        fail(s, "loading a cell failed: %s", gy_result_message(load));
    if (s->measuring) {
        double at = (double)(int64_t)(t0 - s->measure_start_ns) * 1e-9;
        gy_cli_page_sample(s->page, s->page_series[0], at, (double)(t1 - t0) * 1e-3);
        gy_cli_page_sample(s->page, s->page_series[1], at, (double)(t2 - t1) * 1e-3);
        hist_add(&s->wait, t1 - t0);
        hist_add(&s->window, t2 - t1);
        hist_add(&s->swap, t2 - t0);
        s->windows++;
    }
}

/* ---- sampling -------------------------------------------------------------------------------- */

/* Reads the cumulative physics counters twice and keeps the second reading when the per-iteration
 * ones agree: the physics thread adds them together at the end of each iteration, so a reading
 * that straddled those few instructions differs from one taken before or after. Body counts are
 * kept only from readings taken while the physics thread paced throughout. */
static bool read_mark(soak *s, phys_mark *m)
{
    if (!gy_world_physics_running(s->world))
        return false;
    gy_barrier_stats b0, b1;
    gy_barrier_get_stats(s->barrier, &b0);
    bool pacing = gy_barrier_physics_phase(s->barrier) == GY_PHYSICS_PACING;
    gy_physics_stats a, ps;
    gy_physics_get_stats(s->physics, &a);
    gy_physics_get_stats(s->physics, &ps);
    if (a.iterations != ps.iterations || a.cpu_ns != ps.cpu_ns || a.publish_ns != ps.publish_ns)
        return false;
    /* Body counts change inside an iteration (a cell's props are released, then the new ones
     * created): they are sampled only between iterations. */
    gy_barrier_get_stats(s->barrier, &b1);
    pacing = pacing && b0.safe_points == b1.safe_points &&
             gy_barrier_physics_phase(s->barrier) == GY_PHYSICS_PACING;
    m->at_ns = gy_clock_now_ns();
    m->iterations = ps.iterations;
    m->ticks = ps.ticks;
    m->cpu_ns = ps.cpu_ns;
    m->publish_ns = ps.publish_ns;
    m->step_ns = ps.step_ns;
    m->dropped = ps.catchup_steps_dropped;
    if (s->measuring && pacing) {
        s->awake_sum += ps.awake;
        s->bodies_sum += ps.bodies;
        if (s->awake_samples == 0 || ps.awake < s->awake_min)
            s->awake_min = ps.awake;
        if (ps.awake > s->awake_max)
            s->awake_max = ps.awake;
        s->awake_samples++;
    }
    return true;
}

static void sample_physics(soak *s)
{
    phys_mark m;
    if (!read_mark(s, &m))
        return;
    if (s->have_last_mark && m.iterations > s->last_mark.iterations && s->measuring) {
        uint64_t di = m.iterations - s->last_mark.iterations;
        /* Iterations that fell between two successful reads share their total equally. */
        hist_add_n(&s->step, (m.cpu_ns - s->last_mark.cpu_ns) / di, di);
        gy_cli_page_sample(s->page, s->page_series[2],
                           (double)(int64_t)(m.at_ns - s->measure_start_ns) * 1e-9,
                           (double)((m.cpu_ns - s->last_mark.cpu_ns) / di) * 1e-6);
        hist_add_n(&s->publish, (m.publish_ns - s->last_mark.publish_ns) / di, di);
        uint64_t dt = m.ticks - s->last_mark.ticks;
        if (dt > 0)
            hist_add_n(&s->adapter_step, (m.step_ns - s->last_mark.step_ns) / dt, dt);
    }
    s->last_mark = m;
    s->have_last_mark = true;
    if (s->measuring) {
        if (!s->have_first_measured) {
            s->first_mark_measured = m;
            s->have_first_measured = true;
        }
        s->last_mark_measured = m;
    }
}

static void sample_rss(soak *s, uint64_t now)
{
    if (now < s->next_rss_ns)
        return;
    s->next_rss_ns = now + 1000000000u;
    double mb = rss_mb();
    if (s->rss_samples < s->rss_window) {
        if (mb > s->rss_first_max)
            s->rss_first_max = mb;
    }
    s->rss_last[s->rss_samples % s->rss_window] = mb;
    s->rss_samples++;
}

static void progress(soak *s, uint64_t now, bool done)
{
    if (s->opt.quiet || !isatty(2))
        return;
    if (done) {
        if (s->progress_shown)
            fputs("\r\033[K", stderr);
        return;
    }
    if (now < s->next_progress_ns)
        return;
    s->next_progress_ns = now + PROGRESS_PERIOD;
    gy_physics_stats ps;
    gy_physics_get_stats(s->physics, &ps);
    double t = s->measuring ? (double)(now - s->measure_start_ns) * 1e-9 : 0.0;
    fprintf(stderr,
            "\r\033[Kgyre soak: %s%.0f/%.0f s, %llu cells swapped, wait p99 %.1f us, step p99 "
            "%.2f ms, %u bodies (%u awake), RSS %.0f MB",
            s->measuring ? "" : "warming up, ", t, s->opt.seconds,
            (unsigned long long)s->cells_swapped, hist_percentile(&s->wait, 0.99) / 1e3,
            hist_percentile(&s->step, 0.99) / 1e6, ps.bodies, ps.awake, rss_mb());
    fflush(stderr);
    s->progress_shown = true;
}

/* ---- the run --------------------------------------------------------------------------------- */

static void sleep_until(uint64_t deadline_ns)
{
    struct timespec ts = {(time_t)(deadline_ns / 1000000000u), (long)(deadline_ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
    }
}

/* Frame alignment: a frame that finds the physics thread inside an iteration waits (in short
 * sleeps, at most half a period: an overloaded physics thread must not stall the game) for it to
 * publish and pace. Returns true when it waited and saw the publish. */
static bool wait_for_publish(soak *s, uint64_t period, uint64_t *waited)
{
    *waited = 0;
    if (s->opt.free_running || !gy_world_physics_running(s->world) ||
        gy_barrier_physics_phase(s->barrier) != GY_PHYSICS_RUNNING)
        return false;
    uint64_t t0 = gy_clock_now_ns(), now = t0;
    bool running;
    while ((running = gy_barrier_physics_phase(s->barrier) == GY_PHYSICS_RUNNING) &&
           now - t0 < period / 2u) {
        sleep_until(now + 50000u);
        now = gy_clock_now_ns();
    }
    *waited = now - t0;
    return !running;
}

/* The frame deadline half the idle part of a period after the next iteration's expected end,
 * from the last iteration end seen (and forgets it). */
static uint64_t aligned_deadline(soak *s, uint64_t period, uint64_t now)
{
    uint64_t d = s->step.n > 0 ? (uint64_t)hist_percentile(&s->step, 0.5) : TYPICAL_STEP_NS;
    uint64_t margin = d < period ? (period - d) / 2u : period / 2u;
    if (margin < period / 32u)
        margin = period / 32u;
    uint64_t next = s->iteration_end_ns + period + margin;
    while (next <= now)
        next += period;
    while (next - now > period + margin) /* the same frame rate: never skip a frame */
        next -= period;
    s->iteration_end_ns = 0;
    return next;
}

/* --min-samples: enough mutation windows and physics iterations measured, and the body counts
 * (taken only while the physics thread paces, which a thread that is behind seldom does) taken at
 * least once. A loaded machine (a sanitizer build among other jobs) can starve the physics thread
 * for most of a short soak; the report is then about too few samples to say anything, so the soak
 * measures on until it has them. */
static bool enough_samples(const soak *s)
{
    uint64_t n = s->opt.min_samples;
    return s->windows >= n && s->step.n >= n && (n == 0 || s->awake_samples > 0);
}

static void run(soak *s)
{
    const uint64_t period = (uint64_t)llround(1e9 / GAME_HZ);
    uint64_t start = gy_clock_now_ns();
    s->measure_start_ns = start + (uint64_t)llround(s->opt.warmup * 1e9);
    s->measure_end_ns = s->measure_start_ns + (uint64_t)llround(s->opt.seconds * 1e9);
    const uint64_t measure_cap_ns =
        s->measure_start_ns + (uint64_t)llround(s->opt.seconds * MIN_SAMPLES_STRETCH * 1e9);
    double window_s = fmin((double)RSS_WINDOW_MAX, fmax(1.0, floor(s->opt.seconds / 5.0)));
    s->rss_window = (uint32_t)window_s;
    uint64_t last = start, next = start + period;
    while (!s->failed) {
        uint64_t now = gy_clock_now_ns();
        if (now >= s->measure_end_ns) {
            if (enough_samples(s) || now >= measure_cap_ns)
                break;
            s->measure_end_ns = now; /* measuring on: the report's time goes as far */
        }
        if (gy_cli_signal_caught() != 0) {
            s->interrupted = true;
            break;
        }
        if (!s->measuring && now >= s->measure_start_ns) {
            s->measuring = true;
            s->rss_start_mb = rss_mb();
            s->next_rss_ns = now;
            sample_physics(s);
        }
        double dt = (double)(now - last) * 1e-9;
        last = now;
        if (dt > MAX_FRAME_DT_S)
            dt = MAX_FRAME_DT_S;
        advance_focus(s, dt);
        s->budget += s->opt.cells * dt;
        if (s->q_len == 0 && s->budget > 1.0)
            s->budget = 1.0;
        uint32_t n = s->budget < (double)s->q_len ? (uint32_t)s->budget : s->q_len;
        s->budget -= (double)n;
        sample_physics(s);
        if (n > 0)
            do_swaps(s, n);
        if (s->failed)
            break;
        gy_result r = gy_world_tick(s->world, dt);
        if (r != GY_OK) {
            fail(s, "world tick failed: %s", gy_result_message(r));
            break;
        }
        sample_physics(s);
        uint32_t reports = watchdog_reports(&s->cap);
        if (reports > 0) {
            pthread_mutex_lock(&s->cap.mutex);
            fail(s, "%s", s->cap.first_watchdog);
            pthread_mutex_unlock(&s->cap.mutex);
            break;
        }
        uint64_t done = gy_clock_now_ns();
        if (s->measuring) {
            hist_add(&s->frame, done - now);
            sample_rss(s, done);
        }
        progress(s, done, false);
        if (s->iteration_end_ns != 0 && !s->opt.free_running) {
            /* A grant waited for a step: the next frame goes to the middle of the idle part of
             * the next period. */
            next = aligned_deadline(s, period, done);
        } else if (next <= done) {
            next = done + period; /* an overrun frame is not made up with a burst */
        }
        sleep_until(next);
        next += period;
        uint64_t waited;
        if (wait_for_publish(s, period, &waited)) {
            /* This frame runs now, just after the publish; the next one is moved. */
            uint64_t now2 = gy_clock_now_ns();
            s->iteration_end_ns = now2;
            next = aligned_deadline(s, period, now2);
            if (s->measuring)
                hist_add(&s->align, waited);
        }
    }
    progress(s, 0, true);
    s->rss_end_mb = rss_mb();
    uint64_t end = gy_clock_now_ns();
    if (s->measuring)
        s->measured_s =
            (double)((end < s->measure_end_ns ? end : s->measure_end_ns) - s->measure_start_ns) *
            1e-9;
}

/* Counters, then the orderly teardown (which yields live_objects_at_exit), then the records. */
static void tear_down(soak *s)
{
    if (s->world != NULL) {
        gy_physics_stats ps;
        gy_physics_get_stats(s->physics, &ps);
        gy_world_stats ws;
        gy_world_get_stats(s->world, &ws);
        s->commands = ps.commands_applied;
        s->commands_dropped_stale = ps.commands_dropped_stale;
        s->replies = ws.replies_handled;
        /* Counted by the reply ring itself: known with or without the diagnostics sampler. */
        s->replies_dropped = ps.replies_dropped;
        s->replies_dropped_known = true;
        gy_world_teardown td;
        memset(&td, 0, sizeof td);
        gy_result r = gy_world_destroy(s->world, &td);
        s->world = NULL;
        if (r != GY_OK)
            fprintf(stderr, "gyre soak: teardown: %s\n", gy_result_message(r));
        s->live_known = td.adapter_checked;
        s->live_objects_at_exit = td.adapter_live_objects;
    }
    if (s->resident != NULL) {
        for (uint32_t i = 0; i < s->W * s->W; i++)
            gy_scene_instance_free(s->resident[i].instance);
        gy_free(&s->alloc, s->resident, (size_t)s->W * s->W * sizeof *s->resident);
        s->resident = NULL;
    }
    if (s->queue != NULL)
        gy_free(&s->alloc, s->queue, (size_t)PAIR_QUEUE * sizeof *s->queue);
    s->queue = NULL;
    gy_scene_instance_free(s->base);
    s->base = NULL;
    for (int t = 0; t < 4; t++) {
        gy_scene_free(s->templates[t]);
        s->templates[t] = NULL;
    }
    gy_scene_free(s->level_block);
    gy_scene_free(s->level_tail);
    s->level_block = s->level_tail = NULL;
    s->allocator_bytes_at_exit = s->count.live_bytes; /* every thread has finished */
}

/* ---- report ---------------------------------------------------------------------------------- */

static double round_to(double v, double unit)
{
    return round(v / unit) * unit;
}

static cJSON *dist_json(const hist *h, double scale)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "p50", round_to(hist_percentile(h, 0.50) * scale, 1e-3));
    cJSON_AddNumberToObject(o, "p99", round_to(hist_percentile(h, 0.99) * scale, 1e-3));
    cJSON_AddNumberToObject(o, "p999", round_to(hist_percentile(h, 0.999) * scale, 1e-3));
    cJSON_AddNumberToObject(o, "max", round_to((double)h->max * scale, 1e-3));
    cJSON_AddNumberToObject(o, "count", (double)h->n);
    return o;
}

static double ticks_expected(const soak *s)
{
    if (!s->have_first_measured)
        return 0.0;
    return round((double)(s->last_mark_measured.at_ns - s->first_mark_measured.at_ns) * 1e-9 *
                 (double)s->step_hz);
}

static uint64_t ticks_run(const soak *s)
{
    return s->have_first_measured ? s->last_mark_measured.ticks - s->first_mark_measured.ticks : 0u;
}

/* Steps of simulated time the physics thread dropped (catch-up limit), or ticks that never ran
 * at all (a stopped or starved thread), whichever is larger; one tick of slack for the phase of
 * the two reads. */
static uint64_t ticks_missed(const soak *s)
{
    if (!s->have_first_measured)
        return 0u;
    uint64_t dropped = s->last_mark_measured.dropped - s->first_mark_measured.dropped;
    double gap = ticks_expected(s) - (double)ticks_run(s) - 1.0;
    uint64_t missing = gap > 0 ? (uint64_t)gap : 0u;
    return dropped > missing ? dropped : missing;
}

static double rss_last_max(const soak *s)
{
    uint32_t n = s->rss_samples < s->rss_window ? s->rss_samples : s->rss_window;
    double m = 0.0;
    for (uint32_t i = 0; i < n; i++)
        if (s->rss_last[i] > m)
            m = s->rss_last[i];
    return m;
}

static double rss_growth_pct(const soak *s)
{
    if (s->rss_first_max <= 0.0)
        return 0.0;
    return (rss_last_max(s) - s->rss_first_max) / s->rss_first_max * 100.0;
}

static void evaluate_gates(soak *s)
{
    double v[GATE_COUNT] = {
        hist_percentile(&s->wait, 0.99) / 1e3,
        hist_percentile(&s->window, 0.99) / 1e3,
        hist_percentile(&s->step, 0.99) / 1e6,
        (double)ticks_missed(s),
        (double)s->replies_dropped,
        rss_growth_pct(s),
    };
    for (int g = 0; g < GATE_COUNT; g++) {
        gate *gt = &s->opt.gates[g];
        gt->measured = v[g];
        gt->passed = !gt->set || v[g] <= gt->limit;
    }
}

static bool leaked(const soak *s)
{
    return (s->live_known && s->live_objects_at_exit != 0) || s->allocator_bytes_at_exit != 0;
}

static bool all_passed(const soak *s)
{
    if (s->failed || leaked(s))
        return false;
    for (int g = 0; g < GATE_COUNT; g++)
        if (!s->opt.gates[g].passed)
            return false;
    return true;
}

static char *report_json(const soak *s)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL)
        return NULL;
    cJSON_AddStringToObject(o, "gyre_version", GYRE_VERSION);
    cJSON_AddStringToObject(o, "scene", s->opt.scene_path);
    cJSON_AddStringToObject(o, "backend", s->backend != NULL ? s->backend : "");
    cJSON_AddStringToObject(o, "mode", s->opt.hard ? "hard" : "barrier");
    cJSON_AddNumberToObject(o, "seconds", s->opt.seconds);
    cJSON_AddNumberToObject(o, "measured_seconds", round_to(s->measured_s, 1e-3));
    cJSON_AddNumberToObject(o, "warmup_seconds", s->opt.warmup);
    cJSON *cfg = cJSON_AddObjectToObject(o, "config");
    cJSON_AddNumberToObject(cfg, "cells_per_s", s->opt.cells);
    cJSON_AddNumberToObject(cfg, "statics", s->opt.statics);
    cJSON_AddNumberToObject(cfg, "props", s->opt.props);
    cJSON_AddNumberToObject(cfg, "level_statics", s->opt.level_statics);
    cJSON_AddNumberToObject(cfg, "window_cells", (double)s->W * s->W);
    cJSON_AddNumberToObject(cfg, "cell_size_m", CELL_SIZE_M);
    cJSON_AddNumberToObject(cfg, "step_hz", s->step_hz);
    cJSON_AddNumberToObject(cfg, "game_hz", GAME_HZ);
    cJSON_AddNumberToObject(cfg, "watchdog_ms", s->opt.watchdog_ms);
    cJSON_AddNumberToObject(cfg, "min_samples", s->opt.min_samples);
    cJSON_AddItemToObject(o, "barrier_wait_us", dist_json(&s->wait, 1e-3));
    cJSON_AddItemToObject(o, "mutation_us", dist_json(&s->window, 1e-3));
    cJSON_AddItemToObject(o, "swap_us", dist_json(&s->swap, 1e-3));
    cJSON_AddItemToObject(o, "step_ms", dist_json(&s->step, 1e-6));
    cJSON_AddItemToObject(o, "publish_ms", dist_json(&s->publish, 1e-6));
    cJSON_AddItemToObject(o, "adapter_step_ms", dist_json(&s->adapter_step, 1e-6));
    cJSON_AddItemToObject(o, "frame_ms", dist_json(&s->frame, 1e-6));
    cJSON_AddBoolToObject(o, "frames_aligned", !s->opt.free_running);
    cJSON_AddItemToObject(o, "align_wait_us", dist_json(&s->align, 1e-3));
    cJSON_AddNumberToObject(o, "ticks", (double)ticks_run(s));
    cJSON_AddNumberToObject(o, "ticks_expected", ticks_expected(s));
    cJSON_AddNumberToObject(o, "ticks_missed", (double)ticks_missed(s));
    cJSON_AddNumberToObject(o, "cells_swapped", (double)s->cells_swapped);
    cJSON_AddNumberToObject(o, "windows", (double)s->windows);
    cJSON_AddNumberToObject(
        o, "cells_per_s_measured",
        round_to(s->measured_s > 0 ? (double)s->cells_swapped / s->measured_s : 0.0, 1e-3));
    cJSON_AddNumberToObject(o, "focus_stalls", (double)s->focus_stalls);
    if (s->awake_samples > 0) {
        double samples = (double)s->awake_samples;
        cJSON_AddNumberToObject(o, "bodies_mean", round_to((double)s->bodies_sum / samples, 0.1));
        cJSON_AddNumberToObject(o, "awake_mean", round_to((double)s->awake_sum / samples, 0.1));
        cJSON_AddNumberToObject(o, "awake_min", s->awake_min);
        cJSON_AddNumberToObject(o, "awake_max", s->awake_max);
    } else {
        /* Never counted (the physics thread was not seen pacing): no number, rather than 0. */
        cJSON_AddNullToObject(o, "bodies_mean");
        cJSON_AddNullToObject(o, "awake_mean");
        cJSON_AddNullToObject(o, "awake_min");
        cJSON_AddNullToObject(o, "awake_max");
    }
    cJSON_AddNumberToObject(o, "commands", (double)s->commands);
    cJSON_AddNumberToObject(o, "commands_dropped_stale", (double)s->commands_dropped_stale);
    cJSON_AddNumberToObject(o, "replies", (double)s->replies);
    if (s->replies_dropped_known)
        cJSON_AddNumberToObject(o, "replies_dropped", (double)s->replies_dropped);
    else
        cJSON_AddNullToObject(o, "replies_dropped");
    cJSON_AddNumberToObject(o, "rss_start_mb", round_to(s->rss_start_mb, 0.01));
    cJSON_AddNumberToObject(o, "rss_end_mb", round_to(s->rss_end_mb, 0.01));
    cJSON_AddNumberToObject(o, "rss_first_window_mb", round_to(s->rss_first_max, 0.01));
    cJSON_AddNumberToObject(o, "rss_last_window_mb", round_to(rss_last_max(s), 0.01));
    cJSON_AddNumberToObject(o, "rss_window_s", s->rss_window);
    cJSON_AddNumberToObject(o, "rss_growth_pct", round_to(rss_growth_pct(s), 0.01));
    if (s->live_known)
        cJSON_AddNumberToObject(o, "live_objects_at_exit", s->live_objects_at_exit);
    else
        cJSON_AddNullToObject(o, "live_objects_at_exit");
    cJSON_AddNumberToObject(o, "allocator_bytes_at_exit", (double)s->allocator_bytes_at_exit);
    cJSON_AddNumberToObject(o, "allocator_peak_mb",
                            round_to((double)s->count.peak_bytes / (1024.0 * 1024.0), 0.01));
    cJSON *wd = cJSON_AddObjectToObject(o, "watchdog");
    cJSON_AddNumberToObject(wd, "reports", s->cap.watchdog_reports);
    if (s->failed)
        cJSON_AddStringToObject(wd, "failure", s->failure);
    else
        cJSON_AddNullToObject(wd, "failure");
    cJSON *gates = cJSON_AddArrayToObject(o, "gates");
    for (int g = 0; g < GATE_COUNT; g++) {
        const gate *gt = &s->opt.gates[g];
        if (!gt->set)
            continue;
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "gate", gt->flag + 2);
        cJSON_AddStringToObject(x, "value", gt->value);
        cJSON_AddNumberToObject(x, "limit", gt->limit);
        cJSON_AddNumberToObject(x, "measured", round_to(gt->measured, 1e-3));
        cJSON_AddBoolToObject(x, "passed", gt->passed);
        cJSON_AddItemToArray(gates, x);
    }
    cJSON_AddBoolToObject(o, "passed", all_passed(s));
    if (s->interrupted)
        cJSON_AddTrueToObject(o, "interrupted"); /* present only then */
    cJSON_AddNumberToObject(o, "wall_seconds", round_to(s->wall_seconds, 1e-3));
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    return text;
}

static bool write_report(const soak *s)
{
    char *text = report_json(s);
    if (text == NULL) {
        fputs("gyre soak: out of memory writing the report\n", stderr);
        return false;
    }
    gy_cli_output out;
    bool ok = gy_cli_output_open(&out, s->opt.report_path, "gyre soak", "--report");
    if (ok) {
        fputs(text, out.f);
        fputc('\n', out.f);
        ok = gy_cli_output_commit(&out) == 0;
    }
    cJSON_free(text);
    return ok;
}

static void print_dist(const char *name, const hist *h, double scale, const char *unit)
{
    fprintf(stderr, "  %-16s p50 %9.3f  p99 %9.3f  p99.9 %9.3f  max %9.3f %s  (%llu)\n", name,
            hist_percentile(h, 0.5) * scale, hist_percentile(h, 0.99) * scale,
            hist_percentile(h, 0.999) * scale, (double)h->max * scale, unit,
            (unsigned long long)h->n);
}

static void print_summary(const soak *s)
{
    fprintf(stderr,
            "gyre soak: %s, %s, %.0f s: %u statics + %u level statics, %u props, %u x %u cells, "
            "%llu cells swapped in %llu windows (%.1f/s)\n",
            s->opt.scene_path, s->opt.hard ? "hard stop/start" : "scene barrier", s->opt.seconds,
            s->opt.statics, s->opt.level_statics, s->opt.props, s->W, s->W,
            (unsigned long long)s->cells_swapped, (unsigned long long)s->windows,
            s->measured_s > 0 ? (double)s->cells_swapped / s->measured_s : 0.0);
    print_dist(s->opt.hard ? "stop (wait)" : "barrier wait", &s->wait, 1e-3, "us");
    print_dist(s->opt.hard ? "edit + start" : "mutation window", &s->window, 1e-3, "us");
    print_dist("swap", &s->swap, 1e-3, "us");
    print_dist("step (CPU)", &s->step, 1e-6, "ms");
    print_dist("publish", &s->publish, 1e-6, "ms");
    print_dist("adapter step", &s->adapter_step, 1e-6, "ms");
    print_dist("game frame", &s->frame, 1e-6, "ms");
    print_dist("align wait", &s->align, 1e-3, "us");
    fprintf(stderr,
            "  ticks %llu of %.0f expected, %llu missed; awake %.0f mean (min %u); replies %llu, "
            "%llu dropped; commands %llu (%llu stale)\n",
            (unsigned long long)ticks_run(s), ticks_expected(s),
            (unsigned long long)ticks_missed(s),
            s->awake_samples ? (double)s->awake_sum / (double)s->awake_samples : 0.0, s->awake_min,
            (unsigned long long)s->replies, (unsigned long long)s->replies_dropped,
            (unsigned long long)s->commands, (unsigned long long)s->commands_dropped_stale);
    fprintf(stderr,
            "  RSS %.1f -> %.1f MB (first %us window max %.1f, last %.1f: %+.2f%%); live objects "
            "at exit %s%u; allocator bytes at exit %lld\n",
            s->rss_start_mb, s->rss_end_mb, s->rss_window, s->rss_first_max, rss_last_max(s),
            rss_growth_pct(s), s->live_known ? "" : "unknown ", s->live_objects_at_exit,
            (long long)s->allocator_bytes_at_exit);
    for (int g = 0; g < GATE_COUNT; g++) {
        const gate *gt = &s->opt.gates[g];
        if (gt->set)
            fprintf(stderr, "  gate %s %g: %s = %.3f %s\n", gt->flag, gt->limit, gt->value,
                    gt->measured, gt->passed ? "held" : "FAILED");
    }
}

/* ---- the page (--html) ---------------------------------------------------------------------- */

static const int k_page_gates[3] = {GATE_BARRIER_P99, GATE_MUTATION_P99, GATE_STEP_P99};

static double gate_limit(const soak *s, int g)
{
    return s->opt.gates[g].set ? s->opt.gates[g].limit : NAN;
}

/* The page and its series, before the run. False when out of memory. */
static bool page_begin(soak *s)
{
    s->page = gy_cli_page_create(GY_CLI_PAGE_SOAK);
    if (s->page == NULL)
        return false;
    char text[160];
    gy_cli_page_set_info(s->page, "scene", s->opt.scene_path);
    gy_cli_page_set_info(s->page, "backend", s->backend != NULL ? s->backend : "");
    gy_cli_page_set_info(s->page, "mode", s->opt.hard ? "hard stop/start" : "scene barrier");
    snprintf(text, sizeof text, "%g s after %g s warm-up", s->opt.seconds, s->opt.warmup);
    gy_cli_page_set_info(s->page, "measured", text);
    snprintf(text, sizeof text, "%g/s, %u statics, %u props", s->opt.cells, s->opt.statics,
             s->opt.props);
    gy_cli_page_set_info(s->page, "cells", text);
    gy_cli_page_set_info(s->page, "gyre", GYRE_VERSION);
    static const char *const names[3] = {"barrier wait", "mutation window", "step (CPU)"};
    static const char *const units[3] = {"us", "us", "ms"};
    for (int i = 0; i < 3; i++)
        s->page_series[i] = gy_cli_page_add_series(s->page, names[i], units[i], s->opt.seconds,
                                                   gate_limit(s, k_page_gates[i]));
    return true;
}

/* The histograms (non-empty buckets at their middle), then the page itself. */
static bool write_page(soak *s)
{
    const hist *h[3] = {&s->wait, &s->window, &s->step};
    static const char *const names[3] = {"barrier wait", "mutation window", "step (CPU)"};
    static const char *const units[3] = {"us", "us", "ms"};
    static const double scale[3] = {1e-3, 1e-3, 1e-6};
    double *values = malloc(HIST_BUCKETS * sizeof *values);
    uint64_t *counts = malloc(HIST_BUCKETS * sizeof *counts);
    bool ok = values != NULL && counts != NULL;
    for (int i = 0; i < 3 && ok; i++) {
        uint32_t n = 0;
        for (uint32_t b = 0; b < HIST_BUCKETS; b++) {
            if (h[i]->counts[b] == 0)
                continue;
            double lo, hi;
            hist_bucket_range(b, &lo, &hi);
            values[n] = 0.5 * (lo + hi) * scale[i];
            counts[n++] = h[i]->counts[b];
        }
        char summary[200];
        snprintf(summary, sizeof summary,
                 "%llu samples: p50 %.3f, p99 %.3f, p99.9 %.3f, max %.3f %s",
                 (unsigned long long)h[i]->n, hist_percentile(h[i], 0.5) * scale[i],
                 hist_percentile(h[i], 0.99) * scale[i], hist_percentile(h[i], 0.999) * scale[i],
                 (double)h[i]->max * scale[i], units[i]);
        gy_cli_page_add_histogram(s->page, names[i], units[i], values, counts, n, summary,
                                  gate_limit(s, k_page_gates[i]));
    }
    free(values);
    free(counts);
    gy_cli_output out;
    if (ok && gy_cli_output_open(&out, s->opt.html_path, "gyre soak", "--html")) {
        if (gy_cli_page_write(s->page, out.f))
            return gy_cli_output_commit(&out) == 0;
        gy_cli_output_discard(&out);
    }
    fprintf(stderr, "gyre soak: --html %s: the page could not be written\n", s->opt.html_path);
    return false;
}

/* ---- entry ----------------------------------------------------------------------------------- */

int gy_cli_soak_main(int argc, char **argv)
{
    uint64_t start_ns = gy_clock_now_ns();
    soak *s = calloc(1, sizeof *s);
    if (s == NULL) {
        fputs("gyre soak: out of memory\n", stderr);
        return GY_CLI_EXIT_FAILED;
    }
    int status = parse_options(argc, argv, &s->opt);
    if (status != GY_CLI_EXIT_OK) {
        free(s);
        return status < 0 ? GY_CLI_EXIT_OK : status;
    }
    pthread_mutex_init(&s->cap.mutex, NULL);
    pthread_mutex_init(&s->count.mutex, NULL);
    gy_cli_signals_install();
    status = set_up(s);
    if (status == GY_CLI_EXIT_OK && s->opt.html_path != NULL && !page_begin(s)) {
        fputs("gyre soak: --html: out of memory\n", stderr);
        status = GY_CLI_EXIT_FAILED;
        tear_down(s);
    } else if (status == GY_CLI_EXIT_OK) {
        run(s);
        tear_down(s);
        s->wall_seconds = (double)(gy_clock_now_ns() - start_ns) * 1e-9;
        evaluate_gates(s);
        if (s->live_known && s->live_objects_at_exit != 0)
            fprintf(stderr, "gyre soak: %u backend objects still alive after teardown (a leak)\n",
                    s->live_objects_at_exit);
        if (s->allocator_bytes_at_exit != 0)
            fprintf(stderr, "gyre soak: %lld bytes still allocated after teardown (a leak)\n",
                    (long long)s->allocator_bytes_at_exit);
        if (!s->opt.quiet)
            print_summary(s);
        bool ok = all_passed(s);
        if (s->opt.report_path != NULL && !write_report(s))
            ok = false;
        if (s->opt.html_path != NULL && !write_page(s))
            ok = false;
        status = ok ? GY_CLI_EXIT_OK : GY_CLI_EXIT_FAILED;
        if (s->interrupted) {
            fprintf(stderr, "gyre soak: interrupted; the report holds the run so far\n");
            status = gy_cli_interrupted_exit();
        }
    } else {
        tear_down(s);
    }
    gy_scene_free(s->scene);
    gy_cli_page_free(s->page);
    pthread_mutex_destroy(&s->cap.mutex);
    pthread_mutex_destroy(&s->count.mutex);
    free(s);
    return status;
}
