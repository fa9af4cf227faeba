/// Which attributes the store indexes: for each entity, the attributes marked indexed and the
/// first attribute of each of its (and its ancestors') fetch indexes. Each (entity, attribute)
/// pair has a slot, holding a hash index and an ordered index in every snapshot.
struct IndexLayout: Sendable {
    struct Slot: Sendable, Hashable {
        var entity: Int
        var position: Int
    }

    /// Every slot, in a fixed order.
    let slots: [Slot]
    /// Per entity: (attribute position, slot number).
    let byEntity: [[(position: Int, slot: Int)]]
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
        numbers = Dictionary(uniqueKeysWithValues: slots.enumerated().map { ($1, $0) })
    }

    /// The slot of an attribute of an entity, when it is indexed.
    func slot(entity: Int, position: Int) -> Int? { numbers[Slot(entity: entity, position: position)] }
}

/// The two indexes of one indexed attribute of one entity.
struct AttributeIndex: Sendable {
    var hashed = HashIndex()
    var ordered = OrderedIndex()

    mutating func insert(_ value: Value, _ id: ObjectID) {
        guard value != .null else { return }
        hashed.insert(id, hash: IndexKey.hash(value))
        ordered.insert(value, id)
    }

    mutating func remove(_ value: Value, _ id: ObjectID) {
        guard value != .null else { return }
        hashed.remove(id, hash: IndexKey.hash(value))
        ordered.remove(value, id)
    }

    /// Whether both indexes file `id` under `value` (a nil value is never filed).
    func contains(_ value: Value, _ id: ObjectID) -> Bool {
        guard value != .null else { return false }
        var filed: [ObjectID] = []
        hashed.appendObjects(hash: IndexKey.hash(value), entity: id.entity, to: &filed)
        return filed.contains(id) && ordered.contains(value, id)
    }
}
