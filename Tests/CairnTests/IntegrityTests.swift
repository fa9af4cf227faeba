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

    /// A saved object changed in a root context is checked at the values it changes (its others
    /// were checked when they were saved): its first problem in position order is the one
    /// reported, and a change that breaks nothing saves without its row being read.
    @Test func savedObjectsAreCheckedAtTheValuesTheyChange() async throws {
        let store = Store(inMemory: try Self.model())
        let setup = store.newBackgroundContext()
        let team = try setup.make("Team", ["name": "Owls"])
        let players = try (1...3).map { try setup.make("Player", ["league": "A", "number": .integer(Int64($0))]) }
        try team.setObjects(Array(players.prefix(2)), forKey: "players")
        try await setup.save()

        let context = store.newBackgroundContext()
        let same = try #require(context.object(with: team.objectID))
        try same.setObjects([try #require(context.object(with: players[0].objectID))], forKey: "players")
        try same.setValue(nil, forKey: "name")
        await #expect { try await context.save() } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .missingValue && error.property == "name" && error.objects == [team.objectID]
        }
        try same.setValue("Owls", forKey: "name")
        await #expect { try await context.save() } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .countViolation && error.property == "players" && error.objects == [team.objectID]
        }
        // The third player joins: the team now holds three, within its count.
        try same.setObjects(try players.map { try #require(context.object(with: $0.objectID)) }, forKey: "players")
        try await context.save()
        #expect(try store.viewContext.object(with: team.objectID)?.objects(forKey: "players").count == 3)
        // A change to another object's attribute alone saves (nothing else of it is checked again).
        try #require(context.object(with: players[2].objectID)).setValue(.integer(9), forKey: "number")
        try await context.save()
        #expect(try store.viewContext.object(with: players[2].objectID)?.value(forKey: "number", as: Int.self) == 9)
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
