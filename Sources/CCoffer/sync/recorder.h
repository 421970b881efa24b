/* recorder — what the commit hook's recording shares between record.c
 * (objects, embedded objects, the hook) and record_collections.c (lists,
 * sets and maps): the changeset being built for one commit and the
 * operations on a list waiting for their values. Internal to sync/. */
#ifndef COFFER_SYNC_RECORDER_H
#define COFFER_SYNC_RECORDER_H

#include <string.h>

#include "storage/changelog.h"
#include "sync/state.h"
#include "util/error.h"

typedef struct recorder {
    coffer_txn *txn;
    cf_sync_cache *cache;
    cf_sync_cs_builder cs;
    cf_stamp stamp;
    const cf_log_entry *entry;
    cf_buf val, key; /* scratch */
} recorder;

static inline cf_slice pk_of(const cf_sync_obj *o)
{
    return (cf_slice){o->pk, o->pk_len};
}

static inline const char *class_name(const recorder *r, coffer_class_id cls)
{
    return r->txn->db->schema->classes[cls].name;
}

static inline cf_elem_id new_elem_id(recorder *r)
{
    cf_elem_id id = {r->stamp.clock, {0}, r->cs.next_seq++};
    memcpy(id.client, r->stamp.client, CF_SYNC_ID_SIZE);
    return id;
}

static inline coffer_status no_memory(void)
{
    return cf_error(COFFER_ERR_NO_MEMORY, "out of memory recording a sync changeset");
}

/* The collection ops of the log entry on property `column` of object `key`. */
static inline int op_matches(const cf_log_coll_op *op, uint32_t table, uint32_t column, uint64_t key)
{
    return op->table == table && op->column == column && op->key == key && op->coll_id == 0;
}


/* List operations of one commit, in order; values are read when they are
 * emitted, as the commit left them. */
typedef struct pending {
    uint8_t op; /* CF_OP_LIST_INSERT, _ERASE, _SET */
    cf_elem_id id;
    int has_anchor;
    cf_elem_id anchor;
} pending;

typedef struct pendings {
    pending *items;
    size_t n, cap;
} pendings;

/* Records list property `prop` of `obj` (state `o`): every element as
 * inserted when `fresh`, else the logged operations replayed. */
coffer_status cf_rec_list(recorder *r, coffer_object *obj, cf_sync_obj *o, coffer_property_id prop, int fresh);
/* Records set or map property `prop`: the difference from what was recorded. */
coffer_status cf_rec_set_or_map(recorder *r, coffer_object *obj, cf_sync_obj *o, coffer_property_id prop);
/* Notes a set or erase of visible element `pos` (op CF_OP_LIST_SET or _ERASE). */
coffer_status cf_rec_list_touch(recorder *r, cf_sync_prop *p, uint64_t pos, uint8_t op, pendings *out);
/* Emits the changes of `pd` with the values `list` holds now. */
coffer_status cf_rec_emit_list(recorder *r, coffer_class_id cls, const cf_sync_obj *o, const cf_sync_prop *p,
                               coffer_list *list, const pendings *pd);

#endif
