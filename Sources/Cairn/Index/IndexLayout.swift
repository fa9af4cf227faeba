/// Which attributes the store indexes: for each entity, the attributes marked indexed and the
/// first attribute of each of its (and its ancestors') fetch indexes. Each (entity, attribute)
/// pair has a slot, holding its ``AttributeIndex`` in every snapshot.
struct IndexLayout: Sendable {
    struct Slot: Sendable, Hashable {
        var entity: Int
        var position: Int
    }

    /// Every slot, in a fixed order.
    let slots: [Slot]
    /// Per entity: (attribute position, slot number).
    let byEntity: [[(position: Int, slot: Int)]]
    /// Per slot: how its attribute's values pack into 64 bits, when they do.
    let kinds: [PackedKind?]
    private let numbers: [Slot: Int]

    init(_ descriptions: [EntityDescription]) {
        var slots: [Slot] = []
        var byEntity: [[(Int, Int)]] = []
        for entity in descriptions {
            var positions: [Int] = entity.attributes.indices.filter { entity.attributes[$0].isIndexed && !entity.attributes[$0].isTransient }
            var ancestor: EntityDescription? = entity
            while let current = ancestor {
                for index in current.entity.fetchIndexes {
                    if let first = index.elements.first, let position = entity.attributePosition(first.attribute) { positions.append(position) }
                }
                ancestor = current.parentIndex.map { descriptions[$0] }
            }
            var own: [(Int, Int)] = []
            for position in Set(positions).sorted() {
                own.append((position, slots.count))
                slots.append(Slot(entity: entity.index, position: position))
            }
            byEntity.append(own)
        }
        self.slots = slots
        self.byEntity = byEntity
        kinds = slots.map { PackedKind(descriptions[$0.entity].attributes[$0.position].type) }
        numbers = Dictionary(uniqueKeysWithValues: slots.enumerated().map { ($1, $0) })
    }

    /// The slot of an attribute of an entity, when it is indexed.
    func slot(entity: Int, position: Int) -> Int? { numbers[Slot(entity: entity, position: position)] }

    /// An empty index for every slot.
    func emptyIndexes() -> [AttributeIndex] { kinds.map { AttributeIndex(kind: $0) } }
}

/// The index of one indexed attribute of one entity: an ordered index, and a hash index
/// (value hash → objects) for `==` and `IN` when the values do not pack into 64 bits. Packed
/// values answer `==` from the ordered index: a binary search over 16-byte entries costs little
/// more than a hash lookup, and a second index of the same values would double the memory.
struct AttributeIndex: Sendable {
    private(set) var hashed: HashIndex?
    private(set) var ordered: OrderedIndex

    /// An empty index of an attribute whose values pack as `kind` (nil: they do not).
    init(kind: PackedKind?) {
        hashed = kind == nil ? HashIndex() : nil
        ordered = OrderedIndex(kind: kind)
    }

    /// An index of these parts, built at once.
    init(hashed: HashIndex?, ordered: OrderedIndex) {
        self.hashed = hashed
        self.ordered = ordered
    }

    mutating func insert(_ value: Value, _ id: ObjectID) {
        guard value != .null else { return }
        hashed?.insert(id, hash: IndexKey.hash(value))
        ordered.insert(value, id)
    }

    /// Files the values of many new objects of `entity` at once (a large save's inserts):
    /// `filings` in the hash index, `gathered` (sorted) in the ordered index
    /// (``OrderedIndex/insert(_:entity:)``).
    mutating func insert(gathered: OrderedIndex.Builder, filings: [(hash: UInt64, key: UInt64)], entity: Int) {
        for filing in filings { hashed?.insert(ObjectID(entity: entity, key: filing.key), hash: filing.hash) }
        ordered.insert(gathered, entity: entity)
    }

    mutating func remove(_ value: Value, _ id: ObjectID) {
        guard value != .null else { return }
        hashed?.remove(id, hash: IndexKey.hash(value))
        ordered.remove(value, id)
    }

    /// Appends the objects of `entity` filed under a value equal to `value` (with a hash index,
    /// a superset: those whose values share its hash), in the order of their keys.
    func appendObjects(equalTo value: Value, entity: Int, to ids: inout [ObjectID]) {
        if let hashed {
            hashed.appendObjects(hash: IndexKey.hash(value), entity: entity, to: &ids)
        } else {
            ids += ObjectID.ordered(ordered.objects(equalTo: value, entity: entity))
        }
    }

    /// Whether the indexes file `id` under `value` (a nil value is never filed).
    func contains(_ value: Value, _ id: ObjectID) -> Bool {
        guard value != .null, ordered.contains(value, id) else { return false }
        guard let hashed else { return true }
        var filed: [ObjectID] = []
        hashed.appendObjects(hash: IndexKey.hash(value), entity: id.entity, to: &filed)
        return filed.contains(id)
    }
}
