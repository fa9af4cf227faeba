import CairnLog
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// A store written with a newer model, opened with an older one (or any model the app does not
/// list among its versions): migrated only when nothing the store holds is lost, else refused
/// with `cannotMigrate` naming each loss and left as it was, unless the app opts in with
/// `StoreOptions.allowsMigrationThatDropsData`.
@Suite struct MigrationDataLossTests {
    /// The older model: notes alone.
    static func older() throws -> Model {
        try Model([Entity("Note", attributes: [Attribute("title", .string, optional: false), Attribute("stars", .integer64)])])
    }

    /// The newer model: notes with a comment, and tags.
    static func newer() throws -> Model {
        try Model([
            Entity(
                "Note", attributes: [Attribute("title", .string, optional: false), Attribute("stars", .integer64), Attribute("comment", .string)],
                relationships: [Relationship("tags", to: "Tag", inverse: "notes", .toMany(ordered: false))]),
            Entity(
                "Tag", attributes: [Attribute("label", .string)],
                relationships: [Relationship("notes", to: "Note", inverse: "tags", .toMany(ordered: false))])
        ])
    }

    /// A store written with ``newer()``: three notes, two with a comment, one tag on one note.
    static func newerStore(_ folder: TemporaryDirectory, comments: Bool = true, tags: Bool = true) async throws {
        let store = try Store(at: folder.store(), model: try newer())
        let context = store.viewContext
        var notes: [ManagedObject] = []
        for (title, comment) in [("a", "first" as Value), ("b", nil), ("c", "third")] {
            notes.append(try context.make("Note", ["title": .string(title), "stars": 3, "comment": comments ? comment : .null]))
        }
        if tags {
            let tag = try context.make("Tag", ["label": "work"])
            try notes[0].setObjects([tag], forKey: "tags")
        }
        try await context.save()
        try await store.close()
    }

    static func comments(_ store: Store) throws -> [String?] {
        try store.viewContext.all("Note", by: "title").map { $0.string("comment") }
    }

    @Test func anOlderModelDoesNotMigrateANewerStoreDown() async throws {
        let folder = TemporaryDirectory()
        try await Self.newerStore(folder)
        for readOnly in [false, true] {
            for policy in [ModelMismatchPolicy.migrate, .migrateOrWipe] {
                var options = StoreOptions()
                options.readOnly = readOnly
                options.modelMismatch = policy
                #expect {
                    try Store(at: folder.store(), model: try Self.older(), options: options)
                } throws: { error in
                    guard let error = error as? StoreError, error.code == .cannotMigrate else { return false }
                    return error.message.contains("attribute Note.comment") && error.message.contains("(2 objects)")
                        && error.message.contains("entity Tag") && error.message.contains("allowsMigrationThatDropsData")
                }
            }
        }
        // Nothing changed: the newer model reads every comment and tag, and no migration was recorded.
        #expect(try Store.storedModels(at: folder.store()).count == 1)
        let store = try Store(at: folder.store(), model: try Self.newer())
        #expect(try Self.comments(store) == ["first", nil, "third"])
        #expect(try store.count(of: "Tag") == 1)
        try await store.close()
    }

    @Test func theAppMayOptInToDroppingData() async throws {
        let folder = TemporaryDirectory()
        try await Self.newerStore(folder)
        var options = StoreOptions()
        options.allowsMigrationThatDropsData = true
        let store = try Store(at: folder.store(), model: try Self.older(), options: options)
        #expect(try store.count(of: "Note") == 3)
        try await store.close()
        #expect(try Store.storedModels(at: folder.store()).count == 2)
    }

    @Test func aMigrationThatLosesNothingNeedsNoOptIn() async throws {
        // The newer model's additions hold nothing: no comment, no tag.
        let folder = TemporaryDirectory()
        try await Self.newerStore(folder, comments: false, tags: false)
        let store = try Store(at: folder.store(), model: try Self.older())
        #expect(try store.count(of: "Note") == 3)
        try await store.close()
    }

    @Test func relationshipsLoseLinksOnlyWhenTheirInverseGoesToo() async throws {
        let folder = TemporaryDirectory()
        try await Self.newerStore(folder, comments: false)
        // Note.tags removed, Tag.notes kept: every link survives on the tag's side.
        let oneSide = try Model([
            Entity("Note", attributes: [Attribute("title", .string, optional: false), Attribute("stars", .integer64), Attribute("comment", .string)]),
            Entity(
                "Tag", attributes: [Attribute("label", .string)],
                relationships: [Relationship("notes", to: "Note", .toMany(ordered: false))])
        ])
        var options = StoreOptions()
        options.readOnly = true
        let kept = try Store(at: folder.store(), model: oneSide, options: options)
        #expect(try kept.viewContext.all("Tag").first?.objects(forKey: "notes").count == 1)
        try await kept.close()
        // Both sides removed: the links would be lost.
        let neither = try Model([
            Entity("Note", attributes: [Attribute("title", .string, optional: false), Attribute("stars", .integer64), Attribute("comment", .string)]),
            Entity("Tag", attributes: [Attribute("label", .string)])
        ])
        #expect {
            try Store(at: folder.store(), model: neither, options: options)
        } throws: { error in
            guard let error = error as? StoreError, error.code == .cannotMigrate else { return false }
            return error.message.contains("relationship Note.tags") && error.message.contains("relationship Tag.notes")
        }
    }

    @Test func narrowingAnIntegerIsRefusedEvenWhenTheValuesFit() async throws {
        let folder = TemporaryDirectory()
        try await Self.newerStore(folder, comments: false, tags: false)
        let narrow = try Model([
            Entity(
                "Note", attributes: [Attribute("title", .string, optional: false), Attribute("stars", .integer16), Attribute("comment", .string)],
                relationships: [Relationship("tags", to: "Tag", inverse: "notes", .toMany(ordered: false))]),
            Entity(
                "Tag", attributes: [Attribute("label", .string)],
                relationships: [Relationship("notes", to: "Note", inverse: "tags", .toMany(ordered: false))])
        ])
        #expect {
            try Store(at: folder.store(), model: narrow)
        } throws: { error in
            guard let error = error as? StoreError, error.code == .cannotMigrate else { return false }
            return error.message.contains("Note.stars would narrow from integer64 to integer16")
        }
        var options = StoreOptions()
        options.allowsMigrationThatDropsData = true
        let store = try Store(at: folder.store(), model: narrow, options: options)
        #expect(try store.viewContext.all("Note").map { $0["stars"] } == [3, 3, 3])
        try await store.close()
    }

    @Test func theAppsDeclaredVersionsDropWhatTheyRemove() async throws {
        // A store of version 1 of the app's own versions steps forward as Core Data's does.
        let folder = TemporaryDirectory()
        try await Self.newerStore(folder)
        let versions = [try Self.newer(), try Self.older()]
        var options = StoreOptions()
        options.modelVersions = versions
        let store = try Store(at: folder.store(), model: versions[1], options: options)
        #expect(try store.count(of: "Note") == 3)
        try await store.close()
        // And never the other way.
        #expect {
            try Store(at: folder.store(), model: versions[0], options: options)
        } throws: { ($0 as? StoreError)?.code == .cannotMigrate }
    }

    @Test func valuesAStepWouldChangeAreListedToo() async throws {
        // Tags kept in order would lose it (a comment made required takes its default, as Core
        // Data's lightweight migration fills it: not a loss).
        let folder = TemporaryDirectory()
        let ordered = try Model([
            Entity(
                "Note", attributes: [Attribute("title", .string, optional: false), Attribute("comment", .string)],
                relationships: [Relationship("tags", to: "Tag", .toMany(ordered: true))]),
            Entity("Tag", attributes: [Attribute("label", .string)])
        ])
        let store = try Store(at: folder.store(), model: ordered)
        let note = try store.viewContext.make("Note", ["title": "a"])
        try note.setObjects([try store.viewContext.make("Tag", ["label": "x"]), try store.viewContext.make("Tag", ["label": "y"])], forKey: "tags")
        try await store.viewContext.save()
        try await store.close()
        let changed = try Model([
            Entity(
                "Note", attributes: [Attribute("title", .string, optional: false), Attribute("comment", .string, optional: false, default: "none")],
                relationships: [Relationship("tags", to: "Tag", .toMany(ordered: false))]),
            Entity("Tag", attributes: [Attribute("label", .string)])
        ])
        #expect {
            try Store(at: folder.store(), model: changed)
        } throws: { error in
            guard let error = error as? StoreError, error.code == .cannotMigrate else { return false }
            return !error.message.contains("Note.comment") && error.message.contains("Note.tags would no longer be ordered")
        }
    }

    @Test func aStepToAnAppModelItDoesNotListIsCheckedToo() async throws {
        // The store's model is the app's last listed version; the app's own model is not listed.
        let folder = TemporaryDirectory()
        try await Self.newerStore(folder)
        var options = StoreOptions()
        options.modelVersions = [try Self.newer()]
        #expect {
            try Store(at: folder.store(), model: try Self.older(), options: options)
        } throws: { ($0 as? StoreError)?.message.contains("attribute Note.comment") == true }
    }

    @Test func oneLinePerProblemWithACount() async throws {
        // A hundred distinct values that no longer fit are one line, with one example.
        let folder = TemporaryDirectory()
        let wide = try Model([Entity("Reading", attributes: [Attribute("value", .integer64)])])
        let store = try Store(at: folder.store(), model: wide)
        for value in 0..<100 { _ = try store.viewContext.make("Reading", ["value": .integer(Int64(40_000 + value))]) }
        try await store.viewContext.save()
        try await store.close()
        var options = StoreOptions()
        options.allowsMigrationThatDropsData = true
        let narrow = try Model([Entity("Reading", attributes: [Attribute("value", .integer16)])])
        #expect {
            try Store(at: folder.store(), model: narrow, options: options)
        } throws: { error in
            guard let error = error as? StoreError, error.code == .cannotMigrate else { return false }
            let lines = error.message.split(separator: "\n")
            return lines.count == 2 && lines[1].contains("(100 objects, such as 400")
        }
    }
}
