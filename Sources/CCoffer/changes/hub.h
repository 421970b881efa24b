/* hub — the live side of one database handle: its observers, the version
 * they have seen (a read transaction kept open at it), the notifier thread
 * that wakes on commits of any process, and the refresh cycle that computes
 * and delivers change sets. observers.c runs it; compute.c computes what
 * each kind of observer is told (and resolves and follows key paths), with
 * items.c for sets and maps and view.c for lists seen through a query or a
 * sort. */
#ifndef COFFER_HUB_H
#define COFFER_HUB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "changes/changeset.h"
#include "storage/changelog.h"
#include "storage/handles.h"

typedef enum cf_obs_kind {
    CF_OBS_DB,
    CF_OBS_OBJECT,
    CF_OBS_RESULTS,
    CF_OBS_LIST,
    CF_OBS_LIST_VIEW, /* a list through a query (objects) or a sort/distinct (values) */
    CF_OBS_SET,
    CF_OBS_MAP
} cf_obs_kind;

/* One element of an observed set, or entry of an observed map, as an
 * observer last saw it. Identities are hashes of the value's identity
 * (cf_cell_identity), so equal values have equal identities. */
typedef struct cf_item {
    uint8_t id[16];    /* set: the element's identity; map: the key's */
    uint8_t value[16]; /* map: the value's identity */
    coffer_class_id link_cls; /* the object it links to, when link_key */
    uint64_t link_key;
    int is_link;
    uint8_t *key; /* map: the key's bytes (owned) */
    size_t key_len;
} cf_item;

/* A key path resolved to steps: class index and property index per step. */
typedef struct cf_keypath {
    size_t nsteps;
    struct cf_keystep {
        coffer_class_id cls;
        coffer_property_id prop;
    } steps[8];
} cf_keypath;

typedef struct cf_observer {
    cf_obs_kind kind;
    struct cf_hub *hub;
    void *ctx;
    /* the callback, of the type the kind calls for */
    union {
        coffer_db_callback db;
        coffer_collection_callback collection;
        coffer_object_callback object;
        coffer_map_callback map;
    } cb;
    /* what is observed */
    coffer_class_id cls;
    coffer_object_key key;
    coffer_property_id prop;
    coffer_query *query; /* results and list views: a shared handle (cf_query_unshare) */
    int ordered;         /* results in their own order (SORT/DISTINCT/LIMIT) */
    /* key paths: `filtered` set when any were given (none = shallow) */
    int filtered;
    cf_keypath *paths;
    size_t npaths;
    /* state */
    int initial_pending; /* the first callback is still due */
    /* Until the first callback: a read transaction at the newest version of
     * the file when the observer was registered, whose state the first
     * callback reports; every commit after it is a change told after that. */
    coffer_txn *base;
    uint64_t base_version;
    int finished;        /* the object (or the list's owner) was deleted */
    int stopped;
    int orphaned; /* its handle closed while its token lived: the token frees it */
    uint64_t *keys; /* results and lists: the keys (list elements) last told */
    size_t nkeys;
    cf_item *items;       /* sets and maps: the elements or entries last told */
    size_t nitems;
    uint64_t *rows;       /* list views: the list positions of the rows last told */
    size_t nrows;
    int value_order;      /* list views of values: COFFER_SORT_* */
    int value_distinct;   /* list views of values: equal values once */
    uint64_t skip_version; /* a commit made without notifying this observer */
    uint32_t *tables;      /* the tables whose changes can matter, sorted */
    size_t ntables;
    struct cf_observer *next;
} cf_observer;

typedef struct cf_hub {
    coffer_db *db;
    pthread_mutex_t lock; /* guards everything below but `snap` */
    pthread_cond_t cond;
    pthread_mutex_t cycle_lock; /* one refresh cycle at a time */
    cf_observer *observers;
    int cycling;                /* a cycle runs: stopped observers are freed at its end */
    cf_observer *delivering;    /* whose callback runs now, and on which thread */
    pthread_t delivering_thread;
    int auto_refresh;
    int refresh_on_commit; /* a commit through the handle refreshes it on the committing thread */
    uint64_t claimed; /* the newest version a committing thread's refresh is bringing the hub to */
    coffer_post_fn post;
    void *post_ctx;
    int post_pending;
    int refs;     /* the handle, and each posted work item */
    int closed;
    int thread_started, stopping;
    pthread_t thread;
    coffer_txn *snap; /* read transaction at `version`; only cycles touch it */
    _Atomic uint64_t version; /* written in cycles, read by the notifier between them */
} cf_hub;

/* The changes between two versions, gathered from the change log: every
 * object entry of every commit merged per (table, key). */
typedef struct cf_mod {
    uint32_t table;
    uint32_t kinds;   /* CF_LOG_* seen for it */
    uint64_t key;
    uint64_t mask;    /* modified columns below 64 */
    int big;          /* a column from 64 up was modified */
} cf_mod;

typedef struct cf_changes_read {
    int gap;          /* some commit of the range has no entry: anything may have changed */
    cf_mod *mods;     /* sorted by (table, key) */
    size_t nmods;
    uint32_t *cleared; /* tables cleared whole */
    size_t ncleared;
    cf_log_coll_op *ops; /* collection operations, in commit order */
    size_t nops;
    uint32_t *touched;   /* every table with any change, sorted, unique */
    size_t ntouched;
} cf_changes_read;

/* Reads the entries of versions (from, to] in `txn` (at `to`), leaving out
 * the modifications of `skip` (0: none). */
coffer_status cf_changes_gather(coffer_txn *txn, uint64_t from, uint64_t to, uint64_t skip, cf_changes_read *out);
void cf_changes_release(cf_changes_read *c);

/* What the log says of one object: its cf_mod, or NULL. Deleted covers a
 * cleared table. */
const cf_mod *cf_changes_find(const cf_changes_read *c, uint32_t table, uint64_t key);
int cf_changes_deleted(const cf_changes_read *c, uint32_t table, uint64_t key);
int cf_changes_column(const cf_mod *m, uint16_t column);

/* Resolves `count` dotted key paths from class `cls` (COFFER_ERR_QUERY
 * naming one that does not resolve). */
coffer_status cf_keypaths_resolve(coffer_db *db, coffer_class_id cls, const char *const *paths, size_t count,
                                  cf_keypath **out);

/* Whether object `key` of class `cls` changed, as seen from `txn` (the new
 * version): along the key paths when `obs->filtered`, else any property of
 * it or (when `follow_links`) of an object it links to, up to three links
 * away. */
bool cf_object_changed(const cf_observer *obs, coffer_txn *txn, const cf_changes_read *c, coffer_class_id cls,
                       coffer_object_key key, int follow_links);

/* The per-kind computation of one cycle: whether to call the callback, and
 * the change set or object changes to give it. `old_txn` is at the hub's
 * version, `new_txn` at the new one. */
struct coffer_collection_changes {
    cf_changeset cs;
    /* results observers: the keys of the results at the new version, in
     * order (the observer's, borrowed for the callback) */
    int has_keys;
    const uint64_t *keys;
    size_t nkeys;
};

struct coffer_object_changes {
    int deleted;
    size_t count;
    coffer_property_id *props;
    coffer_value *old_values;
    coffer_value *new_values;
};

coffer_status cf_compute_initial(cf_observer *obs, coffer_txn *new_txn);
coffer_status cf_compute_collection(cf_observer *obs, coffer_txn *old_txn, coffer_txn *new_txn, const cf_changes_read *c,
                                    int *deliver, struct coffer_collection_changes *out);
coffer_status cf_compute_object(cf_observer *obs, coffer_txn *old_txn, coffer_txn *new_txn, const cf_changes_read *c,
                                int *deliver, struct coffer_object_changes *out);
void cf_object_changes_free(struct coffer_object_changes *oc);

/* The object owning the observed collection in `txn`, in `*owner` (NULL,
 * with COFFER_OK, when it was deleted); the caller releases it. */
coffer_status cf_observed_owner(const cf_observer *obs, coffer_txn *txn, coffer_object **owner);

/* The identity of value `v` (equal values, equal identities; a nested
 * collection is known by its kind only). */
void cf_value_identity(const coffer_value *v, uint8_t out[16]);

/* Lists (compute.c): the elements of the observed list in `txn` (keys of
 * linked objects, 0 for values; `*deleted` when its owner is gone), and the
 * change set from the elements last told (obs->keys) to those. */
coffer_status cf_list_keys(const cf_observer *obs, coffer_txn *txn, uint64_t **keys, size_t *n, int *deleted);
coffer_status cf_list_compute(cf_observer *obs, coffer_txn *new_txn, const cf_changes_read *c, const uint64_t *keys,
                              size_t n, int deleted, cf_changeset *cs);

/* List views (view.c): a list through a query or a sort of its values. */
coffer_status cf_view_initial(cf_observer *obs, coffer_txn *txn);
coffer_status cf_compute_view(cf_observer *obs, coffer_txn *new_txn, const cf_changes_read *c, int *deliver,
                              cf_changeset *cs);

/* Sets and maps (items.c): their contents compared element by element. */
struct coffer_map_changes {
    coffer_bytes *keys[3]; /* COFFER_CHANGE_DELETIONS, _INSERTIONS, _MODIFICATIONS */
    size_t count[3];
    int cleared;
    int root_deleted;
    cf_item *retired; /* the entries last told, which deleted keys point into */
    size_t nretired;
};

void cf_items_free(cf_item *items, size_t n);
coffer_status cf_items_initial(cf_observer *obs, coffer_txn *txn);
coffer_status cf_compute_set(cf_observer *obs, coffer_txn *new_txn, const cf_changes_read *c, int *deliver,
                             cf_changeset *cs);
coffer_status cf_compute_map(cf_observer *obs, coffer_txn *new_txn, const cf_changes_read *c, int *deliver,
                             struct coffer_map_changes *out);
void cf_map_changes_free(struct coffer_map_changes *mc);

/* Stops the notifier and frees every observer of a closing handle. */
void cf_hub_close(coffer_db *db);

/* After a commit that wrote through `db`: with refresh on commit on (and
 * auto-refresh on, no scheduler, observers registered), refreshes `db` on
 * the calling thread unless a refresh runs elsewhere (the notifier then
 * tells the commit). A failure is left to the next refresh. */
void cf_hub_committed(coffer_db *db);

/* Whether the calling thread runs one of `db`'s callbacks now. */
int cf_hub_in_callback(coffer_db *db);

#endif
