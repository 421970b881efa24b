/* index_seal — format 5's hashed index keys become format 6's sealed index
 * trees (open/index_seal.h). */
#include "open/index_seal.h"

#include "objects/object.h"
#include "schema/schema.h"
#include "storage/index_tree.h"
#include "util/error.h"

coffer_status cf_index_seal_all(coffer_txn *txn)
{
    coffer_db *db = txn->db;
    coffer_status st = COFFER_OK;
    for (size_t i = 0; st == COFFER_OK && i < db->schema->nclasses; i++)
        st = cf_itree_empty_class(txn, (coffer_class_id)i);
    if (st != COFFER_OK)
        return st;
    db->sealed_index = 1; /* index writes from here on go to the trees */
    for (size_t i = 0; st == COFFER_OK && i < db->schema->nclasses; i++) {
        const cf_class *c = &db->schema->classes[i];
        for (size_t p = 0; st == COFFER_OK && p < c->nprops; p++)
            if (cf_prop_indexed(&c->props[p]) && c->props[p].type != COFFER_TYPE_LINKING_OBJECTS)
                st = cf_object_build_index(txn, (coffer_class_id)i, (coffer_property_id)p, 0);
        if (st != COFFER_OK)
            cf_error_prefix("class '%s'", c->name);
    }
    return st;
}
