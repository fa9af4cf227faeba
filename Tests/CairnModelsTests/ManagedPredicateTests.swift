import CairnModels
import Foundation
import Testing

/// `#Predicate` as SwiftData users write it over typed classes: strings, optionals, to-one
/// chains, to-many counts and `contains(where:)`, enums and Codable values; and the errors that
/// name what cannot be translated.
@Suite struct ManagedPredicateTests {
    /// Le Guin (1929) with three books, Herbert with one, Banks with none.
    static func library() async throws -> Store {
        let store = try Store(inMemoryFor: [Author.self, Book.self])
        let context = store.newBackgroundContext()
        let leGuin = Author(name: "Ursula K. Le Guin", born: 1929)
        let herbert = Author(name: "Frank Herbert", born: 1920)
        let banks = Author(name: "Iain M. Banks")
        for author in [leGuin, herbert, banks] { context.insert(author) }
        for (title, year, tags, author) in [
            ("The Dispossessed", 1974, ["utopia"], leGuin), ("The Left Hand of Darkness", 1969, ["gender", "ice"], leGuin),
            ("Tehanu", 1990, [], leGuin), ("Dune", 1965, ["desert"], herbert)
        ] {
            let book = Book(title: title, year: year)
            book.tags = tags
            book.author = author
        }
        let untitled = Book(title: "")
        context.insert(untitled)
        try await context.save()
        return store
    }

    func titles(_ store: Store, _ predicate: Predicate<Book>) throws -> [String] {
        try store.viewContext.fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.title, comparator: .lexical)])).map(\.title)
    }

    func names(_ store: Store, _ predicate: Predicate<Author>) throws -> [String] {
        try store.viewContext.fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.name, comparator: .lexical)])).map(\.name)
    }

    @Test func stringsCountAndEmptiness() async throws {
        let store = try await Self.library()
        #expect(try titles(store, #Predicate { $0.title.isEmpty }) == [""])
        #expect(try titles(store, #Predicate { !$0.title.isEmpty && $0.title.count <= 6 }) == ["Dune", "Tehanu"])
        #expect(try titles(store, #Predicate { $0.title.contains("Dark") }) == ["The Left Hand of Darkness"])
        #expect(try titles(store, #Predicate { $0.title.starts(with: "The") }) == ["The Dispossessed", "The Left Hand of Darkness"])
    }

    @Test func optionalChainsThroughToOnes() async throws {
        let store = try await Self.library()
        #expect(try titles(store, #Predicate { $0.author?.name == "Frank Herbert" }) == ["Dune"])
        #expect(try titles(store, #Predicate { $0.author == nil }) == [""])
        #expect(try titles(store, #Predicate { $0.author?.born ?? 0 > 1925 }) == ["Tehanu", "The Dispossessed", "The Left Hand of Darkness"])
        #expect(try titles(store, #Predicate { $0.year ?? 0 > 1970 && $0.author?.name == "Ursula K. Le Guin" }) == ["Tehanu", "The Dispossessed"])
    }

    @Test func toManyCountsEmptinessAndContainsWhere() async throws {
        let store = try await Self.library()
        #expect(try names(store, #Predicate { $0.books.isEmpty }) == ["Iain M. Banks"])
        #expect(try names(store, #Predicate { $0.books.count > 1 }) == ["Ursula K. Le Guin"])
        #expect(try names(store, #Predicate { $0.books.contains { $0.year ?? 0 < 1966 } }) == ["Frank Herbert"])
        // One book must match both conditions: no book of Le Guin's is both before 1970 and after 1980.
        #expect(try names(store, #Predicate { $0.books.contains { $0.year ?? 0 < 1970 && $0.year ?? 0 > 1980 } }).isEmpty)
        #expect(try names(store, #Predicate { !$0.books.contains { $0.title.isEmpty } }).count == 3)
        #expect(try names(store, #Predicate { $0.books.contains { $0.title.contains("Hand") } || $0.born == nil }) == ["Iain M. Banks", "Ursula K. Le Guin"])
    }

    @Test func enumsAndCodableValuesCompareForEquality() async throws {
        let store = try await Self.library()
        #expect(try titles(store, #Predicate { $0.tags == ["gender", "ice"] }) == ["The Left Hand of Darkness"])
        #expect(try titles(store, #Predicate { $0.tags != [] && $0.tags != ["utopia"] }) == ["Dune", "The Left Hand of Darkness"])
        let specimens = try Store(inMemoryFor: [Specimen.self])
        let context = specimens.newBackgroundContext()
        for (code, shelf, priority) in [("a", Shelf.fiction, Priority.low), ("b", .science, .high), ("c", .science, nil)] {
            let specimen = Specimen(code: code)
            specimen.shelf = shelf
            specimen.priority = priority
            specimen.size = code == "a" ? Dimensions(width: 1, height: 2) : nil
            context.insert(specimen)
        }
        try await context.save()
        func codes(_ predicate: Predicate<Specimen>) throws -> [String] {
            try specimens.viewContext.fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.code, comparator: .lexical)])).map(\.code)
        }
        let science = Shelf.science
        let high: Priority? = .high
        #expect(try codes(#Predicate { $0.shelf == science }) == ["b", "c"])
        #expect(try codes(#Predicate { $0.priority == high }) == ["b"])
        #expect(try codes(#Predicate { $0.priority == nil }) == ["c"])
        let size: Dimensions? = Dimensions(width: 1, height: 2)
        #expect(try codes(#Predicate { $0.size == size }) == ["a"])
    }

    @Test func whatCannotBeTranslatedIsNamedByPropertyAndOperation() async throws {
        let store = try await Self.library()
        let specimens = try Store(inMemoryFor: [Specimen.self])
        let shout = FetchDescriptor<Specimen>(predicate: #Predicate { $0.shout == "X" })
        let computed = #expect(throws: StoreError.self) { try specimens.viewContext.fetch(shout) }
        #expect(computed?.code == .invalidPredicate)
        #expect(computed?.message.contains("only persisted properties can be queried") == true)
        let firstTag = FetchDescriptor<Book>(predicate: #Predicate { $0.tags.first == "ice" })
        let member = #expect(throws: StoreError.self) { try store.viewContext.fetch(firstTag) }
        #expect(member?.message.contains("of tags") == true)
        let allShort = FetchDescriptor<Book>(predicate: #Predicate { $0.title.starts(with: "T") && $0.tags.allSatisfy { $0.count < 5 } })
        let operation = #expect(throws: StoreError.self) { try store.viewContext.fetch(allShort) }
        #expect(operation?.message.contains("SequenceAllSatisfy") == true)
        #expect(operation?.message.contains("tags") == true)
        let tagged = FetchDescriptor<Book>(predicate: #Predicate { $0.tags.contains("ice") })
        let json = #expect(throws: StoreError.self) { try store.viewContext.fetch(tagged) }
        #expect(json?.message.contains("JSON") == true)
        let sameName = FetchDescriptor<Author>(predicate: #Predicate { author in author.books.contains { book in book.title == author.name } })
        let outer = #expect(throws: StoreError.self) { try store.viewContext.fetch(sameName) }
        #expect(outer?.message.contains("contains(where:)") == true)
    }

    @Test func sortDescriptorsPagesAndCounts() async throws {
        let store = try await Self.library()
        var descriptor = FetchDescriptor<Book>(sortBy: [SortDescriptor(\.year, order: .reverse), SortDescriptor(\.title)])
        descriptor.fetchOffset = 1
        descriptor.fetchLimit = 2
        #expect(try store.viewContext.fetch(descriptor).map(\.title) == ["The Dispossessed", "The Left Hand of Darkness"])
        #expect(try store.viewContext.fetchCount(FetchDescriptor<Book>(predicate: #Predicate { $0.year != nil })) == 4)
        let specimens = try Store(inMemoryFor: [Specimen.self])
        let byShout = FetchDescriptor<Specimen>(sortBy: [SortDescriptor(\.shout)])
        let relationshipSort = #expect(throws: StoreError.self) { try specimens.viewContext.fetch(byShout) }
        #expect(relationshipSort?.message.contains("sort by a persisted attribute") == true)
    }
}

/// Review cases: JSON arrays' emptiness and count, a nil to-one read quietly.
@Suite struct ManagedPredicateEdgeTests {
    @Test func anArrayKeptAsJSONIsEmptyAsItsTextAndItsCountIsRefused() async throws {
        let store = try await ManagedPredicateTests.library()
        let empty = try store.viewContext.fetch(FetchDescriptor<Book>(predicate: #Predicate { $0.tags.isEmpty }))
        #expect(Set(empty.map(\.title)) == ["Tehanu", ""])
        let counted = FetchDescriptor<Book>(predicate: #Predicate { $0.tags.count > 1 })
        let error = #expect(throws: StoreError.self) { try store.viewContext.fetch(counted) }
        #expect(error?.message.contains("count of tags, which is stored as JSON text") == true)
    }

    @Test func aClassIsNotMadeForAnObjectOfAnotherEntity() async throws {
        let store = try await ManagedPredicateTests.library()
        let author = try #require(try store.viewContext.fetch(FetchDescriptor<Author>()).first?.persistentModelID)
        #expect(store.viewContext.model(for: author, as: Book.self) == nil)
    }
}
