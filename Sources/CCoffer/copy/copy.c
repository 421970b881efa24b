/* copy — coffer_db_write_copy: a compacted copy of the committed state.
 *
 * A plain copy of a plain file is LMDB's compacting copy. Any other copy is
 * written entry by entry, because an encrypted file binds each sealed value
 * to its file id and keys its hashes (index entries, set elements, map keys)
 * with its key: every value is opened with the source's key and sealed again
 * for the copy, with a new file id; set and map keys are hashed again; index
 * entries are rebuilt from the records. Object keys, collection ids and
 * backlinks are kept as they are. The copy is written beside its final path
 * and linked there when complete. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage/cluster_parts.h"
#include "storage/config.h"
#include "storage/file_version.h"
#include "util/error.h"
#include "objects/graph.h"
#include "storage/lifecycle.h"
#include "storage/reserve.h"
#include "objects/object.h"
#include "storage/txn.h"
#include "sync/state.h"
#include "storage/reported_copy.h"
#include "util/progress.h"

#define HEADER_SIZE (8 + 4 + 4 + CF_FILE_ID_SIZE + CF_KEY_CHECK_SIZE)
static const uint8_t META_HEADER[] = "header";
static const uint8_t META_SCHEMA[] = "schema";

typedef struct copier {
    coffer_txn *src;
    MDB_env *env;
    cf_env shim; /* what the sealing code reads of an environment: map-full handling */
    coffer_db db;
    coffer_txn txn;
    cf_progress *progress; /* told the entries copied */
    uint64_t copied;
} copier;

/* Copies sub-database `number` (source handle `from`), opening and sealing
 * every value again; `rekey` for the graph, whose hashed keys change;
 * `clusters` for an object table of file format 5, whose clusters are
 * opened part by part and stored again the same way. */
static coffer_status copy_dbi(copier *c, MDB_dbi from, uint32_t number, int rekey, int clusters, unsigned flags)
{
    char name[16];
    snprintf(name, sizeof name, "%u", number);
    MDB_dbi to;
    int rc = mdb_dbi_open(c->txn.mdb, name, MDB_CREATE, &to);
    if (rc != 0)
        return cf_error_mdb(rc, "cannot create a sub-database of the copy");
    if (clusters) /* column blocks go under keys after every other (cluster version 4): no appends */
        flags &= ~(unsigned)MDB_APPEND;
    MDB_cursor *cur;
    if ((rc = mdb_cursor_open(c->src->mdb, from, &cur)) != 0)
        return cf_error_mdb(rc, "cannot read the database");
    uint8_t *buf = NULL, newkey[CF_COLLECTION_KEY_MAX];
    size_t cap = 0;
    coffer_status st = COFFER_OK;
    MDB_val k, v;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); st == COFFER_OK && rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (number == CF_META_DBI && k.mv_size == sizeof META_HEADER - 1 && memcmp(k.mv_data, META_HEADER, k.mv_size) == 0)
            continue;
        const uint8_t *data;
        size_t len, klen = k.mv_size;
        const uint8_t *key = k.mv_data;
        if (clusters && k.mv_size == CF_BLOCK_KEY_SIZE && *(const uint8_t *)k.mv_data == CF_BLOCK_PREFIX) {
            st = cf_progress_step(c->progress, ++c->copied); /* copied with its cluster */
            continue;
        }
        if (clusters && k.mv_size == 8) {
            uint64_t cid = cf_get_be64(k.mv_data);
            st = cf_cluster_open_whole(c->src, from, number, cid, &v, &buf, &cap, &len);
            if (st == COFFER_OK)
                st = cf_cluster_store(&c->txn, to, number, cid, buf, len, flags, 0);
            if (st == COFFER_OK)
                st = cf_progress_step(c->progress, ++c->copied);
            continue;
        }
        st = cf_store_open(c->src, number, &k, &v, &data, &len, &buf, &cap, "a stored value");
        if (st == COFFER_OK && rekey) {
            st = cf_collection_copy_key(&c->txn, k.mv_data, k.mv_size, data, len, newkey, &klen);
            key = newkey;
        }
        uint8_t newid[CF_SYNC_ID_SIZE];
        if (st == COFFER_OK && number == CF_META_DBI) {
            int how = cf_sync_copy_entry(c->db.keys, k.mv_data, k.mv_size, data, len, newkey, &klen, newid);
            if (how == CF_SYNC_COPY_SKIP)
                continue;
            if (how == CF_SYNC_COPY_NEW_KEY)
                key = newkey;
            if (how == CF_SYNC_COPY_NEW_ID) {
                data = newid;
                len = sizeof newid;
            }
        }
        if (st == COFFER_OK)
            st = cf_store_put(&c->txn, to, number, key, klen, data, len, flags, "cannot write the copy");
        if (st == COFFER_OK)
            st = cf_progress_step(c->progress, ++c->copied);
    }
    mdb_cursor_close(cur);
    free(buf);
    if (st == COFFER_OK && rc != MDB_NOTFOUND)
        st = cf_error_mdb(rc, "cannot read the database");
    return st;
}

static coffer_status write_header(copier *c)
{
    MDB_dbi meta;
    int rc = mdb_dbi_open(c->txn.mdb, "0", MDB_CREATE, &meta);
    if (rc != 0)
        return cf_error_mdb(rc, "cannot create the copy's metadata");
    uint8_t h[HEADER_SIZE] = {0};
    memcpy(h, "COFFERDB", 8);
    cf_put_le(h + 8, cf_format_of(&c->db), 4);
    cf_put_le(h + 12, c->db.keys ? 1u : 0u, 4);
    memcpy(h + 16, c->db.file_id, CF_FILE_ID_SIZE);
    if (c->db.keys)
        cf_key_check(c->db.keys, c->db.file_id, h + 16 + CF_FILE_ID_SIZE);
    MDB_val k = {sizeof META_HEADER - 1, (void *)META_HEADER}, v = {HEADER_SIZE, h};
    rc = mdb_put(c->txn.mdb, meta, &k, &v, 0);
    return rc ? cf_error_mdb(rc, "cannot write the copy's header") : COFFER_OK;
}

/* The handle of sub-database `number` in the source transaction. */
static coffer_status source_dbi(copier *c, uint32_t number, MDB_dbi *out)
{
    coffer_status st = cf_env_known_dbi(c->src->db->env, number, out) ? COFFER_OK : COFFER_ERR_NOT_FOUND;
    if (st != COFFER_OK) {
        cf_env_dbi_lock(c->src->db->env); /* LMDB opens sub-databases one transaction at a time */
        st = cf_env_dbi(c->src->db->env, c->src->mdb, number, 0, out);
        cf_env_dbi_unlock(c->src->db->env);
    }
    return st;
}

/* The entries copy_entries() copies: those of the metadata, the graph and
 * every class's objects (index entries are built again). */
static coffer_status count_entries(copier *c, const cf_schema *schema, uint64_t *out)
{
    uint32_t numbers[2] = {CF_META_DBI, CF_GRAPH_DBI};
    MDB_stat ms;
    MDB_dbi dbi;
    *out = 0;
    for (size_t i = 0; i < 2 + (schema ? schema->nclasses : 0); i++) {
        uint32_t number = i < 2 ? numbers[i] : 2 * schema->classes[i - 2].table;
        coffer_status st = number == CF_META_DBI ? (dbi = c->src->db->meta_dbi, COFFER_OK) : source_dbi(c, number, &dbi);
        if (st == COFFER_ERR_NOT_FOUND) {
            coffer_clear_error();
            continue;
        }
        if (st != COFFER_OK)
            return st;
        if (mdb_stat(c->src->mdb, dbi, &ms) == 0)
            *out += ms.ms_entries;
    }
    return COFFER_OK;
}

static coffer_status copy_entries(coffer_db *src_db, const char *tmp, const uint8_t *key, cf_progress *progress,
                                  coffer_progress_fn fn, void *ctx)
{
    copier c = {.progress = progress};
    coffer_status st = key ? cf_keys_derive(key, COFFER_ENCRYPTION_KEY_SIZE, &c.db.keys) : COFFER_OK;
    if (st == COFFER_OK)
        st = coffer_txn_begin(src_db, COFFER_TXN_READ, &c.src);
    cf_schema *schema = NULL;
    if (st == COFFER_OK) {
        const uint8_t *data;
        size_t len;
        uint8_t *buf = NULL;
        size_t cap = 0;
        st = cf_store_get(c.src, src_db->meta_dbi, CF_META_DBI, META_SCHEMA, sizeof META_SCHEMA - 1, &data, &len, &buf, &cap,
                          "the stored schema");
        if (st == COFFER_OK)
            st = cf_schema_decode(data, len, &schema);
        free(buf);
    }
    uint64_t total = 0;
    if (st == COFFER_OK && fn && (st = count_entries(&c, schema, &total)) == COFFER_OK)
        st = cf_progress_begin(progress, fn, ctx, COFFER_PROGRESS_COPY, total);
    MDB_envinfo info;
    mdb_env_info(src_db->env->mdb, &info);
    size_t map = (size_t)1 << 30;
    if ((uint64_t)info.me_last_pgno * 4096 * 4 > map)
        map = (size_t)info.me_last_pgno * 4096 * 4;
    int rc = 0, lock_fd = -1;
    if (st == COFFER_OK && ((rc = mdb_env_create(&c.env)) != 0 || (rc = mdb_env_set_maxdbs(c.env, CF_MAX_DBIS)) != 0 ||
                            (rc = mdb_env_set_mapsize(c.env, map)) != 0))
        st = cf_error(COFFER_ERR_IO, "cannot create the copy '%s': %s", tmp, mdb_strerror(rc));
    /* LMDB writes its lock file through a mapping: a full disk must be an
     * error here, not a SIGBUS. No lock is taken yet, so the descriptor can
     * be closed before LMDB opens the file. */
    if (st == COFFER_OK && (st = cf_reserve_lock_file(c.env, tmp, &lock_fd)) == COFFER_OK && lock_fd >= 0)
        close(lock_fd);
    if (st == COFFER_OK && (rc = mdb_env_open(c.env, tmp, MDB_NOSUBDIR | MDB_NOTLS, 0644)) != 0)
        st = cf_error(COFFER_ERR_IO, "cannot create the copy '%s': %s", tmp, mdb_strerror(rc));
    if (st == COFFER_OK && (rc = mdb_txn_begin(c.env, NULL, 0, &c.txn.mdb)) != 0)
        st = cf_error_mdb(rc, "cannot write the copy");
    pthread_mutex_init(&c.shim.lock, NULL);
    c.shim.map_size = map;
    c.shim.mdb = c.env; /* names a full disk in write errors */
    c.db.magic = CF_DB_MAGIC;
    c.db.env = &c.shim;
    c.db.checksums = c.db.keys == NULL; /* the copy is of the current format */
    c.db.clustered = src_db->clustered; /* and of its source's layout: values are copied as they are */
    c.db.sealed_index = c.db.keys && c.db.clustered; /* index entries are built again, below */
    c.txn = (coffer_txn){.magic = CF_TXN_MAGIC, .db = &c.db, .mdb = c.txn.mdb, .write = 1, .active = c.txn.mdb != NULL};
    cf_random(c.db.file_id, CF_FILE_ID_SIZE);
    if (st == COFFER_OK)
        st = write_header(&c);
    MDB_dbi from;
    if (st == COFFER_OK)
        st = copy_dbi(&c, src_db->meta_dbi, CF_META_DBI, 0, 0, 0);
    if (st == COFFER_OK && (st = source_dbi(&c, CF_GRAPH_DBI, &from)) == COFFER_OK)
        st = copy_dbi(&c, from, CF_GRAPH_DBI, 1, 0, 0);
    else if (st == COFFER_ERR_NOT_FOUND)
        st = COFFER_OK; /* a file without collections */
    for (size_t i = 0; st == COFFER_OK && schema && i < schema->nclasses; i++) {
        uint32_t t = schema->classes[i].table;
        if ((st = source_dbi(&c, 2 * t, &from)) == COFFER_OK)
            st = copy_dbi(&c, from, 2 * t, 0, src_db->clustered, MDB_APPEND);
        MDB_dbi index;
        char name[16];
        snprintf(name, sizeof name, "%u", 2 * t + 1);
        if (st == COFFER_OK && (rc = mdb_dbi_open(c.txn.mdb, name, MDB_CREATE, &index)) != 0)
            st = cf_error_mdb(rc, "cannot create a sub-database of the copy");
    }
    if (c.txn.mdb) {
        if (st == COFFER_OK && (rc = mdb_txn_commit(c.txn.mdb)) != 0) {
            char what[4300];
            snprintf(what, sizeof what, "cannot write the copy '%s'", tmp);
            st = cf_error_write(c.env, rc, what);
            if (st != COFFER_ERR_IO)
                st = cf_error(COFFER_ERR_IO, "%s", coffer_last_error());
        }
        else if (st != COFFER_OK)
            mdb_txn_abort(c.txn.mdb);
    }
    if (c.env)
        mdb_env_close(c.env);
    pthread_mutex_destroy(&c.shim.lock);
    cf_schema_free(schema);
    coffer_txn_free(c.src);
    cf_keys_free(c.db.keys);
    return st;
}

/* Index entries of the copy, from its records (hashes depend on its key).
 * Opened in its source's format: a copy of a format-4 file stays format 4. */
static coffer_status build_indexes(const char *tmp, const uint8_t *key, int clustered)
{
    coffer_config *config;
    coffer_status st = coffer_config_new(&config);
    if (st != COFFER_OK)
        return st;
    config->storage_format = clustered ? CF_FORMAT_CLUSTERS : CF_FORMAT_VERSION;
    coffer_db *db = NULL;
    coffer_txn *txn = NULL;
    if ((st = coffer_config_set_path(config, tmp)) == COFFER_OK &&
        (!key || (st = coffer_config_set_encryption_key(config, key, COFFER_ENCRYPTION_KEY_SIZE)) == COFFER_OK) &&
        (st = coffer_open(config, &db)) == COFFER_OK)
        st = coffer_txn_begin(db, COFFER_TXN_WRITE, &txn);
    /* Not a commit of the copy's user: a synced copy records nothing of it
     * and claims no client id (docs/SYNC.md, "Bundled files"). */
    if (st == COFFER_OK)
        st = coffer_txn_set_origin(txn, COFFER_ORIGIN_REMOTE);
    for (size_t i = 0; st == COFFER_OK && i < db->schema->nclasses; i++) {
        const cf_class *c = &db->schema->classes[i];
        for (size_t p = 0; st == COFFER_OK && p < c->nprops; p++)
            if (cf_prop_indexed(&c->props[p]) && c->props[p].type != COFFER_TYPE_LINKING_OBJECTS)
                st = cf_object_build_index(txn, (coffer_class_id)i, (coffer_property_id)p, 0);
    }
    if (st == COFFER_OK)
        st = coffer_txn_commit(txn);
    coffer_txn_free(txn);
    coffer_close(db);
    coffer_config_free(config);
    return st;
}

/* Whether the committed state of `db` has a sync client id. A synced file
 * with changes the service has not acknowledged is refused: its copy would
 * start from progress that misses them (they belong to this client), as
 * Realm refuses to write a copy of a synced file before its uploads. */
static coffer_status is_synced(coffer_db *db, int *synced)
{
    coffer_txn *txn;
    coffer_status st = coffer_txn_begin(db, COFFER_TXN_READ, &txn);
    uint8_t id[CF_SYNC_ID_SIZE];
    uint64_t pending = 0;
    if (st == COFFER_OK)
        st = cf_sync_client_id(txn, id, synced);
    if (st == COFFER_OK && *synced)
        st = cf_sync_outbox_pending(txn, &pending);
    coffer_txn_free(txn);
    if (st == COFFER_OK && pending)
        st = cf_error(COFFER_ERR_MISUSE,
                      "coffer_db_write_copy: the synced database has %llu local commit%s not uploaded yet: wait for the "
                      "upload (coffer_sync_wait_for_upload) before writing a copy",
                      (unsigned long long)pending, pending == 1 ? "" : "s");
    return st;
}

/* The bytes of the pages in use of `env` at most: a bound of its compacted copy. */
static uint64_t pages_in_use(MDB_env *env)
{
    MDB_envinfo info;
    MDB_stat ms;
    if (mdb_env_info(env, &info) != 0 || mdb_env_stat(env, &ms) != 0)
        return 0;
    return ((uint64_t)info.me_last_pgno + 1) * ms.ms_psize;
}

COFFER_API coffer_status coffer_db_write_copy(coffer_db *db, const char *path, const void *key, size_t key_size)
{
    return coffer_db_write_copy_v2(db, path, key, key_size, NULL, NULL);
}

COFFER_API coffer_status coffer_db_write_copy_v2(coffer_db *db, const char *path, const void *key, size_t key_size,
                                                 coffer_progress_fn progress, void *ctx)
{
    if (!db || db->magic != CF_DB_MAGIC)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_db_write_copy: database handle is NULL or not a database");
    if (db->closed)
        return cf_error(COFFER_ERR_MISUSE, "coffer_db_write_copy: the database is closed");
    if (!path || !*path)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_db_write_copy: path is NULL or empty");
    if ((key && key_size != COFFER_ENCRYPTION_KEY_SIZE) || (!key && key_size))
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_db_write_copy: the copy's encryption key must be %d bytes, got %zu%s",
                        COFFER_ENCRYPTION_KEY_SIZE, key_size, key ? "" : " with a NULL key");
    cf_progress report = {0};
    struct stat sb;
    if (lstat(path, &sb) == 0)
        return cf_error(COFFER_ERR_IO, "cannot write a copy to '%s': the file already exists", path);
    if (errno != ENOENT)
        return cf_error(COFFER_ERR_IO, "cannot write a copy to '%s': %s", path, strerror(errno));
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.copy-XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return cf_error(COFFER_ERR_IO, "cannot create a file beside '%s': %s", path, strerror(errno));
    close(fd);
    unlink(tmp); /* the name is reserved; the copy creates the file */
    int synced = 0;
    coffer_status st = is_synced(db, &synced);
    if (st == COFFER_OK && !db->keys && !key && !synced) {
        if (progress)
            st = cf_progress_begin(&report, progress, ctx, COFFER_PROGRESS_COPY, pages_in_use(db->env->mdb));
        if (st == COFFER_OK && (st = cf_copy_env_reported(db->env->mdb, tmp, MDB_CP_COMPACT, &report)) == COFFER_ERR_IO)
            cf_error_prefix("cannot write a copy to '%s'", path);
    } else if (st == COFFER_OK) {
        /* entry by entry: values sealed again, or a synced file's identity
         * and outbox left behind (the copy is a new client) */
        st = copy_entries(db, tmp, key, &report, progress, ctx);
        if (st == COFFER_OK)
            st = build_indexes(tmp, key, db->clustered);
    }
    /* The copy goes on from the source's version, which it holds: versions
     * never go back (copies start again at 1). */
    MDB_envinfo info;
    if (st == COFFER_OK && mdb_env_info(db->env->mdb, &info) == 0)
        st = cf_file_raise_version(tmp, (uint64_t)info.me_last_txnid);
    if (st == COFFER_OK)
        st = cf_sync_file(tmp);
    if (st == COFFER_OK)
        st = cf_progress_end(&report); /* the last moment to cancel: nothing is at the path yet */
    if (st == COFFER_OK && link(tmp, path) != 0)
        st = cf_error(COFFER_ERR_IO, "cannot write a copy to '%s': %s", path, errno == EEXIST ? "the file already exists" : strerror(errno));
    if (st == COFFER_OK)
        st = cf_sync_dir(path);
    /* the temporary name and what opening it created: its lock and note */
    coffer_status removed = cf_delete_database_files(tmp);
    if (st == COFFER_OK && removed != COFFER_OK)
        coffer_clear_error(); /* the copy is complete; a stray file beside it is not its failure */
    return st;
}
