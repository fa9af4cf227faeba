// Hardware CRC32C (Castagnoli) for x86-64 with SSE4.2. Other CPUs report "unavailable" and the
// Swift slicing-by-8 fallback in CairnLog is used instead.
#include "CCairnSupport.h"

#if defined(__x86_64__)
#include <nmmintrin.h>

int cairn_crc32c_hardware_available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") ? 1 : 0;
}

__attribute__((target("sse4.2")))
uint32_t cairn_crc32c_hardware(uint32_t crc, const void *bytes, size_t length) {
    const unsigned char *p = (const unsigned char *)bytes;
    uint64_t c = ~crc;
    while (length > 0 && ((uintptr_t)p & 7) != 0) {
        c = _mm_crc32_u8((uint32_t)c, *p++);
        length--;
    }
    while (length >= 8) {
        uint64_t word;
        __builtin_memcpy(&word, p, 8);
        c = _mm_crc32_u64(c, word);
        p += 8;
        length -= 8;
    }
    while (length > 0) {
        c = _mm_crc32_u8((uint32_t)c, *p++);
        length--;
    }
    return ~(uint32_t)c;
}

#else

int cairn_crc32c_hardware_available(void) { return 0; }

uint32_t cairn_crc32c_hardware(uint32_t crc, const void *bytes, size_t length) {
    (void)bytes; (void)length;
    return crc;
}

#endif
