// Registers the postgres: and postgresql: store URL schemes when a program that links
// ModelStorePostgreSQL starts: Swift has no load-time hook of its own, so this constructor calls
// the Swift function that registers them.
#include "load.h"

extern void modelstore_postgresql_register_schemes(void);

__attribute__((constructor)) static void modelstore_postgresql_load(void) {
    modelstore_postgresql_register_schemes();
}
