import Foundation
import Testing
@testable import Cairn

/// Fetches with the predicate language, sorting, paging, aggregates and batch operations.
@Suite struct QueryTests {
    static func model(indexed: Bool = true) throws -> Model {
        try Model {
            Entity("Author") {
                Attribute("name", .string, optional: false, indexed: indexed)
                Attribute("country", .string)
                Relationship("books", to: "Book", inverse: "author", .toMany(ordered: false), deleteRule: .cascade)
                Unique("name")
            }
            Entity("Book") {
                Attribute("title", .string, optional: false)
                Attribute("year", .integer32, indexed: indexed)
                Attribute("pages", .integer64)
                Attribute("price", .decimal)
                Attribute("rating", .double)
                Attribute("published", .date)
                Attribute("isbn", .uuid)
                Attribute("archived", .boolean, default: false)
                Relationship("author", to: "Author", inverse: "books")
            }
        }
    }

    /// Three authors with six books; the last book is left unsaved.
    static func library() async throws -> (Store, ObjectContext) {
        let store = Store(inMemory: try model())
        let context = store.viewContext
        let authors = try [("Émile Zola", "FR"), ("Jane Austen", "GB"), ("jules verne", "FR")].map { name, country in
            try context.make("Author", ["name": .string(name), "country": .string(country)])
        }
        let books: [(String, Int64, Int64, String, Double, Int)] = [
            ("Germinal", 1885, 592, "12.50", 4.5, 0), ("Nana", 1880, 480, "9.99", 3.9, 0),
            ("Emma", 1815, 474, "7.25", 4.1, 1), ("Persuasion", 1817, 249, "6.00", 4.3, 1),
            ("Vingt mille lieues", 1870, 512, "11.00", 4.4, 2)
        ]
        for (title, year, pages, price, rating, author) in books {
            let book = try context.make(
                "Book",
                [
                    "title": .string(title), "year": .integer(year), "pages": .integer(pages),
                    "price": .decimal(Decimal(string: price)!), "rating": .double(rating),
                    "published": .date(Date(timeIntervalSince1970: Double(year - 1970) * 31_557_600))
                ])
            try book.setObject(authors[author], forKey: "author")
        }
        try await context.save()
        let unsaved = try context.make("Book", ["title": "Le Tour du monde", "year": 1872, "pages": 300, "rating": 4.0])
        try unsaved.setObject(authors[2], forKey: "author")
        return (store, context)
    }

    static func titles(
        _ context: ObjectContext, _ format: String, _ arguments: any PredicateArgument...,
        sort: [SortKey] = [SortKey("title")]
    ) throws -> [String] {
        let request = FetchRequest("Book", predicate: try FetchPredicate(format: format, argumentArray: arguments), sortKeys: sort)
        return try context.fetch(request).compactMap { $0.string("title") }
    }

    @Test func comparisonsOfEveryKind() async throws {
        let (_, context) = try await Self.library()
        #expect(try Self.titles(context, "year > 1870 AND year <= 1885") == ["Germinal", "Le Tour du monde", "Nana"])
        #expect(try Self.titles(context, "year BETWEEN {1815, 1817}") == ["Emma", "Persuasion"])
        #expect(try Self.titles(context, "year BETWEEN {nil, 1900}").isEmpty && Self.titles(context, "year BETWEEN {1800, nil}").isEmpty)
        #expect(try Self.titles(context, "year IN %@", [1815, 1880]) == ["Emma", "Nana"])
        #expect(try Self.titles(context, "NOT (year IN {1815, 1880}) AND pages > 480") == ["Germinal", "Vingt mille lieues"])
        #expect(try Self.titles(context, "price == 12.5") == ["Germinal"], "decimals compare by value")
        #expect(try Self.titles(context, "price < %@", Decimal(7)) == ["Persuasion"])
        #expect(try Self.titles(context, "rating >= 4.4 || pages == 249") == ["Germinal", "Persuasion", "Vingt mille lieues"])
        #expect(try Self.titles(context, "published < %@", Date(timeIntervalSince1970: Double(1816 - 1970) * 31_557_600)) == ["Emma"])
        #expect(try Self.titles(context, "price == nil") == ["Le Tour du monde"])
        #expect(try Self.titles(context, "archived == NO AND isbn == nil").count == 6)
        #expect(try Self.titles(context, "%K == %d", "year", 1885) == ["Germinal"])
        #expect(try Self.titles(context, "TRUEPREDICATE").count == 6 && Self.titles(context, "FALSEPREDICATE").isEmpty)
    }

    @Test func stringOperatorsAndModifiers() async throws {
        let (_, context) = try await Self.library()
        #expect(try Self.titles(context, "title BEGINSWITH 'N' OR title ENDSWITH[c] 'SION'") == ["Nana", "Persuasion"])
        #expect(try Self.titles(context, "title CONTAINS[c] 'MILLE'") == ["Vingt mille lieues"])
        #expect(try Self.titles(context, "title CONTAINS 'MILLE'").isEmpty)
        #expect(try Self.titles(context, "title LIKE 'N?n*'") == ["Nana"])
        #expect(try Self.titles(context, "title LIKE[c] '*TOUR*'") == ["Le Tour du monde"])
        #expect(try Self.titles(context, "title MATCHES '[EG].*'") == ["Emma", "Germinal"])
        #expect(try Self.titles(context, "title MATCHES[c] 'e.*'") == ["Emma"])
        #expect(try Self.titles(context, "author.name ==[cd] 'emile zola'") == ["Germinal", "Nana"])
        #expect(try Self.titles(context, "author.name == 'emile zola'").isEmpty)
        #expect(try Self.titles(context, "author.name BEGINSWITH[d] 'Emile'") == ["Germinal", "Nana"])
    }

    @Test func keyPathsAcrossRelationships() async throws {
        let (_, context) = try await Self.library()
        #expect(try Self.titles(context, "author.country == 'FR' AND year > 1871") == ["Germinal", "Le Tour du monde", "Nana"])
        let authors = { (format: String) throws -> [String] in
            try context.fetch(FetchRequest("Author", predicate: try FetchPredicate(format: format), sortKeys: [SortKey("name")]))
                .compactMap { $0.string("name") }
        }
        #expect(try authors("books.@count > 1") == ["Jane Austen", "jules verne", "Émile Zola"])
        #expect(try authors("books.@count == 2 AND books.@sum.pages > 1000") == ["Émile Zola"])
        #expect(try authors("books.@avg.pages > 400") == ["jules verne", "Émile Zola"])
        #expect(try authors("books.@max.year < 1818") == ["Jane Austen"])
        #expect(try authors("ANY books.title BEGINSWITH 'P'") == ["Jane Austen"])
        #expect(try authors("ALL books.year > 1850") == ["jules verne", "Émile Zola"])
        #expect(try authors("NONE books.rating < 4.0") == ["Jane Austen", "jules verne"])
        #expect(try authors("SOME books.pages < 300") == ["Jane Austen"])
    }

    @Test func errorsNameTheKey() async throws {
        let (_, context) = try await Self.library()
        func failure(_ format: String, _ arguments: any PredicateArgument...) -> StoreError? {
            do {
                _ = try context.fetch(FetchRequest("Book", predicate: try FetchPredicate(format: format, argumentArray: arguments)))
                return nil
            } catch { return error as? StoreError }
        }
        #expect(failure("colour == 'red'")?.property == "colour")
        #expect(failure("author.shoeSize > 3")?.property == "shoeSize")
        #expect(failure("year == 'old'").map { $0.code == .typeMismatch && $0.property == "year" } == true)
        #expect(failure("published > 3").map { $0.code == .typeMismatch && $0.property == "published" } == true)
        #expect(failure("year CONTAINS '9'")?.property == "year")
        #expect(failure("author.books.title == 'Emma'")?.code == .invalidPredicate)
        #expect(failure("author == 'x'")?.property == "author")
        #expect(failure("title MATCHES '('")?.code == .invalidPredicate)
        #expect(failure("title == $NAME")?.code == .invalidPredicate)
        #expect(throws: PredicateSyntaxError.self) { try FetchPredicate(format: "year >") }
    }

    @Test func sortingPagingAndReversedRanges() async throws {
        let (_, context) = try await Self.library()
        let byAuthor = [SortKey("author.name", caseInsensitive: true), SortKey("year", ascending: false)]
        #expect(
            try Self.titles(context, "TRUEPREDICATE", sort: byAuthor)
                == ["Persuasion", "Emma", "Le Tour du monde", "Vingt mille lieues", "Germinal", "Nana"])
        // Plain order: uppercase before lowercase, "É" after both.
        #expect(try Self.titles(context, "TRUEPREDICATE", sort: [SortKey("author.name"), SortKey("year")]).first == "Emma")
        var request = FetchRequest("Book", sortKeys: [SortKey("year")])
        request.setRange(0..<2, reversed: true)
        #expect(try context.fetch(request).compactMap { $0.string("title") } == ["Germinal", "Nana"])
        request.setRange(1..<3)
        #expect(try context.fetch(request).compactMap { $0.string("title") } == ["Persuasion", "Vingt mille lieues"])
        let pages = try context.pages(FetchRequest("Book", sortKeys: [SortKey("year")]), batchSize: 4)
        #expect(pages.count == 2 && pages.map(\.count) == [4, 2])
        #expect(pages.flatMap { $0 }.compactMap { $0.string("title") }.first == "Emma")
        // Ties keep one order: by object ID.
        let ties = try context.fetch(FetchRequest("Book", sortKeys: [SortKey("archived")])).map(\.objectID)
        #expect(ties == ties.sorted())
    }

    @Test func aggregatesAndGroups() async throws {
        let (_, context) = try await Self.library()
        let all = FetchRequest("Book")
        #expect(try context.aggregate(.count, all) == .integer(6))
        #expect(try context.aggregate(.sum("pages"), all) == .integer(592 + 480 + 474 + 249 + 512 + 300))
        #expect(try context.aggregate(.minimum("year"), all) == .integer(1815))
        #expect(try context.aggregate(.maximum("title"), all) == .string("Vingt mille lieues"))
        #expect(try context.aggregate(.sum("price"), all) == .decimal(Decimal(string: "46.74")!))
        #expect(try context.aggregate(.average("pages"), FetchRequest("Book", predicate: .compare("year", .less, 1820))) == .double(361.5))
        #expect(try context.aggregate(.average("rating"), FetchRequest("Book", predicate: .constant(false))) == .null)
        let groups = try context.aggregate([.count, .sum("pages"), .maximum("rating")], all, groupBy: ["author.country"])
        #expect(
            groups == [
                AggregateGroup(keys: ["FR"], values: [4, .integer(592 + 480 + 512 + 300), 4.5]),
                AggregateGroup(keys: ["GB"], values: [2, .integer(474 + 249), 4.3])
            ])
        #expect(throws: StoreError.self) { try context.aggregate(.sum("title"), all) }
        // Without unsaved changes, aggregates take the parallel path over rows: the same answers.
        context.rollback()
        var paged = FetchRequest("Book", predicate: try FetchPredicate(format: "year > 1816"))
        let direct = paged
        paged.fetchLimit = 1000
        for function: AggregateFunction in [.count, .sum("pages"), .sum("price"), .average("rating"), .minimum("title"), .maximum("published")] {
            #expect(try context.aggregate(function, direct) == context.aggregate(function, paged), "\(function)")
        }
        #expect(try context.aggregate(.sum("pages"), direct) == .integer(592 + 480 + 249 + 512))
        #expect(try context.aggregate(.count, FetchRequest("Book", predicate: .constant(false))) == .integer(0))
    }

    @Test func batchUpdateAndDeleteAreEachOneSave() async throws {
        let (store, context) = try await Self.library()
        context.rollback()
        let saves = SaveCounter()
        let observation = store.observeSavesSynchronously { _ in saves.increment() }
        let old = FetchRequest("Book", predicate: try FetchPredicate(format: "year < 1850"))
        #expect(try await store.batchUpdate(old, set: ["archived": true, "rating": 5.0]) == 2)
        #expect(try Self.titles(context, "archived == YES AND rating == 5") == ["Emma", "Persuasion"])
        #expect(try await store.batchDelete(FetchRequest("Book", predicate: try FetchPredicate(format: "author.country == 'FR'"))) == 3)
        #expect(try store.count(of: "Book") == 2)
        #expect(saves.value == 2)
        await #expect(throws: StoreError.self) { try await store.batchUpdate(old, set: ["year": "old"]) }
        _ = observation
    }

    /// Managed objects and object IDs as arguments, as Core Data users pass them: compared with
    /// to-one relationships and SELF, looked for in to-many ones, in lists; their canonical text
    /// parses back; misuse is a clear error.
    @Test func objectsAsArguments() async throws {
        let (_, context) = try await Self.library()
        func author(_ name: String) throws -> ManagedObject {
            try #require(try context.fetchFirst(FetchRequest("Author", predicate: .equal("name", .string(name)))))
        }
        func book(_ title: String) throws -> ManagedObject {
            try #require(try context.fetchFirst(FetchRequest("Book", predicate: .equal("title", .string(title)))))
        }
        func authors(_ format: String, _ arguments: any PredicateArgument...) throws -> [String] {
            let request = FetchRequest("Author", predicate: try FetchPredicate(format: format, argumentArray: arguments), sortKeys: [SortKey("name")])
            return try context.fetch(request).compactMap { $0.string("name") }
        }
        let zola = try author("Émile Zola"), austen = try author("Jane Austen"), verne = try author("jules verne")
        #expect(try Self.titles(context, "author == %@", zola) == ["Germinal", "Nana"])
        #expect(try Self.titles(context, "author == %@", verne.objectID) == ["Le Tour du monde", "Vingt mille lieues"], "an unsaved book too")
        #expect(try Self.titles(context, "author != %@ AND year < 1880", zola) == ["Emma", "Le Tour du monde", "Persuasion", "Vingt mille lieues"])
        #expect(try Self.titles(context, "author IN %@", [austen, verne]) == ["Emma", "Le Tour du monde", "Persuasion", "Vingt mille lieues"])
        let emma = try book("Emma"), nana = try book("Nana")
        #expect(try Self.titles(context, "SELF == %@", emma) == ["Emma"])
        #expect(try Self.titles(context, "SELF IN %@ OR year == 1885", [emma, nana]) == ["Emma", "Germinal", "Nana"])
        #expect(try Self.titles(context, "NOT (SELF IN %@) AND author == %@", [nana], zola) == ["Germinal"])
        #expect(try authors("%@ IN books", emma) == ["Jane Austen"])
        #expect(try authors("books CONTAINS %@", nana) == ["Émile Zola"])
        #expect(try authors("ANY books == %@", nana.objectID) == ["Émile Zola"])
        // The canonical text names the object and reads back.
        let syntax = try FetchPredicate(format: "author == %@", zola).syntax
        #expect(syntax.description == "author == CAST(\"\(zola.objectID.entity):\(zola.objectID.key)\", \"ObjectID\")")
        #expect(try PredicateSyntax.parse(syntax.description, arguments: []) == syntax)
        // Misuse.
        #expect { try Self.titles(context, "title == %@", emma) } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .typeMismatch && error.property == "title"
        }
        #expect { try Self.titles(context, "SELF IN %@", [emma.predicateArgumentValue, Value.string("x").predicateArgumentValue]) } throws: { error in
            (error as? StoreError)?.message.contains("values or objects, not both") == true
        }
        #expect { try Self.titles(context, "author < %@", zola) } throws: { ($0 as? StoreError)?.property == "author" }
        #expect { try authors("books == %@", nana) } throws: { ($0 as? StoreError)?.message.contains("ANY") == true }
        // A long list of objects (looked up in a set).
        let everyBook = try context.fetch(FetchRequest("Book"))
        #expect(try Self.titles(context, "SELF IN %@ AND year < 1850", everyBook + everyBook) == ["Emma", "Persuasion"])
        // SELF with objects reads just those objects, unsaved ones included, others' entities out.
        let unsaved = try book("Le Tour du monde")
        #expect(
            try context.explain(FetchRequest("Book", predicate: try FetchPredicate(format: "SELF IN %@", [emma, nana])))
                .contains("read the 2 objects named by SELF"))
        #expect(try Self.titles(context, "SELF IN %@", [emma.objectID, unsaved.objectID, zola.objectID]) == ["Emma", "Le Tour du monde"])
        #expect(try Self.titles(context, "SELF == %@ AND year > 1900", emma).isEmpty)
        let clean = context.store.newBackgroundContext()  // nothing unsaved: the committed path
        let named = FetchRequest("Book", predicate: try FetchPredicate(format: "SELF IN %@ AND year < 1880", [emma, nana, unsaved]))
        #expect(try clean.fetch(named).compactMap { $0.string("title") } == ["Emma"])
        #expect(try clean.count(named) == 1)
        let scratch = context.newChildContext()
        try scratch.delete(emma.objectID)
        #expect(
            try scratch.fetch(FetchRequest("Book", predicate: try FetchPredicate(format: "SELF IN %@", [emma, nana]))).compactMap { $0.string("title") } == [
                "Nana"
            ])
        // Equal: the same object ID in the same context.
        let emmaAgain = try book("Emma")
        #expect(emma == emmaAgain && emma != nana && Set([emma, emmaAgain]).count == 1)
        #expect { try PredicateSyntax.parse("author == CAST('zola', 'ObjectID')", arguments: []) } throws: { error in
            (error as? PredicateSyntaxError)?.message.contains("an object ID such as \"0:42\"") == true
                && (error as? PredicateSyntaxError)?.column == 16
        }
    }

    /// UUIDs compare by value; collection operators other than @count are evaluated too.
    @Test func uuidsAndCollectionMinimums() async throws {
        let (_, context) = try await Self.library()
        let first = UUID(), second = UUID()
        for (title, id) in [("Emma", first), ("Nana", second)] {
            try context.fetchFirst(FetchRequest("Book", predicate: .equal("title", .string(title))))?.setValue(.uuid(id), forKey: "isbn")
        }
        #expect(try Self.titles(context, "isbn == %@", first) == ["Emma"])
        #expect(try Self.titles(context, "isbn != %@ AND isbn != nil", first) == ["Nana"])
        #expect(try Self.titles(context, "isbn IN %@", [second, UUID()]) == ["Nana"])
        let request = FetchRequest("Author", predicate: try FetchPredicate(format: "books.@min.year < 1816"))
        #expect(try context.fetch(request).compactMap { $0.string("name") } == ["Jane Austen"])
        let latest = FetchRequest("Author", predicate: try FetchPredicate(format: "books.@max.year >= 1872"), sortKeys: [SortKey("name")])
        #expect(try context.fetch(latest).compactMap { $0.string("name") } == ["jules verne", "Émile Zola"])
    }

    @Test func explainAddsUnsavedChangesOnlyWhenTheFetchedEntitiesHaveSome() async throws {
        let (store, context) = try await Self.library()  // an unsaved book, and its author's books
        let step = "add this context's unsaved changes"
        let books = FetchRequest("Book", predicate: try FetchPredicate(format: "pages > 100"), sortKeys: [SortKey("title")])
        let authors = FetchRequest("Author")
        // The step comes before the sort: unsaved objects are sorted with the others.
        let lines = try context.explain(books).split(separator: "\n").map(String.init)
        #expect(lines == ["scan every Book and evaluate the predicate on each", step, "sort by title"])
        #expect(try context.explain(authors).contains(step))
        #expect(try context.newChildContext().explain(books).contains(step), "a parent's unsaved changes count")
        let clean = store.newBackgroundContext()
        #expect(try clean.explain(books) == "scan every Book and evaluate the predicate on each\nsort by title")
        #expect(try !clean.explain(authors).contains(step))
        // A change to an author alone: Book's plan adds nothing, Author's does.
        let author = try #require(try clean.fetchFirst(FetchRequest("Author", predicate: .equal("name", "Jane Austen"))))
        try author.setValue("UK", forKey: "country")
        #expect(try !clean.explain(books).contains(step))
        #expect(try clean.explain(authors).contains(step))
        // A delete counts, and so does an object inserted and then deleted.
        let deleting = store.newBackgroundContext()
        try deleting.delete(try #require(try deleting.fetchFirst(FetchRequest("Book", predicate: .equal("title", "Emma")))))
        #expect(try deleting.explain(books).contains(step))
        let discarding = store.newBackgroundContext()
        try discarding.delete(try discarding.make("Book", ["title": "Draft"]))
        #expect(try discarding.explain(books).contains(step))
        // Once saved, nothing is left to add.
        try await context.save()
        #expect(try !context.explain(books).contains(step))
    }

    @Test func plansUseIndexesAndSayWhich() async throws {
        let (_, context) = try await Self.library()
        func plan(_ entity: String, _ format: String) throws -> String {
            try context.explain(FetchRequest(entity, predicate: try FetchPredicate(format: format)))
        }
        #expect(try plan("Author", "name == 'Jane Austen'").contains("uniqueness index"))
        #expect(try plan("Book", "year == 1885 AND pages > 3").contains("Book.year = 1885 in its ordered index"))
        #expect(try plan("Book", "year IN {1815, 1880}").contains("ordered index"))
        #expect(try plan("Book", "year > 1850 AND year < 1880").contains("Book.year > 1850 and < 1880 from its ordered index"))
        #expect(try plan("Book", "pages > 300").contains("scan every Book"))
        #expect(try plan("Book", "year > 1850 OR pages > 1").contains("scan"))
        // IN on the one attribute of a uniqueness constraint reads the uniqueness index too; its
        // answer includes unsaved changes: a new holder in, a deleted one out.
        let names = "name IN {'Jane Austen', 'jules verne', 'Nobody', 'Jane Austen', 'Jules Verne'}"
        #expect(try plan("Author", names).contains("look up Author(name) IN {"))
        #expect(try plan("Author", names).contains("in the uniqueness index"))
        func authors(_ format: String, in reader: ObjectContext = context) throws -> [String] {
            try reader.fetch(FetchRequest("Author", predicate: try FetchPredicate(format: format), sortKeys: [SortKey("name")]))
                .map { try $0.value(forKey: "name", as: Value.self).text ?? "" }
        }
        #expect(try authors(names) == ["Jane Austen", "jules verne"])
        let scratch = context.newChildContext()
        try scratch.make("Author", ["name": "Nobody"])
        try #require(try scratch.fetchFirst(FetchRequest("Author", predicate: .equal("name", "jules verne")))).delete()
        #expect(try authors(names, in: scratch) == ["Jane Austen", "Nobody"])
        #expect(try authors(names + " AND country == 'GB'", in: scratch) == ["Jane Austen"])
        // Index answers include unsaved changes.
        #expect(try Self.titles(context, "year == 1872") == ["Le Tour du monde"])
        #expect(try Self.titles(context, "year BETWEEN {1871, 1873}") == ["Le Tour du monde"])
    }
}

/// Counts calls from any thread.
final class SaveCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
