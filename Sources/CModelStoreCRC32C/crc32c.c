// CRC-32C with the processor's instruction: SSE 4.2's crc32 on x86-64, the CRC extension's crc32c
// on 64-bit Arm. Each step is the same reflected Castagnoli step the table code in CRC32C.swift
// takes, eight bytes at a time; the caller keeps the table code for processors without one.
#include "crc32c.h"

#include <string.h>

#if defined(__x86_64__)

#include <nmmintrin.h>

#define HAS_INSTRUCTION 1
#define INSTRUCTION_TARGET __attribute__((target("sse4.2")))
#define STEP_WORD(state, word) ((uint32_t)_mm_crc32_u64((state), (word)))
#define STEP_BYTE(state, byte) _mm_crc32_u8((state), (byte))

int modelstore_crc32c_has_instruction(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") ? 1 : 0;
}

#elif defined(__aarch64__)

#include <arm_acle.h>
#if defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#endif

#define HAS_INSTRUCTION 1
#define INSTRUCTION_TARGET __attribute__((target("crc")))
#define STEP_WORD(state, word) __crc32cd((state), (word))
#define STEP_BYTE(state, byte) __crc32cb((state), (byte))

int modelstore_crc32c_has_instruction(void) {
#if defined(__APPLE__)
    return 1;  // every 64-bit Arm processor Apple ships has the CRC extension
#elif defined(__linux__)
    return (getauxval(AT_HWCAP) & HWCAP_CRC32) ? 1 : 0;
#else
    return 0;
#endif
}

#else

#define HAS_INSTRUCTION 0

int modelstore_crc32c_has_instruction(void) { return 0; }

uint32_t modelstore_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return crc;  // never called: there is no instruction
}

#endif

#if HAS_INSTRUCTION
INSTRUCTION_TARGET
uint32_t modelstore_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *next = bytes;
    uint32_t state = ~crc;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, next, 8);  // little-endian on both, so the bytes go in their order
        state = STEP_WORD(state, word);
        next += 8;
        count -= 8;
    }
    while (count > 0) {
        state = STEP_BYTE(state, *next);
        next += 1;
        count -= 1;
    }
    return ~state;
}
#endif
