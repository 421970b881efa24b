/* ghost — the values a deleted object keeps for a later life (ghost.h). */
#include "sync/ghost.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

#define GHOST_ENCODING 1

static coffer_status no_memory(void)
{
    return cf_error(COFFER_ERR_NO_MEMORY, "out of memory for a sync ghost");
}

static uint8_t *dup_bytes(const void *p, size_t n)
{
    uint8_t *d = malloc(n ? n : 1);
    if (d && n)
        memcpy(d, p, n);
    return d;
}

coffer_status cf_sync_prop_set_value(cf_sync_prop *p, cf_slice value)
{
    uint8_t *v = dup_bytes(value.p, value.n);
    if (!v)
        return no_memory();
    free(p->value);
    p->value = v;
    p->value_len = value.n;
    return COFFER_OK;
}

coffer_status cf_sync_ghost_make(uint32_t table, cf_slice pk, cf_sync_obj **out)
{
    cf_sync_obj *g = calloc(1, sizeof *g);
    if (!g || !(g->pk = dup_bytes(pk.p, pk.n))) {
        free(g);
        return no_memory();
    }
    g->pk_len = pk.n;
    g->table = table;
    *out = g;
    return COFFER_OK;
}

static void encode(cf_buf *b, const cf_sync_obj *g)
{
    cf_wire_u8(b, GHOST_ENCODING);
    cf_wire_bytes(b, g->pk, g->pk_len);
    cf_wire_varint(b, g->nprops);
    for (size_t i = 0; i < g->nprops; i++) {
        const cf_sync_prop *p = &g->props[i];
        cf_wire_string(b, p->name, strlen(p->name));
        cf_sync_put_stamp(b, &p->stamp);
        cf_wire_bytes(b, p->value, p->value ? p->value_len : 0);
        cf_wire_varint(b, p->nelems);
        for (size_t e = 0; e < p->nelems; e++) {
            const cf_sync_elem *el = &p->elems[e];
            cf_cs_elem_id(b, &el->id);
            cf_sync_put_stamp(b, &el->stamp);
            cf_wire_u8(b, el->erased);
            cf_wire_bytes(b, el->value, el->value ? el->value_len : 0);
        }
        cf_wire_varint(b, p->nitems);
        for (size_t e = 0; e < p->nitems; e++) {
            const cf_sync_item *it = &p->items[e];
            cf_wire_bytes(b, it->key, it->key_len);
            cf_wire_u8(b, it->present);
            cf_sync_put_stamp(b, &it->stamp);
            cf_wire_bytes(b, it->value, it->value ? it->value_len : 0);
        }
    }
}

static coffer_status decode(cf_wreader *r, cf_sync_obj *g)
{
    uint64_t n;
    coffer_status st = cf_wire_get_count(r, &n, 26, "the properties of a sync ghost");
    for (uint64_t i = 0; i < n && st == COFFER_OK; i++) {
        cf_slice name, value;
        uint64_t ni;
        if ((st = cf_wire_get_string(r, &name, "a property name")) != COFFER_OK)
            break;
        char *s = cf_slice_strdup(name);
        cf_sync_prop *p = s ? cf_sync_prop_of(g, s) : NULL;
        free(s);
        if (!p)
            return no_memory();
        if ((st = cf_sync_get_stamp(r, &p->stamp)) != COFFER_OK ||
            (st = cf_wire_get_bytes(r, &value, "a property value")) != COFFER_OK)
            break;
        if (value.n && (st = cf_sync_prop_set_value(p, value)) != COFFER_OK)
            break;
        uint64_t ne;
        if ((st = cf_wire_get_count(r, &ne, 50, "the list elements")) != COFFER_OK)
            break;
        for (uint64_t e = 0; e < ne && st == COFFER_OK; e++) {
            cf_sync_elem *el = cf_sync_elem_insert(p, p->nelems);
            const uint8_t *client;
            cf_slice v;
            if (!el)
                return no_memory();
            if ((st = cf_wire_get_u64le(r, &el->id.clock, "an element id")) != COFFER_OK ||
                (st = cf_wire_get_raw(r, CF_SYNC_ID_SIZE, &client, "an element id")) != COFFER_OK)
                break;
            memcpy(el->id.client, client, CF_SYNC_ID_SIZE);
            if ((st = cf_wire_get_varint(r, &el->id.seq, "an element id")) != COFFER_OK ||
                (st = cf_sync_get_stamp(r, &el->stamp)) != COFFER_OK || (st = cf_wire_get_u8(r, &el->erased, "an element")) != COFFER_OK ||
                (st = cf_wire_get_bytes(r, &v, "an element's value")) != COFFER_OK)
                break;
            if (v.n && !(el->value = dup_bytes(v.p, v.n)))
                return no_memory();
            el->value_len = v.n;
        }
        if (st != COFFER_OK || (st = cf_wire_get_count(r, &ni, 27, "the elements")) != COFFER_OK)
            break;
        for (uint64_t e = 0; e < ni && st == COFFER_OK; e++) {
            cf_slice key, v;
            uint8_t present;
            cf_stamp stamp;
            if ((st = cf_wire_get_bytes(r, &key, "an element")) != COFFER_OK ||
                (st = cf_wire_get_u8(r, &present, "an element")) != COFFER_OK || (st = cf_sync_get_stamp(r, &stamp)) != COFFER_OK ||
                (st = cf_wire_get_bytes(r, &v, "an element's value")) != COFFER_OK)
                break;
            cf_sync_item *it = cf_sync_item_find(p, key.p, key.n, 1);
            if (!it)
                return no_memory();
            it->present = present;
            it->stamp = stamp;
            if (v.n)
                st = cf_sync_item_set_value(it, v);
        }
    }
    if (st == COFFER_OK && r->p != r->end)
        st = cf_wire_bad(r, "%zu bytes after its end", cf_wreader_left(r));
    return st;
}

static void ghost_key(coffer_txn *txn, uint32_t table, cf_slice pk, uint8_t k[CF_SYNC_TOMB_KEY_SIZE])
{
    cf_sync_pk_key(txn->db->keys, 'g', table, pk, k);
}

coffer_status cf_sync_ghost_get(coffer_txn *txn, uint32_t table, cf_slice pk, cf_sync_obj **out)
{
    uint8_t k[CF_SYNC_TOMB_KEY_SIZE];
    ghost_key(txn, table, pk, k);
    uint8_t *v;
    size_t n;
    int has;
    *out = NULL;
    coffer_status st = cf_sync_meta_get(txn, k, sizeof k, &v, &n, &has, "a sync ghost");
    if (st != COFFER_OK || !has)
        return st;
    cf_wreader r = cf_wreader_make(v, n, "a sync ghost");
    uint8_t enc;
    cf_slice stored;
    cf_sync_obj *g = NULL;
    if ((st = cf_wire_get_u8(&r, &enc, "the encoding")) == COFFER_OK && enc != GHOST_ENCODING)
        st = cf_wire_bad(&r, "encoding %u", enc);
    if (st == COFFER_OK)
        st = cf_wire_get_bytes(&r, &stored, "the primary key");
    /* A hash collision is not this object's ghost. */
    if (st == COFFER_OK && (stored.n != pk.n || memcmp(stored.p, pk.p, pk.n) != 0)) {
        free(v);
        return COFFER_OK;
    }
    if (st == COFFER_OK && (st = cf_sync_ghost_make(table, pk, &g)) == COFFER_OK)
        st = decode(&r, g);
    free(v);
    if (st != COFFER_OK) {
        cf_sync_obj_free(g);
        return st;
    }
    *out = g;
    return COFFER_OK;
}

static int keeps_anything(const cf_sync_obj *g)
{
    for (size_t i = 0; i < g->nprops; i++)
        if (g->props[i].value || g->props[i].nitems || g->props[i].nelems)
            return 1;
    return 0;
}

coffer_status cf_sync_ghost_put(coffer_txn *txn, const cf_sync_obj *g)
{
    cf_slice pk = {g->pk, g->pk_len};
    if (!keeps_anything(g))
        return cf_sync_ghost_del(txn, g->table, pk);
    cf_buf b = {0};
    encode(&b, g);
    return cf_sync_pk_put(txn, 'g', g->table, pk, &b, "a sync ghost");
}

coffer_status cf_sync_ghost_del(coffer_txn *txn, uint32_t table, cf_slice pk)
{
    return cf_sync_pk_del(txn, 'g', table, pk, "a sync ghost");
}

void cf_sync_ghost_prune(cf_sync_obj *g, const cf_stamp *tombstone)
{
    for (size_t i = 0; i < g->nprops; i++) {
        cf_sync_prop *p = &g->props[i];
        if (p->value && cf_stamp_cmp(&p->stamp, tombstone) <= 0) {
            free(p->value);
            p->value = NULL;
            p->value_len = 0;
        }
        /* List elements stay (later inserts may be anchored on them); their values go. */
        for (size_t e = 0; e < p->nelems; e++) {
            cf_sync_elem *el = &p->elems[e];
            cf_stamp inserted = {.clock = el->id.clock};
            memcpy(inserted.client, el->id.client, CF_SYNC_ID_SIZE);
            if (el->value && cf_stamp_cmp(&inserted, tombstone) <= 0) {
                free(el->value);
                el->value = NULL;
                el->value_len = 0;
            }
        }
        size_t kept = 0;
        for (size_t e = 0; e < p->nitems; e++) {
            if (cf_stamp_cmp(&p->items[e].stamp, tombstone) > 0) {
                p->items[kept++] = p->items[e];
                continue;
            }
            free(p->items[e].key);
            free(p->items[e].value);
        }
        p->nitems = kept;
    }
}
