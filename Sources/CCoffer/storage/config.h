/* config — the coffer_config a database is opened from. */
#ifndef COFFER_CONFIG_H
#define COFFER_CONFIG_H

#include "coffer.h"
#include "schema/schema.h"
#include "util/error.h"

struct coffer_config {
    char *path;      /* NULL: the default path */
    char *memory_id; /* in-memory identifier, or NULL */
    int read_only;
    char *seed_path;
    uint8_t *key; /* COFFER_ENCRYPTION_KEY_SIZE bytes in locked memory, or NULL */
    cf_schema *schema; /* NULL: the file's stored schema */
    uint64_t schema_version;
    char **subset;
    size_t nsubset;
    uint64_t max_file_size;
    int durability; /* durability.c: a coffer_durability, 0 = FULL */
    coffer_migration_fn migration; /* lifecycle.c */
    void *migration_ctx;
    int delete_if_migration_needed;
    coffer_should_compact_fn should_compact;
    void *should_compact_ctx;
    coffer_progress_fn progress; /* lifecycle_config.c: NULL reports nothing */
    void *progress_ctx;
    uint64_t max_active_versions;
    uint32_t storage_format; /* format_config.c: a new file's format, 0 for the default */
    int verify_on_open; /* verify/verify.c */
    char *sync_url;       /* sync/session.c: NULL when the handle does not sync */
    char *sync_partition;
    int sync_flexible;                    /* sync/session.c: query subscriptions instead of a partition */
    coffer_sync_transport sync_transport; /* open == NULL: the built-in ws:// one */
    char *sync_token;                     /* sync/session.c: the HELLO token, or NULL */
    coffer_sync_token_fn sync_token_fn;   /* when set, asked for the token before every HELLO */
    void *sync_token_ctx;
    coffer_sync_state_fn sync_state_fn;   /* sync/session.c: told of every state change, or NULL */
    void *sync_state_ctx;
    coffer_sync_error_fn sync_error_fn; /* sync/error_report.c: told of every ERROR frame */
    void *sync_error_ctx;
    coffer_sync_progress_fn sync_progress_fn; /* sync/progress.c: told of every progress change */
    void *sync_progress_ctx;
    int sync_download_before_open;            /* sync/progress.c: a coffer_sync_open_download */
    uint64_t sync_download_timeout_ms;        /* 0: no limit */
    coffer_client_reset_mode sync_reset_mode; /* sync/client_reset.c */
    coffer_client_reset_fn sync_reset_fn;
    void *sync_reset_ctx;
};

/* The first line of every setter: `fn` names it in the error. */
#define CHECK_CONFIG(c, fn) \
    if (!(c)) return cf_error(COFFER_ERR_INVALID_ARGUMENT, fn ": config is NULL")

#endif
