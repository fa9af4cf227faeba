/// How one attribute reads from and writes to JSON.
///
/// ```swift
/// AttributeMap("salary", from: "pay.salary", "salary")   // first key path present wins
/// AttributeMap("born", from: "birth_date", date: .pattern("M/d/yyyy"))
/// ```
public struct AttributeMap: Sendable, Hashable {
    /// The attribute's name (a composite element by its key path: `address.city`).
    public var attribute: String
    /// The JSON keys or dotted key paths it reads, in order: the first one present wins. Export
    /// writes the first. Empty: the mapping's default key for the attribute.
    public var keyPaths: [String]
    /// How a date is written (nil: the entity's, else ISO 8601).
    public var dateFormat: DateFormat?
    /// The ``MappingTransformer`` that turns its JSON into a value and back, by registered name.
    public var transformer: String?
    /// Whether a number given as a string (and a string given as a number) converts to what the
    /// attribute holds. On by default.
    public var coercesText: Bool

    /// Maps `attribute` from the key paths given (none: the default key).
    public init(_ attribute: String, from keyPaths: String..., date: DateFormat? = nil, transformer: String? = nil, coercesText: Bool = true) {
        self.init(attribute, keyPaths: keyPaths, date: date, transformer: transformer, coercesText: coercesText)
    }

    /// Maps `attribute` from the key paths given (none: the default key).
    public init(_ attribute: String, keyPaths: [String], date: DateFormat? = nil, transformer: String? = nil, coercesText: Bool = true) {
        self.attribute = attribute
        self.keyPaths = keyPaths
        self.dateFormat = date
        self.transformer = transformer
        self.coercesText = coercesText
    }
}

/// What happens to the objects a relationship held when an import gives it new ones.
public enum RelationshipPolicy: String, Sendable, Hashable, CaseIterable {
    /// Each nested record makes a new object; the objects the relationship held before, not among
    /// the new ones, are deleted (WTAData's `Replace`). The default.
    case replace
    /// Nested records update the related objects with the same unique key (identity kept) and
    /// insert the others; objects the relationship held that the input does not name stay.
    case merge
    /// As ``merge``, and the objects the relationship held that the input does not name are
    /// deleted.
    case mergeAndPrune

    /// Reads a policy as WTAData and mapping files write it: `Replace`, `Merge`, `MergeAndPrune`
    /// (any case, `merge_and_prune` too).
    public init?(name: String) {
        switch name.lowercased().replacingOccurrences(of: "_", with: "").replacingOccurrences(of: "-", with: "") {
        case "replace": self = .replace
        case "merge": self = .merge
        case "mergeandprune": self = .mergeAndPrune
        default: return nil
        }
    }
}

/// How one relationship reads from and writes to JSON: nested objects (or arrays of them), or
/// references by key (`"author_id": 101`, `"tags": [1, 2]`).
///
/// ```swift
/// RelationshipMap("books", policy: .merge)
/// RelationshipMap("author", from: "author_id")   // a key: links the Author whose unique key is 101
/// ```
public struct RelationshipMap: Sendable, Hashable {
    /// The relationship's name.
    public var relationship: String
    /// The JSON keys or dotted key paths it reads, in order: the first one present wins.
    public var keyPaths: [String]
    /// What happens to the objects it held before.
    public var policy: RelationshipPolicy
    /// The destination's attributes a reference by key names (nil: the destination's identity).
    /// MagicalRecord's `relatedByAttribute`.
    public var relatedBy: [String]?

    /// Maps `relationship` from the key paths given (none: the default key).
    public init(_ relationship: String, from keyPaths: String..., policy: RelationshipPolicy = .replace, relatedBy: [String]? = nil) {
        self.init(relationship, keyPaths: keyPaths, policy: policy, relatedBy: relatedBy)
    }

    /// Maps `relationship` from the key paths given (none: the default key).
    public init(_ relationship: String, keyPaths: [String], policy: RelationshipPolicy = .replace, relatedBy: [String]? = nil) {
        self.relationship = relationship
        self.keyPaths = keyPaths
        self.policy = policy
        self.relatedBy = relatedBy
    }
}
