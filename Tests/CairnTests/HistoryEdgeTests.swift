import CairnLog
import CairnSupport
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Persistent history at its edges: a consumer at the first record or at the base, a reader
/// that meets a gap, a record that fails, the last save a reader reads, the entity names a
/// filter takes, a registration held up by a compaction that then fails, the consumers' file
/// when it is not one.
@Suite struct HistoryEdgeTests {
    /// Saves `count` authors, one save each.
    static func saveAuthors(_ store: Store, _ count: Int, from first: Int = 0) async throws {
        let context = store.newBackgroundContext(name: "authors")
        for index in first..<(first + count) {
            _ = try context.make("Author", ["name": .string("A\(index)")])
            try await context.save()
        }
    }

    /// The names of a store directory's files.
    static func files(_ path: String) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: path))
    }

    @Test func aConsumerAtTheHorizonOfANewStoreKeepsEveryRecordThroughCompaction() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let store = try Store(at: path, model: try libraryModel(), options: HistoryTests.smallSegments)
        // The horizon of a store never compacted: the token before the first record.
        let origin = store.historyHorizon
        #expect(origin.lsn == .zero)
        try store.registerHistoryConsumer("everything", at: origin)
        try await Self.saveAuthors(store, 30)
        let before = try Self.files(path)
        let report = try await store.compact()
        #expect(report.baseBytes == 0 && report.removedFiles.isEmpty && report.historyDropped == nil, "\(report)")
        #expect(store.historyHorizon == origin)
        // No room asked for, no segment sealed: the files are the ones before.
        #expect(try Self.files(path) == before)
        let read = try await PersistentHistoryTests.transactions(store, since: origin)
        #expect(read.map(\.lsn.rawValue) == Array(1...store.lastSaveLSN.rawValue))
        #expect(read.first?.newModel == store.model)
        // Reopened, the same.
        try await store.close()
        let reopened = try Store(at: path, model: try libraryModel(), options: HistoryTests.smallSegments)
        _ = try await reopened.compact()
        #expect(try await PersistentHistoryTests.transactions(reopened, since: origin).count == Int(reopened.lastSaveLSN.rawValue))
        // Moved forward, the consumer lets the next compaction replace what it read.
        try reopened.registerHistoryConsumer("everything", at: HistoryToken(storeID: origin.storeID, lsn: LSN(10)))
        let moved = try await reopened.compact()
        #expect(moved.lsn == LSN(10) && moved.historyDropped == LSN(1)...LSN(10) && moved.baseBytes > 0)
        try await reopened.close()
    }

    @Test func aConsumerAtTheBaseMakesACompactionThatReplacesNothing() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let store = try Store(at: path, model: try libraryModel(), options: HistoryTests.smallSegments)
        try await Self.saveAuthors(store, 10)
        let first = try await store.compact()
        #expect(first.baseBytes > 0 && store.historyHorizon.lsn == first.lsn)
        try store.registerHistoryConsumer("at the base", at: store.historyHorizon)
        try await Self.saveAuthors(store, 10, from: 10)
        let before = try Self.files(path)
        let again = try await store.compact()
        #expect(again.lsn == first.lsn && again.baseBytes == 0 && again.removedFiles.isEmpty && again.historyDropped == nil, "\(again)")
        #expect(try Self.files(path) == before, "the base and segments as they were")
        #expect(store.compactionStatus.lastReport?.baseBytes == 0)
        let read = try await PersistentHistoryTests.transactions(store, since: store.historyHorizon)
        #expect(read.map(\.lsn.rawValue) == Array((first.lsn.rawValue + 1)...store.lastSaveLSN.rawValue))
        try await store.close()
    }

    @Test func aReaderWhoseRecordsACompactionReplacedBeforeItsFirstReadReportsTheHorizon() async throws {
        let directory = TemporaryDirectory()
        let store = try Store(at: directory.store(), model: try libraryModel(), options: HistoryTests.smallSegments)
        try await Self.saveAuthors(store, 10)
        let start = LSN(3)
        _ = try await store.compact()
        try await Self.saveAuthors(store, 3, from: 10)
        let horizon = store.historyHorizon.lsn
        let log = try #require(store.log)
        // A reader checked against the horizon before the compaction, its records read after:
        // the log's first record is the one after the base, not the one after its start.
        let reader = HistoryReader(
            records: log.records(from: start.next), after: start, through: store.lastSaveLSN, storeID: log.storeID,
            model: store.model, entities: nil
        ) { horizon }
        #expect { try reader.next() } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .historyUnavailable && error.lsn == horizon && error.message.contains("LSN \(horizon)")
        }
        #expect(reader.position.lsn == start)
        try await store.close()
    }

    @Test func aReaderTriesARecordThatFailedAgainAndNeverSkipsIt() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let model = try libraryModel()
        let store = try Store(at: path, model: model)
        try await Self.saveAuthors(store, 1)
        try await store.close()
        // A change record whose changes do not read (an entity out of range), then a good one.
        let log = try Log.open(at: path)
        let good = try #require(try log.records(from: LSN(2)).next()).payload
        var forged = ByteWriter()
        forged.writeByte(2)
        forged.writeByte(1)
        forged.writeVarint(1)
        forged.writeVarint(999)
        forged.writeVarint(5)
        let bad = try await log.append(forged.bytes)
        let after = try await log.append(good)
        let reader = HistoryReader(
            records: log.records(from: .first), after: .zero, through: after, storeID: log.storeID, model: nil, entities: ["Author"]
        ) { .zero }
        #expect(try reader.next()?.newModel == model)
        #expect(try reader.next()?.lsn == LSN(2))
        for _ in 0..<2 {
            #expect { try reader.next() } throws: { error in
                guard let error = error as? StoreError else { return false }
                return error.code == .corruptRecord && error.lsn == bad && error.file != nil
            }
            #expect(reader.position.lsn == LSN(2))
        }
        try await log.close()
    }

    @Test func aReaderEndsAtTheLastSaveWhenMadeAndAnAsOfStoresAtItsLSN() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let store = try Store(at: path, model: try libraryModel())
        try await Self.saveAuthors(store, 8)
        let reader = try store.historyReader(since: nil, entities: ["Book"])
        let made = store.currentHistoryToken
        try await Self.saveAuthors(store, 2, from: 8)
        // Only the model record touches no entity filtered out; the reader still reads every
        // record up to the last save when it was made, and no further.
        var read: [LSN] = []
        while let transaction = try reader.next() { read.append(transaction.lsn) }
        #expect(read == [.first] && reader.position == made)
        _ = try store.historyReader(since: reader.position)
        try await store.close()
        // As of LSN 5: history ends there, and every token it gives is one the store takes.
        let past = try Store(at: path, options: HistoryTests.asOf(LSN(5)))
        #expect(past.currentHistoryToken.lsn == LSN(5))
        var last = past.historyHorizon
        for try await transaction in try past.history(since: nil) { last = transaction.token }
        #expect(last.lsn == LSN(5))
        let reread = try past.historyReader(since: last)
        #expect(try reread.next() == nil)
        try await past.close()
    }

    @Test func anEntityFilterTakesTheNamesOfTheModelsItsHistoryIsWrittenIn() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        func model(_ version: Int) throws -> Model {
            try Model {
                Entity("Item") { Attribute("code", .string) }
                if version == 1 { Entity("Tag") { Attribute("name", .string) } }
                if version == 3 { Entity("Label") { Attribute("text", .string) } }
            }
        }
        var options = StoreOptions()
        options.modelMismatch = .migrate
        let store = try Store(at: path, model: try model(1), options: options)
        let context = store.newBackgroundContext()
        let tag = try context.insert("Tag")
        try tag.setValue(.string("t"), forKey: "name")
        try await context.save()
        try tag.delete()
        try await context.save()
        try await store.close()
        // Tag removed: its history is still read by its name.
        let migrated = try Store(at: path, model: try model(2), options: options)
        let tags = try await PersistentHistoryTests.transactions(migrated, since: nil, entities: ["Tag"])
        #expect(try tags.filter { $0.newModel == nil }.map { try $0.changes.map(\.kind) } == [[.inserted], [.deleted]])
        // After the migration, no record is written in a model with a Tag.
        #expect { try migrated.history(since: migrated.currentHistoryToken, entities: ["Tag"]) } throws: { error in
            (error as? StoreError)?.code == .invalidArgument && (error as? StoreError)?.entity == "Tag"
        }
        try await migrated.close()
        // A read-only open migrated in memory: its model's new entity is in no record.
        var readOnly = options
        readOnly.readOnly = true
        let inMemory = try Store(at: path, model: try model(3), options: readOnly)
        #expect { try inMemory.history(since: nil, entities: ["Label"]) } throws: { ($0 as? StoreError)?.code == .invalidArgument }
        #expect(throws: Never.self) { _ = try inMemory.history(since: nil, entities: ["Tag", "Item"]) }
        try await inMemory.close()
    }

    @Test func aRegistrationHeldUpByACompactionThatFailsIsBusyThenTakenWhenTriedAgain() async throws {
        let directory = TemporaryDirectory()
        let io = FaultyFileIO()
        let opened = Protected<Store?>(nil)
        let refusal = Protected<(any Error)?>(nil)
        var options = StoreOptions()
        options.fileIO = io
        options.compactionStep = { step in
            // The base written, not yet installed: a registration behind it is refused as busy;
            // then the compaction fails (its base is never renamed into place).
            guard step == .baseWritten, let store = opened.current else { return }
            do {
                try store.registerHistoryConsumer("late", at: HistoryToken(storeID: store.currentHistoryToken.storeID, lsn: LSN(3)))
            } catch {
                refusal.withLock { $0 = error }
            }
            io.inject(.rename, onPathEndingIn: ".base.tmp")
        }
        let store = try Store(at: directory.store(), model: try libraryModel(), options: options)
        opened.withLock { $0 = store }
        try await Self.saveAuthors(store, 6)
        await #expect(throws: (any Error).self) { try await store.compact() }
        let error = try #require(refusal.current as? LogError)
        #expect(error.code == .busy && error.message.contains("again"), "\(error)")
        // The compaction failed: the history is all there, and the registration is taken now.
        #expect(store.historyHorizon.lsn == .zero)
        opened.withLock { $0 = nil }
        io.heal()
        try store.registerHistoryConsumer("late", at: HistoryToken(storeID: store.currentHistoryToken.storeID, lsn: LSN(3)))
        let report = try await store.compact()
        #expect(report.lsn == LSN(3))
        #expect(try await PersistentHistoryTests.transactions(store, since: store.historyHorizon).count == 4)
        try await store.close()
    }

    @Test func aConsumersFileThatIsAFIFOOrTooLargeIsRefusedAsCorruptNamingIt() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let store = try Store(at: path, model: try libraryModel())
        let file = path + "/" + HistoryConsumerFile.name
        func refused(_ what: String) {
            for attempt in [{ _ = try store.historyConsumers() }, { try store.registerHistoryConsumer("c", at: store.currentHistoryToken) }] {
                do {
                    try attempt()
                    Issue.record("\(what): read")
                } catch let error as StoreError {
                    #expect(error.code == .corruptRecord && error.file == file, "\(what): \(error)")
                } catch {
                    Issue.record("\(what): \(error)")
                }
            }
        }
        #expect(mkfifo(file, 0o600) == 0)
        refused("a FIFO")
        try FileManager.default.removeItem(atPath: file)
        #expect(FileManager.default.createFile(atPath: file, contents: Data(count: HistoryConsumerFile.byteLimit + 1)))
        refused("too large")
        try FileManager.default.removeItem(atPath: file)
        try store.registerHistoryConsumer("c", at: store.currentHistoryToken)
        #expect(try store.historyConsumers().count == 1)
        try await store.close()
    }

    @Test func aChangeWhoseNamesAndValuesDifferInCountReadsNoValueItDoesNotHave() {
        var change = HistoryChange(
            kind: .updated, objectID: ObjectID(entity: 0, key: 1), entity: "Author", properties: ["name"], values: [.attribute(.string("a"))])
        change.properties.append("born")
        #expect(change["name"] == .attribute(.string("a")) && change["born"] == nil)
        #expect(change.valuesByName.count == 1)
        change.values = []
        #expect(change["name"] == nil)
    }
}
