#if canImport(Glibc)
    import Glibc
#endif

/// Advice to the kernel about a large buffer about to be written whole (a decompressed payload,
/// a frame read from a segment).
package enum LargeBuffer {
    /// Buffers from this size on are worth the advice.
    package static let adviceThreshold = 4 << 20
    private static let hugePage = 2 << 20

    /// Asks for the buffer's whole 2 MiB pages to be backed by huge pages where the kernel
    /// offers them on request (Linux's transparent huge pages in `madvise` mode): one fault per
    /// 2 MiB instead of one per 4 KiB, which on a virtual machine costs more than the copy into
    /// the page. Advice only: nothing changes where it is not taken, or below
    /// ``adviceThreshold``. The advice stays with the memory once freed (until the allocator
    /// unmaps it), as every allocation has it where huge pages are in `always` mode.
    package static func adviseHugePages(_ buffer: UnsafeMutableRawBufferPointer) {
        #if canImport(Glibc)
            guard buffer.count >= adviceThreshold, let base = buffer.baseAddress else { return }
            let address = UInt(bitPattern: base)
            let first = (address + UInt(hugePage - 1)) & ~UInt(hugePage - 1)
            let end = (address + UInt(buffer.count)) & ~UInt(hugePage - 1)
            guard end > first, let start = UnsafeMutableRawPointer(bitPattern: first) else { return }
            _ = madvise(start, Int(end - first), MADV_HUGEPAGE)
        #endif
    }
}
