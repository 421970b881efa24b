/*
 * json_reader.h — a small JSON reader for the C test suites: parses a whole
 * document into a tree of values (objects keep their member order) that a
 * data-driven test walks. Strings are decoded (escapes up to \uXXXX in the
 * Basic Multilingual Plane, written as UTF-8); numbers are doubles. Meant for
 * trusted test data: it stops at the first syntax error and says where.
 */
#ifndef COFFER_TEST_JSON_READER_H
#define COFFER_TEST_JSON_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum jr_kind { JR_NULL, JR_BOOL, JR_NUMBER, JR_STRING, JR_ARRAY, JR_OBJECT } jr_kind;

typedef struct jr_value jr_value;

struct jr_value {
    jr_kind kind;
    bool boolean;
    double number;
    char *string;       /* JR_STRING: NUL-terminated, decoded */
    jr_value *items;    /* JR_ARRAY and JR_OBJECT: `count` values */
    char **keys;        /* JR_OBJECT: the member names, parallel to items */
    size_t count;
};

/* Parses `text` (`size` bytes). Returns a tree to free with jr_free(), or
 * NULL with a message (offset and what was expected) in `error` (`error_size`
 * bytes; may be NULL). */
jr_value *jr_parse(const char *text, size_t size, char *error, size_t error_size);

/* Reads and parses a file; NULL with a message on any failure. */
jr_value *jr_parse_file(const char *path, char *error, size_t error_size);

/* Frees a tree returned by jr_parse (NULL is a no-op). */
void jr_free(jr_value *v);

/* Member `key` of an object, or NULL (also when `v` is NULL or no object). */
const jr_value *jr_get(const jr_value *v, const char *key);

/* Item `i` of an array (or object), or NULL when out of range. */
const jr_value *jr_at(const jr_value *v, size_t i);

/* Items of an array or object; 0 for anything else and NULL. */
size_t jr_count(const jr_value *v);

/* The string of a JR_STRING value, or NULL. */
const char *jr_str(const jr_value *v);

/* Member `key` as a string, or NULL when absent or not a string. */
const char *jr_get_str(const jr_value *v, const char *key);

/* A JR_NUMBER as an integer (truncated); `fallback` for anything else. */
int64_t jr_int(const jr_value *v, int64_t fallback);

/* Whether `v` is the JSON literal true. */
bool jr_is_true(const jr_value *v);

#endif
