import CairnLog

extension Store {
    /// The model a store on disk was last written with (its first model, or the model of its
    /// last migration), read from its log without opening it for writing; nil when the log
    /// holds no model yet.
    ///
    /// - Throws: `LogError` when there is no store or it is damaged; ``StoreError`` when its
    ///   first record is not a valid model.
    public static func storedModel(at directory: String) throws -> Model? {
        try storedModels(at: directory).last
    }

    /// Every model a store on disk was written with, oldest first: the one it was created with,
    /// then one per recorded migration.
    ///
    /// - Throws: as ``storedModel(at:)``; ``StoreError/Code/notObjectGraph`` when the log's
    ///   first record is not a model (a log written with `CairnLog` alone);
    ///   `LogError.Code.busy` when compactions in another process kept replacing the files
    ///   while they were read (the read starts again a few times first).
    public static func storedModels(at directory: String) throws -> [Model] {
        try Log.retryingWhileBusy { try readStoredModels(at: directory) }
    }

    private static func readStoredModels(at directory: String) throws -> [Model] {
        var options = LogOptions()
        options.readOnly = true
        var models: [Model] = []
        // A compacted store keeps its models at the start of its base: read up to its objects.
        struct ModelsRead: Error {}
        // The records are read by the open itself, which holds the store's reader lock until
        // it has read every file (a compaction meanwhile only unlinks what it replaces).
        let log = try Log.open(
            at: directory, options: options,
            replay: { record in
                do {
                    if models.isEmpty {
                        models.append(try StoreRecord.checkFirst(record))
                    } else if record.payload.first == StoreRecord.migrationKind,
                        case .migration(let model, _) = try StoreRecord.decode(record.payload, lsn: record.lsn, model: models.last)
                    {
                        models.append(model)
                    }
                } catch {
                    throw RecordLocations.locate(error, in: record)
                }
            },
            base: { base in
                var contents = BaseContents.Reader(lastLSN: base.lastLSN)
                do {
                    try base.forEachEntry { entry, location in try contents.read(entry, at: location) { _, _ in throw ModelsRead() } }
                } catch is ModelsRead {}
                models = contents.models
            })
        try? log.closeNow()
        return models
    }
}
