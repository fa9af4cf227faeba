import Foundation

extension PredicateSyntax {
    /// Parses an `NSPredicate`-style format string (see ``PredicateSyntax`` for the syntax),
    /// replacing its format specifiers by `arguments`, in order.
    ///
    /// ```swift
    /// let syntax = try PredicateSyntax.parse("%K BEGINSWITH[c] %@ AND age >= %d", arguments: ["author.name", "Jo", 18])
    /// ```
    ///
    /// Variables (`$NAME`) are kept; replace them with ``substituting(_:)``.
    ///
    /// - Throws: ``PredicateSyntaxError`` for a format that is not a predicate, for more or
    ///   fewer arguments than specifiers, and for an argument that does not fit its specifier.
    public static func parse(_ format: String, arguments: [any PredicateArgument]) throws(PredicateSyntaxError) -> PredicateSyntax {
        var parser = try PredicateParser(format: format, arguments: arguments)
        return try parser.parse()
    }

    /// Parses an `NSPredicate`-style format string, replacing its format specifiers by
    /// `arguments`, in order: `try PredicateSyntax.parse("age > %d", 18)`.
    public static func parse(_ format: String, _ arguments: any PredicateArgument...) throws(PredicateSyntaxError) -> PredicateSyntax {
        try parse(format, arguments: arguments)
    }
}

/// The kinds of ``Value`` that `CAST(value, "type")` makes, named as in `NSPredicate`.
enum CastType: String, Sendable, CaseIterable {
    /// From a number of seconds since 2001-01-01.
    case date = "NSDate"
    /// From a UUID string.
    case uuid = "NSUUID"
    /// From a base64 string.
    case data = "NSData"
    /// From a string or a number, digit for digit.
    case decimal = "NSDecimalNumber"
    /// From a string.
    case url = "NSURL"
    /// From a number.
    case float = "Float"
}

extension PredicateExpression {
    /// Whether the expression can be the right-hand side of `BETWEEN`: a list of two values, or
    /// a variable (checked when it is substituted).
    var isBetweenBounds: Bool {
        switch self {
        case .list(let elements): elements.count == 2
        case .variable: true
        default: false
        }
    }
}

/// A recursive-descent parser over a ``PredicateLexer``, one token of lookahead.
///
/// ```text
/// predicate   = conjunction { ("OR" | "||") conjunction }
/// conjunction = negation { ("AND" | "&&") negation }
/// negation    = ("NOT" | "!") negation | primary
/// primary     = "(" predicate ")" | "TRUEPREDICATE" | "FALSEPREDICATE"
///             | [ "ANY" | "SOME" | "ALL" | "NONE" ] expression operator [options] expression
/// expression  = string | number | "YES" | "NO" | "TRUE" | "FALSE" | "NIL" | "NULL"
///             | "SELF" [ "." keyPath ] | keyPath | "$" name | "{" [ expression { "," expression } ] "}"
///             | "CAST" "(" (string | number) "," string ")" | "%@" | "%K" | "%d" | "%f" | "%%" …
/// keyPath     = key { "." key } [ "." "@" operator { "." key } ]
/// ```
struct PredicateParser {
    private var lexer: PredicateLexer
    private var token: PredicateToken
    private var previous: PredicateToken?
    private let arguments: [any PredicateArgument]
    private var usedArguments = 0
    private var depth = 0

    init(format: String, arguments: [any PredicateArgument]) throws(PredicateSyntaxError) {
        lexer = PredicateLexer(format: format)
        self.arguments = arguments
        token = try lexer.next()
    }

    mutating func parse() throws(PredicateSyntaxError) -> PredicateSyntax {
        let predicate = try parseDisjunction()
        guard token.kind == .end else { throw unexpected("AND, OR or the end of input") }
        guard usedArguments == arguments.count else {
            throw lexer.failure(
                "expected \(Self.count(usedArguments, "argument")) for the format's specifiers, found \(arguments.count)",
                at: token.start
            )
        }
        return predicate
    }

    // MARK: - Predicates

    private mutating func parseDisjunction() throws(PredicateSyntaxError) -> PredicateSyntax {
        var parts = [try parseConjunction()]
        while token.keyword == .or || token.is(.or) {
            try advance()
            parts.append(try parseConjunction())
        }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    private mutating func parseConjunction() throws(PredicateSyntaxError) -> PredicateSyntax {
        var parts = [try parseNegation()]
        while token.keyword == .and || token.is(.and) {
            try advance()
            parts.append(try parseNegation())
        }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    private mutating func parseNegation() throws(PredicateSyntaxError) -> PredicateSyntax {
        guard token.keyword == .not || token.is(.not) else { return try parsePrimary() }
        try enterNesting()
        try advance()
        let operand = try parseNegation()
        depth -= 1
        return .not(operand)
    }

    private mutating func parsePrimary() throws(PredicateSyntaxError) -> PredicateSyntax {
        if token.is(.leftParenthesis) { return try parseParenthesized() }
        switch token.keyword {
        case .truePredicate:
            try advance()
            return .truePredicate
        case .falsePredicate:
            try advance()
            return .falsePredicate
        case .anyModifier, .someModifier:
            return try parseModifiedComparison(.any)
        case .allModifier:
            return try parseModifiedComparison(.all)
        case .noneModifier:
            return try parseModifiedComparison(.none)
        default:
            let start = token.start
            let lhs = try parseExpression(expecting: "a predicate", after: previous?.text)
            return try parseComparison(lhs, from: start, modifier: .direct)
        }
    }

    private mutating func parseParenthesized() throws(PredicateSyntaxError) -> PredicateSyntax {
        let open = token
        try enterNesting()
        try advance()
        let predicate = try parseDisjunction()
        guard token.is(.rightParenthesis) else { throw unexpected("\")\" to close \"(\" at column \(open.column)") }
        try advance()
        depth -= 1
        return predicate
    }

    /// `ANY`, `SOME`, `ALL` or `NONE`, then a comparison whose left-hand side is a key path.
    private mutating func parseModifiedComparison(_ modifier: ComparisonModifier) throws(PredicateSyntaxError) -> PredicateSyntax {
        let keyword = token.text
        try advance()
        let start = token.start
        let lhs = try parseExpression(expecting: "a key path", after: keyword)
        guard case .keyPath = lhs else {
            throw lexer.failure("expected a key path after \"\(keyword)\", found \"\(span(from: start))\"", at: start)
        }
        return try parseComparison(lhs, from: start, modifier: modifier)
    }

    /// The operator, options and right-hand side after `lhs`, which starts at `start`.
    private mutating func parseComparison(_ lhs: PredicateExpression, from start: Int, modifier: ComparisonModifier) throws(PredicateSyntaxError) -> PredicateSyntax {
        guard let op = comparisonOperator else { throw unexpected("a comparison operator", after: span(from: start)) }
        let operatorStart = token.start
        try advance()
        var options: ComparisonOptions = []
        if case .options(let written) = token.kind {
            options = written
            try advance()
        }
        let operatorText = span(from: operatorStart)
        let rhsStart = token.start
        let rhs = try parseExpression(expecting: "a value", after: operatorText)
        if op == .between, !rhs.isBetweenBounds {
            throw lexer.failure("expected 2 values {lower, upper} after \"\(operatorText)\", found \(rhs)", at: rhsStart)
        }
        return .comparison(lhs, op, rhs, options: options, modifier: modifier)
    }

    private var comparisonOperator: PredicateOperator? {
        switch token.kind {
        case .symbol(.equalEqual), .symbol(.equal): return .equal
        case .symbol(.notEqual), .symbol(.lessGreater): return .notEqual
        case .symbol(.less): return .less
        case .symbol(.lessEqual), .symbol(.equalLess): return .lessOrEqual
        case .symbol(.greater): return .greater
        case .symbol(.greaterEqual), .symbol(.equalGreater): return .greaterOrEqual
        default: break
        }
        switch token.keyword {
        case .between: return .between
        case .inOperator: return .in
        case .beginsWith: return .beginsWith
        case .endsWith: return .endsWith
        case .contains: return .contains
        case .like: return .like
        case .matches: return .matches
        default: return nil
        }
    }

    // MARK: - Expressions

    /// A value, key path, list, variable or argument; `expected` and `context` say what is
    /// missing when there is none.
    private mutating func parseExpression(expecting expected: String, after context: String?) throws(PredicateSyntaxError) -> PredicateExpression {
        switch token.kind {
        case .string(let text): return try constant(.string(text))
        case .integer(let number): return try constant(.integer(number))
        case .double(let number): return try constant(.double(number))
        case .variable(let name):
            try advance()
            return .variable(name)
        case .symbol(.leftBrace): return try parseList()
        case .specifier(let specifier): return try parseArgument(specifier)
        case .escapedWord(let key): return try parseKeyPath(startingWith: key, at: token.start)
        case .word(let word):
            switch token.keyword {
            case nil: return try parseKeyPath(startingWith: word, at: token.start)
            case .yes, .trueValue: return try constant(.bool(true))
            case .no, .falseValue: return try constant(.bool(false))
            case .nilValue, .nullValue: return try constant(.null)
            case .evaluatedObject: return try parseSelf()
            case .cast: return try parseCast()
            default: break
            }
        default: break
        }
        var error = unexpected(expected, after: context)
        if case .collectionOperator = token.kind {
            error = lexer.failure(error.message + " (a collection operator follows a to-many key path, as in \"items.@count\")", at: token.start)
        }
        throw error
    }

    private mutating func constant(_ value: Value) throws(PredicateSyntaxError) -> PredicateExpression {
        try advance()
        return .constant(value)
    }

    /// `SELF`, or `SELF.key…`, which is the key path `key…`.
    private mutating func parseSelf() throws(PredicateSyntaxError) -> PredicateExpression {
        let start = token.start
        try advance()
        guard token.is(.dot) else { return .evaluatedObject }
        try advance()
        guard let key = keyName else { throw unexpected("a key", after: span(from: start)) }
        return try parseKeyPath(startingWith: key, at: start)
    }

    /// The key the current token names after a dot: any word, keywords included, or `#word`.
    private var keyName: String? {
        switch token.kind {
        case .word(let key), .escapedWord(let key): key
        default: nil
        }
    }

    /// A key path whose first key is the current token; `start` is where the expression starts.
    private mutating func parseKeyPath(startingWith first: String, at start: Int) throws(PredicateSyntaxError) -> PredicateExpression {
        var keys = [first]
        try advance()
        while token.is(.dot) {
            try advance()
            if let key = keyName {
                keys.append(key)
                try advance()
            } else if case .collectionOperator(let name) = token.kind {
                return try parseCollectionOperation(name, on: keys, from: start)
            } else {
                throw unexpected("a key", after: span(from: start))
            }
        }
        return .keyPath(keys)
    }

    /// `@name` after `collection`, then (but for `@count`) the keys to aggregate.
    private mutating func parseCollectionOperation(_ name: String, on collection: [String], from start: Int) throws(PredicateSyntaxError) -> PredicateExpression {
        guard let op = CollectionOperator(rawValue: name) else {
            throw unexpected("a collection operator (@count, @sum, @avg, @min or @max)")
        }
        try advance()
        var keys: [String] = []
        while op != .count, token.is(.dot) {
            try advance()
            guard let key = keyName else { throw unexpected("a key", after: span(from: start)) }
            keys.append(key)
            try advance()
        }
        return .collectionOperation(op, collection: collection, keyPath: keys)
    }

    /// `{a, b, …}`.
    private mutating func parseList() throws(PredicateSyntaxError) -> PredicateExpression {
        let open = token
        try enterNesting()
        try advance()
        var elements: [PredicateExpression] = []
        if !token.is(.rightBrace) {
            while true {
                elements.append(try parseExpression(expecting: "a value", after: previous?.text))
                if token.is(.rightBrace) { break }
                guard token.is(.comma) else { throw unexpected("\",\" or \"}\" to close \"{\" at column \(open.column)") }
                try advance()
            }
        }
        try advance()
        depth -= 1
        return .list(elements)
    }

    /// `CAST(value, "type")`, for the kinds of values that have no literal.
    private mutating func parseCast() throws(PredicateSyntaxError) -> PredicateExpression {
        let open = token
        try advance()
        guard token.is(.leftParenthesis) else { throw unexpected("\"(\"", after: open.text) }
        try advance()
        let operand = token
        switch operand.kind {
        case .string, .integer, .double: try advance()
        default: throw unexpected("a string or number to cast")
        }
        guard token.is(.comma) else { throw unexpected("\",\" after the value to cast") }
        try advance()
        let typeToken = token
        guard case .string(let typeName) = typeToken.kind else { throw unexpected("a type name such as \"NSDate\"") }
        guard let type = CastType(rawValue: typeName) else {
            let names = CastType.allCases.map { "\"\($0.rawValue)\"" }
            let list = names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
            throw lexer.failure("expected one of the type names \(list), found \(typeToken.quoted)", at: typeToken.start)
        }
        try advance()
        guard token.is(.rightParenthesis) else { throw unexpected("\")\" to close \"\(open.text)(\" at column \(open.column)") }
        try advance()
        return .constant(try cast(operand, to: type))
    }

    private func cast(_ operand: PredicateToken, to type: CastType) throws(PredicateSyntaxError) -> Value {
        let value: Value? = switch (type, operand.kind) {
        case (.date, .integer(let seconds)): .date(Date(timeIntervalSinceReferenceDate: Double(seconds)))
        case (.date, .double(let seconds)): .date(Date(timeIntervalSinceReferenceDate: seconds))
        case (.uuid, .string(let text)): UUID(uuidString: text).map(Value.uuid)
        case (.data, .string(let text)): Data(base64Encoded: text).map { .binary([UInt8]($0)) }
        case (.decimal, .string(let text)): Self.decimal(text).map(Value.decimal)
        case (.decimal, .integer), (.decimal, .double): Self.decimal(operand.text).map(Value.decimal)
        case (.url, .string(let text)): .uri(text)
        case (.float, .integer), (.float, .double): Float(operand.text).map(Value.float)
        default: nil
        }
        guard let value else {
            let expected = switch type {
            case .date: "a number of seconds since 2001-01-01"
            case .uuid: "a UUID string"
            case .data: "a base64 string"
            case .decimal: "a decimal number"
            case .url: "a string"
            case .float: "a number"
            }
            throw lexer.failure("expected \(expected) to cast to \"\(type.rawValue)\", found \(operand.quoted)", at: operand.start)
        }
        return value
    }

    /// A decimal written `-12.5e3` or the like (`Decimal(string:)` alone accepts a mere prefix).
    private static func decimal(_ text: String) -> Decimal? {
        let pattern = /-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/
        guard text.wholeMatch(of: pattern) != nil, let number = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")),
              !number.isNaN
        else { return nil }
        return number
    }

    // MARK: - Arguments

    /// The next argument, as `specifier` takes it.
    private mutating func parseArgument(_ specifier: FormatSpecifier) throws(PredicateSyntaxError) -> PredicateExpression {
        let written = token
        guard specifier != .percent else { return try constant(.string("%")) }
        guard usedArguments < arguments.count else {
            let found = arguments.isEmpty ? "no arguments" : "only \(Self.count(arguments.count, "argument"))"
            throw lexer.failure("expected argument \(usedArguments + 1) for \(written.text), found \(found)", at: written.start)
        }
        let argument = arguments[usedArguments]
        usedArguments += 1
        let expression: PredicateExpression
        do {
            expression = try specifier.expression(for: argument)
        } catch {
            throw lexer.failure("expected \(error.expected) for \(written.text) (argument \(usedArguments)), found \(error.found)", at: written.start)
        }
        try advance()
        return expression
    }

    // MARK: - Tokens

    private mutating func advance() throws(PredicateSyntaxError) {
        previous = token
        token = try lexer.next()
    }

    /// The format from `start` to the end of the last token read.
    private func span(from start: Int) -> String {
        lexer.text(from: start, to: previous?.end ?? start)
    }

    private mutating func enterNesting() throws(PredicateSyntaxError) {
        depth += 1
        let limit = PredicateSyntax.maximumNestingDepth
        guard depth <= limit else {
            throw lexer.failure("expected at most \(limit) levels of nesting, found more at \(token.quoted)", at: token.start)
        }
    }

    /// `expected … [after "…"], found …` at the current token.
    private func unexpected(_ expected: String, after context: String? = nil) -> PredicateSyntaxError {
        let after = context.map { " after \"\($0)\"" } ?? ""
        return lexer.failure("expected \(expected)\(after), found \(token.quoted)", at: token.start)
    }

    private static func count(_ number: Int, _ noun: String) -> String {
        switch number {
        case 0: "no \(noun)s"
        case 1: "1 \(noun)"
        default: "\(number) \(noun)s"
        }
    }
}
