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

    /// Keys the uniqueness index does not hold in one stored form (non-ASCII text) are fetched
    /// instead, all of a call's in one fetch, few or many: each finds what a fetch of it alone
    /// finds.
    @Test(arguments: [3, 8]) func keysOutsideTheIndexFindWhatAFetchOfEachFinds(count: Int) async throws {
        let names = ["Brontë", "José Saramago", "Čapek", "Lem", "Ōe", "Ñuñez", "Gödel", "Ærø", "Dostoevsky"]
        let store = try await authors(names)
        let context = store.newBackgroundContext()
        // Unsaved: one renamed away from its key, one new.
        let renamed = try #require(context.fetch(Author.self, keys: ["Gödel"], by: \.name).first ?? nil)
        renamed.name = "Kurt Gödel"
        context.insert(Author(name: "Ōtomo"))
        let asked = Array(["Brontë", "Bronte\u{308}", "Gödel", "Kurt Gödel", "Ōtomo", "Čapek", "Ærø", "Nobody é"].prefix(count))
        let found = try context.fetch("Author", key: "name", in: asked.map { .string($0) })
        let alone = try asked.map { try context.fetchFirst(FetchRequest("Author", predicate: .equal("name", .string($0)))) }
        #expect(found.map { $0?.objectID } == alone.map { $0?.objectID })
        #expect(try found[0]?.value(forKey: "name", as: String.self) == "Brontë")
        #expect(found[2] == nil)  // renamed away, unsaved
        if count == 8 {
            #expect(try found[3]?.value(forKey: "name", as: String.self) == "Kurt Gödel")
            #expect(found[4] != nil)  // inserted, unsaved
            #expect(found[7] == nil)
        }
        let typed = try context.fetch(Author.self, keys: asked, by: \.name)
        #expect(typed.map { $0?.persistentModelID } == alone.map { $0?.objectID })
    }

    @Test func aNullKeyFindsNoObject() async throws {
        let store = try await authors(["Le Guin"])
        let context = store.newBackgroundContext()
        let found = try context.fetch("Author", key: "name", in: [.null, .string("Le Guin"), .null])
        #expect(found.map { $0 == nil } == [true, false, true])
    }

    @Test func aChildContextsOwnDeleteAndRenameCount() async throws {
        let store = try await authors(["Le Guin", "Butler"])
        let parent = store.newBackgroundContext()
        let child = parent.newChildContext()
        let both = try child.fetch(Author.self, keys: ["Le Guin", "Butler"], by: \.name)
        try child.delete(#require(both[0]))
        both[1]?.name = "Octavia E. Butler"
        let found = try child.fetch(Author.self, keys: ["Le Guin", "Butler", "Octavia E. Butler"], by: \.name)
        #expect(found.map { $0?.name } == [nil, nil, "Octavia E. Butler"])
        // The parent, not saved into yet, still has both.
        #expect(try parent.fetch(Author.self, keys: ["Le Guin", "Butler"], by: \.name).map { $0?.name } == ["Le Guin", "Butler"])
    }
}
