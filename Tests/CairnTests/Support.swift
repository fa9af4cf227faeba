import CairnTestSupport
import Foundation
@testable import Cairn

/// A lending library: authors, books (with an abstract parent), members, loans.
func libraryModel() throws -> Model {
    try Model {
        Entity("Author") {
            Attribute("name", .string, optional: false)
            Attribute("born", .integer32)
            Attribute("rating", .double, default: 0.0)
            Relationship("books", to: "Book", inverse: "author", .toMany(ordered: false), deleteRule: .cascade)
            Unique("name")
        }
        Entity("Item", abstract: true) {
            Attribute("code", .string, optional: false)
            Unique("code")
        }
        Entity("Book", parent: "Item") {
            Attribute("title", .string, optional: false)
            Attribute("year", .integer16)
            Relationship("author", to: "Author", inverse: "books")
            Relationship("loans", to: "Loan", inverse: "book", .toMany(ordered: true), deleteRule: .deny)
        }
        Entity("Magazine", parent: "Item") {
            Attribute("issue", .integer32)
        }
        Entity("Loan") {
            Attribute("due", .date)
            Relationship("book", to: "Book", inverse: "loans", deleteRule: .nullify)
            Relationship("member", to: "Member", inverse: "loans")
        }
        Entity("Member") {
            Attribute("email", .string, optional: false)
            Relationship("loans", to: "Loan", inverse: "member", .toMany(ordered: false), deleteRule: .cascade)
            Relationship("card", to: "Card", inverse: "member", deleteRule: .cascade)
        }
        Entity("Card") {
            Attribute("number", .integer64)
            Relationship("member", to: "Member", inverse: "card", deleteRule: .noAction)
        }
    }
}

/// An in-memory store of ``libraryModel()`` holding one saved author.
func libraryStore(withAuthor name: String, born: Int) async throws -> (store: Store, author: ObjectID) {
    let store = Store(inMemory: try libraryModel())
    let setup = store.newBackgroundContext()
    let author = try setup.make("Author", ["name": .string(name), "born": .integer(Int64(born))])
    try await setup.save()
    return (store, author.objectID)
}

extension ObjectContext {
    /// Inserts an object with attribute values.
    @discardableResult
    func make(_ entity: String, _ values: [String: Value]) throws -> ManagedObject {
        let object = try insert(entity)
        for (key, value) in values { try object.setValue(value, forKey: key) }
        return object
    }

    /// All objects of an entity, sorted by an attribute.
    func all(_ entity: String, by key: String? = nil) throws -> [ManagedObject] {
        try fetch(FetchRequest(entity, sortKeys: key.map { [SortKey($0)] } ?? []))
    }
}

extension ManagedObject {
    func string(_ key: String) -> String? {
        if case .string(let text)? = self[key] { return text }
        return nil
    }
}
