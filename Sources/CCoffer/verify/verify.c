/* verify — coffer_verify() and the verify-on-open refusal: the structural
 * walk over the file's pages, pinned to one committed version by a read
 * transaction when the file can be opened, then the contents check through a
 * read-only handle opened the normal way. */
#define _GNU_SOURCE
#include "verify/verify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/config.h"

/* Versions a walk may find overwritten (two commits came in between) before
 * it gives up pinning and reads the newest one. */
#define PIN_ATTEMPTS 8

/* Walks the pages of the version `env` (if any) pins; without an
 * environment, the newest version. */
static coffer_status walk_pinned(cf_env *env, int fd, const char *label, coffer_verify_report *r, cf_pages **pages)
{
    coffer_status st = COFFER_DONE;
    for (int attempt = 0; env && st == COFFER_DONE && attempt < PIN_ATTEMPTS; attempt++) {
        MDB_txn *mtxn;
        if (cf_env_txn_begin(env, 0, &mtxn) != COFFER_OK)
            break;
        cf_pages_free(*pages);
        st = cf_pages_check(fd, label, mdb_txn_id(mtxn), r, pages);
        mdb_txn_abort(mtxn);
        cf_env_txn_end(env, 0);
    }
    if (st == COFFER_DONE) {
        cf_pages_free(*pages);
        st = cf_pages_check(fd, label, 0, r, pages);
    }
    return st;
}

/* The structure of the file at `path` or of in-memory store `memory_id`.
 * *fd_out is the descriptor the walk reads (the caller closes it), kept so
 * that findings about contents can be located on their pages. */
static coffer_status check_structure(const char *path, const char *memory_id, const char *label, coffer_verify_report *r,
                                     cf_pages **pages, int *fd_out)
{
    int fd = -1;
    if (path) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return cf_error(errno == ENOENT ? COFFER_ERR_NOT_FOUND : COFFER_ERR_IO, "cannot verify %s: %s", label, strerror(errno));
        struct stat sb;
        if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            close(fd);
            return cf_error(COFFER_ERR_IO, "cannot verify %s: it is not a regular file", label);
        }
    }
    /* LMDB opens a file after reading its meta pages, which the walk checks
     * first; only a file whose metas it accepts is opened, to pin a version. */
    coffer_status st = COFFER_OK;
    if (path) {
        coffer_verify_report *probe = cf_report_new();
        if (!probe) {
            close(fd);
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory verifying %s", label);
        }
        cf_pages *w = NULL;
        st = cf_pages_check_metas(fd, label, probe, &w);
        int openable = st == COFFER_OK && probe->count == 0 && probe->omitted == 0;
        cf_pages_free(w);
        coffer_verify_report_free(probe);
        if (st != COFFER_OK) {
            close(fd);
            return st;
        }
        if (!openable) {
            *fd_out = fd;
            return cf_pages_check(fd, label, 0, r, pages);
        }
    }
    cf_env *env = NULL;
    st = cf_env_acquire(path, memory_id, 1, 0, COFFER_DURABILITY_FULL, &env);
    if (st != COFFER_OK && memory_id) {
        return st; /* an in-memory store exists only while open */
    }
    coffer_clear_error();
    int shared = -1;
    if (memory_id && (mdb_env_get_fd(env->mdb, &shared) != 0 || (fd = fcntl(shared, F_DUPFD_CLOEXEC, 0)) < 0))
        st = cf_error(COFFER_ERR_IO, "cannot read %s", label);
    else
        st = walk_pinned(env, fd, label, r, pages);
    cf_env_release(env);
    *fd_out = fd;
    return st;
}

/* Opens the database read-only through the normal path and checks its
 * contents. The configuration names no schema, so the open takes the stored
 * one as it is and never plans a change: a stored schema that is missing or
 * does not fit the file fails the open, and that is a finding. So is any
 * other file that does not open, except when the key does not fit it or the
 * library cannot read its format: then nothing can be checked and that is
 * the error. */
static coffer_status check_contents(const char *path, const char *memory_id, const uint8_t *key, cf_pages *pages,
                                    coffer_verify_report *r)
{
    coffer_config *config = NULL;
    coffer_status st = coffer_config_new(&config);
    if (st == COFFER_OK)
        st = memory_id ? coffer_config_set_in_memory_identifier(config, memory_id) : coffer_config_set_path(config, path);
    if (st == COFFER_OK && key)
        st = coffer_config_set_encryption_key(config, key, COFFER_ENCRYPTION_KEY_SIZE);
    if (st == COFFER_OK)
        st = coffer_config_set_read_only(config, 1);
    coffer_db *db = NULL;
    if (st == COFFER_OK)
        st = coffer_open(config, &db);
    coffer_config_free(config);
    switch (st) {
    case COFFER_OK:
        break;
    case COFFER_ERR_KEY_REQUIRED:
    case COFFER_ERR_WRONG_KEY:
    case COFFER_ERR_NOT_ENCRYPTED:
    case COFFER_ERR_NO_MEMORY:
    case COFFER_ERR_FORMAT_VERSION:
    case COFFER_ERR_IO:
    case COFFER_ERR_READ_ONLY: /* only the lock file (no change is planned): not damage */
    case COFFER_ERR_BUSY:
        return st;
    default:
        cf_report_add(r, COFFER_VERIFY_HEADER, COFFER_VERIFY_NO_PAGE, NULL, 0, "the database does not open: %s", coffer_last_error());
        coffer_clear_error();
        return COFFER_OK;
    }
    st = cf_verify_contents(db, pages, r);
    coffer_close(db);
    return st;
}

/* Verifies the file at `path` or in-memory store `memory_id`; the contents
 * through `db` when given (its view of the classes), else through a
 * read-only handle opened with `key`. */
static coffer_status verify_run(const char *path, const char *memory_id, const uint8_t *key, coffer_db *db,
                                coffer_verify_report **out)
{
    *out = NULL;
    coffer_status st = cf_crypto_init();
    if (st != COFFER_OK)
        return st;
    char label[4200];
    if (memory_id)
        snprintf(label, sizeof label, "in-memory database '%.100s'", memory_id);
    else
        snprintf(label, sizeof label, "'%s'", path);
    coffer_verify_report *r = cf_report_new();
    if (!r)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory verifying %s", label);
    cf_pages *pages = NULL;
    int fd = -1;
    st = check_structure(path, memory_id, label, r, &pages, &fd);
    if (st == COFFER_OK && cf_pages_sound(pages) && r->count == 0)
        st = db ? cf_verify_contents(db, pages, r) : check_contents(path, memory_id, key, pages, r);
    cf_pages_free(pages);
    if (fd >= 0)
        close(fd);
    if (st == COFFER_OK && r->out_of_memory)
        st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory recording the findings of verifying %s", label);
    if (st != COFFER_OK) {
        coffer_verify_report_free(r);
        return st;
    }
    *out = r;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_verify(const coffer_config *config, coffer_verify_report **out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_verify: out is NULL");
    *out = NULL;
    if (!config)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_verify: config is NULL");
    return verify_run(coffer_config_path(config), config->memory_id, config->key, NULL, out);
}

COFFER_API coffer_status coffer_db_verify(coffer_db *db, coffer_verify_report **out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_db_verify: out is NULL");
    *out = NULL;
    if (!db || db->magic != CF_DB_MAGIC)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_db_verify: database handle is NULL or not a database");
    if (db->closed || db->in_migration)
        return cf_error(COFFER_ERR_MISUSE, "coffer_db_verify: the database is %s", db->closed ? "closed" : "being migrated");
    return verify_run(db->env->path, db->env->memory_id, NULL, db, out);
}

coffer_status cf_verify_or_refuse(const char *path, const uint8_t *key, const char *what)
{
    coffer_verify_report *r = NULL;
    coffer_status st = verify_run(path, NULL, key, NULL, &r);
    if (st != COFFER_OK)
        return st;
    size_t total = cf_report_total(r);
    if (total == 0) {
        coffer_verify_report_free(r);
        return COFFER_OK;
    }
    const cf_finding *f = &r->items[0];
    char page[40] = "";
    if (f->page != COFFER_VERIFY_NO_PAGE)
        snprintf(page, sizeof page, " (page %llu)", (unsigned long long)f->page);
    st = cf_error(COFFER_ERR_CORRUPTED, "%s is damaged: %s%s: %s%s", what, coffer_verify_kind_name(f->kind), page, f->message,
                  total > 1 ? " (and more: coffer_verify() lists every finding)" : "");
    coffer_verify_report_free(r);
    return st;
}

COFFER_API coffer_status coffer_config_set_verify_on_open(coffer_config *c, int verify)
{
    CHECK_CONFIG(c, "coffer_config_set_verify_on_open");
    c->verify_on_open = verify != 0;
    return COFFER_OK;
}
