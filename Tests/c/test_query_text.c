/*
 * test_query_text.c — string and binary matching of the query language
 * (Sources/CCoffer/query/text.h): every operator with and without [c], [d]
 * and [cd]; full case folding (ß, Greek sigma, Turkish dotted and dotless
 * i, ligatures), diacritics, composed against decomposed spellings; LIKE's
 * wildcards on multi-byte characters and its worst case; invalid UTF-8 and
 * NUL bytes; empty sides; one pattern reused over many texts; the `.length`
 * of a string; errors; and the compiled and one-shot forms compared on a
 * seeded random set of inputs, LIKE against an independent reference.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coffer.h"
#include "test_support.h"
/* Internal header under test; a relative path, since the tests' include
 * path has only include/ and Tests/c/. */
#include "../../Sources/CCoffer/query/text.h"

#define C CF_QM_CASE_INSENSITIVE
#define D CF_QM_DIACRITIC_INSENSITIVE
#define CD (CF_QM_CASE_INSENSITIVE | CF_QM_DIACRITIC_INSENSITIVE)

static const unsigned all_modifiers[] = {0, C, D, CD};
static const cf_qcompare_op all_ops[] = {CF_QC_EQ, CF_QC_NE, CF_QC_BEGINSWITH, CF_QC_ENDSWITH,
                                         CF_QC_CONTAINS, CF_QC_LIKE};

static const char *op_name(cf_qcompare_op op)
{
    switch (op) {
    case CF_QC_EQ: return "==";
    case CF_QC_NE: return "!=";
    case CF_QC_BEGINSWITH: return "BEGINSWITH";
    case CF_QC_ENDSWITH: return "ENDSWITH";
    case CF_QC_CONTAINS: return "CONTAINS";
    case CF_QC_LIKE: return "LIKE";
    default: return "?";
    }
}

static const char *mod_name(unsigned m)
{
    static const char *names[] = {"", "[c]", "[d]", "[cd]"};
    return names[m & 3];
}

/* Matches with a compiled pattern (used twice, to catch stale scratch
 * state) and one-shot; all three must agree. Returns the result. */
static int match_n(cf_qcompare_op op, unsigned mods, const void *text, size_t tlen, const void *needle,
                   size_t nlen)
{
    cf_text_pattern *p = NULL;
    assert_int_equal(cf_text_pattern_new(op, mods, needle, nlen, &p), COFFER_OK);
    int first = cf_text_pattern_match(p, text, tlen);
    int again = cf_text_pattern_match(p, text, tlen);
    cf_text_pattern_free(p);
    int once = cf_text_match(op, mods, text, tlen, needle, nlen);
    if (first != again || first != once)
        fail_msg("%s%s: pattern gave %d then %d, one-shot %d", op_name(op), mod_name(mods), first, again, once);
    assert_true(first == 0 || first == 1);
    return first;
}

static int match(cf_qcompare_op op, unsigned mods, const char *text, const char *needle)
{
    return match_n(op, mods, text, strlen(text), needle, strlen(needle));
}

/* Asserts `text op[mods] needle` is `want`, and that != says the opposite of ==. */
static void expect_at(int want, cf_qcompare_op op, unsigned mods, const char *text, const char *needle,
                      int line)
{
    int got = match(op, mods, text, needle);
    if (got != want)
        fail_msg("line %d: \"%s\" %s%s \"%s\" gave %d, expected %d", line, text, op_name(op), mod_name(mods),
                 needle, got, want);
    if (op == CF_QC_EQ && match(CF_QC_NE, mods, text, needle) != !want)
        fail_msg("line %d: != is not the negation of == for \"%s\" and \"%s\"", line, text, needle);
}
#define expect(want, op, mods, text, needle) expect_at(want, op, mods, text, needle, __LINE__)

/* Same with lengths, for NUL and invalid bytes. */
static void expect_bytes_at(int want, cf_qcompare_op op, unsigned mods, const char *text, size_t tlen,
                            const char *needle, size_t nlen, int line)
{
    int got = match_n(op, mods, text, tlen, needle, nlen);
    if (got != want)
        fail_msg("line %d: %s%s on %zu and %zu bytes gave %d, expected %d", line, op_name(op), mod_name(mods),
                 tlen, nlen, got, want);
}
#define expect_bytes(want, op, mods, text, needle) \
    expect_bytes_at(want, op, mods, text, sizeof(text) - 1, needle, sizeof(needle) - 1, __LINE__)

/* ------------------------------------------------------------------------ */
/* Byte-exact matching                                                       */
/* ------------------------------------------------------------------------ */

static void test_plain_operators(void **state)
{
    (void)state;
    expect(1, CF_QC_EQ, 0, "abc", "abc");
    expect(0, CF_QC_EQ, 0, "abc", "ABC");
    expect(0, CF_QC_EQ, 0, "abc", "ab");
    expect(0, CF_QC_EQ, 0, "ab", "abc");
    expect(1, CF_QC_BEGINSWITH, 0, "abc", "ab");
    expect(1, CF_QC_BEGINSWITH, 0, "abc", "abc");
    expect(0, CF_QC_BEGINSWITH, 0, "abc", "abcd");
    expect(0, CF_QC_BEGINSWITH, 0, "abc", "Ab");
    expect(0, CF_QC_BEGINSWITH, 0, "abc", "bc");
    expect(1, CF_QC_ENDSWITH, 0, "abc", "bc");
    expect(0, CF_QC_ENDSWITH, 0, "abc", "ab");
    expect(0, CF_QC_ENDSWITH, 0, "bc", "abc");
    expect(0, CF_QC_ENDSWITH, 0, "abc", "BC");
    expect(1, CF_QC_CONTAINS, 0, "abcabd", "abd");
    expect(1, CF_QC_CONTAINS, 0, "abc", "b");
    expect(0, CF_QC_CONTAINS, 0, "abc", "B");
    expect(0, CF_QC_CONTAINS, 0, "ab", "abc");
    expect(0, CF_QC_CONTAINS, 0, "abcab", "abab");
    expect(1, CF_QC_LIKE, 0, "abc", "a?c");
    expect(0, CF_QC_LIKE, 0, "abc", "A?c");
    /* Without modifiers composed and decomposed spellings differ. */
    expect(0, CF_QC_EQ, 0, "\xc3\xa9", "e\xcc\x81");
    expect(1, CF_QC_EQ, 0, "Ünïcödé", "Ünïcödé");
    expect(0, CF_QC_EQ, 0, "Ünïcödé", "Unicode");
    expect(0, CF_QC_EQ, 0, "Straße", "STRASSE");
}

/* The conformance suite's string and binary queries, counted as the engine
 * will count them: one match per object. */
static int count(cf_qcompare_op op, unsigned mods, const char *const *texts, const size_t *lens, size_t n,
                 const char *needle, size_t nlen)
{
    cf_text_pattern *p = NULL;
    assert_int_equal(cf_text_pattern_new(op, mods, needle, nlen, &p), COFFER_OK);
    int total = 0;
    for (size_t i = 0; i < n; i++) {
        int r = cf_text_pattern_match(p, texts[i], lens[i]);
        assert_int_equal(r, cf_text_match(op, mods, texts[i], lens[i], needle, nlen));
        total += r;
    }
    cf_text_pattern_free(p);
    return total;
}

static void test_conformance_counts(void **state)
{
    (void)state;
    static const char *const strings[] = {"A", "a", "a", "C", "c", "abc", "ABC", "", "\"\n\0\r\\'"};
    static const size_t string_lens[] = {1, 1, 1, 1, 1, 3, 3, 0, 6};
    const size_t ns = 9;
#define COUNT(op, mods, needle) count(op, mods, strings, string_lens, ns, needle, strlen(needle))
    assert_int_equal(COUNT(CF_QC_EQ, 0, "a"), 2);
    assert_int_equal(COUNT(CF_QC_EQ, 0, "c"), 1);
    assert_int_equal(COUNT(CF_QC_EQ, 0, "abc"), 1);
    assert_int_equal(COUNT(CF_QC_EQ, 0, ""), 1);
    assert_int_equal(COUNT(CF_QC_NE, 0, ""), 8);
    assert_int_equal(count(CF_QC_EQ, 0, strings, string_lens, ns, "\"\n\0\r\\'", 6), 1);
    assert_int_equal(count(CF_QC_EQ, 0, strings, string_lens, ns, "\"\n", 2), 0);
    assert_int_equal(COUNT(CF_QC_BEGINSWITH, 0, "a"), 3);
    assert_int_equal(COUNT(CF_QC_BEGINSWITH, 0, "ab"), 1);
    assert_int_equal(COUNT(CF_QC_BEGINSWITH, 0, "abcd"), 0);
    assert_int_equal(COUNT(CF_QC_BEGINSWITH, 0, "A"), 2);
    assert_int_equal(COUNT(CF_QC_ENDSWITH, 0, "c"), 2);
    assert_int_equal(COUNT(CF_QC_ENDSWITH, 0, "bc"), 1);
    assert_int_equal(COUNT(CF_QC_CONTAINS, 0, "b"), 1);
    assert_int_equal(COUNT(CF_QC_CONTAINS, 0, "c"), 2);
    assert_int_equal(COUNT(CF_QC_EQ, C, "a"), 3);
    assert_int_equal(COUNT(CF_QC_BEGINSWITH, C, "A"), 5);
    assert_int_equal(COUNT(CF_QC_ENDSWITH, C, "c"), 4);
    assert_int_equal(COUNT(CF_QC_CONTAINS, C, "B"), 2);
    /* The empty needle: 9 of 9 under every modifier, == only "". */
    for (size_t m = 0; m < 4; m++) {
        unsigned mods = all_modifiers[m];
        assert_int_equal(COUNT(CF_QC_BEGINSWITH, mods, ""), 9);
        assert_int_equal(COUNT(CF_QC_ENDSWITH, mods, ""), 9);
        assert_int_equal(COUNT(CF_QC_CONTAINS, mods, ""), 9);
        assert_int_equal(COUNT(CF_QC_EQ, mods, ""), 1);
        assert_int_equal(COUNT(CF_QC_LIKE, mods, ""), 1);
        assert_int_equal(COUNT(CF_QC_LIKE, mods, "*"), 9);
    }
#undef COUNT

    static const char *const blobs[] = {"\x01\x64\xe9\xff\x00", "\x01\x64", "\x64", "\x02", "\xff\x00"};
    static const size_t blob_lens[] = {5, 2, 1, 1, 2};
    for (size_t m = 0; m < 4; m++) {
        unsigned mods = all_modifiers[m]; /* bytes that are not letters fold to themselves */
        assert_int_equal(count(CF_QC_EQ, mods, blobs, blob_lens, 5, blobs[1], 2), 1);
        assert_int_equal(count(CF_QC_EQ, mods, blobs, blob_lens, 5, blobs[2], 1), 1);
        assert_int_equal(count(CF_QC_NE, mods, blobs, blob_lens, 5, blobs[0], 5), 4);
        assert_int_equal(count(CF_QC_BEGINSWITH, mods, blobs, blob_lens, 5, blobs[0], 5), 1);
        assert_int_equal(count(CF_QC_BEGINSWITH, mods, blobs, blob_lens, 5, blobs[1], 2), 2);
        assert_int_equal(count(CF_QC_ENDSWITH, mods, blobs, blob_lens, 5, blobs[4], 2), 2);
        assert_int_equal(count(CF_QC_CONTAINS, mods, blobs, blob_lens, 5, blobs[2], 1), 3);
    }
}

/* ------------------------------------------------------------------------ */
/* Every operator under every modifier                                       */
/* ------------------------------------------------------------------------ */

/* One text against needles that differ only in case, only in accents, or
 * in both; the table says which modifiers make each operator match. */
static void test_every_operator_and_modifier(void **state)
{
    (void)state;
    static const struct {
        cf_qcompare_op op;
        const char *needle;
        int plain, c, d, cd;
    } cases[] = {
        {CF_QC_EQ, "Crème Brûlée", 1, 1, 1, 1},
        {CF_QC_EQ, "crème brûlée", 0, 1, 0, 1},
        {CF_QC_EQ, "Creme Brulee", 0, 0, 1, 1},
        {CF_QC_EQ, "CREME BRULEE", 0, 0, 0, 1},
        {CF_QC_EQ, "Creme", 0, 0, 0, 0},
        {CF_QC_BEGINSWITH, "Crème", 1, 1, 1, 1},
        {CF_QC_BEGINSWITH, "CRÈME", 0, 1, 0, 1},
        {CF_QC_BEGINSWITH, "Creme", 0, 0, 1, 1},
        {CF_QC_BEGINSWITH, "crem", 0, 0, 0, 1},
        {CF_QC_BEGINSWITH, "Brûlée", 0, 0, 0, 0},
        {CF_QC_ENDSWITH, "Brûlée", 1, 1, 1, 1},
        {CF_QC_ENDSWITH, "BRÛLÉE", 0, 1, 0, 1},
        {CF_QC_ENDSWITH, "Brulee", 0, 0, 1, 1},
        {CF_QC_ENDSWITH, "ulee", 0, 0, 1, 1},
        {CF_QC_ENDSWITH, "ULEE", 0, 0, 0, 1},
        {CF_QC_ENDSWITH, "Crème", 0, 0, 0, 0},
        {CF_QC_CONTAINS, "me Br", 1, 1, 1, 1},
        {CF_QC_CONTAINS, "ME BR", 0, 1, 0, 1},
        {CF_QC_CONTAINS, "rul", 0, 0, 1, 1},
        {CF_QC_CONTAINS, "RUL", 0, 0, 0, 1},
        {CF_QC_CONTAINS, "rûle", 0, 0, 1, 1}, /* the text has "rûlé" */
        {CF_QC_CONTAINS, "xyz", 0, 0, 0, 0},
        {CF_QC_LIKE, "Cr?me*", 1, 1, 1, 1},
        {CF_QC_LIKE, "cr?me*", 0, 1, 0, 1},
        {CF_QC_LIKE, "*Brul?e", 0, 0, 1, 1},
        {CF_QC_LIKE, "*BRUL?E", 0, 0, 0, 1},
        {CF_QC_LIKE, "Cr*e", 1, 1, 1, 1},
        {CF_QC_LIKE, "C*e*e", 1, 1, 1, 1},
        {CF_QC_LIKE, "C*e*e*e*e", 0, 0, 1, 1}, /* è and é count as e under [d] only */
        {CF_QC_LIKE, "C*e*e*e*e*e", 0, 0, 0, 0},
        {CF_QC_LIKE, "Cr?me", 0, 0, 0, 0},
        {CF_QC_LIKE, "*me Br*", 1, 1, 1, 1},
    };
    const char *text = "Crème Brûlée";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int want[4] = {cases[i].plain, cases[i].c, cases[i].d, cases[i].cd};
        for (size_t m = 0; m < 4; m++)
            expect_at(want[m], cases[i].op, all_modifiers[m], text, cases[i].needle, (int)i);
    }
    /* The same under a decomposed spelling of the text: with modifiers the
     * spelling does not matter, without it the bytes differ. */
    const char *decomposed = "Cre\xcc\x80me Bru\xcc\x82le\xcc\x81" "e";
    expect(0, CF_QC_EQ, 0, decomposed, text);
    for (size_t m = 1; m < 4; m++) {
        expect(1, CF_QC_EQ, all_modifiers[m], decomposed, text);
        expect(1, CF_QC_LIKE, all_modifiers[m], decomposed, "Cr?me Br?l?e");
    }
    expect(0, CF_QC_LIKE, 0, decomposed, "Cr?me*");
    expect(1, CF_QC_LIKE, 0, decomposed, "Cr??me*");
}

/* ------------------------------------------------------------------------ */
/* Case folding                                                              */
/* ------------------------------------------------------------------------ */

static void test_full_case_folding(void **state)
{
    (void)state;
    /* ß folds to "ss", so it equals "SS" and "ss" under [c], and so does ẞ. */
    expect(1, CF_QC_EQ, C, "Straße", "STRASSE");
    expect(1, CF_QC_EQ, C, "Straße", "strasse");
    expect(1, CF_QC_EQ, C, "STRA\xe1\xba\x9e" "E", "straße");
    expect(1, CF_QC_CONTAINS, C, "Fußball", "SSB");
    expect(1, CF_QC_BEGINSWITH, C, "ßa", "s");
    expect(1, CF_QC_LIKE, C, "ß", "??");
    expect(0, CF_QC_LIKE, C, "ß", "?");
    expect(0, CF_QC_EQ, D, "Straße", "STRASSE");
    /* Greek: Σ, σ and final ς fold to σ; accents stay until [d]. */
    expect(1, CF_QC_EQ, C, "ΣΊΣΥΦΟΣ", "σίσυφος");
    expect(1, CF_QC_EQ, C, "σίσυφος", "σίσυφοσ");
    expect(0, CF_QC_EQ, C, "ΣΊΣΥΦΟΣ", "σισυφος");
    expect(1, CF_QC_EQ, CD, "ΣΊΣΥΦΟΣ", "σισυφος");
    expect(1, CF_QC_ENDSWITH, C, "ΟΔΥΣΣΕΎΣ", "ς");
    expect(1, CF_QC_ENDSWITH, C, "ΟΔΥΣΣΕΎΣ", "ύς");
    /* Turkish: İ folds to "i" + U+0307 (combining dot above), which only [d]
     * reduces to "i"; dotless ı folds to itself and never equals I or i. */
    expect(0, CF_QC_EQ, C, "İ", "i");
    expect(1, CF_QC_EQ, C, "İ", "i\xcc\x87");
    expect(1, CF_QC_EQ, CD, "İSTANBUL", "istanbul");
    expect(1, CF_QC_EQ, C, "ı", "ı");
    expect(0, CF_QC_EQ, C, "ı", "I");
    expect(0, CF_QC_EQ, C, "ı", "i");
    expect(0, CF_QC_EQ, CD, "ı", "i");
    expect(1, CF_QC_EQ, C, "DİYARBAKIR", "di\xcc\x87yarbakir");
    /* Ligatures and other multi-character folds; the Kelvin sign is K. */
    expect(1, CF_QC_EQ, C, "\xef\xac\x83", "FFI"); /* ﬃ */
    expect(1, CF_QC_EQ, C, "\xe2\x84\xaa", "k");   /* K (U+212A) */
    expect(0, CF_QC_EQ, 0, "\xe2\x84\xaa", "K");
    /* Cyrillic and Armenian have case too. */
    expect(1, CF_QC_EQ, C, "МОСКВА", "москва");
    expect(1, CF_QC_CONTAINS, C, "ԵՐԵՎԱՆ", "րեվ");
}

/* ------------------------------------------------------------------------ */
/* Diacritics                                                                */
/* ------------------------------------------------------------------------ */

static void test_diacritics(void **state)
{
    (void)state;
    expect(1, CF_QC_EQ, D, "Ünïcödé", "Unicode");
    expect(0, CF_QC_EQ, D, "Ünïcödé", "unicode"); /* [d] keeps case */
    expect(1, CF_QC_EQ, CD, "Ünïcödé", "unicode");
    expect(1, CF_QC_EQ, CD, "ÜNÏCÖDÉ", "Unicode");
    expect(1, CF_QC_EQ, D, "Ä", "A");
    expect(1, CF_QC_EQ, D, "é", "e");
    expect(1, CF_QC_EQ, D, "e\xcc\x81", "e");          /* decomposed é */
    expect(1, CF_QC_EQ, D, "\xc3\xa9", "e\xcc\x81");   /* composed against decomposed */
    expect(1, CF_QC_EQ, D, "a\xcc\x81\xcc\x88\xcc\xa3", "a"); /* several marks */
    expect(1, CF_QC_EQ, D, "Ångström", "Angstrom");
    expect(1, CF_QC_EQ, D, "Ñandú", "Nandu");
    expect(1, CF_QC_EQ, D, "Čeština", "Cestina");
    expect(1, CF_QC_EQ, D, "Tiếng Việt", "Tieng Viet");
    expect(1, CF_QC_CONTAINS, D, "naïve café", "ive caf");
    expect(1, CF_QC_BEGINSWITH, D, "élan", "e");
    expect(1, CF_QC_ENDSWITH, D, "café", "e");
    /* Letters without a decomposition stay as they are. */
    expect(0, CF_QC_EQ, D, "ø", "o");
    expect(0, CF_QC_EQ, D, "ł", "l");
    expect(0, CF_QC_EQ, D, "æ", "ae");
    /* A needle that [d] empties is an empty needle. */
    expect(1, CF_QC_CONTAINS, D, "abc", "\xcc\x81");
    expect(1, CF_QC_EQ, D, "\xcc\x81", "");
    expect(1, CF_QC_EQ, D, "", "\xcc\x81\xcc\x81");
    expect(0, CF_QC_EQ, D, "a", "\xcc\x81");
}

/* Under [c] alone a character is one unit after composition: "é" is not
 * "e" followed by something, whichever way either side is spelled. */
static void test_composed_and_decomposed(void **state)
{
    (void)state;
    const char *composed = "caf\xc3\xa9", *decomposed = "cafe\xcc\x81";
    expect(1, CF_QC_EQ, C, composed, decomposed);
    expect(1, CF_QC_EQ, C, decomposed, "CAF\xc3\x89");
    expect(1, CF_QC_ENDSWITH, C, decomposed, "\xc3\xa9");
    expect(1, CF_QC_ENDSWITH, C, composed, "e\xcc\x81");
    expect(0, CF_QC_ENDSWITH, C, decomposed, "e");
    expect(0, CF_QC_ENDSWITH, C, composed, "\xcc\x81");
    expect(0, CF_QC_CONTAINS, C, decomposed, "fe");
    expect(1, CF_QC_LIKE, C, decomposed, "caf?");
    expect(0, CF_QC_LIKE, C, decomposed, "caf??");
    expect(1, CF_QC_LIKE, 0, decomposed, "caf??"); /* byte-exact: two code points */
    expect(0, CF_QC_LIKE, 0, decomposed, "caf?");
    /* Canonical order of marks does not matter: dot below (220) and
     * circumflex (230) in either order are the same character. */
    expect(1, CF_QC_EQ, C, "a\xcc\xa3\xcc\x82", "a\xcc\x82\xcc\xa3");
    expect(1, CF_QC_EQ, C, "\xe1\xba\xad", "A\xcc\x82\xcc\xa3"); /* ậ */
    /* Hangul syllables compose from their jamo. */
    expect(1, CF_QC_EQ, C, "\xed\x95\x9c", "\xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab"); /* 한 */
}

/* With modifiers CONTAINS searches 32-bit code points as bytes: the bytes
 * of "ab" (61 00 00 00 62 00 00 00, little-endian) also occur across the
 * code points U+6141 U+6200 U+0000, one byte in, which is no match. */
static void test_contains_respects_code_point_boundaries(void **state)
{
    (void)state;
    for (size_t m = 1; m < 4; m++) {
        unsigned mods = all_modifiers[m];
        expect_bytes(0, CF_QC_CONTAINS, mods, "\xe6\x85\x81\xe6\x88\x80\0", "ab");
        expect_bytes(1, CF_QC_CONTAINS, mods, "\xe6\x85\x81\xe6\x88\x80\0" "ab", "ab");
        expect_bytes(1, CF_QC_LIKE, mods, "\xe6\x85\x81\xe6\x88\x80\0" "ab", "*ab*");
    }
}

/* ------------------------------------------------------------------------ */
/* LIKE                                                                      */
/* ------------------------------------------------------------------------ */

static void test_like_wildcards(void **state)
{
    (void)state;
    for (size_t m = 0; m < 4; m++) {
        unsigned mods = all_modifiers[m];
        expect(1, CF_QC_LIKE, mods, "", "");
        expect(1, CF_QC_LIKE, mods, "", "*");
        expect(1, CF_QC_LIKE, mods, "", "**");
        expect(0, CF_QC_LIKE, mods, "", "?");
        expect(0, CF_QC_LIKE, mods, "a", "");
        expect(1, CF_QC_LIKE, mods, "abc", "*");
        expect(1, CF_QC_LIKE, mods, "abc", "**");
        expect(1, CF_QC_LIKE, mods, "abc", "a**c");
        expect(1, CF_QC_LIKE, mods, "abc", "***c");
        expect(1, CF_QC_LIKE, mods, "abc", "a*");
        expect(0, CF_QC_LIKE, mods, "xabc", "a*");
        expect(1, CF_QC_LIKE, mods, "xabc", "*c");
        expect(0, CF_QC_LIKE, mods, "abcx", "*c");
        expect(1, CF_QC_LIKE, mods, "xxbxx", "*b*");
        expect(0, CF_QC_LIKE, mods, "xxxx", "*b*");
        expect(1, CF_QC_LIKE, mods, "abc", "abc");
        expect(0, CF_QC_LIKE, mods, "abc", "ab");
        expect(1, CF_QC_LIKE, mods, "abc", "???");
        expect(0, CF_QC_LIKE, mods, "abc", "??");
        expect(0, CF_QC_LIKE, mods, "abc", "????");
        expect(1, CF_QC_LIKE, mods, "abc", "?*");
        expect(1, CF_QC_LIKE, mods, "abc", "*?");
        expect(1, CF_QC_LIKE, mods, "abc", "*???*");
        expect(0, CF_QC_LIKE, mods, "abc", "*????*");
        expect(1, CF_QC_LIKE, mods, "abcbd", "a*b?");
        expect(1, CF_QC_LIKE, mods, "abcbd", "a*bd");
        expect(0, CF_QC_LIKE, mods, "abcbd", "a*bc");
        expect(1, CF_QC_LIKE, mods, "mississippi", "m*iss*ppi");
        expect(1, CF_QC_LIKE, mods, "mississippi", "*ss*ss*");
        expect(0, CF_QC_LIKE, mods, "mississippi", "*ss*ss*ss*");
        /* The pattern is longer than the text. */
        expect(0, CF_QC_LIKE, mods, "ab", "abc");
        expect(0, CF_QC_LIKE, mods, "ab", "ab*c");
        expect(0, CF_QC_LIKE, mods, "ab", "a*b*c*");
        /* No escape: '*' and '?' in the text are ordinary characters that
         * the wildcards match like any other. */
        expect(1, CF_QC_LIKE, mods, "a*c", "a?c");
        expect(1, CF_QC_LIKE, mods, "a?c", "a*");
        expect(1, CF_QC_LIKE, mods, "*", "?");
        expect(1, CF_QC_LIKE, mods, "a\\c", "a?c");
        /* `?` is one character however many bytes it takes. */
        expect(1, CF_QC_LIKE, mods, "\xc3\xa9", "?");           /* é, 2 bytes */
        expect(1, CF_QC_LIKE, mods, "\xe2\x82\xac", "?");       /* €, 3 bytes */
        expect(1, CF_QC_LIKE, mods, "\xf0\x9f\x98\x80", "?");   /* 😀, 4 bytes */
        expect(0, CF_QC_LIKE, mods, "\xf0\x9f\x98\x80", "??");
        expect(1, CF_QC_LIKE, mods, "x\xf0\x9f\x98\x80y\xe2\x82\xac", "?\xf0\x9f\x98\x80??");
        expect(1, CF_QC_LIKE, mods, "日本語テキスト", "日本?*ト");
        expect(0, CF_QC_LIKE, mods, "日本語テキスト", "日本?ト");
    }
    /* With modifiers the pattern folds too. */
    expect(1, CF_QC_LIKE, C, "ABC", "a*C");
    expect(1, CF_QC_LIKE, D, "Ábc", "A?c");
    expect(1, CF_QC_LIKE, D, "Ábc", "Á?c");
    expect(0, CF_QC_LIKE, 0, "Ábc", "A?c");
    expect(1, CF_QC_LIKE, CD, "ÁBC", "a*");
}

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* Patterns that make a recursive matcher take exponential time must take
 * at most text × pattern steps: a few milliseconds here, even sanitized. */
static void test_like_worst_case_is_quadratic_at_most(void **state)
{
    (void)state;
    const size_t n = 20000;
    char *run = malloc(n + 2);
    assert_non_null(run);
    memset(run, 'a', n);
    run[n] = '\0';
    const char *patterns[] = {"*a*a*a*a*b", "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", "a*a*a*a*a*a*a*a*?b",
                              "*?*?*?*?*?*?*?*?*?*?b"};
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (size_t m = 0; m < 4; m++)
        for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++)
            assert_int_equal(match(CF_QC_LIKE, all_modifiers[m], run, patterns[i]), 0);
    /* The same patterns succeed once the text ends as they want. */
    run[n - 1] = 'b';
    for (size_t m = 0; m < 4; m++)
        for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++)
            assert_int_equal(match(CF_QC_LIKE, all_modifiers[m], run, patterns[i]), 1);
    double took = seconds_since(&start);
    if (took > 5.0)
        fail_msg("LIKE worst cases took %.2f s", took);
    free(run);
}

/* ------------------------------------------------------------------------ */
/* Invalid UTF-8, NUL bytes, binary data                                     */
/* ------------------------------------------------------------------------ */

static void test_invalid_utf8(void **state)
{
    (void)state;
    for (size_t m = 0; m < 4; m++) {
        unsigned mods = all_modifiers[m];
        /* An invalid byte equals only itself, under every modifier. */
        expect_bytes(1, CF_QC_EQ, mods, "\xff", "\xff");
        expect_bytes(0, CF_QC_EQ, mods, "\xff", "\xfe");
        expect_bytes(1, CF_QC_CONTAINS, mods, "ab\xff" "cd", "\xff" "c");
        expect_bytes(1, CF_QC_BEGINSWITH, mods, "\xc3", "\xc3"); /* truncated sequence */
        expect_bytes(1, CF_QC_ENDSWITH, mods, "abc\xe2\x82", "c\xe2\x82");
        expect_bytes(1, CF_QC_LIKE, mods, "\xff", "?");
        expect_bytes(1, CF_QC_LIKE, mods, "\xe2\x82", "??");     /* two lone bytes */
        expect_bytes(1, CF_QC_LIKE, mods, "\xc0\xaf", "??");     /* overlong '/' */
        expect_bytes(1, CF_QC_LIKE, mods, "\xed\xa0\x80", "???"); /* a surrogate */
        expect_bytes(1, CF_QC_LIKE, mods, "\xf4\x90\x80\x80", "????"); /* above U+10FFFF */
        expect_bytes(1, CF_QC_LIKE, mods, "x\xffy", "x?y");
        expect_bytes(1, CF_QC_LIKE, mods, "x\xffy", "*\xff*");
        expect_bytes(0, CF_QC_LIKE, mods, "x\xfey", "*\xff*");
        /* Like LIKE, matching with modifiers is on whole characters: a lone
         * byte never matches inside a well-formed one. */
        expect_bytes(0, CF_QC_LIKE, mods, "\xc3\xa9", "\xc3*");
    }
    /* Byte-exact operators compare bytes, even inside a character. */
    expect_bytes(1, CF_QC_BEGINSWITH, 0, "\xc3\xa9", "\xc3");
    expect_bytes(1, CF_QC_CONTAINS, 0, "\xc3\xa9", "\xa9");
    expect_bytes(0, CF_QC_BEGINSWITH, C, "\xc3\xa9", "\xc3");
    expect_bytes(0, CF_QC_CONTAINS, D, "\xc3\xa9", "\xa9");
    /* Valid parts around invalid bytes are still folded. */
    expect_bytes(1, CF_QC_EQ, C, "\xffStra\xc3\x9f" "e\xfe", "\xffSTRASSE\xfe");
    expect_bytes(1, CF_QC_EQ, D, "\xff\xc3\x84\xfe", "\xff" "A\xfe");
    expect_bytes(1, CF_QC_EQ, CD, "\x80\xc3\x84\x80", "\x80" "a\x80");
    expect_bytes(0, CF_QC_EQ, CD, "\x80\xc3\x84\x80", "\x81" "a\x80");
    /* An invalid byte splits the text: a mark after it does not compose
     * with the letter before it (but [d] still removes the mark). */
    expect_bytes(0, CF_QC_EQ, C, "e\xff\xcc\x81", "\xc3\xa9\xff");
    expect_bytes(1, CF_QC_EQ, C, "e\xff\xcc\x81", "E\xff\xcc\x81");
    expect_bytes(1, CF_QC_EQ, D, "e\xff\xcc\x81", "e\xff");
    /* Random bytes of every length never crash nor read out of bounds
     * (the sanitizer build checks); results agree across forms. */
    ts_seed(0x7e47);
    for (int i = 0; i < 3000; i++) {
        unsigned char text[24], needle[6];
        size_t tlen = (size_t)ts_rand_below(sizeof text + 1), nlen = (size_t)ts_rand_below(sizeof needle + 1);
        ts_rand_bytes(text, tlen);
        ts_rand_bytes(needle, nlen);
        for (size_t o = 0; o < sizeof all_ops / sizeof all_ops[0]; o++)
            (void)match_n(all_ops[o], all_modifiers[i % 4], text, tlen, needle, nlen);
        assert_true(cf_text_length(text, tlen) <= tlen);
    }
}

static void test_nul_bytes(void **state)
{
    (void)state;
    for (size_t m = 0; m < 4; m++) {
        unsigned mods = all_modifiers[m];
        expect_bytes(1, CF_QC_EQ, mods, "a\0b", "a\0b");
        expect_bytes(0, CF_QC_EQ, mods, "a\0b", "a");
        expect_bytes(0, CF_QC_EQ, mods, "a\0b", "a\0c");
        expect_bytes(1, CF_QC_EQ, mods, "\0", "\0");
        expect_bytes(0, CF_QC_EQ, mods, "\0", "");
        expect_bytes(1, CF_QC_BEGINSWITH, mods, "\0\0x", "\0\0");
        expect_bytes(1, CF_QC_ENDSWITH, mods, "x\0", "\0");
        expect_bytes(1, CF_QC_CONTAINS, mods, "a\0b", "\0b");
        expect_bytes(0, CF_QC_CONTAINS, mods, "a\0b", "\0c");
        expect_bytes(1, CF_QC_LIKE, mods, "a\0b", "a?b");
        expect_bytes(1, CF_QC_LIKE, mods, "a\0b", "*\0*");
    }
    expect_bytes(1, CF_QC_EQ, C, "A\0\xc3\x9f", "a\0SS");
    expect_bytes(1, CF_QC_EQ, D, "\xc3\xa9\0\xc3\xa9", "e\0e");
}

/* ------------------------------------------------------------------------ */
/* Empty sides                                                               */
/* ------------------------------------------------------------------------ */

static void test_empty_strings(void **state)
{
    (void)state;
    for (size_t m = 0; m < 4; m++) {
        unsigned mods = all_modifiers[m];
        expect(1, CF_QC_EQ, mods, "", "");
        expect(0, CF_QC_EQ, mods, "a", "");
        expect(0, CF_QC_EQ, mods, "", "a");
        expect(1, CF_QC_BEGINSWITH, mods, "", "");
        expect(1, CF_QC_ENDSWITH, mods, "", "");
        expect(1, CF_QC_CONTAINS, mods, "", "");
        expect(0, CF_QC_BEGINSWITH, mods, "", "a");
        expect(0, CF_QC_ENDSWITH, mods, "", "a");
        expect(0, CF_QC_CONTAINS, mods, "", "a");
        /* NULL with no bytes is the empty text or needle. */
        for (size_t o = 0; o < sizeof all_ops / sizeof all_ops[0]; o++) {
            int want = all_ops[o] != CF_QC_NE;
            assert_int_equal(match_n(all_ops[o], mods, NULL, 0, NULL, 0), want);
            assert_int_equal(match_n(all_ops[o], mods, "", 0, NULL, 0), want);
            assert_int_equal(match_n(all_ops[o], mods, NULL, 0, "", 0), want);
        }
        assert_int_equal(match_n(CF_QC_CONTAINS, mods, "abc", 3, NULL, 0), 1);
        assert_int_equal(match_n(CF_QC_EQ, mods, "abc", 3, NULL, 0), 0);
        assert_int_equal(match_n(CF_QC_CONTAINS, mods, NULL, 0, "a", 1), 0);
    }
}

/* ------------------------------------------------------------------------ */
/* Pattern reuse                                                             */
/* ------------------------------------------------------------------------ */

/* One compiled pattern over many texts of growing and shrinking length:
 * the scratch buffer it keeps never leaks one text into the next. */
static void test_pattern_reuse(void **state)
{
    (void)state;
    const size_t big = 50000;
    char *long_text = malloc(big * 2 + 16);
    assert_non_null(long_text);
    for (size_t i = 0; i < big; i++)
        memcpy(long_text + 2 * i, "\xc3\x9f", 2); /* ß: 2 bytes, 2 units once folded */
    memcpy(long_text + 2 * big, "end", 4);

    for (size_t m = 0; m < 4; m++) {
        unsigned mods = all_modifiers[m];
        cf_text_pattern *ends = NULL, *like = NULL, *eq = NULL;
        assert_int_equal(cf_text_pattern_new(CF_QC_ENDSWITH, mods, "END", 3, &ends), COFFER_OK);
        assert_int_equal(cf_text_pattern_new(CF_QC_LIKE, mods, "?*e?d", 5, &like), COFFER_OK);
        assert_int_equal(cf_text_pattern_new(CF_QC_EQ, mods, "Bend", 4, &eq), COFFER_OK);
        int case_blind = (mods & C) != 0, accent_blind = (mods & D) != 0;
        for (int i = 0; i < 20000; i++) {
            const char *text;
            size_t len;
            switch (i % 4) {
            case 0: text = "bend"; len = 4; break;
            case 1: text = "BEND"; len = 4; break;
            case 2: text = "b\xc3\xa9nd"; len = 5; break; /* bénd */
            default: text = "x"; len = 1; break;
            }
            if (i == 1000 || i == 15001) {
                text = long_text;
                len = 2 * big + 3;
            }
            /* What ENDSWITH 'END', LIKE '?*e?d' and == 'Bend' say. */
            int want_ends, want_like, want_eq;
            if (text == long_text) {
                want_ends = case_blind;
                want_like = 1;
                want_eq = 0;
            } else if (i % 4 == 0) { /* bend */
                want_ends = case_blind;
                want_like = 1;
                want_eq = case_blind;
            } else if (i % 4 == 1) { /* BEND */
                want_ends = 1;
                want_like = case_blind;
                want_eq = case_blind;
            } else if (i % 4 == 2) { /* bénd */
                want_ends = case_blind && accent_blind;
                want_like = accent_blind;
                want_eq = case_blind && accent_blind;
            } else { /* x */
                want_ends = want_like = want_eq = 0;
            }
            assert_int_equal(cf_text_pattern_match(ends, text, len), want_ends);
            assert_int_equal(cf_text_pattern_match(like, text, len), want_like);
            assert_int_equal(cf_text_pattern_match(eq, text, len), want_eq);
        }
        cf_text_pattern_free(ends);
        cf_text_pattern_free(like);
        cf_text_pattern_free(eq);
    }
    free(long_text);
    cf_text_pattern_free(NULL);
}

/* ------------------------------------------------------------------------ */
/* .length                                                                   */
/* ------------------------------------------------------------------------ */

static void test_length(void **state)
{
    (void)state;
    assert_int_equal(cf_text_length("", 0), 0);
    assert_int_equal(cf_text_length(NULL, 0), 0);
    assert_int_equal(cf_text_length("abc", 3), 3);
    assert_int_equal(cf_text_length("Straße", strlen("Straße")), 6);
    assert_int_equal(cf_text_length("Ünïcödé", strlen("Ünïcödé")), 7);
    assert_int_equal(cf_text_length("e\xcc\x81", 3), 2); /* code points, not characters */
    assert_int_equal(cf_text_length("\xe2\x82\xac", 3), 1);
    assert_int_equal(cf_text_length("\xf0\x9f\x98\x80!", 5), 2);
    assert_int_equal(cf_text_length("日本語", strlen("日本語")), 3);
    assert_int_equal(cf_text_length("a\0b", 3), 3);
    /* Invalid bytes count one each. */
    assert_int_equal(cf_text_length("\xff", 1), 1);
    assert_int_equal(cf_text_length("a\xe2\x82", 3), 3);     /* truncated at the end */
    assert_int_equal(cf_text_length("\xe2\x82" "a", 3), 3);  /* truncated before a letter */
    assert_int_equal(cf_text_length("\xc0\xaf", 2), 2);      /* overlong */
    assert_int_equal(cf_text_length("\xed\xa0\x80", 3), 3);  /* surrogate */
    assert_int_equal(cf_text_length("\xf4\x90\x80\x80", 4), 4); /* above U+10FFFF */
    assert_int_equal(cf_text_length("\xf4\x8f\xbf\xbf", 4), 1); /* U+10FFFF itself */
    assert_int_equal(cf_text_length("\x80\x80\xc3\xa9", 4), 3);
    /* Only `len` bytes are read, whatever follows. */
    assert_int_equal(cf_text_length("\xf0\x9f\x98\x80", 2), 2);
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

static void test_errors(void **state)
{
    (void)state;
    cf_text_pattern *p = (cf_text_pattern *)&p;
    static const cf_qcompare_op others[] = {CF_QC_LT, CF_QC_LE, CF_QC_GT, CF_QC_GE, CF_QC_IN, CF_QC_BETWEEN};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        assert_int_equal(cf_text_pattern_new(others[i], 0, "a", 1, &p), COFFER_ERR_INVALID_ARGUMENT);
        assert_null(p);
        assert_non_null(strstr(coffer_last_error(), "not a string operator"));
        coffer_clear_error();
        assert_int_equal(cf_text_match(others[i], 0, "a", 1, "a", 1), -1);
        assert_int_equal(coffer_last_status(), COFFER_ERR_INVALID_ARGUMENT);
    }
    assert_int_equal(cf_text_pattern_new(CF_QC_EQ, 4, "a", 1, &p), COFFER_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(coffer_last_error(), "modifier"));
    assert_int_equal(cf_text_match(CF_QC_EQ, 8, "a", 1, "a", 1), -1);
    assert_int_equal(cf_text_pattern_new(CF_QC_EQ, 0, NULL, 3, &p), COFFER_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(coffer_last_error(), "needle is NULL"));
    assert_int_equal(cf_text_pattern_new(CF_QC_EQ, 0, "a", 1, NULL), COFFER_ERR_INVALID_ARGUMENT);

    assert_int_equal(cf_text_pattern_new(CF_QC_CONTAINS, C, "a", 1, &p), COFFER_OK);
    coffer_clear_error();
    assert_int_equal(cf_text_pattern_match(p, NULL, 2), -1);
    assert_int_equal(coffer_last_status(), COFFER_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(coffer_last_error(), "text is NULL"));
    assert_int_equal(cf_text_pattern_match(p, "A", 1), 1); /* still usable */
    cf_text_pattern_free(p);
    assert_int_equal(cf_text_pattern_match(NULL, "a", 1), -1);
    assert_int_equal(cf_text_match(CF_QC_EQ, 0, NULL, 1, "a", 1), -1);
}

/* ------------------------------------------------------------------------ */
/* Randomized: compiled against one-shot, LIKE against a reference           */
/* ------------------------------------------------------------------------ */

/* Pieces that exercise folding, composition, wildcards and bad bytes. */
static const char *const pieces[] = {
    "a", "A", "b", "B", "s", "S", "e", "E", "i", "I", "\xc3\xa9", "e\xcc\x81", "\xc3\x89", "\xcc\x81",
    "\xc3\x9f", "SS", "\xce\xa3", "\xcf\x83", "\xcf\x82", "\xc4\xb0", "\xc4\xb1", "\xef\xac\x83", "*", "?",
    "\xff", "\xe2\x82", "\0", "\xf0\x9f\x98\x80",
};
static const size_t piece_lens[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 1, 1, 1, 2, 1, 4};

static size_t random_string(char *out, size_t max_pieces, size_t piece_limit)
{
    size_t n = (size_t)ts_rand_below(max_pieces + 1), len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = (size_t)ts_rand_below(piece_limit);
        memcpy(out + len, pieces[k], piece_lens[k]);
        len += piece_lens[k];
    }
    return len;
}

/* A code point, or 0x110000 + byte for a byte that starts no well-formed
 * sequence; written from RFC 3629 independently of the library. */
static size_t decode_one(const unsigned char *s, size_t avail, int32_t *out)
{
    unsigned char b = s[0];
    size_t n = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (n == 0 || n > avail) {
        *out = 0x110000 + b;
        return 1;
    }
    int32_t cp = n == 1 ? b : n == 2 ? (b & 0x1f) : n == 3 ? (b & 0x0f) : (b & 0x07);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            *out = 0x110000 + b;
            return 1;
        }
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    static const int32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
        *out = 0x110000 + b;
        return 1;
    }
    *out = cp;
    return n;
}

static size_t decode_all(const char *s, size_t len, int32_t *out)
{
    size_t n = 0;
    for (size_t pos = 0; pos < len;)
        pos += decode_one((const unsigned char *)s + pos, len - pos, &out[n++]);
    return n;
}

/* The textbook recursive LIKE: exponential in the worst case, fine here. */
static bool reference_like(const int32_t *t, size_t tn, const int32_t *p, size_t pn)
{
    if (pn == 0)
        return tn == 0;
    if (p[0] == '*')
        return reference_like(t, tn, p + 1, pn - 1) || (tn > 0 && reference_like(t + 1, tn - 1, p, pn));
    return tn > 0 && (p[0] == '?' || p[0] == t[0]) && reference_like(t + 1, tn - 1, p + 1, pn - 1);
}

static bool reference_literal(cf_qcompare_op op, const char *t, size_t tn, const char *n, size_t nn)
{
    switch (op) {
    case CF_QC_EQ: return tn == nn && memcmp(t, n, nn) == 0;
    case CF_QC_NE: return !(tn == nn && memcmp(t, n, nn) == 0);
    case CF_QC_BEGINSWITH: return tn >= nn && memcmp(t, n, nn) == 0;
    case CF_QC_ENDSWITH: return tn >= nn && memcmp(t + tn - nn, n, nn) == 0;
    default: return ts_memmem(t, tn, n, nn) != NULL || nn == 0;
    }
}

static void test_randomized_agreement(void **state)
{
    (void)state;
    ts_seed(20240601);
    char text[8 * 4 * 6], needle[8 * 4 * 6], lower_text[sizeof text], lower_needle[sizeof needle];
    int32_t tu[sizeof text], nu[sizeof needle];
    size_t all_pieces = sizeof pieces / sizeof pieces[0];
    int likes = 0, like_hits = 0;
    for (int round = 0; round < 4000; round++) {
        /* Half the rounds draw from short ASCII-heavy pieces, so that
         * matches are frequent. */
        size_t limit = round % 2 ? all_pieces : 10;
        size_t tlen = random_string(text, 12, limit);
        size_t nlen = random_string(needle, round % 3 ? 4 : 8, limit);
        for (size_t o = 0; o < sizeof all_ops / sizeof all_ops[0]; o++) {
            cf_qcompare_op op = all_ops[o];
            for (size_t m = 0; m < 4; m++) {
                int got = match_n(op, all_modifiers[m], text, tlen, needle, nlen);
                if (all_modifiers[m] != 0)
                    continue;
                /* Byte-exact results follow from the bytes alone. */
                bool want;
                if (op == CF_QC_LIKE) {
                    size_t tn = decode_all(text, tlen, tu), pn = decode_all(needle, nlen, nu);
                    want = reference_like(tu, tn, nu, pn);
                    likes++;
                    like_hits += want;
                } else {
                    want = reference_literal(op, text, tlen, needle, nlen);
                }
                if (got != (int)want)
                    fail_msg("round %d: %s on %zu and %zu bytes gave %d", round, op_name(op), tlen, nlen, got);
            }
        }
        /* On ASCII, [c] is lower-casing both sides and [d] changes nothing. */
        if (limit == 10) {
            for (size_t i = 0; i < tlen; i++)
                lower_text[i] = (char)(text[i] >= 'A' && text[i] <= 'Z' ? text[i] + 32 : text[i]);
            for (size_t i = 0; i < nlen; i++)
                lower_needle[i] = (char)(needle[i] >= 'A' && needle[i] <= 'Z' ? needle[i] + 32 : needle[i]);
            bool ascii = true;
            for (size_t i = 0; i < tlen; i++)
                ascii &= (unsigned char)text[i] < 0x80;
            for (size_t i = 0; i < nlen; i++)
                ascii &= (unsigned char)needle[i] < 0x80;
            if (!ascii)
                continue;
            for (size_t o = 0; o < sizeof all_ops / sizeof all_ops[0]; o++) {
                cf_qcompare_op op = all_ops[o];
                assert_int_equal(match_n(op, C, text, tlen, needle, nlen),
                                 match_n(op, 0, lower_text, tlen, lower_needle, nlen));
                assert_int_equal(match_n(op, CD, text, tlen, needle, nlen),
                                 match_n(op, 0, lower_text, tlen, lower_needle, nlen));
                assert_int_equal(match_n(op, D, text, tlen, needle, nlen), match_n(op, 0, text, tlen, needle, nlen));
            }
        }
    }
    /* The draw must have produced both outcomes for LIKE. */
    assert_true(like_hits > 50);
    assert_true(likes - like_hits > 50);
}

/* Operators agree with one another under every modifier: == implies the
 * other three; BEGINSWITH n is LIKE n*, and so on, whenever n has no
 * wildcard of its own. */
static void test_operators_agree(void **state)
{
    (void)state;
    ts_seed(99);
    char text[8 * 4 * 6], needle[8 * 4 * 6], wrapped[sizeof needle + 2];
    size_t limit = sizeof pieces / sizeof pieces[0] - 1; /* everything but the emoji */
    for (int round = 0; round < 3000; round++) {
        size_t tlen = random_string(text, 10, round % 2 ? limit : 10);
        size_t nlen = random_string(needle, 3, round % 2 ? limit : 10);
        if (memchr(needle, '*', nlen) || memchr(needle, '?', nlen))
            continue;
        for (size_t m = 0; m < 4; m++) {
            unsigned mods = all_modifiers[m];
            int eq = match_n(CF_QC_EQ, mods, text, tlen, needle, nlen);
            int begins = match_n(CF_QC_BEGINSWITH, mods, text, tlen, needle, nlen);
            int ends = match_n(CF_QC_ENDSWITH, mods, text, tlen, needle, nlen);
            int has = match_n(CF_QC_CONTAINS, mods, text, tlen, needle, nlen);
            if (eq)
                assert_true(begins && ends && has);
            if (begins || ends)
                assert_true(has);
            /* Only with modifiers, or on well-formed needles, are byte
             * operators the same as LIKE on whole characters. */
            memcpy(wrapped, needle, nlen);
            wrapped[nlen] = '*';
            assert_int_equal(match_n(CF_QC_LIKE, mods, text, tlen, wrapped, nlen), eq);
            if (mods == 0 && memchr(needle, '\xff', nlen))
                continue;
            if (mods == 0 && ts_memmem(needle, nlen, "\xe2\x82", 2))
                continue;
            assert_int_equal(match_n(CF_QC_LIKE, mods, text, tlen, wrapped, nlen + 1), begins);
            wrapped[0] = '*';
            memcpy(wrapped + 1, needle, nlen);
            assert_int_equal(match_n(CF_QC_LIKE, mods, text, tlen, wrapped, nlen + 1), ends);
            wrapped[nlen + 1] = '*';
            assert_int_equal(match_n(CF_QC_LIKE, mods, text, tlen, wrapped, nlen + 2), has);
            /* A '?' that a '*' could stand for forces the general matcher:
             * "?*n" holds when the text ends with n after at least one unit. */
            wrapped[0] = '?';
            wrapped[1] = '*';
            memcpy(wrapped + 2, needle, nlen);
            int general = match_n(CF_QC_LIKE, mods, text, tlen, wrapped, nlen + 2);
            if (general)
                assert_true(ends);
        }
    }
}

/* cf_text_find gives memmem's answer (the first occurrence) for needles of
 * 0 to 20 bytes in texts of 0 to 80 over a three-letter alphabet (many
 * partial matches), with matches at every distance from the text's end
 * (where the 16-byte steps stop). */
static void test_text_find_is_the_first_occurrence(void **state)
{
    (void)state;
    uint64_t x = 12345;
    for (int round = 0; round < 20000; round++) {
        uint8_t text[80], needle[20];
        size_t len = (size_t)(round % 81), nlen = (size_t)((round / 81) % 21);
        for (size_t i = 0; i < len; i++)
            text[i] = (uint8_t)("abc"[(x = x * 6364136223846793005u + 1442695040888963407u) >> 62 & 1 ? 1 : (x >> 61 & 1) * 2]);
        for (size_t i = 0; i < nlen; i++)
            needle[i] = (uint8_t)("abc"[(x = x * 6364136223846793005u + 1442695040888963407u) >> 62 & 1 ? 1 : (x >> 61 & 1) * 2]);
        if (nlen && len >= nlen && round % 3 == 0) /* plant it, at a place that moves with the round */
            memcpy(text + (size_t)round % (len - nlen + 1), needle, nlen);
        const uint8_t *want = NULL;
        for (size_t i = 0; i + nlen <= len && !want; i++)
            if (memcmp(text + i, needle, nlen) == 0)
                want = text + i;
        const uint8_t *got = cf_text_find(text, len, needle, nlen);
        if (got != want)
            fail_msg("text of %zu, needle of %zu: found at %td, first occurrence at %td", len, nlen,
                     got ? got - text : -1, want ? want - text : -1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_operators),
        cmocka_unit_test(test_text_find_is_the_first_occurrence),
        cmocka_unit_test(test_conformance_counts),
        cmocka_unit_test(test_every_operator_and_modifier),
        cmocka_unit_test(test_full_case_folding),
        cmocka_unit_test(test_diacritics),
        cmocka_unit_test(test_composed_and_decomposed),
        cmocka_unit_test(test_contains_respects_code_point_boundaries),
        cmocka_unit_test(test_like_wildcards),
        cmocka_unit_test(test_like_worst_case_is_quadratic_at_most),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_nul_bytes),
        cmocka_unit_test(test_empty_strings),
        cmocka_unit_test(test_pattern_reuse),
        cmocka_unit_test(test_length),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_randomized_agreement),
        cmocka_unit_test(test_operators_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
