/*
 * test_query_parse.c — the query language front end: every operator and its
 * spellings, every literal, key paths, precedence, SORT/DISTINCT/LIMIT, the
 * canonical printer (parse -> print -> parse -> print is a fixed point),
 * positioned errors, bounded nesting, and every query of the conformance
 * suite (Tests/conformance/realm-query-tests.json).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coffer.h"
/* Internal header under test; a relative path, since the tests' include
 * path has only include/ and Tests/c/. */
#include "../../Sources/CCoffer/query/query.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

/* Parses `text`, checks that its canonical text is a fixed point (parsing
 * it gives an equal tree and printing that gives the same text) and returns
 * the query with its canonical text in `*printed` (free() it). */
static cf_query *parse_round_trip(const char *text, char **printed)
{
    cf_query *q = NULL;
    size_t off = 0;
    if (cf_query_parse(text, strlen(text), &q, &off) != COFFER_OK)
        fail_msg("parsing \"%s\" failed: %s", text, coffer_last_error());
    char *once = NULL, *twice = NULL;
    assert_int_equal(cf_query_print(q, &once), COFFER_OK);
    cf_query *again = NULL;
    if (cf_query_parse(once, strlen(once), &again, &off) != COFFER_OK)
        fail_msg("reparsing \"%s\" (printed from \"%s\") failed: %s", once, text, coffer_last_error());
    if (!cf_query_equal(q, again))
        fail_msg("\"%s\" printed as \"%s\", which parses to another tree", text, once);
    assert_int_equal(cf_query_print(again, &twice), COFFER_OK);
    if (strcmp(once, twice) != 0)
        fail_msg("printing is not a fixed point: \"%s\" -> \"%s\" -> \"%s\"", text, once, twice);
    free(twice);
    cf_query_free(again);
    *printed = once;
    return q;
}

static cf_query *parse(const char *text)
{
    char *printed;
    cf_query *q = parse_round_trip(text, &printed);
    free(printed);
    return q;
}

/* The parse fails with a message at the 1-based character offset `at` that
 * contains `needle`. */
static void check_error(const char *file, int line, const char *text, size_t len, size_t at,
                        const char *needle)
{
    cf_query *q = (cf_query *)1;
    size_t off = 12345;
    coffer_status st = cf_query_parse(text, len, &q, &off);
    if (st != COFFER_ERR_INVALID_ARGUMENT)
        fail_msg("%s:%d: \"%s\" gave status %d, expected a syntax error", file, line, text, st);
    if (q != NULL)
        fail_msg("%s:%d: a failed parse left a query", file, line);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "query: at offset %zu: ", at);
    const char *msg = coffer_last_error();
    if (strncmp(msg, prefix, strlen(prefix)) != 0 || !strstr(msg, needle))
        fail_msg("%s:%d: \"%s\" gave \"%s\", expected \"%s...%s\"", file, line, text, msg, prefix,
                 needle);
    (void)off;
}
#define assert_parse_error(text, at, needle) \
    check_error(__FILE__, __LINE__, (text), strlen(text), (at), (needle))

static const cf_qexpr *left(const cf_query *q) { return &q->where->u.compare.left; }
static const cf_qexpr *right(const cf_query *q) { return &q->where->u.compare.right; }

/* ------------------------------------------------------------------------ */
/* Canonical texts and positioned errors, one row per query                  */
/* ------------------------------------------------------------------------ */

/* Each test walks the rows of its own topic (its name without "test_"). */
typedef struct canonical_case {
    const char *topic;
    const char *text;
    const char *canonical; /* what the printer makes of `text` */
} canonical_case;

typedef struct error_case {
    const char *topic;
    const char *text;
    size_t at;          /* 1-based character offset in the message */
    const char *needle; /* part of the message */
} error_case;

static const canonical_case canonical_cases[] = {
    {"comparison_spellings", "a == 1", "a == 1"},
    {"comparison_spellings", "a = 1", "a == 1"},
    {"comparison_spellings", "a != 1", "a != 1"},
    {"comparison_spellings", "a <> 1", "a != 1"},
    {"comparison_spellings", "a < 1", "a < 1"},
    {"comparison_spellings", "a <= 1", "a <= 1"},
    {"comparison_spellings", "a =< 1", "a <= 1"},
    {"comparison_spellings", "a > 1", "a > 1"},
    {"comparison_spellings", "a >= 1", "a >= 1"},
    {"comparison_spellings", "a => 1", "a >= 1"},
    {"comparison_spellings", "a==1", "a == 1"},
    {"comparison_spellings", "  a\t==\n1  ", "a == 1"},
    {"comparison_spellings", "1 == a", "1 == a"},
    {"comparison_spellings", "$0 == a", "$0 == a"},
    {"between_and_in", "age BETWEEN {18, 65}", "age BETWEEN {18, 65}"},
    {"between_and_in", "d between {$0,$1}", "d BETWEEN {$0, $1}"},
    {"between_and_in", "name IN {'a', \"b\"}", "name IN {\"a\", \"b\"}"},
    {"between_and_in", "name in $2", "name IN $2"},
    {"between_and_in", "'x' IN tags", "\"x\" IN tags"},
    {"between_and_in", "n IN {}", "n IN {}"},
    {"between_and_in", "name IN[c] {'a'}", "name IN[c] {\"a\"}"},
    {"between_and_in", "n == {1, 2, 3}", "n == {1, 2, 3}"},
    {"string_operators_and_modifiers", "s BEGINSWITH 'a'", "s BEGINSWITH \"a\""},
    {"string_operators_and_modifiers", "s beginswith 'a'", "s BEGINSWITH \"a\""},
    {"string_operators_and_modifiers", "s EndsWith 'a'", "s ENDSWITH \"a\""},
    {"string_operators_and_modifiers", "s contains 'a'", "s CONTAINS \"a\""},
    {"string_operators_and_modifiers", "s LIKE 'a*b?'", "s LIKE \"a*b?\""},
    {"string_operators_and_modifiers", "s ==[c] 'a'", "s ==[c] \"a\""},
    {"string_operators_and_modifiers", "s !=[d] 'a'", "s !=[d] \"a\""},
    {"string_operators_and_modifiers", "s CONTAINS[cd] 'a'", "s CONTAINS[cd] \"a\""},
    {"string_operators_and_modifiers", "s CONTAINS[dc] 'a'", "s CONTAINS[cd] \"a\""},
    {"string_operators_and_modifiers", "s LIKE[c] $0", "s LIKE[c] $0"},
    {"string_operators_and_modifiers", "s =[c] 'a'", "s ==[c] \"a\""},
    {"precedence", "a == 1 || b == 2 && c == 3", "a == 1 OR b == 2 AND c == 3"},
    {"precedence", "(a == 1 || b == 2) && c == 3", "(a == 1 OR b == 2) AND c == 3"},
    {"precedence", "a == 1 && (b == 2 && c == 3)", "a == 1 AND (b == 2 AND c == 3)"},
    {"precedence", "a == 1 || (b == 2 || c == 3)", "a == 1 OR (b == 2 OR c == 3)"},
    {"precedence", "((a == 1))", "a == 1"},
    {"precedence", "(a == 1 && b == 1) || c == 1", "a == 1 AND b == 1 OR c == 1"},
    {"precedence", "!a == 1", "NOT a == 1"},
    {"precedence", "! (a == 1 || b == 1)", "NOT (a == 1 OR b == 1)"},
    {"precedence", "not not a == 1", "NOT NOT a == 1"},
    {"precedence", "NOT (a == 1)", "NOT a == 1"},
    {"precedence", "TRUEPREDICATE", "TRUEPREDICATE"},
    {"precedence", "falsepredicate OR truepredicate", "FALSEPREDICATE OR TRUEPREDICATE"},
    {"integers", "a == 0x1F", "a == 31"},
    {"integers", "a == 007", "a == 7"},
    {"integers", "a == -0", "a == 0"},
    {"integers", "a == 99999999999999999999999", "a == 99999999999999999999999"},
    {"floats_and_decimals", "a == 1.5E+3", "a == 1.5E+3"},
    {"floats_and_decimals", "a == +1.5", "a == 1.5"},
    {"floats_and_decimals", "a == INFINITY", "a == inf"},
    {"floats_and_decimals", "a == -inf", "a == -inf"},
    {"floats_and_decimals", "a == +inf", "a == inf"},
    {"floats_and_decimals", "a == -nan", "a == nan"},
    {"floats_and_decimals", "a > 5.", "a > 5."},
    {"strings", "s == 'a'", "s == \"a\""},
    {"strings", "s == \"it's\"", "s == \"it's\""},
    {"strings", "s == 'say \"hi\"\\n'", "s == \"say \\\"hi\\\"\\n\""},
    {"strings", "s == '\\0\\\\'", "s == \"\\0\\\\\""},
    {"strings", "s == '\\b'", "s == \"\b\""},
    {"binary", "b BEGINSWITH B64'aGVsbG8='", "b BEGINSWITH B64\"aGVsbG8=\""},
    {"binary", "b == B64\"aGVsbG8\"", "b == B64\"aGVsbG8=\""},
    {"dates", "d == 1970-1-2@0:0:1", "d == T86401:0"},
    {"dates", "d == T0:-1", "d == T0:-1"},
    {"dates", "T1 == 3", "T1 == 3"}, /* a name that starts with T is still a name */
    {"dates", "Tx == T3:4", "Tx == T3:4"},
    {"object_ids_uuids_and_words", "id == oid(6001C033600510DF3BBFD864)", "id == oid(6001c033600510df3bbfd864)"},
    {"object_ids_uuids_and_words", "id == uuid(D1B186E1-E9E0-4768-A1A7-C492519D47EE)", "id == uuid(d1b186e1-e9e0-4768-a1a7-c492519d47ee)"},
    {"object_ids_uuids_and_words", "b == False", "b == false"},
    {"object_ids_uuids_and_words", "x == nil", "x == null"},
    {"object_ids_uuids_and_words", "x != NULL", "x != null"},
    {"arguments", "a == $7", "a == $7"},
    {"key_paths", "some tags == 'a'", "ANY tags == \"a\""},
    {"key_paths", "list[first] == 1", "list[FIRST] == 1"},
    {"key_paths", "list[Last].name == 1", "list[LAST].name == 1"},
    {"key_paths", "m[\"a b\"] == 1", "m[\"a b\"] == 1"},
    {"key_paths", "m['x'].y[2].z == 1", "m[\"x\"].y[2].z == 1"},
    {"key_paths", "tags.@size > 2", "tags.@count > 2"},
    {"key_paths", "tags.@count > 2", "tags.@count > 2"},
    {"key_paths", "r.@avg >= 4 && r.@min > 1 && r.@max < 9 && r.@sum == 3", "r.@avg >= 4 AND r.@min > 1 AND r.@max < 9 AND r.@sum == 3"},
    {"key_paths", "items.@max.price > 10", "items.@max.price > 10"},
    {"key_paths", "m.@keys == 'a'", "m.@keys == \"a\""},
    {"key_paths", "m.@values > 5", "m.@values > 5"},
    {"key_paths", "m.@values.name == 'x'", "m.@values.name == \"x\""},
    {"key_paths", "mixed.@type == 'string'", "mixed.@type == \"string\""},
    {"key_paths", "ALL tags.length > 5", "ALL tags.length > 5"},
    {"key_paths", "ratings.@min > id", "ratings.@min > id"},
    {"key_paths", "ANY tags CONTAINS[c] name", "ANY tags CONTAINS[c] name"},
    {"key_paths", "naïve == 1", "naïve == 1"},
    {"backlinks_and_subqueries", "@links.Person.dogs.name == 'x'", "@links.Person.dogs.name == \"x\""},
    {"backlinks_and_subqueries", "owner.@links.Person.dogs.@size > 1", "owner.@links.Person.dogs.@count > 1"},
    {"backlinks_and_subqueries", "owner.@links.@count > 1", "owner.@links.@count > 1"},
    {"backlinks_and_subqueries", "subquery(dogs,$d,$d.age>2).@size == 1", "SUBQUERY(dogs, $d, $d.age > 2).@count == 1"},
    {"backlinks_and_subqueries", "SUBQUERY(a, $x, SUBQUERY($x.b, $y, $y.c == $x.d).@count > 0).@count == 1", "SUBQUERY(a, $x, SUBQUERY($x.b, $y, $y.c == $x.d).@count > 0).@count == 1"},
    {"backlinks_and_subqueries", "SUBQUERY(tags, $t, $t BEGINSWITH 'a').@count > 0", "SUBQUERY(tags, $t, $t BEGINSWITH \"a\").@count > 0"},
    {"sort_distinct_limit", "TRUEPREDICATE sort(a ascending) distinct(b, c) limit(0)", "TRUEPREDICATE SORT(a ASC) DISTINCT(b, c) LIMIT(0)"},
    {"sort_distinct_limit", "a == 1 || b == 2 LIMIT(3)", "a == 1 OR b == 2 LIMIT(3)"},
    {"sort_distinct_limit", "a == 1 LIMIT(1) LIMIT(2)", "a == 1 LIMIT(1) LIMIT(2)"},
};

static const error_case error_cases[] = {
    {"between_and_in", "age BETWEEN {1, 2, 3}", 13, "BETWEEN takes exactly two values {low, high}, found 3"},
    {"between_and_in", "age BETWEEN {1}", 13, "exactly two values"},
    {"between_and_in", "age BETWEEN 1", 13, "expected '{' (BETWEEN takes {low, high}) after 'BETWEEN', found '1'"},
    {"between_and_in", "n IN {1, a}", 10, "expected a value, an argument or obj('Class', key) after ',', found 'a'"},
    {"between_and_in", "n IN {1 2}", 9, "expected ',' or '}' after '1', found '2'"},
    {"between_and_in", "n IN {1,", 9, "found the end of the query"},
    {"string_operators_and_modifiers", "s <[c] 'a'", 4, "[c] and [d] apply to ==, !=, IN and the string operators"},
    {"string_operators_and_modifiers", "s CONTAINS[x] 'a'", 12, "expected c, d or cd after '[', found 'x'"},
    {"string_operators_and_modifiers", "s CONTAINS[cc] 'a'", 12, "expected c, d or cd"},
    {"string_operators_and_modifiers", "s CONTAINS[c 'a'", 14, "expected ']' after 'c'"},
    {"string_operators_and_modifiers", "s STARTSWITH 'a'", 3, "expected a comparison operator"},
    {"integers", "a == 0x", 6, "expected hex digits after '0x'"},
    {"integers", "a == 0x10000000000000000", 6, "hex integer out of the 64-bit range"},
    {"integers", "a == 0x8000000000000000", 6, "hex integer out of the 64-bit range"},
    {"integers", "a == 12abc", 8, "unexpected character after a number"},
    {"floats_and_decimals", "a == 1e", 6, "expected digits in the exponent"},
    {"floats_and_decimals", "a == 1.5.2", 9, "expected"},
    {"floats_and_decimals", "a == -x", 6, "expected a number after '-'"},
    {"strings", "s == 'abc", 6, "unterminated string (expected a closing ')"},
    {"strings", "s == \"abc\\\"", 6, "unterminated string"},
    {"strings", "s == 'a\\qb'", 8, "unknown escape"},
    {"binary", "b == B64\"a$b=\"", 6, "expected base64 text"},
    {"binary", "b == B64\"abc", 6, "unterminated B64 literal"},
    {"dates", "d == T5:-1", 6, "must have the sign of the seconds"},
    {"dates", "d == T1:1000000000", 6, "out of range"},
    {"dates", "d == T99999999999999999999:0", 6, "seconds of a T<seconds>:<nanoseconds> date out of range"},
    {"dates", "d == 2017-13-01@00:00:00", 6, "date 2017-13-01@00:00:00 does not exist"},
    {"dates", "d == 2017-02-29@00:00:00", 6, "does not exist"},
    {"dates", "d == 2017-01-01@24:00:00", 6, "does not exist"},
    {"dates", "d == 2017-01-01", 6, "expected a date YYYY-MM-DD@HH:MM:SS"},
    {"dates", "d == 2017-01-01@1:2:3:1234567890", 6, "expected a date"},
    {"object_ids_uuids_and_words", "id == oid(6001c033600510df3bbfd86)", 7, "expected 24 hex digits in oid(...)"},
    {"object_ids_uuids_and_words", "id == oid(6001c033600510df3bbfd86g)", 7, "expected 24 hex digits"},
    {"object_ids_uuids_and_words", "id == oid(6001c033600510df3bbfd864", 7, "expected 24 hex digits"},
    {"object_ids_uuids_and_words", "id == uuid(d1b186e1e9e0-4768-a1a7-c492519d47ee0)", 7, "expected a UUID"},
    {"arguments", "a == $", 6, "expected an argument number or a variable name after '$'"},
    {"arguments", "a == $2x", 8, "unexpected character after argument $2"},
    {"arguments", "a == $99999999999", 6, "argument number too large"},
    {"key_paths", "a. == 1", 4, "expected a property name or an @operator after '.', found '=='"},
    {"key_paths", "a[x] == 1", 3, "expected an index, FIRST, LAST or a 'key' after '[', found 'x'"},
    {"key_paths", "a[-1] == 1", 3, "expected an index"},
    {"key_paths", "a[1 == 1", 5, "expected ']' after '1', found '=='"},
    {"key_paths", "a.@bogus == 1", 3, "unknown key path operator '@bogus'"},
    {"key_paths", "a.@count.b == 1", 9, "expected a comparison operator"},
    {"key_paths", "a.@sum.b.c == 1", 9, "expected a comparison operator"},
    {"key_paths", "a.@sum.@count == 1", 8, "expected a property name after '.', found '@count'"},
    {"key_paths", "@count == 1", 1, "expected a predicate"},
    {"key_paths", "ANY 5 == 1", 5, "expected a key path, a {list} or an argument after 'ANY', found '5'"},
    {"key_paths", "AND == 1", 1, "expected a predicate"},
    {"backlinks_and_subqueries", "@links == 1", 8, "expected '.Class.property' or '.@count' after '@links'"},
    {"backlinks_and_subqueries", "@links.Person == 1", 15, "expected '.property'"},
    {"backlinks_and_subqueries", "@links.Person. == 1", 16, "expected the linking property of the class"},
    {"backlinks_and_subqueries", "$x.age > 1", 1, "unknown variable '$x' (variables are declared by SUBQUERY)"},
    {"backlinks_and_subqueries", "SUBQUERY(dogs, $d, $e.age > 1).@count > 0", 20, "unknown variable '$e'"},
    {"backlinks_and_subqueries", "SUBQUERY(dogs, d, d.age > 1).@count > 0", 16, "expected a variable such as $x after ','"},
    {"backlinks_and_subqueries", "SUBQUERY(dogs, $d, $d.age > 1) > 0", 32, "expected '.@count' (a SUBQUERY counts its matches)"},
    {"backlinks_and_subqueries", "SUBQUERY(dogs, $d, $d.age > 1).@sum > 0", 32, "expected @count after '.', found '@sum'"},
    {"backlinks_and_subqueries", "SUBQUERY(dogs, $d, $d.age > 1 > 0", 31, "expected ')'"},
    {"sort_distinct_limit", "a == 1 SORT(a)", 14, "expected ASC or DESC after 'a', found ')'"},
    {"sort_distinct_limit", "a == 1 SORT()", 13, "expected a key path after '(', found ')'"},
    {"sort_distinct_limit", "a == 1 DISTINCT(a b)", 19, "expected ',' or ')' after 'a', found 'b'"},
    {"sort_distinct_limit", "a == 1 LIMIT(-1)", 14, "expected a non-negative integer after '(', found '-1'"},
    {"sort_distinct_limit", "a == 1 LIMIT(1.5)", 14, "expected a non-negative integer"},
    {"sort_distinct_limit", "a == 1 LIMIT 5", 14, "expected '(' after 'LIMIT', found '5'"},
    {"sort_distinct_limit", "SORT(a ASC)", 1, "expected a predicate (a key path, a value or an argument), found the keyword 'SORT'"},
    {"sort_distinct_limit", "a == 1 LIMIT(1) AND b == 2", 17, "expected SORT, DISTINCT, LIMIT or the end of the query, found the keyword 'AND'"},
    {"sort_distinct_limit", "a == 1 b == 2", 8, "expected AND, OR, SORT, DISTINCT, LIMIT or the end of the query, found 'b'"},
    {"error_messages_and_offsets", "intCol == )", 11, "expected a value, an argument or a key path after '==', found ')'"},
    {"error_messages_and_offsets", "", 1, "expected a predicate, found the end of the query"},
    {"error_messages_and_offsets", "   ", 4, "expected a predicate, found the end of the query"},
    {"error_messages_and_offsets", "a ==", 5, "found the end of the query"},
    {"error_messages_and_offsets", "(a == 1", 8, "expected ')' after '1', found the end of the query"},
    {"error_messages_and_offsets", "a == 1)", 7, "found ')'"},
    {"error_messages_and_offsets", "a == 1 & b == 2", 8, "expected '&&', found a single '&'"},
    {"error_messages_and_offsets", "a == 1 | b == 2", 8, "expected '||', found a single '|'"},
    {"error_messages_and_offsets", "a # 1", 3, "unexpected character '#'"},
    {"error_messages_and_offsets", "a == @", 6, "expected a name after '@'"},
    {"error_messages_and_offsets", "a IN", 5, "expected a list, an argument or a key path after 'IN'"},
    {"error_messages_and_offsets", "NOT", 4, "expected a predicate"},
    /* offsets count characters, not bytes */
    {"error_messages_and_offsets", "grüße == )", 10, "found ')'"},
    /* a long culprit is shortened in the message */
    {"error_messages_and_offsets", "a == 1 bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 8, "...'"},
};

/* Every row of `topic` prints as its canonical text (a fixed point); the
 * topic has at least one row, so a misspelt topic cannot pass silently. */
static void check_canonical_cases(const char *topic)
{
    size_t rows = 0;
    for (size_t i = 0; i < sizeof canonical_cases / sizeof canonical_cases[0]; i++) {
        const canonical_case *c = &canonical_cases[i];
        if (strcmp(c->topic, topic) != 0)
            continue;
        char *printed;
        cf_query *q = parse_round_trip(c->text, &printed);
        if (strcmp(printed, c->canonical) != 0)
            fail_msg("\"%s\" printed as \"%s\", expected \"%s\"", c->text, printed, c->canonical);
        free(printed);
        cf_query_free(q);
        rows++;
    }
    assert_true(rows > 0);
}

/* Every row of `topic` fails to parse with its positioned message. */
static void check_error_cases(const char *topic)
{
    size_t rows = 0;
    for (size_t i = 0; i < sizeof error_cases / sizeof error_cases[0]; i++) {
        const error_case *c = &error_cases[i];
        if (strcmp(c->topic, topic) != 0)
            continue;
        check_error(__FILE__, __LINE__, c->text, strlen(c->text), c->at, c->needle);
        rows++;
    }
    assert_true(rows > 0);
}

/* ------------------------------------------------------------------------ */
/* Comparisons                                                               */
/* ------------------------------------------------------------------------ */

static void test_comparison_spellings(void **state)
{
    (void)state;
    check_canonical_cases("comparison_spellings");

    cf_query *q = parse("age >= 18");
    assert_int_equal(q->where->kind, CF_QP_COMPARE);
    assert_int_equal(q->where->u.compare.op, CF_QC_GE);
    assert_int_equal(left(q)->kind, CF_QE_PATH);
    assert_int_equal(left(q)->u.path.count, 1);
    assert_string_equal(left(q)->u.path.elems[0].name, "age");
    assert_int_equal(right(q)->kind, CF_QE_VALUE);
    assert_int_equal(right(q)->u.value.kind, CF_QV_INT);
    assert_int_equal(right(q)->u.value.u.num.integer, 18);
    assert_int_equal(right(q)->offset, 7);
    cf_query_free(q);
}

static void test_between_and_in(void **state)
{
    (void)state;
    check_canonical_cases("between_and_in");

    cf_query *q = parse("n IN {1, $3, null}");
    assert_int_equal(q->where->u.compare.op, CF_QC_IN);
    assert_int_equal(right(q)->kind, CF_QE_LIST);
    assert_int_equal(right(q)->u.list.count, 3);
    assert_int_equal(right(q)->u.list.items[1].kind, CF_QE_ARG);
    assert_int_equal(right(q)->u.list.items[1].u.arg, 3);
    assert_int_equal(right(q)->u.list.items[2].u.value.kind, CF_QV_NULL);
    assert_int_equal(q->arg_count, 4);
    cf_query_free(q);

    check_error_cases("between_and_in");
}

static void test_string_operators_and_modifiers(void **state)
{
    (void)state;
    check_canonical_cases("string_operators_and_modifiers");

    cf_query *q = parse("s BEGINSWITH[cd] 'x'");
    assert_int_equal(q->where->u.compare.op, CF_QC_BEGINSWITH);
    assert_int_equal(q->where->u.compare.modifiers, CF_QM_CASE_INSENSITIVE | CF_QM_DIACRITIC_INSENSITIVE);
    cf_query_free(q);
    q = parse("s ENDSWITH[d] 'x'");
    assert_int_equal(q->where->u.compare.modifiers, CF_QM_DIACRITIC_INSENSITIVE);
    cf_query_free(q);

    check_error_cases("string_operators_and_modifiers");
}

/* ------------------------------------------------------------------------ */
/* Logic and precedence                                                      */
/* ------------------------------------------------------------------------ */

static void test_precedence(void **state)
{
    (void)state;
    /* AND binds tighter than OR. */
    cf_query *q = parse("a == 1 || b == 2 && c == 3");
    assert_int_equal(q->where->kind, CF_QP_OR);
    assert_int_equal(q->where->u.children.count, 2);
    assert_int_equal(q->where->u.children.items[0]->kind, CF_QP_COMPARE);
    assert_int_equal(q->where->u.children.items[1]->kind, CF_QP_AND);
    cf_query_free(q);

    q = parse("(a == 1 OR b == 2) AND c == 3");
    assert_int_equal(q->where->kind, CF_QP_AND);
    assert_int_equal(q->where->u.children.items[0]->kind, CF_QP_OR);
    cf_query_free(q);

    /* A chain is one node, whatever its length. */
    q = parse("a == 1 and b == 2 AND c == 3 && d == 4");
    assert_int_equal(q->where->kind, CF_QP_AND);
    assert_int_equal(q->where->u.children.count, 4);
    cf_query_free(q);

    /* NOT binds tighter than AND. */
    q = parse("NOT a == 1 AND b == 2");
    assert_int_equal(q->where->kind, CF_QP_AND);
    assert_int_equal(q->where->u.children.items[0]->kind, CF_QP_NOT);
    cf_query_free(q);

    check_canonical_cases("precedence");
}

static void test_long_chains_and_nesting_limit(void **state)
{
    (void)state;
    /* 20,000 operands: no recursion per operand. */
    size_t n = 20000, cap = n * 16 + 1, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, cap - len, "%sa == %zu", i ? " && " : "", i % 10);
    cf_query *q = parse(text);
    assert_int_equal(q->where->u.children.count, n);
    cf_query_free(q);

    /* Nesting up to the limit parses; one more level is an error, not a crash. */
    len = 0;
    for (int i = 0; i < CF_QUERY_MAX_DEPTH; i++)
        text[len++] = '(';
    len += (size_t)snprintf(text + len, cap - len, "a == 1");
    for (int i = 0; i < CF_QUERY_MAX_DEPTH; i++)
        text[len++] = ')';
    text[len] = '\0';
    q = parse(text);
    cf_query_free(q);
    memmove(text + 1, text, len + 1);
    text[0] = '!';
    assert_parse_error(text, CF_QUERY_MAX_DEPTH + 1, "deeper than");
    free(text);
}

/* ------------------------------------------------------------------------ */
/* Literals                                                                  */
/* ------------------------------------------------------------------------ */

static const cf_qvalue *rvalue(cf_query *q)
{
    assert_int_equal(right(q)->kind, CF_QE_VALUE);
    return &right(q)->u.value;
}

static void test_integers(void **state)
{
    (void)state;
    cf_query *q = parse("a == 0x1F");
    assert_int_equal(rvalue(q)->kind, CF_QV_INT);
    assert_int_equal(rvalue(q)->u.num.integer, 31);
    cf_query_free(q);
    q = parse("a == -0X7fffffffffffffff");
    assert_int_equal(rvalue(q)->u.num.integer, -INT64_MAX);
    cf_query_free(q);
    q = parse("a == -9223372036854775808");
    assert_true(rvalue(q)->u.num.integer == INT64_MIN);
    cf_query_free(q);
    q = parse("a == -0x8000000000000000");
    assert_true(rvalue(q)->u.num.integer == INT64_MIN);
    cf_query_free(q);
    q = parse("a == +42");
    assert_int_equal(rvalue(q)->u.num.integer, 42);
    assert_true(rvalue(q)->u.num.has_decimal);
    cf_query_free(q);
    /* Beyond int64: a float literal, still exact as decimal128. */
    q = parse("a == 9223372036854775808");
    assert_int_equal(rvalue(q)->kind, CF_QV_FLOAT);
    assert_string_equal(rvalue(q)->u.num.text, "9223372036854775808");
    assert_true(rvalue(q)->u.num.has_decimal);
    cf_query_free(q);

    check_canonical_cases("integers");
    check_error_cases("integers");
}

static void test_floats_and_decimals(void **state)
{
    (void)state;
    cf_query *q = parse("a == -1.001");
    assert_int_equal(rvalue(q)->kind, CF_QV_FLOAT);
    assert_true(rvalue(q)->u.num.number == -1.001);
    assert_string_equal(rvalue(q)->u.num.text, "-1.001");
    cf_query_free(q);
    q = parse("a == 1.50");
    char buf[COFFER_DECIMAL128_STRING_SIZE];
    assert_true(rvalue(q)->u.num.has_decimal);
    coffer_decimal128_to_string(&rvalue(q)->u.num.decimal, buf);
    assert_string_equal(buf, "1.50"); /* the precision a decimal128 column keeps */
    cf_query_free(q);
    q = parse("a == 2.5e-3");
    assert_true(rvalue(q)->u.num.number == 2.5e-3);
    cf_query_free(q);
    q = parse("a == .5");
    assert_true(rvalue(q)->u.num.number == 0.5);
    cf_query_free(q);
    /* More digits than decimal128 holds: still a double. */
    q = parse("a == 1.23456789012345678901234567890123456789");
    assert_false(rvalue(q)->u.num.has_decimal);
    assert_true(fabs(rvalue(q)->u.num.number - 1.2345678901234568) < 1e-15);
    cf_query_free(q);
    q = parse("a == inf");
    assert_true(isinf(rvalue(q)->u.num.number) && rvalue(q)->u.num.number > 0);
    cf_query_free(q);
    q = parse("a == -Infinity");
    assert_true(isinf(rvalue(q)->u.num.number) && rvalue(q)->u.num.number < 0);
    assert_true(rvalue(q)->u.num.has_decimal);
    cf_query_free(q);
    q = parse("a == NaN");
    assert_true(isnan(rvalue(q)->u.num.number));
    cf_query_free(q);

    check_canonical_cases("floats_and_decimals");
    check_error_cases("floats_and_decimals");
}

static void test_strings(void **state)
{
    (void)state;
    cf_query *q = parse("s == 'it\\'s \"q\"'");
    assert_int_equal(rvalue(q)->kind, CF_QV_STRING);
    assert_string_equal(rvalue(q)->u.bytes.data, "it's \"q\"");
    cf_query_free(q);

    q = parse("s == \"\\\"\\n\\0\\r\\\\'\\t\\/\\b\\f\\v\"");
    const char expected[] = "\"\n\0\r\\'\t/\b\f\v";
    assert_int_equal(rvalue(q)->u.bytes.size, sizeof expected - 1);
    assert_memory_equal(rvalue(q)->u.bytes.data, expected, sizeof expected - 1);
    cf_query_free(q);

    q = parse("s == ''");
    assert_int_equal(rvalue(q)->u.bytes.size, 0);
    assert_string_equal(rvalue(q)->u.bytes.data, "");
    cf_query_free(q);

    q = parse("s == 'grüße'");
    assert_string_equal(rvalue(q)->u.bytes.data, "grüße");
    cf_query_free(q);

    check_canonical_cases("strings");
    check_error_cases("strings");
}

static void test_binary(void **state)
{
    (void)state;
    cf_query *q = parse("b == B64\"AAEC/w==\"");
    assert_int_equal(rvalue(q)->kind, CF_QV_BINARY);
    assert_int_equal(rvalue(q)->u.bytes.size, 4);
    assert_memory_equal(rvalue(q)->u.bytes.data, "\x00\x01\x02\xff", 4);
    cf_query_free(q);
    q = parse("b == B64''");
    assert_int_equal(rvalue(q)->u.bytes.size, 0);
    cf_query_free(q);
    check_canonical_cases("binary");
    check_error_cases("binary");
}

static void test_dates(void **state)
{
    (void)state;
    cf_query *q = parse("d == T1:2");
    assert_int_equal(rvalue(q)->kind, CF_QV_DATE);
    assert_int_equal(rvalue(q)->u.date.seconds, 1);
    assert_int_equal(rvalue(q)->u.date.nanoseconds, 2);
    cf_query_free(q);
    q = parse("d == T-5:-300");
    assert_int_equal(rvalue(q)->u.date.seconds, -5);
    assert_int_equal(rvalue(q)->u.date.nanoseconds, -300);
    cf_query_free(q);
    q = parse("d > 2017-12-04@10:20:30");
    assert_int_equal(rvalue(q)->u.date.seconds, 1512382830);
    assert_int_equal(rvalue(q)->u.date.nanoseconds, 0);
    cf_query_free(q);
    q = parse("d > 2000-02-29T00:00:00:123456789");
    assert_int_equal(rvalue(q)->u.date.seconds, 951782400);
    assert_int_equal(rvalue(q)->u.date.nanoseconds, 123456789);
    cf_query_free(q);
    /* Before 1970, the nanoseconds carry the sign of the seconds. */
    q = parse("d == 1969-12-31@23:59:59:5");
    assert_int_equal(rvalue(q)->u.date.seconds, 0);
    assert_int_equal(rvalue(q)->u.date.nanoseconds, -999999995);
    cf_query_free(q);
    q = parse("d == 1900-01-01@00:00:00");
    assert_int_equal(rvalue(q)->u.date.seconds, -2208988800LL);
    cf_query_free(q);

    check_canonical_cases("dates");
    check_error_cases("dates");
}

static void test_object_ids_uuids_and_words(void **state)
{
    (void)state;
    cf_query *q = parse("id == oid(6001c033600510df3bbfd864)");
    assert_int_equal(rvalue(q)->kind, CF_QV_OBJECT_ID);
    assert_int_equal(rvalue(q)->u.object_id.bytes[0], 0x60);
    assert_int_equal(rvalue(q)->u.object_id.bytes[11], 0x64);
    cf_query_free(q);
    q = parse("id == uuid(d1b186e1-e9e0-4768-a1a7-c492519d47ee)");
    assert_int_equal(rvalue(q)->kind, CF_QV_UUID);
    assert_int_equal(rvalue(q)->u.uuid.bytes[0], 0xd1);
    assert_int_equal(rvalue(q)->u.uuid.bytes[15], 0xee);
    cf_query_free(q);
    check_canonical_cases("object_ids_uuids_and_words");
    check_error_cases("object_ids_uuids_and_words");

    q = parse("b == TRUE");
    assert_int_equal(rvalue(q)->kind, CF_QV_BOOL);
    assert_true(rvalue(q)->u.boolean);
    cf_query_free(q);
}

static void test_arguments(void **state)
{
    (void)state;
    cf_query *q = parse("a == $0 && b == $12");
    assert_int_equal(q->arg_count, 13);
    cf_query_free(q);
    q = parse("TRUEPREDICATE");
    assert_int_equal(q->arg_count, 0);
    cf_query_free(q);
    check_canonical_cases("arguments");
    check_error_cases("arguments");
}

/* ------------------------------------------------------------------------ */
/* Key paths                                                                 */
/* ------------------------------------------------------------------------ */

static void test_key_paths(void **state)
{
    (void)state;
    cf_query *q = parse("owner.address.city == 'Oslo'");
    const cf_qpath *p = &left(q)->u.path;
    assert_int_equal(p->count, 3);
    assert_int_equal(p->quantifier, CF_QQ_NONE_GIVEN);
    assert_string_equal(p->elems[2].name, "city");
    cf_query_free(q);

    q = parse("list[FIRST].x == 1 && list[LAST] == 2 && list[3] == 1 && map['k\\'ey'] == 4");
    const cf_qpred *const *c = q->where->u.children.items;
    assert_int_equal(c[0]->u.compare.left.u.path.elems[1].kind, CF_QK_FIRST);
    assert_int_equal(c[1]->u.compare.left.u.path.elems[1].kind, CF_QK_LAST);
    assert_int_equal(c[2]->u.compare.left.u.path.elems[1].kind, CF_QK_INDEX);
    assert_int_equal(c[2]->u.compare.left.u.path.elems[1].index, 3);
    assert_int_equal(c[3]->u.compare.left.u.path.elems[1].kind, CF_QK_KEY);
    assert_string_equal(c[3]->u.compare.left.u.path.elems[1].name, "k'ey");
    cf_query_free(q);

    q = parse("ANY tags == 'a' AND SOME tags == 'b' AND ALL tags == 'c' AND NONE tags == 'd'");
    c = q->where->u.children.items;
    assert_int_equal(c[0]->u.compare.left.u.path.quantifier, CF_QQ_ANY);
    assert_int_equal(c[1]->u.compare.left.u.path.quantifier, CF_QQ_ANY);
    assert_int_equal(c[2]->u.compare.left.u.path.quantifier, CF_QQ_ALL);
    assert_int_equal(c[3]->u.compare.left.u.path.quantifier, CF_QQ_NONE);
    cf_query_free(q);

    q = parse("items.@sum.price > 10");
    p = &left(q)->u.path;
    assert_int_equal(p->count, 3);
    assert_int_equal(p->elems[1].kind, CF_QK_SUM);
    assert_int_equal(p->elems[2].kind, CF_QK_PROPERTY);
    cf_query_free(q);

    q = parse("name.length > 3");
    assert_int_equal(left(q)->u.path.elems[1].kind, CF_QK_PROPERTY);
    assert_string_equal(left(q)->u.path.elems[1].name, "length");
    cf_query_free(q);

    check_canonical_cases("key_paths");
    check_error_cases("key_paths");
}

static void test_backlinks_and_subqueries(void **state)
{
    (void)state;
    cf_query *q = parse("@links.Person.dogs.@count > 1");
    const cf_qpath *p = &left(q)->u.path;
    assert_int_equal(p->count, 2);
    assert_int_equal(p->elems[0].kind, CF_QK_BACKLINKS);
    assert_string_equal(p->elems[0].name, "Person");
    assert_string_equal(p->elems[0].property, "dogs");
    assert_int_equal(p->elems[1].kind, CF_QK_COUNT);
    cf_query_free(q);

    q = parse("@links.@count == 0");
    p = &left(q)->u.path;
    assert_int_equal(p->count, 2);
    assert_int_equal(p->elems[0].kind, CF_QK_ALL_BACKLINKS);
    assert_int_equal(p->elems[1].kind, CF_QK_COUNT);
    cf_query_free(q);

    q = parse("SUBQUERY(dogs, $d, $d.age > 2 AND $d.name BEGINSWITH 'R').@count > 0");
    assert_int_equal(left(q)->kind, CF_QE_SUBQUERY);
    assert_string_equal(left(q)->u.subquery.variable, "d");
    assert_string_equal(left(q)->u.subquery.path.elems[0].name, "dogs");
    const cf_qpred *w = left(q)->u.subquery.where;
    assert_int_equal(w->kind, CF_QP_AND);
    assert_int_equal(w->u.children.items[0]->u.compare.left.u.path.elems[0].kind, CF_QK_VARIABLE);
    assert_string_equal(w->u.children.items[0]->u.compare.left.u.path.elems[0].name, "d");
    cf_query_free(q);

    check_canonical_cases("backlinks_and_subqueries");

    check_error_cases("backlinks_and_subqueries");
}

/* ------------------------------------------------------------------------ */
/* SORT, DISTINCT, LIMIT                                                     */
/* ------------------------------------------------------------------------ */

static void test_sort_distinct_limit(void **state)
{
    (void)state;
    cf_query *q = parse("age > 20 SORT(age ASC, name DESC) DISTINCT(name) LIMIT(5) SORT(x.y Descending)");
    assert_int_equal(q->post_count, 4);
    assert_int_equal(q->post[0].kind, CF_QO_SORT);
    assert_int_equal(q->post[0].count, 2);
    assert_true(q->post[0].keys[0].ascending);
    assert_false(q->post[0].keys[1].ascending);
    assert_int_equal(q->post[1].kind, CF_QO_DISTINCT);
    assert_string_equal(q->post[1].keys[0].path.elems[0].name, "name");
    assert_int_equal(q->post[2].kind, CF_QO_LIMIT);
    assert_int_equal(q->post[2].limit, 5);
    assert_int_equal(q->post[3].keys[0].path.count, 2);
    cf_query_free(q);

    check_canonical_cases("sort_distinct_limit");

    check_error_cases("sort_distinct_limit");
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

static void test_error_messages_and_offsets(void **state)
{
    (void)state;
    check_error_cases("error_messages_and_offsets");
    /* The text need not be NUL-terminated, and a NUL byte is no terminator. */
    check_error(__FILE__, __LINE__, "a == 1\0b", 8, 7, "unexpected character '\\x00'");
    cf_query *q = NULL;
    assert_int_equal(cf_query_parse("a == 12345", 6, &q, NULL), COFFER_OK);
    assert_int_equal(right(q)->u.value.u.num.integer, 1);
    cf_query_free(q);
    /* The byte offset is reported too. */
    size_t off = 0;
    assert_int_equal(cf_query_parse("ü == )", strlen("ü == )"), &q, &off), COFFER_ERR_INVALID_ARGUMENT);
    assert_int_equal(off, 6);
    assert_null(q);
    assert_int_equal(cf_query_parse(NULL, 1, &q, NULL), COFFER_ERR_INVALID_ARGUMENT);
    assert_int_equal(cf_query_parse("a == 1", 6, NULL, NULL), COFFER_ERR_INVALID_ARGUMENT);
    char *s = (char *)1;
    assert_int_equal(cf_query_print(NULL, &s), COFFER_ERR_INVALID_ARGUMENT);
    cf_query_free(NULL);
}

static void test_equality(void **state)
{
    (void)state;
    cf_query *a = parse("a == 1.50 AND b IN {1, 'x'} SORT(a ASC)");
    cf_query *b = parse("(a = 1.50) && b in {1, \"x\"} SORT(a ascending)");
    cf_query *c = parse("a == 1.5 AND b IN {1, 'x'} SORT(a ASC)");
    cf_query *d = parse("a == 1.50 AND b IN {1, 'x'} SORT(a DESC)");
    assert_true(cf_query_equal(a, b));
    assert_false(cf_query_equal(a, c));
    assert_false(cf_query_equal(a, d));
    assert_false(cf_query_equal(a, NULL));
    assert_true(cf_query_equal(NULL, NULL));
    cf_query_free(a);
    cf_query_free(b);
    cf_query_free(c);
    cf_query_free(d);
}

/* ------------------------------------------------------------------------ */
/* Conformance suite                                                         */
/* ------------------------------------------------------------------------ */

/* A JSON reader just large enough to walk the suite: it skips values and
 * decodes strings. */
typedef struct json {
    const char *s;
    size_t pos, len;
} json;

static void json_ws(json *j)
{
    while (j->pos < j->len && strchr(" \t\r\n", j->s[j->pos]))
        j->pos++;
}

static bool json_char(json *j, char c)
{
    json_ws(j);
    if (j->pos < j->len && j->s[j->pos] == c) {
        j->pos++;
        return true;
    }
    return false;
}

/* Decodes a JSON string (ASCII escapes, which is all the suite uses) into a
 * malloc()ed buffer. */
static char *json_string(json *j)
{
    json_ws(j);
    assert_true(j->pos < j->len && j->s[j->pos] == '"');
    char *out = malloc(j->len - j->pos);
    assert_non_null(out);
    size_t o = 0;
    for (j->pos++; j->s[j->pos] != '"'; j->pos++) {
        char c = j->s[j->pos];
        if (c == '\\') {
            c = j->s[++j->pos];
            c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
            assert_true(c != 'u'); /* not used by the suite */
        }
        out[o++] = c;
    }
    j->pos++;
    out[o] = '\0';
    return out;
}

static void json_skip(json *j)
{
    json_ws(j);
    char c = j->s[j->pos];
    if (c == '"') {
        free(json_string(j));
    } else if (c == '[' || c == '{') {
        char close = c == '[' ? ']' : '}';
        j->pos++;
        if (json_char(j, close))
            return;
        do {
            if (close == '}') {
                free(json_string(j));
                assert_true(json_char(j, ':'));
            }
            json_skip(j);
        } while (json_char(j, ','));
        assert_true(json_char(j, close));
    } else {
        while (j->pos < j->len && !strchr(",]} \t\r\n", j->s[j->pos]))
            j->pos++;
    }
}

static size_t parsed_cases, throwing_cases;

/* One test array: ["QueryCount", n, Class, query, args...] and friends. */
static void conformance_case(json *j)
{
    assert_true(json_char(j, '['));
    char *kind = json_string(j);
    size_t skip = 0;
    bool must_parse = true;
    if (strcmp(kind, "QueryCount") == 0 || strcmp(kind, "ObjectSet") == 0) {
        skip = 2;
    } else if (strcmp(kind, "QueryThrows") == 0) {
        skip = 1;
        must_parse = false;
    } else {
        assert_string_equal(kind, "Disabled");
        while (json_char(j, ','))
            json_skip(j);
        assert_true(json_char(j, ']'));
        free(kind);
        return;
    }
    for (size_t i = 0; i < skip; i++) {
        assert_true(json_char(j, ','));
        json_skip(j);
    }
    assert_true(json_char(j, ','));
    char *text = json_string(j);
    cf_query *q = NULL;
    coffer_status st = cf_query_parse(text, strlen(text), &q, NULL);
    if (must_parse) {
        if (st != COFFER_OK)
            fail_msg("conformance query \"%s\" does not parse: %s", text, coffer_last_error());
        cf_query_free(q);
        cf_query_free(parse(text)); /* and prints back to a fixed point */
        parsed_cases++;
    } else {
        if (st == COFFER_OK) /* rejected later, by the binder; it still round-trips */
            cf_query_free(parse(text));
        cf_query_free(q);
        throwing_cases++;
    }
    free(text);
    free(kind);
    while (json_char(j, ','))
        json_skip(j);
    assert_true(json_char(j, ']'));
}

static void test_conformance_queries_parse(void **state)
{
    (void)state;
    FILE *f = fopen(COFFER_CONFORMANCE_FILE, "rb");
    if (!f)
        fail_msg("cannot open %s", COFFER_CONFORMANCE_FILE);
    static char text[1 << 20];
    size_t len = fread(text, 1, sizeof text, f);
    fclose(f);
    assert_true(len > 0 && len < sizeof text);

    json j = {text, 0, len};
    assert_true(json_char(&j, '{'));
    do {
        free(json_string(&j)); /* suite name */
        assert_true(json_char(&j, ':'));
        assert_true(json_char(&j, '{'));
        do {
            char *key = json_string(&j);
            assert_true(json_char(&j, ':'));
            if (strcmp(key, "tests") == 0) {
                assert_true(json_char(&j, '['));
                do
                    conformance_case(&j);
                while (json_char(&j, ','));
                assert_true(json_char(&j, ']'));
            } else {
                json_skip(&j);
            }
            free(key);
        } while (json_char(&j, ','));
        assert_true(json_char(&j, '}'));
    } while (json_char(&j, ','));
    assert_true(json_char(&j, '}'));
    /* The suite's size, so that a reader that skips cases cannot pass. */
    assert_int_equal(parsed_cases + throwing_cases, 312);
    assert_true(parsed_cases >= 150);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comparison_spellings),
        cmocka_unit_test(test_between_and_in),
        cmocka_unit_test(test_string_operators_and_modifiers),
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_long_chains_and_nesting_limit),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_floats_and_decimals),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_binary),
        cmocka_unit_test(test_dates),
        cmocka_unit_test(test_object_ids_uuids_and_words),
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_key_paths),
        cmocka_unit_test(test_backlinks_and_subqueries),
        cmocka_unit_test(test_sort_distinct_limit),
        cmocka_unit_test(test_error_messages_and_offsets),
        cmocka_unit_test(test_equality),
        cmocka_unit_test(test_conformance_queries_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
