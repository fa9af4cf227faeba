import CairnSupport
import Foundation

/// A predicate in the syntax of `NSPredicate` format strings, as parsed by
/// ``parse(_:arguments:)`` (Foundation's `NSPredicate(format:)` does not exist on Linux).
///
/// The syntax, with keywords in any case:
///
/// - comparisons `lhs op rhs` with `==` `=` `!=` `<>` `<` `<=` `=<` `>` `>=` `=>`, `BETWEEN`,
///   `IN`, `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE` (`*` and `?` wildcards) and `MATCHES`
///   (a regular expression), each optionally followed by options `[c]`, `[d]`, `[n]` or a
///   combination such as `[cd]`;
/// - `ANY`, `SOME`, `ALL` or `NONE` before a key path on the left: `ANY books.pages > 500`;
/// - `NOT`/`!` before `AND`/`&&` before `OR`/`||`, parentheses, `TRUEPREDICATE`, `FALSEPREDICATE`;
/// - values: `'single'` or `"double"` quoted strings with `\n` `\t` `\r` `\\` `\"` `\'` `\uXXXX`
///   escapes; integers (`-12`, `0x1F`, `0o17`, `0b101`); floating-point numbers (`1.5`, `2e-3`);
///   `YES` `NO` `TRUE` `FALSE`; `nil` `NULL`; `SELF`; lists `{1, 2, 3}`; variables `$NAME`;
///   `CAST(value, "type")` for the kinds of ``Value`` that have no literal (see ``description``);
/// - key paths `author.lastName` (`SELF.author.lastName` is the same), with `#` before a key
///   spelled like a keyword (`#in`; after a dot keywords are keys anyway), and at most one
///   collection operator after a to-many key path: `books.@count` (nothing may follow it),
///   `books.@sum.pages`, `@avg`, `@min`, `@max`; an operator cannot start a key path;
/// - format specifiers replaced by arguments at parse time: `%@` `%K` `%d` `%i` `%ld` `%lld`
///   `%u` `%lu` `%llu` `%f` `%lf`, and `%%` for a `"%"` string. Inside quotes, as in
///   `NSPredicate`, specifiers and variables are plain text.
///
/// `AND` and `OR` chains are flattened (`a AND b AND c` is one `.and` of three parts);
/// parenthesized groups are kept as written. Parentheses, `NOT`s and lists may nest up to
/// ``maximumNestingDepth`` levels.
public indirect enum PredicateSyntax: Sendable, Hashable {
    /// `lhs op[options] rhs`, with `ANY`, `ALL` or `NONE` before the left-hand side when
    /// `modifier` is not `.direct`.
    case comparison(
        PredicateOperand, PredicateOperator, PredicateOperand,
        options: ComparisonOptions = [], modifier: ComparisonModifier = .direct
    )
    /// True when all of the predicates are (`AND`, `&&`).
    case and([PredicateSyntax])
    /// True when any of the predicates is (`OR`, `||`).
    case or([PredicateSyntax])
    /// True when the predicate is false (`NOT`, `!`).
    case not(PredicateSyntax)
    /// Always true (`TRUEPREDICATE`).
    case truePredicate
    /// Always false (`FALSEPREDICATE`).
    case falsePredicate
    /// True when some object of the to-many key path `collection` matches `predicate`, whose key
    /// paths start from that object: written `SUBQUERY(books, $x, $x.year > 2000).@count > 0`.
    /// What a `#Predicate`'s `contains(where:)` over a to-many relationship becomes.
    case subquery(collection: [String], predicate: PredicateSyntax)

    /// How deeply parentheses, `NOT`s and lists may nest in a format string; deeper nesting is
    /// a ``PredicateSyntaxError``. The parser recurses once per level: at this bound it uses
    /// about 280 KiB of stack in debug builds (130 KiB optimized), so that it fits in the
    /// 512 KiB stack of a secondary thread.
    public static let maximumNestingDepth = 100
}

/// One side of a comparison.
public enum PredicateOperand: Sendable, Hashable {
    /// A key path from the evaluated object: `author.lastName` is `["author", "lastName"]`.
    case keyPath([String])
    /// A collection operator applied to the to-many key path `collection`, then, for `@sum`,
    /// `@avg`, `@min` and `@max`, to `keyPath` from each element (empty to use the elements
    /// themselves): `books.@sum.pages` is `.collectionOperation(.sum, collection: ["books"],
    /// keyPath: ["pages"])`; `books.@count` has an empty `keyPath`.
    case collectionOperation(CollectionOperator, collection: [String], keyPath: [String])
    /// A value: a literal, `nil`, or an argument given for `%@`, `%d`, `%f`…
    case constant(Value)
    /// A list `{a, b, c}`, or an array or set argument.
    case list([PredicateOperand])
    /// A variable `$NAME`, replaced by ``PredicateSyntax/substituting(_:)``.
    case variable(String)
    /// `SELF`, the object being evaluated.
    case evaluatedObject
    /// An object, given as a ``ManagedObject`` or ``ObjectID`` for `%@`: compared with a to-one
    /// relationship or `SELF` (`author == %@`), or found in a to-many one (`%@ IN books`,
    /// `books CONTAINS %@`); a list of objects for `IN`. Written `CAST("entity:key", "ObjectID")`.
    case object(ObjectID)
}

/// The operator of a comparison; the raw value is its spelling in a format string.
public enum PredicateOperator: String, Sendable, Hashable, CaseIterable {
    /// `==` (also `=`).
    case equal = "=="
    /// `!=` (also `<>`).
    case notEqual = "!="
    /// `<`.
    case less = "<"
    /// `<=` (also `=<`).
    case lessOrEqual = "<="
    /// `>`.
    case greater = ">"
    /// `>=` (also `=>`).
    case greaterOrEqual = ">="
    /// `BETWEEN {lower, upper}`, bounds included; the right-hand side is a list of two values
    /// (or a variable that must be one when substituted).
    case between = "BETWEEN"
    /// `IN`: the left-hand side is an element of the right-hand collection (or a substring of
    /// the right-hand string).
    case `in` = "IN"
    /// `BEGINSWITH`: a string prefix.
    case beginsWith = "BEGINSWITH"
    /// `ENDSWITH`: a string suffix.
    case endsWith = "ENDSWITH"
    /// `CONTAINS`: a substring, or an element of a collection.
    case contains = "CONTAINS"
    /// `LIKE`: a pattern where `*` matches any run of characters and `?` one character.
    case like = "LIKE"
    /// `MATCHES`: a regular expression matching the whole string.
    case matches = "MATCHES"
}

/// Options written in brackets right after a comparison operator: `name CONTAINS[cd] "e"`.
public struct ComparisonOptions: OptionSet, Sendable, Hashable {
    /// The options' bits.
    public let rawValue: UInt8

    /// Makes options from their bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `[c]`: letters compare without regard to case.
    public static let caseInsensitive = ComparisonOptions(rawValue: 1 << 0)
    /// `[d]`: letters compare without regard to diacritics (`é` equals `e`).
    public static let diacriticInsensitive = ComparisonOptions(rawValue: 1 << 1)
    /// `[n]`: the strings are known to be normalized already, so the comparison may skip
    /// normalizing them.
    public static let normalized = ComparisonOptions(rawValue: 1 << 2)

    /// The options as written in a format string, e.g. `[cd]`; empty for no options.
    var formatSuffix: String {
        let letters = [(Self.caseInsensitive, "c"), (.diacriticInsensitive, "d"), (.normalized, "n")]
            .filter { contains($0.0) }
            .map(\.1)
        return letters.isEmpty ? "" : "[\(letters.joined())]"
    }
}

/// How a comparison treats a to-many key path on its left-hand side.
public enum ComparisonModifier: Sendable, Hashable {
    /// The left-hand side is compared as it is.
    case direct
    /// `ANY` (also `SOME`): true when the comparison holds for at least one element.
    case any
    /// `ALL`: true when the comparison holds for every element.
    case all
    /// `NONE`: true when the comparison holds for no element (`NOT ANY`).
    case none

    /// The keyword written before the left-hand side; empty for `.direct`.
    var keyword: String {
        switch self {
        case .direct: ""
        case .any: "ANY"
        case .all: "ALL"
        case .none: "NONE"
        }
    }
}

/// A collection operator in a key path; the raw value is its name after the `@`.
public enum CollectionOperator: String, Sendable, Hashable, CaseIterable {
    /// `@count`: the number of elements.
    case count
    /// `@sum`: the sum of the elements' values.
    case sum
    /// `@avg`: the average of the elements' values.
    case average = "avg"
    /// `@min`: the smallest of the elements' values.
    case minimum = "min"
    /// `@max`: the largest of the elements' values.
    case maximum = "max"
}

// MARK: - Canonical format

extension PredicateSyntax: CustomStringConvertible {
    /// The predicate as a canonical format string, which parses back to an equal predicate.
    ///
    /// Keys spelled like keywords get a `#`; strings use double quotes and escapes; nested
    /// `AND`/`OR` groups and compound operands of `NOT` are parenthesized. Values without a
    /// literal (they come from arguments) are written as casts: `CAST(722000000.0, "NSDate")`
    /// (seconds since 2001-01-01), `CAST("…", "NSUUID")`, `CAST("<base64>", "NSData")`,
    /// `CAST("1.25", "NSDecimalNumber")`, `CAST("…", "NSURL")` and `CAST(1.5, "Float")`.
    /// Infinities are written `1e999` and `-1e999`. Only a NaN, which no argument may be, and
    /// keys that are not identifiers (which only hand-built predicates can have) do not read back.
    public var description: String {
        var writer = PredicateWriter()
        writer.write(self)
        return writer.text
    }
}

extension PredicateOperand: CustomStringConvertible {
    /// The expression as it is written in a canonical format string: `author.name`, `"text"`,
    /// `{1, 2}`, `$NAME`, `SELF`…
    public var description: String {
        var writer = PredicateWriter()
        writer.write(self)
        return writer.text
    }
}

extension PredicateSyntax {
    /// Whether the predicate is written as an `AND` or `OR` of several parts, and so needs
    /// parentheses as an operand.
    var isCompound: Bool {
        switch self {
        case .and(let parts), .or(let parts):
            parts.count == 1 ? parts[0].isCompound : parts.count > 1
        default:
            false
        }
    }
}

/// Writes predicates in canonical format syntax, noting the column where each variable first
/// appears (for substitution errors).
struct PredicateWriter {
    private(set) var text = ""
    private(set) var variableColumns: [String: Int] = [:]
    /// Inside a `SUBQUERY`: the variable that key paths start from.
    private var elementVariable: String?

    private mutating func append(_ piece: String) {
        text += piece
    }

    mutating func write(_ predicate: PredicateSyntax) {
        switch predicate {
        case .comparison(let lhs, let op, let rhs, let options, let modifier):
            if modifier != .direct { append(modifier.keyword + " ") }
            write(lhs)
            append(" \(op.rawValue)\(options.formatSuffix) ")
            write(rhs)
        case .and(let parts):
            writeJunction(parts, separator: " AND ", whenEmpty: "TRUEPREDICATE")
        case .or(let parts):
            writeJunction(parts, separator: " OR ", whenEmpty: "FALSEPREDICATE")
        case .not(let operand):
            append("NOT ")
            writeOperand(operand)
        case .truePredicate:
            append("TRUEPREDICATE")
        case .falsePredicate:
            append("FALSEPREDICATE")
        case .subquery(let collection, let inner):
            // The collection is read from the enclosing element; a nested SUBQUERY's variable is
            // `$xx`, then `$xxx`…, so that each condition names its own element.
            let outer = elementVariable
            let variable = (outer ?? "") + "x"
            append("SUBQUERY(" + elementPrefix + Self.keyPath(collection) + ", $" + variable + ", ")
            elementVariable = variable
            write(inner)
            elementVariable = outer
            append(").@count > 0")
        }
    }

    private mutating func writeJunction(_ parts: [PredicateSyntax], separator: String, whenEmpty: String) {
        guard parts.count != 1 else { return write(parts[0]) }
        if parts.isEmpty { append(whenEmpty) }
        for (index, part) in parts.enumerated() {
            if index > 0 { append(separator) }
            writeOperand(part)
        }
    }

    private mutating func writeOperand(_ predicate: PredicateSyntax) {
        guard predicate.isCompound else { return write(predicate) }
        append("(")
        write(predicate)
        append(")")
    }

    mutating func write(_ expression: PredicateOperand) {
        switch expression {
        case .keyPath(let keys):
            append(elementPrefix + Self.keyPath(keys))
        case .collectionOperation(let op, let collection, let keys):
            append(elementPrefix + Self.keyPath(collection) + ".@" + op.rawValue + (keys.isEmpty ? "" : "." + Self.keyPath(keys)))
        case .constant(let value):
            append(Self.literal(value))
        case .list(let elements):
            append("{")
            for (index, element) in elements.enumerated() {
                if index > 0 { append(", ") }
                write(element)
            }
            append("}")
        case .variable(let name):
            if variableColumns[name] == nil { variableColumns[name] = text.count + 1 }
            append("$" + name)
        case .evaluatedObject:
            append(elementVariable.map { "$" + $0 } ?? "SELF")
        case .object(let id):
            append(Self.cast(Self.quoted("\(id.entity):\(id.key)"), to: .objectID))
        }
    }

    private var elementPrefix: String { elementVariable.map { "$" + $0 + "." } ?? "" }

    /// Keys joined with dots, each spelled like a keyword escaped with `#`.
    static func keyPath(_ keys: [String]) -> String {
        keys.map { PredicateKeyword(spelling: $0) == nil ? $0 : "#" + $0 }.joined(separator: ".")
    }

    /// A value as a literal, or as a `CAST` for the kinds that have no literal.
    static func literal(_ value: Value) -> String {
        switch value {
        case .null: "nil"
        case .string(let text): quoted(text)
        case .integer(let number): String(number)
        case .double(let number): self.number(number)
        case .float(let number): cast(self.number(number), to: .float)
        case .decimal(let number): cast(quoted(number.description), to: .decimal)
        case .boolean(let flag): flag ? "YES" : "NO"
        case .date(let date): cast(self.number(date.timeIntervalSinceReferenceDate), to: .date)
        case .binary(let bytes): cast(quoted(Data(bytes).base64EncodedString()), to: .data)
        case .uuid(let id): cast(quoted(id.uuidString), to: .uuid)
        case .uri(let text): cast(quoted(text), to: .url)
        }
    }

    private static func cast(_ operand: String, to type: PredicateCastType) -> String {
        "CAST(\(operand), \"\(type.rawValue)\")"
    }

    /// A floating-point number as a literal that reads back to the same value.
    static func number<Number: BinaryFloatingPoint & LosslessStringConvertible>(_ number: Number) -> String {
        if number.isNaN { return "NaN" }
        if number.isInfinite { return number < 0 ? "-1e999" : "1e999" }
        return number.description
    }

    /// A string literal in double quotes that reads back to `text` (``QuotedString``: JSON's
    /// escapes, which the lexer reads).
    static func quoted(_ text: String) -> String { QuotedString.quoted(text) }
}
