/* cluster_parts — storing a cluster's head and column blocks apart, each
 * with its own checksum or seal, and opening them one by one. */
#include "storage/cluster_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/txn.h"
#include "util/error.h"

#define LENGTH_SIZE 4

static void part_key(uint8_t out[CF_CLUSTER_PART_KEY_SIZE], uint64_t cid, uint16_t part)
{
    cf_put_be64(out, cid);
    out[8] = (uint8_t)(part >> 8);
    out[9] = (uint8_t)part;
}

/* Writes plain bytes b[0 .. blen) as column `col`'s block of cluster `cid`,
 * an LMDB value of its own (cluster version 4). */
static coffer_status put_block(coffer_txn *txn, MDB_dbi dbi, uint32_t number, uint64_t cid, uint16_t col,
                               const uint8_t *b, size_t blen)
{
    uint8_t kb[CF_BLOCK_KEY_SIZE], pk[CF_CLUSTER_PART_KEY_SIZE];
    cf_cluster_block_key(kb, col, cid);
    MDB_val k = {sizeof kb, kb}, v = {blen + cf_store_overhead(txn->db), NULL};
    int rc = mdb_put(txn->mdb, dbi, &k, &v, MDB_RESERVE);
    if (rc != 0)
        return cf_txn_write_error(txn, rc, "cannot write a cluster's column block");
    part_key(pk, cid, col);
    cf_store_wrap(txn->db, number, pk, sizeof pk, v.mv_data, b, blen);
    return COFFER_OK;
}

coffer_status cf_cluster_delete_blocks(coffer_txn *txn, MDB_dbi dbi, uint64_t cid, uint16_t from, uint16_t to)
{
    for (uint16_t col = from; col < to; col++) {
        uint8_t kb[CF_BLOCK_KEY_SIZE];
        cf_cluster_block_key(kb, col, cid);
        MDB_val k = {sizeof kb, kb};
        int rc = mdb_del(txn->mdb, dbi, &k, NULL);
        if (rc != 0 && rc != MDB_NOTFOUND)
            return cf_txn_write_error(txn, rc, "cannot delete a cluster's column block");
    }
    return COFFER_OK;
}

coffer_status cf_cluster_store(coffer_txn *txn, MDB_dbi dbi, uint32_t number, uint64_t cid, const uint8_t *plain,
                               size_t len, unsigned flags, uint16_t old_ncols)
{
    cf_cluster c;
    coffer_status st = cf_cluster_parse(plain, len, &c);
    if (st != COFFER_OK)
        return st;
    size_t ovh = cf_store_overhead(txn->db), head = (size_t)(c.blocks - plain);
    /* The head says version 4 whatever the cluster it came from said: its
     * blocks are stored apart from here on (their encoding is version 3's). */
    uint8_t stack[1024], *own = head <= sizeof stack ? stack : malloc(head);
    if (!own)
        return cf_error(COFFER_ERR_NO_MEMORY, "out of memory writing a cluster");
    memcpy(own, plain, head);
    own[0] = CF_CLUSTER_VERSION_APART;
    uint8_t kb[8];
    cf_put_be64(kb, cid);
    MDB_val k = {8, kb}, v = {LENGTH_SIZE + head + ovh, NULL};
    int rc = mdb_put(txn->mdb, dbi, &k, &v, flags | MDB_RESERVE);
    if (rc == 0) {
        uint8_t *out = v.mv_data, pk[CF_CLUSTER_PART_KEY_SIZE];
        cf_put_le(out, head, LENGTH_SIZE);
        part_key(pk, cid, CF_CLUSTER_HEAD_PART);
        cf_store_wrap(txn->db, number, pk, sizeof pk, out + LENGTH_SIZE, own, head);
    }
    if (own != stack)
        free(own);
    if (rc != 0)
        return cf_txn_write_error(txn, rc, "cannot write a cluster");
    for (uint16_t col = 0; st == COFFER_OK && col < c.ncols; col++) {
        const uint8_t *b;
        size_t blen;
        cf_cluster_block_of(&c, col, &b, &blen); /* contiguous: cannot fail */
        st = put_block(txn, dbi, number, cid, col, b, blen);
    }
    if (st == COFFER_OK && old_ncols > c.ncols)
        st = cf_cluster_delete_blocks(txn, dbi, cid, c.ncols, old_ncols);
    return st;
}

coffer_status cf_cluster_store_changed(coffer_txn *txn, MDB_dbi dbi, uint32_t number, uint64_t cid, const uint8_t *stored,
                                       size_t stored_len, const cf_cluster *c, const uint8_t *const *changed)
{
    if (c->apart) { /* only the changed blocks: the head and the others stay as stored */
        size_t start = 0;
        coffer_status st = COFFER_OK;
        for (uint16_t col = 0; st == COFFER_OK && col < c->ncols; col++) {
            size_t end = (size_t)cf_get_le(c->dir + (size_t)col * 4, 4);
            if (changed[col])
                st = put_block(txn, dbi, number, cid, col, changed[col], end - start);
            start = end;
        }
        return st;
    }
    uint8_t *out;
    coffer_status st = cf_txn_scratch(txn, stored_len, &out);
    if (st != COFFER_OK)
        return st;
    memcpy(out, stored, stored_len);
    size_t ovh = cf_store_overhead(txn->db), at = (size_t)(c->blocks - stored), start = 0;
    uint8_t pk[CF_CLUSTER_PART_KEY_SIZE];
    for (uint16_t col = 0; col < c->ncols; col++) {
        size_t end = (size_t)cf_get_le(c->dir + (size_t)col * 4, 4);
        if (changed[col]) {
            part_key(pk, cid, col);
            cf_store_wrap(txn->db, number, pk, sizeof pk, out + at, changed[col], end - start);
        }
        at += end - start + ovh;
        start = end;
    }
    uint8_t kb[8];
    cf_put_be64(kb, cid);
    MDB_val k = {8, kb}, v = {stored_len, out};
    int rc = mdb_put(txn->mdb, dbi, &k, &v, 0);
    return rc ? cf_txn_write_error(txn, rc, "cannot write a cluster") : COFFER_OK;
}

coffer_status cf_cluster_open_part(coffer_txn *txn, uint32_t number, uint64_t cid, uint16_t part, const uint8_t *stored,
                                   size_t len, const uint8_t **data, size_t *dlen, uint8_t **buf, size_t *cap)
{
    uint8_t pk[CF_CLUSTER_PART_KEY_SIZE];
    part_key(pk, cid, part);
    MDB_val k = {sizeof pk, pk}, v = {len, (void *)stored};
    char what[48];
    if (part == CF_CLUSTER_HEAD_PART)
        snprintf(what, sizeof what, "the head of the cluster");
    else
        snprintf(what, sizeof what, "column %u of the cluster", part);
    return cf_store_open(txn, number, &k, &v, data, dlen, buf, cap, what);
}

coffer_status cf_cluster_fetch_block(coffer_txn *txn, MDB_dbi dbi, uint32_t number, uint64_t cid, uint16_t col,
                                     size_t len, const uint8_t **data, size_t *dlen, uint8_t **buf, size_t *cap)
{
    uint8_t kb[CF_BLOCK_KEY_SIZE];
    cf_cluster_block_key(kb, col, cid);
    MDB_val k = {sizeof kb, kb}, v;
    int rc = mdb_get(txn->mdb, dbi, &k, &v);
    if (rc == MDB_NOTFOUND)
        return cf_error(COFFER_ERR_CORRUPTED, "column %u of the cluster is damaged: its block is missing", col);
    if (rc != 0)
        return cf_error_mdb(rc, "cannot read a cluster's column block");
    if (v.mv_size != len)
        return cf_error(COFFER_ERR_CORRUPTED, "column %u of the cluster is damaged: its block has %zu bytes where the head says %zu",
                        col, v.mv_size, len);
    return cf_cluster_open_part(txn, number, cid, col, v.mv_data, v.mv_size, data, dlen, buf, cap);
}

coffer_status cf_cluster_open_head(coffer_txn *txn, uint32_t number, uint64_t cid, const MDB_val *v, uint8_t **buf,
                                   size_t *cap, cf_cluster *out)
{
    *out = (cf_cluster){0};
    const uint8_t *stored = v->mv_data;
    size_t ovh = cf_store_overhead(txn->db);
    size_t head = v->mv_size >= LENGTH_SIZE ? (size_t)cf_get_le(stored, LENGTH_SIZE) : 0;
    if (v->mv_size < LENGTH_SIZE || head > v->mv_size - LENGTH_SIZE || v->mv_size - LENGTH_SIZE - head < ovh)
        return cf_error(COFFER_ERR_CORRUPTED, "cluster of %zu bytes is too short for its head", v->mv_size);
    const uint8_t *data;
    size_t len;
    coffer_status st = cf_cluster_open_part(txn, number, cid, CF_CLUSTER_HEAD_PART, stored + LENGTH_SIZE, head + ovh,
                                            &data, &len, buf, cap);
    if (st != COFFER_OK)
        return st;
    size_t rest = v->mv_size - LENGTH_SIZE - head - ovh;
    size_t ncols = len >= 6 ? (size_t)cf_get_le(data + 4, 2) : 0;
    if (len >= 1 && data[0] > CF_CLUSTER_VERSION)
        return cf_cluster_parse_head(data, len, 0, out); /* names the version */
    if (len >= CF_CLUSTER_HEADER_SIZE && data[0] >= CF_CLUSTER_VERSION_APART) {
        if (rest != 0)
            return cf_error(COFFER_ERR_CORRUPTED, "cluster of version %u has %zu bytes after its head", data[0], rest);
        /* The blocks' size once opened is the last block's end. */
        size_t blocks_len = ncols && len >= ncols * 4 ? (size_t)cf_get_le(data + len - 4, 4) : 0;
        st = cf_cluster_parse_head(data, len, blocks_len, out);
        if (st == COFFER_OK) {
            out->apart = 1;
            out->overhead = ovh;
        }
        return st;
    }
    if (rest < ncols * ovh)
        return cf_error(COFFER_ERR_CORRUPTED, "cluster of %zu bytes is too short for its %zu columns", v->mv_size, ncols);
    st = cf_cluster_parse_head(data, len, rest - ncols * ovh, out);
    if (st == COFFER_OK) {
        out->blocks = stored + LENGTH_SIZE + head + ovh;
        out->overhead = ovh;
    }
    return st;
}

coffer_status cf_cluster_open_whole(coffer_txn *txn, MDB_dbi dbi, uint32_t number, uint64_t cid, const MDB_val *v,
                                    uint8_t **buf, size_t *cap, size_t *len)
{
    uint8_t *part = NULL;
    size_t part_cap = 0;
    cf_cluster c;
    coffer_status st = cf_cluster_open_head(txn, number, cid, v, &part, &part_cap, &c);
    size_t head = st == COFFER_OK ? (size_t)cf_get_le(v->mv_data, LENGTH_SIZE) : 0; /* checked by the opening */
    *len = head + c.blocks_len;
    if (st == COFFER_OK && *len > *cap) {
        uint8_t *p = realloc(*buf, *len);
        if (!p)
            st = cf_error(COFFER_ERR_NO_MEMORY, "out of memory copying a cluster");
        else {
            *buf = p;
            *cap = *len;
        }
    }
    if (st == COFFER_OK)
        memcpy(*buf, c.lows - CF_CLUSTER_HEADER_SIZE, head);
    size_t at = head;
    const uint8_t *stored = c.blocks;
    for (uint16_t col = 0; st == COFFER_OK && col < c.ncols; col++) {
        size_t end = head + (size_t)cf_get_le(c.dir + (size_t)col * 4, 4);
        const uint8_t *data;
        size_t dlen;
        uint8_t *block = NULL;
        size_t block_cap = 0;
        if (c.apart)
            st = cf_cluster_fetch_block(txn, dbi, number, cid, col, end - at + c.overhead, &data, &dlen, &block, &block_cap);
        else
            st = cf_cluster_open_part(txn, number, cid, col, stored, end - at + c.overhead, &data, &dlen, &block,
                                      &block_cap);
        if (st == COFFER_OK)
            memcpy(*buf + at, data, dlen);
        free(block);
        if (!c.apart)
            stored += end - at + c.overhead;
        at = end;
    }
    free(part);
    return st;
}
