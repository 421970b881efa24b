/* lifecycle_config — the configuration setters of migrations, deletion when
 * a migration is needed, compaction on launch, progress and the active-version limit. */
#include "storage/config.h"
#include "util/error.h"

/* Defines `setter`, which stores callback `field` and its context (dropped
 * with the callback, so that a cleared one keeps no stale pointer). */
#define CALLBACK_SETTER(setter, fn_type, field)                            \
    COFFER_API coffer_status setter(coffer_config *c, fn_type fn, void *ctx) \
    {                                                                      \
        CHECK_CONFIG(c, #setter);                                          \
        c->field = fn;                                                     \
        c->field##_ctx = fn ? ctx : NULL;                                  \
        return COFFER_OK;                                                  \
    }

CALLBACK_SETTER(coffer_config_set_migration, coffer_migration_fn, migration)
CALLBACK_SETTER(coffer_config_set_should_compact_on_launch, coffer_should_compact_fn, should_compact)
CALLBACK_SETTER(coffer_config_set_progress, coffer_progress_fn, progress)

COFFER_API coffer_status coffer_config_set_delete_if_migration_needed(coffer_config *c, int delete_if_needed)
{
    CHECK_CONFIG(c, "coffer_config_set_delete_if_migration_needed");
    c->delete_if_migration_needed = delete_if_needed != 0;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_config_set_max_active_versions(coffer_config *c, uint64_t max_versions)
{
    CHECK_CONFIG(c, "coffer_config_set_max_active_versions");
    c->max_active_versions = max_versions;
    return COFFER_OK;
}
