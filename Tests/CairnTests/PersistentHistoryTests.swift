import CairnLog
import CairnSupport
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Persistent history: the transactions after a token, read back from the log with their
/// changes and values, across reopen and compaction; what compaction keeps for registered
/// consumers and says it dropped; tokens as plain values.
@Suite struct PersistentHistoryTests {
    /// Every transaction after `token`, read through the async sequence.
    static func transactions(_ store: Store, since token: HistoryToken?, entities: [String]? = nil) async throws -> [HistoryTransaction] {
        var read: [HistoryTransaction] = []
        for try await transaction in try store.history(since: token, entities: entities) { read.append(transaction) }
        return read
    }

    /// The objects a history builds on `start` (the state before its first transaction): each
    /// transaction applied to the objects before it (values by position, as rows hold them). At
    /// a migration, whose changes history does not list, the state then comes from `stateAt`.
    static func fold(
        _ transactions: [HistoryTransaction], onto start: [ObjectID: [PropertyValue]] = [:], model: Model,
        stateAt: (LSN) async throws -> [ObjectID: [PropertyValue]] = { _ in [:] }
    ) async throws -> [ObjectID: [PropertyValue]] {
        var objects = start
        var model = model
        for transaction in transactions {
            if let newModel = transaction.newModel {
                if !objects.isEmpty { objects = try await stateAt(transaction.lsn) }
                model = newModel
                continue
            }
            for change in try transaction.changes {
                let names = try #require(model.entity(named: change.entity)).propertyNames
                switch change.kind {
                case .inserted:
                    #expect(objects[change.objectID] == nil, "\(change.objectID) inserted twice")
                    #expect(change.properties == names)
                    objects[change.objectID] = change.values
                case .updated:
                    var values = try #require(objects[change.objectID], "update of \(change.objectID), not there")
                    for (name, value) in zip(change.properties, change.values) {
                        values[try #require(names.firstIndex(of: name))] = value
                    }
                    objects[change.objectID] = values
                case .deleted:
                    #expect(objects.removeValue(forKey: change.objectID) != nil, "delete of \(change.objectID), not there")
                }
            }
        }
        return objects
    }

    /// The objects of the store at `path` as of `lsn`.
    static func objects(at path: String, asOf lsn: LSN) async throws -> [ObjectID: [PropertyValue]] {
        let past = try Store(at: path, options: HistoryTests.asOf(lsn))
        let objects = try Self.objects(of: past)
        try await past.close()
        return objects
    }

    /// The store's objects, values by position, as its snapshot holds them.
    static func objects(of store: Store) throws -> [ObjectID: [PropertyValue]] {
        let snapshot = store.snapshot
        let context = store.newBackgroundContext(name: "check")
        var objects: [ObjectID: [PropertyValue]] = [:]
        for entity in store.model.descriptions where !entity.entity.isAbstract {
            for object in try context.fetch(FetchRequest(entity.entity.name, includesSubentities: false)) {
                objects[object.objectID] = try #require(snapshot.record(object.objectID)).row.values
            }
        }
        return objects
    }

    @Test func aTransactionTellsWhoSavedWhenAndEachObjectsChangeWithItsValues() async throws {
        let directory = TemporaryDirectory()
        let store = try Store(at: directory.store(), model: try libraryModel())
        let start = store.currentHistoryToken
        let context = store.newBackgroundContext(name: "importer")
        context.transactionAuthor = "sync job"
        let before = Date()
        let author = try context.make("Author", ["name": "Ursula K. Le Guin"])
        let book = try context.make("Book", ["code": "B1", "title": "The Dispossessed"])
        try book.setObject(author, forKey: "author")
        try await context.save()
        try author.setValue(1929, forKey: "born")
        try await context.save()
        try book.delete()
        try await context.save()
        let read = try await Self.transactions(store, since: start)
        try #require(read.count == 3)
        #expect(read.map(\.lsn) == [start.lsn.next, start.lsn.next.next, store.lastSaveLSN])
        #expect(read.last?.token == store.currentHistoryToken)
        #expect(read.allSatisfy { $0.author == "sync job" && $0.contextName == "importer" && $0.newModel == nil })
        #expect(read.allSatisfy { ($0.timestamp ?? .distantPast) >= before.addingTimeInterval(-1) })
        let inserted = try read[0].changes
        #expect(inserted.map(\.kind) == [.inserted, .inserted])
        let insertedBook = try #require(inserted.first { $0.objectID == book.objectID })
        #expect(insertedBook.entity == "Book")
        #expect(insertedBook["title"] == .attribute(.string("The Dispossessed")) && insertedBook["code"] == .attribute(.string("B1")))
        #expect(insertedBook["author"] == .toOne(author.objectID))
        #expect(insertedBook.valuesByName["year"] == .attribute(.null))
        let updated = try #require(try read[1].changes.first)
        #expect(try read[1].changes.count == 1 && updated.kind == .updated && updated.objectID == author.objectID)
        #expect(updated.properties == ["born"] && updated.values == [.attribute(.integer(1929))])
        // The delete: the book's tombstone holds its unique code; the author's inverse changed.
        let deleted = try #require(try read[2].changes.first { $0.kind == .deleted })
        #expect(deleted.objectID == book.objectID && deleted.properties == ["code"] && deleted.values == [.attribute(.string("B1"))])
        #expect(try read[2].changes.contains { $0.kind == .updated && $0.objectID == author.objectID && $0.properties == ["books"] })
        try await store.close()
    }

    @Test func historyFromTheFirstRecordRebuildsTheStoreAcrossReopenAndCompaction() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let model = try CompactionTests.model()
        var store = try Store(at: path, model: model, options: HistoryTests.smallSegments)
        // A consumer of every save from the first record (the model's) on.
        let origin = HistoryToken(storeID: store.currentHistoryToken.storeID, lsn: .zero)
        try store.registerHistoryConsumer("all", at: origin)
        var generator = SeededRandom(seed: 36)
        var live: [ObjectID] = []
        for round in 0..<6 {
            // Saves from three contexts, each inserting, changing and deleting at random.
            let current = store
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<3 {
                    let seed = generator.next()
                    let targets = live
                    group.addTask {
                        var random = SeededRandom(seed: seed)
                        let context = current.newBackgroundContext(name: "worker \(worker)")
                        context.transactionAuthor = "round \(round)"
                        for save in 0..<8 {
                            for index in 0..<Int(random.next() % 4) {
                                let item = try context.insert("Item")
                                try item.setValue(.string("r\(round)-w\(worker)-s\(save)-\(index)"), forKey: "code")
                                try item.setValue(.integer(Int64(random.next() % 1000)), forKey: "round")
                            }
                            // Each worker changes and deletes only its own share of the older items.
                            let mine = targets.filter { Int($0.key % 3) == worker }
                            if !mine.isEmpty {
                                if let object = context.object(with: mine[Int(random.next() % UInt64(mine.count))]), !object.isDeleted {
                                    if random.next() % 5 == 0 {
                                        try object.delete()
                                    } else {
                                        try object.setValue(.string("note \(random.next() % 100)"), forKey: "note")
                                    }
                                }
                            }
                            try await context.save()
                        }
                    }
                }
                try await group.waitForAll()
            }
            live = Array(try Self.objects(of: store).keys)
            if round == 2 { _ = try await store.compact() }
            if round == 4 {
                try await store.close()
                store = try Store(at: path, model: model, options: HistoryTests.smallSegments)
            }
        }
        let read = try await Self.transactions(store, since: origin)
        #expect(store.historyHorizon == origin, "the compaction kept every record")
        #expect(read.first?.lsn == .first && read.first?.newModel == model)
        #expect(read.map(\.lsn) == read.map(\.lsn).sorted() && read.last?.lsn == store.lastSaveLSN)
        #expect(try await Self.fold(read, model: model) == Self.objects(of: store))
        // From a token in the middle: the fold onto the state then equals the store too.
        let middle = read[read.count / 2]
        let past = try Store(at: path, model: model, options: HistoryTests.asOf(middle.lsn))
        let then = try Self.objects(of: past)
        try await past.close()
        let after = try await Self.transactions(store, since: middle.token)
        #expect(after.map(\.lsn) == read.suffix(from: read.count / 2 + 1).map(\.lsn))
        #expect(try await Self.fold(after, onto: then, model: model) == Self.objects(of: store))
        try await store.close()
    }

    @Test func historyTellsWhatEachSaveNotificationTold() async throws {
        let directory = TemporaryDirectory()
        let store = try Store(at: directory.store(), model: try libraryModel())
        let notified = Protected<[SaveNotification]>([])
        let observation = try store.observeSaves { event in
            if case .saved(let save) = event { notified.withLock { $0.append(save) } }
        }
        let start = store.currentHistoryToken
        let context = store.newBackgroundContext(name: "library")
        let author = try context.make("Author", ["name": "N. K. Jemisin"])
        for index in 0..<5 {
            let book = try context.make("Book", ["code": .string("J\(index)"), "title": .string("Book \(index)")])
            try book.setObject(author, forKey: "author")
            try await context.save()
        }
        try #require(context.object(with: author.objectID)).delete()
        try await context.save()
        for _ in 0..<1000 where notified.current.count < 6 { try await Task.sleep(for: .milliseconds(5)) }
        let read = try await Self.transactions(store, since: start)
        let saves = notified.current
        try #require(read.count == saves.count)
        for (transaction, save) in zip(read, saves) {
            #expect(transaction.lsn == save.lsn && transaction.author == save.author && transaction.contextName == save.contextName)
            #expect(Set(try transaction.changes.filter { $0.kind == .inserted }.map(\.objectID)) == save.inserted)
            #expect(Set(try transaction.changes.filter { $0.kind == .deleted }.map(\.objectID)) == save.deleted)
            let updated = try transaction.changes.filter { $0.kind == .updated }
            #expect(Dictionary(uniqueKeysWithValues: updated.map { ($0.objectID, Set($0.properties)) }) == save.updatedProperties)
        }
        // The cascade deleted the books too: each with its code.
        let last = try #require(read.last).changes.filter { $0.kind == .deleted && $0.entity == "Book" }
        #expect(Set(last.compactMap { $0["code"] }) == Set((0..<5).map { PropertyValue.attribute(.string("J\($0)")) }))
        observation.cancel()
        try await store.close()
    }

    @Test func anEntityFilterKeepsItsSubEntitiesAndLeavesOutTransactionsOfOthers() async throws {
        let directory = TemporaryDirectory()
        let store = try Store(at: directory.store(), model: try libraryModel())
        let start = store.currentHistoryToken
        let context = store.newBackgroundContext()
        _ = try context.make("Author", ["name": "A"])
        try await context.save()
        _ = try context.make("Magazine", ["code": "M1", "issue": 3])
        _ = try context.make("Member", ["email": "m@example.com"])
        try await context.save()
        _ = try context.make("Book", ["code": "B1", "title": "T"])
        try await context.save()
        let items = try await Self.transactions(store, since: start, entities: ["Item"])
        #expect(try items.map { try $0.changes.map(\.entity) } == [["Magazine"], ["Book"]])
        let authors = try await Self.transactions(store, since: start, entities: ["Author", "Member"])
        #expect(try authors.map { try $0.changes.map(\.entity) } == [["Author"], ["Member"]])
        #expect { try store.history(since: start, entities: ["Nope"]) } throws: { ($0 as? StoreError)?.code == .invalidArgument }
        try await store.close()
    }

    @Test func compactionKeepsHistoryForTheOldestConsumerAndSaysWhatItDropped() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let model = try CompactionTests.model()
        let (store, _) = try await HistoryTests.storeWithHistory(at: path, model: model)
        #expect(store.historyHorizon.lsn == .zero)
        let kept = LSN(20)
        try store.registerHistoryConsumer("sync", at: HistoryToken(storeID: store.currentHistoryToken.storeID, lsn: kept))
        try store.registerHistoryConsumer("audit", at: store.currentHistoryToken)
        let first = try await store.compact()
        #expect(first.lsn == kept && first.historyDropped == LSN(1)...kept)
        #expect(store.historyHorizon.lsn == kept)
        let since = try await Self.transactions(store, since: HistoryToken(storeID: store.historyHorizon.storeID, lsn: kept))
        #expect(since.map(\.lsn.rawValue) == Array((kept.rawValue + 1)...store.lastSaveLSN.rawValue))
        // Older than the horizon: a clear error naming it, never a gap.
        let older = HistoryToken(storeID: store.historyHorizon.storeID, lsn: kept.previous)
        #expect { try store.history(since: older) } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .historyUnavailable && error.lsn == kept && error.message.contains("LSN \(kept)")
        }
        #expect { try store.registerHistoryConsumer("late", at: older) } throws: { ($0 as? StoreError)?.code == .historyUnavailable }
        // The registrations survive reopen; moving the oldest forward lets compaction drop more.
        try await store.close()
        let reopened = try Store(at: path, model: model, options: HistoryTests.smallSegments)
        #expect(try reopened.historyConsumers().mapValues(\.lsn) == ["sync": kept, "audit": reopened.lastSaveLSN])
        try reopened.registerHistoryConsumer("sync", at: HistoryToken(storeID: reopened.historyHorizon.storeID, lsn: LSN(30)))
        let second = try await reopened.compact()
        #expect(second.lsn == LSN(30) && second.historyDropped == kept.next...LSN(30))
        try reopened.removeHistoryConsumer("sync")
        try reopened.removeHistoryConsumer("audit")
        let third = try await reopened.compact()
        #expect(third.lsn == reopened.lastSaveLSN && third.historyDropped == LSN(31)...reopened.lastSaveLSN)
        #expect(try await Self.transactions(reopened, since: reopened.currentHistoryToken).isEmpty)
        try await reopened.close()
    }

    @Test func tokensArePlainValuesThatBelongToOneStore() async throws {
        let directory = TemporaryDirectory()
        let store = try Store(at: directory.store(), model: try libraryModel())
        let context = store.newBackgroundContext()
        _ = try context.make("Author", ["name": "A"])
        try await context.save()
        let token = store.currentHistoryToken
        #expect(HistoryToken(token.description) == token)
        let json = try JSONEncoder().encode(["token": token])
        #expect(String(decoding: json, as: UTF8.self) == "{\"token\":\"\(token)\"}")
        #expect(try JSONDecoder().decode([String: HistoryToken].self, from: json)["token"] == token)
        #expect(HistoryToken("not a token") == nil && HistoryToken("\(token.storeID):x") == nil)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([HistoryToken].self, from: Data("[\"12\"]".utf8)) }
        let other = HistoryToken(storeID: UUID(), lsn: .first)
        #expect { try store.history(since: other) } throws: { ($0 as? StoreError)?.code == .invalidArgument }
        let future = HistoryToken(storeID: token.storeID, lsn: token.lsn.next)
        #expect { try store.history(since: future) } throws: { ($0 as? StoreError)?.code == .invalidArgument }
        #expect { try Store(inMemory: try libraryModel()).history(since: nil) } throws: { ($0 as? StoreError)?.code == .invalidArgument }
        #expect { try store.registerHistoryConsumer("", at: token) } throws: { ($0 as? StoreError)?.code == .invalidArgument }
        // A reader reads up to the last save when it was made: every token it gives is one the
        // store takes back.
        let reader = try store.historyReader(since: nil)
        _ = try context.make("Author", ["name": "B"])
        try await context.save()
        var last = store.historyHorizon
        while let transaction = try reader.next() { last = transaction.token }
        #expect(last == token)
        try await store.close()
    }

    @Test func aMigrationIsATransactionWithTheNewModelAndLaterChangesReadInIt() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let old = try CompactionTests.model()
        let new = try CompactionTests.model(addingText: true)
        let store = try Store(at: path, model: old)
        let context = store.newBackgroundContext()
        try context.insert("Item").setValue(.string("old"), forKey: "code")
        try await context.save()
        try await store.close()
        var options = StoreOptions()
        options.modelMismatch = .migrate
        // Read-only, migrated in memory: history tells only of what the log holds.
        var readOnly = options
        readOnly.readOnly = true
        let inMemory = try Store(at: path, model: new, options: readOnly)
        #expect(inMemory.currentHistoryToken.lsn == LSN(2) && inMemory.lastSaveLSN > LSN(2))
        #expect(try inMemory.historyReader(since: inMemory.currentHistoryToken).next() == nil)
        try await inMemory.close()
        let migrated = try Store(at: path, model: new, options: options)
        let later = migrated.newBackgroundContext()
        let item = try later.insert("Item")
        try item.setValue(.string("new"), forKey: "code")
        try item.setValue(.string("yes"), forKey: "added")
        try await later.save()
        let read = try await Self.transactions(migrated, since: nil)
        #expect(read.map { $0.newModel != nil } == [true, false, true, false])
        #expect(read[0].newModel == old && read[2].newModel == new)
        #expect(try read[3].changes.first?["added"] == .attribute(.string("yes")))
        let folded = try await Self.fold(read, model: old) { try await Self.objects(at: path, asOf: $0) }
        #expect(try folded == Self.objects(of: migrated))
        try await migrated.close()
    }

    @Test(arguments: ["store-v1", "store-v2", "store-v3"])
    func theGoldenStoresOfEveryFormatVersionReadAsHistory(name: String) async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        try FileManager.default.copyItem(atPath: GoldenGraphStoreTests.fixtures.appendingPathComponent(name).path, toPath: path)
        var options = StoreOptions()
        options.readOnly = true
        let store = try Store(at: path, options: options)
        let read = try await Self.transactions(store, since: nil)
        #expect(read.first?.newModel != nil && read.last?.lsn == store.lastSaveLSN)
        #expect(read.allSatisfy { ($0.timestamp == nil) == (name != "store-v3") || $0.newModel != nil })
        let folded = try await Self.fold(read, model: store.model) { try await Self.objects(at: path, asOf: $0) }
        #expect(try folded == Self.objects(of: store))
        try await store.close()
    }
}
