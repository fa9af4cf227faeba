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
