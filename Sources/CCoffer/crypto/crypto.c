/* crypto — libsodium: keyed BLAKE2b for subkeys and index hashes,
 * XChaCha20-Poly1305 for sealing. */
#include "crypto/crypto.h"

#include <pthread.h>
#include <sodium.h>
#include <stdatomic.h>
#include <string.h>

#include "util/error.h"

static pthread_once_t sodium_once = PTHREAD_ONCE_INIT;
static int sodium_status = -1;

static void init_sodium(void) { sodium_status = sodium_init() < 0 ? -1 : 0; }

coffer_status cf_crypto_init(void)
{
    pthread_once(&sodium_once, init_sodium);
    if (sodium_status != 0)
        return cf_error(COFFER_ERR_INTERNAL, "libsodium could not be initialised");
    return COFFER_OK;
}

/* A subkey is BLAKE2b-256 keyed with the whole 64-byte key over a label, so
 * the three subkeys are independent of each other. */
static void derive(unsigned char out[32], const uint8_t *key, const char *label)
{
    crypto_generichash(out, 32, (const unsigned char *)label, strlen(label), key, 64);
}

coffer_status cf_keys_derive(const uint8_t *key, size_t size, cf_keys **out)
{
    coffer_status st = cf_crypto_init();
    if (st != COFFER_OK)
        return st;
    if (size != COFFER_ENCRYPTION_KEY_SIZE)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "encryption key must be 64 bytes, got %zu", size);
    cf_keys *k = sodium_malloc(sizeof *k);
    if (!k)
        return cf_error(COFFER_ERR_NO_MEMORY, "cannot allocate locked memory for the encryption key");
    derive(k->seal, key, "coffer.v1.seal");
    derive(k->index, key, "coffer.v1.index");
    derive(k->check, key, "coffer.v1.check");
    crypto_generichash_init(&k->index_state, k->index, sizeof k->index, CF_INDEX_HASH_SIZE);
    *out = k;
    return COFFER_OK;
}

void cf_keys_free(cf_keys *keys)
{
    if (keys)
        sodium_free(keys); /* sodium_free wipes before freeing */
}

/* Nonces: a random 16-byte prefix drawn once per process (and again in the
 * child of every fork(), by an atfork handler) followed by a 64-bit counter,
 * little-endian. Every nonce this process makes is distinct (the counter
 * never wraps in practice); nonces of two processes, or of a parent and its
 * child, differ in their prefixes except with probability about 2^-128 per
 * pair. docs/ENCRYPTION.md gives the argument. One atomic increment per seal
 * instead of a getrandom() system call. */
_Static_assert(CF_NONCE_SIZE == crypto_aead_xchacha20poly1305_ietf_NPUBBYTES, "XChaCha20 nonce size");
_Static_assert(CF_NONCE_PREFIX_SIZE + 8 == CF_NONCE_SIZE, "prefix and counter fill the nonce");

static uint8_t nonce_prefix[CF_NONCE_PREFIX_SIZE];
static _Atomic uint64_t nonce_counter;
static pthread_once_t nonce_once = PTHREAD_ONCE_INIT;

/* Runs in the child of a fork(), which has one thread: nothing else reads
 * the prefix while it changes. */
static void nonce_redraw(void)
{
    randombytes_buf(nonce_prefix, sizeof nonce_prefix);
    atomic_store_explicit(&nonce_counter, 0, memory_order_relaxed);
}

static void nonce_init(void)
{
    nonce_redraw();
    pthread_atfork(NULL, NULL, nonce_redraw);
}

void cf_nonce_next(uint8_t out[CF_NONCE_SIZE])
{
    pthread_once(&nonce_once, nonce_init);
    uint64_t c = atomic_fetch_add_explicit(&nonce_counter, 1, memory_order_relaxed);
    memcpy(out, nonce_prefix, CF_NONCE_PREFIX_SIZE);
    for (int i = 0; i < 8; i++)
        out[CF_NONCE_PREFIX_SIZE + i] = (uint8_t)(c >> (8 * i));
}

void cf_seal(const cf_keys *keys, uint8_t *out, const uint8_t *plain, size_t n,
             const uint8_t *ad, size_t adlen)
{
    uint8_t *nonce = out;
    cf_nonce_next(nonce);
    unsigned long long clen = 0;
    crypto_aead_xchacha20poly1305_ietf_encrypt(out + crypto_aead_xchacha20poly1305_ietf_NPUBBYTES, &clen,
                                               plain, n, ad, adlen, NULL, nonce, keys->seal);
}

coffer_status cf_unseal(const cf_keys *keys, uint8_t *out, const uint8_t *sealed, size_t n,
                        const uint8_t *ad, size_t adlen, const char *what)
{
    if (n < CF_SEAL_OVERHEAD)
        return cf_error(COFFER_ERR_INTEGRITY, "%s: sealed value of %zu bytes is too short", what, n);
    unsigned long long mlen = 0;
    const size_t npub = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
    if (crypto_aead_xchacha20poly1305_ietf_decrypt(out, &mlen, NULL, sealed + npub, n - npub,
                                                   ad, adlen, sealed, keys->seal) != 0)
        return cf_error(COFFER_ERR_INTEGRITY,
                        "%s failed authentication: it was modified or moved inside the file", what);
    return COFFER_OK;
}

void cf_index_hash(const cf_keys *keys, uint8_t out[CF_INDEX_HASH_SIZE], const void *head, size_t headlen,
                   const void *body, size_t bodylen)
{
    crypto_generichash_state st;
    if (keys)
        st = keys->index_state;
    else
        crypto_generichash_init(&st, NULL, 0, CF_INDEX_HASH_SIZE);
    crypto_generichash_update(&st, head, headlen);
    if (bodylen)
        crypto_generichash_update(&st, body, bodylen);
    crypto_generichash_final(&st, out, CF_INDEX_HASH_SIZE);
}

void cf_key_check(const cf_keys *keys, const uint8_t file_id[CF_FILE_ID_SIZE], uint8_t out[CF_KEY_CHECK_SIZE])
{
    crypto_generichash(out, CF_KEY_CHECK_SIZE, file_id, CF_FILE_ID_SIZE, keys->check, sizeof keys->check);
}

int cf_equal_ct(const void *a, const void *b, size_t n) { return sodium_memcmp(a, b, n) == 0; }

void cf_random(void *buf, size_t n)
{
    cf_crypto_init();
    randombytes_buf(buf, n);
}

uint8_t *cf_secret_copy(const void *src, size_t n)
{
    if (cf_crypto_init() != COFFER_OK)
        return NULL;
    uint8_t *p = sodium_malloc(n ? n : 1);
    if (p && n)
        memcpy(p, src, n);
    return p;
}

void cf_secret_free(uint8_t *p)
{
    if (p)
        sodium_free(p);
}
