import Cairn
import CairnMapping
import Foundation
import Testing

/// A lenient import that skips a record at save time undoes exactly that record's changes: the
/// objects it inserted go (unlinked first, so no delete rule reaches an object that existed
/// before), the values it set go back unless a later record set them again, and nothing else
/// changes. Objects that existed before are never deleted by a skip.
@Suite struct LenientSkipUndoTests {
    /// `Folder.bookmarks` cascades; `Folder.title` and `Bookmark.url` are required.
    static func model() throws -> Model {
        try Model {
            Entity("Bookmark") {
                Attribute("id", .integer64)
                Attribute("url", .string, optional: false)
                Attribute("title", .string)
                Relationship("folder", to: "Folder", inverse: "bookmarks")
                Unique("id")
            }
            Entity("Folder") {
                Attribute("name", .string)
                Attribute("title", .string, optional: false)
                Relationship("bookmarks", to: "Bookmark", inverse: "folder", .toMany(ordered: false), deleteRule: .cascade)
                Unique("name")
            }
        }
    }

    static var lenient: ImportOptions {
        var options = ImportOptions()
        options.lenient = true
        return options
    }

    /// A store with folder "old" holding bookmark 5, and bookmark 2.
    static func store() async throws -> Store {
        let store = Store(inMemory: try model())
        let folder = MapperFixtures.bytes(#"{"name": "old", "title": "Old", "bookmarks": [{"id": 5, "url": "https://five"}]}"#)
        _ = try await store.importJSON(folder, into: "Folder")
        _ = try await store.importJSON(MapperFixtures.bytes(#"{"id": 2, "url": "https://two", "title": "two"}"#), into: "Bookmark")
        return store
    }

    @Test func aSkippedNestedObjectTakesNoSavedObjectWithIt() async throws {
        let store = try await Self.store()
        let input = MapperFixtures.bytes(#"[{"id": 5, "folder": {"name": "g"}}]"#)
        let result = try await store.importJSON(input, into: "Bookmark", options: Self.lenient)
        #expect(result.warnings.map(\.path) == ["$[0].folder"], "\(result.warnings)")
        #expect(result.deleted == 0, "deleted \(result.deleted)")
        let view = store.viewContext
        let five = try #require(try view.one("Bookmark", "id", 5), "bookmark 5 survives")
        #expect(try five.object(forKey: "folder")?.value(forKey: "name", as: String.self) == "old", "the relationship is left as it was")
        #expect(try view.one("Folder", "name", "g") == nil)
        #expect(try view.count(FetchRequest("Bookmark")) == 2)
    }

    @Test func skippingARecordKeepsAnEarlierRecordsValues() async throws {
        let store = try await Self.store()
        let input = MapperFixtures.bytes(#"[{"id": 2, "title": "fine"}, {"id": 2, "url": null}]"#)
        let result = try await store.importJSON(input, into: "Bookmark", options: Self.lenient)
        #expect(result.warnings.map(\.path) == ["$[1]"], "\(result.warnings)")
        let two = try #require(try store.viewContext.one("Bookmark", "id", 2))
        #expect(two["title"] == "fine" && two["url"] == "https://two")
        #expect(result.updated == 1 && result.objectIDs == [two.objectID], "updated \(result.updated)")
    }

    @Test(arguments: [false, true]) func skippingARecordKeepsAnEarlierRecordsValuesOnBothPaths(viaContext: Bool) async throws {
        let store = try await Self.store()
        var options = Self.lenient
        if viaContext { options.afterImport = { _ in } }
        let input = MapperFixtures.bytes(#"[{"id": 2, "title": "fine"}, {"id": 2, "url": null, "title": "lost"}, {"id": 3, "url": "https://3"}]"#)
        let result = try await store.importJSON(input, into: "Bookmark", options: options)
        #expect(result.warnings.map(\.path) == ["$[1]"], "\(result.warnings)")
        let two = try #require(try store.viewContext.one("Bookmark", "id", 2))
        #expect(two["title"] == "fine" && two["url"] == "https://two")
        #expect(result.updated == 1 && result.inserted == 1 && result.objectIDs.count == 2, "\(result.updated)/\(result.inserted)")
    }

    /// A later record that set a value again owns it: skipping an earlier record leaves it.
    @Test func aLaterRecordsValueStays() async throws {
        let store = try await Self.store()
        var options = Self.lenient
        options.afterImport = { _ in }
        let input = MapperFixtures.bytes(#"[{"id": 2, "title": "a", "url": null}, {"id": 2, "title": "b"}]"#)
        let result = try await store.importJSON(input, into: "Bookmark", options: options)
        #expect(result.warnings.map(\.path) == ["$[0]"], "\(result.warnings)")
        let two = try #require(try store.viewContext.one("Bookmark", "id", 2))
        #expect(two["title"] == "b" && two["url"] == "https://two")
    }

    /// A relationship a skipped record changed goes back, and one a later record changed again
    /// stays the later record's, with both sides in step.
    @Test func relationshipsGoBackOnlyWhereTheSkippedRecordLeftThem() async throws {
        let store = try await Self.store()
        _ = try await store.importJSON(MapperFixtures.bytes(#"{"name": "h", "title": "H"}"#), into: "Folder")
        // $[0] moves 5 to h and fails (its url cleared); $[1] moves 2 to h, and is fine.
        let input = MapperFixtures.bytes(#"[{"id": 5, "url": null, "folder": "h"}, {"id": 2, "folder": "h"}]"#)
        let result = try await store.importJSON(input, into: "Bookmark", options: Self.lenient)
        #expect(result.warnings.map(\.path) == ["$[0]"], "\(result.warnings)")
        let view = store.viewContext
        let five = try #require(try view.one("Bookmark", "id", 5))
        #expect(try five.object(forKey: "folder")?.value(forKey: "name", as: String.self) == "old")
        let h = try #require(try view.one("Folder", "name", "h"))
        #expect(try h.objects(forKey: "bookmarks").compactMap { try $0.value(forKey: "id", as: Int.self) } == [2])
        let old = try #require(try view.one("Folder", "name", "old"))
        #expect(try old.objects(forKey: "bookmarks").compactMap { try $0.value(forKey: "id", as: Int.self) } == [5])
    }

    /// An object a skipped record inserted goes, and the objects it linked keep what they had.
    @Test func aSkippedTopLevelRecordsNewObjectIsUnlinkedThenRemoved() async throws {
        let store = try await Self.store()
        // Folder n (no title) takes bookmark 5 from old: skipping it gives 5 back to old.
        let input = MapperFixtures.bytes(#"[{"name": "n", "bookmarks": [5]}, {"name": "m", "title": "M"}]"#)
        let result = try await store.importJSON(input, into: "Folder", options: Self.lenient)
        #expect(result.warnings.map(\.path) == ["$[0]"], "\(result.warnings)")
        #expect(result.inserted == 1 && result.deleted == 0 && result.objectIDs.count == 1, "\(result.inserted) inserted, \(result.deleted) deleted")
        let view = store.viewContext
        let five = try #require(try view.one("Bookmark", "id", 5), "bookmark 5 survives")
        #expect(try five.object(forKey: "folder")?.value(forKey: "name", as: String.self) == "old")
        #expect(try view.one("Folder", "name", "n") == nil)
    }
    /// A skipped record's new order of an ordered relationship goes back too.
    @Test func anOrderASkippedRecordChangedGoesBack() async throws {
        let model = try Model {
            Entity("Playlist") {
                Attribute("name", .string)
                Attribute("title", .string, optional: false)
                Relationship("tracks", to: "Track", inverse: "playlists", .toMany(ordered: true))
                Unique("name")
            }
            Entity("Track") {
                Attribute("id", .integer64)
                Relationship("playlists", to: "Playlist", inverse: "tracks", .toMany(ordered: false))
                Unique("id")
            }
        }
        let store = Store(inMemory: model)
        _ = try await store.importJSON(MapperFixtures.bytes(#"{"name": "p", "title": "P", "tracks": [{"id": 1}, {"id": 2}]}"#), into: "Playlist")
        let input = MapperFixtures.bytes(#"[{"name": "p", "title": null, "tracks": [2, 1]}]"#)
        let result = try await store.importJSON(input, into: "Playlist", options: Self.lenient)
        #expect(result.warnings.map(\.path) == ["$[0]"], "\(result.warnings)")
        let playlist = try #require(try store.viewContext.one("Playlist", "name", "p"))
        #expect(try playlist.objects(forKey: "tracks").compactMap { try $0.value(forKey: "id", as: Int.self) } == [1, 2])
        #expect(playlist["title"] == "P")
    }
    /// The objects the hook was called on.
    final class Calls: @unchecked Sendable {
        private let lock = NSLock()
        private var ids: [Value?] = []
        func add(_ id: Value?) { lock.withLock { ids.append(id) } }
        var all: [Value?] { lock.withLock { ids } }
    }

    /// The after-import hook runs before the check: it may fill in what a record lacks.
    @Test func theHookRunsBeforeTheCheckAndMayFillARequiredValue() async throws {
        let store = Store(inMemory: try Self.model())
        let calls = Calls()
        var options = Self.lenient
        options.afterImport = { object in
            calls.add(object["id"])
            if object["id"] == .integer(7), object["url"] == nil { try object.setValue("https://filled", forKey: "url") }
        }
        let input = MapperFixtures.bytes(#"[{"id": 1, "url": "https://one"}, {"id": 7, "title": "no url"}, {"id": 8, "title": "no url"}]"#)
        let result = try await store.importJSON(input, into: "Bookmark", options: options)
        // The hook filled 7's url; 8 stays without one, and its record is skipped.
        #expect(result.warnings.map(\.path) == ["$[2]"], "\(result.warnings)")
        #expect(calls.all.count == 3 && Set(calls.all.compactMap { $0 }) == [1, 7, 8], "\(calls.all)")
        #expect(result.inserted == 2 && result.objectIDs.count == 2)
        #expect(try store.viewContext.fetch(FetchRequest("Bookmark")).count == 2)
    }
}
