/* JSON path → line and column in the text (json_locate.h).
 *
 * A forward scan that only descends: each path segment picks one member or element and skips its
 * siblings, so the cost is the text up to the located value. Containers are skipped by counting
 * brackets (outside strings), so depth costs no recursion. Keys are decoded (escapes, \u
 * surrogate pairs) before they are compared with the path, which holds them unescaped. */
#include <string.h>

#include "json_locate.h"

/* Keys are compared on their first bytes only: the path holds at most 64 bytes of a key. */
#define KEY_KEEP   128u
#define KEY_CUT_AT 64u
#define KEY_CUT_TO 61u

typedef struct cursor {
    const char *s;
    size_t len, pos;
} cursor;

static bool is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

static void skip_space(cursor *c)
{
    while (c->pos < c->len && is_space(c->s[c->pos]))
        c->pos++;
}

static bool at(const cursor *c, char ch)
{
    return c->pos < c->len && c->s[c->pos] == ch;
}

/* From an opening quote to just past the closing one. */
static void skip_string(cursor *c)
{
    for (c->pos++; c->pos < c->len; c->pos++) {
        char ch = c->s[c->pos];
        if (ch == '\\')
            c->pos++;
        else if (ch == '"') {
            c->pos++;
            return;
        }
    }
}

static void skip_value(cursor *c)
{
    if (at(c, '"')) {
        skip_string(c);
        return;
    }
    if (!at(c, '{') && !at(c, '[')) {
        while (c->pos < c->len && !is_space(c->s[c->pos]) && strchr(",]}", c->s[c->pos]) == NULL)
            c->pos++;
        return;
    }
    size_t depth = 0;
    while (c->pos < c->len) {
        char ch = c->s[c->pos];
        if (ch == '"') {
            skip_string(c);
            continue;
        }
        c->pos++;
        if (ch == '{' || ch == '[')
            depth++;
        else if ((ch == '}' || ch == ']') && --depth == 0)
            return;
    }
}

static int hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* Four hex digits at s[pos..]; -1 when they are not. */
static long hex4(const cursor *c, size_t pos)
{
    if (pos + 4u > c->len)
        return -1;
    long v = 0;
    for (size_t i = 0; i < 4u; i++) {
        int d = hex_digit(c->s[pos + i]);
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* A decoded key: its first KEY_KEEP bytes, its whole length and whether the loader would write it
 * plainly (letters, digits, '_', '-'; not empty). */
typedef struct key {
    char bytes[KEY_KEEP];
    size_t length;
    bool plain;
} key;

static void key_put(key *k, unsigned char b)
{
    if (k->length < KEY_KEEP)
        k->bytes[k->length] = (char)b;
    k->length++;
    bool word = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') ||
                b == '_' || b == '-';
    k->plain = k->plain && word;
}

static void key_put_code_point(key *k, unsigned long cp)
{
    if (cp < 0x80u) {
        key_put(k, (unsigned char)cp);
    } else if (cp < 0x800u) {
        key_put(k, (unsigned char)(0xC0u | (cp >> 6)));
        key_put(k, (unsigned char)(0x80u | (cp & 0x3Fu)));
    } else if (cp < 0x10000u) {
        key_put(k, (unsigned char)(0xE0u | (cp >> 12)));
        key_put(k, (unsigned char)(0x80u | ((cp >> 6) & 0x3Fu)));
        key_put(k, (unsigned char)(0x80u | (cp & 0x3Fu)));
    } else {
        key_put(k, (unsigned char)(0xF0u | (cp >> 18)));
        key_put(k, (unsigned char)(0x80u | ((cp >> 12) & 0x3Fu)));
        key_put(k, (unsigned char)(0x80u | ((cp >> 6) & 0x3Fu)));
        key_put(k, (unsigned char)(0x80u | (cp & 0x3Fu)));
    }
}

/* Decodes the string at the cursor (an opening quote) and moves past it. */
static void read_key(cursor *c, key *k)
{
    k->length = 0;
    k->plain = true;
    for (c->pos++; c->pos < c->len; c->pos++) {
        unsigned char ch = (unsigned char)c->s[c->pos];
        if (ch == '"') {
            c->pos++;
            break;
        }
        if (ch != '\\' || c->pos + 1u >= c->len) {
            key_put(k, ch);
            continue;
        }
        char e = c->s[++c->pos];
        static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
        const char *m = strchr(from, e);
        if (e != 'u' && m != NULL && e != '\0') {
            key_put(k, (unsigned char)to[m - from]);
            continue;
        }
        long cp = e == 'u' ? hex4(c, c->pos + 1u) : -1;
        if (cp < 0) {
            key_put(k, (unsigned char)e);
            continue;
        }
        c->pos += 4u;
        if (cp >= 0xD800 && cp < 0xDC00 && c->pos + 2u < c->len && c->s[c->pos + 1u] == '\\' &&
            c->s[c->pos + 2u] == 'u') {
            long lo = hex4(c, c->pos + 3u);
            if (lo >= 0xDC00 && lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                c->pos += 6u;
            }
        }
        key_put_code_point(k, (unsigned long)cp);
    }
    k->plain = k->plain && k->length > 0;
}

static bool segment_end(char ch)
{
    return ch == '\0' || ch == '.' || ch == '[';
}

/* Where the path continues after the segment at path[p] when that segment names key `k`, or 0
 * when it does not. The loader writes `.key` (no dot first), or `["key"]`; a key longer than
 * KEY_CUT_AT bytes as its first KEY_CUT_TO (whole UTF-8 characters) followed by "...". */
static size_t match_key(const char *path, size_t p, const key *k)
{
    size_t n = k->length;
    bool cut = n > KEY_CUT_AT;
    if (cut) {
        n = KEY_CUT_TO;
        while (n > 0 && ((unsigned char)k->bytes[n] & 0xC0u) == 0x80u)
            n--;
    }
    size_t q = p;
    if (k->plain) {
        if (p > 0 && path[q++] != '.')
            return 0;
    } else {
        if (strncmp(path + q, "[\"", 2) != 0)
            return 0;
        q += 2;
    }
    if (strncmp(path + q, k->bytes, n) != 0)
        return 0;
    q += n;
    if (!k->plain) {
        if (strncmp(path + q, "\"]", 2) != 0)
            return 0;
        q += 2;
    }
    if (cut) {
        if (strncmp(path + q, "...", 3) != 0)
            return 0;
        q += 3;
    }
    return segment_end(path[q]) ? q : 0;
}

/* `[N]` at path[p]: true with *index and *next set. */
static bool index_segment(const char *path, size_t p, size_t *index, size_t *next)
{
    if (path[p] != '[' || path[p + 1] < '0' || path[p + 1] > '9')
        return false;
    size_t v = 0, q = p + 1;
    while (path[q] >= '0' && path[q] <= '9') {
        if (v > (SIZE_MAX - 9u) / 10u)
            return false;
        v = v * 10u + (size_t)(path[q++] - '0');
    }
    if (path[q] != ']' || !segment_end(path[q + 1]))
        return false;
    *index = v;
    *next = q + 1;
    return true;
}

/* Moves the cursor from an array's '[' to element `index`; false when it has fewer. */
static bool find_element(cursor *c, size_t index)
{
    c->pos++;
    for (size_t i = 0;; i++) {
        skip_space(c);
        if (c->pos >= c->len || at(c, ']'))
            return false;
        if (i == index)
            return true;
        skip_value(c);
        skip_space(c);
        if (!at(c, ','))
            return false;
        c->pos++;
    }
}

/* Moves the cursor from an object's '{' to the value of the first member the segment at path[p]
 * names and returns where the path continues; 0 when no member matches. */
static size_t find_member(cursor *c, const char *path, size_t p)
{
    c->pos++;
    for (;;) {
        skip_space(c);
        if (!at(c, '"'))
            return 0;
        key k;
        read_key(c, &k);
        skip_space(c);
        if (!at(c, ':'))
            return 0;
        c->pos++;
        skip_space(c);
        size_t next = match_key(path, p, &k);
        if (next > 0)
            return next;
        skip_value(c);
        skip_space(c);
        if (!at(c, ','))
            return 0;
        c->pos++;
    }
}

void gy_cli_json_locator_init(gy_cli_json_locator *L, const char *text, size_t len)
{
    memset(L, 0, sizeof *L);
    L->text = text;
    L->len = len;
    L->root = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3u : 0u;
    cursor c = {text, len, L->root};
    skip_space(&c);
    L->root = c.pos;
    L->known_line = L->known_column = 1;
}

/* How many of the remembered segments the new path starts with (whole segments only). */
static uint32_t shared_segments(const gy_cli_json_locator *L, const char *path)
{
    uint32_t k = L->segments;
    while (k > 0) {
        size_t end = L->segment_len[k - 1];
        if (strncmp(path, L->path, end) == 0 && segment_end(path[end]))
            break;
        k--;
    }
    return k;
}

bool gy_cli_json_locator_find(gy_cli_json_locator *L, const char *path, gy_cli_location *out)
{
    if (L->root >= L->len)
        return false;
    cursor c = {L->text, L->len, L->root};
    size_t best = c.pos, p = 0;
    bool exact = true;
    if (strcmp(path, "(root)") == 0)
        path = "";
    /* Resume from the deepest value the previous path shares with this one: errors come in
     * document order, so consecutive paths share most of their way. */
    uint32_t seg = strlen(path) < sizeof L->path ? shared_segments(L, path) : 0u;
    if (seg > 0) {
        p = L->segment_len[seg - 1];
        best = c.pos = L->segment_pos[seg - 1];
    }
    while (path[p] != '\0') {
        size_t index, next = 0;
        if (index_segment(path, p, &index, &next)) {
            if (!at(&c, '[') || !find_element(&c, index))
                next = 0;
        } else {
            next = at(&c, '{') ? find_member(&c, path, p) : 0;
        }
        if (next == 0) {
            exact = false;
            break;
        }
        p = next;
        best = c.pos;
        if (seg < GY_CLI_LOCATE_SEGMENTS) {
            L->segment_len[seg] = p;
            L->segment_pos[seg] = best;
            seg++;
        }
    }
    L->segments = seg;
    if (strlen(path) < sizeof L->path)
        memcpy(L->path, path, strlen(path) + 1u);
    else
        L->segments = 0;
    /* Lines and columns counted on from the last position found when this one is further. */
    size_t from = 0;
    uint32_t line = 1, column = 1;
    if (best >= L->known_pos) {
        from = L->known_pos;
        line = L->known_line;
        column = L->known_column;
    }
    for (size_t i = from; i < best; i++) {
        unsigned char ch = (unsigned char)L->text[i];
        if (ch == '\n') {
            line++;
            column = 1;
        } else if ((ch & 0xC0u) != 0x80u) {
            column++;
        }
    }
    L->known_pos = best;
    L->known_line = line;
    L->known_column = column;
    out->line = line;
    out->column = column;
    out->exact = exact;
    return true;
}

bool gy_cli_json_locate(const char *text, size_t len, const char *path, gy_cli_location *out)
{
    gy_cli_json_locator L;
    gy_cli_json_locator_init(&L, text, len);
    return gy_cli_json_locator_find(&L, path, out);
}
