/* pk_map — a transaction's hash map over primary-key index entries
 * (pk_map.h). Open addressing with linear probing and backward-shift
 * deletion; a slot holds a word for an entry's prefix (never 0: 0 marks an
 * empty slot; prefix_word) and the object key. */
#include "storage/pk_map.h"

#include <stdlib.h>
#include <string.h>

#include "storage/index.h"
#include "storage/object_store.h"
#include "util/error.h"

typedef struct pk_slot {
    uint64_t hash;
    coffer_object_key key;
} pk_slot;

typedef struct pk_map {
    pk_slot *slots; /* NULL: no map (yet) */
    size_t mask;    /* slots - 1, a power of two minus one */
    size_t count;
    size_t hashed; /* entries whose word is a hash: while there are none, an exact word needs no confirmation */
    uint16_t column;
    uint64_t lookups; /* by primary key in this transaction, counted while there is no map */
    int refused;      /* too many objects, or out of memory: no map for this transaction */
} pk_map;

struct cf_pk_maps {
    size_t nclasses;
    pk_map classes[];
};

/* A 64-bit hash of bytes b[0..n): eight bytes a step, multiplied and folded. */
static uint64_t prefix_hash(const uint8_t *b, size_t n)
{
    const uint64_t m = UINT64_C(0x9E3779B97F4A7C15);
    uint64_t h = UINT64_C(0x243F6A8885A308D3) ^ (n * m);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        h = (h ^ w) * m;
        h ^= h >> 29;
        b += 8;
        n -= 8;
    }
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++)
        w |= (uint64_t)b[i] << (8 * i);
    h = (h ^ w) * m;
    h ^= h >> 32;
    h *= UINT64_C(0xD6E8FEB86659FD93);
    h ^= h >> 32;
    return h ? h : 1;
}

/* The word a slot holds for an entry prefix: a non-null int's encoded value
 * itself (*exact: equal words mean equal values), else prefix_hash. */
static uint64_t prefix_word(const uint8_t *prefix, size_t plen, int *exact)
{
    if (plen == 2 + 1 + 8 && prefix[2] == 1) {
        uint64_t w = cf_get_be64(prefix + 3);
        if (w != 0) {
            *exact = 1;
            return w;
        }
    }
    *exact = 0;
    return prefix_hash(prefix, plen);
}

/* Where a word's probe starts: its bits mixed, so that keys counting up do
 * not fill the table in runs. */
static size_t home_of(uint64_t word, size_t mask)
{
    uint64_t h = word * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h ^ (h >> 32)) & mask;
}

static void map_release(pk_map *m)
{
    free(m->slots);
    m->slots = NULL;
    m->mask = 0;
    m->count = 0;
    m->hashed = 0;
}

static pk_map *map_of(coffer_txn *txn, coffer_class_id cls, int create)
{
    struct cf_pk_maps *all = txn->pk_maps;
    if (!all) {
        if (!create)
            return NULL;
        size_t n = txn->db->schema->nclasses;
        all = calloc(1, sizeof *all + (n + 1) * sizeof all->classes[0]);
        if (!all)
            return NULL;
        all->nclasses = n + 1;
        txn->pk_maps = all;
    }
    return cls < all->nclasses ? &all->classes[cls] : NULL;
}

/* Puts (hash, key) into a table known to have room. */
static void slot_put(pk_slot *slots, size_t mask, uint64_t hash, coffer_object_key key)
{
    size_t i = home_of(hash, mask);
    while (slots[i].hash)
        i = (i + 1) & mask;
    slots[i].hash = hash;
    slots[i].key = key;
}

/* Doubles the table (or makes the first one of `want` slots). 0 when out of memory. */
static int map_grow(pk_map *m, size_t want)
{
    size_t size = m->slots ? (m->mask + 1) * 2 : want;
    pk_slot *slots = calloc(size, sizeof *slots);
    if (!slots)
        return 0;
    for (size_t i = 0; m->slots && i <= m->mask; i++)
        if (m->slots[i].hash)
            slot_put(slots, size - 1, m->slots[i].hash, m->slots[i].key);
    free(m->slots);
    m->slots = slots;
    m->mask = size - 1;
    return 1;
}

/* Adds an entry; gives the map up (for the rest of the transaction) when it
 * would exceed its bound or memory runs out. */
static void map_add(pk_map *m, uint64_t hash, int exact, coffer_object_key key)
{
    if ((m->count + 1) * 2 > m->mask + 1) {
        if (m->count + 1 > CF_PK_MAP_MAX_ENTRIES || !map_grow(m, 0)) {
            map_release(m);
            m->refused = 1;
            return;
        }
    }
    slot_put(m->slots, m->mask, hash, key);
    m->count++;
    m->hashed += !exact;
}

static void map_remove(pk_map *m, uint64_t hash, int exact, coffer_object_key key)
{
    size_t i = home_of(hash, m->mask);
    for (;; i = (i + 1) & m->mask) {
        if (!m->slots[i].hash)
            return; /* not there: an entry the index did not hold either */
        if (m->slots[i].hash == hash && m->slots[i].key == key)
            break;
    }
    /* Backward shift: move later slots of the run into the hole when their
     * home is not between the hole and them. */
    size_t hole = i;
    for (size_t j = (i + 1) & m->mask; m->slots[j].hash; j = (j + 1) & m->mask) {
        size_t home = home_of(m->slots[j].hash, m->mask);
        int stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!stays) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].hash = 0;
    m->count--;
    m->hashed -= !exact;
}

typedef struct build_ctx {
    pk_map *m;
} build_ctx;

static coffer_status take_entry(void *ctx, const uint8_t *entry, size_t len)
{
    build_ctx *b = ctx;
    if (len < 8)
        return COFFER_OK;
    int exact;
    uint64_t word = prefix_word(entry, len - 8, &exact);
    map_add(b->m, word, exact, cf_get_be64(entry + len - 8));
    return b->m->refused ? COFFER_DONE : COFFER_OK;
}

/* Builds the map of `column` from the index, sized for `objects` entries. */
static coffer_status map_build(coffer_txn *txn, coffer_class_id cls, pk_map *m, uint16_t column, uint64_t objects)
{
    size_t size = 64;
    while (size < objects * 2)
        size *= 2;
    if (!map_grow(m, size)) {
        m->refused = 1;
        return COFFER_OK;
    }
    m->column = column;
    uint8_t prefix[2];
    cf_put_be16(prefix, column);
    build_ctx b = {m};
    coffer_status st = cf_index_walk_entries(txn, cls, prefix, 2, take_entry, &b);
    if (st != COFFER_OK)
        map_release(m);
    return st;
}

coffer_status cf_pk_map_find(coffer_txn *txn, coffer_class_id cls, uint16_t column, const uint8_t *prefix, size_t plen,
                             coffer_object_key from, coffer_object_key *key, int *mapped)
{
    *mapped = 0;
    pk_map *m = map_of(txn, cls, 1);
    if (!m || m->refused)
        return COFFER_OK;
    if (m->slots && m->column != column)
        map_release(m); /* a migration made another property the primary key */
    if (!m->slots) {
        if (from != 0 || ++m->lookups < CF_PK_MAP_MIN_LOOKUPS || m->lookups % CF_PK_MAP_MIN_LOOKUPS != 0)
            return COFFER_OK;
        uint64_t objects;
        coffer_status st = cf_objects_count(txn, cls, &objects);
        if (st != COFFER_OK)
            return st;
        if (objects > CF_PK_MAP_MAX_ENTRIES) {
            m->refused = 1;
            return COFFER_OK;
        }
        if (m->lookups * 16 < objects)
            return COFFER_OK;
        st = map_build(txn, cls, m, column, objects);
        if (st != COFFER_OK || !m->slots)
            return st;
    }
    int exact;
    uint64_t hash = prefix_word(prefix, plen, &exact);
    *mapped = exact && m->hashed == 0 ? 2 : 1;
    int found = 0;
    coffer_object_key best = 0;
    for (size_t i = home_of(hash, m->mask); m->slots[i].hash; i = (i + 1) & m->mask) {
        if (m->slots[i].hash == hash && m->slots[i].key >= from && (!found || m->slots[i].key < best)) {
            best = m->slots[i].key;
            found = 1;
        }
    }
    if (!found)
        return COFFER_DONE;
    *key = best;
    return COFFER_OK;
}

void cf_pk_map_note(coffer_txn *txn, coffer_class_id cls, const uint8_t *entry, size_t len, int added)
{
    pk_map *m = map_of(txn, cls, 0);
    if (!m || !m->slots || len < 2 + 8 || (uint16_t)(entry[0] << 8 | entry[1]) != m->column)
        return;
    int exact;
    uint64_t hash = prefix_word(entry, len - 8, &exact);
    coffer_object_key key = cf_get_be64(entry + len - 8);
    if (added)
        map_add(m, hash, exact, key);
    else
        map_remove(m, hash, exact, key);
}

void cf_pk_map_forget(coffer_txn *txn, coffer_class_id cls)
{
    pk_map *m = map_of(txn, cls, 0);
    if (m)
        map_release(m);
}

void cf_pk_map_free(coffer_txn *txn)
{
    struct cf_pk_maps *all = txn->pk_maps;
    if (!all)
        return;
    for (size_t i = 0; i < all->nclasses; i++)
        free(all->classes[i].slots);
    free(all);
    txn->pk_maps = NULL;
}

int cf_pk_map_active(const coffer_txn *txn, coffer_class_id cls)
{
    const struct cf_pk_maps *all = txn->pk_maps;
    return all && cls < all->nclasses && all->classes[cls].slots != NULL;
}
