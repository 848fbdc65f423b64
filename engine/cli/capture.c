/* `gyre run --capture FILE` and `gyre replay FILE [--verify]`: the capture holds the scene and
 * every file it loaded (named by absolute path), the run's options and the World's capture
 * stream. A replay unpacks the files into a private temporary folder, runs the same scene in
 * lockstep with the recorded batches, and with --verify compares every tick's state hash. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cJSON.h"
#include "cli.h"
#include "gyre/capture.h"
#include "gyre/physics/commands.h"

#define MAX_FILES       256u
#define MAX_SPAWN_DEPTH 8u
#define PATH_BYTES      4096u

/* ---- the files a scene loads ----------------------------------------------------------------- */

typedef struct file_list {
    gy_capture_attachment items[MAX_FILES];
    char *names[MAX_FILES];
    char *texts[MAX_FILES];
    size_t sizes[MAX_FILES];
    uint32_t count;
} file_list;

/* `path` made absolute (against the working folder) with "." and ".." resolved by name. */
static bool absolute_path(const char *path, char *out, size_t size)
{
    char joined[PATH_BYTES];
    if (path[0] == '/') {
        if (snprintf(joined, sizeof joined, "%s", path) >= (int)sizeof joined)
            return false;
    } else {
        char cwd[PATH_BYTES];
        if (getcwd(cwd, sizeof cwd) == NULL ||
            snprintf(joined, sizeof joined, "%s/%s", cwd, path) >= (int)sizeof joined)
            return false;
    }
    size_t n = 0;
    out[0] = '\0';
    for (char *save = NULL, *part = strtok_r(joined, "/", &save); part != NULL;
         part = strtok_r(NULL, "/", &save)) {
        if (strcmp(part, ".") == 0)
            continue;
        if (strcmp(part, "..") == 0) {
            while (n > 0 && out[n - 1] != '/')
                n--;
            if (n > 0)
                n--;
            out[n] = '\0';
            continue;
        }
        size_t len = strlen(part);
        if (n + 1 + len + 1 > size)
            return false;
        out[n++] = '/';
        memcpy(out + n, part, len + 1);
        n += len;
    }
    if (n == 0) {
        if (size < 2)
            return false;
        out[0] = '/', out[1] = '\0';
    }
    return true;
}

static void files_free(file_list *l)
{
    for (uint32_t i = 0; i < l->count; i++) {
        free(l->names[i]);
        gy_cli_free_text(l->texts[i], l->sizes[i]);
    }
    l->count = 0;
}

/* Adds a file (once). False with a message when it cannot be read or named. */
static bool files_add(file_list *l, const char *path, uint32_t role)
{
    char abs[PATH_BYTES];
    if (!absolute_path(path, abs, sizeof abs)) {
        fprintf(stderr, "gyre run: --capture: cannot name '%s' by an absolute path\n", path);
        return false;
    }
    for (uint32_t i = 0; i < l->count; i++)
        if (strcmp(l->names[i], abs) == 0)
            return true;
    if (l->count == MAX_FILES) {
        fprintf(stderr, "gyre run: --capture: the scene loads more than %u files\n", MAX_FILES);
        return false;
    }
    size_t size = 0;
    char *text = gy_cli_read_text(path, &size);
    char *name = strdup(abs);
    if (text == NULL || name == NULL) {
        fprintf(stderr, "gyre run: --capture: cannot read '%s': %s\n", path, strerror(errno));
        gy_cli_free_text(text, size);
        free(name);
        return false;
    }
    uint32_t i = l->count++;
    l->names[i] = name;
    l->texts[i] = text;
    l->sizes[i] = size;
    l->items[i] = (gy_capture_attachment){role, name, text, size};
    return true;
}

/* The OBJ files and spawned scenes (and theirs) a scene names. */
static bool files_of_scene(file_list *l, const gy_scene *s, uint32_t depth)
{
    for (uint32_t i = 0; i < s->entity_count; i++) {
        const gy_scene_physics *ph = s->entities[i].physics;
        for (uint32_t k = 0; ph != NULL && k < ph->collider_count; k++)
            if (ph->colliders[k].collision != NULL &&
                !files_add(l, ph->colliders[k].collision, GY_CAPTURE_FILE_DATA))
                return false;
    }
    for (uint32_t i = 0; i < s->action_count; i++) {
        const gy_scene_action *a = &s->actions[i];
        if (a->type != GY_SCENE_ACTION_SPAWN || a->spawn.scene == NULL)
            continue;
        uint32_t before = l->count;
        if (!files_add(l, a->spawn.scene, GY_CAPTURE_FILE_DATA))
            return false;
        if (l->count == before || depth >= MAX_SPAWN_DEPTH)
            continue; /* seen already (or deep enough: a spawn cycle) */
        gy_scene *sub = NULL;
        if (gy_scene_load_file(a->spawn.scene, NULL, &sub, NULL) == GY_OK) {
            bool ok = files_of_scene(l, sub, depth + 1u);
            gy_scene_free(sub);
            if (!ok)
                return false;
        }
    }
    return true;
}

/* ---- writing --------------------------------------------------------------------------------- */

static gy_result write_file(void *ctx, const void *bytes, size_t size)
{
    FILE *f = ctx;
    return fwrite(bytes, 1, size, f) == size ? GY_OK : GY_ERR_IO;
}

int gy_cli_capture_begin(gy_cli_runner *R, gy_cli_output *out)
{
    file_list *l = calloc(1, sizeof *l);
    if (l == NULL)
        return GY_CLI_EXIT_FAILED;
    int status = GY_CLI_EXIT_OK;
    char note[256];
    snprintf(note, sizeof note, "{\"seconds\": %.17g, \"strict\": %s}", R->opt.seconds,
             R->opt.strict ? "true" : "false");
    if (!files_add(l, R->opt.scene_path, GY_CAPTURE_FILE_SCENE) || !files_of_scene(l, R->scene, 0))
        status = GY_CLI_EXIT_USAGE;
    if (status == GY_CLI_EXIT_OK && l->count < MAX_FILES) {
        l->items[l->count] =
            (gy_capture_attachment){GY_CAPTURE_FILE_NOTE, "gyre-run.json", note, strlen(note)};
        gy_world_capture_def d = gy_default_world_capture_def();
        d.write = write_file;
        d.write_ctx = out->f;
        d.files = l->items;
        d.file_count = l->count + 1u;
        gy_result r = gy_world_capture_begin(R->world, &d);
        if (r != GY_OK) {
            fprintf(stderr, "gyre run: --capture %s: cannot begin the capture: %s\n", out->path,
                    gy_result_message(r));
            status = GY_CLI_EXIT_FAILED;
        }
    }
    files_free(l);
    free(l);
    return status;
}

/* Real time: the run is over, but the physics thread would go on stepping until teardown. A hold
 * stops it; once it has acted on the hold no further tick can start, so the capture's end tick
 * is the last the run stepped and a replay can stop at the same place. */
static void settle_realtime(gy_cli_runner *R)
{
    gy_physics *p = gy_world_physics(R->world);
    gy_physics_stats before;
    gy_physics_get_stats(p, &before);
    gy_world_set_hold(R->world, true);
    for (int i = 0; i < 2000; i++) {
        gy_physics_stats now;
        gy_physics_get_stats(p, &now);
        if (now.rebases > before.rebases)
            return;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    fputs("gyre run: --capture: the physics thread did not take the hold within 2 s; the capture "
          "may end a tick later than the run\n",
          stderr);
}

int gy_cli_capture_end(gy_cli_runner *R, gy_cli_output *out)
{
    if (!gy_world_capturing(R->world))
        return GY_CLI_EXIT_OK;
    if (R->opt.realtime)
        settle_realtime(R);
    uint64_t overflow = 0;
    gy_result r = gy_world_capture_end(R->world, &overflow);
    if (r == GY_ERR_CAPACITY) {
        fprintf(stderr,
                "gyre run: --capture %s: the capture buffer overflowed at tick %llu; no capture "
                "written\n",
                out->path, (unsigned long long)(overflow - R->base_tick));
        return GY_CLI_EXIT_FAILED;
    }
    if (r != GY_OK) {
        fprintf(stderr, "gyre run: --capture %s: %s; no capture written\n", out->path,
                gy_result_message(r));
        return GY_CLI_EXIT_FAILED;
    }
    return GY_CLI_EXIT_OK;
}

/* ---- replay ---------------------------------------------------------------------------------- */

struct gy_cli_replay {
    const char *path; /* the capture file */
    gy_capture *cap;
    char dir[PATH_BYTES]; /* the temporary folder the files were unpacked into ("" none) */
    char scene_path[PATH_BYTES];
    bool verify;
    /* --verify: the replay's own stream, and where the comparison stands */
    unsigned char *stream;
    size_t stream_size, stream_capacity, scanned;
    uint32_t next_state;
    uint64_t compared;
    bool mismatch;
    uint64_t bad_tick;
    uint32_t bad_store, bad_generation;
    const char *bad_what;
};

static gy_result write_memory(void *ctx, const void *bytes, size_t size)
{
    gy_cli_replay *rp = ctx;
    if (rp->stream_capacity - rp->stream_size < size) {
        size_t cap = rp->stream_capacity ? rp->stream_capacity : 1u << 16;
        while (cap - rp->stream_size < size)
            cap *= 2u;
        unsigned char *n = realloc(rp->stream, cap);
        if (n == NULL)
            return GY_ERR_OUT_OF_MEMORY;
        rp->stream = n;
        rp->stream_capacity = cap;
    }
    memcpy(rp->stream + rp->stream_size, bytes, size);
    rp->stream_size += size;
    return GY_OK;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static void replay_free(gy_cli_replay *rp)
{
    if (rp == NULL)
        return;
    if (rp->dir[0] != '\0')
        nftw(rp->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    gy_capture_free(rp->cap);
    free(rp->stream);
    free(rp);
}

/* A stored name must be an absolute path that stays inside the folder it is unpacked into. */
static bool safe_name(const gy_capture_file_view *f)
{
    if (f->name_size < 2 || f->name_size >= PATH_BYTES - 64 || f->name[0] != '/' ||
        memchr(f->name, 0, f->name_size) != NULL || f->name[f->name_size - 1] == '/')
        return false;
    for (size_t i = 0; i < f->name_size; i++) {
        if (f->name[i] != '/')
            continue;
        size_t rest = f->name_size - i - 1;
        const char *p = f->name + i + 1;
        if ((rest >= 1 && p[0] == '/') || (rest == 1 && p[0] == '.') ||
            (rest >= 2 && p[0] == '.' && p[1] == '/') ||
            (rest == 2 && p[0] == '.' && p[1] == '.') ||
            (rest >= 3 && p[0] == '.' && p[1] == '.' && p[2] == '/'))
            return false;
    }
    return true;
}

static bool unpack(gy_cli_replay *rp)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(rp->dir, sizeof rp->dir, "%s/gyre-replay-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (mkdtemp(rp->dir) == NULL) {
        fprintf(stderr, "gyre replay: cannot create a temporary folder (%s): %s\n", rp->dir,
                strerror(errno));
        rp->dir[0] = '\0';
        return false;
    }
    bool have_scene = false;
    for (uint32_t i = 0; i < rp->cap->file_count; i++) {
        const gy_capture_file_view *f = &rp->cap->files[i];
        if (f->role == GY_CAPTURE_FILE_NOTE)
            continue;
        if (!safe_name(f)) {
            fprintf(stderr, "gyre replay: %s: stored file %u has an unsafe name\n", rp->path, i);
            return false;
        }
        char path[2 * PATH_BYTES];
        snprintf(path, sizeof path, "%s%.*s", rp->dir, (int)f->name_size, f->name);
        for (char *s = path + strlen(rp->dir) + 1; (s = strchr(s, '/')) != NULL; s++) {
            *s = '\0';
            if (mkdir(path, 0700) != 0 && errno != EEXIST) {
                fprintf(stderr, "gyre replay: cannot create %s: %s\n", path, strerror(errno));
                return false;
            }
            *s = '/';
        }
        FILE *out = fopen(path, "wb");
        bool ok = out != NULL && fwrite(f->data, 1, f->size, out) == f->size;
        if (out != NULL)
            ok = fclose(out) == 0 && ok;
        if (!ok) {
            fprintf(stderr, "gyre replay: cannot write %s: %s\n", path, strerror(errno));
            return false;
        }
        if (f->role == GY_CAPTURE_FILE_SCENE && !have_scene) {
            if ((size_t)snprintf(rp->scene_path, sizeof rp->scene_path, "%s", path) >=
                sizeof rp->scene_path) {
                fprintf(stderr, "gyre replay: %s: the scene's stored name is too long\n", rp->path);
                return false;
            }
            have_scene = true;
        }
    }
    if (!have_scene)
        fprintf(stderr, "gyre replay: %s: the capture holds no scene (not made by gyre run)\n",
                rp->path);
    return have_scene;
}

/* The run's options from the capture's note. */
static bool read_note(gy_cli_replay *rp, gy_cli_options *o)
{
    for (uint32_t i = 0; i < rp->cap->file_count; i++) {
        const gy_capture_file_view *f = &rp->cap->files[i];
        if (f->role != GY_CAPTURE_FILE_NOTE)
            continue;
        cJSON *j = cJSON_ParseWithLength((const char *)f->data, f->size);
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "seconds");
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "strict");
        bool ok = cJSON_IsNumber(s) && gy_is_finite(s->valuedouble) && s->valuedouble >= 0.0;
        if (ok) {
            o->seconds = s->valuedouble;
            o->strict = o->strict || cJSON_IsTrue(st);
        }
        cJSON_Delete(j);
        if (ok)
            return true;
    }
    fprintf(stderr, "gyre replay: %s: the capture holds no run options (not made by gyre run)\n",
            rp->path);
    return false;
}

void gy_cli_replay_usage(FILE *out)
{
    fputs("usage: gyre replay CAPTURE [options]\n"
          "\n"
          "Runs a capture made by 'gyre run --capture' again, in lockstep on the same adapter,\n"
          "applying every recorded command batch before the tick it was applied before in the\n"
          "run (a --realtime run too), and writes the same report, events and trace.\n"
          "\n"
          "options:\n"
          "  --verify          compare every tick's state hash with the capture's; a difference\n"
          "                    names the first tick and entity and exits 1\n"
          "  --report FILE     write the report JSON to FILE ('-' for stdout)\n"
          "  --events FILE     write every collision event as a JSON line to FILE\n"
          "  --trace FILE      write a per-tick CSV of every physics entity to FILE\n"
          "  --junit FILE      write the expects as JUnit XML to FILE\n"
          "  --html FILE       write a page a browser opens: the replay in 3D with a timeline\n"
          "  --quiet           no notes (warnings and failures still)\n"
          "  --strict          an expect the run ended before reaching fails the replay\n"
          "  -h, --help        this help\n"
          "\n"
          "exit codes: 0 replayed and every expect held (and, with --verify, every tick\n"
          "            matched); 1 an expect failed, a runtime fault or a verify mismatch;\n"
          "            2 usage error, or an unreadable, damaged or truncated capture\n",
          out);
}

static int replay_usage_error(const char *fmt, const char *arg)
{
    fputs("gyre replay: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("; see 'gyre replay --help'\n", stderr);
    return GY_CLI_EXIT_USAGE;
}

static const char *const k_replay_options[] = {"--verify", "--report", "--events",
                                               "--trace",  "--junit",  "--html",
                                               "--quiet",  "--strict", "--help"};

int gy_cli_replay_main(int argc, char **argv)
{
    gy_cli_runner R;
    memset(&R, 0, sizeof R);
    R.alloc = gy_default_allocator();
    gy_cli_options *o = &R.opt;
    bool options_done = false, verify = false;
    const char *capture_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        gy_cli_arg kind = gy_cli_common_arg(a, &options_done, &capture_path);
        if (kind == GY_CLI_ARG_SECOND_SCENE)
            return replay_usage_error("one capture file only (got a second one: '%s')", a);
        if (kind == GY_CLI_ARG_HELP) {
            gy_cli_replay_usage(stdout);
            return GY_CLI_EXIT_OK;
        }
        if (kind == GY_CLI_ARG_TAKEN)
            continue;
        if (strcmp(a, "--verify") == 0) {
            verify = true;
        } else if (strcmp(a, "--quiet") == 0) {
            o->quiet = true;
        } else if (strcmp(a, "--strict") == 0) {
            o->strict = true;
        } else if (gy_cli_option_value(argc, argv, &i, "--report", &v)) {
            if (v == NULL || v[0] == '\0')
                return replay_usage_error("%s needs a file name (or - for stdout)", "--report");
            o->report_path = v;
        } else if (gy_cli_option_value(argc, argv, &i, "--events", &v)) {
            if (v == NULL || v[0] == '\0')
                return replay_usage_error("%s needs a file name (or - for stdout)", "--events");
            o->events_path = v;
        } else if (gy_cli_option_value(argc, argv, &i, "--trace", &v)) {
            if (v == NULL || v[0] == '\0')
                return replay_usage_error("%s needs a file name (or - for stdout)", "--trace");
            o->trace_path = v;
        } else if (gy_cli_option_value(argc, argv, &i, "--junit", &v)) {
            if (v == NULL || v[0] == '\0')
                return replay_usage_error("%s needs a file name (or - for stdout)", "--junit");
            o->junit_path = v;
        } else if (gy_cli_option_value(argc, argv, &i, "--html", &v)) {
            if (v == NULL || v[0] == '\0')
                return replay_usage_error("%s needs a file name (or - for stdout)", "--html");
            o->html_path = v;
        } else {
            return gy_cli_unknown("gyre replay", "option", a, k_replay_options,
                                  sizeof k_replay_options / sizeof k_replay_options[0]);
        }
    }
    if (capture_path == NULL)
        return replay_usage_error("%s", "no capture file given");

    gy_cli_replay *rp = calloc(1, sizeof *rp);
    if (rp == NULL)
        return GY_CLI_EXIT_FAILED;
    rp->path = capture_path;
    rp->verify = verify;
    size_t size = 0;
    char *bytes = gy_cli_read_text(capture_path, &size);
    if (bytes == NULL) {
        fprintf(stderr, "gyre replay: cannot read %s: %s\n", capture_path, strerror(errno));
        replay_free(rp);
        return GY_CLI_EXIT_USAGE;
    }
    char why[256];
    gy_result r = gy_capture_read(bytes, size, NULL, &rp->cap, why, sizeof why);
    gy_cli_free_text(bytes, size);
    if (r != GY_OK) {
        fprintf(stderr, "gyre replay: %s: %s\n", capture_path, why[0] ? why : gy_result_message(r));
        replay_free(rp);
        return GY_CLI_EXIT_USAGE;
    }
    if (!unpack(rp) || !read_note(rp, o)) {
        replay_free(rp);
        return GY_CLI_EXIT_USAGE;
    }
    o->scene_path = rp->scene_path;
    o->backend = rp->cap->meta.backend;
    o->realtime = rp->cap->meta.realtime != 0;
    R.replay = rp;
    int status = gy_cli_execute(&R, "gyre replay");
    replay_free(rp);
    return status;
}

/* After set-up: replay mode, and for --verify the replay's own capture. */
int gy_cli_replay_begin(gy_cli_runner *R)
{
    gy_cli_replay *rp = R->replay;
    gy_result r = gy_world_replay_begin(R->world, rp->cap);
    if (r == GY_OK && rp->verify) {
        gy_world_capture_def d = gy_default_world_capture_def();
        d.write = write_memory;
        d.write_ctx = rp;
        r = gy_world_capture_begin(R->world, &d);
        rp->scanned = 64; /* the file header */
    }
    if (r != GY_OK) {
        fprintf(stderr, "gyre replay: %s: cannot replay (adapter %s, %u Hz): %s\n", rp->path,
                rp->cap->meta.backend, rp->cap->meta.step_hz, gy_result_message(r));
        return r == GY_ERR_UNSUPPORTED ? GY_CLI_EXIT_USAGE : GY_CLI_EXIT_FAILED;
    }
    /* The report names the capture. */
    R->opt.scene_path = rp->path;
    return GY_CLI_EXIT_OK;
}

static void mismatch(gy_cli_replay *rp, const gy_capture_state_view *want,
                     const gy_capture_state_view *got)
{
    rp->mismatch = true;
    rp->bad_tick = want->tick;
    rp->bad_store = UINT32_MAX;
    rp->bad_what = "the replay never reached this tick";
    if (got == NULL)
        return;
    uint32_t i = 0, k = 0;
    while (i < want->count || k < got->count) {
        const gy_capture_body *a = i < want->count ? &want->bodies[i] : NULL;
        const gy_capture_body *b = k < got->count ? &got->bodies[k] : NULL;
        if (a != NULL && b != NULL && a->body.index == b->body.index &&
            a->body.generation == b->body.generation) {
            if (a->hash != b->hash) {
                rp->bad_store = a->body.index, rp->bad_generation = a->body.generation;
                rp->bad_what = "its pose or velocity differs";
                return;
            }
            i++, k++;
            continue;
        }
        bool missing = b == NULL || (a != NULL && a->body.index <= b->body.index);
        const gy_capture_body *x = missing ? a : b;
        rp->bad_store = x->body.index, rp->bad_generation = x->body.generation;
        rp->bad_what = missing ? "its body is in the capture but not in the replay"
                               : "its body is in the replay but not in the capture";
        return;
    }
    rp->bad_what = "the state hash differs";
}

static void on_state(void *ctx, const gy_capture_state_view *s)
{
    gy_cli_replay *rp = ctx;
    if (rp->mismatch)
        return;
    const gy_capture *c = rp->cap;
    if (rp->next_state < c->state_count && c->states[rp->next_state].tick < s->tick) {
        mismatch(rp, &c->states[rp->next_state], NULL);
        return;
    }
    if (rp->next_state < c->state_count && c->states[rp->next_state].tick == s->tick) {
        const gy_capture_state_view *want = &c->states[rp->next_state++];
        rp->compared++;
        if (want->hash != s->hash || want->count != s->count)
            mismatch(rp, want, s);
    }
}

static const char *entity_at(const gy_cli_runner *R, uint32_t store, uint32_t generation)
{
    for (uint32_t i = 0; i < R->ent_count; i++) {
        gy_physics_state st;
        if (gy_body_get_state(R->world, R->ents[i].handle, &st) == GY_OK && st.ref.index == store &&
            (st.ref.generation == generation || st.ref.generation == 0))
            return R->ents[i].name;
    }
    return NULL;
}

static bool report_mismatch(gy_cli_runner *R)
{
    gy_cli_replay *rp = R->replay;
    if (!rp->mismatch)
        return false;
    uint64_t tick = rp->bad_tick - rp->cap->meta.base_tick;
    char t[64];
    gy_cli_format_number(t, sizeof t, (double)tick * R->dt, false);
    if (rp->bad_store == UINT32_MAX) {
        fprintf(stderr, "gyre replay: verify: tick %llu (t = %s s) differs: %s\n",
                (unsigned long long)tick, t, rp->bad_what);
        return true;
    }
    const char *name = entity_at(R, rp->bad_store, rp->bad_generation);
    fprintf(stderr,
            "gyre replay: verify: tick %llu (t = %s s) differs: entity '%s' (store index %u): "
            "%s\n",
            (unsigned long long)tick, t, name != NULL ? name : "?", rp->bad_store, rp->bad_what);
    return true;
}

bool gy_cli_replay_check(gy_cli_runner *R)
{
    gy_cli_replay *rp = R->replay;
    if (rp == NULL || !rp->verify || rp->mismatch)
        return rp != NULL && rp->mismatch;
    rp->scanned += gy_capture_scan_states(rp->stream + rp->scanned, rp->stream_size - rp->scanned,
                                          on_state, rp);
    return report_mismatch(R);
}

int gy_cli_replay_end(gy_cli_runner *R)
{
    gy_cli_replay *rp = R->replay;
    int status = GY_CLI_EXIT_OK;
    gy_result r = GY_OK;
    if (!rp->mismatch && !R->interrupted && !R->fault)
        r = gy_world_replay_finish(R->world);
    if (r != GY_OK) {
        const char *why = gy_world_replay_message(R->world);
        fprintf(stderr, "gyre replay: %s: %s\n", rp->path, why[0] ? why : gy_result_message(r));
        status = GY_CLI_EXIT_FAILED;
    }
    if (rp->verify && gy_world_capturing(R->world)) {
        gy_world_capture_end(R->world, NULL);
        if (!rp->mismatch && !gy_cli_replay_check(R) && status == GY_CLI_EXIT_OK &&
            !R->interrupted) {
            if (rp->next_state < rp->cap->state_count) {
                mismatch(rp, &rp->cap->states[rp->next_state], NULL);
                report_mismatch(R);
            } else if (!R->opt.quiet) {
                fprintf(stderr, "gyre replay: verify: %llu ticks compared, every one the same\n",
                        (unsigned long long)rp->compared);
            }
        }
        if (rp->mismatch)
            status = GY_CLI_EXIT_FAILED;
    }
    gy_world_replay_end(R->world);
    return status;
}
