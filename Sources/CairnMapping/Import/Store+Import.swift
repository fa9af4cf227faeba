import Cairn
import Foundation

extension Store {
    /// Imports JSON records as objects of `entity`: each record updates the object holding its
    /// unique key, or inserts one; nested objects and references by key link related objects.
    /// The whole import is one save (unless ``ImportOptions/chunkSize`` says otherwise): it
    /// writes everything or nothing, and a cancelled task writes nothing.
    ///
    /// ```swift
    /// let result = try await store.importJSON(data, into: "Person", mapping: mapping)
    /// let people = try store.viewContext.objects(with: result.objectIDs)
    /// ```
    ///
    /// The input is a JSON array of records, one record, JSON Lines, or any of these under the
    /// key path ``ImportOptions/root``.
    ///
    /// - Parameter mapping: how the JSON maps (nil: the model's userInfo and default keys).
    /// - Throws: ``MappingError`` naming the JSON path of a value that does not fit, invalid JSON
    ///   (line, column, byte), a record without its unique key; what the save throws
    ///   (``StoreError``); for a chunked import, an ``ImportError`` saying how many records the
    ///   committed chunks held.
    public func importJSON(
        _ bytes: some Collection<UInt8>, into entity: String, mapping: Mapping? = nil, options: ImportOptions = ImportOptions()
    ) async throws -> ImportResult {
        try await JSONImport(store: self, input: InputBuffer(copying: bytes), entity: entity, mapping: mapping, options: options).run()
    }

    /// Imports the JSON file at `url` (see ``importJSON(_:into:mapping:options:)``). The file is
    /// mapped into memory, not read whole: a file of any size imports.
    public func importJSON(
        contentsOf url: URL, into entity: String, mapping: Mapping? = nil, options: ImportOptions = ImportOptions()
    ) async throws -> ImportResult {
        let input = try InputBuffer.mapping(path: url.path)
        return try await JSONImport(store: self, input: input, entity: entity, mapping: mapping, options: options).run()
    }

    /// Imports JSON given as a sequence of byte chunks (a network download, standard input): the
    /// chunks are gathered, then imported (see ``importJSON(_:into:mapping:options:)``).
    public func importJSON<Chunks: AsyncSequence>(
        from chunks: Chunks, into entity: String, mapping: Mapping? = nil, options: ImportOptions = ImportOptions()
    ) async throws -> ImportResult where Chunks.Element == [UInt8] {
        var collected: [UInt8] = []
        for try await chunk in chunks { collected.append(contentsOf: chunk) }
        return try await importJSON(collected, into: entity, mapping: mapping, options: options)
    }

    /// Imports in a background context, then hands back the view context's objects of the
    /// top-level records, in input order (Vokoder's `addWithArrayInBackground`).
    public func importJSONInBackground(
        _ bytes: some Collection<UInt8>, into entity: String, mapping: Mapping? = nil, options: ImportOptions = ImportOptions()
    ) async throws -> (result: ImportResult, objects: [ManagedObject]) {
        let result = try await importJSON(bytes, into: entity, mapping: mapping, options: options)
        return (result, try viewContext.objects(with: result.objectIDs))
    }
}

/// One import: reads records from the input and applies them in a background context, saving
/// once (or once per chunk).
struct JSONImport {
    let store: Store
    let input: InputBuffer
    let entity: String
    let mapping: Mapping?
    let options: ImportOptions

    func run() async throws -> ImportResult {
        let mapping = try self.mapping ?? Mapping(model: store.model)
        guard mapping.model == store.model else {
            throw MappingError(.invalidMapping, "the mapping was built for another model than the store's", entity: entity)
        }
        let target = try mapping.entity(entity)
        let root = try options.root.map { try MappingResolver.split([$0], entity, "root")[0] } ?? []
        let started = ContinuousClock.now
        var cursor = RecordCursor(input.bytes, root: root)
        var reader = RecordReader(mapping: mapping, lenient: options.lenient)
        var total = ImportResult()
        var committed = 0
        var finished = false
        while !finished {
            let context = store.newBackgroundContext(name: "import")
            let session = ImportSession(context: context, mapping: mapping, options: options)
            do {
                finished = try readChunk(&cursor, &reader, session, target, started: started)
                try Task.checkCancellation()
                try session.finish()
                try Task.checkCancellation()
                if context.hasChanges {
                    try await context.save()
                    total.saves += 1
                }
            } catch {
                let failure = Self.located(error, reader)
                guard options.chunkSize != nil, committed > 0 else { throw failure }
                throw ImportError(underlying: failure, committedRecords: committed)
            }
            committed = cursor.count
            total.objectIDs += session.result.objectIDs
            total.inserted += session.result.inserted
            total.updated += session.result.updated
            total.unchanged += session.result.unchanged
            total.deleted += session.result.deleted
            total.warnings += reader.warnings + session.result.warnings
            reader.warnings = []
        }
        total.records = cursor.count
        total.bytes = input.bytes.count
        options.progress?(
            ImportProgress(records: cursor.count, bytes: input.bytes.count, totalBytes: input.bytes.count, elapsed: Self.seconds(since: started)))
        return total
    }

    /// Reads and applies records up to the chunk size; whether the input ended.
    private func readChunk(
        _ cursor: inout RecordCursor, _ reader: inout RecordReader, _ session: ImportSession, _ target: ResolvedEntity, started: ContinuousClock.Instant
    ) throws -> Bool {
        let limit = options.chunkSize.map { max(1, $0) } ?? .max
        var applied = 0
        while applied < limit {
            guard let token = try cursor.next() else { return true }
            let index = cursor.count - 1
            if index < options.skipRecords {
                try cursor.scanner.skip(token)
                try cursor.finishRecord()
                continue
            }
            reader.path.steps = cursor.root.map { JSONPath.Step.key($0) } + [.index(index)]
            let record = try reader.record(target, token, &cursor.scanner)
            try cursor.finishRecord()
            try session.apply(topLevel: record)
            applied += 1
            if applied % 1024 == 0 { try Task.checkCancellation() }
            if let progress = options.progress, cursor.count % max(1, options.progressInterval) == 0 {
                progress(
                    ImportProgress(
                        records: cursor.count, bytes: cursor.scanner.offset, totalBytes: input.bytes.count, elapsed: Self.seconds(since: started)))
            }
        }
        return false
    }

    /// A syntax error as a ``MappingError`` with the JSON path where it was met.
    private static func located(_ error: any Error, _ reader: RecordReader) -> any Error {
        guard let syntax = error as? JSONSyntaxError else { return error }
        return MappingError(.invalidJSON, syntax.description, path: reader.path.text, offset: syntax.offset)
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
