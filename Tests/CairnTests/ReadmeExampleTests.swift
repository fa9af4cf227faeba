// swift-format-ignore-file
// The README examples below are kept exactly as the README writes them, so the formatter skips this file.
import CairnLog
import Foundation
import Testing
@testable import Cairn
import CairnMapping

// The README's Swift examples, verbatim, so that the compiler checks them; the test below checks
// that each README block still appears here line for line. Never run: they name paths such as
// /var/lib/myapp.

/// Keeps the README's examples compiling and in step with this file.
@Suite struct ReadmeExampleTests {
    func theObjectGraph() async throws {

        let model = try Model {
            Entity("Author") {
                Attribute("name", .string, optional: false)
                Relationship("books", to: "Book", inverse: "author", .toMany(ordered: false), deleteRule: .cascade)
                Unique("name")
            }
            Entity("Book") {
                Attribute("title", .string, optional: false)
                Attribute("year", .integer16)
                Relationship("author", to: "Author", inverse: "books")
            }
        }
        let store = try Store(at: "/var/lib/myapp/library.store", model: model)

        let bookID = try await store.performBackgroundTask { context in   // writes in the background
            let author = try context.insert("Author")
            try author.setValue("Ursula K. Le Guin", forKey: "name")
            let book = try context.insert("Book")
            try book.setValue("The Dispossessed", forKey: "title")
            try book.setValue(1974, forKey: "year")                    // plain Swift values; nil clears
            try book.setObject(author, forKey: "author")               // author.books follows
            try await context.save()                                   // one durable log frame
            return book.objectID                                       // IDs cross contexts, objects do not
        }
        let book = try store.viewContext.objects(with: [bookID])[0]    // the view context sees the save
        let year: Int? = try book.value(forKey: "year")                // 1974
        let since = 1970
        let recent = try store.viewContext.fetch(
            FetchRequest("Book", predicate: .compare("year", .greater, since), sortKeys: [SortKey("title")]))
        let observation = try store.observeSaves(of: ["Book"]) { event in print(event) }   // every save after this
        _ = (recent, year, observation)
    }

    func queries(store: Store) throws {
        struct Book: StoredModel { var title: String; var year: Int? }     // a typed view of the entity

        let context = store.viewContext
        let request = FetchRequest("Book",
            predicate: try FetchPredicate(format: "year >= %d AND author.name BEGINSWITH[c] %@", 1960, "ursula"),
            sortKeys: [SortKey("year", ascending: false), SortKey("title", caseInsensitive: true)])
        let books = try context.fetch(request)                             // unsaved changes included
        let newest = try context.aggregate(.maximum("year"), FetchRequest("Book"))
        let perAuthor = try context.aggregate([.count], FetchRequest("Book"), groupBy: ["author.name"])
        let classics = try context.fetch(Book.self, predicate: try FetchPredicate(#Predicate<Book> { $0.title.starts(with: "The") }))
        print(try context.explain(request))                                // the index it uses, or a scan
        _ = (books, newest, perAuthor, classics)
    }

    func xcodeModels() throws {

        let bundle = try XcodeModelBundle(at: "Models/Library.xcdatamodeld")   // every version, oldest first
        for warning in bundle.warnings { print("warning:", warning) }         // what loads otherwise than written
        let options = bundle.migrationOptions()   // a store of an earlier version steps through each later one
        let store = try Store(at: "/var/lib/myapp/library.store", model: bundle.current, options: options)

        // Any one model: a version of a bundle, a .xcdatamodel folder, its contents file, or Cairn's JSON.
        let v2 = try Model(contentsOf: "Models/Library.xcdatamodeld", version: "Library 2")
        _ = (store, v2)
    }

    func theLog() async throws {

        let log = try Log.open(at: "/var/lib/myapp/store")           // recovers, takes the writer lock
        let lsn = try await log.append(Array("hello".utf8))          // durable when it returns
        let reader = log.records(from: .first)
        while let record = try reader.next() { print(record.lsn, record.payload.count) }
        try await log.close()
        _ = lsn
    }

    func jsonImportAndExport(model: Model, store: Store) async throws {

        let mapping = try Mapping(model: model, keyStyle: .snakeCase) {
            EntityMapping("Book", identity: "title") {
                AttributeMap("year", from: "published.year", "year")            // a key path, then a fallback
                RelationshipMap("author", from: "author_name", policy: .merge)   // a reference by unique key
            }
        }
        var options = ImportOptions()
        options.root = "data.books"                                              // {"data": {"books": [...]}}
        let result = try await store.importJSON(contentsOf: URL(fileURLWithPath: "/var/lib/myapp/books.json"),
                                                into: "Book", mapping: mapping, options: options)
        print(result.inserted, result.updated, result.unchanged)                // one save, all or nothing
        let json = try store.viewContext.exportJSON(FetchRequest("Book"), mapping: mapping)
        _ = json
    }

    /// Each Swift block of README.md (but the Package.swift fragment), without its imports, is
    /// a run of lines of this file, or for the typed example of CairnModels' tests (spaces at
    /// either end of a line aside).
    @Test func everyReadmeExampleIsCompiledHere() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        func lines(_ text: Substring) -> [String] {
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("import ") }
        }
        let typed = ["Models.swift", "ReadmeModelsExampleTests.swift"].map { (name: String) -> URL in
            root.appendingPathComponent("Tests/CairnModelsTests").appendingPathComponent(name)
        }
        var files: [[String]] = []
        for url in [URL(fileURLWithPath: #filePath)] + typed { files.append(lines(try String(contentsOf: url, encoding: .utf8)[...])) }
        let blocks = readme.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        let examples = blocks.filter { !$0.hasPrefix("// Package.swift") }
        #expect(examples.count == 7)
        for block in examples {
            let wanted = lines(block[...])
            func holds(_ here: [String]) -> Bool {
                here.indices.contains { start in start + wanted.count <= here.count && Array(here[start..<(start + wanted.count)]) == wanted }
            }
            let found = files.contains(where: holds)
            #expect(found, "README block starting \"\(wanted.first ?? "")\" is not in ReadmeExampleTests.swift (nor, typed, in CairnModelsTests): copy it there")
        }
    }
}
