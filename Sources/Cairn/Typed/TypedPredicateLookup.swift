import Foundation

/// `$0.property == value`, the lookup by key an app runs in a loop, translated without walking
/// the expression: one conformance check for the whole predicate (the runtime caches it per
/// predicate type), where the general translation checks each node. Any other predicate, and
/// this one when its property is not a plain stored one or its value is nil, a Boolean or NaN,
/// takes the general translation, which gives the same result.
protocol TypedLookupNode {
    /// The property's name and the value it must equal; nil to translate the general way.
    var lookup: (name: String, value: Value)? { get }
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
