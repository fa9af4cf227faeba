import Cairn
import CairnMapping
import Foundation
import Testing

/// The built-in transformers (`json`, `base64`, `numberFromString`) are found by name, from a
/// model's userInfo, a transformable attribute and a mapping file, with nothing registered;
/// each reads on import and writes the same JSON back on export; a transformer registered under
/// a built-in's name is used instead; a built-in named for a type it does not serve fails the
/// mapping.
@Suite struct BuiltInTransformerTests {
    static func model() throws -> Model {
        try Model {
            Entity(
                "Item",
                attributes: [
                    Attribute("code", .integer64),
                    Attribute("tags", .string, userInfo: ["JSONTransformerName": "json"]),
                    Attribute("meta", .transformable(transformer: "json")),
                    Attribute("blob", .transformable(transformer: "base64")),
                    Attribute("picture", .binary),
                    Attribute("price", .decimal, userInfo: ["sync.valueTransformer": "numberFromString"]),
                    Attribute("count", .integer32, userInfo: ["cairn.transformer": "numberFromString"]),
                    Attribute("ratio", .double, userInfo: ["JSONTransformerName": "numberFromString"]),
                    Attribute("notes", .string)
                ], uniquenessConstraints: [["code"]])
        }
    }

    /// The mapping file gives `picture` base64 and `notes` json, which the model does not name.
    static func mapping(_ model: Model) throws -> Mapping {
        let file = #"{"entities": {"Item": {"mapsUnlisted": true, "attributes": {"picture": {"transformer": "base64"}, "notes": {"transformer": "json"}}}}}"#
        return try Mapping(model: model, file: Array(file.utf8))
    }

    static let input = """
        [{"code": 1, "tags": ["a", "b,c"], "meta": {"k": [1, 2.50, "x\\"y"], "n": null, "o": {}}, "blob": "AAEC/w==", "picture": "aGk=",
          "price": "12345678901234567890.12345", "count": "-42", "ratio": "0.1", "notes": [{"a": true}]},
         {"code": 2, "tags": [], "meta": [], "blob": null, "picture": null, "price": 7, "count": 3, "ratio": "0.25", "notes": null}]
        """

    static func parsed(_ bytes: [UInt8]) throws -> NSObject {
        try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) as! NSObject
    }

    @Test func eachReadsOnImportAndWritesTheSameJSONOnExport() async throws {
        let model = try Self.model()
        let mapping = try Self.mapping(model)
        let store = Store(inMemory: model)
        _ = try await store.importJSON(Array(Self.input.utf8), into: "Item", mapping: mapping)
        let items = try store.viewContext.fetch(FetchRequest("Item", sortKeys: [SortKey("code")]))
        let first = try #require(items.first)
        #expect(first["tags"] == .string(#"["a","b,c"]"#))
        #expect(first["meta"] == .binary(Array(#"{"k":[1,2.50,"x\"y"],"n":null,"o":{}}"#.utf8)))
        #expect(first["blob"] == .binary([0, 1, 2, 255]))
        #expect(first["picture"] == .binary(Array("hi".utf8)))
        #expect(first["price"] == .decimal(Decimal(string: "12345678901234567890.12345")!))
        #expect(first["count"] == .integer(-42))
        #expect(first["ratio"] == .double(0.1))
        #expect(first["notes"] == .string(#"[{"a":true}]"#))
        #expect(items[1]["price"] == .decimal(7) && items[1]["count"] == .integer(3) && items[1]["ratio"] == .double(0.25))

        // Export writes the arrays and objects back, base64 as base64, numbers as strings;
        // flat from the stored bytes (depth 0) and through decoded values (depth 1).
        let expected = try Self.parsed(
            Array(
                Self.input.replacingOccurrences(of: #""price": 7, "count": 3"#, with: #""price": "7", "count": "3""#)
                    .utf8))
        for depth in [0, 1] {
            var options = ExportOptions()
            options.depth = depth
            options.writesNulls = true
            let output = try store.viewContext.exportJSON(FetchRequest("Item", sortKeys: [SortKey("code")]), mapping: mapping, options: options)
            #expect(try Self.parsed(output) == expected, "depth \(depth): \(String(decoding: output, as: UTF8.self))")
            let again = try await store.importJSON(output, into: "Item", mapping: mapping)
            #expect(again.unchanged == 2 && again.saves == 0, "depth \(depth)")
        }
    }

    @Test func valuesTheyDoNotTakeAreRefusedNamingThem() async throws {
        let model = try Self.model()
        let mapping = try Self.mapping(model)
        let cases: [(String, String, String)] = [
            (#"{"code": 1, "tags": "a,b"}"#, "$[0].tags", "json takes an array or an object, not a string"),
            (#"{"code": 1, "blob": "not base64!"}"#, "$[0].blob", "not base64"),
            (#"{"code": 1, "count": "forty"}"#, "$[0].count", #""forty" is not an integer (integer32)"#),
            (#"{"code": 1, "count": "3000000000"}"#, "$[0].count", "out of the range of integer32"),
            (#"{"code": 1, "price": ["1"]}"#, "$[0].price", "numberFromString takes a number given as a string, not an array")
        ]
        for (record, path, message) in cases {
            let store = Store(inMemory: model)
            do {
                _ = try await store.importJSON(Array("[\(record)]".utf8), into: "Item", mapping: mapping)
                Issue.record("\(record) was imported")
            } catch let error as MappingError {
                #expect(error.code == .invalidValue && error.path == path && error.message.contains(message), "\(error)")
            }
        }
        // A stored value a built-in cannot write back fails the export, naming the attribute.
        let store = Store(inMemory: model)
        let context = store.newBackgroundContext()
        let item = try context.insert("Item")
        try item.setValue(Int64(1), forKey: "code")
        try item.setValue("not json", forKey: "tags")
        try await context.save()
        for depth in [0, 1] {
            var options = ExportOptions()
            options.depth = depth
            #expect {
                _ = try store.viewContext.exportJSON(FetchRequest("Item"), mapping: mapping, options: options)
            } throws: { error in
                guard let error = error as? MappingError else { return false }
                return error.code == .invalidValue && error.entity == "Item" && error.property == "tags" && error.message.contains("not JSON")
            }
        }
    }

    @Test func aBuiltInNamedForATypeItDoesNotServeFailsTheMapping() throws {
        let model = try Model {
            Entity("Item", attributes: [Attribute("code", .integer64, userInfo: ["JSONTransformerName": "json"])])
        }
        #expect {
            _ = try Mapping(model: model)
        } throws: { error in
            guard let error = error as? MappingError else { return false }
            return error.code == .invalidMapping && error.entity == "Item" && error.property == "code"
                && error.message.contains("json takes string, binary and transformable attributes")
        }
        let file = #"{"entities": {"Item": {"attributes": {"code": {"transformer": "json"}}}}}"#
        let plain = try Model { Entity("Item", attributes: [Attribute("code", .integer64), Attribute("name", .string)]) }
        let fileMapping = #"{"entities": {"Item": {"attributes": {"name": {"transformer": "numberFromString"}}}}}"#
        #expect(throws: MappingError.self) { _ = try Mapping(model: plain, file: Array(fileMapping.utf8)) }
        #expect(throws: MappingError.self) { _ = try Mapping(model: plain, file: Array(file.utf8)) }
    }

    /// Behaves as the built-in `base64` for every value the built-in takes, so that tests
    /// running meanwhile see no difference; takes `"!override"` too, which the built-in refuses.
    struct Base64Override: MappingTransformer {
        func value(from json: JSONValue) throws -> Value {
            if json == .string("!override") { return .binary([0xFF]) }
            guard case .string(let text) = json, let data = Data(base64Encoded: text) else { throw MappingError(.invalidValue, "the string is not base64") }
            return .binary(Array(data))
        }

        func json(from value: Value) throws -> JSONValue {
            guard case .binary(let bytes) = value else { throw MappingError(.invalidValue, "not bytes") }
            return .string(Data(bytes).base64EncodedString())
        }
    }

    @Test func aTransformerRegisteredUnderABuiltInsNameIsUsedInstead() async throws {
        let model = try Self.model()
        let input = Array(#"[{"code": 1, "blob": "!override"}]"#.utf8)
        // The built-in refuses the value…
        await #expect(throws: MappingError.self) { _ = try await Store(inMemory: model).importJSON(input, into: "Item", mapping: Self.mapping(model)) }
        // …the one registered under its name reads it.
        MappingTransformers.register(Base64Override(), name: "base64")
        let store = Store(inMemory: model)
        _ = try await store.importJSON(input, into: "Item", mapping: Self.mapping(model))
        #expect(try store.viewContext.fetch(FetchRequest("Item")).first?["blob"] == .binary([0xFF]))
        #expect(MappingTransformers.transformer(named: "base64") is Base64Override)
        #expect(MappingTransformers.transformer(named: "json") != nil && MappingTransformers.transformer(named: "numberFromString") != nil)
    }
}
