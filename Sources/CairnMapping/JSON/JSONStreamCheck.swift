/// Checks JSON text as it arrives, piece by piece, with the import's own tokenizer
/// (``JSONScanner``, a value sequence as an import reads it): the first byte that no continuation
/// could make valid fails the check as soon as it has arrived, so that a stream of garbage
/// (`/dev/zero`, a binary file piped in) is refused at its first bytes, not after it was read whole.
///
/// It keeps only the grammar's state (at most ``JSONScanner/defaultMaximumDepth`` containers)
/// and how far the text is checked: the caller keeps the text and hands back, at each call,
/// everything from ``checkedUpTo`` on.
struct JSONStreamCheck {
    /// Whether a comma may end an array or an object (``JSONScanner/allowsTrailingCommas``).
    let allowsTrailingCommas: Bool
    /// The stream's offset up to which every token is checked (the bytes before are not needed
    /// again).
    private(set) var checkedUpTo = 0
    /// The bytes from ``checkedUpTo`` that the last check could not finish (a token they end
    /// inside): the next check waits until there are twice as many, so that a long token (a
    /// string of many megabytes) is not checked again for every piece of it.
    private var unfinished = 0
    private var state = JSONScanner.State()
    /// Lines before ``checkedUpTo``, and the offset where the line it is on starts, to place an
    /// error in the whole stream.
    private var lines = 0
    private var lineStart = 0

    /// A check of a stream that has not begun.
    init(allowsTrailingCommas: Bool = false) {
        self.allowsTrailingCommas = allowsTrailingCommas
    }

    /// Whether a check of `available` bytes from ``checkedUpTo`` could get further than the
    /// last (always, at the end of the stream).
    func isWorthChecking(_ available: Int, atEnd: Bool) -> Bool {
        atEnd || available >= 2 * unfinished
    }

    /// Checks `bytes`, the stream from ``checkedUpTo`` to what has arrived so far; `atEnd`: the
    /// stream ends there.
    ///
    /// - Throws: ``JSONSyntaxError`` with its offset, line and column in the whole stream, at the
    ///   first byte that cannot be valid whatever follows (at the end: anything invalid).
    mutating func check(_ bytes: UnsafeRawBufferPointer, atEnd: Bool) throws(JSONSyntaxError) {
        var scanner = JSONScanner(bytes, resuming: state, allowsValueSequence: true, allowsTrailingCommas: allowsTrailingCommas)
        var checked = 0
        var checkedState = state
        do {
            while try scanner.next() != nil {
                // A token that ends before the last byte is whole (a number or a literal at the
                // very end might go on in the next piece).
                if scanner.offset < bytes.count || atEnd {
                    checked = scanner.offset
                    checkedState = scanner.state
                }
            }
        } catch {
            guard error.endsInput, !atEnd else { throw placed(error, in: bytes) }
        }
        advance(over: bytes, to: checked)
        state = checkedState
        unfinished = bytes.count - checked
    }

    /// Moves ``checkedUpTo`` by `count` bytes of `bytes`, counting their lines.
    private mutating func advance(over bytes: UnsafeRawBufferPointer, to count: Int) {
        for index in 0..<count where bytes[index] == 0x0A {
            lines += 1
            lineStart = checkedUpTo + index + 1
        }
        checkedUpTo += count
    }

    /// An error of a check, placed in the whole stream.
    private func placed(_ error: JSONSyntaxError, in bytes: UnsafeRawBufferPointer) -> JSONSyntaxError {
        var placed = error
        placed.offset = checkedUpTo + error.offset
        placed.line = lines + error.line
        if error.line == 1 { placed.column = placed.offset - lineStart + 1 }
        return placed
    }
}
