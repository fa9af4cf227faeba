import CairnLog
import CairnSupport
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

extension TransactionInfo {
    /// A transaction header for records made by tests.
    static let testing = TransactionInfo(microseconds: 0, author: nil, contextName: nil)
}

/// Save notifications: what each save did and who made it, once per save in LSN order, on the
/// observer's own thread with a bounded buffer; the transaction header they come from is in the
/// save's change record.
@Suite struct SaveNotificationTests {
    /// Collects the events an observation delivers.
    final class Events: Sendable {
        let events = Protected<[SaveEvent]>([])
        func append(_ event: SaveEvent) { events.withLock { $0.append(event) } }
        var saves: [SaveNotification] {
            events.current.compactMap { if case .saved(let save) = $0 { save } else { nil } }
        }
        /// Waits until `count` events arrived (at most ten seconds).
        func wait(for count: Int) async throws {
            for _ in 0..<10_000 where events.current.count < count { try await Task.sleep(for: .milliseconds(1)) }
        }
    }

    @Test func aNotificationTellsWhatASaveDidWhoMadeItAndWhen() async throws {
        let store = Store(inMemory: try libraryModel())
        let events = Events()
        let observation = try store.observeSaves { events.append($0) }
        let context = store.newBackgroundContext(name: "importer")
        context.transactionAuthor = "sync job"
        let before = Date()
        let author = try context.make("Author", ["name": "Ursula K. Le Guin"])
        try await context.save()
        let book = try context.make("Book", ["code": "B1", "title": "The Dispossessed"])
        try book.setObject(author, forKey: "author")
        try author.setValue(1929, forKey: "born")
        try await context.save()
        try book.delete()
        try await context.save()
        context.transactionAuthor = nil
        let batch = try await store.batchInsert("Author", [["name": "Octavia Butler"]])
        try await events.wait(for: 4)
        let saves = events.saves
        try #require(saves.count == 4)
        #expect(saves.map(\.lsn) == saves.map(\.lsn).sorted() && Set(saves.map(\.lsn)).count == 4)
        #expect(saves.map(\.contextName) == ["importer", "importer", "importer", nil])
        #expect(saves.map(\.author) == ["sync job", "sync job", "sync job", nil])
        #expect(saves.allSatisfy { $0.timestamp >= before.addingTimeInterval(-1) && $0.timestamp <= Date().addingTimeInterval(1) })
        #expect(saves[0].inserted == [author.objectID] && saves[0].updated.isEmpty && saves[0].deleted.isEmpty)
        #expect(saves[1].inserted == [book.objectID] && saves[1].updated == [author.objectID])
        #expect(saves[1].updatedProperties == [author.objectID: ["born", "books"]], "the inverse the context kept in step is named")
        #expect(saves[2].deleted == [book.objectID] && saves[2].updatedProperties == [author.objectID: ["books"]])
        #expect(saves[3].inserted == Set(batch))
        observation.cancel()
    }

    @Test func anObservationOfSomeEntitiesGetsOnlyTheirSavesAndObjects() async throws {
        let store = Store(inMemory: try libraryModel())
        let events = Events()
        // "Item" is abstract: its sub-entities (Book, Magazine) are what it names.
        let observation = try store.observeSaves(of: ["Item"]) { events.append($0) }
        let context = store.viewContext
        let author = try context.make("Author", ["name": "Only an author"])
        try await context.save()
        let book = try context.make("Book", ["code": "B2", "title": "Kindred"])
        let other = try context.make("Author", ["name": "Another author"])
        try await context.save()
        let magazine = try context.make("Magazine", ["code": "M1"])
        try await context.save()
        try await events.wait(for: 2)
        try await Task.sleep(for: .milliseconds(20))  // (a third event would have come by now)
        let saves = events.saves
        #expect(saves.count == 2, "the save of an author alone is left out")
        #expect(saves.first?.inserted == [book.objectID], "only the objects of the entities asked for")
        #expect(saves.last?.inserted == [magazine.objectID])
        #expect(!saves.contains { $0.inserted.contains(author.objectID) || $0.inserted.contains(other.objectID) })
        #expect(throws: StoreError.self) { try store.observeSaves(of: ["Nobody"]) { _ in } }
        observation.cancel()
    }

    @Test func concurrentSavesAreToldOnceEachInLSNOrder() async throws {
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: try libraryModel())
        let told = Protected<[LSN]>([])
        let saved = Protected<[LSN]>([])
        let synchronous = store.observeSavesSynchronously { save in saved.withLock { $0.append(save.lsn) } }
        let events = try store.saves()
        let reader = Task {
            var lsns: [LSN] = []
            for await event in events {
                guard case .saved(let save) = event else { Issue.record("a save missed: \(event)"); continue }
                lsns.append(save.lsn)
                if lsns.count == 8 * 25 { break }
            }
            told.withLock { $0 = lsns }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    let context = store.newBackgroundContext(name: "writer \(writer)")
                    for number in 0..<25 {
                        try context.make("Member", ["email": .string("\(writer)-\(number)@example.org")])
                        try await context.save()
                    }
                }
            }
            try await group.waitForAll()
        }
        await reader.value
        let lsns = told.current
        #expect(lsns.count == 200)
        #expect(lsns == lsns.sorted() && Set(lsns).count == 200, "once each, in LSN order")
        #expect(Set(lsns) == Set(saved.current), "the saves made")
        synchronous.cancel()
        try await store.close()
    }

    @Test func aSlowObserverNeverHoldsUpSavesAndIsToldWhatItMissed() async throws {
        let store = Store(inMemory: try libraryModel())
        let events = Events()
        let gate = DispatchSemaphore(value: 0)
        let started = Protected(false)
        let observation = try store.observeSaves(bufferLimit: 4) { event in
            let first = started.withLock { started in
                defer { started = true }
                return !started
            }
            if first { gate.wait() }  // the first call blocks
            events.append(event)
        }
        let context = store.viewContext
        var lsns: [LSN] = []
        for number in 0..<20 {
            try context.make("Member", ["email": .string("\(number)@example.org")])
            try await context.save()
            lsns.append(store.lastSaveLSN)
            // (The observer is in its first call before the others come.)
            if number == 0 { for _ in 0..<10_000 where !started.current { try await Task.sleep(for: .milliseconds(1)) } }
        }
        // Every save returned while the observer was stuck in its first call.
        #expect(events.events.current.isEmpty)
        gate.signal()
        try await events.wait(for: 4)
        try await Task.sleep(for: .milliseconds(20))
        let seen = events.events.current
        var covered = 0
        var missed: [SavesMissed] = []
        for event in seen {
            switch event {
            case .saved: covered += 1
            case .missed(let gap):
                covered += gap.count
                missed.append(gap)
            }
        }
        #expect(covered == 20, "every save is told, or counted among those missed")
        #expect(missed.count == 1, "one word of what was missed, however far it fell behind")
        #expect(missed.first?.since == lsns[0], "missed since the last save it was given")
        if case .saved(let last) = seen.last { #expect(last.lsn == lsns[19]) } else { Issue.record("the last save is told") }
        observation.cancel()
    }

    @Test func savesEndWhenTheStoreClosesOrTheTaskIsCancelled() async throws {
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: try libraryModel())
        let ended = try store.saves()
        let waiting = Task {
            var count = 0
            for await _ in ended { count += 1 }
            return count
        }
        let cancelled = try store.saves()
        let cancelledTask = Task {
            var count = 0
            for await _ in cancelled { count += 1 }
            return count
        }
        try store.viewContext.make("Member", ["email": "one@example.org"])
        try await store.viewContext.save()
        cancelledTask.cancel()
        _ = await cancelledTask.value  // (ends: a cancelled task's sequence ends)
        try await store.close()
        #expect(await waiting.value == 1, "the save before the close, then the end")
    }

    @Test func savesInFlightWhenTheStoreClosesAreStillTold() async throws {
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: try libraryModel())
        let events = try store.saves()
        let reader = Task {
            var lsns: [LSN] = []
            for await event in events { if case .saved(let save) = event { lsns.append(save.lsn) } }
            return lsns
        }
        let saved = Protected<[LSN]>([])
        let writers = (0..<4).map { writer in
            Task {
                let context = store.newBackgroundContext(name: "writer \(writer)")
                for number in 0..<20 {
                    try context.make("Member", ["email": .string("\(writer)-\(number)@example.org")])
                    do { try await context.save() } catch { return }  // (closed: later saves throw)
                    saved.withLock { $0.append(store.lastSaveLSN) }
                }
            }
        }
        try await Task.sleep(for: .milliseconds(5))
        try await store.close()
        for writer in writers { _ = try? await writer.value }
        let told = await reader.value
        #expect(told == told.sorted() && Set(told).count == told.count)
        #expect(Set(saved.current).isSubset(of: Set(told)), "every save that returned was told before the sequence ended")
    }

    @Test func theTransactionHeaderIsInTheRecordAndSurvivesReopen() async throws {
        let folder = TemporaryDirectory()
        let path = folder.store()
        let model = try libraryModel()
        do {
            let store = try Store(at: path, model: model)
            let context = store.newBackgroundContext(name: "ingest ✍️")
            context.transactionAuthor = "nightly"
            try context.make("Member", ["email": "a@example.org"])
            try await context.save()
            _ = try await store.batchInsert("Member", (0..<9_000).map { ["email": .string("\($0)@example.org")] })
            try await store.close()
        }
        let records = try readAll(path)
        #expect(records.map { $0.payload[1] } == [1, 3, 3], "the model record, then two change records of version 3")
        let first = try StoreRecord.changeRecordBody(records[1].payload, lsn: records[1].lsn)
        #expect(first.transaction?.author == "nightly" && first.transaction?.contextName == "ingest ✍️" && !first.inParts)
        let second = try StoreRecord.changeRecordBody(records[2].payload, lsn: records[2].lsn)
        #expect(second.transaction?.author == nil && second.transaction?.contextName == nil && second.inParts)
        let now = Date().timeIntervalSince1970
        #expect(abs((first.transaction?.date.timeIntervalSince1970 ?? 0) - now) < 600)
        let reopened = try Store(at: path, model: model)
        #expect(try reopened.count(of: "Member") == 9_001)
        try await reopened.close()
    }

    @Test func theFormatDocumentsExampleOfVersion3IsWhatIsWritten() throws {
        let model = try libraryModel()
        let book = try #require(model.entity(named: "Book"))
        let changes = ChangeSet(deletes: [ObjectID(entity: book.index, key: 2)])
        let bytes = StoreRecord.changes(changes, TransactionInfo(microseconds: 1_767_225_600_000_000, author: "app", contextName: "main")).encoded()
        // docs/FORMAT.md, "Version 3: the transaction header", the example.
        let documented = "02 03 00 80 80 82 e2 88 d2 a3 06 03 61 70 70 04 6d 61 69 6e 00 00 00 01 01 02"
        #expect(bytes.map { String(format: "%02x", $0) }.joined(separator: " ") == documented)
        let body = try StoreRecord.changeRecordBody(bytes, lsn: LSN(1))
        #expect(body.transaction?.date == Date(timeIntervalSince1970: 1_767_225_600) && body.transaction?.author == "app")
    }

    @Test func aDeleteRecordsItsObjectsUniqueKeysAsTombstones() async throws {
        let folder = TemporaryDirectory()
        let path = folder.store()
        let model = try libraryModel()
        let store = try Store(at: path, model: model)
        let context = store.viewContext
        let author = try context.make("Author", ["name": "Gone", "born": 1900])
        let loan = try context.make("Loan", [:])
        try await context.save()
        try author.delete()
        try loan.delete()
        try await context.save()
        try await store.close()
        let records = try readAll(path)
        let body = try StoreRecord.changeRecordBody(records[2].payload, lsn: records[2].lsn, model: model)
        let name = try #require(model.entity(named: "Author")?.attributePosition("name"))
        #expect(body.transaction?.tombstones == [author.objectID: [name: .string("Gone")]], "a Loan has no unique key: no tombstone")
        #expect(try StoreRecord.changeRecordBody(records[2].payload, lsn: records[2].lsn).transaction?.tombstones == [:], "read without a model")

        // A tombstone that names an attribute outside the constraints is damage.
        var forged = ByteWriter(capacity: 64)
        forged.write(StoreRecord.changesKind)
        forged.write(StoreRecord.version)
        let authors = try #require(model.entity(named: "Author"))
        let born = try #require(authors.attributePosition("born"))
        TransactionInfo(microseconds: 1, author: nil, contextName: nil, tombstones: [author.objectID: [born: .integer(1900)]])
            .write(inParts: false, into: &forged)
        ChangeSetCodec.encode(ChangeSet(), into: &forged)
        #expect {
            try StoreRecord.decode(forged.bytes, lsn: LSN(9), model: model)
        } throws: { error in
            (error as? StoreError)?.code == .corruptRecord && "\(error)".contains("not a constrained attribute")
        }
    }

    @Test func aDamagedTransactionHeaderIsRefusedNamingTheRecord() throws {
        let model = try libraryModel()
        var writer = ByteWriter(capacity: 64)
        writer.write(StoreRecord.changesKind)
        writer.write(StoreRecord.version)
        TransactionInfo(microseconds: 1, author: "a", contextName: "c").write(inParts: false, into: &writer)
        ChangeSetCodec.encode(ChangeSet(), into: &writer)
        let good = writer.bytes
        guard case .changes = try StoreRecord.decode(good, lsn: LSN(7), model: model) else {
            Issue.record("a good record reads")
            return
        }
        var reserved = good
        reserved[2] = 0x80
        #expect {
            try StoreRecord.decode(reserved, lsn: LSN(7), model: model)
        } throws: { error in
            let error = error as? StoreError
            return error?.code == .corruptRecord && error?.lsn == LSN(7) && error?.message.contains("reserved") == true
        }
        var notUTF8 = good
        notUTF8[4 + 1] = 0xFF  // the author's one byte (flags, time, length, byte)
        #expect {
            try StoreRecord.decode(notUTF8, lsn: LSN(7), model: model)
        } throws: { error in
            (error as? StoreError)?.message.contains("author at byte") == true
        }
        #expect(throws: StoreError.self) { try StoreRecord.decode(Array(good.prefix(4)), lsn: LSN(7), model: model) }
    }
}
