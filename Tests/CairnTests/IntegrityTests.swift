import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Rules a save enforces or a delete follows that the broader context tests do not reach:
/// relationship counts, compound uniqueness, transient attributes, long cascades.
@Suite struct IntegrityTests {
    static func model() throws -> Model {
        try Model {
            Entity("Team") {
                Attribute("name", .string, optional: false)
                Relationship("players", to: "Player", inverse: "team", .toMany(ordered: false), minimumCount: 2, maximumCount: 3)
            }
            Entity("Player") {
                Attribute("league", .string, optional: false)
                Attribute("number", .integer32, optional: false)
                Attribute("mood", .string, transient: true)
                Relationship("team", to: "Team", inverse: "players")
                Unique("league", "number")
            }
            Entity("Link") {
                Attribute("n", .integer64)
                Relationship("next", to: "Link", inverse: "previous", deleteRule: .cascade)
                Relationship("previous", to: "Link", inverse: "next")
            }
        }
    }

    @Test func toManyCountsAreCheckedWhenSaving() async throws {
        let store = Store(inMemory: try Self.model())
        let context = store.newBackgroundContext()
        let team = try context.make("Team", ["name": "Owls"])
        let players = try (1...4).map { try context.make("Player", ["league": "A", "number": .integer(Int64($0))]) }
        try team.setObjects([players[0]], forKey: "players")
        await #expect { try await context.save() } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .countViolation && error.entity == "Team" && error.property == "players"
                && error.message.contains("holds 1 objects; it takes 2 to 3")
        }
        try team.setObjects(players, forKey: "players")
        await #expect { try await context.save() } throws: { ($0 as? StoreError)?.code == .countViolation }
        try team.setObjects(Array(players.prefix(3)), forKey: "players")
        try await context.save()
        #expect(try store.count(of: "Player") == 4)
    }

    /// A saved object changed in a root context is checked at the values it changes: its others
    /// were checked when they were saved. A committed row that breaks the model (written here
    /// past every check, as only a damaged log could hold one) shows it: a root context's change
    /// to another value saves, while a child's, which checks whole objects, is refused.
    @Test func savedObjectsAreCheckedAtTheValuesTheyChange() async throws {
        let store = Store(inMemory: try Self.model())
        let player = try #require(store.model.entity(named: "Player"))
        let id = ObjectID(entity: player.index, key: try store.reserveKeys(1).lowerBound)
        var changes = ChangeSet()
        changes.inserts = [ChangeSet.Insert(id: id, values: [.attribute(.null), .attribute(.integer(7)), .attribute(.null), .toOne(nil)])]
        _ = try await store.commitRecord { _ in
            EncodedSave(bytes: StoreRecord.changes(changes, .testing).encoded(), inserted: [id], updated: [], deleted: [], transaction: .testing)
        }
        let root = store.newBackgroundContext()
        let child = root.newChildContext()
        try #require(child.object(with: id)).setValue(.integer(9), forKey: "number")
        await #expect { try await child.save() } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .missingValue && error.property == "league" && error.objects == [id]
        }
        try #require(root.object(with: id)).setValue(.integer(8), forKey: "number")
        try await root.save()
        #expect(try store.viewContext.object(with: id)?.value(forKey: "number", as: Int.self) == 8)
    }

    /// A save updating many long rows (1 MiB or more, which a chunk keeps by reference) keeps
    /// each in a buffer of its own size: the buffer the commit builds rows in is never kept
    /// with them, nor grown save after save; replay applies the same record the same way.
    @Test func aSaveUpdatingManyLongRowsKeepsEachAtItsSize() async throws {
        let model = try Model {
            Entity("Blob") {
                Attribute("data", .binary)
                Attribute("flag", .boolean)
            }
        }
        let folder = TemporaryDirectory()
        let directory = folder.store()
        let long = [UInt8](repeating: 0xA5, count: Tuning.largeRow + 4096)
        var ids: [ObjectID] = []
        do {
            let store = try Store(at: directory, model: model)
            let context = store.newBackgroundContext()
            let blobs = try (0..<24).map { _ in try context.make("Blob", ["data": .binary(long), "flag": false]) }
            try await context.save()
            ids = blobs.map(\.objectID)
            #expect(try await store.batchUpdate(FetchRequest("Blob"), set: ["flag": true]) == 24)
            try await store.close()
        }
        let store = try Store(at: directory, model: model)
        for id in ids {
            let blob = try #require(store.viewContext.object(with: id))
            #expect(try blob.value(forKey: "flag", as: Bool.self) == true)
            #expect(try blob.value(forKey: "data", as: Data.self) == Data(long))
        }
        try await store.close()
    }

    /// The changed values of saved objects report the first problem in object order, then in
    /// position order; an object another save deleted is left to the merge policy.
    @Test func changedSavedObjectsReportTheirFirstProblem() async throws {
        let store = Store(inMemory: try Self.model())
        let setup = store.newBackgroundContext()
        let teams = try ["Owls", "Larks"].map { try setup.make("Team", ["name": .string($0)]) }
        let players = try (1...4).map { try setup.make("Player", ["league": "A", "number": .integer(Int64($0))]) }
        try teams[0].setObjects(Array(players.prefix(2)), forKey: "players")
        try teams[1].setObjects(Array(players.suffix(2)), forKey: "players")
        try await setup.save()
        #expect(teams[0].objectID < teams[1].objectID)

        let context = store.newBackgroundContext()
        let owls = try #require(context.object(with: teams[0].objectID))
        let larks = try #require(context.object(with: teams[1].objectID))
        try larks.setValue(nil, forKey: "name")
        try owls.setObjects([try #require(context.object(with: players[0].objectID))], forKey: "players")
        try owls.setValue(nil, forKey: "name")
        // Owls come first; their name (an attribute) before their players (a relationship).
        await #expect { try await context.save() } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .missingValue && error.property == "name" && error.objects == [teams[0].objectID]
        }
        try owls.setValue("Owls", forKey: "name")
        await #expect { try await context.save() } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .countViolation && error.property == "players" && error.objects == [teams[0].objectID]
        }
        context.rollback()

        // Deleted by another save after this context changed it: a merge conflict, not the
        // missing value it was given.
        let view = store.viewContext
        try #require(view.object(with: teams[1].objectID)).setValue(nil, forKey: "name")
        let deleter = store.newBackgroundContext()
        try deleter.delete(try #require(deleter.object(with: teams[1].objectID)))
        try await deleter.save()
        await #expect { try await view.save() } throws: { ($0 as? StoreError)?.code == .mergeConflict }
    }

    @Test func compoundUniquenessRefusesOnlyTheWholeKey() async throws {
        let store = Store(inMemory: try Self.model())
        let context = store.newBackgroundContext()
        try context.make("Player", ["league": "A", "number": 7])
        try context.make("Player", ["league": "B", "number": 7])  // same number, other league
        try context.make("Player", ["league": "A", "number": 8])  // same league, other number
        try await context.save()
        let clash = store.newBackgroundContext()
        let twin = try clash.make("Player", ["league": "A", "number": 7])
        await #expect { try await clash.save() } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .uniquenessViolation && error.property == "league,number" && error.objects.first == twin.objectID
        }
        // Moving the holder off the key in the same save lets the newcomer have it.
        let holder = try #require(try clash.fetchFirst(FetchRequest("Player", predicate: try FetchPredicate(format: "league == 'A' AND number == 7"))))
        try holder.setValue(9, forKey: "number")
        try await clash.save()
        #expect(try store.count(of: "Player") == 4)
    }

    @Test func transientAttributesAreNeverSaved() async throws {
        let folder = TemporaryDirectory()
        let model = try Self.model()
        do {
            let store = try Store(at: folder.store(), model: model)
            let context = store.viewContext
            let player = try context.make("Player", ["league": "A", "number": 1, "mood": "happy"])
            #expect(try player.value(forKey: "mood", as: Value.self) == "happy", "a transient value lives in its context")
            try await context.save()
            try await store.close()
        }
        let store = try Store(at: folder.store(), model: model)
        let player = try #require(try store.viewContext.fetchFirst(FetchRequest("Player")))
        #expect(try player.value(forKey: "mood", as: Value.self) == .null)
        #expect(try player.value(forKey: "number", as: Value.self) == 1)
        try await store.close()
    }

    @Test func aCascadeRunsAlongAChainOfAnyLength() async throws {
        let store = Store(inMemory: try Self.model())
        let context = store.newBackgroundContext()
        let count = 30_000
        var links: [ManagedObject] = []
        links.reserveCapacity(count)
        for n in 0..<count {
            let link = try context.make("Link", ["n": .integer(Int64(n))])
            if let last = links.last { try last.setObject(link, forKey: "next") }
            links.append(link)
        }
        try await context.save()
        // One frame per link would overflow a task's stack long before the end of the chain.
        try links[1].delete()
        #expect(try links[0].object(forKey: "next") == nil, "the survivor's link is nullified")
        try await context.save()
        #expect(try store.count(of: "Link") == 1)
    }
}
