import CairnLog

extension Store {
    /// The model a store on disk was written with, read from its log without opening it for
    /// writing; nil when the log holds no model yet.
    ///
    /// - Throws: ``LogError`` when there is no store or it is damaged; ``StoreError`` when its
    ///   first record is not a valid model.
    public static func storedModel(at directory: String) throws -> Model? {
        var options = LogOptions()
        options.readOnly = true
        let log = try Log.open(at: directory, options: options)
        guard let record = try log.records().next() else { return nil }
        guard case .model(let model) = try StoreRecord.decode(record.payload, lsn: record.lsn, model: nil) else {
            throw StoreError(.corruptRecord, "the first record is not a model", lsn: record.lsn)
        }
        return model
    }
}
