/* `gyre`: subcommand dispatch, top-level help and version. */
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "conform.h"
#include "gyre/backend/backend.h"
#include "soak.h"

#ifndef GYRE_VERSION
#define GYRE_VERSION "unknown"
#endif

static void usage(FILE *out)
{
    fputs("usage: gyre <command> [options]\n"
          "\n"
          "Runs Gyre physics scenes (gyre.scene JSON files) headless.\n"
          "\n"
          "commands:\n"
          "  run SCENE.json          load a scene, simulate it, check its script, write a report\n"
          "  replay CAPTURE          run a capture (gyre run --capture) again; --verify compares\n"
          "  validate SCENE.json...  check scene files (and the OBJ files they name)\n"
          "  conform SCENE.json      run a scene on two middleware adapters and compare\n"
          "  soak SCENE.json         stream cells in and out in real time; barrier, step, memory\n"
          "\n"
          "options:\n"
          "  -h, --help     this help; `gyre <command> --help` for a command's options\n"
          "  --version      print the version, the adapters and their middleware versions\n"
          "\n"
          "exit codes: 0 ran and every expect held; 1 an expect failed or a runtime fault;\n"
          "            2 usage error, unreadable file or invalid scene\n",
          out);
}

/* The version, then what a bug report needs besides it: each adapter compiled in with the
 * middleware version it was built against, and the JSON parser's. */
static void version(FILE *out)
{
    fprintf(out, "gyre %s\nadapters:\n", GYRE_VERSION);
    for (uint32_t i = 0; i < gy_backend_count(); i++) {
        const gy_backend *b = gy_backend_at(i);
        fprintf(out, "  %-8s %s\n", b->name, b->middleware != NULL ? b->middleware : "?");
    }
    fprintf(out, "scene parser: cJSON %s\n", cJSON_Version());
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return GY_CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        if (argc > 2 && strcmp(cmd, "help") == 0) {
            if (strcmp(argv[2], "run") == 0) {
                gy_cli_run_usage(stdout);
                return GY_CLI_EXIT_OK;
            }
            if (strcmp(argv[2], "replay") == 0) {
                gy_cli_replay_usage(stdout);
                return GY_CLI_EXIT_OK;
            }
            if (strcmp(argv[2], "validate") == 0) {
                gy_cli_validate_usage(stdout);
                return GY_CLI_EXIT_OK;
            }
        }
        usage(stdout);
        return GY_CLI_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        version(stdout);
        return GY_CLI_EXIT_OK;
    }
    if (strcmp(cmd, "run") == 0)
        return gy_cli_run_main(argc - 1, argv + 1);
    if (strcmp(cmd, "replay") == 0)
        return gy_cli_replay_main(argc - 1, argv + 1);
    if (strcmp(cmd, "validate") == 0)
        return gy_cli_validate_main(argc - 1, argv + 1);
    if (strcmp(cmd, "conform") == 0)
        return gy_cli_conform_main(argc - 1, argv + 1);
    if (strcmp(cmd, "soak") == 0)
        return gy_cli_soak_main(argc - 1, argv + 1);
    static const char *const words[] = {"run",  "replay", "validate",  "conform",
                                        "soak", "--help", "--version", "help"};
    size_t count = sizeof words / sizeof words[0];
    /* `gyre --report x`: an option of `gyre run` given before any command. */
    const char *run_option = gy_cli_run_nearest_option(cmd);
    if (cmd[0] == '-' && gy_cli_nearest(cmd, words, count) == NULL && run_option != NULL) {
        fprintf(stderr,
                "gyre: unknown option '%s' (did you mean gyre run SCENE.json %s?); see 'gyre "
                "--help'\n",
                cmd, run_option);
        return GY_CLI_EXIT_USAGE;
    }
    return gy_cli_unknown("gyre", cmd[0] == '-' ? "option" : "command", cmd, words, count);
}
