/* state — the sync keys of a file's metadata (docs/FORMAT.md, "Sync"):
 * identity, progress, the outbox, per-object merge state and tombstones,
 * and the per-transaction cache of object states. Keys start with 'S'; values
 * are sealed in encrypted files like every metadata value, and tombstone
 * keys hold a (keyed, in encrypted files) hash of the primary key rather than
 * the key itself. */
#include "sync/state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/crypto.h"
#include "storage/record.h"
#include "storage/txn.h"
#include "util/error.h"

static const uint8_t KEY_ID[] = {'S', 'i'};
static const uint8_t KEY_PARTITION[] = {'S', 'p'};
static const uint8_t KEY_PROGRESS[] = {'S', 'u'};
#define OUTBOX_KEY_SIZE 10 /* 'S' 'o' version */
#define OBJ_KEY_SIZE 14    /* 'S' 's' table key */
#define TOMB_KEY_SIZE CF_SYNC_TOMB_KEY_SIZE
#define STATE_ENCODING 1

static coffer_status meta_get(coffer_txn *txn, const uint8_t *key, size_t klen, uint8_t **out, size_t *len, int *has,
                              const char *what)
{
    const uint8_t *data;
    uint8_t *buf = NULL;
    size_t cap = 0;
    *has = 0;
    *out = NULL;
    coffer_status st = cf_store_get(txn, txn->db->meta_dbi, CF_META_DBI, key, klen, &data, len, &buf, &cap, what);
    if (st == COFFER_ERR_NOT_FOUND) {
        free(buf);
        return COFFER_OK;
    }
    if (st == COFFER_OK) {
        *out = malloc(*len ? *len : 1);
        if (!*out)
            st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory reading %s", what);
        else {
            memcpy(*out, data, *len);
            *has = 1;
        }
    }
    free(buf);
    return st;
}

static coffer_status meta_put(coffer_txn *txn, const uint8_t *key, size_t klen, const void *v, size_t n, const char *what)
{
    return cf_store_put(txn, txn->db->meta_dbi, CF_META_DBI, key, klen, v, n, 0, what);
}

static coffer_status meta_del(coffer_txn *txn, const uint8_t *key, size_t klen, const char *what)
{
    MDB_val k = {klen, (void *)key};
    int rc = mdb_del(txn->mdb, txn->db->meta_dbi, &k, NULL);
    if (rc != 0 && rc != MDB_NOTFOUND)
        return cf_txn_write_error(txn, rc, what);
    return COFFER_OK;
}

coffer_status cf_sync_meta_get(coffer_txn *txn, const uint8_t *key, size_t klen, uint8_t **out, size_t *len, int *has,
                               const char *what)
{
    return meta_get(txn, key, klen, out, len, has, what);
}

coffer_status cf_sync_txn_finish(coffer_txn *txn, coffer_status st)
{
    if (st == COFFER_OK)
        st = coffer_txn_commit(txn);
    else
        coffer_txn_abort(txn);
    coffer_txn_free(txn);
    return st;
}

coffer_status cf_sync_client_id(coffer_txn *txn, uint8_t out[CF_SYNC_ID_SIZE], int *has)
{
    uint8_t *v;
    size_t n;
    memset(out, 0, CF_SYNC_ID_SIZE);
    coffer_status st = meta_get(txn, KEY_ID, sizeof KEY_ID, &v, &n, has, "the sync client id");
    if (st == COFFER_OK && *has) {
        if (n != CF_SYNC_ID_SIZE)
            st = cf_error(COFFER_ERR_CORRUPTED, "the sync client id has %zu bytes instead of %d", n, CF_SYNC_ID_SIZE);
        else
            memcpy(out, v, CF_SYNC_ID_SIZE);
    }
    free(v);
    return st;
}

coffer_status cf_sync_client_id_claim(coffer_txn *txn, uint8_t out[CF_SYNC_ID_SIZE], int *has, int *claimed)
{
    static const uint8_t zero[CF_SYNC_ID_SIZE];
    *claimed = 0;
    coffer_status st = cf_sync_client_id(txn, out, has);
    if (st != COFFER_OK || !*has || memcmp(out, zero, CF_SYNC_ID_SIZE) != 0)
        return st;
    do
        cf_random(out, CF_SYNC_ID_SIZE);
    while (memcmp(out, zero, CF_SYNC_ID_SIZE) == 0);
    st = meta_put(txn, KEY_ID, sizeof KEY_ID, out, CF_SYNC_ID_SIZE, "cannot store the sync client id");
    if (st == COFFER_OK)
        *claimed = 1;
    return st;
}

static int count_changeset(void *ctx, uint64_t version, const uint8_t *cs, size_t len)
{
    (void)version, (void)cs, (void)len;
    ++*(uint64_t *)ctx;
    return 0;
}

coffer_status cf_sync_outbox_pending(coffer_txn *txn, uint64_t *count)
{
    cf_sync_progress prog;
    *count = 0;
    coffer_status st = cf_sync_progress_read(txn, &prog);
    if (st == COFFER_OK)
        st = cf_sync_outbox_each(txn, prog.acked_client_version, count_changeset, count);
    return st;
}

coffer_status cf_sync_set_identity(coffer_txn *txn, const uint8_t id[CF_SYNC_ID_SIZE], const char *partition)
{
    coffer_status st = meta_put(txn, KEY_ID, sizeof KEY_ID, id, CF_SYNC_ID_SIZE, "cannot store the sync client id");
    if (st == COFFER_OK)
        st = meta_put(txn, KEY_PARTITION, sizeof KEY_PARTITION, partition, strlen(partition),
                      "cannot store the sync partition");
    return st;
}

coffer_status cf_sync_partition(coffer_txn *txn, char **out)
{
    uint8_t *v;
    size_t n;
    int has;
    *out = NULL;
    coffer_status st = meta_get(txn, KEY_PARTITION, sizeof KEY_PARTITION, &v, &n, &has, "the sync partition");
    if (st == COFFER_OK && has) {
        *out = cf_slice_strdup((cf_slice){v, n});
        if (!*out)
            st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory reading the sync partition");
    }
    free(v);
    return st;
}

coffer_status cf_sync_progress_read(coffer_txn *txn, cf_sync_progress *out)
{
    uint8_t *v;
    size_t n;
    int has;
    memset(out, 0, sizeof *out);
    coffer_status st = meta_get(txn, KEY_PROGRESS, sizeof KEY_PROGRESS, &v, &n, &has, "the sync progress");
    if (st == COFFER_OK && has) {
        cf_wreader r = cf_wreader_make(v, n, "the sync progress");
        if ((st = cf_wire_get_u64le(&r, &out->acked_client_version, "the acknowledged version")) == COFFER_OK &&
            (st = cf_wire_get_u64le(&r, &out->server_version, "the server version")) == COFFER_OK)
            st = cf_wire_get_u64le(&r, &out->clock, "the clock");
    }
    free(v);
    return st;
}

coffer_status cf_sync_progress_write(coffer_txn *txn, const cf_sync_progress *p)
{
    cf_buf b = {0};
    cf_wire_u64le(&b, p->acked_client_version);
    cf_wire_u64le(&b, p->server_version);
    cf_wire_u64le(&b, p->clock);
    coffer_status st = b.failed ? cf_error(COFFER_ERR_NO_MEMORY, "out of memory")
                                : meta_put(txn, KEY_PROGRESS, sizeof KEY_PROGRESS, b.p, b.len, "cannot store the sync progress");
    free(b.p);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Outbox                                                                    */
/* ------------------------------------------------------------------------ */

static void outbox_key(uint64_t version, uint8_t k[OUTBOX_KEY_SIZE])
{
    k[0] = 'S';
    k[1] = 'o';
    cf_put_be64(k + 2, version);
}

coffer_status cf_sync_outbox_put(coffer_txn *txn, uint64_t version, const uint8_t *cs, size_t len)
{
    uint8_t k[OUTBOX_KEY_SIZE];
    outbox_key(version, k);
    return meta_put(txn, k, sizeof k, cs, len, "cannot write the sync outbox");
}

coffer_status cf_sync_outbox_each(coffer_txn *txn, uint64_t after, cf_outbox_fn fn, void *ctx)
{
    MDB_cursor *cur;
    int rc = mdb_cursor_open(txn->mdb, txn->db->meta_dbi, &cur);
    if (rc != 0)
        return cf_error_mdb(rc, "cannot read the sync outbox");
    uint8_t first[OUTBOX_KEY_SIZE];
    outbox_key(after == UINT64_MAX ? after : after + 1, first);
    MDB_val k = {sizeof first, first}, v;
    uint8_t *buf = NULL;
    size_t cap = 0;
    coffer_status st = COFFER_OK;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        const uint8_t *kp = k.mv_data;
        if (k.mv_size != OUTBOX_KEY_SIZE || kp[0] != 'S' || kp[1] != 'o')
            break;
        const uint8_t *data;
        size_t len;
        if ((st = cf_store_open(txn, CF_META_DBI, &k, &v, &data, &len, &buf, &cap, "a sync outbox changeset")) != COFFER_OK)
            break;
        if (fn(ctx, cf_get_be64(kp + 2), data, len))
            break;
    }
    mdb_cursor_close(cur);
    free(buf);
    if (st == COFFER_OK && rc != 0 && rc != MDB_NOTFOUND)
        st = cf_error_mdb(rc, "cannot read the sync outbox");
    return st;
}

coffer_status cf_sync_outbox_trim(coffer_txn *txn, uint64_t version)
{
    MDB_cursor *cur;
    int rc = mdb_cursor_open(txn->mdb, txn->db->meta_dbi, &cur);
    if (rc != 0)
        return cf_txn_write_error(txn, rc, "cannot trim the sync outbox");
    uint8_t first[OUTBOX_KEY_SIZE];
    outbox_key(0, first);
    for (;;) {
        MDB_val k = {sizeof first, first}, v;
        rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
        const uint8_t *kp = k.mv_data;
        if (rc != 0 || k.mv_size != OUTBOX_KEY_SIZE || kp[0] != 'S' || kp[1] != 'o' || cf_get_be64(kp + 2) > version)
            break;
        if ((rc = mdb_cursor_del(cur, 0)) != 0)
            break;
    }
    mdb_cursor_close(cur);
    if (rc != 0 && rc != MDB_NOTFOUND)
        return cf_txn_write_error(txn, rc, "cannot trim the sync outbox");
    return COFFER_OK;
}

coffer_status cf_sync_forget_state(coffer_txn *txn)
{
    static const char kinds[] = "ostg"; /* outbox, object states, tombstones, ghosts */
    MDB_cursor *cur;
    int rc = mdb_cursor_open(txn->mdb, txn->db->meta_dbi, &cur);
    if (rc != 0)
        return cf_txn_write_error(txn, rc, "cannot reset the sync state");
    for (const char *kind = kinds; *kind && rc == 0; kind++) {
        uint8_t first[2] = {'S', (uint8_t)*kind};
        for (;;) {
            MDB_val k = {sizeof first, first}, v;
            rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
            const uint8_t *kp = k.mv_data;
            if (rc != 0 || k.mv_size < 2 || kp[0] != 'S' || kp[1] != (uint8_t)*kind)
                break;
            if ((rc = mdb_cursor_del(cur, 0)) != 0)
                break;
        }
        if (rc == MDB_NOTFOUND || rc == 0)
            rc = 0;
    }
    mdb_cursor_close(cur);
    if (rc != 0)
        return cf_txn_write_error(txn, rc, "cannot reset the sync state");
    return COFFER_OK;
}

/* ------------------------------------------------------------------------ */
/* Object states: encoding                                                   */
/* ------------------------------------------------------------------------ */

void cf_sync_put_stamp(cf_buf *b, const cf_stamp *s)
{
    cf_wire_u64le(b, s->clock);
    cf_buf_put(b, s->client, CF_SYNC_ID_SIZE);
}

coffer_status cf_sync_get_stamp(cf_wreader *r, cf_stamp *s)
{
    const uint8_t *client;
    coffer_status st = cf_wire_get_u64le(r, &s->clock, "a stamp");
    if (st == COFFER_OK && (st = cf_wire_get_raw(r, CF_SYNC_ID_SIZE, &client, "a stamp")) == COFFER_OK)
        memcpy(s->client, client, CF_SYNC_ID_SIZE);
    return st;
}

static void encode_obj(cf_buf *b, const cf_sync_obj *o)
{
    cf_wire_u8(b, STATE_ENCODING);
    cf_wire_bytes(b, o->pk, o->pk_len);
    cf_sync_put_stamp(b, &o->created);
    cf_wire_varint(b, o->nprops);
    for (size_t i = 0; i < o->nprops; i++) {
        const cf_sync_prop *p = &o->props[i];
        cf_wire_string(b, p->name, strlen(p->name));
        cf_sync_put_stamp(b, &p->stamp);
        cf_wire_varint(b, p->nelems);
        for (size_t e = 0; e < p->nelems; e++) {
            cf_cs_elem_id(b, &p->elems[e].id);
            cf_sync_put_stamp(b, &p->elems[e].stamp);
            cf_wire_u8(b, p->elems[e].erased);
        }
        cf_wire_varint(b, p->nitems);
        for (size_t e = 0; e < p->nitems; e++) {
            const cf_sync_item *it = &p->items[e];
            cf_wire_bytes(b, it->key, it->key_len);
            cf_wire_u8(b, it->present);
            cf_sync_put_stamp(b, &it->stamp);
            cf_wire_bytes(b, it->value, it->value_len);
        }
    }
}

void cf_sync_obj_free(cf_sync_obj *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->nprops; i++) {
        cf_sync_prop *p = &o->props[i];
        free(p->name);
        free(p->value);
        for (size_t e = 0; e < p->nelems; e++)
            free(p->elems[e].value);
        free(p->elems);
        for (size_t e = 0; e < p->nitems; e++) {
            free(p->items[e].key);
            free(p->items[e].value);
        }
        free(p->items);
    }
    free(o->props);
    free(o->pk);
    free(o);
}

static uint8_t *dup_bytes(const void *p, size_t n)
{
    uint8_t *d = malloc(n ? n : 1);
    if (d && n)
        memcpy(d, p, n);
    return d;
}

static coffer_status decode_obj(const uint8_t *data, size_t len, cf_sync_obj *o)
{
    cf_wreader r = cf_wreader_make(data, len, "a sync object state");
    uint8_t enc;
    cf_slice s;
    uint64_t n;
    coffer_status st = cf_wire_get_u8(&r, &enc, "the encoding");
    if (st == COFFER_OK && enc != STATE_ENCODING)
        return cf_wire_bad(&r, "encoding %u", enc);
    if (st != COFFER_OK || (st = cf_wire_get_bytes(&r, &s, "the primary key")) != COFFER_OK ||
        (st = cf_sync_get_stamp(&r, &o->created)) != COFFER_OK || (st = cf_wire_get_count(&r, &n, 26, "the properties")) != COFFER_OK)
        return st;
    if (!(o->pk = dup_bytes(s.p, s.n)) || !(o->props = calloc(n ? (size_t)n : 1, sizeof *o->props)))
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory reading a sync object state");
    o->pk_len = s.n;
    o->props_cap = n ? (size_t)n : 1;
    for (size_t i = 0; i < n; i++) {
        cf_sync_prop *p = &o->props[i];
        o->nprops = i + 1;
        uint64_t ne, ni;
        if ((st = cf_wire_get_string(&r, &s, "a property name")) != COFFER_OK)
            return st;
        if (!(p->name = cf_slice_strdup(s)))
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory reading a sync object state");
        if ((st = cf_sync_get_stamp(&r, &p->stamp)) != COFFER_OK ||
            (st = cf_wire_get_count(&r, &ne, 50, "the list elements")) != COFFER_OK)
            return st;
        if (ne && !(p->elems = calloc((size_t)ne, sizeof *p->elems)))
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory reading a sync object state");
        p->elems_cap = p->nelems = (size_t)ne;
        for (size_t e = 0; e < ne; e++) {
            cf_sync_elem *el = &p->elems[e];
            const uint8_t *client;
            if ((st = cf_wire_get_u64le(&r, &el->id.clock, "an element id")) != COFFER_OK ||
                (st = cf_wire_get_raw(&r, CF_SYNC_ID_SIZE, &client, "an element id")) != COFFER_OK)
                return st;
            memcpy(el->id.client, client, CF_SYNC_ID_SIZE);
            if ((st = cf_wire_get_varint(&r, &el->id.seq, "an element id")) != COFFER_OK ||
                (st = cf_sync_get_stamp(&r, &el->stamp)) != COFFER_OK || (st = cf_wire_get_u8(&r, &el->erased, "an element")) != COFFER_OK)
                return st;
        }
        if ((st = cf_wire_get_count(&r, &ni, 27, "the elements")) != COFFER_OK)
            return st;
        if (ni && !(p->items = calloc((size_t)ni, sizeof *p->items)))
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory reading a sync object state");
        p->items_cap = (size_t)ni;
        for (size_t e = 0; e < ni; e++) {
            cf_sync_item *it = &p->items[e];
            cf_slice k, v;
            p->nitems = e + 1;
            if ((st = cf_wire_get_bytes(&r, &k, "an element")) != COFFER_OK ||
                (st = cf_wire_get_u8(&r, &it->present, "an element")) != COFFER_OK || (st = cf_sync_get_stamp(&r, &it->stamp)) != COFFER_OK ||
                (st = cf_wire_get_bytes(&r, &v, "an element's value")) != COFFER_OK)
                return st;
            if (!(it->key = dup_bytes(k.p, k.n)) || !(it->value = dup_bytes(v.p, v.n)))
                return cf_error(COFFER_ERR_NO_MEMORY, "out of memory reading a sync object state");
            it->key_len = k.n;
            it->value_len = v.n;
        }
    }
    if (r.p != r.end)
        return cf_wire_bad(&r, "%zu bytes after its end", cf_wreader_left(&r));
    return COFFER_OK;
}

/* ------------------------------------------------------------------------ */
/* The cache                                                                 */
/* ------------------------------------------------------------------------ */

static size_t slot_of(const cf_sync_cache *c, uint32_t table, uint64_t key)
{
    uint64_t h = (key ^ ((uint64_t)table << 40)) * UINT64_C(0x9E3779B97F4A7C15);
    size_t i = (size_t)(h >> 20) & (c->cap - 1);
    while (c->slots[i] && (c->slots[i]->table != table || c->slots[i]->key != key))
        i = (i + 1) & (c->cap - 1);
    return i;
}

static coffer_status cache_add(cf_sync_cache *c, cf_sync_obj *o)
{
    if ((c->count + 1) * 2 > c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        cf_sync_cache bigger = {calloc(cap, sizeof(cf_sync_obj *)), cap, 0};
        if (!bigger.slots)
            return cf_error(COFFER_ERR_NO_MEMORY, "out of memory for sync object states");
        for (size_t i = 0; i < c->cap; i++)
            if (c->slots[i]) {
                bigger.slots[slot_of(&bigger, c->slots[i]->table, c->slots[i]->key)] = c->slots[i];
                bigger.count++;
            }
        free(c->slots);
        *c = bigger;
    }
    c->slots[slot_of(c, o->table, o->key)] = o;
    c->count++;
    return COFFER_OK;
}

static void obj_key(uint32_t table, uint64_t key, uint8_t k[OBJ_KEY_SIZE])
{
    k[0] = 'S';
    k[1] = 's';
    cf_put_be32(k + 2, table);
    cf_put_be64(k + 6, key);
}

coffer_status cf_sync_obj_get(coffer_txn *txn, cf_sync_cache *cache, uint32_t table, uint64_t key, cf_sync_obj **out)
{
    *out = NULL;
    if (cache->cap) {
        cf_sync_obj *o = cache->slots[slot_of(cache, table, key)];
        if (o) {
            *out = o->gone ? NULL : o;
            return COFFER_OK;
        }
    }
    uint8_t k[OBJ_KEY_SIZE];
    obj_key(table, key, k);
    uint8_t *v;
    size_t n;
    int has;
    coffer_status st = meta_get(txn, k, sizeof k, &v, &n, &has, "a sync object state");
    if (st != COFFER_OK || !has)
        return st;
    cf_sync_obj *o = calloc(1, sizeof *o);
    if (!o) {
        free(v);
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory reading a sync object state");
    }
    o->table = table;
    o->key = key;
    st = decode_obj(v, n, o);
    free(v);
    if (st == COFFER_OK)
        st = cache_add(cache, o);
    if (st != COFFER_OK) {
        cf_sync_obj_free(o);
        return st;
    }
    *out = o;
    return COFFER_OK;
}

coffer_status cf_sync_obj_make(cf_sync_cache *cache, uint32_t table, uint64_t key, cf_slice pk, cf_sync_obj **out)
{
    if (cache->cap) {
        size_t i = slot_of(cache, table, key);
        cf_sync_obj *old = cache->slots[i];
        if (old) { /* a key is never reused, but a state may be made again in one transaction */
            cf_sync_obj_free(old);
            cache->slots[i] = NULL;
            cache->count--;
            /* Re-insert the rest of the probe run so that lookups still find them. */
            for (size_t j = (i + 1) & (cache->cap - 1); cache->slots[j]; j = (j + 1) & (cache->cap - 1)) {
                cf_sync_obj *m = cache->slots[j];
                cache->slots[j] = NULL;
                cache->slots[slot_of(cache, m->table, m->key)] = m;
            }
        }
    }
    cf_sync_obj *o = calloc(1, sizeof *o);
    if (!o || !(o->pk = dup_bytes(pk.p, pk.n))) {
        free(o);
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory for a sync object state");
    }
    o->pk_len = pk.n;
    o->table = table;
    o->key = key;
    o->dirty = 1;
    coffer_status st = cache_add(cache, o);
    if (st != COFFER_OK) {
        cf_sync_obj_free(o);
        return st;
    }
    *out = o;
    return COFFER_OK;
}

cf_sync_prop *cf_sync_prop_of(cf_sync_obj *o, const char *name)
{
    for (size_t i = 0; i < o->nprops; i++)
        if (strcmp(o->props[i].name, name) == 0)
            return &o->props[i];
    cf_sync_prop *props = cf_grow(o->props, o->nprops, &o->props_cap, sizeof *o->props, 4);
    if (!props)
        return NULL;
    o->props = props;
    cf_sync_prop *p = &o->props[o->nprops];
    memset(p, 0, sizeof *p);
    if (!(p->name = strdup(name)))
        return NULL;
    o->nprops++;
    return p;
}

cf_sync_elem *cf_sync_elem_insert(cf_sync_prop *p, size_t at)
{
    cf_sync_elem *e = cf_grow(p->elems, p->nelems, &p->elems_cap, sizeof *p->elems, 8);
    if (!e)
        return NULL;
    p->elems = e;
    memmove(e + at + 1, e + at, (p->nelems - at) * sizeof *e);
    memset(&e[at], 0, sizeof *e);
    p->nelems++;
    return &e[at];
}

cf_sync_item *cf_sync_item_find(cf_sync_prop *p, const uint8_t *key, size_t len, int make)
{
    for (size_t i = 0; i < p->nitems; i++)
        if (p->items[i].key_len == len && (len == 0 || memcmp(p->items[i].key, key, len) == 0))
            return &p->items[i];
    if (!make)
        return NULL;
    cf_sync_item *items = cf_grow(p->items, p->nitems, &p->items_cap, sizeof *p->items, 4);
    if (!items)
        return NULL;
    p->items = items;
    cf_sync_item *it = &items[p->nitems];
    memset(it, 0, sizeof *it);
    if (!(it->key = dup_bytes(key, len)))
        return NULL;
    it->key_len = len;
    p->nitems++;
    return it;
}

coffer_status cf_sync_item_set_value(cf_sync_item *it, cf_slice value)
{
    uint8_t *v = dup_bytes(value.p, value.n);
    if (!v)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory for a sync map entry");
    free(it->value);
    it->value = v;
    it->value_len = value.n;
    return COFFER_OK;
}

coffer_status cf_sync_cache_flush(coffer_txn *txn, cf_sync_cache *cache)
{
    coffer_status st = COFFER_OK;
    cf_buf b = {0};
    for (size_t i = 0; i < cache->cap && st == COFFER_OK; i++) {
        cf_sync_obj *o = cache->slots[i];
        if (!o || !o->dirty)
            continue;
        uint8_t k[OBJ_KEY_SIZE];
        obj_key(o->table, o->key, k);
        if (o->gone) {
            st = meta_del(txn, k, sizeof k, "cannot remove a sync object state");
            continue;
        }
        b.len = 0;
        encode_obj(&b, o);
        st = b.failed ? cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing a sync object state")
                      : meta_put(txn, k, sizeof k, b.p, b.len, "cannot write a sync object state");
        o->dirty = 0;
    }
    free(b.p);
    return st;
}

void cf_sync_cache_free(cf_sync_cache *cache)
{
    for (size_t i = 0; i < cache->cap; i++)
        cf_sync_obj_free(cache->slots[i]);
    free(cache->slots);
    memset(cache, 0, sizeof *cache);
}

/* ------------------------------------------------------------------------ */
/* Tombstones                                                                */
/* ------------------------------------------------------------------------ */

static void tomb_key(const coffer_txn *txn, uint32_t table, cf_slice pk, uint8_t k[TOMB_KEY_SIZE])
{
    cf_sync_tombstone_key(txn->db->keys, table, pk, k);
}

void cf_sync_pk_key(const cf_keys *keys, uint8_t kind, uint32_t table, cf_slice pk, uint8_t k[CF_SYNC_TOMB_KEY_SIZE])
{
    k[0] = 'S';
    k[1] = kind;
    cf_put_be32(k + 2, table);
    cf_index_hash(keys, k + 6, "sync-tombstone", 14, pk.p, pk.n);
}

void cf_sync_tombstone_key(const cf_keys *keys, uint32_t table, cf_slice pk, uint8_t k[CF_SYNC_TOMB_KEY_SIZE])
{
    cf_sync_pk_key(keys, 't', table, pk, k);
}

int cf_sync_copy_entry(const cf_keys *to, const uint8_t *key, size_t klen, const uint8_t *value, size_t vlen,
                       uint8_t *newkey, size_t *newklen, uint8_t newid[CF_SYNC_ID_SIZE])
{
    if (klen < 2 || key[0] != 'S')
        return CF_SYNC_COPY_AS_IS;
    if (key[1] == 'o' && klen == OUTBOX_KEY_SIZE)
        return CF_SYNC_COPY_SKIP;
    if (key[1] == 'i' && klen == 2) {
        /* A bundle: each file made from the copy claims an id of its own. */
        memset(newid, 0, CF_SYNC_ID_SIZE);
        return CF_SYNC_COPY_NEW_ID;
    }
    if (key[1] == 't' && klen == TOMB_KEY_SIZE && vlen >= 8 + CF_SYNC_ID_SIZE) {
        cf_sync_tombstone_key(to, cf_get_be32(key + 2), (cf_slice){value + 8 + CF_SYNC_ID_SIZE, vlen - 8 - CF_SYNC_ID_SIZE}, newkey);
        *newklen = TOMB_KEY_SIZE;
        return CF_SYNC_COPY_NEW_KEY;
    }
    if (key[1] == 'g' && klen == TOMB_KEY_SIZE) {
        /* A ghost: encoding byte, then its primary key as wire bytes. */
        cf_wreader r = cf_wreader_make(value, vlen, "a sync ghost");
        uint8_t enc;
        cf_slice pk;
        if (cf_wire_get_u8(&r, &enc, "a sync ghost") != COFFER_OK || cf_wire_get_bytes(&r, &pk, "a sync ghost") != COFFER_OK) {
            coffer_clear_error();
            return CF_SYNC_COPY_AS_IS;
        }
        cf_sync_pk_key(to, 'g', cf_get_be32(key + 2), pk, newkey);
        *newklen = TOMB_KEY_SIZE;
        return CF_SYNC_COPY_NEW_KEY;
    }
    return CF_SYNC_COPY_AS_IS;
}

coffer_status cf_sync_tombstone_get(coffer_txn *txn, uint32_t table, cf_slice pk, cf_stamp *out, int *has)
{
    uint8_t k[TOMB_KEY_SIZE];
    tomb_key(txn, table, pk, k);
    uint8_t *v;
    size_t n;
    coffer_status st = meta_get(txn, k, sizeof k, &v, &n, has, "a sync tombstone");
    if (st == COFFER_OK && *has) {
        cf_wreader r = cf_wreader_make(v, n, "a sync tombstone");
        st = cf_sync_get_stamp(&r, out);
        /* The primary key follows: a hash collision is not a tombstone. */
        if (st == COFFER_OK && (cf_wreader_left(&r) != pk.n || memcmp(r.p, pk.p, pk.n) != 0))
            *has = 0;
    }
    free(v);
    return st;
}

coffer_status cf_sync_pk_put(coffer_txn *txn, uint8_t kind, uint32_t table, cf_slice pk, cf_buf *b, const char *noun)
{
    uint8_t k[CF_SYNC_TOMB_KEY_SIZE];
    cf_sync_pk_key(txn->db->keys, kind, table, pk, k);
    char what[64];
    snprintf(what, sizeof what, "cannot write %s", noun);
    coffer_status st = b->failed ? cf_error(COFFER_ERR_NO_MEMORY, "out of memory for %s", noun)
                                 : meta_put(txn, k, sizeof k, b->p, b->len, what);
    free(b->p);
    *b = (cf_buf){0};
    return st;
}

coffer_status cf_sync_pk_del(coffer_txn *txn, uint8_t kind, uint32_t table, cf_slice pk, const char *noun)
{
    uint8_t k[CF_SYNC_TOMB_KEY_SIZE];
    cf_sync_pk_key(txn->db->keys, kind, table, pk, k);
    char what[64];
    snprintf(what, sizeof what, "cannot remove %s", noun);
    return meta_del(txn, k, sizeof k, what);
}

coffer_status cf_sync_tombstone_put(coffer_txn *txn, uint32_t table, cf_slice pk, const cf_stamp *stamp)
{
    cf_buf b = {0};
    cf_sync_put_stamp(&b, stamp);
    cf_buf_put(&b, pk.p, pk.n);
    return cf_sync_pk_put(txn, 't', table, pk, &b, "a sync tombstone");
}

coffer_status cf_sync_tombstone_del(coffer_txn *txn, uint32_t table, cf_slice pk)
{
    return cf_sync_pk_del(txn, 't', table, pk, "a sync tombstone");
}
