#include "file_io.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static void set_error(char *error, size_t size, const char *msg)
{
    if (error != NULL && size > 0)
        snprintf(error, size, "%s", msg);
}

static void set_limit_error(char *error, size_t size, size_t max_bytes)
{
    if (error != NULL && size > 0)
        snprintf(error, size, "larger than the %zu MB limit", max_bytes / (1024u * 1024u));
}

gy_result gy_io_read_file(const char *path, const gy_allocator *a, size_t max_bytes,
                          gy_io_buffer *out, char *error, size_t error_size)
{
    if (path == NULL || a == NULL || out == NULL) {
        set_error(error, error_size, "invalid argument");
        return GY_ERR_INVALID_ARGUMENT;
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        set_error(error, error_size, strerror(errno));
        return GY_ERR_IO;
    }
    struct stat st;
    size_t cap = 64u * 1024u;
    if (fstat(fileno(f), &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            fclose(f);
            set_error(error, error_size, "is a directory");
            return GY_ERR_IO;
        }
        if (S_ISREG(st.st_mode)) {
            if ((unsigned long long)st.st_size > (unsigned long long)max_bytes) {
                fclose(f);
                set_limit_error(error, error_size, max_bytes);
                return GY_ERR_CAPACITY;
            }
            /* One spare byte for the NUL, one more to see end-of-file without another grow. */
            cap = (size_t)st.st_size + 2u;
        }
    }
    char *data = gy_alloc(a, cap);
    if (data == NULL) {
        fclose(f);
        set_error(error, error_size, "out of memory");
        return GY_ERR_OUT_OF_MEMORY;
    }
    size_t len = 0;
    gy_result r = GY_OK;
    for (;;) {
        if (len + 1u >= cap) {
            /* Files that grow while read, pipes and the like: double up to the cap. */
            if (len > max_bytes) {
                set_limit_error(error, error_size, max_bytes);
                r = GY_ERR_CAPACITY;
                break;
            }
            size_t ncap = cap * 2u;
            if (ncap > max_bytes + 2u)
                ncap = max_bytes + 2u;
            char *n = gy_realloc(a, data, cap, ncap);
            if (n == NULL) {
                set_error(error, error_size, "out of memory");
                r = GY_ERR_OUT_OF_MEMORY;
                break;
            }
            data = n;
            cap = ncap;
        }
        size_t got = fread(data + len, 1, cap - 1u - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) {
                set_error(error, error_size, strerror(errno != 0 ? errno : EIO));
                r = GY_ERR_IO;
            }
            break;
        }
    }
    fclose(f);
    if (r == GY_OK && len > max_bytes) {
        set_limit_error(error, error_size, max_bytes);
        r = GY_ERR_CAPACITY;
    }
    if (r != GY_OK) {
        gy_free(a, data, cap);
        return r;
    }
    data[len] = '\0';
    out->data = data;
    out->length = len;
    out->capacity = cap;
    return GY_OK;
}

void gy_io_buffer_free(const gy_allocator *a, gy_io_buffer *buf)
{
    if (buf != NULL && buf->data != NULL)
        gy_free(a, buf->data, buf->capacity);
    if (buf != NULL)
        *buf = (gy_io_buffer){0};
}
