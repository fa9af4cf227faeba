import Cairn

/// Swift values of persisted attributes to stored values and back: values of the scalar types
/// as they are, `RawRepresentable` values as their raw values, `Codable` values as JSON text
/// (keys sorted, so that equal values are equal text: a query compares them for equality).
enum ValueCodec {
    /// The stored form of `value`, a value of a property of `kind`; nil when it has none (an
    /// unsigned integer above `Int64.max`, a value that does not encode).
    static func encode(_ value: Any, coding: PropertyKind.ValueCoding) -> Value? {
        if let optional = value as? any OptionalValue {
            guard let wrapped = optional.wrapped else { return .null }
            return encode(wrapped, coding: coding)
        }
        switch coding {
        case .scalar:
            return (value as? any AttributeValue)?.storedValue
        case .rawValue:
            guard let raw = (value as? any RawRepresentable)?.rawValue else { return nil }
            return (raw as? any AttributeValue)?.storedValue
        case .json:
            guard let encodable = value as? any Encodable, let text = try? CodableText.encode(encodable) else { return nil }
            return .string(text)
        }
    }

    /// The Swift value of `type` that `stored` holds; nil when it holds none (nil for a
    /// non-optional type, a value of another kind, JSON that does not decode).
    static func decode(_ stored: Value, as type: Any.Type, coding: PropertyKind.ValueCoding) -> Any? {
        if let optional = type as? any OptionalValue.Type {
            if stored == .null { return optional.none }
            return decode(stored, as: optional.wrappedType, coding: coding).flatMap(optional.wrapping)
        }
        switch coding {
        case .scalar:
            guard let scalar = type as? any AttributeValue.Type else { return nil }
            return scalar.init(storedValue: stored)
        case .rawValue:
            guard let raw = type as? any RawRepresentable.Type else { return nil }
            return decodeRaw(stored, raw)
        case .json:
            guard case .string(let text) = stored, let decodable = type as? any Decodable.Type else { return nil }
            return try? CodableText.decode(decodable, from: text)
        }
    }

    private static func decodeRaw<R: RawRepresentable>(_ stored: Value, _ type: R.Type) -> R? {
        guard let rawType = R.RawValue.self as? any AttributeValue.Type, let raw = rawType.init(storedValue: stored) as? R.RawValue else {
            return nil
        }
        return R(rawValue: raw)
    }

    /// The scalar type of a `RawRepresentable` type's raw values; nil when they are not one.
    static func rawScalarType(_ type: any RawRepresentable.Type) -> (any ScalarAttribute.Type)? {
        func raw<R: RawRepresentable>(_: R.Type) -> (any ScalarAttribute.Type)? { R.RawValue.self as? any ScalarAttribute.Type }
        return raw(type)
    }

    /// What a property of `type` reads as when there is nothing to read: nil, an empty array,
    /// a scalar's placeholder (zero, empty, false), a raw enum's first case, a composite or a
    /// `Codable` value made of such values, a new object for a to-one; nil when the type has no
    /// such value (an enum with neither `CaseIterable` nor an empty raw value).
    static func placeholder(_ type: Any.Type) -> Any? {
        if let optional = type as? any OptionalValue.Type { return optional.none }
        if let many = type as? any ToManyValue.Type { return many.make([]) }
        if let scalar = type as? any ScalarAttribute.Type { return scalar.placeholder }
        if let collection = type as? any RangeReplaceableCollection.Type { return collection.init() }
        if let cases = type as? any CaseIterable.Type { return cases.allCases.first }
        // A to-one that points to no object: a stand-in, a new object of the class that no
        // context takes (a `Codable` class too: never its decoder).
        if let model = type as? any ManagedModel.Type { return model.init(managedState: ManagedState(standIn: ())) }
        if let composite = type as? any CompositeAttribute.Type { return compositePlaceholder(composite) }
        if let decodable = type as? any Decodable.Type { return PlaceholderDecoder.placeholder(decodable) }
        return nil
    }

    /// A composite struct whose every element reads as its own placeholder.
    private static func compositePlaceholder<C: CompositeAttribute>(_ type: C.Type) -> C? {
        guard let layout = try? CompositeLayout.of(type) else { return nil }
        return try? layout.value(ArraySlice(repeatElement(Value.null, count: layout.leaves.count)), as: C.self, lenient: true)
    }
}
