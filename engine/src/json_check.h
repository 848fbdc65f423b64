/* A strict, non-recursive JSON syntax check (RFC 8259) run before cJSON parses a document, so that
 * every syntax error gets an exact position and a precise message, and so that documents cJSON
 * would handle badly (deep nesting: it recurses per level; a flood of values: ~80 bytes each;
 * numbers over 63 characters, which it silently truncates; NUL escapes) never reach it. */
#ifndef GYRE_ENGINE_JSON_CHECK_H
#define GYRE_ENGINE_JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gy_json_check_error {
    size_t pos;        /* byte offset of the problem (== length for "unexpected end") */
    char message[160]; /* e.g. "malformed JSON: expected ',' or '}' after an object member" */
} gy_json_check_error;

/* Checks text[start, length) holds exactly one JSON value with at most `max_depth` levels of
 * nesting and at most `max_values` values in total. Returns false with *err filled on the first
 * problem. Whitespace-only text is reported at `length` as "no JSON value". */
bool gy_json_check(const char *text, size_t length, size_t start, uint32_t max_depth,
                   uint32_t max_values, gy_json_check_error *err);

#endif
