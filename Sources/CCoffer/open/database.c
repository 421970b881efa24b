/* database — coffer_open and coffer_close: the file header, the key check,
 * the stored schema and the changes an open applies to it. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/checksums.h"
#include "storage/cluster_cache.h"
#include "storage/cluster_upgrade.h"
#include "storage/config.h"
#include "changes/hub.h"
#include "sync/record.h"
#include "sync/session.h"
#include "util/error.h"
#include "objects/graph.h"
#include "storage/index.h"
#include "storage/index_tree.h"
#include "storage/lifecycle.h"
#include "storage/reserve.h"
#include "migration/migration.h"
#include "objects/object.h"
#include "storage/txn.h"
#include "verify/verify.h"
#include "open/index_seal.h"
#include "open/open_gate.h"

/* The header, stored unsealed under "header" in sub-database 0. */
#define HEADER_MAGIC "COFFERDB"
#define HEADER_SIZE (8 + 4 + 4 + CF_FILE_ID_SIZE + CF_KEY_CHECK_SIZE)
#define HEADER_ENCRYPTED 1u

static const uint8_t META_HEADER[] = "header";
static const uint8_t META_SCHEMA[] = "schema";

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++, v >>= 8)
        p[i] = (uint8_t)v;
}

static uint32_t get_le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static const char *label_of(const coffer_config *config, const char *path)
{
    return config->memory_id ? config->memory_id : path;
}

/* Creates the metadata of a new file: header and (empty) schema follow. */
static coffer_status init_header(coffer_txn *txn, const char *label)
{
    coffer_db *db = txn->db;
    int rc = mdb_dbi_open(txn->mdb, "0", MDB_CREATE, &db->meta_dbi);
    if (rc != 0)
        return cf_error_mdb(rc, label);
    uint8_t h[HEADER_SIZE] = {0};
    memcpy(h, HEADER_MAGIC, 8);
    db->sealed_index = db->keys && db->clustered; /* a new encrypted file of format 5's layout is of format 6 */
    put_le32(h + 8, cf_format_of(db));
    put_le32(h + 12, db->keys ? HEADER_ENCRYPTED : 0);
    cf_random(db->file_id, CF_FILE_ID_SIZE);
    memcpy(h + 16, db->file_id, CF_FILE_ID_SIZE);
    if (db->keys)
        cf_key_check(db->keys, db->file_id, h + 16 + CF_FILE_ID_SIZE);
    db->checksums = db->keys == NULL;
    MDB_val k = {sizeof META_HEADER - 1, (void *)META_HEADER}, v = {HEADER_SIZE, h};
    rc = mdb_put(txn->mdb, db->meta_dbi, &k, &v, 0);
    return rc ? cf_txn_write_error(txn, rc, "cannot write the file header") : COFFER_OK;
}

/* Reads and checks the header: a Coffer file, a format we read, the key. */
static coffer_status read_header(coffer_txn *txn, const char *label, int *is_new, uint32_t *format_out)
{
    coffer_db *db = txn->db;
    *is_new = 0;
    *format_out = CF_FORMAT_VERSION;
    int rc = mdb_dbi_open(txn->mdb, "0", 0, &db->meta_dbi);
    if (rc == MDB_NOTFOUND) {
        MDB_stat ms;
        MDB_dbi main_dbi;
        if (mdb_dbi_open(txn->mdb, NULL, 0, &main_dbi) == 0 && mdb_stat(txn->mdb, main_dbi, &ms) == 0 && ms.ms_entries == 0) {
            *is_new = 1; /* a read transaction only reports it */
            return txn->write ? init_header(txn, label) : COFFER_OK;
        }
        return cf_error(COFFER_ERR_NOT_A_DATABASE, "'%s' is an LMDB file but not a Coffer database", label);
    }
    if (rc == MDB_INCOMPATIBLE)
        return cf_error(COFFER_ERR_NOT_A_DATABASE, "'%s' is an LMDB file but not a Coffer database", label);
    if (rc != 0)
        return cf_error_mdb(rc, label);
    MDB_val k = {sizeof META_HEADER - 1, (void *)META_HEADER}, v;
    rc = mdb_get(txn->mdb, db->meta_dbi, &k, &v);
    if (rc == MDB_NOTFOUND || (rc == 0 && (v.mv_size < 16 || memcmp(v.mv_data, HEADER_MAGIC, 8) != 0)))
        return cf_error(COFFER_ERR_NOT_A_DATABASE, "'%s' has no Coffer header; it is not a Coffer database", label);
    if (rc != 0)
        return cf_error_mdb(rc, label);
    const uint8_t *h = v.mv_data;
    uint32_t format = get_le32(h + 8);
    if (format > CF_FORMAT_SEALED_INDEX)
        return cf_error(COFFER_ERR_FORMAT_VERSION, "'%s' has file format %u; this library (%s) reads up to format %u", label,
                        format, COFFER_VERSION_STRING, CF_FORMAT_SEALED_INDEX);
    if (v.mv_size != HEADER_SIZE || format == 0)
        return cf_error(COFFER_ERR_CORRUPTED, "'%s' has a damaged header", label);
    int encrypted = (get_le32(h + 12) & HEADER_ENCRYPTED) != 0;
    /* A plain file's key check is zeros and an encrypted file's never is: a
     * flag that disagrees with it is damage, not a missing or wrong key. */
    int has_check = 0;
    for (size_t i = 0; i < CF_KEY_CHECK_SIZE; i++)
        has_check |= h[16 + CF_FILE_ID_SIZE + i];
    if (encrypted != (has_check != 0))
        return cf_error(COFFER_ERR_CORRUPTED, "'%s' has a damaged header: it is marked %s, but %s a key check", label,
                        encrypted ? "encrypted" : "plain", encrypted ? "lacks" : "has");
    memcpy(db->file_id, h + 16, CF_FILE_ID_SIZE);
    if (encrypted && !db->keys)
        return cf_error(COFFER_ERR_KEY_REQUIRED, "'%s' is encrypted; open it with its 64-byte encryption key", label);
    if (!encrypted && db->keys)
        return cf_error(COFFER_ERR_NOT_ENCRYPTED, "'%s' is not encrypted, but an encryption key was given", label);
    if (encrypted) {
        uint8_t check[CF_KEY_CHECK_SIZE];
        cf_key_check(db->keys, db->file_id, check);
        if (!cf_equal_ct(check, h + 16 + CF_FILE_ID_SIZE, CF_KEY_CHECK_SIZE))
            return cf_error(COFFER_ERR_WRONG_KEY, "the encryption key given does not open '%s'", label);
    }
    db->checksums = !encrypted && format >= 4; /* plain files of format 3 and older have none */
    if (format == CF_FORMAT_SEALED_INDEX && !encrypted)
        return cf_error(COFFER_ERR_CORRUPTED, "'%s' has a damaged header: it is plain, but of format 6, which only encrypted files have", label);
    db->clustered = format >= CF_FORMAT_CLUSTERS;  /* the file's, whatever the configuration asked */
    db->sealed_index = format == CF_FORMAT_SEALED_INDEX;
    *format_out = format;
    return COFFER_OK;
}

/* Reads the stored schema of a file that has a header. The header and the
 * schema are written by one transaction, so a file without its schema is
 * damaged: opening it must not plan a new schema over the classes' data. */
static coffer_status read_schema(coffer_txn *txn, const char *label, cf_schema **out)
{
    const uint8_t *data;
    size_t len;
    uint8_t *buf = NULL;
    size_t cap = 0;
    *out = NULL;
    coffer_status st = cf_store_get(txn, txn->db->meta_dbi, CF_META_DBI, META_SCHEMA, sizeof META_SCHEMA - 1, &data, &len,
                                    &buf, &cap, "the stored schema");
    if (st == COFFER_ERR_NOT_FOUND)
        st = cf_error(COFFER_ERR_CORRUPTED, "'%s' is damaged: it has a Coffer header but no stored schema", label);
    else if (st == COFFER_OK)
        st = cf_schema_decode(data, len, out);
    free(buf);
    return st;
}

/* Ends the transaction of an opening pass: commits it when `commit`, else
 * aborts it. Returns `st`, or the commit's failure. */
static coffer_status end_pass(coffer_db *db, MDB_txn *mdb, int write, int commit, const char *label, coffer_status st)
{
    if (commit) {
        int rc = mdb_txn_commit(mdb);
        if (rc == MDB_MAP_FULL)
            st = cf_env_map_full(db->env, label);
        else if (rc != 0)
            st = cf_error_write(db->env->mdb, rc, label);
    } else {
        mdb_txn_abort(mdb);
    }
    cf_env_txn_end(db->env, write);
    return st;
}

/* The format a file opened with `config` is kept in: the one it asks for,
 * or the default. A file of format 4 opened read-write by a handle that
 * wants format 5 is upgraded to it; one of format 5 stays as it is. */
static uint32_t wanted_format(const coffer_config *config)
{
    uint32_t f = config->storage_format ? config->storage_format : CF_DEFAULT_STORAGE_FORMAT;
    return f == CF_FORMAT_CLUSTERS ? CF_FORMAT_CLUSTERS : CF_FORMAT_VERSION;
}

/* Brings a file of an older format to format `target` (4, or 5) in a write
 * transaction of its own: format 2 kept duplicate-sorted indexes, which are
 * rewritten as plain keys; every value of a plain file of format 3 or older
 * gets its checksum; an encrypted file of format 1 or 3 has format 4's
 * layout and only its header changes; for format 5, every object moves from
 * its record into its cluster (storage/cluster_upgrade.h). A failure
 * leaves the file as it was. */
static coffer_status upgrade_pass(coffer_db *db, const char *label, uint32_t target)
{
    coffer_txn txn = {.magic = CF_TXN_MAGIC, .db = db, .write = 1, .active = 1};
    coffer_status st = cf_env_txn_begin(db->env, 1, &txn.mdb);
    if (st != COFFER_OK)
        return st;
    int is_new;
    uint32_t format;
    cf_schema *stored = NULL;
    st = read_header(&txn, label, &is_new, &format);
    if (st == COFFER_OK && !is_new && format < target) {
        st = read_schema(&txn, label, &stored);
        for (size_t i = 0; st == COFFER_OK && format < CF_FORMAT_VERSION && stored && i < stored->nclasses; i++) {
            char number[16];
            snprintf(number, sizeof number, "%u", 2 * stored->classes[i].table + 1);
            st = cf_index_upgrade(txn.mdb, number, CF_SCRATCH_DBI_NAME);
        }
        if (st == COFFER_OK && format < CF_FORMAT_VERSION && !db->keys)
            st = cf_checksum_add_file(&txn, stored);
        db->checksums = !db->keys; /* every value has its checksum from here on */
        if (st == COFFER_OK && target == CF_FORMAT_CLUSTERS)
            st = cf_clusters_upgrade(&txn, stored);
        MDB_val k = {sizeof META_HEADER - 1, (void *)META_HEADER}, v;
        int rc = st == COFFER_OK ? mdb_get(txn.mdb, db->meta_dbi, &k, &v) : 0;
        if (st == COFFER_OK && rc == 0) {
            uint8_t h[HEADER_SIZE];
            memcpy(h, v.mv_data, HEADER_SIZE); /* read_header checked its size */
            put_le32(h + 8, target);
            v = (MDB_val){HEADER_SIZE, h};
            rc = mdb_put(txn.mdb, db->meta_dbi, &k, &v, 0);
        }
        if (rc != 0)
            st = cf_error_mdb(rc, "cannot write the upgraded file header");
        if (st != COFFER_OK)
            cf_error_prefix("upgrading '%s' from file format %u to %u", label, format, target);
    }
    st = end_pass(db, txn.mdb, 1, st == COFFER_OK, label, st);
    cf_txn_free_handles(&txn);
    cf_schema_free(stored);
    return st;
}

static coffer_status write_schema(coffer_txn *txn, const cf_schema *s)
{
    uint8_t *buf;
    size_t len;
    coffer_status st = cf_schema_encode(s, &buf, &len);
    if (st != COFFER_OK)
        return st;
    st = cf_store_put(txn, txn->db->meta_dbi, CF_META_DBI, META_SCHEMA, sizeof META_SCHEMA - 1, buf, len, 0,
                      "cannot write the schema");
    free(buf);
    return st;
}

/* Opens the sub-databases of every class the handle sees, creating the new
 * ones, and applies the planned index changes. Before a migration callback
 * (`migrating`), releasing removed contents waits for the callback (a
 * rename may keep them) and primary keys are not yet checked for
 * uniqueness (the callback may be what makes them unique). */
static coffer_status apply_plan(coffer_txn *txn, cf_plan *plan, MDB_dbi *opened, uint32_t *numbers, size_t *nopened, int migrating)
{
    coffer_db *db = txn->db;
    cf_schema *view = plan->view;
    coffer_status st = COFFER_OK;
    db->schema = view; /* the object layer reads classes from here */
    for (size_t i = 0; st == COFFER_OK && i < view->nclasses; i++) {
        uint32_t t = view->classes[i].table;
        st = cf_env_dbi(db->env, txn->mdb, 2 * t, txn->write, &db->object_dbis[i]);
        if (st == COFFER_OK)
            st = cf_env_dbi(db->env, txn->mdb, 2 * t + 1, txn->write, &db->index_dbis[i]);
        if (st == COFFER_ERR_NOT_FOUND)
            st = cf_error(COFFER_ERR_CORRUPTED, "the objects of class '%s' are missing from the file", view->classes[i].name);
        numbers[(*nopened)] = 2 * t;
        opened[(*nopened)++] = db->object_dbis[i];
        numbers[(*nopened)] = 2 * t + 1;
        opened[(*nopened)++] = db->index_dbis[i];
    }
    for (size_t a = 0; st == COFFER_OK && a < plan->nactions; a++) {
        const cf_action *act = &plan->actions[a];
        size_t cls = 0;
        while (cls < view->nclasses && view->classes[cls].table != act->table)
            cls++;
        if (cls == view->nclasses || act->kind == CF_ACTION_CREATE_TABLE)
            continue;
        if (act->kind == CF_ACTION_DROP_INDEX) {
            st = cf_index_drop_column(txn, (coffer_class_id)cls, act->column);
        } else if (act->kind == CF_ACTION_DROP_GRAPH) {
            if (!migrating)
                st = cf_object_drop_graph_column(txn, (coffer_class_id)cls, &act->old, act->old_target_table);
        } else {
            const cf_class *c = &view->classes[cls];
            size_t p = 0;
            while (p < c->nprops && c->props[p].column != act->column)
                p++;
            if (p < c->nprops)
                st = cf_object_build_index(txn, (coffer_class_id)cls, (coffer_property_id)p,
                                           !migrating && (c->props[p].flags & COFFER_PROPERTY_PRIMARY_KEY) != 0);
        }
    }
    return st;
}

/* Opens the sub-database of collections and backlinks. A file without one
 * gets it at the next write pass; read-only, it simply has no collections. */
static coffer_status open_graph(coffer_txn *txn, const coffer_config *config, MDB_dbi *opened, uint32_t *numbers, size_t *nopened,
                                int *needs_write)
{
    coffer_db *db = txn->db;
    coffer_status st = cf_env_dbi(db->env, txn->mdb, CF_GRAPH_DBI, txn->write, &db->graph_dbi);
    if (st == COFFER_ERR_NOT_FOUND) {
        coffer_clear_error();
        db->has_graph = 0;
        if (!config->read_only)
            *needs_write = 1;
        return COFFER_OK;
    }
    if (st != COFFER_OK)
        return st;
    db->has_graph = 1;
    numbers[*nopened] = CF_GRAPH_DBI;
    opened[(*nopened)++] = db->graph_dbi;
    return COFFER_OK;
}

/* One pass of opening in a read or write transaction. A read pass that
 * finds the file new or its schema to change sets *needs_write instead, so
 * that opening an unchanged file never waits for the writer. */
static coffer_status open_pass(const coffer_config *config, coffer_db *db, const char *label, int write, int *needs_write,
                               int *needs_reset, int *needs_upgrade, char *reason, size_t reason_size)
{
    coffer_txn txn = {.magic = CF_TXN_MAGIC, .db = db, .write = write, .active = 1};
    coffer_status st = cf_env_txn_begin(db->env, write, &txn.mdb);
    if (st != COFFER_OK)
        return st;
    int is_new = 0;
    cf_schema *stored = NULL;
    cf_plan plan = {0};
    MDB_dbi *opened = NULL;
    uint32_t *numbers = NULL;
    size_t nopened = 0;
    uint32_t format;
    st = read_header(&txn, label, &is_new, &format);
    if (st != COFFER_OK)
        *needs_reset = 0; /* a wrong key or a foreign file is never deleted */
    /* Formats 1 and 3 have format 4's layout without checksums: read as they
     * are, brought up to date by a read-write open. Format 2's indexes must
     * be rewritten. */
    /* A handle that wants format 5 upgrades a file of format 4, unless
     * another handle of this process has it open (and reads its records). */
    int to_clusters = format == CF_FORMAT_VERSION && wanted_format(config) == CF_FORMAT_CLUSTERS && !config->read_only &&
                      !is_new && !cf_env_is_shared(db->env);
    if (st == COFFER_OK && ((format < CF_FORMAT_VERSION && (format == 2 || !config->read_only)) || to_clusters)) {
        if (config->read_only)
            st = cf_error(COFFER_ERR_FORMAT_VERSION, "'%s' has file format %u, which this library (%s) upgrades to format %u "
                          "when the file is opened read-write; it cannot be read as it is", label, format,
                          COFFER_VERSION_STRING, CF_FORMAT_VERSION);
        else
            *needs_upgrade = 1;
    }
    if (st == COFFER_OK && !is_new && !*needs_upgrade)
        st = read_schema(&txn, label, &stored);
    if (st == COFFER_OK)
        st = cf_schema_plan(stored, config->schema, config->schema_version, (const char *const *)config->subset,
                            config->nsubset, &plan);
    if (*needs_upgrade) {
        /* stop here: nothing is opened */
    } else if (config->delete_if_migration_needed && stored && config->schema &&
        (st == COFFER_ERR_SCHEMA_VERSION || st == COFFER_ERR_MIGRATION_REQUIRED ||
         (st == COFFER_OK && stored->version != config->schema_version))) {
        if (st != COFFER_OK)
            snprintf(reason, reason_size, "%s", coffer_last_error());
        else
            snprintf(reason, reason_size, "schema version %llu differs from the file's %llu%s%s",
                     (unsigned long long)config->schema_version, (unsigned long long)stored->version,
                     plan.differences ? ": " : "", plan.differences ? plan.differences : "");
        coffer_clear_error();
        st = COFFER_OK;
        *needs_reset = 1;
        *needs_write = 1; /* stop here: nothing is opened */
    }
    int migrating = st == COFFER_OK && !*needs_reset && !*needs_upgrade && cf_migration_applies(config, stored);
    int prepared = 0;
    if (st == COFFER_OK && !write && !*needs_upgrade && (is_new || plan.changed)) {
        if (config->read_only)
            st = is_new ? cf_error(COFFER_ERR_NOT_A_DATABASE, "'%s' is empty, not a Coffer database, and cannot be initialised read-only", label)
                        : cf_error(COFFER_ERR_READ_ONLY, "'%s' is opened read-only, but its schema would have to change: %s", label,
                                   plan.differences ? plan.differences : "classes, indexes or the schema version differ");
        else
            *needs_write = 1;
        if (st == COFFER_OK && migrating) {
            st = cf_migration_prepare(&txn, stored, &opened, &numbers, &nopened);
            prepared = st == COFFER_OK;
        }
    }
    if (st == COFFER_OK && !*needs_write && !*needs_upgrade) {
        size_t n = plan.view->nclasses;
        db->object_dbis = calloc(n + 1, sizeof *db->object_dbis);
        db->index_dbis = calloc(n + 1, sizeof *db->index_dbis);
        opened = calloc(2 * n + 2, sizeof *opened);
        numbers = calloc(2 * n + 2, sizeof *numbers);
        if (!db->object_dbis || !db->index_dbis || !opened || !numbers)
            st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening '%s'", label);
        else
            st = cf_txn_alloc_state(&txn, n);
        if (st == COFFER_OK)
            st = open_graph(&txn, config, opened, numbers, &nopened, needs_write);
        if (st == COFFER_OK && !*needs_write)
            st = apply_plan(&txn, &plan, opened, numbers, &nopened, migrating);
        if (st == COFFER_OK && migrating && !*needs_write)
            st = cf_migration_run(config, &txn, &plan, stored, label);
        if (st == COFFER_OK && write && !*needs_write && stored && config->schema && config->schema_version > stored->version)
            st = cf_migration_drop_left_out(&txn, &plan, label);
        if (st == COFFER_OK && plan.changed)
            st = write_schema(&txn, plan.stored);
        if (st == COFFER_OK && txn.failed)
            st = COFFER_ERR_MAP_FULL;
    }
    int commit = st == COFFER_OK && !*needs_upgrade && (!*needs_write || prepared);
    if (commit && write)
        st = cf_txn_flush_deferred(&txn); /* the lists a migration appended to */
    if (commit && write && st == COFFER_OK)
        st = cf_clusters_flush(&txn); /* the objects a migration wrote */
    if (commit && write && st == COFFER_OK)
        st = cf_itree_flush(&txn); /* and the index nodes */
    if (txn.index_cursors)
        cf_txn_close_cursors(&txn);
    /* A read-only commit keeps the sub-database handles. */
    st = end_pass(db, txn.mdb, write, commit && st == COFFER_OK, label, st);
    if (st == COFFER_OK && !*needs_upgrade && (!*needs_write || prepared)) {
        cf_env_remember_dbi(db->env, CF_META_DBI, db->meta_dbi);
        for (size_t i = 0; i < nopened; i++)
            cf_env_remember_dbi(db->env, numbers[i], opened[i]);
    }
    if (st == COFFER_OK && !*needs_write && !*needs_upgrade) {
        plan.view = NULL; /* now db->schema */
    } else {
        db->schema = NULL;
        free(db->object_dbis);
        free(db->index_dbis);
        db->object_dbis = db->index_dbis = NULL;
    }
    cf_txn_free_handles(&txn);
    free(opened);
    free(numbers);
    cf_schema_free(stored);
    cf_plan_free(&plan);
    return st;
}

/* A seed file comes from outside: its copy is verified before it takes the
 * database's path, and the files opening it for that left beside it go. */
static coffer_status verify_seed(const char *copy, void *ctx)
{
    const coffer_config *config = ctx;
    char what[4200];
    snprintf(what, sizeof what, "the seed file '%s'", config->seed_path);
    coffer_status st = cf_verify_or_refuse(copy, config->key, what);
    char side[4200];
    snprintf(side, sizeof side, "%s-lock", copy);
    unlink(side);
    snprintf(side, sizeof side, "%s-note", copy);
    unlink(side);
    return st;
}

/* The passes of an open on its environment: read, then the format upgrade
 * and a write pass when needed. Sets *needs_reset (with its `reason`) when
 * the configuration asks for a file needing a migration to be deleted. */
static coffer_status open_passes(const coffer_config *config, coffer_db *db, const char *label, int *needs_reset, char *reason,
                                 size_t reason_size)
{
    int needs_write = 0, needs_upgrade = 0;
    coffer_status st = open_pass(config, db, label, 0, &needs_write, needs_reset, &needs_upgrade, reason, reason_size);
    if (st == COFFER_OK && needs_upgrade) {
        st = upgrade_pass(db, label, wanted_format(config));
        needs_upgrade = 0;
        if (st == COFFER_OK)
            st = open_pass(config, db, label, 0, &needs_write, needs_reset, &needs_upgrade, reason, reason_size);
    }
    if (st == COFFER_OK && needs_write && !*needs_reset) {
        needs_write = 0;
        st = open_pass(config, db, label, 1, &needs_write, needs_reset, &needs_upgrade, reason, reason_size);
    }
    return st;
}

/* Brings an encrypted file of format 5, opened read-write by a handle that
 * wants format 5's layout (the default), to format 6 in one write
 * transaction: every class's index is emptied and built again from its
 * objects as a tree of sealed nodes (open/index_seal.h), then the header
 * says 6. A failure, or a process killed before the commit, leaves the file
 * of format 5 as it was, which the next such open upgrades. Not done while
 * another handle of this process has the file open (it reads hashed index
 * keys), nor by a handle that sees only some of the file's classes. */
static coffer_status seal_index_pass(const coffer_config *config, coffer_db *db, const char *label)
{
    if (!db->keys || !db->clustered || db->sealed_index || config->read_only || db->read_only ||
        wanted_format(config) != CF_FORMAT_CLUSTERS || cf_env_is_shared(db->env) || config->nsubset)
        return COFFER_OK; /* a handle of some classes only would leave the others' hashed keys */
    coffer_txn *txn = NULL;
    coffer_status st = coffer_txn_begin(db, COFFER_TXN_WRITE, &txn);
    if (st != COFFER_OK)
        return cf_error_prefix("upgrading '%s' from file format 5 to 6", label);
    uint32_t format = 0;
    uint8_t h[HEADER_SIZE]; /* copied: the writes below may move LMDB's pages */
    MDB_val k = {sizeof META_HEADER - 1, (void *)META_HEADER}, v;
    int rc = mdb_get(txn->mdb, db->meta_dbi, &k, &v);
    if (rc == 0 && v.mv_size == HEADER_SIZE) {
        memcpy(h, v.mv_data, HEADER_SIZE);
        format = get_le32(h + 8);
    } else {
        st = rc ? cf_error_mdb(rc, "cannot read the file header") : cf_error(COFFER_ERR_CORRUPTED, "the file header is damaged");
    }
    if (st == COFFER_OK && format == CF_FORMAT_CLUSTERS) {
        st = cf_index_seal_all(txn);
        if (st == COFFER_OK) {
            put_le32(h + 8, CF_FORMAT_SEALED_INDEX);
            MDB_val hv = {HEADER_SIZE, h};
            if ((rc = mdb_put(txn->mdb, db->meta_dbi, &k, &hv, 0)) != 0)
                st = cf_txn_write_error(txn, rc, "cannot write the upgraded file header");
        }
        if (st == COFFER_OK)
            st = coffer_txn_commit(txn); /* else coffer_txn_free aborts it */
    } else if (st == COFFER_OK && format == CF_FORMAT_SEALED_INDEX) {
        db->sealed_index = 1; /* another process upgraded it meanwhile */
    }
    coffer_txn_free(txn);
    if (st != COFFER_OK) {
        db->sealed_index = 0;
        cf_error_prefix("upgrading '%s' from file format 5 to 6", label);
    }
    return st;
}

/* Opens `path` (NULL for an in-memory store) with its open gate held: no
 * other open of the file in this process runs meanwhile, so the seed copy,
 * the compaction, the reset and the migration happen once. */
static coffer_status open_locked(const coffer_config *config, coffer_db *db, const char *path)
{
    const char *label = label_of(config, path);
    coffer_status st;
    if (config->read_only && (config->delete_if_migration_needed || config->should_compact))
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "cannot open '%s' read-only with %s set: it may have to %s the file", label,
                        config->delete_if_migration_needed ? "delete-if-migration-needed" : "compact-on-launch",
                        config->delete_if_migration_needed ? "delete" : "rewrite");
    for (int attempt = 0;; attempt++) {
        if (path && config->seed_path) {
            struct stat sb;
            if (stat(path, &sb) != 0 && errno == ENOENT &&
                (st = cf_copy_seed(config->seed_path, path, verify_seed, (void *)config, config->progress, config->progress_ctx)) != COFFER_OK)
                return st;
        }
        if (path && config->should_compact && attempt == 0 && (st = cf_compact_on_launch(config, path)) != COFFER_OK)
            return st;
        st = cf_env_acquire(path, config->memory_id, config->read_only, config->max_file_size, config->durability,
                            &db->env);
        if (st != COFFER_OK)
            return st;
        int needs_reset = 0;
        char reason[1024] = "";
        cf_env_dbi_lock(db->env); /* another name of the file (a hard link) has a gate of its own */
        st = open_passes(config, db, label, &needs_reset, reason, sizeof reason);
        cf_env_dbi_unlock(db->env);
        if (st == COFFER_OK && !needs_reset)
            st = seal_index_pass(config, db, label);
        if (st != COFFER_OK || !needs_reset)
            return st;
        /* A migration is needed and the configuration says to start afresh. */
        if (cf_env_is_shared(db->env) || !path || attempt > 0)
            return cf_error(COFFER_ERR_BUSY, "%s needs a migration (%s) and would be deleted and created afresh, but it is open "
                            "in this process through another handle; close it there first", label, reason);
        cf_env_release(db->env);
        db->env = NULL;
        if ((st = cf_delete_database_files(path)) != COFFER_OK)
            return st;
    }
}

COFFER_API coffer_status coffer_open(const coffer_config *config, coffer_db **out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_open: out is NULL");
    *out = NULL;
    if (!config)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_open: config is NULL");
    coffer_status st = cf_crypto_init();
    if (st != COFFER_OK)
        return st;
    coffer_db *db = calloc(1, sizeof *db);
    if (!db)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening a database");
    pthread_mutex_init(&db->lock, NULL);
    db->magic = CF_DB_MAGIC;
    db->read_only = config->read_only;
    db->max_active_versions = config->max_active_versions;
    /* a new file's; an existing one's header decides */
    db->clustered = (config->storage_format ? config->storage_format : CF_DEFAULT_STORAGE_FORMAT) == CF_FORMAT_CLUSTERS;
    if (config->key)
        st = cf_keys_derive(config->key, COFFER_ENCRYPTION_KEY_SIZE, &db->keys);
    char *default_path = NULL;
    const char *path = config->memory_id ? NULL : config->path ? config->path : (default_path = cf_default_path_copy());
    if (st == COFFER_OK && !path && !config->memory_id)
        st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory opening a database");
    struct stat sb;
    if (st == COFFER_OK && config->verify_on_open && path && stat(path, &sb) == 0) {
        char what[4200];
        snprintf(what, sizeof what, "'%s'", path);
        st = cf_verify_or_refuse(path, config->key, what);
    }
    cf_open_gate *gate = NULL;
    if (st == COFFER_OK)
        st = cf_open_gate_enter(path, config->memory_id, &gate);
    if (st == COFFER_OK) {
        st = open_locked(config, db, path);
        if (st != COFFER_OK && db->env)
            cf_env_release(db->env); /* the last reference removes what this open created */
        else if (st == COFFER_OK)
            cf_env_mark_served(db->env); /* a database now: its files stay */
        cf_open_gate_leave(gate); /* the next open of the file finds it migrated, or as it was */
    }
    free(default_path);
    if (st != COFFER_OK) {
        db->env = NULL;
        cf_db_destroy(db);
        return st;
    }
    /* Every handle records for sync once its file has a client id, whether
     * or not this one syncs (a file another process syncs stays whole). */
    if (!db->read_only)
        db->commit_hook = cf_sync_commit_hook;
    db->committed_hook = cf_hub_committed;
    if (config->sync_url && ((st = cf_sync_session_start(db, config)) != COFFER_OK ||
                             (st = cf_sync_session_download_before_open(db, config)) != COFFER_OK)) {
        coffer_close(db);
        return st;
    }
    *out = db;
    return COFFER_OK;
}

COFFER_API void coffer_close(coffer_db *db)
{
    if (!db || db->magic != CF_DB_MAGIC || db->closed || db->in_migration)
        return;
    if (cf_hub_in_callback(db))
        return; /* its own notifier runs this callback: documented as not allowed */
    if (db->env && cf_env_inherited(db->env)) {
        /* A handle of the parent, in a fork() of it: closing the environment
         * or its transactions would release the parent's reader slots and
         * locks, and its notifier thread does not exist here. Only mark it. */
        db->closed = 1;
        return;
    }
    cf_sync_session_stop(db); /* its thread has transactions of this handle */
    cf_hub_close(db);
    cf_txn_abort_all(db);
    cf_env_release(db->env);
    pthread_mutex_lock(&db->lock);
    db->closed = 1;
    db->env = NULL;
    int unused = db->ntxns == 0;
    pthread_mutex_unlock(&db->lock);
    if (unused)
        cf_db_destroy(db);
}

/* ---- introspection ------------------------------------------------------- */

static int db_ok(const coffer_db *db) { return db && db->magic == CF_DB_MAGIC && !db->closed; }

COFFER_API const char *coffer_db_path(const coffer_db *db) { return db_ok(db) ? db->env->path : NULL; }

COFFER_API uint64_t coffer_db_schema_version(const coffer_db *db) { return db_ok(db) ? db->schema->version : 0; }

COFFER_API int coffer_db_is_encrypted(const coffer_db *db) { return db_ok(db) && db->keys != NULL; }

COFFER_API int coffer_db_is_read_only(const coffer_db *db) { return db_ok(db) && db->read_only; }

COFFER_API size_t coffer_db_class_count(const coffer_db *db) { return db_ok(db) ? db->schema->nclasses : 0; }

static coffer_status check_db(const coffer_db *db, const char *fn)
{
    if (!db || db->magic != CF_DB_MAGIC)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: database handle is NULL or not a database", fn);
    if (db->closed)
        return cf_error(COFFER_ERR_MISUSE, "%s: the database is closed", fn);
    return COFFER_OK;
}

COFFER_API coffer_status coffer_db_find_class(const coffer_db *db, const char *name, coffer_class_id *out)
{
    coffer_status st = check_db(db, "coffer_db_find_class");
    if (st != COFFER_OK)
        return st;
    if (!name || !out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_db_find_class: %s is NULL", name ? "out" : "name");
    int i = cf_schema_find(db->schema, name);
    if (i < 0)
        return cf_error(COFFER_ERR_NOT_FOUND, "no class named '%s' in this database", name);
    *out = (coffer_class_id)i;
    return COFFER_OK;
}

COFFER_API const coffer_class_schema *coffer_db_class_schema(const coffer_db *db, coffer_class_id cls)
{
    if (!db_ok(db) || cls >= db->schema->nclasses)
        return NULL;
    return &db->schema->classes[cls].pub;
}

COFFER_API coffer_status coffer_db_find_property(const coffer_db *db, coffer_class_id cls, const char *name,
                                                 coffer_property_id *out)
{
    coffer_status st = check_db(db, "coffer_db_find_property");
    if (st != COFFER_OK)
        return st;
    if (!name || !out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_db_find_property: %s is NULL", name ? "out" : "name");
    if (cls >= db->schema->nclasses)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class id %u is out of range (the database has %zu classes)", cls,
                        db->schema->nclasses);
    const cf_class *c = &db->schema->classes[cls];
    int p = cf_class_find_prop(c, name);
    if (p < 0)
        return cf_error(COFFER_ERR_NOT_FOUND, "class '%s' has no property named '%s'", c->name, name);
    *out = (coffer_property_id)p;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_db_primary_key(const coffer_db *db, coffer_class_id cls, coffer_property_id *out)
{
    coffer_status st = check_db(db, "coffer_db_primary_key");
    if (st != COFFER_OK)
        return st;
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_db_primary_key: out is NULL");
    if (cls >= db->schema->nclasses)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class id %u is out of range (the database has %zu classes)", cls,
                        db->schema->nclasses);
    const cf_class *c = &db->schema->classes[cls];
    if (c->pk < 0)
        return cf_error(COFFER_ERR_NOT_FOUND, "class '%s' has no primary key", c->name);
    *out = (coffer_property_id)c->pk;
    return COFFER_OK;
}
