/* Runs the README's query fragment against a few dogs and checks that it
 * found the ones it asks for. */
#include <coffer.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "readme_harness.h"

static const coffer_property_schema dog_properties[] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "name", .type = COFFER_TYPE_STRING, .flags = COFFER_PROPERTY_INDEXED},
};
static const coffer_class_schema schema[] = {
    {.name = "Dog", .properties = dog_properties, .property_count = 2},
};

int main(void)
{
    static const char *const names[] = {"Rex", "rover", "Fido", "Rusty"};
    coffer_db *db;
    coffer_txn *txn;
    coffer_class_id dog;

    db = open_harness_db("query-c.coffer", 0, schema, 1);
    check(coffer_db_find_class(db, "Dog", &dog), "Dog");
    check(coffer_txn_begin(db, COFFER_TXN_WRITE, &txn), "begin write");
    for (int i = 0; i < 4; i++) {
        coffer_field fields[] = {{0, coffer_value_int(i + 1)},
                                 {1, coffer_value_string(names[i], SIZE_MAX)}};
        check(coffer_object_create(txn, dog, fields, 2, COFFER_UPDATE_ALL, NULL), "create");
    }
    check(coffer_txn_commit(txn), "commit");
    coffer_txn_free(txn);
    check(coffer_txn_begin(db, COFFER_TXN_READ, &txn), "begin read");

    // readme: c-query

    /* id >= 2 and a name starting with r in any case: rover (2) and Rusty (4). */
    if (count != 2 || oldest.type != COFFER_TYPE_INT || oldest.u.integer != 4) {
        fprintf(stderr, "the query found %llu dogs, not 2\n", (unsigned long long)count);
        return 1;
    }
    coffer_txn_free(txn);
    coffer_close(db);
    return 0;
}
