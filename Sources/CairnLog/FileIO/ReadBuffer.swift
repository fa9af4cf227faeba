import CairnSupport

/// A reusable read buffer over one file: holds a window of the file and grows when a frame is
/// larger than it. Reusing it avoids touching fresh memory for every frame.
package final class ReadBuffer {
    private var storage: UnsafeMutableRawBufferPointer
    private var start: UInt64 = 0
    private var count = 0

    package init(capacity: Int = LogTuning.readBufferSize) {
        storage = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// Forgets what is buffered (after the file changed, or to move to another file).
    package func reset() {
        start = 0
        count = 0
    }

    /// A view of `length` bytes at `offset`, reading from `file` as needed. The caller has
    /// checked that the bytes exist (offset + length ≤ the file's valid end). The view is valid
    /// until the next call.
    package func bytes(_ io: any FileIO, _ file: OpenFile, at offset: UInt64, length: Int, fileEnd: UInt64) throws -> UnsafeRawBufferPointer {
        if offset >= start, offset + UInt64(length) <= start + UInt64(count) {
            let from = Int(offset - start)
            return UnsafeRawBufferPointer(rebasing: storage[from..<(from + length)])
        }
        if length > storage.count {
            storage.deallocate()
            storage = .allocate(byteCount: length, alignment: 16)
            LargeBuffer.adviseHugePages(storage)
            count = 0  // the window is gone with the old storage, even if the read below fails
        }
        let wanted = Int(min(UInt64(storage.count), fileEnd - offset))
        let target = UnsafeMutableRawBufferPointer(rebasing: storage[0..<wanted])
        try io.readExactly(file, into: target, at: offset)
        start = offset
        count = wanted
        return UnsafeRawBufferPointer(rebasing: storage[0..<length])
    }
}
