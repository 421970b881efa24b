/* fuzz_verify — any bytes, written as a database file and given to
 * coffer_verify(): the page walk must report damage, and the contents check
 * it lets through must read the file, without ever crashing, leaking or
 * reading out of bounds (with AddressSanitizer). The seeds are small
 * database files, plain and encrypted, one with a value on overflow pages;
 * an encrypted one is verified with the key its seed was written with. Only
 * a header whose file id, key check or format number is damaged may give an
 * error (a wrong key, a newer format) instead of a report. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coffer.h"

/* The key of verify_seeds/encrypted.coffer: bytes 0, 1, ..., 63. */
static uint8_t seed_key[64];
static coffer_config *plain, *keyed;
static const char path[] = "fuzz-verify.coffer";

static void die(const char *what)
{
    fprintf(stderr, "fuzz_verify: %s: %s\n", what, coffer_last_error());
    abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    for (int i = 0; i < 64; i++)
        seed_key[i] = (uint8_t)i;
    if (coffer_config_new(&plain) || coffer_config_set_path(plain, path) || coffer_config_new(&keyed) ||
        coffer_config_set_path(keyed, path) || coffer_config_set_encryption_key(keyed, seed_key, sizeof seed_key))
        die("configuration");
    return 0;
}

static void check(coffer_verify_report *r)
{
    for (size_t i = 0; i < coffer_verify_report_count(r); i++) {
        const char *m = coffer_verify_report_message(r, i);
        if (!m || !*m || coffer_verify_report_kind(r, i) == COFFER_VERIFY_NONE)
            die("a finding without a kind or message");
    }
    coffer_verify_report_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        die("cannot write the input file");
    coffer_verify_report *r = NULL;
    coffer_status st = coffer_verify(plain, &r);
    if (st == COFFER_ERR_KEY_REQUIRED)
        st = coffer_verify(keyed, &r);
    if (st == COFFER_OK)
        check(r);
    else if (st != COFFER_ERR_WRONG_KEY && st != COFFER_ERR_FORMAT_VERSION)
        die("coffer_verify failed on a file it should report on"); /* the only header damage it cannot tell */
    unlink(path);
    unlink("fuzz-verify.coffer-lock");
    unlink("fuzz-verify.coffer-note");
    return 0;
}
