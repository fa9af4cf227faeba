/// Why a predicate format string could not be parsed, or why its arguments or variables do not
/// fit it.
///
/// `description` shows the message, the format and a caret under the column:
///
/// ```text
/// column 8: expected a value after "==", found end of input
/// age ==
///        ^
/// ```
public struct PredicateSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was expected and what was found, e.g. `expected a value after "==", found end of input`.
    public let message: String
    /// The 1-based position of the problem in `format`, counted in `Character`s;
    /// `format.count + 1` when the problem is the end of the input.
    public let column: Int
    /// The format string the problem is in. For errors from
    /// ``PredicateSyntax/substituting(_:)`` this is the predicate's canonical ``PredicateSyntax/description``.
    public let format: String

    /// Makes an error; `column` is 1-based and counted in `Character`s of `format`.
    public init(message: String, column: Int, format: String) {
        self.message = message
        self.column = column
        self.format = format
    }

    /// `column N: message`, then the format on one line (line breaks and tabs shown as spaces)
    /// and a caret under the column.
    public var description: String {
        let line = String(format.map { $0.isNewline || $0 == "\t" ? " " : $0 })
        let caret = String(repeating: " ", count: max(column - 1, 0)) + "^"
        return "column \(column): \(message)\n\(line)\n\(caret)"
    }
}
