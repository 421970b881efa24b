/* decimal128 — internal helpers for IEEE 754-2008 decimal128 values in BID
 * encoding (w[0] low 64 bits, w[1] high 64 bits). The public parsing and
 * formatting functions are declared in coffer.h. */
#ifndef COFFER_DECIMAL128_H
#define COFFER_DECIMAL128_H

#include "coffer.h"

/* Compares by numeric value: returns -1, 0 or 1. NaN (any NaN, signalling or
 * quiet, any sign or payload) sorts before everything else and equals NaN;
 * -Infinity < finite values < +Infinity; -0 == 0; members of a cohort are
 * equal (1.0 == 1.00). Non-canonical encodings read as zero, as in BSON. */
int cf_decimal128_compare(const coffer_decimal128 *a, const coffer_decimal128 *b);

/* The nearest double (correctly rounded); NaN and infinities map to the
 * double NaN and infinities, values out of double's range to +-inf or +-0.
 * Leaves errno unchanged. */
double cf_decimal128_to_double(const coffer_decimal128 *d);

/* The shortest decimal that reads back as `v` (as "%.17g" would, but with
 * the fewest digits), e.g. 0.1 -> 0.1 (coefficient 1, exponent -1).
 * NaN -> NaN, +-inf -> +-Infinity, -0.0 -> -0. COFFER_ERR_INVALID_ARGUMENT if
 * `out` is NULL; otherwise always COFFER_OK. */
coffer_status cf_decimal128_from_double(double v, coffer_decimal128 *out);

/* `v` exactly, with exponent 0. Does nothing if `out` is NULL. */
void cf_decimal128_from_int64(int64_t v, coffer_decimal128 *out);

#endif
