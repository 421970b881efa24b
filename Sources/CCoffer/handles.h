/* handles — the structs behind the opaque handles of coffer.h, shared by the
 * transaction, index, object and database modules. */
#ifndef COFFER_HANDLES_H
#define COFFER_HANDLES_H

#include <lmdb.h>
#include <pthread.h>
#include <stdint.h>

#include "coffer.h"
#include "crypto.h"
#include "env.h"
#include "record.h"
#include "schema.h"

/* Magic numbers catch NULL, foreign and (best effort) freed handles. */
#define CF_DB_MAGIC 0xC0FFDB01u
#define CF_TXN_MAGIC 0xC0FF7A01u
#define CF_OBJ_MAGIC 0xC0FF0B01u
#define CF_ITER_MAGIC 0xC0FF1701u
#define CF_DEAD_MAGIC 0xDEADC0FFu

#define CF_FORMAT_VERSION 1u

struct coffer_db {
    uint32_t magic;
    cf_env *env;
    cf_keys *keys; /* NULL for a plain file */
    uint8_t file_id[CF_FILE_ID_SIZE];
    cf_schema *schema; /* the classes this handle sees */
    MDB_dbi meta_dbi;
    MDB_dbi *object_dbis; /* per class of `schema` */
    MDB_dbi *index_dbis;
    int read_only;
    int closed;
    pthread_mutex_t lock; /* guards txns, ntxns */
    struct coffer_txn *txns;
    int ntxns;
};

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
    pthread_t thread;
    uint64_t generation; /* bumped by every write: cached record pointers expire */
    cf_class_state *state;
    MDB_cursor **index_cursors; /* per class, opened on first use */
    struct coffer_object *objects;      /* every handle of this transaction */
    struct coffer_object *free_objects; /* released ones, for reuse */
    struct coffer_iter *iters;
    uint8_t *scratch;
    size_t scratch_cap;
    struct coffer_txn *next_in_db;
};

struct coffer_object {
    uint32_t magic;
    struct coffer_txn *txn;
    coffer_class_id cls;
    coffer_object_key key;
    int loaded;
    uint64_t generation;
    cf_record rec;
    uint8_t *buf; /* opened (decrypted) record of an encrypted file */
    size_t buf_cap;
    int deleted;
    int in_use;
    int iter_owned;
    struct coffer_object *next;
    struct coffer_object *next_free;
};

/* An iterator over a class (in key order) or over the matches of an index
 * prefix. It re-seeks after writes, since a write may move LMDB's pages. */
struct coffer_iter {
    uint32_t magic;
    struct coffer_txn *txn;
    MDB_cursor *cursor;
    coffer_class_id cls;
    int by_index;
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

#endif
