import Foundation

/// What `--json` prints: one object on one line, keys sorted, for the commands that print
/// figures (`compact`, `backup`, `verify`, `export`; `stats` prints its object indented).
enum JSONOutput {
    /// `value` as one line of JSON.
    static func line(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
