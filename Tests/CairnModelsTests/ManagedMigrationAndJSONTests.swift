import CairnMapping
import CairnModels
import CairnTestSupport
import Foundation
import Testing

enum LibraryV1: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static var models: [any ManagedModel.Type] { [Volume.self] }
    @Managed final class Volume {
        var title: String
        var year: Int?
        init(title: String, year: Int? = nil) {
            self.title = title
            self.year = year
        }
    }
}

enum LibraryV2: VersionedSchema {
    static let versionIdentifier = SchemaVersion(2, 0, 0)
    static var models: [any ManagedModel.Type] { [Volume.self] }
    @Managed final class Volume {
        @Attribute(originalName: "title") var name: String
        var year: Int?
        var pages: Int?
        init(name: String) { self.name = name }
    }
}

enum LibraryPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [LibraryV1.self, LibraryV2.self] }
    static var stages: [MigrationStage] { [.lightweight(fromVersion: LibraryV1.self, toVersion: LibraryV2.self)] }
}

enum GappedPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [LibraryV1.self, LibraryV2.self] }
    static var stages: [MigrationStage] { [] }
}

/// Versioned schemas and migration plans in SwiftData's shape; JSON import and export with
/// typed classes.
@Suite struct ManagedMigrationAndJSONTests {
    @Test func aStoreOfTheFirstVersionMigratesByThePlanFollowingARename() async throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/library"
        do {
            let store = try Store(at: path, for: LibraryV1.models)
            let context = store.newBackgroundContext()
            context.insert(LibraryV1.Volume(title: "Tehanu", year: 1990))
            try await context.save()
            try await store.close()
        }
        let store = try Store(at: path, migrationPlan: LibraryPlan.self)
        let volumes = try store.viewContext.fetch(FetchDescriptor<LibraryV2.Volume>())
        #expect(volumes.map(\.name) == ["Tehanu"])
        #expect(volumes.first?.year == 1990 && volumes.first?.pages == nil)
        try await store.close()
    }

    @Test func aPlanWithoutAStageBetweenTwoVersionsIsRefused() throws {
        let folder = TemporaryDirectory()
        let error = #expect(throws: StoreError.self) { try Store(at: folder.path + "/s", migrationPlan: GappedPlan.self) }
        #expect(error?.message.contains("has no stage from LibraryV1 1.0.0 to LibraryV2 2.0.0") == true)
    }

    @Test func jsonImportsIntoAContextAsTypedObjectsAndExportsBack() async throws {
        let store = try Store(inMemoryFor: [Author.self, Book.self])
        let context = store.newBackgroundContext()
        let json = #"[{"title": "Tehanu", "year": 1990, "tags": "[\"earthsea\"]", "author": {"name": "Ursula K. Le Guin"}}, {"title": "Dune", "tags": "[]"}]"#
        let books = try await context.importJSON(Array(json.utf8), as: Book.self)
        #expect(books.map(\.title) == ["Tehanu", "Dune"])
        #expect(books.first?.tags == ["earthsea"])
        #expect(books.first?.author?.name == "Ursula K. Le Guin")
        #expect(context.hasChanges)
        #expect(try store.viewContext.fetchCount(FetchDescriptor<Book>()) == 0)  // not saved yet
        try await context.save()
        #expect(try store.viewContext.fetchCount(FetchDescriptor<Book>()) == 2)
        let exported = try context.exportJSON(FetchDescriptor<Book>(predicate: #Predicate { $0.year != nil }))
        let text = String(decoding: exported, as: UTF8.self)
        #expect(text.contains("\"title\":\"Tehanu\""))
        #expect(!text.contains("Dune"))
        let result = try await store.importJSON(Array(#"[{"name": "Frank Herbert", "born": 1920}]"#.utf8), as: Author.self)
        #expect(result.inserted == 1)
        #expect(try store.viewContext.fetch(FetchDescriptor<Author>(predicate: #Predicate { $0.born == 1920 })).map(\.name) == ["Frank Herbert"])
    }
}
