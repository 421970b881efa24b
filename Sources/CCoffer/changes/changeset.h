/*
 * changes/changeset — collection change sets for live notifications: index
 * sets, the change set itself, a builder fed the list operations of one write
 * transaction, the diff of two ordered key sequences (results), and the merge
 * of consecutive change sets. Pure algorithms: no storage, no locking.
 *
 * Semantics (those of realm-core's CollectionChangeBuilder; the conformance
 * suite in Tests/conformance and its README pins them down):
 * - `deletions` are indices in the OLD collection (before the transaction or
 *   the folded transactions), `insertions` indices in the NEW one.
 *   Applying all deletions to the old collection (highest first) and then all
 *   insertions (lowest first) to the result gives the new collection.
 * - `modifications` are the OLD indices of rows that were kept and changed,
 *   `modifications_new` the NEW indices of the same rows, in the same order.
 *   An inserted row is never also reported modified.
 * - `moves` are pairs {from (old), to (new)}; each from is also a deletion
 *   and each to also an insertion, and a moved row is not reported modified.
 *   Lists report moves (list_move, and list_swap as two moves); results never
 *   do: there a row that changes order relative to the others is a deletion
 *   plus an insertion.
 * - `collection_was_cleared`: the last thing done to a list was a clear
 *   (a clear followed by insertions is no longer reported as a clear).
 *   `collection_root_was_deleted`: the object owning the list was deleted.
 * - Realm never delivers an empty change set: check cf_changeset_is_empty().
 *
 * Errors: functions returning int return 0 on success and -1 when memory ran
 * out. Nothing leaks on failure; the object written to is left valid (it can
 * be freed) but its content is unspecified.
 */
#ifndef COFFER_CHANGES_CHANGESET_H
#define COFFER_CHANGES_CHANGESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------------ */
/* Index sets                                                                */
/* ------------------------------------------------------------------------ */

/* Half-open range [begin, end) of indices. */
typedef struct cf_index_range {
    uint64_t begin, end;
} cf_index_range;

/* A set of indices as sorted, disjoint, non-adjacent ranges (so a cleared
 * list of a million rows is one range). Zero-initialise to get an empty set;
 * the owner releases it with cf_index_set_free(). */
typedef struct cf_index_set {
    cf_index_range *ranges;
    size_t count;    /* ranges in use */
    size_t capacity; /* ranges allocated */
} cf_index_set;

/* Releases the ranges of `s` (may be NULL) and leaves it empty. */
void cf_index_set_free(cf_index_set *s);

/* Number of indices in `s`. */
uint64_t cf_index_set_size(const cf_index_set *s);

/* Whether `index` is in `s`. O(log ranges). */
bool cf_index_set_contains(const cf_index_set *s, uint64_t index);

/* Adds `index` (no effect if present). Returns 0, or -1 out of memory. */
int cf_index_set_add(cf_index_set *s, uint64_t index);

/* Adds every index in [begin, end). Returns 0, or -1 out of memory. */
int cf_index_set_add_range(cf_index_set *s, uint64_t begin, uint64_t end);

/* Writes the indices of `s` in ascending order to `out`, which must have room
 * for cf_index_set_size(s) values. */
void cf_index_set_copy_to(const cf_index_set *s, uint64_t *out);

/* ------------------------------------------------------------------------ */
/* Change sets                                                               */
/* ------------------------------------------------------------------------ */

/* A row that moved: `from` is its old index, `to` its new index. */
typedef struct cf_move {
    uint64_t from, to;
} cf_move;

/* A collection change set; see the header comment for the meaning of each
 * field. Zero-initialise (or cf_changeset_init) to get an empty one; the
 * owner releases it with cf_changeset_free(). */
typedef struct cf_changeset {
    cf_index_set deletions;         /* old indices */
    cf_index_set insertions;        /* new indices */
    cf_index_set modifications;     /* old indices of kept, changed rows */
    cf_index_set modifications_new; /* new indices of the same rows */
    cf_move *moves;                 /* move_count pairs, in the order they happened */
    size_t move_count, move_capacity;
    bool collection_was_cleared;
    bool collection_root_was_deleted;
    /* New indices of inserted (or moved) rows that were also changed. Never
     * reported; kept so that cf_changeset_merge() stays exact when a later
     * change set undoes the insertion (a row moved back to where it was). */
    cf_index_set modified_insertions;
} cf_changeset;

/* Makes `cs` an empty change set owning nothing. */
void cf_changeset_init(cf_changeset *cs);

/* Releases everything `cs` (may be NULL) owns and leaves it empty. The
 * struct itself belongs to the caller. */
void cf_changeset_free(cf_changeset *cs);

/* Whether `cs` reports nothing: no deletions, insertions, modifications or
 * moves and neither flag set. Such a change set is never delivered. */
bool cf_changeset_is_empty(const cf_changeset *cs);

/* Folds `second` into `first`: afterwards `first` describes the change from
 * the collection before `first` to the collection after `second` (several
 * commits delivered as one notification). Rows inserted by `first` and
 * changed or moved by `second` stay plain insertions; rows inserted and then
 * deleted vanish; a move followed by a move of the same row is one move; a
 * move undone by a later move disappears (and the row is modified if it was
 * changed on the way); the flags follow the later change set (the root stays
 * deleted once deleted; a clear counts unless `second` inserted rows after
 * it). `second` is only read; the caller still frees it. Returns 0, or -1 out
 * of memory (then `first` is valid but unspecified). */
int cf_changeset_merge(cf_changeset *first, const cf_changeset *second);

/* ------------------------------------------------------------------------ */
/* List change builder                                                       */
/* ------------------------------------------------------------------------ */

/* Collects the operations one write transaction made on one list, in the
 * order they were made, with indices as they were at the time of each
 * operation. Zero-initialise (or cf_list_changes_init) to start; release
 * with cf_list_changes_free() (after cf_list_changes_finish() nothing is
 * left to release, but freeing again is harmless). Indices are not checked
 * against the list's size: the caller reports operations that happened. */
typedef struct cf_list_changes {
    /* Working form: modifications_new holds the changed rows' current
     * indices, inserted ones included; modifications is filled in by
     * cf_list_changes_finish(). */
    cf_changeset work;
} cf_list_changes;

void cf_list_changes_init(cf_list_changes *b);
void cf_list_changes_free(cf_list_changes *b);

/* An element was inserted at `index` (append: index = size). */
int cf_list_changes_insert(cf_list_changes *b, uint64_t index);

/* The element at `index` was removed. Removing an element inserted earlier
 * in the transaction cancels the insertion; a removed element's change is
 * dropped. */
int cf_list_changes_erase(cf_list_changes *b, uint64_t index);

/* The element at `index` was set, or the object it links to changed (call it
 * for every position holding that object). */
int cf_list_changes_modify(cf_list_changes *b, uint64_t index);

/* The element at `from` was moved to `to` (indices before the move; the
 * element ends at `to`). from == to changes nothing. */
int cf_list_changes_move(cf_list_changes *b, uint64_t from, uint64_t to);

/* The elements at `i` and `j` swapped places: reported as realm-core does,
 * as two moves (swap(3, 5) gives moves 5 -> 3 and 3 -> 5). */
int cf_list_changes_swap(cf_list_changes *b, uint64_t i, uint64_t j);

/* The list, which held `size` elements at that moment, was cleared: every
 * old element is deleted, earlier insertions/changes/moves are forgotten,
 * and collection_was_cleared is set until an insertion follows. */
int cf_list_changes_clear(cf_list_changes *b, uint64_t size);

/* The object owning the list, which held `size` elements at that moment,
 * was deleted: like a clear, but flagged collection_root_was_deleted. */
int cf_list_changes_root_deleted(cf_list_changes *b, uint64_t size);

/* Moves the collected change set to `out` (which must not own anything:
 * freshly initialised or freed) and leaves `b` empty for the next
 * transaction. Returns 0, or -1 out of memory (then `out` is empty and `b`
 * still holds the operations). */
int cf_list_changes_finish(cf_list_changes *b, cf_changeset *out);

/* ------------------------------------------------------------------------ */
/* Results diff                                                              */
/* ------------------------------------------------------------------------ */

/* Whether the object with `key` changed in the transaction(s) being
 * reported (a property of it, or of an object it reaches, as the caller's
 * key-path filter decides). */
typedef bool (*cf_key_changed_fn)(uint64_t key, void *ctx);

typedef enum cf_diff_order {
    /* Table order (unsorted results): kept rows never change their relative
     * order, so no kept row is ever reported as deleted and inserted. */
    CF_DIFF_TABLE_ORDER,
    /* Any other order (sorted, distinct, limited, a list through a query):
     * kept rows whose relative order changed are reported as a deletion plus
     * an insertion (never as a move, and then not also as modified). The
     * rows left in place are a longest increasing subsequence of the kept
     * rows; among equally long choices the one keeping the most unchanged
     * rows in place wins, i.e. changed rows are moved on ties. */
    CF_DIFF_ORDERED
} cf_diff_order;

/* Computes the change from `old_keys` (old_count object keys in the old
 * order) to `new_keys` (new_count keys in the new order) into `out` (which
 * must not own anything). A key in both is a kept row; a key may appear more
 * than once (a list holding an object twice): its n-th occurrence in the old
 * order is matched with its n-th occurrence in the new order. `changed` is
 * called for kept rows only (it may be NULL: nothing changed); `ctx` is
 * passed to it. O((old_count + new_count) log(old_count + new_count)).
 * Returns 0, or -1 out of memory (then `out` is empty). */
int cf_changeset_diff(const uint64_t *old_keys, size_t old_count, const uint64_t *new_keys,
                      size_t new_count, cf_key_changed_fn changed, void *ctx, cf_diff_order order,
                      cf_changeset *out);

/* One occurrence of a key in a list of keys, with its index in the list. */
typedef struct cf_keyed_row {
    uint64_t key;
    uint64_t index;
} cf_keyed_row;

/* The n occurrences of `keys` sorted by key, then by index (so a key held
 * more than once keeps its occurrences in list order). The caller frees the
 * array; NULL out of memory. */
cf_keyed_row *cf_sorted_rows(const uint64_t *keys, size_t n);

#endif
