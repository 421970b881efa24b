/* checksums — XXH64 (util/checksum) of a value, seeded by its place
 * (sub-database number and key), cut to 32 bits and stored after the value,
 * little-endian. */
#include "storage/checksums.h"

#include <stdlib.h>
#include <string.h>

#include "storage/env.h"
#include "storage/txn.h"
#include "util/checksum.h"
#include "util/error.h"

/* The seed that binds a value to its place: the sub-database number and the
 * key, folded 8 bytes at a time (little-endian, the last word zero-padded)
 * with XXH64's round, cheaper than hashing them apart (a few cycles for an
 * object's 8-byte key). */
static uint64_t place_seed(uint32_t number, const uint8_t *key, size_t klen)
{
    const uint64_t p1 = UINT64_C(0x9E3779B185EBCA87), p2 = UINT64_C(0xC2B2AE3D27D4EB4F);
    uint64_t seed = UINT64_C(0x27D4EB2F165667C5) ^ number ^ (uint64_t)klen << 32;
    for (size_t i = 0; i < klen; i += 8) {
        uint64_t w = 0;
        size_t n = klen - i < 8 ? klen - i : 8;
        for (size_t j = 0; j < n; j++)
            w |= (uint64_t)key[i + j] << (8 * j);
        seed ^= w * p2;
        seed = (seed << 31 | seed >> 33) * p1;
    }
    return seed;
}

uint32_t cf_checksum(uint32_t number, const uint8_t *key, size_t klen, const uint8_t *data, size_t len)
{
    return (uint32_t)cf_xxh64(data, len, place_seed(number, key, klen));
}

coffer_status cf_checksum_open(uint32_t number, const MDB_val *k, const MDB_val *v, const uint8_t **data, size_t *len,
                               const char *what)
{
    if (v->mv_size < CF_CHECKSUM_SIZE)
        return cf_error(COFFER_ERR_CORRUPTED, "%s is damaged: %zu bytes are too few to hold its checksum", what, v->mv_size);
    size_t n = v->mv_size - CF_CHECKSUM_SIZE;
    const uint8_t *p = v->mv_data;
    if (cf_checksum(number, k->mv_data, k->mv_size, p, n) != (uint32_t)cf_get_le(p + n, CF_CHECKSUM_SIZE))
        return cf_error(COFFER_ERR_CORRUPTED, "%s is damaged: its checksum does not match its bytes", what);
    *data = p;
    *len = n;
    return COFFER_OK;
}

coffer_status cf_checksum_add_all(coffer_txn *txn, MDB_dbi dbi, uint32_t number, const char *skip)
{
    MDB_cursor *cur;
    int rc = mdb_cursor_open(txn->mdb, dbi, &cur);
    if (rc != 0)
        return cf_error_mdb(rc, "cannot add checksums");
    /* Each value is written again through mdb_put, and the cursor seeks past
     * its key afresh: never a put through a cursor walking the same pages. */
    uint8_t key[511];
    size_t klen = 0;
    uint8_t *buf = NULL;
    size_t cap = 0;
    coffer_status st = COFFER_OK;
    MDB_val k, v;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && st == COFFER_OK;) {
        if (k.mv_size > sizeof key) {
            st = cf_error(COFFER_ERR_CORRUPTED, "sub-database %u holds a key of %zu bytes", number, k.mv_size);
            break;
        }
        memcpy(key, k.mv_data, k.mv_size);
        klen = k.mv_size;
        int skipped = skip && klen == strlen(skip) && memcmp(key, skip, klen) == 0;
        if (!skipped) {
            if (v.mv_size + CF_CHECKSUM_SIZE > cap) {
                size_t want = v.mv_size + CF_CHECKSUM_SIZE;
                uint8_t *grown = realloc(buf, want);
                if (!grown) {
                    st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory adding checksums");
                    break;
                }
                buf = grown;
                cap = want;
            }
            if (v.mv_size)
                memcpy(buf, v.mv_data, v.mv_size);
            cf_put_le(buf + v.mv_size, cf_checksum(number, key, klen, buf, v.mv_size), CF_CHECKSUM_SIZE);
            MDB_val pk = {klen, key}, pv = {v.mv_size + CF_CHECKSUM_SIZE, buf};
            if ((rc = mdb_put(txn->mdb, dbi, &pk, &pv, 0)) != 0) {
                st = cf_txn_write_error(txn, rc, "cannot add checksums");
                break;
            }
        }
        k = (MDB_val){klen, key};
        rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
        if (rc == 0 && k.mv_size == klen && memcmp(k.mv_data, key, klen) == 0)
            rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    }
    mdb_cursor_close(cur);
    free(buf);
    if (st == COFFER_OK && rc != MDB_NOTFOUND)
        st = cf_error_mdb(rc, "cannot add checksums");
    return st;
}

/* Adds checksums to sub-database `number` if the file has it. */
static coffer_status add_if_present(coffer_txn *txn, uint32_t number, const char *skip)
{
    MDB_dbi dbi;
    coffer_status st = cf_env_dbi(txn->db->env, txn->mdb, number, 0, &dbi);
    if (st == COFFER_ERR_NOT_FOUND) {
        coffer_clear_error();
        return COFFER_OK; /* no collections yet, or a class a later open creates */
    }
    return st == COFFER_OK ? cf_checksum_add_all(txn, dbi, number, skip) : st;
}

coffer_status cf_checksum_add_file(coffer_txn *txn, const cf_schema *stored)
{
    coffer_status st = cf_checksum_add_all(txn, txn->db->meta_dbi, CF_META_DBI, "header");
    if (st == COFFER_OK)
        st = add_if_present(txn, CF_GRAPH_DBI, NULL);
    for (size_t i = 0; st == COFFER_OK && stored && i < stored->nclasses; i++)
        st = add_if_present(txn, 2 * stored->classes[i].table, NULL);
    return st;
}
