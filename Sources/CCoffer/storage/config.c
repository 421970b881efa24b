/* config — setters of coffer_config; values are copied, keys into locked memory. */
#define _GNU_SOURCE
#include "storage/config.h"

#include <stdlib.h>
#include <string.h>

#include "crypto/crypto.h"
#include "storage/env.h"
#include "util/error.h"

COFFER_API coffer_status coffer_config_new(coffer_config **out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_config_new: out is NULL");
    *out = calloc(1, sizeof **out);
    return *out ? COFFER_OK : cf_error(COFFER_ERR_NO_MEMORY, "out of memory creating a configuration");
}

static void free_subset(coffer_config *c)
{
    for (size_t i = 0; i < c->nsubset; i++)
        free(c->subset[i]);
    free(c->subset);
    c->subset = NULL;
    c->nsubset = 0;
}

COFFER_API void coffer_config_free(coffer_config *c)
{
    if (!c)
        return;
    free(c->path);
    free(c->memory_id);
    free(c->seed_path);
    cf_secret_free(c->key);
    free(c->sync_url);
    free(c->sync_partition);
    free(c->sync_token);
    cf_schema_free(c->schema);
    free_subset(c);
    free(c);
}

/* Replaces *slot with a copy of `value` (NULL clears it). */
static coffer_status replace(char **slot, const char *value)
{
    char *copy = NULL;
    if (value && !(copy = strdup(value)))
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory");
    free(*slot);
    *slot = copy;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_config_set_path(coffer_config *c, const char *path)
{
    CHECK_CONFIG(c, "coffer_config_set_path");
    if (path && !*path)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_config_set_path: path is empty");
    coffer_status st = replace(&c->path, path);
    if (st == COFFER_OK)
        replace(&c->memory_id, NULL);
    return st;
}

COFFER_API const char *coffer_config_path(const coffer_config *c)
{
    if (!c || c->memory_id)
        return NULL;
    return c->path ? c->path : cf_default_path();
}

COFFER_API coffer_status coffer_config_set_in_memory_identifier(coffer_config *c, const char *id)
{
    CHECK_CONFIG(c, "coffer_config_set_in_memory_identifier");
    if (id && !*id)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_config_set_in_memory_identifier: identifier is empty");
    coffer_status st = replace(&c->memory_id, id);
    if (st == COFFER_OK && id)
        replace(&c->path, NULL);
    return st;
}

COFFER_API coffer_status coffer_config_set_read_only(coffer_config *c, int read_only)
{
    CHECK_CONFIG(c, "coffer_config_set_read_only");
    c->read_only = read_only != 0;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_config_set_seed_path(coffer_config *c, const char *seed)
{
    CHECK_CONFIG(c, "coffer_config_set_seed_path");
    if (seed && !*seed)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_config_set_seed_path: path is empty");
    return replace(&c->seed_path, seed);
}

COFFER_API coffer_status coffer_config_set_encryption_key(coffer_config *c, const void *key, size_t size)
{
    CHECK_CONFIG(c, "coffer_config_set_encryption_key");
    if (!key && size == 0) {
        cf_secret_free(c->key);
        c->key = NULL;
        return COFFER_OK;
    }
    if (!key)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "encryption key is NULL but size is %zu", size);
    if (size != COFFER_ENCRYPTION_KEY_SIZE)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "encryption key must be %d bytes, got %zu", COFFER_ENCRYPTION_KEY_SIZE, size);
    uint8_t *copy = cf_secret_copy(key, size);
    if (!copy)
        return cf_error(COFFER_ERR_NO_MEMORY, "cannot allocate locked memory for the encryption key");
    cf_secret_free(c->key);
    c->key = copy;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_config_set_schema(coffer_config *c, const coffer_class_schema *classes, size_t n,
                                                  uint64_t version)
{
    CHECK_CONFIG(c, "coffer_config_set_schema");
    if (!classes && n == 0) {
        cf_schema_free(c->schema);
        c->schema = NULL;
        c->schema_version = version;
        return COFFER_OK;
    }
    cf_schema *s;
    coffer_status st = cf_schema_from_public(classes, n, &s);
    if (st != COFFER_OK)
        return st;
    cf_schema_free(c->schema);
    c->schema = s;
    c->schema_version = version;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_config_set_class_subset(coffer_config *c, const char *const *names, size_t n)
{
    CHECK_CONFIG(c, "coffer_config_set_class_subset");
    if (n && !names)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class subset: names is NULL but count is %zu", n);
    for (size_t i = 0; i < n; i++) {
        if (!names[i] || !*names[i])
            return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class subset: name %zu is NULL or empty", i);
        if (c->schema && cf_schema_find(c->schema, names[i]) < 0)
            return cf_error(COFFER_ERR_NOT_FOUND, "class subset names '%s', which is not a class of the schema", names[i]);
    }
    char **copy = n ? calloc(n, sizeof *copy) : NULL;
    if (n && !copy)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!(copy[i] = strdup(names[i]))) {
            while (i--)
                free(copy[i]);
            free(copy);
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory");
        }
    }
    free_subset(c);
    c->subset = copy;
    c->nsubset = n;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_config_set_max_file_size(coffer_config *c, uint64_t max_bytes)
{
    CHECK_CONFIG(c, "coffer_config_set_max_file_size");
    if (max_bytes && max_bytes < 65536)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "maximum file size %llu is below the minimum of 65536 bytes",
                        (unsigned long long)max_bytes);
    c->max_file_size = max_bytes;
    return COFFER_OK;
}
