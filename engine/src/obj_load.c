/* Wavefront OBJ: positions and faces only, one line at a time, with the first error reported as
 * `name:line: message`. */
#include "gyre/obj.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_io.h"

typedef struct obj_parser {
    const gy_allocator *a;
    const char *name;
    size_t line;
    char *error;
    size_t error_size;
    gy_vec3 *vertices;
    uint32_t vertex_count, vertex_cap;
    uint32_t *indices;
    uint32_t index_count, index_cap;
    uint32_t *face; /* one polygon's resolved indices */
    uint32_t face_cap;
} obj_parser;

static gy_result fail(obj_parser *p, gy_result r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static gy_result fail(obj_parser *p, gy_result r, const char *fmt, ...)
{
    if (p->error != NULL && p->error_size > 0) {
        int n = snprintf(p->error, p->error_size, "%s:%zu: ", p->name, p->line);
        if (n >= 0 && (size_t)n < p->error_size) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(p->error + n, p->error_size - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return r;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* End of a statement's meaningful text: end of line or a comment. */
static bool at_end(const char *s, const char *end)
{
    return s >= end || *s == '#';
}

static const char *skip_blank(const char *s, const char *end)
{
    while (s < end && is_blank(*s))
        s++;
    return s;
}

/* A token ends at whitespace, a comment or the line's end. */
static const char *token_end(const char *s, const char *end)
{
    while (s < end && !is_blank(*s) && *s != '#')
        s++;
    return s;
}

/* Copies a token into a small NUL-terminated buffer so strtod/strtol cannot run past the line. */
static bool token_copy(const char *s, const char *e, char *buf, size_t size)
{
    size_t n = (size_t)(e - s);
    if (n == 0 || n >= size)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return true;
}

static gy_result parse_vertex(obj_parser *p, const char *s, const char *end)
{
    double xyz[3];
    int n = 0;
    for (;;) {
        s = skip_blank(s, end);
        if (at_end(s, end))
            break;
        const char *e = token_end(s, end);
        char buf[128];
        char *stop = NULL;
        if (!token_copy(s, e, buf, sizeof buf))
            return fail(p, GY_ERR_PARSE, "malformed vertex: number too long");
        errno = 0;
        double v = strtod(buf, &stop);
        if (stop == buf || *stop != '\0')
            return fail(p, GY_ERR_PARSE, "malformed vertex: \"%s\" is not a number", buf);
        if (!isfinite(v))
            return fail(p, GY_ERR_NON_FINITE, "non-finite vertex coordinate \"%s\"", buf);
        /* x y z, then an optional w or r g b (some exporters): read, but only x y z are kept. */
        if (n < 3)
            xyz[n] = v;
        n++;
        if (n > 7)
            return fail(p, GY_ERR_PARSE, "malformed vertex: more than 7 numbers");
        s = e;
    }
    if (n < 3)
        return fail(p, GY_ERR_PARSE, "malformed vertex: needs x y z (got %d number%s)", n,
                    n == 1 ? "" : "s");
    if (p->vertex_count == UINT32_MAX)
        return fail(p, GY_ERR_CAPACITY, "too many vertices");
    if (gy_array_reserve(p->a, (void **)&p->vertices, &p->vertex_cap, p->vertex_count + 1u,
                         sizeof *p->vertices) != GY_OK)
        return GY_ERR_OUT_OF_MEMORY;
    p->vertices[p->vertex_count++] = (gy_vec3){xyz[0], xyz[1], xyz[2]};
    return GY_OK;
}

/* One face corner `i`, `i/t`, `i//n` or `i/t/n`: resolves i against the vertices so far. */
static gy_result parse_corner(obj_parser *p, const char *s, const char *e, uint32_t *out)
{
    const char *slash = memchr(s, '/', (size_t)(e - s));
    const char *ie = slash != NULL ? slash : e;
    char buf[32];
    if (!token_copy(s, ie, buf, sizeof buf))
        return fail(p, GY_ERR_PARSE, "malformed face: \"%.*s\" has no vertex index",
                    (int)(e - s > 40 ? 40 : e - s), s);
    char *stop = NULL;
    errno = 0;
    long long v = strtoll(buf, &stop, 10);
    if (stop == buf || *stop != '\0')
        return fail(p, GY_ERR_PARSE, "malformed face: \"%s\" is not an index", buf);
    /* The texture and normal parts are skipped, but must be numbers (or empty) when present. */
    for (const char *c = ie; c < e; c++)
        if (*c != '/' && *c != '-' && (*c < '0' || *c > '9'))
            return fail(p, GY_ERR_PARSE, "malformed face corner \"%.*s\"",
                        (int)(e - s > 40 ? 40 : e - s), s);
    if (v == 0)
        return fail(p, GY_ERR_PARSE, "face index 0 is invalid (OBJ indices start at 1)");
    long long count = (long long)p->vertex_count;
    long long idx = v > 0 ? v - 1 : count + v;
    if (errno == ERANGE || idx < 0 || idx >= count)
        return fail(p, GY_ERR_PARSE, "face index %s out of range (%u vertices)", buf,
                    p->vertex_count);
    *out = (uint32_t)idx;
    return GY_OK;
}

static gy_result parse_face(obj_parser *p, const char *s, const char *end)
{
    uint32_t n = 0;
    for (;;) {
        s = skip_blank(s, end);
        if (at_end(s, end))
            break;
        const char *e = token_end(s, end);
        uint32_t idx = 0;
        gy_result r = parse_corner(p, s, e, &idx);
        if (r != GY_OK)
            return r;
        if (gy_array_reserve(p->a, (void **)&p->face, &p->face_cap, n + 1u, sizeof *p->face) !=
            GY_OK)
            return GY_ERR_OUT_OF_MEMORY;
        p->face[n++] = idx;
        s = e;
    }
    if (n < 3)
        return fail(p, GY_ERR_PARSE, "a face needs at least 3 vertices (got %u)", n);
    uint64_t need = (uint64_t)p->index_count + 3u * (uint64_t)(n - 2u);
    if (need > UINT32_MAX)
        return fail(p, GY_ERR_CAPACITY, "too many triangles");
    if (gy_array_reserve(p->a, (void **)&p->indices, &p->index_cap, (uint32_t)need,
                         sizeof *p->indices) != GY_OK)
        return GY_ERR_OUT_OF_MEMORY;
    /* Fan from the first corner: exact for the convex polygons exporters write. */
    for (uint32_t i = 1; i + 1 < n; i++) {
        p->indices[p->index_count++] = p->face[0];
        p->indices[p->index_count++] = p->face[i];
        p->indices[p->index_count++] = p->face[i + 1];
    }
    return GY_OK;
}

static gy_result parse_line(obj_parser *p, const char *s, const char *end)
{
    s = skip_blank(s, end);
    if (at_end(s, end))
        return GY_OK;
    const char *e = token_end(s, end);
    size_t n = (size_t)(e - s);
    if (n == 1 && s[0] == 'v')
        return parse_vertex(p, e, end);
    if (n == 1 && s[0] == 'f')
        return parse_face(p, e, end);
    return GY_OK;
}

/* Shrinks an array to its exact size (the contract in obj.h); frees it when empty. */
static bool shrink(const gy_allocator *a, void **arr, uint32_t *cap, uint32_t count, size_t elem)
{
    if (*arr == NULL || count == *cap)
        return true;
    if (count == 0) {
        gy_free(a, *arr, (size_t)*cap * elem);
        *arr = NULL;
        *cap = 0;
        return true;
    }
    void *n = gy_realloc(a, *arr, (size_t)*cap * elem, (size_t)count * elem);
    if (n == NULL)
        return false;
    *arr = n;
    *cap = count;
    return true;
}

static void parser_free(obj_parser *p)
{
    if (p->vertices != NULL)
        gy_free(p->a, p->vertices, (size_t)p->vertex_cap * sizeof *p->vertices);
    if (p->indices != NULL)
        gy_free(p->a, p->indices, (size_t)p->index_cap * sizeof *p->indices);
    if (p->face != NULL)
        gy_free(p->a, p->face, (size_t)p->face_cap * sizeof *p->face);
    p->vertices = NULL;
    p->indices = NULL;
    p->face = NULL;
}

gy_result gy_obj_parse(const char *text, size_t length, const char *name,
                       const gy_allocator *allocator, gy_obj_mesh *out, char *error,
                       size_t error_size)
{
    if (error != NULL && error_size > 0)
        error[0] = '\0';
    if (out == NULL || (text == NULL && length > 0))
        return GY_ERR_INVALID_ARGUMENT;
    obj_parser p = {0};
    p.a = gy_allocator_or_default(allocator);
    p.name = name != NULL ? name : "(obj)";
    p.error = error;
    p.error_size = error_size;

    gy_result r = GY_OK;
    const char *s = text;
    const char *end = text + length;
    while (s < end && r == GY_OK) {
        p.line++;
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *le = nl != NULL ? nl : end;
        if (memchr(s, '\0', (size_t)(le - s)) != NULL)
            r = fail(&p, GY_ERR_PARSE, "NUL byte in a text file");
        else
            r = parse_line(&p, s, le);
        s = nl != NULL ? nl + 1 : end;
    }
    if (r == GY_ERR_OUT_OF_MEMORY)
        fail(&p, r, "out of memory");
    if (r == GY_OK) {
        if (p.face != NULL)
            gy_free(p.a, p.face, (size_t)p.face_cap * sizeof *p.face);
        p.face = NULL;
        /* A failed shrink leaves the larger block and its capacity in place for parser_free. */
        if (!shrink(p.a, (void **)&p.vertices, &p.vertex_cap, p.vertex_count, sizeof *p.vertices) ||
            !shrink(p.a, (void **)&p.indices, &p.index_cap, p.index_count, sizeof *p.indices))
            r = GY_ERR_OUT_OF_MEMORY;
    }
    if (r != GY_OK) {
        parser_free(&p);
        return r;
    }
    out->vertices = p.vertices;
    out->vertex_count = p.vertex_count;
    out->indices = p.indices;
    out->index_count = p.index_count;
    return GY_OK;
}

gy_result gy_obj_load_file(const char *path, const char *name, const gy_allocator *allocator,
                           gy_obj_mesh *out, char *error, size_t error_size)
{
    if (error != NULL && error_size > 0)
        error[0] = '\0';
    if (path == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    const gy_allocator *a = gy_allocator_or_default(allocator);
    const char *shown = name != NULL ? name : path;
    gy_io_buffer buf;
    char why[160];
    gy_result r = gy_io_read_file(path, a, GY_OBJ_MAX_FILE_BYTES, &buf, why, sizeof why);
    if (r != GY_OK) {
        /* A relative name as the scene wrote it, and the path really tried: which folder it
         * was resolved against is what a user needs to see when it is missing. */
        if (error != NULL && error_size > 0 && strcmp(shown, path) != 0)
            snprintf(error, error_size, "cannot read \"%s\" (resolved as \"%s\"): %s", shown, path,
                     why);
        else if (error != NULL && error_size > 0)
            snprintf(error, error_size, "cannot read \"%s\": %s", shown, why);
        return r;
    }
    r = gy_obj_parse(buf.data, buf.length, shown, a, out, error, error_size);
    gy_io_buffer_free(a, &buf);
    return r;
}

void gy_obj_mesh_free(const gy_allocator *allocator, gy_obj_mesh *mesh)
{
    if (mesh == NULL)
        return;
    const gy_allocator *a = gy_allocator_or_default(allocator);
    if (mesh->vertices != NULL)
        gy_free(a, mesh->vertices, (size_t)mesh->vertex_count * sizeof *mesh->vertices);
    if (mesh->indices != NULL)
        gy_free(a, mesh->indices, (size_t)mesh->index_count * sizeof *mesh->indices);
    *mesh = (gy_obj_mesh){0};
}
