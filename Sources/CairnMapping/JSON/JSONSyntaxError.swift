/// JSON text that does not parse: where, and what was expected.
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    /// The byte offset in the input (0-based).
    public var offset: Int
    /// The line (1-based) of that byte.
    public var line: Int
    /// The column (1-based, in bytes) of that byte.
    public var column: Int
    /// Whether the input ended where the grammar needed more (inside a string, a literal, a
    /// number, a container): more bytes might have made it valid. A stream checked as it comes
    /// (``JSONStreamCheck``) waits for them.
    var endsInput = false
    /// Whether a comma ends an array or an object (what ``ImportOptions/allowsTrailingCommas``
    /// reads): an import's message names the option.
    var isTrailingComma = false

    /// An error at `offset` of `bytes`; the line and column are counted from the start.
    init(_ message: String, offset: Int, in bytes: UnsafeRawBufferPointer) {
        self.message = message
        self.offset = offset
        var line = 1
        var lineStart = 0
        for index in 0..<min(offset, bytes.count) where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        self.line = line
        self.column = offset - lineStart + 1
    }

    /// The line, column and byte offset, then what is wrong.
    public var description: String { "line \(line), column \(column) (byte \(offset)): \(message)" }

    /// The description an import gives: a trailing comma's names the option that reads it.
    var importDescription: String {
        isTrailingComma ? description + "; pass allowsTrailingCommas (ImportOptions) or --allow-trailing-commas (cairn import) to read it" : description
    }
}
