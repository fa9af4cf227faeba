import CairnSupport
import Foundation

/// `$0.property == value`, the lookup by key an app runs in a loop, translated without walking
/// the expression: one conformance check for the whole predicate, made once per predicate type
/// (``TypedLookups``), where the general translation checks each node. Any other predicate, and
/// this one when its property is not a plain stored one or its value is nil, a Boolean or NaN,
/// takes the general translation, which gives the same result.
protocol TypedLookupNode {
    /// The property's name and the value it must equal; nil to translate the general way.
    var lookup: (name: String, value: Value)? { get }
}

extension TypedLookupNode {
    /// The lookup of `expression`, when it is an expression of this type. (Opened and compared
    /// by type, not cast: a cast to `Self` from an existential boxes the value in an `Any` and
    /// instantiates `Optional<Self>`'s metadata at each call.)
    static func lookup(in expression: any StandardPredicateExpression<Bool>) -> (name: String, value: Value)? {
        func opened<E: StandardPredicateExpression<Bool>>(_ expression: E) -> (name: String, value: Value)? {
            guard E.self == Self.self else { return nil }
            return withUnsafePointer(to: expression) { $0.withMemoryRebound(to: Self.self, capacity: 1) { $0.pointee.lookup } }
        }
        return opened(expression)
    }
}

/// Which predicate expression types are lookups, by type. A cast to a protocol that types
/// conform to conditionally goes through the runtime's conformance cache and instantiates the
/// conditional witness table at every call (most of the translation's time in a loop of
/// lookups); a cast to the type found once is a comparison of types. (One lock for the process:
/// a lookup holds it for one dictionary read.)
enum TypedLookups {
    private static let known = Protected<[ObjectIdentifier: KnownType]>([:])

    /// A type, and whether it is a lookup's.
    private struct KnownType {
        var node: (any TypedLookupNode.Type)?
    }

    /// The lookup `expression` stands for, if it is `$0.property == value`.
    static func lookup(_ expression: any StandardPredicateExpression<Bool>) -> (name: String, value: Value)? {
        let type = Swift.type(of: expression)
        let key = ObjectIdentifier(type)
        let node: (any TypedLookupNode.Type)?
        if let known = known.withLock({ $0[key] }) {
            node = known.node
        } else {
            node = type as? any TypedLookupNode.Type
            // (Bounded: one entry per expression type the program's predicates have.)
            known.withLock { $0[key] = KnownType(node: node) }
        }
        return node?.lookup(in: expression)
    }
}

/// The predicate's own variable (`$0`).
protocol TypedLookupVariable {}

/// `$0.property`, of a type that names its key paths.
protocol TypedLookupProperty {
    var lookupName: String? { get }
}

/// A constant of a type the store holds as it is.
protocol TypedLookupConstant {
    var lookupValue: Value? { get }
}

extension PredicateExpressions.Variable: TypedLookupVariable {}

extension PredicateExpressions.KeyPath: TypedLookupProperty where Root: TypedLookupVariable, Root.Output: PredicateKeyPathNaming {
    var lookupName: String? {
        guard let property = Root.Output.predicateProperty(for: keyPath), !property.storesJSON else { return nil }
        return property.name
    }
}

extension PredicateExpressions.Value: TypedLookupConstant where Output: AttributeValue {
    var lookupValue: Value? {
        // (nil and Booleans take the general translation: `== nil` and a Boolean property as a
        // condition have forms of their own there; so does NaN, which it refuses.)
        switch value.storedValue {
        case .null?, .boolean?, nil: return nil
        case let stored? where stored.isNaN: return nil
        case let stored?: return stored
        }
    }
}

extension PredicateExpressions.Equal: TypedLookupNode where LHS: TypedLookupProperty, RHS: TypedLookupConstant {
    var lookup: (name: String, value: Value)? {
        guard let name = lhs.lookupName, let value = rhs.lookupValue else { return nil }
        return (name, value)
    }
}
