/* Schema changes of graph properties: removing or retyping a link, list or
 * mixed property at a higher schema version releases what it held, so that
 * backlinks stay exact and embedded objects and collections do not linger. */
#include <string.h>

#include "test_support.h"

static const coffer_property_schema dog_v1[] = {
    {.name = "name", .type = COFFER_TYPE_STRING},
};
static const coffer_property_schema tag_v1[] = {
    {.name = "label", .type = COFFER_TYPE_STRING},
};
static const coffer_property_schema person_v1[] = {
    {.name = "name", .type = COFFER_TYPE_STRING},
    {.name = "dogs", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_LIST, .object_class = "Dog"},
    {.name = "best", .type = COFFER_TYPE_LINK, .flags = COFFER_PROPERTY_OPTIONAL, .object_class = "Dog"},
    {.name = "any", .type = COFFER_TYPE_MIXED},
    {.name = "tag", .type = COFFER_TYPE_LINK, .flags = COFFER_PROPERTY_OPTIONAL, .object_class = "Tag"},
};
static const coffer_class_schema schema_v1[] = {
    {.name = "Dog", .properties = dog_v1, .property_count = 1},
    {.name = "Tag", .properties = tag_v1, .property_count = 1, .flags = COFFER_CLASS_EMBEDDED},
    {.name = "Person", .properties = person_v1, .property_count = 5},
};
enum { DOG = 0, TAG = 1, PERSON = 2 };

/* Version 2 keeps `dogs`, retypes `best` to a string, drops `any` and `tag`. */
static const coffer_property_schema person_v2[] = {
    {.name = "name", .type = COFFER_TYPE_STRING},
    {.name = "dogs", .type = COFFER_TYPE_LINK, .collection = COFFER_COLLECTION_LIST, .object_class = "Dog"},
    {.name = "best", .type = COFFER_TYPE_STRING, .flags = COFFER_PROPERTY_OPTIONAL},
};
static const coffer_class_schema schema_v2[] = {
    {.name = "Dog", .properties = dog_v1, .property_count = 1},
    {.name = "Tag", .properties = tag_v1, .property_count = 1, .flags = COFFER_CLASS_EMBEDDED},
    {.name = "Person", .properties = person_v2, .property_count = 3},
};

static int setup(void **state) { return ts_setup_schema(state, schema_v1, 3); }

static uint64_t backlinks_of(coffer_txn *txn, coffer_object_key dog)
{
    coffer_object *obj = NULL;
    assert_int_equal(coffer_object_get(txn, DOG, dog, &obj), COFFER_OK);
    uint64_t n = 99;
    assert_int_equal(coffer_object_backlink_count_all(obj, &n), COFFER_OK);
    return n;
}

TS_ENV_TEST(test_removed_and_retyped_links_release_their_targets)
{
    coffer_txn *w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_field rex_f[] = {{0, coffer_value_string("Rex", SIZE_MAX)}};
    coffer_field fido_f[] = {{0, coffer_value_string("Fido", SIZE_MAX)}};
    coffer_object *rex, *fido;
    assert_int_equal(coffer_object_create(w, DOG, rex_f, 1, COFFER_UPDATE_ERROR, &rex), COFFER_OK);
    assert_int_equal(coffer_object_create(w, DOG, fido_f, 1, COFFER_UPDATE_ERROR, &fido), COFFER_OK);
    coffer_object_key rex_key = coffer_object_key_of(rex), fido_key = coffer_object_key_of(fido);
    coffer_value dogs[] = {coffer_value_object(rex), coffer_value_object(fido)};
    coffer_value nested[] = {coffer_value_object(fido), coffer_value_int(3)};
    coffer_field tag_f[] = {{0, coffer_value_string("good", SIZE_MAX)}};
    coffer_field ann[] = {
        {0, coffer_value_string("Ann", SIZE_MAX)},
        {1, coffer_value_list(dogs, 2)},
        {2, coffer_value_object(rex)},
        {3, coffer_value_list(nested, 2)},
        {4, coffer_value_fields(tag_f, 1)},
    };
    assert_int_equal(coffer_object_create(w, PERSON, ann, 5, COFFER_UPDATE_ERROR, NULL), COFFER_OK);
    assert_int_equal(backlinks_of(w, rex_key), 2);  /* dogs, best */
    assert_int_equal(backlinks_of(w, fido_key), 2); /* dogs, any[0] */
    uint64_t tags;
    assert_int_equal(coffer_class_count(w, TAG, &tags), COFFER_OK);
    assert_int_equal(tags, 1);
    ts_commit(w);

    coffer_db *keep = ts_env_keep(env);
    ts_env_reopen(env, schema_v2, 3, 2);
    coffer_txn *r = ts_begin(env->db, COFFER_TXN_READ);
    /* Only the kept list links to the dogs now. */
    assert_int_equal(backlinks_of(r, rex_key), 1);
    assert_int_equal(backlinks_of(r, fido_key), 1);
    assert_int_equal(coffer_class_count(r, TAG, &tags), COFFER_OK);
    assert_int_equal(tags, 0); /* the embedded tag went with its property */
    coffer_iter *it = NULL;
    coffer_object *ann_obj = NULL;
    assert_int_equal(coffer_class_iterate(r, PERSON, &it), COFFER_OK);
    assert_int_equal(coffer_iter_next(it, &ann_obj), COFFER_OK);
    coffer_value best;
    assert_int_equal(coffer_object_get_value(ann_obj, 2, &best), COFFER_OK);
    assert_int_equal(best.type, COFFER_TYPE_NULL); /* the new string column starts empty */
    coffer_list *list = NULL;
    uint64_t n = 0;
    assert_int_equal(coffer_object_get_list(ann_obj, 1, &list), COFFER_OK);
    assert_int_equal(coffer_list_count(list, &n), COFFER_OK);
    assert_int_equal(n, 2);
    coffer_txn_free(r);

    /* Deleting a dog still reaches every remaining link, and only those. */
    w = ts_begin(env->db, COFFER_TXN_WRITE);
    coffer_object *dog = NULL;
    assert_int_equal(coffer_object_get(w, DOG, rex_key, &dog), COFFER_OK);
    assert_int_equal(coffer_object_delete(dog), COFFER_OK);
    assert_int_equal(coffer_class_iterate(w, PERSON, &it), COFFER_OK);
    assert_int_equal(coffer_iter_next(it, &ann_obj), COFFER_OK);
    assert_int_equal(coffer_object_get_list(ann_obj, 1, &list), COFFER_OK);
    assert_int_equal(coffer_list_count(list, &n), COFFER_OK);
    assert_int_equal(n, 1);
    ts_commit(w);
    if (keep)
        coffer_close(keep);
}

static coffer_status open_subset(const ts_env *env, const char *const *names, size_t n, coffer_db **out)
{
    coffer_config *cfg = ts_env_config(env);
    assert_int_equal(coffer_config_set_class_subset(cfg, names, n), COFFER_OK);
    coffer_status st = coffer_open(cfg, out);
    coffer_config_free(cfg);
    return st;
}

/* A class subset must be closed over links both ways: the targets of its
 * links, and every class that can link into it (deletes must reach them). */
TS_ENV_TEST(test_class_subset_must_be_closed_over_links)
{
    coffer_db *db = NULL;
    const char *person_only[] = {"Person"};
    assert_int_equal(open_subset(env, person_only, 1, &db), COFFER_ERR_SCHEMA);
    assert_non_null(strstr(coffer_last_error(), "'Dog'"));
    assert_non_null(strstr(coffer_last_error(), "Person"));
    const char *dog_only[] = {"Dog"};
    assert_int_equal(open_subset(env, dog_only, 1, &db), COFFER_ERR_SCHEMA);
    assert_non_null(strstr(coffer_last_error(), "leaves out class 'Person'"));
    const char *all[] = {"Dog", "Tag", "Person"};
    assert_int_equal(open_subset(env, all, 3, &db), COFFER_OK);
    coffer_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TS_TEST_ALL_MODES_SETUP(test_removed_and_retyped_links_release_their_targets, setup),
        TS_TEST_ALL_MODES_SETUP(test_class_subset_must_be_closed_over_links, setup),
    };
    return cmocka_run_group_tests_name("graph_schema", tests, NULL, NULL);
}
