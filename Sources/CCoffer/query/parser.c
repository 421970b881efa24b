/* parser — recursive descent over the lexer's tokens into the tree of
 * query.h. Every error names the offset, what was expected and what was
 * found; recursion is bounded by CF_QUERY_MAX_DEPTH. */
#include <string.h>

#include "util/error.h"
#include "query/lexer.h"

typedef struct parser {
    cf_qscan lx;
    cf_qtoken tok;  /* the current token */
    cf_qtoken prev; /* the token before it, for "after '=='" */
    size_t depth;
    /* Variables of the enclosing SUBQUERYs, innermost last. */
    const char *vars[CF_QUERY_MAX_DEPTH + 1];
    size_t var_lens[CF_QUERY_MAX_DEPTH + 1];
    size_t var_count;
    size_t arg_count;
} parser;

typedef coffer_status status;

#define TRY(expr)                           \
    do {                                    \
        status st_ = (expr);                \
        if (st_ != COFFER_OK)               \
            return st_;                     \
    } while (0)

static status advance(parser *p)
{
    p->prev = p->tok;
    return cf_qlex_next(&p->lx, &p->tok);
}

static const char *describe(const cf_qtoken *t, char *buf, size_t size)
{
    if (t->kind == CF_QT_END)
        return "the end of the query";
    cf_quote(buf, size, t->text, t->len < 32 ? t->len : 32);
    size_t n = strlen(buf);
    if (t->len > 32 && n >= 1 && n + 4 <= size)
        memcpy(buf + n - 1, "...'", 5); /* shortened: say so */
    return buf;
}

static bool is_reserved(const cf_qtoken *t);

/* The token found where something else was expected: a keyword where a
 * name or a value belongs is called one. */
static const char *describe_found(const cf_qtoken *t, char *buf, size_t size)
{
    if (t->kind != CF_QT_IDENT || !is_reserved(t) || size <= 16)
        return describe(t, buf, size);
    memcpy(buf, "the keyword ", 12);
    describe(t, buf + 12, size - 12);
    return buf;
}

static status expected(parser *p, const char *what)
{
    char found[64];
    return cf_qscan_error(&p->lx, p->tok.offset, "expected %s, found %s", what,
                         describe_found(&p->tok, found, sizeof found));
}

/* "expected X after 'prev', found Y" */
static status expected_after(parser *p, const char *what)
{
    char found[64], after[64];
    return cf_qscan_error(&p->lx, p->tok.offset, "expected %s after %s, found %s", what,
                         describe(&p->prev, after, sizeof after),
                         describe_found(&p->tok, found, sizeof found));
}

static status expect(parser *p, cf_qtok_kind kind, const char *what)
{
    if (p->tok.kind != kind)
        return expected_after(p, what);
    return advance(p);
}

static bool is_word(const parser *p, const char *word)
{
    return p->tok.kind == CF_QT_IDENT && cf_qlex_word_is(p->tok.text, p->tok.len, word);
}

static bool is_at(const parser *p, const char *word)
{
    return p->tok.kind == CF_QT_AT && cf_qlex_word_is(p->tok.text + 1, p->tok.len - 1, word);
}

static bool is_reserved(const cf_qtoken *t)
{
    static const char *const words[] = {
        "AND", "OR", "NOT", "BETWEEN", "IN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE",
        "TRUEPREDICATE", "FALSEPREDICATE", "SORT", "DISTINCT", "LIMIT", "SUBQUERY",
        "ANY", "SOME", "ALL", "NONE"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (cf_qlex_word_is(t->text, t->len, words[i]))
            return true;
    return false;
}

static void *alloc(parser *p, size_t size)
{
    return cf_qarena_alloc(p->lx.arena, size);
}

/* Makes room for one more element of a growing array in the arena. */
static status grow(parser *p, void **items, size_t count, size_t *cap, size_t elem)
{
    if (count < *cap)
        return COFFER_OK;
    size_t new_cap = *cap ? *cap * 2 : 4;
    void *n = alloc(p, new_cap * elem);
    if (!n)
        return cf_qscan_no_memory(&p->lx);
    if (count)
        memcpy(n, *items, count * elem);
    *items = n;
    *cap = new_cap;
    return COFFER_OK;
}

static status enter(parser *p)
{
    if (p->depth >= CF_QUERY_MAX_DEPTH)
        return cf_qscan_error(&p->lx, p->tok.offset,
                             "the query nests parentheses, NOT and SUBQUERY deeper than %d levels",
                             CF_QUERY_MAX_DEPTH);
    p->depth++;
    return COFFER_OK;
}

static status parse_or(parser *p, const cf_qpred **out);

/* ---- key paths ----------------------------------------------------------- */

/* The current name token with its escapes ("\ ", "\t", "\n", "\r", which
 * the lexer checked) decoded, in the arena. */
static status name_text(parser *p, const char **name, size_t *size)
{
    const char *s = p->tok.text;
    size_t n = p->tok.len;
    char *out = cf_qarena_strndup(p->lx.arena, s, n);
    if (!out)
        return cf_qscan_no_memory(&p->lx);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' && i + 1 < n) {
            char c = s[++i];
            out[w++] = c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : c;
        } else {
            out[w++] = s[i];
        }
    }
    out[w] = '\0';
    *name = out;
    *size = w;
    return COFFER_OK;
}

static status name_elem(parser *p, cf_qpath_elem *e, cf_qpath_elem_kind kind)
{
    e->kind = kind;
    TRY(name_text(p, &e->name, &e->name_size));
    return advance(p);
}

/* At "@links": "@links.Class.property" or "@links" followed by ".@count". */
static status links_elem(parser *p, cf_qpath_elem *e, bool *needs_count)
{
    TRY(advance(p));
    if (p->tok.kind != CF_QT_DOT)
        return expected_after(p, "'.Class.property' or '.@count'");
    TRY(advance(p));
    if (is_at(p, "count") || is_at(p, "size")) {
        e->kind = CF_QK_ALL_BACKLINKS;
        *needs_count = true;
        return COFFER_OK; /* the @count becomes the next element */
    }
    if (p->tok.kind != CF_QT_IDENT)
        return expected_after(p, "a class name or @count");
    TRY(name_elem(p, e, CF_QK_BACKLINKS));
    TRY(expect(p, CF_QT_DOT, "'.property' (the linking property of the class)"));
    if (p->tok.kind != CF_QT_IDENT)
        return expected_after(p, "the linking property of the class");
    size_t size;
    TRY(name_text(p, &e->property, &size));
    return advance(p);
}

typedef enum { PATH_GOES_ON, PATH_ENDS, PATH_ONE_PROPERTY_MORE } path_state;

/* At an @name after a '.'. */
static status at_elem(parser *p, cf_qpath_elem *e, path_state *state, bool *needs_count)
{
    static const struct {
        const char *name;
        cf_qpath_elem_kind kind;
        path_state then;
    } ops[] = {
        {"count", CF_QK_COUNT, PATH_ENDS},       {"size", CF_QK_COUNT, PATH_ENDS},
        {"sum", CF_QK_SUM, PATH_ONE_PROPERTY_MORE}, {"avg", CF_QK_AVG, PATH_ONE_PROPERTY_MORE},
        {"min", CF_QK_MIN, PATH_ONE_PROPERTY_MORE}, {"max", CF_QK_MAX, PATH_ONE_PROPERTY_MORE},
        {"keys", CF_QK_KEYS, PATH_ENDS},         {"values", CF_QK_VALUES, PATH_GOES_ON},
        {"type", CF_QK_TYPE, PATH_ENDS}};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        if (is_at(p, ops[i].name)) {
            e->kind = ops[i].kind;
            *state = ops[i].then;
            return advance(p);
        }
    }
    if (is_at(p, "links")) {
        TRY(links_elem(p, e, needs_count));
        *state = PATH_GOES_ON;
        return COFFER_OK;
    }
    char found[64];
    return cf_qscan_error(&p->lx, p->tok.offset,
                         "unknown key path operator %s (expected @count, @size, @sum, @avg, "
                         "@min, @max, @keys, @values, @type or @links)",
                         describe(&p->tok, found, sizeof found));
}

static status bracket_elem(parser *p, cf_qpath_elem *e)
{
    TRY(advance(p)); /* [ */
    if (p->tok.kind == CF_QT_VALUE && p->tok.value.kind == CF_QV_INT && p->tok.value.u.num.integer >= 0) {
        e->kind = CF_QK_INDEX;
        e->index = (uint64_t)p->tok.value.u.num.integer;
    } else if (p->tok.kind == CF_QT_VALUE && p->tok.value.kind == CF_QV_STRING) {
        e->kind = CF_QK_KEY;
        e->name = p->tok.value.u.bytes.data;
        e->name_size = p->tok.value.u.bytes.size;
    } else if (is_word(p, "FIRST")) {
        e->kind = CF_QK_FIRST;
    } else if (is_word(p, "LAST")) {
        e->kind = CF_QK_LAST;
    } else {
        return expected_after(p, "an index, FIRST, LAST or a 'key'");
    }
    TRY(advance(p));
    return expect(p, CF_QT_RBRACKET, "']'");
}

static bool variable_known(const parser *p, const char *name, size_t len)
{
    for (size_t i = p->var_count; i-- > 0;)
        if (p->var_lens[i] == len && memcmp(p->vars[i], name, len) == 0)
            return true;
    return false;
}

static status parse_path(parser *p, cf_qquantifier quantifier, const char *what, cf_qpath *out)
{
    cf_qpath_elem *elems = NULL;
    size_t count = 0, cap = 0;
    path_state state = PATH_GOES_ON;
    bool needs_count = false;

    TRY(grow(p, (void **)&elems, count, &cap, sizeof *elems));
    cf_qpath_elem *first = &elems[count++];
    if (p->tok.kind == CF_QT_IDENT && !is_reserved(&p->tok)) {
        TRY(name_elem(p, first, CF_QK_PROPERTY));
    } else if (p->tok.kind == CF_QT_VAR) {
        if (!variable_known(p, p->tok.text + 1, p->tok.len - 1)) {
            char found[64];
            return cf_qscan_error(&p->lx, p->tok.offset,
                                 "unknown variable %s (variables are declared by SUBQUERY)",
                                 describe(&p->tok, found, sizeof found));
        }
        TRY(name_elem(p, first, CF_QK_VARIABLE));
        first->name++;
        first->name_size--;
    } else if (is_at(p, "links")) {
        TRY(links_elem(p, first, &needs_count));
    } else {
        return p->prev.text ? expected_after(p, what) : expected(p, what);
    }

    while (state != PATH_ENDS) {
        TRY(grow(p, (void **)&elems, count, &cap, sizeof *elems));
        cf_qpath_elem *e = &elems[count];
        if (needs_count) {
            /* "@links" was followed by ".@count", which is the current token. */
            e->kind = CF_QK_COUNT;
            TRY(advance(p));
            state = PATH_ENDS;
            needs_count = false;
        } else if (p->tok.kind == CF_QT_DOT) {
            TRY(advance(p));
            if (p->tok.kind == CF_QT_IDENT) {
                TRY(name_elem(p, e, CF_QK_PROPERTY));
                if (state == PATH_ONE_PROPERTY_MORE)
                    state = PATH_ENDS;
            } else if (p->tok.kind == CF_QT_AT && state == PATH_GOES_ON) {
                TRY(at_elem(p, e, &state, &needs_count));
            } else {
                return expected_after(p, state == PATH_GOES_ON ? "a property name or an @operator"
                                                               : "a property name");
            }
        } else if (p->tok.kind == CF_QT_LBRACKET && state == PATH_GOES_ON) {
            TRY(bracket_elem(p, e));
        } else {
            break;
        }
        count++;
    }
    out->quantifier = quantifier;
    out->elems = elems;
    out->count = count;
    return COFFER_OK;
}

/* ---- expressions --------------------------------------------------------- */

static void note_arg(parser *p, size_t arg)
{
    if (arg + 1 > p->arg_count)
        p->arg_count = arg + 1;
}

/* Whether the current token is the word `obj` right before a '(': the
 * object literal (a property named obj stays a property elsewhere). */
static bool at_object_literal(const parser *p)
{
    if (!is_word(p, "obj"))
        return false;
    size_t i = p->lx.pos;
    while (i < p->lx.len && strchr(" \t\r\n\f\v", p->lx.src[i]) && p->lx.src[i])
        i++;
    return i < p->lx.len && p->lx.src[i] == '(';
}

/* At obj: obj('Class', primary key), the key an integer, a string, an
 * object id, a uuid or an argument. */
static status parse_object(parser *p, cf_qexpr *out)
{
    out->kind = CF_QE_OBJECT;
    TRY(advance(p));
    TRY(expect(p, CF_QT_LPAREN, "'('"));
    if (p->tok.kind != CF_QT_VALUE || p->tok.value.kind != CF_QV_STRING)
        return expected_after(p, "the class name as a string");
    out->u.object.cls = p->tok.value.u.bytes.data;
    TRY(advance(p));
    TRY(expect(p, CF_QT_COMMA, "','"));
    cf_qexpr *key = alloc(p, sizeof *key);
    if (!key)
        return cf_qscan_no_memory(&p->lx);
    key->offset = p->tok.offset;
    cf_qvalue_kind k = p->tok.value.kind;
    if (p->tok.kind == CF_QT_VALUE && (k == CF_QV_INT || k == CF_QV_STRING || k == CF_QV_OBJECT_ID || k == CF_QV_UUID)) {
        key->kind = CF_QE_VALUE;
        key->u.value = p->tok.value;
    } else if (p->tok.kind == CF_QT_ARG) {
        key->kind = CF_QE_ARG;
        key->u.arg = p->tok.arg;
        note_arg(p, p->tok.arg);
    } else {
        return expected_after(p, "a primary key (an integer, a string, oid(...), uuid(...) or an argument)");
    }
    out->u.object.key = key;
    TRY(advance(p));
    return expect(p, CF_QT_RPAREN, "')'");
}

/* At '{': literals and arguments separated by commas. */
static status parse_list(parser *p, cf_qexpr *out)
{
    cf_qexpr *items = NULL;
    size_t count = 0, cap = 0;
    out->kind = CF_QE_LIST;
    TRY(advance(p));
    if (p->tok.kind != CF_QT_RBRACE) {
        for (;;) {
            TRY(grow(p, (void **)&items, count, &cap, sizeof *items));
            cf_qexpr *e = &items[count++];
            e->offset = p->tok.offset;
            if (at_object_literal(p)) {
                TRY(parse_object(p, e));
            } else if (p->tok.kind == CF_QT_VALUE) {
                e->kind = CF_QE_VALUE;
                e->u.value = p->tok.value;
                TRY(advance(p));
            } else if (p->tok.kind == CF_QT_ARG) {
                e->kind = CF_QE_ARG;
                e->u.arg = p->tok.arg;
                note_arg(p, p->tok.arg);
                TRY(advance(p));
            } else {
                return expected_after(p, "a value, an argument or obj('Class', key)");
            }
            if (p->tok.kind != CF_QT_COMMA)
                break;
            TRY(advance(p));
        }
    }
    out->u.list.items = items;
    out->u.list.count = count;
    return expect(p, CF_QT_RBRACE, "',' or '}'");
}

static status parse_subquery(parser *p, cf_qexpr *out)
{
    out->kind = CF_QE_SUBQUERY;
    TRY(enter(p));
    TRY(advance(p));
    TRY(expect(p, CF_QT_LPAREN, "'('"));
    TRY(parse_path(p, CF_QQ_NONE_GIVEN, "a key path to a collection", &out->u.subquery.path));
    TRY(expect(p, CF_QT_COMMA, "','"));
    if (p->tok.kind != CF_QT_VAR)
        return expected_after(p, "a variable such as $x");
    const char *name = cf_qarena_strndup(p->lx.arena, p->tok.text + 1, p->tok.len - 1);
    if (!name)
        return cf_qscan_no_memory(&p->lx);
    out->u.subquery.variable = name;
    TRY(advance(p));
    TRY(expect(p, CF_QT_COMMA, "','"));
    p->vars[p->var_count] = name;
    p->var_lens[p->var_count] = strlen(name);
    p->var_count++;
    status st = parse_or(p, &out->u.subquery.where);
    p->var_count--;
    TRY(st);
    TRY(expect(p, CF_QT_RPAREN, "')'"));
    TRY(expect(p, CF_QT_DOT, "'.@count' (a SUBQUERY counts its matches)"));
    if (!is_at(p, "count") && !is_at(p, "size"))
        return expected_after(p, "@count");
    p->depth--;
    return advance(p);
}

static status parse_expr(parser *p, const char *what, cf_qexpr *out)
{
    out->offset = p->tok.offset;
    switch (p->tok.kind) {
    case CF_QT_VALUE:
        out->kind = CF_QE_VALUE;
        out->u.value = p->tok.value;
        return advance(p);
    case CF_QT_ARG:
        out->kind = CF_QE_ARG;
        out->u.arg = p->tok.arg;
        note_arg(p, p->tok.arg);
        return advance(p);
    case CF_QT_LBRACE:
        return parse_list(p, out);
    default:
        break;
    }
    if (at_object_literal(p))
        return parse_object(p, out);
    out->kind = CF_QE_PATH;
    cf_qquantifier q = CF_QQ_NONE_GIVEN;
    if (is_word(p, "ANY") || is_word(p, "SOME"))
        q = CF_QQ_ANY;
    else if (is_word(p, "ALL"))
        q = CF_QQ_ALL;
    else if (is_word(p, "NONE"))
        q = CF_QQ_NONE;
    if (q != CF_QQ_NONE_GIVEN) {
        TRY(advance(p));
        if (p->tok.kind == CF_QT_LBRACE) {
            TRY(parse_list(p, out));
            out->u.list.quantifier = q;
            return COFFER_OK;
        }
        if (p->tok.kind == CF_QT_ARG) { /* the values of a list argument */
            cf_qexpr *item = alloc(p, sizeof *item);
            if (!item)
                return cf_qscan_no_memory(&p->lx);
            item->kind = CF_QE_ARG;
            item->offset = p->tok.offset;
            item->u.arg = p->tok.arg;
            note_arg(p, p->tok.arg);
            out->kind = CF_QE_LIST;
            out->u.list.items = item;
            out->u.list.count = 1;
            out->u.list.quantifier = q;
            return advance(p);
        }
        return parse_path(p, q, "a key path, a {list} or an argument", &out->u.path);
    }
    if (is_word(p, "SUBQUERY"))
        return parse_subquery(p, out);
    return parse_path(p, q, what, &out->u.path);
}

/* ---- predicates ---------------------------------------------------------- */

static bool comparison_op(parser *p, cf_qcompare_op *op)
{
    static const struct {
        cf_qtok_kind kind;
        cf_qcompare_op op;
    } symbols[] = {{CF_QT_EQ, CF_QC_EQ}, {CF_QT_NE, CF_QC_NE}, {CF_QT_LT, CF_QC_LT},
                   {CF_QT_LE, CF_QC_LE}, {CF_QT_GT, CF_QC_GT}, {CF_QT_GE, CF_QC_GE}};
    static const struct {
        const char *word;
        cf_qcompare_op op;
    } words[] = {{"BEGINSWITH", CF_QC_BEGINSWITH}, {"ENDSWITH", CF_QC_ENDSWITH},
                 {"CONTAINS", CF_QC_CONTAINS},     {"LIKE", CF_QC_LIKE},
                 {"IN", CF_QC_IN},                 {"BETWEEN", CF_QC_BETWEEN}};
    for (size_t i = 0; i < sizeof symbols / sizeof *symbols; i++)
        if (p->tok.kind == symbols[i].kind) {
            *op = symbols[i].op;
            return true;
        }
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (is_word(p, words[i].word)) {
            *op = words[i].op;
            return true;
        }
    return false;
}

static status parse_modifiers(parser *p, cf_qcompare_op op, unsigned *mods)
{
    if (p->tok.kind != CF_QT_LBRACKET)
        return COFFER_OK;
    if (op != CF_QC_EQ && op != CF_QC_NE && op != CF_QC_IN && op != CF_QC_BEGINSWITH &&
        op != CF_QC_ENDSWITH && op != CF_QC_CONTAINS && op != CF_QC_LIKE)
        return expected_after(p, "a value ([c] and [d] apply to ==, !=, IN and the string operators)");
    TRY(advance(p));
    if (p->tok.kind == CF_QT_IDENT) {
        unsigned m = 0;
        bool ok = p->tok.len <= 2;
        for (size_t i = 0; ok && i < p->tok.len; i++) {
            unsigned bit = p->tok.text[i] == 'c' ? CF_QM_CASE_INSENSITIVE
                           : p->tok.text[i] == 'd' ? CF_QM_DIACRITIC_INSENSITIVE : 0;
            ok = bit && !(m & bit);
            m |= bit;
        }
        if (ok) {
            *mods = m;
            TRY(advance(p));
            return expect(p, CF_QT_RBRACKET, "']'");
        }
    }
    return expected_after(p, "c, d or cd");
}

static status parse_comparison(parser *p, cf_qpred *pred)
{
    pred->kind = CF_QP_COMPARE;
    TRY(parse_expr(p, "a predicate (a key path, a value or an argument)", &pred->u.compare.left));
    cf_qcompare_op op;
    if (!comparison_op(p, &op))
        return expected_after(p, "a comparison operator (== != < <= > >= BEGINSWITH ENDSWITH "
                                 "CONTAINS LIKE IN BETWEEN)");
    pred->u.compare.op = op;
    TRY(advance(p));
    TRY(parse_modifiers(p, op, &pred->u.compare.modifiers));
    if (op == CF_QC_BETWEEN) {
        size_t at = p->tok.offset;
        if (p->tok.kind != CF_QT_LBRACE)
            return expected_after(p, "'{' (BETWEEN takes {low, high})");
        pred->u.compare.right.offset = at;
        TRY(parse_list(p, &pred->u.compare.right));
        if (pred->u.compare.right.u.list.count != 2)
            return cf_qscan_error(&p->lx, at, "BETWEEN takes exactly two values {low, high}, found %zu",
                                 pred->u.compare.right.u.list.count);
        return COFFER_OK;
    }
    return parse_expr(p, op == CF_QC_IN ? "a list, an argument or a key path"
                                        : "a value, an argument or a key path",
                      &pred->u.compare.right);
}

static status parse_not(parser *p, const cf_qpred **out)
{
    cf_qpred *pred = alloc(p, sizeof *pred);
    if (!pred)
        return cf_qscan_no_memory(&p->lx);
    pred->offset = p->tok.offset;
    *out = pred;
    if (p->tok.kind == CF_QT_BANG || is_word(p, "NOT")) {
        TRY(enter(p));
        TRY(advance(p));
        pred->kind = CF_QP_NOT;
        TRY(parse_not(p, &pred->u.operand));
        p->depth--;
        return COFFER_OK;
    }
    if (p->tok.kind == CF_QT_LPAREN) {
        TRY(enter(p));
        TRY(advance(p));
        TRY(parse_or(p, out));
        p->depth--;
        return expect(p, CF_QT_RPAREN, "')'");
    }
    if (is_word(p, "TRUEPREDICATE") || is_word(p, "FALSEPREDICATE")) {
        pred->kind = is_word(p, "TRUEPREDICATE") ? CF_QP_TRUE : CF_QP_FALSE;
        return advance(p);
    }
    return parse_comparison(p, pred);
}

/* A chain of operands joined by one operator, as one node with children. */
static status parse_chain(parser *p, cf_qpred_kind kind, const cf_qpred **out)
{
    const bool is_and = kind == CF_QP_AND;
    const cf_qpred *first;
    size_t offset = p->tok.offset;
    TRY(is_and ? parse_not(p, &first) : parse_chain(p, CF_QP_AND, &first));
    const cf_qpred **items = NULL;
    size_t count = 0, cap = 0;
    while (is_and ? (p->tok.kind == CF_QT_AND || is_word(p, "AND"))
                  : (p->tok.kind == CF_QT_OR || is_word(p, "OR"))) {
        TRY(advance(p));
        if (count == 0) {
            TRY(grow(p, (void **)&items, count, &cap, sizeof *items));
            items[count++] = first;
        }
        TRY(grow(p, (void **)&items, count, &cap, sizeof *items));
        TRY(is_and ? parse_not(p, &items[count]) : parse_chain(p, CF_QP_AND, &items[count]));
        count++;
    }
    if (count == 0) {
        *out = first;
        return COFFER_OK;
    }
    cf_qpred *pred = alloc(p, sizeof *pred);
    if (!pred)
        return cf_qscan_no_memory(&p->lx);
    pred->kind = kind;
    pred->offset = offset;
    pred->u.children.items = items;
    pred->u.children.count = count;
    *out = pred;
    return COFFER_OK;
}

static status parse_or(parser *p, const cf_qpred **out)
{
    return parse_chain(p, CF_QP_OR, out);
}

/* ---- SORT, DISTINCT, LIMIT ----------------------------------------------- */

static status parse_keys(parser *p, cf_qpost *post)
{
    cf_qsort_key *keys = NULL;
    size_t count = 0, cap = 0;
    const bool sort = post->kind == CF_QO_SORT;
    TRY(advance(p));
    TRY(expect(p, CF_QT_LPAREN, "'('"));
    for (;;) {
        TRY(grow(p, (void **)&keys, count, &cap, sizeof *keys));
        cf_qsort_key *k = &keys[count++];
        TRY(parse_path(p, CF_QQ_NONE_GIVEN, "a key path", &k->path));
        k->ascending = true;
        if (sort) {
            if (is_word(p, "ASC") || is_word(p, "ASCENDING"))
                k->ascending = true;
            else if (is_word(p, "DESC") || is_word(p, "DESCENDING"))
                k->ascending = false;
            else
                return expected_after(p, "ASC or DESC");
            TRY(advance(p));
        }
        if (p->tok.kind != CF_QT_COMMA)
            break;
        TRY(advance(p));
    }
    post->keys = keys;
    post->count = count;
    return expect(p, CF_QT_RPAREN, "',' or ')'");
}

static status parse_limit(parser *p, cf_qpost *post)
{
    TRY(advance(p));
    TRY(expect(p, CF_QT_LPAREN, "'('"));
    if (p->tok.kind != CF_QT_VALUE || p->tok.value.kind != CF_QV_INT || p->tok.value.u.num.integer < 0)
        return expected_after(p, "a non-negative integer");
    post->limit = (uint64_t)p->tok.value.u.num.integer;
    TRY(advance(p));
    return expect(p, CF_QT_RPAREN, "')'");
}

static status parse_post(parser *p, cf_query *q)
{
    cf_qpost *post = NULL;
    size_t count = 0, cap = 0;
    while (p->tok.kind != CF_QT_END) {
        TRY(grow(p, (void **)&post, count, &cap, sizeof *post));
        cf_qpost *o = &post[count];
        if (is_word(p, "SORT")) {
            o->kind = CF_QO_SORT;
            TRY(parse_keys(p, o));
        } else if (is_word(p, "DISTINCT")) {
            o->kind = CF_QO_DISTINCT;
            TRY(parse_keys(p, o));
        } else if (is_word(p, "LIMIT")) {
            o->kind = CF_QO_LIMIT;
            TRY(parse_limit(p, o));
        } else {
            return expected(p, count ? "SORT, DISTINCT, LIMIT or the end of the query"
                                     : "AND, OR, SORT, DISTINCT, LIMIT or the end of the query");
        }
        count++;
    }
    q->post = post;
    q->post_count = count;
    return COFFER_OK;
}

/* ---- entry points -------------------------------------------------------- */

coffer_status cf_query_parse(const char *text, size_t len, cf_query **out, size_t *error_offset)
{
    if (out)
        *out = NULL;
    if (!out || (!text && len))
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "query: %s is NULL", out ? "the text" : "out");
    cf_qarena *arena = cf_qarena_new();
    if (!arena)
        return cf_error(COFFER_ERR_NO_MEMORY, "query: out of memory");
    parser p;
    memset(&p, 0, sizeof p);
    p.lx.src = text ? text : "";
    p.lx.len = len;
    p.lx.arena = arena;
    cf_query *q = cf_qarena_alloc(arena, sizeof *q);
    status st = q ? cf_qlex_next(&p.lx, &p.tok) : cf_qscan_no_memory(&p.lx);
    if (st == COFFER_OK && p.tok.kind == CF_QT_END)
        st = expected(&p, "a predicate");
    if (st == COFFER_OK)
        st = parse_or(&p, &q->where);
    if (st == COFFER_OK)
        st = parse_post(&p, q);
    if (st != COFFER_OK) {
        if (error_offset)
            *error_offset = p.lx.error_offset;
        cf_qarena_free(arena);
        return st;
    }
    q->arena = arena;
    q->arg_count = p.arg_count;
    *out = q;
    return COFFER_OK;
}

void cf_query_free(cf_query *query)
{
    if (query)
        cf_qarena_free(query->arena);
}
