import CairnTestSupport
import Foundation
import Testing

/// `cairn import` creates the store from the model when needed, prints what it did and errors
/// with their JSON path; `cairn export` writes what import reads back.
@Suite struct ImportExportCommandTests {
    func cairn(_ arguments: [String], input: String? = nil, in directory: String) throws -> (status: Int32, output: String) {
        let executable = try #require(cairnExecutable(), "the cairn executable is built next to the tests")
        var arguments = arguments
        var executablePath = executable
        if let input {
            // Standard input from a file, through the shell.
            let file = directory + "/stdin-\(UUID()).json"
            try Data(input.utf8).write(to: URL(fileURLWithPath: file))
            arguments = ["-c", "exec \"$0\" \"$@\" < \"\(file)\"", executable] + arguments
            executablePath = "/bin/sh"
        }
        let process = try ChildProcess(executablePath, arguments, in: directory, includeStandardError: true)
        let status = process.waitUntilExit()
        return (status, String(decoding: process.outputBytes, as: UTF8.self))
    }

    static let model = """
        {"format": "cairn-model", "version": 1, "entities": [{"name": "Person", "attributes": [
          {"name": "ticket", "type": "integer64"}, {"name": "name", "type": "string"}, {"name": "hired", "type": "date"},
          {"name": "visits", "type": "integer32"}], "uniquenessConstraints": [["ticket"]]}]}
        """

    @Test func importCreatesTheStoreReportsAndExportsBack() throws {
        let directory = TemporaryDirectory()
        try Data(Self.model.utf8).write(to: URL(fileURLWithPath: directory.path + "/model.json"))
        let people = #"{"data": {"people": [{"ticket": 1, "name": "Ada", "hired": "2020-01-01"}, {"ticket": 2, "name": "Bob", "visits": "x"}]}}"#
        try Data(people.utf8).write(to: URL(fileURLWithPath: directory.path + "/people.json"))

        let strict = try cairn(["import", "s.store", "--entity", "Person", "people.json", "--model", "model.json", "--root", "data.people"], in: directory.path)
        #expect(
            strict.status == 1 && strict.output.contains("$.data.people[1].visits") && strict.output.contains("\"x\" is not an integer"), "\(strict.output)")

        let lenient = try cairn(["import", "s.store", "--entity", "Person", "people.json", "--root", "data.people", "--lenient"], in: directory.path)
        #expect(lenient.status == 0 && lenient.output.contains("inserted 2, updated 0, unchanged 0"), "\(lenient.output)")
        #expect(lenient.output.contains("warning: $.data.people[1].visits"))

        let again = try cairn(
            ["import", "s.store", "--entity", "Person", "-", "--root", "data.people", "--lenient", "--json"], input: people, in: directory.path)
        let result = try JSONSerialization.jsonObject(with: Data(again.output.split(separator: "\n").last.map(String.init)?.utf8 ?? "".utf8)) as? [String: Int]
        #expect(again.status == 0 && result?["unchanged"] == 2 && result?["saves"] == 0, "\(again.output)")

        let exported = try cairn(["export", "s.store", "--entity", "Person", "--sort", "-ticket", "--format", "jsonl"], in: directory.path)
        #expect(exported.status == 0)
        #expect(exported.output.hasPrefix(#"{"ticket":2,"name":"Bob","hired":null,"visits":null}"#), "\(exported.output)")
        #expect(exported.output.contains(#"{"ticket":1,"name":"Ada","hired":"2020-01-01T00:00:00.000Z","visits":null}"#))

        let file = try cairn(["export", "s.store", "--entity", "Person", "--where", "ticket == 1", "--output", "one.json"], in: directory.path)
        #expect(file.status == 0 && file.output.contains("exported 1 objects"))
        let written = try String(contentsOfFile: directory.path + "/one.json", encoding: .utf8)
        #expect(written.hasPrefix("[{\"ticket\":1"))

        let unknown = try cairn(["import", "s.store", "--entity", "Robot", "people.json"], in: directory.path)
        #expect(unknown.status == 2 && unknown.output.contains("no entity Robot"))
        let noModel = try cairn(["import", "other.store", "--entity", "Person", "people.json"], in: directory.path)
        // A store that is not there, as every command says it (exit 1), and how to create one.
        #expect(noModel.status == 1 && noModel.output.contains("no store at other.store: no such directory") && noModel.output.contains("--model"))
        // An existing store keeps its model: another --model is refused, nothing migrates.
        let other = Self.model.replacingOccurrences(of: #"{"name": "visits", "type": "integer32"}"#, with: #"{"name": "visits", "type": "string"}"#)
        try Data(other.utf8).write(to: URL(fileURLWithPath: directory.path + "/other.json"))
        let refused = try cairn(
            ["import", "s.store", "--entity", "Person", "people.json", "--model", "other.json", "--root", "data.people"], in: directory.path)
        #expect(refused.status == 1 && refused.output.contains("does not migrate"), "\(refused.output)")
        let verify = try cairn(["verify", "s.store"], in: directory.path)
        #expect(verify.status == 0, "\(verify.output)")
    }

    @Test func aChunkedImportSaysHowToResume() throws {
        let directory = TemporaryDirectory()
        try Data(Self.model.utf8).write(to: URL(fileURLWithPath: directory.path + "/model.json"))
        let records = (0..<30).map { $0 == 17 ? #"{"ticket": "bad"}"# : #"{"ticket": \#($0)}"# }.joined(separator: "\n")
        try Data(records.utf8).write(to: URL(fileURLWithPath: directory.path + "/people.jsonl"))
        let failed = try cairn(["import", "s.store", "--entity", "Person", "people.jsonl", "--model", "model.json", "--chunk", "5"], in: directory.path)
        #expect(failed.status == 1 && failed.output.contains("15 records were saved; run again with --skip 15"), "\(failed.output)")
    }
}
