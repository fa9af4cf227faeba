import Cairn
import Synchronization

/// Where a large input of flat records is cut in two, so that a second core reads the second
/// half while the first reads the first: the start of a record near the middle.
///
/// The place is a guess, checked before anything read past it is used. A line break is never
/// inside a JSON string (a raw control character is not allowed there), so a line break lies
/// between two tokens; the guess is a line break with a `{` after it and a `,` (records of the
/// top-level array) or a `}` (JSON Lines) before it. Whether that `{` starts a record, rather than
/// an object nested in one, is checked by the first reader: it must reach this `{` as the first
/// token of a record, in the same state the second reader started in. If it does not, or the
/// second reader fails in any way, the second reader's work is dropped and the first reader goes
/// on alone, so that the result, and any error with its JSON path, is exactly that of one reader.
struct InputSplit: Sendable {
    /// Where the second reader starts: the `{` of a record.
    let offset: Int
    /// Whether the records there are elements of the top-level array (else top-level values).
    let insideArray: Bool

    /// The smallest input read on two cores.
    static let smallestInput = 4 << 20
    /// How far past the middle a line break is looked for.
    static let searchLength = 1 << 20

    /// A place near the middle of `bytes` that may start a record; nil when the input is small
    /// or none is found. One pass over at most ``searchLength`` bytes.
    static func guess(_ bytes: UnsafeRawBufferPointer) -> InputSplit? {
        guard bytes.count >= smallestInput else { return nil }
        var previous: UInt8?  // the last byte that is not white space
        var lineBreak = false  // whether a line break came after it
        for position in (bytes.count / 2)..<min(bytes.count, bytes.count / 2 + searchLength) {
            let byte = bytes[position]
            switch byte {
            case 0x0A: lineBreak = true
            case 0x20, 0x0D, 0x09: break
            default:
                if byte == UInt8(ascii: "{"), lineBreak, let previous {
                    if previous == UInt8(ascii: ",") { return InputSplit(offset: position, insideArray: true) }
                    if previous == UInt8(ascii: "}") { return InputSplit(offset: position, insideArray: false) }
                }
                previous = byte
                lineBreak = false
            }
        }
        return nil
    }
}

/// What the second reader read: its records' rows, their record numbers (from its first record,
/// numbered 0), and its cursor at the end of the input.
struct TailRead: @unchecked Sendable {
    // Safety: the cursor's scanner points into the import's input, which outlives the read and
    // is only read; the value moves from the worker thread to the waiting import once.

    /// The cursor at the end of the input (its count: the records from the split on).
    var cursor: RecordCursor
    /// The rows of those records.
    var rows: EncodedRows
    /// Per row, its record (its number counted from the split).
    var records: RowRecords
}

/// What the import and its second reader share while it reads: a request to stop, and how far
/// it got (for progress reports).
final class SecondReader: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let recordsRead = Atomic<Int>(0)
    private let bytesRead = Atomic<Int>(0)

    /// Asks the reader to stop.
    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Whether the reader was asked to stop.
    var isStopped: Bool { stopped.load(ordering: .relaxed) }

    /// Records the reader read so far, and input bytes past its start.
    var progress: (records: Int, bytes: Int) { (recordsRead.load(ordering: .relaxed), bytesRead.load(ordering: .relaxed)) }

    /// Called by the reader as it goes.
    func advance(records: Int, bytes: Int) {
        recordsRead.store(records, ordering: .relaxed)
        bytesRead.store(bytes, ordering: .relaxed)
    }
}

extension FlatRecordEncoder {
    /// Reads every record from `split` to the end of `input` (the second reader), with the
    /// import's `nulls` and `allowsTrailingCommas`. Any failure, the records not being flat
    /// included, makes the import drop this read.
    static func readTail(
        of input: InputBuffer, from split: InputSplit, _ entity: ResolvedEntity, mapping: Mapping, nulls: ImportOptions.Nulls,
        insertsMissingReferences: Bool, allowsTrailingCommas: Bool, shared: SecondReader
    ) throws -> TailRead {
        var cursor = RecordCursor(input.bytes, resumingAt: split.offset, insideArray: split.insideArray, allowsTrailingCommas: allowsTrailingCommas)
        var reader = RecordReader(mapping: mapping, lenient: false)
        var encoder = FlatRecordEncoder(
            entity, tree: KeyTree(entity), mapping: mapping, lenient: false, nulls: nulls, insertsMissingReferences: insertsMissingReferences)
        var rows = EncodedRows(attributeCount: entity.description.attributes.count, referenceCount: encoder.references.count)
        var records = RowRecords()
        while let token = try cursor.next() {
            let index = cursor.count - 1
            let offset = cursor.scanner.offset - 1
            if try encoder.append(token, &cursor.scanner, to: &rows, reader: &reader, root: [], record: index) {
                records.append(number: index, offset: offset)
            }
            try cursor.finishRecord()
            if cursor.count % 256 == 0 {
                if shared.isStopped { throw CancellationError() }
                shared.advance(records: cursor.count, bytes: cursor.scanner.offset - split.offset)
            }
        }
        shared.advance(records: cursor.count, bytes: cursor.scanner.offset - split.offset)
        return TailRead(cursor: cursor, rows: rows, records: records)
    }
}
