/* Scene loading: entry points, the description arena, the error list, typed JSON reads with
 * paths, the pre-parse scan that keeps hostile documents away from cJSON, and the top level
 * (format, version, physics settings, materials). Entities, joints and the script live in
 * scene_entities.c and scene_script.c. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_io.h"
#include "json_check.h"
#include "gyre/math.h"
#include "scene_internal.h"

/* ---- arena ----------------------------------------------------------------------------------- */

#define ARENA_BLOCK_BYTES (64u * 1024u)
#define ARENA_ALIGN       16u

struct gy_scn_block {
    gy_scn_block *next;
    size_t size; /* whole allocation, header included */
    _Alignas(16) unsigned char data[];
};

struct gy_scn_adopted {
    gy_scn_adopted *next;
    void *ptr;
    size_t size;
};

static size_t align_up(size_t n)
{
    return (n + (ARENA_ALIGN - 1u)) & ~(size_t)(ARENA_ALIGN - 1u);
}

void *gy_scn_arena_alloc(gy_scn_arena *ar, size_t size)
{
    if (size > SIZE_MAX / 2u)
        return NULL;
    size = align_up(size == 0 ? 1u : size);
    if (size > ar->left) {
        /* Big requests get a block of their own, so the current block keeps serving small ones. */
        bool own = size > ARENA_BLOCK_BYTES / 4u;
        size_t total = sizeof(gy_scn_block) + (own ? size : ARENA_BLOCK_BYTES);
        gy_scn_block *b = gy_alloc(ar->a, total);
        if (b == NULL)
            return NULL;
        b->size = total;
        unsigned char *payload = b->data;
        if (own) {
            b->next = ar->blocks != NULL ? ar->blocks->next : NULL;
            if (ar->blocks != NULL)
                ar->blocks->next = b;
            else
                ar->blocks = b;
            memset(payload, 0, size);
            return payload;
        }
        b->next = ar->blocks;
        ar->blocks = b;
        ar->cur = payload;
        ar->left = ARENA_BLOCK_BYTES;
    }
    void *p = ar->cur;
    ar->cur += size;
    ar->left -= size;
    memset(p, 0, size);
    return p;
}

void *gy_scn_arena_array(gy_scn_arena *ar, size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / 2u / size)
        return NULL;
    return gy_scn_arena_alloc(ar, count * size);
}

char *gy_scn_arena_strdup(gy_scn_arena *ar, const char *s)
{
    size_t n = strlen(s);
    char *d = gy_scn_arena_alloc(ar, n + 1u);
    if (d != NULL)
        memcpy(d, s, n + 1u);
    return d;
}

bool gy_scn_arena_adopt(gy_scn_arena *ar, void *ptr, size_t size)
{
    if (ptr == NULL)
        return true;
    gy_scn_adopted *n = gy_scn_arena_alloc(ar, sizeof *n);
    if (n == NULL) {
        gy_free(ar->a, ptr, size);
        return false;
    }
    n->ptr = ptr;
    n->size = size;
    n->next = ar->adopted;
    ar->adopted = n;
    return true;
}

void gy_scn_arena_release(gy_scn_arena *ar)
{
    /* Adopted records live in the blocks: free what they point to first. */
    for (gy_scn_adopted *n = ar->adopted; n != NULL; n = n->next)
        gy_free(ar->a, n->ptr, n->size);
    gy_scn_block *b = ar->blocks;
    while (b != NULL) {
        gy_scn_block *next = b->next;
        gy_free(ar->a, b, b->size);
        b = next;
    }
    ar->blocks = NULL;
    ar->adopted = NULL;
    ar->cur = NULL;
    ar->left = 0;
}

/* ---- name map -------------------------------------------------------------------------------- */

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

bool gy_scn_names_init(gy_scn_names *m, const gy_allocator *a, uint32_t expected)
{
    *m = (gy_scn_names){0};
    m->a = a;
    uint32_t cap = 16;
    while (cap < 0x40000000u && cap < expected * 2u)
        cap *= 2u;
    m->cap = cap; /* before any failure, so names_free frees with the right sizes */
    m->keys = gy_alloc_zeroed(a, (size_t)cap * sizeof *m->keys);
    m->values = gy_alloc(a, (size_t)cap * sizeof *m->values);
    if (m->keys == NULL || m->values == NULL) {
        gy_scn_names_free(m);
        return false;
    }
    return true;
}

void gy_scn_names_free(gy_scn_names *m)
{
    if (m->keys != NULL)
        gy_free(m->a, m->keys, (size_t)m->cap * sizeof *m->keys);
    if (m->values != NULL)
        gy_free(m->a, m->values, (size_t)m->cap * sizeof *m->values);
    m->keys = NULL;
    m->values = NULL;
    m->cap = 0;
    m->count = 0;
}

int32_t gy_scn_names_find(const gy_scn_names *m, const char *key)
{
    if (m->cap == 0 || key == NULL)
        return -1;
    uint32_t mask = m->cap - 1u;
    for (uint32_t i = hash_str(key) & mask;; i = (i + 1u) & mask) {
        if (m->keys[i] == NULL)
            return -1;
        if (strcmp(m->keys[i], key) == 0)
            return m->values[i];
    }
}

int32_t gy_scn_names_put(gy_scn_names *m, const char *key, int32_t value)
{
    /* init sized the table at twice the names it will hold, so a free slot always exists. */
    uint32_t mask = m->cap - 1u;
    for (uint32_t i = hash_str(key) & mask;; i = (i + 1u) & mask) {
        if (m->keys[i] == NULL) {
            m->keys[i] = key;
            m->values[i] = value;
            m->count++;
            return -1;
        }
        if (strcmp(m->keys[i], key) == 0)
            return m->values[i];
    }
}

/* ---- errors ---------------------------------------------------------------------------------- */

static void errors_add(gy_scn_loader *L, const char *path, const char *message)
{
    gy_scene_errors *e = L->errors;
    if (e->total < UINT32_MAX)
        e->total++;
    if (e->count >= GY_SCENE_MAX_ERRORS || L->oom)
        return;
    if (gy_array_reserve(L->a, (void **)&e->items, &e->capacity_, e->count + 1u,
                         sizeof *e->items) != GY_OK) {
        L->oom = true;
        return;
    }
    size_t pl = strlen(path), ml = strlen(message);
    char *text = gy_alloc(L->a, pl + ml + 2u);
    if (text == NULL) {
        L->oom = true;
        return;
    }
    memcpy(text, path, pl + 1u);
    memcpy(text + pl + 1u, message, ml + 1u);
    e->items[e->count].path = text;
    e->items[e->count].message = text + pl + 1u;
    e->count++;
}

void gy_scn_error(gy_scn_loader *L, const char *key, const char *fmt, ...)
{
    size_t mark = key != NULL ? gy_scn_push_key(L, key) : L->path_len;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    errors_add(L, L->path_len > 0 ? L->path : "(root)", msg);
    gy_scn_pop(L, mark);
}

void gy_scn_error_path(gy_scn_loader *L, const char *path, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    errors_add(L, path, msg);
}

size_t gy_scene_error_format(const gy_scene_error *error, char *buf, size_t size)
{
    if (error == NULL)
        return 0;
    int n = snprintf(buf, size, "%s: %s", error->path, error->message);
    return n < 0 ? 0 : (size_t)n;
}

void gy_scene_errors_print(const gy_scene_errors *errors, FILE *out, const char *prefix)
{
    if (errors == NULL || out == NULL)
        return;
    for (uint32_t i = 0; i < errors->count; i++)
        fprintf(out, "%s%s: %s\n", prefix != NULL ? prefix : "", errors->items[i].path,
                errors->items[i].message);
    if (errors->total > errors->count)
        fprintf(out, "%s... and %u more error%s not listed\n", prefix != NULL ? prefix : "",
                errors->total - errors->count, errors->total - errors->count == 1 ? "" : "s");
}

void gy_scene_errors_free(gy_scene_errors *errors)
{
    if (errors == NULL)
        return;
    const gy_allocator *a = errors->allocator_;
    for (uint32_t i = 0; i < errors->count; i++) {
        size_t n = strlen(errors->items[i].path) + strlen(errors->items[i].message) + 2u;
        gy_free(a, (void *)(uintptr_t)errors->items[i].path, n);
    }
    if (errors->items != NULL)
        gy_free(a, errors->items, (size_t)errors->capacity_ * sizeof *errors->items);
    gy_free(a, errors, sizeof *errors);
}

/* ---- paths ----------------------------------------------------------------------------------- */

static void path_append(gy_scn_loader *L, const char *s, size_t n)
{
    size_t room = GY_SCN_PATH_MAX - 1u - L->path_len;
    if (n > room)
        n = room;
    memcpy(L->path + L->path_len, s, n);
    L->path_len += n;
    L->path[L->path_len] = '\0';
}

static bool is_plain_key(const char *k)
{
    if (*k == '\0')
        return false;
    for (; *k != '\0'; k++)
        if (!(isalnum((unsigned char)*k) || *k == '_' || *k == '-'))
            return false;
    return true;
}

size_t gy_scn_push_key(gy_scn_loader *L, const char *key)
{
    size_t mark = L->path_len;
    size_t n = strlen(key);
    bool cut = n > 64u;
    if (cut) {
        n = 61u;
        while (n > 0 && ((unsigned char)key[n] & 0xC0u) == 0x80u) /* keep UTF-8 whole */
            n--;
    }
    if (is_plain_key(key)) {
        if (L->path_len > 0)
            path_append(L, ".", 1);
        path_append(L, key, n);
    } else {
        /* Names with dots, spaces or quotes would make the path ambiguous: bracket them. */
        path_append(L, "[\"", 2);
        path_append(L, key, n);
        path_append(L, "\"]", 2);
    }
    if (cut)
        path_append(L, "...", 3);
    return mark;
}

size_t gy_scn_push_index(gy_scn_loader *L, size_t index)
{
    size_t mark = L->path_len;
    char buf[32];
    int n = snprintf(buf, sizeof buf, "[%zu]", index);
    path_append(L, buf, (size_t)n);
    return mark;
}

void gy_scn_pop(gy_scn_loader *L, size_t mark)
{
    L->path_len = mark;
    L->path[mark] = '\0';
}

/* ---- describing values ----------------------------------------------------------------------- */

const char *gy_scn_type_name(const cJSON *v)
{
    if (v == NULL)
        return "nothing";
    if (cJSON_IsNull(v))
        return "null";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsArray(v))
        return "an array";
    if (cJSON_IsObject(v))
        return "an object";
    return "an invalid value";
}

const char *gy_scn_describe(const cJSON *v, char *buf, size_t size)
{
    if (cJSON_IsString(v) && v->valuestring != NULL) {
        size_t n = strlen(v->valuestring);
        if (n > 40u) {
            n = 37u;
            while (n > 0 && ((unsigned char)v->valuestring[n] & 0xC0u) == 0x80u)
                n--;
            snprintf(buf, size, "\"%.*s...\"", (int)n, v->valuestring);
        } else {
            snprintf(buf, size, "\"%s\"", v->valuestring);
        }
        return buf;
    }
    if (cJSON_IsNumber(v)) {
        snprintf(buf, size, "%.15g", v->valuedouble);
        return buf;
    }
    if (cJSON_IsTrue(v))
        return "true";
    if (cJSON_IsFalse(v))
        return "false";
    return gy_scn_type_name(v);
}

/* ---- keys ------------------------------------------------------------------------------------ */

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 40u || lb > 40u)
        return 99u;
    size_t row[41];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] == b[j - 1] ? 0u : 1u);
            if (up + 1u < best)
                best = up + 1u;
            if (row[j - 1] + 1u < best)
                best = row[j - 1] + 1u;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

void gy_scn_check_keys(gy_scn_loader *L, const cJSON *obj, const char *const *allowed, size_t n,
                       const char *const *allowed2, size_t n2)
{
    uint64_t seen = 0;
    for (const cJSON *c = obj->child; c != NULL; c = c->next) {
        const char *k = c->string != NULL ? c->string : "";
        if (strncmp(k, "x_", 2) == 0)
            continue;
        size_t idx = SIZE_MAX;
        for (size_t i = 0; i < n + n2 && idx == SIZE_MAX; i++)
            if (strcmp(k, i < n ? allowed[i] : allowed2[i - n]) == 0)
                idx = i;
        if (idx == SIZE_MAX) {
            const char *best = NULL;
            size_t best_d = 3u;
            for (size_t i = 0; i < n + n2; i++) {
                const char *cand = i < n ? allowed[i] : allowed2[i - n];
                size_t d = edit_distance(k, cand);
                if (d < best_d) {
                    best_d = d;
                    best = cand;
                }
            }
            if (best != NULL)
                gy_scn_error(L, k, "unknown key (did you mean \"%s\"?)", best);
            else
                gy_scn_error(L, k, "unknown key (tools may add their own keys starting with x_)");
            continue;
        }
        /* Every allowed list in the loader is far below 64 entries. */
        uint64_t bit = idx < 64u ? (uint64_t)1 << idx : 0u;
        if ((seen & bit) != 0)
            gy_scn_error(L, k, "duplicate key");
        seen |= bit;
    }
}

/* ---- typed reads ----------------------------------------------------------------------------- */

static bool number_value(gy_scn_loader *L, const cJSON *v, const char *key, double *out)
{
    char buf[64];
    if (!cJSON_IsNumber(v)) {
        gy_scn_error(L, key, "must be a number (got %s)", gy_scn_describe(v, buf, sizeof buf));
        return false;
    }
    if (!gy_is_finite(v->valuedouble)) {
        /* JSON has no NaN or infinity, but a literal like 1e999 overflows to one. */
        gy_scn_error(L, key, "number out of range (overflows to infinity)");
        return false;
    }
    *out = v->valuedouble;
    return true;
}

gy_scn_got gy_scn_number(gy_scn_loader *L, const cJSON *obj, const char *key, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v == NULL)
        return GY_SCN_ABSENT;
    return number_value(L, v, key, out) ? GY_SCN_OK : GY_SCN_BAD;
}

gy_scn_got gy_scn_integer(gy_scn_loader *L, const cJSON *obj, const char *key, double lo,
                          double hi, double *out)
{
    double v;
    gy_scn_got g = gy_scn_number(L, obj, key, &v);
    if (g != GY_SCN_OK)
        return g;
    if (floor(v) != v) {
        gy_scn_error(L, key, "must be an integer (got %.15g)", v);
        return GY_SCN_BAD;
    }
    if (v < lo || v > hi) {
        gy_scn_error(L, key, "must be between %.15g and %.15g (got %.15g)", lo, hi, v);
        return GY_SCN_BAD;
    }
    *out = v;
    return GY_SCN_OK;
}

gy_scn_got gy_scn_uint32(gy_scn_loader *L, const cJSON *obj, const char *key, uint32_t *out)
{
    double v;
    gy_scn_got g = gy_scn_integer(L, obj, key, 0.0, 4294967295.0, &v);
    if (g == GY_SCN_OK)
        *out = (uint32_t)v;
    return g;
}

gy_scn_got gy_scn_bool(gy_scn_loader *L, const cJSON *obj, const char *key, bool *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v == NULL)
        return GY_SCN_ABSENT;
    if (!cJSON_IsBool(v)) {
        char buf[64];
        gy_scn_error(L, key, "must be true or false (got %s)",
                     gy_scn_describe(v, buf, sizeof buf));
        return GY_SCN_BAD;
    }
    *out = cJSON_IsTrue(v);
    return GY_SCN_OK;
}

gy_scn_got gy_scn_string(gy_scn_loader *L, const cJSON *obj, const char *key, const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v == NULL)
        return GY_SCN_ABSENT;
    if (!cJSON_IsString(v) || v->valuestring == NULL) {
        char buf[64];
        gy_scn_error(L, key, "must be a string (got %s)", gy_scn_describe(v, buf, sizeof buf));
        return GY_SCN_BAD;
    }
    *out = v->valuestring;
    return GY_SCN_OK;
}

/* An array of exactly `n` finite numbers; element errors name the element. */
static bool number_array(gy_scn_loader *L, const cJSON *v, size_t n, double *out,
                         const char *what)
{
    if (!cJSON_IsArray(v)) {
        char buf[64];
        gy_scn_error(L, NULL, "must be %s (got %s)", what, gy_scn_describe(v, buf, sizeof buf));
        return false;
    }
    size_t count = 0;
    for (const cJSON *c = v->child; c != NULL; c = c->next)
        count++;
    if (count != n) {
        gy_scn_error(L, NULL, "must be %s (got %zu element%s)", what, count,
                     count == 1 ? "" : "s");
        return false;
    }
    bool ok = true;
    size_t i = 0;
    for (const cJSON *c = v->child; c != NULL; c = c->next, i++) {
        size_t mark = gy_scn_push_index(L, i);
        ok = number_value(L, c, NULL, &out[i]) && ok;
        gy_scn_pop(L, mark);
    }
    return ok;
}

bool gy_scn_value_vec3(gy_scn_loader *L, const cJSON *v, gy_vec3 *out)
{
    double d[3];
    if (!number_array(L, v, 3, d, "an array of 3 numbers"))
        return false;
    *out = gy_v3(d[0], d[1], d[2]);
    return true;
}

gy_scn_got gy_scn_vec3(gy_scn_loader *L, const cJSON *obj, const char *key, gy_vec3 *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v == NULL)
        return GY_SCN_ABSENT;
    size_t mark = gy_scn_push_key(L, key);
    bool ok = gy_scn_value_vec3(L, v, out);
    gy_scn_pop(L, mark);
    return ok ? GY_SCN_OK : GY_SCN_BAD;
}

gy_scn_got gy_scn_quat(gy_scn_loader *L, const cJSON *obj, const char *key, gy_quat *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v == NULL)
        return GY_SCN_ABSENT;
    size_t mark = gy_scn_push_key(L, key);
    double d[4];
    bool ok = number_array(L, v, 4, d, "a quaternion [x, y, z, w]");
    if (ok) {
        double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + d[3] * d[3]);
        if (!(len > 1e-9) || !gy_is_finite(len)) {
            gy_scn_error(L, NULL, "quaternion must have a non-zero length (identity is [0, 0, 0, 1])");
            ok = false;
        } else {
            out->x = d[0] / len;
            out->y = d[1] / len;
            out->z = d[2] / len;
            out->w = d[3] / len;
        }
    }
    gy_scn_pop(L, mark);
    return ok ? GY_SCN_OK : GY_SCN_BAD;
}

gy_scn_got gy_scn_rotation(gy_scn_loader *L, const cJSON *obj, const char *key,
                           const char *euler_key, gy_quat *out)
{
    bool has_q = cJSON_GetObjectItemCaseSensitive(obj, key) != NULL;
    bool has_e = cJSON_GetObjectItemCaseSensitive(obj, euler_key) != NULL;
    if (has_q && has_e) {
        gy_scn_error(L, euler_key, "give either %s or %s, not both", key, euler_key);
        return GY_SCN_BAD;
    }
    if (has_q)
        return gy_scn_quat(L, obj, key, out);
    gy_vec3 deg;
    gy_scn_got g = gy_scn_vec3(L, obj, euler_key, &deg);
    if (g == GY_SCN_OK)
        *out = gy_quat_normalize(gy_quat_from_euler_deg(deg));
    return g;
}

gy_scn_got gy_scn_number_min(gy_scn_loader *L, const cJSON *obj, const char *key, double lo,
                             bool inclusive, double *out)
{
    double v;
    gy_scn_got g = gy_scn_number(L, obj, key, &v);
    if (g != GY_SCN_OK)
        return g;
    if (inclusive ? !(v >= lo) : !(v > lo)) {
        gy_scn_error(L, key, "must be %s %.15g (got %.15g)", inclusive ? ">=" : ">", lo, v);
        return GY_SCN_BAD;
    }
    *out = v;
    return GY_SCN_OK;
}

gy_scn_got gy_scn_enum(gy_scn_loader *L, const cJSON *obj, const char *key,
                       const char *const *names, size_t n, int *out)
{
    const char *s;
    gy_scn_got g = gy_scn_string(L, obj, key, &s);
    if (g != GY_SCN_OK)
        return g;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = (int)i;
            return GY_SCN_OK;
        }
    }
    char list[512] = "";
    size_t len = 0;
    for (size_t i = 0; i < n && len < sizeof list; i++) {
        int w = snprintf(list + len, sizeof list - len, "%s\"%s\"", i == 0 ? "" : ", ", names[i]);
        if (w < 0)
            break;
        len += (size_t)w;
    }
    char buf[64];
    gy_scn_error(L, key, "must be one of %s (got %s)", list,
                 gy_scn_describe(cJSON_GetObjectItemCaseSensitive(obj, key), buf, sizeof buf));
    return GY_SCN_BAD;
}

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
        c->result = gy_obj_load_file(resolved, rel, L->a, &mesh, err, sizeof err);
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
    static const char *const keys[] = {"gravity", "step_hz", "substeps", "solver_iterations",
                                       "backend"};
    gy_scn_check_keys(L, p, keys, sizeof keys / sizeof keys[0], NULL, 0);
    gy_scn_vec3(L, p, "gravity", &w->gravity);
    double v;
    if (gy_scn_number(L, p, "step_hz", &v) == GY_SCN_OK) {
        if (v < 10.0 || v > 1000.0)
            gy_scn_error(L, "step_hz", "must be between 10 and 1000 (got %.15g)", v);
        else
            w->step_hz = v;
    }
    if (gy_scn_integer(L, p, "substeps", 1.0, 16.0, &v) == GY_SCN_OK)
        w->substeps = (uint32_t)v;
    if (gy_scn_integer(L, p, "solver_iterations", 1.0, 255.0, &v) == GY_SCN_OK)
        w->solver_iterations = (uint32_t)v;
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
        gy_scn_error(L, "format", "must be \"gyre.scene\" (got %s)",
                     gy_scn_describe(cJSON_GetObjectItemCaseSensitive(root, "format"), buf,
                                     sizeof buf));
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
        gy_scn_error_path(L, name, len == 0 ? "empty file: expected a JSON object"
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
static gy_result load_text(const char *text, size_t len, const char *name, const char *source,
                           const char *base_dir, const gy_allocator *a, gy_scene **out,
                           gy_scene_errors **errors_out)
{
    gy_scn_loader *L = gy_alloc_zeroed(a, sizeof *L);
    if (L == NULL)
        return GY_ERR_OUT_OF_MEMORY;
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
    if (L->info != NULL)
        gy_free(a, L->info, (size_t)L->info_count * sizeof *L->info);

    gy_result r = GY_OK;
    if (L->oom) {
        r = GY_ERR_OUT_OF_MEMORY;
        gy_scene_errors_free(L->errors);
        L->errors = NULL;
    } else if (L->errors->total > 0) {
        r = GY_ERR_PARSE;
    } else {
        gy_scn_arena *box = gy_scn_arena_alloc(&L->arena, sizeof *box);
        if (box == NULL) {
            r = GY_ERR_OUT_OF_MEMORY;
            gy_scene_errors_free(L->errors);
            L->errors = NULL;
        } else {
            *box = L->arena;
            L->scene->internal_ = box;
            *out = L->scene;
        }
    }
    if (r != GY_OK)
        gy_scn_arena_release(&L->arena);
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
    gy_result r = load_text(copy, length, "(string)", NULL, base_dir, a, out, errors);
    gy_free(a, copy, length + 1u);
    return r;
}

gy_result gy_scene_load_file(const char *path, const gy_allocator *allocator, gy_scene **out,
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
    r = load_text(buf.data, buf.length, path, path, dir, a, out, errors);
    gy_free(a, dir, dl + 1u);
    gy_io_buffer_free(a, &buf);
    return r;
}

void gy_scene_free(gy_scene *scene)
{
    if (scene == NULL || scene->internal_ == NULL)
        return;
    /* The arena's own record lives in the arena: copy it out before releasing. */
    gy_scn_arena ar = *(gy_scn_arena *)scene->internal_;
    gy_scn_arena_release(&ar);
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

const char *gy_scene_body_type_name(gy_scene_body_type type)
{
    static const char *const names[] = {"Dynamic", "Static", "Kinematic", "Trigger"};
    return (unsigned)type < GY_SCENE_BODY_TYPE_COUNT ? names[type] : "?";
}

const char *gy_scene_action_name(gy_scene_action_type type)
{
    static const char *const names[] = {
        "set_velocity", "set_angular_velocity", "apply_impulse", "apply_force", "teleport",
        "set_active",   "set_entity_active",    "destroy",       "spawn",       "jump",
        "raycast",      "expect",               "expect_event"};
    return (unsigned)type < GY_SCENE_ACTION_TYPE_COUNT ? names[type] : "?";
}

const char *gy_scene_event_kind_name(gy_scene_event_kind kind)
{
    static const char *const names[] = {"enter", "stay", "exit"};
    return (unsigned)kind <= GY_SCENE_EVENT_EXIT ? names[kind] : "?";
}
