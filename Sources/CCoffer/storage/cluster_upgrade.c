/* cluster_upgrade — format 4's records become format 5's clusters. Object
 * k's record is stored under key k and its cluster under k >> 8, in the
 * same sub-database: the records are taken in key order, each deleted
 * before its cluster is looked up, so that a key a cluster is written under
 * never still holds a record (cluster k >> 8 is first looked up for its
 * lowest object, whose key is at least k >> 8, and every record below that
 * one is gone by then). */
#define _GNU_SOURCE
#include "storage/cluster_upgrade.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "storage/cluster.h"
#include "storage/cluster_cache.h"
#include "storage/env.h"
#include "storage/txn.h"
#include "util/error.h"

#define LOW_MASK ((coffer_object_key)CF_CLUSTER_MAX - 1)

/* The first record of class `cls` at or after key `from`: *found 0 past
 * the last one. Its opened bytes are copied into *buf, since deleting it
 * frees the page they sit on. */
static coffer_status take_record(coffer_txn *txn, coffer_class_id cls, coffer_object_key from, int *found,
                                 coffer_object_key *key, uint8_t **buf, size_t *cap, size_t *len)
{
    const cf_class *c = &txn->db->schema->classes[cls];
    MDB_cursor *cur;
    int rc = mdb_cursor_open(txn->mdb, txn->db->object_dbis[cls], &cur);
    if (rc != 0)
        return cf_error_mdb(rc, "cannot open a cursor");
    uint8_t kb[8];
    cf_put_be64(kb, from);
    MDB_val k = {8, kb}, v;
    rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
    coffer_status st = COFFER_OK;
    /* Clusters sit below `from`, objects stored outside them (9-byte keys)
     * after every record: an 8-byte key from here on is a record. */
    *found = rc == 0 && k.mv_size == 8;
    if (rc != 0 && rc != MDB_NOTFOUND)
        st = cf_error_mdb(rc, "cannot read an object");
    const uint8_t *data = NULL;
    uint8_t *opened = NULL;
    size_t opened_cap = 0;
    if (st == COFFER_OK && *found) {
        *key = cf_get_be64(k.mv_data);
        st = cf_store_open(txn, 2 * c->table, &k, &v, &data, len, &opened, &opened_cap, "the record");
    }
    if (st == COFFER_OK && *found && *len > *cap) {
        uint8_t *grown = realloc(*buf, *len);
        if (!grown)
            st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory upgrading class '%s'", c->name);
        else
            *buf = grown, *cap = *len;
    }
    if (st == COFFER_OK && *found) {
        memcpy(*buf, data, *len);
        if ((rc = mdb_cursor_del(cur, 0)) != 0)
            st = cf_txn_write_error(txn, rc, "cannot delete an object's record");
    }
    if (st != COFFER_OK && *found)
        cf_error_prefix("object %" PRIu64 " of class '%s'", *key, c->name);
    mdb_cursor_close(cur);
    free(opened);
    return st;
}

static coffer_status upgrade_class(coffer_txn *txn, coffer_class_id cls)
{
    uint8_t *buf = NULL;
    size_t cap = 0, len = 0;
    coffer_object_key key = 0;
    coffer_status st = COFFER_OK;
    for (coffer_object_key from = 0;;) {
        int found = 0;
        st = take_record(txn, cls, from, &found, &key, &buf, &cap, &len);
        if (st != COFFER_OK || !found)
            break;
        cf_cluster_entry *e;
        st = cf_clusters_find(txn, cls, key >> CF_CLUSTER_BITS, NULL, 1, &e);
        if (st == COFFER_OK)
            st = cf_clusters_change(txn, e);
        if (st == COFFER_OK)
            st = cf_clusters_set(txn, e, (unsigned)(key & LOW_MASK), buf, len);
        if (st != COFFER_OK) {
            cf_error_prefix("object %" PRIu64 " of class '%s'", key, txn->db->schema->classes[cls].name);
            break;
        }
        from = key + 1;
    }
    free(buf);
    return st;
}

coffer_status cf_clusters_upgrade(coffer_txn *txn, const cf_schema *stored)
{
    coffer_db *db = txn->db;
    if (!stored || stored->nclasses == 0) {
        db->clustered = 1;
        return COFFER_OK;
    }
    size_t n = stored->nclasses;
    db->object_dbis = calloc(n, sizeof *db->object_dbis);
    db->index_dbis = calloc(n, sizeof *db->index_dbis);
    int *present = calloc(n, sizeof *present);
    coffer_status st = db->object_dbis && db->index_dbis && present
                           ? COFFER_OK
                           : cf_error(COFFER_ERR_NO_MEMORY, "out of memory upgrading to clusters");
    /* The cluster layer reads its classes and sub-databases from the handle. */
    db->schema = (cf_schema *)stored;
    for (size_t i = 0; st == COFFER_OK && i < n; i++) {
        st = cf_env_dbi(db->env, txn->mdb, 2 * stored->classes[i].table, 0, &db->object_dbis[i]);
        if (st == COFFER_ERR_NOT_FOUND) {
            coffer_clear_error(); /* a class a later open creates: nothing to move */
            st = COFFER_OK;
            continue;
        }
        present[i] = st == COFFER_OK;
    }
    db->clustered = 1;
    for (size_t i = 0; st == COFFER_OK && i < n; i++)
        if (present[i])
            st = upgrade_class(txn, (coffer_class_id)i);
    if (st == COFFER_OK)
        st = cf_clusters_flush(txn);
    cf_clusters_free(txn); /* written: nothing of them is needed after this */
    db->schema = NULL;
    free(db->object_dbis);
    free(db->index_dbis);
    db->object_dbis = db->index_dbis = NULL;
    free(present);
    return st;
}
