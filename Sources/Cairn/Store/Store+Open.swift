import CairnLog
import Foundation

/// A store's log as opened: the snapshot it replays to, the models it was written with, and
/// the bytes read (what compaction's thresholds start from).
struct OpenedLog {
    var log: Log
    var snapshot: StoreSnapshot
    var history: [Model]
    /// The models the log's records are written in, each with the LSN it starts at (what
    /// history decodes records with): the base's model at the base's LSN, then each model and
    /// migration record after it. A read-only open's migration, which records nothing, is not
    /// among them.
    var recordedModels: [RecordedModel] = []
    /// The base's entries, uncompressed.
    var baseBytes: UInt64 = 0
    /// The payloads of the frames replayed after it, uncompressed.
    var logBytes: UInt64 = 0
}

/// A model the log's records are written in from `lsn` on (its model or migration record's
/// LSN; the base's LSN for the model a base holds last).
struct RecordedModel: Sendable {
    var lsn: LSN
    var model: Model
}

extension Store {
    /// Opens the log, loads its base and replays the records after it into a snapshot, and
    /// checks (or records) the model: migrates the store when it was written with another
    /// model and the options allow it. Returns the models the store was written with, oldest
    /// first, and the bytes read, too.
    ///
    /// Without a `model`, the store opens with the model it was written with (as of
    /// `options.asOf`): nothing is checked or migrated, and a directory without a store, or a
    /// store without a model record yet, is refused rather than created.
    static func openLog(directory: String, model: Model?, options: StoreOptions) throws -> OpenedLog {
        if options.asOf != nil && !options.readOnly {
            throw StoreError(.invalidArgument, "a store opened as of a past LSN is read-only: set readOnly too")
        }
        if options.asOf == .zero { throw StoreError(.historyUnavailable, "LSN 0 is before the store's first record, LSN 1", lsn: .first) }
        var logOptions = options.logOptions
        if model == nil { logOptions.createIfMissing = false }
        var opened = try replay(directory: directory, model: model, logOptions: logOptions, through: options.asOf)
        let log = opened.log
        guard let recorded = opened.history.last else {
            if log.lastLSN != .zero {
                try? log.closeNow()
                throw StoreError(.corruptRecord, "the log does not start with a model record", lsn: log.firstLSN)
            }
            guard let model else {
                try? log.closeNow()
                throw noModelYet(directory)
            }
            guard !options.readOnly else { return OpenedLog(log: log, snapshot: StoreSnapshot(model: model), history: [model]) }
            var empty = StoreSnapshot(model: model)
            let lsn = try log.appendNow(StoreRecord.model(model).encoded())
            empty.advance(to: lsn)
            return OpenedLog(log: log, snapshot: empty, history: [model], recordedModels: [RecordedModel(lsn: lsn, model: model)])
        }
        guard let model, recorded != model else { return opened }
        do {
            let (migrated, steps) = try reconcile(log: log, snapshot: opened.snapshot, stored: recorded, with: model, options: options)
            opened.snapshot = migrated
            opened.history += steps
            if !options.readOnly {
                // The steps' records end the log, one each.
                let first = log.lastLSN.rawValue - UInt64(steps.count) + 1
                for (offset, step) in steps.enumerated() {
                    opened.recordedModels.append(RecordedModel(lsn: LSN(first + UInt64(offset)), model: step))
                }
            }
            return opened
        } catch is WipeRequest {
            try Self.wipe(log: log)
            return try openLog(directory: directory, model: model, options: options)
        } catch {
            try? log.closeNow()
            throw error
        }
    }

    /// Opens the log and replays it (its base, then the records after it, up to `through`
    /// when given) into a snapshot in the model the records were written with: no model check,
    /// no migration. The history is empty when the log holds no model record yet (and the
    /// snapshot empty, in `model`; without a `model` such a log is refused, as a record of
    /// objects before any model is).
    ///
    /// A read-only open whose files a compaction in another process replaced while it read
    /// them reads them again from the start, a few times (``Log/retryingWhileBusy(_:)``).
    ///
    /// - Throws: ``StoreError/Code/historyUnavailable`` when `through` is older than the base
    ///   or later than the last record; ``StoreError/Code/notObjectGraph`` when the log's
    ///   first record is not a model record; a record's error names its segment file and
    ///   offset; the log's errors (`LogError.Code.busy` when the files kept changing).
    static func replay(directory: String, model: Model?, logOptions: LogOptions, through: LSN?) throws -> OpenedLog {
        try Log.retryingWhileBusy { try replayOnce(directory: directory, model: model, logOptions: logOptions, through: through) }
    }

    private static func replayOnce(directory: String, model: Model?, logOptions: LogOptions, through: LSN?) throws -> OpenedLog {
        var history: [Model] = []
        var recordedModels: [RecordedModel] = []
        var baseBytes: UInt64 = 0
        var logBytes: UInt64 = 0
        var stored: Model? { history.last }
        var locations = RecordLocations()
        let builder = SnapshotBuilder(model.map { StoreSnapshot(model: $0) })
        let log: Log
        do {
            log = try Log.open(
                at: directory, options: logOptions,
                replay: { record in
                    if let through, record.lsn > through { return }
                    logBytes += UInt64(record.payload.count)
                    locations.note(record)
                    if stored == nil { try StoreRecord.checkFirst(record) }
                    let decoded: StoreRecord.Decoded
                    do {
                        decoded = try StoreRecord.decode(record.payload, lsn: record.lsn, model: stored, inParts: true)
                    } catch {
                        throw locations.locate(error)
                    }
                    switch decoded {
                    case .model(let recorded):
                        guard stored == nil else {
                            throw StoreError(.corruptRecord, "record at LSN \(record.lsn): a second model record", lsn: record.lsn)
                        }
                        history = [recorded]
                        recordedModels = [RecordedModel(lsn: record.lsn, model: recorded)]
                        try builder.submit(.start(recorded, record.lsn))
                    case .migration(let recorded, let plan):
                        // The plan as recorded, never inferred again: replay does what the migration did.
                        history.append(recorded)
                        recordedModels.append(RecordedModel(lsn: record.lsn, model: recorded))
                        try builder.submit(.migrate(plan, record.lsn))
                    case .changes(let changes):
                        try builder.submit(.changes(changes, record.lsn))
                    case .parts(let parts):
                        // Each part is applied while the next is decoded (an error is located below).
                        try parts.forEachSet { changes in try builder.submit(.changes(changes, record.lsn)) }
                    }
                },
                base: { base in
                    if let through, base.lastLSN > through { throw Self.historyUnavailable(through, oldest: base.lastLSN) }
                    (history, baseBytes) = try loadBase(base, into: builder)
                    recordedModels = history.last.map { [RecordedModel(lsn: base.lastLSN, model: $0)] } ?? []
                })
        } catch {
            _ = try? builder.finish()
            // An error of a record the builder applied names only its LSN: where it lies, too.
            throw locations.locate(error)
        }
        do {
            guard let snapshot = try builder.finish() ?? model.map({ StoreSnapshot(model: $0) }) else {
                throw noModelYet(directory)
            }
            if let through, log.lastLSN < through {
                throw StoreError(
                    .historyUnavailable, "LSN \(through) is later than the store's last save, LSN \(log.lastLSN)", lsn: log.lastLSN)
            }
            return OpenedLog(
                log: log, snapshot: snapshot, history: history, recordedModels: recordedModels, baseBytes: baseBytes, logBytes: logBytes)
        } catch {
            try? log.closeNow()
            throw locations.locate(error)
        }
    }

    /// The error of an open without a model of a store that holds none yet.
    static func noModelYet(_ directory: String) -> StoreError {
        StoreError(.notObjectGraph, "\(directory) holds no model yet (nothing was saved to it)")
    }

    /// The error for a past LSN older than the oldest state the store keeps.
    static func historyUnavailable(_ lsn: LSN, oldest: LSN) -> StoreError {
        StoreError(
            .historyUnavailable,
            "LSN \(lsn) is older than the oldest state the store keeps, LSN \(oldest): compaction replaced what came before "
                + "(compact with retainHistory to keep more)", lsn: oldest)
    }

    /// Reads a base into `builder`: its models (the last starts the snapshot), then its objects.
    /// Returns the models, oldest first, and the bytes of its entries.
    private static func loadBase(_ base: BaseReader, into builder: SnapshotBuilder) throws -> ([Model], UInt64) {
        var contents = BaseContents.Reader(lastLSN: base.lastLSN)
        var started = false
        var bytes: UInt64 = 0
        // Chunks go to the builder a few at a time: one hand-over (a wake-up of its thread) per
        // chunk would cost as much as filing the chunk.
        var pending: [LoadedChunk] = []
        try base.forEachEntry { entry, location in
            bytes += UInt64(entry.count)
            try contents.read(entry, at: location) { chunk, model in
                if !started {
                    try builder.submit(.start(model, base.lastLSN))
                    started = true
                }
                pending.append(chunk)
                if pending.count == Tuning.chunksPerHandOver {
                    try builder.submit(.load(pending, base.lastLSN))
                    pending = []
                }
            }
        }
        if !pending.isEmpty { try builder.submit(.load(pending, base.lastLSN)) }
        guard let model = contents.models.last, let nextKey = contents.nextKey else {
            throw StoreError(.corruptRecord, "base \(base.path) has no \(contents.models.isEmpty ? "model" : "summary")")
        }
        if !started { try builder.submit(.start(model, base.lastLSN)) }
        try builder.submit(.reserveKeys(below: nextKey))
        return (contents.models, bytes)
    }

    /// Asked of ``openLog`` by ``reconcile``: delete the store's data and open it empty.
    private struct WipeRequest: Error {}

    /// The snapshot of a store written with `stored`, for an app whose model is `model`:
    /// migrated (and the migration recorded) with the models it went through, or refused, or
    /// a request to wipe.
    private static func reconcile(
        log: Log, snapshot: StoreSnapshot, stored: Model, with model: Model,
        options: StoreOptions
    ) throws -> (StoreSnapshot, [Model]) {
        let differences = model.differences(from: stored)
        switch (options.modelMismatch, options.readOnly) {
        case (.fail, _):
            throw StoreError(.modelMismatch, "the store was written with another model:\n" + differences.joined(separator: "\n"))
        case (.wipe, true):
            throw StoreError(
                .modelMismatch,
                "the store was written with another model, and a read-only open never wipes:\n"
                    + differences.joined(separator: "\n"))
        case (.wipe, false):
            throw WipeRequest()
        case (.migrate, _), (.migrateOrWipe, _):
            break
        }
        let steps = try migrationSteps(from: stored, to: model, versions: options.modelVersions, unreadable: options.unreadableModelVersions)
        var migrated = snapshot
        var previous = stored
        var plans: [MigrationPlan] = []
        for (number, step) in steps.enumerated() {
            let (next, overflow) = log.lastLSN.rawValue.addingReportingOverflow(UInt64(number) + 1)
            guard !overflow else { throw StoreError(.corruptRecord, "the log's last LSN \(log.lastLSN) leaves no room for a migration", lsn: log.lastLSN) }
            let lsn = LSN(next)
            let plan = MigrationPlan(from: previous, to: step)
            plans.append(plan)
            // A step between two of the app's versions is its declared history. Any other step
            // (from a store model the app does not list, or to an app model it does not list) is
            // inferred: refused, never wiped, when it would drop data, unless the app said so.
            let declared = options.modelVersions.contains(previous) && options.modelVersions.contains(step)
            if !declared && !options.allowsMigrationThatDropsData {
                let losses = plan.losses(in: migrated)
                if !losses.isEmpty {
                    throw StoreError(
                        .cannotMigrate,
                        "the store holds data the app's model has no place for, and the step between them is not one of the app's versions (StoreOptions.modelVersions); the store is left as it is. To migrate it and drop that data, set StoreOptions.allowsMigrationThatDropsData:\n"
                            + losses.joined(separator: "\n"))
                }
            }
            let result: Result<StoreSnapshot, StoreError>
            do { result = .success(try plan.migrate(migrated, at: lsn)) } catch { result = .failure(error) }
            switch result {
            case .success(let next): migrated = next
            case .failure where options.modelMismatch == .migrateOrWipe && !options.readOnly: throw WipeRequest()
            case .failure(let error): throw error
            }
            previous = step
        }
        guard !options.readOnly else { return (migrated, steps) }
        for (step, plan) in zip(steps, plans) {
            migrated.advance(to: try log.appendNow(StoreRecord.migration(step, plan).encoded()))
        }
        return (migrated, steps)
    }

    /// The models to migrate through, in order: when the app lists both the stored model and
    /// its own among its versions, the versions between them, then the app's model; otherwise
    /// the app's model alone.
    ///
    /// - Throws: ``StoreError/Code/cannotMigrate`` when the store was written by a later version
    ///   than the app's (an older app must not migrate a newer store down).
    static func migrationSteps(
        from stored: Model, to model: Model, versions: [Model], unreadable: [UnreadableModelVersion] = []
    ) throws -> [Model] {
        guard let start = versions.lastIndex(of: stored) else { return [model] }
        let end = versions.lastIndex(of: model)
        // A version between the store's and the app's is a step of the migration: it must be read.
        if let needed = unreadable.first(where: { $0.position > start && $0.position <= (end ?? versions.count) }) {
            throw StoreError(
                .cannotMigrate,
                "the migration from the store's model to the app's passes through version \(needed.name), which could not be read: \(needed.problem)")
        }
        guard let end else {
            return Array(versions[(start + 1)...]).filter { $0 != model } + [model]
        }
        guard start < end else {
            throw StoreError(
                .cannotMigrate,
                "the store was written with a later version of the model (version \(start + 1) of \(versions.count)) than the app's (version \(end + 1)); an older app does not migrate a store down"
            )
        }
        return Array(versions[(start + 1)...end])
    }

    /// Replaces the store with an empty one while still holding its writer lock (one atomic
    /// manifest replacement: a crash leaves either the old store or the empty one), then closes
    /// it; the next open removes the old files.
    private static func wipe(log: Log) throws {
        try log.replaceWithEmptyStoreAndClose()
    }
}
