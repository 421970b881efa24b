/* LMDB, the storage engine under Coffer, as a Swift system module. */
#include <lmdb.h>
