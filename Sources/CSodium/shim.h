/* libsodium, which Coffer uses for encryption, as a Swift system module. */
#include <sodium.h>
