import ArgumentParser
import Cairn
import CairnLog

/// `cairn demo [--dir PATH]`: the main job — a lending library kept in a Cairn store: a model,
/// imports from concurrent background contexts, edits in a child context, fetches in the view
/// context, a reopen, and a check of every frame. The store stays in PATH for the other commands.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run a small lending library on a Cairn store: import, edit, fetch, reopen, verify."
    )

    // Values may begin with `-` (a path, a negative number that the check below refuses):
    // each option takes the next argument whatever it is.
    @Option(parsing: .unconditional, help: "The store's directory (created when missing; added to when it exists).")
    var dir = "cairn-demo.store"

    @Option(parsing: .unconditional, help: "How many books to import.")
    var books = 2000

    @Option(parsing: .unconditional, help: "How many background contexts import at once.")
    var importers = 4

    static func model() throws -> Model {
        try Model {
            Entity("Author") {
                Attribute("name", .string, optional: false)
                Attribute("born", .integer32)
                Relationship("books", to: "Book", inverse: "author", .toMany(ordered: false), deleteRule: .cascade)
                Unique("name")
            }
            Entity("Book") {
                Attribute("isbn", .string, optional: false)
                Attribute("title", .string, optional: false)
                Attribute("year", .integer16)
                Attribute("available", .boolean, default: true)
                Relationship("author", to: "Author", inverse: "books")
                Relationship("loans", to: "Loan", inverse: "book", .toMany(ordered: false), deleteRule: .deny)
                Unique("isbn")
            }
            Entity("Member") {
                Attribute("email", .string, optional: false)
                Attribute("name", .string)
                Relationship("loans", to: "Loan", inverse: "member", .toMany(ordered: true), deleteRule: .cascade)
                Unique("email")
            }
            Entity("Loan") {
                Attribute("due", .date, optional: false)
                Relationship("book", to: "Book", inverse: "loans", optional: false)
                Relationship("member", to: "Member", inverse: "loans", optional: false)
            }
        }
    }

    func run() async throws {
        guard (1...10_000_000).contains(books), (1...256).contains(importers) else {
            throw ValidationError("--books takes 1 to 10,000,000 and --importers 1 to 256")
        }
        try StoreLocation.requireFolderOrNothing(dir)
        let model = try Self.model()
        let clock = ContinuousClock()
        print("Cairn demo: a lending library in \(dir)")
        let store = try Store(at: dir, model: model)
        RecoveryWarning.print(store.recoveryReport, store: dir)
        let before = try store.count(of: "Book")
        print("1. opened the store (model: \(model.entities.map(\.name).joined(separator: ", "))); it holds \(before) books")

        // 2. Import from concurrent background contexts; each owns its own authors.
        let started = clock.now
        let round = UInt64(before)
        let perImporter = (books + importers - 1) / importers
        try await withThrowingTaskGroup(of: Void.self) { group in
            for importer in 0..<importers {
                let count = min(perImporter, books - importer * perImporter)
                guard count > 0 else { continue }
                group.addTask {
                    var catalog = DemoCatalog(seed: round &* 7919 &+ UInt64(importer), prefix: "\(round)-\(importer)")
                    let context = store.newBackgroundContext(name: "importer \(importer)")
                    var authors: [String: ManagedObject] = [:]
                    for index in 0..<count {
                        let entry = catalog.nextBook()
                        let author: ManagedObject
                        if let known = authors[entry.author] {
                            author = known
                        } else {
                            author = try context.insert("Author")
                            try author.setValue(.string(entry.author), forKey: "name")
                            try author.setValue(.integer(entry.born), forKey: "born")
                            authors[entry.author] = author
                        }
                        let book = try context.insert("Book")
                        try book.setValue(.string(entry.isbn), forKey: "isbn")
                        try book.setValue(.string(entry.title), forKey: "title")
                        try book.setValue(.integer(entry.year), forKey: "year")
                        try book.setObject(author, forKey: "author")
                        if index % 250 == 249 || index == count - 1 { try await context.save() }
                    }
                }
            }
            try await group.waitForAll()
        }
        let seconds = (clock.now - started) / .seconds(1)
        print("2. \(importers) background contexts imported \(books) books in \(Int(seconds * 1000)) ms (saves of 250, durable)")

        // 3. A child context of the view context borrows three books; its save reaches the view
        //    context, whose save reaches the disk.
        let view = store.viewContext
        let child = view.newChildContext(name: "checkout")
        let member = try child.insert("Member")
        try member.setValue(.string("reader\(before)@example.org"), forKey: "email")
        try member.setValue("Ada Reader", forKey: "name")
        var recent = FetchRequest("Book", predicate: .equal("available", true), sortKeys: [SortKey("year", ascending: false), SortKey("title")])
        recent.fetchLimit = 3
        for book in try child.fetch(recent) {
            let loan = try child.insert("Loan")
            try loan.setValue(.date(.now.addingTimeInterval(14 * 86_400)), forKey: "due")
            try loan.setObject(book, forKey: "book")
            try loan.setObject(member, forKey: "member")
            try book.setValue(false, forKey: "available")
        }
        try await child.save()
        print("3. a child context lent \(try member.objects(forKey: "loans").count) books; the view context sees them unsaved: \(view.hasChanges)")
        try await view.save()

        // 4. Fetch in the view context.
        let old = try view.count(FetchRequest("Book", predicate: .compare("year", .less, 1970)))
        let lent = try view.fetch(FetchRequest("Book", predicate: .equal("available", false), sortKeys: [SortKey("title")]))
        print("4. the view context finds \(old) books from before 1970 and \(lent.count) lent books, among them:")
        for book in lent.prefix(3) {
            print("   \(book.string("title") ?? "?") by \(try book.object(forKey: "author")?.string("name") ?? "?") (\(book["year"]?.description ?? "?"))")
        }
        // NSPredicate's syntax, key paths across relationships, an aggregate, the plan.
        let prolific = FetchRequest(
            "Author", predicate: try FetchPredicate(format: "books.@count >= %d AND name BEGINSWITH[c] %@", 3, "a"),
            sortKeys: [SortKey("name")])
        let newest = try view.aggregate(.maximum("year"), FetchRequest("Book", predicate: try FetchPredicate(format: "author.born < 1950")))
        print(
            "   query: \(try view.count(prolific)) authors whose name begins with A wrote 3 books or more; "
                + "the newest book by an author born before 1950 is from \(newest)")
        let plan = try view.explain(FetchRequest("Book", predicate: try FetchPredicate(format: "isbn == %@", "978-0-0-1")))
        print("   plan of isbn == '978-0-0-1': " + (plan.split(separator: "\n").first.map(String.init) ?? plan))
        try await store.close()

        // 5. Reopen and check.
        let reopened = try Store(at: dir, model: model)
        let counts = try model.entities.map { "\($0.name) \(try reopened.count(of: $0.name))" }
        try await reopened.close()
        print("5. reopened: " + counts.joined(separator: ", "))
        let inspection = try LogInspection.inspect(directory: dir)
        print(inspection.isHealthy ? "6. verify: every frame checks out" : "6. verify: DAMAGED")
        var stats = StoreStatistics(inspection)
        stats.entities = try StoreStatistics.entityCounts(dir)
        print(stats.table)
        print("\nThe store stays in \(dir). Try:  cairn dump \(dir) --entity Member   cairn model \(dir) --format xml   cairn stats \(dir) --json")
        print("  cairn query \(dir) --entity Book --where \"year > 2000 AND author.name CONTAINS[c] 'a'\" --sort -year,title --limit 5")
        if !inspection.isHealthy { throw ExitCode(1) }
    }
}

extension ManagedObject {
    fileprivate func string(_ key: String) -> String? {
        if case .string(let text)? = self[key] { return text }
        return nil
    }
}
