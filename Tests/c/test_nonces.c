/* test_nonces.c — the nonces sealing draws (crypto/crypto.h): a million
 * seals never repeat one, threads sealing at once never share one, a
 * fork()ed child and its parent seal with nonces that differ (the child gets
 * a prefix of its own), and a value sealed this way still opens with its key
 * and its place only: another key or another place is COFFER_ERR_INTEGRITY. */
#define _GNU_SOURCE
#include "test_support.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto/crypto.h"

enum { MILLION = 1000000, THREADS = 4, PER_THREAD = 100000, FORK_SEALS = 1000 };

static cf_keys *keys_from(uint8_t fill)
{
    uint8_t key[COFFER_ENCRYPTION_KEY_SIZE];
    memset(key, fill, sizeof key);
    cf_keys *keys = NULL;
    assert_ok(cf_keys_derive(key, sizeof key, &keys));
    return keys;
}

static int cmp_nonce(const void *a, const void *b) { return memcmp(a, b, CF_NONCE_SIZE); }

/* Sorts n nonces and fails on the first pair of equal ones. */
static void assert_all_distinct(uint8_t *nonces, size_t n)
{
    qsort(nonces, n, CF_NONCE_SIZE, cmp_nonce);
    for (size_t i = 1; i < n; i++)
        if (memcmp(nonces + (i - 1) * CF_NONCE_SIZE, nonces + i * CF_NONCE_SIZE, CF_NONCE_SIZE) == 0) {
            print_error("nonce %zu of %zu repeats\n", i, n);
            fail();
        }
}

/* Seals `count` copies of a small value with the real sealing call and
 * keeps the nonce each one was given. */
static void seal_many(const cf_keys *keys, uint8_t *nonces, size_t count)
{
    const uint8_t plain[16] = "a small record.";
    const uint8_t ad[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    uint8_t sealed[sizeof plain + CF_SEAL_OVERHEAD];
    for (size_t i = 0; i < count; i++) {
        cf_seal(keys, sealed, plain, sizeof plain, ad, sizeof ad);
        memcpy(nonces + i * CF_NONCE_SIZE, sealed, CF_NONCE_SIZE);
    }
}

static void test_million_seals_never_repeat_a_nonce(void **state)
{
    (void)state;
    cf_keys *keys = keys_from(7);
    uint8_t *nonces = malloc((size_t)MILLION * CF_NONCE_SIZE);
    assert_non_null(nonces);
    seal_many(keys, nonces, MILLION);
    assert_all_distinct(nonces, MILLION);
    free(nonces);
    cf_keys_free(keys);
}

static void *draw_nonces(void *arg)
{
    uint8_t *out = arg;
    for (size_t i = 0; i < PER_THREAD; i++)
        cf_nonce_next(out + i * CF_NONCE_SIZE);
    return NULL;
}

static void test_threads_never_share_a_nonce(void **state)
{
    (void)state;
    uint8_t *nonces = malloc((size_t)THREADS * PER_THREAD * CF_NONCE_SIZE);
    assert_non_null(nonces);
    pthread_t threads[THREADS];
    for (size_t t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&threads[t], NULL, draw_nonces, nonces + t * PER_THREAD * CF_NONCE_SIZE), 0);
    for (size_t t = 0; t < THREADS; t++)
        assert_int_equal(pthread_join(threads[t], NULL), 0);
    assert_all_distinct(nonces, (size_t)THREADS * PER_THREAD);
    free(nonces);
}

struct fork_seals {
    const cf_keys *keys;
    int fd;
};

/* In the child: seals FORK_SEALS values and writes their nonces to the pipe. */
static int child_seals(void *arg)
{
    struct fork_seals *f = arg;
    uint8_t nonces[FORK_SEALS * CF_NONCE_SIZE];
    seal_many(f->keys, nonces, FORK_SEALS);
    size_t done = 0;
    while (done < sizeof nonces) {
        ssize_t w = write(f->fd, nonces + done, sizeof nonces - done);
        if (w <= 0)
            return 1;
        done += (size_t)w;
    }
    return 0;
}

/* Without a prefix of its own the child would continue from the parent's
 * counter with the parent's prefix, and its first nonce would be the
 * parent's next one. */
static void test_fork_child_and_parent_seal_with_different_nonces(void **state)
{
    (void)state;
    cf_keys *keys = keys_from(9);
    uint8_t before[CF_NONCE_SIZE];
    seal_many(keys, before, 1); /* the parent's generator is in use before the fork */

    int fds[2];
    assert_int_equal(pipe(fds), 0);
    struct fork_seals f = {keys, fds[1]};
    assert_int_equal(ts_run_in_child(child_seals, &f, "child sealing values"), 0);
    close(fds[1]);

    uint8_t *all = malloc(2 * FORK_SEALS * CF_NONCE_SIZE + CF_NONCE_SIZE);
    assert_non_null(all);
    size_t got = 0;
    while (got < FORK_SEALS * CF_NONCE_SIZE) {
        ssize_t r = read(fds[0], all + got, FORK_SEALS * CF_NONCE_SIZE - got);
        assert_true(r > 0);
        got += (size_t)r;
    }
    close(fds[0]);
    assert_memory_not_equal(all, before, CF_NONCE_PREFIX_SIZE); /* the child drew its own prefix */

    seal_many(keys, all + FORK_SEALS * CF_NONCE_SIZE, FORK_SEALS);
    memcpy(all + 2 * FORK_SEALS * CF_NONCE_SIZE, before, CF_NONCE_SIZE);
    assert_all_distinct(all, 2 * FORK_SEALS + 1);
    free(all);
    cf_keys_free(keys);
}

static void test_sealed_value_opens_with_its_key_and_place_only(void **state)
{
    (void)state;
    cf_keys *keys = keys_from(1), *other = keys_from(2);
    const uint8_t plain[] = "the value";
    const uint8_t place[] = "table 3, key 17", elsewhere[] = "table 3, key 18";
    uint8_t sealed[sizeof plain + CF_SEAL_OVERHEAD], opened[sizeof plain];
    for (int round = 0; round < 3; round++) {
        cf_seal(keys, sealed, plain, sizeof plain, place, sizeof place);
        assert_ok(cf_unseal(keys, opened, sealed, sizeof sealed, place, sizeof place, "the value"));
        assert_memory_equal(opened, plain, sizeof plain);
        assert_int_equal(cf_unseal(other, opened, sealed, sizeof sealed, place, sizeof place, "the value"),
                         COFFER_ERR_INTEGRITY);
        assert_non_null(strstr(coffer_last_error(), "the value failed authentication"));
        assert_int_equal(cf_unseal(keys, opened, sealed, sizeof sealed, elsewhere, sizeof elsewhere, "the value"),
                         COFFER_ERR_INTEGRITY);
        sealed[0] ^= 1; /* a changed nonce */
        assert_int_equal(cf_unseal(keys, opened, sealed, sizeof sealed, place, sizeof place, "the value"),
                         COFFER_ERR_INTEGRITY);
    }
    cf_keys_free(keys);
    cf_keys_free(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_million_seals_never_repeat_a_nonce),
        cmocka_unit_test(test_threads_never_share_a_nonce),
        cmocka_unit_test(test_fork_child_and_parent_seal_with_different_nonces),
        cmocka_unit_test(test_sealed_value_opens_with_its_key_and_place_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
