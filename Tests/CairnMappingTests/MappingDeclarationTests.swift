import Cairn
import CairnMapping
import Foundation
import Testing

/// Mappings are declared in Swift, in a JSON file or in the model's userInfo, and checked against
/// the model when built.
@Suite struct MappingDeclarationTests {
    let model: Model

    init() throws { model = try MapperFixtures.model() }

    func failure(_ build: () throws -> Mapping) -> MappingError? {
        do {
            _ = try build()
            return nil
        } catch {
            return error as? MappingError
        }
    }

    @Test func aMappingNamingWhatTheModelLacksFailsWhenBuiltNamingBoth() {
        let attribute = failure { try Mapping(model: model) { EntityMapping("Person") { AttributeMap("shoeSize", from: "shoe") } } }
        #expect(attribute?.code == .unknownName && attribute?.entity == "Person" && attribute?.property == "shoeSize")
        #expect(attribute?.message.contains("Person does not have") == true)
        let relationship = failure { try Mapping(model: model) { EntityMapping("Person") { AttributeMap("employer") } } }
        #expect(relationship?.message.contains("it is a relationship") == true)
        let entity = failure { try Mapping(model: model) { EntityMapping("Robot") {} } }
        #expect(entity?.code == .unknownName && entity?.entity == "Robot")
        let identity = failure { try Mapping(model: model) { EntityMapping("Person", identity: "passport") {} } }
        #expect(identity?.code == .unknownName && identity?.property == "passport")
        let pattern = failure { try Mapping(model: model) { EntityMapping("Person") { AttributeMap("hired", date: .pattern("yyyy-jj")) } } }
        #expect(pattern?.code == .invalidMapping && pattern?.property == "hired")
        let transformer = failure { try Mapping(model: model) { EntityMapping("Person") { AttributeMap("name", transformer: "Nope") } } }
        #expect(transformer?.code == .invalidMapping && transformer?.message.contains("Nope") == true)
        let twice = failure {
            try Mapping(model: model) {
                EntityMapping("Person") {}; EntityMapping("Person") {}
            }
        }
        #expect(twice?.code == .invalidMapping)
    }

    @Test func snakeCaseKeysAndFallbacks() async throws {
        let model = try Model {
            Entity("User") {
                Attribute("userID", .integer64); Attribute("firstName", .string); Attribute("homeURL", .uri); Unique("userID")
            }
        }
        let mapping = try Mapping(model: model, keyStyle: .snakeCase) {
            EntityMapping("User") { AttributeMap("firstName", from: "given_name", "first_name") }
        }
        #expect(try mapping.describe("User").contains("userID ← user_id"))
        let store = Store(inMemory: model)
        let input = #"[{"user_id": 1, "first_name": "B", "given_name": "A", "home_url": "https://example.com/a"}, {"user_id": 2, "first_name": "C"}]"#
        let result = try await store.importJSON(MapperFixtures.bytes(input), into: "User", mapping: mapping)
        let users = try store.viewContext.objects(with: result.objectIDs)
        #expect(try users.map { try $0.value(forKey: "firstName", as: String.self) } == ["A", "C"], "the first key path present wins")
        #expect(try users[0].value(forKey: "homeURL", as: URL.self) == URL(string: "https://example.com/a"))
    }

    @Test func aMappingFileDeclaresTheSameAsSwift() async throws {
        let file = """
            {
              "keyStyle": "asIs",
              "entities": {
                "Person": {
                  "identity": "ticket",
                  "attributes": {"ticket": ["ticket_number", "ticket"], "hired": {"key": "start", "date": "M/d/yyyy"}},
                  "relationships": {"employer": {"key": "employer_code", "policy": "merge"}},
                  "ignore": ["nickname"]
                }
              }
            }
            """
        let mapping = try Mapping(model: model, file: Array(file.utf8))
        let store = Store(inMemory: model)
        _ = try await store.importJSON(MapperFixtures.bytes(#"{"code": "X"}"#), into: "Company", mapping: mapping)
        let input = #"{"ticket_number": 9, "start": "3/7/2022", "nickname": "ignored", "employer_code": "X"}"#
        _ = try await store.importJSON(MapperFixtures.bytes(input), into: "Person", mapping: mapping)
        let person = try #require(try store.viewContext.one("Person", "ticket", 9))
        #expect(try person.value(forKey: "hired", as: Date.self) == ISO8601DateParser.date("2022-03-07"))
        #expect(try person.value(forKey: "nickname", as: String?.self) == nil)
        #expect(try person.object(forKey: "employer")?.value(forKey: "code", as: String.self) == "X")
        // Mistakes name their place in the file.
        let unknownKey = failure { try Mapping(model: model, file: Array(#"{"entities": {"Person": {"atributes": {}}}}"#.utf8)) }
        #expect(unknownKey?.path == "$.entities.Person.atributes")
        let wrongType = failure { try Mapping(model: model, file: Array(#"{"entities": {"Person": {"attributes": {"name": 3}}}}"#.utf8)) }
        #expect(wrongType?.path == "$.entities.Person.attributes.name")
        let notJSON = failure { try Mapping(model: model, file: Array("{".utf8)) }
        #expect(notJSON?.code == .invalidMapping && notJSON?.offset != nil)
        let unknownAttribute = failure { try Mapping(model: model, file: Array(#"{"entities": {"Person": {"attributes": {"nope": "x"}}}}"#.utf8)) }
        #expect(unknownAttribute?.code == .unknownName && unknownAttribute?.property == "nope")
    }

    /// One entity annotated as each library annotates its models.
    func annotatedModel(_ entityInfo: [String: String], key: [String: String], name: [String: String], born: [String: String] = [:]) throws -> Model {
        try Model {
            Entity(
                "Member",
                attributes: [
                    Attribute("memberID", .integer64, userInfo: key),
                    Attribute("remoteNumber", .integer64, userInfo: key),
                    Attribute("name", .string, userInfo: name),
                    Attribute("born", .date, userInfo: born)
                ], userInfo: entityInfo)
        }
    }

    func importOne(_ model: Model, _ json: String) async throws -> ManagedObject? {
        let store = Store(inMemory: model)
        let mapping = try Mapping(model: model)
        _ = try await store.importJSON(MapperFixtures.bytes(json), into: "Member", mapping: mapping)
        let second = try await store.importJSON(MapperFixtures.bytes(json), into: "Member", mapping: mapping)
        #expect(second.unchanged == 1 && second.inserted == 0, "the unique key from userInfo finds the object again")
        return try store.viewContext.fetchFirst(FetchRequest("Member"))
    }

    @Test func wtaDataUserInfo() async throws {
        let model = try annotatedModel(
            ["PrimaryAttribute": "remoteNumber"], key: ["ImportName": "id,identifier"], name: ["ImportName": "full_name"], born: ["DateFormat": "M/d/yyyy"])
        let member = try #require(try await importOne(model, #"{"identifier": 4, "full_name": "W", "born": "12/31/1999"}"#))
        #expect(try member.value(forKey: "remoteNumber", as: Int.self) == 4)
        #expect(try member.value(forKey: "name", as: String.self) == "W")
        #expect(try member.value(forKey: "born", as: Date.self) == ISO8601DateParser.date("1999-12-31"))
        // Without PrimaryAttribute, the <entity>ID attribute is the key.
        let guessed = try Mapping(model: try annotatedModel([:], key: [:], name: [:]))
        #expect(try guessed.describe("Member").contains("unique key memberID"))
    }

    @Test func modelmaticUserInfo() async throws {
        let model = try annotatedModel(["cairn.identity": "memberID"], key: ["jsonKeyPath": "ids.member"], name: ["externalKeyPath": "profile.name"])
        let member = try #require(try await importOne(model, #"{"ids": {"member": 5}, "profile": {"name": "M"}}"#))
        #expect(try member.value(forKey: "memberID", as: Int.self) == 5 && member["name"] == "M")
    }

    @Test func magicalRecordUserInfo() async throws {
        let model = try annotatedModel(
            ["relatedByAttribute": "memberID"], key: ["mappedKeyName": "id"],
            name: ["mappedKeyName": "nope", "mappedKeyName.1": "first", "mappedKeyName.2": "name"],
            born: ["dateFormat": "UnixTime"])
        let member = try #require(try await importOne(model, #"{"id": 6, "name": "late", "first": "early", "born": 86400}"#))
        #expect(member["name"] == "early", "mappedKeyName, then .1, .2: the first present wins")
        #expect(try member.value(forKey: "born", as: Date.self) == Date(timeIntervalSince1970: 86400))
    }

    @Test func grootUserInfo() async throws {
        let model = try annotatedModel(["identityAttributes": "memberID, remoteNumber"], key: ["JSONKeyPath": "key"], name: ["JSONKeyPath": "n"])
        let mapping = try Mapping(model: model)
        #expect(try mapping.describe("Member").contains("unique key memberID, remoteNumber"), "a compound key")
        let member = try #require(try await importOne(model, #"{"key": 7, "n": "G"}"#))
        #expect(member["name"] == "G")
    }

    @Test func syncUserInfo() async throws {
        let model = try annotatedModel([:], key: ["sync.remoteKey": "remote_id", "sync.isPrimaryKey": "YES"], name: ["hyper.remoteKey": "label"])
        let mapping = try Mapping(model: model)
        #expect(try mapping.describe("Member").contains("unique key memberID, remoteNumber (userInfo)"))
        let member = try #require(try await importOne(model, #"{"remote_id": 8, "label": "S"}"#))
        #expect(member["name"] == "S")
    }

    @Test func precedenceAndAliases() throws {
        // Sync before Groot before Modelmatic before MagicalRecord before WTAData.
        let model = try annotatedModel(
            [:], key: [:], name: ["ImportName": "w", "mappedKeyName": "m", "jsonKeyPath": "mm", "JSONKeyPath": "g", "sync.remoteKey": "s"])
        #expect(try Mapping(model: model).describe("Member").contains("name ← s"))
        var onlyOld = UserInfoConventions(libraries: [.wtaData, .magicalRecord])
        #expect(try Mapping(model: model, conventions: onlyOld).describe("Member").contains("name ← w"))
        let aliased = try annotatedModel([:], key: [:], name: ["api": "remote_name"])
        onlyOld.aliases = ["api": "cairn.key"]
        onlyOld.libraries = [.cairn]
        #expect(try Mapping(model: aliased, conventions: onlyOld).describe("Member").contains("name ← remote_name"))
        // A userInfo key naming an attribute the entity lacks fails when the mapping is built.
        let broken = try annotatedModel(["PrimaryAttribute": "nothing"], key: [:], name: [:])
        #expect(failure { try Mapping(model: broken) }?.property == "nothing")
    }
}
