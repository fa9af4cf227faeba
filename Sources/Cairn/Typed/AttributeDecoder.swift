import Foundation

/// Decodes a `StoredModel` from attribute values by property name.
struct AttributeDecoder {
    static func decode<T: Decodable>(_ type: T.Type, from values: [String: Value], entity: String) throws -> T {
        try T(from: Top(values: values, entity: entity))
    }

    static func mismatch(_ type: Any.Type, _ value: Value, entity: String, key: String) -> StoreError {
        StoreError(.typeMismatch, "\(entity).\(key) holds \(value.typeName) \(value), which does not decode as \(type)", entity: entity, property: key)
    }

    /// Converts a stored value to a leaf type; nil when `T` is not a leaf type.
    static func leaf<T>(_ type: T.Type, _ value: Value, entity: String, key: String) throws -> T? {
        func fail() -> StoreError { mismatch(type, value, entity: entity, key: key) }
        let result: Any?
        switch type {
        case is [UInt8].Type:
            guard case .binary(let bytes) = value else { throw fail() }
            result = bytes
        case let known as any AttributeValue.Type:
            guard let converted = known.init(storedValue: value) else { throw fail() }
            result = converted
        // Any other standard integer or floating-point type (UInt, UInt64, Int128, Float16…):
        // converted here (integers exactly or not at all, floating point to the nearest value),
        // so that it never reaches its own `init(from:)`, which would ask this decoder for itself
        // again.
        case let integerType as any FixedWidthInteger.Type:
            guard case .integer(let number) = value, let converted = integerType.init(exactly: number) else { throw fail() }
            result = converted
        case let floatingType as any BinaryFloatingPoint.Type:
            switch value {
            case .double(let number): result = floatingType.init(number)
            case .float(let number): result = floatingType.init(number)
            case .integer(let number): result = floatingType.init(number)
            default: throw fail()
            }
        default:
            return nil
        }
        return result as? T
    }

    struct Top: Decoder {
        let values: [String: Value]
        let entity: String
        var codingPath: [any CodingKey] = []
        var userInfo: [CodingUserInfoKey: Any] = [:]

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            KeyedDecodingContainer(Keyed<Key>(values: values, entity: entity))
        }
        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            throw StoreError(.typeMismatch, "an object decodes as a keyed value, not a list", entity: entity)
        }
        func singleValueContainer() throws -> any SingleValueDecodingContainer {
            throw StoreError(.typeMismatch, "an object decodes as a keyed value, not a single value", entity: entity)
        }
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let values: [String: Value]
        let entity: String
        var codingPath: [any CodingKey] = []
        var allKeys: [Key] { values.keys.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { values[key.stringValue] != nil }

        private func value(_ key: Key) throws -> Value {
            guard let value = values[key.stringValue] else {
                throw StoreError(.unknownName, "\(entity) has no attribute \(key.stringValue)", entity: entity, property: key.stringValue)
            }
            return value
        }

        func decodeNil(forKey key: Key) throws -> Bool { try value(key) == .null }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decodeValue(type, forKey: key) }
        private func decodeValue<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            let stored = try value(key)
            if stored == .null {
                throw StoreError(.missingValue, "\(entity).\(key.stringValue) is nil; declare the property optional", entity: entity, property: key.stringValue)
            }
            if let leaf = try AttributeDecoder.leaf(type, stored, entity: entity, key: key.stringValue) { return leaf }
            return try T(from: Single(value: stored, entity: entity, key: key.stringValue))
        }

        // 128-bit integers have requirements of their own, whose defaults refuse them.
        func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try decodeValue(type, forKey: key) }
        func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try decodeValue(type, forKey: key) }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            throw StoreError(.typeMismatch, "\(entity).\(key.stringValue) is an attribute, not a nested value", entity: entity, property: key.stringValue)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw StoreError(.typeMismatch, "\(entity).\(key.stringValue) is an attribute, not a list", entity: entity, property: key.stringValue)
        }
        func superDecoder() throws -> any Decoder { Top(values: values, entity: entity) }
        func superDecoder(forKey key: Key) throws -> any Decoder { Top(values: values, entity: entity) }
    }

    /// Hands one stored value to a type such as a raw-value enum.
    struct Single: Decoder, SingleValueDecodingContainer {
        let value: Value
        let entity: String
        let key: String
        var codingPath: [any CodingKey] = []
        var userInfo: [CodingUserInfoKey: Any] = [:]

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            throw StoreError(.typeMismatch, "\(entity).\(key) is a single value", entity: entity, property: key)
        }
        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            throw StoreError(.typeMismatch, "\(entity).\(key) is a single value", entity: entity, property: key)
        }
        func singleValueContainer() throws -> any SingleValueDecodingContainer { self }
        func decodeNil() -> Bool { value == .null }
        func decode(_ type: Int128.Type) throws -> Int128 { try decodeValue(type) }
        func decode(_ type: UInt128.Type) throws -> UInt128 { try decodeValue(type) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeValue(type) }
        private func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
            if let leaf = try AttributeDecoder.leaf(type, value, entity: entity, key: key) { return leaf }
            return try T(from: self)
        }
    }
}
