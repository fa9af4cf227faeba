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
enum PredicateCastType: String, Sendable, CaseIterable {
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
    /// An object: from `"entity:key"` (an ``ObjectID``'s description).
    case objectID = "ObjectID"
}

extension PredicateOperand {
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

/// A recursive-descent parser over a ``PredicateLexer``, with one token of lookahead.
///
/// ```text
/// predicate   = conjunction { ("OR" | "||") conjunction }
/// conjunction = negation { ("AND" | "&&") negation }
/// negation    = { "NOT" | "!" } ( "(" predicate ")" | "TRUEPREDICATE" | "FALSEPREDICATE" | comparison )
/// comparison  = [ "ANY" | "SOME" | "ALL" | "NONE" ] expression operator [ options ] expression
///             | subquery operator count | count operator subquery
/// subquery    = "SUBQUERY" "(" keyPath "," "$" name "," predicate ")" "." "@count"
/// expression  = string | number | "YES" | "NO" | "TRUE" | "FALSE" | "NIL" | "NULL"
///             | "SELF" [ "." keyPath ] | keyPath | "$" name [ "." keyPath ] | "{" [ expression { "," expression } ] "}"
///             | "CAST" "(" ( string | number ) "," string ")" | "%@" | "%K" | "%d" | "%f" | "%%" | …
/// keyPath     = key { "." key } [ "." "@" name { "." key } ]
/// ```
///
/// A `SUBQUERY` is read only as "some element matches" (`.@count > 0`, `!= 0`, `>= 1`, or
/// mirrored, `0 < SUBQUERY(…).@count`) or as its negation (`== 0`). Inside its condition, `$name`
/// is the element and `$name.key…` a key path from it; nothing else may be read (key paths,
/// `SELF` and `%K` would read the outer object), while other variables stay variables.
struct PredicateParser {
    private var lexer: PredicateLexer
    private var token: PredicateToken
    private var previous: PredicateToken?
    /// The current token's symbol and keyword, kept apart so that checking them copies nothing.
    private var symbol: PredicateSymbol?
    private var keyword: PredicateKeyword?
    private let arguments: [any PredicateArgument]
    private var usedArguments = 0
    private var depth = 0
    /// The variables of the `SUBQUERY`s being read, innermost last; only the last may be read.
    private var elementVariables: [String] = []

    init(format: String, arguments: [any PredicateArgument]) throws(PredicateSyntaxError) {
        lexer = PredicateLexer(format: format)
        self.arguments = arguments
        token = try lexer.next()
        noteToken()
    }

    mutating func parse() throws(PredicateSyntaxError) -> PredicateSyntax {
        let predicate = try parsePredicate()
        guard token.kind == .end else { throw unexpected("AND, OR or the end of input") }
        guard usedArguments == arguments.count else { throw unusedArguments() }
        return predicate
    }

    private func unusedArguments() -> PredicateSyntaxError {
        let first = usedArguments + 1
        let unused =
            first == arguments.count
            ? "argument \(first) (\(PredicateFormatSpecifier.describe(arguments[usedArguments]))) has no specifier"
            : "arguments \(first) to \(arguments.count) have no specifier"
        return lexer.failure(
            "expected \(Self.count(usedArguments, "argument")) for the format's specifiers, found \(arguments.count): \(unused)",
            at: token.start
        )
    }

    // MARK: - Predicates

    // Nesting recurses through `parsePredicate` and `parseNegation` (parentheses) and through
    // `parseList` (lists) only, and everything else is kept out of line, so that the frames on
    // those paths stay small: about 2.7 KiB per level in debug builds and 1.2 KiB optimized
    // (see `PredicateSyntax.maximumNestingDepth`). `NOT`s are read in a loop.

    /// `AND`s and `OR`s of negations, `AND` binding tighter; chains are flattened.
    private mutating func parsePredicate() throws(PredicateSyntaxError) -> PredicateSyntax {
        var disjuncts: [PredicateSyntax] = []
        var conjuncts = [try parseNegation()]
        while true {
            if keyword == .and || symbol == .and {
                try advance()
                conjuncts.append(try parseNegation())
            } else if keyword == .or || symbol == .or {
                try advance()
                disjuncts.append(conjuncts.count == 1 ? conjuncts[0] : .and(conjuncts))
                conjuncts = [try parseNegation()]
            } else {
                break
            }
        }
        disjuncts.append(conjuncts.count == 1 ? conjuncts[0] : .and(conjuncts))
        return disjuncts.count == 1 ? disjuncts[0] : .or(disjuncts)
    }

    /// Any number of `NOT`s before a parenthesized predicate or a primary one.
    private mutating func parseNegation() throws(PredicateSyntaxError) -> PredicateSyntax {
        var negations = 0
        while keyword == .not || symbol == .not {
            try enterNesting()
            try advance()
            negations += 1
        }
        var predicate: PredicateSyntax
        if symbol == .leftParenthesis {
            let openColumn = lexer.column(at: token.start)
            try enterNesting()
            try advance()
            predicate = try parsePredicate()
            guard symbol == .rightParenthesis else { throw unclosed("(", expecting: "\")\"", at: openColumn) }
            try advance()
            depth -= 1
        } else {
            predicate = try parseUnparenthesized()
        }
        for _ in 0..<negations { predicate = .not(predicate) }
        depth -= negations
        return predicate
    }

    /// `TRUEPREDICATE`, `FALSEPREDICATE`, a `SUBQUERY` comparison or another comparison.
    @inline(never)
    private mutating func parseUnparenthesized() throws(PredicateSyntaxError) -> PredicateSyntax {
        if let form = subqueryForm() { return try parseSubqueryComparison(form) }
        switch keyword {
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
            return try parsePlainComparison()
        }
    }

    /// A comparison without `ANY`, `ALL` or `NONE`.
    @inline(never)
    private mutating func parsePlainComparison() throws(PredicateSyntaxError) -> PredicateSyntax {
        let start = token.start
        let lhs = try parseExpression(expecting: "a predicate", after: previous?.text)
        return try parseComparison(lhs, from: start, modifier: .direct)
    }

    /// `ANY`, `SOME`, `ALL` or `NONE`, then a comparison whose left-hand side is a key path.
    @inline(never)
    private mutating func parseModifiedComparison(_ modifier: ComparisonModifier) throws(PredicateSyntaxError) -> PredicateSyntax {
        let modifierText = token.text
        try advance()
        let start = token.start
        let lhs = try parseExpression(expecting: "a key path", after: modifierText)
        guard case .keyPath = lhs else {
            throw lexer.failure("expected a key path after \"\(modifierText)\", found \"\(span(from: start))\"", at: start)
        }
        return try parseComparison(lhs, from: start, modifier: modifier)
    }

    /// The operator, options and right-hand side after `lhs`, which starts at `start`.
    @inline(never)
    private mutating func parseComparison(
        _ lhs: PredicateOperand, from start: Int, modifier: ComparisonModifier
    ) throws(PredicateSyntaxError) -> PredicateSyntax {
        guard let op = comparisonOperator else { throw unexpected("a comparison operator", after: span(from: start)) }
        let operatorStart = token.start
        try advance()
        var options: ComparisonOptions = []
        if case .options(let written) = token.kind {
            options = written
            try advance()
        }
        if modifier == .direct, startsSubquery { throw unsupportedCount(span(from: start) + " SUBQUERY(...).@count", at: start) }
        let operatorText = span(from: operatorStart)
        let rhsStart = token.start
        let rhs = try parseExpression(expecting: "a value", after: operatorText)
        if op == .between, !rhs.isBetweenBounds {
            throw lexer.failure("expected 2 values {lower, upper} after \"\(operatorText)\", found \(rhs)", at: rhsStart)
        }
        return .comparison(lhs, op, rhs, options: options, modifier: modifier)
    }

    /// The comparison operator the current token is, if it is one.
    private var comparisonOperator: PredicateOperator? { Self.comparisonOperator(symbol, keyword) }

    /// The comparison operator a token with this symbol or keyword is, if it is one.
    private static func comparisonOperator(_ symbol: PredicateSymbol?, _ keyword: PredicateKeyword?) -> PredicateOperator? {
        switch symbol {
        case .equalEqual, .equal: return .equal
        case .notEqual, .lessGreater: return .notEqual
        case .less: return .less
        case .lessEqual, .equalLess: return .lessOrEqual
        case .greater: return .greater
        case .greaterEqual, .equalGreater: return .greaterOrEqual
        default: break
        }
        switch keyword {
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
    private mutating func parseExpression(expecting expected: String, after context: String?) throws(PredicateSyntaxError) -> PredicateOperand {
        symbol == .leftBrace ? try parseList() : try parseOperand(expecting: expected, after: context)
    }

    /// `{a, b, …}`.
    private mutating func parseList() throws(PredicateSyntaxError) -> PredicateOperand {
        let openColumn = lexer.column(at: token.start)
        try enterNesting()
        try advance()
        var elements: [PredicateOperand] = []
        if symbol != .rightBrace {
            while true {
                if symbol == .leftBrace {
                    elements.append(try parseList())
                } else {
                    elements.append(try parseOperand(expecting: "a value", after: previous?.text))
                }
                if symbol == .rightBrace { break }
                guard symbol == .comma else { throw unclosed("{", expecting: "\",\" or \"}\"", at: openColumn) }
                try advance()
            }
        }
        try advance()
        depth -= 1
        return .list(elements)
    }

    /// Any expression but a list.
    @inline(never)
    private mutating func parseOperand(expecting expected: String, after context: String?) throws(PredicateSyntaxError) -> PredicateOperand {
        switch token.kind {
        case .string(let text): return try constant(.string(text))
        case .integer(let number): return try constant(.integer(number))
        case .double(let number): return try constant(.double(number))
        case .variable(let name): return try parseVariable(name)
        case .specifier(let specifier):
            if specifier == .keyPath { try refuseOuterRead() }
            return try parseArgument(specifier)
        case .escapedWord(let key):
            try refuseOuterRead()
            return try parseKeyPath(startingWith: key, at: token.start)
        case .word(let word):
            switch keyword {
            case nil:
                if startsSubquery { throw misplacedSubquery(expected, after: context) }
                try refuseOuterRead()
                return try parseKeyPath(startingWith: word, at: token.start)
            case .yes, .trueValue: return try constant(.boolean(true))
            case .no, .falseValue: return try constant(.boolean(false))
            case .nilValue, .nullValue: return try constant(.null)
            case .evaluatedObject:
                try refuseOuterRead()
                return try parseSelf()
            case .cast: return try parseCast()
            default: break
            }
        default: break
        }
        throw missingExpression(expected, after: context)
    }

    /// The error for a token that cannot start an expression.
    @inline(never)
    private func missingExpression(_ expected: String, after context: String?) -> PredicateSyntaxError {
        let error = unexpected(expected, after: context)
        guard case .collectionOperator = token.kind else { return error }
        return lexer.failure(error.message + " (a collection operator follows a to-many key path, as in \"items.@count\")", at: token.start)
    }

    private mutating func constant(_ value: Value) throws(PredicateSyntaxError) -> PredicateOperand {
        try advance()
        return .constant(value)
    }

    /// `SELF`, or `SELF.key…`, which is the key path `key…`.
    @inline(never)
    private mutating func parseSelf() throws(PredicateSyntaxError) -> PredicateOperand {
        let start = token.start
        try advance()
        guard symbol == .dot else { return .evaluatedObject }
        try advance()
        guard let key = keyName else { throw unexpected("a key", after: span(from: start)) }
        return try parseKeyPath(startingWith: key, at: start)
    }

    /// `$name`: inside a `SUBQUERY` whose variable it is, the element (`$b`) or a key path from
    /// it (`$b.year` is `year`); elsewhere a variable, replaced by substitution.
    @inline(never)
    private mutating func parseVariable(_ name: String) throws(PredicateSyntaxError) -> PredicateOperand {
        guard let element = elementVariables.last, name == element else {
            if elementVariables.contains(name) { try refuseOuterRead() }
            try advance()
            return .variable(name)
        }
        let start = token.start
        try advance()
        guard symbol == .dot else { return .evaluatedObject }
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
    @inline(never)
    private mutating func parseKeyPath(startingWith first: String, at start: Int) throws(PredicateSyntaxError) -> PredicateOperand {
        var keys = [first]
        try advance()
        while symbol == .dot {
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
    @inline(never)
    private mutating func parseCollectionOperation(_ name: String, on collection: [String], from start: Int) throws(PredicateSyntaxError) -> PredicateOperand {
        guard let op = CollectionOperator(rawValue: name) else {
            throw unexpected("a collection operator (@count, @sum, @avg, @min or @max)")
        }
        try advance()
        var keys: [String] = []
        while op != .count, symbol == .dot {
            try advance()
            guard let key = keyName else { throw unexpected("a key", after: span(from: start)) }
            keys.append(key)
            try advance()
        }
        return .collectionOperation(op, collection: collection, keyPath: keys)
    }

    /// `CAST(value, "type")`, for the kinds of values that have no literal.
    @inline(never)
    private mutating func parseCast() throws(PredicateSyntaxError) -> PredicateOperand {
        let open = token
        try advance()
        guard symbol == .leftParenthesis else { throw unexpected("\"(\"", after: open.text) }
        try advance()
        let operand = token
        switch operand.kind {
        case .string, .integer, .double: try advance()
        default: throw unexpected("a string or number to cast")
        }
        guard symbol == .comma else { throw unexpected("\",\" after the value to cast") }
        try advance()
        let typeToken = token
        guard case .string(let typeName) = typeToken.kind else { throw unexpected("a type name such as \"NSDate\"") }
        guard let type = PredicateCastType(rawValue: typeName) else {
            let names = PredicateCastType.allCases.map { "\"\($0.rawValue)\"" }
            let list = names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
            throw lexer.failure("expected one of the type names \(list), found \(typeToken.quoted)", at: typeToken.start)
        }
        try advance()
        guard symbol == .rightParenthesis else { throw unclosed(open.text + "(", expecting: "\")\"", at: lexer.column(at: open.start)) }
        try advance()
        if type == .objectID {
            let text = if case .string(let text) = operand.kind { text } else { "" }
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let entity = Int(parts[0]), entity >= 0, let key = UInt64(parts[1]) else {
                throw castFailure(operand, to: type)
            }
            return .object(ObjectID(entity: entity, key: key))
        }
        return .constant(try cast(operand, to: type))
    }

    private func cast(_ operand: PredicateToken, to type: PredicateCastType) throws(PredicateSyntaxError) -> Value {
        let value: Value? =
            switch (type, operand.kind) {
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
        guard let value else { throw castFailure(operand, to: type) }
        return value
    }

    private func castFailure(_ operand: PredicateToken, to type: PredicateCastType) -> PredicateSyntaxError {
        let expected =
            switch type {
            case .date: "a number of seconds since 2001-01-01"
            case .uuid: "a UUID string"
            case .data: "a base64 string"
            case .decimal: "a decimal number"
            case .url: "a string"
            case .float: "a number"
            case .objectID: "an object ID such as \"0:42\" (entity:key)"
            }
        return lexer.failure("expected \(expected) to cast to \"\(type.rawValue)\", found \(operand.quoted)", at: operand.start)
    }

    /// A decimal written `-12.5e3` or the like (`Decimal(string:)` alone accepts a mere prefix).
    private static func decimal(_ text: String) -> Decimal? {
        let pattern = /-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/
        guard text.wholeMatch(of: pattern) != nil, let number = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")),
            !number.isNaN
        else { return nil }
        return number
    }

    // MARK: - SUBQUERY

    // `SUBQUERY(` is recognized by its parenthesis, so that `subquery` stays a key. Nesting
    // recurses through `parseUnparenthesized`, `parseSubqueryComparison` and `parseSubquery`,
    // which keep their frames small (the count and the messages are out of line); with
    // `parsePredicate` and `parseNegation`, a level of SUBQUERY takes about 5 KiB of stack in debug
    // builds, so it counts as `subqueryLevels` levels of nesting. A count before `SUBQUERY` is
    // recognized ahead, so that `parseComparison` never recurses: when it meets `SUBQUERY(` after
    // a count that is not a single token, it refuses it unread.

    /// How many levels of nesting a `SUBQUERY` counts as (see above).
    private static let subqueryLevels = 2

    /// Whether the current token starts a `SUBQUERY`: the word, in any case, then `(`.
    private var startsSubquery: Bool {
        guard Self.isSubqueryWord(token) else { return false }
        var ahead = lexer
        return (try? ahead.next())?.kind == .symbol(.leftParenthesis)
    }

    /// Whether `token` is the word `SUBQUERY`, in any case (ASCII letters only).
    private static func isSubqueryWord(_ token: PredicateToken) -> Bool {
        guard case .word(let word) = token.kind else { return false }
        return word.utf8.count == 8 && word.utf8.allSatisfy { $0 < 0x80 } && word.lowercased() == "subquery"
    }

    /// Which form of `SUBQUERY` comparison starts at the current token, if one does:
    /// `SUBQUERY(…).@count op count`, or a count (one number or specifier), an operator, options
    /// perhaps and `SUBQUERY(`.
    @inline(never)
    private func subqueryForm() -> SubqueryForm? {
        if startsSubquery { return .countAfter }
        switch token.kind {
        case .integer, .double, .specifier: break
        default: return nil
        }
        var ahead = lexer
        guard let op = try? ahead.next(), Self.isComparisonOperator(op), var next = try? ahead.next() else {
            return nil
        }
        if case .options = next.kind {
            guard let afterOptions = try? ahead.next() else { return nil }
            next = afterOptions
        }
        return Self.isSubqueryWord(next) && (try? ahead.next())?.kind == .symbol(.leftParenthesis) ? .countBefore : nil
    }

    /// Whether the token is a comparison operator.
    private static func isComparisonOperator(_ token: PredicateToken) -> Bool {
        let symbol: PredicateSymbol? = if case .symbol(let symbol) = token.kind { symbol } else { nil }
        return comparisonOperator(symbol, token.keyword) != nil
    }

    /// `SUBQUERY(…).@count op count` or `count op SUBQUERY(…).@count`, as `form` says.
    @inline(never)
    private mutating func parseSubqueryComparison(_ form: SubqueryForm) throws(PredicateSyntaxError) -> PredicateSyntax {
        let start = token.start
        let before = form == .countBefore ? try parseCountBeforeSubquery() : nil
        let subquery = try parseSubquery()
        let someMatch = if let before { try checkCount(before, from: start) } else { try parseCountAfterSubquery() }
        return someMatch ? subquery : .not(subquery)
    }

    /// `count op[options]` before `SUBQUERY`: the count (a single token), the operator as if the
    /// sides were swapped (`>` for `<`), whether options were given, and where it ends.
    @inline(never)
    private mutating func parseCountBeforeSubquery() throws(PredicateSyntaxError) -> SubqueryCount {
        let count = try parseOperand(expecting: "a count", after: nil)
        let op = comparisonOperator.flatMap(Self.mirrored)
        try advance()
        let hasOptions = try skipOptions()
        return SubqueryCount(value: count, op: op, hasOptions: hasOptions, end: previous?.end ?? token.start)
    }

    /// Whether `count op SUBQUERY(…).@count`, which starts at `start`, says that some element
    /// matches (true) or that none does (false).
    @inline(never)
    private func checkCount(_ count: SubqueryCount, from start: Int) throws(PredicateSyntaxError) -> Bool {
        guard !count.hasOptions, let op = count.op, let someMatch = Self.someMatch(op, count.value) else {
            throw unsupportedCount(lexer.text(from: start, to: count.end) + " SUBQUERY(...).@count", at: start)
        }
        return someMatch
    }

    /// `op count` after `SUBQUERY(…).@count`: whether it says that some element matches (true)
    /// or that none does (false).
    @inline(never)
    private mutating func parseCountAfterSubquery() throws(PredicateSyntaxError) -> Bool {
        guard let op = comparisonOperator else { throw unexpected("a comparison operator", after: "SUBQUERY(...).@count") }
        let operatorStart = token.start
        try advance()
        let hasOptions = try skipOptions()
        let count = try parseOperand(expecting: "a count", after: span(from: operatorStart))
        guard !hasOptions, let someMatch = Self.someMatch(op, count) else {
            throw unsupportedCount("SUBQUERY(...).@count " + span(from: operatorStart), at: operatorStart)
        }
        return someMatch
    }

    /// `SUBQUERY(collection, $variable, condition).@count`, the word `SUBQUERY` current, as the
    /// predicate that some element of the collection matches the condition.
    @inline(never)
    private mutating func parseSubquery() throws(PredicateSyntaxError) -> PredicateSyntax {
        let open = token.start
        let head = try parseSubqueryHead()
        elementVariables.append(head.variable)
        let condition = try parsePredicate()
        try closeSubquery(openedAt: open)
        return .subquery(collection: head.collection, predicate: condition)
    }

    /// `SUBQUERY(collection, $variable,`: the to-many key path (from the element of an enclosing
    /// `SUBQUERY`, if any) and the name of the variable for its elements.
    @inline(never)
    private mutating func parseSubqueryHead() throws(PredicateSyntaxError) -> (collection: [String], variable: String) {
        try advance()
        for _ in 0..<Self.subqueryLevels { try enterNesting() }
        try advance()
        let start = token.start
        guard case .keyPath(let collection) = try parseOperand(expecting: "a to-many key path", after: "SUBQUERY(") else {
            throw lexer.failure("expected a to-many key path after \"SUBQUERY(\", found \"\(span(from: start))\"", at: start)
        }
        guard symbol == .comma else { throw unexpected("\",\" after the collection of SUBQUERY") }
        try advance()
        guard case .variable(let variable) = token.kind else {
            throw unexpected("a variable such as $x for the elements of \(PredicateWriter.keyPath(collection))")
        }
        try advance()
        guard symbol == .comma else { throw unexpected("\",\" after the variable of SUBQUERY") }
        try advance()
        return (collection, variable)
    }

    /// `).@count` after the condition of the `SUBQUERY` that starts at `open`; its variable is
    /// no longer bound.
    @inline(never)
    private mutating func closeSubquery(openedAt open: Int) throws(PredicateSyntaxError) {
        _ = elementVariables.popLast()
        guard symbol == .rightParenthesis else { throw unclosed("SUBQUERY(", expecting: "\")\"", at: lexer.column(at: open)) }
        try advance()
        depth -= Self.subqueryLevels
        guard symbol == .dot else { throw unexpected("\".@count\" after \"SUBQUERY(...)\"") }
        try advance()
        guard case .collectionOperator("count") = token.kind else { throw unexpected("\"@count\" after \"SUBQUERY(...).\"") }
        try advance()
    }

    /// Skips comparison options, if the current token is some; whether it was.
    private mutating func skipOptions() throws(PredicateSyntaxError) -> Bool {
        guard case .options = token.kind else { return false }
        try advance()
        return true
    }

    /// Whether `SUBQUERY(…).@count op count` says that some element matches (true) or that
    /// none does (false); nil for any other count.
    private static func someMatch(_ op: PredicateOperator, _ count: PredicateOperand) -> Bool? {
        guard case .constant(.integer(let number)) = count else { return nil }
        switch (op, number) {
        case (.greater, 0), (.notEqual, 0), (.greaterOrEqual, 1): return true
        case (.equal, 0): return false
        default: return nil
        }
    }

    /// The operator that compares the same way with its sides swapped (`>` for `<`); nil for
    /// the operators that are not comparisons of order or equality.
    private static func mirrored(_ op: PredicateOperator) -> PredicateOperator? {
        switch op {
        case .equal, .notEqual: op
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        default: nil
        }
    }

    /// Throws, inside a `SUBQUERY` condition, for what would read the outer object (a key path,
    /// `SELF`, `%K`) or an enclosing `SUBQUERY`'s element: the current token.
    private func refuseOuterRead() throws(PredicateSyntaxError) {
        guard let element = elementVariables.last else { return }
        throw outerRead(element)
    }

    /// The error for the current token, which reads something else than `$element` inside the
    /// condition of its `SUBQUERY`.
    @inline(never)
    private func outerRead(_ element: String) -> PredicateSyntaxError {
        lexer.failure(
            "expected $\(element) or a key path that starts with \"$\(element).\" (a SUBQUERY condition may read only $\(element)), found \(token.quoted)",
            at: token.start)
    }

    /// The error for a `SUBQUERY(` where a value or key path was expected.
    @inline(never)
    private func misplacedSubquery(_ expected: String, after context: String?) -> PredicateSyntaxError {
        let error = unexpected(expected, after: context)
        return lexer.failure(error.message + " (SUBQUERY is read only as SUBQUERY(collection, $x, condition).@count > 0, or == 0)", at: token.start)
    }

    /// The error for a `SUBQUERY` count other than those that say whether some element matches.
    @inline(never)
    private func unsupportedCount(_ written: String, at start: Int) -> PredicateSyntaxError {
        lexer.failure(
            "expected SUBQUERY(...).@count > 0, != 0 or >= 1 (some element matches), or == 0 (none does), found \"\(written)\"", at: start)
    }

    // MARK: - Arguments

    /// The next argument, as `specifier` takes it.
    @inline(never)
    private mutating func parseArgument(_ specifier: PredicateFormatSpecifier) throws(PredicateSyntaxError) -> PredicateOperand {
        let written = token
        guard specifier != .percent else { return try constant(.string("%")) }
        guard usedArguments < arguments.count else {
            let found = arguments.isEmpty ? "no arguments" : "only \(Self.count(arguments.count, "argument"))"
            throw lexer.failure("expected argument \(usedArguments + 1) for \(written.text), found \(found)", at: written.start)
        }
        let argument = arguments[usedArguments]
        usedArguments += 1
        let expression: PredicateOperand
        do {
            expression = try specifier.expression(for: argument)
        } catch {
            throw lexer.failure("expected \(error.expected) for \(written.text) (argument \(usedArguments)), found \(error.found)", at: written.start)
        }
        try advance()
        return expression
    }

    // MARK: - Tokens

    @inline(never)
    private mutating func advance() throws(PredicateSyntaxError) {
        previous = token
        token = try lexer.next()
        noteToken()
    }

    private mutating func noteToken() {
        keyword = token.keyword
        if case .symbol(let current) = token.kind { symbol = current } else { symbol = nil }
    }

    /// The format from `start` to the end of the last token read.
    private func span(from start: Int) -> String {
        lexer.text(from: start, to: previous?.end ?? start)
    }

    private mutating func enterNesting() throws(PredicateSyntaxError) {
        depth += 1
        guard depth <= PredicateSyntax.maximumNestingDepth else { throw tooDeep() }
    }

    @inline(never)
    private func tooDeep() -> PredicateSyntaxError {
        lexer.failure("expected at most \(PredicateSyntax.maximumNestingDepth) levels of nesting, found more at \(token.quoted)", at: token.start)
    }

    /// `expected … [after "…"], found …` at the current token.
    @inline(never)
    private func unexpected(_ expected: String, after context: String? = nil) -> PredicateSyntaxError {
        let after = context.map { " after \"\($0)\"" } ?? ""
        return lexer.failure("expected \(expected)\(after), found \(token.quoted)", at: token.start)
    }

    /// `expected <closing> to close "<opening>" at column N, found …`.
    @inline(never)
    private func unclosed(_ opening: String, expecting closing: String, at column: Int) -> PredicateSyntaxError {
        unexpected("\(closing) to close \"\(opening)\" at column \(column)")
    }

    private static func count(_ number: Int, _ noun: String) -> String {
        switch number {
        case 0: "no \(noun)s"
        case 1: "1 \(noun)"
        default: "\(number) \(noun)s"
        }
    }
}

/// Where the count of a `SUBQUERY` comparison is written.
private enum SubqueryForm {
    /// `SUBQUERY(…).@count > 0`.
    case countAfter
    /// `0 < SUBQUERY(…).@count`.
    case countBefore
}

/// The count written before a `SUBQUERY`, and its operator as if written after it.
private struct SubqueryCount {
    let value: PredicateOperand
    /// The operator with the sides swapped; nil when it cannot be swapped.
    let op: PredicateOperator?
    let hasOptions: Bool
    /// Where the count and its operator end in the format.
    let end: Int
}
