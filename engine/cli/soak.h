/* `gyre soak` (docs/cli.md, engine/cli/soak.c): the real-time streaming soak. Runs on the
 * program's main thread, which is the World's game thread; the physics thread is the World's. */
#ifndef GY_CLI_SOAK_H
#define GY_CLI_SOAK_H

#include <stdio.h>

/* The subcommand; argv[0] is "soak". Returns the exit code (0 every gate held, 1 a gate failed
 * or the run failed — watchdog, leak, runtime fault — 2 usage error or unreadable/invalid scene).
 */
int gy_cli_soak_main(int argc, char **argv);

/* Its usage text. */
void gy_cli_soak_usage(FILE *out);

#endif /* GY_CLI_SOAK_H */
