// CRC-32C with the processor's own instruction, for ModelStoreFileIO's CRC32C.
#pragma once

#include <stddef.h>
#include <stdint.h>

/// 1 if this processor has a CRC-32C instruction that modelstore_crc32c_update uses, else 0.
int modelstore_crc32c_has_instruction(void);

/// Extends the CRC-32C `crc` of earlier bytes (0 for none) with `count` more bytes, with the
/// processor's CRC-32C instruction (the Castagnoli polynomial, reflected, with the initial and final
/// inversion). Call only when modelstore_crc32c_has_instruction() returns 1.
uint32_t modelstore_crc32c_update(uint32_t crc, const void *bytes, size_t count);
