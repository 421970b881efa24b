/* checksum — XXH64 (xxHash, 64-bit), the checksum of values stored in plain
 * files (docs/FORMAT.md, "Checksums"): fast enough to check on every read
 * (several bytes per cycle), and any change to the checked bytes changes it
 * with a probability of 1 - 2^-32 once cut to the 32 bits stored. */
#ifndef COFFER_CHECKSUM_H
#define COFFER_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* XXH64 of `len` bytes at `data` (NULL allowed when len is 0) with `seed`;
 * the same value as the reference implementation's XXH64(). */
uint64_t cf_xxh64(const void *data, size_t len, uint64_t seed);

#endif
