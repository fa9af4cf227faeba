import CairnLog
import CairnSupport
import CairnTestSupport
import Foundation
import Observation
import Testing
@testable import Cairn

/// Fetched results follow saves: each update's changes, applied to the results before it, give
/// the results a fresh fetch gives, sections and pages included, for predicates and sort keys
/// that read through relationships.
@Suite struct FetchedResultsTests {
    /// Records a controller's updates, and checks each one against the results before it.
    final class Follower: Sendable {
        struct Seen {
            var sections: [[ObjectID]] = []
            var flat: [ObjectID] = []
            var updates = 0
            var initial = 0
            var problems: [String] = []
        }
        let seen = Protected(Seen())
        let observation: Protected<SaveObservation?> = Protected(nil)

        init(_ controller: FetchedResultsController) {
            let seen = seen
            observation.withLock {
                $0 = controller.observe { update in
                    seen.withLock { seen in
                        if update.isInitial {
                            seen.initial += 1
                            if seen.initial > 1 || seen.updates > 0 { seen.problems.append("an initial update after others") }
                            (seen.sections, seen.flat) = (update.results.sectionedObjectIDs, update.results.objectIDs)
                            return
                        }
                        if seen.initial != 1 { seen.problems.append("an update before the initial one") }
                        seen.updates += 1
                        guard let applied = update.changes.apply(to: seen.sections) else {
                            seen.problems.append("LSN \(update.results.lsn): \(update.changes) does not apply to \(seen.sections)")
                            seen.sections = update.results.sectionedObjectIDs
                            return
                        }
                        if applied != update.results.sectionedObjectIDs {
                            seen.problems.append(
                                "LSN \(update.results.lsn): \(update.changes) applied to \(seen.sections) gives \(applied), not \(update.results.sectionedObjectIDs)"
                            )
                        }
                        let flat = seen.flat.applying(update.difference)
                        if flat != update.results.objectIDs {
                            seen.problems.append("LSN \(update.results.lsn): the difference gives \(flat ?? []), not \(update.results.objectIDs)")
                        }
                        seen.sections = update.results.sectionedObjectIDs
                        seen.flat = update.results.objectIDs
                    }
                }
            }
        }
    }

    /// Waits until `controller` has followed every save (at most ten seconds).
    static func caughtUp(_ controller: FetchedResultsController, _ store: Store) async throws {
        for _ in 0..<10_000 where controller.results.lsn < store.lastSaveLSN { try await Task.sleep(for: .milliseconds(1)) }
        #expect(controller.results.lsn == store.lastSaveLSN, "the controller followed every save")
    }

    /// Reads a key path (attributes through to-one relationships) of an object, as a value.
    static func value(_ object: ManagedObject, _ path: String) throws -> Value {
        var current: ManagedObject? = object
        let keys = path.split(separator: ".").map(String.init)
        for key in keys.dropLast() { current = try current?.object(forKey: key) }
        return try current?.value(forKey: keys[keys.count - 1], as: Value.self) ?? .null
    }

    /// Checks the controller's results against a fresh fetch: the same IDs in the same order,
    /// in the same sections.
    static func expectFresh(_ controller: FetchedResultsController, _ store: Store, pages: Int = 1, _ comment: Comment? = nil) throws {
        let context = store.newBackgroundContext(name: "check")
        var request = controller.request
        if let pageSize = controller.pageSize { request.fetchLimit = min(request.fetchLimit ?? .max, pageSize * pages) }
        let fresh = try context.fetch(request)
        let results = controller.results
        #expect(results.objectIDs == fresh.map(\.objectID), comment)
        if let key = controller.sectionKey {
            var expected: [[ObjectID]] = []
            var last: Value?
            let folded = request.sortKeys.first?.caseInsensitive ?? false
            for object in fresh {
                var value = try value(object, key)
                if folded, case .string(let text) = value { value = .string(TextComparison.fold(text, [.caseInsensitive])) }
                if let last, last == value {
                    expected[expected.count - 1].append(object.objectID)
                } else {
                    expected.append([object.objectID])
                }
                last = value
            }
            #expect(results.sectionedObjectIDs == expected, comment)
            #expect(results.sections.map(\.count) == expected.map(\.count), comment)
        } else {
            #expect(results.sections.count == 1 && results.sections.first?.count == fresh.count, comment)
        }
    }

    @Test func aSaveChangesTheResultsAsATableViewAppliesIt() async throws {
        let store = Store(inMemory: try libraryModel())
        let context = store.viewContext
        let le = try context.make("Author", ["name": "Le Guin"])
        let butler = try context.make("Author", ["name": "Butler"])
        var books: [ManagedObject] = []
        for (number, title) in ["Kindred", "Dawn", "Lathe", "Tehanu", "Wild Seed"].enumerated() {
            let book = try context.make("Book", ["code": .string("B\(number)"), "title": .string(title), "year": .integer(Int64(1970 + number))])
            try book.setObject(number == 2 || number == 3 ? le : butler, forKey: "author")
            books.append(book)
        }
        try await context.save()
        let controller = try FetchedResultsController(
            FetchRequest("Book", predicate: try FetchPredicate(format: "year >= 1971"), sortKeys: [SortKey("author.name"), SortKey("title")]),
            in: store, sectionKey: "author.name")
        try Self.expectFresh(controller, store)
        #expect(controller.results.sections.map(\.name) == ["Butler", "Le Guin"])
        #expect(controller.results.objectIDs(inSection: 0) == [books[1].objectID, books[4].objectID])
        let follower = Follower(controller)
        let updates = Protected<[FetchedResultsUpdate]>([])
        let observation = controller.observe { update in if !update.isInitial { updates.withLock { $0.append(update) } } }

        // A new book, a title that moves a book, a book out of the predicate, a deleted book.
        let new = try context.make("Book", ["code": "B9", "title": "Adulthood Rites", "year": 1988])
        try new.setObject(butler, forKey: "author")
        try books[4].setValue("A Wild Seed", forKey: "title")
        try books[1].setValue(1900, forKey: "year")
        try books[3].delete()
        try await context.save()
        try await Self.caughtUp(controller, store)
        try Self.expectFresh(controller, store)
        let first = try #require(updates.current.first?.changes)
        #expect(first.inserted.map(\.id) == [new.objectID])
        #expect(Set(first.deleted.map(\.id)) == [books[1].objectID, books[3].objectID])
        #expect(first.moved.isEmpty && first.updated.map(\.id).contains(books[4].objectID), "A Wild Seed stays first, retitled")
        #expect(controller.results.sections.map(\.name) == ["Butler", "Le Guin"])

        // Renaming an author moves its books' section (a change to a related object).
        try le.setValue("Ursula K. Le Guin", forKey: "name")
        try await context.save()
        try await Self.caughtUp(controller, store)
        try Self.expectFresh(controller, store)
        #expect(controller.results.sections.map(\.name) == ["Butler", "Ursula K. Le Guin"])
        let rename = try #require(updates.current.last?.changes)
        #expect(rename.deletedSections == [1] && rename.insertedSections == [1])

        // Every book of one section gone: the section goes.
        for book in try context.fetch(FetchRequest("Book", predicate: .equal("author.name", "Ursula K. Le Guin"))) { try book.delete() }
        try await context.save()
        try await Self.caughtUp(controller, store)
        try Self.expectFresh(controller, store)
        #expect(controller.results.sections.map(\.name) == ["Butler"])
        #expect(follower.seen.current.problems == [])
        #expect(follower.seen.current.updates == 3)
        observation.cancel()
    }

    @Test func aSectionKeyMustBeTheFirstSortKey() throws {
        let store = Store(inMemory: try libraryModel())
        #expect(throws: StoreError.self) {
            try FetchedResultsController(FetchRequest("Book", sortKeys: [SortKey("title")]), in: store, sectionKey: "year")
        }
        #expect(throws: StoreError.self) { try FetchedResultsController(FetchRequest("Book"), in: store, pageSize: 0) }
        #expect(throws: StoreError.self) { try FetchedResultsController(FetchRequest("Nobody"), in: store) }
    }

    @Test func pagesShowMoreOnRequestWithTheSameChanges() async throws {
        let store = Store(inMemory: try libraryModel())
        let context = store.viewContext
        for number in 0..<25 { try context.make("Book", ["code": .string("C\(number)"), "title": .string("T\(100 + number)")]) }
        try await context.save()
        let controller = try FetchedResultsController(FetchRequest("Book", sortKeys: [SortKey("title")]), in: store, pageSize: 10)
        let follower = Follower(controller)
        #expect(controller.results.count == 10)
        controller.loadMore()
        #expect(controller.results.count == 20)
        try Self.expectFresh(controller, store, pages: 2)
        try context.make("Book", ["code": "C99", "title": "T000"])
        try await context.save()
        try await Self.caughtUp(controller, store)
        try Self.expectFresh(controller, store, pages: 2)
        #expect(controller.results.count == 20)
        #expect(follower.seen.current.problems == [])
        #expect(follower.seen.current.updates == 2)
    }

    @Test func updatesComeAsAnAsyncSequenceThatCatchesUpAfterFallingBehind() async throws {
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: try libraryModel())
        let context = store.viewContext
        let controller = try FetchedResultsController(FetchRequest("Member", sortKeys: [SortKey("email")]), in: store)
        let updates = controller.updates(bufferLimit: 2)
        var iterator = updates.makeAsyncIterator()
        var shown: [ObjectID] = []
        // Five saves before the consumer reads: more than its buffer, so they come as one.
        for number in 0..<5 {
            try context.make("Member", ["email": .string("m\(number)@example.org")])
            try await context.save()
        }
        try await Self.caughtUp(controller, store)
        let initial = await iterator.next()
        #expect(initial?.isInitial == true && initial?.results.count == 0)
        var taken = 0
        while shown.count < 5, let update = await iterator.next() {
            taken += 1
            shown = try #require(shown.applying(update.difference))
        }
        #expect(shown == controller.results.objectIDs)
        #expect(taken < 5, "the updates past the buffer came as one")
        try context.make("Member", ["email": "a-first@example.org"])
        try await context.save()
        let next = await iterator.next()
        #expect(next?.changes.inserted.map(\.place) == [FetchedIndexPath(item: 0, section: 0)])
        let ended = Task {
            var iterator = iterator
            return await iterator.next()
        }
        try await store.close()
        #expect(await ended.value == nil, "the store closed: the sequence ends")
    }

    @Test func observedResultsTellObserversOfASave() async throws {
        let store = Store(inMemory: try libraryModel())
        let observed = try FetchedResultsController(FetchRequest("Member", sortKeys: [SortKey("email")]), in: store).observed()
        let changed = Protected(false)
        withObservationTracking {
            _ = observed.results.count
        } onChange: {
            changed.withLock { $0 = true }
        }
        try store.viewContext.make("Member", ["email": "observed@example.org"])
        try await store.viewContext.save()
        for _ in 0..<10_000 where !changed.current { try await Task.sleep(for: .milliseconds(1)) }
        #expect(changed.current)
        #expect(observed.results.count == 1 && observed.lastChanges?.inserted.count == 1)
    }

    @Test func aSaveOfManyObjectsOrAnUntraceableChangeFetchesAgainWithTheSameChanges() async throws {
        let model = try Model {
            Entity("Tag") { Attribute("name", .string) }
            Entity("Note") {
                Attribute("text", .string)
                Relationship("tag", to: "Tag")  // no inverse: a renamed tag cannot be traced back
            }
        }
        let store = Store(inMemory: model)
        let context = store.viewContext
        let tags = try (0..<3).map { number in try context.make("Tag", ["name": .string("tag \(number)")]) }
        for number in 0..<20 {
            let note = try context.make("Note", ["text": .string("note \(number)")])
            try note.setObject(tags[number % 3], forKey: "tag")
        }
        try await context.save()
        let byTag = try FetchedResultsController(FetchRequest("Note", sortKeys: [SortKey("tag.name"), SortKey("text")]), in: store, sectionKey: "tag.name")
        let all = try FetchedResultsController(FetchRequest("Note", sortKeys: [SortKey("text")]), in: store)
        let followers = [Follower(byTag), Follower(all)]
        try tags[0].setValue("tag 9", forKey: "name")
        try await context.save()
        for number in 0..<1_200 { try context.make("Note", ["text": .string("bulk \(number)")]) }
        try await context.save()
        for controller in [byTag, all] {
            try await Self.caughtUp(controller, store)
            try Self.expectFresh(controller, store)
        }
        #expect(byTag.results.sections.map(\.name) == ["", "tag 1", "tag 2", "tag 9"])
        for follower in followers {
            #expect(follower.seen.current.problems == [])
            #expect(follower.seen.current.updates == 2 || follower.seen.current.updates == 1)
        }
        #expect(followers[0].seen.current.updates == 2, "the rename and the bulk save")
    }

    /// The request shapes the randomised test follows.
    static let shapes: [(FetchRequest, String?, Int?)] = {
        var shapes: [(FetchRequest, String?, Int?)] = []
        shapes.append((FetchRequest("Book", sortKeys: [SortKey("title")]), nil, nil))
        shapes.append((FetchRequest("Book", predicate: try? FetchPredicate(format: "year > 1990"), sortKeys: [SortKey("year", ascending: false)]), nil, nil))
        shapes.append((FetchRequest("Book", sortKeys: [SortKey("author.name"), SortKey("year")]), "author.name", nil))
        shapes.append((FetchRequest("Book", predicate: try? FetchPredicate(format: "author.born < 1960"), sortKeys: [SortKey("year")]), "year", nil))
        shapes.append((FetchRequest("Author", predicate: try? FetchPredicate(format: "ANY books.year > 2000"), sortKeys: [SortKey("name")]), nil, nil))
        shapes.append((FetchRequest("Author", sortKeys: [SortKey("born"), SortKey("name", ascending: false)]), "born", nil))
        shapes.append((FetchRequest("Book", sortKeys: [SortKey("title", caseInsensitive: true)], fetchOffset: 3, fetchLimit: 7), nil, nil))
        shapes.append((FetchRequest("Book", sortKeys: [SortKey("year"), SortKey("code")]), "year", 6))
        var reversed = FetchRequest("Book", sortKeys: [SortKey("title")])
        reversed.reversesOrder = true
        shapes.append((reversed, nil, nil))
        shapes.append((FetchRequest("Item", predicate: try? FetchPredicate(format: "code BEGINSWITH 'B1'")), nil, nil))
        shapes.append(
            (
                FetchRequest("Author", predicate: try? FetchPredicate(format: "SUBQUERY(books, $b, $b.year > 2005).@count > 0"), sortKeys: [SortKey("name")]),
                nil, nil
            ))
        shapes.append((FetchRequest("Author", predicate: try? FetchPredicate(format: "books.@count >= 2"), sortKeys: [SortKey("name")]), nil, nil))
        shapes.append((FetchRequest("Book", predicate: try? FetchPredicate(format: "ANY author.books.year > 1995"), sortKeys: [SortKey("code")]), nil, nil))
        shapes.append((FetchRequest("Book", sortKeys: [SortKey("title", caseInsensitive: true), SortKey("code")]), "title", nil))
        shapes.append((FetchRequest("Book", sortKeys: [SortKey("author.born", ascending: false), SortKey("title")]), "author.born", 4))
        return shapes
    }()

    @Test func randomSavesFromSeveralContextsKeepEveryResultAsAFreshFetch() async throws {
        let seed = TestSeed.base
        var random = TestSeed.generator()
        let store = Store(inMemory: try libraryModel())
        let setup = store.newBackgroundContext(name: "setup")
        for number in 0..<8 {
            try setup.make("Author", ["name": .string("Author \(number % 5)\(number)"), "born": number % 3 == 0 ? .null : .integer(Int64(1940 + number * 5))])
        }
        try await setup.save()
        let controllers = try Self.shapes.map { request, section, page in try FetchedResultsController(request, in: store, sectionKey: section, pageSize: page)
        }
        let followers = controllers.map(Follower.init)
        // Whether each shape's results ever left what they began as (a shape whose objects no
        // random save touched has no update to see).
        let initial = controllers.map(\.results.sectionedObjectIDs)
        var changed = controllers.map { _ in false }
        let contexts = (0..<3).map { store.newBackgroundContext(name: "writer \($0)") }
        var nextCode = 0
        for step in 0..<60 {
            let context = contexts[Int.random(in: 0..<contexts.count, using: &random)]
            let authors = try context.fetch(FetchRequest("Author"))
            let books = try context.fetch(FetchRequest("Book"))
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                switch Int.random(in: 0..<10, using: &random) {
                case 0...2:
                    let book = try context.make(
                        "Book",
                        ["code": .string("B\(nextCode)"), "title": .string(["Dune", "dawn", "Emma", "emma", "Kindred"].randomElement(using: &random)!)])
                    nextCode += 1
                    if Bool.random(using: &random) { try book.setValue(.integer(Int64.random(in: 1980...2020, using: &random)), forKey: "year") }
                    if let author = authors.randomElement(using: &random) { try book.setObject(author, forKey: "author") }
                case 3...4:
                    if let book = books.randomElement(using: &random), !book.isDeleted {
                        try book.setValue(.integer(Int64.random(in: 1980...2020, using: &random)), forKey: "year")
                    }
                case 5:
                    if let book = books.randomElement(using: &random), !book.isDeleted {
                        try book.setObject(authors.randomElement(using: &random), forKey: "author")
                    }
                case 6:
                    if let book = books.randomElement(using: &random), !book.isDeleted { try book.delete() }
                case 7:
                    if let author = authors.randomElement(using: &random) {
                        try author.setValue(.string("Author \(Int.random(in: 0..<9, using: &random))"), forKey: "name")
                    }
                case 8:
                    if let author = authors.randomElement(using: &random) {
                        try author.setValue(Bool.random(using: &random) ? .null : .integer(Int64.random(in: 1930...1990, using: &random)), forKey: "born")
                    }
                default:
                    if let book = books.randomElement(using: &random), !book.isDeleted {
                        try book.setValue(.string(["Dune", "dawn", "Zed"].randomElement(using: &random)!), forKey: "title")
                    }
                }
            }
            do {
                try await context.save()
            } catch {
                context.rollback()  // (a uniqueness or merge conflict: nothing saved)
            }
            for (index, controller) in controllers.enumerated() {
                try await Self.caughtUp(controller, store)
                if controller.results.sectionedObjectIDs != initial[index] { changed[index] = true }
            }
            if step % 10 == 9 || step == 59 {
                for (index, controller) in controllers.enumerated() {
                    try Self.expectFresh(controller, store, "seed \(seed), step \(step), shape \(index)")
                }
            }
        }
        #expect(changed.filter { $0 }.count >= controllers.count - 3, "seed \(seed): the random saves change most shapes' results")
        for (index, follower) in followers.enumerated() {
            #expect(follower.seen.current.problems == [], "seed \(seed), shape \(index)")
            #expect(!changed[index] || follower.seen.current.updates > 0, "seed \(seed): shape \(index) saw its results change")
            #expect(follower.seen.current.initial == 1, "shape \(index) began with the results whole")
        }
    }
}
