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

/* Path segments a locator remembers, and the longest path it remembers them for. */
#define GY_CLI_LOCATE_SEGMENTS 32
#define GY_CLI_LOCATE_PATH_MAX 512

/* Locates many paths in one text, as gy_cli_json_locate does, but each search starts from the
 * deepest value it shares with the previous path, and lines are counted on from the previous
 * position when the new one is further: a file's errors, which come in document order, cost
 * about one pass over the text instead of one pass each. Keeps `text`; never allocates. */
typedef struct gy_cli_json_locator {
    const char *text;
    size_t len, root; /* root: where the document's value starts */
    char path[GY_CLI_LOCATE_PATH_MAX];
    size_t segment_len[GY_CLI_LOCATE_SEGMENTS]; /* path's length up to each segment's end */
    size_t segment_pos[GY_CLI_LOCATE_SEGMENTS]; /* in text: where its value starts */
    uint32_t segments;
    size_t known_pos; /* a position whose line and column are known */
    uint32_t known_line, known_column;
} gy_cli_json_locator;

void gy_cli_json_locator_init(gy_cli_json_locator *L, const char *text, size_t len);
/* As gy_cli_json_locate; the same answers whatever paths came before. */
bool gy_cli_json_locator_find(gy_cli_json_locator *L, const char *path, gy_cli_location *out);

#endif /* GY_CLI_JSON_LOCATE_H */
