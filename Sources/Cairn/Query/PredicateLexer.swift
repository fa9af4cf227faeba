/// One token of a predicate format string.
struct PredicateToken: Sendable {
    enum Kind: Sendable, Equatable {
        /// A key or a keyword (keywords are recognized by the parser, case-insensitively).
        case word(String)
        /// `#name`: a key, even when it is spelled like a keyword.
        case escapedWord(String)
        /// `@name`, without the `@`.
        case collectionOperator(String)
        /// `$name`, without the `$`.
        case variable(String)
        /// A quoted string, escapes resolved.
        case string(String)
        case integer(Int64)
        case double(Double)
        case specifier(PredicateFormatSpecifier)
        /// `[cd]` and the like.
        case options(ComparisonOptions)
        case symbol(PredicateSymbol)
        /// A character the syntax has no use for; the parser reports it in context.
        case unknown
        case end
    }

    let kind: Kind
    /// Where the token starts and ends in the format's Unicode scalars.
    let start: Int
    let end: Int
    /// The token as written.
    let text: String

    /// The keyword the token is, if it is an unescaped word spelled like one.
    let keyword: PredicateKeyword?

    /// The token for "found …" in messages: quoted, or `end of input`.
    var quoted: String {
        switch kind {
        case .end: "end of input"
        case .string: text
        default: "\"\(text)\""
        }
    }
}

/// Words with a meaning in the syntax; a key spelled like one must be escaped with `#`.
enum PredicateKeyword: String, Sendable, CaseIterable {
    case and = "AND", or = "OR", not = "NOT"
    case inOperator = "IN", between = "BETWEEN", beginsWith = "BEGINSWITH", endsWith = "ENDSWITH"
    case contains = "CONTAINS", like = "LIKE", matches = "MATCHES"
    case anyModifier = "ANY", someModifier = "SOME", allModifier = "ALL", noneModifier = "NONE"
    case truePredicate = "TRUEPREDICATE", falsePredicate = "FALSEPREDICATE"
    case nilValue = "NIL", nullValue = "NULL", evaluatedObject = "SELF"
    case yes = "YES", no = "NO", trueValue = "TRUE", falseValue = "FALSE"
    case cast = "CAST"

    /// The keyword a word spells, in any mix of ASCII upper and lower case.
    init?(spelling word: String) {
        guard word.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        self.init(rawValue: word.uppercased())
    }
}

/// Punctuation and symbolic operators; the lexer matches two-character ones first.
enum PredicateSymbol: String, Sendable, CaseIterable {
    case equalEqual = "==", notEqual = "!=", lessGreater = "<>", lessEqual = "<=", equalLess = "=<"
    case greaterEqual = ">=", equalGreater = "=>", and = "&&", or = "||"
    case leftParenthesis = "(", rightParenthesis = ")", leftBrace = "{", rightBrace = "}"
    case comma = ",", dot = ".", equal = "=", less = "<", greater = ">", not = "!"
}

/// Splits a format string into tokens, one at a time, so that errors come in reading order.
///
/// The lexer reads Unicode scalars, so that a combining mark after a quote, a backslash or an
/// operator cannot merge with it as it would in a `Character`; columns in errors are still
/// counted in `Character`s.
struct PredicateLexer {
    let format: String
    private let scalars: [Unicode.Scalar]
    /// For each scalar, the index of the `Character` it belongs to; then the number of them.
    private let characterIndices: [Int]
    private var index = 0

    init(format: String) {
        self.format = format
        var scalars: [Unicode.Scalar] = []
        var characterIndices: [Int] = []
        var count = 0
        for character in format {
            for scalar in character.unicodeScalars {
                scalars.append(scalar)
                characterIndices.append(count)
            }
            count += 1
        }
        characterIndices.append(count)
        self.scalars = scalars
        self.characterIndices = characterIndices
    }

    /// The 1-based column, in `Character`s, of the scalar at `position` (of the end of input
    /// past the last scalar).
    func column(at position: Int) -> Int {
        characterIndices[min(max(position, 0), scalars.count)] + 1
    }

    /// The format's scalars from `start` to `end` (clamped to the format).
    func text(from start: Int, to end: Int) -> String {
        let lower = min(max(start, 0), scalars.count)
        let upper = min(max(end, lower), scalars.count)
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars[lower..<upper])
        return text
    }

    func failure(_ message: String, at position: Int) -> PredicateSyntaxError {
        PredicateSyntaxError(message: message, column: column(at: position), format: format)
    }

    mutating func next() throws(PredicateSyntaxError) -> PredicateToken {
        while let scalar = peek(), scalar.properties.isWhitespace { index += 1 }
        let start = index
        let kind: PredicateToken.Kind = if let scalar = peek() { try lexToken(startingWith: scalar) } else { .end }
        var keyword: PredicateKeyword?
        if case .word(let word) = kind { keyword = PredicateKeyword(spelling: word) }
        return PredicateToken(kind: kind, start: start, end: index, text: text(from: start, to: index), keyword: keyword)
    }

    // MARK: - Tokens

    private mutating func lexToken(startingWith scalar: Unicode.Scalar) throws(PredicateSyntaxError) -> PredicateToken.Kind {
        switch scalar {
        case "'", "\"": return .string(try lexString())
        case "#": return .escapedWord(try lexName(after: "#", naming: "a key name"))
        case "$": return .variable(try lexName(after: "$", naming: "a variable name"))
        case "@": return .collectionOperator(try lexName(after: "@", naming: "a collection operator name"))
        case "%": return .specifier(try lexSpecifier())
        case "[": return .options(try lexOptions())
        default: break
        }
        if Self.isDigit(scalar) || (scalar == "-" && peek(1).map(Self.isDigit) == true) {
            return try lexNumber()
        }
        if Self.isKeyStart(scalar) { return .word(lexKey()) }
        if let symbol = lexSymbol() { return .symbol(symbol) }
        index = endOfCharacter(at: index)
        return .unknown
    }

    private mutating func lexKey() -> String {
        let start = index
        while let scalar = peek(), Self.isKeyPart(scalar) { index += 1 }
        return text(from: start, to: index)
    }

    /// The name after `#`, `$` or `@`.
    private mutating func lexName(after sigil: String, naming what: String) throws(PredicateSyntaxError) -> String {
        index += 1
        guard let scalar = peek(), Self.isKeyStart(scalar) else {
            throw failure("expected \(what) after \"\(sigil)\", found \(found(at: index))", at: index)
        }
        return lexKey()
    }

    private mutating func lexSymbol() -> PredicateSymbol? {
        for length in [2, 1] {
            if let symbol = PredicateSymbol(rawValue: text(from: index, to: index + length)), symbol.rawValue.unicodeScalars.count == length {
                index += length
                return symbol
            }
        }
        return nil
    }

    private mutating func lexSpecifier() throws(PredicateSyntaxError) -> PredicateFormatSpecifier {
        let start = index
        index += 1
        for (spelling, specifier) in PredicateFormatSpecifier.spellings where text(from: index, to: index + spelling.unicodeScalars.count) == spelling {
            index += spelling.unicodeScalars.count
            return specifier
        }
        let written = text(from: start, to: endOfCharacter(at: index))
        throw failure("expected a format specifier such as %@, %K, %d or %f, found \"\(written)\"", at: start)
    }

    private mutating func lexOptions() throws(PredicateSyntaxError) -> ComparisonOptions {
        let open = index
        index += 1
        var options: ComparisonOptions = []
        while let scalar = peek() {
            if scalar == "]" && index > open + 1 {
                index += 1
                return options
            }
            switch scalar {
            case "c", "C": options.insert(.caseInsensitive)
            case "d", "D": options.insert(.diacriticInsensitive)
            case "n", "N": options.insert(.normalized)
            default:
                let expected = index > open + 1 ? "c, d, n or \"]\"" : "c, d or n"
                throw failure("expected \(expected) in the comparison options, found \(found(at: index))", at: index)
            }
            index += 1
        }
        throw failure("expected \"]\" to close \"[\" at column \(column(at: open)), found end of input", at: index)
    }

    // MARK: - Strings

    private mutating func lexString() throws(PredicateSyntaxError) -> String {
        let open = index
        guard let quote = peek() else { return "" }
        index += 1
        var result = ""
        while let scalar = peek() {
            index += 1
            if scalar == quote { return result }
            result.unicodeScalars.append(scalar == "\\" ? try lexEscape(backslash: index - 1) : scalar)
        }
        throw failure("expected \(quote) to close the string that starts at column \(column(at: open)), found end of input", at: index)
    }

    private mutating func lexEscape(backslash: Int) throws(PredicateSyntaxError) -> Unicode.Scalar {
        guard let scalar = peek() else {
            throw failure("expected an escape sequence after \"\\\", found end of input", at: index)
        }
        index += 1
        switch scalar {
        case "n": return "\n"
        case "t": return "\t"
        case "r": return "\r"
        case "\\": return "\\"
        case "\"": return "\""
        case "'": return "'"
        case "u": return try lexUnicodeEscape(backslash: backslash)
        default:
            throw failure(
                #"expected an escape sequence such as \n, \t, \\, \", \' or \uXXXX, found "\#(text(from: backslash, to: endOfCharacter(at: index - 1)))""#,
                at: backslash)
        }
    }

    /// `\uXXXX`, the `\u` already read; a high surrogate must be followed by `\u` and a low one.
    private mutating func lexUnicodeEscape(backslash: Int) throws(PredicateSyntaxError) -> Unicode.Scalar {
        let unit = try lexHexQuad()
        switch unit {
        case 0xD800...0xDBFF:
            let next = index
            guard peek() == "\\", peek(1) == "u" else {
                throw failure(#"expected a low surrogate \uDC00 to \uDFFF after "\#(text(from: backslash, to: next))", found \#(found(at: next))"#, at: next)
            }
            index += 2
            let low = try lexHexQuad()
            guard (0xDC00...0xDFFF).contains(low), let scalar = Unicode.Scalar(0x10000 + (unit - 0xD800) << 10 + (low - 0xDC00)) else {
                throw failure(
                    #"expected a low surrogate \uDC00 to \uDFFF after "\#(text(from: backslash, to: next))", found "\#(text(from: next, to: index))""#, at: next
                )
            }
            return scalar
        default:
            guard let scalar = Unicode.Scalar(unit) else {
                throw failure(#"expected a Unicode scalar value, found the lone surrogate "\#(text(from: backslash, to: index))""#, at: backslash)
            }
            return scalar
        }
    }

    private mutating func lexHexQuad() throws(PredicateSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let scalar = peek(), let digit = Self.digitValue(scalar, radix: 16) else {
                throw failure(#"expected 4 hexadecimal digits after "\u", found \#(found(at: index))"#, at: index)
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    // MARK: - Numbers

    private mutating func lexNumber() throws(PredicateSyntaxError) -> PredicateToken.Kind {
        let start = index
        let negative = peek() == "-"
        if negative { index += 1 }
        let kind: PredicateToken.Kind
        if peek() == "0", let prefix = peek(1).flatMap(Self.radixPrefix) {
            index += 2
            kind = try lexRadixInteger(radix: prefix.radix, named: prefix.name, negative: negative, start: start)
        } else {
            kind = try lexDecimalNumber(start: start)
        }
        if let scalar = peek(), Self.isKeyPart(scalar) {
            while let scalar = peek(), Self.isKeyPart(scalar) { index += 1 }
            throw failure("expected a number, found \"\(text(from: start, to: index))\"", at: start)
        }
        return kind
    }

    private mutating func lexRadixInteger(radix: Int, named name: String, negative: Bool, start: Int) throws(PredicateSyntaxError) -> PredicateToken.Kind {
        let digitsStart = index
        while let scalar = peek(), Self.digitValue(scalar, radix: radix) != nil { index += 1 }
        guard index > digitsStart else {
            let prefix = text(from: digitsStart - 2, to: digitsStart)
            throw failure("expected \(name) digits after \"\(prefix)\", found \(found(at: index))", at: index)
        }
        return .integer(try integer(UInt64(text(from: digitsStart, to: index), radix: radix), negative: negative, start: start))
    }

    private mutating func lexDecimalNumber(start: Int) throws(PredicateSyntaxError) -> PredicateToken.Kind {
        skipDigits()
        var isInteger = true
        if peek() == ".", let next = peek(1), Self.isDigit(next) {
            index += 1
            skipDigits()
            isInteger = false
        }
        if peek() == "e" || peek() == "E" {
            index += 1
            if peek() == "+" || peek() == "-" { index += 1 }
            guard let digit = peek(), Self.isDigit(digit) else {
                throw failure("expected digits in the exponent of \"\(text(from: start, to: index))\", found \(found(at: index))", at: index)
            }
            skipDigits()
            isInteger = false
        }
        let written = text(from: start, to: index)
        if isInteger {
            let negative = written.hasPrefix("-")
            return .integer(try integer(UInt64(written.dropFirst(negative ? 1 : 0)), negative: negative, start: start))
        }
        guard let number = Double(written) else { throw failure("expected a number, found \"\(written)\"", at: start) }
        return .double(number)
    }

    /// A signed integer from its magnitude, or an error when it does not fit in 64 bits.
    private func integer(_ magnitude: UInt64?, negative: Bool, start: Int) throws(PredicateSyntaxError) -> Int64 {
        if let magnitude {
            if !negative, magnitude <= UInt64(Int64.max) { return Int64(magnitude) }
            if negative, magnitude <= UInt64(Int64.max) + 1 { return Int64(bitPattern: 0 &- magnitude) }
        }
        throw failure("expected an integer between \(Int64.min) and \(Int64.max), found \"\(text(from: start, to: index))\"", at: start)
    }

    private mutating func skipDigits() {
        while let scalar = peek(), Self.isDigit(scalar) { index += 1 }
    }

    // MARK: - Scalars

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        let position = index + offset
        return position < scalars.count ? scalars[position] : nil
    }

    /// The position after the last scalar of the `Character` that the scalar at `position` is in.
    private func endOfCharacter(at position: Int) -> Int {
        var end = min(position + 1, scalars.count)
        while end < scalars.count, characterIndices[end] == characterIndices[position] { end += 1 }
        return end
    }

    /// What is at `position`, quoted (up to the end of its `Character`), or `end of input`.
    private func found(at position: Int) -> String {
        position < scalars.count ? "\"\(text(from: position, to: endOfCharacter(at: position)))\"" : "end of input"
    }

    private static func radixPrefix(_ scalar: Unicode.Scalar) -> (radix: Int, name: String)? {
        switch scalar {
        case "x", "X": (16, "hexadecimal")
        case "o", "O": (8, "octal")
        case "b", "B": (2, "binary")
        default: nil
        }
    }

    static func isDigit(_ scalar: Unicode.Scalar) -> Bool {
        ("0"..."9").contains(scalar)
    }

    /// The value of an ASCII digit in `radix` (at most 16).
    static func digitValue(_ scalar: Unicode.Scalar, radix: Int) -> Int? {
        let value: Int
        switch scalar {
        case "0"..."9": value = Int(scalar.value) - 0x30
        case "a"..."f": value = Int(scalar.value) - 0x61 + 10
        case "A"..."F": value = Int(scalar.value) - 0x41 + 10
        default: return nil
        }
        return value < radix ? value : nil
    }

    /// Whether a key (or a variable or collection operator name) may start with the scalar:
    /// `_` or a Unicode identifier start (a letter, mostly).
    static func isKeyStart(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar.properties.isXIDStart
    }

    /// Whether a key may continue with the scalar: a Unicode identifier continuation (letters,
    /// digits, `_`, combining marks).
    static func isKeyPart(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isXIDContinue
    }

    /// Whether `text` is a single key, as `#key`, `$key` and `%K` arguments take them.
    static func isKey(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, isKeyStart(first) else { return false }
        return text.unicodeScalars.allSatisfy(isKeyPart)
    }
}
