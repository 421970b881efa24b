/* file_version — see file_version.h. The meta pages are read and written
 * with the layout of storage/lmdb_layout.h; nothing else of the file is
 * touched. */
#include "storage/file_version.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "storage/lmdb_layout.h"
#include "util/error.h"

#define META_BYTES (LMDB_PAGE_HEADER + LMDB_META_SIZE)

static uint32_t get32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Reads meta page `n` (page size `psize`, 0 while unknown) and checks that it
 * is one. */
static coffer_status read_meta(int fd, const char *path, uint32_t n, uint32_t psize, uint8_t page[META_BYTES])
{
    ssize_t got = pread(fd, page, META_BYTES, (off_t)n * psize);
    if (got < 0)
        return cf_error(COFFER_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
    const uint8_t *meta = page + LMDB_PAGE_HEADER;
    uint16_t flags;
    memcpy(&flags, page + LMDB_OFF_FLAGS, sizeof flags);
    if ((size_t)got != META_BYTES || get64(page + LMDB_OFF_PGNO) != n || !(flags & LMDB_P_META) ||
        get32(meta + LMDB_META_MAGIC_OFF) != LMDB_MAGIC || get32(meta + LMDB_META_VERSION_OFF) != LMDB_DATA_VERSION)
        return cf_error(COFFER_ERR_CORRUPTED, "cannot keep the version of '%s': meta page %u is not an LMDB meta page", path, n);
    return COFFER_OK;
}

static coffer_status write_meta(int fd, const char *path, uint32_t n, uint32_t psize, const uint8_t *meta, uint64_t txnid)
{
    uint8_t bytes[LMDB_META_SIZE];
    memcpy(bytes, meta, sizeof bytes);
    memcpy(bytes + LMDB_META_TXNID_OFF, &txnid, sizeof txnid);
    ssize_t put = pwrite(fd, bytes, sizeof bytes, (off_t)n * psize + LMDB_PAGE_HEADER);
    if (put != (ssize_t)sizeof bytes)
        return cf_error(COFFER_ERR_IO, "cannot write '%s': %s", path, put < 0 ? strerror(errno) : "short write");
    return COFFER_OK;
}

coffer_status cf_file_raise_version(const char *path, uint64_t version)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return cf_error(COFFER_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    uint8_t m0[META_BYTES], m1[META_BYTES];
    coffer_status st = read_meta(fd, path, 0, 0, m0);
    /* The page size is kept in the free DB's pad field of the meta. */
    uint32_t psize = st == COFFER_OK ? get32(m0 + LMDB_PAGE_HEADER + LMDB_META_FREE_DB_OFF + LMDB_DB_PAD) : 0;
    if (st == COFFER_OK && (psize < 512 || psize > 65536 || (psize & (psize - 1)) != 0))
        st = cf_error(COFFER_ERR_CORRUPTED, "cannot keep the version of '%s': page size %u in its meta page", path, psize);
    if (st == COFFER_OK)
        st = read_meta(fd, path, 1, psize, m1);
    if (st == COFFER_OK) {
        uint64_t t0 = get64(m0 + LMDB_PAGE_HEADER + LMDB_META_TXNID_OFF);
        uint64_t t1 = get64(m1 + LMDB_PAGE_HEADER + LMDB_META_TXNID_OFF);
        const uint8_t *current = (t1 > t0 ? m1 : m0) + LMDB_PAGE_HEADER;
        if ((t0 > t1 ? t0 : t1) < version) {
            /* LMDB writes the meta of transaction t to page t & 1 and reads
             * the newer of the two: the newest goes where its id says. */
            st = write_meta(fd, path, (uint32_t)(version & 1), psize, current, version);
            if (st == COFFER_OK)
                st = write_meta(fd, path, (uint32_t)((version - 1) & 1), psize, current, version - 1);
            if (st == COFFER_OK && fsync(fd) != 0)
                st = cf_error(COFFER_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        }
    }
    close(fd);
    return st;
}
