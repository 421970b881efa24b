/* lifecycle_config — the configuration setters of migrations, deletion when
 * a migration is needed, compaction on launch and the active-version limit. */
#include "storage/config.h"
#include "util/error.h"

#define CHECK_CONFIG(c, fn) \
    if (!(c)) return cf_error(COFFER_ERR_INVALID_ARGUMENT, fn ": config is NULL")

COFFER_API coffer_status coffer_config_set_migration(coffer_config *c, coffer_migration_fn fn, void *ctx)
{
    CHECK_CONFIG(c, "coffer_config_set_migration");
    c->migration = fn;
    c->migration_ctx = fn ? ctx : NULL;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_config_set_delete_if_migration_needed(coffer_config *c, int delete_if_needed)
{
    CHECK_CONFIG(c, "coffer_config_set_delete_if_migration_needed");
    c->delete_if_migration_needed = delete_if_needed != 0;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_config_set_should_compact_on_launch(coffer_config *c, coffer_should_compact_fn fn, void *ctx)
{
    CHECK_CONFIG(c, "coffer_config_set_should_compact_on_launch");
    c->should_compact = fn;
    c->should_compact_ctx = fn ? ctx : NULL;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_config_set_max_active_versions(coffer_config *c, uint64_t max_versions)
{
    CHECK_CONFIG(c, "coffer_config_set_max_active_versions");
    c->max_active_versions = max_versions;
    return COFFER_OK;
}
