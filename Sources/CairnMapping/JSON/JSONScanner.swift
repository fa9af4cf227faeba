/// Reads JSON text (RFC 8259) token by token, straight from bytes: the tokenizer the mapper's
/// import is built on.
///
/// It allocates nothing per token: strings and numbers come back as byte ranges of the input,
/// decoded only when asked (``string(_:)``, ``JSONNumberText``). Every byte is checked as it
/// goes: the grammar, UTF-8 (no overlong forms, no surrogates), escapes (a `\u` surrogate must be
/// paired), numbers, and a nesting depth bounded by ``maximumDepth``, so that hostile input gives
/// a ``JSONSyntaxError`` with its byte offset, never a trap, a hang, or unbounded memory.
///
/// ```swift
/// try bytes.withUnsafeBytes { buffer in
///     var scanner = JSONScanner(buffer)
///     while let token = try scanner.next() { … }
/// }
/// ```
///
/// With `allowsValueSequence`, the input may hold several top-level values separated by white
/// space (JSON Lines, concatenated JSON); otherwise exactly one. With `allowsTrailingCommas`, a
/// comma may follow the last element of an array or the last member of an object (`[1,2,]`,
/// `{"a":1,}`, as Foundation's `JSONSerialization` reads on Apple platforms); otherwise such a
/// comma is an error that names the option. A comma with no value before it (`[,]`, `{,}`,
/// `[1,,2]`) is an error either way.
public struct JSONScanner {
    /// One token.
    public enum Token: Equatable, Sendable {
        /// `{`
        case beginObject
        /// `}`
        case endObject
        /// `[`
        case beginArray
        /// `]`
        case endArray
        /// An object's key (its text: see ``JSONScanner/string(_:)``).
        case key(JSONStringText)
        /// A string value.
        case string(JSONStringText)
        /// A number, as its bytes (checked against JSON's number grammar).
        case number(JSONNumberText)
        /// `true` or `false`.
        case boolean(Bool)
        /// `null`
        case null
    }

    /// The deepest nesting of arrays and objects accepted by default.
    public static let defaultMaximumDepth = 512

    /// The input.
    public let bytes: UnsafeRawBufferPointer
    /// The deepest nesting accepted.
    public let maximumDepth: Int
    /// Whether several top-level values may follow one another.
    public let allowsValueSequence: Bool
    /// Whether a comma may end an array or an object (`[1,2,]`). Read only where such a comma
    /// meets its `]` or `}`, which is otherwise an error: it costs nothing per token.
    public let allowsTrailingCommas: Bool
    /// The offset of the next byte to read.
    public internal(set) var offset = 0
    /// The open containers, innermost last: true for an object.
    private var containers = JSONContainerStack()
    /// What the grammar accepts next.
    private var expected = Expected.value
    /// Whether a top-level value has been read.
    private var sawValue = false

    fileprivate enum Expected {
        /// A value (at the top, after `:`).
        case value
        /// An array's next element (after `,` in an array).
        case element
        /// A value or `]` (just after `[`).
        case valueOrEnd
        /// A key or `}` (just after `{`).
        case keyOrEnd
        /// A key (after `,` in an object).
        case key
        /// `:` after a key.
        case colon
        /// `,` or the end of the container, after a value inside one.
        case commaOrEnd
        /// Nothing but white space (or, in a value sequence, another value).
        case end
    }

    /// Scans `bytes`.
    public init(
        _ bytes: UnsafeRawBufferPointer, maximumDepth: Int = JSONScanner.defaultMaximumDepth, allowsValueSequence: Bool = false,
        allowsTrailingCommas: Bool = false
    ) {
        self.bytes = bytes
        self.maximumDepth = max(1, maximumDepth)
        self.allowsValueSequence = allowsValueSequence
        self.allowsTrailingCommas = allowsTrailingCommas
    }

    /// Scans `bytes` from `offset`, where a value starts as it would after the `,` between two
    /// elements of a top-level array (`insideArray`) or after a top-level value of a value
    /// sequence: how a second reader starts in the middle of an input. The caller checks that
    /// the first reader reaches `offset` in that state.
    init(_ bytes: UnsafeRawBufferPointer, resumingAt offset: Int, insideArray: Bool, allowsTrailingCommas: Bool) {
        self.init(bytes, allowsValueSequence: true, allowsTrailingCommas: allowsTrailingCommas)
        self.offset = min(max(0, offset), bytes.count)
        containers = JSONContainerStack()
        if insideArray { containers.push(isObject: false) }
        expected = insideArray ? .element : .end
        sawValue = true
    }

    /// The nesting depth after the last token (0 at the top).
    public var depth: Int { containers.count }

    /// Where the grammar stands between two tokens: all a scanner needs to go on over the bytes
    /// that follow (a stream checked chunk by chunk, ``JSONStreamCheck``).
    struct State {
        fileprivate var containers = JSONContainerStack()
        fileprivate var expected = Expected.value
        fileprivate var sawValue = false
    }

    /// The grammar's state after the last token.
    var state: State { State(containers: containers, expected: expected, sawValue: sawValue) }

    /// Scans `bytes`, the input that follows a token after which the grammar stood at `state`
    /// (offsets count from the start of `bytes`).
    init(_ bytes: UnsafeRawBufferPointer, resuming state: State, allowsValueSequence: Bool, allowsTrailingCommas: Bool) {
        self.init(bytes, allowsValueSequence: allowsValueSequence, allowsTrailingCommas: allowsTrailingCommas)
        containers = state.containers
        expected = state.expected
        sawValue = state.sawValue
    }

    /// Goes back to just after the `[` or `{` at `offset` that began an array or object, read
    /// when the nesting ``depth`` became `depth`, after reading on inside it or past it (a
    /// ``skip(_:)``, even one that failed): the state that token left, so that the value reads
    /// again. (What the reading on did to shallower levels is undone by reading the value.)
    mutating func reopen(containerAt offset: Int, depth: Int) {
        guard offset >= 0, offset < bytes.count, depth >= 1 else { return }
        let isObject = bytes[offset] == UInt8(ascii: "{")
        while containers.count >= depth { containers.pop() }
        guard containers.count == depth - 1 else { return }
        containers.push(isObject: isObject)
        self.offset = offset + 1
        expected = isObject ? .keyOrEnd : .valueOrEnd
    }

    /// The next token, or nil at the end of the input.
    ///
    /// - Throws: ``JSONSyntaxError`` naming the byte offset and what was expected.
    public mutating func next() throws(JSONSyntaxError) -> Token? {
        skipWhiteSpace()
        guard offset < bytes.count else {
            switch expected {
            case .end: return nil
            case .value where containers.isEmpty && allowsValueSequence: return nil
            case .value where containers.isEmpty && !sawValue: throw failure("no JSON value in the input")
            default: throw failure("the input ends inside \(containers.innermostIsObject ? "an object" : "an array")")
            }
        }
        let byte = bytes[offset]
        switch expected {
        case .colon:
            guard byte == UInt8(ascii: ":") else { throw failure("expected ':' after an object key, found \(Self.describe(byte))") }
            offset += 1
            expected = .value
            // The value, read here: what `next()` would do, without a call and a switch.
            skipWhiteSpace()
            guard offset < bytes.count else { return try next() }
            return try value(bytes[offset])
        case .commaOrEnd:
            let inObject = containers.innermostIsObject
            if byte == UInt8(ascii: ",") {
                offset += 1
                expected = inObject ? .key : .element
                // The next key or element, read here as `next()` would read it.
                skipWhiteSpace()
                guard offset < bytes.count else { return try next() }
                let following = bytes[offset]
                guard inObject else { return try value(following) }
                guard following == UInt8(ascii: "\"") else { return try next() }
                let text = try scanString()
                expected = .colon
                return .key(text)
            }
            if byte == (inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) { return close() }
            throw failure("expected ',' or '\(inObject ? "}" : "]")' after a value \(inObject ? "in an object" : "in an array"), found \(Self.describe(byte))")
        case .keyOrEnd, .key:
            guard byte == UInt8(ascii: "\"") else {
                guard byte == UInt8(ascii: "}") else { throw failure("expected a string key, found \(Self.describe(byte))") }
                if case .key = expected { try trailingComma() }
                return close()
            }
            let text = try scanString()
            expected = .colon
            return .key(text)
        case .end:
            guard allowsValueSequence else { throw failure("unexpected \(Self.describe(byte)) after the JSON value") }
            expected = .value
            return try value(byte)
        case .valueOrEnd:
            if byte == UInt8(ascii: "]") { return close() }
            return try value(byte)
        case .value, .element:
            return try value(byte)
        }
    }

    /// A value starting at `byte`.
    private mutating func value(_ byte: UInt8) throws(JSONSyntaxError) -> Token {
        sawValue = true
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard containers.count < maximumDepth else { throw failure("arrays and objects nest deeper than \(maximumDepth)") }
            let isObject = byte == UInt8(ascii: "{")
            containers.push(isObject: isObject)
            offset += 1
            expected = isObject ? .keyOrEnd : .valueOrEnd
            return isObject ? .beginObject : .beginArray
        case UInt8(ascii: "\""):
            let text = try scanString()
            afterValue()
            return .string(text)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let number = try scanNumber()
            afterValue()
            return .number(number)
        case UInt8(ascii: "t"):
            try literal("true")
            afterValue()
            return .boolean(true)
        case UInt8(ascii: "f"):
            try literal("false")
            afterValue()
            return .boolean(false)
        case UInt8(ascii: "n"):
            try literal("null")
            afterValue()
            return .null
        case UInt8(ascii: "]") where expected == .element:
            try trailingComma()
            return close()
        default:
            throw failure("expected a value, found \(Self.describe(byte))")
        }
    }

    /// What ``skipFlatArray()`` read: the white-space bytes between the array's tokens, and
    /// whether its every string is plain (no escape, no DEL), which the `json` transformer's
    /// direct copy needs to know without reading the array again.
    struct FlatArrayText: Equatable {
        /// The bytes of white space between `[` and `]`.
        var spaces = 0
        /// Whether no string in the array holds an escape or DEL.
        var plainStrings = true
    }

    /// Reads the rest of the array whose `[` was the last token when its elements are numbers,
    /// strings, `true`, `false` and `null` only (as the arrays of tags and identifiers that
    /// transformers keep): one loop, without a token a value. What it read when it read through
    /// the array's `]`, leaving the state `next()` would; nil, with nothing read, at anything
    /// else (a nested array or object, a trailing comma, a syntax error), for `next()` to read
    /// and judge.
    mutating func skipFlatArray() -> FlatArrayText? {
        guard case .valueOrEnd = expected, containers.count > 0, !containers.innermostIsObject else { return nil }
        // Read with a local offset into a local copy of the buffer, so that the loop keeps them
        // in registers.
        let bytes = self.bytes
        var index = offset
        var text = FlatArrayText()
        func skipSpaces() {
            while index < bytes.count, Self.isSpace(bytes[index]) {
                index += 1
                text.spaces += 1
            }
        }
        func matches(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for at in 0..<count where bytes[index + at] != word.utf8Start[at] { return false }
            index += count
            return true
        }
        skipSpaces()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            offset = index
            _ = close()
            return text
        }
        while true {
            skipSpaces()
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard let number = Self.numberText(bytes, at: index) else { return nil }
                index = number.range.upperBound
            case UInt8(ascii: "\""):
                let start = offset
                offset = index
                let string = try? scanString()
                index = offset
                offset = start
                guard let string else { return nil }
                if text.plainStrings && (string.hasEscapes || bytes.piece(string.range).contains(0x7F)) { text.plainStrings = false }
            case UInt8(ascii: "t"): guard matches("true") else { return nil }
            case UInt8(ascii: "f"): guard matches("false") else { return nil }
            case UInt8(ascii: "n"): guard matches("null") else { return nil }
            default: return nil
            }
            skipSpaces()
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                offset = index
                _ = close()
                return text
            default: return nil
            }
        }
    }

    /// At a `]` or `}` just after a comma: returns when trailing commas are allowed, else throws
    /// an error at the comma (which an import's message completes with the option's name).
    private func trailingComma() throws(JSONSyntaxError) {
        guard !allowsTrailingCommas else { return }
        // The comma: the last byte before this one that is not white space (when this piece of
        // the input holds it).
        var comma = offset - 1
        while comma >= 0, Self.isSpace(bytes[comma]) { comma -= 1 }
        let at = comma >= 0 && bytes[comma] == UInt8(ascii: ",") ? comma : offset
        var error = failure("a trailing comma before '\(Character(Unicode.Scalar(bytes[offset])))': JSON allows none", at: at)
        error.isTrailingComma = true
        throw error
    }

    /// Closes the innermost container (the byte at `offset` is its end).
    private mutating func close() -> Token {
        let isObject = containers.pop()
        offset += 1
        afterValue()
        return isObject ? .endObject : .endArray
    }

    private mutating func afterValue() {
        expected = containers.isEmpty ? .end : .commaOrEnd
    }

    private mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
        let count = word.utf8CodeUnitCount
        guard offset + count <= bytes.count else { throw truncation("the input ends inside a literal (expected \(word))") }
        for index in 0..<count where bytes[offset + index] != word.utf8Start[index] {
            throw failure("expected \(word), found \(Self.describe(bytes[offset + index]))", at: offset + index)
        }
        offset += count
    }

    private mutating func skipWhiteSpace() {
        while offset < bytes.count && Self.isSpace(bytes[offset]) { offset += 1 }
    }

    /// Whether `byte` is JSON white space.
    @inline(__always)
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    /// An error at `position` (the current offset when nil). One at the end of the input is one
    /// that more input might have avoided (``JSONSyntaxError/endsInput``).
    func failure(_ message: String, at position: Int? = nil) -> JSONSyntaxError {
        var error = JSONSyntaxError(message, offset: position ?? offset, in: bytes)
        error.endsInput = error.offset >= bytes.count
        return error
    }

    /// An error at `position` because the input ends inside what starts there.
    func truncation(_ message: String, at position: Int? = nil) -> JSONSyntaxError {
        var error = failure(message, at: position)
        error.endsInput = true
        return error
    }

    /// A byte, for messages: the character when printable ASCII.
    static func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x" + String(byte, radix: 16, uppercase: true)
    }
}
