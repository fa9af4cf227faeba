import ArgumentParser
import Cairn
import CairnLog
import CairnMapping
import Foundation

/// `cairn history STORE [--since TOKEN|LSN] [--entity NAME]… [--json] [--follow]`: the
/// store's transactions, one per line.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Print the store's saves after a token or LSN, one transaction per line, with each object's changes.",
        usage: "cairn history <store> [<options>]",
        discussion: """
            Each line: the save's LSN, time, author and context, then each object it inserted (with its values), updated (with the new values) or deleted (with its unique key values). History reaches back to the horizon, the last save compaction replaced (kept longer for registered history consumers).

            Examples:
              cairn history library.store --since 120 --entity Book
              cairn history library.store --since 6f1c…:120 --json
              cairn history library.store --follow --entity Loan
            """
    )

    @Argument(help: "The store's directory.")
    var store: String

    @Option(help: "Print the saves after this token (\"<store ID>:<LSN>\") or LSN (default: every save kept).")
    var since: String?

    @Option(name: .customLong("entity"), help: "Print only changes of this entity and its sub-entities (repeat for more).")
    var entities: [String] = []

    @Flag(help: "Print one JSON object per line.")
    var json = false

    @Flag(
        help: """
            Then follow the store: print each save its writer makes, as it is acknowledged, until interrupted (as tail -f does). Why following is held up (a copy under way, a damaged frame) goes to standard error each time it changes, and following goes on, tried again at least once a second; saves compacted before they could be printed are named there too, and printing goes on after them. Exits with an error when following stops for good (the writer migrated the store, or it was wiped or restored).
            """)
    var follow = false

    func validate() throws {
        if let since, HistoryToken(since) == nil && UInt64(since) == nil {
            throw ValidationError("--since takes a history token (\"<store ID>:<LSN>\") or an LSN, not \(since)")
        }
    }

    func run() async throws {
        guard follow else {
            try await withOpenedStore(at: store, options: readOnlyOptions()) { opened in
                var position: HistoryToken?
                try printHistory(of: opened, from: &position)
            }
            return
        }
        // Following: the saves kept, then each new one, woken by the store's saves and once a
        // second (to see why following is held up, or stopped).
        try StoreLocation.requireFolder(store)
        let following = try Store(followingAt: store)
        RecoveryWarning.print(following.recoveryReport, store: store)
        let (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let observation = try following.observeSaves { _ in wake.yield() }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                wake.yield()
            }
        }
        defer {
            ticker.cancel()
            observation.cancel()
        }
        var position: HistoryToken?
        var told: String?
        do {
            try printFollowed(following, from: &position)
            for await _ in wakes {
                if let error = following.followingError {
                    // Stopped for good: exit with the error (a user opens the store again).
                    if let stopped = error as? StoreError, stopped.code == .followingStopped { throw stopped }
                    // Held up (a copy under way, a damaged frame): said each time it changes,
                    // tried again, as tail -f goes on past a file it cannot read.
                    if "\(error)" != told { FileHandle.standardError.write(Data("cairn: following is held up: \(error)\n".utf8)) }
                    told = "\(error)"
                } else {
                    if told != nil { FileHandle.standardError.write(Data("cairn: following goes on\n".utf8)) }
                    told = nil
                }
                try printFollowed(following, from: &position)
            }
        } catch {
            try? await following.close()
            throw error
        }
        try await following.close()
    }

    /// ``printHistory(of:from:)`` for `--follow`: saves a compaction replaced before they were
    /// read are named on standard error, and printing goes on after them.
    private func printFollowed(_ following: Store, from position: inout HistoryToken?) throws {
        while true {
            do {
                try printHistory(of: following, from: &position)
                return
            } catch let error as StoreError where error.code == .historyUnavailable {
                let read = position?.lsn ?? sinceLSN ?? .zero
                let horizon = following.historyHorizon
                let newHorizon = max(horizon.lsn, error.lsn ?? .zero)
                // (The follower has yet to take up the compaction's manifest: at the next wake.)
                guard newHorizon > read else { return }
                FileHandle.standardError.write(
                    Data(
                        "cairn: the saves after LSN \(read) up to LSN \(newHorizon) were compacted before they could be read; going on after them\n"
                            .utf8))
                position = HistoryToken(storeID: horizon.storeID, lsn: newHorizon)
            }
        }
    }

    /// The LSN of `--since`, if given.
    private var sinceLSN: LSN? {
        since.map { HistoryToken($0)?.lsn ?? LSN(UInt64($0) ?? 0) }
    }

    /// Prints the transactions after `position` (nil: after `--since`, or every one kept) and
    /// moves it past each record read (printed or left out by `--entity`).
    private func printHistory(of opened: Store, from position: inout HistoryToken?) throws {
        let token = position ?? since.map { HistoryToken($0) ?? HistoryToken(storeID: opened.identifier, lsn: LSN(UInt64($0) ?? 0)) }
        let reader = try opened.historyReader(since: token, entities: entities.isEmpty ? nil : entities)
        let lines = HistoryLines(store: opened, json: json)
        defer {
            position = reader.position
            fflush(nil)  // (every output stream: a follower piped to another program is read line by line)
        }
        while let transaction = try reader.next() {
            print(try lines.line(transaction))
        }
    }
}

/// A transaction as `cairn history` prints it.
struct HistoryLines {
    let store: Store
    let json: Bool

    func line(_ transaction: HistoryTransaction) throws -> String {
        json ? JSONWriter.text(try object(transaction)) : try text(transaction)
    }

    /// `LSN 42 · 2026-11-28T17:30:01.123Z · author "sync" · context "importer" · Book/p5 inserted {…}; …`
    private func text(_ transaction: HistoryTransaction) throws -> String {
        var parts = ["LSN \(transaction.lsn)"]
        if let timestamp = transaction.timestamp { parts.append(DateText.iso8601(timestamp)) }
        if let author = transaction.author { parts.append("author " + JSONWriter.text(.string(author))) }
        if let context = transaction.contextName { parts.append("context " + JSONWriter.text(.string(context))) }
        if let model = transaction.newModel {
            parts.append("model: " + model.entities.map(\.name).joined(separator: ", ") + " (every object may have changed)")
        }
        let changes = try transaction.changes.map { change in
            "\(change.entity)/p\(change.objectID.key) \(change.kind.rawValue) "
                + JSONWriter.text(values(change) { .string(Self.name(of: $0, in: transaction)) })
        }
        if !changes.isEmpty { parts.append(changes.joined(separator: "; ")) }
        return parts.joined(separator: " · ")
    }

    private func object(_ transaction: HistoryTransaction) throws -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("lsn", .number(String(transaction.lsn.rawValue))), ("token", .string(transaction.token.description)),
            ("timestamp", transaction.timestamp.map { .string(DateText.iso8601($0)) } ?? .null),
            ("author", transaction.author.map { .string($0) } ?? .null),
            ("context", transaction.contextName.map { .string($0) } ?? .null)
        ]
        if let model = transaction.newModel { members.append(("model", .array(model.entities.map { .string($0.name) }))) }
        members.append(
            (
                "changes",
                .array(
                    try transaction.changes.map { change in
                        .object([
                            ("kind", .string(change.kind.rawValue)), ("entity", .string(change.entity)),
                            ("id", .string(uri(change.objectID, in: transaction))),
                            ("values", values(change) { .string(uri($0, in: transaction)) })
                        ])
                    })
            ))
        return .object(members)
    }

    /// An object as the text form names it: `Book/p12` (its entity as the save's model names it).
    private static func name(of id: ObjectID, in transaction: HistoryTransaction) -> String {
        (transaction.entityName(of: id) ?? "entity\(id.entity)") + "/p\(id.key)"
    }

    /// An object's URI: `cairn://<store ID>/Book/p12`.
    private func uri(_ id: ObjectID, in transaction: HistoryTransaction) -> String {
        "cairn://\(store.identifier.uuidString)/" + Self.name(of: id, in: transaction)
    }

    /// A change's values: attributes as export writes them, relationships as `target` names
    /// their objects.
    private func values(_ change: HistoryChange, target: (ObjectID) -> JSONValue) -> JSONValue {
        .object(
            zip(change.properties, change.values).map { name, value in
                switch value {
                case .attribute(let value): (name, ValueJSON.json(value))
                case .toOne(let id): (name, id.map(target) ?? .null)
                case .toMany(let ids): (name, .array(ids.map(target)))
                }
            })
    }
}
