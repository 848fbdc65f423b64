/* The OBJ cache: a short list of reference-counted parsed meshes keyed by path, size and mtime. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>

#include "gyre/obj_cache.h"

typedef struct entry {
    struct entry *next;
    char *path;
    size_t path_size;
    long long size;
    long long mtime_ns;
    uint32_t refs;
    gy_obj_mesh mesh;
} entry;

struct gy_obj_cache {
    const gy_allocator *a;
    pthread_mutex_t lock; /* guards entries and stats */
    atomic_uint refs;     /* the creator's, plus one per live entry */
    entry *entries;
    gy_obj_cache_stats stats;
};

gy_result gy_obj_cache_create(const gy_allocator *allocator, gy_obj_cache **out)
{
    if (out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    *out = NULL;
    const gy_allocator *a = gy_allocator_or_default(allocator);
    gy_obj_cache *c = gy_alloc_zeroed(a, sizeof *c);
    if (c == NULL)
        return GY_ERR_OUT_OF_MEMORY;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        gy_free(a, c, sizeof *c);
        return GY_ERR_IO;
    }
    c->a = a;
    atomic_init(&c->refs, 1u);
    *out = c;
    return GY_OK;
}

void gy_obj_cache_retain(gy_obj_cache *cache)
{
    if (cache != NULL)
        atomic_fetch_add(&cache->refs, 1u);
}

void gy_obj_cache_release(gy_obj_cache *cache)
{
    if (cache == NULL || atomic_fetch_sub(&cache->refs, 1u) != 1u)
        return;
    /* Every entry holds a reference, so none is left here. */
    assert(cache->entries == NULL);
    pthread_mutex_destroy(&cache->lock);
    gy_free(cache->a, cache, sizeof *cache);
}

static uint64_t mesh_bytes(const gy_obj_mesh *m)
{
    return (uint64_t)m->vertex_count * sizeof *m->vertices +
           (uint64_t)m->index_count * sizeof *m->indices;
}

gy_result gy_obj_cache_acquire(gy_obj_cache *cache, const char *path, const char *name,
                               const gy_obj_mesh **out, char *error, size_t error_size)
{
    if (out != NULL)
        *out = NULL;
    if (cache == NULL || path == NULL || out == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    /* A file that cannot be stat'ed is not cached; gy_obj_load_file reports why. */
    struct stat st;
    bool known = stat(path, &st) == 0;
    long long size = known ? (long long)st.st_size : -1;
    long long mtime = known ? (long long)st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec : -1;

    pthread_mutex_lock(&cache->lock);
    for (entry *e = cache->entries; known && e != NULL; e = e->next) {
        if (e->size == size && e->mtime_ns == mtime && strcmp(e->path, path) == 0) {
            e->refs++;
            cache->stats.hits++;
            *out = &e->mesh;
            pthread_mutex_unlock(&cache->lock);
            return GY_OK;
        }
    }
    cache->stats.parses++;
    pthread_mutex_unlock(&cache->lock);

    /* Parsed outside the lock: two threads racing on one new file may both parse it, each getting
     * its own entry, which is correct if wasteful. */
    gy_obj_mesh mesh = {0};
    gy_result r = gy_obj_load_file(path, name, cache->a, &mesh, error, error_size);
    if (r != GY_OK)
        return r;
    if (!known) {
        /* Without a size and mtime the entry could never be matched or told stale. */
        gy_obj_mesh_free(cache->a, &mesh);
        return GY_ERR_IO;
    }
    size_t pl = strlen(path) + 1u;
    entry *e = gy_alloc_zeroed(cache->a, sizeof *e);
    char *p = e != NULL ? gy_alloc(cache->a, pl) : NULL;
    if (p == NULL) {
        if (e != NULL)
            gy_free(cache->a, e, sizeof *e);
        gy_obj_mesh_free(cache->a, &mesh);
        return GY_ERR_OUT_OF_MEMORY;
    }
    memcpy(p, path, pl);
    e->path = p;
    e->path_size = pl;
    e->size = size;
    e->mtime_ns = mtime;
    e->refs = 1u;
    e->mesh = mesh;
    gy_obj_cache_retain(cache);
    pthread_mutex_lock(&cache->lock);
    e->next = cache->entries;
    cache->entries = e;
    cache->stats.entries++;
    cache->stats.bytes += mesh_bytes(&mesh);
    pthread_mutex_unlock(&cache->lock);
    *out = &e->mesh;
    return GY_OK;
}

gy_result gy_obj_cache_unref(gy_obj_cache *cache, const gy_obj_mesh *mesh)
{
    if (mesh == NULL)
        return GY_OK;
    if (cache == NULL)
        return GY_ERR_INVALID_ARGUMENT;
    pthread_mutex_lock(&cache->lock);
    entry **link = &cache->entries;
    while (*link != NULL && &(*link)->mesh != mesh)
        link = &(*link)->next;
    entry *e = *link;
    if (e == NULL) {
        pthread_mutex_unlock(&cache->lock);
        return GY_ERR_INVALID_ARGUMENT;
    }
    bool last = --e->refs == 0u;
    if (last) {
        *link = e->next;
        cache->stats.entries--;
        cache->stats.bytes -= mesh_bytes(&e->mesh);
    }
    pthread_mutex_unlock(&cache->lock);
    if (last) {
        gy_obj_mesh_free(cache->a, &e->mesh);
        gy_free(cache->a, e->path, e->path_size);
        gy_free(cache->a, e, sizeof *e);
        gy_obj_cache_release(cache);
    }
    return GY_OK;
}

gy_obj_cache_stats gy_obj_cache_get_stats(gy_obj_cache *cache)
{
    gy_obj_cache_stats s = {0};
    if (cache == NULL)
        return s;
    pthread_mutex_lock(&cache->lock);
    s = cache->stats;
    pthread_mutex_unlock(&cache->lock);
    return s;
}
