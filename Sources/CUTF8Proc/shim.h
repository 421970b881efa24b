/* utf8proc, which Coffer's query language uses for Unicode case folding and
 * decomposition ([c] and [d]), as a Swift system module. */
#include <utf8proc.h>
