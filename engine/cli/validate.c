/* `gyre validate`: parse and validate scene files, print every error with its file, line, column
 * and JSON path, as text for people or one JSON document for programs. Also the scene loading
 * helpers `gyre run` shares. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "gyre/backend/backend.h"
#include "json_locate.h"

void gy_cli_validate_usage(FILE *out)
{
    fputs(
        "usage: gyre validate [--format text|json] SCENE.json...\n"
        "\n"
        "Parses and validates each scene file, the OBJ files it names and the scenes it spawns,\n"
        "and checks what `gyre run` would refuse (its physics.backend must be an adapter of\n"
        "this build). Every error is one line, `FILE:LINE:COLUMN: error: PATH: MESSAGE`, where\n"
        "PATH is the JSON path of the value (e.g. entities[3].components.physics.mass) and\n"
        "LINE:COLUMN where that value starts; a valid file prints `FILE: ok`. All on stderr.\n"
        "\n"
        "options:\n"
        "  --format json  one JSON document on stdout instead: `errors` (file, line, column,\n"
        "                 path, message) and `files` (file, valid, errors)\n"
        "  -h, --help     this help\n"
        "\n"
        "exit codes: 0 every file is valid; 2 a file is invalid or unreadable, or a usage error\n",
        out);
}

/* ---- where errors go ------------------------------------------------------------------------- */

/* Text lines on `out`, or the entries of the JSON document's "errors" array. */
typedef struct sink {
    FILE *out;
    bool json;
    uint32_t written; /* errors so far */
} sink;

/* One error. `line` 0: no position (the file could not be read). `path` "": the file itself. */
static void emit(sink *s, const char *file, uint32_t line, uint32_t column, const char *path,
                 const char *message)
{
    bool first = s->written++ == 0;
    if (s->json) {
        fputs(first ? "\n    " : ",\n    ", s->out);
        fputs("{ \"file\": ", s->out);
        gy_cli_json_string(s->out, file);
        if (line > 0)
            fprintf(s->out, ", \"line\": %u, \"column\": %u, \"path\": ", line, column);
        else
            fputs(", \"line\": null, \"column\": null, \"path\": ", s->out);
        gy_cli_json_string(s->out, path);
        fputs(", \"message\": ", s->out);
        gy_cli_json_string(s->out, message);
        fputs(" }", s->out);
        return;
    }
    if (line > 0)
        fprintf(s->out, "%s:%u:%u: error: ", file, line, column);
    else
        fprintf(s->out, "%s: error: ", file);
    if (path[0] != '\0')
        fprintf(s->out, "%s: ", path);
    fprintf(s->out, "%s\n", message);
}

/* The scene file's text, for the positions. NULL when it cannot be read (its error says why). */
typedef struct source {
    char *text;
    size_t size;
    gy_cli_json_locator locator;
} source;

static source source_read(const char *file)
{
    source src = {.text = NULL, .size = 0};
    struct stat st;
    /* A file the loader refused for its size is not read again just to find positions. */
    if (stat(file, &st) == 0 && S_ISREG(st.st_mode) &&
        (uint64_t)st.st_size <= GY_SCENE_MAX_FILE_BYTES)
        src.text = gy_cli_read_text(file, &src.size);
    if (src.text != NULL)
        gy_cli_json_locator_init(&src.locator, src.text, src.size);
    return src;
}

static void source_free(source *src)
{
    gy_cli_free_text(src->text, src->size);
    src->text = NULL;
}

/* An error at a JSON path of `file`, placed where its value (or the nearest enclosing value that
 * exists) starts. */
static void emit_at_path(sink *s, const char *file, source *src, const char *path,
                         const char *message)
{
    gy_cli_location loc = {0, 0, false};
    if (src->text == NULL || !gy_cli_json_locator_find(&src->locator, path, &loc))
        loc.line = loc.column = 0;
    emit(s, file, loc.line, loc.column, strcmp(path, "(root)") == 0 ? "" : path, message);
}

/* Parses "LINE:COLUMN" (all of `s`). */
static bool parse_line_column(const char *s, uint32_t *line, uint32_t *column)
{
    char *end = NULL;
    unsigned long l = strtoul(s, &end, 10);
    if (end == s || *end != ':')
        return false;
    const char *c = end + 1;
    unsigned long k = strtoul(c, &end, 10);
    if (end == c || *end != '\0' || l == 0 || k == 0 || l > UINT32_MAX || k > UINT32_MAX)
        return false;
    *line = (uint32_t)l;
    *column = (uint32_t)k;
    return true;
}

static void emit_scene_errors(sink *s, const char *file, source *src, const gy_scene_errors *errors)
{
    size_t n = strlen(file);
    for (uint32_t i = 0; i < errors->count; i++) {
        const gy_scene_error *e = &errors->items[i];
        /* Problems with the file itself: its name as the path, `:LINE:COLUMN` when known. */
        uint32_t line = 0, column = 0;
        if (strncmp(e->path, file, n) == 0 && e->path[n] == '\0') {
            if (src->text != NULL && src->size > 0)
                line = column = 1;
            emit(s, file, line, column, "", e->message);
        } else if (strncmp(e->path, file, n) == 0 && e->path[n] == ':' &&
                   parse_line_column(e->path + n + 1, &line, &column)) {
            emit(s, file, line, column, "", e->message);
        } else {
            emit_at_path(s, file, src, e->path, e->message);
        }
    }
    if (errors->total > errors->count) {
        char msg[96];
        snprintf(msg, sizeof msg, "... and %u more errors not shown",
                 errors->total - errors->count);
        emit(s, file, 0, 0, "", msg);
    }
}

void gy_cli_print_scene_errors(FILE *out, const char *file, const gy_scene_errors *errors)
{
    sink s = {out, false, 0};
    source src = source_read(file);
    emit_scene_errors(&s, file, &src, errors);
    source_free(&src);
}

void gy_cli_print_error_at(FILE *out, const char *file, const char *path, const char *message)
{
    sink s = {out, false, 0};
    source src = source_read(file);
    emit_at_path(&s, file, &src, path, message);
    source_free(&src);
}

void gy_cli_print_refused(FILE *out, const char *file, const gy_scene *scene, int32_t entity,
                          gy_result r)
{
    char path[32], msg[512];
    if (entity < 0 || (uint32_t)entity >= scene->entity_count) {
        snprintf(msg, sizeof msg, "could not be loaded into the World: %s", gy_result_message(r));
        gy_cli_print_error_at(out, file, "(root)", msg);
        return;
    }
    snprintf(path, sizeof path, "entities[%d]", entity);
    snprintf(msg, sizeof msg, "the World refused '%.200s': %s", scene->entities[entity].name,
             gy_result_message(r));
    gy_cli_print_error_at(out, file, path, msg);
}

/* Loads a scene file (its OBJ files through `cache` when non-NULL); on failure its errors go to
 * `s` and the result is NULL. */
static gy_scene *load_scene(sink *s, const char *path, gy_obj_cache *cache)
{
    gy_scene *scene = NULL;
    gy_scene_errors *errors = NULL;
    gy_result r = gy_scene_load_file_cached(path, cache, NULL, &scene, &errors);
    if (r == GY_OK)
        return scene;
    if (errors != NULL && errors->count > 0) {
        source src = source_read(path);
        emit_scene_errors(s, path, &src, errors);
        source_free(&src);
    } else {
        emit(s, path, 0, 0, "", gy_result_message(r));
    }
    gy_scene_errors_free(errors);
    return NULL;
}

gy_scene *gy_cli_load_scene(const char *path)
{
    return gy_cli_load_scene_cached(path, NULL);
}

gy_scene *gy_cli_load_scene_cached(const char *path, gy_obj_cache *cache)
{
    sink s = {stderr, false, 0};
    return load_scene(&s, path, cache);
}

/* ---- what `gyre run` would refuse beyond the loader ------------------------------------------ */

typedef struct file_result {
    const char *file;
    uint32_t errors;
} file_result;

/* One `gyre validate` command: where errors go, the files checked so far (by real path: a scene
 * may spawn itself, or two scenes the same one, and each is checked once) and their results. */
typedef struct validation {
    sink out;
    char **seen;
    uint32_t seen_count, seen_capacity;
    file_result *results; /* files in the order checked, spawned ones after their spawner */
    uint32_t result_count, result_capacity;
    bool oom;
} validation;

/* True when `path` was not checked before (and remembers it); also true when it cannot be
 * resolved (the load then reports why). */
static bool first_visit(validation *V, const char *path)
{
    char *real = realpath(path, NULL);
    if (real == NULL)
        return true;
    for (uint32_t i = 0; i < V->seen_count; i++) {
        if (strcmp(V->seen[i], real) == 0) {
            free(real);
            return false;
        }
    }
    if (V->seen_count == V->seen_capacity) {
        uint32_t cap = V->seen_capacity ? V->seen_capacity * 2u : 8u;
        char **p = realloc(V->seen, cap * sizeof *p);
        if (p == NULL) {
            free(real);
            V->oom = true;
            return true;
        }
        V->seen = p;
        V->seen_capacity = cap;
    }
    V->seen[V->seen_count++] = real;
    return true;
}

/* A slot for `file`'s result; UINT32_MAX when out of memory. */
static uint32_t add_result(validation *V, const char *file)
{
    if (V->result_count == V->result_capacity) {
        uint32_t cap = V->result_capacity ? V->result_capacity * 2u : 8u;
        file_result *r = realloc(V->results, cap * sizeof *r);
        if (r == NULL) {
            V->oom = true;
            return UINT32_MAX;
        }
        V->results = r;
        V->result_capacity = cap;
    }
    V->results[V->result_count] = (file_result){file, 0};
    return V->result_count++;
}

/* The adapter names compiled in, as "ode, bullet". */
static void backend_names(char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < gy_backend_count() && n < size; i++) {
        int w = snprintf(buf + n, size - n, "%s%s", i ? ", " : "", gy_backend_at(i)->name);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

static uint32_t validate_file(validation *V, const char *file);

/* The text of `file`, read on first use. */
static source *lazy_source(source *src, bool *have, const char *file)
{
    if (!*have) {
        *src = source_read(file);
        *have = true;
    }
    return src;
}

/* What the loader accepts but `gyre run` would still refuse, short of running: an adapter this
 * build does not have, a spawned scene that does not validate. Returns the errors found. */
static uint32_t check_scene(validation *V, const char *file, const gy_scene *scene)
{
    uint32_t found = 0;
    source src = {.text = NULL, .size = 0};
    bool have = false;
    const char *backend = scene->world.backend;
    if (backend != NULL && gy_backend_find(backend) == NULL) {
        char names[256], msg[512];
        backend_names(names, sizeof names);
        snprintf(msg, sizeof msg,
                 "no adapter named \"%.100s\" in this build (it has: %s); `gyre run` refuses it "
                 "unless --backend names another",
                 backend, names);
        emit_at_path(&V->out, file, lazy_source(&src, &have, file), "physics.backend", msg);
        found++;
    }
    for (uint32_t i = 0; i < scene->action_count; i++) {
        const gy_scene_action *a = &scene->actions[i];
        if (a->type != GY_SCENE_ACTION_SPAWN || !first_visit(V, a->spawn.scene))
            continue;
        if (validate_file(V, a->spawn.scene) == 0)
            continue;
        char path[64], msg[512];
        snprintf(path, sizeof path, "script[%u].scene", a->index);
        snprintf(msg, sizeof msg,
                 "the spawned scene \"%.400s\" is not valid (its errors are listed under its "
                 "name): `gyre run` would end there",
                 a->spawn.scene);
        emit_at_path(&V->out, file, lazy_source(&src, &have, file), path, msg);
        found++;
    }
    if (have)
        source_free(&src);
    return found;
}

/* Validates one file and, through its `spawn` actions, the scenes it spawns. Returns the number
 * of errors in `file` itself. */
static uint32_t validate_file(validation *V, const char *file)
{
    uint32_t slot = add_result(V, file);
    uint32_t before = V->out.written;
    gy_scene *scene = load_scene(&V->out, file, NULL);
    uint32_t errors = V->out.written - before;
    if (scene != NULL) {
        errors = check_scene(V, file, scene);
        gy_scene_free(scene);
    }
    if (slot != UINT32_MAX)
        V->results[slot].errors = errors;
    if (errors == 0 && !V->out.json)
        fprintf(V->out.out, "%s: ok\n", file);
    return errors;
}

/* ---- the subcommand -------------------------------------------------------------------------- */

int gy_cli_validate_main(int argc, char **argv)
{
    /* Options first (all of them, so `--help` anywhere wins), then the files. */
    bool options_done = false, json = false;
    int files = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        if (!options_done && strcmp(a, "--") == 0) {
            options_done = true;
            continue;
        }
        if (!options_done && (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)) {
            gy_cli_validate_usage(stdout);
            return GY_CLI_EXIT_OK;
        }
        if (!options_done && gy_cli_option_value(argc, argv, &i, "--format", &v)) {
            if (v == NULL || (strcmp(v, "text") != 0 && strcmp(v, "json") != 0)) {
                fprintf(stderr,
                        "gyre validate: --format needs text or json (got '%s'); see 'gyre "
                        "validate --help'\n",
                        v != NULL ? v : "");
                return GY_CLI_EXIT_USAGE;
            }
            json = strcmp(v, "json") == 0;
            continue;
        }
        if (!options_done && a[0] == '-' && a[1] != '\0') {
            static const char *const names[] = {"--format", "--help"};
            return gy_cli_unknown("gyre validate", "option", a, names,
                                  sizeof names / sizeof names[0]);
        }
        files++;
    }
    if (files == 0) {
        fputs("gyre validate: no scene file given; see 'gyre validate --help'\n", stderr);
        return GY_CLI_EXIT_USAGE;
    }

    validation V;
    memset(&V, 0, sizeof V);
    V.out = (sink){json ? stdout : stderr, json, 0};
    if (json)
        fputs("{\n  \"errors\": [", stdout);
    int status = GY_CLI_EXIT_OK;
    options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *value = NULL;
        if (!options_done && strcmp(a, "--") == 0) {
            options_done = true;
            continue;
        }
        if (!options_done && gy_cli_option_value(argc, argv, &i, "--format", &value))
            continue;
        (void)first_visit(&V, a);
        if (validate_file(&V, a) > 0)
            status = GY_CLI_EXIT_USAGE;
    }
    if (json) {
        fputs(V.out.written ? "\n  ],\n  \"files\": [" : "],\n  \"files\": [", stdout);
        for (uint32_t i = 0; i < V.result_count; i++) {
            fputs(i ? ",\n    { \"file\": " : "\n    { \"file\": ", stdout);
            gy_cli_json_string(stdout, V.results[i].file);
            fprintf(stdout, ", \"valid\": %s, \"errors\": %u }",
                    V.results[i].errors == 0 ? "true" : "false", V.results[i].errors);
        }
        fputs(V.result_count ? "\n  ]\n}\n" : "]\n}\n", stdout);
    }
    if (V.oom) {
        fputs("gyre validate: out of memory (some files may not be listed)\n", stderr);
        status = GY_CLI_EXIT_FAILED;
    }
    for (uint32_t i = 0; i < V.seen_count; i++)
        free(V.seen[i]);
    free(V.seen);
    free(V.results);
    return status;
}
