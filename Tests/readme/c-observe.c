/* Runs the README's observing fragments: a results observer on a notifier
 * thread, told of dogs committed by this program, then stopped. */
#define _POSIX_C_SOURCE 200809L
#include <coffer.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "readme_harness.h"

// readme: c-observe-callback

static const coffer_property_schema dog_properties[] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "name", .type = COFFER_TYPE_STRING},
};
static const coffer_class_schema schema[] = {
    {.name = "Dog", .properties = dog_properties, .property_count = 2},
};

static void add_dog(coffer_db *db, coffer_class_id dog, int64_t id, const char *name)
{
    coffer_txn *txn;
    coffer_field fields[] = {{0, coffer_value_int(id)}, {1, coffer_value_string(name, SIZE_MAX)}};
    check(coffer_txn_begin(db, COFFER_TXN_WRITE, &txn), "begin");
    check(coffer_object_create(txn, dog, fields, 2, COFFER_UPDATE_ALL, NULL), "create");
    check(coffer_txn_commit(txn), "commit");
    coffer_txn_free(txn);
}

int main(void)
{
    coffer_db *db;
    coffer_class_id dog;
    db = open_harness_db("readme-observe", 1, schema, 1);
    check(coffer_db_find_class(db, "Dog", &dog), "Dog");

    // readme: c-observe
    add_dog(db, dog, 1, "Rex");
    add_dog(db, dog, 2, "Ace");
    struct timespec moment = {0, 300000000};
    nanosleep(&moment, NULL); /* the notifier tells dogs_changed meanwhile */
    // readme: c-observe-stop

    coffer_close(db);
    return 0;
}
