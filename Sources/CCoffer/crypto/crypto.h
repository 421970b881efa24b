/* crypto — subkeys derived from the 64-byte key, sealing of stored values,
 * keyed hashes for index keys, and the key check stored in the file header. */
#ifndef COFFER_CRYPTO_H
#define COFFER_CRYPTO_H

#include <sodium.h>
#include <stddef.h>
#include <stdint.h>

#include "coffer.h"

/* Nonce (24) + tag (16) added to every sealed value. */
#define CF_SEAL_OVERHEAD 40
#define CF_INDEX_HASH_SIZE 16
#define CF_KEY_CHECK_SIZE 32
#define CF_FILE_ID_SIZE 16

/* Independent subkeys, kept in sodium_malloc'ed (locked, guarded) memory. */
typedef struct cf_keys {
    /* BLAKE2b keyed with `index`, before any input: every index hash
     * starts from a copy instead of compressing the key block again. */
    crypto_generichash_state index_state;
    unsigned char seal[32];
    unsigned char index[32];
    unsigned char check[32];
} cf_keys;

/* Initialises libsodium once; COFFER_ERR_INTERNAL if it cannot. */
coffer_status cf_crypto_init(void);

/* Derives the subkeys of a 64-byte key into *out (freed by cf_keys_free). */
coffer_status cf_keys_derive(const uint8_t *key, size_t size, cf_keys **out);
void cf_keys_free(cf_keys *keys);

/* Size of a nonce (XChaCha20-Poly1305's 24 bytes) and of its random prefix. */
#define CF_NONCE_SIZE 24
#define CF_NONCE_PREFIX_SIZE 16

/* Writes the next nonce of this process: its random 16-byte prefix (drawn
 * on first use and again in the child of every fork()) then a 64-bit
 * counter, little-endian. Never repeats within a process; thread-safe. */
void cf_nonce_next(uint8_t out[CF_NONCE_SIZE]);

/* Seals `n` bytes into out[0 .. n + CF_SEAL_OVERHEAD), bound to `ad`. */
void cf_seal(const cf_keys *keys, uint8_t *out, const uint8_t *plain, size_t n,
             const uint8_t *ad, size_t adlen);

/* Opens a sealed value into out[0 .. n - CF_SEAL_OVERHEAD). COFFER_ERR_INTEGRITY
 * (with a message naming `what`) if it was modified or bound elsewhere. */
coffer_status cf_unseal(const cf_keys *keys, uint8_t *out, const uint8_t *sealed, size_t n,
                        const uint8_t *ad, size_t adlen, const char *what);

/* 16-byte hash of head || body, keyed with the index subkey when `keys` is
 * given (encrypted index keys: equality survives, the value does not) and
 * unkeyed otherwise (the tail of long plain index keys). */
void cf_index_hash(const cf_keys *keys, uint8_t out[CF_INDEX_HASH_SIZE], const void *head, size_t headlen,
                   const void *body, size_t bodylen);

/* The key check stored in the header: a keyed hash of the file id. */
void cf_key_check(const cf_keys *keys, const uint8_t file_id[CF_FILE_ID_SIZE], uint8_t out[CF_KEY_CHECK_SIZE]);

/* Constant-time comparison; 1 if equal. */
int cf_equal_ct(const void *a, const void *b, size_t n);

void cf_random(void *buf, size_t n);

/* A copy of `n` secret bytes in locked, guarded memory; freed (and wiped)
 * by cf_secret_free. NULL if out of memory. */
uint8_t *cf_secret_copy(const void *src, size_t n);
void cf_secret_free(uint8_t *p);

#endif
