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
        case specifier(FormatSpecifier)
        /// `[cd]` and the like.
        case options(ComparisonOptions)
        case symbol(PredicateSymbol)
        /// A character the syntax has no use for; the parser reports it in context.
        case unknown
        case end
    }

    let kind: Kind
    /// Where the token starts and ends in the format's `Character`s.
    let start: Int
    let end: Int
    /// The token as written.
    let text: String

    /// The 1-based column of the token's first character.
    var column: Int { start + 1 }

    /// The keyword the token is, if it is an unescaped word spelled like one.
    var keyword: PredicateKeyword? {
        guard case .word(let word) = kind else { return nil }
        return PredicateKeyword(rawValue: word.uppercased())
    }

    func `is`(_ symbol: PredicateSymbol) -> Bool { kind == .symbol(symbol) }

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
}

/// Punctuation and symbolic operators, two-character ones first so that they are matched first.
enum PredicateSymbol: String, Sendable, CaseIterable {
    case equalEqual = "==", notEqual = "!=", lessGreater = "<>", lessEqual = "<=", equalLess = "=<"
    case greaterEqual = ">=", equalGreater = "=>", and = "&&", or = "||"
    case leftParenthesis = "(", rightParenthesis = ")", leftBrace = "{", rightBrace = "}"
    case comma = ",", dot = ".", equal = "=", less = "<", greater = ">", not = "!"
}

/// Splits a format string into tokens, one at a time, so that errors come in reading order.
struct PredicateLexer {
    let format: String
    private let characters: [Character]
    private var index = 0

    init(format: String) {
        self.format = format
        characters = Array(format)
    }

    /// The column just past the last character.
    var endColumn: Int { characters.count + 1 }

    /// The format's characters from `start` to `end` (clamped to the format).
    func text(from start: Int, to end: Int) -> String {
        let lower = min(max(start, 0), characters.count)
        let upper = min(max(end, lower), characters.count)
        return String(characters[lower..<upper])
    }

    func failure(_ message: String, at position: Int) -> PredicateSyntaxError {
        PredicateSyntaxError(message: message, column: position + 1, format: format)
    }

    mutating func next() throws(PredicateSyntaxError) -> PredicateToken {
        while let character = peek(), character.isWhitespace { index += 1 }
        let start = index
        let kind: PredicateToken.Kind = if let character = peek() { try lexToken(startingWith: character) } else { .end }
        return PredicateToken(kind: kind, start: start, end: index, text: text(from: start, to: index))
    }

    // MARK: - Tokens

    private mutating func lexToken(startingWith character: Character) throws(PredicateSyntaxError) -> PredicateToken.Kind {
        switch character {
        case "'", "\"": return .string(try lexString())
        case "#": return .escapedWord(try lexName(after: "#", naming: "a key name"))
        case "$": return .variable(try lexName(after: "$", naming: "a variable name"))
        case "@": return .collectionOperator(try lexName(after: "@", naming: "a collection operator name"))
        case "%": return .specifier(try lexSpecifier())
        case "[": return .options(try lexOptions())
        default: break
        }
        if Self.isDigit(character) || (character == "-" && peek(1).map(Self.isDigit) == true) {
            return try lexNumber()
        }
        if Self.isKeyStart(character) { return .word(lexKey()) }
        if let symbol = lexSymbol() { return .symbol(symbol) }
        index += 1
        return .unknown
    }

    private mutating func lexKey() -> String {
        let start = index
        while let character = peek(), Self.isKeyPart(character) { index += 1 }
        return text(from: start, to: index)
    }

    /// The name after `#`, `$` or `@`.
    private mutating func lexName(after sigil: String, naming what: String) throws(PredicateSyntaxError) -> String {
        index += 1
        guard let character = peek(), Self.isKeyStart(character) else {
            throw failure("expected \(what) after \"\(sigil)\", found \(found(at: index))", at: index)
        }
        return lexKey()
    }

    private mutating func lexSymbol() -> PredicateSymbol? {
        for length in [2, 1] {
            if let symbol = PredicateSymbol(rawValue: text(from: index, to: index + length)), symbol.rawValue.count == length {
                index += length
                return symbol
            }
        }
        return nil
    }

    private mutating func lexSpecifier() throws(PredicateSyntaxError) -> FormatSpecifier {
        let start = index
        index += 1
        for (spelling, specifier) in FormatSpecifier.spellings where text(from: index, to: index + spelling.count) == spelling {
            index += spelling.count
            return specifier
        }
        let written = text(from: start, to: index + 1)
        throw failure("expected a format specifier such as %@, %K, %d or %f, found \"\(written)\"", at: start)
    }

    private mutating func lexOptions() throws(PredicateSyntaxError) -> ComparisonOptions {
        let open = index
        index += 1
        var options: ComparisonOptions = []
        while let character = peek() {
            if character == "]" && index > open + 1 {
                index += 1
                return options
            }
            switch character {
            case "c", "C": options.insert(.caseInsensitive)
            case "d", "D": options.insert(.diacriticInsensitive)
            case "n", "N": options.insert(.normalized)
            default:
                let expected = index > open + 1 ? "c, d, n or \"]\"" : "c, d or n"
                throw failure("expected \(expected) in the comparison options, found \(found(at: index))", at: index)
            }
            index += 1
        }
        throw failure("expected \"]\" to close \"[\" at column \(open + 1), found end of input", at: index)
    }

    // MARK: - Strings

    private mutating func lexString() throws(PredicateSyntaxError) -> String {
        let open = index
        guard let quote = peek() else { return "" }
        index += 1
        var result = ""
        while let character = peek() {
            index += 1
            if character == quote { return result }
            if character == "\\" {
                result.unicodeScalars.append(try lexEscape(backslash: index - 1))
            } else {
                result.append(character)
            }
        }
        throw failure("expected \(quote) to close the string that starts at column \(open + 1), found end of input", at: index)
    }

    private mutating func lexEscape(backslash: Int) throws(PredicateSyntaxError) -> Unicode.Scalar {
        guard let character = peek() else {
            throw failure("expected an escape sequence after \"\\\", found end of input", at: index)
        }
        index += 1
        switch character {
        case "n": return "\n"
        case "t": return "\t"
        case "r": return "\r"
        case "\\": return "\\"
        case "\"": return "\""
        case "'": return "'"
        case "u": return try lexUnicodeEscape(backslash: backslash)
        default:
            throw failure(#"expected an escape sequence such as \n, \t, \\, \", \' or \uXXXX, found "\\#(character)""#, at: backslash)
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
                throw failure(#"expected a low surrogate \uDC00 to \uDFFF after "\#(text(from: backslash, to: next))", found "\#(text(from: next, to: index))""#, at: next)
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
            guard let character = peek(), let digit = Self.digitValue(character, radix: 16) else {
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
        if let character = peek(), Self.isKeyPart(character) {
            while let character = peek(), Self.isKeyPart(character) { index += 1 }
            throw failure("expected a number, found \"\(text(from: start, to: index))\"", at: start)
        }
        return kind
    }

    private mutating func lexRadixInteger(radix: Int, named name: String, negative: Bool, start: Int) throws(PredicateSyntaxError) -> PredicateToken.Kind {
        let digitsStart = index
        while let character = peek(), Self.digitValue(character, radix: radix) != nil { index += 1 }
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
        while let character = peek(), Self.isDigit(character) { index += 1 }
    }

    // MARK: - Characters

    private func peek(_ offset: Int = 0) -> Character? {
        let position = index + offset
        return position < characters.count ? characters[position] : nil
    }

    /// The character at `position` quoted, or `end of input`.
    private func found(at position: Int) -> String {
        position < characters.count ? "\"\(characters[position])\"" : "end of input"
    }

    private static func radixPrefix(_ character: Character) -> (radix: Int, name: String)? {
        switch character {
        case "x", "X": (16, "hexadecimal")
        case "o", "O": (8, "octal")
        case "b", "B": (2, "binary")
        default: nil
        }
    }

    static func isDigit(_ character: Character) -> Bool {
        digitValue(character, radix: 10) != nil
    }

    /// The value of an ASCII digit in `radix` (at most 16).
    static func digitValue(_ character: Character, radix: Int) -> Int? {
        guard character.isASCII, let value = character.hexDigitValue, value < radix else { return nil }
        return value
    }

    /// Whether a key (or a variable or collection operator name) may start with the character.
    static func isKeyStart(_ character: Character) -> Bool {
        character.isLetter || character == "_"
    }

    /// Whether a key may continue with the character.
    static func isKeyPart(_ character: Character) -> Bool {
        isKeyStart(character) || isDigit(character)
    }

    /// Whether `text` is a single key: a letter or `_`, then letters, digits and `_`.
    static func isKey(_ text: String) -> Bool {
        guard let first = text.first, isKeyStart(first) else { return false }
        return text.allSatisfy(isKeyPart)
    }
}
