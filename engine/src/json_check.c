/* Strict JSON syntax check: one pass, an explicit container stack (one bit per level), no
 * allocation. */
#include "json_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_LEVELS 512u /* bits in the container stack */

typedef struct checker {
    const unsigned char *s;
    size_t len;
    size_t pos;
    gy_json_check_error *err;
} checker;

static bool report(checker *c, size_t pos, const char *prefix, const char *fmt, va_list ap)
{
    c->err->pos = pos;
    int n = snprintf(c->err->message, sizeof c->err->message, "%s", prefix);
    vsnprintf(c->err->message + n, sizeof c->err->message - (size_t)n, fmt, ap);
    return false;
}

/* A syntax error: "malformed JSON: ..." */
static bool fail(checker *c, size_t pos, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Valid syntax but not acceptable text (bytes, limits): the message stands alone. */
static bool refuse(checker *c, size_t pos, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static bool fail(checker *c, size_t pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(c, pos, "malformed JSON: ", fmt, ap);
    va_end(ap);
    return false;
}

static bool refuse(checker *c, size_t pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(c, pos, "", fmt, ap);
    va_end(ap);
    return false;
}

/* What stands at pos, for "got ..." in messages. */
static const char *describe(const checker *c, size_t pos, char *buf, size_t size)
{
    if (pos >= c->len)
        return "the end of the text";
    unsigned char ch = c->s[pos];
    bool word = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
    if (word) {
        size_t n = 0;
        while (pos + n < c->len && n < 16u &&
               ((c->s[pos + n] >= 'a' && c->s[pos + n] <= 'z') ||
                (c->s[pos + n] >= 'A' && c->s[pos + n] <= 'Z') ||
                (c->s[pos + n] >= '0' && c->s[pos + n] <= '9') || c->s[pos + n] == '_'))
            n++;
        snprintf(buf, size, "\"%.*s\"", (int)n, (const char *)c->s + pos);
    } else if (ch >= 0x21 && ch < 0x7F) {
        snprintf(buf, size, "'%c'", ch);
    } else {
        snprintf(buf, size, "byte 0x%02X", ch);
    }
    return buf;
}

static void skip_ws(checker *c)
{
    while (c->pos < c->len) {
        unsigned char ch = c->s[c->pos];
        if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r')
            return;
        c->pos++;
    }
}

/* Length of the valid UTF-8 sequence at i (2..4 bytes, no overlongs or surrogates), or 0. */
static size_t utf8_len(const unsigned char *s, size_t i, size_t len)
{
    unsigned char b = s[i];
    size_t n;
    unsigned lo = 0x80u, hi = 0xBFu;
    if (b >= 0xC2u && b <= 0xDFu) {
        n = 2;
    } else if (b >= 0xE0u && b <= 0xEFu) {
        n = 3;
        if (b == 0xE0u)
            lo = 0xA0u;
        if (b == 0xEDu)
            hi = 0x9Fu;
    } else if (b >= 0xF0u && b <= 0xF4u) {
        n = 4;
        if (b == 0xF0u)
            lo = 0x90u;
        if (b == 0xF4u)
            hi = 0x8Fu;
    } else {
        return 0;
    }
    if (i + n > len || s[i + 1] < lo || s[i + 1] > hi)
        return 0;
    for (size_t k = 2; k < n; k++)
        if ((s[i + k] & 0xC0u) != 0x80u)
            return 0;
    return n;
}

static int hex4(const unsigned char *s, size_t i, size_t len)
{
    if (i + 4 > len)
        return -1;
    int v = 0;
    for (size_t k = 0; k < 4; k++) {
        unsigned char h = s[i + k];
        int d = h >= '0' && h <= '9'   ? h - '0'
                : h >= 'a' && h <= 'f' ? h - 'a' + 10
                : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static bool scan_string(checker *c)
{
    size_t open = c->pos++;
    for (;;) {
        if (c->pos >= c->len)
            return fail(c, open, "unterminated string");
        unsigned char ch = c->s[c->pos];
        if (ch == '"') {
            c->pos++;
            return true;
        }
        if (ch == 0)
            return refuse(c, c->pos, "NUL byte: not a text file");
        if (ch < 0x20)
            return fail(c, c->pos, "control character 0x%02X in a string (write it as an escape)",
                        ch);
        if (ch >= 0x80) {
            size_t n = utf8_len(c->s, c->pos, c->len);
            if (n == 0)
                return refuse(c, c->pos, "invalid UTF-8 in a string");
            c->pos += n;
            continue;
        }
        if (ch != '\\') {
            c->pos++;
            continue;
        }
        size_t esc = c->pos;
        if (esc + 1 >= c->len)
            return fail(c, open, "unterminated string");
        unsigned char e = c->s[esc + 1];
        if (e != 'u') {
            if (strchr("\"\\/bfnrt", e) == NULL || e == 0)
                return fail(c, esc, "invalid escape '\\%c' in a string",
                            e >= 0x20 && e < 0x7F ? e : '?');
            c->pos += 2;
            continue;
        }
        int u = hex4(c->s, esc + 2, c->len);
        if (u < 0)
            return fail(c, esc, "\\u needs 4 hex digits");
        if (u == 0)
            return fail(c, esc, "\\u0000 is not allowed in a string");
        c->pos = esc + 6;
        if (u >= 0xDC00 && u <= 0xDFFF)
            return fail(c, esc, "unpaired UTF-16 surrogate \\u%04X", (unsigned)u);
        if (u >= 0xD800 && u <= 0xDBFF) {
            int lo = c->pos + 1 < c->len && c->s[c->pos] == '\\' && c->s[c->pos + 1] == 'u'
                         ? hex4(c->s, c->pos + 2, c->len)
                         : -1;
            if (lo < 0xDC00 || lo > 0xDFFF)
                return fail(c, esc, "unpaired UTF-16 surrogate \\u%04X", (unsigned)u);
            c->pos += 6;
        }
    }
}

static bool is_digit(unsigned char ch)
{
    return ch >= '0' && ch <= '9';
}

static bool scan_number(checker *c)
{
    size_t start = c->pos;
    const unsigned char *s = c->s;
    size_t p = c->pos;
    if (p < c->len && s[p] == '-')
        p++;
    if (p < c->len && s[p] == '0') {
        p++;
    } else if (p < c->len && s[p] >= '1' && s[p] <= '9') {
        while (p < c->len && is_digit(s[p]))
            p++;
    } else {
        return fail(c, start, "malformed number");
    }
    if (p < c->len && s[p] == '.') {
        p++;
        if (!(p < c->len && is_digit(s[p])))
            return fail(c, start, "malformed number (digits must follow '.')");
        while (p < c->len && is_digit(s[p]))
            p++;
    }
    if (p < c->len && (s[p] == 'e' || s[p] == 'E')) {
        p++;
        if (p < c->len && (s[p] == '+' || s[p] == '-'))
            p++;
        if (!(p < c->len && is_digit(s[p])))
            return fail(c, start, "malformed number (digits must follow the exponent)");
        while (p < c->len && is_digit(s[p]))
            p++;
    }
    if (p < c->len && (is_digit(s[p]) || s[p] == '.' || (s[p] >= 'a' && s[p] <= 'z') ||
                       (s[p] >= 'A' && s[p] <= 'Z')))
        return fail(c, start, "malformed number%s",
                    s[start] == '0' ||
                            (s[start] == '-' && start + 1 < c->len && s[start + 1] == '0')
                        ? " (no leading zeros)"
                        : "");
    /* cJSON reads at most 63 characters of a number and would misparse the rest. */
    if (p - start > 63u)
        return refuse(c, start, "number longer than 63 characters");
    c->pos = p;
    return true;
}

static bool scan_literal(checker *c)
{
    static const char *const words[] = {"true", "false", "null"};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if (c->pos + n <= c->len && memcmp(c->s + c->pos, words[i], n) == 0) {
            size_t p = c->pos + n;
            if (p < c->len && ((c->s[p] >= 'a' && c->s[p] <= 'z') ||
                               (c->s[p] >= 'A' && c->s[p] <= 'Z') || is_digit(c->s[p])))
                break;
            c->pos = p;
            return true;
        }
    }
    char buf[48];
    return fail(c, c->pos, "expected a value, got %s", describe(c, c->pos, buf, sizeof buf));
}

enum { EXPECT_VALUE, EXPECT_VALUE_OR_CLOSE, EXPECT_KEY, EXPECT_KEY_OR_CLOSE, AFTER_VALUE };

bool gy_json_check(const char *text, size_t length, size_t start, uint32_t max_depth,
                   uint32_t max_values, gy_json_check_error *err)
{
    checker c = {(const unsigned char *)text, length, start, err};
    uint64_t stack[MAX_LEVELS / 64u] = {0}; /* bit set: object at that level, clear: array */
    if (max_depth > MAX_LEVELS)
        max_depth = MAX_LEVELS;
    uint32_t depth = 0;
    uint64_t values = 0;
    int mode = EXPECT_VALUE;
    char buf[48];

    skip_ws(&c);
    if (c.pos >= c.len)
        return fail(&c, c.len, "no JSON value");
    for (;;) {
        skip_ws(&c);
        size_t p = c.pos;
        unsigned char ch = p < c.len ? c.s[p] : 0;
        bool at_end = p >= c.len;
        if (!at_end && ch == 0)
            return refuse(&c, p, "NUL byte: not a text file");
        switch (mode) {
        case EXPECT_VALUE:
        case EXPECT_VALUE_OR_CLOSE:
            if (at_end)
                return fail(&c, p, "unexpected end of the text (expected a value)");
            if (ch == ']' && mode == EXPECT_VALUE_OR_CLOSE) {
                depth--;
                c.pos++;
                mode = AFTER_VALUE;
                break;
            }
            if (++values > max_values)
                return refuse(&c, p, "more than %u JSON values (put large meshes in OBJ files)",
                              max_values);
            if (ch == '{' || ch == '[') {
                if (depth >= max_depth)
                    return refuse(&c, p, "nested deeper than %u levels", max_depth);
                if (ch == '{')
                    stack[depth / 64u] |= (uint64_t)1 << (depth % 64u);
                else
                    stack[depth / 64u] &= ~((uint64_t)1 << (depth % 64u));
                depth++;
                c.pos++;
                mode = ch == '{' ? EXPECT_KEY_OR_CLOSE : EXPECT_VALUE_OR_CLOSE;
                break;
            }
            if (ch == '"') {
                if (!scan_string(&c))
                    return false;
            } else if (ch == '-' || is_digit(ch)) {
                if (!scan_number(&c))
                    return false;
            } else if (!scan_literal(&c)) {
                return false;
            }
            mode = AFTER_VALUE;
            break;
        case EXPECT_KEY:
        case EXPECT_KEY_OR_CLOSE:
            if (ch == '}' && mode == EXPECT_KEY_OR_CLOSE && !at_end) {
                depth--;
                c.pos++;
                mode = AFTER_VALUE;
                break;
            }
            if (at_end || ch != '"')
                return fail(&c, p, "expected a key in double quotes%s, got %s",
                            mode == EXPECT_KEY ? " after ','" : "",
                            describe(&c, p, buf, sizeof buf));
            if (!scan_string(&c))
                return false;
            skip_ws(&c);
            if (c.pos >= c.len || c.s[c.pos] != ':')
                return fail(&c, c.pos, "expected ':' after the key, got %s",
                            describe(&c, c.pos, buf, sizeof buf));
            c.pos++;
            mode = EXPECT_VALUE;
            break;
        case AFTER_VALUE: {
            if (depth == 0) {
                if (!at_end)
                    return fail(&c, p, "unexpected %s after the end of the JSON value",
                                describe(&c, p, buf, sizeof buf));
                return true;
            }
            bool obj = (stack[(depth - 1u) / 64u] >> ((depth - 1u) % 64u)) & 1u;
            if (!at_end && ch == ',') {
                c.pos++;
                mode = obj ? EXPECT_KEY : EXPECT_VALUE;
            } else if (!at_end && ch == (obj ? '}' : ']')) {
                depth--;
                c.pos++;
            } else {
                return fail(&c, p, "expected ',' or '%c' after %s, got %s", obj ? '}' : ']',
                            obj ? "an object member" : "an array element",
                            describe(&c, p, buf, sizeof buf));
            }
            break;
        }
        default:
            return fail(&c, p, "internal error");
        }
    }
}
