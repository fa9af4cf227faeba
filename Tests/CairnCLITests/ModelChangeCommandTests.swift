import CairnTestSupport
import Foundation
import Testing

/// `cairn` commands given a model other than the store's (`create`, `import --model`) never
/// migrate an existing store.
@Suite struct ModelChangeCommandTests {
    static let newer = #"""
        {"format":"cairn-model","version":1,"entities":[
          {"name":"Note","attributes":[{"name":"text","type":"string"},{"name":"comment","type":"string"}]},
          {"name":"Tag","attributes":[{"name":"label","type":"string"}]}]}
        """#
    static let older = #"{"format":"cairn-model","version":1,"entities":[{"name":"Note","attributes":[{"name":"text","type":"string"}]}]}"#

    /// A store written with ``newer`` holding one note with a comment and one tag.
    func newerStore(_ directory: TemporaryDirectory) async throws -> (store: String, newer: String, older: String) {
        let (store, newer, older) = (directory.store(), directory.path + "/newer.json", directory.path + "/older.json")
        try Data(Self.newer.utf8).write(to: URL(fileURLWithPath: newer))
        try Data(Self.older.utf8).write(to: URL(fileURLWithPath: older))
        let notes = directory.path + "/notes.json", tags = directory.path + "/tags.json"
        try Data(#"[{"text":"a","comment":"kept"}]"#.utf8).write(to: URL(fileURLWithPath: notes))
        try Data(#"[{"label":"work"}]"#.utf8).write(to: URL(fileURLWithPath: tags))
        for (entity, file) in [("Note", notes), ("Tag", tags)] {
            let imported = try await runCairn(["import", store, "--entity", entity, file, "--model", newer])
            #expect(imported.status == 0, "\(imported.output)")
        }
        return (store, newer, older)
    }

    @Test func createNeverMigratesAnExistingStore() async throws {
        let directory = TemporaryDirectory()
        let (store, newer, older) = try await newerStore(directory)
        let again = try await runCairn(["create", store, "--model", newer])
        #expect(again.status == 0 && again.output.contains("already holds a store with this model; nothing changed"), "\(again.output)")
        let other = try await runCairn(["create", store, "--model", older])
        #expect(other.status == 1 && other.output.contains("another model") && !other.output.contains("created"), "\(other.output)")
        let dump = try await runCairn(["dump", store, "--entity", "Note"])
        #expect(dump.status == 0 && dump.output.contains("kept"), "\(dump.output)")
    }

    @Test func createMakesAStoreInAnEmptyFolder() async throws {
        let directory = TemporaryDirectory()
        let model = directory.path + "/model.json"
        try Data(Self.older.utf8).write(to: URL(fileURLWithPath: model))
        try FileManager.default.createDirectory(atPath: directory.store(), withIntermediateDirectories: true)
        let created = try await runCairn(["create", directory.store(), "--model", model])
        #expect(created.status == 0 && created.output.contains("created"), "\(created.output)")
    }

    @Test func importGivenAnOlderModelLeavesTheStoreAsItIs() async throws {
        let directory = TemporaryDirectory()
        let (store, _, older) = try await newerStore(directory)
        let notes = directory.path + "/more.json"
        try Data(#"[{"text":"b"}]"#.utf8).write(to: URL(fileURLWithPath: notes))
        let refused = try await runCairn(["import", store, "--entity", "Note", notes, "--model", older])
        #expect(refused.status == 1 && refused.output.contains("another model"), "\(refused.output)")
        let dump = try await runCairn(["dump", store])
        #expect(dump.status == 0 && dump.output.contains("kept") && dump.output.contains("work"), "\(dump.output)")
    }
}
