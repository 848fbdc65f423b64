/* Scene loading: entry points, the text check before cJSON, files the scene names, and the top
 * level (format, version, physics settings, materials). The plumbing (arena, errors, typed reads)
 * is in scene_json.c; entities in scene_entities.c; joints and the script in scene_script.c. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "file_io.h"
#include "gyre/math.h"
#include "json_check.h"
#include "scene_internal.h"

/* ---- files referenced by the scene ----------------------------------------------------------- */

const char *gy_scn_resolve(gy_scn_loader *L, const char *rel)
{
    if (rel[0] == '/' || L->base_dir[0] == '\0')
        return gy_scn_arena_strdup(&L->arena, rel);
    size_t bl = strlen(L->base_dir), rl = strlen(rel);
    bool slash = L->base_dir[bl - 1u] == '/';
    char *s = gy_scn_arena_alloc(&L->arena, bl + rl + 2u);
    if (s == NULL)
        return NULL;
    memcpy(s, L->base_dir, bl);
    if (!slash)
        s[bl++] = '/';
    memcpy(s + bl, rel, rl + 1u);
    return s;
}

const gy_scn_obj_cache *gy_scn_load_obj(gy_scn_loader *L, const char *key, const char *rel)
{
    const char *resolved = gy_scn_resolve(L, rel);
    if (resolved == NULL) {
        L->oom = true;
        return NULL;
    }
    gy_scn_obj_cache *c = L->objs;
    while (c != NULL && strcmp(c->resolved, resolved) != 0)
        c = c->next;
    if (c == NULL) {
        c = gy_scn_arena_alloc(&L->arena, sizeof *c);
        if (c == NULL) {
            L->oom = true;
            return NULL;
        }
        char err[512];
        gy_obj_mesh mesh = {0};
        c->resolved = resolved;
        if (L->cache != NULL) {
            c->result = gy_obj_cache_acquire(L->cache, resolved, rel, &c->held, err, sizeof err);
            if (c->result == GY_OK) {
                /* Linked at once so the hold is released whatever happens next. */
                c->mesh = *c->held;
                c->next = L->objs;
                L->objs = c;
                return c;
            }
        } else {
            c->result = gy_obj_load_file(resolved, rel, L->a, &mesh, err, sizeof err);
        }
        if (c->result == GY_ERR_OUT_OF_MEMORY) {
            L->oom = true;
            return NULL;
        }
        if (c->result == GY_OK) {
            bool ok = gy_scn_arena_adopt(&L->arena, mesh.vertices,
                                         (size_t)mesh.vertex_count * sizeof *mesh.vertices);
            /* The index array must not leak when adopting the vertex array failed. */
            if (!ok)
                gy_free(L->a, mesh.indices, (size_t)mesh.index_count * sizeof *mesh.indices);
            else
                ok = gy_scn_arena_adopt(&L->arena, mesh.indices,
                                        (size_t)mesh.index_count * sizeof *mesh.indices);
            if (!ok) {
                L->oom = true;
                return NULL;
            }
            c->mesh = mesh;
        } else {
            c->error = gy_scn_arena_strdup(&L->arena, err);
            if (c->error == NULL) {
                L->oom = true;
                return NULL;
            }
        }
        c->next = L->objs;
        L->objs = c;
    }
    if (c->result != GY_OK) {
        gy_scn_error(L, key, "%s", c->error);
        return NULL;
    }
    return c;
}

/* ---- top level ------------------------------------------------------------------------------- */

static const char *const k_combine_names[] = {"average", "min", "multiply", "max"};

static void load_world(gy_scn_loader *L, const cJSON *p)
{
    gy_scene_world *w = &L->scene->world;
    if (p == NULL)
        return;
    size_t mark = gy_scn_push_key(L, "physics");
    if (!cJSON_IsObject(p)) {
        char buf[64];
        gy_scn_error(L, NULL, "must be an object (got %s)", gy_scn_describe(p, buf, sizeof buf));
        gy_scn_pop(L, mark);
        return;
    }
    static const char *const keys[] = {"gravity", "step_hz", "substeps",       "solver_iterations",
                                       "backend", "kill_y",  "geometry_budget"};
    gy_scn_check_keys(L, p, keys, sizeof keys / sizeof keys[0], NULL, 0);
    if (gy_scn_vec3(L, p, "gravity", &w->gravity) == GY_SCN_OK)
        gy_scn_vec3_within(L, "gravity", w->gravity, GY_MAX_MAGNITUDE);
    double v;
    if (gy_scn_number(L, p, "step_hz", &v) == GY_SCN_OK) {
        if (v < 10.0 || v > 1000.0)
            gy_scn_error(L, "step_hz", "must be between 10 and 1000 (got %.15g)", v);
        else
            w->step_hz = v;
    }
    if (gy_scn_number(L, p, "kill_y", &v) == GY_SCN_OK) {
        if (fabs(v) > GY_MAX_MAGNITUDE)
            gy_scn_error(L, "kill_y", "must be within ±%g (got %.15g)", GY_MAX_MAGNITUDE, v);
        else {
            w->has_kill_y = true;
            w->kill_y = v;
        }
    }
    if (gy_scn_integer(L, p, "substeps", 1.0, 16.0, &v) == GY_SCN_OK)
        w->substeps = (uint32_t)v;
    if (gy_scn_integer(L, p, "solver_iterations", 1.0, 255.0, &v) == GY_SCN_OK)
        w->solver_iterations = (uint32_t)v;
    if (gy_scn_integer(L, p, "geometry_budget", 1024.0, 4294967295.0, &v) == GY_SCN_OK)
        w->geometry_budget = (uint32_t)v;
    const char *backend;
    if (gy_scn_string(L, p, "backend", &backend) == GY_SCN_OK) {
        if (backend[0] == '\0') {
            gy_scn_error(L, "backend", "must not be empty");
        } else {
            w->backend = gy_scn_arena_strdup(&L->arena, backend);
            if (w->backend == NULL)
                L->oom = true;
        }
    }
    gy_scn_pop(L, mark);
}

static void load_material(gy_scn_loader *L, const cJSON *m, gy_material *out)
{
    char buf[64];
    if (!cJSON_IsObject(m)) {
        gy_scn_error(L, NULL, "must be an object (got %s)", gy_scn_describe(m, buf, sizeof buf));
        return;
    }
    static const char *const keys[] = {"friction", "restitution", "friction_combine",
                                       "restitution_combine"};
    gy_scn_check_keys(L, m, keys, sizeof keys / sizeof keys[0], NULL, 0);
    gy_scn_number_min(L, m, "friction", 0.0, true, &out->friction);
    gy_scn_number_min(L, m, "restitution", 0.0, true, &out->restitution);
    int mode;
    if (gy_scn_enum(L, m, "friction_combine", k_combine_names, 4, &mode) == GY_SCN_OK)
        out->friction_combine = (gy_combine_mode)mode;
    if (gy_scn_enum(L, m, "restitution_combine", k_combine_names, 4, &mode) == GY_SCN_OK)
        out->restitution_combine = (gy_combine_mode)mode;
}

static void load_materials(gy_scn_loader *L, const cJSON *m)
{
    if (m == NULL)
        return;
    size_t mark = gy_scn_push_key(L, "materials");
    if (!cJSON_IsObject(m)) {
        char buf[64];
        gy_scn_error(L, NULL, "must be an object mapping names to materials (got %s)",
                     gy_scn_describe(m, buf, sizeof buf));
        gy_scn_pop(L, mark);
        return;
    }
    uint32_t n = 0;
    for (const cJSON *c = m->child; c != NULL; c = c->next)
        n++;
    gy_scene *s = L->scene;
    s->materials = gy_scn_arena_array(&L->arena, n, sizeof *s->materials);
    if ((n > 0 && s->materials == NULL) || !gy_scn_names_init(&L->material_names, L->a, n)) {
        L->oom = true;
        gy_scn_pop(L, mark);
        return;
    }
    for (const cJSON *c = m->child; c != NULL; c = c->next) {
        const char *name = c->string != NULL ? c->string : "";
        size_t km = gy_scn_push_key(L, name);
        gy_scene_material *mat = &s->materials[s->material_count];
        mat->material = gy_default_material();
        if (name[0] == '\0') {
            gy_scn_error(L, NULL, "a material name must not be empty");
        } else if (gy_scn_names_put(&L->material_names, name, (int32_t)s->material_count) >= 0) {
            gy_scn_error(L, NULL, "duplicate material name");
        } else {
            mat->name = gy_scn_arena_strdup(&L->arena, name);
            if (mat->name == NULL)
                L->oom = true;
            s->material_count++;
        }
        load_material(L, c, &mat->material);
        gy_scn_pop(L, km);
    }
    gy_scn_pop(L, mark);
}

static void load_root(gy_scn_loader *L, const cJSON *root)
{
    static const char *const keys[] = {"format",    "version",  "name",   "physics",
                                       "materials", "entities", "joints", "script"};
    gy_scn_check_keys(L, root, keys, sizeof keys / sizeof keys[0], NULL, 0);

    const char *format;
    gy_scn_got g = gy_scn_string(L, root, "format", &format);
    if (g == GY_SCN_ABSENT)
        gy_scn_error(L, "format", "required (\"gyre.scene\")");
    else if (g == GY_SCN_OK && strcmp(format, "gyre.scene") != 0) {
        char buf[64];
        gy_scn_error(
            L, "format", "must be \"gyre.scene\" (got %s)",
            gy_scn_describe(cJSON_GetObjectItemCaseSensitive(root, "format"), buf, sizeof buf));
    }
    double version;
    g = gy_scn_number(L, root, "version", &version);
    if (g == GY_SCN_ABSENT)
        gy_scn_error(L, "version", "required (1)");
    else if (g == GY_SCN_OK && version != 1.0)
        gy_scn_error(L, "version", "unsupported version %.15g (this build reads version 1)",
                     version);

    const char *name;
    if (gy_scn_string(L, root, "name", &name) == GY_SCN_OK) {
        L->scene->name = gy_scn_arena_strdup(&L->arena, name);
        if (L->scene->name == NULL)
            L->oom = true;
    }
    load_world(L, cJSON_GetObjectItemCaseSensitive(root, "physics"));
    load_materials(L, cJSON_GetObjectItemCaseSensitive(root, "materials"));
    if (L->oom)
        return;
    gy_scn_load_entities(L, cJSON_GetObjectItemCaseSensitive(root, "entities"));
    if (L->oom)
        return;
    gy_scn_check_hierarchy(L);
    if (L->oom)
        return;
    gy_scn_load_joints(L, cJSON_GetObjectItemCaseSensitive(root, "joints"));
    if (L->oom)
        return;
    gy_scn_load_script(L, cJSON_GetObjectItemCaseSensitive(root, "script"));
}

/* ---- the text before cJSON sees it ----------------------------------------------------------- */

/* 1-based line and column (in UTF-8 code points) of byte `pos`. */
static void line_col(const char *s, size_t pos, size_t *line, size_t *col)
{
    size_t l = 1, c = 1;
    for (size_t i = 0; i < pos; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '\n') {
            l++;
            c = 1;
        } else if ((ch & 0xC0u) != 0x80u) {
            c++;
        }
    }
    *line = l;
    *col = c;
}

/* Empty text, then strict syntax and the size limits (json_check.h); false after an error. */
static bool check_text(gy_scn_loader *L, const char *name, const char *text, size_t start,
                       size_t len)
{
    size_t i = start;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
        i++;
    if (i >= len) {
        gy_scn_error_path(L, name,
                          len == 0 ? "empty file: expected a JSON object"
                                   : "no JSON value (only whitespace)");
        return false;
    }
    gy_json_check_error err;
    if (gy_json_check(text, len, start, GY_SCENE_MAX_DEPTH, GY_SCENE_MAX_VALUES, &err))
        return true;
    size_t line, col;
    line_col(text, err.pos, &line, &col);
    char path[512];
    snprintf(path, sizeof path, "%s:%zu:%zu", name, line, col);
    gy_scn_error_path(L, path, "%s", err.message);
    return false;
}

/* ---- entry points ---------------------------------------------------------------------------- */

static gy_scene_errors *errors_create(const gy_allocator *a)
{
    gy_scene_errors *e = gy_alloc_zeroed(a, sizeof *e);
    if (e != NULL)
        e->allocator_ = a;
    return e;
}

/* `text` is NUL-terminated at text[len]. */
/* Drops the holds a load took on shared meshes, then the cache reference. */
static void release_holds(gy_obj_cache *cache, gy_scn_obj_cache *objs)
{
    for (gy_scn_obj_cache *c = objs; c != NULL; c = c->next)
        if (c->held != NULL)
            (void)gy_obj_cache_unref(cache, c->held);
    gy_obj_cache_release(cache);
}

static gy_result load_text(const char *text, size_t len, const char *name, const char *source,
                           const char *base_dir, gy_obj_cache *cache, const gy_allocator *a,
                           gy_scene **out, gy_scene_errors **errors_out)
{
    gy_scn_loader *L = gy_alloc_zeroed(a, sizeof *L);
    if (L == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    gy_obj_cache_retain(cache);
    L->cache = cache;
    L->a = a;
    L->arena.a = a;
    L->base_dir = base_dir != NULL ? base_dir : "";
    L->errors = errors_create(a);
    L->scene = L->errors != NULL ? gy_scn_arena_alloc(&L->arena, sizeof *L->scene) : NULL;
    if (L->scene == NULL) {
        L->oom = true;
    } else {
        gy_scene *s = L->scene;
        s->world.gravity = gy_v3(0.0, -9.81, 0.0);
        s->world.step_hz = 60.0;
        s->world.substeps = 1;
        s->world.solver_iterations = 10;
        s->base_dir = gy_scn_arena_strdup(&L->arena, L->base_dir[0] != '\0' ? L->base_dir : ".");
        s->source = source != NULL ? gy_scn_arena_strdup(&L->arena, source) : NULL;
        if (s->base_dir == NULL || (source != NULL && s->source == NULL))
            L->oom = true;
    }

    cJSON *root = NULL;
    if (!L->oom) {
        /* A UTF-8 byte order mark is allowed and skipped (cJSON does not expect one). */
        size_t start = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3u : 0u;
        if (check_text(L, name, text, start, len)) {
            root = cJSON_ParseWithLengthOpts(text + start, len - start + 1u, NULL, 1);
            if (root == NULL) {
                /* The syntax was checked strictly above: cJSON's malloc failed. */
                L->oom = true;
            } else if (!cJSON_IsObject(root)) {
                gy_scn_error_path(L, name, "the top level must be a JSON object (got %s)",
                                  gy_scn_type_name(root));
            } else {
                load_root(L, root);
            }
        }
    }
    cJSON_Delete(root);
    gy_scn_names_free(&L->entity_names);
    gy_scn_names_free(&L->material_names);

    gy_result r = GY_OK;
    if (L->oom) {
        r = GY_ERR_OUT_OF_MEMORY;
        gy_scene_errors_free(L->errors);
        L->errors = NULL;
    } else if (L->errors->total > 0) {
        r = GY_ERR_PARSE;
    } else {
        gy_scn_owned *box = gy_scn_arena_alloc(&L->arena, sizeof *box);
        if (box == NULL) {
            r = GY_ERR_OUT_OF_MEMORY;
            gy_scene_errors_free(L->errors);
            L->errors = NULL;
        } else {
            box->arena = L->arena;
            box->cache = L->cache;
            box->objs = L->objs;
            L->scene->internal_ = box;
            *out = L->scene;
        }
    }
    if (r != GY_OK) {
        release_holds(L->cache, L->objs);
        gy_scn_arena_release(&L->arena);
    }
    if (errors_out != NULL && r != GY_OK)
        *errors_out = L->errors;
    else
        gy_scene_errors_free(L->errors);
    gy_free(a, L, sizeof *L);
    return r;
}

gy_result gy_scene_load_string(const char *json, size_t length, const char *base_dir,
                               const gy_allocator *allocator, gy_scene **out,
                               gy_scene_errors **errors)
{
    if (out != NULL)
        *out = NULL;
    if (errors != NULL)
        *errors = NULL;
    if (out == NULL || (json == NULL && length > 0))
        return GY_ERR_INVALID_ARGUMENT;
    const gy_allocator *a = gy_allocator_or_default(allocator);
    if (length > GY_SCENE_MAX_FILE_BYTES) {
        gy_scene_errors *e = errors_create(a);
        if (e == NULL)
            return GY_ERR_OUT_OF_MEMORY;
        gy_scn_loader L = {.a = a, .errors = e};
        gy_scn_error_path(&L, "(string)", "larger than the %u MB limit",
                          GY_SCENE_MAX_FILE_BYTES / (1024u * 1024u));
        if (L.oom) {
            gy_scene_errors_free(e);
            return GY_ERR_OUT_OF_MEMORY;
        }
        if (errors != NULL)
            *errors = e;
        else
            gy_scene_errors_free(e);
        return GY_ERR_CAPACITY;
    }
    /* cJSON needs a terminating NUL; the caller's text need not have one. */
    char *copy = gy_alloc(a, length + 1u);
    if (copy == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    if (length > 0)
        memcpy(copy, json, length);
    copy[length] = '\0';
    gy_result r = load_text(copy, length, "(string)", NULL, base_dir, NULL, a, out, errors);
    gy_free(a, copy, length + 1u);
    return r;
}

gy_result gy_scene_load_file(const char *path, const gy_allocator *allocator, gy_scene **out,
                             gy_scene_errors **errors)
{
    return gy_scene_load_file_cached(path, NULL, allocator, out, errors);
}

gy_result gy_scene_load_file_cached(const char *path, gy_obj_cache *cache,
                                    const gy_allocator *allocator, gy_scene **out,
                                    gy_scene_errors **errors)
{
    if (out != NULL)
        *out = NULL;
    if (errors != NULL)
        *errors = NULL;
    if (path == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    const gy_allocator *a = gy_allocator_or_default(allocator);

    gy_io_buffer buf;
    char why[160];
    gy_result r = gy_io_read_file(path, a, GY_SCENE_MAX_FILE_BYTES, &buf, why, sizeof why);
    if (r == GY_ERR_OUT_OF_MEMORY || r == GY_ERR_INVALID_ARGUMENT)
        return r;
    if (r != GY_OK) {
        gy_scene_errors *e = errors_create(a);
        if (e == NULL)
            return GY_ERR_OUT_OF_MEMORY;
        gy_scn_loader L = {.a = a, .errors = e};
        gy_scn_error_path(&L, path, "cannot read: %s", why);
        if (L.oom) {
            gy_scene_errors_free(e);
            return GY_ERR_OUT_OF_MEMORY;
        }
        if (errors != NULL)
            *errors = e;
        else
            gy_scene_errors_free(e);
        return r;
    }

    /* Relative paths in the scene resolve against its folder. */
    const char *slash = strrchr(path, '/');
    size_t dl = slash == NULL ? 0u : (slash == path ? 1u : (size_t)(slash - path));
    char *dir = gy_alloc(a, dl + 1u);
    if (dir == NULL) {
        gy_io_buffer_free(a, &buf);
        return GY_ERR_OUT_OF_MEMORY;
    }
    memcpy(dir, path, dl);
    dir[dl] = '\0';
    r = load_text(buf.data, buf.length, path, path, dir, cache, a, out, errors);
    gy_free(a, dir, dl + 1u);
    gy_io_buffer_free(a, &buf);
    return r;
}

void gy_scene_free(gy_scene *scene)
{
    if (scene == NULL || scene->internal_ == NULL)
        return;
    /* The arena's own record lives in the arena: copy it out before releasing. */
    gy_scn_owned own = *(gy_scn_owned *)scene->internal_;
    release_holds(own.cache, own.objs);
    gy_scn_arena_release(&own.arena);
}

/* ---- helpers --------------------------------------------------------------------------------- */

int32_t gy_scene_find_entity(const gy_scene *scene, const char *name)
{
    if (scene == NULL || name == NULL)
        return -1;
    for (uint32_t i = 0; i < scene->entity_count; i++)
        if (scene->entities[i].name != NULL && strcmp(scene->entities[i].name, name) == 0)
            return (int32_t)i;
    return -1;
}

const char *gy_body_type_name(gy_body_type type)
{
    static const char *const names[] = {"Dynamic", "Static", "Kinematic", "Trigger"};
    return (unsigned)type < GY_BODY_TYPE_COUNT ? names[type] : "?";
}

const char *gy_scene_action_name(gy_scene_action_type type)
{
    static const char *const names[] = {"set_velocity",
                                        "set_angular_velocity",
                                        "apply_impulse",
                                        "apply_force",
                                        "teleport",
                                        "set_active",
                                        "set_entity_active",
                                        "destroy",
                                        "spawn",
                                        "jump",
                                        "raycast",
                                        "expect",
                                        "expect_event",
                                        "set_motor",
                                        "move_kinematic",
                                        "set_gravity",
                                        "apply_torque",
                                        "wake"};
    return (unsigned)type < GY_SCENE_ACTION_TYPE_COUNT ? names[type] : "?";
}

const char *gy_scene_event_kind_name(gy_scene_event_kind kind)
{
    static const char *const names[] = {"enter", "stay", "exit", "sleep", "wake", "killed"};
    return (unsigned)kind < GY_SCENE_EVENT_KIND_COUNT ? names[kind] : "?";
}
