import Foundation

/// A value that can be given for a format specifier (`%@`, `%K`, `%d`, `%f`…) of
/// ``PredicateSyntax/parse(_:arguments:)``, or for a `$VARIABLE` of
/// ``PredicateSyntax/substituting(_:)``.
///
/// What each specifier accepts:
///
/// - `%@`: any argument. Strings, numbers, booleans, dates, UUIDs, `Data` (binary), URLs
///   (`.uri`), decimals and ``Value``s become constants; managed objects and object IDs become
///   objects (for `author == %@`, `%@ IN books`, `SELF IN %@`); `nil` optionals become `nil`; arrays,
///   sets and closed ranges (`18...65`, for `BETWEEN`) become lists. A string is a constant,
///   never a key path: use `%K` for that.
/// - `%K`: a string naming a key path, such as `"author.name"` or `"books.@count"`.
/// - `%d`, `%i`, `%ld`, `%lld`, `%u`, `%lu`, `%llu`: an integer of any width. A `Bool` is
///   accepted too (in C, where `NSPredicate` comes from, `BOOL` is an integer) and stays a
///   boolean constant.
/// - `%f`, `%lf`: a `Double`, `Float` or `Decimal`, kept as it is, or an integer, which becomes
///   a `Double`.
/// - `%%` takes no argument: it is the string `"%"`.
///
/// Unsigned integers above `Int64.max` and NaNs are refused wherever they are given. `[UInt8]`
/// is a list of integers; give binary data as `Data`.
public protocol PredicateArgument: Sendable {
    /// What the argument stands for in a predicate.
    var predicateArgumentValue: PredicateArgumentValue { get }
}

/// What a ``PredicateArgument`` stands for in a predicate.
public enum PredicateArgumentValue: Sendable, Hashable {
    /// One value.
    case value(Value)
    /// A list of values (or of lists).
    case list([PredicateArgumentValue])
    /// An unsigned integer; refused if it is above `Int64.max`.
    case unsignedInteger(UInt64)
    /// An object (a ``ManagedObject`` or its ``ObjectID``).
    case object(ObjectID)
}

extension PredicateArgumentValue: PredicateArgument {
    /// The value itself, so that lists of mixed kinds can be given.
    public var predicateArgumentValue: PredicateArgumentValue { self }
}

extension Value: PredicateArgument {
    /// The value itself.
    public var predicateArgumentValue: PredicateArgumentValue { .value(self) }
}

extension String: PredicateArgument {
    /// A string value.
    public var predicateArgumentValue: PredicateArgumentValue { .value(.string(self)) }
}

extension Substring: PredicateArgument {
    /// A string value.
    public var predicateArgumentValue: PredicateArgumentValue { .value(.string(String(self))) }
}

extension Bool: PredicateArgument {
    /// A boolean value.
    public var predicateArgumentValue: PredicateArgumentValue { .value(.boolean(self)) }
}

extension Int: PredicateArgument {
    /// An integer value.
    public var predicateArgumentValue: PredicateArgumentValue { .value(.integer(Int64(self))) }
}

extension Int8: PredicateArgument {
    /// An integer value.
    public var predicateArgumentValue: PredicateArgumentValue { .value(.integer(Int64(self))) }
}

extension Int16: PredicateArgument {
    /// An integer value.
    public var predicateArgumentValue: PredicateArgumentValue { .value(.integer(Int64(self))) }
}

extension Int32: PredicateArgument {
    /// An integer value.
    public var predicateArgumentValue: PredicateArgumentValue { .value(.integer(Int64(self))) }
}

extension Int64: PredicateArgument {
    /// An integer value.
    public var predicateArgumentValue: PredicateArgumentValue { .value(.integer(self)) }
}

extension UInt8: PredicateArgument {
    /// An integer value.
    public var predicateArgumentValue: PredicateArgumentValue { .value(.integer(Int64(self))) }
}

extension UInt16: PredicateArgument {
    /// An integer value.
    public var predicateArgumentValue: PredicateArgumentValue { .value(.integer(Int64(self))) }
}

extension UInt32: PredicateArgument {
    /// An integer value.
    public var predicateArgumentValue: PredicateArgumentValue { .value(.integer(Int64(self))) }
}

extension UInt: PredicateArgument {
    /// An integer value; refused when used if it is above `Int64.max`.
    public var predicateArgumentValue: PredicateArgumentValue { .unsignedInteger(UInt64(self)) }
}

extension UInt64: PredicateArgument {
    /// An integer value; refused when used if it is above `Int64.max`.
    public var predicateArgumentValue: PredicateArgumentValue { .unsignedInteger(self) }
}

extension Double: PredicateArgument {
    /// A double value; refused when used if it is NaN.
    public var predicateArgumentValue: PredicateArgumentValue { .value(.double(self)) }
}

extension Float: PredicateArgument {
    /// A float value; refused when used if it is NaN.
    public var predicateArgumentValue: PredicateArgumentValue { .value(.float(self)) }
}

extension Decimal: PredicateArgument {
    /// A decimal value; refused when used if it is NaN.
    public var predicateArgumentValue: PredicateArgumentValue { .value(.decimal(self)) }
}

extension Date: PredicateArgument {
    /// A date value.
    public var predicateArgumentValue: PredicateArgumentValue { .value(.date(self)) }
}

extension UUID: PredicateArgument {
    /// A UUID value.
    public var predicateArgumentValue: PredicateArgumentValue { .value(.uuid(self)) }
}

extension Data: PredicateArgument {
    /// A binary value.
    public var predicateArgumentValue: PredicateArgumentValue { .value(.binary([UInt8](self))) }
}

extension URL: PredicateArgument {
    /// A URI value: the URL's absolute string.
    public var predicateArgumentValue: PredicateArgumentValue { .value(.uri(absoluteString)) }
}

extension ObjectID: PredicateArgument {
    /// The object, for comparisons with relationships and `SELF`.
    public var predicateArgumentValue: PredicateArgumentValue { .object(self) }
}

extension ManagedObject: PredicateArgument {
    /// The object's ID, for comparisons with relationships and `SELF`.
    public var predicateArgumentValue: PredicateArgumentValue { .object(objectID) }
}

extension Optional: PredicateArgument where Wrapped: PredicateArgument {
    /// The wrapped argument, or `nil`.
    public var predicateArgumentValue: PredicateArgumentValue { self?.predicateArgumentValue ?? .value(.null) }
}

extension Array: PredicateArgument where Element: PredicateArgument {
    /// A list of the elements, in order.
    public var predicateArgumentValue: PredicateArgumentValue { .list(map(\.predicateArgumentValue)) }
}

extension Set: PredicateArgument where Element: PredicateArgument {
    /// A list of the elements, in the set's (unspecified) order.
    public var predicateArgumentValue: PredicateArgumentValue { .list(map(\.predicateArgumentValue)) }
}

extension ClosedRange: PredicateArgument where Bound: PredicateArgument {
    /// The list `{lowerBound, upperBound}`, as `BETWEEN` takes it.
    public var predicateArgumentValue: PredicateArgumentValue {
        .list([lowerBound.predicateArgumentValue, upperBound.predicateArgumentValue])
    }
}

// MARK: - Resolving arguments

/// A format specifier; several spellings share one meaning.
enum PredicateFormatSpecifier: Sendable, Equatable {
    /// `%@`
    case object
    /// `%K`
    case keyPath
    /// `%d`, `%i`, `%u` and their `l`/`ll` forms.
    case integer
    /// `%f`, `%lf`
    case floating
    /// `%%`
    case percent

    /// Each spelling after the `%`, longest first.
    static let spellings: [(spelling: String, specifier: PredicateFormatSpecifier)] = [
        ("lld", .integer), ("llu", .integer), ("ld", .integer), ("lu", .integer), ("lf", .floating),
        ("@", .object), ("K", .keyPath), ("d", .integer), ("i", .integer), ("u", .integer),
        ("f", .floating), ("%", .percent)
    ]

    /// The expression that `argument` stands for under this specifier.
    func expression(for argument: any PredicateArgument) throws(PredicateArgumentMismatch) -> PredicateOperand {
        let value = argument.predicateArgumentValue
        let found = Self.describe(argument)
        switch self {
        case .object:
            return try value.expression(describedAs: found)
        case .keyPath:
            guard case .value(.string(let text)) = value else {
                throw PredicateArgumentMismatch(expected: "a string naming a key path", found: found)
            }
            guard let keyPath = PredicateOperand.keyPathNamed(text) else {
                throw PredicateArgumentMismatch(expected: "a key path such as \"author.name\"", found: PredicateWriter.quoted(text))
            }
            return keyPath
        case .integer:
            switch value {
            case .value(.integer), .value(.boolean), .unsignedInteger: return try value.expression(describedAs: found)
            default: throw PredicateArgumentMismatch(expected: "an integer", found: found)
            }
        case .floating:
            switch value {
            case .value(.double), .value(.float), .value(.decimal): return try value.expression(describedAs: found)
            case .value(.integer(let number)): return .constant(.double(Double(number)))
            case .unsignedInteger(let number): return .constant(.double(Double(number)))
            default: throw PredicateArgumentMismatch(expected: "a number", found: found)
            }
        case .percent:
            return .constant(.string("%"))
        }
    }

    /// The argument's type for messages, with the case of a ``Value`` and `nil` made explicit:
    /// `Int`, `Value.string`, `nil (Optional<Int>)`.
    static func describe(_ argument: any PredicateArgument) -> String {
        let type = String(describing: Swift.type(of: argument))
        switch argument.predicateArgumentValue {
        case .value(.null): return "nil (\(type))"
        // `.null` is handled above: every other case's name is its kind's name.
        case .value(let value) where argument is Value || argument is PredicateArgumentValue: return "\(type).\(value.typeName)"
        default: return type
        }
    }
}

/// Why an argument does not fit where it is used.
struct PredicateArgumentMismatch: Error {
    /// What was expected, e.g. `an integer`.
    let expected: String
    /// What was found, e.g. `String`.
    let found: String
}

extension PredicateArgumentValue {
    /// The argument as a constant or a list: `found` describes the whole argument in messages.
    func expression(describedAs found: @autoclosure () -> String) throws(PredicateArgumentMismatch) -> PredicateOperand {
        switch self {
        case .value(let value):
            guard !isNaN(value) else { throw PredicateArgumentMismatch(expected: "a number", found: "NaN (\(found()))") }
            return .constant(value)
        case .list(let elements):
            var expressions: [PredicateOperand] = []
            for element in elements { expressions.append(try element.expression(describedAs: found())) }
            return .list(expressions)
        case .unsignedInteger(let number):
            guard let signed = Int64(exactly: number) else {
                throw PredicateArgumentMismatch(expected: "an integer up to \(Int64.max)", found: "\(number) (\(found()))")
            }
            return .constant(.integer(signed))
        case .object(let id):
            return .object(id)
        }
    }
}

private func isNaN(_ value: Value) -> Bool {
    switch value {
    case .double(let number): number.isNaN
    case .float(let number): number.isNaN
    case .decimal(let number): number.isNaN
    default: false
    }
}

extension PredicateOperand {
    /// The key path a `%K` argument names: keys separated by dots, with at most one collection
    /// operator after the first key (and nothing after `@count`); nil if it is not one.
    static func keyPathNamed(_ text: String) -> PredicateOperand? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard let operatorIndex = parts.firstIndex(where: { $0.hasPrefix("@") }) else {
            return parts.allSatisfy(PredicateLexer.isKey) ? .keyPath(parts) : nil
        }
        let collection = Array(parts[..<operatorIndex])
        let keys = Array(parts[(operatorIndex + 1)...])
        guard !collection.isEmpty, collection.allSatisfy(PredicateLexer.isKey), keys.allSatisfy(PredicateLexer.isKey),
            let op = CollectionOperator(rawValue: String(parts[operatorIndex].dropFirst())),
            op != .count || keys.isEmpty
        else { return nil }
        return .collectionOperation(op, collection: collection, keyPath: keys)
    }
}

// MARK: - Variables

extension PredicateSyntax {
    /// The predicate with each `$NAME` replaced by the argument for `NAME` in `variables`
    /// (names are case-sensitive; extra entries are ignored). Arguments are taken as `%@`
    /// takes them.
    ///
    /// - Throws: ``PredicateSyntaxError`` when a variable has no entry, when an argument cannot
    ///   be used, or when a `BETWEEN` variable is not a list of two values. Its `format` is the
    ///   predicate's ``description`` and its `column` that of the variable there.
    public func substituting(_ variables: [String: any PredicateArgument]) throws(PredicateSyntaxError) -> PredicateSyntax {
        do {
            return try substituted(variables)
        } catch {
            var writer = PredicateWriter()
            writer.write(self)
            throw PredicateSyntaxError(message: error.message, column: writer.variableColumns[error.variable] ?? 1, format: writer.text)
        }
    }

    private func substituted(_ variables: [String: any PredicateArgument]) throws(VariableSubstitutionFailure) -> PredicateSyntax {
        switch self {
        case .comparison(let lhs, let op, let rhs, let options, let modifier):
            let left = try lhs.substituted(variables)
            let right = try rhs.substituted(variables)
            if op == .between, case .variable(let name) = rhs, !right.isBetweenBounds {
                throw VariableSubstitutionFailure(variable: name, message: "expected 2 values {lower, upper} for $\(name) after \"BETWEEN\", found \(right)")
            }
            return .comparison(left, op, right, options: options, modifier: modifier)
        case .and(let parts):
            return .and(try Self.substituted(parts, variables))
        case .or(let parts):
            return .or(try Self.substituted(parts, variables))
        case .not(let operand):
            return .not(try operand.substituted(variables))
        case .subquery(let collection, let inner):
            return .subquery(collection: collection, predicate: try inner.substituted(variables))
        case .truePredicate, .falsePredicate:
            return self
        }
    }

    private static func substituted(
        _ parts: [PredicateSyntax], _ variables: [String: any PredicateArgument]
    ) throws(VariableSubstitutionFailure) -> [PredicateSyntax] {
        var result: [PredicateSyntax] = []
        for part in parts { result.append(try part.substituted(variables)) }
        return result
    }
}

extension PredicateOperand {
    fileprivate func substituted(_ variables: [String: any PredicateArgument]) throws(VariableSubstitutionFailure) -> PredicateOperand {
        switch self {
        case .variable(let name):
            guard let argument = variables[name] else {
                let given = variables.keys.sorted().map { "$" + $0 }.joined(separator: ", ")
                let found = given.isEmpty ? "no variables" : "only \(given)"
                throw VariableSubstitutionFailure(variable: name, message: "expected a value for $\(name), found \(found)")
            }
            do {
                return try argument.predicateArgumentValue.expression(describedAs: PredicateFormatSpecifier.describe(argument))
            } catch {
                throw VariableSubstitutionFailure(variable: name, message: "expected \(error.expected) for $\(name), found \(error.found)")
            }
        case .list(let elements):
            var result: [PredicateOperand] = []
            for element in elements { result.append(try element.substituted(variables)) }
            return .list(result)
        case .keyPath, .collectionOperation, .constant, .evaluatedObject, .object:
            return self
        }
    }
}

/// A variable that could not be substituted, and why.
private struct VariableSubstitutionFailure: Error {
    let variable: String
    let message: String
}
