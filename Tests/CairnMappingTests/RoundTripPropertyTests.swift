import CairnTestSupport
import Cairn
import CairnMapping
import Foundation
import Testing

/// Random models and random documents for them, written in the form export writes: import then
/// export gives the documents back, byte for byte, and importing them again changes nothing.
@Suite struct RoundTripPropertyTests {
    static let types: [AttributeType] = [.string, .integer16, .integer32, .integer64, .double, .decimal, .boolean, .date, .uuid, .uri, .binary]

    /// A JSON value of `type`, as export writes it.
    static func value(_ type: AttributeType, _ generator: inout SeededRandom) -> String {
        switch type {
        case .string:
            let pieces = ["a", "é", "\\\"", "\\\\", "\\n", "日本", "\\u0001", " ", "z"]
            return "\"" + (0..<Int.random(in: 0..<6, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined() + "\""
        case .integer16: return String(Int.random(in: Int(Int16.min)...Int(Int16.max), using: &generator))
        case .integer32: return String(Int.random(in: Int(Int32.min)...Int(Int32.max), using: &generator))
        case .integer64: return String(Int64.random(in: Int64.min...Int64.max, using: &generator))
        case .double:
            let number = Double.random(in: -1e6...1e6, using: &generator)
            return number == number.rounded() ? String(Int64(number)) : number.description
        case .decimal: return "\(Int.random(in: -99999...99999, using: &generator)).\(Int.random(in: 1...9, using: &generator))"
        case .boolean: return Bool.random(using: &generator) ? "true" : "false"
        case .date:
            let milliseconds = Int64.random(in: -30_000_000_000_000...200_000_000_000_000, using: &generator)
            return "\"" + Value.date(Date(timeIntervalSince1970: Double(milliseconds) / 1000)).description + "\""
        case .uuid: return "\"\(UUID(uuid: (UInt8.random(in: 0...255, using: &generator), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)).uuidString)\""
        case .uri: return "\"https://example.com/\(Int.random(in: 0...999, using: &generator))\""
        case .binary:
            return "\"" + Data((0..<Int.random(in: 0..<9, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64EncodedString()
                + "\""
        default: return "null"
        }
    }

    @Test(arguments: 0..<16) func importThenExportGivesTheDocumentsBack(seed: Int) async throws {
        var generator = SeededRandom(seed: UInt64(1000 + seed))
        let count = Int.random(in: 1...8, using: &generator)
        let attributes = (0..<count).map { index in
            Attribute("a\(index)", Self.types.randomElement(using: &generator)!)
        }
        let model = try Model { Entity("Thing", attributes: [Attribute("id", .integer64)] + attributes, uniquenessConstraints: [["id"]]) }
        let mapping = try Mapping(model: model, keyStyle: seed % 2 == 0 ? .asIs : .snakeCase)
        var documents: [String] = []
        for id in 0..<Int.random(in: 1...40, using: &generator) {
            var members = [#""id":\#(id)"#]
            for attribute in attributes {
                let key = mapping.keyStyle.key(for: attribute.name)
                let value = Int.random(in: 0..<5, using: &generator) == 0 ? "null" : Self.value(attribute.type, &generator)
                members.append("\"\(key)\":\(value)")
            }
            documents.append("{" + members.joined(separator: ",") + "}")
        }
        let input = Array(("[" + documents.joined(separator: ",") + "]").utf8)
        let store = Store(inMemory: model)
        let first = try await store.importJSON(input, into: "Thing", mapping: mapping)
        #expect(first.inserted == documents.count)
        let output = try store.viewContext.exportJSON(FetchRequest("Thing", sortKeys: [SortKey("id")]), mapping: mapping)
        #expect(String(decoding: output, as: UTF8.self) == String(decoding: input, as: UTF8.self), "seed \(seed)")
        let again = try await store.importJSON(output, into: "Thing", mapping: mapping)
        #expect(again.unchanged == documents.count && again.saves == 0)
        // JSON Lines of the same documents: the same objects.
        var lines = ExportOptions()
        lines.format = .jsonLines
        let jsonl = try store.viewContext.exportJSON(FetchRequest("Thing", sortKeys: [SortKey("id")]), mapping: mapping, options: lines)
        #expect(try await store.importJSON(jsonl, into: "Thing", mapping: mapping).unchanged == documents.count)
    }
}
