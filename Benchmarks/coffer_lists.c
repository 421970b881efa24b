/*
 * coffer_lists.c — the list operations on Coffer: one ListOwner object whose
 * `items` list of links to Entity grows by coffer_list_append(), then is
 * read back in order, following each link to its object.
 *
 * A link is appended to the Entity with a given id, so each append finds the
 * object by primary key first (coffer_object_find), as SQLite checks the
 * foreign key of each row it inserts.
 */
#include "coffer_engine.h"

int coffer_bench_prepare(void *state, const bench_workload *w, bench_op op)
{
    (void)w;
    return op == BENCH_OP_LIST_APPEND ? coffer_bench_add_list_class(state) : 0;
}

/* Opens the owner's list in `txn`, creating the owner on first use. */
static int open_list(coffer_bench *b, coffer_txn *txn, coffer_list **list)
{
    coffer_object *owner;
    coffer_status st = b->has_owner ? coffer_object_get(txn, b->owner_cls, b->owner, &owner)
                                    : coffer_object_create(txn, b->owner_cls, NULL, 0, COFFER_UPDATE_ERROR, &owner);
    if (st != COFFER_OK)
        return coffer_bench_fail(b->has_owner ? "opening the list's owner" : "creating the list's owner", st);
    b->owner = coffer_object_key_of(owner);
    st = coffer_object_get_list(owner, OWNER_PROP_ITEMS, list);
    return st == COFFER_OK ? 0 : coffer_bench_fail("coffer_object_get_list", st);
}

/* Appends links first .. end - 1 of the workload's targets in one write
 * transaction. */
static int append_batch(coffer_bench *b, const bench_workload *w, uint64_t first, uint64_t end)
{
    coffer_txn *txn;
    coffer_list *list;
    if (coffer_bench_begin(b, COFFER_TXN_WRITE, &txn))
        return -1;
    if (open_list(b, txn, &list)) {
        coffer_txn_free(txn);
        return -1;
    }
    for (uint64_t i = first; i < end; i++) {
        coffer_value pk = coffer_value_int(w->list_targets[i]);
        coffer_object *target;
        coffer_status st = coffer_object_find(txn, b->cls, &pk, &target);
        if (st == COFFER_OK) {
            coffer_value link = coffer_value_object(target);
            st = coffer_list_append(list, &link);
            coffer_object_release(target);
        }
        if (st != COFFER_OK) {
            coffer_txn_free(txn);
            return coffer_bench_fail("appending a link to the list", st);
        }
    }
    if (coffer_bench_commit(txn))
        return -1;
    b->has_owner = 1;
    return 0;
}

/* Begins a read transaction and opens the list; says so if there is none. */
static int begin_reading(coffer_bench *b, coffer_txn **txn, coffer_list **list)
{
    if (!b->has_list_class || !b->has_owner)
        return bench_fail("there is no list to read: list_append did not run");
    if (coffer_bench_begin(b, COFFER_TXN_READ, txn))
        return -1;
    if (open_list(b, *txn, list)) {
        coffer_txn_free(*txn);
        return -1;
    }
    return 0;
}

int coffer_bench_list_append(void *state, const bench_workload *w, uint64_t *check)
{
    coffer_bench *b = state;
    coffer_txn *txn;
    coffer_list *list;
    if (!b->has_list_class)
        return bench_fail("the schema has no list class: the list operations were not prepared");
    for (uint64_t first = 0; first < w->list_length; first += BENCH_LIST_BATCH) {
        uint64_t end = w->list_length - first > BENCH_LIST_BATCH ? first + BENCH_LIST_BATCH : w->list_length;
        if (append_batch(b, w, first, end))
            return -1;
    }
    if (begin_reading(b, &txn, &list))
        return -1;
    coffer_status st = coffer_list_count(list, check);
    coffer_txn_free(txn);
    return st == COFFER_OK ? 0 : coffer_bench_fail("coffer_list_count", st);
}

int coffer_bench_list_read(void *state, const bench_workload *w, uint64_t *check)
{
    (void)w;
    coffer_bench *b = state;
    coffer_txn *txn;
    coffer_list *list;
    uint64_t count;
    if (begin_reading(b, &txn, &list))
        return -1;
    coffer_status st = coffer_list_count(list, &count);
    for (uint64_t i = 0; i < count && st == COFFER_OK; i++) {
        coffer_value v, id;
        coffer_object *target;
        if ((st = coffer_list_get(list, i, &v)) != COFFER_OK)
            break;
        if (v.type != COFFER_TYPE_LINK || v.u.link.class_id != b->cls) {
            coffer_txn_free(txn);
            return bench_fail("list element %llu is a %s, not a link to an Entity", (unsigned long long)i,
                              coffer_type_name(v.type));
        }
        if ((st = coffer_object_get(txn, b->cls, v.u.link.key, &target)) != COFFER_OK)
            break;
        st = coffer_object_get_value(target, PROP_ID, &id);
        coffer_object_release(target);
        if (st == COFFER_OK)
            *check = bench_check_list(*check, i, id.u.integer);
    }
    coffer_txn_free(txn);
    return st == COFFER_OK ? 0 : coffer_bench_fail("reading the list", st);
}
