/* Command-line argument helpers shared by the subcommands. */
#include <errno.h>
#include <math.h>
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
