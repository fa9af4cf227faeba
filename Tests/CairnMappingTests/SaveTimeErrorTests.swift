import Cairn
import CairnMapping
import Foundation
import Testing

/// What the save refuses (a required value missing, a required relationship empty) is an import
/// error naming the record's JSON path on both import paths; a lenient import skips the record
/// with a warning naming it, and imports the others.
@Suite struct SaveTimeErrorTests {
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
                Relationship("bookmarks", to: "Bookmark", inverse: "folder", .toMany(ordered: false))
                Unique("name")
            }
        }
    }

    /// Options for the flat path, or the context path (a hook needs objects).
    static func options(viaContext: Bool, lenient: Bool = false) -> ImportOptions {
        var options = ImportOptions()
        if viaContext { options.afterImport = { _ in } }
        options.lenient = lenient
        return options
    }

    static let input = #"[{"id": 1, "url": "https://a"}, {"id": 2, "title": "no url"}, {"id": 3, "url": "https://c"}]"#

    @Test(arguments: [false, true]) func aMissingRequiredValueNamesTheRecord(viaContext: Bool) async throws {
        let model = try Self.model()
        let store = Store(inMemory: model)
        do {
            _ = try await store.importJSON(MapperFixtures.bytes(Self.input), into: "Bookmark", options: Self.options(viaContext: viaContext))
            Issue.record("a record without its required url was imported")
        } catch let error as MappingError {
            #expect(error.code == .missingValue && error.path == "$[1]" && error.property == "url", "\(error)")
            #expect(error.description.contains("$[1]") && error.description.contains("Bookmark.url is required"), "\(error)")
        }
        #expect(try store.viewContext.count(FetchRequest("Bookmark")) == 0, "all or nothing")
    }

    @Test(arguments: [false, true]) func aLenientImportSkipsTheRecordWithAWarning(viaContext: Bool) async throws {
        let model = try Self.model()
        let store = Store(inMemory: model)
        let result = try await store.importJSON(
            MapperFixtures.bytes(Self.input), into: "Bookmark", options: Self.options(viaContext: viaContext, lenient: true))
        #expect(result.inserted == 2 && result.objectIDs.count == 2, "inserted \(result.inserted)")
        #expect(result.warnings.map(\.path) == ["$[1]"], "\(result.warnings)")
        #expect(result.warnings.first?.message.contains("Bookmark.url is required") == true)
        #expect(try store.viewContext.count(FetchRequest("Bookmark")) == 2)
    }

    @Test(arguments: [false, true]) func clearingARequiredValueOfASavedObjectNamesTheRecord(viaContext: Bool) async throws {
        let model = try Self.model()
        let store = Store(inMemory: model)
        _ = try await store.importJSON(MapperFixtures.bytes(#"[{"id": 1, "url": "https://a"}, {"id": 2, "url": "https://b"}]"#), into: "Bookmark")
        let input = MapperFixtures.bytes(#"[{"id": 1, "title": "fine"}, {"id": 2, "url": null, "title": "changed"}]"#)
        await #expect(throws: MappingError.self) {
            try await store.importJSON(input, into: "Bookmark", options: Self.options(viaContext: viaContext))
        }
        let result = try await store.importJSON(input, into: "Bookmark", options: Self.options(viaContext: viaContext, lenient: true))
        #expect(result.updated == 1 && result.warnings.map(\.path) == ["$[1]"], "\(result.updated) updated, \(result.warnings)")
        let two = try #require(try store.viewContext.one("Bookmark", "id", 2))
        #expect(two["url"] == "https://b" && two["title"] == nil, "the skipped record changed nothing")
        #expect(try store.viewContext.one("Bookmark", "id", 1)?["title"] == "fine")
    }

    @Test func aNestedRecordMissingARequiredValueIsNamedByItsOwnPath() async throws {
        let model = try Self.model()
        let store = Store(inMemory: model)
        let input = MapperFixtures.bytes(#"[{"name": "f", "bookmarks": [{"id": 1, "url": "https://a"}, {"id": 2}]}]"#)
        do {
            _ = try await store.importJSON(input, into: "Folder")
            Issue.record("a nested record without its required url was imported")
        } catch let error as MappingError {
            #expect(error.path == "$[0].bookmarks[1]", "\(error)")
        }
        let result = try await store.importJSON(input, into: "Folder", options: Self.options(viaContext: true, lenient: true))
        #expect(result.warnings.map(\.path) == ["$[0].bookmarks[1]"], "\(result.warnings)")
        #expect(result.warnings.first?.message.contains("Folder.bookmarks of $[0] is left as it was") == true, "\(result.warnings)")
        // The relationship that took the skipped record is left as it was, as when a read sets
        // an item aside; the other nested record stays.
        let folder = try #require(try store.viewContext.one("Folder", "name", "f"))
        #expect(try folder.objects(forKey: "bookmarks").isEmpty)
        #expect(try store.viewContext.one("Bookmark", "id", 1) != nil)
    }

    @Test(arguments: [false, true]) func aRequiredRelationshipARecordLeavesEmptyNamesTheRecord(viaContext: Bool) async throws {
        let model = try Model {
            Entity("Note") {
                Attribute("id", .integer64)
                Relationship("author", to: "Writer", inverse: "notes", optional: false)
                Unique("id")
            }
            Entity("Writer") {
                Attribute("name", .string)
                Relationship("notes", to: "Note", inverse: "author", .toMany(ordered: false))
                Unique("name")
            }
        }
        let store = Store(inMemory: model)
        let input = MapperFixtures.bytes(#"[{"id": 1, "author": {"name": "w"}}, {"id": 2}]"#)
        do {
            _ = try await store.importJSON(input, into: "Note", options: Self.options(viaContext: viaContext))
            Issue.record("a record without its required author was imported")
        } catch let error as MappingError {
            #expect(error.path == "$[1]" && error.property == "author", "\(error)")
        }
        let flat = MapperFixtures.bytes(#"[{"id": 2}]"#)
        do {
            _ = try await store.importJSON(flat, into: "Note", options: Self.options(viaContext: viaContext))
            Issue.record("a flat record without its required author was imported")
        } catch let error as MappingError {
            #expect(error.path == "$[0]" && error.property == "author", "\(error)")
        }
    }
}
