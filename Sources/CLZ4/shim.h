#ifndef CAIRN_CLZ4_SHIM_H
#define CAIRN_CLZ4_SHIM_H

#include <lz4.h>
#include <lz4hc.h>
#include <string.h>

/// Copies a stream state that `LZ4_loadDict` primed, so that each frame starts from the same
/// dictionary without hashing it again. The copy points at the same dictionary bytes, which the
/// caller keeps alive for as long as any copy is in use.
static inline void cairn_lz4_copy_stream(LZ4_stream_t *destination, const LZ4_stream_t *source) {
    memcpy(destination, source, sizeof(LZ4_stream_t));
}

#endif
