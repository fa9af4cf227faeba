import CairnTestSupport
import Foundation
import Testing

/// `cairn import --django` imports a Django fixture of several entities in one run, without
/// `--entity` or any preprocessing; `--discriminator` names each record's entity by a key;
/// `--insert-missing-references` makes objects for keys nothing holds.
@Suite struct MixedEntityCommandTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    func cairn(_ arguments: [String], in directory: String) throws -> (status: Int32, output: String) {
        let executable = try #require(cairnExecutable(), "the cairn executable is built next to the tests")
        let process = try ChildProcess(executable, arguments, in: directory, includeStandardError: true)
        let status = process.waitUntilExit()
        return (status, String(decoding: process.outputBytes, as: UTF8.self))
    }

    @Test func aDjangoFixtureImportsInOneRun() throws {
        let directory = TemporaryDirectory()
        try Data(#"{"keyStyle": "snakeCase"}"#.utf8).write(to: URL(fileURLWithPath: directory.path + "/snake.json"))
        let model = Self.fixtures.appendingPathComponent("Models/Chinook.json").path
        let fixture = Self.fixtures.appendingPathComponent("JSON/chinook-django.json").path
        let imported = try cairn(["import", "c.store", "--django", fixture, "--model", model, "--mapping", "snake.json"], in: directory.path)
        #expect(imported.status == 0 && imported.output.contains("inserted 12, updated 0, unchanged 0"), "\(imported.output)")
        let tracks = try cairn(["query", "c.store", "--entity", "Track", "--count"], in: directory.path)
        #expect(tracks.status == 0 && tracks.output.contains("3"), "\(tracks.output)")

        try Data(#"[{"model": "chinook.robot", "pk": 1, "fields": {}}]"#.utf8).write(to: URL(fileURLWithPath: directory.path + "/bad.json"))
        let bad = try cairn(["import", "c.store", "--django", "bad.json"], in: directory.path)
        #expect(bad.status == 1 && bad.output.contains("$[0].model") && bad.output.contains("chinook.robot"), "\(bad.output)")
        let noEntity = try cairn(["import", "c.store", "bad.json"], in: directory.path)
        #expect(noEntity.status == 2 && noEntity.output.contains("--django"), "\(noEntity.output)")
    }

    static let tags = """
        {"format": "cairn-model", "version": 1, "entities": [
          {"name": "Tag", "attributes": [{"name": "code", "type": "string"}, {"name": "label", "type": "string"}],
           "relationships": [{"name": "posts", "destination": "Post", "inverse": "tags", "toMany": true}], "uniquenessConstraints": [["code"]]},
          {"name": "Post", "attributes": [{"name": "postId", "type": "integer64"}, {"name": "title", "type": "string"}],
           "relationships": [{"name": "tags", "destination": "Tag", "inverse": "posts", "toMany": true}], "uniquenessConstraints": [["postId"]]}]}
        """

    @Test func aDiscriminatorAndKeysThatNameNoObject() throws {
        let directory = TemporaryDirectory()
        try Data(Self.tags.utf8).write(to: URL(fileURLWithPath: directory.path + "/model.json"))
        let mixed = #"[{"type": "post", "postId": 1, "title": "Hello", "tags": ["a", "b"]}, {"type": "tag", "code": "a", "label": "A"}]"#
        try Data(mixed.utf8).write(to: URL(fileURLWithPath: directory.path + "/mixed.json"))
        let strict = try cairn(["import", "s.store", "--discriminator", "type", "mixed.json", "--model", "model.json"], in: directory.path)
        #expect(strict.status == 1 && strict.output.contains("unresolved reference") && strict.output.contains("$[0].tags[1]"), "\(strict.output)")
        let made = try cairn(["import", "s.store", "--discriminator", "type", "mixed.json", "--insert-missing-references"], in: directory.path)
        #expect(made.status == 0 && made.output.contains("inserted 3,"), "\(made.output)")

        try Data(#"["b", "c"]"#.utf8).write(to: URL(fileURLWithPath: directory.path + "/keys.json"))
        let keys = try cairn(["import", "s.store", "--entity", "Tag", "keys.json"], in: directory.path)
        #expect(keys.status == 1 && keys.output.contains("$[1]") && keys.output.contains("insertsMissingReferences"), "\(keys.output)")
        let inserted = try cairn(["import", "s.store", "--entity", "Tag", "keys.json", "--insert-missing-references"], in: directory.path)
        #expect(inserted.status == 0 && inserted.output.contains("inserted 1, updated 0, unchanged 1"), "\(inserted.output)")
    }

    @Test func aMappingFilesDiscriminatorNeedsNoFlag() throws {
        let directory = TemporaryDirectory()
        try Data(Self.tags.utf8).write(to: URL(fileURLWithPath: directory.path + "/model.json"))
        try Data(#"{"discriminator": {"key": "kind", "entities": {"p": "Post", "t": "Tag"}}}"#.utf8).write(
            to: URL(fileURLWithPath: directory.path + "/mapping.json"))
        let records = #"[{"kind": "t", "code": "a", "label": "A"}, {"kind": "p", "postId": 1, "title": "Hello", "tags": ["a"]}]"#
        try Data(records.utf8).write(to: URL(fileURLWithPath: directory.path + "/mixed.json"))
        let imported = try cairn(["import", "s.store", "mixed.json", "--model", "model.json", "--mapping", "mapping.json"], in: directory.path)
        #expect(imported.status == 0 && imported.output.contains("inserted 2,"), "\(imported.output)")
        // Naming the file's key again keeps the file's table of values.
        let again = try cairn(["import", "s.store", "mixed.json", "--mapping", "mapping.json", "--discriminator", "kind"], in: directory.path)
        #expect(again.status == 0 && again.output.contains("unchanged 2"), "\(again.output)")
    }
}
