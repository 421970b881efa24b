/* subscriptions — the latest subscription set of a file, stored under the
 * metadata key `Sq` as: version (u64le), state (u8: pending, complete or
 * error), the service's message (string), count (varint), then per
 * subscription its name, class and query (strings, as on the wire). An
 * update is a copy of the latest set that its commit stores with the next
 * version; the sync session (sync/session.c) sends the latest set in a
 * SUBSCRIBE and records the service's answer here. */
#include "sync/subscriptions.h"

#include <stdlib.h>
#include <string.h>

#include "schema/schema.h"
#include "storage/env.h"
#include "storage/txn.h"
#include "sync/session.h"
#include "sync/state.h"
#include "util/error.h"

static const uint8_t KEY_SUBS[] = {'S', 'q'};
/* The last set the service completed: what a session subscribes with while
 * the latest is refused (the service goes on with the set before it). */
static const uint8_t KEY_ACTIVE[] = {'S', 'a'};

struct coffer_subscription_set {
    coffer_db *db;
    int mutable_; /* an update not committed yet */
    int state;    /* the snapshot's state (coffer_subscription_state) */
    cf_subs subs;
};

/* ------------------------------------------------------------------------ */
/* Storage                                                                   */
/* ------------------------------------------------------------------------ */

void cf_subs_free(cf_subs *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->count; i++) {
        free(s->queries[i].name);
        free(s->queries[i].cls);
        free(s->queries[i].query);
    }
    free(s->queries);
    free(s->error);
    memset(s, 0, sizeof *s);
}

static coffer_status add_query(cf_subs *s, const char *name, const char *cls, const char *query)
{
    cf_subs_query *grown = cf_grow(s->queries, s->count, &s->cap, sizeof *s->queries, 4);
    if (!grown)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory adding a subscription");
    s->queries = grown;
    cf_subs_query q = {strdup(name ? name : ""), strdup(cls), strdup(query)};
    if (!q.name || !q.cls || !q.query) {
        free(q.name);
        free(q.cls);
        free(q.query);
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory adding a subscription");
    }
    s->queries[s->count++] = q;
    return COFFER_OK;
}

static coffer_status decode(const uint8_t *p, size_t n, cf_subs *out)
{
    cf_wreader r = cf_wreader_make(p, n, "the stored subscription set");
    uint64_t count;
    uint8_t state;
    cf_slice error;
    coffer_status st;
    if ((st = cf_wire_get_u64le(&r, &out->version, "its version")) != COFFER_OK ||
        (st = cf_wire_get_u8(&r, &state, "its state")) != COFFER_OK ||
        (st = cf_wire_get_bytes(&r, &error, "its error")) != COFFER_OK ||
        (st = cf_wire_get_count(&r, &count, 3, "its count")) != COFFER_OK)
        return st;
    out->state = state;
    if (!(out->error = cf_slice_strdup(error)))
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory reading the subscription set");
    for (uint64_t i = 0; i < count; i++) {
        cf_slice name, cls, query;
        if ((st = cf_wire_get_string(&r, &name, "a subscription name")) != COFFER_OK ||
            (st = cf_wire_get_string(&r, &cls, "a subscription class")) != COFFER_OK ||
            (st = cf_wire_get_string(&r, &query, "a subscription query")) != COFFER_OK)
            return st;
        char *a = cf_slice_strdup(name), *b = cf_slice_strdup(cls), *c = cf_slice_strdup(query);
        st = a && b && c ? add_query(out, a, b, c) : cf_error(COFFER_ERR_NO_MEMORY, "out of memory");
        free(a);
        free(b);
        free(c);
        if (st != COFFER_OK)
            return st;
    }
    if (cf_wreader_left(&r))
        return cf_error(COFFER_ERR_CORRUPTED, "the stored subscription set has %zu bytes after its end",
                        cf_wreader_left(&r));
    return COFFER_OK;
}

static coffer_status read_key(coffer_txn *txn, const uint8_t key[2], cf_subs *out)
{
    memset(out, 0, sizeof *out);
    uint8_t *v = NULL;
    size_t n = 0;
    int has = 0;
    coffer_status st = cf_sync_meta_get(txn, key, 2, &v, &n, &has, "the subscription set");
    if (st == COFFER_OK && has)
        st = decode(v, n, out);
    else if (st == COFFER_OK) {
        out->state = COFFER_SUBSCRIPTION_COMPLETE; /* the empty set of a new file */
        if (!(out->error = strdup("")))
            st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory");
    }
    free(v);
    if (st != COFFER_OK)
        cf_subs_free(out);
    return st;
}

coffer_status cf_subs_read(coffer_txn *txn, cf_subs *out) { return read_key(txn, KEY_SUBS, out); }

/* The (name, class, query) strings of every subscription. */
static void encode_queries(const cf_subs *s, cf_buf *b)
{
    for (size_t i = 0; i < s->count; i++) {
        cf_wire_string(b, s->queries[i].name, strlen(s->queries[i].name));
        cf_wire_string(b, s->queries[i].cls, strlen(s->queries[i].cls));
        cf_wire_string(b, s->queries[i].query, strlen(s->queries[i].query));
    }
}

static coffer_status write_key(coffer_txn *txn, const uint8_t key[2], const cf_subs *s)
{
    cf_buf b = {0};
    cf_wire_u64le(&b, s->version);
    cf_wire_u8(&b, (uint8_t)s->state);
    const char *error = s->error ? s->error : "";
    cf_wire_string(&b, error, strlen(error));
    cf_wire_varint(&b, s->count);
    encode_queries(s, &b);
    coffer_status st = b.failed ? cf_error(COFFER_ERR_NO_MEMORY, "out of memory storing the subscription set")
                                : cf_store_put(txn, txn->db->meta_dbi, CF_META_DBI, key, 2, b.p, b.len, 0,
                                               "cannot store the subscription set");
    free(b.p);
    return st;
}

static coffer_status write_subs(coffer_txn *txn, const cf_subs *s) { return write_key(txn, KEY_SUBS, s); }

coffer_status cf_subs_record(coffer_txn *txn, uint64_t version, int state, const char *message)
{
    cf_subs s;
    coffer_status st = cf_subs_read(txn, &s);
    if (st != COFFER_OK)
        return st;
    if (s.version == version && s.state != state) {
        char *copy = strdup(message ? message : "");
        if (!copy)
            st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory");
        else {
            free(s.error);
            s.error = copy;
            s.state = state;
            st = write_subs(txn, &s);
            if (st == COFFER_OK && state == COFFER_SUBSCRIPTION_COMPLETE)
                st = write_key(txn, KEY_ACTIVE, &s);
        }
    }
    cf_subs_free(&s);
    return st;
}

coffer_status cf_subs_subscribe_frame(coffer_db *db, cf_buf *b, uint64_t *version)
{
    coffer_txn *txn;
    coffer_status st = coffer_txn_begin(db, COFFER_TXN_READ, &txn);
    if (st != COFFER_OK)
        return st;
    cf_subs s;
    st = cf_subs_read(txn, &s);
    if (st == COFFER_OK && s.state == COFFER_SUBSCRIPTION_ERROR) {
        /* The service refused it: go on with the last set it completed. */
        cf_subs_free(&s);
        st = read_key(txn, KEY_ACTIVE, &s);
    }
    coffer_txn_free(txn);
    if (st != COFFER_OK)
        return st;
    cf_buf queries = {0};
    encode_queries(&s, &queries);
    cf_frame_subscribe_encode(b, s.version, s.count, queries.p, queries.len);
    b->failed |= queries.failed;
    *version = s.version;
    free(queries.p);
    cf_subs_free(&s);
    return COFFER_OK;
}

/* ------------------------------------------------------------------------ */
/* The public calls                                                          */
/* ------------------------------------------------------------------------ */

static coffer_status check_db(coffer_db *db, const char *fn)
{
    if (!db || db->magic != CF_DB_MAGIC || db->closed)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: the database handle is NULL or closed", fn);
    return COFFER_OK;
}

static coffer_status take(coffer_db *db, const char *fn, int mutable_, coffer_subscription_set **out)
{
    coffer_status st = check_db(db, fn);
    if (st != COFFER_OK)
        return st;
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    if (mutable_ && db->read_only)
        return cf_error(COFFER_ERR_READ_ONLY, "%s: the handle is read-only", fn);
    coffer_subscription_set *set = calloc(1, sizeof *set);
    if (!set)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory");
    coffer_txn *txn;
    if ((st = coffer_txn_begin(db, COFFER_TXN_READ, &txn)) == COFFER_OK) {
        st = cf_subs_read(txn, &set->subs);
        coffer_txn_free(txn);
    }
    if (st != COFFER_OK) {
        free(set);
        return st;
    }
    set->db = db;
    set->mutable_ = mutable_;
    set->state = set->subs.state;
    if (mutable_)
        set->state = COFFER_SUBSCRIPTION_PENDING;
    else if (set->state == COFFER_SUBSCRIPTION_PENDING && cf_sync_session_subscriptions_sent(db) >= set->subs.version)
        set->state = COFFER_SUBSCRIPTION_BOOTSTRAPPING;
    *out = set;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_subscriptions_latest(coffer_db *db, coffer_subscription_set **out)
{
    return take(db, "coffer_subscriptions_latest", 0, out);
}

COFFER_API coffer_status coffer_subscriptions_update(coffer_db *db, coffer_subscription_set **out)
{
    return take(db, "coffer_subscriptions_update", 1, out);
}

static coffer_status check_update(coffer_subscription_set *set, const char *fn)
{
    if (!set)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: the subscription set is NULL", fn);
    if (!set->mutable_)
        return cf_error(COFFER_ERR_MISUSE,
                        "%s: subscription set %llu is not an update (begin one with coffer_subscriptions_update)", fn,
                        (unsigned long long)set->subs.version);
    return COFFER_OK;
}

COFFER_API coffer_status coffer_subscription_set_append(coffer_subscription_set *set, const char *name,
                                                        const char *class_name, const char *query)
{
    const char *fn = "coffer_subscription_set_append";
    coffer_status st = check_update(set, fn);
    if (st != COFFER_OK)
        return st;
    if (!class_name || !query || !*query)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: the %s is %s", fn, !class_name ? "class" : "query",
                        !class_name || !query ? "NULL" : "empty");
    if (set->db->closed)
        return cf_error(COFFER_ERR_MISUSE, "%s: the database handle is closed", fn);
    int c = cf_schema_find(set->db->schema, class_name);
    if (c < 0)
        return cf_error(COFFER_ERR_SCHEMA, "%s: the schema has no class '%s'", fn, class_name);
    if (cf_class_embedded(&set->db->schema->classes[c]))
        return cf_error(COFFER_ERR_SCHEMA, "%s: class '%s' is embedded: subscribe to its owners", fn, class_name);
    if (!name)
        name = "";
    for (size_t i = 0; i < set->subs.count; i++) {
        const cf_subs_query *q = &set->subs.queries[i];
        int same = strcmp(q->cls, class_name) == 0 && strcmp(q->query, query) == 0;
        if (strcmp(q->name, name) == 0 && (same || *name))
            return same ? COFFER_OK
                        : cf_error(COFFER_ERR_PRIMARY_KEY_EXISTS,
                                   "%s: a subscription named '%s' exists already (%s: %s); remove it first", fn, name,
                                   q->cls, q->query);
    }
    return add_query(&set->subs, name, class_name, query);
}

/* Removes the subscriptions for which `drop` holds; their count. */
static size_t remove_where(cf_subs *s, int (*drop)(const cf_subs_query *q, const char *arg), const char *arg)
{
    size_t k = 0, removed = 0;
    for (size_t i = 0; i < s->count; i++) {
        if (drop(&s->queries[i], arg)) {
            free(s->queries[i].name);
            free(s->queries[i].cls);
            free(s->queries[i].query);
            removed++;
        } else
            s->queries[k++] = s->queries[i];
    }
    s->count = k;
    return removed;
}

static int named(const cf_subs_query *q, const char *name) { return strcmp(q->name, name) == 0; }
static int of_class(const cf_subs_query *q, const char *cls) { return strcmp(q->cls, cls) == 0; }
static int any(const cf_subs_query *q, const char *arg)
{
    (void)q;
    (void)arg;
    return 1;
}

COFFER_API coffer_status coffer_subscription_set_remove_named(coffer_subscription_set *set, const char *name,
                                                              int *removed)
{
    coffer_status st = check_update(set, "coffer_subscription_set_remove_named");
    if (st != COFFER_OK)
        return st;
    if (!name)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_subscription_set_remove_named: the name is NULL");
    size_t n = *name ? remove_where(&set->subs, named, name) : 0;
    if (removed)
        *removed = n > 0;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_subscription_set_remove_class(coffer_subscription_set *set, const char *class_name,
                                                              size_t *removed)
{
    coffer_status st = check_update(set, "coffer_subscription_set_remove_class");
    if (st != COFFER_OK)
        return st;
    if (!class_name)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_subscription_set_remove_class: the class is NULL");
    size_t n = remove_where(&set->subs, of_class, class_name);
    if (removed)
        *removed = n;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_subscription_set_remove_all(coffer_subscription_set *set, size_t *removed)
{
    coffer_status st = check_update(set, "coffer_subscription_set_remove_all");
    if (st != COFFER_OK)
        return st;
    size_t n = remove_where(&set->subs, any, NULL);
    if (removed)
        *removed = n;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_subscription_set_commit(coffer_subscription_set *set, uint64_t *version)
{
    const char *fn = "coffer_subscription_set_commit";
    coffer_status st = check_update(set, fn);
    if (st != COFFER_OK)
        return st;
    if ((st = check_db(set->db, fn)) != COFFER_OK)
        return cf_error(COFFER_ERR_MISUSE, "%s: the set's database handle is closed", fn);
    coffer_txn *txn;
    if ((st = coffer_txn_begin(set->db, COFFER_TXN_WRITE, &txn)) != COFFER_OK)
        return st;
    uint64_t previous = set->subs.version;
    cf_subs latest;
    if ((st = cf_subs_read(txn, &latest)) == COFFER_OK) {
        cf_subs next = set->subs;
        next.version = latest.version + 1;
        next.state = COFFER_SUBSCRIPTION_PENDING;
        char *empty = strdup("");
        if (!empty)
            st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory");
        else {
            free(next.error);
            next.error = empty;
            set->subs = next;
            st = write_subs(txn, &set->subs);
        }
        cf_subs_free(&latest);
    }
    st = cf_sync_txn_finish(txn, st);
    if (st != COFFER_OK) {
        set->subs.version = previous; /* still the update it was */
        return st;
    }
    set->mutable_ = 0;
    set->state = COFFER_SUBSCRIPTION_PENDING;
    if (version)
        *version = set->subs.version;
    cf_sync_session_subscriptions_changed(set->db);
    return COFFER_OK;
}

COFFER_API uint64_t coffer_subscription_set_version(const coffer_subscription_set *set)
{
    return set ? set->subs.version : 0;
}

COFFER_API size_t coffer_subscription_set_count(const coffer_subscription_set *set)
{
    return set ? set->subs.count : 0;
}

COFFER_API coffer_status coffer_subscription_set_at(const coffer_subscription_set *set, size_t index,
                                                    const char **name, const char **class_name, const char **query)
{
    if (!set)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_subscription_set_at: the subscription set is NULL");
    if (index >= set->subs.count)
        return cf_error(COFFER_ERR_NOT_FOUND, "coffer_subscription_set_at: index %zu of a set of %zu subscriptions",
                        index, set->subs.count);
    const cf_subs_query *q = &set->subs.queries[index];
    if (name)
        *name = q->name;
    if (class_name)
        *class_name = q->cls;
    if (query)
        *query = q->query;
    return COFFER_OK;
}

COFFER_API coffer_status coffer_subscription_set_find(const coffer_subscription_set *set, const char *name,
                                                      size_t *index)
{
    if (!set || !name || !index)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_subscription_set_find: the %s is NULL",
                        !set ? "set" : !name ? "name" : "index");
    for (size_t i = 0; *name && i < set->subs.count; i++) {
        if (strcmp(set->subs.queries[i].name, name) == 0) {
            *index = i;
            return COFFER_OK;
        }
    }
    return cf_error(COFFER_ERR_NOT_FOUND, "coffer_subscription_set_find: no subscription is named '%s'", name);
}

COFFER_API int coffer_subscription_set_state(const coffer_subscription_set *set)
{
    return set ? set->state : COFFER_SUBSCRIPTION_PENDING;
}

COFFER_API const char *coffer_subscription_set_error(const coffer_subscription_set *set)
{
    return set && set->state == COFFER_SUBSCRIPTION_ERROR && set->subs.error ? set->subs.error : "";
}

COFFER_API void coffer_subscription_set_free(coffer_subscription_set *set)
{
    if (!set)
        return;
    cf_subs_free(&set->subs);
    free(set);
}
