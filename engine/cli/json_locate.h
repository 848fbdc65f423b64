/* Where a value of a JSON document is in its text: maps a JSON path as the scene loader writes
 * it (docs/cli.md) to the line and column its value starts at. cJSON keeps no positions, so the
 * command line finds them again in the text to print `file:line:column` for every error. */
#ifndef GY_CLI_JSON_LOCATE_H
#define GY_CLI_JSON_LOCATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A position in the text: 1-based line, and 1-based column counted in UTF-8 code points (as the
 * loader counts for syntax errors). */
typedef struct gy_cli_location {
    uint32_t line, column;
    bool exact; /* the whole path was found; false: the position of the deepest value of the path
                 * that exists (its parent object for a missing key, the root for "(root)") */
} gy_cli_location;

/* Locates `path` in the `len` bytes of `text`, a JSON document (a UTF-8 byte order mark is
 * skipped). Paths are the loader's: `entities[3].components.physics.mass`; keys that are not
 * plain identifiers (letters, digits, '_', '-') bracketed and quoted as written, unescaped
 * (`materials["ice rink"]`); keys longer than 64 bytes cut to their first 61 (whole UTF-8
 * characters) followed by "..."; "(root)" or "" for the document itself. False only when the text
 * holds no value at all; malformed text ends the search at the last value found. Reads no more
 * than the text up to the located value's start; never allocates. */
bool gy_cli_json_locate(const char *text, size_t len, const char *path, gy_cli_location *out);

#endif /* GY_CLI_JSON_LOCATE_H */
