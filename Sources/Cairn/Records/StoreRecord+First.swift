import CairnLog

extension StoreRecord {
    /// Checks that `record`, the first a log holds (it has no base), begins an object graph's
    /// store, and returns its model: a Cairn store's first record is always a model record
    /// that decodes. Any other first record was not written by a store, whatever its bytes (a
    /// log written with `CairnLog` alone): one of another kind, and one that starts as a model
    /// record's would but does not decode as one (the reason is in the message).
    ///
    /// - Throws: ``StoreError/Code/notObjectGraph``, naming the record's LSN, file and offset.
    @discardableResult
    static func checkFirst(_ record: LogRecord) throws -> Model {
        var reason = "the log's first record is not a model record"
        if record.payload.first == modelKind {
            do {
                if case .model(let model) = try decode(record.payload, lsn: record.lsn, model: nil) { return model }
            } catch {
                reason = "the log's first record does not decode as a model record (\(error))"
            }
        }
        throw StoreError(
            .notObjectGraph,
            "\(reason), so its records are not an object graph's (a log written with CairnLog alone?): read it with CairnLog's Log",
            lsn: record.lsn, file: record.file, offset: record.offset)
    }
}
