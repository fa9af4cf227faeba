// Searches of a byte buffer for the start of a needle, 32 bytes at a time with AVX2 where the
// CPU has it (checked once), 16 at a time with SSE2 (every x86-64 CPU), 8 at a time in a word
// elsewhere (and for the last bytes): the first step of a text scan over a column.
#include "CCairnSupport.h"

#if defined(__x86_64__)
#include <immintrin.h>

static int avx2_state = -1;  // -1: not checked yet; a benign race (every thread finds the same)

static int has_avx2(void) {
    int state = __atomic_load_n(&avx2_state, __ATOMIC_RELAXED);
    if (state < 0) {
        __builtin_cpu_init();
        state = __builtin_cpu_supports("avx2") ? 1 : 0;
        __atomic_store_n(&avx2_state, state, __ATOMIC_RELAXED);
    }
    return state;
}

__attribute__((target("avx2")))
static size_t pair_avx2(const uint8_t *bytes, size_t count, size_t p, uint8_t first, uint8_t first_other, uint8_t second, uint8_t second_other) {
    const __m256i a = _mm256_set1_epi8((char)first), b = _mm256_set1_epi8((char)first_other);
    const __m256i c = _mm256_set1_epi8((char)second), d = _mm256_set1_epi8((char)second_other);
    while (p + 33 <= count) {
        __m256i here = _mm256_loadu_si256((const __m256i *)(bytes + p));
        __m256i next = _mm256_loadu_si256((const __m256i *)(bytes + p + 1));
        __m256i heads = _mm256_or_si256(_mm256_cmpeq_epi8(here, a), _mm256_cmpeq_epi8(here, b));
        __m256i seconds = _mm256_or_si256(_mm256_cmpeq_epi8(next, c), _mm256_cmpeq_epi8(next, d));
        unsigned mask = (unsigned)_mm256_movemask_epi8(_mm256_and_si256(heads, seconds));
        if (mask != 0) return p + (size_t)__builtin_ctz(mask);
        p += 32;
    }
    return p;
}

__attribute__((target("avx2")))
static size_t either_avx2(const uint8_t *bytes, size_t count, size_t p, uint8_t first, uint8_t other) {
    const __m256i a = _mm256_set1_epi8((char)first), b = _mm256_set1_epi8((char)other);
    while (p + 32 <= count) {
        __m256i block = _mm256_loadu_si256((const __m256i *)(bytes + p));
        unsigned mask = (unsigned)_mm256_movemask_epi8(_mm256_or_si256(_mm256_cmpeq_epi8(block, a), _mm256_cmpeq_epi8(block, b)));
        if (mask != 0) return p + (size_t)__builtin_ctz(mask);
        p += 32;
    }
    return p;
}
#endif

// Eight bytes at a time in a 64-bit word: 0x80 in each byte of the result where `word`'s byte
// equals `target`'s (`target` holds the wanted byte in each of its bytes); exact, no false flags.
static inline uint64_t equal_bytes(uint64_t word, uint64_t target) {
    const uint64_t low7 = 0x7F7F7F7F7F7F7F7FULL;
    uint64_t zeroed = word ^ target;
    return ~(((zeroed & low7) + low7) | zeroed | low7);
}

static inline uint64_t load_word(const uint8_t *bytes) {
    uint64_t word;
    __builtin_memcpy(&word, bytes, 8);
    return word;
}

size_t cairn_find_either_byte_portable(const uint8_t *bytes, size_t count, size_t from, uint8_t first, uint8_t other) {
    size_t p = from;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101ULL, a = ones * first, b = ones * other;
    while (p + 8 <= count) {
        uint64_t word = load_word(bytes + p);
        uint64_t found = equal_bytes(word, a) | equal_bytes(word, b);
        if (found != 0) return p + (size_t)(__builtin_ctzll(found) / 8);
        p += 8;
    }
#endif
    for (; p < count; p++) {
        if (bytes[p] == first || bytes[p] == other) return p;
    }
    return count;
}

size_t cairn_find_byte_pair_portable(const uint8_t *bytes, size_t count, size_t from, uint8_t first, uint8_t first_other, uint8_t second,
                                     uint8_t second_other) {
    size_t p = from;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101ULL, a = ones * first, b = ones * first_other, c = ones * second, d = ones * second_other;
    while (p + 9 <= count) {
        uint64_t here = load_word(bytes + p), next = load_word(bytes + p + 1);
        uint64_t found = (equal_bytes(here, a) | equal_bytes(here, b)) & (equal_bytes(next, c) | equal_bytes(next, d));
        if (found != 0) return p + (size_t)(__builtin_ctzll(found) / 8);
        p += 8;
    }
#endif
    for (; p + 1 < count; p++) {
        if ((bytes[p] == first || bytes[p] == first_other) && (bytes[p + 1] == second || bytes[p + 1] == second_other)) return p;
    }
    return count;
}

size_t cairn_find_either_byte(const uint8_t *bytes, size_t count, size_t from, uint8_t first, uint8_t other) {
    size_t p = from;
#if defined(__x86_64__)
    if (has_avx2()) {
        p = either_avx2(bytes, count, p, first, other);
        if (p + 32 <= count) return p;
    }
    const __m128i a = _mm_set1_epi8((char)first), b = _mm_set1_epi8((char)other);
    while (p + 16 <= count) {
        __m128i block = _mm_loadu_si128((const __m128i *)(bytes + p));
        int mask = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(block, a), _mm_cmpeq_epi8(block, b)));
        if (mask != 0) return p + (size_t)__builtin_ctz((unsigned)mask);
        p += 16;
    }
#endif
    return cairn_find_either_byte_portable(bytes, count, p, first, other);
}

size_t cairn_find_byte_pair(const uint8_t *bytes, size_t count, size_t from, uint8_t first, uint8_t first_other, uint8_t second,
                            uint8_t second_other) {
    size_t p = from;
#if defined(__x86_64__)
    if (has_avx2()) {
        p = pair_avx2(bytes, count, p, first, first_other, second, second_other);
        if (p + 33 <= count) return p;
    }
    const __m128i a = _mm_set1_epi8((char)first), b = _mm_set1_epi8((char)first_other);
    const __m128i c = _mm_set1_epi8((char)second), d = _mm_set1_epi8((char)second_other);
    while (p + 17 <= count) {
        __m128i here = _mm_loadu_si128((const __m128i *)(bytes + p));
        __m128i next = _mm_loadu_si128((const __m128i *)(bytes + p + 1));
        __m128i heads = _mm_or_si128(_mm_cmpeq_epi8(here, a), _mm_cmpeq_epi8(here, b));
        __m128i seconds = _mm_or_si128(_mm_cmpeq_epi8(next, c), _mm_cmpeq_epi8(next, d));
        int mask = _mm_movemask_epi8(_mm_and_si128(heads, seconds));
        if (mask != 0) return p + (size_t)__builtin_ctz((unsigned)mask);
        p += 16;
    }
#endif
    return cairn_find_byte_pair_portable(bytes, count, p, first, first_other, second, second_other);
}
