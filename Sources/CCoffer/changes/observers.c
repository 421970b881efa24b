/* observers — registering observers and stopping their tokens, refreshing a
 * handle (the cycle that reads the new versions' change log, computes what
 * each observer is told and calls the callbacks), auto-refresh on the
 * handle's notifier thread (asleep on the file's commit signal), and
 * delivery through a program's scheduler. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "changes/hub.h"
#include "query/observed.h"
#include "storage/txn.h"
#include "util/buffer.h"
#include "util/error.h"

#define TOKEN_MAGIC 0xC0FF70C1u
/* A notifier also looks every so often without a signal: commits of an
 * older library, or a note file that could not be mapped. */
#define NOTIFIER_TIMEOUT_MS 1000

struct coffer_token {
    uint32_t magic;
    cf_observer *obs;
};

static coffer_status check_db(coffer_db *db)
{
    if (!db || db->magic != CF_DB_MAGIC)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "database handle is NULL or not a database");
    if (db->closed)
        return cf_error(COFFER_ERR_MISUSE, "the database is closed");
    return COFFER_OK;
}

/* ------------------------------------------------------------------------ */
/* The hub                                                                   */
/* ------------------------------------------------------------------------ */

static cf_hub *hub_of(coffer_db *db)
{
    pthread_mutex_lock(&db->lock);
    if (!db->hub) {
        cf_hub *hub = calloc(1, sizeof *hub);
        if (hub) {
            hub->db = db;
            pthread_mutex_init(&hub->lock, NULL);
            pthread_cond_init(&hub->cond, NULL);
            pthread_mutex_init(&hub->cycle_lock, NULL);
            hub->auto_refresh = 1;
            hub->refs = 1;
            db->hub = hub;
        }
    }
    cf_hub *hub = db->hub;
    pthread_mutex_unlock(&db->lock);
    if (!hub)
        cf_error(COFFER_ERR_NO_MEMORY, "out of memory observing a database");
    return hub;
}

static void hub_unref(cf_hub *hub)
{
    pthread_mutex_lock(&hub->lock);
    int last = --hub->refs == 0;
    pthread_mutex_unlock(&hub->lock);
    if (!last)
        return;
    pthread_mutex_destroy(&hub->lock);
    pthread_cond_destroy(&hub->cond);
    pthread_mutex_destroy(&hub->cycle_lock);
    free(hub);
}

static void observer_free(cf_observer *obs)
{
    if (obs->base)
        coffer_txn_free(obs->base);
    if (obs->query)
        cf_query_unshare(obs->query);
    free(obs->tables);
    free(obs->paths);
    free(obs->keys);
    free(obs->rows);
    cf_items_free(obs->items, obs->nitems);
    free(obs);
}

/* Unlinks and frees the stopped observers (with hub->lock, no cycle running). */
static void sweep_stopped(cf_hub *hub)
{
    for (cf_observer **p = &hub->observers; *p;) {
        cf_observer *obs = *p;
        if (obs->stopped) {
            *p = obs->next;
            observer_free(obs);
        } else {
            p = &obs->next;
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Which tables matter to an observer                                        */
/* ------------------------------------------------------------------------ */

static int add_table(cf_observer *obs, size_t *cap, uint32_t table)
{
    for (size_t i = 0; i < obs->ntables; i++)
        if (obs->tables[i] == table)
            return 0;
    uint32_t *grown = cf_grow(obs->tables, obs->ntables, cap, sizeof *obs->tables, 8);
    if (!grown)
        return -1;
    obs->tables = grown;
    obs->tables[obs->ntables++] = table;
    return 0;
}

/* Adds class `cls` and, with `follow`, every class its links and linking
 * objects reach (a query or a modification can read through them). */
static int add_reachable(cf_observer *obs, size_t *cap, const cf_schema *schema, coffer_class_id cls, int follow)
{
    size_t first = obs->ntables;
    if (add_table(obs, cap, schema->classes[cls].table))
        return -1;
    if (obs->ntables == first || !follow)
        return 0; /* seen before, or only this class */
    const cf_class *c = &schema->classes[cls];
    for (size_t p = 0; p < c->nprops; p++) {
        const cf_prop *prop = &c->props[p];
        int linked = prop->type == COFFER_TYPE_LINK || prop->type == COFFER_TYPE_LINKING_OBJECTS;
        if (linked && prop->target >= 0 && add_reachable(obs, cap, schema, (coffer_class_id)prop->target, 1))
            return -1;
    }
    return 0;
}

static int compare_tables(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return a < b ? -1 : a > b;
}

/* Fills obs->tables: an object's own class (and the classes on its key
 * paths); for results and lists every class reachable from the observed one
 * (and a list's owner). A database observer needs none. */
static coffer_status relevant_tables(coffer_db *db, cf_observer *obs)
{
    const cf_schema *schema = db->schema;
    size_t cap = 0;
    int failed = 0;
    if (obs->kind == CF_OBS_OBJECT) {
        failed = add_reachable(obs, &cap, schema, obs->cls, 0);
        for (size_t i = 0; !failed && i < obs->npaths; i++)
            for (size_t s = 0; !failed && s < obs->paths[i].nsteps; s++) {
                const cf_prop *p = &schema->classes[obs->paths[i].steps[s].cls].props[obs->paths[i].steps[s].prop];
                failed = add_reachable(obs, &cap, schema, obs->paths[i].steps[s].cls, 0) ||
                         (p->target >= 0 && add_reachable(obs, &cap, schema, (coffer_class_id)p->target, 0));
            }
    } else if (obs->kind == CF_OBS_RESULTS) {
        failed = add_reachable(obs, &cap, schema, obs->cls, 1);
    } else if (obs->kind != CF_OBS_DB) { /* a list, a list view, a set or a map */
        const cf_prop *p = &schema->classes[obs->cls].props[obs->prop];
        failed = add_table(obs, &cap, schema->classes[obs->cls].table) ||
                 (p->target >= 0 && add_reachable(obs, &cap, schema, (coffer_class_id)p->target, 1));
    }
    if (failed)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory observing a database");
    if (obs->ntables)
        qsort(obs->tables, obs->ntables, sizeof *obs->tables, compare_tables);
    return COFFER_OK;
}

/* Whether the gathered changes touch a table the observer depends on. */
static int touches(const cf_observer *obs, const cf_changes_read *c)
{
    if (c->gap)
        return 1;
    for (size_t i = 0, j = 0; i < obs->ntables && j < c->ntouched;) {
        if (obs->tables[i] == c->touched[j])
            return 1;
        if (obs->tables[i] < c->touched[j])
            i++;
        else
            j++;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The refresh cycle                                                         */
/* ------------------------------------------------------------------------ */

/* Calls one observer's callback unless its token was stopped; a stop from
 * another thread waits until this returns. */
static void deliver(cf_hub *hub, cf_observer *obs, coffer_txn *txn, uint64_t old_version, uint64_t new_version,
                    const coffer_collection_changes *cc, const coffer_object_changes *oc, const coffer_map_changes *mc)
{
    pthread_mutex_lock(&hub->lock);
    if (obs->stopped) {
        pthread_mutex_unlock(&hub->lock);
        return;
    }
    hub->delivering = obs;
    hub->delivering_thread = pthread_self();
    pthread_mutex_unlock(&hub->lock);
    switch (obs->kind) {
    case CF_OBS_DB: obs->cb.db(obs->ctx, txn, old_version, new_version); break;
    case CF_OBS_RESULTS:
    case CF_OBS_LIST:
    case CF_OBS_LIST_VIEW:
    case CF_OBS_SET: obs->cb.collection(obs->ctx, txn, cc); break;
    case CF_OBS_OBJECT: obs->cb.object(obs->ctx, txn, oc); break;
    case CF_OBS_MAP: obs->cb.map(obs->ctx, txn, mc); break;
    }
    pthread_mutex_lock(&hub->lock);
    hub->delivering = NULL;
    pthread_cond_broadcast(&hub->cond);
    pthread_mutex_unlock(&hub->lock);
}

/* The observers to visit this cycle, in registration order (with hub->lock). */
static cf_observer **snapshot_observers(cf_hub *hub, size_t *n)
{
    size_t count = 0;
    for (cf_observer *o = hub->observers; o; o = o->next)
        count++;
    cf_observer **arr = calloc(count ? count : 1, sizeof *arr);
    if (!arr)
        return NULL;
    /* The list is newest first. */
    size_t i = count;
    for (cf_observer *o = hub->observers; o; o = o->next)
        arr[--i] = o;
    *n = count;
    return arr;
}

/* Computes and delivers what one observer is told of versions
 * (old_version, new_version], `old_txn` at the first and `new_txn` at the
 * second; `all` is the change log of that range read for every observer,
 * or NULL when this observer's range is its own. */
static coffer_status observe_changes(cf_hub *hub, cf_observer *obs, coffer_txn *old_txn, coffer_txn *new_txn,
                                     uint64_t old_version, uint64_t new_version, const cf_changes_read *all)
{
    if (new_version == old_version)
        return COFFER_OK;
    pthread_mutex_lock(&hub->lock);
    uint64_t skip = obs->skip_version;
    pthread_mutex_unlock(&hub->lock);
    int skipped = skip > old_version && skip <= new_version;
    cf_changes_read own;
    const cf_changes_read *c = all;
    if (!all || skipped) {
        /* A range of its own, or a commit this observer is not told of: read
         * the range (without that commit's modifications). */
        coffer_status st = cf_changes_gather(new_txn, old_version, new_version, skipped ? skip : 0, &own);
        if (st != COFFER_OK)
            return st;
        c = &own;
    }
    coffer_status st = COFFER_OK;
    int tell = 0;
    if (obs->kind != CF_OBS_DB && !touches(obs, c)) {
        /* no commit changed a class it depends on: nothing to compute */
    } else if (obs->kind == CF_OBS_DB) {
        deliver(hub, obs, new_txn, old_version, new_version, NULL, NULL, NULL);
    } else if (obs->kind == CF_OBS_OBJECT) {
        coffer_object_changes oc;
        st = cf_compute_object(obs, old_txn, new_txn, c, &tell, &oc);
        if (st == COFFER_OK && tell) {
            deliver(hub, obs, new_txn, old_version, new_version, NULL, &oc, NULL);
            cf_object_changes_free(&oc);
        }
    } else if (obs->kind == CF_OBS_MAP) {
        coffer_map_changes mc;
        st = cf_compute_map(obs, new_txn, c, &tell, &mc);
        if (st == COFFER_OK && tell) {
            deliver(hub, obs, new_txn, old_version, new_version, NULL, NULL, &mc);
            cf_map_changes_free(&mc);
        }
    } else {
        coffer_collection_changes cc;
        st = cf_compute_collection(obs, old_txn, new_txn, c, &tell, &cc);
        if (st == COFFER_OK && tell) {
            deliver(hub, obs, new_txn, old_version, new_version, &cc, NULL, NULL);
            cf_changeset_free(&cc.cs);
        }
    }
    if (c == &own)
        cf_changes_release(&own);
    return st;
}

/* The first callback: the state at the version of registration, then the
 * commits made since, as a change. */
static coffer_status observe_first(cf_hub *hub, cf_observer *obs, coffer_txn *new_txn, uint64_t new_version)
{
    coffer_txn *base = obs->base ? obs->base : new_txn;
    uint64_t base_version = obs->base ? obs->base_version : new_version;
    coffer_status st = cf_compute_initial(obs, base);
    if (st == COFFER_OK) {
        deliver(hub, obs, base, base_version, base_version, NULL, NULL, NULL);
        pthread_mutex_lock(&hub->lock);
        int go_on = !obs->stopped && !obs->finished;
        pthread_mutex_unlock(&hub->lock);
        if (go_on)
            st = observe_changes(hub, obs, base, new_txn, base_version, new_version, NULL);
    }
    if (obs->base) {
        coffer_txn_free(obs->base);
        obs->base = NULL;
    }
    return st;
}

static coffer_status observe_one(cf_hub *hub, cf_observer *obs, coffer_txn *old_txn, coffer_txn *new_txn,
                                 uint64_t old_version, uint64_t new_version, const cf_changes_read *all)
{
    /* The flags are shared with coffer_token_stop() and the notifier's
     * cycle_due(), which read and write them under the hub's lock. An
     * observer registered after this cycle's version was fixed waits for
     * the next cycle. */
    pthread_mutex_lock(&hub->lock);
    int initial = !obs->stopped && obs->initial_pending;
    int early = initial && obs->base && obs->base_version > new_version;
    int idle = obs->stopped || early || (!initial && obs->finished);
    if (initial && !early)
        obs->initial_pending = 0;
    pthread_mutex_unlock(&hub->lock);
    if (idle)
        return COFFER_OK;
    if (initial)
        return observe_first(hub, obs, new_txn, new_version);
    return observe_changes(hub, obs, old_txn, new_txn, old_version, new_version, all);
}

/* With no observer left, the handle stops pinning its version (LMDB could
 * not reuse later pages otherwise); the next observer pins the newest.
 * With cycle_lock held. */
static void release_snapshot_if_unobserved(cf_hub *hub)
{
    pthread_mutex_lock(&hub->lock);
    int unobserved = hub->observers == NULL;
    pthread_mutex_unlock(&hub->lock);
    if (unobserved && hub->snap) {
        coffer_txn_free(hub->snap);
        hub->snap = NULL;
    }
}

/* Moves the hub to the newest version and tells every observer; with
 * cycle_lock held. */
static coffer_status cycle(cf_hub *hub)
{
    coffer_db *db = hub->db;
    coffer_txn *new_txn;
    coffer_status st = coffer_txn_begin(db, COFFER_TXN_READ, &new_txn);
    if (st != COFFER_OK)
        return st;
    uint64_t new_version = (uint64_t)mdb_txn_id(new_txn->mdb);
    uint64_t old_version = hub->version;
    coffer_txn *old_txn = hub->snap ? hub->snap : new_txn;
    if (!hub->snap)
        old_version = new_version;

    pthread_mutex_lock(&hub->lock);
    hub->cycling = 1;
    size_t n = 0;
    cf_observer **list = snapshot_observers(hub, &n);
    pthread_mutex_unlock(&hub->lock);
    if (!list) {
        st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory refreshing a database");
    } else {
        cf_changes_read all;
        st = cf_changes_gather(new_txn, old_version, new_version, 0, &all);
        for (size_t i = 0; st == COFFER_OK && i < n; i++)
            st = observe_one(hub, list[i], old_txn, new_txn, old_version, new_version, &all);
        cf_changes_release(&all);
        free(list);
    }
    pthread_mutex_lock(&hub->lock);
    hub->cycling = 0;
    sweep_stopped(hub);
    pthread_mutex_unlock(&hub->lock);
    if (st != COFFER_OK) {
        coffer_txn_free(new_txn);
        return st;
    }
    if (hub->snap)
        coffer_txn_free(hub->snap);
    hub->snap = new_txn;
    hub->version = new_version;
    release_snapshot_if_unobserved(hub);
    return COFFER_OK;
}

/* Whether a cycle has anything to do: a newer version, or a first callback due. */
static int cycle_due(cf_hub *hub)
{
    MDB_envinfo info;
    mdb_env_info(hub->db->env->mdb, &info);
    uint64_t last = (uint64_t)info.me_last_txnid;
    pthread_mutex_lock(&hub->lock);
    /* A newer version, unless a committing thread's refresh brings the
     * hub there (waiting for it would only delay that thread's next one). */
    int due = last != hub->version && last > hub->claimed;
    for (cf_observer *o = hub->observers; o && !due; o = o->next)
        due = o->initial_pending && !o->stopped;
    pthread_mutex_unlock(&hub->lock);
    return due;
}

static int inside_callback(cf_hub *hub)
{
    pthread_mutex_lock(&hub->lock);
    int inside = hub->delivering && pthread_equal(hub->delivering_thread, pthread_self());
    pthread_mutex_unlock(&hub->lock);
    return inside;
}

static void run_posted(void *arg)
{
    cf_hub *hub = arg;
    pthread_mutex_lock(&hub->lock);
    hub->post_pending = 0;
    int closed = hub->closed;
    pthread_mutex_unlock(&hub->lock);
    if (!closed) {
        pthread_mutex_lock(&hub->cycle_lock);
        if (!hub->closed)
            cycle(hub); /* a failure is seen again by the next refresh */
        pthread_mutex_unlock(&hub->cycle_lock);
    }
    hub_unref(hub);
}

static void *notifier_main(void *arg)
{
    cf_hub *hub = arg;
    cf_signal *sig = hub->db->env->signal;
    for (;;) {
        uint32_t seen = cf_signal_value(sig);
        pthread_mutex_lock(&hub->lock);
        int stopping = hub->stopping, on = hub->auto_refresh;
        coffer_post_fn post = hub->post;
        void *post_ctx = hub->post_ctx;
        pthread_mutex_unlock(&hub->lock);
        if (stopping)
            break;
        if (on && cycle_due(hub)) {
            if (post) {
                pthread_mutex_lock(&hub->lock);
                int already = hub->post_pending;
                if (!already) {
                    hub->post_pending = 1;
                    hub->refs++;
                }
                pthread_mutex_unlock(&hub->lock);
                if (!already)
                    post(post_ctx, run_posted, hub);
            } else {
                pthread_mutex_lock(&hub->cycle_lock);
                cycle(hub);
                pthread_mutex_unlock(&hub->cycle_lock);
                continue; /* look again at once: commits may have come meanwhile */
            }
        }
        cf_signal_wait(sig, seen, NOTIFIER_TIMEOUT_MS);
    }
    return NULL;
}

static coffer_status start_notifier(cf_hub *hub)
{
    pthread_mutex_lock(&hub->lock);
    int start = !hub->thread_started;
    hub->thread_started = 1;
    pthread_mutex_unlock(&hub->lock);
    if (start && pthread_create(&hub->thread, NULL, notifier_main, hub) != 0) {
        pthread_mutex_lock(&hub->lock);
        hub->thread_started = 0;
        pthread_mutex_unlock(&hub->lock);
        return cf_error(COFFER_ERR_INTERNAL, "cannot start the notifier thread");
    }
    /* Wake it (and so any first callback due) without waiting a timeout. */
    cf_signal_poke(hub->db->env->signal);
    return COFFER_OK;
}

void cf_hub_committed(coffer_db *db)
{
    pthread_mutex_lock(&db->lock);
    cf_hub *hub = db->hub;
    pthread_mutex_unlock(&db->lock);
    int due = 0;
    if (hub) {
        pthread_mutex_lock(&hub->lock);
        due = hub->refresh_on_commit && hub->auto_refresh && !hub->post && !hub->closed && hub->observers;
        pthread_mutex_unlock(&hub->lock);
    }
    /* The cycle is claimed before the notifier is woken, so that the
     * notifier finds it done rather than racing this thread to it. A
     * refresh under way on another thread (the notifier's, woken late by an
     * earlier commit, or a coffer_db_refresh()) is waited for: once this
     * returns, the commit was told. A commit made from a callback (this
     * thread runs the cycle) is left to the notifier, which looks again
     * after every cycle. */
    int claimed = due && !inside_callback(hub);
    if (claimed)
        pthread_mutex_lock(&hub->cycle_lock);
    if (claimed) {
        MDB_envinfo info;
        mdb_env_info(db->env->mdb, &info);
        pthread_mutex_lock(&hub->lock);
        hub->claimed = (uint64_t)info.me_last_txnid; /* the cycle's transaction sees at least this */
        pthread_mutex_unlock(&hub->lock);
    }
    cf_signal_commit(db->env->signal);
    if (!claimed)
        return;
    coffer_status st = hub->closed ? COFFER_OK : cycle(hub);
    if (st != COFFER_OK) {
        /* The notifier tries again (and the next refresh meets the failure). */
        pthread_mutex_lock(&hub->lock);
        hub->claimed = 0;
        pthread_mutex_unlock(&hub->lock);
        cf_signal_poke(db->env->signal);
    }
    pthread_mutex_unlock(&hub->cycle_lock);
}

int cf_hub_in_callback(coffer_db *db)
{
    return db->hub && inside_callback(db->hub);
}

void cf_hub_close(coffer_db *db)
{
    cf_hub *hub = db->hub;
    if (!hub)
        return;
    pthread_mutex_lock(&hub->lock);
    hub->stopping = 1;
    hub->closed = 1;
    int joined = hub->thread_started;
    pthread_mutex_unlock(&hub->lock);
    if (joined) {
        cf_signal_poke(db->env->signal);
        pthread_join(hub->thread, NULL);
    }
    pthread_mutex_lock(&hub->cycle_lock);
    pthread_mutex_lock(&hub->lock);
    /* Observers whose tokens live on are left to them (stopping a token of a
     * closed handle stays safe); each keeps the hub's memory alive. */
    for (cf_observer *o = hub->observers, *next; o; o = next) {
        next = o->next;
        if (o->stopped) {
            observer_free(o);
        } else {
            /* A first callback that never came: its transaction ends with
             * the handle, not with the token. */
            if (o->base)
                coffer_txn_free(o->base);
            o->base = NULL;
            o->stopped = 1;
            o->orphaned = 1;
            o->next = NULL;
            hub->refs++;
        }
    }
    hub->observers = NULL;
    pthread_mutex_unlock(&hub->lock);
    if (hub->snap)
        coffer_txn_free(hub->snap);
    hub->snap = NULL;
    pthread_mutex_unlock(&hub->cycle_lock);
    db->hub = NULL;
    hub_unref(hub);
}

/* ------------------------------------------------------------------------ */
/* Public API                                                                */
/* ------------------------------------------------------------------------ */

/* The hub of an open handle, made on first use. */
static coffer_status checked_hub(coffer_db *db, cf_hub **out)
{
    coffer_status st = check_db(db);
    if (st != COFFER_OK)
        return st;
    *out = hub_of(db);
    return *out ? COFFER_OK : COFFER_ERR_NO_MEMORY;
}

COFFER_API coffer_status coffer_db_refresh(coffer_db *db)
{
    cf_hub *hub;
    coffer_status st = checked_hub(db, &hub);
    if (st != COFFER_OK)
        return st;
    if (inside_callback(hub))
        return cf_error(COFFER_ERR_MISUSE, "coffer_db_refresh cannot be called from an observer's callback");
    pthread_mutex_lock(&hub->cycle_lock);
    st = cycle(hub);
    pthread_mutex_unlock(&hub->cycle_lock);
    return st;
}

COFFER_API coffer_status coffer_db_set_auto_refresh(coffer_db *db, int on)
{
    cf_hub *hub;
    coffer_status st = checked_hub(db, &hub);
    if (st != COFFER_OK)
        return st;
    pthread_mutex_lock(&hub->lock);
    hub->auto_refresh = on != 0;
    int running = hub->thread_started;
    pthread_mutex_unlock(&hub->lock);
    if (running && on)
        cf_signal_poke(db->env->signal);
    return COFFER_OK;
}

COFFER_API coffer_status coffer_db_set_refresh_on_commit(coffer_db *db, int on)
{
    cf_hub *hub;
    coffer_status st = checked_hub(db, &hub);
    if (st != COFFER_OK)
        return st;
    pthread_mutex_lock(&hub->lock);
    hub->refresh_on_commit = on != 0;
    pthread_mutex_unlock(&hub->lock);
    return COFFER_OK;
}

COFFER_API int coffer_db_refresh_on_commit(const coffer_db *db)
{
    if (!db || db->magic != CF_DB_MAGIC || db->closed || !db->hub)
        return 0;
    cf_hub *hub = db->hub;
    pthread_mutex_lock(&hub->lock);
    int on = hub->refresh_on_commit;
    pthread_mutex_unlock(&hub->lock);
    return on;
}

COFFER_API int coffer_db_auto_refresh(const coffer_db *db)
{
    if (!db || db->magic != CF_DB_MAGIC || db->closed)
        return 0;
    return db->hub ? db->hub->auto_refresh : 1;
}

COFFER_API coffer_status coffer_db_version(coffer_db *db, uint64_t *out)
{
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_db_version: out is NULL");
    *out = 0;
    cf_hub *hub;
    coffer_status st = checked_hub(db, &hub);
    if (st != COFFER_OK)
        return st;
    pthread_mutex_lock(&hub->cycle_lock);
    *out = hub->version;
    pthread_mutex_unlock(&hub->cycle_lock);
    return COFFER_OK;
}

COFFER_API coffer_status coffer_db_set_scheduler(coffer_db *db, coffer_post_fn post, void *scheduler_ctx)
{
    cf_hub *hub;
    coffer_status st = checked_hub(db, &hub);
    if (st != COFFER_OK)
        return st;
    pthread_mutex_lock(&hub->lock);
    hub->post = post;
    hub->post_ctx = scheduler_ctx;
    pthread_mutex_unlock(&hub->lock);
    return COFFER_OK;
}

/* Adds observer `obs` (filled in by the caller, who checked it with status
 * `st`) and hands out its token; a failure frees it. */
static coffer_status add_observer(coffer_db *db, cf_observer *obs, coffer_status st, coffer_token **token)
{
    if (st == COFFER_OK)
        st = relevant_tables(db, obs);
    cf_hub *hub = st == COFFER_OK ? hub_of(db) : NULL;
    coffer_token *t = hub ? malloc(sizeof *t) : NULL;
    if (st == COFFER_OK && !t)
        st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory observing a database");
    if (st == COFFER_OK) {
        /* The first observer fixes the version the handle starts from, so
         * that every commit after this call is told. */
        pthread_mutex_lock(&hub->cycle_lock);
        if (!hub->snap && (st = coffer_txn_begin(db, COFFER_TXN_READ, &hub->snap)) == COFFER_OK)
            hub->version = (uint64_t)mdb_txn_id(hub->snap->mdb);
        else if (st != COFFER_OK)
            hub->snap = NULL;
        pthread_mutex_unlock(&hub->cycle_lock);
    }
    if (st == COFFER_OK && obs->kind != CF_OBS_DB) {
        /* The first callback reports the state at this version, whenever
         * the notifier gets to it: a commit made right after this call is
         * a change, never part of that state. */
        st = coffer_txn_begin(db, COFFER_TXN_READ, &obs->base);
        if (st == COFFER_OK)
            obs->base_version = (uint64_t)mdb_txn_id(obs->base->mdb);
        else
            obs->base = NULL;
    }
    if (st != COFFER_OK) {
        observer_free(obs);
        free(t);
        return st;
    }
    t->magic = TOKEN_MAGIC;
    t->obs = obs;
    obs->hub = hub;
    /* A database observer has no first callback: it is told of every commit
     * after the version fixed above. */
    obs->initial_pending = obs->kind != CF_OBS_DB;
    pthread_mutex_lock(&hub->lock);
    obs->next = hub->observers;
    hub->observers = obs;
    int on = hub->auto_refresh;
    pthread_mutex_unlock(&hub->lock);
    *token = t;
    return on ? start_notifier(hub) : COFFER_OK;
}

/* A new observer of `kind` on object `key` of class `cls` (unused by some
 * kinds), checked as far as every kind needs. */
static coffer_status new_observer(coffer_db *db, cf_obs_kind kind, coffer_class_id cls, coffer_object_key key,
                                  int has_callback, void *ctx, coffer_token **token, cf_observer **out)
{
    *out = NULL;
    if (token)
        *token = NULL;
    coffer_status st = check_db(db);
    if (st != COFFER_OK)
        return st;
    if (!has_callback || !token)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "observing: %s is NULL", has_callback ? "token" : "callback");
    if (kind != CF_OBS_DB && kind != CF_OBS_RESULTS && cls >= db->schema->nclasses)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "no class with id %u (the database has %zu)", cls,
                        db->schema->nclasses);
    cf_observer *obs = calloc(1, sizeof *obs);
    if (!obs)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory observing a database");
    obs->kind = kind;
    obs->ctx = ctx;
    obs->cls = cls;
    obs->key = key;
    *out = obs;
    return COFFER_OK;
}

static coffer_status set_key_paths(coffer_db *db, cf_observer *obs, coffer_class_id cls, const char *const *paths,
                                   size_t count)
{
    obs->filtered = paths != NULL;
    if (count && !paths)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "key_paths is NULL but count is %zu", count);
    obs->npaths = count;
    return cf_keypaths_resolve(db, cls, paths, count, &obs->paths);
}

/* COFFER_ERR_NOT_FOUND unless object `key` of `cls` exists now. */
static coffer_status check_exists(coffer_db *db, coffer_class_id cls, coffer_object_key key)
{
    coffer_txn *txn;
    coffer_status st = coffer_txn_begin(db, COFFER_TXN_READ, &txn);
    if (st != COFFER_OK)
        return st;
    coffer_object *obj;
    st = coffer_object_get(txn, cls, key, &obj);
    coffer_txn_free(txn);
    if (st == COFFER_ERR_NOT_FOUND)
        return cf_error(COFFER_ERR_NOT_FOUND, "class '%s' has no object with key %llu to observe",
                        db->schema->classes[cls].name, (unsigned long long)key);
    return st;
}

COFFER_API coffer_status coffer_db_observe(coffer_db *db, coffer_db_callback callback, void *ctx, coffer_token **token)
{
    cf_observer *obs;
    coffer_status st = new_observer(db, CF_OBS_DB, 0, 0, callback != NULL, ctx, token, &obs);
    if (st != COFFER_OK)
        return st;
    obs->cb.db = callback;
    return add_observer(db, obs, COFFER_OK, token);
}

COFFER_API coffer_status coffer_object_observe(coffer_db *db, coffer_class_id cls, coffer_object_key key,
                                               const char *const *key_paths, size_t count,
                                               coffer_object_callback callback, void *ctx, coffer_token **token)
{
    cf_observer *obs;
    coffer_status st = new_observer(db, CF_OBS_OBJECT, cls, key, callback != NULL, ctx, token, &obs);
    if (st != COFFER_OK)
        return st;
    obs->cb.object = callback;
    st = set_key_paths(db, obs, cls, key_paths, count);
    if (st == COFFER_OK)
        st = check_exists(db, cls, key);
    return add_observer(db, obs, st, token);
}

COFFER_API coffer_status coffer_query_observe(coffer_db *db, const coffer_query *query, const char *const *key_paths,
                                              size_t count, coffer_collection_callback callback, void *ctx,
                                              coffer_token **token)
{
    cf_observer *obs;
    coffer_status st = new_observer(db, CF_OBS_RESULTS, 0, 0, callback != NULL, ctx, token, &obs);
    if (st != COFFER_OK)
        return st;
    obs->cb.collection = callback;
    st = cf_query_share(query, &obs->query);
    if (st == COFFER_OK && coffer_query_class(query) >= db->schema->nclasses)
        st = cf_error(COFFER_ERR_INVALID_ARGUMENT, "the query belongs to another database");
    if (st == COFFER_OK) {
        obs->cls = coffer_query_class(query);
        obs->ordered = cf_query_ordered(query);
        st = set_key_paths(db, obs, obs->cls, key_paths, count);
    }
    return add_observer(db, obs, st, token);
}

/* A new observer of collection property `prop` of object `key`, which must
 * be a `collection` (COFFER_COLLECTION_*) and, with `of_objects` 1, hold
 * objects (0: values; -1: either); key paths are from the element class. */
static coffer_status collection_observer(coffer_db *db, cf_obs_kind kind, coffer_class_id cls, coffer_object_key key,
                                         coffer_property_id prop, int collection, int of_objects,
                                         const char *const *key_paths, size_t count, int has_callback, void *ctx,
                                         coffer_token **token, cf_observer **out)
{
    static const char *const names[] = {"", "list", "set", "map"};
    cf_observer *obs;
    coffer_status st = new_observer(db, kind, cls, key, has_callback, ctx, token, &obs);
    *out = obs;
    if (st != COFFER_OK)
        return st;
    obs->prop = prop;
    const cf_class *cl = &db->schema->classes[cls];
    if (prop >= cl->nprops)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "class '%s' has no property with id %u", cl->name, prop);
    const cf_prop *p = &cl->props[prop];
    int objects = p->type == COFFER_TYPE_LINK && p->target >= 0;
    if (p->collection != collection)
        return cf_error(COFFER_ERR_TYPE, "property '%s.%s' is not a %s", cl->name, p->name, names[collection]);
    if (of_objects >= 0 && objects != of_objects)
        return cf_error(COFFER_ERR_TYPE, "property '%s.%s' is not a %s of %s", cl->name, p->name, names[collection],
                        of_objects ? "objects" : "values");
    if (count && !objects)
        return cf_error(COFFER_ERR_QUERY, "key paths need a %s of objects; '%s.%s' holds values", names[collection],
                        cl->name, p->name);
    st = set_key_paths(db, obs, objects ? (coffer_class_id)p->target : cls, key_paths, count);
    if (st == COFFER_OK)
        st = check_exists(db, cls, key);
    return st;
}

/* An observer of a list, set or map property with its callback (`map_cb`
 * for maps, else `collection_cb`). */
static coffer_status observe_property(coffer_db *db, cf_obs_kind kind, int collection, coffer_class_id cls,
                                      coffer_object_key key, coffer_property_id prop, const char *const *key_paths,
                                      size_t count, coffer_collection_callback collection_cb,
                                      coffer_map_callback map_cb, void *ctx, coffer_token **token)
{
    cf_observer *obs;
    int has_callback = kind == CF_OBS_MAP ? map_cb != NULL : collection_cb != NULL;
    coffer_status st = collection_observer(db, kind, cls, key, prop, collection, -1, key_paths, count, has_callback,
                                           ctx, token, &obs);
    if (!obs)
        return st;
    if (kind == CF_OBS_MAP)
        obs->cb.map = map_cb;
    else
        obs->cb.collection = collection_cb;
    return add_observer(db, obs, st, token);
}

COFFER_API coffer_status coffer_list_observe(coffer_db *db, coffer_class_id cls, coffer_object_key key,
                                             coffer_property_id prop, const char *const *key_paths, size_t count,
                                             coffer_collection_callback callback, void *ctx, coffer_token **token)
{
    return observe_property(db, CF_OBS_LIST, COFFER_COLLECTION_LIST, cls, key, prop, key_paths, count, callback, NULL,
                            ctx, token);
}

/* An observer of a list seen through a query (`of_objects` 1) or sorted by
 * value (0), with its callback set; `*out` is NULL when none was made. */
static coffer_status list_view_observer(coffer_db *db, coffer_class_id cls, coffer_object_key key,
                                        coffer_property_id prop, int of_objects, const char *const *key_paths,
                                        size_t count, coffer_collection_callback callback, void *ctx,
                                        coffer_token **token, cf_observer **out)
{
    coffer_status st = collection_observer(db, CF_OBS_LIST_VIEW, cls, key, prop, COFFER_COLLECTION_LIST, of_objects,
                                           key_paths, count, callback != NULL, ctx, token, out);
    if (*out)
        (*out)->cb.collection = callback;
    return st;
}

COFFER_API coffer_status coffer_list_query_observe(coffer_db *db, coffer_class_id cls, coffer_object_key key,
                                                   coffer_property_id prop, const coffer_query *query,
                                                   const char *const *key_paths, size_t count,
                                                   coffer_collection_callback callback, void *ctx,
                                                   coffer_token **token)
{
    cf_observer *obs;
    coffer_status st = list_view_observer(db, cls, key, prop, 1, key_paths, count, callback, ctx, token, &obs);
    if (!obs)
        return st;
    if (st == COFFER_OK && !query)
        st = cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_list_query_observe: query is NULL");
    if (st == COFFER_OK)
        st = cf_query_share(query, &obs->query);
    if (st == COFFER_OK) {
        const cf_prop *p = &db->schema->classes[cls].props[prop];
        coffer_class_id qcls = coffer_query_class(query);
        if (qcls != (coffer_class_id)p->target)
            st = cf_error(COFFER_ERR_INVALID_ARGUMENT, "the query is for class '%s', the list '%s.%s' holds '%s'",
                          qcls < db->schema->nclasses ? db->schema->classes[qcls].name : "(another database)",
                          db->schema->classes[cls].name, p->name, db->schema->classes[p->target].name);
    }
    return add_observer(db, obs, st, token);
}

COFFER_API coffer_status coffer_list_values_observe(coffer_db *db, coffer_class_id cls, coffer_object_key key,
                                                    coffer_property_id prop, int order, int distinct,
                                                    coffer_collection_callback callback, void *ctx,
                                                    coffer_token **token)
{
    cf_observer *obs;
    coffer_status st = list_view_observer(db, cls, key, prop, 0, NULL, 0, callback, ctx, token, &obs);
    if (!obs)
        return st;
    if (st == COFFER_OK && order != COFFER_SORT_NONE && order != COFFER_SORT_ASCENDING &&
        order != COFFER_SORT_DESCENDING)
        st = cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_list_values_observe: order %d is not a coffer_sort_order",
                      order);
    obs->value_order = order;
    obs->value_distinct = distinct != 0;
    return add_observer(db, obs, st, token);
}

COFFER_API coffer_status coffer_set_observe(coffer_db *db, coffer_class_id cls, coffer_object_key key,
                                            coffer_property_id prop, const char *const *key_paths, size_t count,
                                            coffer_collection_callback callback, void *ctx, coffer_token **token)
{
    return observe_property(db, CF_OBS_SET, COFFER_COLLECTION_SET, cls, key, prop, key_paths, count, callback, NULL,
                            ctx, token);
}

COFFER_API coffer_status coffer_map_observe(coffer_db *db, coffer_class_id cls, coffer_object_key key,
                                            coffer_property_id prop, const char *const *key_paths, size_t count,
                                            coffer_map_callback callback, void *ctx, coffer_token **token)
{
    return observe_property(db, CF_OBS_MAP, COFFER_COLLECTION_MAP, cls, key, prop, key_paths, count, NULL, callback,
                            ctx, token);
}

COFFER_API void coffer_token_stop(coffer_token *token)
{
    if (!token || token->magic != TOKEN_MAGIC)
        return;
    cf_observer *obs = token->obs;
    cf_hub *hub = obs->hub;
    pthread_mutex_lock(&hub->lock);
    if (obs->orphaned) {
        pthread_mutex_unlock(&hub->lock);
        observer_free(obs);
        hub_unref(hub);
        token->magic = CF_DEAD_MAGIC;
        free(token);
        return;
    }
    obs->stopped = 1;
    while (hub->delivering == obs && !pthread_equal(hub->delivering_thread, pthread_self()))
        pthread_cond_wait(&hub->cond, &hub->lock);
    if (!hub->cycling)
        sweep_stopped(hub);
    int unobserved = hub->observers == NULL;
    pthread_mutex_unlock(&hub->lock);
    /* A running cycle (perhaps the caller's own) releases it at its end. */
    if (unobserved && pthread_mutex_trylock(&hub->cycle_lock) == 0) {
        release_snapshot_if_unobserved(hub);
        pthread_mutex_unlock(&hub->cycle_lock);
    }
    token->magic = CF_DEAD_MAGIC;
    free(token);
}

COFFER_API coffer_status coffer_txn_commit_without_notifying(coffer_txn *txn, coffer_token *const *tokens, size_t count)
{
    if (count && !tokens)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_txn_commit_without_notifying: tokens is NULL");
    coffer_status st = cf_txn_check(txn, 1);
    if (st != COFFER_OK)
        return st;
    for (size_t i = 0; i < count; i++)
        if (!tokens[i] || tokens[i]->magic != TOKEN_MAGIC || tokens[i]->obs->hub->db != txn->db)
            return cf_error(COFFER_ERR_INVALID_ARGUMENT, "token %zu is not a live token of this database", i);
    uint64_t version = (uint64_t)mdb_txn_id(txn->mdb);
    cf_hub *hub = txn->db->hub;
    if (hub) {
        pthread_mutex_lock(&hub->lock);
        for (size_t i = 0; i < count; i++)
            tokens[i]->obs->skip_version = version;
        pthread_mutex_unlock(&hub->lock);
    }
    return coffer_txn_commit(txn);
}
