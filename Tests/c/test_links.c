/* test_links.c — links, nested creates and upserts, embedded objects,
 * deletion cascades and nullification, backlinks, link errors and the
 * schema rules for links. Every test runs on plain, encrypted and in-memory
 * databases unless it reopens a file. */
#define _GNU_SOURCE
#include "test_support.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPT COFFER_PROPERTY_OPTIONAL

/* ------------------------------------------------------------------------ */
/* Schema                                                                    */
/* ------------------------------------------------------------------------ */

/* Person: a class with a primary key and every kind of link property. */
enum {
    P_ID = 0,
    P_NAME,
    P_DOG,       /* link Dog */
    P_ADDRESS,   /* link Address (embedded) */
    P_FRIENDS,   /* list of Person */
    P_PETS,      /* list of Dog */
    P_DOG_SET,   /* set of Dog */
    P_DOG_MAP,   /* map of Dog */
    P_ADDRESSES, /* list of Address (embedded) */
    P_PLACES,    /* map of Address (embedded) */
    P_ANY,       /* mixed */
    P_COUNT
};

/* Dog: no primary key; three linking-objects properties. */
enum { D_NAME = 0, D_AGE, D_OWNERS, D_PET_OF, D_IN_SETS, D_COUNT };

/* Address (embedded): a nested embedded Geo and a link to a Dog. */
enum { A_STREET = 0, A_CITY, A_GEO, A_DOG, A_COUNT };

/* Geo (embedded). */
enum { G_LAT = 0, G_LON, G_COUNT };

static const coffer_property_schema person_props[P_COUNT] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "name", .type = COFFER_TYPE_STRING},
    {.name = "dog", .type = COFFER_TYPE_LINK, .flags = OPT, .object_class = "Dog"},
    {.name = "address", .type = COFFER_TYPE_LINK, .flags = OPT, .object_class = "Address"},
    {.name = "friends", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_LIST, .object_class = "Person"},
    {.name = "pets", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_LIST, .object_class = "Dog"},
    {.name = "dogSet", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_SET, .object_class = "Dog"},
    {.name = "dogMap", .type = COFFER_TYPE_LINK, .flags = OPT, .collection = COFFER_COLLECTION_MAP, .object_class = "Dog"},
    {.name = "addresses", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_LIST, .object_class = "Address"},
    {.name = "places", .type = COFFER_TYPE_LINK, .flags = OPT, .collection = COFFER_COLLECTION_MAP, .object_class = "Address"},
    {.name = "any", .type = COFFER_TYPE_MIXED, .flags = OPT},
};

static const coffer_property_schema dog_props[D_COUNT] = {
    {.name = "name", .type = COFFER_TYPE_STRING},
    {.name = "age", .type = COFFER_TYPE_INT},
    {.name = "owners", .type = COFFER_TYPE_LINKING_OBJECTS, .object_class = "Person", .link_origin_property = "dog"},
    {.name = "petOf", .type = COFFER_TYPE_LINKING_OBJECTS, .object_class = "Person", .link_origin_property = "pets"},
    {.name = "inSets", .type = COFFER_TYPE_LINKING_OBJECTS, .object_class = "Person", .link_origin_property = "dogSet"},
};

static const coffer_property_schema address_props[A_COUNT] = {
    {.name = "street", .type = COFFER_TYPE_STRING},
    {.name = "city", .type = COFFER_TYPE_STRING},
    {.name = "geo", .type = COFFER_TYPE_LINK, .flags = OPT, .object_class = "Geo"},
    {.name = "dog", .type = COFFER_TYPE_LINK, .flags = OPT, .object_class = "Dog"},
};

static const coffer_property_schema geo_props[G_COUNT] = {
    {.name = "lat", .type = COFFER_TYPE_DOUBLE},
    {.name = "lon", .type = COFFER_TYPE_DOUBLE},
};

static const coffer_class_schema link_schema[] = {
    {.name = "Person", .properties = person_props, .property_count = P_COUNT},
    {.name = "Dog", .properties = dog_props, .property_count = D_COUNT},
    {.name = "Address", .properties = address_props, .property_count = A_COUNT, .flags = COFFER_CLASS_EMBEDDED},
    {.name = "Geo", .properties = geo_props, .property_count = G_COUNT, .flags = COFFER_CLASS_EMBEDDED},
};
#define LINK_SCHEMA_COUNT (sizeof link_schema / sizeof link_schema[0])

static struct {
    coffer_class_id person, dog, address, geo;
} C;

static const char *const class_names[] = {"Person", "Dog", "Address", "Geo"};
static coffer_class_id *const class_ids[] = {&C.person, &C.dog, &C.address, &C.geo};

static int setup_links(void **state)
{
    return ts_setup_schema_classes(state, link_schema, LINK_SCHEMA_COUNT, 4, class_names, class_ids);
}

#define LINK_TEST(f) TS_TEST_ALL_MODES_SETUP(f, setup_links)
#define LINK_TEST_FILES(f) TS_TEST_FILE_MODES_SETUP(f, setup_links)

static void reopen(ts_env *env)
{
    ts_env_reopen(env, link_schema, LINK_SCHEMA_COUNT, 1);
    assert_int_equal(ts_find_classes(env->db, 4, class_names, class_ids), 0);
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static coffer_object *get_obj(coffer_txn *txn, coffer_class_id cls, coffer_object_key key)
{
    coffer_object *obj = NULL;
    assert_ok(coffer_object_get(txn, cls, key, &obj));
    assert_non_null(obj);
    return obj;
}

static coffer_object *new_dog(coffer_txn *txn, const char *name, int64_t age)
{
    coffer_field f[] = {ts_field(D_NAME, ts_str(name)), ts_field(D_AGE, coffer_value_int(age))};
    coffer_object *obj = ts_create(txn, C.dog, f, 2);
    assert_non_null(obj);
    return obj;
}

static coffer_object *new_person(coffer_txn *txn, int64_t id, const char *name)
{
    coffer_field f[] = {ts_field(P_ID, coffer_value_int(id)), ts_field(P_NAME, ts_str(name))};
    coffer_object *obj = ts_create(txn, C.person, f, 2);
    assert_non_null(obj);
    return obj;
}

static coffer_object *find_person(coffer_txn *txn, int64_t id)
{
    coffer_value pk = coffer_value_int(id);
    coffer_object *obj = NULL;
    assert_ok(coffer_object_find(txn, C.person, &pk, &obj));
    return obj;
}

static coffer_value link_to(coffer_object *obj)
{
    return coffer_value_link(coffer_object_class(obj), coffer_object_key_of(obj));
}

static void set_prop(coffer_object *obj, coffer_property_id p, coffer_value v)
{
    assert_ok(coffer_object_set_value(obj, p, &v));
}

/* Reads link property p: returns 1 with *out set, or 0 for null. */
#define read_link(obj, p, out) read_link_at((obj), (p), (out), __FILE__, __LINE__)
static int read_link_at(coffer_object *obj, coffer_property_id p, coffer_link *out, const char *file, int line)
{
    coffer_value v;
    memset(&v, 0, sizeof v);
    *out = (coffer_link){0}; /* defined even on the failure paths */
    ts_check_status(coffer_object_get_value(obj, p, &v), COFFER_OK, "coffer_object_get_value", file, line);
    if (v.type == COFFER_TYPE_NULL)
        return 0;
    if (v.type != COFFER_TYPE_LINK) {
        print_error("%s:%d: property %u reads as type %d, not a link\n", file, line, (unsigned)p, (int)v.type);
        _fail(file, line);
    }
    *out = v.u.link;
    return 1;
}

#define assert_link(obj, p, cls, key) check_link((obj), (p), (cls), (key), __FILE__, __LINE__)
static void check_link(coffer_object *obj, coffer_property_id p, coffer_class_id cls, coffer_object_key key,
                       const char *file, int line)
{
    coffer_link l;
    if (!read_link_at(obj, p, &l, file, line)) {
        print_error("%s:%d: property %u is null, expected a link to %u/%" PRIu64 "\n", file, line, (unsigned)p,
                    (unsigned)cls, key);
        _fail(file, line);
    }
    if (l.class_id != cls || l.key != key) {
        print_error("%s:%d: property %u links to %u/%" PRIu64 ", expected %u/%" PRIu64 "\n", file, line,
                    (unsigned)p, (unsigned)l.class_id, l.key, (unsigned)cls, key);
        _fail(file, line);
    }
}

#define assert_null_link(obj, p) check_null_link((obj), (p), __FILE__, __LINE__)
static void check_null_link(coffer_object *obj, coffer_property_id p, const char *file, int line)
{
    coffer_link l;
    if (read_link_at(obj, p, &l, file, line)) {
        print_error("%s:%d: property %u links to %u/%" PRIu64 ", expected null\n", file, line, (unsigned)p,
                    (unsigned)l.class_id, l.key);
        _fail(file, line);
    }
}

/* The keys held by list property p (links of class cls) into keys[cap]. */
static size_t list_keys(coffer_object *obj, coffer_property_id p, coffer_class_id cls, coffer_object_key *keys,
                        size_t cap)
{
    coffer_list *list = NULL;
    assert_ok(coffer_object_get_list(obj, p, &list));
    uint64_t n = 0;
    assert_ok(coffer_list_count(list, &n));
    assert_true(n <= cap);
    for (uint64_t i = 0; i < n; i++) {
        coffer_value v;
        assert_ok(coffer_list_get(list, i, &v));
        assert_int_equal(v.type, COFFER_TYPE_LINK);
        assert_int_equal(v.u.link.class_id, cls);
        keys[i] = v.u.link.key;
    }
    coffer_list_release(list);
    return (size_t)n;
}

#define assert_list_keys(obj, p, cls, ...)                                                     \
    do {                                                                                       \
        const coffer_object_key want_[] = {__VA_ARGS__};                                       \
        check_list_keys((obj), (p), (cls), want_, sizeof want_ / sizeof want_[0], __FILE__, __LINE__); \
    } while (0)
static void check_list_keys(coffer_object *obj, coffer_property_id p, coffer_class_id cls,
                            const coffer_object_key *want, size_t n, const char *file, int line)
{
    coffer_object_key got[64];
    size_t m = list_keys(obj, p, cls, got, 64);
    if (m != n || (n && memcmp(got, want, n * sizeof *want) != 0)) {
        print_error("%s:%d: list property %u holds %zu links:", file, line, (unsigned)p, m);
        for (size_t i = 0; i < m; i++)
            print_error(" %" PRIu64, got[i]);
        print_error("; expected %zu:", n);
        for (size_t i = 0; i < n; i++)
            print_error(" %" PRIu64, want[i]);
        print_error("\n");
        _fail(file, line);
    }
}

static void assert_list_empty(coffer_object *obj, coffer_property_id p)
{
    coffer_list *list = NULL;
    assert_ok(coffer_object_get_list(obj, p, &list));
    uint64_t n = 99;
    assert_ok(coffer_list_count(list, &n));
    assert_int_equal(n, 0);
    coffer_list_release(list);
}

static uint64_t list_count(coffer_object *obj, coffer_property_id p)
{
    coffer_list *list = NULL;
    assert_ok(coffer_object_get_list(obj, p, &list));
    uint64_t n = 0;
    assert_ok(coffer_list_count(list, &n));
    coffer_list_release(list);
    return n;
}

static uint64_t backlink_count(coffer_object *obj, coffer_property_id p)
{
    uint64_t n = UINT64_MAX;
    assert_ok(coffer_object_backlink_count(obj, p, &n));
    return n;
}

/* The origin keys coffer_object_backlinks gives, in order, into keys[cap];
 * checks they all are Persons. */
static size_t backlink_keys(coffer_object *obj, coffer_property_id p, coffer_object_key *keys, size_t cap)
{
    coffer_iter *it = NULL;
    assert_ok(coffer_object_backlinks(obj, p, &it));
    size_t n = 0;
    coffer_object *o = NULL;
    while (ts_next(it, &o)) {
        assert_true(n < cap);
        assert_int_equal(coffer_object_class(o), C.person);
        keys[n++] = coffer_object_key_of(o);
    }
    coffer_iter_free(it);
    return n;
}

#define assert_backlinks(obj, p, ...)                                                              \
    do {                                                                                           \
        const coffer_object_key want_[] = {__VA_ARGS__};                                           \
        check_backlinks((obj), (p), want_, sizeof want_ / sizeof want_[0], __FILE__, __LINE__);    \
    } while (0)
static void check_backlinks(coffer_object *obj, coffer_property_id p, const coffer_object_key *want, size_t n,
                            const char *file, int line)
{
    coffer_object_key got[64];
    size_t m = backlink_keys(obj, p, got, 64);
    uint64_t count = backlink_count(obj, p);
    if (m != n || count != n || (n && memcmp(got, want, n * sizeof *want) != 0)) {
        print_error("%s:%d: backlinks through property %u: count %" PRIu64 ", iterated %zu:", file, line,
                    (unsigned)p, count, m);
        for (size_t i = 0; i < m; i++)
            print_error(" %" PRIu64, got[i]);
        print_error("; expected %zu:", n);
        for (size_t i = 0; i < n; i++)
            print_error(" %" PRIu64, want[i]);
        print_error("\n");
        _fail(file, line);
    }
}

static void assert_no_backlinks(coffer_object *obj, coffer_property_id p)
{
    coffer_object_key got[4];
    assert_int_equal(backlink_keys(obj, p, got, 4), 0);
    assert_int_equal(backlink_count(obj, p), 0);
}

static void assert_gone(coffer_txn *txn, coffer_class_id cls, coffer_object_key key)
{
    coffer_object *obj = NULL;
    assert_status(coffer_object_get(txn, cls, key, &obj), COFFER_ERR_NOT_FOUND);
}

static coffer_object_key key_of_link(coffer_object *obj, coffer_property_id p)
{
    coffer_link l;
    assert_true(read_link(obj, p, &l));
    return l.key;
}

static coffer_value addr_fields(coffer_field *buf, const char *street, const char *city, const coffer_value *geo)
{
    size_t n = 0;
    buf[n++] = ts_field(A_STREET, ts_str(street));
    buf[n++] = ts_field(A_CITY, ts_str(city));
    if (geo)
        buf[n++] = ts_field(A_GEO, *geo);
    return coffer_value_fields(buf, n);
}

static coffer_value geo_fields(coffer_field *buf, double lat, double lon)
{
    buf[0] = ts_field(G_LAT, coffer_value_double(lat));
    buf[1] = ts_field(G_LON, coffer_value_double(lon));
    return coffer_value_fields(buf, 2);
}

/* ------------------------------------------------------------------------ */
/* Plain links                                                               */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_link_roundtrip)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *d1 = new_dog(w, "Rex", 3);
    coffer_object *d2 = new_dog(w, "Fido", 5);
    coffer_object_key k1 = coffer_object_key_of(d1), k2 = coffer_object_key_of(d2);

    /* by link value at create */
    coffer_field f1[] = {ts_field(P_ID, coffer_value_int(1)), ts_field(P_DOG, coffer_value_link(C.dog, k1))};
    coffer_object *p1 = ts_create(w, C.person, f1, 2);
    /* by object handle at create */
    coffer_field f2[] = {ts_field(P_ID, coffer_value_int(2)), ts_field(P_DOG, coffer_value_object(d2))};
    coffer_object *p2 = ts_create(w, C.person, f2, 2);
    /* not set: null */
    coffer_object *p3 = new_person(w, 3, "three");

    assert_link(p1, P_DOG, C.dog, k1);
    assert_link(p2, P_DOG, C.dog, k2);
    assert_null_link(p3, P_DOG);
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_link(find_person(r, 1), P_DOG, C.dog, k1);
    assert_link(find_person(r, 2), P_DOG, C.dog, k2);
    assert_null_link(find_person(r, 3), P_DOG);
    /* following the link gives the dog */
    coffer_object *d = get_obj(r, C.dog, key_of_link(find_person(r, 2), P_DOG));
    assert_string_equal(ts_get_string(d, D_NAME, NULL), "Fido");
    coffer_txn_free(r);

    /* change with set_value and set_fields */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    set_prop(find_person(w, 1), P_DOG, coffer_value_null());
    set_prop(find_person(w, 3), P_DOG, coffer_value_object(get_obj(w, C.dog, k1)));
    coffer_field sf[] = {ts_field(P_NAME, ts_str("two")), ts_field(P_DOG, coffer_value_link(C.dog, k1))};
    assert_ok(coffer_object_set_fields(find_person(w, 2), sf, 2));
    ts_commit(w);

    if (env->mode != TS_MEMORY)
        reopen(env);
    r = ts_begin(env->db, COFFER_TXN_READ);
    assert_null_link(find_person(r, 1), P_DOG);
    assert_link(find_person(r, 2), P_DOG, C.dog, k1);
    assert_link(find_person(r, 3), P_DOG, C.dog, k1);
    coffer_object *dog1 = get_obj(r, C.dog, k1);
    assert_backlinks(dog1, D_OWNERS, coffer_object_key_of(find_person(r, 2)), coffer_object_key_of(find_person(r, 3)));
    assert_no_backlinks(get_obj(r, C.dog, k2), D_OWNERS);
    coffer_txn_free(r);
}

TS_ENV_TEST(test_link_type_errors)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *dog = new_dog(w, "Rex", 1);
    coffer_object *p1 = new_person(w, 1, "one");
    coffer_object *p2 = new_person(w, 2, "two");
    set_prop(p2, P_DOG, link_to(dog));

    /* a Person where a Dog is expected */
    coffer_field f[] = {ts_field(P_ID, coffer_value_int(3)), ts_field(P_DOG, link_to(p1))};
    assert_status(coffer_object_create(w, C.person, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
    assert_error_contains("dog");
    assert_error_contains("Person");
    f[1] = ts_field(P_DOG, coffer_value_object(p1));
    assert_status(coffer_object_create(w, C.person, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
    assert_error_contains("dog");
    /* a scalar where a link is expected */
    f[1] = ts_field(P_DOG, coffer_value_int(7));
    assert_status(coffer_object_create(w, C.person, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
    assert_error_contains("dog");
    f[1] = ts_field(P_DOG, ts_str("Rex"));
    assert_status(coffer_object_create(w, C.person, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
    assert_error_contains("dog");
    /* a link where a scalar is expected */
    f[1] = ts_field(P_NAME, link_to(dog));
    assert_status(coffer_object_create(w, C.person, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
    assert_error_contains("name");
    f[1] = ts_field(P_NAME, coffer_value_object(dog));
    assert_status(coffer_object_create(w, C.person, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
    assert_error_contains("name");
    /* a list where a single link is expected, and the reverse */
    coffer_value items[] = {link_to(dog)};
    f[1] = ts_field(P_DOG, coffer_value_list(items, 1));
    assert_status(coffer_object_create(w, C.person, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
    assert_error_contains("dog");
    f[1] = ts_field(P_PETS, link_to(dog));
    assert_status(coffer_object_create(w, C.person, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
    assert_error_contains("pets");
    /* a list of links holding one of the wrong class */
    coffer_value wrong_items[] = {link_to(dog), link_to(p1)};
    f[1] = ts_field(P_PETS, coffer_value_list(wrong_items, 2));
    assert_status(coffer_object_create(w, C.person, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
    assert_error_contains("pets");
    /* nothing of the failed calls was written */
    assert_int_equal(ts_count(w, C.person), 2);
    assert_int_equal(ts_count(w, C.dog), 1);

    /* set_value: error, object unchanged */
    coffer_value bad = link_to(p1);
    assert_status(coffer_object_set_value(p2, P_DOG, &bad), COFFER_ERR_TYPE);
    assert_error_contains("dog");
    assert_link(p2, P_DOG, C.dog, coffer_object_key_of(dog));
    bad = coffer_value_object(p1);
    assert_status(coffer_object_set_value(p2, P_DOG, &bad), COFFER_ERR_TYPE);
    assert_error_contains("dog");
    assert_link(p2, P_DOG, C.dog, coffer_object_key_of(dog));
    coffer_field sf[] = {ts_field(P_NAME, ts_str("changed")), ts_field(P_DOG, link_to(p1))};
    assert_status(coffer_object_set_fields(p2, sf, 2), COFFER_ERR_TYPE);
    assert_error_contains("dog");
    assert_string_equal(ts_get_string(p2, P_NAME, NULL), "two");

    /* collections of links: the wrong class, null in a list or set */
    coffer_list *pets = NULL;
    assert_ok(coffer_object_get_list(p1, P_PETS, &pets));
    assert_status(coffer_list_append(pets, &bad), COFFER_ERR_TYPE);
    assert_error_contains("pets");
    coffer_value null = coffer_value_null();
    assert_status(coffer_list_append(pets, &null), COFFER_ERR_TYPE);
    assert_error_contains("pets");
    coffer_value i7 = coffer_value_int(7);
    assert_status(coffer_list_append(pets, &i7), COFFER_ERR_TYPE);
    assert_error_contains("pets");
    uint64_t n = 9;
    assert_ok(coffer_list_count(pets, &n));
    assert_int_equal(n, 0);
    coffer_set *set = NULL;
    assert_ok(coffer_object_get_set(p1, P_DOG_SET, &set));
    assert_status(coffer_set_insert(set, &bad, NULL), COFFER_ERR_TYPE);
    assert_error_contains("dogSet");
    assert_status(coffer_set_insert(set, &null, NULL), COFFER_ERR_TYPE);
    assert_error_contains("dogSet");
    coffer_map *map = NULL;
    assert_ok(coffer_object_get_map(p1, P_DOG_MAP, &map));
    assert_status(coffer_map_set(map, "k", 1, &bad), COFFER_ERR_TYPE);
    assert_error_contains("dogMap");
    /* map values of links may be null */
    assert_ok(coffer_map_set(map, "k", 1, &null));

    /* a class id out of range */
    coffer_value nowhere = coffer_value_link(9999, 0);
    assert_not_ok(coffer_object_set_value(p1, P_DOG, &nowhere));
    assert_null_link(p1, P_DOG);
    coffer_txn_free(w);
}

TS_ENV_TEST(test_link_to_missing_object)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *dog = new_dog(w, "Rex", 1);
    coffer_object_key dk = coffer_object_key_of(dog);
    coffer_object *p = new_person(w, 1, "one");

    coffer_value v = coffer_value_link(C.dog, dk + 1000);
    assert_status(coffer_object_set_value(p, P_DOG, &v), COFFER_ERR_NOT_FOUND);
    assert_error_contains("dog");
    coffer_field f[] = {ts_field(P_ID, coffer_value_int(2)), ts_field(P_DOG, v)};
    assert_status(coffer_object_create(w, C.person, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_NOT_FOUND);
    assert_error_contains("dog");
    assert_int_equal(ts_count(w, C.person), 1);

    /* a dog deleted in this transaction, by key and by handle */
    assert_ok(coffer_object_delete(dog));
    v = coffer_value_link(C.dog, dk);
    assert_status(coffer_object_set_value(p, P_DOG, &v), COFFER_ERR_NOT_FOUND);
    assert_error_contains("dog");
    v = coffer_value_object(dog);
    assert_status(coffer_object_set_value(p, P_DOG, &v), COFFER_ERR_NOT_FOUND);
    coffer_list *pets = NULL;
    assert_ok(coffer_object_get_list(p, P_PETS, &pets));
    v = coffer_value_link(C.dog, dk);
    assert_status(coffer_list_append(pets, &v), COFFER_ERR_NOT_FOUND);
    assert_error_contains("pets");
    assert_null_link(p, P_DOG);
    assert_int_equal(list_count(p, P_PETS), 0);

    /* a NULL object handle */
    v = coffer_value_object(NULL);
    assert_not_ok(coffer_object_set_value(p, P_DOG, &v));
    coffer_txn_free(w);
}

/* Object handles of another transaction or database are misuse. */
TS_ENV_TEST(test_link_foreign_object)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    new_dog(w, "committed", 1);
    ts_commit(w);

    /* another database with the same schema */
    char ident[300];
    snprintf(ident, sizeof ident, "%s-foreign", env->ident);
    coffer_db *other = NULL;
    assert_ok(ts_open_memory(ident, link_schema, LINK_SCHEMA_COUNT, 1, &other));
    coffer_txn *ow = ts_begin(other, COFFER_TXN_WRITE);
    coffer_object *foreign_dog = new_dog(ow, "foreign", 2);

    /* a read transaction on the same database */
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    coffer_iter *it = NULL;
    assert_ok(coffer_class_iterate(r, C.dog, &it));
    coffer_object *read_dog = NULL;
    assert_true(ts_next(it, &read_dog));

    w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *p = new_person(w, 1, "one");
    coffer_value v = coffer_value_object(foreign_dog);
    assert_status(coffer_object_set_value(p, P_DOG, &v), COFFER_ERR_MISUSE);
    coffer_field f[] = {ts_field(P_ID, coffer_value_int(2)), ts_field(P_DOG, v)};
    assert_status(coffer_object_create(w, C.person, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_MISUSE);
    v = coffer_value_object(read_dog);
    assert_status(coffer_object_set_value(p, P_DOG, &v), COFFER_ERR_MISUSE);
    coffer_list *pets = NULL;
    assert_ok(coffer_object_get_list(p, P_PETS, &pets));
    assert_status(coffer_list_append(pets, &v), COFFER_ERR_MISUSE);
    coffer_set *set = NULL;
    assert_ok(coffer_object_get_set(p, P_DOG_SET, &set));
    assert_status(coffer_set_insert(set, &v, NULL), COFFER_ERR_MISUSE);
    assert_null_link(p, P_DOG);
    assert_int_equal(ts_count(w, C.person), 1);
    ts_commit(w);

    coffer_iter_free(it);
    coffer_txn_free(r);
    coffer_txn_free(ow);
    coffer_close(other);
}

/* ------------------------------------------------------------------------ */
/* Nested creates and upserts                                                */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_nested_create)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *existing = new_dog(w, "Existing", 9);
    coffer_object_key ek = coffer_object_key_of(existing);

    coffer_field rex[] = {ts_field(D_NAME, ts_str("Rex")), ts_field(D_AGE, coffer_value_int(3))};
    coffer_field a[] = {ts_field(D_NAME, ts_str("A"))};
    coffer_field b[] = {ts_field(D_NAME, ts_str("B")), ts_field(D_AGE, coffer_value_int(2))};
    coffer_value pets[] = {coffer_value_fields(a, 1), coffer_value_link(C.dog, ek), coffer_value_fields(b, 2)};
    coffer_field deep_dog[] = {ts_field(D_NAME, ts_str("Deep"))};
    coffer_field friend1[] = {ts_field(P_ID, coffer_value_int(10)), ts_field(P_NAME, ts_str("Friend"))};
    coffer_field friend2[] = {ts_field(P_ID, coffer_value_int(11)), ts_field(P_DOG, coffer_value_fields(deep_dog, 1))};
    coffer_value friends[] = {coffer_value_fields(friend1, 2), coffer_value_fields(friend2, 2)};
    coffer_field f[] = {
        ts_field(P_ID, coffer_value_int(1)),
        ts_field(P_DOG, coffer_value_fields(rex, 2)),
        ts_field(P_PETS, coffer_value_list(pets, 3)),
        ts_field(P_FRIENDS, coffer_value_list(friends, 2)),
    };
    coffer_object *p = ts_create(w, C.person, f, 4);
    assert_int_equal(ts_count(w, C.dog), 5);   /* Existing, Rex, A, B, Deep */
    assert_int_equal(ts_count(w, C.person), 3); /* 1, 10, 11 */

    coffer_object *dog = get_obj(w, C.dog, key_of_link(p, P_DOG));
    assert_string_equal(ts_get_string(dog, D_NAME, NULL), "Rex");
    assert_int_equal(ts_get_int(dog, D_AGE), 3);
    coffer_object_key pk[8];
    assert_int_equal(list_keys(p, P_PETS, C.dog, pk, 8), 3);
    assert_int_equal(pk[1], ek);
    assert_string_equal(ts_get_string(get_obj(w, C.dog, pk[0]), D_NAME, NULL), "A");
    assert_int_equal(ts_get_int(get_obj(w, C.dog, pk[0]), D_AGE), 0);
    assert_string_equal(ts_get_string(get_obj(w, C.dog, pk[2]), D_NAME, NULL), "B");
    coffer_object *f10 = find_person(w, 10), *f11 = find_person(w, 11);
    assert_list_keys(p, P_FRIENDS, C.person, coffer_object_key_of(f10), coffer_object_key_of(f11));
    assert_string_equal(ts_get_string(f10, P_NAME, NULL), "Friend");
    assert_string_equal(ts_get_string(get_obj(w, C.dog, key_of_link(f11, P_DOG)), D_NAME, NULL), "Deep");

    /* set_value, list_insert and map_set with a new object */
    coffer_field nd[] = {ts_field(D_NAME, ts_str("Newer"))};
    set_prop(p, P_DOG, coffer_value_fields(nd, 1));
    assert_int_equal(ts_count(w, C.dog), 6); /* Rex is not embedded: it stays */
    assert_string_equal(ts_get_string(get_obj(w, C.dog, key_of_link(p, P_DOG)), D_NAME, NULL), "Newer");
    coffer_list *l = NULL;
    assert_ok(coffer_object_get_list(p, P_PETS, &l));
    coffer_value nv = coffer_value_fields(nd, 1);
    assert_ok(coffer_list_insert(l, 0, &nv));
    assert_int_equal(ts_count(w, C.dog), 7);
    coffer_map *m = NULL;
    assert_ok(coffer_object_get_map(p, P_DOG_MAP, &m));
    assert_ok(coffer_map_set(m, "fresh", SIZE_MAX, &nv));
    assert_int_equal(ts_count(w, C.dog), 8);
    coffer_value got;
    assert_ok(coffer_map_get(m, "fresh", SIZE_MAX, &got));
    assert_int_equal(got.type, COFFER_TYPE_LINK);
    assert_string_equal(ts_get_string(get_obj(w, C.dog, got.u.link.key), D_NAME, NULL), "Newer");
    coffer_object_key fresh_key = got.u.link.key;
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, C.dog), 8);
    assert_int_equal(list_count(find_person(r, 1), P_PETS), 4);
    assert_backlinks(get_obj(r, C.dog, ek), D_PET_OF, coffer_object_key_of(find_person(r, 1)));
    uint64_t all = 9;
    assert_ok(coffer_object_backlink_count_all(get_obj(r, C.dog, fresh_key), &all));
    assert_int_equal(all, 1);
    coffer_txn_free(r);
}

TS_ENV_TEST(test_nested_upsert)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *ann = new_person(w, 1, "Ann");
    coffer_object_key ann_key = coffer_object_key_of(ann);
    coffer_object *dog = new_dog(w, "Rex", 1);
    coffer_object_key dog_key = coffer_object_key_of(dog);
    set_prop(ann, P_DOG, link_to(dog));
    ts_commit(w);

    /* UPDATE_ALL: the nested Person 1 is updated, not duplicated */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field annie[] = {ts_field(P_ID, coffer_value_int(1)), ts_field(P_NAME, ts_str("Annie"))};
    coffer_field bob_new[] = {ts_field(P_ID, coffer_value_int(3)), ts_field(P_NAME, ts_str("Bob"))};
    coffer_value friends[] = {coffer_value_fields(annie, 2), coffer_value_fields(bob_new, 2)};
    coffer_field f[] = {ts_field(P_ID, coffer_value_int(2)), ts_field(P_NAME, ts_str("Two")),
                        ts_field(P_FRIENDS, coffer_value_list(friends, 2))};
    coffer_object *two = NULL;
    assert_ok(coffer_object_create(w, C.person, f, 3, COFFER_UPDATE_ALL, &two));
    assert_int_equal(ts_count(w, C.person), 3);
    ann = find_person(w, 1);
    assert_int_equal(coffer_object_key_of(ann), ann_key);
    assert_string_equal(ts_get_string(ann, P_NAME, NULL), "Annie");
    /* properties not listed in the nested description keep their values */
    assert_link(ann, P_DOG, C.dog, dog_key);
    assert_list_keys(two, P_FRIENDS, C.person, ann_key, coffer_object_key_of(find_person(w, 3)));

    /* UPDATE_MODIFIED through a single link: Person 2's friend list is
     * replaced, nested Person 3 renamed */
    coffer_field bobby[] = {ts_field(P_ID, coffer_value_int(3)), ts_field(P_NAME, ts_str("Bobby"))};
    coffer_value fr2[] = {coffer_value_fields(bobby, 2)};
    coffer_field f2[] = {ts_field(P_ID, coffer_value_int(2)), ts_field(P_FRIENDS, coffer_value_list(fr2, 1))};
    assert_ok(coffer_object_create(w, C.person, f2, 2, COFFER_UPDATE_MODIFIED, NULL));
    assert_int_equal(ts_count(w, C.person), 3);
    assert_string_equal(ts_get_string(find_person(w, 3), P_NAME, NULL), "Bobby");
    assert_string_equal(ts_get_string(find_person(w, 2), P_NAME, NULL), "Two");
    assert_list_keys(find_person(w, 2), P_FRIENDS, C.person, coffer_object_key_of(find_person(w, 3)));

    /* the same key twice in one call under UPDATE_ALL: one object, linked twice */
    coffer_field x1[] = {ts_field(P_ID, coffer_value_int(7)), ts_field(P_NAME, ts_str("first"))};
    coffer_field x2[] = {ts_field(P_ID, coffer_value_int(7)), ts_field(P_NAME, ts_str("second"))};
    coffer_value twice[] = {coffer_value_fields(x1, 2), coffer_value_fields(x2, 2)};
    coffer_field f3[] = {ts_field(P_ID, coffer_value_int(4)), ts_field(P_FRIENDS, coffer_value_list(twice, 2))};
    coffer_object *four = NULL;
    assert_ok(coffer_object_create(w, C.person, f3, 2, COFFER_UPDATE_ALL, &four));
    assert_int_equal(ts_count(w, C.person), 5);
    coffer_object *seven = find_person(w, 7);
    assert_string_equal(ts_get_string(seven, P_NAME, NULL), "second");
    coffer_object_key sk = coffer_object_key_of(seven);
    assert_list_keys(four, P_FRIENDS, C.person, sk, sk);
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, C.person), 5);
    assert_string_equal(ts_get_string(find_person(r, 1), P_NAME, NULL), "Annie");
    uint64_t n = 0;
    assert_ok(coffer_object_backlink_count_from(find_person(r, 7), C.person, P_FRIENDS, &n));
    assert_int_equal(n, 2);
    coffer_txn_free(r);
}

TS_ENV_TEST(test_nested_primary_key_conflict)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    new_person(w, 1, "Ann");
    ts_commit(w);

    /* a nested description of an existing Person under UPDATE_ERROR */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field ann2[] = {ts_field(P_ID, coffer_value_int(1)), ts_field(P_NAME, ts_str("Impostor"))};
    coffer_value fr[] = {coffer_value_fields(ann2, 2)};
    coffer_field f[] = {ts_field(P_ID, coffer_value_int(2)), ts_field(P_FRIENDS, coffer_value_list(fr, 1))};
    assert_status(coffer_object_create(w, C.person, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_PRIMARY_KEY_EXISTS);
    assert_error_contains("Person");
    coffer_status st = coffer_txn_abort(w);
    (void)st;
    coffer_txn_free(w);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, C.person), 1);
    assert_string_equal(ts_get_string(find_person(r, 1), P_NAME, NULL), "Ann");
    coffer_txn_free(r);

    /* two nested descriptions with one new key under UPDATE_ERROR */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field x1[] = {ts_field(P_ID, coffer_value_int(5))};
    coffer_field x2[] = {ts_field(P_ID, coffer_value_int(5))};
    coffer_value twice[] = {coffer_value_fields(x1, 1), coffer_value_fields(x2, 1)};
    coffer_field g[] = {ts_field(P_ID, coffer_value_int(3)), ts_field(P_FRIENDS, coffer_value_list(twice, 2))};
    assert_status(coffer_object_create(w, C.person, g, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_PRIMARY_KEY_EXISTS);
    assert_error_contains("Person");
    st = coffer_txn_abort(w);
    (void)st;
    coffer_txn_free(w);
    r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, C.person), 1);
    coffer_txn_free(r);

    /* a nested object of a class with a primary key needs the key */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field nokey[] = {ts_field(P_NAME, ts_str("nobody"))};
    coffer_value fr3[] = {coffer_value_fields(nokey, 1)};
    coffer_field h[] = {ts_field(P_ID, coffer_value_int(4)), ts_field(P_FRIENDS, coffer_value_list(fr3, 1))};
    assert_not_ok(coffer_object_create(w, C.person, h, 2, COFFER_UPDATE_ALL, NULL));
    coffer_txn_free(w);
    assert_int_equal(ts_count_of(env->db, "Person"), 1);
}

/* A nested description with a wrong field type fails the whole call and
 * writes nothing, neither the outer nor the nested objects. */
TS_ENV_TEST(test_nested_errors_write_nothing)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field bad_dog[] = {ts_field(D_NAME, coffer_value_int(5))};
    coffer_field good_dog[] = {ts_field(D_NAME, ts_str("ok"))};
    coffer_value pets[] = {coffer_value_fields(good_dog, 1), coffer_value_fields(bad_dog, 1)};
    coffer_field f[] = {ts_field(P_ID, coffer_value_int(1)), ts_field(P_PETS, coffer_value_list(pets, 2))};
    assert_status(coffer_object_create(w, C.person, f, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
    assert_error_contains("name");
    assert_int_equal(ts_count(w, C.person), 0);
    assert_int_equal(ts_count(w, C.dog), 0);

    /* a nested description of the wrong class's property id */
    coffer_field bad_prop[] = {ts_field(D_COUNT + 40, ts_str("x"))};
    f[1] = ts_field(P_DOG, coffer_value_fields(bad_prop, 1));
    assert_not_ok(coffer_object_create(w, C.person, f, 2, COFFER_UPDATE_ERROR, NULL));
    assert_int_equal(ts_count(w, C.person), 0);
    assert_int_equal(ts_count(w, C.dog), 0);

    /* nested values into a linking-objects property are rejected */
    coffer_object *dog = new_dog(w, "d", 1);
    coffer_object *p = new_person(w, 1, "p");
    coffer_value lo = link_to(p);
    assert_not_ok(coffer_object_set_value(dog, D_OWNERS, &lo));
    assert_no_backlinks(dog, D_OWNERS);
    ts_commit(w);
}

/* ------------------------------------------------------------------------ */
/* Embedded objects                                                          */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_embedded_create_and_read)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);

    /* cannot be created on their own */
    coffer_field af[] = {ts_field(A_STREET, ts_str("Main"))};
    coffer_object *direct = NULL;
    assert_status(coffer_object_create(w, C.address, af, 1, COFFER_UPDATE_ERROR, &direct), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("Address");
    assert_status(coffer_object_create(w, C.geo, NULL, 0, COFFER_UPDATE_ALL, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_int_equal(ts_count(w, C.address), 0);

    coffer_field gb[2], ab[3];
    coffer_value geo = geo_fields(gb, 52.5, 13.4);
    coffer_field f[] = {ts_field(P_ID, coffer_value_int(1)), ts_field(P_ADDRESS, addr_fields(ab, "Main St", "Berlin", &geo))};
    coffer_object *p = ts_create(w, C.person, f, 2);
    assert_int_equal(ts_count(w, C.address), 1);
    assert_int_equal(ts_count(w, C.geo), 1);

    coffer_link al;
    assert_true(read_link(p, P_ADDRESS, &al));
    assert_int_equal(al.class_id, C.address);
    coffer_object *addr = get_obj(w, C.address, al.key);
    assert_string_equal(ts_get_string(addr, A_STREET, NULL), "Main St");
    assert_string_equal(ts_get_string(addr, A_CITY, NULL), "Berlin");
    coffer_link gl;
    assert_true(read_link(addr, A_GEO, &gl));
    assert_int_equal(gl.class_id, C.geo);
    coffer_object *g = get_obj(w, C.geo, gl.key);
    assert_true(ts_get_double(g, G_LAT) == 52.5);
    assert_true(ts_get_double(g, G_LON) == 13.4);

    /* embedded objects can be modified in place */
    set_prop(addr, A_CITY, ts_str("Potsdam"));
    /* an embedded object may link to a top-level object */
    coffer_object *dog = new_dog(w, "Rex", 2);
    set_prop(addr, A_DOG, link_to(dog));
    uint64_t n = 0;
    assert_ok(coffer_object_backlink_count_from(dog, C.address, A_DOG, &n));
    assert_int_equal(n, 1);
    ts_commit(w);

    if (env->mode != TS_MEMORY)
        reopen(env);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    p = find_person(r, 1);
    assert_true(read_link(p, P_ADDRESS, &al));
    addr = get_obj(r, C.address, al.key);
    assert_string_equal(ts_get_string(addr, A_CITY, NULL), "Potsdam");
    assert_link(addr, A_DOG, C.dog, coffer_object_key_of(get_obj(r, C.dog, key_of_link(addr, A_DOG))));
    g = get_obj(r, C.geo, key_of_link(addr, A_GEO));
    assert_true(ts_get_double(g, G_LAT) == 52.5);
    /* embedded classes have no primary key */
    coffer_property_id pkp = 0;
    assert_status(coffer_db_primary_key(env->db, C.address, &pkp), COFFER_ERR_NOT_FOUND);
    coffer_txn_free(r);
}

TS_ENV_TEST(test_embedded_replace_and_null)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field gb[2], ab[3];
    coffer_value geo = geo_fields(gb, 1, 2);
    coffer_field f[] = {ts_field(P_ID, coffer_value_int(1)), ts_field(P_ADDRESS, addr_fields(ab, "Old", "X", &geo))};
    coffer_object *p = ts_create(w, C.person, f, 2);
    coffer_object *other = new_person(w, 2, "other");
    set_prop(other, P_ADDRESS, addr_fields(ab, "Other", "Y", NULL));
    coffer_object_key old_addr = key_of_link(p, P_ADDRESS);
    coffer_object_key old_geo = key_of_link(get_obj(w, C.address, old_addr), A_GEO);
    assert_int_equal(ts_count(w, C.address), 2);
    ts_commit(w);

    /* replacing deletes the old embedded object and its own embedded one */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    p = find_person(w, 1);
    set_prop(p, P_ADDRESS, addr_fields(ab, "New", "Z", NULL));
    assert_gone(w, C.address, old_addr);
    assert_gone(w, C.geo, old_geo);
    assert_int_equal(ts_count(w, C.address), 2);
    assert_int_equal(ts_count(w, C.geo), 0);
    coffer_object_key new_addr = key_of_link(p, P_ADDRESS);
    assert_true(new_addr != old_addr);
    assert_string_equal(ts_get_string(get_obj(w, C.address, new_addr), A_STREET, NULL), "New");

    /* with set_fields too */
    coffer_field sf[] = {ts_field(P_NAME, ts_str("renamed")), ts_field(P_ADDRESS, addr_fields(ab, "Newer", "Q", NULL))};
    assert_ok(coffer_object_set_fields(p, sf, 2));
    assert_gone(w, C.address, new_addr);
    new_addr = key_of_link(p, P_ADDRESS);

    /* null deletes it */
    set_prop(p, P_ADDRESS, coffer_value_null());
    assert_gone(w, C.address, new_addr);
    assert_null_link(p, P_ADDRESS);
    assert_int_equal(ts_count(w, C.address), 1);

    /* upsert of the parent with a new embedded value replaces it too */
    coffer_field up[] = {ts_field(P_ID, coffer_value_int(2)), ts_field(P_ADDRESS, addr_fields(ab, "Upserted", "U", NULL))};
    coffer_object_key other_addr = key_of_link(find_person(w, 2), P_ADDRESS);
    assert_ok(coffer_object_create(w, C.person, up, 2, COFFER_UPDATE_ALL, NULL));
    assert_gone(w, C.address, other_addr);
    assert_int_equal(ts_count(w, C.address), 1);
    assert_string_equal(ts_get_string(get_obj(w, C.address, key_of_link(find_person(w, 2), P_ADDRESS)), A_STREET, NULL),
                        "Upserted");
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, C.address), 1);
    assert_int_equal(ts_count(r, C.geo), 0);
    assert_null_link(find_person(r, 1), P_ADDRESS);
    coffer_txn_free(r);
}

/* An existing embedded object cannot be linked from a second place. */
TS_ENV_TEST(test_embedded_link_existing_rejected)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field ab[3];
    coffer_field f[] = {ts_field(P_ID, coffer_value_int(1)), ts_field(P_ADDRESS, addr_fields(ab, "Main", "X", NULL))};
    coffer_object *p1 = ts_create(w, C.person, f, 2);
    coffer_object *p2 = new_person(w, 2, "two");
    coffer_object_key ak = key_of_link(p1, P_ADDRESS);
    coffer_object *addr = get_obj(w, C.address, ak);

    coffer_value v = coffer_value_link(C.address, ak);
    assert_status(coffer_object_set_value(p2, P_ADDRESS, &v), COFFER_ERR_TYPE);
    assert_error_contains("address");
    v = coffer_value_object(addr);
    assert_status(coffer_object_set_value(p2, P_ADDRESS, &v), COFFER_ERR_TYPE);
    assert_error_contains("address");
    coffer_field g[] = {ts_field(P_ID, coffer_value_int(3)), ts_field(P_ADDRESS, v)};
    assert_status(coffer_object_create(w, C.person, g, 2, COFFER_UPDATE_ERROR, NULL), COFFER_ERR_TYPE);
    assert_error_contains("address");
    coffer_list *l = NULL;
    assert_ok(coffer_object_get_list(p2, P_ADDRESSES, &l));
    assert_status(coffer_list_append(l, &v), COFFER_ERR_TYPE);
    assert_error_contains("addresses");
    coffer_map *m = NULL;
    assert_ok(coffer_object_get_map(p2, P_PLACES, &m));
    assert_status(coffer_map_set(m, "home", 4, &v), COFFER_ERR_TYPE);
    assert_error_contains("places");
    /* nor re-assigned to its own parent by link */
    assert_status(coffer_object_set_value(p1, P_ADDRESS, &v), COFFER_ERR_TYPE);

    assert_null_link(p2, P_ADDRESS);
    assert_int_equal(list_count(p2, P_ADDRESSES), 0);
    assert_int_equal(ts_count(w, C.person), 2);
    assert_int_equal(ts_count(w, C.address), 1);
    assert_string_equal(ts_get_string(addr, A_STREET, NULL), "Main");
    assert_link(p1, P_ADDRESS, C.address, ak);

    /* a nested description is of the target class: a wrong field type
     * there is a type error naming the embedded property */
    coffer_field badf[] = {ts_field(A_STREET, ts_str("x")), ts_field(A_GEO, ts_str("not a geo"))};
    coffer_value wrong = coffer_value_fields(badf, 2);
    assert_status(coffer_object_set_value(p2, P_ADDRESS, &wrong), COFFER_ERR_TYPE);
    assert_error_contains("geo");
    assert_null_link(p2, P_ADDRESS);
    assert_int_equal(ts_count(w, C.address), 1);
    coffer_txn_free(w);
}

TS_ENV_TEST(test_embedded_in_collections)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field g1[2], a1[3], a2[3], a3[3];
    coffer_value geo = geo_fields(g1, 10, 20);
    coffer_value addrs[] = {addr_fields(a1, "one", "c1", &geo), addr_fields(a2, "two", "c2", NULL),
                            addr_fields(a3, "three", "c3", NULL)};
    coffer_field h1[3], h2[3];
    coffer_map_entry places[] = {
        {.key = {"home", 4}, .value = addr_fields(h1, "home st", "h", NULL)},
        {.key = {"work", 4}, .value = addr_fields(h2, "work st", "w", NULL)},
    };
    coffer_field f[] = {ts_field(P_ID, coffer_value_int(1)), ts_field(P_ADDRESSES, coffer_value_list(addrs, 3)),
                        ts_field(P_PLACES, coffer_value_map(places, 2))};
    coffer_object *p = ts_create(w, C.person, f, 3);
    assert_int_equal(ts_count(w, C.address), 5);
    assert_int_equal(ts_count(w, C.geo), 1);
    coffer_object_key k[8];
    assert_int_equal(list_keys(p, P_ADDRESSES, C.address, k, 8), 3);
    assert_string_equal(ts_get_string(get_obj(w, C.address, k[1]), A_STREET, NULL), "two");
    coffer_object_key geo_key = key_of_link(get_obj(w, C.address, k[0]), A_GEO);

    coffer_list *l = NULL;
    assert_ok(coffer_object_get_list(p, P_ADDRESSES, &l));
    /* move and swap keep the objects */
    assert_ok(coffer_list_move(l, 0, 2));
    assert_list_keys(p, P_ADDRESSES, C.address, k[1], k[2], k[0]);
    assert_ok(coffer_list_swap(l, 0, 2));
    assert_list_keys(p, P_ADDRESSES, C.address, k[0], k[2], k[1]);
    assert_int_equal(ts_count(w, C.address), 5);
    /* remove deletes */
    assert_ok(coffer_list_remove(l, 2));
    assert_gone(w, C.address, k[1]);
    assert_int_equal(ts_count(w, C.address), 4);
    /* set replaces and deletes the old one with its Geo */
    coffer_field a4[3];
    coffer_value repl = addr_fields(a4, "four", "c4", NULL);
    assert_ok(coffer_list_set(l, 0, &repl));
    assert_gone(w, C.address, k[0]);
    assert_gone(w, C.geo, geo_key);
    assert_int_equal(ts_count(w, C.geo), 0);
    assert_int_equal(ts_count(w, C.address), 4);
    /* append and insert create */
    assert_ok(coffer_list_append(l, &repl));
    assert_ok(coffer_list_insert(l, 0, &repl));
    assert_int_equal(ts_count(w, C.address), 6);
    uint64_t n = 0;
    assert_ok(coffer_list_count(l, &n));
    assert_int_equal(n, 4);
    /* clear deletes them all */
    assert_ok(coffer_list_clear(l));
    assert_int_equal(ts_count(w, C.address), 2);
    /* replacing the whole list deletes the old elements */
    coffer_field r1[3], r2[3], r3[3];
    coffer_value two[] = {addr_fields(r1, "r1", "c", NULL), addr_fields(r2, "r2", "c", NULL)};
    set_prop(p, P_ADDRESSES, coffer_value_list(two, 2));
    assert_int_equal(ts_count(w, C.address), 4);
    assert_int_equal(list_keys(p, P_ADDRESSES, C.address, k, 8), 2);
    coffer_value single[] = {addr_fields(r3, "r3", "c", NULL)};
    set_prop(p, P_ADDRESSES, coffer_value_list(single, 1));
    assert_gone(w, C.address, k[0]);
    assert_gone(w, C.address, k[1]);
    assert_int_equal(ts_count(w, C.address), 3);
    set_prop(p, P_ADDRESSES, coffer_value_list(NULL, 0));
    assert_int_equal(ts_count(w, C.address), 2);

    /* maps */
    coffer_map *m = NULL;
    assert_ok(coffer_object_get_map(p, P_PLACES, &m));
    coffer_value v;
    assert_ok(coffer_map_get(m, "home", SIZE_MAX, &v));
    assert_int_equal(v.type, COFFER_TYPE_LINK);
    coffer_object_key home = v.u.link.key;
    assert_ok(coffer_map_get(m, "work", SIZE_MAX, &v));
    coffer_object_key work = v.u.link.key;
    assert_string_equal(ts_get_string(get_obj(w, C.address, home), A_STREET, NULL), "home st");
    assert_ok(coffer_map_set(m, "home", SIZE_MAX, &repl));
    assert_gone(w, C.address, home);
    assert_int_equal(ts_count(w, C.address), 2);
    int removed = 0;
    assert_ok(coffer_map_remove(m, "work", SIZE_MAX, &removed));
    assert_int_equal(removed, 1);
    assert_gone(w, C.address, work);
    coffer_value null = coffer_value_null();
    assert_ok(coffer_map_set(m, "empty", SIZE_MAX, &null));
    assert_ok(coffer_map_set(m, "x", SIZE_MAX, &repl));
    assert_int_equal(ts_count(w, C.address), 2);
    assert_ok(coffer_map_set(m, "x", SIZE_MAX, &null));
    assert_int_equal(ts_count(w, C.address), 1);
    assert_ok(coffer_map_clear(m));
    assert_int_equal(ts_count(w, C.address), 0);
    ts_commit(w);
    assert_int_equal(ts_count_of(env->db, "Address"), 0);
}

/* Deleting a parent deletes its embedded objects, recursively. */
TS_ENV_TEST(test_delete_cascades_embedded)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field g1[2], g2[2], g3[2], a1[3], a2[3], a3[3], a4[3], a5[3];
    coffer_value geo1 = geo_fields(g1, 1, 1), geo2 = geo_fields(g2, 2, 2), geo3 = geo_fields(g3, 3, 3);
    coffer_value addrs[] = {addr_fields(a2, "l1", "c", &geo2), addr_fields(a3, "l2", "c", NULL)};
    coffer_map_entry places[] = {{.key = {"k", 1}, .value = addr_fields(a4, "m1", "c", &geo3)}};
    coffer_field f[] = {ts_field(P_ID, coffer_value_int(1)), ts_field(P_ADDRESS, addr_fields(a1, "a", "c", &geo1)),
                        ts_field(P_ADDRESSES, coffer_value_list(addrs, 2)), ts_field(P_PLACES, coffer_value_map(places, 1))};
    ts_create(w, C.person, f, 4);
    coffer_object *p2 = new_person(w, 2, "keeps");
    set_prop(p2, P_ADDRESS, addr_fields(a5, "kept", "c", NULL));
    assert_int_equal(ts_count(w, C.address), 5);
    assert_int_equal(ts_count(w, C.geo), 3);
    ts_commit(w);

    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_delete(find_person(w, 1)));
    assert_int_equal(ts_count(w, C.address), 1);
    assert_int_equal(ts_count(w, C.geo), 0);
    p2 = find_person(w, 2);
    assert_string_equal(ts_get_string(get_obj(w, C.address, key_of_link(p2, P_ADDRESS)), A_STREET, NULL), "kept");
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_int_equal(ts_count(r, C.address), 1);
    assert_int_equal(ts_count(r, C.geo), 0);
    coffer_txn_free(r);

    /* class_clear of the parent class cascades too */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field a6[3];
    coffer_object *p3 = new_person(w, 3, "three");
    coffer_value geo4 = geo_fields(g1, 4, 4);
    set_prop(p3, P_ADDRESS, addr_fields(a6, "three", "c", &geo4));
    assert_ok(coffer_class_clear(w, C.person));
    assert_int_equal(ts_count(w, C.person), 0);
    assert_int_equal(ts_count(w, C.address), 0);
    assert_int_equal(ts_count(w, C.geo), 0);
    ts_commit(w);
    assert_int_equal(ts_count_of(env->db, "Address"), 0);
}

/* ------------------------------------------------------------------------ */
/* Deleting link targets                                                     */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_delete_nullifies_links)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *d1 = new_dog(w, "d1", 1), *d2 = new_dog(w, "d2", 2), *d3 = new_dog(w, "d3", 3);
    coffer_object_key k1 = coffer_object_key_of(d1), k2 = coffer_object_key_of(d2), k3 = coffer_object_key_of(d3);
    coffer_value pets[] = {link_to(d1), link_to(d2), link_to(d1), link_to(d3)};
    coffer_value dset[] = {link_to(d1), link_to(d2)};
    coffer_map_entry dmap[] = {{.key = {"a", 1}, .value = link_to(d1)}, {.key = {"b", 1}, .value = link_to(d2)}};
    coffer_field ab[4];
    ab[0] = ts_field(A_STREET, ts_str("s"));
    ab[1] = ts_field(A_DOG, link_to(d1));
    coffer_field f[] = {
        ts_field(P_ID, coffer_value_int(1)),        ts_field(P_DOG, link_to(d1)),
        ts_field(P_PETS, coffer_value_list(pets, 4)), ts_field(P_DOG_SET, coffer_value_list(dset, 2)),
        ts_field(P_DOG_MAP, coffer_value_map(dmap, 2)), ts_field(P_ANY, link_to(d1)),
        ts_field(P_ADDRESS, coffer_value_fields(ab, 2)),
    };
    coffer_object *p1 = ts_create(w, C.person, f, 7);
    coffer_object_key pk1 = coffer_object_key_of(p1);
    coffer_object *p2 = new_person(w, 2, "two");
    coffer_object_key pk2 = coffer_object_key_of(p2);
    coffer_value fr[] = {link_to(p1), link_to(p2), link_to(p1)};
    set_prop(p2, P_FRIENDS, coffer_value_list(fr, 3));
    uint64_t all = 0;
    assert_ok(coffer_object_backlink_count_all(d1, &all));
    assert_int_equal(all, 7); /* dog, pets x2, set, map, any, address.dog */
    ts_commit(w);

    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_object_delete(get_obj(w, C.dog, k1)));
    p1 = find_person(w, 1);
    assert_null_link(p1, P_DOG);
    assert_list_keys(p1, P_PETS, C.dog, k2, k3);
    coffer_set *s = NULL;
    assert_ok(coffer_object_get_set(p1, P_DOG_SET, &s));
    uint64_t n = 0;
    assert_ok(coffer_set_count(s, &n));
    assert_int_equal(n, 1);
    coffer_value v;
    assert_ok(coffer_set_get(s, 0, &v));
    assert_int_equal(v.type, COFFER_TYPE_LINK);
    assert_int_equal(v.u.link.key, k2);
    coffer_map *m = NULL;
    assert_ok(coffer_object_get_map(p1, P_DOG_MAP, &m));
    assert_ok(coffer_map_count(m, &n));
    assert_int_equal(n, 2);
    assert_ok(coffer_map_get(m, "a", 1, &v));
    assert_int_equal(v.type, COFFER_TYPE_NULL);
    assert_ok(coffer_map_get(m, "b", 1, &v));
    assert_int_equal(v.type, COFFER_TYPE_LINK);
    assert_int_equal(v.u.link.key, k2);
    assert_true(ts_get_is_null(p1, P_ANY));
    assert_null_link(get_obj(w, C.address, key_of_link(p1, P_ADDRESS)), A_DOG);
    coffer_value lv;
    assert_ok(coffer_object_get_value(p1, P_PETS, &lv));
    assert_int_equal(lv.type, COFFER_TYPE_LIST);
    assert_int_equal(lv.u.list.count, 2);

    /* deleting a Person removes it from lists of Persons, self-links included */
    assert_ok(coffer_object_delete(p1));
    assert_false(coffer_object_is_valid(p1));
    p2 = find_person(w, 2);
    assert_list_keys(p2, P_FRIENDS, C.person, pk2);
    assert_int_equal(ts_count(w, C.address), 0);
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    assert_list_keys(find_person(r, 2), P_FRIENDS, C.person, pk2);
    assert_gone(r, C.person, pk1);
    assert_no_backlinks(get_obj(r, C.dog, k2), D_PET_OF);
    coffer_txn_free(r);

    /* a link nested in a map in a mixed value becomes null */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_map_entry me[] = {{.key = {"x", 1}, .value = coffer_value_link(C.dog, k2)},
                             {.key = {"y", 1}, .value = coffer_value_int(1)}};
    p2 = find_person(w, 2);
    set_prop(p2, P_ANY, coffer_value_map(me, 2));
    assert_ok(coffer_object_delete(get_obj(w, C.dog, k2)));
    coffer_map *am = NULL;
    assert_ok(coffer_object_get_map(p2, P_ANY, &am));
    assert_ok(coffer_map_count(am, &n));
    assert_int_equal(n, 2);
    assert_ok(coffer_map_get(am, "x", 1, &v));
    assert_int_equal(v.type, COFFER_TYPE_NULL);
    assert_ok(coffer_map_get(am, "y", 1, &v));
    assert_int_equal(v.type, COFFER_TYPE_INT);
    ts_commit(w);
}

TS_ENV_TEST(test_class_clear_nullifies_links)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *d1 = new_dog(w, "d1", 1), *d2 = new_dog(w, "d2", 2);
    coffer_object *p = new_person(w, 1, "p");
    set_prop(p, P_DOG, link_to(d1));
    coffer_value pets[] = {link_to(d1), link_to(d2)};
    set_prop(p, P_PETS, coffer_value_list(pets, 2));
    set_prop(p, P_DOG_SET, coffer_value_list(pets, 2));
    coffer_map_entry dm[] = {{.key = {"a", 1}, .value = link_to(d2)}};
    set_prop(p, P_DOG_MAP, coffer_value_map(dm, 1));
    ts_commit(w);

    w = ts_begin(env->db, COFFER_TXN_WRITE);
    assert_ok(coffer_class_clear(w, C.dog));
    p = find_person(w, 1);
    assert_null_link(p, P_DOG);
    assert_list_empty(p, P_PETS);
    coffer_set *s = NULL;
    assert_ok(coffer_object_get_set(p, P_DOG_SET, &s));
    uint64_t n = 9;
    assert_ok(coffer_set_count(s, &n));
    assert_int_equal(n, 0);
    coffer_map *m = NULL;
    assert_ok(coffer_object_get_map(p, P_DOG_MAP, &m));
    coffer_value v;
    assert_ok(coffer_map_get(m, "a", 1, &v));
    assert_int_equal(v.type, COFFER_TYPE_NULL);
    ts_commit(w);
}

/* ------------------------------------------------------------------------ */
/* Backlinks                                                                 */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_backlinks_basic)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *d = new_dog(w, "d", 1), *d2 = new_dog(w, "d2", 2);
    coffer_object *p1 = new_person(w, 1, "p1"), *p2 = new_person(w, 2, "p2"), *p3 = new_person(w, 3, "p3");
    coffer_object_key k1 = coffer_object_key_of(p1), k2 = coffer_object_key_of(p2), k3 = coffer_object_key_of(p3);
    set_prop(p3, P_DOG, link_to(d)); /* set in reverse key order on purpose */
    set_prop(p1, P_DOG, link_to(d));
    coffer_value twice[] = {link_to(d), link_to(d2), link_to(d)};
    set_prop(p3, P_PETS, coffer_value_list(twice, 1));
    set_prop(p1, P_PETS, coffer_value_list(twice, 3));
    coffer_value one[] = {link_to(d)};
    set_prop(p2, P_DOG_SET, coffer_value_list(one, 1));
    coffer_map_entry me[] = {{.key = {"a", 1}, .value = link_to(d)}, {.key = {"b", 1}, .value = link_to(d)}};
    set_prop(p2, P_DOG_MAP, coffer_value_map(me, 2));
    set_prop(p2, P_ANY, link_to(d));

    assert_backlinks(d, D_OWNERS, k1, k3);
    assert_backlinks(d, D_PET_OF, k1, k1, k3);
    assert_backlinks(d, D_IN_SETS, k2);
    assert_backlinks(d2, D_PET_OF, k1);
    assert_no_backlinks(d2, D_OWNERS);

    /* the linking-objects property reads as a list with the count */
    coffer_value v;
    assert_ok(coffer_object_get_value(d, D_PET_OF, &v));
    assert_int_equal(v.type, COFFER_TYPE_LIST);
    assert_int_equal(v.u.list.count, 3);

    /* backlinks from undeclared origins */
    uint64_t n = 0;
    assert_ok(coffer_object_backlink_count_from(d, C.person, P_DOG_MAP, &n));
    assert_int_equal(n, 2);
    coffer_iter *it = NULL;
    coffer_object_key *keys = NULL;
    assert_ok(coffer_object_backlinks_from(d, C.person, P_DOG_MAP, &it));
    assert_int_equal(ts_collect_keys(it, &keys), 2);
    assert_int_equal(keys[0], k2);
    assert_int_equal(keys[1], k2);
    free(keys);
    assert_ok(coffer_object_backlink_count_from(d, C.person, P_ANY, &n));
    assert_int_equal(n, 1);
    assert_ok(coffer_object_backlinks_from(d, C.person, P_PETS, &it));
    assert_int_equal(ts_collect_keys(it, &keys), 3);
    assert_int_equal(keys[0], k1);
    assert_int_equal(keys[1], k1);
    assert_int_equal(keys[2], k3);
    free(keys);
    assert_ok(coffer_object_backlink_count_from(d, C.person, P_FRIENDS, &n));
    assert_int_equal(n, 0);
    assert_ok(coffer_object_backlink_count_all(d, &n));
    assert_int_equal(n, 2 + 3 + 1 + 2 + 1);
    assert_ok(coffer_object_backlink_count_all(d2, &n));
    assert_int_equal(n, 1);
    assert_ok(coffer_object_backlink_count_all(p1, &n));
    assert_int_equal(n, 0);
    ts_commit(w);

    /* the same in a read transaction, after reopening */
    if (env->mode != TS_MEMORY)
        reopen(env);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *rd = get_obj(r, C.dog, coffer_object_key_of(get_obj(r, C.dog, key_of_link(find_person(r, 1), P_DOG))));
    assert_backlinks(rd, D_OWNERS, k1, k3);
    assert_backlinks(rd, D_PET_OF, k1, k1, k3);
    assert_ok(coffer_object_backlink_count_all(rd, &n));
    assert_int_equal(n, 9);
    coffer_txn_free(r);
}

TS_ENV_TEST(test_backlinks_errors)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *d = new_dog(w, "d", 1);
    coffer_object *p = new_person(w, 1, "p");
    coffer_iter *it = NULL;
    uint64_t n = 0;

    /* not a linking-objects property */
    assert_status(coffer_object_backlinks(d, D_NAME, &it), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("name");
    assert_status(coffer_object_backlink_count(d, D_AGE, &n), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("age");
    assert_status(coffer_object_backlinks(d, D_COUNT + 5, &it), COFFER_ERR_INVALID_ARGUMENT);
    /* a Person has no linking-objects property */
    assert_status(coffer_object_backlinks(p, P_DOG, &it), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("dog");
    /* origin properties that cannot hold links */
    assert_status(coffer_object_backlinks_from(d, C.person, P_NAME, &it), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("name");
    assert_status(coffer_object_backlink_count_from(d, C.person, P_ID, &n), COFFER_ERR_INVALID_ARGUMENT);
    assert_error_contains("id");
    assert_status(coffer_object_backlinks_from(d, C.person, P_COUNT + 3, &it), COFFER_ERR_INVALID_ARGUMENT);
    assert_not_ok(coffer_object_backlinks_from(d, 999, 0, &it));
    /* NULL arguments */
    assert_status(coffer_object_backlinks(NULL, D_OWNERS, &it), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_backlinks(d, D_OWNERS, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_backlink_count(d, D_OWNERS, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_object_backlink_count_all(NULL, &n), COFFER_ERR_INVALID_ARGUMENT);

    /* a deleted object */
    assert_ok(coffer_object_delete(d));
    assert_status(coffer_object_backlinks(d, D_OWNERS, &it), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_object_backlink_count(d, D_OWNERS, &n), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_object_backlink_count_all(d, &n), COFFER_ERR_NOT_FOUND);
    assert_status(coffer_object_backlinks_from(d, C.person, P_DOG, &it), COFFER_ERR_NOT_FOUND);
    coffer_txn_free(w);
}

/* Backlinks stay exact through inserts, moves, replacements and deletes. */
TS_ENV_TEST(test_backlinks_track_changes)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *a = new_dog(w, "a", 1), *b = new_dog(w, "b", 2);
    coffer_object *p1 = new_person(w, 1, "p1"), *p2 = new_person(w, 2, "p2");
    coffer_object_key k1 = coffer_object_key_of(p1), k2 = coffer_object_key_of(p2);

    /* moving a single link */
    set_prop(p1, P_DOG, link_to(a));
    set_prop(p2, P_DOG, link_to(a));
    assert_backlinks(a, D_OWNERS, k1, k2);
    set_prop(p2, P_DOG, link_to(b));
    assert_backlinks(a, D_OWNERS, k1);
    assert_backlinks(b, D_OWNERS, k2);
    set_prop(p1, P_DOG, link_to(a)); /* the same value again: still one */
    assert_backlinks(a, D_OWNERS, k1);
    set_prop(p1, P_DOG, coffer_value_null());
    assert_no_backlinks(a, D_OWNERS);

    /* list operations */
    coffer_list *l = NULL;
    assert_ok(coffer_object_get_list(p2, P_PETS, &l));
    coffer_value va = link_to(a), vb = link_to(b);
    assert_ok(coffer_list_append(l, &va));
    assert_ok(coffer_list_append(l, &vb));
    assert_ok(coffer_list_insert(l, 0, &va)); /* [a, a, b] */
    assert_backlinks(a, D_PET_OF, k2, k2);
    assert_backlinks(b, D_PET_OF, k2);
    assert_ok(coffer_list_set(l, 1, &vb)); /* [a, b, b] */
    assert_backlinks(a, D_PET_OF, k2);
    assert_backlinks(b, D_PET_OF, k2, k2);
    assert_ok(coffer_list_move(l, 0, 2)); /* [b, b, a] */
    assert_ok(coffer_list_swap(l, 0, 2)); /* [a, b, b] */
    assert_backlinks(a, D_PET_OF, k2);
    assert_backlinks(b, D_PET_OF, k2, k2);
    assert_ok(coffer_list_remove(l, 1)); /* [a, b] */
    assert_backlinks(b, D_PET_OF, k2);
    coffer_list *l1 = NULL;
    assert_ok(coffer_object_get_list(p1, P_PETS, &l1));
    assert_ok(coffer_list_append(l1, &vb));
    assert_backlinks(b, D_PET_OF, k1, k2);
    assert_ok(coffer_list_clear(l));
    assert_no_backlinks(a, D_PET_OF);
    assert_backlinks(b, D_PET_OF, k1);
    /* replacing the whole list */
    coffer_value aa[] = {va, va, va};
    set_prop(p1, P_PETS, coffer_value_list(aa, 3));
    assert_backlinks(a, D_PET_OF, k1, k1, k1);
    assert_no_backlinks(b, D_PET_OF);

    /* sets */
    coffer_set *s = NULL;
    assert_ok(coffer_object_get_set(p1, P_DOG_SET, &s));
    int ins = 0;
    assert_ok(coffer_set_insert(s, &va, &ins));
    assert_int_equal(ins, 1);
    assert_ok(coffer_set_insert(s, &va, &ins));
    assert_int_equal(ins, 0);
    assert_backlinks(a, D_IN_SETS, k1);
    int rem = 0;
    assert_ok(coffer_set_remove(s, &va, &rem));
    assert_int_equal(rem, 1);
    assert_no_backlinks(a, D_IN_SETS);

    /* maps and mixed, through backlinks_from */
    coffer_map *m = NULL;
    assert_ok(coffer_object_get_map(p2, P_DOG_MAP, &m));
    assert_ok(coffer_map_set(m, "x", 1, &va));
    assert_ok(coffer_map_set(m, "y", 1, &va));
    uint64_t n = 0;
    assert_ok(coffer_object_backlink_count_from(a, C.person, P_DOG_MAP, &n));
    assert_int_equal(n, 2);
    assert_ok(coffer_map_set(m, "x", 1, &vb));
    assert_ok(coffer_object_backlink_count_from(a, C.person, P_DOG_MAP, &n));
    assert_int_equal(n, 1);
    assert_ok(coffer_map_remove(m, "y", 1, NULL));
    assert_ok(coffer_object_backlink_count_from(a, C.person, P_DOG_MAP, &n));
    assert_int_equal(n, 0);
    coffer_value nested[] = {va, coffer_value_int(3), va};
    set_prop(p2, P_ANY, coffer_value_list(nested, 3));
    assert_ok(coffer_object_backlink_count_from(a, C.person, P_ANY, &n));
    assert_int_equal(n, 2);
    set_prop(p2, P_ANY, coffer_value_int(1));
    assert_ok(coffer_object_backlink_count_from(a, C.person, P_ANY, &n));
    assert_int_equal(n, 0);

    /* deleting an origin removes its links */
    assert_ok(coffer_object_delete(p1));
    assert_no_backlinks(a, D_PET_OF);
    assert_ok(coffer_object_backlink_count_all(a, &n));
    assert_int_equal(n, 0);
    assert_ok(coffer_object_backlink_count_all(b, &n));
    assert_int_equal(n, 2); /* p2.dog and p2.dogMap["x"] */
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    coffer_object *rb = get_obj(r, C.dog, coffer_object_key_of(get_obj(r, C.dog, key_of_link(find_person(r, 2), P_DOG))));
    assert_backlinks(rb, D_OWNERS, k2);
    assert_ok(coffer_object_backlink_count_all(rb, &n));
    assert_int_equal(n, 2);
    coffer_txn_free(r);
}

/* Random link changes checked against a model after every step. */
#define RB_PERSONS 8
#define RB_DOGS 6
#define RB_MAXPETS 12

typedef struct {
    int64_t id;
    coffer_object_key key;
    int dog; /* index into dogs, -1 for none */
    int pets[RB_MAXPETS];
    int npets;
} rb_person;

typedef struct {
    coffer_object_key key;
} rb_dog;

static int cmp_key(const void *a, const void *b)
{
    coffer_object_key x = *(const coffer_object_key *)a, y = *(const coffer_object_key *)b;
    return x < y ? -1 : x > y;
}

static void rb_check(coffer_txn *txn, rb_person *ps, rb_dog *ds)
{
    for (int d = 0; d < RB_DOGS; d++) {
        coffer_object_key owners[RB_PERSONS], petof[RB_PERSONS * RB_MAXPETS];
        size_t no = 0, np = 0;
        for (int i = 0; i < RB_PERSONS; i++) {
            if (ps[i].dog == d)
                owners[no++] = ps[i].key;
            for (int j = 0; j < ps[i].npets; j++)
                if (ps[i].pets[j] == d)
                    petof[np++] = ps[i].key;
        }
        qsort(owners, no, sizeof owners[0], cmp_key);
        qsort(petof, np, sizeof petof[0], cmp_key);
        coffer_object *dog = get_obj(txn, C.dog, ds[d].key);
        coffer_object_key got[RB_PERSONS * RB_MAXPETS];
        size_t m = backlink_keys(dog, D_OWNERS, got, RB_PERSONS * RB_MAXPETS);
        assert_int_equal(m, no);
        assert_int_equal(backlink_count(dog, D_OWNERS), no);
        assert_memory_equal(got, owners, no * sizeof got[0]);
        m = backlink_keys(dog, D_PET_OF, got, RB_PERSONS * RB_MAXPETS);
        assert_int_equal(m, np);
        assert_int_equal(backlink_count(dog, D_PET_OF), np);
        assert_memory_equal(got, petof, np * sizeof got[0]);
        uint64_t all = 0;
        assert_ok(coffer_object_backlink_count_all(dog, &all));
        assert_int_equal(all, no + np);
        coffer_object_release(dog);
    }
    for (int i = 0; i < RB_PERSONS; i++) {
        coffer_object *p = get_obj(txn, C.person, ps[i].key);
        if (ps[i].dog < 0)
            assert_null_link(p, P_DOG);
        else
            assert_link(p, P_DOG, C.dog, ds[ps[i].dog].key);
        coffer_object_key k[RB_MAXPETS];
        size_t n = list_keys(p, P_PETS, C.dog, k, RB_MAXPETS);
        assert_int_equal(n, ps[i].npets);
        for (int j = 0; j < ps[i].npets; j++)
            assert_int_equal(k[j], ds[ps[i].pets[j]].key);
        coffer_object_release(p);
    }
}

TS_ENV_TEST(test_backlinks_random)
{
    ts_seed(20240611);
    rb_person ps[RB_PERSONS];
    rb_dog ds[RB_DOGS];
    int64_t next_id = 1;
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    for (int i = 0; i < RB_PERSONS; i++) {
        ps[i].id = next_id++;
        ps[i].key = coffer_object_key_of(new_person(w, ps[i].id, "p"));
        ps[i].dog = -1;
        ps[i].npets = 0;
    }
    for (int d = 0; d < RB_DOGS; d++)
        ds[d].key = coffer_object_key_of(new_dog(w, "d", d));

    for (int step = 0; step < 400; step++) {
        int i = (int)ts_rand_below(RB_PERSONS), d = (int)ts_rand_below(RB_DOGS);
        rb_person *p = &ps[i];
        coffer_object *po = get_obj(w, C.person, p->key);
        coffer_value dv = coffer_value_link(C.dog, ds[d].key);
        coffer_list *l = NULL;
        assert_ok(coffer_object_get_list(po, P_PETS, &l));
        uint64_t op = ts_rand_below(10);
        if (op == 0) { /* set the dog */
            set_prop(po, P_DOG, dv);
            p->dog = d;
        } else if (op == 1) { /* clear the dog */
            set_prop(po, P_DOG, coffer_value_null());
            p->dog = -1;
        } else if (op == 2 && p->npets < RB_MAXPETS) { /* append */
            assert_ok(coffer_list_append(l, &dv));
            p->pets[p->npets++] = d;
        } else if (op == 3 && p->npets < RB_MAXPETS) { /* insert */
            int at = (int)ts_rand_below((uint64_t)p->npets + 1);
            assert_ok(coffer_list_insert(l, (uint64_t)at, &dv));
            memmove(&p->pets[at + 1], &p->pets[at], (size_t)(p->npets - at) * sizeof(int));
            p->pets[at] = d;
            p->npets++;
        } else if (op == 4 && p->npets > 0) { /* remove */
            int at = (int)ts_rand_below((uint64_t)p->npets);
            assert_ok(coffer_list_remove(l, (uint64_t)at));
            memmove(&p->pets[at], &p->pets[at + 1], (size_t)(p->npets - at - 1) * sizeof(int));
            p->npets--;
        } else if (op == 5 && p->npets > 0) { /* set */
            int at = (int)ts_rand_below((uint64_t)p->npets);
            assert_ok(coffer_list_set(l, (uint64_t)at, &dv));
            p->pets[at] = d;
        } else if (op == 6 && p->npets > 1) { /* move to another person's list */
            int at = (int)ts_rand_below((uint64_t)p->npets);
            int j = (int)ts_rand_below(RB_PERSONS);
            if (j != i && ps[j].npets < RB_MAXPETS) {
                coffer_object *qo = get_obj(w, C.person, ps[j].key);
                coffer_list *lq = NULL;
                assert_ok(coffer_object_get_list(qo, P_PETS, &lq));
                coffer_value moved = coffer_value_link(C.dog, ds[p->pets[at]].key);
                assert_ok(coffer_list_append(lq, &moved));
                ps[j].pets[ps[j].npets++] = p->pets[at];
                coffer_list_release(lq);
                coffer_object_release(qo);
                assert_ok(coffer_list_remove(l, (uint64_t)at));
                memmove(&p->pets[at], &p->pets[at + 1], (size_t)(p->npets - at - 1) * sizeof(int));
                p->npets--;
            }
        } else if (op == 7) { /* delete the dog and make a new one in its place */
            coffer_list_release(l);
            l = NULL;
            coffer_object *dog = get_obj(w, C.dog, ds[d].key);
            assert_ok(coffer_object_delete(dog));
            coffer_object_release(dog);
            for (int k = 0; k < RB_PERSONS; k++) {
                if (ps[k].dog == d)
                    ps[k].dog = -1;
                int out = 0;
                for (int j = 0; j < ps[k].npets; j++)
                    if (ps[k].pets[j] != d)
                        ps[k].pets[out++] = ps[k].pets[j];
                ps[k].npets = out;
            }
            ds[d].key = coffer_object_key_of(new_dog(w, "d", step));
        } else if (op == 8) { /* delete the person and make a new one in its place */
            coffer_list_release(l);
            l = NULL;
            assert_ok(coffer_object_delete(po));
            p->id = next_id++;
            p->key = coffer_object_key_of(new_person(w, p->id, "p"));
            p->dog = -1;
            p->npets = 0;
        } else if (op == 9 && p->npets > 1) { /* move and swap inside the list */
            int from = (int)ts_rand_below((uint64_t)p->npets), to = (int)ts_rand_below((uint64_t)p->npets);
            assert_ok(coffer_list_move(l, (uint64_t)from, (uint64_t)to));
            int v = p->pets[from];
            memmove(&p->pets[from], &p->pets[from + 1], (size_t)(p->npets - from - 1) * sizeof(int));
            memmove(&p->pets[to + 1], &p->pets[to], (size_t)(p->npets - 1 - to) * sizeof(int));
            p->pets[to] = v;
            int x = (int)ts_rand_below((uint64_t)p->npets), y = (int)ts_rand_below((uint64_t)p->npets);
            assert_ok(coffer_list_swap(l, (uint64_t)x, (uint64_t)y));
            int t = p->pets[x];
            p->pets[x] = p->pets[y];
            p->pets[y] = t;
        }
        coffer_list_release(l);
        coffer_object_release(po);
        rb_check(w, ps, ds);
        if (step == 199) {
            ts_commit(w);
            coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
            rb_check(r, ps, ds);
            coffer_txn_free(r);
            w = ts_begin(env->db, COFFER_TXN_WRITE);
        }
    }
    ts_commit(w);
    if (env->mode != TS_MEMORY)
        reopen(env);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    rb_check(r, ps, ds);
    coffer_txn_free(r);
}

/* ------------------------------------------------------------------------ */
/* Transactions                                                              */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_abort_discards_link_changes)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *d1 = new_dog(w, "d1", 1), *d2 = new_dog(w, "d2", 2);
    coffer_object_key k1 = coffer_object_key_of(d1), k2 = coffer_object_key_of(d2);
    coffer_object *p = new_person(w, 1, "p");
    coffer_object_key pk = coffer_object_key_of(p);
    set_prop(p, P_DOG, link_to(d1));
    coffer_value pets[] = {link_to(d1)};
    set_prop(p, P_PETS, coffer_value_list(pets, 1));
    coffer_field ab[3];
    set_prop(p, P_ADDRESS, addr_fields(ab, "kept", "c", NULL));
    coffer_object_key ak = key_of_link(p, P_ADDRESS);
    ts_commit(w);

    w = ts_begin(env->db, COFFER_TXN_WRITE);
    p = find_person(w, 1);
    set_prop(p, P_DOG, coffer_value_link(C.dog, k2));
    coffer_list *l = NULL;
    assert_ok(coffer_object_get_list(p, P_PETS, &l));
    coffer_value v2 = coffer_value_link(C.dog, k2);
    assert_ok(coffer_list_append(l, &v2));
    set_prop(p, P_ADDRESS, addr_fields(ab, "discarded", "c", NULL));
    coffer_field nd[] = {ts_field(D_NAME, ts_str("nested"))};
    coffer_field np[] = {ts_field(P_ID, coffer_value_int(2)), ts_field(P_DOG, coffer_value_fields(nd, 1))};
    assert_ok(coffer_object_create(w, C.person, np, 2, COFFER_UPDATE_ERROR, NULL));
    assert_ok(coffer_object_delete(get_obj(w, C.dog, k1)));
    assert_ok(coffer_txn_abort(w));
    coffer_txn_free(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    p = find_person(r, 1);
    assert_int_equal(coffer_object_key_of(p), pk);
    assert_link(p, P_DOG, C.dog, k1);
    assert_list_keys(p, P_PETS, C.dog, k1);
    assert_link(p, P_ADDRESS, C.address, ak);
    assert_string_equal(ts_get_string(get_obj(r, C.address, ak), A_STREET, NULL), "kept");
    assert_int_equal(ts_count(r, C.person), 1);
    assert_int_equal(ts_count(r, C.dog), 2);
    assert_int_equal(ts_count(r, C.address), 1);
    coffer_object *rd1 = get_obj(r, C.dog, k1);
    assert_backlinks(rd1, D_OWNERS, pk);
    assert_backlinks(rd1, D_PET_OF, pk);
    assert_no_backlinks(get_obj(r, C.dog, k2), D_OWNERS);
    coffer_txn_free(r);
}

TS_ENV_TEST(test_read_txn_rejects_link_writes)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *d = new_dog(w, "d", 1);
    coffer_object_key dk = coffer_object_key_of(d);
    coffer_object *p = new_person(w, 1, "p");
    set_prop(p, P_DOG, link_to(d));
    ts_commit(w);

    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    p = find_person(r, 1);
    coffer_value v = coffer_value_null();
    assert_status(coffer_object_set_value(p, P_DOG, &v), COFFER_ERR_NOT_IN_WRITE);
    coffer_field nd[] = {ts_field(D_NAME, ts_str("x"))};
    v = coffer_value_fields(nd, 1);
    assert_status(coffer_object_set_value(p, P_DOG, &v), COFFER_ERR_NOT_IN_WRITE);
    coffer_object *rd = get_obj(r, C.dog, dk);
    assert_status(coffer_object_delete(rd), COFFER_ERR_NOT_IN_WRITE);
    coffer_list *l = NULL;
    assert_ok(coffer_object_get_list(p, P_PETS, &l));
    v = coffer_value_link(C.dog, dk);
    assert_status(coffer_list_append(l, &v), COFFER_ERR_NOT_IN_WRITE);
    /* reading and backlinks work */
    assert_link(p, P_DOG, C.dog, dk);
    assert_backlinks(rd, D_OWNERS, coffer_object_key_of(p));
    coffer_txn_free(r);
}

/* ------------------------------------------------------------------------ */
/* Schema rules                                                              */
/* ------------------------------------------------------------------------ */

/* Both coffer_schema_validate and coffer_config_set_schema reject the
 * schema with a message containing `needle`. */
#define expect_schema_error(classes, n, needle, line) \
    ts_check_schema_status((classes), (n), COFFER_ERR_SCHEMA, (needle), NULL, __FILE__, (line))

static void test_schema_validation(void **state)
{
    (void)state;
    assert_ok(coffer_schema_validate(link_schema, LINK_SCHEMA_COUNT));

    static const coffer_property_schema target_props[] = {{.name = "v", .type = COFFER_TYPE_INT}};
    static const coffer_property_schema emb_props[] = {{.name = "e", .type = COFFER_TYPE_INT}};
    /* props[0] is the property under test; props[1] keeps Emb reachable */
    coffer_property_schema props[3];
    coffer_class_schema classes[3] = {
        {.name = "Origin", .properties = props, .property_count = 2},
        {.name = "Target", .properties = target_props, .property_count = 1},
        {.name = "Emb", .properties = emb_props, .property_count = 1, .flags = COFFER_CLASS_EMBEDDED},
    };

    /* a valid base: every kind of link property */
    coffer_property_schema good[] = {
        {.name = "one", .type = COFFER_TYPE_LINK, .flags = OPT, .object_class = "Target"},
        {.name = "many", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_LIST, .object_class = "Target"},
        {.name = "emb", .type = COFFER_TYPE_LINK, .flags = OPT, .object_class = "Emb"},
    };
    memcpy(props, good, sizeof good);
    classes[0].property_count = 3;
    assert_ok(coffer_schema_validate(classes, 3));
    classes[0].property_count = 2;
    props[1] = good[2];
    assert_ok(coffer_schema_validate(classes, 3));

    /* a link without a target class */
    props[0] = (coffer_property_schema){.name = "owner", .type = COFFER_TYPE_LINK, .flags = OPT};
    expect_schema_error(classes, 3, "owner", __LINE__);
    props[0].collection = COFFER_COLLECTION_LIST;
    props[0].flags = 0;
    expect_schema_error(classes, 3, "owner", __LINE__);
    props[0].object_class = "";
    expect_schema_error(classes, 3, "owner", __LINE__);

    /* a target class not in the schema */
    props[0] = (coffer_property_schema){.name = "ghostLink", .type = COFFER_TYPE_LINK, .flags = OPT, .object_class = "Ghost"};
    expect_schema_error(classes, 3, "ghostLink", __LINE__);
    props[0].collection = COFFER_COLLECTION_MAP;
    expect_schema_error(classes, 3, "ghostLink", __LINE__);

    /* a set of embedded objects (a list and a map are fine) */
    props[0] = (coffer_property_schema){.name = "embSet", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_SET,
                                        .object_class = "Emb"};
    expect_schema_error(classes, 3, "embSet", __LINE__);
    props[0].collection = COFFER_COLLECTION_LIST;
    assert_ok(coffer_schema_validate(classes, 3));
    props[0].collection = COFFER_COLLECTION_MAP;
    props[0].flags = OPT;
    assert_ok(coffer_schema_validate(classes, 3));

    /* an embedded class with a primary key */
    props[0] = (coffer_property_schema){.name = "v", .type = COFFER_TYPE_INT};
    coffer_property_schema emb_pk[] = {{.name = "key", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY}};
    classes[2].properties = emb_pk;
    classes[2].name = "EmbWithKey";
    props[1].object_class = "EmbWithKey";
    expect_schema_error(classes, 3, "EmbWithKey", __LINE__);
    classes[2].properties = emb_props;
    classes[2].name = "Emb";
    props[1].object_class = "Emb";
    assert_ok(coffer_schema_validate(classes, 3));

    /* linking objects: a valid one first */
    coffer_property_schema origin_props[] = {
        {.name = "target", .type = COFFER_TYPE_LINK, .flags = OPT, .object_class = "Target"},
        {.name = "targets", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_LIST, .object_class = "Target"},
        {.name = "label", .type = COFFER_TYPE_STRING},
        {.name = "emb", .type = COFFER_TYPE_LINK, .flags = OPT, .object_class = "Emb"},
        {.name = "targetMap", .type = COFFER_TYPE_LINK, .flags = OPT, .collection = COFFER_COLLECTION_MAP,
         .object_class = "Target"},
        {.name = "targetSet", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_SET, .object_class = "Target"},
    };
    coffer_property_schema tprops[2] = {
        {.name = "v", .type = COFFER_TYPE_INT},
        {.name = "sources", .type = COFFER_TYPE_LINKING_OBJECTS, .object_class = "Origin", .link_origin_property = "target"},
    };
    coffer_class_schema lo[3] = {
        {.name = "Origin", .properties = origin_props, .property_count = 6},
        {.name = "Target", .properties = tprops, .property_count = 2},
        {.name = "Emb", .properties = emb_props, .property_count = 1, .flags = COFFER_CLASS_EMBEDDED},
    };
    assert_ok(coffer_schema_validate(lo, 3));
    tprops[1].link_origin_property = "targets";
    assert_ok(coffer_schema_validate(lo, 3));
    tprops[1].link_origin_property = "targetSet";
    assert_ok(coffer_schema_validate(lo, 3));
    /* ... whose origin is not a link */
    tprops[1].link_origin_property = "label";
    expect_schema_error(lo, 3, "sources", __LINE__);
    /* ... is a link to another class */
    tprops[1].link_origin_property = "emb";
    expect_schema_error(lo, 3, "sources", __LINE__);
    /* ... is a map of links (not a link, list or set) */
    tprops[1].link_origin_property = "targetMap";
    expect_schema_error(lo, 3, "sources", __LINE__);
    /* ... does not exist */
    tprops[1].link_origin_property = "nothing";
    expect_schema_error(lo, 3, "sources", __LINE__);
    /* ... is missing */
    tprops[1].link_origin_property = NULL;
    expect_schema_error(lo, 3, "sources", __LINE__);
    /* ... names an unknown origin class */
    tprops[1].link_origin_property = "target";
    tprops[1].object_class = "Nowhere";
    expect_schema_error(lo, 3, "sources", __LINE__);
    /* ... names no origin class */
    tprops[1].object_class = NULL;
    expect_schema_error(lo, 3, "sources", __LINE__);
    tprops[1].object_class = "Origin";
    assert_ok(coffer_schema_validate(lo, 3));

    /* an index on a collection */
    props[0] = (coffer_property_schema){.name = "indexedList", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_INDEXED,
                                        .collection = COFFER_COLLECTION_LIST};
    expect_schema_error(classes, 3, "indexedList", __LINE__);
    props[0].collection = COFFER_COLLECTION_SET;
    expect_schema_error(classes, 3, "indexedList", __LINE__);
    props[0].collection = COFFER_COLLECTION_MAP;
    expect_schema_error(classes, 3, "indexedList", __LINE__);
    props[0] = (coffer_property_schema){.name = "indexedLinks", .type = COFFER_TYPE_LINK, .flags = COFFER_PROPERTY_INDEXED,
                                        .collection = COFFER_COLLECTION_LIST, .object_class = "Target"};
    expect_schema_error(classes, 3, "indexedLinks", __LINE__);
    /* a primary key that is a link */
    props[0] = (coffer_property_schema){.name = "linkKey", .type = COFFER_TYPE_LINK, .flags = COFFER_PROPERTY_PRIMARY_KEY,
                                        .object_class = "Target"};
    expect_schema_error(classes, 3, "linkKey", __LINE__);

    /* object_class or link_origin_property on other types */
    props[0] = (coffer_property_schema){.name = "count", .type = COFFER_TYPE_INT, .object_class = "Target"};
    expect_schema_error(classes, 3, "count", __LINE__);
    props[0] = (coffer_property_schema){.name = "anything", .type = COFFER_TYPE_MIXED, .flags = OPT, .object_class = "Target"};
    expect_schema_error(classes, 3, "anything", __LINE__);
    props[0] = (coffer_property_schema){.name = "owner", .type = COFFER_TYPE_LINK, .flags = OPT, .object_class = "Target",
                                        .link_origin_property = "v"};
    expect_schema_error(classes, 3, "owner", __LINE__);
    props[0] = (coffer_property_schema){.name = "title", .type = COFFER_TYPE_STRING, .link_origin_property = "v"};
    expect_schema_error(classes, 3, "title", __LINE__);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_EMPTY(test_schema_validation),
        LINK_TEST(test_link_roundtrip),
        LINK_TEST(test_link_type_errors),
        LINK_TEST(test_link_to_missing_object),
        LINK_TEST(test_link_foreign_object),
        LINK_TEST(test_nested_create),
        LINK_TEST(test_nested_upsert),
        LINK_TEST(test_nested_primary_key_conflict),
        LINK_TEST(test_nested_errors_write_nothing),
        LINK_TEST(test_embedded_create_and_read),
        LINK_TEST(test_embedded_replace_and_null),
        LINK_TEST(test_embedded_link_existing_rejected),
        LINK_TEST(test_embedded_in_collections),
        LINK_TEST(test_delete_cascades_embedded),
        LINK_TEST(test_delete_nullifies_links),
        LINK_TEST(test_class_clear_nullifies_links),
        LINK_TEST(test_backlinks_basic),
        LINK_TEST(test_backlinks_errors),
        LINK_TEST(test_backlinks_track_changes),
        LINK_TEST(test_backlinks_random),
        LINK_TEST(test_abort_discards_link_changes),
        LINK_TEST(test_read_txn_rejects_link_writes),
    };
    return cmocka_run_group_tests_name("links", tests, NULL, NULL);
}
