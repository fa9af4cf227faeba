import CairnLog
import Foundation

extension Store {
    /// Opens the log, replays it into a snapshot, and checks (or records) the model.
    static func openLog(directory: String, model: Model, options: StoreOptions) throws -> (Log, StoreSnapshot) {
        var stored: Model?
        var mismatch: Model?
        let builder = SnapshotBuilder(StoreSnapshot(model: model))
        let log: Log
        do {
            log = try Log.open(at: directory, options: options.logOptions) { record in
                guard mismatch == nil else { return }
                switch try StoreRecord.decode(record.payload, lsn: record.lsn, model: stored) {
                case .model(let recorded):
                    stored = recorded
                    if recorded != model { mismatch = recorded }
                    try builder.submit(.advance(record.lsn))
                case .changes(let changes):
                    try builder.submit(.changes(changes, record.lsn))
                }
            }
        } catch {
            _ = try? builder.finish()
            throw error
        }
        var snapshot: StoreSnapshot
        do {
            snapshot = try builder.finish()
        } catch {
            try? log.closeNow()
            throw error
        }
        if let recorded = mismatch {
            let differences = model.differences(from: recorded)
            switch options.modelMismatch {
            case .fail:
                throw StoreError(.modelMismatch, "the store was written with another model:\n" + differences.joined(separator: "\n"))
            case .wipe where options.readOnly:
                throw StoreError(.modelMismatch, "the store was written with another model, and a read-only open never wipes:\n"
                                 + differences.joined(separator: "\n"))
            case .wipe:
                try wipe(log: log)
                return try openLog(directory: directory, model: model, options: options)
            }
        }
        if stored == nil {
            if log.lastLSN != .zero {
                throw StoreError(.corruptRecord, "the log does not start with a model record", lsn: log.firstLSN)
            }
            guard !options.readOnly else { return (log, snapshot) }
            snapshot.advance(to: try log.appendNow(StoreRecord.model(model).encoded()))
        }
        return (log, snapshot)
    }

    /// Deletes every file of the store's log while still holding its writer lock, then closes
    /// it; the folder and files that are not Cairn's stay.
    private static func wipe(log: Log) throws {
        let directory = log.directory
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        for name in names where name.hasPrefix("MANIFEST") || name.hasSuffix(".seg") || name.hasSuffix(".dict") || name.hasSuffix(".base") {
            try FileManager.default.removeItem(atPath: directory + "/" + name)
        }
        try log.closeNow()
    }
}
