/* Whole-file reads for the scene and OBJ loaders, through a gy_allocator and with a size cap. */
#ifndef GYRE_ENGINE_FILE_IO_H
#define GYRE_ENGINE_FILE_IO_H

#include "gyre/core.h"

/* A file's bytes plus a terminating NUL (data[length] == 0). Free `data` with `capacity`. */
typedef struct gy_io_buffer {
    char *data;
    size_t length;
    size_t capacity;
} gy_io_buffer;

/* Reads `path` whole. On failure nothing stays allocated and `error` (when non-NULL) receives the
 * reason without the path, e.g. "No such file or directory" or "larger than the 64 MB limit".
 * Returns GY_OK, GY_ERR_IO, GY_ERR_CAPACITY (more than max_bytes) or GY_ERR_OUT_OF_MEMORY. */
gy_result gy_io_read_file(const char *path, const gy_allocator *a, size_t max_bytes,
                          gy_io_buffer *out, char *error, size_t error_size);

void gy_io_buffer_free(const gy_allocator *a, gy_io_buffer *buf);

#endif
