#ifndef CAIRN_SUPPORT_H
#define CAIRN_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

/// Whether this CPU has the SSE4.2 `crc32` instruction (checked once, at run time).
int cairn_crc32c_hardware_available(void);

/// Extends `crc` (not inverted: pass 0 to start) over `length` bytes with the SSE4.2 `crc32`
/// instruction. Call it only when `cairn_crc32c_hardware_available()` returns 1.
uint32_t cairn_crc32c_hardware(uint32_t crc, const void *bytes, size_t length);

/// Asks the CPU to start loading the cache line holding `address` into its caches (a hint that
/// never faults, whatever the address): scans call it a few rows ahead of the one they read.
static inline void cairn_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

/// Names the calling thread for the system (`top -H`, `gdb`, `/proc`): at most 15 bytes are
/// kept. Foundation on Linux does not pass `Thread.name` on.
void cairn_name_current_thread(const char *name);

/// Lowers the calling thread's scheduling priority to `nice` (Linux: a thread's own nice
/// value), for work that must give way to the app's (compaction, backups). Returns 0 on
/// success, -1 when the system refused.
int cairn_lower_current_thread_priority(int nice);

/// `pipe2(fds, O_CLOEXEC)`: a pipe whose ends are closed in a child process (`pipe2` is a GNU
/// extension the Glibc module does not export). Returns 0, or -1 with `errno` set.
int cairn_pipe_cloexec(int fds[2]);

/// `strtod` in the POSIX locale (a `.` decimal point whatever the process's locale): the
/// number at `text` (NUL-terminated), `*end` set after it (to `text` when nothing was read).
double cairn_strtod_posix(const char *text, char **end);

/// The first offset `p` from `from` on, below `count`, where `bytes[p]` is `first` or `other`;
/// `count` when there is none.
size_t cairn_find_either_byte(const uint8_t *bytes, size_t count, size_t from, uint8_t first, uint8_t other);

/// The first offset `p` from `from` on, with `p + 1 < count`, where `bytes[p]` is `first` or
/// `first_other` and `bytes[p + 1]` is `second` or `second_other`; `count` when there is none.
size_t cairn_find_byte_pair(const uint8_t *bytes, size_t count, size_t from, uint8_t first, uint8_t first_other, uint8_t second,
                            uint8_t second_other);

/// `cairn_find_either_byte` and `cairn_find_byte_pair` eight bytes at a time in a 64-bit word,
/// without vector instructions: what CPUs other than x86-64 run (exported for tests).
size_t cairn_find_either_byte_portable(const uint8_t *bytes, size_t count, size_t from, uint8_t first, uint8_t other);
size_t cairn_find_byte_pair_portable(const uint8_t *bytes, size_t count, size_t from, uint8_t first, uint8_t first_other,
                                     uint8_t second, uint8_t second_other);

#endif
