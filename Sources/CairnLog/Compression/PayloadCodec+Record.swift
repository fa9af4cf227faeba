/// A checked frame back to the record it holds: for recovery, readers and inspection.
extension PayloadCodec {
    /// The record a checked frame holds. With `decode` false, only checks that the frame's
    /// dictionary is known and returns an empty payload.
    func record(from frame: FrameScanner.Frame, path: String, decode: Bool = true) throws -> LogRecord {
        let header = frame.header
        if !decode {
            if header.codec == .lz4Dictionary && dictionary(header.dictionaryID) == nil {
                throw LogError.corruption(
                    "frame uses dictionary \(header.dictionaryID), which the manifest does not list",
                    path: path, offset: frame.offset, lsn: header.lsn)
            }
            return LogRecord(lsn: header.lsn, payload: [], file: path, offset: frame.offset)
        }
        do {
            return LogRecord(
                lsn: header.lsn,
                payload: try self.decode(
                    frame.payload, codec: header.codec,
                    dictionaryID: header.dictionaryID,
                    rawLength: Int(header.rawLength)),
                file: path, offset: frame.offset)
        } catch .unknownDictionary(let id) {
            throw LogError.corruption(
                "frame uses dictionary \(id), which the manifest does not list",
                path: path, offset: frame.offset, lsn: header.lsn)
        } catch .malformed {
            throw LogError.corruption(
                "compressed payload does not decode to its recorded \(header.rawLength) bytes",
                path: path, offset: frame.offset, lsn: header.lsn)
        }
    }
}

/// A record's frames joined back into the record, frame by frame as a ``FrameScanner`` returns
/// them: a record of one frame is that frame's payload; a record of several (``FrameFlags``) is
/// their payloads, each decoded, joined in order. What it holds of an unfinished record is
/// dropped with it when the walk stops before the record's last frame (a torn tail).
struct RecordAssembler {
    /// The payload decoded so far of the record whose last frame has not come yet.
    private var pending: [UInt8] = []
    /// Where that record's first frame is.
    private var start: UInt64?

    /// Adds a checked frame; returns its record when the frame is the record's last. With
    /// `decode` false, only checks each frame's dictionary (``PayloadCodec/record(from:path:decode:)``).
    mutating func add(_ frame: FrameScanner.Frame, _ codec: PayloadCodec, path: String, decode: Bool = true) throws -> LogRecord? {
        let part = try codec.record(from: frame, path: path, decode: decode)
        // A record's first frame: whatever was held belongs to a record the walk left unfinished
        // (it resumed after damage, in salvage).
        if !frame.header.flags.contains(.continuation) { start = nil }
        if start == nil && frame.header.flags.endsRecord { return part }
        if start == nil {
            start = frame.offset
            pending = []
        }
        pending.append(contentsOf: part.payload)
        guard frame.header.flags.endsRecord, let first = start else { return nil }
        start = nil
        defer { pending = [] }
        return LogRecord(lsn: frame.header.lsn, payload: pending, file: path, offset: first)
    }
}
