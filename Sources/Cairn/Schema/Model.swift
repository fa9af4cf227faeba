/// A schema: the entities of a store, checked and resolved.
///
/// ```swift
/// let model = try Model {
///     Entity("Author") {
///         Attribute("name", .string, optional: false)
///         Relationship("books", to: "Book", inverse: "author", .toMany(ordered: false), deleteRule: .cascade)
///         Unique("name")
///     }
///     Entity("Book") {
///         Attribute("title", .string, optional: false)
///         Relationship("author", to: "Author", inverse: "books")
///     }
/// }
/// ```
///
/// Building a model checks it: unknown destinations, inverses that do not point back, duplicate
/// names, constraints on unknown attributes and defaults of the wrong type throw a
/// ``ModelError`` naming the entity and property.
public struct Model: Sendable, Hashable, CustomStringConvertible {
    /// The entities, sorted by name. An entity's position here is its index.
    public let entities: [Entity]
    /// The resolved entities, in the same order.
    public let descriptions: [EntityDescription]
    /// Free-form metadata of the whole model (Xcode models keep mapping hints here).
    public let userInfo: [String: String]
    /// Named subsets of the entities (Xcode's configurations): configuration name → entity names.
    public let configurations: [String: [String]]
    /// The composite types the entities' composite attributes name, sorted by name.
    public let composites: [Composite]
    /// What the file the model was read from says that Cairn loaded otherwise than written
    /// (an Xcode model's defaults the model compiler converts or drops, inverses that do not
    /// point back…), one entry each. Empty for a model built in Swift or read from JSON. Not
    /// part of the model: models that differ only in warnings are equal.
    public internal(set) var warnings: [ModelWarning] = []
    /// The class each entity's objects are made of, by entity name, as an Xcode model's
    /// `representedClassName` says (a typed `@Managed` class of CairnModels binds to the entity
    /// its name matches, or whose name it has). Not part of the model: models that differ only
    /// in class names are equal.
    public var classNames: [String: String] = [:]
    /// Entity positions by name.
    private let names: NameTable
    /// The attributes the store indexes.
    let indexLayout: IndexLayout
    /// Every entity's stored kinds in one array.
    let storedKindTable: StoredKindTable

    /// Builds and checks a model.
    public init(
        _ entities: [Entity], userInfo: [String: String] = [:], configurations: [String: [String]] = [:], composites: [Composite] = []
    ) throws(ModelError) {
        // Checking a model costs more than linear time in its entities; real models have a few
        // hundred at most, and a forged model record must not tie up the machine.
        guard entities.count <= Self.maximumEntityCount else {
            throw ModelError(.invalidFormat, "the model has \(entities.count) entities; at most \(Self.maximumEntityCount) are allowed")
        }
        let sorted = entities.sorted { $0.name < $1.name }
        self.entities = sorted
        self.userInfo = userInfo
        self.configurations = configurations.mapValues { $0.sorted() }
        self.composites = composites.sorted { $0.name < $1.name }
        let compositesByName = try Self.checkComposites(composites)
        var positions: [String: Int] = [:]
        for (index, entity) in sorted.enumerated() {
            guard Self.isValidName(entity.name) else {
                throw ModelError(.invalidName, "entity name \(Self.shown(entity.name)) is not valid", entity: Self.clipped(entity.name))
            }
            guard positions.updateValue(index, forKey: entity.name) == nil else {
                throw ModelError(.duplicateName, "two entities are named \(entity.name)", entity: entity.name)
            }
        }
        names = NameTable(sorted.map(\.name))
        for (configuration, members) in configurations.sorted(by: { $0.key < $1.key }) {
            if let unknown = members.first(where: { positions[$0] == nil }) {
                throw ModelError(.unknownConfigurationMember, "configuration \(configuration) names entity \(unknown), which does not exist", entity: unknown)
            }
        }
        self.descriptions = try ModelResolver(entities: sorted, positions: positions, composites: compositesByName).resolve()
        self.indexLayout = IndexLayout(descriptions)
        self.storedKindTable = StoredKindTable(descriptions)
    }

    /// Builds and checks a model written with the result-builder syntax.
    public init(composites: [Composite] = [], @ModelBuilder _ content: () -> [Entity]) throws(ModelError) {
        try self.init(content(), composites: composites)
    }

    /// The resolved entity with this name.
    public func entity(named name: String) -> EntityDescription? {
        names.position(name).map { descriptions[$0] }
    }

    /// The same entities, userInfo, configurations and composites.
    public static func == (lhs: Model, rhs: Model) -> Bool {
        lhs.entities == rhs.entities && lhs.userInfo == rhs.userInfo && lhs.configurations == rhs.configurations
            && lhs.composites == rhs.composites
    }
    /// Hashes the entities.
    public func hash(into hasher: inout Hasher) { hasher.combine(entities) }

    /// The entity names, as `Model(Author, Book)`.
    public var description: String { "Model(" + entities.map(\.name).joined(separator: ", ") + ")" }

    /// The most entities a model may have.
    public static let maximumEntityCount = 4096
    /// The most attributes the entities may hold together, counting in each entity those it
    /// inherits and one per composite element: real models have a few thousand; a forged one
    /// must not make millions.
    public static let maximumAttributeCount = 1 << 18

    /// The longest name (in UTF-8 bytes) of an entity, property or composite: real ones are a
    /// few dozen bytes; a forged one must not fill every error message and record that names it.
    public static let maximumNameLength = 1024

    /// A name, valid: a letter or `_`, then letters, digits or `_`, at most
    /// ``maximumNameLength`` bytes.
    static func isValidName(_ name: String) -> Bool {
        guard name.utf8.count <= maximumNameLength, let first = name.first, first.isLetter || first == "_" else { return false }
        return name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
    }

    /// A name for an error's entity or property: a long one cut short.
    static func clipped(_ name: String) -> String {
        name.utf8.count > 64 ? name.prefix(32) + "…" : name
    }

    /// A name quoted for an error message: a long one cut short, with its length.
    static func shown(_ name: String) -> String {
        let bytes = name.utf8.count
        guard bytes > 64 else { return "\"\(name)\"" }
        return "\"\(name.prefix(32))…\" (\(bytes) bytes\(bytes > maximumNameLength ? ", more than the \(maximumNameLength) a name may have" : ""))"
    }
}
