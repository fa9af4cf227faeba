import Cairn
import CairnMapping
import CairnTestSupport
import Foundation
import Testing

/// `cairn dump` and `cairn query` write each value as export writes it (one renderer,
/// `ValueJSON`): decimals as numbers with every digit, infinities spelled once, strings with
/// JSON's escapes.
@Suite struct DumpValuesTests {
    static let values: [(name: String, type: AttributeType, value: Value)] = [
        ("money", .decimal, .decimal(Decimal(string: "12345678901234567890.123456789")!)),
        ("real", .double, .double(.infinity)),
        ("low", .double, .double(-.infinity)),
        ("zero", .double, .double(-0.0)),
        ("single", .float, .float(0.1)),
        ("text", .string, .string("a\"b\\c\n\u{1}\u{7F}é")),
        ("when", .date, .date(Date(timeIntervalSince1970: 1_700_000_000.123))),
        ("blob", .binary, .binary([0, 255])),
        ("tag", .uuid, .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!))
    ]

    @Test func dumpAndQueryWriteValuesAsExportDoes() async throws {
        let model = try Model {
            Entity("Thing", attributes: [Attribute("id", .integer64)] + Self.values.map { Attribute($0.name, $0.type) }, uniquenessConstraints: [["id"]])
        }
        let directory = TemporaryDirectory()
        let path = directory.store()
        let store = try Store(at: path, model: model)
        let context = store.newBackgroundContext()
        let thing = try context.insert("Thing")
        try thing.setValue(Int64(1), forKey: "id")
        for sample in Self.values { try thing.setValue(sample.value, forKey: sample.name) }
        try await context.save()
        let exported = String(decoding: try store.viewContext.exportJSON(FetchRequest("Thing"), mapping: Mapping(model: model)), as: UTF8.self)
        try await store.close()

        for arguments in [["dump", path], ["query", path, "--entity", "Thing", "--format", "jsonl"]] {
            let result = try await runCairn(arguments)
            #expect(result.status == 0, "\(result.output)")
            for sample in Self.values {
                let member = "\"\(sample.name)\":" + JSONWriter.text(ValueJSON.json(sample.value))
                #expect(result.output.contains(member), "\(arguments[0]) writes \(member): \(result.output)")
                #expect(exported.contains(member), "export writes \(member): \(exported)")
            }
        }
        #expect(JSONWriter.text(ValueJSON.json(Self.values[0].value)) == "12345678901234567890.123456789")
        #expect(JSONWriter.text(ValueJSON.json(.double(.infinity))) == #""Infinity""#)
    }
}
