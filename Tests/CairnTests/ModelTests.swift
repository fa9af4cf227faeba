import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

@Suite struct ModelTests {
    @Test func inheritanceFlattensPropertiesAndConstraints() throws {
        let model = try libraryModel()
        let book = try #require(model.entity(named: "Book"))
        #expect(book.attributes.map(\.name) == ["code", "title", "year"])
        #expect(book.uniqueness.map(\.names) == [["code"]])
        let item = try #require(model.entity(named: "Item"))
        #expect(Set(item.descendants) == [book.index, try #require(model.entity(named: "Magazine")).index])
    }

    @Test func mistakesNameTheEntityAndProperty() {
        func error(_ build: () throws -> Model) -> ModelError? {
            do { _ = try build(); return nil } catch { return error as? ModelError }
        }
        let unknownDestination = error { try Model { Entity("A") { Relationship("b", to: "Nope") } } }
        #expect(unknownDestination?.code == .unknownDestination && unknownDestination?.entity == "A" && unknownDestination?.property == "b")

        let badInverse = error {
            try Model {
                Entity("A") { Relationship("bs", to: "B", inverse: "a", .toMany(ordered: false)) }
                Entity("B") {
                    Relationship("a", to: "A", inverse: "other"); Relationship("other", to: "A")
                }
            }
        }
        #expect(badInverse?.code == .invalidInverse && badInverse?.entity == "A" && badInverse?.property == "bs")

        let missingInverse = error {
            try Model {
                Entity("A") { Relationship("b", to: "B", inverse: "missing") }; Entity("B") {}
            }
        }
        #expect(missingInverse?.code == .invalidInverse)

        let duplicateEntity = error {
            try Model {
                Entity("A") {}; Entity("A") {}
            }
        }
        #expect(duplicateEntity?.code == .duplicateName && duplicateEntity?.entity == "A")

        let duplicateProperty = error {
            try Model {
                Entity("P") { Attribute("x", .string) }; Entity("C", parent: "P") { Attribute("x", .integer64) }
            }
        }
        #expect(duplicateProperty?.code == .duplicateName && duplicateProperty?.entity == "C" && duplicateProperty?.property == "x")

        let constraint = error {
            try Model {
                Entity("A") {
                    Attribute("x", .string); Unique("x", "y")
                }
            }
        }
        #expect(constraint?.code == .unknownConstraintAttribute && constraint?.property == "y")

        let badDefault = error { try Model { Entity("A") { Attribute("n", .integer16, default: .integer(70_000)) } } }
        #expect(badDefault?.code == .invalidDefault && badDefault?.property == "n")

        let cycle = error {
            try Model {
                Entity("A", parent: "B") {}; Entity("B", parent: "A") {}
            }
        }
        #expect(cycle?.code == .inheritanceCycle)

        let parent = error { try Model { Entity("A", parent: "Z") {} } }
        #expect(parent?.code == .unknownParent)

        let counts = error { try Model { Entity("A") { Relationship("b", to: "A", .toMany(ordered: false), minimumCount: 3, maximumCount: 2) } } }
        #expect(counts?.code == .invalidCount)
    }

    @Test func jsonFormatRoundTrips() throws {
        let model = try Model {
            Entity("Everything") {
                Attribute("s", .string, optional: false, default: "x", indexed: true)
                Attribute("i16", .integer16, default: 7)
                Attribute("i32", .integer32)
                Attribute("i64", .integer64, default: .integer(Int64.max))
                Attribute("d", .double, default: 2.5)
                Attribute("f", .float, default: .float(1.5))
                Attribute("dec", .decimal, default: .decimal(Decimal(string: "12.345")!))
                Attribute("b", .boolean, default: true)
                Attribute("date", .date, default: .date(Date(timeIntervalSince1970: 1234.5)))
                Attribute("bin", .binary, default: .binary([1, 2, 3]))
                Attribute("id", .uuid, default: .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!))
                Attribute("u", .uri, default: .uri("https://example.org"))
                Attribute("t", .transformable(transformer: "Color"), transient: true, userInfo: ["key": "value"])
                Relationship("next", to: "Everything", inverse: "previous", deleteRule: .noAction)
                Relationship("previous", to: "Everything", inverse: "next")
                Relationship("many", to: "Everything", .toMany(ordered: true), minimumCount: 1, maximumCount: 4)
                Unique("s", "i32")
            }
        }
        let data = model.jsonData()
        let loaded = try Model(jsonData: data)
        #expect(loaded == model)
        #expect(loaded.jsonData() == data)
    }

    @Test func badModelFilesGiveClearErrors() {
        for (json, fragment) in [
            (#"{"format":"cairn-model","version":1,"entities":[{"name":"A","attributes":[{"name":"x","type":"text"}]}]}"#, "unknown attribute type"),
            (#"{"format":"cairn-model","version":3,"entities":[]}"#, "written by a newer version of Cairn"),
            (#"{"format":"other","version":1,"entities":[]}"#, "format"),
            (#"{"format":"cairn-model","version":1,"entities":[{"attributes":[]}]}"#, "name"),
            (#"{"format":"cairn-model","version":1,"entities":[{"name":"A","attributes":[{"name":"n","type":"integer16","default":"x"}]}]}"#, "default"),
            ("not json", "does not decode")
        ] {
            #expect { try Model(jsonData: Data(json.utf8)) } throws: { error in
                "\(error)".contains(fragment)
            }
        }
    }

    @Test func differencesAreReadable() throws {
        let old = try Model {
            Entity("A") {
                Attribute("x", .string); Attribute("y", .integer64)
            }
        }
        let new = try Model {
            Entity("A") {
                Attribute("x", .integer64); Attribute("z", .string)
            }; Entity("B") {}
        }
        #expect(new.differences(from: old) == ["~ attribute A.x: string → integer64", "- attribute A.y", "+ attribute A.z (string)", "+ entity B"])
    }
}

@Suite struct ModelEdgeTests {
    @Test func anInverseNamedFromOneSideKeepsBothEndsInStep() throws {
        let model = try Model {
            Entity("Owner") { Relationship("pets", to: "Pet", inverse: "owner", .toMany(ordered: false)) }
            Entity("Pet") { Relationship("owner", to: "Owner") }
        }
        let context = Store(inMemory: model).viewContext
        let owner = try context.insert("Owner"), pet = try context.insert("Pet")
        try pet.setObject(owner, forKey: "owner")
        #expect(try owner.objects(forKey: "pets") == [pet], "changing the side without an inverse updates the other")
    }

    @Test func defaultsThatCannotBeStoredAreRefusedOrNormalized() throws {
        #expect { try Model { Entity("A") { Attribute("x", .double, default: .double(.nan)) } } } throws: { ($0 as? ModelError)?.code == .invalidDefault }
        let model = try Model {
            Entity("A") {
                Attribute("x", .string, default: .null); Attribute("t", .transformable(transformer: "T"), default: .binary([1, 2]))
            }
        }
        #expect(model.entities[0].attributes[0].defaultValue == nil)
        #expect(try Model(jsonData: model.jsonData()) == model)
    }

    @Test func datesRoundTripExactly() async throws {
        let model = try Model { Entity("E") { Attribute("when", .date, default: .date(Date(timeIntervalSince1970: 1_234_567_890.123_456_7))) } }
        #expect(try Model(jsonData: model.jsonData()) == model)
        let folder = TemporaryDirectory()
        let date = Date(timeIntervalSinceReferenceDate: 789_012_345.678_901_2)
        let store = try Store(at: folder.store(), model: model)
        try store.viewContext.insert("E").setValue(.date(date), forKey: "when")
        try await store.viewContext.save()
        try await store.close()
        let reopened = try Store(at: folder.store(), model: model)
        #expect(try reopened.viewContext.fetchFirst(FetchRequest("E"))?.value(forKey: "when", as: Value.self) == .date(date))
        try await reopened.close()
    }
}
