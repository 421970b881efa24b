/* logic — the second half of coffer_verify(), run once the pages are known
 * to be sound: opens the file read-only through the normal path and reads
 * every object property by property (decoding and, encrypted, authenticating
 * it), with its lists, sets, maps and nested collections; then checks that
 * index entries and primary keys, links and backlink counts, the key and
 * collection-id counters and the change log agree with the data. */
#define _GNU_SOURCE
#include "verify/verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objects/graph.h"
#include "storage/changelog.h"
#include "storage/index.h"
#include "storage/object_store.h"
#include "storage/txn.h"

/* One link found in the data: (target, origin property, origin object). */
typedef struct link_ref {
    uint32_t ttable;
    uint64_t tkey;
    uint32_t otable;
    uint16_t ocol;
    uint64_t okey;
} link_ref;

typedef struct checker {
    coffer_verify_report *r;
    cf_pages *pages;
    coffer_txn *txn;
    coffer_db *db;
    link_ref *links;
    size_t nlinks, links_cap;
    int oom;
} checker;

/* The object being read, for messages and for link attribution. */
typedef struct origin {
    const cf_class *c;
    coffer_class_id cls;
    const cf_prop *p;
    coffer_object_key key;
} origin;

/* The page holding object `key`'s values: its record's, or its cluster's. */
static uint64_t record_page(checker *k, uint32_t table, coffer_object_key key)
{
    uint8_t kb[8];
    cf_objects_place(k->txn, key, kb);
    return cf_pages_locate(k->pages, 2 * table, kb, sizeof kb);
}

static void add_link(checker *k, const origin *o, uint32_t ttable, uint64_t tkey)
{
    if (k->nlinks == k->links_cap) {
        size_t cap = k->links_cap ? 2 * k->links_cap : 256;
        link_ref *l = realloc(k->links, cap * sizeof *l);
        if (!l) {
            k->oom = 1;
            return;
        }
        k->links = l;
        k->links_cap = cap;
    }
    k->links[k->nlinks++] = (link_ref){ttable, tkey, o->c->table, o->p->column, o->key};
}

/* A link value read from the data: its target must exist; it counts for the
 * backlink check. */
static void check_link(checker *k, const origin *o, const coffer_value *v, const char *where)
{
    coffer_object *target = NULL;
    coffer_class_id tcls = v->u.link.class_id;
    if (tcls >= k->db->schema->nclasses) {
        cf_report_add(k->r, COFFER_VERIFY_LINK, record_page(k, o->c->table, o->key), o->c->name, o->key,
                      "property '%s'%s links to class id %u, which does not exist", o->p->name, where, tcls);
        return;
    }
    coffer_status st = coffer_object_get(k->txn, tcls, v->u.link.key, &target);
    if (st != COFFER_OK)
        cf_report_add(k->r, COFFER_VERIFY_LINK, record_page(k, o->c->table, o->key), o->c->name, o->key,
                      "property '%s'%s links to object %llu of class '%s', which %s", o->p->name, where,
                      (unsigned long long)v->u.link.key, k->db->schema->classes[tcls].name,
                      st == COFFER_ERR_NOT_FOUND ? "does not exist" : coffer_last_error());
    coffer_object_release(target);
    add_link(k, o, k->db->schema->classes[tcls].table, v->u.link.key);
}

static void check_scalar(checker *k, const origin *o, const coffer_value *v, const char *where)
{
    if (v->type == COFFER_TYPE_NULL || v->type == COFFER_TYPE_LINK || v->type == COFFER_TYPE_LIST ||
        v->type == COFFER_TYPE_MAP || v->type == COFFER_TYPE_SET)
        return;
    if (cf_value_check_scalar(o->c, o->p, v) != COFFER_OK)
        cf_report_add(k->r, COFFER_VERIFY_RECORD, record_page(k, o->c->table, o->key), o->c->name, o->key,
                      "property '%s'%s holds an invalid %s: %s", o->p->name, where, coffer_type_name(v->type), coffer_last_error());
}

static void check_list(checker *k, const origin *o, coffer_list *list, int depth);
static void check_map(checker *k, const origin *o, coffer_map *map, int depth);

/* An element or mixed value: scalar contents, link target, nested collection. */
static void check_element(checker *k, const origin *o, const coffer_value *v, const char *where, coffer_list *in_list,
                          coffer_map *in_map, uint64_t index, const coffer_bytes *mkey, int depth)
{
    if (v->type == COFFER_TYPE_LINK) {
        check_link(k, o, v, where);
        return;
    }
    if ((v->type != COFFER_TYPE_LIST && v->type != COFFER_TYPE_MAP) || (!in_list && !in_map)) {
        check_scalar(k, o, v, where);
        return;
    }
    coffer_list *l = NULL;
    coffer_map *m = NULL;
    coffer_status st;
    if (v->type == COFFER_TYPE_LIST)
        st = in_list ? coffer_list_get_list(in_list, index, &l) : coffer_map_get_list(in_map, (const char *)mkey->data, mkey->size, &l);
    else
        st = in_list ? coffer_list_get_map(in_list, index, &m) : coffer_map_get_map(in_map, (const char *)mkey->data, mkey->size, &m);
    if (st != COFFER_OK)
        cf_report_add(k->r, COFFER_VERIFY_COLLECTION, record_page(k, o->c->table, o->key), o->c->name, o->key,
                      "property '%s'%s: a nested collection cannot be opened: %s", o->p->name, where, coffer_last_error());
    if (l)
        check_list(k, o, l, depth + 1);
    if (m)
        check_map(k, o, m, depth + 1);
    coffer_list_release(l);
    coffer_map_release(m);
}

static void collection_finding(checker *k, const origin *o, const char *what, uint64_t index)
{
    cf_report_add(k->r, COFFER_VERIFY_COLLECTION, record_page(k, o->c->table, o->key), o->c->name, o->key,
                  "property '%s': %s %llu cannot be read: %s", o->p->name, what, (unsigned long long)index, coffer_last_error());
}

static void check_list(checker *k, const origin *o, coffer_list *list, int depth)
{
    uint64_t n = 0;
    if (coffer_list_count(list, &n) != COFFER_OK) {
        collection_finding(k, o, "the list header of level", (uint64_t)depth);
        return;
    }
    for (uint64_t i = 0; i < n; i++) {
        coffer_value v;
        if (coffer_list_get(list, i, &v) != COFFER_OK) {
            collection_finding(k, o, "list element", i);
            return; /* a damaged chunk fails every element after it */
        }
        char where[48];
        snprintf(where, sizeof where, " (list element %llu)", (unsigned long long)i);
        check_element(k, o, &v, where, list, NULL, i, NULL, depth);
    }
}

static void check_map(checker *k, const origin *o, coffer_map *map, int depth)
{
    uint64_t n = 0;
    if (coffer_map_count(map, &n) != COFFER_OK) {
        collection_finding(k, o, "the map header of level", (uint64_t)depth);
        return;
    }
    for (uint64_t i = 0; i < n; i++) {
        coffer_bytes key;
        coffer_value v;
        if (coffer_map_get_entry(map, i, &key, &v) != COFFER_OK) {
            collection_finding(k, o, "map entry", i);
            return;
        }
        /* The key borrows the entry; nested reads may move it. */
        char *kbuf = malloc(key.size + 1);
        if (!kbuf) {
            k->oom = 1;
            return;
        }
        if (key.size)
            memcpy(kbuf, key.data, key.size);
        coffer_bytes kcopy = {kbuf, key.size};
        char where[48];
        snprintf(where, sizeof where, " (map entry %llu)", (unsigned long long)i);
        check_element(k, o, &v, where, NULL, map, i, &kcopy, depth);
        free(kbuf);
    }
}

static void check_set(checker *k, const origin *o, coffer_set *set)
{
    uint64_t n = 0;
    if (coffer_set_count(set, &n) != COFFER_OK) {
        collection_finding(k, o, "the set header of level", 1);
        return;
    }
    for (uint64_t i = 0; i < n; i++) {
        coffer_value v;
        if (coffer_set_get(set, i, &v) != COFFER_OK) {
            collection_finding(k, o, "set element", i);
            return;
        }
        check_element(k, o, &v, " (a set element)", NULL, NULL, i, NULL, 1);
    }
}

/* Property `prop` of object `obj`: its value, link or collection. */
static void check_property(checker *k, origin *o, coffer_object *obj, coffer_property_id prop, uint8_t *ibuf)
{
    const cf_prop *p = o->p;
    if (p->type == COFFER_TYPE_LINKING_OBJECTS)
        return;
    coffer_status st = COFFER_OK;
    if (p->collection != COFFER_COLLECTION_NONE) {
        coffer_list *l = NULL;
        coffer_set *s = NULL;
        coffer_map *m = NULL;
        st = p->collection == COFFER_COLLECTION_LIST ? coffer_object_get_list(obj, prop, &l)
           : p->collection == COFFER_COLLECTION_SET ? coffer_object_get_set(obj, prop, &s)
                                                    : coffer_object_get_map(obj, prop, &m);
        if (st == COFFER_OK && l)
            check_list(k, o, l, 1);
        if (st == COFFER_OK && s)
            check_set(k, o, s);
        if (st == COFFER_OK && m)
            check_map(k, o, m, 1);
        coffer_list_release(l);
        coffer_set_release(s);
        coffer_map_release(m);
        if (st != COFFER_OK)
            collection_finding(k, o, "its collection at level", 1);
        return;
    }
    coffer_value v;
    st = coffer_object_get_value(obj, prop, &v);
    if (st != COFFER_OK) {
        cf_report_add(k->r, COFFER_VERIFY_RECORD, record_page(k, o->c->table, o->key), o->c->name, o->key,
                      "property '%s' cannot be read: %s", p->name, coffer_last_error());
        return;
    }
    if (p->type == COFFER_TYPE_MIXED && (v.type == COFFER_TYPE_LIST || v.type == COFFER_TYPE_MAP)) {
        coffer_list *l = NULL;
        coffer_map *m = NULL;
        st = v.type == COFFER_TYPE_LIST ? coffer_object_get_list(obj, prop, &l) : coffer_object_get_map(obj, prop, &m);
        if (st != COFFER_OK)
            collection_finding(k, o, "its nested collection at level", 1);
        if (l)
            check_list(k, o, l, 1);
        if (m)
            check_map(k, o, m, 1);
        coffer_list_release(l);
        coffer_map_release(m);
        return;
    }
    check_element(k, o, &v, "", NULL, NULL, 0, NULL, 0);
    if (!cf_prop_indexed(p))
        return;
    /* Its index entry: column || encoded value || object key. */
    size_t n = cf_index_entry(k->db, o->c, p, &v, o->key, ibuf);
    if (cf_index_contains(k->txn, o->cls, ibuf, n) != COFFER_OK)
        cf_report_add(k->r, COFFER_VERIFY_INDEX, cf_pages_locate(k->pages, 2 * o->c->table + 1, ibuf, n), o->c->name, o->key,
                      "property '%s': the index has no entry for this object's value", p->name);
    if (o->c->pk != (int)prop)
        return;
    coffer_object *found = NULL;
    st = coffer_object_find(k->txn, o->cls, &v, &found);
    if (st != COFFER_OK || coffer_object_key_of(found) != o->key)
        cf_report_add(k->r, COFFER_VERIFY_PRIMARY_KEY, record_page(k, o->c->table, o->key), o->c->name, o->key,
                      "primary key '%s': a lookup by this object's value finds %s", p->name,
                      st == COFFER_OK ? "another object" : "nothing");
    coffer_object_release(found);
}

/* Counts index entries per column and reports those of no indexed column
 * and columns with more entries than objects (entries of objects that are
 * gone: every object has exactly one entry per indexed property). */
/* What counting a class's index entries gathers. */
typedef struct entry_counts {
    checker *k;
    const cf_class *c;
    uint64_t *counts; /* per property; c->nprops counts no property */
    uint64_t stray;
} entry_counts;

static void count_entry(void *ctx, int column, const uint8_t *entry, size_t len)
{
    entry_counts *e = ctx;
    const cf_class *c = e->c;
    size_t p = c->nprops;
    for (size_t i = 0; column >= 0 && i < c->nprops; i++)
        if (c->props[i].column == column && cf_prop_indexed(&c->props[i]))
            p = i;
    if (p < c->nprops)
        e->counts[p]++;
    else if (e->stray++ == 0)
        cf_report_add(e->k->r, COFFER_VERIFY_INDEX, cf_pages_locate(e->k->pages, 2 * c->table + 1, entry, len), c->name, 0,
                      "an index entry of %zu bytes belongs to no indexed property", len);
}

static void check_index_counts(checker *k, coffer_class_id cls, uint64_t nobjects)
{
    const cf_class *c = &k->db->schema->classes[cls];
    entry_counts e = {k, c, calloc(c->nprops + 1, sizeof *e.counts), 0};
    if (!e.counts || cf_index_each(k->txn, cls, count_entry, &e) != COFFER_OK) {
        free(e.counts);
        return;
    }
    for (size_t p = 0; p < c->nprops; p++) {
        if (cf_prop_indexed(&c->props[p]) && e.counts[p] > nobjects)
            cf_report_add(k->r, COFFER_VERIFY_INDEX, COFFER_VERIFY_NO_PAGE, c->name, 0,
                          "property '%s': the index has %llu entries for %llu objects", c->props[p].name,
                          (unsigned long long)e.counts[p], (unsigned long long)nobjects);
    }
    free(e.counts);
}

static void check_counter(checker *k, const cf_class *c, uint64_t max_key)
{
    uint8_t mk[5];
    size_t mklen = cf_meta_next_key(c->table, mk);
    const uint8_t *data;
    size_t len;
    uint8_t *buf = NULL;
    size_t cap = 0;
    coffer_status st = cf_store_get(k->txn, k->db->meta_dbi, CF_META_DBI, mk, mklen, &data, &len, &buf, &cap, "the object-key counter");
    if (st == COFFER_OK && len != 8)
        cf_report_add(k->r, COFFER_VERIFY_COUNTER, cf_pages_locate(k->pages, CF_META_DBI, mk, mklen), c->name, 0,
                      "the object-key counter has %zu bytes", len);
    else if (st == COFFER_OK && cf_get_be64(data) <= max_key)
        cf_report_add(k->r, COFFER_VERIFY_COUNTER, cf_pages_locate(k->pages, CF_META_DBI, mk, mklen), c->name, 0,
                      "the object-key counter (%llu) is not above the highest key in use (%llu)",
                      (unsigned long long)cf_get_be64(data), (unsigned long long)max_key);
    else if (st != COFFER_OK && st != COFFER_ERR_NOT_FOUND)
        cf_report_add(k->r, COFFER_VERIFY_COUNTER, cf_pages_locate(k->pages, CF_META_DBI, mk, mklen), c->name, 0, "%s",
                      coffer_last_error());
    free(buf);
}

/* Every object of class `cls`, property by property. */
static void check_class(checker *k, coffer_class_id cls)
{
    const cf_class *c = &k->db->schema->classes[cls];
    cf_object_cursor cur;
    if (cf_object_cursor_open(k->txn, cls, &cur) != COFFER_OK)
        return;
    uint8_t ibuf[CF_INDEX_PREFIX_MAX + 8];
    uint64_t nobjects = 0, max_key = 0;
    coffer_object_key okey;
    for (coffer_status st; (st = cf_object_cursor_next(&cur, &okey, NULL)) != COFFER_DONE;) {
        if (st != COFFER_OK) {
            /* A key of the wrong size: the walk goes on past it. */
            cf_report_add(k->r, COFFER_VERIFY_RECORD, COFFER_VERIFY_NO_PAGE, c->name, 0, "%s", coffer_last_error());
            if (st != COFFER_ERR_CORRUPTED)
                break;
            nobjects++;
            continue;
        }
        nobjects++;
        max_key = okey > max_key ? okey : max_key;
        coffer_object *obj = NULL;
        if (coffer_object_get(k->txn, cls, okey, &obj) != COFFER_OK) {
            cf_report_add(k->r, COFFER_VERIFY_RECORD, record_page(k, c->table, okey), c->name, okey, "the object cannot be read: %s",
                          coffer_last_error());
            continue;
        }
        origin o = {.c = c, .cls = cls, .key = okey};
        size_t before = cf_report_total(k->r);
        for (size_t p = 0; p < c->nprops && cf_report_total(k->r) - before < 8; p++) {
            o.p = &c->props[p];
            check_property(k, &o, obj, (coffer_property_id)p, ibuf);
        }
        coffer_object_release(obj);
    }
    cf_object_cursor_close(&cur);
    check_index_counts(k, cls, nobjects);
    check_counter(k, c, max_key);
}

static int link_cmp(const void *a, const void *b)
{
    const link_ref *x = a, *y = b;
#define CMP(f) if (x->f != y->f) return x->f < y->f ? -1 : 1
    CMP(ttable); CMP(tkey); CMP(otable); CMP(ocol); CMP(okey);
#undef CMP
    return 0;
}

static const char *class_of_table(const coffer_db *db, uint32_t table)
{
    int i = cf_graph_class_of_table(db, table);
    return i >= 0 ? db->schema->classes[i].name : NULL;
}

/* The backlink entries ("B" keys of sub-database 1) against the links the
 * data holds, both in key order. */
static void check_backlinks(checker *k)
{
    if (k->nlinks)
        qsort(k->links, k->nlinks, sizeof *k->links, link_cmp);
    MDB_cursor *cur;
    if (mdb_cursor_open(k->txn->mdb, k->db->graph_dbi, &cur) != 0)
        return;
    MDB_val key = {1, (void *)"B"}, val;
    int rc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE);
    size_t i = 0;
    int reported = 0;
    for (;;) {
        int have_entry = rc == 0 && key.mv_size >= 1 && ((const uint8_t *)key.mv_data)[0] == 'B';
        link_ref e = {0};
        uint32_t count = 0;
        if (have_entry) {
            cf_backlink b;
            if (cf_backlink_entry(k->txn, &key, &val, &b) != COFFER_OK) {
                cf_report_add(k->r, COFFER_VERIFY_BACKLINK, cf_pages_locate(k->pages, CF_GRAPH_DBI, key.mv_data, key.mv_size), NULL, 0,
                              "a backlink entry cannot be read: %s", coffer_last_error());
                rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
                continue;
            }
            const uint8_t *kp = key.mv_data;
            e = (link_ref){cf_get_be32(kp + 1), cf_get_be64(kp + 5), b.otable, b.ocol, b.okey};
            count = b.count;
        }
        if (!have_entry && i == k->nlinks)
            break;
        int c = !have_entry ? 1 : i == k->nlinks ? -1 : link_cmp(&e, &k->links[i]);
        if (c > 0) { /* links without an entry */
            const link_ref *l = &k->links[i];
            size_t n = 0;
            while (i < k->nlinks && link_cmp(l, &k->links[i]) == 0)
                i++, n++;
            if (reported++ < 50)
                cf_report_add(k->r, COFFER_VERIFY_BACKLINK, COFFER_VERIFY_NO_PAGE, class_of_table(k->db, l->ttable), l->tkey,
                              "%zu link%s from object %llu of class '%s' %s no backlink entry", n, n == 1 ? "" : "s",
                              (unsigned long long)l->okey, class_of_table(k->db, l->otable) ? class_of_table(k->db, l->otable) : "?",
                              n == 1 ? "has" : "have");
            continue;
        }
        size_t n = 0;
        while (c == 0 && i < k->nlinks && link_cmp(&e, &k->links[i]) == 0)
            i++, n++;
        if (n != count && reported++ < 50)
            cf_report_add(k->r, COFFER_VERIFY_BACKLINK, cf_pages_locate(k->pages, CF_GRAPH_DBI, key.mv_data, key.mv_size),
                          class_of_table(k->db, e.ttable), e.tkey,
                          "the backlink entry from object %llu (table %u, column %u) counts %u links; the data holds %zu",
                          (unsigned long long)e.okey, e.otable, e.ocol, count, n);
        rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
    }
    mdb_cursor_close(cur);
}

/* The collection-id counter against the ids in use, and the change log. */
static void check_meta(checker *k)
{
    MDB_cursor *cur;
    uint64_t max_id = 0;
    MDB_val key = {1, (void *)"C"}, val;
    if (k->db->has_graph && mdb_cursor_open(k->txn->mdb, k->db->graph_dbi, &cur) == 0) {
        /* The last "C" key holds the highest id: seek past the tag. */
        key = (MDB_val){1, (void *)"D"};
        int rc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE);
        rc = rc == 0 ? mdb_cursor_get(cur, &key, &val, MDB_PREV) : mdb_cursor_get(cur, &key, &val, MDB_LAST);
        if (rc == 0 && key.mv_size >= 9 && ((const uint8_t *)key.mv_data)[0] == 'C')
            max_id = cf_get_be64((const uint8_t *)key.mv_data + 1);
        mdb_cursor_close(cur);
    }
    const uint8_t *data;
    size_t len;
    uint8_t *buf = NULL;
    size_t cap = 0;
    coffer_status st = cf_store_get(k->txn, k->db->meta_dbi, CF_META_DBI, (const uint8_t *)"c", 1, &data, &len, &buf, &cap,
                                    "the collection-id counter");
    if (st == COFFER_OK && (len != 8 || cf_get_be64(data) <= max_id))
        cf_report_add(k->r, COFFER_VERIFY_COUNTER, cf_pages_locate(k->pages, CF_META_DBI, (const uint8_t *)"c", 1), NULL, 0,
                      "the collection-id counter is not above the highest collection id in use (%llu)", (unsigned long long)max_id);
    else if (st != COFFER_OK && st != COFFER_ERR_NOT_FOUND)
        cf_report_add(k->r, COFFER_VERIFY_COUNTER, COFFER_VERIFY_NO_PAGE, NULL, 0, "%s", coffer_last_error());
    free(buf);
    if (mdb_cursor_open(k->txn->mdb, k->db->meta_dbi, &cur) != 0)
        return;
    key = (MDB_val){1, (void *)"L"};
    for (int rc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE); rc == 0; rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
        const uint8_t *kp = key.mv_data;
        if (key.mv_size < 1 || kp[0] != 'L')
            break;
        uint64_t page = cf_pages_locate(k->pages, CF_META_DBI, kp, key.mv_size);
        if (key.mv_size != 9) {
            cf_report_add(k->r, COFFER_VERIFY_CHANGE_LOG, page, NULL, 0, "a change-log key of %zu bytes", key.mv_size);
            continue;
        }
        cf_log_entry entry;
        if (cf_log_read(k->txn, cf_get_be64(kp + 1), &entry) != COFFER_OK)
            cf_report_add(k->r, COFFER_VERIFY_CHANGE_LOG, page, NULL, 0, "the entry of version %llu does not decode: %s",
                          (unsigned long long)cf_get_be64(kp + 1), coffer_last_error());
        else
            cf_log_entry_free(&entry);
    }
    mdb_cursor_close(cur);
}

coffer_status cf_verify_contents(coffer_db *db, cf_pages *pages, coffer_verify_report *r)
{
    coffer_txn *txn = NULL;
    coffer_status st = coffer_txn_begin(db, COFFER_TXN_READ, &txn);
    if (st != COFFER_OK)
        return st;
    checker k = {.r = r, .pages = pages, .txn = txn, .db = db};
    for (size_t i = 0; i < db->schema->nclasses; i++)
        check_class(&k, (coffer_class_id)i);
    if (k.oom)
        st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory collecting the links of %s", db->env->path ? db->env->path : "the database");
    else if (db->has_graph)
        check_backlinks(&k);
    if (st == COFFER_OK)
        check_meta(&k);
    free(k.links);
    coffer_txn_free(txn);
    coffer_clear_error();
    return st;
}
