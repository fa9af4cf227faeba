import Cairn
import CairnSupport

/// A ``CompositeAttribute`` struct's elements flattened into the attributes they are stored as
/// (`latitude`, or `position.latitude` for an element of a nested composite), depth first in
/// declaration order; made once per struct.
@usableFromInline
final class CompositeLayout: @unchecked Sendable {
    // Safety: immutable after init.

    /// One stored attribute of the struct.
    struct Leaf {
        /// Its key path from the struct, by name (`position.latitude`).
        var path: String
        /// The attribute type its values are stored as.
        var type: AttributeType
        /// Whether it may hold nil: its element is optional, or a composite it is in is.
        var optional: Bool
        /// How its Swift values become stored values.
        var coding: PropertyKind.ValueCoding
        /// Its element's Swift type.
        var valueType: Any.Type
        /// Its key path from the struct, where one exists (nil through an optional composite).
        var keyPath: AnyKeyPath?
    }

    /// The struct.
    let type: any CompositeAttribute.Type
    /// Its name, as the model's composite type.
    let typeName: String
    /// Its elements.
    let elements: [CompositeElement]
    /// The first leaf of each element.
    let offsets: [Int]
    /// The layout of each element of a composite type (nil for an attribute).
    let nested: [CompositeLayout?]
    /// Every stored attribute, in order.
    let leaves: [Leaf]

    private static let made = Protected<[ObjectIdentifier: CompositeLayout]>([:])

    /// The layout of `type`, or what makes it one Cairn cannot store (an element of a type that
    /// is not an attribute's, a relationship), naming the struct and the element.
    static func of(_ type: any CompositeAttribute.Type) throws(StoreError) -> CompositeLayout {
        try of(type, depth: 0)
    }

    /// Composites nest no deeper than this (a struct cannot hold itself, but a chain of types can be long).
    private static let maximumDepth = 32

    private init(_ type: any CompositeAttribute.Type, depth: Int) throws(StoreError) {
        self.type = type
        typeName = String(describing: type)
        elements = type.compositeElements
        var offsets: [Int] = [], nested: [CompositeLayout?] = [], leaves: [Leaf] = []
        guard !elements.isEmpty else {
            throw StoreError(.typeMismatch, "composite \(typeName) has no element: give it a stored property")
        }
        for element in elements {
            offsets.append(leaves.count)
            switch element.kind {
            case .attribute(let attributeType, let optional, let coding):
                nested.append(nil)
                leaves.append(
                    Leaf(path: element.name, type: attributeType, optional: optional, coding: coding, valueType: element.valueType, keyPath: element.keyPath))
            case .composite(let inner, let optional):
                guard depth < Self.maximumDepth else {
                    throw StoreError(.typeMismatch, "composite \(typeName).\(element.name): composites nest more than \(Self.maximumDepth) deep")
                }
                let layout = try CompositeLayout.of(inner, depth: depth + 1)
                nested.append(layout)
                for leaf in layout.leaves {
                    var outer = leaf
                    outer.path = element.name + "." + leaf.path
                    outer.optional = leaf.optional || optional
                    outer.keyPath = optional ? nil : leaf.keyPath.flatMap { element.keyPath.appending(path: $0) }
                    leaves.append(outer)
                }
            case .toOne, .toMany, .unsupported:
                throw StoreError(
                    .typeMismatch,
                    "composite \(typeName).\(element.name) is \(element.valueType): an element is a stored value type (String, integers, "
                        + "Double, Float, Decimal, Bool, Date, Data, UUID, URL), a RawRepresentable enum of one, a Codable value, "
                        + "or another @Composite struct; not an object")
            }
        }
        self.offsets = offsets
        self.nested = nested
        self.leaves = leaves
    }

    private static func of(_ type: any CompositeAttribute.Type, depth: Int) throws(StoreError) -> CompositeLayout {
        if let known = made.withLock({ $0[ObjectIdentifier(type)] }) { return known }
        let layout = try CompositeLayout(type, depth: depth)
        made.withLock { $0[ObjectIdentifier(type)] = layout }
        return layout
    }

    // MARK: Values

    /// The value of type `V` (the struct, or an optional of it) that the leaves' stored values
    /// hold: nil (for an optional) when all of them are nil.
    ///
    /// - Parameter lenient: Whether a nil or unreadable stored value reads as its element's
    ///   placeholder (zero, empty, false) instead of failing.
    func value<V>(_ stored: ArraySlice<Value>, as _: V.Type, lenient: Bool = false) throws -> V {
        if let optional = V.self as? any OptionalValue.Type, stored.allSatisfy({ $0 == .null }), let none = optional.none as? V {
            return none
        }
        let made = try type.init(compositeValues: CompositeValues(layout: self, stored: stored, lenient: lenient))
        if let value = made as? V { return value }
        if let optional = V.self as? any OptionalValue.Type, let value = optional.wrapping(made) as? V { return value }
        throw CompositeValues.Unreadable(path: typeName, stored: stored.first ?? .null, type: V.self)
    }

    /// The stored values of `value` (the struct, or an optional of it), one per leaf; nil when an
    /// element has no stored form (an integer above `Int64.max`, a value that does not encode).
    func storedValues(of value: Any) -> [Value]? {
        var stored: [Value] = []
        stored.reserveCapacity(leaves.count)
        return append(value, to: &stored) ? stored : nil
    }

    private func append(_ value: Any, to stored: inout [Value]) -> Bool {
        if let optional = value as? any OptionalValue {
            guard let wrapped = optional.wrapped else {
                stored += repeatElement(.null, count: leaves.count)
                return true
            }
            return append(wrapped, to: &stored)
        }
        for (index, element) in elements.enumerated() {
            guard let elementValue = value[keyPath: element.keyPath] else { return false }
            if let layout = nested[index] {
                guard layout.append(elementValue, to: &stored) else { return false }
            } else {
                guard let encoded = ValueCodec.encode(elementValue, coding: leaves[offsets[index]].coding) else { return false }
                stored.append(encoded)
            }
        }
        return true
    }
}

/// The stored values of a ``CompositeAttribute`` struct's elements, which its
/// `init(compositeValues:)` (written by `@Composite`) reads one element at a time.
public struct CompositeValues {
    /// An element's stored value that does not read as the element's type.
    public struct Unreadable: Error, CustomStringConvertible {
        /// The element's key path from the struct, by name.
        public var path: String
        /// The stored value.
        public var stored: Value
        /// The type it was read as.
        public var type: Any.Type

        /// Why the stored elements do not make the struct.
        public var description: String { "element \(path): its stored value \(stored) does not read as \(type)" }
    }

    let layout: CompositeLayout
    let stored: ArraySlice<Value>
    let lenient: Bool

    /// The value of element `index` (in declaration order).
    ///
    /// - Throws: ``Unreadable`` when its stored value does not read as `V`.
    public func value<V>(_ index: Int) throws -> V {
        guard layout.elements.indices.contains(index) else {
            throw Unreadable(path: "\(layout.typeName)[\(index)]", stored: .null, type: V.self)
        }
        let first = stored.startIndex + layout.offsets[index]
        if let inner = layout.nested[index] {
            do {
                return try inner.value(stored[first..<first + inner.leaves.count], as: V.self, lenient: lenient)
            } catch var unreadable as Unreadable {
                unreadable.path = layout.elements[index].name + "." + unreadable.path
                throw unreadable
            }
        }
        let leaf = layout.leaves[layout.offsets[index]]
        if let value = ValueCodec.decode(stored[first], as: V.self, coding: leaf.coding) as? V { return value }
        if lenient, let placeholder = ValueCodec.placeholder(V.self) as? V { return placeholder }
        throw Unreadable(path: leaf.path, stored: stored[first], type: V.self)
    }
}
