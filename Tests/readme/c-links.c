/* Runs the README's links-and-collections fragments: its Person schema, and its
 * writes inside a write transaction, then checks what they stored. */
#include <coffer.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "readme_harness.h"

// readme: c-links-schema

static const coffer_property_schema dog_properties[] = {
    {.name = "id", .type = COFFER_TYPE_INT, .flags = COFFER_PROPERTY_PRIMARY_KEY},
    {.name = "name", .type = COFFER_TYPE_STRING},
    {.name = "owners", .type = COFFER_TYPE_LINKING_OBJECTS, .object_class = "Person",
     .link_origin_property = "dogs"},
};
static const coffer_class_schema schema[] = {
    {.name = "Dog", .properties = dog_properties, .property_count = 3},
    {.name = "Person", .properties = person_properties, .property_count = 3},
};

int main(void)
{
    coffer_db *db;
    coffer_txn *txn;
    coffer_class_id dog, person_class;

    db = open_harness_db("links-c.coffer", 0, schema, 2);
    check(coffer_db_find_class(db, "Dog", &dog), "Dog");
    check(coffer_db_find_class(db, "Person", &person_class), "Person");
    check(coffer_txn_begin(db, COFFER_TXN_WRITE, &txn), "begin");

    // readme: c-links-write

    if (link.type != COFFER_TYPE_LINK || link.u.link.class_id != dog) {
        fprintf(stderr, "the list's first element is not a link to a Dog\n");
        return 1;
    }
    check(coffer_txn_commit(txn), "commit");
    coffer_txn_free(txn);
    coffer_close(db);
    return 0;
}
