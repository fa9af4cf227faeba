import CairnTestSupport
import Foundation
import Testing

/// `--help` of every command reads well at 80 columns: prose wraps at word boundaries as
/// whole paragraphs (no hard line break inside a sentence), and preformatted lines (examples,
/// the exit statuses) fit, so that the argument parser never breaks them.
@Suite struct HelpTextTests {
    static let commands = ["", "demo", "create", "model", "dump", "query", "verify", "stats", "import", "export", "compact", "backup", "history"]

    /// `cairn COMMAND --help` with the terminal `columns` wide.
    static func help(_ command: String, columns: Int) async throws -> String {
        let executable = try #require(cairnExecutable(), "the cairn executable is built next to the tests")
        let result = try await onOwnThread { () -> (Int32, String) in
            let process = try ChildProcess(
                "/usr/bin/env", ["COLUMNS=\(columns)", executable] + (command.isEmpty ? [] : [command]) + ["--help"], includeStandardError: true)
            let status = process.waitUntilExit()
            return (status, String(decoding: process.outputBytes, as: UTF8.self))
        }
        #expect(result.0 == 0, "\(command): \(result.1)")
        return result.1
    }

    @Test func everyLineFitsEightyColumns() async throws {
        for command in Self.commands {
            let text = try await Self.help(command, columns: 80)
            for line in text.split(separator: "\n") {
                #expect(line.count <= 80, "cairn \(command) --help: \(line)")
            }
        }
    }

    @Test func proseIsWrittenInWholeParagraphsAndPreformattedLinesFit() async throws {
        for command in Self.commands {
            // As wide as the text needs: every line break is the author's.
            let text = try await Self.help(command, columns: 1000)
            let head = text.components(separatedBy: "\nUSAGE:").first ?? ""
            let lines = head.split(separator: "\n", omittingEmptySubsequences: false).dropFirst()  // (after OVERVIEW)
            for (line, next) in zip(lines, lines.dropFirst()) {
                if line.hasPrefix(" ") {
                    #expect(line.count <= 80, "cairn \(command) --help: a preformatted line the parser would break at 80 columns: \(line)")
                } else if !line.isEmpty, !next.isEmpty, !next.hasPrefix(" "), let last = line.last {
                    #expect(".:!?".contains(last), "cairn \(command) --help: a line break inside a sentence: \(line) / \(next)")
                }
            }
        }
        let importHelp = try await Self.help("import", columns: 80)
        #expect(!importHelp.contains("--model\nPeople.xcdatamodeld"), "\(importHelp)")
    }
}
