import CairnTestSupport
import Foundation
import Testing

/// The long commands show a progress bar on a terminal and nothing on a pipe; every command
/// that prints figures prints them as JSON with `--json`.
@Suite struct ProgressAndJSONTests {
    /// `cairn ARGUMENTS` run under `script`, standard error a terminal; what the terminal got.
    static func onTerminal(_ arguments: [String]) async throws -> String {
        let executable = try #require(cairnExecutable(), "the cairn executable is built next to the tests")
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "util-linux's script gives the command a terminal")
        let command = ([executable] + arguments).map { "'\($0)'" }.joined(separator: " ")
        return try await onOwnThread { () -> String in
            let process = try ChildProcess("/usr/bin/script", ["-qec", command, "/dev/null"], includeStandardError: true)
            _ = process.waitUntilExit()
            return String(decoding: process.outputBytes, as: UTF8.self)
        }
    }

    @Test func longCommandsShowProgressOnATerminalOnly() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        #expect(try await runCairn(["demo", "--dir", store, "--books", "300"]).status == 0)
        let commands = [
            ["verify", store], ["backup", store, directory.store("backup")], ["export", store, "--entity", "Book", "--output", directory.path + "/books.json"],
            ["compact", store, "--even-if-larger"]
        ]
        for arguments in commands {
            let piped = try await runCairn(arguments)
            #expect(piped.status == 0, "\(arguments): \(piped.output)")
            #expect(!piped.output.contains("\r") && !piped.output.contains("progress"), "\(arguments): \(piped.output)")
            let terminal = try await Self.onTerminal(arguments)
            #expect(terminal.contains("\r[") && terminal.contains("%"), "\(arguments[0]) shows no progress bar on a terminal: \(terminal)")
        }
    }

    @Test func commandsThatPrintFiguresPrintThemAsJSON() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        #expect(try await runCairn(["demo", "--dir", store, "--books", "200"]).status == 0)
        func object(_ arguments: [String]) async throws -> [String: Any] {
            let result = try await runCairn(arguments)
            #expect(result.status == 0, "\(arguments): \(result.output)")
            let line = try #require(result.output.split(separator: "\n").last, "\(arguments): \(result.output)")
            return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(arguments): \(result.output)")
        }
        let verify = try await object(["verify", store, "--json"])
        #expect(verify["sound"] as? Bool == true && verify["records"] as? String == "readable" && (verify["frames"] as? Int ?? 0) > 0, "\(verify)")
        let backup = try await object(["backup", store, directory.store("backup"), "--json"])
        #expect(backup["lsn"] as? Int != nil && (backup["linked"] as? [String] ?? []).count + (backup["copied"] as? [String] ?? []).count > 0, "\(backup)")
        let export = try await object(["export", store, "--entity", "Book", "--output", directory.path + "/books.json", "--json"])
        #expect(export["objects"] as? Int == 200 && (export["bytes"] as? Int ?? 0) > 0, "\(export)")
        let compact = try await object(["compact", store, "--json", "--even-if-larger"])
        #expect(compact["compacted"] as? Bool == true && compact["objects"] as? Int != nil && compact["bytesAfter"] as? Int != nil, "\(compact)")
        let imported = try await object(["import", store, "--entity", "Book", directory.path + "/books.json", "--json"])
        #expect(imported["unchanged"] as? Int == 200, "\(imported)")
    }

    @Test func aCompactionThatWouldNotShrinkTheStoreLeavesItAsItWas() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        // Saves of new objects only: few dead bytes, and frames that compress better than a
        // base's rows with their fixed-size headers at the fast level.
        #expect(try await runCairn(["demo", "--dir", store, "--books", "3000"]).status == 0)
        let dump = try await runCairn(["dump", store]).output
        let segments = try segmentFiles(store)
        let sizes = try segments.map { try contents($0).count }
        let first = try await runCairn(["compact", store, "--level", "fast"])
        #expect(first.status == 0 && first.output.contains("left \(store) as it was"), "\(first.output)")
        #expect(first.output.contains("--even-if-larger"), "\(first.output)")
        #expect(try segments.map { try contents($0).count } == sizes, "the segments are as they were")
        #expect(try FileManager.default.contentsOfDirectory(atPath: store).allSatisfy { !$0.hasSuffix(".base") })
        // Once the active segment is sealed, nothing at all changes.
        let again = try await runCairn(["compact", store, "--level", "fast", "--json"])
        let figures = try #require(try JSONSerialization.jsonObject(with: Data(again.output.utf8)) as? [String: Any], "\(again.output)")
        #expect(figures["compacted"] as? Bool == false && figures["bytesAfter"] as? Int == figures["bytesBefore"] as? Int, "\(again.output)")
        #expect((figures["skipped"] as? String)?.contains("would not have shrunk") == true, "\(again.output)")
        #expect(try await runCairn(["dump", store]).output == dump)
        #expect(try await runCairn(["verify", store]).status == 0)
        // At the high level the base is smaller: installed.
        let high = try await runCairn(["compact", store, "--level", "high", "--json"])
        let installed = try #require(try JSONSerialization.jsonObject(with: Data(high.output.utf8)) as? [String: Any], "\(high.output)")
        #expect(installed["compacted"] as? Bool == true, "\(high.output)")
        #expect((installed["bytesAfter"] as? Int ?? .max) < (installed["bytesBefore"] as? Int ?? 0), "\(high.output)")
        #expect(try await runCairn(["dump", store]).output == dump)
    }
}
