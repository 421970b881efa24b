/* text_find — finding bytes in bytes (text.h, cf_text_find): the first and
 * last bytes of the needle compared with 16 places of the text at a time,
 * the rest only where both match (the generic SIMD substring search), so
 * that a scan of short strings with a short needle does not pay memmem's
 * preparation for every string. */
#define _GNU_SOURCE /* memmem */
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "query/text.h"

const uint8_t *cf_text_find(const uint8_t *text, size_t len, const uint8_t *needle, size_t nlen)
{
    if (nlen == 0)
        return text;
    if (len < nlen)
        return NULL;
    if (nlen == 1)
        return memchr(text, needle[0], len);
    size_t i = 0;
#ifdef __SSE2__
    const __m128i first = _mm_set1_epi8((char)needle[0]), last = _mm_set1_epi8((char)needle[nlen - 1]);
    for (; i + nlen - 1 + 16 <= len; i += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(text + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(text + i + nlen - 1));
        unsigned mask = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, last)));
        while (mask) {
            unsigned at = (unsigned)__builtin_ctz(mask);
            if (memcmp(text + i + at + 1, needle + 1, nlen - 2) == 0)
                return text + i + at;
            mask &= mask - 1;
        }
    }
#endif
    return memmem(text + i, len - i, needle, nlen); /* what is left (all of it without SSE2) */
}
