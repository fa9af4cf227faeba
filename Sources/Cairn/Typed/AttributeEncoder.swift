import Foundation

/// Encodes a `StoredModel` into attribute values by property name.
struct AttributeEncoder {
    static func encode<T: Encodable>(_ value: T, entity: EntityDescription) throws -> [String: Value] {
        let storage = Storage()
        try value.encode(to: TopEncoder(storage: storage, entity: entity.name))
        for name in storage.values.keys where entity.attributePosition(name) == nil {
            throw StoreError(
                .unknownName, "\(T.self) has property \(name), which \(entity.name) has no attribute for",
                entity: entity.name, property: name)
        }
        return storage.values
    }

    /// Converts the leaf types the store knows; nil for others (encoded through their own
    /// `encode(to:)`, which must produce a single value).
    ///
    /// - Throws: ``StoreError/Code/typeMismatch`` for an integer beyond 64 bits, signed.
    static func leaf(_ value: Any, entity: String, property: String?) throws -> Value? {
        switch value {
        case let bytes as [UInt8]: .binary(bytes)
        case let known as any AttributeValue:
            try known.storedValue
                ?? {
                    throw StoreError(.typeMismatch, "\(known) does not fit an integer attribute (64 bits, signed)", entity: entity, property: property)
                }()
        // Any other standard integer or floating-point type (UInt, UInt64, Int128, Float16…):
        // converted here, so that it never reaches its own `encode(to:)`, which would hand
        // itself to this encoder again.
        case let number as any BinaryInteger:
            try Int64(exactly: number).map(Value.integer)
                ?? {
                    throw StoreError(.typeMismatch, "\(number) does not fit an integer attribute (64 bits, signed)", entity: entity, property: property)
                }()
        case let number as any BinaryFloatingPoint:
            // By its type, whatever the value: as a float (for a float attribute) when the type
            // holds no more than a float does (Float16), else as a double (Float80…).
            Self.fitsFloat(type(of: number)) ? .float(Float(number)) : .double(Double(number))
        default: nil
        }
    }

    private static func fitsFloat(_ type: any BinaryFloatingPoint.Type) -> Bool {
        type.significandBitCount <= Float.significandBitCount && type.exponentBitCount <= Float.exponentBitCount
    }

    final class Storage {
        var values: [String: Value] = [:]
    }

    struct TopEncoder: Encoder {
        let storage: Storage
        let entity: String
        var codingPath: [any CodingKey] = []
        var userInfo: [CodingUserInfoKey: Any] = [:]

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(Keyed<Key>(storage: storage, entity: entity))
        }
        func unkeyedContainer() -> any UnkeyedEncodingContainer { Refusing(entity: entity, codingPath: codingPath) }
        func singleValueContainer() -> any SingleValueEncodingContainer { Single(entity: entity, codingPath: codingPath) { _ in } }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let storage: Storage
        let entity: String
        var codingPath: [any CodingKey] = []

        mutating func encodeNil(forKey key: Key) throws { storage.values[key.stringValue] = .null }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try encodeValue(value, forKey: key) }
        private mutating func encodeValue<T: Encodable>(_ value: T, forKey key: Key) throws {
            if let leaf = try AttributeEncoder.leaf(value, entity: entity, property: key.stringValue) {
                storage.values[key.stringValue] = leaf
                return
            }
            var captured: Value?
            try value.encode(to: Single(entity: entity, codingPath: codingPath + [key]) { captured = $0 })
            guard let captured else {
                throw StoreError(.typeMismatch, "\(T.self) does not encode as a single attribute value", entity: entity, property: key.stringValue)
            }
            storage.values[key.stringValue] = captured
        }
        // 128-bit integers have requirements of their own, whose defaults refuse them.
        mutating func encode(_ value: Int128, forKey key: Key) throws { try encodeValue(value, forKey: key) }
        mutating func encode(_ value: UInt128, forKey key: Key) throws { try encodeValue(value, forKey: key) }
        // A typed value is the whole object: a nil property clears the attribute. The protocol's
        // own defaults for these types skip nil, which would leave the stored value as it was.
        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
            if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
        }
        mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try encodeIfPresent(value as (any Encodable)?, key) }
        mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try encodeIfPresent(value as (any Encodable)?, key) }
        mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try encodeIfPresent(value as (any Encodable)?, key) }
        mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try encodeIfPresent(value as (any Encodable)?, key) }
        mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try encodeIfPresent(value as (any Encodable)?, key) }
        mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try encodeIfPresent(value as (any Encodable)?, key) }
        mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try encodeIfPresent(value as (any Encodable)?, key) }
        mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try encodeIfPresent(value as (any Encodable)?, key) }
        mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try encodeIfPresent(value as (any Encodable)?, key) }
        mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try encodeIfPresent(value as (any Encodable)?, key) }
        mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try encodeIfPresent(value as (any Encodable)?, key) }
        mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try encodeIfPresent(value as (any Encodable)?, key) }
        mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try encodeIfPresent(value as (any Encodable)?, key) }
        mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try encodeIfPresent(value as (any Encodable)?, key) }
        mutating func encodeIfPresent(_ value: Int128?, forKey key: Key) throws { try encodeIfPresent(value as (any Encodable)?, key) }
        mutating func encodeIfPresent(_ value: UInt128?, forKey key: Key) throws { try encodeIfPresent(value as (any Encodable)?, key) }
        private mutating func encodeIfPresent(_ value: (any Encodable)?, _ key: Key) throws {
            if let value { try encodeValue(value, forKey: key) } else { try encodeNil(forKey: key) }
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Keyed<NestedKey>(storage: Storage(), entity: entity, codingPath: codingPath + [key]))
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            Refusing(entity: entity, codingPath: codingPath + [key])
        }
        mutating func superEncoder() -> any Encoder { TopEncoder(storage: storage, entity: entity) }
        mutating func superEncoder(forKey key: Key) -> any Encoder { TopEncoder(storage: storage, entity: entity) }
    }

    /// Captures the one value a type such as a raw-value enum encodes.
    struct Single: SingleValueEncodingContainer, Encoder {
        let entity: String
        var codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] = [:]
        let capture: (Value) -> Void

        init(entity: String, codingPath: [any CodingKey], capture: @escaping (Value) -> Void) {
            self.entity = entity
            self.codingPath = codingPath
            self.capture = capture
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(Keyed<Key>(storage: Storage(), entity: entity, codingPath: codingPath))
        }
        func unkeyedContainer() -> any UnkeyedEncodingContainer { Refusing(entity: entity, codingPath: codingPath) }
        func singleValueContainer() -> any SingleValueEncodingContainer { self }

        mutating func encodeNil() throws { capture(.null) }
        mutating func encode(_ value: Int128) throws { try encodeValue(value) }
        mutating func encode(_ value: UInt128) throws { try encodeValue(value) }
        mutating func encode<T: Encodable>(_ value: T) throws { try encodeValue(value) }
        private mutating func encodeValue<T: Encodable>(_ value: T) throws {
            if let leaf = try AttributeEncoder.leaf(value, entity: entity, property: codingPath.last?.stringValue) {
                capture(leaf)
            } else {
                try value.encode(to: self)
            }
        }
    }

    /// Collections are not attributes: stores nothing (the keyed container then reports the
    /// property as not a single value).
    struct Refusing: UnkeyedEncodingContainer {
        let entity: String
        var codingPath: [any CodingKey]
        var count = 0
        mutating func encodeNil() throws {}
        mutating func encode<T: Encodable>(_ value: T) throws {}
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Keyed<NestedKey>(storage: Storage(), entity: entity, codingPath: codingPath))
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
        mutating func superEncoder() -> any Encoder { TopEncoder(storage: Storage(), entity: entity) }
    }
}
