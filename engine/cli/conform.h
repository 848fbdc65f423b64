/* `gyre conform` (docs/cli.md, engine/cli/conform.c): one scene on two middleware adapters,
 * compared. Runs on the program's main thread, which is each run's game thread. */
#ifndef GY_CLI_CONFORM_H
#define GY_CLI_CONFORM_H

#include <stdio.h>

/* The subcommand; argv[0] is "conform". Returns the exit code (0 both runs held every expect and
 * no gate was exceeded; 1 a run failed — an expect, a spawn, a runtime fault — or a gate was
 * exceeded; 2 usage error, unknown adapter, unreadable or invalid scene). */
int gy_cli_conform_main(int argc, char **argv);

/* Its usage text. */
void gy_cli_conform_usage(FILE *out);

#endif /* GY_CLI_CONFORM_H */
