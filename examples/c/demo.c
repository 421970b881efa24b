/*
 * demo.c — a tour of Coffer's C API on the default database.
 *
 * It opens "default.coffer" in the current directory, writes a few dogs,
 * reads them back by primary key, through an index and by iterating the
 * class, then updates one and deletes one. Run it twice: the second run
 * finds the first run's dogs in the file.
 */
#include <coffer.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The schema, as static arrays. Property ids follow this order. */
static const coffer_property_schema dog_properties[] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "name", .type = COFFER_TYPE_STRING, .flags = COFFER_PROPERTY_INDEXED},
    {.name = "breed", .type = COFFER_TYPE_STRING, .flags = COFFER_PROPERTY_OPTIONAL},
    {.name = "age", .type = COFFER_TYPE_INT},
    {.name = "born", .type = COFFER_TYPE_DATE},
};

static const coffer_class_schema schema[] = {
    {.name = "Dog",
     .properties = dog_properties,
     .property_count = sizeof dog_properties / sizeof dog_properties[0]},
};

/* Ids of the open database, looked up by name after coffer_open(). */
static coffer_class_id dog_class;
static coffer_property_id p_id, p_name, p_breed, p_age, p_born;

struct dog {
    int64_t id;
    const char *name;
    const char *breed; /* NULL: unknown */
    int64_t age;
    int64_t born;      /* seconds since 1970 UTC */
};

static const struct dog dogs[] = {
    {1, "Rex", "Labrador", 4, 1615680000},  /* 2021-03-14 */
    {2, "Bella", NULL, 2, 1677628800},      /* 2023-03-01 */
    {3, "Rex", "Beagle", 7, 1496275200},    /* 2017-06-01 */
    {4, "Max", "Poodle", 1, 1704067200},    /* 2024-01-01 */
};

/* Returns 1 on COFFER_OK; otherwise prints what failed and why. */
static int ok(coffer_status status, const char *what)
{
    if (status == COFFER_OK)
        return 1;
    fprintf(stderr, "demo: %s failed: %s: %s\n", what, coffer_strerror(status),
            coffer_last_error());
    return 0;
}

static coffer_status lookup_ids(const coffer_db *db)
{
    coffer_status st = coffer_db_find_class(db, "Dog", &dog_class);
    if (st == COFFER_OK) st = coffer_db_find_property(db, dog_class, "id", &p_id);
    if (st == COFFER_OK) st = coffer_db_find_property(db, dog_class, "name", &p_name);
    if (st == COFFER_OK) st = coffer_db_find_property(db, dog_class, "breed", &p_breed);
    if (st == COFFER_OK) st = coffer_db_find_property(db, dog_class, "age", &p_age);
    if (st == COFFER_OK) st = coffer_db_find_property(db, dog_class, "born", &p_born);
    return st;
}

/* Prints one dog. Strings read here are borrowed from the transaction. */
static int print_dog(coffer_object *dog)
{
    coffer_value id, name, breed, age, born;
    if (!ok(coffer_object_get_value(dog, p_id, &id), "reading id") ||
        !ok(coffer_object_get_value(dog, p_name, &name), "reading name") ||
        !ok(coffer_object_get_value(dog, p_breed, &breed), "reading breed") ||
        !ok(coffer_object_get_value(dog, p_age, &age), "reading age") ||
        !ok(coffer_object_get_value(dog, p_born, &born), "reading born"))
        return 0;

    char day[16] = "?";
    time_t t = (time_t)born.u.date.seconds;
    struct tm *tm = gmtime(&t);
    if (tm != NULL)
        strftime(day, sizeof day, "%Y-%m-%d", tm);

    if (breed.type == COFFER_TYPE_NULL)
        breed = coffer_value_string("breed unknown", SIZE_MAX);

    printf("  #%" PRId64 " %.*s, %.*s, age %" PRId64 ", born %s\n", id.u.integer,
           (int)name.u.string.size, (const char *)name.u.string.data,
           (int)breed.u.string.size, (const char *)breed.u.string.data, age.u.integer, day);
    return 1;
}

static int count_dogs(coffer_db *db, uint64_t *count)
{
    coffer_txn *txn = NULL;
    int good = ok(coffer_txn_begin(db, COFFER_TXN_READ, &txn), "beginning a read") &&
               ok(coffer_class_count(txn, dog_class, count), "counting dogs");
    coffer_txn_free(txn);
    return good;
}

/* Creates the dogs, or overwrites them if an earlier run left them there. */
static int write_dogs(coffer_db *db)
{
    coffer_txn *txn = NULL;
    if (!ok(coffer_txn_begin(db, COFFER_TXN_WRITE, &txn), "beginning a write"))
        return 0;
    int good = 1;
    for (size_t i = 0; good && i < sizeof dogs / sizeof dogs[0]; i++) {
        const struct dog *d = &dogs[i];
        coffer_field fields[] = {
            {p_id, coffer_value_int(d->id)},
            {p_name, coffer_value_string(d->name, SIZE_MAX)},
            {p_breed, d->breed ? coffer_value_string(d->breed, SIZE_MAX) : coffer_value_null()},
            {p_age, coffer_value_int(d->age)},
            {p_born, coffer_value_date(d->born, 0)},
        };
        good = ok(coffer_object_create(txn, dog_class, fields, sizeof fields / sizeof fields[0],
                                       COFFER_UPDATE_ALL, NULL),
                  "creating a dog");
    }
    good = good && ok(coffer_txn_commit(txn), "committing the dogs");
    coffer_txn_free(txn); /* aborts if the commit was not reached */
    if (good)
        printf("Wrote %zu dogs (created, or updated by primary key) in one write transaction.\n",
               sizeof dogs / sizeof dogs[0]);
    return good;
}

static int print_all(coffer_iter *iter)
{
    coffer_object *dog;
    coffer_status st;
    while ((st = coffer_iter_next(iter, &dog)) == COFFER_OK)
        if (!print_dog(dog))
            return 0;
    return st == COFFER_DONE || ok(st, "iterating");
}

static int read_dogs(coffer_db *db)
{
    coffer_txn *txn = NULL;
    coffer_object *dog = NULL;
    coffer_iter *iter = NULL;
    uint64_t count = 0;
    coffer_value key = coffer_value_int(2);
    coffer_value rex = coffer_value_string("Rex", SIZE_MAX);

    int good = ok(coffer_txn_begin(db, COFFER_TXN_READ, &txn), "beginning a read");
    if (good) {
        printf("Dog with primary key 2:\n");
        good = ok(coffer_object_find(txn, dog_class, &key, &dog), "finding dog 2") &&
               print_dog(dog);
        coffer_object_release(dog);
    }
    if (good) {
        printf("Dogs named Rex (through the name index):\n");
        good = ok(coffer_index_find(txn, dog_class, p_name, &rex, &iter), "finding Rex") &&
               print_all(iter);
        coffer_iter_free(iter);
        iter = NULL;
    }
    if (good && ok(coffer_class_count(txn, dog_class, &count), "counting dogs")) {
        printf("All %" PRIu64 " dogs:\n", count);
        good = ok(coffer_class_iterate(txn, dog_class, &iter), "iterating dogs") &&
               print_all(iter);
    } else {
        good = 0;
    }
    coffer_txn_free(txn); /* also frees the iterator; a read needs no commit */
    return good;
}

/* Runs a query: dogs of at least `min_age` years whose name contains an
 * 'e' (any case), oldest first, and their average age. */
static int query_dogs(coffer_db *db, int64_t min_age)
{
    coffer_value args[] = {coffer_value_int(min_age)};
    const char *text = "age >= $0 AND name CONTAINS[c] 'e' SORT(age DESC)";
    coffer_query *query = NULL;
    coffer_results *dogs = NULL;
    coffer_txn *txn = NULL;
    uint64_t count = 0;
    coffer_value average;

    if (!ok(coffer_query_compile(db, dog_class, text, SIZE_MAX, args, 1, &query), "compiling the query"))
        return 0;
    printf("Query: %s, with $0 = %" PRId64 "\n", coffer_query_description(query), min_age);
    int good = ok(coffer_txn_begin(db, COFFER_TXN_READ, &txn), "beginning a read") &&
               ok(coffer_query_run(txn, query, &dogs), "running the query") &&
               ok(coffer_results_count(dogs, &count), "counting the results");
    for (uint64_t i = 0; good && i < count; i++) {
        coffer_object *dog = NULL;
        good = ok(coffer_results_get(dogs, i, &dog), "reading a result") && print_dog(dog);
        coffer_object_release(dog);
    }
    good = good && ok(coffer_results_aggregate(dogs, p_age, COFFER_AGGREGATE_AVG, &average), "averaging ages");
    if (good && average.type == COFFER_TYPE_DOUBLE)
        printf("  %" PRIu64 " dogs, %.1f years old on average\n", count, average.u.double_value);
    /* A mistake in a query is reported with what went wrong. */
    coffer_query *bad = NULL;
    if (good && coffer_query_compile(db, dog_class, "age > 'three'", SIZE_MAX, NULL, 0, &bad) != COFFER_OK)
        printf("A wrong query is refused: %s\n", coffer_last_error());
    coffer_query_free(bad);
    coffer_results_free(dogs);
    coffer_txn_free(txn);
    coffer_query_free(query);
    return good;
}

static int update_and_delete(coffer_db *db)
{
    coffer_txn *txn = NULL;
    coffer_object *dog = NULL;
    coffer_value age;
    coffer_value three = coffer_value_int(3), four = coffer_value_int(4);

    if (!ok(coffer_txn_begin(db, COFFER_TXN_WRITE, &txn), "beginning a write"))
        return 0;
    int good = ok(coffer_object_find(txn, dog_class, &three, &dog), "finding dog 3") &&
               ok(coffer_object_get_value(dog, p_age, &age), "reading its age");
    if (good) {
        coffer_value older = coffer_value_int(age.u.integer + 1);
        good = ok(coffer_object_set_value(dog, p_age, &older), "updating dog 3");
        if (good)
            printf("Dog 3 had a birthday: %" PRId64 " -> %" PRId64 " years.\n",
                   age.u.integer, older.u.integer);
    }
    good = good && ok(coffer_object_find(txn, dog_class, &four, &dog), "finding dog 4") &&
           ok(coffer_object_delete(dog), "deleting dog 4");
    if (good)
        printf("Deleted dog 4.\n");
    good = good && ok(coffer_txn_commit(txn), "committing the changes");
    coffer_txn_free(txn);
    return good;
}

int main(void)
{
    coffer_config *config = NULL;
    coffer_db *db = NULL;
    uint64_t before = 0, after = 0;

    /* No path set: the default database, default.coffer in this directory. */
    if (!ok(coffer_config_new(&config), "creating a configuration"))
        return EXIT_FAILURE;
    if (!ok(coffer_config_set_schema(config, schema, sizeof schema / sizeof schema[0], 1),
            "setting the schema")) {
        coffer_config_free(config);
        return EXIT_FAILURE;
    }
    printf("Coffer %s: opening %s\n", coffer_version(), coffer_config_path(config));
    coffer_status st = coffer_open(config, &db);
    coffer_config_free(config); /* the database does not need it any more */
    if (!ok(st, "opening the database"))
        return EXIT_FAILURE;

    int good = ok(lookup_ids(db), "looking up the Dog schema") && count_dogs(db, &before);
    if (good)
        printf("The file holds %" PRIu64 " dogs from earlier runs.\n", before);
    good = good && write_dogs(db) && read_dogs(db) && query_dogs(db, 3) && update_and_delete(db) &&
           count_dogs(db, &after);
    if (good)
        printf("Now %" PRIu64 " dogs remain in %s.\n", after, coffer_db_path(db));

    coffer_close(db);
    return good ? EXIT_SUCCESS : EXIT_FAILURE;
}
