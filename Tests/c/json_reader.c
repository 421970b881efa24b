/*
 * json_reader.c — the small JSON tree reader of the C test suites
 * (json_reader.h): a recursive-descent parser over a byte buffer and the
 * accessors a data-driven test uses to walk the tree.
 */
#include "json_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JR_MAX_DEPTH 200

typedef struct jr_parser {
    const char *p, *end, *start;
    char *error;
    size_t error_size;
    int failed;
} jr_parser;

static void fail(jr_parser *ps, const char *expected)
{
    if (ps->failed)
        return;
    ps->failed = 1;
    if (ps->error && ps->error_size)
        snprintf(ps->error, ps->error_size, "json: at offset %zu: expected %s", (size_t)(ps->p - ps->start),
                 expected);
}

static void skip_ws(jr_parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static int eat(jr_parser *ps, char c)
{
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == c) {
        ps->p++;
        return 1;
    }
    return 0;
}

static int literal(jr_parser *ps, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, word, n) == 0) {
        ps->p += n;
        return 1;
    }
    return 0;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Appends code point `cp` (BMP) to out as UTF-8. */
static size_t put_utf8(char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
}

/* Parses a string at ps->p (after whitespace); the result is malloc'ed. */
static char *parse_string(jr_parser *ps)
{
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != '"') {
        fail(ps, "a string");
        return NULL;
    }
    ps->p++;
    /* Decoding never makes the text longer (an escape of 6 bytes gives at
     * most 3), so the raw span bounds the output. */
    const char *close = ps->p;
    while (close < ps->end && *close != '"')
        close += (*close == '\\' && close + 1 < ps->end) ? 2 : 1;
    char *out = malloc((size_t)(close - ps->p) + 1);
    if (!out) {
        fail(ps, "memory");
        return NULL;
    }
    size_t n = 0;
    while (ps->p < ps->end && *ps->p != '"') {
        char c = *ps->p++;
        if (c != '\\') {
            out[n++] = c;
            continue;
        }
        if (ps->p >= ps->end)
            break;
        char e = *ps->p++;
        switch (e) {
        case 'n': out[n++] = '\n'; break;
        case 't': out[n++] = '\t'; break;
        case 'r': out[n++] = '\r'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'u': {
            unsigned cp = 0;
            for (int i = 0; i < 4; i++) {
                int d = ps->p < ps->end ? hex_digit(*ps->p) : -1;
                if (d < 0) {
                    free(out);
                    fail(ps, "four hex digits");
                    return NULL;
                }
                cp = cp * 16 + (unsigned)d;
                ps->p++;
            }
            n += put_utf8(out + n, cp);
            break;
        }
        default: out[n++] = e; break; /* \" \\ \/ */
        }
    }
    if (ps->p >= ps->end) {
        free(out);
        fail(ps, "the end of the string");
        return NULL;
    }
    ps->p++;
    out[n] = '\0';
    return out;
}

static int parse_value(jr_parser *ps, jr_value *v, int depth);

/* Grows the item (and key) arrays of a container by one slot. */
static jr_value *push_item(jr_parser *ps, jr_value *v, size_t *cap, char *key)
{
    if (v->count == *cap) {
        size_t grown = *cap ? *cap * 2 : 4;
        jr_value *items = realloc(v->items, grown * sizeof *items);
        if (items)
            v->items = items;
        char **keys = v->kind == JR_OBJECT ? realloc(v->keys, grown * sizeof *keys) : NULL;
        if (keys)
            v->keys = keys;
        if (!items || (v->kind == JR_OBJECT && !keys)) {
            fail(ps, "memory");
            return NULL;
        }
        *cap = grown;
    }
    jr_value *item = &v->items[v->count];
    memset(item, 0, sizeof *item);
    if (v->kind == JR_OBJECT)
        v->keys[v->count] = key;
    v->count++;
    return item;
}

static int parse_container(jr_parser *ps, jr_value *v, char close, int depth)
{
    size_t cap = 0;
    if (eat(ps, close))
        return 0;
    do {
        char *key = NULL;
        if (v->kind == JR_OBJECT) {
            key = parse_string(ps);
            if (!key)
                return -1;
            if (!eat(ps, ':')) {
                free(key);
                fail(ps, "':'");
                return -1;
            }
        }
        jr_value *item = push_item(ps, v, &cap, key);
        if (!item) {
            free(key);
            return -1;
        }
        if (parse_value(ps, item, depth + 1))
            return -1;
    } while (eat(ps, ','));
    if (!eat(ps, close)) {
        fail(ps, close == ']' ? "',' or ']'" : "',' or '}'");
        return -1;
    }
    return 0;
}

static int parse_number(jr_parser *ps, jr_value *v)
{
    char buf[64];
    size_t n = 0;
    while (ps->p < ps->end && n + 1 < sizeof buf && strchr("+-0123456789.eE", *ps->p))
        buf[n++] = *ps->p++;
    buf[n] = '\0';
    char *stop;
    v->number = strtod(buf, &stop);
    if (n == 0 || *stop) {
        fail(ps, "a value");
        return -1;
    }
    v->kind = JR_NUMBER;
    return 0;
}

static int parse_value(jr_parser *ps, jr_value *v, int depth)
{
    if (depth > JR_MAX_DEPTH) {
        fail(ps, "less nesting");
        return -1;
    }
    skip_ws(ps);
    if (ps->p >= ps->end) {
        fail(ps, "a value");
        return -1;
    }
    char c = *ps->p;
    if (c == '{' || c == '[') {
        ps->p++;
        v->kind = c == '{' ? JR_OBJECT : JR_ARRAY;
        return parse_container(ps, v, c == '{' ? '}' : ']', depth);
    }
    if (c == '"') {
        v->string = parse_string(ps);
        v->kind = JR_STRING;
        return v->string ? 0 : -1;
    }
    if (literal(ps, "true") || literal(ps, "false")) {
        v->kind = JR_BOOL;
        v->boolean = ps->p[-1] == 'e' && ps->p[-2] == 'u';
        return 0;
    }
    if (literal(ps, "null")) {
        v->kind = JR_NULL;
        return 0;
    }
    return parse_number(ps, v);
}

static void free_children(jr_value *v)
{
    for (size_t i = 0; i < v->count; i++) {
        free_children(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
}

jr_value *jr_parse(const char *text, size_t size, char *error, size_t error_size)
{
    jr_parser ps = {.p = text, .end = text + size, .start = text, .error = error, .error_size = error_size};
    jr_value *root = calloc(1, sizeof *root);
    if (!root) {
        fail(&ps, "memory");
        return NULL;
    }
    if (parse_value(&ps, root, 0) == 0) {
        skip_ws(&ps);
        if (ps.p != ps.end)
            fail(&ps, "the end of the document");
    }
    if (ps.failed) {
        jr_free(root);
        return NULL;
    }
    return root;
}

jr_value *jr_parse_file(const char *path, char *error, size_t error_size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (error && error_size)
            snprintf(error, error_size, "json: cannot open %s", path);
        return NULL;
    }
    char *text = NULL;
    size_t size = 0, cap = 0, got;
    do {
        if (size == cap) {
            cap = cap ? cap * 2 : 65536;
            char *grown = realloc(text, cap);
            if (!grown) {
                free(text);
                fclose(f);
                if (error && error_size)
                    snprintf(error, error_size, "json: out of memory reading %s", path);
                return NULL;
            }
            text = grown;
        }
        got = fread(text + size, 1, cap - size, f);
        size += got;
    } while (got);
    fclose(f);
    jr_value *root = jr_parse(text, size, error, error_size);
    free(text);
    return root;
}

void jr_free(jr_value *v)
{
    if (!v)
        return;
    free_children(v);
    free(v);
}

const jr_value *jr_get(const jr_value *v, const char *key)
{
    if (!v || v->kind != JR_OBJECT)
        return NULL;
    for (size_t i = 0; i < v->count; i++)
        if (strcmp(v->keys[i], key) == 0)
            return &v->items[i];
    return NULL;
}

const jr_value *jr_at(const jr_value *v, size_t i)
{
    if (!v || (v->kind != JR_ARRAY && v->kind != JR_OBJECT) || i >= v->count)
        return NULL;
    return &v->items[i];
}

size_t jr_count(const jr_value *v)
{
    return v && (v->kind == JR_ARRAY || v->kind == JR_OBJECT) ? v->count : 0;
}

const char *jr_str(const jr_value *v) { return v && v->kind == JR_STRING ? v->string : NULL; }

const char *jr_get_str(const jr_value *v, const char *key) { return jr_str(jr_get(v, key)); }

int64_t jr_int(const jr_value *v, int64_t fallback)
{
    return v && v->kind == JR_NUMBER ? (int64_t)v->number : fallback;
}

bool jr_is_true(const jr_value *v) { return v && v->kind == JR_BOOL && v->boolean; }
