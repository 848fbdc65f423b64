/* gyre-bench [--only NAME[,NAME...]] [--json FILE] [--quick] [--list]
 *
 * Runs the benchmark sections (all, or the ones named), prints a table, and writes one nested JSON
 * object with every reported number. Built by meson, never run by `meson test`. */
#include "bench.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gy_bench {
    bool quick;
    cJSON *root;
    const char *section;
    int failures; /* JSON nodes that could not be created */
};

typedef struct section {
    const char *name;
    const char *summary;
    int (*run)(gy_bench *b);
} section;

#define GY_BENCH_ENTRY_(name, summary) {#name, summary, gy_bench_section_##name},
static const section sections[] = {GY_BENCH_SECTIONS(GY_BENCH_ENTRY_)};
#undef GY_BENCH_ENTRY_
#define SECTION_COUNT (sizeof sections / sizeof sections[0])

bool gy_bench_quick(const gy_bench *b)
{
    return b->quick;
}

/* Walks/creates the objects for "a.b.c" and sets the leaf number. */
static void json_set(gy_bench *b, const char *key, double value)
{
    cJSON *node = b->root;
    char part[128];
    const char *p = key;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t len = dot != NULL ? (size_t)(dot - p) : strlen(p);
        if (len == 0 || len >= sizeof part) {
            b->failures++;
            return;
        }
        memcpy(part, p, len);
        part[len] = 0;
        if (dot == NULL) {
            cJSON_DeleteItemFromObjectCaseSensitive(node, part);
            if (cJSON_AddNumberToObject(node, part, value) == NULL)
                b->failures++;
            return;
        }
        cJSON *child = cJSON_GetObjectItemCaseSensitive(node, part);
        if (child == NULL) {
            child = cJSON_AddObjectToObject(node, part);
            if (child == NULL) {
                b->failures++;
                return;
            }
        } else if (!cJSON_IsObject(child)) {
            b->failures++;
            return;
        }
        node = child;
        p = dot + 1;
    }
}

void gy_bench_report(gy_bench *b, const char *key, double value, const char *unit, const char *what)
{
    json_set(b, key, value);
    char num[32];
    if (value != 0 && (value >= 1e7 || value < 1e-2))
        snprintf(num, sizeof num, "%.3e", value);
    else
        snprintf(num, sizeof num, "%.3f", value);
    printf("  %-34s %14s %-8s %s\n", key, num, unit != NULL ? unit : "", what != NULL ? what : "");
    fflush(stdout);
}

void gy_bench_note(gy_bench *b, const char *fmt, ...)
{
    (void)b;
    va_list ap;
    va_start(ap, fmt);
    printf("    ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double gy_bench_percentile(double *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_double);
    if (p <= 0)
        return v[0];
    if (p >= 100)
        return v[n - 1];
    /* nearest rank: the smallest value with at least p% of the samples at or below it */
    size_t rank = (size_t)((p / 100.0) * (double)n + 0.999999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return v[rank - 1];
}

double gy_bench_median(double *v, size_t n)
{
    return gy_bench_percentile(v, n, 50);
}

void gy_bench_report_distribution(gy_bench *b, const char *key, double *v, size_t n,
                                  const char *unit, const char *what)
{
    char k[160];
    char w[200];
    static const struct {
        const char *name;
        double p;
    } stats[] = {{"p50", 50}, {"p99", 99}, {"max", 100}};
    for (size_t i = 0; i < 3; i++) {
        snprintf(k, sizeof k, "%s.%s", key, stats[i].name);
        snprintf(w, sizeof w, "%s (%s of %zu)", what, stats[i].name, n);
        gy_bench_report(b, k, gy_bench_percentile(v, n, stats[i].p), unit, w);
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: gyre-bench [--only NAME[,NAME...]] [--json FILE] [--quick] [--list]\n"
               "  --only   run only these sections (see --list)\n"
               "  --json   write every number as one nested JSON object to FILE\n"
               "  --quick  shorter runs (all sections together in under 30 s)\n"
               "  --list   list the sections and exit\n");
}

static bool selected(const char *only, const char *name)
{
    if (only == NULL)
        return true;
    size_t n = strlen(name);
    const char *p = only;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        if (comma == NULL)
            break;
        p = comma + 1;
    }
    return false;
}

/* Every name in --only must be a section. */
static bool only_is_valid(const char *only)
{
    const char *p = only;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        bool found = false;
        for (size_t i = 0; i < SECTION_COUNT; i++)
            if (strlen(sections[i].name) == len && strncmp(p, sections[i].name, len) == 0)
                found = true;
        if (!found) {
            fprintf(stderr, "gyre-bench: unknown section '%.*s' (try --list)\n", (int)len, p);
            return false;
        }
        if (comma == NULL)
            return true;
        p = comma + 1;
    }
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    const char *json_path = NULL;
    gy_bench b = {0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
            json_path = argv[++i];
        } else if (strcmp(argv[i], "--quick") == 0) {
            b.quick = true;
        } else if (strcmp(argv[i], "--list") == 0) {
            for (size_t s = 0; s < SECTION_COUNT; s++)
                printf("%-12s %s\n", sections[s].name, sections[s].summary);
            return 0;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (only != NULL && !only_is_valid(only))
        return 2;
    b.root = cJSON_CreateObject();
    if (b.root == NULL)
        return 1;

    int status = 0;
    printf("gyre-bench%s\n", b.quick ? " --quick" : "");
    for (size_t s = 0; s < SECTION_COUNT; s++) {
        if (!selected(only, sections[s].name))
            continue;
        printf("\n[%s] %s\n", sections[s].name, sections[s].summary);
        fflush(stdout);
        b.section = sections[s].name;
        if (sections[s].run(&b) != 0) {
            fprintf(stderr, "gyre-bench: section %s failed\n", sections[s].name);
            status = 1;
        }
    }
    if (b.failures > 0) {
        fprintf(stderr, "gyre-bench: %d JSON keys could not be recorded\n", b.failures);
        status = 1;
    }
    if (json_path != NULL) {
        char *text = cJSON_Print(b.root);
        FILE *f = fopen(json_path, "w");
        if (text == NULL || f == NULL || fputs(text, f) < 0 || fputc('\n', f) == EOF) {
            fprintf(stderr, "gyre-bench: cannot write %s\n", json_path);
            status = 1;
        }
        if (f != NULL && fclose(f) != 0)
            status = 1;
        cJSON_free(text);
        if (status == 0)
            printf("\nwrote %s\n", json_path);
    }
    cJSON_Delete(b.root);
    return status;
}
