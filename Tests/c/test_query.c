/* test_query.c — the query engine through the public API: comparisons and
 * operators on every type, key paths through links, collections, maps,
 * mixed values and backlinks, SUBQUERY and aggregates, SORT/DISTINCT/LIMIT,
 * the planner (index answers equal a scan's), results (count, objects,
 * filter, rerun, aggregates, delete), counts in one call and every error path. Every test runs
 * on plain, encrypted and in-memory databases. */
#define _GNU_SOURCE
#include "test_support.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPT COFFER_PROPERTY_OPTIONAL
#define IDX COFFER_PROPERTY_INDEXED

/* ------------------------------------------------------------------------ */
/* Schema and data                                                           */
/* ------------------------------------------------------------------------ */

enum {
    P_ID = 0, P_NAME, P_AGE, P_SCORE, P_NICK, P_BORN, P_TAGS, P_RATINGS, P_DOG, P_FRIENDS, P_ATTRS, P_MIXED,
    P_BALANCE, P_LEVEL, P_LEVEL2, P_CODE, P_CODE2, P_FLAG, P_COUNT
};
enum { D_NAME = 0, D_AGE, D_OWNERS, D_COUNT };

static const coffer_property_schema person_props[P_COUNT] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "name", .type = COFFER_TYPE_STRING, .flags = IDX},
    {.name = "age", .type = COFFER_TYPE_INT},
    {.name = "score", .type = COFFER_TYPE_DOUBLE},
    {.name = "nick", .type = COFFER_TYPE_STRING, .flags = OPT},
    {.name = "born", .type = COFFER_TYPE_DATE, .flags = OPT | IDX},
    {.name = "tags", .type = COFFER_TYPE_STRING, .collection = COFFER_COLLECTION_LIST},
    {.name = "ratings", .type = COFFER_TYPE_INT, .collection = COFFER_COLLECTION_LIST},
    {.name = "dog", .type = COFFER_TYPE_LINK, .flags = OPT, .object_class = "Dog"},
    {.name = "friends", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_LIST, .object_class = "Person"},
    {.name = "attrs", .type = COFFER_TYPE_MIXED, .flags = OPT, .collection = COFFER_COLLECTION_MAP},
    {.name = "mixed", .type = COFFER_TYPE_MIXED, .flags = OPT},
    {.name = "balance", .type = COFFER_TYPE_DECIMAL128, .flags = OPT},
    {.name = "level", .type = COFFER_TYPE_INT, .flags = IDX},
    {.name = "level2", .type = COFFER_TYPE_INT},
    {.name = "code", .type = COFFER_TYPE_STRING, .flags = IDX},
    {.name = "code2", .type = COFFER_TYPE_STRING},
    {.name = "flag", .type = COFFER_TYPE_BOOL, .flags = IDX},
};

static const coffer_property_schema dog_props[D_COUNT] = {
    {.name = "name", .type = COFFER_TYPE_STRING},
    {.name = "age", .type = COFFER_TYPE_INT},
    {.name = "owners", .type = COFFER_TYPE_LINKING_OBJECTS, .object_class = "Person", .link_origin_property = "dog"},
};

static const coffer_class_schema query_schema[] = {
    {.name = "Person", .properties = person_props, .property_count = P_COUNT},
    {.name = "Dog", .properties = dog_props, .property_count = D_COUNT},
};

static coffer_class_id PERSON, DOG;
static coffer_db *DB; /* env->db of the running test */

static int setup_query(void **state)
{
    if (ts_setup_schema(state, query_schema, 2) != 0)
        return -1;
    ts_env *env = *state;
    DB = env->db;
    if (coffer_db_find_class(env->db, "Person", &PERSON) != COFFER_OK ||
        coffer_db_find_class(env->db, "Dog", &DOG) != COFFER_OK)
        return -1;
    return 0;
}

#define QUERY_TEST(f) TS_TEST_ALL_MODES_SETUP(f, setup_query)

static coffer_value str(const char *s) { return coffer_value_string(s, SIZE_MAX); }

static coffer_object_key add_dog(coffer_txn *txn, const char *name, int64_t age)
{
    coffer_field f[] = {{D_NAME, str(name)}, {D_AGE, coffer_value_int(age)}};
    coffer_object *o;
    assert_ok(coffer_object_create(txn, DOG, f, 2, COFFER_UPDATE_ERROR, &o));
    coffer_object_key k = coffer_object_key_of(o);
    coffer_object_release(o);
    return k;
}

/* Five people: ids 1..5.
 *   1 Ann   30 score 1.5  nick "Annie" born 1000 tags [red, blue]   ratings [5, 3]  dog Rex(3)
 *   2 bob   25 score 2.5  nick null    born null tags [blue]        ratings [1]     dog Fido(7)  friends [1]
 *   3 Cleo  35 score -1   nick "cc"    born 3000 tags []            ratings []      dog null     friends [1, 2]
 *   4 Éva   25 score 0    nick "Evi"   born 2000 tags [Green]       ratings [4, 4]  dog Rex(3)   attrs {a: 1, b: "x"}
 *   5 dan   40 score 10   nick null    born null tags [red]         ratings [2]     dog null     any [1, {k: 2}] */
static void fill(ts_env *env)
{
    coffer_txn *txn;
    assert_ok(coffer_txn_begin(env->db, COFFER_TXN_WRITE, &txn));
    coffer_object_key rex = add_dog(txn, "Rex", 3), fido = add_dog(txn, "Fido", 7);
    static const char *names[] = {"Ann", "bob", "Cleo", "\xc3\x89va", "dan"};
    static const int64_t ages[] = {30, 25, 35, 25, 40};
    static const double scores[] = {1.5, 2.5, -1, 0, 10};
    static const char *nicks[] = {"Annie", NULL, "cc", "Evi", NULL};
    static const int64_t borns[] = {1000, 0, 3000, 2000, 0};
    for (int i = 0; i < 5; i++) {
        coffer_value tags[2], ratings[2];
        size_t nt = 0, nr = 0;
        switch (i) {
        case 0: tags[0] = str("red"); tags[1] = str("blue"); nt = 2; ratings[0] = coffer_value_int(5); ratings[1] = coffer_value_int(3); nr = 2; break;
        case 1: tags[0] = str("blue"); nt = 1; ratings[0] = coffer_value_int(1); nr = 1; break;
        case 2: break;
        case 3: tags[0] = str("Green"); nt = 1; ratings[0] = ratings[1] = coffer_value_int(4); nr = 2; break;
        case 4: tags[0] = str("red"); nt = 1; ratings[0] = coffer_value_int(2); nr = 1; break;
        }
        coffer_value dog = i == 0 || i == 3 ? coffer_value_link(DOG, rex) : i == 1 ? coffer_value_link(DOG, fido)
                                                                                 : coffer_value_null();
        coffer_value friends[2];
        size_t nf = 0;
        if (i == 1 || i == 2) {
            coffer_value pk = coffer_value_int(1);
            coffer_object *f;
            assert_ok(coffer_object_find(txn, PERSON, &pk, &f));
            friends[nf++] = coffer_value_link(PERSON, coffer_object_key_of(f));
            coffer_object_release(f);
        }
        if (i == 2) {
            coffer_value pk = coffer_value_int(2);
            coffer_object *f;
            assert_ok(coffer_object_find(txn, PERSON, &pk, &f));
            friends[nf++] = coffer_value_link(PERSON, coffer_object_key_of(f));
            coffer_object_release(f);
        }
        coffer_map_entry attrs[2] = {{{"a", 1}, coffer_value_int(1)}, {{"b", 1}, str("x")}};
        coffer_map_entry inner[1] = {{{"k", 1}, coffer_value_int(2)}};
        coffer_value any_items[2] = {coffer_value_int(1), coffer_value_map(inner, 1)};
        coffer_decimal128 bal;
        assert_ok(coffer_decimal128_from_string(i == 2 ? "-2.50" : "12.5", &bal));
        coffer_field f[] = {
            {P_ID, coffer_value_int(i + 1)},
            {P_NAME, str(names[i])},
            {P_AGE, coffer_value_int(ages[i])},
            {P_SCORE, coffer_value_double(scores[i])},
            {P_NICK, nicks[i] ? str(nicks[i]) : coffer_value_null()},
            {P_BORN, borns[i] ? coffer_value_date(borns[i], 0) : coffer_value_null()},
            {P_TAGS, coffer_value_list(tags, nt)},
            {P_RATINGS, coffer_value_list(ratings, nr)},
            {P_DOG, dog},
            {P_FRIENDS, coffer_value_list(friends, nf)},
            {P_ATTRS, coffer_value_map(attrs, i == 3 ? 2 : 0)},
            {P_MIXED, i == 4 ? coffer_value_list(any_items, 2) : i == 0 ? str("text") : coffer_value_int(i)},
            {P_BALANCE, coffer_value_decimal128(bal.w[0], bal.w[1])},
            {P_LEVEL, coffer_value_int(i % 3)},
            {P_LEVEL2, coffer_value_int(i % 3)},
            {P_CODE, str(i % 2 ? "ab" : "abc")},
            {P_CODE2, str(i % 2 ? "ab" : "abc")},
            {P_FLAG, coffer_value_bool(i % 2)},
        };
        assert_ok(coffer_object_create(txn, PERSON, f, P_COUNT, COFFER_UPDATE_ERROR, NULL));
    }
    assert_ok(coffer_txn_commit(txn));
    coffer_txn_free(txn);
}

/* The ids (primary keys; a Dog's name) of what `q` matches in `txn`, in
 * result order, as text: "1,3,5". */
static const char *ids_of(coffer_txn *txn, coffer_query *q)
{
    static char buf[512];
    coffer_class_id cls = coffer_query_class(q);
    coffer_results *r;
    assert_ok(coffer_query_run(txn, q, &r));
    uint64_t n;
    assert_ok(coffer_results_count(r, &n));
    buf[0] = 0;
    for (uint64_t i = 0; i < n; i++) {
        coffer_object *o;
        coffer_value v;
        assert_ok(coffer_results_get(r, i, &o));
        assert_ok(coffer_object_get_value(o, cls == PERSON ? P_ID : D_NAME, &v));
        size_t len = strlen(buf);
        if (v.type == COFFER_TYPE_INT)
            snprintf(buf + len, sizeof buf - len, "%s%" PRId64, i ? "," : "", v.u.integer);
        else
            snprintf(buf + len, sizeof buf - len, "%s%.*s", i ? "," : "", (int)v.u.string.size, (const char *)v.u.string.data);
        coffer_object_release(o);
    }
    coffer_results_free(r);
    return buf;
}

/* ids_of() the query `text` compiled with `args`. Fails the test if
 * compiling or running fails. */
static const char *ids_args(coffer_txn *txn, coffer_class_id cls, const char *text, const coffer_value *args,
                            size_t nargs)
{
    coffer_query *q;
    ts_check_status(coffer_query_compile(DB, cls, text, SIZE_MAX, args, nargs, &q), COFFER_OK, text, __FILE__,
                    __LINE__);
    const char *ids = ids_of(txn, q);
    coffer_query_free(q);
    return ids;
}

static const char *ids(coffer_txn *txn, const char *text) { return ids_args(txn, PERSON, text, NULL, 0); }

/* Sorted by id regardless of result order, for unsorted queries. */
static const char *id_set(coffer_txn *txn, const char *text)
{
    static char out[512];
    const char *list = ids(txn, text);
    int seen[64] = {0};
    for (const char *p = list; *p;) {
        int v = atoi(p);
        if (v >= 0 && v < 64)
            seen[v] = 1;
        p = strchr(p, ',');
        if (!p)
            break;
        p++;
    }
    out[0] = 0;
    for (int i = 0; i < 64; i++)
        if (seen[i]) {
            size_t len = strlen(out);
            snprintf(out + len, sizeof out - len, "%s%d", len ? "," : "", i);
        }
    return out;
}

static void expect_query_error(coffer_db *db, coffer_class_id cls, const char *text, const coffer_value *args,
                               size_t nargs, const char *needle)
{
    coffer_query *q = (coffer_query *)1;
    coffer_status st = coffer_query_compile(db, cls, text, SIZE_MAX, args, nargs, &q);
    if (st != COFFER_ERR_QUERY)
        fail_msg("query \"%s\": expected COFFER_ERR_QUERY, got %d (%s)", text, st, coffer_last_error());
    assert_null(q);
    if (!strstr(coffer_last_error(), needle))
        fail_msg("query \"%s\": message \"%s\" lacks \"%s\"", text, coffer_last_error(), needle);
}

static coffer_txn *read_txn(ts_env *env)
{
    coffer_txn *txn;
    assert_ok(coffer_txn_begin(env->db, COFFER_TXN_READ, &txn));
    return txn;
}

/* ------------------------------------------------------------------------ */
/* Comparisons and operators                                                 */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_comparisons)
{
    fill(env);
    coffer_txn *txn = read_txn(env);
    assert_string_equal(id_set(txn, "age == 25"), "2,4");
    assert_string_equal(id_set(txn, "age = 25"), "2,4");
    assert_string_equal(id_set(txn, "25 == age"), "2,4");
    assert_string_equal(id_set(txn, "age != 25"), "1,3,5");
    assert_string_equal(id_set(txn, "age <> 25"), "1,3,5");
    assert_string_equal(id_set(txn, "age > 30"), "3,5");
    assert_string_equal(id_set(txn, "30 < age"), "3,5");
    assert_string_equal(id_set(txn, "age >= 30"), "1,3,5");
    assert_string_equal(id_set(txn, "age => 30"), "1,3,5");
    assert_string_equal(id_set(txn, "age < 30"), "2,4");
    assert_string_equal(id_set(txn, "age =< 30"), "1,2,4");
    assert_string_equal(id_set(txn, "age BETWEEN {26, 35}"), "1,3");
    assert_string_equal(id_set(txn, "age IN {25, 40, 99}"), "2,4,5");
    assert_string_equal(id_set(txn, "score > 1"), "1,2,5");
    assert_string_equal(id_set(txn, "score == 0"), "4");
    assert_string_equal(id_set(txn, "score < 0x2"), "1,3,4");
    assert_string_equal(id_set(txn, "score >= -1.0 && score < 2"), "1,3,4");
    assert_string_equal(id_set(txn, "balance > 0"), "1,2,4,5");
    assert_string_equal(id_set(txn, "balance == -2.5"), "3");
    assert_string_equal(id_set(txn, "balance < 12.50"), "3");
    assert_string_equal(id_set(txn, "nick == nil"), "2,5");
    assert_string_equal(id_set(txn, "nick != null"), "1,3,4");
    assert_string_equal(id_set(txn, "born > T1500:0"), "3,4");
    assert_string_equal(id_set(txn, "born == 1970-01-01@00:16:40"), "1");
    assert_string_equal(id_set(txn, "born == null"), "2,5");
    assert_string_equal(id_set(txn, "flag == true"), "2,4");
    assert_string_equal(id_set(txn, "TRUEPREDICATE"), "1,2,3,4,5");
    assert_string_equal(id_set(txn, "FALSEPREDICATE"), "");
    assert_string_equal(id_set(txn, "NOT age == 25"), "1,3,5");
    assert_string_equal(id_set(txn, "!(age == 25 || age == 30)"), "3,5");
    assert_string_equal(id_set(txn, "age == 25 AND flag == true OR id == 5"), "2,4,5");
    assert_string_equal(id_set(txn, "age == 25 && (flag == false || id == 2)"), "2");
    coffer_txn_free(txn);
}

TS_ENV_TEST(test_strings)
{
    fill(env);
    coffer_txn *txn = read_txn(env);
    assert_string_equal(id_set(txn, "name == 'Ann'"), "1");
    assert_string_equal(id_set(txn, "name ==[c] 'ANN'"), "1");
    assert_string_equal(id_set(txn, "name BEGINSWITH 'A'"), "1");
    assert_string_equal(id_set(txn, "name BEGINSWITH[c] 'b'"), "2");
    assert_string_equal(id_set(txn, "name ENDSWITH 'n'"), "1,5");
    assert_string_equal(id_set(txn, "name CONTAINS 'o'"), "2,3");
    assert_string_equal(id_set(txn, "name CONTAINS[c] 'A'"), "1,4,5");
    assert_string_equal(id_set(txn, "name LIKE '?o*'"), "2");
    assert_string_equal(id_set(txn, "name LIKE[c] 'a*'"), "1");
    /* [d]: É matches E; [cd] ignores both. */
    assert_string_equal(id_set(txn, "name BEGINSWITH 'E'"), "");
    assert_string_equal(id_set(txn, "name BEGINSWITH[d] 'E'"), "4");
    assert_string_equal(id_set(txn, "name ==[cd] 'eva'"), "4");
    assert_string_equal(id_set(txn, "name IN[c] {'ANN', 'DAN'}"), "1,5");
    assert_string_equal(id_set(txn, "name.length == 3"), "1,2,4,5");
    assert_string_equal(id_set(txn, "name.length == 4"), "3");
    assert_string_equal(id_set(txn, "nick.length > 2"), "1,4");
    assert_string_equal(id_set(txn, "name > 'C'"), "2,3,4,5");
    /* Arguments. */
    coffer_value a[] = {str("an"), coffer_value_int(25)};
    assert_string_equal(ids_args(txn, PERSON, "name CONTAINS[c] $0 AND age != $1", a, 2), "1,5");
    coffer_txn_free(txn);
}

TS_ENV_TEST(test_paths)
{
    fill(env);
    coffer_txn *txn = read_txn(env);
    /* To-one links, null through a missing link. */
    assert_string_equal(id_set(txn, "dog.name == 'Rex'"), "1,4");
    assert_string_equal(id_set(txn, "dog.age > 5"), "2");
    assert_string_equal(id_set(txn, "dog.name == nil"), "3,5");
    assert_string_equal(id_set(txn, "dog == nil"), "3,5");
    /* Lists: implicit ANY, ALL, NONE, positions, @count/@size, aggregates. */
    assert_string_equal(id_set(txn, "tags == 'blue'"), "1,2");
    assert_string_equal(id_set(txn, "ANY tags ==[c] 'green'"), "4");
    assert_string_equal(id_set(txn, "ALL tags == 'red'"), "3,5");
    assert_string_equal(id_set(txn, "NONE tags == 'red'"), "2,3,4");
    assert_string_equal(id_set(txn, "tags[FIRST] == 'red'"), "1,5");
    assert_string_equal(id_set(txn, "tags[LAST] == 'blue'"), "1,2");
    assert_string_equal(id_set(txn, "tags[1] == 'blue'"), "1");
    assert_string_equal(id_set(txn, "tags.@count == 0"), "3");
    assert_string_equal(id_set(txn, "tags.@size >= 1"), "1,2,4,5");
    assert_string_equal(id_set(txn, "ratings.@sum == 8"), "1,4");
    assert_string_equal(id_set(txn, "ratings.@avg == 4"), "1,4");
    assert_string_equal(id_set(txn, "ratings.@min == 3"), "1");
    assert_string_equal(id_set(txn, "ratings.@max < 3"), "2,5");
    assert_string_equal(id_set(txn, "ratings.@sum == 0"), "3");
    assert_string_equal(id_set(txn, "ratings.@avg == nil"), "3");
    assert_string_equal(id_set(txn, "'red' IN tags"), "1,5");
    assert_string_equal(id_set(txn, "tags.length == 5"), "4");
    assert_string_equal(id_set(txn, "friends.name == 'Ann'"), "2,3");
    assert_string_equal(id_set(txn, "friends.@count == 2"), "3");
    assert_string_equal(id_set(txn, "friends.@max.age == 30"), "2,3");
    assert_string_equal(id_set(txn, "friends.@sum.age == 55"), "3");
    assert_string_equal(id_set(txn, "ALL friends.age > 26"), "1,2,4,5");
    assert_string_equal(id_set(txn, "SUBQUERY(friends, $f, $f.age < 30 AND $f.name BEGINSWITH 'b').@count == 1"), "3");
    assert_string_equal(id_set(txn, "SUBQUERY(ratings, $r, $r >= 4).@count == 2"), "4");
    /* Backlinks. */
    assert_string_equal(ids_args(txn, DOG, "owners.@count == 2", NULL, 0), "Rex");
    assert_string_equal(ids_args(txn, DOG, "ANY owners.name == 'bob'", NULL, 0), "Fido");
    assert_string_equal(ids_args(txn, DOG, "@links.Person.dog.age > 26", NULL, 0), "Rex");
    assert_string_equal(ids_args(txn, DOG, "@links.@count == 1", NULL, 0), "Fido");
    assert_string_equal(id_set(txn, "@links.Person.friends.@count == 2"), "1");
    /* Maps and mixed values. */
    assert_string_equal(id_set(txn, "attrs['a'] == 1"), "4");
    assert_string_equal(id_set(txn, "attrs['zzz'] == nil"), "1,2,3,4,5");
    assert_string_equal(id_set(txn, "attrs.@keys == 'b'"), "4");
    assert_string_equal(id_set(txn, "attrs.@values == 'x'"), "4");
    assert_string_equal(id_set(txn, "attrs == 'x'"), "4");
    assert_string_equal(id_set(txn, "attrs.@count == 2"), "4");
    assert_string_equal(id_set(txn, "mixed == 2"), "3");
    assert_string_equal(id_set(txn, "mixed > 1"), "3,4");
    assert_string_equal(id_set(txn, "mixed == 'text'"), "1");
    assert_string_equal(id_set(txn, "mixed.@type == 'string'"), "1");
    assert_string_equal(id_set(txn, "mixed.@type == 'numeric'"), "2,3,4");
    assert_string_equal(id_set(txn, "mixed.@type IN {'list', 'dictionary'}"), "5");
    assert_string_equal(id_set(txn, "mixed[0] == 1"), "5");
    assert_string_equal(id_set(txn, "mixed[1]['k'] == 2"), "5");
    assert_string_equal(id_set(txn, "mixed.@count == 2"), "5");
    /* Link arguments: an object handle or a link value. */
    coffer_value pk = coffer_value_int(1);
    coffer_object *ann;
    assert_ok(coffer_object_find(txn, PERSON, &pk, &ann));
    coffer_value by_obj = coffer_value_object(ann);
    assert_string_equal(ids_args(txn, PERSON, "friends == $0", &by_obj, 1), "2,3");
    coffer_value by_link = coffer_value_link(PERSON, coffer_object_key_of(ann));
    assert_string_equal(ids_args(txn, PERSON, "ANY friends == $0", &by_link, 1), "2,3");
    coffer_object_release(ann);
    coffer_value list_items[] = {coffer_value_int(30), coffer_value_int(40)};
    coffer_value list = coffer_value_list(list_items, 2);
    assert_string_equal(ids_args(txn, PERSON, "age IN $0", &list, 1), "1,5");
    coffer_txn_free(txn);
}

/* ------------------------------------------------------------------------ */
/* SORT, DISTINCT, LIMIT                                                     */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_sort_distinct_limit)
{
    fill(env);
    coffer_txn *txn = read_txn(env);
    assert_string_equal(ids(txn, "TRUEPREDICATE SORT(age ASC)"), "2,4,1,3,5");
    assert_string_equal(ids(txn, "TRUEPREDICATE SORT(age DESC)"), "5,3,1,2,4");
    assert_string_equal(ids(txn, "TRUEPREDICATE SORT(age ASC, id DESC)"), "4,2,1,3,5");
    assert_string_equal(ids(txn, "TRUEPREDICATE SORT(nick ASC)"), "2,5,1,4,3"); /* null first, bytes order */
    assert_string_equal(ids(txn, "TRUEPREDICATE SORT(dog.age DESC, id ASC)"), "2,1,4,3,5");
    assert_string_equal(ids(txn, "TRUEPREDICATE DISTINCT(age)"), "1,2,3,5");
    assert_string_equal(ids(txn, "TRUEPREDICATE SORT(id DESC) DISTINCT(age)"), "5,4,3,1");
    assert_string_equal(ids(txn, "TRUEPREDICATE SORT(age DESC) LIMIT(2)"), "5,3");
    assert_string_equal(ids(txn, "TRUEPREDICATE LIMIT(2) SORT(age DESC)"), "1,2");
    assert_string_equal(ids(txn, "age > 20 LIMIT(0)"), "");
    assert_string_equal(ids(txn, "age > 99 SORT(age ASC) DISTINCT(name)"), "");
    assert_string_equal(ids(txn, "age > 20 LIMIT(0) SORT(name DESC)"), "");
    assert_string_equal(ids(txn, "TRUEPREDICATE DISTINCT(level, flag) SORT(id DESC)"), "5,4,3,2,1");
    assert_string_equal(ids(txn, "TRUEPREDICATE DISTINCT(flag)"), "1,2");
    coffer_txn_free(txn);
}

/* ------------------------------------------------------------------------ */
/* The planner: an index gives the answers a scan gives                      */
/* ------------------------------------------------------------------------ */

static void add_people(ts_env *env, int n, uint64_t seed)
{
    coffer_txn *txn;
    ts_seed(seed);
    assert_ok(coffer_txn_begin(env->db, COFFER_TXN_WRITE, &txn));
    for (int i = 0; i < n; i++) {
        char code[4] = {(char)('a' + ts_rand_below(3)), (char)('a' + ts_rand_below(3)), (char)('a' + ts_rand_below(3)), 0};
        code[ts_rand_below(4) == 0 ? 1 : 3] = 0;
        int64_t level = (int64_t)ts_rand_below(40) - 10;
        int64_t born = (int64_t)ts_rand_below(50) - 25;
        coffer_field f[] = {
            {P_ID, coffer_value_int(100 + i)},
            {P_NAME, str(code)},
            {P_LEVEL, coffer_value_int(level)},
            {P_LEVEL2, coffer_value_int(level)},
            {P_CODE, str(code)},
            {P_CODE2, str(code)},
            {P_FLAG, coffer_value_bool(ts_rand_below(2))},
            {P_BORN, born % 5 == 0 ? coffer_value_null() : coffer_value_date(born, (int32_t)(born < 0 ? -5 : 5))},
            {P_AGE, coffer_value_int((int64_t)ts_rand_below(10))},
        };
        assert_ok(coffer_object_create(txn, PERSON, f, 9, COFFER_UPDATE_ERROR, NULL));
    }
    assert_ok(coffer_txn_commit(txn));
    coffer_txn_free(txn);
}

static void keys_of(coffer_txn *txn, const char *text, uint64_t **out, uint64_t *n)
{
    coffer_query *q;
    ts_check_status(coffer_query_compile(DB, PERSON, text, SIZE_MAX, NULL, 0, &q), COFFER_OK, text, __FILE__,
                    __LINE__);
    coffer_results *r;
    assert_ok(coffer_query_run(txn, q, &r));
    assert_ok(coffer_results_count(r, n));
    *out = malloc((*n ? *n : 1) * sizeof **out);
    assert_ok(coffer_results_copy_keys(r, 0, *n, *out));
    coffer_results_free(r);
    coffer_query_free(q);
}

/* Replaces "level" by "level2" and "code" by "code2" (unindexed twins). */
static void unindexed_twin(const char *text, char *out, size_t size)
{
    size_t w = 0;
    for (const char *p = text; *p && w + 2 < size;) {
        if (strncmp(p, "level", 5) == 0 || strncmp(p, "code", 4) == 0) {
            size_t n = p[0] == 'l' ? 5 : 4;
            memcpy(out + w, p, n);
            w += n;
            out[w++] = '2';
            p += n;
        } else {
            out[w++] = *p++;
        }
    }
    out[w] = 0;
}

TS_ENV_TEST(test_planner_matches_scan)
{
    add_people(env, 1500, 7);
    static const char *const ops[] = {"==", "!=", "<", "<=", ">", ">="};
    static const char *const prefixes[] = {"", "a", "ab", "abc", "abcd", "c", "ba"};
    coffer_txn *txn = read_txn(env);
    ts_seed(11);
    for (int round = 0; round < 300; round++) {
        char text[256], twin[300];
        int64_t a = (int64_t)ts_rand_below(50) - 15, b = (int64_t)ts_rand_below(50) - 15;
        switch (round % 8) {
        case 0: snprintf(text, sizeof text, "level %s %" PRId64, ops[ts_rand_below(6)], a); break;
        case 1: snprintf(text, sizeof text, "level IN {%" PRId64 ", %" PRId64 ", 99}", a, b); break;
        case 2: snprintf(text, sizeof text, "level BETWEEN {%" PRId64 ", %" PRId64 "}", a, b); break;
        case 3: snprintf(text, sizeof text, "code BEGINSWITH '%s'", prefixes[ts_rand_below(7)]); break;
        case 4: snprintf(text, sizeof text, "code == '%s' AND level > %" PRId64, prefixes[ts_rand_below(7)], a); break;
        case 5: snprintf(text, sizeof text, "level == %" PRId64 " AND code IN {'ab', 'abc', 'b'} AND age < 5", a); break;
        case 6: snprintf(text, sizeof text, "flag == %s AND level %s %" PRId64, round % 3 ? "true" : "false", ops[ts_rand_below(6)], b); break;
        default: snprintf(text, sizeof text, "born %s T%" PRId64 ":0 OR level == %" PRId64, ops[ts_rand_below(6)], a, b); break;
        }
        unindexed_twin(text, twin, sizeof twin);
        uint64_t *k1, *k2, n1, n2;
        keys_of(txn, text, &k1, &n1);
        keys_of(txn, twin, &k2, &n2);
        if (n1 != n2 || (n1 && memcmp(k1, k2, n1 * sizeof *k1) != 0))
            fail_msg("\"%s\" gave %" PRIu64 " objects, \"%s\" gave %" PRIu64, text, n1, twin, n2);
        free(k1);
        free(k2);
    }
    /* Dates through the index keep their order with negative times. */
    uint64_t *k1, *k2, n1, n2;
    keys_of(txn, "born > T-3:-5", &k1, &n1);
    keys_of(txn, "born > T-3:-5 AND level2 > -100", &k2, &n2);
    assert_int_equal(n1, n2);
    assert_true(n1 > 0);
    free(k1);
    free(k2);
    coffer_txn_free(txn);
}

/* ------------------------------------------------------------------------ */
/* Results                                                                   */
/* ------------------------------------------------------------------------ */

static coffer_query *compile(coffer_db *db, const char *text, const coffer_value *args, size_t n)
{
    coffer_query *q;
    ts_check_status(coffer_query_compile(db, PERSON, text, SIZE_MAX, args, n, &q), COFFER_OK, text, __FILE__, __LINE__);
    return q;
}

/* Queries an index answers alone: counted from the index in a read
 * transaction, their keys computed only when asked for; the same answers as
 * computing them at once, in either order of asking. */
TS_ENV_TEST(test_index_only_answers)
{
    add_people(env, 600, 3);
    static const char *const texts[] = {"level == 4", "level BETWEEN {2, 9}", "level > 40", "code BEGINSWITH 'ab'",
                                        "flag == true", "level IN {4, 4}", "level IN {4, 5, 4}", "code == 'zz'"};
    coffer_txn *txn = read_txn(env);
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        char twin[128];
        unindexed_twin(texts[i], twin, sizeof twin);
        uint64_t *want, nwant, n;
        keys_of(txn, twin, &want, &nwant);
        coffer_query *q = compile(env->db, texts[i], NULL, 0);
        coffer_results *counted, *listed;
        assert_ok(coffer_query_run(txn, q, &counted));
        assert_ok(coffer_query_run(txn, q, &listed));
        assert_ok(coffer_results_count(counted, &n));
        if (n != nwant)
            fail_msg("\"%s\" counted %" PRIu64 ", \"%s\" found %" PRIu64, texts[i], n, twin, nwant);
        uint64_t *got = malloc((nwant ? nwant : 1) * sizeof *got);
        assert_ok(coffer_results_copy_keys(listed, 0, nwant, got)); /* keys first, */
        assert_ok(coffer_results_count(listed, &n));                /* then the count */
        assert_int_equal(n, nwant);
        assert_true(nwant == 0 || memcmp(got, want, nwant * sizeof *got) == 0);
        assert_ok(coffer_results_copy_keys(counted, 0, nwant, got));
        assert_true(nwant == 0 || memcmp(got, want, nwant * sizeof *got) == 0);
        free(got);
        free(want);
        coffer_results_free(counted);
        coffer_results_free(listed);
        coffer_query_free(q);
    }
    /* Results never asked for are detached with their transaction. */
    coffer_query *q = compile(env->db, "level == 4", NULL, 0);
    coffer_results *r;
    assert_ok(coffer_query_run(txn, q, &r));
    coffer_txn_free(txn);
    uint64_t n;
    coffer_object_key key;
    assert_status(coffer_results_count(r, &n), COFFER_ERR_MISUSE);
    assert_status(coffer_results_key(r, 0, &key), COFFER_ERR_MISUSE);
    coffer_results_free(r);
    /* In a write transaction, results are the state at the run, whatever is
     * written after it. */
    coffer_txn *w;
    assert_ok(coffer_txn_begin(env->db, COFFER_TXN_WRITE, &w));
    assert_ok(coffer_query_run(w, q, &r));
    coffer_results *before;
    assert_ok(coffer_query_run(w, q, &before));
    uint64_t was;
    assert_ok(coffer_results_count(before, &was));
    coffer_field f[] = {{P_ID, coffer_value_int(100000)}, {P_NAME, str("new")}, {P_LEVEL, coffer_value_int(4)}};
    coffer_object *o;
    assert_ok(coffer_object_create(w, PERSON, f, 3, COFFER_UPDATE_ERROR, &o));
    coffer_object_release(o);
    assert_ok(coffer_results_count(r, &n));
    assert_int_equal(n, was);
    coffer_results_free(r);
    coffer_results_free(before);
    assert_ok(coffer_query_run(w, q, &r));
    assert_ok(coffer_results_count(r, &n));
    assert_int_equal(n, was + 1);
    coffer_results_free(r);
    assert_ok(coffer_txn_abort(w));
    coffer_txn_free(w);
    coffer_query_free(q);
}

TS_ENV_TEST(test_results_api)
{
    fill(env);
    coffer_txn *txn = read_txn(env);
    coffer_query *q = compile(env->db, "age < 35 SORT(age DESC, id ASC)", NULL, 0);
    assert_string_equal(coffer_query_description(q), "age < 35 SORT(age DESC, id ASC)");
    assert_int_equal(coffer_query_class(q), PERSON);
    coffer_results *r, *f, *all;
    assert_ok(coffer_query_run(txn, q, &r));
    uint64_t n;
    assert_ok(coffer_results_count(r, &n));
    assert_int_equal(n, 3);
    coffer_object_key keys[3], key;
    assert_ok(coffer_results_copy_keys(r, 0, 3, keys));
    assert_ok(coffer_results_key(r, 2, &key));
    assert_int_equal(key, keys[2]);
    assert_status(coffer_results_key(r, 3, &key), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("index 3 is out of range");
    assert_status(coffer_results_copy_keys(r, 2, 2, keys), COFFER_ERR_INVALID_ARGUMENT);
    coffer_object *obj;
    assert_status(coffer_results_get(r, 9, &obj), COFFER_ERR_INVALID_ARGUMENT);
    assert_null(obj);
    /* Filtering keeps the order and applies its own SORT. */
    coffer_query *q2 = compile(env->db, "flag == true", NULL, 0);
    assert_ok(coffer_results_filter(r, q2, &f));
    assert_ok(coffer_results_count(f, &n));
    assert_int_equal(n, 2);
    /* Aggregates. */
    coffer_value v;
    assert_ok(coffer_results_aggregate(r, P_AGE, COFFER_AGGREGATE_SUM, &v));
    assert_int_equal(v.type, COFFER_TYPE_INT);
    assert_int_equal(v.u.integer, 80);
    assert_ok(coffer_results_aggregate(r, P_AGE, COFFER_AGGREGATE_AVG, &v));
    assert_int_equal(v.type, COFFER_TYPE_DOUBLE);
    assert_true(v.u.double_value > 26.66 && v.u.double_value < 26.67);
    assert_ok(coffer_results_aggregate(r, P_SCORE, COFFER_AGGREGATE_MIN, &v));
    assert_true(v.type == COFFER_TYPE_DOUBLE && v.u.double_value == 0);
    assert_ok(coffer_results_aggregate(r, P_BORN, COFFER_AGGREGATE_MAX, &v));
    assert_true(v.type == COFFER_TYPE_DATE && v.u.date.seconds == 2000);
    assert_ok(coffer_results_aggregate(r, P_BALANCE, COFFER_AGGREGATE_SUM, &v));
    assert_int_equal(v.type, COFFER_TYPE_DECIMAL128);
    assert_status(coffer_results_aggregate(r, P_NAME, COFFER_AGGREGATE_SUM, &v), COFFER_ERR_TYPE);
    assert_error_contains("Person.name");
    assert_status(coffer_results_aggregate(r, P_BORN, COFFER_AGGREGATE_SUM, &v), COFFER_ERR_TYPE);
    assert_status(coffer_results_aggregate(r, P_TAGS, COFFER_AGGREGATE_MAX, &v), COFFER_ERR_TYPE);
    assert_status(coffer_results_aggregate(r, 999, COFFER_AGGREGATE_MAX, &v), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_results_aggregate(r, P_AGE, 7, &v), COFFER_ERR_INVALID_ARGUMENT);
    /* Empty results: sum 0, others null. */
    coffer_query *none = compile(env->db, "FALSEPREDICATE", NULL, 0);
    coffer_results *empty;
    assert_ok(coffer_query_run(txn, none, &empty));
    assert_ok(coffer_results_aggregate(empty, P_AGE, COFFER_AGGREGATE_SUM, &v));
    assert_true(v.type == COFFER_TYPE_INT && v.u.integer == 0);
    assert_ok(coffer_results_aggregate(empty, P_SCORE, COFFER_AGGREGATE_SUM, &v));
    assert_true(v.type == COFFER_TYPE_DOUBLE && v.u.double_value == 0);
    assert_ok(coffer_results_aggregate(empty, P_AGE, COFFER_AGGREGATE_MAX, &v));
    assert_int_equal(v.type, COFFER_TYPE_NULL);
    coffer_results *empty_f;
    assert_ok(coffer_results_filter(empty, q2, &empty_f));
    assert_ok(coffer_results_count(empty_f, &n));
    assert_int_equal(n, 0);
    /* All objects, and objects by key. */
    assert_ok(coffer_results_all(txn, PERSON, &all));
    assert_ok(coffer_results_count(all, &n));
    assert_int_equal(n, 5);
    coffer_results *some;
    coffer_object_key picked[2] = {keys[2], keys[0]};
    assert_ok(coffer_results_from_keys(txn, PERSON, picked, 2, &some));
    coffer_results *some_f;
    assert_ok(coffer_results_filter(some, q2, &some_f));
    assert_ok(coffer_results_count(some_f, &n));
    assert_int_equal(n, 1); /* of ids 4 and 1, only 4 has the flag */
    assert_ok(coffer_results_key(some_f, 0, &key));
    assert_int_equal(key, keys[2]);
    /* A query of another class cannot filter these. */
    coffer_query *dq;
    assert_ok(coffer_query_compile(env->db, DOG, "age > 1", SIZE_MAX, NULL, 0, &dq));
    coffer_results *wrong;
    assert_status(coffer_results_filter(r, dq, &wrong), COFFER_ERR_INVALID_ARGUMENT);
    assert_null(wrong);
    assert_error_contains("class 'Dog'");
    /* Ending the transaction detaches every result. */
    coffer_txn_free(txn);
    assert_status(coffer_results_count(r, &n), COFFER_ERR_MISUSE);
    assert_error_contains("rerun");
    coffer_results_free(f);
    coffer_results_free(empty);
    coffer_results_free(empty_f);
    coffer_results_free(all);
    coffer_results_free(some);
    coffer_results_free(some_f);
    coffer_results_free(r);
    coffer_results_free(NULL);
    coffer_query_free(q);
    coffer_query_free(q2);
    coffer_query_free(none);
    coffer_query_free(dq);
    coffer_query_free(NULL);
}

/* coffer_query_count() gives what running the query and counting its
 * results gives: index-answered, scanned, sorted and limited queries, in
 * read and write transactions (with the write's own changes), pinned to a
 * read transaction across a commit; and its errors. */
TS_ENV_TEST(test_query_count)
{
    add_people(env, 600, 5);
    static const char *const texts[] = {
        "level == 3", "level2 == 3", "code == 'ab'", "code2 == 'ab'", "level > 5 AND code == 'a'",
        "level == 3 SORT(id DESC)", "level2 > 0 LIMIT(7)", "TRUEPREDICATE DISTINCT(age)", "level == 1000",
    };
    for (int write = 0; write <= 1; write++) {
        coffer_txn *txn;
        assert_ok(coffer_txn_begin(env->db, write ? COFFER_TXN_WRITE : COFFER_TXN_READ, &txn));
        if (write) {
            coffer_field f[] = {{P_ID, coffer_value_int(5000)}, {P_LEVEL, coffer_value_int(3)},
                                {P_LEVEL2, coffer_value_int(3)}, {P_CODE, str("ab")}, {P_CODE2, str("ab")}};
            assert_ok(coffer_object_create(txn, PERSON, f, 5, COFFER_UPDATE_ERROR, NULL));
        }
        for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
            uint64_t *keys, n, counted = 99;
            keys_of(txn, texts[i], &keys, &n);
            free(keys);
            coffer_query *q = compile(env->db, texts[i], NULL, 0);
            ts_check_status(coffer_query_count(txn, q, &counted), COFFER_OK, texts[i], __FILE__, __LINE__);
            if (counted != n)
                fail_msg("%s (%s): counted %" PRIu64 ", the results hold %" PRIu64, texts[i],
                         write ? "write" : "read", counted, n);
            coffer_query_free(q);
        }
        assert_ok(coffer_txn_abort(txn));
        coffer_txn_free(txn);
    }

    /* a read transaction counts its snapshot, whatever is committed since */
    coffer_value three = coffer_value_int(3);
    coffer_query *q = compile(env->db, "level == $0", &three, 1);
    coffer_txn *reader = read_txn(env);
    uint64_t before = 0, after = 0;
    assert_ok(coffer_query_count(reader, q, &before));
    assert_true(before > 0);
    coffer_txn *writer;
    assert_ok(coffer_txn_begin(env->db, COFFER_TXN_WRITE, &writer));
    coffer_field f[] = {{P_ID, coffer_value_int(7000)}, {P_LEVEL, coffer_value_int(3)}};
    assert_ok(coffer_object_create(writer, PERSON, f, 2, COFFER_UPDATE_ERROR, NULL));
    assert_ok(coffer_txn_commit(writer));
    coffer_txn_free(writer);
    assert_ok(coffer_query_count(reader, q, &after));
    assert_int_equal(after, before);
    coffer_txn *fresh = read_txn(env);
    assert_ok(coffer_query_count(fresh, q, &after));
    assert_int_equal(after, before + 1);
    coffer_txn_free(fresh);

    /* errors: *out is 0 */
    assert_status(coffer_query_count(reader, q, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("out is NULL");
    after = 99;
    assert_status(coffer_query_count(reader, NULL, &after), COFFER_ERR_INVALID_ARGUMENT);
    assert_int_equal(after, 0);
    after = 99;
    assert_status(coffer_query_count(NULL, q, &after), COFFER_ERR_INVALID_ARGUMENT);
    assert_int_equal(after, 0);
    assert_ok(coffer_txn_abort(reader));
    assert_status(coffer_query_count(reader, q, &after), COFFER_ERR_MISUSE);
    coffer_txn_free(reader);
    coffer_query_free(q);
}

TS_ENV_TEST(test_rebind)
{
    fill(env);
    coffer_txn *txn = read_txn(env);
    coffer_value age = coffer_value_int(25), level = coffer_value_int(1);
    coffer_value args[2] = {age, level};
    coffer_query *q = compile(env->db, "age == $0 AND level != $1 SORT(id DESC)", args, 2);
    assert_string_equal(ids_of(txn, q), "4");

    /* Other values, the same text: indexed and unindexed conjuncts alike. */
    coffer_query *r;
    coffer_value other[2] = {coffer_value_int(25), coffer_value_int(0)}; /* ids 2 and 4 are 25, on levels 1 and 0 */
    assert_ok(coffer_query_rebind(q, other, 2, &r));
    assert_string_equal(ids_of(txn, r), "2");
    assert_string_equal(coffer_query_description(r), coffer_query_description(q));
    assert_string_equal(ids_of(txn, q), "4"); /* the original is unchanged */

    /* A rebound query outlives the one it came from, and rebinds again. */
    coffer_query_free(q);
    coffer_query *r2;
    coffer_value third[2] = {coffer_value_int(40), coffer_value_int(7)};
    assert_ok(coffer_query_rebind(r, third, 2, &r2));
    assert_string_equal(ids_of(txn, r), "2");
    coffer_query_free(r);
    assert_string_equal(ids_of(txn, r2), "5");
    assert_non_null(strstr(coffer_query_description(r2), "SORT(id DESC)"));
    coffer_query_free(r2);

    /* A list for IN, on the primary key's index. */
    coffer_value one[1] = {coffer_value_int(1)};
    q = compile(env->db, "id IN $0", one, 1);
    assert_string_equal(ids_of(txn, q), "1");
    coffer_value several[3] = {coffer_value_int(5), coffer_value_int(3), coffer_value_int(9)};
    coffer_value list = coffer_value_list(several, 3);
    assert_ok(coffer_query_rebind(q, &list, 1, &r));
    assert_string_equal(ids_of(txn, r), "3,5");
    coffer_query_free(r);

    /* Arguments are checked as when compiling, and name the culprit. */
    r = (coffer_query *)1;
    assert_status(coffer_query_rebind(q, NULL, 0, &r), COFFER_ERR_QUERY);
    assert_error_contains("$0");
    assert_null(r);
    coffer_value text = str("x");
    assert_status(coffer_query_rebind(q, &text, 1, &r), COFFER_ERR_QUERY);
    assert_error_contains("argument $0");
    assert_status(coffer_query_rebind(q, NULL, 1, &r), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("args is NULL");
    assert_status(coffer_query_rebind(q, one, 1, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_query_rebind(NULL, one, 1, &r), COFFER_ERR_INVALID_ARGUMENT);
    assert_string_equal(ids_of(txn, q), "1");
    coffer_query_free(q);
    coffer_txn_free(txn);
}

TS_ENV_TEST(test_rerun_and_delete)
{
    fill(env);
    coffer_query *q = compile(env->db, "age >= 30", NULL, 0);
    coffer_txn *txn = read_txn(env);
    coffer_results *r, *again;
    assert_ok(coffer_query_run(txn, q, &r));
    uint64_t n;
    assert_ok(coffer_results_count(r, &n));
    assert_int_equal(n, 3);
    /* A write in between: the old snapshot keeps its answer. */
    coffer_txn *w;
    assert_ok(coffer_txn_begin(env->db, COFFER_TXN_WRITE, &w));
    coffer_field f[] = {{P_ID, coffer_value_int(9)}, {P_NAME, str("zed")}, {P_AGE, coffer_value_int(50)}};
    assert_ok(coffer_object_create(w, PERSON, f, 3, COFFER_UPDATE_ERROR, NULL));
    /* delete_all needs a write transaction. */
    assert_status(coffer_results_delete_all(r), COFFER_ERR_NOT_IN_WRITE);
    coffer_results *in_w;
    assert_ok(coffer_results_rerun(r, w, &in_w));
    assert_ok(coffer_results_count(in_w, &n));
    assert_int_equal(n, 4);
    assert_ok(coffer_results_delete_all(in_w));
    coffer_object *gone;
    assert_status(coffer_results_get(in_w, 0, &gone), COFFER_ERR_NOT_FOUND);
    assert_ok(coffer_txn_commit(w));
    coffer_txn_free(w);
    coffer_results_free(in_w);
    assert_ok(coffer_results_count(r, &n));
    assert_int_equal(n, 3);
    coffer_txn_free(txn);
    /* Rerun from a result whose transaction has ended. */
    txn = read_txn(env);
    assert_ok(coffer_results_rerun(r, txn, &again));
    assert_ok(coffer_results_count(again, &n));
    assert_int_equal(n, 0);
    coffer_results *left;
    assert_ok(coffer_results_all(txn, PERSON, &left));
    assert_ok(coffer_results_count(left, &n));
    assert_int_equal(n, 2);
    coffer_results_free(left);
    coffer_results_free(again);
    coffer_results_free(r);
    coffer_txn_free(txn);
    coffer_query_free(q);
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_errors)
{
    coffer_db *db = env->db;
    expect_query_error(db, PERSON, "age >", NULL, 0, "at offset 6: expected");
    expect_query_error(db, PERSON, "agee == 1", NULL, 0, "class 'Person' has no property 'agee'");
    expect_query_error(db, PERSON, "dog.color == 'x'", NULL, 0, "class 'Dog' has no property 'color'");
    expect_query_error(db, PERSON, "age == 'x'", NULL, 0, "cannot compare 'age' (int) with a string");
    expect_query_error(db, PERSON, "age == true", NULL, 0, "'age' (int) with a bool");
    expect_query_error(db, PERSON, "born == 1", NULL, 0, "'born' (date) with a number");
    expect_query_error(db, PERSON, "flag == 0", NULL, 0, "'flag' (bool)");
    expect_query_error(db, PERSON, "age BEGINSWITH 'x'", NULL, 0, "BEGINSWITH needs strings or binary data, but 'age' is int");
    expect_query_error(db, PERSON, "age ==[c] 3", NULL, 0, "[c] and [d] need strings");
    expect_query_error(db, PERSON, "name <[c] 'a'", NULL, 0, "at offset 7: expected a value ([c] and [d] apply to ==");
    expect_query_error(db, PERSON, "dog > $0", (coffer_value[]){coffer_value_null()}, 1, "cannot order 'dog'");
    expect_query_error(db, PERSON, "age > null", NULL, 0, "> cannot compare 'age' with null");
    expect_query_error(db, PERSON, "age == $1", (coffer_value[]){coffer_value_int(1)}, 1, "uses $1 but 1 argument was given");
    expect_query_error(db, PERSON, "name == $0", (coffer_value[]){coffer_value_int(1)}, 1, "argument $0 (int)");
    expect_query_error(db, PERSON, "dog == $0", (coffer_value[]){coffer_value_link(PERSON, 1)}, 1, "argument $0 (Person)");
    expect_query_error(db, PERSON, "age == $0", (coffer_value[]){coffer_value_link(77, 1)}, 1, "class id 77");
    expect_query_error(db, PERSON, "age.@count > 1", NULL, 0, "@count in 'age.@count' needs a collection");
    expect_query_error(db, PERSON, "tags.@sum > 1", NULL, 0, "@sum needs numbers");
    expect_query_error(db, PERSON, "friends.@sum > 1", NULL, 0, "needs a property after it");
    expect_query_error(db, PERSON, "ALL age > 1", NULL, 0, "ANY, ALL and NONE need a collection");
    expect_query_error(db, PERSON, "attrs[0] == 1", NULL, 0, "[n], [FIRST] and [LAST] need a list");
    expect_query_error(db, PERSON, "tags['a'] == 1", NULL, 0, "need a map");
    expect_query_error(db, PERSON, "age BETWEEN {1}", NULL, 0, "at offset 13: BETWEEN takes exactly two values");
    coffer_value two[] = {coffer_value_int(1), coffer_value_int(2)};
    expect_query_error(db, PERSON, "age BETWEEN {$0, 5}", (coffer_value[]){coffer_value_list(two, 2)}, 1,
                       "BETWEEN needs two values");
    expect_query_error(db, PERSON, "name BETWEEN {'a', 'b'}", NULL, 0, "BETWEEN needs numbers or dates");
    expect_query_error(db, PERSON, "@links.Cat.dog.@count > 0", NULL, 0, "no class 'Cat'");
    expect_query_error(db, PERSON, "@links.Person.name.@count > 0", NULL, 0, "is not a link");
    expect_query_error(db, PERSON, "SUBQUERY(age, $x, $x > 1).@count > 0", NULL, 0, "SUBQUERY needs a collection");
    expect_query_error(db, PERSON, "SUBQUERY(friends, $x, $y.age > 1).@count > 0", NULL, 0, "at offset 23: unknown variable '$y'");
    expect_query_error(db, PERSON, "1 == 1", NULL, 0, "not two constants");
    expect_query_error(db, PERSON, "mixed.@type > 'int'", NULL, 0, "cannot order");
    expect_query_error(db, PERSON, "name.@type == 'int'", NULL, 0, "@type in 'name.@type' needs a mixed property");
    expect_query_error(db, PERSON, "TRUEPREDICATE SORT(tags ASC)", NULL, 0, "SORT needs single values");
    expect_query_error(db, PERSON, "TRUEPREDICATE DISTINCT(dog)", NULL, 0, "DISTINCT needs a property of values");
    expect_query_error(db, PERSON, "name.length.foo == 1", NULL, 0, "no properties");
    /* Argument checks beyond the query text. */
    coffer_query *q = (coffer_query *)1;
    assert_status(coffer_query_compile(db, PERSON, "age == $0", SIZE_MAX, NULL, 1, &q), COFFER_ERR_INVALID_ARGUMENT);
    assert_null(q);
    assert_status(coffer_query_compile(db, 99, "age == 1", SIZE_MAX, NULL, 0, &q), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("no class with id 99");
    assert_status(coffer_query_compile(db, PERSON, NULL, 0, NULL, 0, &q), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_query_compile(NULL, PERSON, "age == 1", SIZE_MAX, NULL, 0, &q), COFFER_ERR_INVALID_ARGUMENT);
    assert_null(coffer_query_description(NULL));
    /* A query runs only in a transaction of its own database. */
    coffer_db *other;
    assert_ok(ts_env_open(env, query_schema, 2, 1, &other));
    assert_ok(coffer_query_compile(db, PERSON, "age == 1", SIZE_MAX, NULL, 0, &q));
    coffer_txn *txn;
    coffer_results *r;
    assert_ok(coffer_txn_begin(other, COFFER_TXN_READ, &txn));
    assert_status(coffer_query_run(txn, q, &r), COFFER_ERR_MISUSE);
    assert_null(r);
    coffer_txn_free(txn);
    coffer_close(other);
    coffer_query_free(q);
    /* After close (a transaction keeps the handle allocated): compiling and
     * running are misuses. */
    assert_ok(coffer_query_compile(db, PERSON, "age == 1", SIZE_MAX, NULL, 0, &q));
    assert_ok(coffer_txn_begin(db, COFFER_TXN_READ, &txn));
    coffer_close(db);
    env->db = NULL;
    coffer_query *after;
    assert_status(coffer_query_compile(db, PERSON, "age == 1", SIZE_MAX, NULL, 0, &after), COFFER_ERR_MISUSE);
    assert_status(coffer_query_run(txn, q, &r), COFFER_ERR_MISUSE);
    coffer_txn_free(txn);
    coffer_query_free(q);
}

TS_ENV_TEST(test_query_after_close_is_freed)
{
    fill(env);
    coffer_query *q = compile(env->db, "age > 1", NULL, 0);
    coffer_txn *txn = read_txn(env);
    coffer_results *r;
    assert_ok(coffer_query_run(txn, q, &r));
    coffer_query_free(q); /* results keep what they need */
    coffer_results *again;
    assert_ok(coffer_results_rerun(r, txn, &again));
    uint64_t n;
    assert_ok(coffer_results_count(again, &n));
    assert_int_equal(n, 5);
    coffer_results_free(again);
    coffer_txn_free(txn);
    coffer_results_free(r);
}

/* One compiled query run by two threads at once, each in its own snapshot. */
typedef struct thread_arg {
    coffer_db *db;
    coffer_query *q;
    int failures;
} thread_arg;

static void *run_many(void *p)
{
    thread_arg *a = p;
    for (int i = 0; i < 200; i++) {
        coffer_txn *txn;
        coffer_results *r;
        uint64_t n = 0;
        if (coffer_txn_begin(a->db, COFFER_TXN_READ, &txn) != COFFER_OK) {
            a->failures++;
            continue;
        }
        if (coffer_query_run(txn, a->q, &r) != COFFER_OK || coffer_results_count(r, &n) != COFFER_OK || n != 2)
            a->failures++;
        coffer_results_free(r);
        coffer_txn_free(txn);
    }
    return NULL;
}

TS_ENV_TEST(test_threads_share_a_query)
{
    fill(env);
    coffer_query *q = compile(env->db, "name CONTAINS[c] 'N' AND tags.@count > 0", NULL, 0);
    thread_arg args[2] = {{env->db, q, 0}, {env->db, q, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, run_many, &args[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(args[0].failures + args[1].failures, 0);
    coffer_query_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        QUERY_TEST(test_comparisons),
        QUERY_TEST(test_strings),
        QUERY_TEST(test_paths),
        QUERY_TEST(test_sort_distinct_limit),
        QUERY_TEST(test_planner_matches_scan),
        QUERY_TEST(test_index_only_answers),
        QUERY_TEST(test_results_api),
        QUERY_TEST(test_rebind),
        QUERY_TEST(test_query_count),
        QUERY_TEST(test_rerun_and_delete),
        QUERY_TEST(test_errors),
        QUERY_TEST(test_query_after_close_is_freed),
        QUERY_TEST(test_threads_share_a_query),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
