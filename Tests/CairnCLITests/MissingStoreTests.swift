import CairnTestSupport
import Foundation
import Testing

/// Every command says the same of a store path that holds no store folder (nothing there, or a
/// file), with the same exit status, before it reads anything.
@Suite struct MissingStoreTests {
    /// Each command, with `path` as its store.
    static func commands(_ path: String, scratch: String) -> [[String]] {
        [
            ["stats", path], ["verify", path], ["verify", "--repair", path], ["dump", path], ["model", path], ["query", path, "--entity", "Book"],
            ["export", path, "--entity", "Book"], ["compact", path], ["backup", path, scratch + "/backup"], ["history", path],
            ["history", path, "--follow"], ["import", path, "--entity", "Book", scratch + "/empty.json"]
        ]
    }

    @Test func aStoreThatIsNotThereIsNamedInOneMessage() async throws {
        let directory = TemporaryDirectory()
        try Data("[]".utf8).write(to: URL(fileURLWithPath: directory.path + "/empty.json"))
        let missing = directory.store("missing")
        for arguments in Self.commands(missing, scratch: directory.path) {
            let result = try await runCairn(arguments)
            #expect(result.status == 1, "\(arguments): \(result.output)")
            #expect(result.output.hasPrefix("Error: no store at \(missing): no such directory"), "\(arguments): \(result.output)")
            #expect(!result.output.contains("errno") && !result.output.contains("Usage:"), "\(arguments): \(result.output)")
        }
        // A folder on the way that is a file is the same: no such directory.
        let file = directory.path + "/file"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let under = try await runCairn(["stats", file + "/store"])
        #expect(under.status == 1 && under.output.hasPrefix("Error: no store at \(file)/store: no such directory"), "\(under.output)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/backup"))
    }

    @Test func aFileGivenAsTheStoreIsNamedInOneMessage() async throws {
        let directory = TemporaryDirectory()
        try Data("[]".utf8).write(to: URL(fileURLWithPath: directory.path + "/empty.json"))
        let file = directory.path + "/store-file"
        try Data("not a store".utf8).write(to: URL(fileURLWithPath: file))
        let model = directory.path + "/model.json"
        try Data(#"{"format":"cairn-model","version":1,"entities":[{"name":"Book","attributes":[{"name":"title","type":"string"}]}]}"#.utf8)
            .write(to: URL(fileURLWithPath: model))
        var commands = Self.commands(file, scratch: directory.path)
        commands += [["create", file, "--model", model], ["demo", "--dir", file], ["import", file, "--entity", "Book", "--model", model]]
        for arguments in commands {
            let result = try await runCairn(arguments)
            #expect(result.status == 1, "\(arguments): \(result.output)")
            #expect(result.output == "Error: \(file) is a file, not a store folder\n", "\(arguments): \(result.output)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data("not a store".utf8))
    }
}
