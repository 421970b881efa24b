/* test_schema.c — schema validation and introspection after open. */
#define _GNU_SOURCE
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static coffer_property_schema prop(const char *name, coffer_type type, uint32_t flags)
{
    coffer_property_schema p;
    memset(&p, 0, sizeof p);
    p.name = name;
    p.type = type;
    p.flags = flags;
    return p;
}

/* Checks the schema both with coffer_schema_validate and with
 * coffer_config_set_schema (which must give the same status). */
#define check_both(classes, n, want, needle1, needle2, line) \
    ts_check_schema_status((classes), (n), (want), (needle1), (needle2), __FILE__, (line))

static void check_one(const char *class_name, const coffer_property_schema *props, size_t n, coffer_status want,
                      const char *needle1, const char *needle2, int line)
{
    coffer_class_schema cls;
    memset(&cls, 0, sizeof cls);
    cls.name = class_name;
    cls.properties = props;
    cls.property_count = n;
    check_both(&cls, 1, want, needle1, needle2, line);
}

/* Flags as compared: a primary key is indexed by definition, so the library
 * may or may not report COFFER_PROPERTY_INDEXED on it. */
static uint32_t flags_of(const coffer_property_schema *p)
{
    uint32_t f = p->flags;
    if (f & COFFER_PROPERTY_PRIMARY_KEY)
        f &= ~(uint32_t)COFFER_PROPERTY_INDEXED;
    return f;
}

/* ------------------------------------------------------------------------ */

static void test_standard_schema_valid(void **state)
{
    (void)state;
    assert_ok(coffer_schema_validate(ts_std_schema, TS_STD_SCHEMA_COUNT));
}

static void test_class_name_length(void **state)
{
    (void)state;
    coffer_property_schema p[] = {prop("v", COFFER_TYPE_INT, 0)};
    char name[128];

    /* 57 ASCII bytes: ok */
    memset(name, 'C', 57);
    name[57] = 0;
    check_one(name, p, 1, COFFER_OK, NULL, NULL, __LINE__);

    /* 57 bytes of multi-byte UTF-8 (19 x 3-byte characters): ok */
    name[0] = 0;
    for (int i = 0; i < 19; i++)
        strcat(name, "\xe6\x97\xa5"); /* U+65E5 */
    assert_int_equal(strlen(name), 57);
    check_one(name, p, 1, COFFER_OK, NULL, NULL, __LINE__);

    /* 58 ASCII bytes: rejected, naming the class */
    snprintf(name, sizeof name, "LongClassName_");
    memset(name + 14, 'x', 58 - 14);
    name[58] = 0;
    check_one(name, p, 1, COFFER_ERR_SCHEMA, "LongClassName_", NULL, __LINE__);

    /* 58 bytes made of 29 two-byte characters (fewer characters than 57): rejected */
    name[0] = 0;
    for (int i = 0; i < 29; i++)
        strcat(name, "\xc3\xa9"); /* é */
    assert_int_equal(strlen(name), 58);
    check_one(name, p, 1, COFFER_ERR_SCHEMA, NULL, NULL, __LINE__);

    /* empty: rejected */
    check_one("", p, 1, COFFER_ERR_SCHEMA, NULL, NULL, __LINE__);
}

static void test_class_name_null(void **state)
{
    (void)state;
    coffer_property_schema p[] = {prop("v", COFFER_TYPE_INT, 0)};
    coffer_class_schema cls = {.name = NULL, .properties = p, .property_count = 1};
    assert_status2(coffer_schema_validate(&cls, 1), COFFER_ERR_SCHEMA, COFFER_ERR_INVALID_ARGUMENT);
}

static void test_property_name_length(void **state)
{
    (void)state;
    char name[128];
    coffer_property_schema p[2];

    memset(name, 'p', 63);
    name[63] = 0;
    p[0] = prop(name, COFFER_TYPE_INT, 0);
    check_one("Cls", p, 1, COFFER_OK, NULL, NULL, __LINE__);

    name[0] = 0;
    for (int i = 0; i < 21; i++)
        strcat(name, "\xe6\x97\xa5");
    assert_int_equal(strlen(name), 63);
    p[0] = prop(name, COFFER_TYPE_STRING, 0);
    check_one("Cls", p, 1, COFFER_OK, NULL, NULL, __LINE__);

    snprintf(name, sizeof name, "longPropertyName_");
    memset(name + 17, 'y', 64 - 17);
    name[64] = 0;
    p[0] = prop("fine", COFFER_TYPE_INT, 0);
    p[1] = prop(name, COFFER_TYPE_INT, 0);
    check_one("LongPropClass", p, 2, COFFER_ERR_SCHEMA, "LongPropClass", "longPropertyName_", __LINE__);

    p[1] = prop("", COFFER_TYPE_INT, 0);
    check_one("EmptyPropClass", p, 2, COFFER_ERR_SCHEMA, "EmptyPropClass", NULL, __LINE__);

    p[1] = prop(NULL, COFFER_TYPE_INT, 0);
    coffer_class_schema cls = {.name = "NullPropClass", .properties = p, .property_count = 2};
    assert_status2(coffer_schema_validate(&cls, 1), COFFER_ERR_SCHEMA, COFFER_ERR_INVALID_ARGUMENT);
}

static void test_duplicates(void **state)
{
    (void)state;
    coffer_property_schema p[] = {prop("alpha", COFFER_TYPE_INT, 0), prop("beta", COFFER_TYPE_STRING, 0)};
    coffer_class_schema two[] = {
        {.name = "DupClass", .properties = p, .property_count = 2},
        {.name = "DupClass", .properties = p, .property_count = 1},
    };
    check_both(two, 2, COFFER_ERR_SCHEMA, "DupClass", NULL, __LINE__);

    coffer_property_schema d[] = {prop("alpha", COFFER_TYPE_INT, 0), prop("gamma", COFFER_TYPE_STRING, 0),
                                  prop("gamma", COFFER_TYPE_INT, 0)};
    check_one("DupPropClass", d, 3, COFFER_ERR_SCHEMA, "DupPropClass", "gamma", __LINE__);

    /* the same property name in two classes is fine */
    coffer_class_schema ok[] = {
        {.name = "A", .properties = p, .property_count = 2},
        {.name = "B", .properties = p, .property_count = 2},
    };
    check_both(ok, 2, COFFER_OK, NULL, NULL, __LINE__);
}

static void test_two_primary_keys(void **state)
{
    (void)state;
    coffer_property_schema p[] = {prop("firstKey", COFFER_TYPE_INT, COFFER_PROPERTY_PRIMARY_KEY),
                                  prop("secondKey", COFFER_TYPE_STRING, COFFER_PROPERTY_PRIMARY_KEY)};
    check_one("TwoKeys", p, 2, COFFER_ERR_SCHEMA, "TwoKeys", NULL, __LINE__);
}

static void test_primary_key_types(void **state)
{
    (void)state;
    const coffer_type bad[] = {COFFER_TYPE_BOOL,   COFFER_TYPE_FLOAT, COFFER_TYPE_DOUBLE,
                               COFFER_TYPE_BINARY, COFFER_TYPE_DATE,  COFFER_TYPE_DECIMAL128};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (int opt = 0; opt < 2; opt++) {
            coffer_property_schema p[] = {
                prop("other", COFFER_TYPE_INT, 0),
                prop("badKey", bad[i], COFFER_PROPERTY_PRIMARY_KEY | (opt ? COFFER_PROPERTY_OPTIONAL : 0))};
            print_message("    primary key of type %s%s\n", coffer_type_name(bad[i]), opt ? "?" : "");
            check_one("BadKeyClass", p, 2, COFFER_ERR_SCHEMA, "BadKeyClass", "badKey", __LINE__);
        }
    }
    const coffer_type good[] = {COFFER_TYPE_INT, COFFER_TYPE_STRING, COFFER_TYPE_OBJECT_ID, COFFER_TYPE_UUID};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        for (int opt = 0; opt < 2; opt++) {
            coffer_property_schema p[] = {
                prop("other", COFFER_TYPE_INT, 0),
                prop("goodKey", good[i], COFFER_PROPERTY_PRIMARY_KEY | (opt ? COFFER_PROPERTY_OPTIONAL : 0))};
            check_one("GoodKeyClass", p, 2, COFFER_OK, NULL, NULL, __LINE__);
        }
    }
}

static void test_index_types(void **state)
{
    (void)state;
    const coffer_type bad[] = {COFFER_TYPE_FLOAT, COFFER_TYPE_DOUBLE, COFFER_TYPE_BINARY, COFFER_TYPE_DECIMAL128};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (int opt = 0; opt < 2; opt++) {
            coffer_property_schema p[] = {
                prop("other", COFFER_TYPE_INT, 0),
                prop("badIndex", bad[i], COFFER_PROPERTY_INDEXED | (opt ? COFFER_PROPERTY_OPTIONAL : 0))};
            print_message("    index on %s%s\n", coffer_type_name(bad[i]), opt ? "?" : "");
            check_one("BadIndexClass", p, 2, COFFER_ERR_SCHEMA, "BadIndexClass", "badIndex", __LINE__);
        }
    }
    const coffer_type good[] = {COFFER_TYPE_BOOL, COFFER_TYPE_INT,       COFFER_TYPE_STRING,
                                COFFER_TYPE_DATE, COFFER_TYPE_OBJECT_ID, COFFER_TYPE_UUID};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        for (int opt = 0; opt < 2; opt++) {
            coffer_property_schema p[] = {
                prop("other", COFFER_TYPE_INT, 0),
                prop("goodIndex", good[i], COFFER_PROPERTY_INDEXED | (opt ? COFFER_PROPERTY_OPTIONAL : 0))};
            check_one("GoodIndexClass", p, 2, COFFER_OK, NULL, NULL, __LINE__);
        }
    }
    /* a primary key may also be flagged indexed */
    coffer_property_schema pk[] = {
        prop("key", COFFER_TYPE_STRING, COFFER_PROPERTY_PRIMARY_KEY | COFFER_PROPERTY_INDEXED)};
    check_one("PkIndexed", pk, 1, COFFER_OK, NULL, NULL, __LINE__);
}

static void test_invalid_types(void **state)
{
    (void)state;
    /* Value-only and reserved types, and a link without its target class. */
    const int bad[] = {COFFER_TYPE_NULL, COFFER_TYPE_LIST, COFFER_TYPE_OBJECT, COFFER_TYPE_FIELDS, 19, 31, 99, -1, COFFER_TYPE_LINK};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        coffer_property_schema p[] = {prop("weirdType", (coffer_type)bad[i], 0)};
        print_message("    property type %d\n", bad[i]);
        check_one("TypeClass", p, 1, COFFER_ERR_SCHEMA, "weirdType", NULL, __LINE__);
    }
}

static void test_reserved_fields(void **state)
{
    (void)state;
    coffer_property_schema p[2];
    p[0] = prop("fine", COFFER_TYPE_INT, 0);

    p[1] = prop("withCollection", COFFER_TYPE_INT, 0);
    p[1].collection = 7; /* no such collection kind */
    check_one("ReservedClass", p, 2, COFFER_ERR_SCHEMA, "ReservedClass", "withCollection", __LINE__);

    p[1] = prop("withObjectClass", COFFER_TYPE_INT, 0);
    p[1].object_class = "Other";
    check_one("ReservedClass", p, 2, COFFER_ERR_SCHEMA, "ReservedClass", "withObjectClass", __LINE__);

    p[1] = prop("withOrigin", COFFER_TYPE_INT, 0);
    p[1].link_origin_property = "origin";
    check_one("ReservedClass", p, 2, COFFER_ERR_SCHEMA, "ReservedClass", "withOrigin", __LINE__);

    static const int marker = 1;
    p[1] = prop("withReserved", COFFER_TYPE_INT, 0);
    p[1].reserved[1] = &marker;
    check_one("ReservedClass", p, 2, COFFER_ERR_SCHEMA, "ReservedClass", "withReserved", __LINE__);

    p[1] = prop("fine2", COFFER_TYPE_INT, 0);
    coffer_class_schema cls = {.name = "EmbeddedClass", .properties = p, .property_count = 2,
                               .flags = 1u << 5}; /* an unknown class flag */
    check_both(&cls, 1, COFFER_ERR_SCHEMA, "EmbeddedClass", NULL, __LINE__);

    cls.flags = 0;
    cls.name = "ReservedPtrClass";
    cls.reserved[0] = &marker;
    check_both(&cls, 1, COFFER_ERR_SCHEMA, "ReservedPtrClass", NULL, __LINE__);
}

static void test_null_arrays(void **state)
{
    (void)state;
    coffer_class_schema cls = {.name = "NullProps", .properties = NULL, .property_count = 3};
    assert_status2(coffer_schema_validate(&cls, 1), COFFER_ERR_SCHEMA, COFFER_ERR_INVALID_ARGUMENT);
    assert_status2(coffer_schema_validate(NULL, 2), COFFER_ERR_SCHEMA, COFFER_ERR_INVALID_ARGUMENT);
    coffer_config *cfg = ts_config_new();
    assert_status2(coffer_config_set_schema(cfg, NULL, 2, 1), COFFER_ERR_SCHEMA, COFFER_ERR_INVALID_ARGUMENT);
    /* NULL with count 0 clears it */
    assert_ok(coffer_config_set_schema(cfg, NULL, 0, 0));
    coffer_config_free(cfg);
}

/* An invalid schema leaves the configuration's previous schema in place. */
TS_ENV_TEST(test_invalid_keeps_previous)
{
    coffer_config *cfg = ts_config_at(env->path);
    assert_ok(coffer_config_set_schema(cfg, ts_std_schema, TS_STD_SCHEMA_COUNT, 4));
    coffer_property_schema bad[] = {prop("x", COFFER_TYPE_FLOAT, COFFER_PROPERTY_PRIMARY_KEY)};
    coffer_class_schema badcls = {.name = "Bad", .properties = bad, .property_count = 1};
    assert_status(coffer_config_set_schema(cfg, &badcls, 1, 9), COFFER_ERR_SCHEMA);
    coffer_db *db = NULL;
    assert_ok(coffer_open(cfg, &db));
    assert_int_equal(coffer_db_class_count(db), 2);
    assert_int_equal(coffer_db_schema_version(db), 4);
    coffer_class_id id;
    assert_status(coffer_db_find_class(db, "Bad", &id), COFFER_ERR_NOT_FOUND);
    coffer_close(db);
    coffer_config_free(cfg);
}

/* The schema is deep-copied: the caller's arrays and strings may change. */
TS_ENV_TEST(test_schema_deep_copied)
{
    char *cname = strdup("CopiedClass");
    char *p0 = strdup("copiedInt");
    char *p1 = strdup("copiedString");
    coffer_property_schema *props = calloc(2, sizeof *props);
    props[0] = prop(p0, COFFER_TYPE_INT, COFFER_PROPERTY_PRIMARY_KEY);
    props[1] = prop(p1, COFFER_TYPE_STRING, COFFER_PROPERTY_OPTIONAL | COFFER_PROPERTY_INDEXED);
    coffer_class_schema *cls = calloc(1, sizeof *cls);
    cls->name = cname;
    cls->properties = props;
    cls->property_count = 2;

    coffer_config *cfg = ts_config_at(env->path);
    assert_ok(coffer_config_set_schema(cfg, cls, 1, 1));
    memset(cname, 'Z', strlen(cname));
    memset(p0, 'Z', strlen(p0));
    memset(p1, 'Z', strlen(p1));
    props[0].type = COFFER_TYPE_BINARY;
    free(cname);
    free(p0);
    free(p1);
    free(props);
    free(cls);

    coffer_db *db = NULL;
    assert_ok(coffer_open(cfg, &db));
    coffer_config_free(cfg);
    coffer_class_id c = ts_class(db, "CopiedClass");
    const coffer_class_schema *s = coffer_db_class_schema(db, c);
    assert_non_null(s);
    assert_string_equal(s->name, "CopiedClass");
    assert_int_equal(s->property_count, 2);
    assert_string_equal(s->properties[0].name, "copiedInt");
    assert_int_equal(s->properties[0].type, COFFER_TYPE_INT);
    assert_true(s->properties[0].flags & COFFER_PROPERTY_PRIMARY_KEY);
    assert_string_equal(s->properties[1].name, "copiedString");
    assert_int_equal(s->properties[1].type, COFFER_TYPE_STRING);
    assert_true(s->properties[1].flags & COFFER_PROPERTY_OPTIONAL);
    assert_true(s->properties[1].flags & COFFER_PROPERTY_INDEXED);
    coffer_close(db);
}

/* A schema with a class of no properties and with many classes. */
TS_ENV_TEST(test_many_classes)
{
    enum { N = 40 };
    coffer_class_schema classes[N];
    char names[N][16];
    coffer_property_schema p[] = {prop("value", COFFER_TYPE_INT, COFFER_PROPERTY_INDEXED)};
    memset(classes, 0, sizeof classes);
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "Class%02d", i);
        classes[i].name = names[i];
        classes[i].properties = p;
        classes[i].property_count = 1;
    }
    assert_ok(coffer_schema_validate(classes, N));
    coffer_db *db = NULL;
    assert_ok(ts_open_path(env->path, NULL, 0, classes, N, 1, &db));
    assert_int_equal(coffer_db_class_count(db), N);
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    for (int i = 0; i < N; i++) {
        coffer_class_id c = ts_class(db, names[i]);
        for (int j = 0; j <= i % 3; j++) {
            coffer_field f[] = {ts_field(0, coffer_value_int(i * 100 + j))};
            assert_ok(coffer_object_create(txn, c, f, 1, COFFER_UPDATE_ERROR, NULL));
        }
    }
    ts_commit(txn);
    coffer_close(db);
    db = NULL;
    assert_ok(ts_open_path(env->path, NULL, 0, NULL, 0, 0, &db));
    assert_int_equal(coffer_db_class_count(db), N);
    txn = ts_begin(db, COFFER_TXN_READ);
    for (int i = 0; i < N; i++) {
        coffer_class_id c = ts_class(db, names[i]);
        assert_int_equal(ts_count(txn, c), (uint64_t)(i % 3 + 1));
        coffer_value v = coffer_value_int(i * 100);
        assert_int_equal(ts_index_count(txn, c, 0, &v), 1);
    }
    coffer_txn_free(txn);
    coffer_close(db);
}

static void test_too_many_classes(void **state)
{
    (void)state;
    size_t n = COFFER_MAX_CLASSES + 1;
    coffer_class_schema *classes = calloc(n, sizeof *classes);
    char (*names)[16] = calloc(n, sizeof *names);
    coffer_property_schema p[] = {prop("value", COFFER_TYPE_INT, 0)};
    for (size_t i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "C%zu", i);
        classes[i].name = names[i];
        classes[i].properties = p;
        classes[i].property_count = 1;
    }
    assert_ok(coffer_schema_validate(classes, COFFER_MAX_CLASSES));
    assert_status2(coffer_schema_validate(classes, n), COFFER_ERR_SCHEMA, COFFER_ERR_LIMIT);
    free(classes);
    free(names);
}

/* The limits: COFFER_MAX_CLASSES classes and COFFER_MAX_PROPERTIES
 * properties can be opened and used. */
TS_ENV_TEST(test_max_classes_and_properties)
{
    size_t n = COFFER_MAX_CLASSES;
    coffer_class_schema *classes = calloc(n, sizeof *classes);
    char (*names)[16] = calloc(n, sizeof *names);
    coffer_property_schema small[] = {prop("value", COFFER_TYPE_INT, COFFER_PROPERTY_INDEXED)};
    size_t np = COFFER_MAX_PROPERTIES;
    coffer_property_schema *many = calloc(np + 1, sizeof *many);
    char (*pnames)[16] = calloc(np + 1, sizeof *pnames);
    for (size_t i = 0; i <= np; i++) {
        snprintf(pnames[i], sizeof pnames[i], "p%zu", i);
        many[i] = prop(pnames[i], i % 2 ? COFFER_TYPE_STRING : COFFER_TYPE_INT, 0);
    }
    for (size_t i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "K%zu", i);
        classes[i].name = names[i];
        classes[i].properties = i == n - 1 ? many : small;
        classes[i].property_count = i == n - 1 ? np : 1;
    }
    assert_ok(coffer_schema_validate(classes, n));
    /* one property too many */
    classes[n - 1].property_count = np + 1;
    assert_status2(coffer_schema_validate(classes, n), COFFER_ERR_SCHEMA, COFFER_ERR_LIMIT);
    classes[n - 1].property_count = np;

    coffer_db *db = NULL;
    assert_ok(ts_open_path(env->path, NULL, 0, classes, n, 1, &db));
    assert_int_equal(coffer_db_class_count(db), n);
    coffer_txn *txn = ts_begin(db, COFFER_TXN_WRITE);
    coffer_class_id first = ts_class(db, "K0");
    coffer_class_id last = ts_class(db, names[n - 1]);
    coffer_field f[] = {ts_field(0, coffer_value_int(5))};
    assert_ok(coffer_object_create(txn, first, f, 1, COFFER_UPDATE_ERROR, NULL));
    coffer_field g[] = {ts_field((coffer_property_id)np - 1, ts_str("last property")), ts_field(0, coffer_value_int(1))};
    coffer_object *obj = ts_create(txn, last, g, 2);
    ts_commit(txn);
    coffer_close(db);
    db = NULL;
    assert_ok(ts_open_path(env->path, NULL, 0, NULL, 0, 0, &db));
    assert_int_equal(coffer_db_class_count(db), n);
    txn = ts_begin(db, COFFER_TXN_READ);
    last = ts_class(db, names[n - 1]);
    assert_ok(coffer_object_get(txn, last, 1, &obj));
    assert_string_equal(ts_get_string(obj, (coffer_property_id)np - 1, NULL), "last property");
    assert_int_equal(ts_get_int(obj, 0), 1);
    assert_int_equal(ts_get_int(obj, 2), 0);
    coffer_value five = coffer_value_int(5);
    assert_int_equal(ts_index_count(txn, ts_class(db, "K0"), 0, &five), 1);
    coffer_txn_free(txn);
    coffer_close(db);
    free(classes);
    free(names);
    free(many);
    free(pnames);
}

/* ------------------------------------------------------------------------ */
/* Introspection                                                             */
/* ------------------------------------------------------------------------ */

TS_ENV_TEST(test_introspection)
{
    coffer_db *db = env->db;
    assert_int_equal(coffer_db_class_count(db), 2);

    coffer_class_id at = 99, person = 99;
    assert_ok(coffer_db_find_class(db, "AllTypes", &at));
    assert_ok(coffer_db_find_class(db, "Person", &person));
    assert_true(at < 2 && person < 2 && at != person);

    coffer_class_id none;
    assert_status(coffer_db_find_class(db, "MissingClassQ", &none), COFFER_ERR_NOT_FOUND);
    assert_error_contains("MissingClassQ");
    assert_status(coffer_db_find_class(db, "person", &none), COFFER_ERR_NOT_FOUND); /* case-sensitive */
    assert_status2(coffer_db_find_class(db, "", &none), COFFER_ERR_NOT_FOUND, COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_db_find_class(db, NULL, &none), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_db_find_class(db, "Person", NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_db_find_class(NULL, "Person", &none), COFFER_ERR_INVALID_ARGUMENT);

    const coffer_class_schema *s = coffer_db_class_schema(db, at);
    assert_non_null(s);
    assert_string_equal(s->name, "AllTypes");
    assert_int_equal(s->property_count, AT_COUNT);
    assert_int_equal(s->flags, 0);
    for (coffer_property_id p = 0; p < AT_COUNT; p++) {
        assert_string_equal(s->properties[p].name, ts_all_types_properties[p].name);
        assert_int_equal(s->properties[p].type, ts_all_types_properties[p].type);
        assert_int_equal(s->properties[p].flags, ts_all_types_properties[p].flags);
        coffer_property_id found = 999;
        assert_ok(coffer_db_find_property(db, at, ts_all_types_properties[p].name, &found));
        assert_int_equal(found, p);
    }
    s = coffer_db_class_schema(db, person);
    assert_non_null(s);
    assert_string_equal(s->name, "Person");
    assert_int_equal(s->property_count, PERSON_COUNT);
    assert_int_equal(s->properties[PERSON_ID].flags & COFFER_PROPERTY_PRIMARY_KEY, COFFER_PROPERTY_PRIMARY_KEY);
    assert_int_equal(flags_of(&s->properties[PERSON_ID]), COFFER_PROPERTY_PRIMARY_KEY);
    assert_int_equal(s->properties[PERSON_ID].type, COFFER_TYPE_INT);
    assert_true(s->properties[PERSON_NAME].flags & COFFER_PROPERTY_INDEXED);
    assert_true(s->properties[PERSON_NICKNAME].flags & COFFER_PROPERTY_OPTIONAL);
    assert_false(s->properties[PERSON_AGE].flags & COFFER_PROPERTY_OPTIONAL);

    assert_null(coffer_db_class_schema(db, 2));
    assert_null(coffer_db_class_schema(db, 1000000));
    assert_null(coffer_db_class_schema(NULL, 0));

    coffer_property_id pid;
    assert_status(coffer_db_find_property(db, person, "missingProp", &pid), COFFER_ERR_NOT_FOUND);
    assert_error_contains("Person");
    assert_error_contains("missingProp");
    assert_status(coffer_db_find_property(db, 77, "name", &pid), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_db_find_property(db, person, NULL, &pid), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_db_find_property(db, person, "name", NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_db_find_property(NULL, person, "name", &pid), COFFER_ERR_INVALID_ARGUMENT);

    pid = 999;
    assert_ok(coffer_db_primary_key(db, person, &pid));
    assert_int_equal(pid, PERSON_ID);
    assert_status(coffer_db_primary_key(db, at, &pid), COFFER_ERR_NOT_FOUND);
    assert_error_contains("AllTypes");
    assert_status(coffer_db_primary_key(db, 77, &pid), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_db_primary_key(db, person, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_status(coffer_db_primary_key(NULL, person, &pid), COFFER_ERR_INVALID_ARGUMENT);

    assert_int_equal(coffer_db_class_count(NULL), 0);
}

/* The stored schema is what a handle opened without a schema sees, in the
 * same order and with the same flags. */
TS_ENV_TEST(test_introspection_from_file)
{
    coffer_db *db = NULL;
    assert_ok(ts_env_open(env, NULL, 0, 0, &db));
    assert_int_equal(coffer_db_class_count(db), 2);
    for (size_t c = 0; c < 2; c++) {
        coffer_class_id id = ts_class(db, ts_std_schema[c].name);
        const coffer_class_schema *s = coffer_db_class_schema(db, id);
        assert_non_null(s);
        assert_string_equal(s->name, ts_std_schema[c].name);
        assert_int_equal(s->property_count, ts_std_schema[c].property_count);
        for (size_t p = 0; p < s->property_count; p++) {
            assert_string_equal(s->properties[p].name, ts_std_schema[c].properties[p].name);
            assert_int_equal(s->properties[p].type, ts_std_schema[c].properties[p].type);
            assert_int_equal(flags_of(&s->properties[p]), flags_of(&ts_std_schema[c].properties[p]));
        }
    }
    coffer_close(db);
}

/* Class and property names with multi-byte UTF-8 work end to end. */
TS_ENV_TEST(test_utf8_names)
{
    const char *cname = "Caf\xc3\xa9_\xe6\x97\xa5\xe6\x9c\xac";
    const char *pname = "n\xc3\xbcmero";
    coffer_property_schema p[] = {prop(pname, COFFER_TYPE_INT, COFFER_PROPERTY_PRIMARY_KEY)};
    coffer_class_schema cls = {.name = cname, .properties = p, .property_count = 1};
    ts_env_reopen(env, &cls, 1, 1);
    coffer_class_id c = ts_class(env->db, cname);
    assert_int_equal(ts_prop(env->db, c, pname), 0);
    coffer_txn *txn = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field f[] = {ts_field(0, coffer_value_int(42))};
    assert_ok(coffer_object_create(txn, c, f, 1, COFFER_UPDATE_ERROR, NULL));
    ts_commit(txn);
    assert_string_equal(coffer_db_class_schema(env->db, c)->name, cname);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_standard_schema_valid),
        cmocka_unit_test(test_class_name_length),
        cmocka_unit_test(test_class_name_null),
        cmocka_unit_test(test_property_name_length),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_two_primary_keys),
        cmocka_unit_test(test_primary_key_types),
        cmocka_unit_test(test_index_types),
        cmocka_unit_test(test_invalid_types),
        cmocka_unit_test(test_reserved_fields),
        cmocka_unit_test(test_null_arrays),
        TS_TEST_EMPTY(test_invalid_keeps_previous),
        TS_TEST_EMPTY(test_schema_deep_copied),
        TS_TEST_EMPTY(test_many_classes),
        cmocka_unit_test(test_too_many_classes),
        TS_TEST_EMPTY(test_max_classes_and_properties),
        TS_TEST_ALL_MODES(test_introspection),
        TS_TEST_FILE_MODES(test_introspection_from_file),
        TS_TEST_ALL_MODES(test_utf8_names),
    };
    return cmocka_run_group_tests_name("schema", tests, NULL, NULL);
}
