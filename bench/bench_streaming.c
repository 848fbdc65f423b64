/* gyre-bench section "streaming": the physics step while cells stream through the scene barrier,
 * with 100,000 statics resident against 10,000, at the same activity.
 *
 * Both runs are `gyre soak` (engine/cli/soak.c) with the same streaming: 64 cells per second in
 * and out of an 8 x 8 window, 10,000 streamed statics and 500 awake props. The 100,000-static run
 * adds 90,000 level statics that never change (--level-statics), so the only difference is how
 * many statics are resident. The key, streaming.step_p99_ratio, is the p99 of the physics
 * thread's CPU time per iteration (drain → step → publish) at 100,000 over 10,000 (target
 * ≤ 1.3). The static query tree is edited in place as statics come and go: rebuilding it on every
 * change would cost ~70 ms at 100,000 statics.
 *
 * Also here: the helper that runs `gyre soak` for this section and the swap section. */
#include "bench_soak.h"

#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef GYRE_EXE
#error "GYRE_EXE (the gyre executable's path) is set by bench/meson.build"
#endif
#ifndef GYRE_SOAK_SCENE
#error "GYRE_SOAK_SCENE (scenes/soak.json) is set by bench/meson.build"
#endif

extern char **environ;

#define MAX_ARGS 30

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 65536, len = 0;
    char *text = malloc(cap);
    while (text != NULL) {
        size_t n = fread(text + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0)
            break;
        if (len + 1 == cap) {
            char *t = realloc(text, cap * 2);
            if (t == NULL) {
                free(text);
                text = NULL;
                break;
            }
            text = t;
            cap *= 2;
        }
    }
    fclose(f);
    if (text != NULL)
        text[len] = 0;
    return text;
}

cJSON *gy_bench_soak(gy_bench *b, const char *const *args, int *exit_code)
{
    *exit_code = -1;
    char report[] = "/tmp/gyre-bench-soak-XXXXXX";
    int fd = mkstemp(report);
    if (fd < 0)
        return NULL;
    close(fd);
    const char *argv[MAX_ARGS + 8];
    int n = 0;
    argv[n++] = GYRE_EXE;
    argv[n++] = "soak";
    argv[n++] = GYRE_SOAK_SCENE;
    char line[512] = "gyre soak scenes/soak.json";
    for (int i = 0; args[i] != NULL && i < MAX_ARGS; i++) {
        argv[n++] = args[i];
        size_t used = strlen(line);
        snprintf(line + used, sizeof line - used, " %s", args[i]);
    }
    argv[n++] = "--quiet";
    argv[n++] = "--report";
    argv[n++] = report;
    argv[n] = NULL;
    gy_bench_note(b, "%s", line);
    pid_t pid;
    /* posix_spawn takes char *const argv[]; nothing writes through it. */
    char **spawn_argv = (char **)(void *)argv;
    if (posix_spawn(&pid, GYRE_EXE, NULL, NULL, spawn_argv, environ) != 0) {
        unlink(report);
        return NULL;
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
        unlink(report);
        return NULL;
    }
    *exit_code = WEXITSTATUS(status);
    char *text = read_file(report);
    unlink(report);
    cJSON *json = text != NULL ? cJSON_Parse(text) : NULL;
    free(text);
    return json;
}

double gy_bench_soak_number(const cJSON *report, const char *path)
{
    const cJSON *node = report;
    char part[64];
    const char *p = path;
    while (node != NULL) {
        const char *dot = strchr(p, '.');
        size_t n = dot != NULL ? (size_t)(dot - p) : strlen(p);
        if (n >= sizeof part)
            return NAN;
        memcpy(part, p, n);
        part[n] = 0;
        node = cJSON_GetObjectItemCaseSensitive(node, part);
        if (dot == NULL)
            break;
        p = dot + 1;
    }
    return cJSON_IsNumber(node) ? node->valuedouble : NAN;
}

/* One soak's numbers. */
typedef struct streaming_run {
    double step_p50, step_p99, publish_p99, wait_p99, window_p99, ticks_missed;
} streaming_run;

static bool run_one(gy_bench *b, bool big, const char *seconds, streaming_run *out)
{
    const char *small[] = {"--seconds", seconds,   "--statics", "10000", "--props",
                           "500",       "--cells", "64",        NULL};
    const char *large[] = {"--seconds", seconds, "--statics",       "10000", "--props", "500",
                           "--cells",   "64",    "--level-statics", "90000", NULL};
    int code;
    cJSON *r = gy_bench_soak(b, big ? large : small, &code);
    if (r == NULL) {
        gy_bench_note(b, "gyre soak did not run or wrote no report");
        return false;
    }
    if (code != 0)
        gy_bench_note(b, "gyre soak exited %d (see its report's watchdog and leak fields)", code);
    out->step_p50 = gy_bench_soak_number(r, "step_ms.p50");
    out->step_p99 = gy_bench_soak_number(r, "step_ms.p99");
    out->publish_p99 = gy_bench_soak_number(r, "publish_ms.p99");
    out->wait_p99 = gy_bench_soak_number(r, "barrier_wait_us.p99");
    out->window_p99 = gy_bench_soak_number(r, "mutation_us.p99");
    out->ticks_missed = gy_bench_soak_number(r, "ticks_missed");
    cJSON_Delete(r);
    return !isnan(out->step_p99) && out->step_p99 > 0;
}

int gy_bench_section_streaming(gy_bench *b)
{
    /* Interleaved rounds, so slow drift in the machine's load hits both sides alike. */
    const int rounds = gy_bench_quick(b) ? 2 : 3;
    const char *seconds = gy_bench_quick(b) ? "4" : "20";
    double p99[2][3], p50[2][3], pub[2][3], wait[2][3], missed[2] = {0, 0};
    for (int k = 0; k < rounds; k++)
        for (int big = 0; big < 2; big++) {
            streaming_run r;
            if (!run_one(b, big != 0, seconds, &r))
                return 1;
            p99[big][k] = r.step_p99;
            p50[big][k] = r.step_p50;
            pub[big][k] = r.publish_p99;
            wait[big][k] = r.wait_p99;
            missed[big] += r.ticks_missed;
        }
    /* The p99s of the rounds pooled (their means): one unlucky round moves the ratio less than
     * it would move a median of two or three. */
    double s99 = 0, l99 = 0;
    for (int k = 0; k < rounds; k++) {
        s99 += p99[0][k] / rounds;
        l99 += p99[1][k] / rounds;
    }
    gy_bench_report(b, "streaming.step_p99_ms_10k", s99, "ms",
                    "physics CPU per iteration, p99, 10,000 statics (mean of rounds)");
    gy_bench_report(b, "streaming.step_p99_ms_100k", l99, "ms",
                    "the same with 100,000 statics resident");
    gy_bench_report(b, "streaming.step_p99_ratio", l99 / s99, "x",
                    "100,000 / 10,000 statics, same streaming (target <= 1.3)");
    gy_bench_report(b, "streaming.step_p50_ms_10k", gy_bench_median(p50[0], (size_t)rounds), "ms",
                    "p50, 10,000 statics");
    gy_bench_report(b, "streaming.step_p50_ms_100k", gy_bench_median(p50[1], (size_t)rounds), "ms",
                    "p50, 100,000 statics");
    gy_bench_report(b, "streaming.publish_p99_ms_10k", gy_bench_median(pub[0], (size_t)rounds),
                    "ms", "publish wall time p99 (query snapshot edits included)");
    gy_bench_report(b, "streaming.publish_p99_ms_100k", gy_bench_median(pub[1], (size_t)rounds),
                    "ms", "the same with 100,000 statics");
    gy_bench_report(b, "streaming.barrier_wait_p99_us_10k",
                    gy_bench_median(wait[0], (size_t)rounds), "us", "request -> grant p99");
    gy_bench_report(b, "streaming.barrier_wait_p99_us_100k",
                    gy_bench_median(wait[1], (size_t)rounds), "us", "the same, 100,000 statics");
    gy_bench_report(b, "streaming.ticks_missed", missed[0] + missed[1], "ticks",
                    "ticks the physics thread dropped, all runs");
    for (int k = 0; k < rounds; k++)
        gy_bench_note(b, "round %d: step p99 %.3f / %.3f ms, ratio %.3f", k + 1, p99[0][k],
                      p99[1][k], p99[1][k] / p99[0][k]);
    gy_bench_note(b,
                  "%d round(s) of %s s each, 64 cells/s, 500 awake props; step = physics-thread "
                  "CPU time per iteration",
                  rounds, seconds);
    return 0;
}
