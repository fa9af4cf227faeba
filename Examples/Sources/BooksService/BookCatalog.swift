import CairnMapping
import CairnModels

/// The books of one store: imports, queries and live results, with no HTTP in sight.
public struct BookCatalog: Sendable {
    /// The store the books are kept in.
    public let store: Store
    /// How JSON records map to books: by their ISBN (`Book.isbn` is unique), the author by name.
    let mapping: Mapping

    /// Opens (or creates) the store at `path` with the books model.
    public init(path: String) throws {
        try self.init(store: Store(at: path, for: [Author.self, Book.self]))
    }

    /// The catalog of a store opened with the books model (an in-memory one, in tests).
    public init(store: Store) throws {
        self.store = store
        self.mapping = try Mapping(model: store.model) {
            EntityMapping("Book", identity: ["isbn"]) {
                AttributeMap("year", from: "year", "published")  // either key; the first present wins
                RelationshipMap("author", from: "author")  // the author's name, a reference by key
            }
        }
    }

    /// Imports a JSON array of books (`[{"isbn": …, "title": …, "year": …, "author": "Name"}]`)
    /// in one save: a book whose ISBN the store holds is updated, the others inserted, and an
    /// author nobody holds yet is made.
    public func importBooks(_ json: some Collection<UInt8>) async throws -> ImportCounts {
        var options = ImportOptions()
        options.insertsMissingReferences = true
        let result = try await store.importJSON(json, as: Book.self, mapping: mapping, options: options)
        return ImportCounts(result)
    }

    /// The books `query` matches, as a JSON array written by the mapping's export (an author as
    /// its name).
    public func exportBooks(_ query: BookQuery) throws -> [UInt8] {
        let context = store.newBackgroundContext(name: "query")
        return try context.exportJSON(query.descriptor, mapping: mapping)
    }
}

/// What an import did, as `POST /books/import` answers it.
public struct ImportCounts: Codable, Sendable, Hashable {
    /// Records read (top-level).
    public var records: Int
    /// Objects inserted: books, and the authors they named that were new.
    public var inserted: Int
    /// Objects updated.
    public var updated: Int
    /// Objects the records named that they left as they were.
    public var unchanged: Int

    init(_ result: ImportResult) {
        records = result.records
        inserted = result.inserted
        updated = result.updated
        unchanged = result.unchanged
    }
}
