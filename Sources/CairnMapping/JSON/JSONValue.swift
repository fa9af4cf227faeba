/// A JSON value as a tree: what a ``MappingTransformer`` reads and writes. The importer builds
/// one only for values that go through a transformer; everything else goes from bytes to
/// attribute values directly.
public enum JSONValue: Sendable, Hashable {
    /// `null`
    case null
    /// `true` or `false`
    case boolean(Bool)
    /// A number, as its text (exactly as written, so that nothing is lost before a transformer
    /// reads it).
    case number(String)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, its members in input order.
    case object([(key: String, value: JSONValue)])

    /// Equal values: numbers by their text, objects member by member in order.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.boolean(let a), .boolean(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    /// Hashes the value consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .boolean(let flag): hasher.combine(flag)
        case .number(let text): hasher.combine(1); hasher.combine(text)
        case .string(let text): hasher.combine(2); hasher.combine(text)
        case .array(let items): hasher.combine(items)
        case .object(let members):
            hasher.combine(members.count)
            for member in members { hasher.combine(member.key); hasher.combine(member.value) }
        }
    }

    /// The member of an object under `key` (nil: not an object, or no such member).
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }
}

extension JSONScanner {
    /// Reads the value that begins with `token` (already read) as a tree, with at most `limit`
    /// values in it, so that a hostile input cannot make it allocate without bound.
    mutating func tree(_ token: Token, limit: inout Int) throws(JSONSyntaxError) -> JSONValue {
        limit -= 1
        guard limit >= 0 else { throw failure("a value given to a transformer holds too many values") }
        switch token {
        case .null: return .null
        case .boolean(let flag): return .boolean(flag)
        case .number(let number): return .number(text(number))
        case .string(let text), .key(let text): return .string(string(text))
        case .beginArray:
            var items: [JSONValue] = []
            while let next = try next() {
                if next == .endArray { return .array(items) }
                items.append(try tree(next, limit: &limit))
            }
            throw failure("the input ends inside an array")
        case .beginObject:
            var members: [(key: String, value: JSONValue)] = []
            while let next = try next() {
                if next == .endObject { return .object(members) }
                guard case .key(let key) = next, let valueToken = try self.next() else { break }
                members.append((string(key), try tree(valueToken, limit: &limit)))
            }
            throw failure("the input ends inside an object")
        case .endArray, .endObject: throw failure("a value was expected")
        }
    }

    /// Skips the rest of the value that begins with `token` (already read).
    mutating func skip(_ token: Token) throws(JSONSyntaxError) {
        if token == .beginArray && skipFlatArray() != nil { return }
        try skipByTokens(token)
    }

    /// Skips the rest of the value that begins with `token` token by token (for an array
    /// ``skipFlatArray()`` has given up on).
    mutating func skipByTokens(_ token: Token) throws(JSONSyntaxError) {
        guard token == .beginArray || token == .beginObject else { return }
        let depth = self.depth - 1
        while let next = try next() {
            if (next == .endArray || next == .endObject) && self.depth == depth { return }
        }
    }
}
