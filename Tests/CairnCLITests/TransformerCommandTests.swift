import Cairn
import CairnMapping
import CairnTestSupport
import Foundation
import Testing

/// `cairn import` and `cairn export` read and write through the built-in transformers a model
/// or a mapping file names; a transformer nobody registered fails both with the same message;
/// `--allow-trailing-commas` reads what strict JSON refuses.
@Suite struct TransformerCommandTests {
    static let model = """
        {"format": "cairn-model", "version": 1, "entities": [{"name": "Item", "attributes": [
          {"name": "code", "type": "integer64"}, {"name": "tags", "type": "string", "userInfo": {"JSONTransformerName": "json"}},
          {"name": "blob", "type": "transformable", "transformer": "base64"}, {"name": "price", "type": "decimal"}],
          "uniquenessConstraints": [["code"]]}]}
        """

    @Test func builtInTransformersImportAndExportBack() async throws {
        let directory = TemporaryDirectory()
        try Data(Self.model.utf8).write(to: URL(fileURLWithPath: directory.path + "/model.json"))
        try Data(#"{"entities": {"Item": {"attributes": {"price": {"transformer": "numberFromString"}}}}}"#.utf8)
            .write(to: URL(fileURLWithPath: directory.path + "/mapping.json"))
        let input = #"[{"code": 1, "tags": ["a", {"b": 2}], "blob": "AAEC", "price": "19.95"}]"#
        try Data(input.utf8).write(to: URL(fileURLWithPath: directory.path + "/items.json"))
        let imported = try await runCairn(
            ["import", "s.store", "--entity", "Item", "items.json", "--model", "model.json", "--mapping", "mapping.json"], in: directory.path)
        #expect(imported.status == 0 && imported.output.contains("inserted 1"), "\(imported.output)")
        let exported = try await runCairn(["export", "s.store", "--entity", "Item", "--mapping", "mapping.json"], in: directory.path)
        #expect(exported.status == 0, "\(exported.output)")
        #expect(exported.output.contains(#"[{"code":1,"tags":["a",{"b":2}],"blob":"AAEC","price":"19.95"}]"#), "\(exported.output)")
    }

    @Test func anUnregisteredTransformerFailsImportAndExportWithTheSameMessage() async throws {
        let missing = "TransformerCommandTests.NeverRegistered"
        let model = try Model {
            Entity("Item", attributes: [Attribute("code", .integer64), Attribute("tags", .string, userInfo: ["JSONTransformerName": missing])])
        }
        let directory = TemporaryDirectory()
        let path = directory.store()
        // A value the app stored (it registers the transformer; the command line does not).
        let store = try Store(at: path, model: model)
        let context = store.newBackgroundContext()
        let item = try context.insert("Item")
        try item.setValue(Int64(1), forKey: "code")
        try item.setValue("a,b", forKey: "tags")
        try await context.save()
        try await store.close()
        try Data(#"[{"code": 2, "tags": "c"}]"#.utf8).write(to: URL(fileURLWithPath: directory.path + "/items.json"))

        let message = "no MappingTransformer is registered under the name \(missing) (Item.tags)"
        let imported = try await runCairn(["import", path, "--entity", "Item", directory.path + "/items.json"])
        #expect(imported.status == 1 && imported.output.contains(message), "\(imported.output)")
        for format in ["json", "jsonl"] {
            let exported = try await runCairn(["export", path, "--entity", "Item", "--format", format])
            #expect(exported.status == 1 && exported.output.contains(message), "\(exported.output)")
            #expect(!exported.output.contains("a,b"), "the raw value was written: \(exported.output)")
        }
    }

    @Test func trailingCommasAreReadWithTheFlagOnly() async throws {
        let directory = TemporaryDirectory()
        try Data(Self.model.utf8).write(to: URL(fileURLWithPath: directory.path + "/model.json"))
        let input = "[{\"code\": 1, \"tags\": [\"a\",],},\n{\"code\": 2,},\n]"
        try Data(input.utf8).write(to: URL(fileURLWithPath: directory.path + "/items.json"))
        let strict = try await runCairn(["import", "s.store", "--entity", "Item", "items.json", "--model", "model.json"], in: directory.path)
        #expect(strict.status == 1 && strict.output.contains("trailing comma") && strict.output.contains("--allow-trailing-commas"), "\(strict.output)")
        // Through a pipe too: the stream is checked as it arrives, with the same rule.
        let piped = try await cairnPiping("items.json", ["import", "s.store", "--entity", "Item", "/dev/stdin", "--model", "model.json"], in: directory.path)
        #expect(piped.status == 1 && piped.output.contains("--allow-trailing-commas"), "\(piped.output)")
        let allowed = try await cairnPiping(
            "items.json", ["import", "s.store", "--entity", "Item", "-", "--model", "model.json", "--allow-trailing-commas"], in: directory.path)
        #expect(allowed.status == 0 && allowed.output.contains("inserted 2"), "\(allowed.output)")
        let exported = try await runCairn(["export", "s.store", "--entity", "Item", "--sort", "code"], in: directory.path)
        #expect(exported.output.contains(#"[{"code":1,"tags":["a"],"blob":null,"price":null},{"code":2"#), "\(exported.output)")
    }

    /// `cairn` with `file` piped to its standard input (a pipe, not a file: the stream is spooled).
    func cairnPiping(_ file: String, _ arguments: [String], in directory: String) async throws -> (status: Int32, output: String) {
        let executable = try #require(cairnExecutable(), "the cairn executable is built next to the tests")
        return try await onOwnThread {
            let process = try ChildProcess(
                "/bin/sh", ["-c", "f=\"$0\"; e=\"$1\"; shift; cat \"$f\" | \"$e\" \"$@\"", file, executable] + arguments, in: directory,
                includeStandardError: true)
            let status = process.waitUntilExit()
            return (status, String(decoding: process.outputBytes, as: UTF8.self))
        }
    }
}
