import CairnModels
import Foundation
import Testing

/// `fetch(_:key:in:)` and `fetch(_:keys:by:)`: the objects of many unique keys at once, in the
/// order asked, with what a fetch would find (unsaved changes included).
@Suite struct FetchByKeysTests {
    /// A store with the authors named, saved.
    func authors(_ names: [String]) async throws -> Store {
        let store = try Store(inMemoryFor: [Author.self, Book.self])
        try await store.performBackgroundTask { context in
            for name in names { context.insert(Author(name: name)) }
            try await context.save()
        }
        return store
    }

    @Test func eachKeyGivesItsObjectInTheOrderAskedAndNilWhereNoneHasIt() async throws {
        let store = try await authors(["Le Guin", "Butler", "Jemisin"])
        let context = store.newBackgroundContext()
        let found = try context.fetch(Author.self, keys: ["Jemisin", "Banks", "Le Guin", "Jemisin"], by: \.name)
        #expect(found.map { $0?.name } == ["Jemisin", nil, "Le Guin", "Jemisin"])
        // One instance per object, the one any fetch of the context gives.
        #expect(found[0] === found[3])
        let fetched = try context.fetch(FetchDescriptor<Author>(predicate: #Predicate { $0.name == "Le Guin" })).first
        #expect(found[2] === fetched)
        // By name: the same objects.
        let byName = try context.fetch("Author", key: "name", in: [.string("Jemisin"), .string("Banks"), .string("Le Guin")])
        #expect(byName.map { $0?.objectID } == [found[0]?.persistentModelID, nil, found[2]?.persistentModelID])
        #expect(try context.fetch(Author.self, keys: [String](), by: \.name).isEmpty)
    }

    @Test func unsavedChangesCountAsInAFetch() async throws {
        let store = try await authors(["Le Guin", "Butler", "Jemisin"])
        let context = store.newBackgroundContext()
        let new = Author(name: "Banks")
        context.insert(new)
        let butler = try #require(context.fetch(Author.self, keys: ["Butler"], by: \.name).first ?? nil)
        context.delete(butler)
        let leGuin = try #require(context.fetch(Author.self, keys: ["Le Guin"], by: \.name).first ?? nil)
        leGuin.name = "Ursula K. Le Guin"
        let found = try context.fetch(Author.self, keys: ["Banks", "Butler", "Le Guin", "Ursula K. Le Guin"], by: \.name)
        #expect(found.map { $0?.name } == ["Banks", nil, nil, "Ursula K. Le Guin"])
        #expect(found[0] === new)
        // A child context sees its parent's unsaved changes.
        let child = context.newChildContext()
        let inChild = try child.fetch(Author.self, keys: ["Banks", "Butler", "Ursula K. Le Guin"], by: \.name)
        #expect(inChild.map { $0?.name } == ["Banks", nil, "Ursula K. Le Guin"])
        // Other contexts see only what was saved.
        let otherContext = store.newBackgroundContext()  // held: objects live as long as their context
        let other = try otherContext.fetch(Author.self, keys: ["Banks", "Butler", "Le Guin"], by: \.name)
        #expect(other.map { $0?.name } == [nil, "Butler", "Le Guin"])
    }

    @Test func whatCannotBeLookedUpByKeyIsRefusedWithItsReason() async throws {
        let store = try await authors(["Le Guin"])
        let context = store.newBackgroundContext()
        func refusal(_ body: () throws -> Void) -> StoreError? {
            do { try body() } catch let error as StoreError { return error } catch { return nil }
            return nil
        }
        let noEntity = refusal { _ = try context.fetch("Publisher", key: "name", in: [.string("Ace")]) }
        #expect(noEntity?.code == .unknownName)
        #expect(noEntity?.message.contains("no entity Publisher") == true)
        let noAttribute = refusal { _ = try context.fetch("Author", key: "surname", in: [.string("Le Guin")]) }
        #expect(noAttribute?.code == .unknownName)
        #expect(noAttribute?.property == "surname")
        let notUnique = refusal { _ = try context.fetch(Book.self, keys: ["Tehanu"], by: \.title) }
        #expect(notUnique?.code == .invalidArgument)
        #expect(notUnique?.message.contains("Book.title has no uniqueness constraint") == true)
        let mismatch = refusal { _ = try context.fetch("Author", key: "name", in: [.integer(7)]) }
        #expect(mismatch?.code == .typeMismatch)
    }
}
