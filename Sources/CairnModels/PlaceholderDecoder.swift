import Foundation

/// A decoder that answers every request with an empty value (zero, "", false, nil, no
/// elements), from which a `Decodable` type makes its placeholder: what a non-optional property
/// of that type reads as when its stored value cannot be read. A type that refuses such values
/// (an enum with no empty raw value) has none. Nesting is bounded: a recursive type has none.
struct PlaceholderDecoder: Decoder {
    /// How deep decoding may nest.
    static let maximumDepth = 16

    let depth: Int
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// The placeholder of `type`; nil when it has none.
    static func placeholder(_ type: any Decodable.Type) -> Any? {
        try? PlaceholderDecoder(depth: 0).value(type)
    }

    func value<T: Decodable>(_ type: T.Type) throws -> T {
        if let scalar = type as? any ScalarAttribute.Type, let value = scalar.placeholder as? T { return value }
        guard depth < Self.maximumDepth else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "nested too deep for a placeholder"))
        }
        return try T(from: PlaceholderDecoder(depth: depth + 1, codingPath: codingPath))
    }

    func container<Key: CodingKey>(keyedBy _: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keyed<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { Unkeyed(decoder: self) }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(decoder: self) }

    /// Every key is present and holds an empty value; an optional one is nil.
    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: PlaceholderDecoder
        var codingPath: [any CodingKey] { decoder.codingPath }
        var allKeys: [Key] { [] }
        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) throws -> Bool { true }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder.value(type) }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            try decoder.container(keyedBy: type)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { Unkeyed(decoder: decoder) }
        func superDecoder() throws -> any Decoder { decoder }
        func superDecoder(forKey key: Key) throws -> any Decoder { decoder }
    }

    /// No elements.
    private struct Unkeyed: UnkeyedDecodingContainer {
        let decoder: PlaceholderDecoder
        var codingPath: [any CodingKey] { decoder.codingPath }
        var count: Int? { 0 }
        var isAtEnd: Bool { true }
        var currentIndex: Int { 0 }
        private var end: DecodingError { .valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "no elements")) }
        init(decoder: PlaceholderDecoder) { self.decoder = decoder }
        mutating func decodeNil() throws -> Bool { throw end }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw end }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> { throw end }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw end }
        mutating func superDecoder() throws -> any Decoder { throw end }
    }

    /// An empty value, never nil.
    private struct Single: SingleValueDecodingContainer {
        let decoder: PlaceholderDecoder
        var codingPath: [any CodingKey] { decoder.codingPath }
        func decodeNil() -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.value(type) }
    }
}
