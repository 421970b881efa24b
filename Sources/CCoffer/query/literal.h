/* literal — readers of the literal forms of the query language, each over
 * the shared cursor of scan.h: strings with escapes, numbers (decimal, hex,
 * inf, nan), dates, oid(), uuid(), B64"" and bin(). The lexer decides which reader
 * a literal needs; a reader starts at sc->pos on the literal's first byte,
 * fills `*v` (strings in sc->arena) and leaves sc->pos after the literal. */
#ifndef COFFER_QUERY_LITERAL_H
#define COFFER_QUERY_LITERAL_H

#include "query/scan.h"

coffer_status cf_qlit_string(cf_qscan *sc, cf_qvalue *v);
coffer_status cf_qlit_base64(cf_qscan *sc, cf_qvalue *v);   /* at B64" */
/* bin('text') or bin(B64"..."), also spelled binary(...): binary data.
 * `open` is the position of the '('. */
coffer_status cf_qlit_bin(cf_qscan *sc, size_t open, cf_qvalue *v);
coffer_status cf_qlit_number(cf_qscan *sc, cf_qvalue *v);   /* at sign or digit or '.' */
/* inf or nan (`word`), already read; `negative` for a leading '-'. */
coffer_status cf_qlit_special_float(cf_qscan *sc, bool negative, const char *word, cf_qvalue *v);
coffer_status cf_qlit_iso_date(cf_qscan *sc, cf_qvalue *v); /* at YYYY-MM-DD@... */
coffer_status cf_qlit_t_date(cf_qscan *sc, cf_qvalue *v);   /* at T<sec>:<nsec> */
coffer_status cf_qlit_object_id(cf_qscan *sc, cf_qvalue *v); /* at oid( */
coffer_status cf_qlit_uuid(cf_qscan *sc, cf_qvalue *v);     /* at uuid( */

/* Whether the text at `pos` matches YYYY-MM-DD followed by '@' or 'T'. */
bool cf_qlit_looks_like_iso_date(const cf_qscan *sc, size_t pos);
/* Whether the text at `pos` matches T-?digits:-?digits. */
bool cf_qlit_looks_like_t_date(const cf_qscan *sc, size_t pos);

#endif
