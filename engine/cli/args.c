/* Command-line argument helpers shared by the subcommands. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

bool gy_cli_option_value(int argc, char **argv, int *i, const char *name, const char **value)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) != 0)
        return false;
    if (a[n] == '=') {
        *value = a + n + 1;
        return true;
    }
    if (a[n] != '\0')
        return false;
    *value = *i + 1 < argc ? argv[++*i] : NULL;
    return true;
}

bool gy_cli_parse_number(const char *v, double lo, double hi, double *out)
{
    if (v == NULL || *v == '\0')
        return false;
    char *end = NULL;
    errno = 0;
    double d = strtod(v, &end);
    if (*end != '\0' || errno == ERANGE || !isfinite(d) || d < lo || d > hi)
        return false;
    *out = d;
    return true;
}

gy_cli_arg gy_cli_common_arg(const char *a, bool *options_done, const char **scene_path)
{
    if (*options_done || a[0] != '-' || a[1] == '\0') {
        if (*scene_path != NULL)
            return GY_CLI_ARG_SECOND_SCENE;
        *scene_path = a;
        return GY_CLI_ARG_TAKEN;
    }
    if (strcmp(a, "--") == 0) {
        *options_done = true;
        return GY_CLI_ARG_TAKEN;
    }
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
        return GY_CLI_ARG_HELP;
    return GY_CLI_ARG_OPTION;
}

/* Optimal string alignment distance (edits: insert, delete, substitute, swap two neighbours),
 * or a number above `limit` once the distance is known to exceed it. */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb, size_t limit)
{
    enum { MAX_LEN = 64 };
    if (la > MAX_LEN || lb > MAX_LEN)
        return limit + 1u;
    size_t d[MAX_LEN + 1][MAX_LEN + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0u : 1u;
            size_t best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1u < best)
                best = d[i - 1][j] + 1u;
            if (d[i][j - 1] + 1u < best)
                best = d[i][j - 1] + 1u;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1u < best)
                best = d[i - 2][j - 2] + 1u;
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

const char *gy_cli_nearest(const char *word, const char *const *candidates, size_t count)
{
    size_t lw = strcspn(word, "=");
    const char *best = NULL, *prefix_of = NULL;
    size_t best_d = SIZE_MAX, prefixes = 0;
    for (size_t k = 0; k < count; k++) {
        const char *c = candidates[k];
        size_t lc = strlen(c);
        /* A typo is a few edits, fewer for a short word: "rn" for run, "--reprot" for --report
         * (the leading dashes do not make a word longer). */
        size_t limit = (lc - strspn(c, "-") + 1u) / 3u;
        size_t d = edit_distance(word, lw, c, lc, limit);
        if (d <= limit && d < best_d) {
            best = c;
            best_d = d;
        }
        /* An abbreviation: "--rep" for --report, when it abbreviates only one option. */
        size_t dashes = strspn(word, "-");
        if (lw >= dashes + 3u && lw < lc && strncmp(word, c, lw) == 0) {
            prefix_of = c;
            prefixes++;
        }
    }
    if (prefixes == 1)
        return prefix_of;
    return best;
}

int gy_cli_unknown(const char *command, const char *what, const char *word,
                   const char *const *candidates, size_t count)
{
    const char *near = gy_cli_nearest(word, candidates, count);
    fprintf(stderr, "%s: unknown %s '%s'", command, what, word);
    if (near != NULL)
        fprintf(stderr, " (did you mean %s?)", near);
    fprintf(stderr, "; see '%s --help'\n", command);
    return GY_CLI_EXIT_USAGE;
}

char *gy_cli_read_text(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *text = NULL;
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        text = gy_alloc(gy_default_allocator(), (size_t)len + 1u);
        if (text != NULL && fread(text, 1, (size_t)len, f) != (size_t)len) {
            gy_free(gy_default_allocator(), text, (size_t)len + 1u);
            text = NULL;
        }
    }
    fclose(f);
    if (text == NULL)
        return NULL;
    text[len] = '\0';
    *size = (size_t)len;
    return text;
}

void gy_cli_free_text(char *text, size_t size)
{
    if (text != NULL)
        gy_free(gy_default_allocator(), text, size + 1u);
}
