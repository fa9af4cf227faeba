import CairnLog

/// An object's committed values: the values encoded exactly as in change records
/// (docs/FORMAT.md §9), one after the other, as a range of a byte buffer.
///
/// A row costs little more than its data (no table of offsets: a value is found by skipping the
/// ones before it, a few nanoseconds each), and replay builds it by copying the bytes of the
/// change record without decoding strings. Reading a value decodes it. The rows of a chunk of
/// the object table share one buffer (``RowStorage``), so that an object costs its bytes rather
/// than an allocation of its own.
struct Row: @unchecked Sendable {
    // Safety: the bytes of a row's range are written before the row exists and never after: a
    // buffer only grows past the ranges of its rows, and only while nothing else refers to it.
    fileprivate let storage: RowStorage
    fileprivate let start: Int
    /// The number of bytes.
    let length: Int
    /// The number of values.
    let count: Int

    fileprivate init(storage: RowStorage, start: Int, length: Int, count: Int) {
        self.storage = storage
        self.start = start
        self.length = length
        self.count = count
    }

    /// A row of `count` values encoded one after the other in `bytes`, in a buffer of its own.
    static func make(count: Int, bytes: UnsafeRawBufferPointer) -> Row {
        let storage = RowStorage.make(capacity: bytes.count)
        let start = storage.append(bytes) ?? 0
        return Row(storage: storage, start: start, length: bytes.count, count: count)
    }

    /// A row of `count` values encoded in `bytes`, appended to `storage` (one buffer for the
    /// rows of a whole change record); in a buffer of its own when `storage` has no room.
    static func make(count: Int, bytes: UnsafeRawBufferPointer, in storage: RowStorage) -> Row {
        guard let start = storage.append(bytes) else { return make(count: count, bytes: bytes) }
        return Row(storage: storage, start: start, length: bytes.count, count: count)
    }

    /// The row's bytes.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withBytes { all in try body(UnsafeRawBufferPointer(rebasing: all[start..<(start + length)])) }
    }

    /// The same bytes, copied into `storage` (which must have room and belong to the caller alone).
    func copied(into storage: RowStorage) -> Row? {
        guard let start = withBytes({ storage.append($0) }) else { return nil }
        return Row(storage: storage, start: start, length: length, count: count)
    }

    /// Where the row starts in its buffer (for the object table).
    var startInBuffer: Int { start }

    /// A row of `storage` (for the object table, which keeps where its rows are).
    static func view(_ storage: RowStorage, start: Int, length: Int, count: Int) -> Row {
        Row(storage: storage, start: start, length: length, count: count)
    }

    /// Calls `body` with the encoded bytes of value `position` (empty past the last value).
    func withValueBytes<R>(_ position: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withBytes { bytes in try body(RowBytes(bytes: bytes, count: count).value(position)) }
    }

    /// Calls `body` with the row borrowed: its bytes, and the row itself for the values a
    /// borrowed view cannot decide.
    func withBorrowed<R>(_ body: (BorrowedRow) throws -> R) rethrows -> R {
        try withBytes { bytes in try body(BorrowedRow(bytes: RowBytes(bytes: bytes, count: count), storage: storage, start: start)) }
    }

    /// Value `position`, decoded.
    func value(_ position: Int) -> PropertyValue {
        withValueBytes(position) { ValueEncoding.decodeProperty($0) }
    }

    /// Every value, decoded (in one pass).
    var values: [PropertyValue] {
        withBytes { Self.decodedValues($0, count: count) }
    }

    /// The `count` values encoded one after the other in `bytes` (a checked row or patch),
    /// decoded.
    static func decodedValues(_ bytes: UnsafeRawBufferPointer, count: Int) -> [PropertyValue] {
        var values: [PropertyValue] = []
        values.reserveCapacity(count)
        var offset = 0
        for _ in 0..<count {
            let end = offset + storedLength(bytes, at: offset)
            values.append(ValueEncoding.decodeProperty(UnsafeRawBufferPointer(rebasing: bytes[offset..<end])))
            offset = end
        }
        return values
    }

    /// A row of `count` values, `old`, with the values at `positions` (increasing) replaced by
    /// those encoded one after the other in `patch`, written at the start of `scratch` (made
    /// anew when it is too small or no longer the caller's alone). Returns the buffer that
    /// holds the new row, and nothing else: `scratch`, or for a long row (``Tuning/largeRow``,
    /// which the object table keeps by reference) a buffer of its own size, so that `scratch`
    /// stays the caller's. `old` is read only during the call.
    static func replacing(
        _ old: UnsafeRawBufferPointer, count: Int, positions: ArraySlice<Int>, with patch: UnsafeRawBufferPointer, in scratch: inout RowStorage
    ) -> RowStorage {
        let room = old.count + patch.count
        if room > scratch.capacity {
            scratch = RowStorage.make(capacity: max(room, min(2 * scratch.capacity, Tuning.largeRow)))
        } else if !isKnownUniquelyReferenced(&scratch) {
            scratch = RowStorage.make(capacity: scratch.capacity)
        }
        scratch.removeAll()
        var oldOffset = 0, newOffset = 0
        var next = positions.startIndex
        for position in 0..<count {
            let oldEnd = oldOffset + storedLength(old, at: oldOffset)
            if next < positions.endIndex && positions[next] == position {
                let newEnd = newOffset + storedLength(patch, at: newOffset)
                _ = scratch.append(UnsafeRawBufferPointer(rebasing: patch[newOffset..<newEnd]))
                newOffset = newEnd
                next += 1
            } else {
                _ = scratch.append(UnsafeRawBufferPointer(rebasing: old[oldOffset..<oldEnd]))
            }
            oldOffset = oldEnd
        }
        guard scratch.used >= Tuning.largeRow else { return scratch }
        let storage = RowStorage.make(capacity: scratch.used)
        scratch.withBytes { _ = storage.append($0) }
        return storage
    }

    /// The length of the encoded value at `offset`, read from its tag (clamped to the bytes, so
    /// that damaged bytes never lead a read past the end).
    static func storedLength(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int {
        guard offset >= 0, offset < bytes.count, let base = bytes.baseAddress else { return 0 }
        return ValueEncoding.length(base + offset, available: bytes.count - offset)
    }
}

/// A row seen during a scan: its bytes, borrowed from a buffer the scan holds, and the way to
/// keep it (``owned()``) when the scan needs more than the bytes.
struct BorrowedRow {
    /// The row's bytes.
    let bytes: RowBytes
    // Held by the scan for as long as the borrowed row is used: no reference counting here.
    unowned(unsafe) let storage: RowStorage
    let start: Int

    /// The row, kept (its buffer retained).
    func owned() -> Row { Row(storage: storage, start: start, length: bytes.bytes.count, count: bytes.count) }
}

/// The bytes behind rows: one row's (a row made on its own), or those of a chunk of the object
/// table, which appends rows while it alone holds the buffer.
///
/// The count of bytes used (the header) is read and written through its pointer: as a class's
/// stored property, `header` would be checked for exclusive access at run time on every
/// access, a cost per row appended (its writers hold the buffer alone).
final class RowStorage: ManagedBuffer<Int, UInt8> {
    /// A buffer with room for `capacity` bytes.
    static func make(capacity: Int) -> RowStorage {
        let buffer = create(minimumCapacity: max(capacity, 1)) { _ in 0 }
        return unsafeDowncast(buffer, to: RowStorage.self)
    }

    /// How many bytes are used.
    var used: Int { withUnsafeMutablePointerToHeader { $0.pointee } }

    /// The room left.
    var room: Int { capacity - used }

    /// Appends bytes and returns where they start; nil when they do not fit.
    func append(_ bytes: UnsafeRawBufferPointer) -> Int? {
        let capacity = capacity
        return withUnsafeMutablePointers { header, elements -> Int? in
            let start = header.pointee
            guard bytes.count <= capacity - start else { return nil }
            if let base = bytes.baseAddress { UnsafeMutableRawPointer(elements + start).copyMemory(from: base, byteCount: bytes.count) }
            header.pointee = start + bytes.count
            return start
        }
    }

    /// Empties the buffer, for a caller that holds it alone (no row refers to it any more).
    func removeAll() { withUnsafeMutablePointerToHeader { $0.pointee = 0 } }

    /// Calls `body` with the used bytes.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeMutablePointers { header, elements in
            try body(UnsafeRawBufferPointer(start: UnsafeRawPointer(elements), count: header.pointee))
        }
    }
}
