import CairnTestSupport
import Foundation
import Testing

/// `cairn stats` after a compaction names the base, the live objects and the last LSN; on a
/// log written with CairnLog alone it says its records are not an object graph's; `cairn
/// query`'s table never prints two columns with the same header.
@Suite struct StatsAndQueryTableTests {
    static func cairn(_ arguments: String...) async throws -> (status: Int32, output: String) { try await runCairn(arguments) }

    @Test func statsAfterACompactionShowsTheBaseTheLiveObjectsAndTheLastLSN() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        #expect(try await Self.cairn("demo", "--dir", store, "--books", "120").status == 0)
        let before = try await Self.cairn("stats", store, "--json")
        let beforeJSON = try #require(try JSONSerialization.jsonObject(with: Data(before.output.utf8)) as? [String: Any], "\(before.output)")
        let lastLSN = try #require(beforeJSON["lastLSN"] as? Int)
        let objects = try #require(beforeJSON["objects"] as? Int, "\(before.output)")
        #expect(objects == (beforeJSON["entities"] as? [String: Int])?.values.reduce(0, +))
        #expect(beforeJSON["base"] == nil)

        let compacted = try await Self.cairn("compact", store)
        #expect(compacted.status == 0, "\(compacted.output)")
        let json = try await Self.cairn("stats", store, "--json")
        #expect(json.status == 0, "\(json.output)")
        let figures = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any], "\(json.output)")
        #expect(figures["frames"] as? Int == 0)
        #expect(figures["lastLSN"] as? Int == lastLSN, "\(json.output)")
        #expect(figures["objects"] as? Int == objects, "\(json.output)")
        let base = try #require(figures["base"] as? [String: Any], "\(json.output)")
        let file = try #require(base["file"] as? String)
        #expect(file.hasSuffix(".base") && base["lastLSN"] as? Int == lastLSN && (base["bytesOnDisk"] as? Int ?? 0) > 0, "\(json.output)")

        let table = try await Self.cairn("stats", store)
        #expect(table.status == 0, "\(table.output)")
        #expect(table.output.contains(file) && table.output.contains("state as of \(lastLSN)"), "\(table.output)")
        #expect(table.output.contains("last LSN: \(lastLSN)") && table.output.contains("objects: \(objects) live"), "\(table.output)")
    }

    @Test func statsOfALogWrittenByCairnLogAloneSaysItsRecordsAreNotAnObjectGraphs() async throws {
        try #require(FileManager.default.fileExists(atPath: FixtureStores.logVersion1 + "/MANIFEST"))
        let directory = TemporaryDirectory()
        let copy = directory.store()
        try copyDirectory(FixtureStores.logVersion1, to: copy)
        let table = try await Self.cairn("stats", copy)
        #expect(table.status == 0, "\(table.output)")
        #expect(table.output.contains("not an object graph") && table.output.contains("last LSN: 1200"), "\(table.output)")
        #expect(!table.output.contains("DAMAGED") && !table.output.contains("newer version"), "\(table.output)")
        let json = try await Self.cairn("stats", copy, "--json")
        let figures = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        #expect(figures?["objectGraph"] as? Bool == false && figures?["healthy"] as? Bool == true, "\(json.output)")
    }

    @Test func aQueryTableNamesTheKeyColumnApartFromAnAttributeNamedLikeIt() async throws {
        let directory = TemporaryDirectory()
        let model = directory.path + "/model.json"
        try Data(
            #"""
            {"format": "cairn-model", "version": 1, "entities": [
              {"name": "Thing", "attributes": [{"name": "id", "type": "integer64"}, {"name": "entity", "type": "string"}]},
              {"name": "Gadget", "parent": "Thing", "attributes": [{"name": "size", "type": "integer32"}]}]}
            """#.utf8
        ).write(to: URL(fileURLWithPath: model))
        let input = directory.path + "/things.json"
        try Data(#"[{"id": 41, "entity": "a"}, {"id": 42, "entity": "b"}]"#.utf8).write(to: URL(fileURLWithPath: input))
        let store = directory.store()
        let imported = try await Self.cairn("import", store, "--entity", "Thing", input, "--model", model)
        #expect(imported.status == 0, "\(imported.output)")
        let table = try await Self.cairn("query", store, "--entity", "Thing")
        #expect(table.status == 0, "\(table.output)")
        let header = try #require(table.output.split(separator: "\n").first)
        let columns = header.split(separator: "  ", omittingEmptySubsequences: true).map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(Set(columns).count == columns.count, "two columns share a header: \(header)")
        #expect(columns.contains("object id") && columns.contains("id"), "\(table.output)")
        #expect(columns.contains("object entity") && columns.contains("entity"), "\(table.output)")
        #expect(table.output.contains("41") && table.output.contains("(2 objects)"), "\(table.output)")
    }
}
