import CairnLog
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Opening a store with a changed model: inferred migrations, recorded in the log, chains of
/// versions, refusals that list each change, and the policies around them.
@Suite struct MigrationTests {
    /// Version 1 of a small model: authors and their books.
    static func base(
        book extra: [Attribute] = [], bookRelationships: [Relationship] = [], author authorExtra: [Attribute] = [],
        authorRelationships: [Relationship] = [], unique: [[String]] = [["name"]], more: [Entity] = []
    ) throws -> Model {
        try Model(
            [
                Entity(
                    "Author", attributes: [Attribute("name", .string, optional: false)] + authorExtra,
                    relationships: [Relationship("books", to: "Book", inverse: "author", .toMany(ordered: false), deleteRule: .cascade)]
                        + authorRelationships,
                    uniquenessConstraints: unique),
                Entity(
                    "Book", attributes: [Attribute("title", .string, optional: false), Attribute("year", .integer32)] + extra,
                    relationships: [Relationship("author", to: "Author", inverse: "books")] + bookRelationships)
            ] + more)
    }

    /// A store written with `old` holding two authors with three books (one without a year).
    static func populated(_ folder: TemporaryDirectory, _ old: Model) async throws {
        let store = try Store(at: folder.store(), model: old)
        let context = store.viewContext
        let ada = try context.make("Author", ["name": "Ada"])
        let bob = try context.make("Author", ["name": "Bob"])
        for (title, year, author) in [("Notes", 1843 as Value, ada), ("Engines", nil, ada), ("Birds", 1990, bob)] {
            let book = try context.make("Book", ["title": .string(title), "year": year])
            try book.setObject(author, forKey: "author")
        }
        try await context.save()
        try await store.close()
    }

    /// Writes with `old`, opens with `new`, and returns the open store (closed by the caller).
    static func migrated(_ folder: TemporaryDirectory, from old: Model, to new: Model, options: StoreOptions = StoreOptions()) async throws -> Store {
        try await populated(folder, old)
        return try Store(at: folder.store(), model: new, options: options)
    }

    static func titles(_ store: Store, key: String = "title") throws -> [String] {
        try store.viewContext.all("Book", by: key).compactMap { $0.string(key) }
    }

    @Test func addedAttributesTakeTheirDefaultOrNil() async throws {
        let folder = TemporaryDirectory()
        let new = try Self.base(book: [Attribute("isbn", .string), Attribute("rating", .double, optional: false, default: 2.5)])
        let store = try await Self.migrated(folder, from: try Self.base(), to: new)
        let books = try store.viewContext.all("Book", by: "title")
        #expect(books.count == 3 && books.allSatisfy { $0["isbn"] == nil })
        #expect(books.map { $0["rating"] } == [2.5, 2.5, 2.5])
        #expect(try Self.titles(store) == ["Birds", "Engines", "Notes"])
        try await store.close()
        #expect(try Store.storedModels(at: folder.store()).count == 2)
        // The migration is a record of the log: the reopened store replays it.
        let reopened = try Store(at: folder.store(), model: new)
        #expect(try reopened.viewContext.all("Book", by: "title").map { $0["rating"] } == [2.5, 2.5, 2.5])
        try await reopened.close()
    }

    @Test func removedAttributesEntitiesAndRelationshipsAreDropped() async throws {
        let folder = TemporaryDirectory()
        let old = try Self.base(author: [Attribute("born", .date)], more: [Entity("Shelf", attributes: [Attribute("label", .string)])])
        // The books' years and authors are dropped: the app says so (MigrationDataLossTests).
        var options = StoreOptions()
        options.allowsMigrationThatDropsData = true
        let store = try await Self.migrated(
            folder, from: old,
            to: try Model([
                Entity("Author", attributes: [Attribute("name", .string, optional: false)], uniquenessConstraints: [["name"]]),
                Entity("Book", attributes: [Attribute("title", .string, optional: false)])
            ]), options: options)
        #expect(try store.count(of: "Author") == 2 && store.count(of: "Book") == 3)
        #expect(try Self.titles(store) == ["Birds", "Engines", "Notes"])
        try await store.close()
    }

    @Test(arguments: ["renamingIdentifier", "elementID"])
    func renamedAttributesKeepTheirValues(through identifier: String) async throws {
        let folder = TemporaryDirectory()
        var renamed = Attribute("name", .string, optional: false)
        if identifier == "elementID" { renamed.elementID = "title" } else { renamed.renamingIdentifier = "title" }
        let new = try Model([
            Entity(
                "Writer", attributes: [Attribute("name", .string, optional: false)],
                relationships: [Relationship("books", to: "Book", inverse: "author", .toMany(ordered: false), deleteRule: .cascade)],
                uniquenessConstraints: [["name"]], renamingIdentifier: "Author"),
            Entity(
                "Book", attributes: [renamed, Attribute("year", .integer32)],
                relationships: [Relationship("author", to: "Writer", inverse: "books")])
        ])
        let store = try await Self.migrated(folder, from: try Self.base(), to: new)
        #expect(try Self.titles(store, key: "name") == ["Birds", "Engines", "Notes"])
        let ada = try #require(try store.viewContext.fetchFirst(FetchRequest("Writer", predicate: .equal("name", "Ada"))))
        #expect(try ada.objects(forKey: "books").compactMap { $0.string("name") }.sorted() == ["Engines", "Notes"])
        try await store.close()
    }

    @Test func requiredWithADefaultFillsTheNils() async throws {
        let folder = TemporaryDirectory()
        let new = try Model([
            Entity(
                "Author", attributes: [Attribute("name", .string)],  // required → optional
                relationships: [Relationship("books", to: "Book", inverse: "author", .toMany(ordered: false), deleteRule: .cascade)],
                uniquenessConstraints: [["name"]]),
            Entity(
                "Book", attributes: [Attribute("title", .string, optional: false), Attribute("year", .integer64, optional: false, default: 2000)],
                relationships: [Relationship("author", to: "Author", inverse: "books")])
        ])
        let store = try await Self.migrated(folder, from: try Self.base(), to: new)
        #expect(try store.viewContext.all("Book", by: "title").map { $0["year"] } == [1990, 2000, 1843])
        try await store.close()
    }

    @Test func relationshipsAddedRemovedAndReshaped() async throws {
        let folder = TemporaryDirectory()
        // v1: Book.author has no inverse; v2 adds Author.works as its inverse (filled from it),
        // makes the to-one to-many, and adds an empty relationship to a new entity.
        let old = try Model([
            Entity("Author", attributes: [Attribute("name", .string, optional: false)], uniquenessConstraints: [["name"]]),
            Entity(
                "Book", attributes: [Attribute("title", .string, optional: false), Attribute("year", .integer32)],
                relationships: [Relationship("author", to: "Author")])
        ])
        try await Self.populated(folder, old)
        let new = try Model([
            Entity(
                "Author", attributes: [Attribute("name", .string, optional: false)],
                relationships: [Relationship("works", to: "Book", inverse: "author", .toMany(ordered: true))],
                uniquenessConstraints: [["name"]]),
            Entity(
                "Book", attributes: [Attribute("title", .string, optional: false), Attribute("year", .integer32)],
                relationships: [Relationship("author", to: "Author", inverse: "works"), Relationship("shelf", to: "Shelf", inverse: "books")]),
            Entity("Shelf", relationships: [Relationship("books", to: "Book", inverse: "shelf", .toMany(ordered: false))])
        ])
        let store = try Store(at: folder.store(), model: new)
        let ada = try #require(try store.viewContext.fetchFirst(FetchRequest("Author", predicate: .equal("name", "Ada"))))
        #expect(try ada.objects(forKey: "works").compactMap { $0.string("title") }.sorted() == ["Engines", "Notes"])
        #expect(try store.viewContext.all("Book").allSatisfy { try $0.object(forKey: "shelf") == nil })
        try await store.close()
    }

    @Test func constraintAndIndexChangesTheDataSatisfies() async throws {
        let folder = TemporaryDirectory()
        var title = Attribute("title", .string, optional: false, indexed: true)
        title.userInfo = ["note": "indexed now"]
        let new = try Model([
            Entity(
                "Author", attributes: [Attribute("name", .string, optional: false)],
                relationships: [Relationship("books", to: "Book", inverse: "author", .toMany(ordered: false), deleteRule: .cascade)]),
            Entity(
                "Book", attributes: [title, Attribute("year", .integer32)],
                relationships: [Relationship("author", to: "Author", inverse: "books")],
                uniquenessConstraints: [["title"]], fetchIndexes: [FetchIndex("byYear", [.init("year")])])
        ])
        let store = try await Self.migrated(folder, from: try Self.base(), to: new)
        let context = store.viewContext
        try context.make("Book", ["title": "Notes"])
        await #expect(throws: StoreError.self) { try await context.save() }  // the new constraint is enforced
        try await store.close()
    }

    @Test func changesThatCannotBeInferredAreEachListed() async throws {
        let folder = TemporaryDirectory()
        let new = try Self.base(book: [Attribute("pages", .integer32, optional: false)], unique: [["name"]], more: [])
        // Book.title string → integer, Book.pages required without default while books exist.
        var entities = new.entities
        entities[1].attributes[0] = Attribute("title", .integer64, optional: false)
        let changed = try Model(entities)
        try await Self.populated(folder, try Self.base())
        #expect { try Store(at: folder.store(), model: changed) } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .cannotMigrate && error.message.contains("Book.title: type string → integer64")
                && error.message.contains("Book.pages is required and has no default") && error.message.contains("(3 objects)")
        }
        // Nothing was recorded: the store still opens with its own model.
        #expect(try Store.storedModels(at: folder.store()) == [try Self.base()])
    }

    @Test func aNewConstraintTheDataBreaksIsRefused() async throws {
        let folder = TemporaryDirectory()
        try await Self.populated(folder, try Self.base())
        let store = try Store(at: folder.store(), model: try Self.base())
        try store.viewContext.make("Book", ["title": "Notes"])
        try await store.viewContext.save()
        try await store.close()
        var entities = try Self.base().entities
        entities[1].uniquenessConstraints = [["title"]]
        #expect { try Store(at: folder.store(), model: try Model(entities)) } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .cannotMigrate && error.message.contains("uniqueness constraint Book(title) is broken by 1 object")
        }
    }

    @Test func policies() async throws {
        let folder = TemporaryDirectory()
        try await Self.populated(folder, try Self.base())
        let addition = try Self.base(book: [Attribute("isbn", .string)])
        var options = StoreOptions()
        options.modelMismatch = .fail
        #expect { try Store(at: folder.store(), model: addition, options: options) } throws: { ($0 as? StoreError)?.code == .modelMismatch }
        // Read-only: migrated in memory, nothing recorded.
        options.modelMismatch = .migrate
        options.readOnly = true
        let reader = try Store(at: folder.store(), model: addition, options: options)
        #expect(try reader.count(of: "Book") == 3)
        try await reader.close()
        #expect(try Store.storedModels(at: folder.store()).count == 1)
        // migrateOrWipe: a change that cannot be inferred wipes.
        options.readOnly = false
        options.modelMismatch = .migrateOrWipe
        var entities = try Self.base().entities
        entities[1].attributes[1] = Attribute("year", .string)
        let wiped = try Store(at: folder.store(), model: try Model(entities), options: options)
        #expect(try wiped.count(of: "Book") == 0)
        try await wiped.close()
    }

    @Test func theXcodeChainMigratesInOneOpen() async throws {
        let bundle = try XcodeModelBundle(at: FixturePaths.models + "/Library.xcdatamodeld")
        let folder = TemporaryDirectory()
        let v1 = bundle.versions[0].model
        let store = try Store(at: folder.store(), model: v1)
        let context = store.viewContext
        let ada = try context.make("Author", ["name": "Ada", "born": .date(Date(timeIntervalSince1970: 0))])
        for (title, year) in [("Notes", 1843 as Value), ("Engines", nil)] {
            let book = try context.make("Book", ["title": .string(title), "year": year])
            try book.setObject(ada, forKey: "author")
        }
        try await context.save()
        try await store.close()

        var options = StoreOptions()
        options.modelVersions = bundle.versions.map(\.model)
        let migrated = try Store(at: folder.store(), model: bundle.current, options: options)
        let books = try migrated.viewContext.all("Book", by: "name")
        #expect(books.compactMap { $0.string("name") } == ["Engines", "Notes"])
        #expect(books.map { $0["year"] } == [2000, 1843])
        #expect(books.map { $0["rating"] } == [0.0, 0.0])
        #expect(try books.allSatisfy { try $0.object(forKey: "author")?.string("name") == "Ada" })
        try migrated.viewContext.make("Book", ["name": "Later", "isbn": "978"])
        try await migrated.viewContext.save()
        try await migrated.close()
        #expect(try Store.storedModels(at: folder.store()) == bundle.versions.map(\.model))
        let reopened = try Store(at: folder.store(), model: bundle.current, options: options)
        #expect(try Self.titles(reopened, key: "name") == ["Engines", "Later", "Notes"])
        try await reopened.close()
    }

    @Test func aRealWorldTypeChangeIsRefusedByName() async throws {
        let path = FixturePaths.realWorld + "/vokoder/BaseballModel.xcdatamodeld"
        guard FileManager.default.fileExists(atPath: path) else {
            print("skipped: \(path) is absent (real-world models live beside the project, not in it)")
            return
        }
        let bundle = try XcodeModelBundle(at: path)
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: bundle.versions[0].model)
        let team = try store.viewContext.insert("BaseballTeam")
        try team.setValue("CHC", forKey: "teamIdentifier")
        try await store.viewContext.save()
        try await store.close()
        var options = StoreOptions()
        options.modelVersions = bundle.versions.map(\.model)
        #expect { try Store(at: folder.store(), model: bundle.current, options: options) } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .cannotMigrate && error.message.contains("BaseballTeam.teamIdentifier: type string → integer64")
        }
    }

    @Test func aNewInverseIsFilledForSubEntitiesToo() async throws {
        let folder = TemporaryDirectory()
        let old = try Model([
            Entity("Author", attributes: [Attribute("name", .string)], relationships: [Relationship("books", to: "Book", .toMany(ordered: false))]),
            Entity("Book", attributes: [Attribute("title", .string)]),
            Entity("Novel", parent: "Book", attributes: [Attribute("genre", .string)])
        ])
        let store = try Store(at: folder.store(), model: old)
        let context = store.viewContext
        let ada = try context.make("Author", ["name": "Ada"])
        let essay = try context.make("Book", ["title": "Essay"])
        let novel = try context.make("Novel", ["title": "Novel", "genre": "gothic"])
        try ada.setObjects([essay, novel], forKey: "books")
        try await context.save()
        try await store.close()
        let new = try Model([
            Entity(
                "Author", attributes: [Attribute("name", .string)],
                relationships: [Relationship("books", to: "Book", inverse: "author", .toMany(ordered: false))]),
            Entity("Book", attributes: [Attribute("title", .string)], relationships: [Relationship("author", to: "Author", inverse: "books")]),
            Entity("Novel", parent: "Book", attributes: [Attribute("genre", .string)])
        ])
        let migrated = try Store(at: folder.store(), model: new)
        let books = try migrated.viewContext.all("Book", by: "title")
        #expect(try books.map { try $0.object(forKey: "author")?.string("name") } == ["Ada", "Ada"])
        #expect(try migrated.viewContext.all("Novel").first?.string("genre") == "gothic")
        try await migrated.close()
    }

    @Test func migrationsThatWouldBreakTheGraphAreRefused() async throws {
        // A sub-entity leaves the destination family of a relationship that holds its objects.
        let folder = TemporaryDirectory()
        let pets = try Model([
            Entity("Owner", relationships: [Relationship("pets", to: "Pet", .toMany(ordered: false))]),
            Entity("Pet", attributes: [Attribute("name", .string)]),
            Entity("Dog", parent: "Pet")
        ])
        let store = try Store(at: folder.store(), model: pets)
        let owner = try store.viewContext.insert("Owner")
        try owner.setObjects([try store.viewContext.make("Dog", ["name": "Rex"])], forKey: "pets")
        try await store.viewContext.save()
        try await store.close()
        var entities = pets.entities
        entities[0].parent = nil  // Dog (sorted first) no longer a Pet
        #expect { try Store(at: folder.store(), model: try Model(entities)) } throws: { ($0 as? StoreError)?.code == .cannotMigrate }

        // Two relationships that were apart become inverses while their data disagree.
        let apart = TemporaryDirectory()
        let separate = try Model([
            Entity("A", relationships: [Relationship("b", to: "B")]),
            Entity("B", relationships: [Relationship("a", to: "A")])
        ])
        let second = try Store(at: apart.store(), model: separate)
        let a = try second.viewContext.insert("A")
        let b = try second.viewContext.insert("B")
        try a.setObject(b, forKey: "b")  // B.a stays empty
        try await second.viewContext.save()
        try await second.close()
        let paired = try Model([
            Entity("A", relationships: [Relationship("b", to: "B", inverse: "a")]),
            Entity("B", relationships: [Relationship("a", to: "A", inverse: "b")])
        ])
        #expect { try Store(at: apart.store(), model: paired) } throws: { error in
            (error as? StoreError)?.message.contains("disagree") == true
        }

        // A model that shares nothing with the store's.
        #expect { try Store(at: apart.store(), model: try Model([Entity("Other", attributes: [Attribute("x", .string)])])) } throws: { error in
            (error as? StoreError)?.message.contains("another model") == true
        }
        #expect(try Store.storedModels(at: apart.store()) == [separate])
    }

    @Test func chainsStopAtTheAppsVersionAndNeverGoDown() async throws {
        let bundle = try XcodeModelBundle(at: FixturePaths.models + "/Library.xcdatamodeld")
        let versions = bundle.versions.map(\.model)
        #expect(try Store.migrationSteps(from: versions[0], to: versions[1], versions: versions) == [versions[1]])
        #expect(try Store.migrationSteps(from: versions[0], to: versions[2], versions: versions) == [versions[1], versions[2]])
        #expect(throws: StoreError.self) { try Store.migrationSteps(from: versions[2], to: versions[1], versions: versions) }
        let folder = TemporaryDirectory()
        try await Store(at: folder.store(), model: versions[2]).close()
        var options = StoreOptions()
        options.modelVersions = versions
        #expect { try Store(at: folder.store(), model: versions[0], options: options) } throws: { error in
            (error as? StoreError)?.code == .cannotMigrate && (error as? StoreError)?.message.contains("later version") == true
        }
    }

    @Test func theRecordedPlanIsReadBackAndCheckedAgainstTheModels() throws {
        let bundle = try XcodeModelBundle(at: FixturePaths.models + "/Library.xcdatamodeld")
        let (v1, v3) = (bundle.versions[0].model, bundle.versions[2].model)
        let plan = MigrationPlan(from: v1, to: v3)
        #expect(plan.refusals.isEmpty)
        let bytes = StoreRecord.migration(v3, plan).encoded()
        guard case .migration(let model, let decoded) = try StoreRecord.decode(bytes, lsn: LSN(9), model: v1) else {
            Issue.record("not a migration record")
            return
        }
        #expect(model == v3)
        #expect(decoded.entities.map(\.source) == plan.entities.map(\.source))
        #expect(decoded.entities.map(\.properties) == plan.entities.map(\.properties))
        // The same record read against another previous model does not fit, and says so.
        #expect { try StoreRecord.decode(bytes, lsn: LSN(9), model: try Self.base()) } throws: { error in
            (error as? StoreError)?.code == .corruptRecord && (error as? StoreError)?.lsn == LSN(9)
        }
        // Every truncation is refused as damage, never a trap.
        for cut in stride(from: 2, to: bytes.count, by: max(1, bytes.count / 40)) {
            #expect(throws: StoreError.self) { try StoreRecord.decode(Array(bytes[..<cut]), lsn: LSN(9), model: v1) }
        }
    }
}
