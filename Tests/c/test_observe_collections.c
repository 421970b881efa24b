/* test_observe_collections.c — observers of sets, maps and lists seen
 * through a query or a sort: exact change sets (positions in a set's order,
 * keys of a map, rows of a list view) for insertions, deletions,
 * modifications of values and of linked objects, clears and the deletion of
 * the owning object; list observers told the exact positions of elements
 * that went with their deleted objects; and the errors of bad input. Every
 * test runs on a plain, an encrypted and an in-memory database, refreshing
 * by hand so that each write is one change set. */
#include "test_support.h"
#include "observe_recorder.h"

#include <stdlib.h>
#include <string.h>

enum { OWNER_ID = 0, OWNER_DOGS, OWNER_PACK, OWNER_TAGS, OWNER_SCORES, OWNER_PETS, OWNER_NUMS };

static const coffer_property_schema owner_props[] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "dogs", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_LIST, .object_class = "Dog"},
    {.name = "pack", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_SET, .object_class = "Dog"},
    {.name = "tags", .type = COFFER_TYPE_STRING, .collection = COFFER_COLLECTION_SET},
    {.name = "scores", .type = COFFER_TYPE_INT, .collection = COFFER_COLLECTION_MAP},
    {.name = "pets", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_MAP, .flags = COFFER_PROPERTY_OPTIONAL,
     .object_class = "Dog"},
    {.name = "nums", .type = COFFER_TYPE_INT, .collection = COFFER_COLLECTION_LIST},
};
static const coffer_class_schema kennel[] = {
    {.name = "Dog", .properties = ts_dog_properties, .property_count = TS_DOG_COUNT},
    {.name = "Owner", .properties = owner_props, .property_count = 7},
};
enum { DOG = 0, OWNER = 1 };

static int setup_kennel(void **state) { return ts_setup_schema(state, kennel, 2); }

/* One index computed at run time (a position in a set's order). */
#define EXPECT_AT(got, ngot, index)                                                         \
    do {                                                                                    \
        uint64_t want_ = (index);                                                           \
        expect_indices((got), (ngot), &want_, 1);                                           \
    } while (0)

/* ------------------------------------------------------------------------ */
/* Writing and reading                                                       */
/* ------------------------------------------------------------------------ */

static coffer_object_key add_dog(coffer_db *db, int64_t id, int64_t age)
{
    coffer_field f[] = {ts_field(TS_DOG_ID, coffer_value_int(id)), ts_field(TS_DOG_NAME, ts_str("dog")),
                        ts_field(TS_DOG_AGE, coffer_value_int(age))};
    return ts_commit_object(db, DOG, f, 3);
}

static coffer_object_key add_owner(coffer_db *db)
{
    coffer_field f[] = {ts_field(OWNER_ID, coffer_value_int(1))};
    return ts_commit_object(db, OWNER, f, 1);
}

/* A write transaction with the object opened in it; ts_commit() ends it. */
static coffer_txn *write_to(coffer_db *db, coffer_class_id cls, coffer_object_key key, coffer_object **obj)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_get(txn, cls, key, obj));
    return txn;
}

/* A write transaction with the owner's set, map or list `prop` opened in it;
 * ts_commit() ends it. */
static coffer_txn *write_set(coffer_db *db, coffer_object_key owner, coffer_property_id prop, coffer_set **set)
{
    coffer_object *obj;
    coffer_txn *txn = write_to(db, OWNER, owner, &obj);
    assert_ok(coffer_object_get_set(obj, prop, set));
    return txn;
}

static coffer_txn *write_map(coffer_db *db, coffer_object_key owner, coffer_property_id prop, coffer_map **map)
{
    coffer_object *obj;
    coffer_txn *txn = write_to(db, OWNER, owner, &obj);
    assert_ok(coffer_object_get_map(obj, prop, map));
    return txn;
}

static coffer_txn *write_list(coffer_db *db, coffer_object_key owner, coffer_property_id prop, coffer_list **list)
{
    coffer_object *obj;
    coffer_txn *txn = write_to(db, OWNER, owner, &obj);
    assert_ok(coffer_object_get_list(obj, prop, list));
    return txn;
}

/* Sets value `prop` of object `key` in a transaction of its own. */
static void set_dog_value(coffer_db *db, coffer_object_key dog, coffer_property_id prop, coffer_value v)
{
    coffer_object *obj;
    coffer_txn *txn = write_to(db, DOG, dog, &obj);
    assert_ok(coffer_object_set_value(obj, prop, &v));
    ts_commit(txn);
}

static void set_age(coffer_db *db, coffer_object_key dog, int64_t age)
{
    set_dog_value(db, dog, TS_DOG_AGE, coffer_value_int(age));
}

static void set_name(coffer_db *db, coffer_object_key dog, const char *name)
{
    set_dog_value(db, dog, TS_DOG_NAME, ts_str(name));
}

static void delete_object(coffer_db *db, coffer_class_id cls, coffer_object_key key)
{
    coffer_object *obj;
    coffer_txn *txn = write_to(db, cls, key, &obj);
    assert_ok(coffer_object_delete(obj));
    ts_commit(txn);
}

/* Adds (add 1) or removes (add 0) string `tag` in the owner's tags. */
static void change_tag(coffer_db *db, coffer_object_key owner, const char *tag, int add)
{
    coffer_set *set;
    coffer_txn *txn = write_set(db, owner, OWNER_TAGS, &set);
    coffer_value v = ts_str(tag);
    int done;
    assert_ok(add ? coffer_set_insert(set, &v, &done) : coffer_set_remove(set, &v, &done));
    assert_true(done);
    ts_commit(txn);
}

/* The position of `want` in the owner's set `prop` now (a set's order is
 * the library's own: tests ask it rather than assume it). */
static uint64_t set_position(coffer_db *db, coffer_object_key owner, coffer_property_id prop, coffer_value want)
{
    coffer_txn *txn = ts_begin(db, COFFER_TXN_READ);
    coffer_object *obj;
    coffer_set *set;
    uint64_t n;
    assert_ok(coffer_object_get(txn, OWNER, owner, &obj));
    assert_ok(coffer_object_get_set(obj, prop, &set));
    assert_ok(coffer_set_count(set, &n));
    uint64_t at = UINT64_MAX;
    for (uint64_t i = 0; i < n; i++) {
        coffer_value v;
        assert_ok(coffer_set_get(set, i, &v));
        if (ts_value_equal(&v, &want))
            at = i;
    }
    coffer_txn_free(txn);
    assert_true(at != UINT64_MAX);
    return at;
}

static uint64_t tag_position(coffer_db *db, coffer_object_key owner, const char *tag)
{
    return set_position(db, owner, OWNER_TAGS, ts_str(tag));
}

static uint64_t pack_position(coffer_db *db, coffer_object_key owner, coffer_object_key key)
{
    return set_position(db, owner, OWNER_PACK, coffer_value_link(DOG, key));
}

static void put_score(coffer_db *db, coffer_object_key owner, const char *key, int64_t value)
{
    coffer_map *map;
    coffer_txn *txn = write_map(db, owner, OWNER_SCORES, &map);
    coffer_value v = coffer_value_int(value);
    assert_ok(coffer_map_set(map, key, SIZE_MAX, &v));
    ts_commit(txn);
}

/* Appends `count` links to the owner's dogs list. */
static void append_dogs(coffer_db *db, coffer_object_key owner, const coffer_object_key *dogs, size_t count)
{
    coffer_list *list;
    coffer_txn *txn = write_list(db, owner, OWNER_DOGS, &list);
    for (size_t i = 0; i < count; i++) {
        coffer_value link = coffer_value_link(DOG, dogs[i]);
        assert_ok(coffer_list_append(list, &link));
    }
    ts_commit(txn);
}

/* Adds `count` dogs with ids 0, 1, ... and the ages given. */
static void add_dogs(coffer_db *db, const int64_t *ages, size_t count, coffer_object_key *out)
{
    for (size_t i = 0; i < count; i++)
        out[i] = add_dog(db, (int64_t)i, ages[i]);
}

/* Adds four dogs (ids 0 to 3, the ages given) and appends them to the
 * owner's dogs list in the order `order` gives (indices; repeats allowed). */
static void list_four_dogs(coffer_db *db, coffer_object_key owner, const int64_t ages[4], const int *order, size_t n,
                           coffer_object_key dogs[4])
{
    coffer_object_key listed[8];
    assert_true(n <= 8);
    add_dogs(db, ages, 4, dogs);
    for (size_t i = 0; i < n; i++)
        listed[i] = dogs[order[i]];
    append_dogs(db, owner, listed, n);
}

/* Turns automatic refresh off, so that each write is one change set seen at
 * the next coffer_db_refresh(), and adds the owner the tests observe. */
static coffer_object_key manual_owner(coffer_db *db)
{
    assert_ok(coffer_db_set_auto_refresh(db, 0));
    return add_owner(db);
}

/* Refreshes by hand and checks that `r` has seen `calls` calls in all. */
static void refresh_expecting(coffer_db *db, recorder *r, int calls)
{
    assert_ok(coffer_db_refresh(db));
    assert_int_equal(calls_of(r), calls);
}

/* The key path of the observers that care only for the dogs' names. */
static const char *const name_path[] = {"name"};

/* ------------------------------------------------------------------------ */
/* Sets                                                                      */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_set_of_values)
{
    coffer_db *db = env->db;
    coffer_object_key owner = manual_owner(db);
    change_tag(db, owner, "brown", 1);
    change_tag(db, owner, "small", 1);
    recorder r;
    recorder_init(&r);
    assert_ok(coffer_set_observe(db, OWNER, owner, OWNER_TAGS, NULL, 0, on_collection, &r, &r.token));
    refresh_expecting(db, &r, 1);
    assert_true(r.calls[0].initial);

    change_tag(db, owner, "loud", 1);
    refresh_expecting(db, &r, 2);
    EXPECT_AT(r.calls[1].ins, r.calls[1].nins, tag_position(db, owner, "loud"));
    assert_int_equal(r.calls[1].ndel + r.calls[1].nmod + r.calls[1].nmoves, 0);

    uint64_t small = tag_position(db, owner, "small");
    change_tag(db, owner, "small", 0);
    refresh_expecting(db, &r, 3);
    EXPECT_AT(r.calls[2].del, r.calls[2].ndel, small);
    assert_int_equal(r.calls[2].nins + r.calls[2].nmod, 0);
    assert_false(r.calls[2].cleared);

    put_score(db, owner, "other", 1); /* another property of the owner: nothing */
    refresh_expecting(db, &r, 3);

    coffer_set *set;
    coffer_txn *txn = write_set(db, owner, OWNER_TAGS, &set);
    assert_ok(coffer_set_clear(set));
    ts_commit(txn);
    refresh_expecting(db, &r, 4);
    EXPECT(r.calls[3].del, r.calls[3].ndel, 0, 1);
    assert_true(r.calls[3].cleared);

    change_tag(db, owner, "new", 1);
    refresh_expecting(db, &r, 5);
    delete_object(db, OWNER, owner);
    refresh_expecting(db, &r, 6);
    assert_true(r.calls[5].root_deleted);
    EXPECT(r.calls[5].del, r.calls[5].ndel, 0);
    add_owner(db); /* nothing after the owner's deletion */
    refresh_expecting(db, &r, 6);
    recorder_stop(&r);
}

TS_ENV_TEST(test_set_of_objects)
{
    coffer_db *db = env->db;
    coffer_object_key owner = manual_owner(db);
    coffer_object_key dogs[3];
    add_dogs(db, (const int64_t[]){0, 1, 2}, 3, dogs);
    coffer_set *set;
    coffer_txn *txn = write_set(db, owner, OWNER_PACK, &set);
    for (int i = 0; i < 3; i++) {
        coffer_value link = coffer_value_link(DOG, dogs[i]);
        assert_ok(coffer_set_insert(set, &link, NULL));
    }
    ts_commit(txn);

    recorder all, by_name;
    recorder_init(&all);
    recorder_init(&by_name);
    assert_ok(coffer_set_observe(db, OWNER, owner, OWNER_PACK, NULL, 0, on_collection, &all, &all.token));
    assert_ok(coffer_set_observe(db, OWNER, owner, OWNER_PACK, name_path, 1, on_collection, &by_name, &by_name.token));
    refresh_expecting(db, &all, 1);
    assert_int_equal(calls_of(&by_name), 1);

    uint64_t at = pack_position(db, owner, dogs[1]);
    set_age(db, dogs[1], 40); /* a linked object changed: a modification, not for "name" */
    refresh_expecting(db, &all, 2);
    assert_int_equal(calls_of(&by_name), 1);
    EXPECT_AT(all.calls[1].mod, all.calls[1].nmod, at);
    EXPECT_AT(all.calls[1].mod_new, all.calls[1].nmod_new, at);
    assert_int_equal(all.calls[1].ndel + all.calls[1].nins, 0);

    set_name(db, dogs[1], "Rex");
    refresh_expecting(db, &all, 3);
    assert_int_equal(calls_of(&by_name), 2);
    EXPECT_AT(by_name.calls[1].mod, by_name.calls[1].nmod, at);

    add_dog(db, 9, 9); /* a dog outside the set: nothing */
    refresh_expecting(db, &all, 3);

    at = pack_position(db, owner, dogs[2]);
    delete_object(db, DOG, dogs[2]); /* the set loses it */
    refresh_expecting(db, &all, 4);
    EXPECT_AT(all.calls[3].del, all.calls[3].ndel, at);
    assert_int_equal(all.calls[3].nins + all.calls[3].nmod, 0);
    recorder_stop(&all);
    recorder_stop(&by_name);
}

/* ------------------------------------------------------------------------ */
/* Maps                                                                      */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_map_of_values)
{
    coffer_db *db = env->db;
    coffer_object_key owner = manual_owner(db);
    put_score(db, owner, "x", 1);
    put_score(db, owner, "y", 2);
    recorder r;
    recorder_init(&r);
    assert_ok(coffer_map_observe(db, OWNER, owner, OWNER_SCORES, NULL, 0, on_map, &r, &r.token));
    refresh_expecting(db, &r, 1);
    assert_true(r.calls[0].initial);

    /* One transaction: an insertion, a modification and a deletion. */
    coffer_map *map;
    coffer_txn *txn = write_map(db, owner, OWNER_SCORES, &map);
    coffer_value five = coffer_value_int(5), three = coffer_value_int(3);
    assert_ok(coffer_map_set(map, "z", SIZE_MAX, &three));
    assert_ok(coffer_map_set(map, "x", SIZE_MAX, &five));
    int removed;
    assert_ok(coffer_map_remove(map, "y", SIZE_MAX, &removed));
    assert_true(removed);
    ts_commit(txn);
    refresh_expecting(db, &r, 2);
    EXPECT_KEYS(&r.calls[1], COFFER_CHANGE_DELETIONS, "y");
    EXPECT_KEYS(&r.calls[1], COFFER_CHANGE_INSERTIONS, "z");
    EXPECT_KEYS(&r.calls[1], COFFER_CHANGE_MODIFICATIONS, "x");
    assert_false(r.calls[1].cleared);

    put_score(db, owner, "x", 5); /* the same value again: no change */
    refresh_expecting(db, &r, 2);

    txn = write_map(db, owner, OWNER_SCORES, &map);
    assert_ok(coffer_map_clear(map));
    ts_commit(txn);
    refresh_expecting(db, &r, 3);
    assert_int_equal(r.calls[2].nkeys[COFFER_CHANGE_DELETIONS], 2);
    EXPECT_NO_KEYS(&r.calls[2], COFFER_CHANGE_INSERTIONS);
    assert_true(r.calls[2].cleared);

    put_score(db, owner, "w", 7);
    refresh_expecting(db, &r, 4);
    EXPECT_KEYS(&r.calls[3], COFFER_CHANGE_INSERTIONS, "w");
    delete_object(db, OWNER, owner);
    refresh_expecting(db, &r, 5);
    assert_true(r.calls[4].root_deleted);
    EXPECT_KEYS(&r.calls[4], COFFER_CHANGE_DELETIONS, "w");
    recorder_stop(&r);
}

TS_ENV_TEST(test_map_of_objects)
{
    coffer_db *db = env->db;
    coffer_object_key owner = manual_owner(db);
    coffer_object_key rex = add_dog(db, 1, 3), fido = add_dog(db, 2, 4);
    coffer_map *map;
    coffer_txn *txn = write_map(db, owner, OWNER_PETS, &map);
    coffer_value a = coffer_value_link(DOG, rex), b = coffer_value_link(DOG, fido);
    assert_ok(coffer_map_set(map, "first", SIZE_MAX, &a));
    assert_ok(coffer_map_set(map, "second", SIZE_MAX, &b));
    ts_commit(txn);

    recorder r, by_name;
    recorder_init(&r);
    recorder_init(&by_name);
    assert_ok(coffer_map_observe(db, OWNER, owner, OWNER_PETS, NULL, 0, on_map, &r, &r.token));
    assert_ok(coffer_map_observe(db, OWNER, owner, OWNER_PETS, name_path, 1, on_map, &by_name, &by_name.token));
    refresh_expecting(db, &r, 1);

    set_age(db, fido, 5); /* the linked object changed */
    refresh_expecting(db, &r, 2);
    EXPECT_KEYS(&r.calls[1], COFFER_CHANGE_MODIFICATIONS, "second");
    EXPECT_NO_KEYS(&r.calls[1], COFFER_CHANGE_DELETIONS);
    assert_int_equal(calls_of(&by_name), 1); /* not on the path */

    delete_object(db, DOG, rex); /* the entry stays, its value becomes null */
    refresh_expecting(db, &r, 3);
    EXPECT_KEYS(&r.calls[2], COFFER_CHANGE_MODIFICATIONS, "first");
    EXPECT_NO_KEYS(&r.calls[2], COFFER_CHANGE_DELETIONS);
    assert_int_equal(calls_of(&by_name), 2);
    EXPECT_KEYS(&by_name.calls[1], COFFER_CHANGE_MODIFICATIONS, "first");
    recorder_stop(&r);
    recorder_stop(&by_name);
}

/* ------------------------------------------------------------------------ */
/* Lists seen through a query or a sort                                      */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_list_through_a_query)
{
    coffer_db *db = env->db;
    coffer_object_key owner = manual_owner(db);
    coffer_object_key dogs[4];
    list_four_dogs(db, owner, (const int64_t[]){10, 20, 30, 40}, (const int[]){0, 1, 2, 3, 1}, 5, dogs);

    coffer_query *q;
    assert_ok(coffer_query_compile(db, DOG, "age < 35 SORT(age DESC)", SIZE_MAX, NULL, 0, &q));
    recorder r;
    recorder_init(&r);
    assert_ok(coffer_list_query_observe(db, OWNER, owner, OWNER_DOGS, q, NULL, 0, on_collection, &r, &r.token));
    coffer_query_free(q);
    refresh_expecting(db, &r, 1); /* rows: 30, 20, 20 (twice in the list), 10 */

    set_age(db, dogs[0], 25); /* 30, 25, 20, 20: row 3 moves to 1 */
    refresh_expecting(db, &r, 2);
    EXPECT(r.calls[1].del, r.calls[1].ndel, 3);
    EXPECT(r.calls[1].ins, r.calls[1].nins, 1);
    assert_int_equal(r.calls[1].nmod + r.calls[1].nmoves, 0);

    set_age(db, dogs[2], 31); /* stays first: a modification */
    refresh_expecting(db, &r, 3);
    EXPECT(r.calls[2].mod, r.calls[2].nmod, 0);
    EXPECT(r.calls[2].mod_new, r.calls[2].nmod_new, 0);

    set_age(db, dogs[3], 5); /* joins the view at the end */
    refresh_expecting(db, &r, 4);
    EXPECT(r.calls[3].ins, r.calls[3].nins, 4);

    coffer_list *list;
    coffer_txn *txn = write_list(db, owner, OWNER_DOGS, &list);
    assert_ok(coffer_list_swap(list, 0, 2)); /* the sort hides the list's order */
    ts_commit(txn);
    refresh_expecting(db, &r, 4);

    delete_object(db, OWNER, owner);
    refresh_expecting(db, &r, 5);
    assert_true(r.calls[4].root_deleted);
    EXPECT(r.calls[4].del, r.calls[4].ndel, 0, 1, 2, 3, 4);
    recorder_stop(&r);
}

/* Writes `v` into the owner's nums list: appended (at SIZE_MAX) or set at
 * `index`, in a transaction of its own. */
static void write_num(coffer_db *db, coffer_object_key owner, size_t index, int64_t value)
{
    coffer_list *list;
    coffer_txn *txn = write_list(db, owner, OWNER_NUMS, &list);
    coffer_value v = coffer_value_int(value);
    assert_ok(index == SIZE_MAX ? coffer_list_append(list, &v) : coffer_list_set(list, index, &v));
    ts_commit(txn);
}

/* Appends `n` numbers to a list of numbers. */
static void append_nums(coffer_list *list, const int64_t *values, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        coffer_value v = coffer_value_int(values[i]);
        assert_ok(coffer_list_append(list, &v));
    }
}

TS_ENV_TEST(test_list_of_values_sorted)
{
    coffer_db *db = env->db;
    coffer_object_key owner = manual_owner(db);
    coffer_list *list;
    coffer_txn *txn = write_list(db, owner, OWNER_NUMS, &list);
    append_nums(list, (const int64_t[]){3, 1, 2, 1}, 4);
    ts_commit(txn);

    recorder sorted, distinct;
    recorder_init(&sorted);
    recorder_init(&distinct);
    assert_ok(coffer_list_values_observe(db, OWNER, owner, OWNER_NUMS, COFFER_SORT_DESCENDING, 0, on_collection,
                                         &sorted, &sorted.token));
    assert_ok(coffer_list_values_observe(db, OWNER, owner, OWNER_NUMS, COFFER_SORT_NONE, 1, on_collection, &distinct,
                                         &distinct.token));
    refresh_expecting(db, &sorted, 1); /* sorted: 3, 2, 1, 1; distinct: 3, 1, 2 */
    assert_int_equal(calls_of(&distinct), 1);

    write_num(db, owner, SIZE_MAX, 9); /* 3 1 2 1 9 */
    refresh_expecting(db, &sorted, 2);
    EXPECT(sorted.calls[1].ins, sorted.calls[1].nins, 0);
    assert_int_equal(calls_of(&distinct), 2);
    EXPECT(distinct.calls[1].ins, distinct.calls[1].nins, 3);

    write_num(db, owner, 0, 2); /* 2 1 2 1 9: the 3 became a 2 */
    refresh_expecting(db, &sorted, 3);
    /* sorted 9 3 2 1 1 -> 9 2 2 1 1: the row stays in place, modified */
    EXPECT(sorted.calls[2].mod, sorted.calls[2].nmod, 1);
    assert_int_equal(sorted.calls[2].ndel + sorted.calls[2].nins, 0);
    /* distinct 3 1 2 9 -> 2 1 9: row 0 is modified, the later 2 is gone */
    EXPECT(distinct.calls[2].del, distinct.calls[2].ndel, 2);
    EXPECT(distinct.calls[2].mod, distinct.calls[2].nmod, 0);
    recorder_stop(&sorted);
    recorder_stop(&distinct);
}

/* The view of a list of values, read: the positions its observer numbers
 * its rows by, in the view's order. */
TS_ENV_TEST(test_list_of_values_view_positions)
{
    coffer_db *db = env->db;
    coffer_object_key owner = manual_owner(db);
    coffer_list *list;
    coffer_txn *txn = write_list(db, owner, OWNER_NUMS, &list);
    append_nums(list, (const int64_t[]){3, 1, 2, 1}, 4);
    uint64_t positions[4];
    size_t count;
    assert_ok(coffer_list_values_view(list, COFFER_SORT_ASCENDING, 0, positions, 4, &count));
    EXPECT(positions, count, 1, 3, 2, 0); /* 1 1 2 3: equal values in list order */
    assert_ok(coffer_list_values_view(list, COFFER_SORT_DESCENDING, 0, positions, 4, &count));
    EXPECT(positions, count, 0, 2, 1, 3);
    assert_ok(coffer_list_values_view(list, COFFER_SORT_NONE, 1, positions, 4, &count));
    EXPECT(positions, count, 0, 1, 2); /* the first 1 only */
    assert_ok(coffer_list_values_view(list, COFFER_SORT_ASCENDING, 1, positions, 4, &count));
    EXPECT(positions, count, 1, 2, 0);

    assert_status(coffer_list_values_view(list, 7, 0, positions, 4, &count), COFFER_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(coffer_last_error(), "order 7"));
    assert_status(coffer_list_values_view(list, COFFER_SORT_ASCENDING, 0, positions, 3, &count),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_int_equal(count, 0);
    assert_status(coffer_list_values_view(list, COFFER_SORT_ASCENDING, 0, NULL, 4, &count), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_list_values_view(NULL, COFFER_SORT_ASCENDING, 0, positions, 4, &count),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_ok(coffer_list_clear(list));
    assert_ok(coffer_list_values_view(list, COFFER_SORT_ASCENDING, 1, NULL, 0, &count));
    assert_int_equal(count, 0);
    ts_commit(txn);
}

/* ------------------------------------------------------------------------ */
/* Elements that go with their deleted objects                               */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_deleted_objects_leave_lists_at_exact_positions)
{
    coffer_db *db = env->db;
    coffer_object_key owner = manual_owner(db);
    coffer_object_key d[4];
    list_four_dogs(db, owner, (const int64_t[]){0, 1, 2, 3}, (const int[]){0, 1, 2, 1, 3, 0}, 6, d);
    recorder r;
    recorder_init(&r);
    assert_ok(coffer_list_observe(db, OWNER, owner, OWNER_DOGS, NULL, 0, on_collection, &r, &r.token));
    refresh_expecting(db, &r, 1);

    delete_object(db, DOG, d[2]); /* one element */
    refresh_expecting(db, &r, 2);
    EXPECT(r.calls[1].del, r.calls[1].ndel, 2);
    assert_int_equal(r.calls[1].nins + r.calls[1].nmod + r.calls[1].nmoves, 0);

    /* Several at once, each held twice: list d0 d1 d1 d3 d0 */
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_object *obj;
    assert_ok(coffer_object_get(txn, DOG, d[1], &obj));
    assert_ok(coffer_object_delete(obj));
    assert_ok(coffer_object_get(txn, DOG, d[0], &obj));
    assert_ok(coffer_object_delete(obj));
    ts_commit(txn);
    refresh_expecting(db, &r, 3);
    EXPECT(r.calls[2].del, r.calls[2].ndel, 0, 1, 2, 4);
    assert_int_equal(r.calls[2].nins + r.calls[2].nmod + r.calls[2].nmoves, 0);

    /* A deletion and a change of the element left in one transaction. */
    coffer_object_key e = add_dog(db, 7, 7);
    append_dogs(db, owner, &e, 1); /* d3 e */
    refresh_expecting(db, &r, 4);
    txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_value age = coffer_value_int(70);
    assert_ok(coffer_object_get(txn, DOG, d[3], &obj));
    assert_ok(coffer_object_delete(obj));
    assert_ok(coffer_object_get(txn, DOG, e, &obj));
    assert_ok(coffer_object_set_value(obj, TS_DOG_AGE, &age));
    ts_commit(txn);
    refresh_expecting(db, &r, 5);
    EXPECT(r.calls[4].del, r.calls[4].ndel, 0);
    EXPECT(r.calls[4].mod, r.calls[4].nmod, 1);
    EXPECT(r.calls[4].mod_new, r.calls[4].nmod_new, 0);
    recorder_stop(&r);
}

/* ------------------------------------------------------------------------ */
/* Bad input                                                                 */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_bad_input)
{
    coffer_db *db = env->db;
    coffer_object_key owner = add_owner(db);
    recorder r;
    recorder_init(&r);
    coffer_token *token = (coffer_token *)1;
    assert_status(coffer_set_observe(db, OWNER, owner, OWNER_DOGS, NULL, 0, on_collection, &r, &token),
                  COFFER_ERR_TYPE);
    assert_error_contains("'Owner.dogs' is not a set");
    assert_null(token);
    assert_status(coffer_map_observe(db, OWNER, owner, OWNER_TAGS, NULL, 0, on_map, &r, &token), COFFER_ERR_TYPE);
    assert_error_contains("not a map");
    const char *path[] = {"name"};
    assert_status(coffer_map_observe(db, OWNER, owner, OWNER_SCORES, path, 1, on_map, &r, &token), COFFER_ERR_QUERY);
    assert_error_contains("holds values");
    const char *bad_path[] = {"nmae"};
    assert_status(coffer_set_observe(db, OWNER, owner, OWNER_PACK, bad_path, 1, on_collection, &r, &token),
                  COFFER_ERR_QUERY);
    assert_error_contains("nmae");
    assert_status(coffer_set_observe(db, OWNER, 4242, OWNER_TAGS, NULL, 0, on_collection, &r, &token),
                  COFFER_ERR_NOT_FOUND);
    assert_status(coffer_map_observe(db, OWNER, owner, OWNER_SCORES, NULL, 0, NULL, &r, &token),
                  COFFER_ERR_INVALID_ARGUMENT);

    coffer_query *owners;
    assert_ok(coffer_query_compile(db, OWNER, "TRUEPREDICATE", SIZE_MAX, NULL, 0, &owners));
    assert_status(coffer_list_query_observe(db, OWNER, owner, OWNER_DOGS, owners, NULL, 0, on_collection, &r, &token),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("holds 'Dog'");
    assert_status(coffer_list_query_observe(db, OWNER, owner, OWNER_DOGS, NULL, NULL, 0, on_collection, &r, &token),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_list_query_observe(db, OWNER, owner, OWNER_NUMS, owners, NULL, 0, on_collection, &r, &token),
                  COFFER_ERR_TYPE);
    assert_error_contains("not a list of objects");
    coffer_query_free(owners);
    assert_status(coffer_list_values_observe(db, OWNER, owner, OWNER_DOGS, COFFER_SORT_ASCENDING, 0, on_collection, &r,
                                             &token),
                  COFFER_ERR_TYPE);
    assert_error_contains("not a list of values");
    assert_status(coffer_list_values_observe(db, OWNER, owner, OWNER_NUMS, 7, 0, on_collection, &r, &token),
                  COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("order 7");

    coffer_map_changes *none = NULL;
    coffer_bytes key;
    assert_int_equal(coffer_map_changes_count(none, COFFER_CHANGE_INSERTIONS), 0);
    assert_status(coffer_map_changes_key(none, COFFER_CHANGE_INSERTIONS, 0, &key), COFFER_ERR_INVALID_ARGUMENT);
    assert_int_equal(coffer_map_changes_cleared(none), 0);
    assert_int_equal(coffer_map_changes_root_deleted(none), 0);
    recorder_destroy(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES_SETUP(test_set_of_values, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_set_of_objects, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_map_of_values, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_map_of_objects, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_list_through_a_query, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_list_of_values_sorted, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_list_of_values_view_positions, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_deleted_objects_leave_lists_at_exact_positions, setup_kennel),
        TS_TEST_ALL_MODES_SETUP(test_bad_input, setup_kennel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
