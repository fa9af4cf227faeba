import Cairn
import CairnMapping
import Foundation
import Testing

/// Import and export consult the same transformers the same way: every value that is not null
/// goes through the transformer both ways (whatever the attribute's type), null is nil both ways
/// without it, and a transformer nobody registered fails both, naming it.
@Suite struct TransformerRoundTripTests {
    /// A `[String]` kept as `"a,b,c"` in a string attribute.
    static let commaList = "TransformerRoundTripTests.CommaList"
    /// Named by the model and never registered.
    static let missing = "TransformerRoundTripTests.NeverRegistered"

    static func register() {
        MappingTransformers.register(
            name: commaList,
            import: { json in
                guard case .array(let items) = json else { throw MappingError(.invalidValue, "not a list") }
                return .string(
                    try items.map { item in
                        guard case .string(let text) = item else { throw MappingError(.invalidValue, "not a list of strings") }
                        return text
                    }.joined(separator: ","))
            },
            export: { value in
                guard case .string(let text) = value else { throw MappingError(.invalidValue, "not a string") }
                return .array(text.split(separator: ",", omittingEmptySubsequences: false).map { .string(String($0)) })
            })
    }

    static func model(transformer: String) throws -> Model {
        try Model {
            Entity(
                "Item",
                attributes: [
                    Attribute("code", .integer64),
                    Attribute("tags", .string, userInfo: ["JSONTransformerName": transformer])
                ], uniquenessConstraints: [["code"]])
        }
    }

    static func parsed(_ bytes: [UInt8]) throws -> NSObject {
        try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) as! NSObject
    }

    @Test func aStringAttributeWithATransformerExportsThroughIt() async throws {
        Self.register()
        let model = try Self.model(transformer: Self.commaList)
        let mapping = try Mapping(model: model)
        let store = Store(inMemory: model)
        let input = #"[{"code": 1, "tags": ["a", "b", "c"]}, {"code": 2, "tags": ["x"]}, {"code": 3, "tags": null}]"#
        _ = try await store.importJSON(Array(input.utf8), into: "Item", mapping: mapping)
        let stored = try store.viewContext.fetch(FetchRequest("Item", sortKeys: [SortKey("code")]))
        #expect(stored.map { $0["tags"] ?? .null } == [.string("a,b,c"), .string("x"), .null])
        // Every record, flat (from the stored bytes) and through the values (depth 1, a hook).
        for depth in [0, 1] {
            var options = ExportOptions()
            options.depth = depth
            let output = try store.viewContext.exportJSON(FetchRequest("Item", sortKeys: [SortKey("code")]), mapping: mapping, options: options)
            #expect(try Self.parsed(output) == Self.parsed(Array(input.utf8)), "depth \(depth): \(String(decoding: output, as: UTF8.self))")
            let again = try await store.importJSON(output, into: "Item", mapping: mapping)
            #expect(again.unchanged == 3 && again.saves == 0)
        }
        var hooked = ExportOptions()
        hooked.beforeExport = { _, _ in }
        let output = try store.viewContext.exportJSON(FetchRequest("Item", sortKeys: [SortKey("code")]), mapping: mapping, options: hooked)
        #expect(try Self.parsed(output) == Self.parsed(Array(input.utf8)))
    }

    @Test func anUnregisteredTransformerFailsImportAndExportNamingIt() async throws {
        let model = try Self.model(transformer: Self.missing)
        let mapping = try Mapping(model: model)
        let store = Store(inMemory: model)
        // Import: strict and lenient alike (it is the mapping that cannot work, not the value).
        for lenient in [false, true] {
            var options = ImportOptions()
            options.lenient = lenient
            do {
                _ = try await store.importJSON(Array(#"[{"code": 1, "tags": "a,b"}]"#.utf8), into: "Item", mapping: mapping, options: options)
                Issue.record("an import through a transformer nobody registered succeeded (lenient: \(lenient))")
            } catch let error as MappingError {
                #expect(error.code == .invalidMapping && error.message.contains(Self.missing) && error.path == "$[0].tags", "\(error)")
            }
        }
        #expect(try store.viewContext.count(FetchRequest("Item")) == 0)
        // Null needs no transformer, either way.
        _ = try await store.importJSON(Array(#"[{"code": 1, "tags": null}]"#.utf8), into: "Item", mapping: mapping)
        let nulls = try store.viewContext.exportJSON(FetchRequest("Item"), mapping: mapping)
        #expect(String(decoding: nulls, as: UTF8.self) == #"[{"code":1,"tags":null}]"#)
        // A value the app stored: export refuses it as import would, instead of writing it raw.
        let context = store.newBackgroundContext()
        let item = try context.insert("Item")
        try item.setValue(Int64(2), forKey: "code")
        try item.setValue("a,b", forKey: "tags")
        try await context.save()
        for depth in [0, 1] {
            var options = ExportOptions()
            options.depth = depth
            do {
                _ = try store.viewContext.exportJSON(FetchRequest("Item", sortKeys: [SortKey("code")]), mapping: mapping, options: options)
                Issue.record("an export through a transformer nobody registered succeeded (depth \(depth))")
            } catch let error as MappingError {
                #expect(error.code == .invalidMapping && error.message.contains(Self.missing), "\(error)")
                #expect(error.entity == "Item" && error.property == "tags", "\(error)")
            }
        }
    }
}
