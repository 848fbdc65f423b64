/* `gyre validate`: parse and validate scene files, print every error. Also the scene loading
 * helpers `gyre run` shares. */
#include <string.h>

#include "cli.h"

void gy_cli_validate_usage(FILE *out)
{
    fputs("usage: gyre validate SCENE.json...\n"
          "\n"
          "Parses and validates each scene file, including the OBJ files it names. Prints\n"
          "`FILE: ok` for a valid file and every error of an invalid one as\n"
          "`FILE: path: message` (path is the JSON path, e.g. entities[3].components.physics.mass),\n"
          "all on stderr.\n"
          "\n"
          "options:\n"
          "  -h, --help   this help\n"
          "\n"
          "exit codes: 0 every file is valid; 2 a file is invalid or unreadable, or a usage error\n",
          out);
}

/* True when an error's path already names the file (file-level problems: unreadable, malformed
 * JSON with line:column). */
static bool names_file(const char *path, const char *file)
{
    size_t n = strlen(file);
    return strncmp(path, file, n) == 0 && (path[n] == '\0' || path[n] == ':');
}

void gy_cli_print_scene_errors(FILE *out, const char *file, const gy_scene_errors *errors)
{
    for (uint32_t i = 0; i < errors->count; i++) {
        const gy_scene_error *e = &errors->items[i];
        if (names_file(e->path, file))
            fprintf(out, "%s: %s\n", e->path, e->message);
        else
            fprintf(out, "%s: %s: %s\n", file, e->path, e->message);
    }
    if (errors->total > errors->count)
        fprintf(out, "%s: ... and %u more errors not shown\n", file,
                errors->total - errors->count);
}

gy_scene *gy_cli_load_scene(const char *path)
{
    gy_scene *scene = NULL;
    gy_scene_errors *errors = NULL;
    gy_result r = gy_scene_load_file(path, NULL, &scene, &errors);
    if (r == GY_OK)
        return scene;
    if (errors != NULL && errors->count > 0)
        gy_cli_print_scene_errors(stderr, path, errors);
    else
        fprintf(stderr, "%s: %s\n", path, gy_result_message(r));
    gy_scene_errors_free(errors);
    return NULL;
}

int gy_cli_validate_main(int argc, char **argv)
{
    /* Options first (all of them, so `--help` anywhere wins), then the files. */
    int first_file = argc;
    bool options_done = false;
    int files = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!options_done && strcmp(a, "--") == 0) {
            options_done = true;
            continue;
        }
        if (!options_done && (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)) {
            gy_cli_validate_usage(stdout);
            return GY_CLI_EXIT_OK;
        }
        if (!options_done && a[0] == '-' && a[1] != '\0') {
            static const char *const names[] = {"--format", "--help"};
            return gy_cli_unknown("gyre validate", "option", a, names,
                                  sizeof names / sizeof names[0]);
        }
        if (files++ == 0)
            first_file = i;
    }
    if (files == 0) {
        fputs("gyre validate: no scene file given; see 'gyre validate --help'\n", stderr);
        return GY_CLI_EXIT_USAGE;
    }
    int status = GY_CLI_EXIT_OK;
    options_done = false;
    for (int i = first_file; i < argc; i++) {
        if (!options_done && strcmp(argv[i], "--") == 0) {
            options_done = true;
            continue;
        }
        gy_scene *scene = gy_cli_load_scene(argv[i]);
        if (scene == NULL) {
            status = GY_CLI_EXIT_USAGE;
            continue;
        }
        fprintf(stderr, "%s: ok\n", argv[i]);
        gy_scene_free(scene);
    }
    return status;
}
