/* handles — the structs behind the opaque handles of coffer.h, shared by the
 * transaction, index, object and database modules. */
#ifndef COFFER_HANDLES_H
#define COFFER_HANDLES_H

#include <lmdb.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "coffer.h"
#include "crypto/crypto.h"
#include "storage/env.h"
#include "storage/record.h"
#include "schema/schema.h"
#include "util/error.h"

/* Magic numbers catch NULL, foreign and (best effort) freed handles. */
#define CF_DB_MAGIC 0xC0FFDB01u
#define CF_TXN_MAGIC 0xC0FF7A01u
#define CF_OBJ_MAGIC 0xC0FF0B01u
#define CF_ITER_MAGIC 0xC0FF1701u
#define CF_COLL_MAGIC 0xC0FFC011u
#define CF_QUERY_MAGIC 0xC0FF9E01u
#define CF_RESULTS_MAGIC 0xC0FF4E51u
#define CF_DEAD_MAGIC 0xDEADC0FFu

#define CF_FORMAT_VERSION 4u  /* one record per object: the format older files are upgraded to first */
#define CF_FORMAT_CLUSTERS 5u /* objects in clusters: the newest format read, the default */
/* Format 5 whose encrypted files keep each class's index as a tree of sealed
 * nodes (storage/index_tree.h); only encrypted files are of format 6. */
#define CF_FORMAT_SEALED_INDEX 6u
/* The format of a new file whose configuration chose none, and the one a
 * read-write open upgrades a format-4 file to; a build may choose format 4
 * instead (CMake's COFFER_DEFAULT_STORAGE_FORMAT), to run the tests on it. */
#ifndef CF_DEFAULT_STORAGE_FORMAT
#define CF_DEFAULT_STORAGE_FORMAT CF_FORMAT_CLUSTERS
#endif

struct coffer_db {
    uint32_t magic;
    cf_env *env;
    cf_keys *keys; /* NULL for a plain file */
    int checksums; /* a plain file of format 4 or later: every value ends with its checksum */
    int clustered; /* file format 5: objects stored in clusters (storage/cluster_cache.h) */
    int sealed_index; /* file format 6 (encrypted): indexes are trees of sealed nodes (storage/index_tree.h) */
    uint8_t file_id[CF_FILE_ID_SIZE];
    cf_schema *schema; /* the classes this handle sees */
    MDB_dbi meta_dbi;
    MDB_dbi *object_dbis; /* per class of `schema` */
    MDB_dbi *index_dbis;
    MDB_dbi graph_dbi; /* collections and backlinks (sub-database 1) */
    int has_graph;     /* 0 only for a read-only file that has none yet */
    int read_only;
    int closed;
    int in_migration;             /* lent to a migration callback: no txns, no close */
    uint64_t max_active_versions; /* 0 = no limit */
    pthread_mutex_t lock; /* guards txns, ntxns */
    struct coffer_txn *txns;
    int ntxns;
    struct cf_hub *hub; /* observers and refresh (changes/), made on first use */
    uint64_t interrupts; /* coffer_interrupt() calls so far (atomic): running queries stop */
    /* Run by every write commit after the change log is written and before
     * LMDB's commit (sync/ records what a synced file needs); an error
     * aborts the commit. NULL for none. */
    coffer_status (*commit_hook)(struct coffer_txn *txn);
    /* Run after every write commit that succeeded, in place of
     * cf_signal_commit(), which it must call (changes/ also delivers the
     * handle's own observers there when asked to). NULL for none. */
    void (*committed_hook)(struct coffer_db *db);
    struct cf_sync_session *sync; /* the sync session of this handle, or NULL */
    /* The clusters' cache a write transaction left for the next one (file
     * format 5, storage/cluster_cache.h), or NULL. */
    _Atomic(struct cf_cluster_cache *) cluster_pool;
    /* The index nodes a read transaction of an encrypted file left for the
     * next one (storage/index_tree.h), or NULL. */
    _Atomic(struct cf_itree_cache *) itree_pool;
};

/* The format number a header of `db` carries: 6 for an encrypted file with
 * sealed index trees, 5 for clusters, else 4. */
static inline uint32_t cf_format_of(const struct coffer_db *db)
{
    return db->sealed_index ? CF_FORMAT_SEALED_INDEX : db->clustered ? CF_FORMAT_CLUSTERS : CF_FORMAT_VERSION;
}

/* The first member of every object and collection handle. A transaction
 * keeps all its handles of a sort in one list (freed with it) and the
 * released ones also in a second, which the next allocation takes from. */
typedef struct cf_pooled {
    struct cf_pooled *next;
    struct cf_pooled *next_free;
} cf_pooled;

typedef struct cf_pool {
    cf_pooled *all;
    cf_pooled *free;
} cf_pool;

/* A released handle, or a new zeroed one of `size` bytes; NULL, with error
 * `oom`, when out of memory. The caller resets the rest of a reused one. */
static inline void *cf_pool_take(cf_pool *pool, size_t size, const char *oom)
{
    cf_pooled *h = pool->free;
    if (h) {
        pool->free = h->next_free;
    } else {
        h = calloc(1, size);
        if (!h) {
            cf_error(COFFER_ERR_NO_MEMORY, "%s", oom);
            return NULL;
        }
        h->next = pool->all;
        pool->all = h;
    }
    h->next_free = NULL;
    return h;
}

/* Puts a released handle up for reuse. */
static inline void cf_pool_give(cf_pool *pool, void *handle)
{
    cf_pooled *h = handle;
    h->next_free = pool->free;
    pool->free = h;
}

typedef struct cf_class_state {
    uint64_t next_key;
    int loaded;
    int dirty;
} cf_class_state;

struct coffer_txn {
    uint32_t magic;
    struct coffer_db *db;
    MDB_txn *mdb;
    int write;
    int active;
    int failed; /* a write failed inside LMDB: only abort is possible */
    int borrowed; /* owned by a migration: the caller cannot end or free it */
    pthread_t thread;
    uint64_t generation; /* bumped by every write: cached record pointers expire */
    int nesting;         /* depth of nested object descriptions being checked or created */
    cf_class_state *state;
    MDB_cursor **index_cursors; /* per class, opened on first use */
    struct cf_itree_cache *itree; /* the index nodes it opened (storage/index_tree.h), or NULL */
    struct cf_pk_maps *pk_maps;   /* its maps of primary-key entries (storage/pk_map.h), or NULL */
    cf_pool objects; /* its object handles */
    struct coffer_iter *iters;
    struct coffer_results *results; /* computed in this transaction; detached at its end */
    cf_pool colls;  /* its collection handles */
    uint64_t next_collection;   /* collection-id counter, loaded on first use */
    int collection_loaded;
    int collection_dirty;
    uint32_t deleting_table;    /* the object being deleted: links to it are */
    coffer_object_key deleting_key; /* being dropped, so it is not deleted twice */
    uint8_t *scratch;
    size_t scratch_cap;
    struct cf_changelog *log; /* what a write transaction changed so far */
    struct cf_cluster_cache *clusters; /* file format 5: opened and changed clusters */
    int reuse_clusters; /* a write transaction of coffer_txn_begin: its cluster cache is kept on the handle */
    int defer_index;    /* a write transaction of coffer_txn_begin: index entries wait in index_pending */
    struct cf_index_pending *index_pending; /* storage/index_pending.h, or NULL */
    int origin;               /* COFFER_ORIGIN_* of its commit */
    void *sync_cache;         /* sync/: object merge states an integration changed */
    int log_always;           /* write a change-log entry even when empty (sync's own commits,
                                 so that observers do not take them for a gap in the log) */
    struct coffer_txn *next_in_db;
    /* Writes a layer above keeps in memory until the commit (objects/
     * collection.c: the end of the list the transaction appends to):
     * `flush` writes them (cf_txn_flush_deferred), `drop` forgets them
     * when the transaction ends. NULL when there are none. */
    void *deferred;
    coffer_status (*deferred_flush)(struct coffer_txn *txn);
    void (*deferred_drop)(struct coffer_txn *txn);
};

struct coffer_object {
    cf_pooled pool; /* first: see cf_pool_take */
    uint32_t magic;
    struct coffer_txn *txn;
    coffer_class_id cls;
    coffer_object_key key;
    int loaded;
    uint64_t generation;
    cf_row row; /* its values as the object store read them */
    int deleted;
    int in_use;
    int iter_owned;
};

/* A position in the objects of one class, in key order (object_store.h). */
typedef struct cf_object_cursor {
    struct coffer_txn *txn;
    coffer_class_id cls;
    MDB_cursor *cur;
    coffer_object_key pos; /* file format 5: the current key, when has_pos */
    int has_pos;
    struct cf_cluster_entry *entry; /* and its cluster, while entry->changes == entry_changes */
    uint32_t entry_changes;
} cf_object_cursor;

/* An iterator over a class (in key order) or over the matches of an index
 * prefix. It re-seeks after writes, since a write may move LMDB's pages. */
struct coffer_iter {
    uint32_t magic;
    struct coffer_txn *txn;
    cf_object_cursor objects; /* a class's objects, opened on first use */
    MDB_cursor *backlinks;    /* the graph's backlinks, opened on first use */
    coffer_class_id cls;
    int by_index;
    int by_backlink;          /* prefix is a backlink prefix in the graph */
    uint32_t repeat;          /* backlinks: times left to return the current origin */
    uint8_t prefix[512]; /* index key prefix: column, encoded value */
    size_t prefix_len;
    int recheck;              /* the prefix holds a hash: compare values */
    coffer_property_id prop;  /* with recheck */
    coffer_value value;       /* with recheck; strings point into value_copy */
    uint8_t *value_copy;
    int started;
    int done;
    coffer_object_key last_key;
    uint64_t generation;
    struct coffer_object *obj;
    struct coffer_iter *next;
};

/* A list, set or map handle (coffer_list, coffer_set and coffer_map are this
 * struct). `cls`/`prop` name the property whose rules the elements follow;
 * `nested` marks a collection inside a mixed value (elements are mixed). */
typedef struct cf_coll {
    cf_pooled pool; /* first: see cf_pool_take */
    uint32_t magic;
    int kind; /* COFFER_COLLECTION_* */
    struct coffer_txn *txn;
    coffer_class_id cls;
    coffer_property_id prop;
    coffer_object_key okey;
    int nested;
    int policy;  /* update policy for nested object descriptions */
    int depth;   /* nesting level: 1 for a property's own collection */
    uint64_t id; /* 0: a property collection not yet stored (empty) */
    int in_use;
    int loaded; /* header cached for `generation` */
    uint64_t generation;
    uint64_t count;
    uint32_t next_chunk, nchunks, chunk_cap;
    uint32_t *chunk_no; /* lists: chunk numbers in order */
    uint32_t *ends;     /* lists: elements up to and including each chunk */
    uint8_t *buf;       /* opened values and chunks */
    size_t buf_cap;
    MDB_cursor *cursor; /* sets and maps: positional reads */
    uint64_t cursor_pos;
    uint64_t cursor_generation;
    int cursor_valid;
    /* Lists: the chunk read last (an opened copy), kept while the
     * transaction has not written since, so reads in order open each chunk
     * once. */
    uint8_t *rchunk;
    size_t rchunk_cap, rchunk_len;
    uint32_t rchunk_no, rchunk_n;
    uint64_t rchunk_generation;
    int rchunk_valid;
} cf_coll;

/* A query result: the keys of the matching objects, computed in `txn`, and
 * the queries that produced them, so that it can be recomputed. */
struct coffer_results {
    uint32_t magic;
    struct coffer_txn *txn; /* NULL once the transaction is freed */
    coffer_class_id cls;
    uint64_t *keys;
    size_t count;
    /* Not computed yet (a query of a read transaction that an index answers
     * alone): counting reads the index, anything else computes the keys. A
     * read transaction's snapshot does not move, so the answer is the same. */
    int pending;
    struct cf_bquery **chain; /* applied in order to the base */
    size_t nchain;
    struct cf_bquery *first[1]; /* `chain` when it has one query */
    uint64_t *base;           /* the base: these keys, or (NULL) the whole class */
    size_t nbase;
    struct coffer_results *prev_in_txn, *next_in_txn;
};

struct coffer_list { cf_coll c; };
struct coffer_set { cf_coll c; };
struct coffer_map { cf_coll c; };

#endif
