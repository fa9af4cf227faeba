/// One attribute's values in a chunk's rows, side by side: each filled slot's encoded value
/// (docs/FORMAT.md §9) copied one after the other, so that a scan comparing or adding that
/// attribute reads its bytes alone instead of walking every row (the bytes of a column, not of
/// rows ten times as wide). Made by the first scan that asks for it (``ObjectChunk/column(_:)``),
/// kept with the chunk, and dropped when a save changes the chunk's rows (the next scan makes it
/// again).
///
/// Numbers, dates and booleans are also kept decoded (``integerValues``, ``doubleValues``, masks),
/// so that comparing or adding them is a loop over plain values.
///
/// Its memory: the values' encoded bytes, 1 KiB of offsets (``ends``), and 2 KiB for each
/// array of decoded numbers it has. A chunk whose values
/// of the attribute take more than ``Tuning/chunkColumnBytes`` has no column: its rows are read.
final class ChunkColumn: @unchecked Sendable {
    // Safety: written only in `init`, read-only afterwards.
    /// The attribute's position in the rows.
    let position: Int
    /// Every value, one after the other.
    let bytes: UnsafeMutableRawBufferPointer
    /// `ends[s]..<ends[s + 1]` holds slot `s`'s value (empty: no value, or no row).
    private let ends: UnsafeMutablePointer<UInt32>
    /// The slots with a row, of any entity.
    let filled: SlotMask
    /// The slots whose value is null.
    let nulls: SlotMask
    /// The slots whose value is a string of ASCII bytes only.
    let asciiTexts: SlotMask
    /// The slots whose value is a string of ASCII bytes and precomposed Latin-1 letters
    /// (``RowComparison/comparableAsBytes(_:latin1:)``), the ASCII ones included.
    let latin1Texts: SlotMask
    /// The entity of every filled slot, when they share one (nil: mixed, or none).
    let entity: Int?
    /// The slots whose value is an integer (in ``integerValues``), a double that is not NaN, a
    /// date (both in ``doubleValues``, a date as its seconds since 2001), true, false.
    let integers: SlotMask, doubles: SlotMask, dates: SlotMask, trues: SlotMask, falses: SlotMask
    /// By slot, the integers (nil when the column has none).
    let integerValues: UnsafeMutablePointer<Int64>?
    /// By slot, the doubles and dates (nil when the column has none).
    let doubleValues: UnsafeMutablePointer<Double>?

    /// The column of `position` for a chunk's rows, from `forEachRow` (slot, entity and bytes of
    /// each row a scan reads, in slot order, slots below ``SlotMask/slots``); nil when the values
    /// take more than ``Tuning/chunkColumnBytes``.
    init?(position: Int, forEachRow: ((Int, Int, RowBytes) -> Void) -> Void) {
        self.position = position
        let slots = SlotMask.slots
        var values: [UInt8] = []
        var ends = [UInt32](repeating: 0, count: slots + 1)
        var filled = SlotMask.none, nulls = SlotMask.none, asciiTexts = SlotMask.none, latin1Texts = SlotMask.none
        var entity: Int?, mixed = false, tooLarge = false
        var integers = SlotMask.none, doubles = SlotMask.none, dates = SlotMask.none, trues = SlotMask.none, falses = SlotMask.none
        var integerValues = [Int64](repeating: 0, count: slots), doubleValues = [Double](repeating: 0, count: slots)
        forEachRow { slot, rowEntity, row in
            guard slot < slots, !tooLarge else { return }
            filled.insert(slot)
            if entity == nil { entity = rowEntity } else if entity != rowEntity { mixed = true }
            let value = row.value(position)
            guard values.count + value.count <= Tuning.chunkColumnBytes else {
                tooLarge = true
                return
            }
            values.append(contentsOf: value)
            if ValueEncoding.isNull(value) {
                nulls.insert(slot)
            } else if let text = ValueEncoding.text(value) {
                if RowComparison.isASCII(text) {
                    asciiTexts.insert(slot)
                    latin1Texts.insert(slot)
                } else if RowComparison.comparableAsBytes(text, latin1: true) {
                    latin1Texts.insert(slot)
                }
            } else if let number = ValueEncoding.integer(value) {
                integers.insert(slot)
                integerValues[slot] = number
            } else if let number = ValueEncoding.double(value) {
                if !number.isNaN { doubles.insert(slot) }
                doubleValues[slot] = number
            } else if let seconds = ValueEncoding.dateSeconds(value) {
                if !seconds.isNaN { dates.insert(slot) }
                doubleValues[slot] = seconds
            } else if let flag = ValueEncoding.boolean(value) {
                if flag { trues.insert(slot) } else { falses.insert(slot) }
            }
            ends[slot + 1] = UInt32(truncatingIfNeeded: values.count)
        }
        if tooLarge { return nil }
        // A slot without a row holds no bytes: it ends where the one before ends.
        for slot in 0..<slots where !filled.contains(slot) { ends[slot + 1] = ends[slot] }
        let stored = UnsafeMutableRawBufferPointer.allocate(byteCount: max(values.count, 1), alignment: 16)
        stored.initializeMemory(as: UInt8.self, repeating: 0)
        values.withUnsafeBytes { stored.copyMemory(from: $0) }
        bytes = stored
        let offsets = UnsafeMutablePointer<UInt32>.allocate(capacity: slots + 1)
        offsets.initialize(from: ends, count: slots + 1)
        self.ends = offsets
        self.filled = filled
        self.nulls = nulls
        self.asciiTexts = asciiTexts
        self.latin1Texts = latin1Texts
        self.entity = mixed ? nil : entity
        count = values.count
        (self.integers, self.doubles, self.dates, self.trues, self.falses) = (integers, doubles, dates, trues, falses)
        self.integerValues = integers.isEmpty ? nil : Self.copy(integerValues)
        self.doubleValues = (doubles | dates).isEmpty ? nil : Self.copy(doubleValues)
    }

    private static func copy<T>(_ values: [T]) -> UnsafeMutablePointer<T> {
        let copy = UnsafeMutablePointer<T>.allocate(capacity: values.count)
        copy.initialize(from: values, count: values.count)
        return copy
    }

    /// How many bytes the values take.
    let count: Int

    deinit {
        bytes.deallocate()
        ends.deallocate()
        integerValues?.deallocate()
        doubleValues?.deallocate()
    }

    /// The memory the column holds.
    var memoryBytes: Int {
        count + 4 * (SlotMask.slots + 1) + (integerValues == nil ? 0 : 8 * SlotMask.slots) + (doubleValues == nil ? 0 : 8 * SlotMask.slots)
    }

    /// Where slot `slot`'s value starts in ``bytes``.
    @inline(__always)
    func start(_ slot: Int) -> Int { Int(ends[slot]) }

    /// Where slot `slot`'s value ends in ``bytes``.
    @inline(__always)
    func end(_ slot: Int) -> Int { Int(ends[slot + 1]) }

    /// The slot whose value holds offset `offset` of ``bytes``, searching from slot `from` on
    /// (`offset` must be below ``count``).
    @inline(__always)
    func slot(holding offset: Int, from: Int) -> Int {
        var slot = from
        while Int(ends[slot + 1]) <= offset { slot += 1 }
        return slot
    }

    /// Slot `slot`'s encoded value (empty for no value).
    @inline(__always)
    func value(_ slot: Int) -> UnsafeRawBufferPointer {
        let start = Int(ends[slot]), end = Int(ends[slot + 1])
        return UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[start..<end])
    }
}
