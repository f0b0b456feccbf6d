// Registers the built-in store URL schemes and the default store when a program that links
// ModelStoreAdapters starts: Swift has no load-time hook of its own, so this constructor calls the
// Swift function that does it.
#include "load.h"

extern void modelstore_adapters_register(void);

__attribute__((constructor)) static void modelstore_adapters_load(void) {
    modelstore_adapters_register();
}
