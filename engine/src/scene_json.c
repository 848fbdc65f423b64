/* Scene loading plumbing: the description arena, the name map, the error list, JSON paths and
 * the typed reads that record `path: message` errors. Used by every scene_*.c pass. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

static uint64_t hash_str(const char *s)
{
    uint64_t h = 14695981039346656037u; /* FNV-1a */
    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211u;
    }
    return h;
}

bool gy_scn_names_init(gy_scn_names *m, const gy_allocator *a, uint32_t expected)
{
    *m = (gy_scn_names){0};
    m->a = a;
    gy_hash_map_init(&m->first, a);
    if (gy_scn_name_array_reserve(a, &m->names, expected) != GY_OK ||
        gy_hash_map_reserve(&m->first, expected) != GY_OK) {
        gy_scn_names_free(m);
        return false;
    }
    return true;
}

void gy_scn_names_free(gy_scn_names *m)
{
    gy_scn_name_array_free(m->a, &m->names);
    gy_hash_map_fini(&m->first);
}

int32_t gy_scn_names_find(const gy_scn_names *m, const char *key)
{
    if (key == NULL)
        return -1;
    const uint64_t *i = gy_hash_map_find(&m->first, gy_map_key_of(hash_str(key)));
    for (uint32_t n = i != NULL ? (uint32_t)*i : UINT32_MAX; n != UINT32_MAX;
         n = m->names.items[n].next)
        if (strcmp(m->names.items[n].key, key) == 0)
            return m->names.items[n].value;
    return -1;
}

int32_t gy_scn_names_put(gy_scn_names *m, const char *key, int32_t value)
{
    int32_t found = gy_scn_names_find(m, key);
    if (found >= 0 || m->names.count == m->names.capacity)
        return found;
    uint64_t *first;
    bool inserted;
    /* init reserved the map for every name, so this cannot allocate. */
    if (gy_hash_map_upsert(&m->first, gy_map_key_of(hash_str(key)), &first, &inserted) != GY_OK)
        return -1;
    uint32_t n = m->names.count++;
    m->names.items[n] = (gy_scn_name){key, value, inserted ? UINT32_MAX : (uint32_t)*first};
    *first = n;
    return -1;
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

bool gy_scn_in_range(gy_scn_loader *L, const char *key, double v, double lo, double hi)
{
    if (v >= lo && v <= hi)
        return true;
    gy_scn_error(L, key, "must be between %g and %g (got %.15g)", lo, hi, v);
    return false;
}

bool gy_scn_vec3_within(gy_scn_loader *L, const char *key, gy_vec3 v, double limit)
{
    if (fabs(v.x) <= limit && fabs(v.y) <= limit && fabs(v.z) <= limit)
        return true;
    gy_scn_error(L, key, "each component must be within ±%g (got [%.15g, %.15g, %.15g])", limit,
                 v.x, v.y, v.z);
    return false;
}

uint32_t gy_scn_error_count(const gy_scn_loader *L)
{
    return L->errors != NULL ? (uint32_t)L->errors->total : 0u;
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

gy_scn_got gy_scn_integer(gy_scn_loader *L, const cJSON *obj, const char *key, double lo, double hi,
                          double *out)
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
        gy_scn_error(L, key, "must be true or false (got %s)", gy_scn_describe(v, buf, sizeof buf));
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
static bool number_array(gy_scn_loader *L, const cJSON *v, size_t n, double *out, const char *what)
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
        gy_scn_error(L, NULL, "must be %s (got %zu element%s)", what, count, count == 1 ? "" : "s");
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
            gy_scn_error(L, NULL,
                         "quaternion must have a non-zero length (identity is [0, 0, 0, 1])");
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
