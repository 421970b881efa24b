/* migration — runs a migration callback inside the write transaction that
 * applies a new schema. The old file is read through a second handle: a
 * coffer_db with the stored (old) schema over a read transaction begun
 * before anything changed, so old values survive the migration's writes. */
#define _GNU_SOURCE
#include "migration/migration.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "storage/config.h"
#include "util/error.h"
#include "util/progress.h"
#include "objects/graph.h"
#include "storage/index.h"
#include "storage/object_store.h"
#include "objects/object.h"
#include "storage/txn.h"

struct coffer_migration {
    coffer_db *db;   /* the handle being opened: new schema */
    coffer_txn *txn; /* its write transaction */
    coffer_db old_db;
    coffer_txn old_txn;
    cf_plan *plan;
    uint64_t generation; /* of txn when the last rename ended: renames only before writes */
    const char *label;
    cf_progress progress; /* objects of the old file enumerated, of all of them */
    uint64_t visited;
};

int cf_migration_applies(const coffer_config *config, const cf_schema *stored)
{
    return config->migration && config->schema && stored && !config->delete_if_migration_needed &&
           config->schema_version > stored->version;
}

static coffer_status remember(uint32_t number, MDB_dbi dbi, MDB_dbi *opened, uint32_t *numbers, size_t *n)
{
    numbers[*n] = number;
    opened[(*n)++] = dbi;
    return COFFER_OK;
}

coffer_status cf_migration_prepare(coffer_txn *txn, const cf_schema *stored, MDB_dbi **opened, uint32_t **numbers,
                                   size_t *nopened)
{
    coffer_db *db = txn->db;
    size_t cap = 2 * stored->nclasses + 2;
    *opened = calloc(cap, sizeof **opened);
    *numbers = calloc(cap, sizeof **numbers);
    if (!*opened || !*numbers)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory preparing a migration");
    *nopened = 0;
    MDB_dbi dbi;
    coffer_status st = cf_env_dbi(db->env, txn->mdb, CF_GRAPH_DBI, 0, &dbi);
    if (st == COFFER_OK)
        remember(CF_GRAPH_DBI, dbi, *opened, *numbers, nopened);
    else if (st == COFFER_ERR_NOT_FOUND)
        coffer_clear_error(); /* a file without collections yet */
    else
        return st;
    for (size_t i = 0; i < stored->nclasses; i++) {
        for (uint32_t part = 0; part < 2; part++) {
            uint32_t number = 2 * stored->classes[i].table + part;
            st = cf_env_dbi(db->env, txn->mdb, number, 0, &dbi);
            if (st == COFFER_ERR_NOT_FOUND)
                return cf_error(COFFER_ERR_CORRUPTED, "the objects of class '%s' are missing from the file", stored->classes[i].name);
            if (st != COFFER_OK)
                return st;
            remember(number, dbi, *opened, *numbers, nopened);
        }
    }
    return COFFER_OK;
}

/* ---- the old view --------------------------------------------------------- */

static coffer_status old_view_open(coffer_migration *m, const cf_schema *stored)
{
    coffer_db *db = m->db, *old = &m->old_db;
    old->magic = CF_DB_MAGIC;
    old->env = db->env;
    old->keys = db->keys;
    old->checksums = db->checksums;
    old->clustered = db->clustered;
    old->sealed_index = db->sealed_index;
    memcpy(old->file_id, db->file_id, CF_FILE_ID_SIZE);
    old->read_only = 1;
    old->in_migration = 1;
    pthread_mutex_init(&old->lock, NULL);
    coffer_status st = cf_schema_copy(stored, &old->schema);
    if (st == COFFER_OK && (st = cf_schema_resolve(old->schema)) == COFFER_OK)
        st = cf_schema_publish(old->schema);
    if (st != COFFER_OK)
        return st;
    size_t n = old->schema->nclasses;
    old->object_dbis = calloc(n + 1, sizeof *old->object_dbis);
    old->index_dbis = calloc(n + 1, sizeof *old->index_dbis);
    if (!old->object_dbis || !old->index_dbis)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory beginning a migration");
    if (!cf_env_known_dbi(old->env, CF_META_DBI, &old->meta_dbi))
        old->meta_dbi = db->meta_dbi;
    old->has_graph = cf_env_known_dbi(old->env, CF_GRAPH_DBI, &old->graph_dbi);
    for (size_t i = 0; i < n; i++) {
        uint32_t t = old->schema->classes[i].table;
        if (!cf_env_known_dbi(old->env, 2 * t, &old->object_dbis[i]) || !cf_env_known_dbi(old->env, 2 * t + 1, &old->index_dbis[i]))
            return cf_error(COFFER_ERR_BUSY, "the schema of %s changed while it was being opened; open it again", m->label);
    }
    coffer_txn *ot = &m->old_txn;
    ot->magic = CF_TXN_MAGIC;
    ot->db = old;
    ot->borrowed = 1;
    ot->thread = pthread_self();
    if ((st = cf_txn_alloc_state(ot, n)) != COFFER_OK)
        return st;
    /* Begun while this thread holds the write transaction: it sees the last
     * commit, which is what the write transaction started from. */
    if ((st = cf_env_txn_begin(old->env, 0, &ot->mdb)) != COFFER_OK)
        return st;
    ot->active = 1;
    return COFFER_OK;
}

static void old_view_close(coffer_migration *m)
{
    coffer_txn *ot = &m->old_txn;
    if (ot->active) {
        cf_txn_close_cursors(ot);
        mdb_txn_abort(ot->mdb);
        cf_env_txn_end(m->old_db.env, 0);
        ot->active = 0;
    }
    if (ot->state)
        cf_txn_free_handles(ot);
    ot->magic = CF_DEAD_MAGIC;
    cf_schema_free(m->old_db.schema);
    free(m->old_db.object_dbis);
    free(m->old_db.index_dbis);
    pthread_mutex_destroy(&m->old_db.lock);
    m->old_db.magic = CF_DEAD_MAGIC;
}

/* ---- public accessors ----------------------------------------------------- */

static int migration_ok(const coffer_migration *m) { return m && m->db && m->txn && m->txn->active; }

#define CHECK_MIGRATION(m, fn)                                                                   \
    if (!migration_ok(m))                                                                        \
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, fn ": migration is NULL or has ended")

COFFER_API coffer_db *coffer_migration_db(coffer_migration *m) { return migration_ok(m) ? m->db : NULL; }
COFFER_API coffer_txn *coffer_migration_txn(coffer_migration *m) { return migration_ok(m) ? m->txn : NULL; }
COFFER_API coffer_db *coffer_migration_old_db(coffer_migration *m) { return migration_ok(m) ? &m->old_db : NULL; }
COFFER_API coffer_txn *coffer_migration_old_txn(coffer_migration *m) { return migration_ok(m) ? &m->old_txn : NULL; }

COFFER_API coffer_status coffer_migration_enumerate(coffer_migration *m, const char *class_name, coffer_migration_enumerate_fn fn,
                                                    void *ctx)
{
    return coffer_migration_enumerate_v2(m, class_name, fn, ctx, 0);
}

COFFER_API coffer_status coffer_migration_count_visited(coffer_migration *m, uint64_t count)
{
    CHECK_MIGRATION(m, "coffer_migration_count_visited");
    m->visited += count;
    return cf_progress_step(&m->progress, m->visited);
}

COFFER_API coffer_status coffer_migration_enumerate_v2(coffer_migration *m, const char *class_name,
                                                       coffer_migration_enumerate_fn fn, void *ctx, unsigned flags)
{
    CHECK_MIGRATION(m, "coffer_migration_enumerate");
    if (flags & ~(unsigned)COFFER_MIGRATION_COUNT_LATER)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_migration_enumerate_v2: unknown flags 0x%x",
                        flags & ~(unsigned)COFFER_MIGRATION_COUNT_LATER);
    if (!class_name || !fn)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_migration_enumerate: %s is NULL", class_name ? "fn" : "class_name");
    int oc = cf_schema_find(m->old_db.schema, class_name), nc = cf_schema_find(m->db->schema, class_name);
    if (oc < 0 && nc < 0)
        return cf_error(COFFER_ERR_NOT_FOUND, "migration: no class named '%s' in the old or the new schema", class_name);
    if (oc < 0)
        return COFFER_OK;
    coffer_iter *it;
    coffer_status st = coffer_class_iterate(&m->old_txn, (coffer_class_id)oc, &it);
    coffer_object *old_obj;
    while (st == COFFER_OK && (st = coffer_iter_next(it, &old_obj)) == COFFER_OK) {
        coffer_object *new_obj = NULL;
        if (nc >= 0) {
            st = coffer_object_get(m->txn, (coffer_class_id)nc, coffer_object_key_of(old_obj), &new_obj);
            if (st == COFFER_ERR_NOT_FOUND) {
                coffer_clear_error();
                new_obj = NULL;
                st = COFFER_OK;
            }
        }
        if (st == COFFER_OK)
            st = fn(m, old_obj, new_obj, ctx);
        coffer_object_release(new_obj);
        if (st == COFFER_OK && !(flags & COFFER_MIGRATION_COUNT_LATER))
            st = cf_progress_step(&m->progress, ++m->visited);
    }
    coffer_iter_free(it);
    return st == COFFER_DONE ? COFFER_OK : st;
}

static int same_text(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

COFFER_API coffer_status coffer_migration_rename_property(coffer_migration *m, const char *class_name, const char *from,
                                                          const char *to)
{
    CHECK_MIGRATION(m, "coffer_migration_rename_property");
    if (!class_name || !from || !to)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_migration_rename_property: a name is NULL");
    int oc = cf_schema_find(m->old_db.schema, class_name), nc = cf_schema_find(m->db->schema, class_name);
    if (oc < 0 || nc < 0)
        return cf_error(COFFER_ERR_NOT_FOUND, "cannot rename a property of class '%s': the %s schema has no such class", class_name,
                        oc < 0 ? "old" : "new");
    const cf_class *ocl = &m->old_db.schema->classes[oc];
    cf_class *ncl = &m->db->schema->classes[nc];
    int op = cf_class_find_prop(ocl, from), np = cf_class_find_prop(ncl, to);
    if (op < 0 || ocl->props[op].type == COFFER_TYPE_LINKING_OBJECTS)
        return cf_error(COFFER_ERR_NOT_FOUND, "cannot rename property '%s.%s': the old schema has no such stored property", class_name, from);
    if (np < 0 || ncl->props[np].type == COFFER_TYPE_LINKING_OBJECTS)
        return cf_error(COFFER_ERR_NOT_FOUND, "cannot rename property '%s.%s' to '%s': the new schema has no such stored property",
                        class_name, from, to);
    const cf_prop *o = &ocl->props[op];
    cf_prop *n = &ncl->props[np];
    if (n->column == o->column)
        return COFFER_OK; /* renamed already */
    if (strcmp(from, to) != 0 && cf_class_find_prop(ncl, from) >= 0)
        return cf_error(COFFER_ERR_SCHEMA, "cannot rename property '%s.%s' to '%s': '%s' is still in the new schema", class_name, from,
                        to, from);
    if (o->type != n->type || o->collection != n->collection || !same_text(o->object_class, n->object_class))
        return cf_error(COFFER_ERR_SCHEMA, "cannot rename property '%s.%s' to '%s': it would change type (%s%s%s to %s%s%s)", class_name,
                        from, to, coffer_type_name(o->type), o->collection ? " collection" : "", o->object_class ? " link" : "",
                        coffer_type_name(n->type), n->collection ? " collection" : "", n->object_class ? " link" : "");
    if (cf_prop_optional(o) && !cf_prop_optional(n) && !cf_prop_holds_links(n))
        return cf_error(COFFER_ERR_SCHEMA, "cannot rename property '%s.%s' to '%s': it would change from optional to required",
                        class_name, from, to);
    if (m->txn->generation != m->generation)
        return cf_error(COFFER_ERR_MISUSE, "cannot rename property '%s.%s' to '%s': the migration has already written objects; "
                        "rename properties first", class_name, from, to);
    coffer_status st = COFFER_OK;
    if (cf_prop_indexed(n)) /* entries built for the new, empty column */
        st = cf_index_drop_column(m->txn, (coffer_class_id)nc, n->column);
    if (st != COFFER_OK)
        return st;
    /* The new property takes over the old one's column: values, links,
     * collections and backlinks stay where they are. */
    uint16_t column = o->column;
    n->column = column;
    cf_class *sc = &m->plan->stored->classes[cf_schema_find(m->plan->stored, class_name)];
    sc->props[cf_class_find_prop(sc, to)].column = column;
    for (size_t a = 0; a < m->plan->nactions; a++) {
        cf_action *act = &m->plan->actions[a];
        if (act->kind == CF_ACTION_DROP_GRAPH && act->table == ncl->table && act->column == column)
            act->skip = 1;
    }
    if (cf_prop_indexed(n)) /* the old column's entries went with its old index */
        st = cf_object_build_index(m->txn, (coffer_class_id)nc, (coffer_property_id)np, 0);
    m->generation = m->txn->generation;
    return st;
}

/* Deletes every object of a class only the old schema has, through a write
 * transaction that shares the migration's but sees the old schema. */
static coffer_status delete_old_class(coffer_migration *m, int oc)
{
    coffer_txn w = {.magic = CF_TXN_MAGIC, .db = &m->old_db, .mdb = m->txn->mdb, .write = 1, .active = 1,
                    .borrowed = 1, .thread = pthread_self()};
    coffer_status st = cf_txn_alloc_state(&w, m->old_db.schema->nclasses);
    if (st == COFFER_OK)
        st = coffer_class_clear(&w, (coffer_class_id)oc);
    if (w.failed)
        m->txn->failed = 1;
    cf_txn_close_cursors(&w);
    cf_txn_free_handles(&w);
    m->txn->generation++; /* records moved under the migration's handles */
    if (st != COFFER_OK)
        return st;
    /* Forget the class: a later schema may bring a new one by that name. */
    cf_schema *s = m->plan->stored;
    int k = cf_schema_find(s, m->old_db.schema->classes[oc].name);
    if (k >= 0)
        cf_schema_remove_class(s, (size_t)k);
    return COFFER_OK;
}

COFFER_API coffer_status coffer_migration_delete_data(coffer_migration *m, const char *class_name)
{
    CHECK_MIGRATION(m, "coffer_migration_delete_data");
    if (!class_name)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_migration_delete_data: class_name is NULL");
    int nc = cf_schema_find(m->db->schema, class_name);
    if (nc >= 0)
        return coffer_class_clear(m->txn, (coffer_class_id)nc);
    int oc = cf_schema_find(m->old_db.schema, class_name);
    if (oc < 0)
        return cf_error(COFFER_ERR_NOT_FOUND, "migration: no class named '%s' in the old or the new schema", class_name);
    if (cf_schema_find(m->plan->stored, class_name) < 0)
        return COFFER_OK; /* deleted already */
    return delete_old_class(m, oc);
}

/* ---- running ---------------------------------------------------------------- */

/* After the callback: release what removed or retyped properties held (read
 * from the old snapshot, which still has every object), then check the
 * primary keys the new schema indexes afresh. */
static coffer_status finish(coffer_migration *m)
{
    coffer_status st = COFFER_OK;
    cf_plan *plan = m->plan;
    for (size_t a = 0; st == COFFER_OK && a < plan->nactions; a++) {
        cf_action *act = &plan->actions[a];
        if (act->kind != CF_ACTION_DROP_GRAPH || act->skip)
            continue;
        int nc = cf_graph_class_of_table(m->db, act->table), oc = -1;
        for (size_t i = 0; i < m->old_db.schema->nclasses; i++)
            if (m->old_db.schema->classes[i].table == act->table)
                oc = (int)i;
        if (nc >= 0 && oc >= 0)
            st = cf_object_drop_graph_column_from(m->txn, (coffer_class_id)nc, &act->old, act->old_target_table, &m->old_txn,
                                                  (coffer_class_id)oc);
    }
    const cf_schema *view = m->db->schema;
    for (size_t a = 0; st == COFFER_OK && a < plan->nactions; a++) {
        const cf_action *act = &plan->actions[a];
        if (act->kind != CF_ACTION_BUILD_INDEX)
            continue;
        int nc = cf_graph_class_of_table(m->db, act->table);
        if (nc < 0)
            continue;
        const cf_class *c = &view->classes[nc];
        if (c->pk < 0)
            continue;
        /* Rebuild with the uniqueness check the migration was spared. */
        st = cf_index_drop_column(m->txn, (coffer_class_id)nc, c->props[c->pk].column);
        if (st == COFFER_OK)
            st = cf_object_build_index(m->txn, (coffer_class_id)nc, (coffer_property_id)c->pk, 1);
        if (st != COFFER_OK)
            st = cf_error_prefix("after the migration");
    }
    return st;
}

/* Begins reporting the migration: its units are the objects of the file
 * before it, counted in the old view. */
static coffer_status begin_progress(coffer_migration *m, const coffer_config *config)
{
    uint64_t total = 0;
    const cf_schema *old = m->old_db.schema;
    for (size_t i = 0; i < old->nclasses; i++) {
        uint64_t n = 0;
        coffer_status st = cf_objects_count_table(&m->old_txn, old->classes[i].table, old->classes[i].name, &n);
        if (st != COFFER_OK)
            return st;
        total += n;
    }
    return cf_progress_begin(&m->progress, config->progress, config->progress_ctx, COFFER_PROGRESS_MIGRATION, total);
}

coffer_status cf_migration_run(const coffer_config *config, coffer_txn *txn, cf_plan *plan, const cf_schema *stored,
                               const char *label)
{
    coffer_migration m = {.db = txn->db, .txn = txn, .plan = plan, .label = label};
    coffer_status st = old_view_open(&m, stored);
    if (st == COFFER_OK && config->progress)
        st = begin_progress(&m, config);
    if (st == COFFER_OK) {
        txn->borrowed = 1;
        txn->db->in_migration = 1;
        m.generation = txn->generation;
        coffer_clear_error();
        st = config->migration(&m, stored->version, config->schema_version, config->migration_ctx);
        txn->db->in_migration = 0;
        txn->borrowed = 0;
        if (st != COFFER_OK) {
            if (coffer_last_status() == st && *coffer_last_error())
                cf_error_prefix("the migration of %s from schema version %" PRIu64 " to %" PRIu64 " failed", label, stored->version,
                                config->schema_version);
            else
                cf_error(st, "the migration callback of %s (schema version %" PRIu64 " to %" PRIu64 ") returned %s; nothing was changed",
                         label, stored->version, config->schema_version, coffer_strerror(st));
        } else if (txn->failed) {
            st = cf_error(COFFER_ERR_MISUSE, "a write of the migration of %s failed; nothing was changed", label);
        }
        if (m.progress.cancelled) /* whatever the callback made of it */
            st = cf_error(COFFER_ERR_CANCELLED, "the progress callback cancelled the migration of %s; nothing was changed", label);
        if (st == COFFER_OK)
            st = finish(&m);
        if (st == COFFER_OK)
            st = cf_progress_end(&m.progress); /* the last moment to cancel: nothing is committed yet */
    }
    old_view_close(&m);
    return st;
}

/* ---- classes the new schema leaves out ------------------------------------ */

static coffer_status count_stored(coffer_txn *txn, const cf_class *c, uint64_t *out)
{
    return cf_objects_count_table(txn, c->table, c->name, out);
}

coffer_status cf_migration_drop_left_out(coffer_txn *txn, cf_plan *plan, const char *label)
{
    cf_schema *s = plan->stored;
    /* Every left-out class must be empty before any goes: a refusal then
     * names the first one in the file's order, whatever the others hold. */
    for (size_t i = 0; i < plan->nleft_out; i++) {
        int k = cf_schema_find(s, plan->left_out[i].name);
        if (k < 0)
            continue; /* the migration deleted its data */
        uint64_t n = 0;
        coffer_status st = count_stored(txn, &s->classes[k], &n);
        if (st != COFFER_OK)
            return st;
        if (n)
            return cf_error(COFFER_ERR_SCHEMA,
                            "the schema of version %" PRIu64 " leaves out class '%s' of %s, which still has %" PRIu64
                            " object%s and whose property '%s' can link to the classes kept; delete its data in the "
                            "migration (coffer_migration_delete_data) or keep '%s' in the schema; nothing was changed",
                            s->version, plan->left_out[i].name, label, n, n == 1 ? "" : "s", plan->left_out[i].via,
                            plan->left_out[i].name);
    }
    for (size_t i = 0; i < plan->nleft_out; i++) {
        int k = cf_schema_find(s, plan->left_out[i].name);
        if (k >= 0) {
            cf_schema_remove_class(s, (size_t)k);
            plan->changed = 1;
        }
    }
    /* A class that stays (left out too, but unable to link to the classes
     * kept) cannot keep naming one that went. */
    for (size_t i = 0; i < s->nclasses; i++) {
        const cf_class *c = &s->classes[i];
        for (size_t j = 0; j < c->nprops; j++) {
            const char *target = c->props[j].object_class;
            if (target && cf_schema_find(s, target) < 0)
                return cf_error(COFFER_ERR_SCHEMA,
                                "class '%s' cannot leave %s: class '%s', which stays in the file, refers to it through "
                                "property '%s'; delete the data of '%s' in the migration too, or keep '%s' in the schema; "
                                "nothing was changed",
                                target, label, c->name, c->props[j].name, c->name, target);
        }
    }
    return COFFER_OK;
}
