/*
 * fuzz_query_text.c — libFuzzer target for string matching (query/text.h).
 * The first byte picks the operator and modifiers, the second where the
 * rest splits into needle and text. Nothing may crash or read out of
 * bounds; the compiled and one-shot forms must agree; the operators must
 * agree with one another (== implies BEGINSWITH, ENDSWITH and CONTAINS;
 * either end implies CONTAINS; LIKE 'n' is == 'n' for a needle without
 * wildcards); a text always contains itself and matches itself with LIKE
 * once its wildcards are the only ones.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coffer.h"
#include "../../Sources/CCoffer/query/text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int match_both(cf_qcompare_op op, unsigned mods, const uint8_t *t, size_t tn, const uint8_t *n, size_t nn)
{
    cf_text_pattern *p = NULL;
    if (cf_text_pattern_new(op, mods, n, nn, &p) != COFFER_OK)
        abort();
    int compiled = cf_text_pattern_match(p, t, tn);
    int again = cf_text_pattern_match(p, t, tn);
    cf_text_pattern_free(p);
    int once = cf_text_match(op, mods, t, tn, n, nn);
    if (compiled < 0 || compiled > 1 || compiled != again || compiled != once)
        abort();
    return compiled;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    unsigned mods = data[0] & 3;
    size_t split = data[1] % (size - 1);
    const uint8_t *needle = data + 2, *text = data + 2 + split;
    size_t nn = split, tn = size - 2 - split;

    int eq = match_both(CF_QC_EQ, mods, text, tn, needle, nn);
    int ne = match_both(CF_QC_NE, mods, text, tn, needle, nn);
    int begins = match_both(CF_QC_BEGINSWITH, mods, text, tn, needle, nn);
    int ends = match_both(CF_QC_ENDSWITH, mods, text, tn, needle, nn);
    int has = match_both(CF_QC_CONTAINS, mods, text, tn, needle, nn);
    int like = match_both(CF_QC_LIKE, mods, text, tn, needle, nn);
    if (ne == eq || (eq && !(begins && ends && has)) || ((begins || ends) && !has))
        abort();
    if (!memchr(needle, '*', nn) && !memchr(needle, '?', nn) && like != eq)
        abort();
    if (!match_both(CF_QC_CONTAINS, mods, text, tn, text, tn) || !match_both(CF_QC_EQ, mods, text, tn, text, tn))
        abort();
    if (!match_both(CF_QC_LIKE, mods, text, tn, text, tn))
        abort(); /* its own '*' and '?' stand for themselves among others */
    if (cf_text_length(text, tn) > tn || (tn > 0 && cf_text_length(text, tn) == 0))
        abort();
    return 0;
}
