import CairnModels
import CairnTestSupport
import Foundation
import Testing

/// The same model written three ways (the classes, a `Model { }`, an Xcode model) is the same
/// stored model, and the same edits through the classes make the same store.
@Suite struct ThreeWaysModelTests {
    static let swiftModel: Model = {
        do {
            return try Model {
                Entity("Author") {
                    Attribute("born", .integer64)
                    Attribute("name", .string, optional: false)
                    Relationship("books", to: "Book", inverse: "author", .toMany(ordered: false), deleteRule: .cascade)
                    Unique("name")
                }
                Entity("Book") {
                    Attribute("tags", .string, optional: false)
                    Attribute("title", .string, optional: false)
                    Attribute("year", .integer64)
                    Relationship("author", to: "Author", inverse: "books")
                }
            }
        } catch {
            fatalError("the test's model: \(error)")
        }
    }()

    static func xcodeModel() throws -> Model {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/Models/TypedLibrary.xcdatamodel/contents")
        return try Model(xcodeModelXML: try Data(contentsOf: url), file: url.path)
    }

    /// Writes the same objects through the classes, and lists the store's contents by name.
    static func fill(_ store: Store) async throws -> [String] {
        let context = store.newBackgroundContext()
        let author = Author(name: "Ursula K. Le Guin", born: 1929)
        context.insert(author)
        let book = Book(title: "Tehanu", year: 1990)
        book.tags = ["earthsea"]
        book.author = author
        Book(title: "Lavinia").author = author
        try await context.save()
        var lines: [String] = []
        for entity in ["Author", "Book"] {
            for object in try store.viewContext.fetch(FetchRequest(entity, sortKeys: [SortKey(entity == "Author" ? "name" : "title")])) {
                let values = object.entity.attributes.map { "\($0.name)=\(object[$0.name].map { "\($0)" } ?? "nil")" }
                let links = object.entity.relationships.map { relationship in
                    let targets =
                        relationship.isToMany
                        ? ((try? object.objects(forKey: relationship.name)) ?? []) : [try? object.object(forKey: relationship.name)].compactMap { $0 }
                    return "\(relationship.name)=\(targets.map { "\($0.objectID)" }.sorted())"
                }
                lines.append("\(object.objectID) \(entity): " + (values + links).joined(separator: " "))
            }
        }
        return lines
    }

    @Test func theThreeModelsAreEqual() throws {
        let derived = try Model(for: [Author.self, Book.self])
        #expect(derived == Self.swiftModel)
        let xcode = try Self.xcodeModel()
        #expect(xcode == Self.swiftModel)
        #expect(derived.descriptions.map(\.uniqueness.count) == Self.swiftModel.descriptions.map(\.uniqueness.count))
    }

    @Test func theSameEditsMakeTheSameStore() async throws {
        let folder = TemporaryDirectory()
        var contents: [[String]] = []
        var stored: [Model] = []
        for (number, model) in [try Model(for: [Author.self, Book.self]), Self.swiftModel, try Self.xcodeModel()].enumerated() {
            let path = folder.path + "/\(number)"
            let store = try Store(at: path, model: model, for: [Author.self, Book.self])
            contents.append(try await Self.fill(store))
            try await store.close()
            stored.append(try #require(try Store.storedModel(at: path)))
        }
        #expect(contents[0] == contents[1] && contents[1] == contents[2])
        #expect(contents[0].count == 3)
        #expect(stored[0] == stored[1] && stored[1] == stored[2])
    }

    @Test func aClassBindsToTheEntityWhoseClassNameIsItsName() async throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="CDAuthor" representedClassName="Author" syncable="YES">
                    <attribute name="born" optional="YES" attributeType="Integer 64" usesScalarValueType="NO"/>
                    <attribute name="name" attributeType="String"/>
                    <attribute name="nickname" optional="YES" attributeType="String"/>
                    <relationship name="books" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="CDBook" inverseName="author" inverseEntity="CDBook"/>
                </entity>
                <entity name="CDBook" representedClassName="Book" syncable="YES">
                    <attribute name="tags" attributeType="String"/>
                    <attribute name="title" attributeType="String"/>
                    <attribute name="year" optional="YES" attributeType="Integer 16" usesScalarValueType="NO"/>
                    <relationship name="author" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="CDAuthor" inverseName="books" inverseEntity="CDAuthor"/>
                </entity>
            </model>
            """
        let model = try Model(xcodeModelXML: Data(xml.utf8))
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.path + "/cd", model: model, for: [Author.self, Book.self])
        let context = store.newBackgroundContext()
        let author = Author(name: "Le Guin")
        context.insert(author)
        let book = Book(title: "Tehanu", year: 1990)
        book.author = author
        try await context.save()
        #expect(author.managedObject?.entity.name == "CDAuthor")
        #expect(try store.viewContext.fetch(FetchDescriptor<Book>(predicate: #Predicate { $0.author?.name == "Le Guin" })).map(\.year) == [1990])
        // The entity's attribute is an Integer 16: a year beyond its range fails the save, naming it.
        book.year = 100_000
        let error = await #expect(throws: StoreError.self) { try await context.save() }
        #expect(error?.message.contains("CDBook.year") == true)
        try await store.close()
    }
}
