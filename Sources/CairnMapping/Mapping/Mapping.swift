import Cairn

/// How a model's objects read from and write to JSON: the entities' unique keys and the JSON
/// keys of their properties. Built once, checked against the model, and shared by imports and
/// exports.
///
/// Declared three ways (docs/MAPPING.md): in Swift, as below; in a JSON mapping file
/// (``init(model:file:)``); or not at all, from the model's userInfo as Core Data libraries
/// annotate it (``UserInfoConventions``).
///
/// ```swift
/// let mapping = try Mapping(model: model, keyStyle: .snakeCase) {
///     EntityMapping("Person", identity: "ticket") {
///         AttributeMap("ticket", from: "ticket_number")
///         AttributeMap("hired", from: "hire_date", date: .pattern("M/d/yyyy"))
///     }
/// }
/// ```
public struct Mapping: Sendable {
    /// The model mapped.
    public let model: Model
    /// How default keys are made from property names.
    public let keyStyle: KeyStyle
    /// The date format of date attributes that have none of their own.
    public let dateFormat: DateFormat
    /// Which userInfo keys are read.
    public let conventions: UserInfoConventions
    /// The entity mappings declared (entities without one map by userInfo and default keys).
    public let declared: [String: EntityMapping]
    /// Where records keep their properties (``RecordLayout/django``: a Django fixture's).
    public let layout: RecordLayout
    /// Picks each top-level record's entity in an import that names none (or a sub-entity of
    /// the one it names): a file of several entities in one run. A Django layout's default is
    /// ``EntityDiscriminator/django``.
    public let discriminator: EntityDiscriminator?
    /// Whether a key that names no object (a reference, or a record given as its key alone)
    /// makes an object holding only that key in every import through this mapping, as
    /// ``ImportOptions/insertsMissingReferences`` does for one import (the mapping file's
    /// `"insertsMissingReferences": true`).
    public var insertsMissingReferences = false
    /// Every entity's mapping as it applies, by entity index.
    let resolved: [ResolvedEntity]
    /// ``discriminator`` checked against the model.
    let recordEntity: ResolvedDiscriminator?

    /// Builds a mapping of `model` from the entity mappings given, the model's userInfo (as
    /// `conventions` say) and default keys.
    ///
    /// - Throws: ``MappingError/Code/unknownName`` when a mapping (declared, or in userInfo) names
    ///   an entity, attribute or relationship the model does not have, naming both;
    ///   ``MappingError/Code/invalidMapping`` for an entity mapped twice, a date pattern Cairn does
    ///   not read, a transformer not registered, a relationship policy no library knows.
    public init(
        model: Model, keyStyle: KeyStyle = .asIs, dateFormat: DateFormat = .standard, conventions: UserInfoConventions = .standard,
        layout: RecordLayout = .plain, discriminator: EntityDiscriminator? = nil, @MappingBuilder _ entities: () -> [EntityMapping] = { [] }
    ) throws(MappingError) {
        try self.init(
            model: model, keyStyle: keyStyle, dateFormat: dateFormat, conventions: conventions, layout: layout, discriminator: discriminator,
            entities: entities())
    }

    /// Builds a mapping of `model` from a list of entity mappings (see the builder form).
    public init(
        model: Model, keyStyle: KeyStyle = .asIs, dateFormat: DateFormat = .standard, conventions: UserInfoConventions = .standard,
        layout: RecordLayout = .plain, discriminator: EntityDiscriminator? = nil, entities: [EntityMapping]
    ) throws(MappingError) {
        self.model = model
        self.keyStyle = keyStyle
        self.dateFormat = dateFormat
        self.conventions = conventions
        self.layout = layout
        let discriminator = discriminator ?? (layout == .django ? .django : nil)
        self.discriminator = discriminator
        recordEntity = try discriminator.map { discriminator throws(MappingError) in try ResolvedDiscriminator(discriminator, model: model, family: nil) }
        var declared: [String: EntityMapping] = [:]
        for mapping in entities {
            guard model.entity(named: mapping.entity) != nil else {
                throw MappingError(.unknownName, "the mapping names entity \(mapping.entity), which the model does not have", entity: mapping.entity)
            }
            guard declared[mapping.entity] == nil else {
                throw MappingError(.invalidMapping, "entity \(mapping.entity) is mapped twice", entity: mapping.entity)
            }
            declared[mapping.entity] = mapping
        }
        self.declared = declared
        var resolver = MappingResolver(model: model, keyStyle: keyStyle, dateFormat: dateFormat, conventions: conventions, layout: layout)
        var resolved: [ResolvedEntity] = []
        for description in model.descriptions {
            resolved.append(try resolver.resolve(description, declared: declared))
        }
        self.resolved = resolved
    }

    /// The entity named `name`'s mapping as it applies.
    ///
    /// - Throws: ``MappingError/Code/unknownName`` when the model has no such entity;
    ///   ``MappingError/Code/invalidMapping`` when its userInfo asks for what Cairn cannot honour.
    func entity(_ name: String) throws(MappingError) -> ResolvedEntity {
        guard let description = model.entity(named: name) else {
            throw MappingError(.unknownName, "the model has no entity \(name)", entity: name)
        }
        let entity = resolved[description.index]
        if let refusal = entity.unhonoured { throw refusal }
        return entity
    }

    /// This mapping with another record layout and discriminator (the command line's `--django`
    /// and `--discriminator` over a mapping file).
    public func with(layout: RecordLayout, discriminator: EntityDiscriminator?) throws(MappingError) -> Mapping {
        var mapping = try Mapping(
            model: model, keyStyle: keyStyle, dateFormat: dateFormat, conventions: conventions, layout: layout, discriminator: discriminator,
            entities: declared.keys.sorted().compactMap { declared[$0] })
        mapping.insertsMissingReferences = insertsMissingReferences
        return mapping
    }

    /// A readable account of how `entity` maps: its unique key, and each property's JSON keys,
    /// format and transformer.
    public func describe(_ entity: String) throws(MappingError) -> String {
        try self.entity(entity).summary
    }
}
