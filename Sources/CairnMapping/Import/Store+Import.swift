import Cairn
import CairnSupport
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
    /// key path ``ImportOptions/root``. A record may be an object's key alone (`[1, 2, 3]`): it
    /// names the object holding it (``ImportOptions/insertsMissingReferences`` makes the missing).
    ///
    /// Without an `entity`, the mapping's ``Mapping/discriminator`` names each record's entity
    /// (a Django fixture, a file of several entities): the whole file is one import, and a
    /// reference by key finds an object of a record later in the file. With both, it names the
    /// entity or one of its sub-entities.
    ///
    /// - Parameters:
    ///   - bytes: The JSON text, UTF-8.
    ///   - entity: the entity of the top-level records (nil: the mapping's discriminator
    ///     names each record's).
    ///   - mapping: how the JSON maps (nil: the model's userInfo and default keys).
    ///   - options: How records apply: strict or lenient, chunks, relationship policies,
    ///     deletion of objects the JSON leaves out.
    /// - Throws: ``MappingError`` naming the JSON path of a value that does not fit, invalid JSON
    ///   (line, column, byte), a record without its unique key; what the save throws
    ///   (`StoreError`); for a chunked import, an ``ImportError`` saying how many records the
    ///   committed chunks held.
    public func importJSON(
        _ bytes: some Collection<UInt8>, into entity: String? = nil, mapping: Mapping? = nil, options: ImportOptions = ImportOptions()
    ) async throws -> ImportResult {
        try await JSONImport(store: self, input: InputBuffer(copying: bytes), entity: entity, mapping: mapping, options: options).run()
    }

    /// Imports the JSON file at `url` (see ``importJSON(_:into:mapping:options:)``). The file is
    /// mapped into memory, not read whole: a file of any size imports. A path that is not a
    /// regular file (standard input, a pipe, a FIFO, a device) is read in pieces of 1 MiB into an
    /// unnamed temporary file, each checked as JSON as it comes (the first invalid byte ends the
    /// reading with ``MappingError/Code/invalidJSON``), then imported as a file: memory stays
    /// within about 2 MiB for the reading, whatever the stream's length.
    public func importJSON(
        contentsOf url: URL, into entity: String? = nil, mapping: Mapping? = nil, options: ImportOptions = ImportOptions()
    ) async throws -> ImportResult {
        let input = try InputBuffer.mapping(path: url.path, allowsTrailingCommas: options.allowsTrailingCommas)
        return try await JSONImport(store: self, input: input, entity: entity, mapping: mapping, options: options).run()
    }

    /// Imports JSON given as a sequence of byte chunks (a network download, standard input)
    /// (see ``importJSON(_:into:mapping:options:)``). The chunks are gathered in a temporary file,
    /// not in memory, and checked as JSON as they come: the first invalid byte ends the
    /// gathering with ``MappingError/Code/invalidJSON``; then the file is imported as
    /// ``importJSON(contentsOf:into:mapping:options:)`` imports one.
    public func importJSON<Chunks: AsyncSequence>(
        from chunks: Chunks, into entity: String? = nil, mapping: Mapping? = nil, options: ImportOptions = ImportOptions()
    ) async throws -> ImportResult where Chunks.Element == [UInt8] {
        let spool = try InputSpool(allowsTrailingCommas: options.allowsTrailingCommas)
        for try await chunk in chunks {
            try chunk.withUnsafeBytes { try spool.append($0) }
            try Task.checkCancellation()
        }
        return try await JSONImport(store: self, input: spool.finish(), entity: entity, mapping: mapping, options: options).run()
    }

    /// Starts importing the JSON file at `url` in a task, and returns the import's progress as an
    /// async sequence (records, bytes, rate, time left; every ``ImportOptions/progressInterval``
    /// records and at the end; finished when the import ends) beside the task, whose value is
    /// the result.
    ///
    /// ```swift
    /// let (progress, task) = store.importJSONWithProgress(contentsOf: url, into: "Person")
    /// for await step in progress { print(step.records, step.recordsPerSecond) }
    /// let result = try await task.value
    /// ```
    public func importJSONWithProgress(
        contentsOf url: URL, into entity: String? = nil, mapping: Mapping? = nil, options: ImportOptions = ImportOptions()
    ) -> (progress: AsyncStream<ImportProgress>, result: Task<ImportResult, any Error>) {
        let (stream, continuation) = AsyncStream<ImportProgress>.makeStream(bufferingPolicy: .bufferingNewest(256))
        var options = options
        let earlier = options.progress
        options.progress = { progress in
            earlier?(progress)
            continuation.yield(progress)
        }
        let task = Task {
            defer { continuation.finish() }
            return try await self.importJSON(contentsOf: url, into: entity, mapping: mapping, options: options)
        }
        return (stream, task)
    }

    /// Imports in a background context, then hands back the view context's objects of the
    /// top-level records, in input order (Vokoder's `addWithArrayInBackground`).
    public func importJSONInBackground(
        _ bytes: some Collection<UInt8>, into entity: String? = nil, mapping: Mapping? = nil, options: ImportOptions = ImportOptions()
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
    /// The entity of the top-level records; nil: the mapping's discriminator names each one's.
    let entity: String?
    let mapping: Mapping?
    let options: ImportOptions
    /// The context to apply the records in, as unsaved changes (nil: a background context of
    /// the import's own, saved).
    var context: ObjectContext? = nil
    /// The most records a progress report has given.
    private let reported = ReportedCount()

    func run() async throws -> ImportResult {
        let mapping = try self.mapping ?? Mapping(model: store.model)
        guard mapping.model == store.model else {
            throw MappingError(.invalidMapping, "the mapping was built for another model than the store's", entity: entity)
        }
        let target = try entity.map { name throws(MappingError) in try mapping.entity(name) }
        guard target != nil || mapping.recordEntity != nil else {
            throw MappingError(.invalidMapping, "an import names the entity of its records, or its mapping a discriminator that names each record's")
        }
        let root = try options.root.map { try MappingResolver.split([$0], entity ?? "the import", "root")[0] } ?? []
        let started = ContinuousClock.now
        var cursor = RecordCursor(input.bytes, root: root, allowsTrailingCommas: options.allowsTrailingCommas)
        var reader = RecordReader(mapping: mapping, lenient: options.lenient)
        var total = ImportResult()
        var seen: Set<ObjectID> = []
        var committed = 0
        var finished = false
        // Flat records (references by key included) are read straight into encoded rows; from a
        // chunk with a record that gives another relationship on, records are read as records
        // and applied through a context.
        let insertsMissing = options.insertsMissingReferences || mapping.insertsMissingReferences
        var encoder = target.flatMap { target in
            context == nil && canEncode(target)
                ? FlatRecordEncoder(
                    target, tree: KeyTree(target), mapping: mapping, lenient: options.lenient, nulls: options.nulls, insertsMissingReferences: insertsMissing)
                : nil
        }
        while !finished {
            var chunk = ImportResult()
            do {
                var done = false
                if var flat = encoder, let target {
                    let chunkStart = cursor
                    let warningCount = reader.warnings.count
                    var rows = EncodedRows(attributeCount: target.description.attributes.count, referenceCount: flat.references.count)
                    var records = RowRecords()
                    do {
                        if let split = splitForTwoCores(flat, root: root, cursor) {
                            finished = try readInTwo(
                                split, &cursor, &reader, &flat, into: &rows, records: &records, target, mapping, started: started,
                                secondCoreRecords: &chunk.recordsReadOnSecondCore)
                        } else {
                            finished = try readChunk(&cursor, &reader, &flat, into: &rows, records: &records, started: started) == .input
                        }
                        encoder = flat
                        try Task.checkCancellation()
                        try await upsert(rows, records: records, flat, mapping, root: root, into: &chunk)
                        chunk.recordsReadFlat = rows.count
                        done = true
                    } catch is FlatRecordEncoder.NotFlat {
                        // Read again as records; the rest of the input too (an input that has
                        // relationships is not read twice a chunk).
                        cursor = chunkStart
                        reader.warnings.removeLast(reader.warnings.count - warningCount)
                        encoder = nil
                    }
                }
                if !done {
                    var records: [ImportRecord] = []
                    finished = try readChunk(&cursor, &reader, into: &records, target, mapping.recordEntity, started: started)
                    try Task.checkCancellation()
                    try await applyInContext(records, mapping, into: &chunk)
                }
            } catch {
                let failure = Self.located(error, reader)
                guard options.chunkSize != nil, committed > 0 else { throw failure }
                throw ImportError(underlying: failure, committedRecords: committed)
            }
            committed = cursor.count
            if total.objectIDs.isEmpty {
                total.objectIDs = chunk.objectIDs  // the first chunk: its objects are distinct (no set is made for one chunk)
            } else {
                if seen.isEmpty { seen = Set(total.objectIDs) }
                for id in chunk.objectIDs where seen.insert(id).inserted { total.objectIDs.append(id) }
            }
            total.inserted += chunk.inserted
            total.updated += chunk.updated
            total.unchanged += chunk.unchanged
            total.deleted += chunk.deleted
            total.saves += chunk.saves
            total.recordsReadOnSecondCore += chunk.recordsReadOnSecondCore
            total.recordsReadFlat += chunk.recordsReadFlat
            // (A record read again for a sub-entity repeats the warnings of its first read.)
            let first = Set(reader.warnings)
            total.warnings += reader.warnings + chunk.warnings.filter { !first.contains($0) }
            reader.warnings = []
        }
        total.records = cursor.count
        total.bytes = input.bytes.count
        options.progress?(
            ImportProgress(records: cursor.count, bytes: input.bytes.count, totalBytes: input.bytes.count, elapsed: Self.seconds(since: started)))
        return total
    }

    /// Whether flat records of `target` can be read straight into encoded rows: no hook needs
    /// objects, a missing key leaves values alone, the unique key is mapped, and every record is
    /// an object of `target` itself: no sub-entity (whose objects a record may update, with
    /// properties of their own), no entity mapper, and a key no entity outside `target`'s family
    /// shares unless a uniqueness constraint covers it (the batch upsert finds a sibling then).
    private func canEncode(_ target: ResolvedEntity) -> Bool {
        let entity = target.description
        return options.afterImport == nil && options.missingKeys == .leaveAlone && !entity.isAbstract && entity.descendants.isEmpty
            && target.entityMapper == nil && target.discriminator == nil && mapping?.recordEntity == nil
            && (target.keyScope == entity.index || target.identity.isEmpty || entity.uniqueness(coveringExactly: target.identity) != nil)
            && target.identity.allSatisfy { position in target.attributes.contains { $0.position == position } }
    }

    /// Where reading a chunk of flat records stopped.
    private enum ChunkEnd {
        /// At the end of the input.
        case input
        /// At the chunk size.
        case limit
        /// Just before the record where a second reader started (``InputSplit``).
        case split
    }

    /// Reads flat records up to the chunk size into encoded rows (`records`: each row's
    /// record). With a `split`, it stops just before the record that starts there, when it
    /// reaches that record as the second reader assumed; it reads on, and stops the second
    /// reader, when it does not.
    ///
    /// - Throws: ``FlatRecordEncoder/NotFlat`` when a record gives a relationship the encoder
    ///   does not write.
    private func readChunk(
        _ cursor: inout RecordCursor, _ reader: inout RecordReader, _ encoder: inout FlatRecordEncoder, into rows: inout EncodedRows,
        records: inout RowRecords, started: ContinuousClock.Instant, split: (InputSplit, SecondReader)? = nil
    ) throws -> ChunkEnd {
        let limit = options.chunkSize.map { max(1, $0) } ?? .max
        let rootSteps = cursor.root.map { JSONPath.Step.key($0) }
        var split = split
        var read = 0
        while read < limit {
            guard let (token, index) = try nextRecord(&cursor) else { return .input }
            if let (place, second) = split, cursor.scanner.offset > place.offset {
                if token == .beginObject, cursor.scanner.offset == place.offset + 1, cursor.isInArray == place.insideArray,
                    cursor.scanner.depth == (place.insideArray ? 2 : 1)
                {
                    // In the state the second reader started in: back to just before the record.
                    let earlier = cursor.count - 1
                    cursor = RecordCursor(
                        input.bytes, resumingAt: place.offset, insideArray: place.insideArray, allowsTrailingCommas: options.allowsTrailingCommas)
                    cursor.countRecords(before: earlier)
                    return .split
                }
                second.stop()
                split = nil
            }
            // A record given as its key alone names an object: read through a context.
            guard token == .beginObject else { throw FlatRecordEncoder.NotFlat() }
            let offset = cursor.scanner.offset - 1
            if try encoder.append(token, &cursor.scanner, to: &rows, reader: &reader, root: rootSteps, record: index) {
                records.append(number: index, offset: offset)
            }
            try cursor.finishRecord()
            read += 1
            try afterRecord(read, cursor, started: started, second: split.map { ($0.0.offset, $0.1) })
        }
        return .limit
    }

    /// The input split for a second reader: a single chunk of flat records of a large input at
    /// the top level, strict (errors and warnings name records by number), read from its start,
    /// with no value transformer of user code (which the second reader would call on another
    /// thread, for work that may be dropped).
    private func splitForTwoCores(_ encoder: FlatRecordEncoder, root: [String], _ cursor: RecordCursor) -> InputSplit? {
        guard options.chunkSize == nil, options.skipRecords == 0, !options.lenient, root.isEmpty, cursor.count == 0, !encoder.callsTransformers,
            ProcessInfo.processInfo.activeProcessorCount >= 2
        else { return nil }
        return InputSplit.guess(input.bytes)
    }

    /// Reads the input's flat records on two cores: a second reader from `split` to the end
    /// while this one reads up to it (``InputSplit``); whether the input ended (it always does
    /// unless the records are not flat).
    private func readInTwo(
        _ split: InputSplit, _ cursor: inout RecordCursor, _ reader: inout RecordReader, _ encoder: inout FlatRecordEncoder,
        into rows: inout EncodedRows, records: inout RowRecords, _ target: ResolvedEntity, _ mapping: Mapping, started: ContinuousClock.Instant,
        secondCoreRecords: inout Int
    ) throws -> Bool {
        let second = SecondReader()
        let input = input, nulls = options.nulls, allowsTrailingCommas = options.allowsTrailingCommas
        let insertsMissing = options.insertsMissingReferences || mapping.insertsMissingReferences
        // On a thread of its own, not a task: the pool that runs tasks has a thread per core,
        // and two of them busy for the whole read would keep the app's other tasks (a fetch in
        // the view context) waiting.
        let tail = ConcurrentResult { () throws(any Error) -> TailRead in
            try FlatRecordEncoder.readTail(
                of: input, from: split, target, mapping: mapping, nulls: nulls, insertsMissingReferences: insertsMissing,
                allowsTrailingCommas: allowsTrailingCommas, shared: second)
        }
        let end: ChunkEnd
        do {
            end = try readChunk(&cursor, &reader, &encoder, into: &rows, records: &records, started: started, split: (split, second))
        } catch {
            second.stop()
            _ = try? tail.value()
            throw error
        }
        guard end == .split else {
            second.stop()
            _ = try? tail.value()
            return end == .input
        }
        // The second reader is still at work: progress goes on, and a cancelled task stops it.
        while !tail.hasEnded(waitingAtMost: 0.02) {
            if Task.isCancelled { second.stop() }
            report(cursor, started: started, second: (split.offset, second))
        }
        try Task.checkCancellation()
        guard var read = try? tail.value() else {
            // The second reader failed: this one reads on from the split, alone, and meets the
            // same failure (if it is one) with its true record number.
            return try readChunk(&cursor, &reader, &encoder, into: &rows, records: &records, started: started) == .input
        }
        let before = cursor.count
        secondCoreRecords = read.cursor.count
        rows.append(contentsOf: read.rows)
        records.append(contentsOf: read.records, numbersFrom: before)
        read.cursor.countRecords(before: before)
        cursor = read.cursor
        input.releasePages(below: cursor.scanner.offset)
        return true
    }

    /// The first token of the next record to import and its number, passing over the first
    /// ``ImportOptions/skipRecords``; nil at the end of the input.
    private func nextRecord(_ cursor: inout RecordCursor) throws -> (token: JSONScanner.Token, index: Int)? {
        while let token = try cursor.next() {
            let index = cursor.count - 1
            guard index < options.skipRecords else { return (token, index) }
            try cursor.scanner.skip(token)
            try cursor.finishRecord()
        }
        return nil
    }

    /// Every so many records: a cancellation check, pages of the input given back, progress.
    /// `second`: where a second reader started and how far it got (its records count too).
    private func afterRecord(
        _ read: Int, _ cursor: RecordCursor, started: ContinuousClock.Instant, second: (start: Int, reader: SecondReader)? = nil
    ) throws {
        if read % 4096 == 0 {
            try Task.checkCancellation()
            input.releasePages(below: cursor.scanner.offset)
        }
        report(cursor, started: started, second: second)
    }

    /// Reports progress when the records read (by both readers, with a second one) pass a
    /// multiple of ``ImportOptions/progressInterval``; a chunk read again (it was not flat)
    /// reports no count twice.
    private func report(_ cursor: RecordCursor, started: ContinuousClock.Instant, second: (start: Int, reader: SecondReader)? = nil) {
        guard let progress = options.progress else { return }
        let tail = second?.reader.progress ?? (records: 0, bytes: 0)
        let records = cursor.count + tail.records
        guard reported.advance(to: records, every: max(1, options.progressInterval)) else { return }
        let bytes = min(input.bytes.count, cursor.scanner.offset + tail.bytes)
        progress(ImportProgress(records: records, bytes: bytes, totalBytes: input.bytes.count, elapsed: Self.seconds(since: started)))
    }

    /// Applies encoded rows with one batch upsert (one save, none when nothing changes).
    private func upsert(
        _ rows: EncodedRows, records: RowRecords, _ encoder: FlatRecordEncoder, _ mapping: Mapping, root: [String], into chunk: inout ImportResult
    ) async throws {
        guard rows.count > 0 else { return }
        let target = encoder.entity
        let rootSteps = root.map { JSONPath.Step.key($0) }
        let numbers = records.numbers
        let name = { (row: Int) in row < numbers.count ? JSONPath.text(rootSteps + [.index(numbers[row])]) : "row \(row)" }
        // A record that leaves its object as the save refuses it fails the import naming it, or
        // (lenient) is left out with a warning naming it; so does a reference by key nothing
        // holds (lenient: the relationship is left as it is). (Offsets and messages are made
        // after the upsert, outside the store's commit lock.)
        let lenient = options.lenient
        let skipped = Protected<[ImportWarning]>([])
        let failed = Protected<Int?>(nil)
        let unresolved = Protected<[(row: Int, reference: Int)]>([])
        let result: BatchUpsertResult
        do {
            result = try await store.batchUpsert(
                target.name, key: target.identity, rows: rows, references: encoder.references, updatesExisting: options.updatesExisting,
                rowName: name,
                invalidRow: { row, problem in
                    guard lenient else {
                        failed.withLock { $0 = row }
                        throw MappingError(saveProblem: problem, path: name(row), offset: nil)
                    }
                    skipped.withLock { $0.append(ImportWarning(skipping: name(row), saveProblem: problem)) }
                },
                unresolved: { row, reference in
                    unresolved.withLock { $0.append((row, reference)) }
                    if !lenient { throw UnresolvedReferenceFound() }
                })
        } catch is UnresolvedReferenceFound {
            guard let first = unresolved.withLock({ $0.first }) else { throw MappingError(.unresolvedReference, "a reference by key nothing holds") }
            throw unresolvedReference(first, rows, records, encoder, mapping, root: rootSteps).error
        } catch var error as MappingError {
            if let row = failed.withLock({ $0 }), row < records.count { error.offset = records.offsets[row] }
            throw error
        }
        record(result, into: &chunk)
        chunk.warnings += unresolved.withLock { $0 }.map { unresolvedReference($0, rows, records, encoder, mapping, root: rootSteps).warning }
        chunk.warnings += skipped.withLock { $0 }
    }

    /// A batch upsert met a reference by key that nothing holds, in a strict import.
    private struct UnresolvedReferenceFound: Error {}

    /// The error and warning for a reference by key nothing holds (a row, and the reference's
    /// number): its record read again, for the message, path and offset a context's import
    /// gives; else (a record that does not read again so) the key the row holds, at the
    /// record's path. Never throws: a lenient import's chunk is saved by then.
    private func unresolvedReference(
        _ found: (row: Int, reference: Int), _ rows: EncodedRows, _ records: RowRecords, _ encoder: FlatRecordEncoder, _ mapping: Mapping,
        root: [JSONPath.Step]
    ) -> (error: MappingError, warning: ImportWarning) {
        let target = encoder.entity
        let relationship = encoder.relationship(ofReference: found.reference)
        let destination = mapping.resolved[relationship.destination]
        let recordPath = root + [.index(found.row < records.count ? records.numbers[found.row] : found.row)]
        let offset = found.row < records.count ? records.offsets[found.row] : 0
        if let index = target.relationships.firstIndex(where: { $0 === relationship }) {
            var reader = RecordReader(mapping: mapping, lenient: options.lenient)
            reader.path.steps = recordPath
            var scanner = JSONScanner(input.bytes, resumingAt: offset, insideArray: false, allowsTrailingCommas: options.allowsTrailingCommas)
            if let token = try? scanner.next(), let record = try? reader.record(target, token, &scanner, picksEntity: false),
                case .items(let items, _) = record.relations[index], case .reference(let key, let path, let at) = items.first
            {
                return RelationItem.unresolved(key, target, relationship, destination, path: path, offset: at)
            }
        }
        let key = rows.key(found.row, reference: found.reference) ?? .null
        return RelationItem.unresolved(key, target, relationship, destination, path: recordPath, offset: offset)
    }

    /// A batch upsert's counts and objects, as the import reports them.
    private func record(_ result: BatchUpsertResult, into chunk: inout ImportResult) {
        if result.ids.count == result.inserted + result.updated + result.unchanged {
            chunk.objectIDs = result.ids  // one row per object
        } else {
            var seen: Set<ObjectID> = []
            for id in result.ids where seen.insert(id).inserted { chunk.objectIDs.append(id) }
        }
        chunk.inserted = result.inserted
        chunk.updated = result.updated
        chunk.unchanged = result.unchanged
        chunk.saves = result.inserted + result.updated > 0 ? 1 : 0
    }

    /// Reads records up to the chunk size, each of `target` or of the entity `chooser` names;
    /// whether the input ended.
    private func readChunk(
        _ cursor: inout RecordCursor, _ reader: inout RecordReader, into records: inout [ImportRecord], _ target: ResolvedEntity?,
        _ chooser: ResolvedDiscriminator?, started: ContinuousClock.Instant
    ) throws -> Bool {
        let limit = options.chunkSize.map { max(1, $0) } ?? .max
        while records.count < limit {
            guard let (token, index) = try nextRecord(&cursor) else { return true }
            reader.path.steps = cursor.root.map { JSONPath.Step.key($0) } + [.index(index)]
            if let chooser {
                records.append(try reader.record(target, choosingBy: chooser, token, &cursor.scanner))
            } else if let target {
                records.append(try reader.record(target, token, &cursor.scanner))
            }
            try cursor.finishRecord()
            try afterRecord(records.count, cursor, started: started)
        }
        return false
    }

    /// Applies records through a background context: relationships, hooks, every option.
    private func applyInContext(_ records: [ImportRecord], _ mapping: Mapping, into chunk: inout ImportResult) async throws {
        let context = self.context ?? store.newBackgroundContext(name: "import")
        let session = ImportSession(context: context, mapping: mapping, options: options)
        let bytes = input.bytes, lenient = options.lenient, allowsTrailingCommas = options.allowsTrailingCommas
        session.reread = { record, entity in
            // The record's bytes read again from its `{`.
            var reader = RecordReader(mapping: mapping, lenient: lenient)
            reader.path.steps = record.path
            var scanner = JSONScanner(bytes, resumingAt: record.offset, insideArray: false, allowsTrailingCommas: allowsTrailingCommas)
            guard let token = try scanner.next() else {
                throw MappingError(.unexpectedShape, "the record ended", entity: entity.name, path: JSONPath.text(record.path), offset: record.offset)
            }
            let again = try reader.record(entity, token, &scanner, picksEntity: false)
            return (again, reader.warnings)
        }
        for (index, record) in records.enumerated() {
            try session.apply(topLevel: record)
            if index % 1024 == 1023 { try Task.checkCancellation() }
        }
        try session.finish()
        try Task.checkCancellation()
        if self.context == nil, context.hasChanges {
            let before = store.lastSaveLSN
            try await context.save()
            chunk.saves = store.lastSaveLSN != before ? 1 : 0
        }
        chunk.objectIDs = session.result.objectIDs
        chunk.inserted = session.result.inserted
        chunk.updated = session.result.updated
        chunk.unchanged = session.result.unchanged
        chunk.deleted = session.result.deleted
        chunk.warnings += session.result.warnings
    }

    /// A syntax error as a ``MappingError`` with the JSON path where it was met.
    private static func located(_ error: any Error, _ reader: RecordReader) -> any Error {
        guard let syntax = error as? JSONSyntaxError else { return error }
        return MappingError(.invalidJSON, syntax.importDescription, path: reader.path.text, offset: syntax.offset)
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        (ContinuousClock.now - start).inSeconds
    }
}

/// The highest count reported so far (one import, one task).
private final class ReportedCount {
    private var highest = 0

    /// Whether `count` passes a multiple of `interval` that no count reported so far passed
    /// (it then is the highest).
    func advance(to count: Int, every interval: Int) -> Bool {
        guard count > highest, count / interval > highest / interval else { return false }
        highest = count
        return true
    }
}
