/*
 * test_changeset.c — collection change sets (changes/changeset.h): index
 * sets, the list change builder, the results diff and the merge of
 * consecutive change sets. Cases marked with a conformance id are restated
 * from realm-core's tests, see Tests/conformance / shared conformance README
 * (changesets.json, realm-core test/object-store, Apache License 2.0); facts
 * marked "realm-core collection_change_indices.cpp" are restated from that
 * file of the same repository. The randomised tests check every change set
 * against a simulation of the collection.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Internal API under test; a relative path, since the tests' include path
 * has only include/ and Tests/c/. */
#include "../../Sources/CCoffer/changes/changeset.h"

/* ------------------------------------------------------------------------ */
/* Expected change sets                                                      */
/* ------------------------------------------------------------------------ */

/* Index lists end with -1; NONE is the empty list. */
#define L(...) ((const int64_t[]){__VA_ARGS__, -1})
#define NONE ((const int64_t[]){-1})

/* CS(deletions, insertions, modifications, modifications_new, moves, flags...) */
#define CS(d, i, m, mn, mv, ...)                                                              \
    {.deletions = (d), .insertions = (i), .modifications = (m), .modifications_new = (mn),      \
     .moves = (mv), __VA_ARGS__}

typedef struct expected {
    const int64_t *deletions, *insertions, *modifications, *modifications_new;
    const int64_t *moves; /* from, to, from, to, ... */
    bool cleared, root_deleted;
    bool nothing; /* no notification: the change set is empty */
} expected;

static size_t list_length(const int64_t *l)
{
    size_t n = 0;
    while (l[n] >= 0)
        n++;
    return n;
}

static void assert_set(const cf_index_set *s, const int64_t *want, const char *what, const char *id)
{
    size_t n = list_length(want);
    uint64_t size = cf_index_set_size(s);
    uint64_t *got = malloc((size ? size : 1) * sizeof *got);
    assert_non_null(got);
    cf_index_set_copy_to(s, got);
    bool same = size == n;
    for (size_t i = 0; same && i < n; i++)
        same = got[i] == (uint64_t)want[i];
    if (!same) {
        char buf[512];
        int len = snprintf(buf, sizeof buf, "%s: %s are [", id, what);
        for (uint64_t i = 0; i < size && len < 400; i++)
            len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%llu", i ? ", " : "",
                            (unsigned long long)got[i]);
        free(got);
        fail_msg("%s], expected %zu values", buf, n);
    }
    free(got);
    /* The ranges are kept canonical: sorted, disjoint and not adjacent. */
    for (size_t i = 0; i < s->count; i++) {
        assert_true(s->ranges[i].begin < s->ranges[i].end);
        if (i > 0)
            assert_true(s->ranges[i - 1].end < s->ranges[i].begin);
    }
}

static void assert_changeset(const cf_changeset *cs, const expected *e, const char *id)
{
    if (e->nothing) {
        if (!cf_changeset_is_empty(cs))
            fail_msg("%s: expected no notification", id);
        return;
    }
    assert_false(cf_changeset_is_empty(cs));
    assert_set(&cs->deletions, e->deletions, "deletions", id);
    assert_set(&cs->insertions, e->insertions, "insertions", id);
    assert_set(&cs->modifications, e->modifications, "modifications", id);
    assert_set(&cs->modifications_new, e->modifications_new, "modifications_new", id);
    size_t n = list_length(e->moves);
    if (cs->move_count * 2 != n)
        fail_msg("%s: %zu moves, expected %zu", id, cs->move_count, n / 2);
    for (size_t i = 0; i < cs->move_count; i++) {
        if (cs->moves[i].from != (uint64_t)e->moves[2 * i] ||
            cs->moves[i].to != (uint64_t)e->moves[2 * i + 1])
            fail_msg("%s: move %zu is [%llu, %llu]", id, i, (unsigned long long)cs->moves[i].from,
                     (unsigned long long)cs->moves[i].to);
    }
    if (cs->collection_was_cleared != e->cleared)
        fail_msg("%s: collection_was_cleared is %d", id, cs->collection_was_cleared);
    if (cs->collection_root_was_deleted != e->root_deleted)
        fail_msg("%s: collection_root_was_deleted is %d", id, cs->collection_root_was_deleted);
}

/* ------------------------------------------------------------------------ */
/* List operations                                                           */
/* ------------------------------------------------------------------------ */

typedef enum op_kind { OP_END, OP_INSERT, OP_ERASE, OP_MODIFY, OP_MOVE, OP_SWAP, OP_CLEAR, OP_ROOT } op_kind;

typedef struct list_op {
    op_kind kind;
    uint64_t a, b;
} list_op;

#define INSERT(i) {OP_INSERT, (i), 0}
#define ERASE(i) {OP_ERASE, (i), 0}
#define MODIFY(i) {OP_MODIFY, (i), 0}
#define MOVE(f, t) {OP_MOVE, (f), (t)}
#define SWAP(i, j) {OP_SWAP, (i), (j)}
#define CLEAR(size) {OP_CLEAR, (size), 0}
#define ROOT_DELETED(size) {OP_ROOT, (size), 0}
#define END {OP_END, 0, 0}
#define MAX_OPS 16

static void apply_op(cf_list_changes *b, list_op op)
{
    int rc = 0;
    switch (op.kind) {
    case OP_INSERT: rc = cf_list_changes_insert(b, op.a); break;
    case OP_ERASE: rc = cf_list_changes_erase(b, op.a); break;
    case OP_MODIFY: rc = cf_list_changes_modify(b, op.a); break;
    case OP_MOVE: rc = cf_list_changes_move(b, op.a, op.b); break;
    case OP_SWAP: rc = cf_list_changes_swap(b, op.a, op.b); break;
    case OP_CLEAR: rc = cf_list_changes_clear(b, op.a); break;
    case OP_ROOT: rc = cf_list_changes_root_deleted(b, op.a); break;
    case OP_END: break;
    }
    assert_int_equal(rc, 0);
}

/* The change set of one transaction made of `ops` (END-terminated). */
static void build(const list_op *ops, cf_changeset *out)
{
    cf_list_changes b;
    cf_list_changes_init(&b);
    for (size_t i = 0; ops[i].kind != OP_END; i++)
        apply_op(&b, ops[i]);
    assert_int_equal(cf_list_changes_finish(&b, out), 0);
    cf_list_changes_free(&b);
}

typedef struct list_case {
    const char *id;
    list_op ops[MAX_OPS];
    expected want;
} list_case;

static void run_list_cases(const list_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        cf_changeset cs;
        build(cases[i].ops, &cs);
        assert_changeset(&cs, &cases[i].want, cases[i].id);
        cf_changeset_free(&cs);
    }
}

/* ------------------------------------------------------------------------ */
/* Index sets                                                                */
/* ------------------------------------------------------------------------ */

static void test_index_set_add_and_coalesce(void **state)
{
    (void)state;
    cf_index_set s = {0};
    assert_int_equal(cf_index_set_add(&s, 5), 0);
    assert_int_equal(cf_index_set_add(&s, 3), 0);
    assert_int_equal(cf_index_set_add(&s, 4), 0); /* joins [3,4) and [5,6) */
    assert_int_equal(s.count, 1);
    assert_int_equal(cf_index_set_add_range(&s, 10, 20), 0);
    assert_int_equal(cf_index_set_add_range(&s, 6, 10), 0); /* bridges the gap */
    assert_int_equal(s.count, 1);
    assert_int_equal(cf_index_set_add(&s, 12), 0); /* already present */
    assert_int_equal(cf_index_set_add_range(&s, 30, 30), 0); /* empty range */
    assert_int_equal(cf_index_set_add(&s, 0), 0);
    assert_set(&s, L(0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19), "indices",
               "index set");
    assert_true(cf_index_set_contains(&s, 19));
    assert_false(cf_index_set_contains(&s, 20));
    assert_false(cf_index_set_contains(&s, 1));
    assert_int_equal(cf_index_set_size(&s), 18);
    cf_index_set_free(&s);
    cf_index_set_free(&s); /* freeing twice is harmless */
    cf_index_set_free(NULL);
    assert_int_equal(s.count, 0);
}

/* ------------------------------------------------------------------------ */
/* List change builder: conformance                                          */
/* ------------------------------------------------------------------------ */

/*
 * Every "kind": "list" case of changesets.json, restated from realm-core's
 * tests (see Tests/conformance / shared conformance README). Writes are
 * translated to builder operations on the observed list: a list_append is an
 * insert at the size, deleting a listed Target erases each position holding
 * it (last first), setting a listed Target's property modifies each position
 * holding it, writes elsewhere feed nothing. The fixture's lists hold Target
 * 0..9 (the int list [3, 1, 2]). Left out: list-keypath-miss and
 * list-keypath-shallow-modify, where the key-path filter, not the builder,
 * decides that the set is not reported.
 */
static const list_case list_conformance_cases[] = {
    {"list-erase", {ERASE(5), END}, CS(L(5), NONE, NONE, NONE, NONE)},
    {"list-other-list-same-class", {END}, {.nothing = true}},
    {"list-other-class", {END}, {.nothing = true}},
    {"list-clear", {CLEAR(10), END},
     CS(L(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), NONE, NONE, NONE, NONE, .cleared = true)},
    {"list-clear-then-append", {CLEAR(10), INSERT(0), END},
     CS(L(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), L(0), NONE, NONE, NONE)},
    {"list-erase-every-element",
     {ERASE(0), ERASE(0), ERASE(0), ERASE(0), ERASE(0), ERASE(0), ERASE(0), ERASE(0), ERASE(0),
      ERASE(0), END},
     CS(L(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), NONE, NONE, NONE, NONE)},
    {"list-owner-deleted", {ROOT_DELETED(10), END},
     CS(L(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), NONE, NONE, NONE, NONE, .root_deleted = true)},
    {"list-target-modified", {MODIFY(5), END}, CS(NONE, NONE, L(5), L(5), NONE)},
    {"list-target-deleted", {ERASE(5), END}, CS(L(5), NONE, NONE, NONE, NONE)},
    {"list-append-then-modify", {INSERT(10), MODIFY(5), MODIFY(10), END},
     CS(NONE, L(10), L(5), L(5), NONE)},
    {"list-modify-then-move", {MODIFY(5), MOVE(5, 8), END}, CS(L(5), L(8), NONE, NONE, L(5, 8))},
    /* setup appended Target 5 again: it is at 5 and 10 */
    {"list-duplicate-modified", {MODIFY(5), MODIFY(10), END},
     CS(NONE, NONE, L(5, 10), L(5, 10), NONE)},
    {"list-duplicate-deleted", {ERASE(10), ERASE(5), END}, CS(L(5, 10), NONE, NONE, NONE, NONE)},
    {"list-unlisted-target-deleted", {END}, {.nothing = true}},
    {"list-keypath-hit", {MODIFY(0), END}, CS(NONE, NONE, L(0), L(0), NONE)},
    {"list-keypath-shallow-move", {MOVE(5, 8), END}, CS(L(5), L(8), NONE, NONE, L(5, 8))},
    {"list-ops-erase-contiguous-mixed", {ERASE(5), ERASE(6), ERASE(5), END},
     CS(L(5, 6, 7), NONE, NONE, NONE, NONE)},
    {"list-ops-erase-scattered-mixed", {ERASE(3), ERASE(6), ERASE(4), END},
     CS(L(3, 5, 7), NONE, NONE, NONE, NONE)},
    {"list-ops-chained-moves", {MOVE(1, 3), MOVE(3, 5), END}, CS(L(1), L(5), NONE, NONE, L(1, 5))},
    {"list-ops-moves-shifting-moves", {MOVE(1, 5), MOVE(2, 7), END},
     CS(L(1, 3), L(4, 7), NONE, NONE, L(1, 4, 3, 7))},
    {"list-ops-swap", {SWAP(3, 5), END}, CS(L(3, 5), L(3, 5), NONE, NONE, L(5, 3, 3, 5))},
    {"list-ops-set-then-insert", {MODIFY(5), INSERT(5), END}, CS(NONE, L(5), L(5), L(6), NONE)},
    {"list-ops-set-then-erase-before", {MODIFY(5), ERASE(4), END},
     CS(L(4), NONE, L(5), L(4), NONE)},
    {"list-ops-erase-then-set", {ERASE(5), MODIFY(5), END}, CS(L(5), NONE, L(6), L(5), NONE)},
    {"list-ops-moves-shift-insertions", {INSERT(5), MODIFY(6), MOVE(7, 4), END},
     CS(L(6), L(4, 6), L(5), L(7), L(6, 4))},
    {"list-ops-erase-before-move-target", {MOVE(2, 8), ERASE(5), END},
     CS(L(2, 6), L(7), NONE, NONE, L(2, 7))},
    {"intlist-erase-and-set", {ERASE(0), MODIFY(0), END}, CS(L(0), NONE, L(1), L(0), NONE)},
};

static void test_list_builder_conformance(void **state)
{
    (void)state;
    run_list_cases(list_conformance_cases,
                   sizeof list_conformance_cases / sizeof list_conformance_cases[0]);
}

/* More builder facts: realm-core collection_change_indices.cpp, and the
 * consequences of the rules in the header. */
static const list_case list_builder_cases[] = {
    {"insert then erase cancels", {INSERT(3), ERASE(3), END}, {.nothing = true}},
    {"modified inserted row is only an insertion", {INSERT(3), MODIFY(3), END},
     CS(NONE, L(3), NONE, NONE, NONE)},
    {"erase drops the modification", {MODIFY(5), ERASE(5), END}, CS(L(5), NONE, NONE, NONE, NONE)},
    {"insertions shift insertions and modifications", {INSERT(5), MODIFY(8), INSERT(1), END},
     CS(NONE, L(1, 6), L(7), L(9), NONE)},
    {"deletions are not shifted by insertions", {ERASE(8), ERASE(3), INSERT(5), END},
     CS(L(3, 8), L(5), NONE, NONE, NONE)},
    {"erase is shifted by earlier deletions", {ERASE(5), ERASE(6), END},
     CS(L(5, 7), NONE, NONE, NONE, NONE)},
    {"erase is shifted by earlier insertions", {INSERT(5), ERASE(6), END},
     CS(L(5), L(5), NONE, NONE, NONE)},
    {"moves shift each other", {MOVE(5, 10), MOVE(6, 12), MOVE(10, 0), END},
     CS(L(5, 7, 11), L(0, 10, 12), NONE, NONE, L(5, 10, 7, 12, 11, 0))},
    {"moving an inserted row is an insertion", {INSERT(5), MOVE(5, 10), END},
     CS(NONE, L(10), NONE, NONE, NONE)},
    {"a move keeps the source's modification", {MODIFY(5), MOVE(5, 10), MOVE(6, 12), END},
     CS(L(5, 7), L(9, 12), NONE, NONE, L(5, 9, 7, 12))},
    {"a redundant swap of neighbours is nothing", {MOVE(7, 8), MOVE(7, 8), END},
     {.nothing = true}},
    {"modify, move, move back: modified in place", {MODIFY(5), MOVE(5, 8), MOVE(8, 5), END},
     CS(NONE, NONE, L(5), L(5), NONE)},
    {"swap of neighbours is one move", {SWAP(2, 1), END}, CS(L(2), L(1), NONE, NONE, L(2, 1))},
    {"swap with itself is nothing", {SWAP(4, 4), MOVE(3, 3), END}, {.nothing = true}},
    {"clear counts earlier changes", {INSERT(0), INSERT(0), ERASE(5), MODIFY(1), CLEAR(11), END},
     CS(L(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), NONE, NONE, NONE, NONE, .cleared = true)},
    {"clear of an empty list", {CLEAR(0), END}, CS(NONE, NONE, NONE, NONE, NONE, .cleared = true)},
};

static void test_list_builder_rules(void **state)
{
    (void)state;
    run_list_cases(list_builder_cases, sizeof list_builder_cases / sizeof list_builder_cases[0]);
}

static void test_list_builder_reuse(void **state)
{
    (void)state;
    cf_list_changes b;
    cf_list_changes_init(&b);
    cf_changeset cs;
    assert_int_equal(cf_list_changes_insert(&b, 0), 0);
    assert_int_equal(cf_list_changes_finish(&b, &cs), 0);
    assert_changeset(&cs, &(expected)CS(NONE, L(0), NONE, NONE, NONE), "first transaction");
    cf_changeset_free(&cs);
    /* The builder is empty again for the next transaction. */
    assert_int_equal(cf_list_changes_erase(&b, 2), 0);
    assert_int_equal(cf_list_changes_finish(&b, &cs), 0);
    assert_changeset(&cs, &(expected)CS(L(2), NONE, NONE, NONE, NONE), "second transaction");
    cf_changeset_free(&cs);
    cf_list_changes_free(&b);
    cf_list_changes_free(&b);
}

/* ------------------------------------------------------------------------ */
/* Results diff                                                              */
/* ------------------------------------------------------------------------ */

typedef struct diff_case {
    const char *id;
    cf_diff_order order;
    const int64_t *old_keys, *new_keys, *changed_keys;
    expected want;
} diff_case;

static bool key_in_list(uint64_t key, void *ctx)
{
    for (const int64_t *k = ctx; *k >= 0; k++)
        if ((uint64_t)*k == key)
            return true;
    return false;
}

static uint64_t *to_keys(const int64_t *l, size_t *n)
{
    *n = list_length(l);
    uint64_t *keys = malloc((*n ? *n : 1) * sizeof *keys);
    assert_non_null(keys);
    for (size_t i = 0; i < *n; i++)
        keys[i] = (uint64_t)l[i];
    return keys;
}

static void run_diff_cases(const diff_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t old_count, new_count;
        uint64_t *old_keys = to_keys(cases[i].old_keys, &old_count);
        uint64_t *new_keys = to_keys(cases[i].new_keys, &new_count);
        cf_changeset cs;
        assert_int_equal(cf_changeset_diff(old_keys, old_count, new_keys, new_count, key_in_list,
                                           (void *)cases[i].changed_keys, cases[i].order, &cs),
                         0);
        assert_changeset(&cs, &cases[i].want, cases[i].id);
        assert_int_equal(cs.move_count, 0);
        cf_changeset_free(&cs);
        free(old_keys);
        free(new_keys);
    }
}

#define TABLE CF_DIFF_TABLE_ORDER
#define ORDERED CF_DIFF_ORDERED

/*
 * "kind": "results" and "list_results" cases of changesets.json, restated
 * from realm-core's tests (see Tests/conformance / shared conformance README)
 * as the old and new key sequences they imply. Keys: Item n is key n; in the
 * "results" fixture Item n has value 2n, so "value > 0 AND value < 10" holds
 * Items 1..4 (sorted by value descending: 4, 3, 2, 1). Target n is key 100+n.
 * The "limit" fixture's Obj n (key n) has values 2,3,0,1,2,3,0,1. In the
 * "list" fixture the list holds Target 0..9 with value n. Elements of the int
 * list [3, 1, 2] are keys 200 (3), 201 (1), 202 (2). `changed` lists the
 * objects the write changed (directly, or through a forward link), as the
 * notifier's key-path check would report them.
 */
static const diff_case results_conformance_cases[] = {
    /* Items 0 and 6 never matched. */
    {"results-unsorted-delete-nonmatching", TABLE, L(1, 2, 3, 4), L(1, 2, 3, 4), NONE,
     {.nothing = true}},
    {"results-unsorted-modify-matching", TABLE, L(1, 2, 3, 4), L(1, 2, 3, 4), L(1),
     CS(NONE, NONE, L(0), L(0), NONE)},
    /* Item 2 set to 0 */
    {"results-unsorted-modify-to-nonmatching", TABLE, L(1, 2, 3, 4), L(1, 3, 4), L(2),
     CS(L(1), NONE, NONE, NONE, NONE)},
    /* Item 7 set to 3: table order puts it last */
    {"results-unsorted-modify-to-matching", TABLE, L(1, 2, 3, 4), L(1, 2, 3, 4, 7), L(7),
     CS(NONE, L(4), NONE, NONE, NONE)},
    {"results-unsorted-delete-matching", TABLE, L(1, 2, 3, 4), L(1, 2, 4), NONE,
     CS(L(2), NONE, NONE, NONE, NONE)},
    /* Item 2 set to 0, Item 3 set to its own value */
    {"results-unsorted-modification-indices", TABLE, L(1, 2, 3, 4), L(1, 3, 4), L(2, 3),
     CS(L(1), NONE, L(2), L(1), NONE)},
    /* new Item 53, value 5 */
    {"results-unsorted-create-matching", TABLE, L(1, 2, 3, 4), L(1, 2, 3, 4, 53), NONE,
     CS(NONE, L(4), NONE, NONE, NONE)},
    /* Target 1 changed: Item 1 links to it */
    {"results-unsorted-linked-object-modified", TABLE, L(1, 2, 3, 4), L(1, 2, 3, 4), L(1, 101),
     CS(NONE, NONE, L(0), L(0), NONE)},
    /* Item 1 set to 3: still last in descending order */
    {"results-sorted-modify-in-place", ORDERED, L(4, 3, 2, 1), L(4, 3, 2, 1), L(1),
     CS(NONE, NONE, L(3), L(3), NONE)},
    {"results-sorted-modify-to-nonmatching", ORDERED, L(4, 3, 2, 1), L(4, 3, 1), L(2),
     CS(L(2), NONE, NONE, NONE, NONE)},
    /* Item 7 set to 3: between Item 2 (4) and Item 1 (2) */
    {"results-sorted-modify-to-matching", ORDERED, L(4, 3, 2, 1), L(4, 3, 2, 7, 1), L(7),
     CS(NONE, L(3), NONE, NONE, NONE)},
    {"results-sorted-delete-all", ORDERED, L(4, 3, 2, 1), NONE, NONE,
     CS(L(0, 1, 2, 3), NONE, NONE, NONE, NONE)},
    /* Items 100 (3), 101 (4), 102 (5) into empty results */
    {"results-sorted-insert-after-clear", ORDERED, NONE, L(102, 101, 100), NONE,
     CS(NONE, L(0, 1, 2), NONE, NONE, NONE)},
    /* Item 2 set to 9: first now; it moves, so it is not modified */
    {"results-sorted-sort-key-change", ORDERED, L(4, 3, 2, 1), L(2, 4, 3, 1), L(2),
     CS(L(2), L(0), NONE, NONE, NONE)},
    /* setup: only Items 100 (15) and 101 (5); Item 100 deleted, 102 (3) made */
    {"results-sorted-delete-other-and-insert", ORDERED, L(101), L(101, 102), NONE,
     CS(NONE, L(1), NONE, NONE, NONE)},
    /* TRUEPREDICATE: Items 0..9 in table order */
    {"results-keypath-root-value-hit", TABLE, L(0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
     L(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), L(1), CS(NONE, NONE, L(1), L(1), NONE)},
    {"results-keypath-shallow-delete", TABLE, L(0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
     L(1, 2, 3, 4, 5, 6, 7, 8, 9), NONE, CS(L(0), NONE, NONE, NONE, NONE)},
    /* Targets; a new Item linking to Target 0 changes it for ['items.value'] */
    {"results-keypath-backlink-new-origin", TABLE,
     L(100, 101, 102, 103, 104, 105, 106, 107, 108, 109),
     L(100, 101, 102, 103, 104, 105, 106, 107, 108, 109), L(100),
     CS(NONE, NONE, L(0), L(0), NONE)},
    {"results-distinct-modify-matching", ORDERED, L(1, 2, 3, 4), L(1, 2, 3, 4), L(1),
     CS(NONE, NONE, L(0), L(0), NONE)},
    /* Item 6 set to 2: Item 1 (2) comes first and hides it */
    {"results-distinct-duplicate-after", ORDERED, L(1, 2, 3, 4), L(1, 2, 3, 4), L(6),
     {.nothing = true}},
    /* Item 0 set to 2: it now comes first and hides Item 1 */
    {"results-distinct-duplicate-before", ORDERED, L(1, 2, 3, 4), L(0, 2, 3, 4), L(0),
     CS(L(0), L(0), NONE, NONE, NONE)},
    /* Item 2 set to 2: hidden by Item 1 */
    {"results-distinct-becomes-duplicate", ORDERED, L(1, 2, 3, 4), L(1, 3, 4), L(2),
     CS(L(1), NONE, NONE, NONE, NONE)},
    /* Item 0 set to 1: a new value */
    {"results-distinct-new-value", ORDERED, L(1, 2, 3, 4), L(0, 1, 2, 3, 4), L(0),
     CS(NONE, L(0), NONE, NONE, NONE)},
    /* distinct keeps Obj 0 (2), 1 (3), 2 (0), 3 (1); sorted descending
     * 1, 0, 3, 2; limit 2. New Obj 8 (5) comes first. */
    {"results-limit-distinct-sort-limit", ORDERED, L(1, 0), L(8, 1), NONE,
     CS(L(1), L(0), NONE, NONE, NONE)},
    {"results-limit-modify", ORDERED, L(0, 1), L(0, 1), L(1), CS(NONE, NONE, L(1), L(1), NONE)},
    /* the recreated object is a new object: key 1 becomes key 2 */
    {"results-pk-recreated", TABLE, L(1), L(2), NONE, CS(L(0), L(0), NONE, NONE, NONE)},
    /* Targets sorted by value descending: 109 .. 100; Target 5 appended
     * three times lands after the Target 5 already there (stable sort) */
    {"list-sorted-add-duplicates", ORDERED, L(109, 108, 107, 106, 105, 104, 103, 102, 101, 100),
     L(109, 108, 107, 106, 105, 105, 105, 105, 104, 103, 102, 101, 100), NONE,
     CS(NONE, L(5, 6, 7), NONE, NONE, NONE)},
    /* Target 5 set to 15: first */
    {"list-sorted-sort-key-change", ORDERED,
     L(109, 108, 107, 106, 105, 104, 103, 102, 101, 100),
     L(105, 109, 108, 107, 106, 104, 103, 102, 101, 100), L(105),
     CS(L(4), L(0), NONE, NONE, NONE)},
    {"list-sorted-swap", ORDERED, L(109, 108, 107, 106, 105, 104, 103, 102, 101, 100),
     L(109, 108, 107, 106, 105, 104, 103, 102, 101, 100), NONE, {.nothing = true}},
    /* "value < 9": Targets 0..8 in list order */
    {"list-filtered-add-duplicates", ORDERED, L(100, 101, 102, 103, 104, 105, 106, 107, 108),
     L(100, 101, 102, 103, 104, 105, 106, 107, 108, 105, 105, 105), NONE,
     CS(NONE, L(9, 10, 11), NONE, NONE, NONE)},
    {"list-filtered-swap", ORDERED, L(100, 101, 102, 103, 104, 105, 106, 107, 108),
     L(100, 102, 101, 103, 104, 105, 106, 107, 108), NONE, CS(L(2), L(1), NONE, NONE, NONE)},
    {"list-filtered-move", ORDERED, L(100, 101, 102, 103, 104, 105, 106, 107, 108),
     L(100, 101, 102, 105, 103, 104, 106, 107, 108), NONE, CS(L(5), L(3), NONE, NONE, NONE)},
    /* Target 9 is filtered out */
    {"list-filtered-move-nonmatching", ORDERED, L(100, 101, 102, 103, 104, 105, 106, 107, 108),
     L(100, 101, 102, 103, 104, 105, 106, 107, 108), NONE, {.nothing = true}},
    /* setup erased the 3: [1, 2]; inserting 3 at 0 sorts last */
    {"intlist-sorted-insert", ORDERED, L(201, 202), L(201, 202, 203), NONE,
     CS(NONE, L(2), NONE, NONE, NONE)},
    /* erase 0 (the 3), set 0 (the 1) to 3: sorted [1, 2, 3] -> [2, 3] */
    {"intlist-sorted-erase-and-set", ORDERED, L(201, 202, 200), L(202, 201), L(201),
     CS(L(0, 2), L(1), NONE, NONE, NONE)},
    {"intlist-distinct-erase-and-set", ORDERED, L(200, 201, 202), L(201, 202), L(201),
     CS(L(0), NONE, L(1), L(0), NONE)},
};

static void test_results_diff_conformance(void **state)
{
    (void)state;
    run_diff_cases(results_conformance_cases,
                   sizeof results_conformance_cases / sizeof results_conformance_cases[0]);
}

/* Reorderings and ties: realm-core collection_change_indices.cpp,
 * "calculate() sorted" and "calculate() table order". */
static const diff_case diff_rule_cases[] = {
    {"identical", ORDERED, L(1, 2, 3), L(1, 2, 3), NONE, {.nothing = true}},
    {"all inserted", ORDERED, NONE, L(1, 2, 3), L(1, 2, 3), CS(NONE, L(0, 1, 2), NONE, NONE, NONE)},
    {"all deleted", TABLE, L(1, 2, 3), NONE, L(1, 2, 3), CS(L(0, 1, 2), NONE, NONE, NONE, NONE)},
    {"all modified in place", TABLE, L(1, 2, 3), L(1, 2, 3), L(1, 2, 3),
     CS(NONE, NONE, L(0, 1, 2), L(0, 1, 2), NONE)},
    {"inserted and deleted", ORDERED, L(1, 2, 3), L(1, 3, 4), L(1, 2, 3, 4),
     CS(L(1), L(2), L(0, 2), L(0, 1), NONE)},
    {"new rows are not modified", TABLE, L(3), L(3, 5), L(3, 5), CS(NONE, L(1), L(0), L(0), NONE)},
    {"swap 2 and 3", ORDERED, L(1, 2, 3), L(1, 3, 2), NONE, CS(L(2), L(1), NONE, NONE, NONE)},
    {"reverse", ORDERED, L(1, 2, 3), L(3, 2, 1), NONE, CS(L(1, 2), L(0, 1), NONE, NONE, NONE)},
    {"rotate left", ORDERED, L(1, 2, 3), L(2, 3, 1), NONE, CS(L(0), L(2), NONE, NONE, NONE)},
    {"rotate right", ORDERED, L(1, 2, 3), L(3, 1, 2), NONE, CS(L(2), L(0), NONE, NONE, NONE)},
    {"1 3 2 to 3 1 2", ORDERED, L(1, 3, 2), L(3, 1, 2), NONE, CS(L(1), L(0), NONE, NONE, NONE)},
    {"2 1 3 to 3 1 2", ORDERED, L(2, 1, 3), L(3, 1, 2), NONE,
     CS(L(1, 2), L(0, 1), NONE, NONE, NONE)},
    {"3 2 1 to 2 3 1", ORDERED, L(3, 2, 1), L(2, 3, 1), NONE, CS(L(1), L(0), NONE, NONE, NONE)},
    /* on a tie the changed row moves */
    {"tie: changed 2 moves", ORDERED, L(1, 2, 3), L(1, 3, 2), L(2),
     CS(L(1), L(2), NONE, NONE, NONE)},
    {"tie: changed 3 moves", ORDERED, L(1, 2, 3), L(1, 3, 2), L(3),
     CS(L(2), L(1), NONE, NONE, NONE)},
    /* but a longer run of unchanged rows is not worth more moves */
    {"smaller diff wins over moving the changed row", ORDERED, L(1, 2, 3), L(2, 3, 1), L(2),
     CS(L(0), L(2), L(1), L(0), NONE)},
    {"moved rows are not modified", ORDERED, L(3, 5), L(5, 3), L(3, 5),
     CS(L(1), L(0), L(0), L(1), NONE)},
    /* duplicates: the n-th occurrence matches the n-th occurrence (realm-core
     * pairs them freely and reports deletions 3, 5 here: as many rows move) */
    {"duplicates", ORDERED, L(1, 1, 2, 2, 3, 3), L(1, 2, 3, 1, 2, 3), NONE,
     CS(L(2, 4), L(1, 2), NONE, NONE, NONE)},
    {"fewer duplicates", ORDERED, L(1, 1, 1, 1, 2, 3), L(1, 2, 3, 1), NONE,
     CS(L(1, 2, 3), L(3), NONE, NONE, NONE)},
    {"more duplicates", ORDERED, L(1, 2, 3, 1), L(1, 1, 1, 1, 2, 3), NONE,
     CS(L(3), L(1, 2, 3), NONE, NONE, NONE)},
};

static void test_results_diff_rules(void **state)
{
    (void)state;
    run_diff_cases(diff_rule_cases, sizeof diff_rule_cases / sizeof diff_rule_cases[0]);
}

static void test_results_diff_without_callback(void **state)
{
    (void)state;
    const uint64_t old_keys[] = {7, 8, 9}, new_keys[] = {9, 7, 8};
    cf_changeset cs;
    assert_int_equal(cf_changeset_diff(old_keys, 3, new_keys, 3, NULL, NULL, ORDERED, &cs), 0);
    assert_changeset(&cs, &(expected)CS(L(2), L(0), NONE, NONE, NONE), "no callback");
    cf_changeset_free(&cs);
    assert_int_equal(cf_changeset_diff(NULL, 0, NULL, 0, NULL, NULL, TABLE, &cs), 0);
    assert_true(cf_changeset_is_empty(&cs));
    cf_changeset_free(&cs);
}

/* ------------------------------------------------------------------------ */
/* Merge                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct merge_case {
    const char *id;
    list_op commits[3][MAX_OPS]; /* unused commits are {END} */
    expected want;
} merge_case;

/* Folds the commits' change sets, as a notifier delivering several commits
 * at once would. */
static void build_folded(const list_op (*commits)[MAX_OPS], size_t n, cf_changeset *out)
{
    cf_changeset_init(out);
    for (size_t i = 0; i < n; i++) {
        cf_changeset next;
        build(commits[i], &next);
        assert_int_equal(cf_changeset_merge(out, &next), 0);
        cf_changeset_free(&next);
    }
}

/* Folded commits on the ten-element list of the conformance fixture, and
 * realm-core collection_change_indices.cpp "merge()" facts restated as the
 * list operations that produce them. */
static const merge_case merge_cases[] = {
    {"insert, then modify: an insertion", {{INSERT(3), END}, {MODIFY(3), END}, {END}},
     CS(NONE, L(3), NONE, NONE, NONE)},
    {"insert, then erase: nothing", {{INSERT(3), END}, {ERASE(3), END}, {END}},
     {.nothing = true}},
    {"insert, then move: an insertion", {{INSERT(1), END}, {MOVE(1, 3), END}, {END}},
     CS(NONE, L(3), NONE, NONE, NONE)},
    {"modify, then modify elsewhere", {{MODIFY(2), END}, {MODIFY(1), MODIFY(3), END}, {END}},
     CS(NONE, NONE, L(1, 2, 3), L(1, 2, 3), NONE)},
    {"deletions shift deletions", {{ERASE(5), END}, {ERASE(5), END}, {END}},
     CS(L(5, 6), NONE, NONE, NONE, NONE)},
    {"deletions before deletions", {{ERASE(5), END}, {ERASE(3), END}, {END}},
     CS(L(3, 5), NONE, NONE, NONE, NONE)},
    {"deletions shifted by insertions", {{INSERT(5), END}, {ERASE(6), END}, {END}},
     CS(L(5), L(5), NONE, NONE, NONE)},
    {"insertions shifted by insertions", {{INSERT(1), INSERT(5), END}, {INSERT(1), INSERT(4), END},
                                          {END}},
     CS(NONE, L(1, 2, 4, 7), NONE, NONE, NONE)},
    {"modifications shifted by insertions", {{MODIFY(1), MODIFY(5), END},
                                             {INSERT(1), INSERT(4), END}, {END}},
     CS(NONE, L(1, 4), L(1, 5), L(2, 7), NONE)},
    {"modification of a deleted row is dropped", {{MODIFY(2), MODIFY(3), END}, {ERASE(2), END},
                                                  {END}},
     CS(L(2), NONE, L(3), L(2), NONE)},
    {"move then delete its destination", {{MOVE(2, 3), END}, {ERASE(3), END}, {END}},
     CS(L(2), NONE, NONE, NONE, NONE)},
    {"move destination shifted by a deletion", {{MOVE(2, 5), END}, {ERASE(3), END}, {END}},
     CS(L(2, 4), L(4), NONE, NONE, L(2, 4))},
    {"chained moves", {{MOVE(1, 3), END}, {MOVE(3, 5), END}, {END}},
     CS(L(1), L(5), NONE, NONE, L(1, 5))},
    {"modify, then move: a move", {{MODIFY(1), END}, {MOVE(1, 3), END}, {END}},
     CS(L(1), L(3), NONE, NONE, L(1, 3))},
    {"modify, move, move back: a modification",
     {{MODIFY(1), END}, {MOVE(1, 2), END}, {MOVE(2, 1), END}}, CS(NONE, NONE, L(1), L(1), NONE)},
    {"move modified, then move back", {{MODIFY(1), MOVE(1, 4), END}, {MOVE(4, 1), END}, {END}},
     CS(NONE, NONE, L(1), L(1), NONE)},
    {"leapfrogging rows: nothing", {{MOVE(1, 0), END}, {MOVE(1, 0), END}, {END}},
     {.nothing = true}},
    {"clear, then append: not a clear", {{CLEAR(10), END}, {INSERT(0), END}, {END}},
     CS(L(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), L(0), NONE, NONE, NONE)},
    {"changes, then clear: a clear", {{INSERT(0), MODIFY(4), END}, {CLEAR(11), END}, {END}},
     CS(L(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), NONE, NONE, NONE, NONE, .cleared = true)},
    {"clear, then nothing: a clear", {{CLEAR(10), END}, {END}, {END}},
     CS(L(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), NONE, NONE, NONE, NONE, .cleared = true)},
    {"root deleted stays deleted", {{ROOT_DELETED(10), END}, {END}, {END}},
     CS(L(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), NONE, NONE, NONE, NONE, .root_deleted = true)},
    {"modify, then root deleted", {{MODIFY(3), END}, {ROOT_DELETED(10), END}, {END}},
     CS(L(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), NONE, NONE, NONE, NONE, .root_deleted = true)},
    {"three commits", {{INSERT(0), END}, {MOVE(5, 2), MODIFY(8), END}, {ERASE(0), SWAP(6, 7), END}},
     CS(L(4, 7), L(1, 6), NONE, NONE, L(4, 1, 7, 6))},
};

static void test_merge_folded_commits(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof merge_cases / sizeof merge_cases[0]; i++) {
        cf_changeset cs;
        build_folded(merge_cases[i].commits, 3, &cs);
        assert_changeset(&cs, &merge_cases[i].want, merge_cases[i].id);
        cf_changeset_free(&cs);
    }
}

static void test_merge_keeps_first_when_second_empty(void **state)
{
    (void)state;
    cf_changeset first, empty;
    build((const list_op[]){INSERT(2), MOVE(5, 7), END}, &first);
    cf_changeset_init(&empty);
    assert_int_equal(cf_changeset_merge(&first, &empty), 0);
    assert_changeset(&first, &(expected)CS(L(4), L(2, 7), NONE, NONE, L(4, 7)), "second empty");
    /* and an empty first takes a copy of the second */
    assert_int_equal(cf_changeset_merge(&empty, &first), 0);
    assert_changeset(&empty, &(expected)CS(L(4), L(2, 7), NONE, NONE, L(4, 7)), "first empty");
    cf_changeset_free(&first);
    cf_changeset_free(&empty);
}

/* ------------------------------------------------------------------------ */
/* Randomised checks against a simulated collection                          */
/* ------------------------------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(uint64_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return n ? rng_state % n : 0;
}

#define SIM_MAX 64

typedef struct sim_list {
    uint64_t id[SIM_MAX];
    size_t n;
} sim_list;

static void sim_insert(sim_list *l, size_t at, uint64_t id)
{
    memmove(&l->id[at + 1], &l->id[at], (l->n - at) * sizeof l->id[0]);
    l->id[at] = id;
    l->n++;
}

static uint64_t sim_erase(sim_list *l, size_t at)
{
    uint64_t id = l->id[at];
    memmove(&l->id[at], &l->id[at + 1], (l->n - at - 1) * sizeof l->id[0]);
    l->n--;
    return id;
}

static bool id_in(const uint64_t *ids, size_t n, uint64_t id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

/*
 * Checks `cs` against the collection before (`before`) and after (`after`),
 * with `changed` the ids of elements changed on the way: deleting and then
 * inserting as reported turns `before` into `after`; moves, if allowed, pair
 * the same element, and every old element re-inserted is a move; the
 * modifications are exactly the changed elements that stayed in place.
 */
static void check_against_simulation(const cf_changeset *cs, const sim_list *before,
                                     const sim_list *after, const uint64_t *changed,
                                     size_t changed_count, bool moves_expected)
{
    uint64_t del[SIM_MAX], ins[SIM_MAX], mod[SIM_MAX], mod_new[SIM_MAX];
    size_t nd = cf_index_set_size(&cs->deletions), ni = cf_index_set_size(&cs->insertions);
    size_t nm = cf_index_set_size(&cs->modifications);
    assert_true(nd <= before->n && ni <= after->n);
    cf_index_set_copy_to(&cs->deletions, del);
    cf_index_set_copy_to(&cs->insertions, ins);
    cf_index_set_copy_to(&cs->modifications, mod);
    assert_int_equal(cf_index_set_size(&cs->modifications_new), nm);
    cf_index_set_copy_to(&cs->modifications_new, mod_new);

    sim_list l = *before;
    for (size_t k = nd; k-- > 0;) {
        assert_true(del[k] < l.n);
        sim_erase(&l, del[k]);
    }
    for (size_t k = 0; k < ni; k++) {
        assert_true(ins[k] <= l.n);
        sim_insert(&l, ins[k], after->id[ins[k]]);
    }
    assert_int_equal(l.n, after->n);
    assert_memory_equal(l.id, after->id, l.n * sizeof l.id[0]);

    if (!moves_expected)
        assert_int_equal(cs->move_count, 0);
    for (size_t k = 0; k < cs->move_count; k++) {
        assert_true(cf_index_set_contains(&cs->deletions, cs->moves[k].from));
        assert_true(cf_index_set_contains(&cs->insertions, cs->moves[k].to));
        assert_int_equal(before->id[cs->moves[k].from], after->id[cs->moves[k].to]);
    }
    if (moves_expected) { /* an old element inserted again is a move */
        for (size_t k = 0; k < ni; k++) {
            bool old = id_in(before->id, before->n, after->id[ins[k]]), moved = false;
            for (size_t m = 0; m < cs->move_count; m++)
                moved = moved || cs->moves[m].to == ins[k];
            assert_int_equal(old, moved);
        }
    }

    /* modifications = changed elements neither deleted nor inserted */
    size_t expected_mods = 0;
    for (size_t j = 0; j < after->n; j++) {
        if (cf_index_set_contains(&cs->insertions, j) || !id_in(changed, changed_count, after->id[j]))
            continue;
        assert_true(expected_mods < nm);
        assert_int_equal(mod_new[expected_mods], j);
        assert_int_equal(before->id[mod[expected_mods]], after->id[j]);
        expected_mods++;
    }
    assert_int_equal(expected_mods, nm);
    assert_int_equal(cf_changeset_is_empty(cs),
                     nd == 0 && ni == 0 && nm == 0 && !cs->collection_was_cleared &&
                         !cs->collection_root_was_deleted);
}

/* A random valid operation on `l` (ids of new elements from *next_id),
 * applied to the simulation; changed ids are appended to `changed`. */
static list_op random_op(sim_list *l, uint64_t *next_id, uint64_t *changed, size_t *changed_count)
{
    for (;;) {
        uint64_t r = rnd(100);
        if (r < 30 && l->n < SIM_MAX - 1) {
            size_t at = rnd(l->n + 1);
            sim_insert(l, at, (*next_id)++);
            return (list_op)INSERT(at);
        }
        if (l->n == 0)
            continue;
        if (r < 50) {
            size_t at = rnd(l->n);
            sim_erase(l, at);
            return (list_op)ERASE(at);
        }
        if (r < 70) {
            size_t at = rnd(l->n);
            if (!id_in(changed, *changed_count, l->id[at]))
                changed[(*changed_count)++] = l->id[at];
            return (list_op)MODIFY(at);
        }
        if (r < 85) {
            size_t from = rnd(l->n), to = rnd(l->n);
            sim_insert(l, to, sim_erase(l, from));
            return (list_op)MOVE(from, to);
        }
        if (r < 98) {
            size_t i = rnd(l->n), j = rnd(l->n);
            uint64_t t = l->id[i];
            l->id[i] = l->id[j];
            l->id[j] = t;
            return (list_op)SWAP(i, j);
        }
        if (r < 99) { /* a clear forgets the changes: elements are gone */
            size_t n = l->n;
            l->n = 0;
            return (list_op)CLEAR(n);
        }
    }
}

static void test_random_list_transactions_and_merges(void **state)
{
    (void)state;
    uint64_t changed[4 * SIM_MAX];
    for (int round = 0; round < 3000; round++) {
        sim_list start = {.n = rnd(12)}, l;
        for (size_t i = 0; i < start.n; i++)
            start.id[i] = i;
        l = start;
        uint64_t next_id = 1000;
        size_t changed_count = 0, commits = 1 + rnd(3);
        list_op ops[3][MAX_OPS], all[3 * MAX_OPS];
        size_t total = 0;
        for (size_t c = 0; c < commits; c++) {
            size_t n = rnd(MAX_OPS - 1);
            for (size_t k = 0; k < n; k++)
                all[total++] = ops[c][k] = random_op(&l, &next_id, changed, &changed_count);
            ops[c][n] = (list_op)END;
        }
        all[total] = (list_op)END;

        cf_changeset single, folded;
        build(all, &single);
        check_against_simulation(&single, &start, &l, changed, changed_count, true);
        build_folded((const list_op(*)[MAX_OPS])ops, commits, &folded);
        check_against_simulation(&folded, &start, &l, changed, changed_count, true);
        cf_changeset_free(&single);
        cf_changeset_free(&folded);
    }
}

/* The best number of stationary rows, by brute force: longest increasing
 * subsequence of old positions in new order, then most unchanged rows. */
static void brute_force_best(const uint64_t *old_pos, const bool *changed, size_t n,
                             size_t *best_len, size_t *best_unchanged)
{
    size_t len[SIM_MAX], unch[SIM_MAX];
    *best_len = *best_unchanged = 0;
    for (size_t k = 0; k < n; k++) {
        len[k] = 1;
        unch[k] = changed[k] ? 0 : 1;
        for (size_t j = 0; j < k; j++) {
            if (old_pos[j] >= old_pos[k])
                continue;
            size_t l2 = len[j] + 1, u2 = unch[j] + (changed[k] ? 0 : 1);
            if (l2 > len[k] || (l2 == len[k] && u2 > unch[k])) {
                len[k] = l2;
                unch[k] = u2;
            }
        }
        if (len[k] > *best_len || (len[k] == *best_len && unch[k] > *best_unchanged)) {
            *best_len = len[k];
            *best_unchanged = unch[k];
        }
    }
}

static bool changed_in_bitmap(uint64_t key, void *ctx)
{
    return ((const bool *)ctx)[key];
}

static void test_random_results_diffs(void **state)
{
    (void)state;
    for (int round = 0; round < 3000; round++) {
        /* keys 0..39, each present at most once in old and in new */
        bool changed[40], in_old[40] = {0};
        sim_list before = {.n = 0}, after = {.n = 0};
        for (uint64_t k = 0; k < 40; k++) {
            changed[k] = rnd(4) == 0;
            if (rnd(3) != 0) {
                before.id[before.n++] = k;
                in_old[k] = true;
            }
            if (rnd(3) != 0)
                after.id[after.n++] = k;
        }
        bool ordered = rnd(2) == 0;
        if (ordered) { /* shuffle both orders */
            for (size_t i = before.n; i > 1; i--) {
                size_t j = rnd(i);
                uint64_t t = before.id[i - 1];
                before.id[i - 1] = before.id[j];
                before.id[j] = t;
            }
            for (size_t i = after.n; i > 1; i--) {
                size_t j = rnd(i);
                uint64_t t = after.id[i - 1];
                after.id[i - 1] = after.id[j];
                after.id[j] = t;
            }
        }
        cf_changeset cs;
        assert_int_equal(cf_changeset_diff(before.id, before.n, after.id, after.n,
                                           changed_in_bitmap, changed,
                                           ordered ? CF_DIFF_ORDERED : CF_DIFF_TABLE_ORDER, &cs),
                         0);
        uint64_t changed_ids[40];
        size_t changed_count = 0;
        for (uint64_t k = 0; k < 40; k++)
            if (changed[k])
                changed_ids[changed_count++] = k;
        check_against_simulation(&cs, &before, &after, changed_ids, changed_count, false);

        /* the rows left in place are an optimal choice */
        uint64_t old_pos[SIM_MAX];
        bool kept_changed[SIM_MAX];
        size_t kept = 0;
        for (size_t j = 0; j < after.n; j++) {
            if (!in_old[after.id[j]])
                continue;
            for (size_t i = 0; i < before.n; i++)
                if (before.id[i] == after.id[j])
                    old_pos[kept] = i;
            kept_changed[kept++] = changed[after.id[j]];
        }
        size_t best_len, best_unchanged;
        brute_force_best(old_pos, kept_changed, kept, &best_len, &best_unchanged);
        size_t stationary = after.n - cf_index_set_size(&cs.insertions);
        assert_int_equal(stationary, best_len);
        if (ordered) {
            size_t unchanged_stationary = stationary - cf_index_set_size(&cs.modifications_new);
            assert_int_equal(unchanged_stationary, best_unchanged);
        }
        cf_changeset_free(&cs);
    }
}

/* A large clear stays one range, and merging it is cheap. */
static void test_large_clear_is_one_range(void **state)
{
    (void)state;
    cf_changeset a, b;
    build((const list_op[]){ERASE(7), CLEAR(999999), END}, &a);
    assert_int_equal(a.deletions.count, 1);
    assert_int_equal(cf_index_set_size(&a.deletions), 1000000);
    build((const list_op[]){INSERT(0), INSERT(1), END}, &b);
    assert_int_equal(cf_changeset_merge(&a, &b), 0);
    assert_int_equal(a.deletions.count, 1);
    assert_set(&a.insertions, L(0, 1), "insertions", "large clear");
    assert_false(a.collection_was_cleared);
    cf_changeset_free(&a);
    cf_changeset_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_set_add_and_coalesce),
        cmocka_unit_test(test_list_builder_conformance),
        cmocka_unit_test(test_list_builder_rules),
        cmocka_unit_test(test_list_builder_reuse),
        cmocka_unit_test(test_results_diff_conformance),
        cmocka_unit_test(test_results_diff_rules),
        cmocka_unit_test(test_results_diff_without_callback),
        cmocka_unit_test(test_merge_folded_commits),
        cmocka_unit_test(test_merge_keeps_first_when_second_empty),
        cmocka_unit_test(test_random_list_transactions_and_merges),
        cmocka_unit_test(test_random_results_diffs),
        cmocka_unit_test(test_large_clear_is_one_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
