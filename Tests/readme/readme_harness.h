/* readme_harness.h — what the C harnesses of the README's fragments share:
 * failing loudly, and opening a database with a schema. */
#ifndef COFFER_README_HARNESS_H
#define COFFER_README_HARNESS_H

#include <coffer.h>
#include <stdio.h>
#include <stdlib.h>

static void check(coffer_status status, const char *what)
{
    if (status != COFFER_OK) {
        fprintf(stderr, "%s: %s\n", what, coffer_last_error());
        exit(1);
    }
}

/* Opens the file `path`, or (`in_memory`) the in-memory database named so,
 * with `count` classes of `schema` at version 1. */
static coffer_db *open_harness_db(const char *path, int in_memory, const coffer_class_schema *schema, size_t count)
{
    coffer_config *config;
    coffer_db *db;
    check(coffer_config_new(&config), "config");
    check(in_memory ? coffer_config_set_in_memory_identifier(config, path) : coffer_config_set_path(config, path), "path");
    check(coffer_config_set_schema(config, schema, count, 1), "schema");
    check(coffer_open(config, &db), "open");
    coffer_config_free(config);
    return db;
}

#endif
