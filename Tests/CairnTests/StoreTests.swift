import CairnSupport
import CairnTestSupport
import CairnLog
import Foundation
import Testing
@testable import Cairn

@Suite struct StoreTests {
    @Test func savedObjectsSurviveReopeningWithStableIDs() async throws {
        let folder = TemporaryDirectory()
        let model = try libraryModel()
        var ids: [String: ObjectID] = [:]
        var uris: [String: String] = [:]
        do {
            let store = try Store(at: folder.store(), model: model)
            let context = store.viewContext
            let author = try context.make("Author", ["name": "Ursula K. Le Guin", "born": 1929])
            for (code, title) in [("B1", "A Wizard of Earthsea"), ("B2", "The Dispossessed")] {
                let book = try context.make("Book", ["code": .string(code), "title": .string(title), "year": 1968])
                try book.setObject(author, forKey: "author")
            }
            try await context.save()
            ids["author"] = author.objectID
            uris["author"] = store.uri(for: author.objectID)
            try await store.close()
        }
        let store = try Store(at: folder.store(), model: model)
        let context = store.viewContext
        let authorID = try #require(ids["author"])
        let author = try #require(context.object(with: authorID))
        #expect(author.string("name") == "Ursula K. Le Guin")
        #expect(try author.value(forKey: "born", as: Value.self) == .integer(1929))
        #expect(try author.value(forKey: "rating", as: Value.self) == .double(0), "defaults are applied")
        #expect(Set(try author.objects(forKey: "books").compactMap { $0.string("title") }) == ["A Wizard of Earthsea", "The Dispossessed"])
        #expect(store.objectID(forURI: try #require(uris["author"])) == authorID)
        for malformed in [
            "", "cairn://", "cairn://\(store.identifier)/Author", "cairn://\(store.identifier)/Nope/p1",
            "cairn://\(UUID())/Author/p1", "cairn://\(store.identifier)/Author/p", "cairn://\(store.identifier)/Author/px",
            "http://\(store.identifier)/Author/p1"
        ] {
            #expect(store.objectID(forURI: malformed) == nil, "\(malformed)")
        }
        #expect(try store.count(of: "Item") == 2)
        try await store.close()
    }

    @Test func aSaveWithNoChangesAppendsNothing() async throws {
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: try libraryModel())
        let before = store.lastSaveLSN
        try await store.viewContext.save()
        let background = store.newBackgroundContext()
        try await background.save()
        #expect(store.lastSaveLSN == before)
        try await store.close()
    }

    @Test func wrongTypesThrowNamingEntityPropertyAndTypes() throws {
        let store = Store(inMemory: try libraryModel())
        let author = try store.viewContext.insert("Author")
        #expect { try author.setValue(.string("1929"), forKey: "born") } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .typeMismatch && error.entity == "Author" && error.property == "born"
                && error.message.contains("integer32") && error.message.contains("string")
        }
        #expect { try author.setValue(.integer(Int64(Int32.max) + 1), forKey: "born") } throws: { ($0 as? StoreError)?.code == .typeMismatch }
        #expect { try author.setValue("x", forKey: "nope") } throws: { ($0 as? StoreError)?.code == .unknownName }
        #expect { try author.objects(forKey: "name") } throws: { ($0 as? StoreError)?.code == .unknownName }
        #expect { try store.viewContext.insert("Item") } throws: { ($0 as? StoreError)?.code == .abstractEntity }
    }

    @Test func requiredValuesAreCheckedAtSave() async throws {
        let store = Store(inMemory: try libraryModel())
        let context = store.viewContext
        try context.insert("Author")
        await #expect { try await context.save() } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .missingValue && error.entity == "Author" && error.property == "name"
        }
        #expect(context.hasChanges, "a failed save keeps the changes")
    }

    /// An update is checked against the object's values as they will be saved: its own
    /// changes over the stored row (a root context) or over its parent's view (a child).
    @Test func requiredValuesClearedOnSavedObjectsAreRefusedAtSave() async throws {
        let (store, author) = try await libraryStore(withAuthor: "Ursula K. Le Guin", born: 1929)
        let root = store.newBackgroundContext()
        let same = try #require(root.object(with: author))
        try same.setValue(1930, forKey: "born")
        try same.setValue(nil, forKey: "name")
        await #expect { try await root.save() } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .missingValue && error.property == "name" && error.objects == [author]
        }
        try same.setValue("Ursula Le Guin", forKey: "name")
        try await root.save()
        let child = root.newChildContext()
        try #require(child.object(with: author)).setValue(nil, forKey: "name")
        await #expect { try await child.save() } throws: { ($0 as? StoreError)?.code == .missingValue }
        let saved = try #require(store.viewContext.object(with: author))
        #expect(try saved.value(forKey: "name", as: String.self) == "Ursula Le Guin")
        #expect(try saved.value(forKey: "born", as: Int.self) == 1930)
    }

    @Test func uniquenessViolationsNameTheConstraint() async throws {
        let store = Store(inMemory: try libraryModel())
        let context = store.viewContext
        try context.make("Author", ["name": "Octavia Butler"])
        try await context.save()
        let other = store.newBackgroundContext()
        try other.make("Author", ["name": "Octavia Butler"])
        await #expect { try await other.save() } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .uniquenessViolation && error.entity == "Author" && error.property == "name" && error.objects.count == 2
        }
        // Across sub-entities of the constraint's owner, and within one save.
        let items = store.newBackgroundContext()
        try items.make("Book", ["code": "X1", "title": "One"])
        try items.make("Magazine", ["code": "X1"])
        await #expect { try await items.save() } throws: { ($0 as? StoreError)?.code == .uniquenessViolation }
        // Swapping values between two objects in one save is fine.
        let swap = store.newBackgroundContext()
        let a = try swap.make("Book", ["code": "S1", "title": "a"])
        let b = try swap.make("Book", ["code": "S2", "title": "b"])
        try await swap.save()
        try a.setValue("S2", forKey: "code")
        try b.setValue("S1", forKey: "code")
        try await swap.save()
        // Deleting an object frees its key for an object inserted in the same save.
        let reuse = store.newBackgroundContext()
        try #require(try reuse.fetchFirst(FetchRequest("Book", predicate: .equal("code", "S1")))).delete()
        let newcomer = try reuse.make("Book", ["code": "S1", "title": "c"])
        try await reuse.save()
        #expect(try store.viewContext.fetchIDs(FetchRequest("Book", predicate: .equal("code", "S1"))) == [newcomer.objectID])
        // A refused save leaves nothing behind: its keys are free for the next save.
        let after = store.newBackgroundContext()
        try after.make("Magazine", ["code": "X1"])
        try await after.save()
        #expect(try store.viewContext.count(FetchRequest("Item", predicate: .equal("code", "X1"))) == 1)
    }

    /// A save of many new objects files their keys on another core while it files the rows
    /// (``Tuning/concurrentKeys``): the same refusals, and a refused one leaves no key.
    @Test func largeSavesFileTheirKeysConcurrentlyWithTheSameChecks() async throws {
        let folder = TemporaryDirectory()
        let model = try libraryModel()
        let store = try Store(at: folder.store(), model: model)
        let count = Tuning.concurrentKeys + 500
        func names(_ prefix: String) -> [String] { (0..<count).map { "\(prefix)\($0)" } }
        let first = store.newBackgroundContext()
        for name in names("a") { try first.make("Author", ["name": .string(name)]) }
        try await first.save()
        // A clash with a committed object, and one between two new objects, each in a large save.
        for twin in ["a17", "b\(count - 1)"] {
            let clashing = store.newBackgroundContext()
            for name in names("b") + [twin] { try clashing.make("Author", ["name": .string(name)]) }
            await #expect { try await clashing.save() } throws: { error in
                let error = try #require(error as? StoreError)
                return error.code == .uniquenessViolation && error.objects.count == 2
            }
        }
        // Nothing of the refused saves stays: their keys are free, the committed ones are found.
        let second = store.newBackgroundContext()
        for name in names("b") { try second.make("Author", ["name": .string(name)]) }
        try await second.save()
        for name in ["a0", "a17", "b0", "b\(count - 1)"] {
            #expect(try store.viewContext.count(FetchRequest("Author", predicate: .equal("name", .string(name)))) == 1, "\(name)")
        }
        try await store.close()
        let reopened = try Store(at: folder.store(), model: model)
        #expect(try reopened.count(of: "Author") == 2 * count)
        let late = reopened.newBackgroundContext()
        try late.make("Author", ["name": "b5"])
        await #expect { try await late.save() } throws: { ($0 as? StoreError)?.code == .uniquenessViolation }
        try await reopened.close()
    }

    @Test func modelMismatchFailsWithTheDifferencesOrWipes() async throws {
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: try libraryModel())
        try store.viewContext.make("Author", ["name": "Ada"])
        try await store.viewContext.save()
        try await store.close()

        let changed = try Model {
            Entity("Author") {
                Attribute("name", .string); Attribute("email", .string)
            }
        }
        var failing = StoreOptions()
        failing.modelMismatch = .fail
        #expect { try Store(at: folder.store(), model: changed, options: failing) } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .modelMismatch && error.message.contains("+ attribute Author.email") && error.message.contains("- entity Book")
        }
        var options = StoreOptions()
        options.modelMismatch = .wipe
        let wiped = try Store(at: folder.store(), model: changed, options: options)
        #expect(try wiped.count(of: "Author") == 0)
        try wiped.viewContext.make("Author", ["email": "a@example.org"])
        try await wiped.viewContext.save()
        try await wiped.close()
        let reopened = try Store(at: folder.store(), model: changed)
        #expect(try reopened.count(of: "Author") == 1)
        try await reopened.close()
    }
}

@Suite struct StoreLifetimeTests {
    /// Several stores open at once in one process, each locked against a second opener; closing
    /// one lets it be opened again (an app switching users), by path, URL or asynchronously.
    @Test func storesOpenSideBySideAndCloseReleasesTheirLock() async throws {
        let first = TemporaryDirectory(), second = TemporaryDirectory()
        let model = try libraryModel()
        let a = try Store(at: first.store(), model: model)
        let b = try Store(at: URL(fileURLWithPath: second.store()), model: model)
        try a.viewContext.make("Author", ["name": "In A"])
        try b.viewContext.make("Author", ["name": "In B"])
        try await a.viewContext.save()
        try await b.viewContext.save()
        #expect(throws: (any Error).self, "a store already open is locked") { try Store(at: first.store(), model: model) }
        try await a.close()
        let again = try await Store.open(at: first.store(), model: model)
        #expect(try again.viewContext.fetch(FetchRequest("Author")).map { try $0.value(forKey: "name", as: Value.self) } == ["In A"])
        #expect(try b.viewContext.fetch(FetchRequest("Author")).map { try $0.value(forKey: "name", as: Value.self) } == ["In B"])
        try await again.close()
        try await b.close()
        #expect { try Store(at: URL(string: "https://example.org/store")!, model: model) } throws: {
            ($0 as? StoreError)?.code == .invalidLocation
        }
    }

    /// Saves from several background contexts at once, each on its own task, all land (run
    /// under `--sanitize=thread` too), and the view context ends with every one of them.
    @Test func concurrentSavesFromManyContextsAllLand() async throws {
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: try libraryModel())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for round in 0..<10 {
                        let context = store.newBackgroundContext()
                        for n in 0..<5 { try context.make("Author", ["name": .string("w\(writer)-r\(round)-\(n)")]) }
                        try await context.save()
                    }
                }
            }
            group.addTask {
                for _ in 0..<50 { _ = try store.viewContext.count(FetchRequest("Author")) }
            }
            try await group.waitForAll()
        }
        #expect(try store.viewContext.count(FetchRequest("Author")) == 8 * 10 * 5)
        try await store.close()
        let reopened = try Store(at: folder.store(), model: try libraryModel())
        #expect(try reopened.viewContext.count(FetchRequest("Author")) == 400)
        try await reopened.close()
    }

    /// Large saves use a second thread (their records are encoded in two halves and compressed
    /// while they are applied) while holding the store's commit lock: many of them at once, from
    /// more tasks than there are cores, all land.
    @Test func concurrentLargeSavesAllLand() async throws {
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: try libraryModel())
        let tasks = 6, size = ChangeSetCodec.concurrentInserts + 100
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<tasks {
                group.addTask {
                    let context = store.newBackgroundContext()
                    for n in 0..<size { try context.make("Author", ["name": .string("w\(writer)-\(n)"), "born": .integer(Int64(n))]) }
                    try await context.save()
                }
                group.addTask {
                    try await store.batchInsert("Author", columns: ["name"], rows: (0..<size).map { [.string("b\(writer)-\($0)")] })
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.count(of: "Author") == 2 * tasks * size)
        try await store.close()
        let reopened = try Store(at: folder.store(), model: try libraryModel())
        #expect(try reopened.count(of: "Author") == 2 * tasks * size)
        #expect(
            try reopened.viewContext.fetchFirst(FetchRequest("Author", predicate: .equal("name", "w5-4100")))?.value(forKey: "born", as: Value.self)
                == .integer(4100))
        try await reopened.close()
    }
}

@Suite struct StoreOptionsTests {
    /// The store's options reach its log: the segment size rolls segments, every durability mode
    /// keeps what was saved across a close, a torn end is cut by the default recovery and refused
    /// by `absoluteConsistency`, and a read-only store refuses saves.
    @Test func optionsReachTheLog() async throws {
        let model = try libraryModel()
        for durability in [Durability.always, .interval(.milliseconds(5)), .none] {
            let folder = TemporaryDirectory()
            var options = StoreOptions()
            options.durability = durability
            options.segmentSize = 4096
            do {
                let store = try Store(at: folder.store(), model: model, options: options)
                for round in 0..<20 {
                    let context = store.newBackgroundContext()
                    for n in 0..<10 { try context.make("Author", ["name": .string("a\(round)-\(n)-" + UUID().uuidString + UUID().uuidString)]) }
                    try await context.save()
                }
                try await store.close()
            }
            let segments = try LogInspection.inspect(directory: folder.store()).segments
            #expect(segments.count > 3, "\(durability): 4 KiB segments roll (\(segments.count), \(segments.map(\.bytesOnDisk)))")
            let reopened = try Store(at: folder.store(), model: model, options: options)
            #expect(try reopened.count(of: "Author") == 200, "\(durability)")
            try await reopened.close()
        }

        // A torn end: bytes of a frame that never finished.
        let folder = TemporaryDirectory()
        do {
            let store = try Store(at: folder.store(), model: model)
            try store.viewContext.make("Author", ["name": "Kept"])
            try await store.viewContext.save()
            try await store.close()
        }
        let active = try #require(try LogInspection.inspect(directory: folder.store()).segments.last?.file)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: folder.store() + "/" + active))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0x43, 0x41, 0x49, 0x52, 0x4E, 0x01, 0x02]))
        try handle.close()
        var strict = StoreOptions()
        strict.recovery = .absoluteConsistency
        #expect(throws: (any Error).self, "absoluteConsistency refuses a torn end") { try Store(at: folder.store(), model: model, options: strict) }
        var readOnly = StoreOptions()
        readOnly.readOnly = true
        readOnly.recovery = .salvage
        let salvaged = try Store(at: folder.store(), model: model, options: readOnly)
        #expect(try salvaged.count(of: "Author") == 1)
        try salvaged.viewContext.make("Author", ["name": "Refused"])
        await #expect { try await salvaged.viewContext.save() } throws: { ($0 as? StoreError)?.code == .readOnly }
        try await salvaged.close()
        let recovered = try Store(at: folder.store(), model: model)  // pointInTime: the tail is cut
        #expect(try recovered.count(of: "Author") == 1)
        try recovered.viewContext.make("Author", ["name": "After"])
        try await recovered.viewContext.save()
        try await recovered.close()
        #expect(try LogInspection.inspect(directory: folder.store()).segments.allSatisfy { $0.status == .ok })
    }
}
