import CairnLog
import CairnSupport

/// The binary form of a plan, kept in its migration record so that replay follows exactly the
/// mapping that was decided when the migration ran, whatever later builds would infer.
///
/// ```
/// entity count (varint, = the new model's entities)
/// per new entity: source (varint: 0 new, else old entity index + 1), property count (varint),
///   per property: tag (u8) 0 empty | 1 old position (varint) | 2 default | 3 inverse: entity, position (varints)
/// ```
extension MigrationPlan {
    private enum Tag: UInt8 {
        case empty = 0, property, constant, inverse
    }

    func encode(into writer: inout ByteWriter) {
        writer.writeVarint(UInt64(entities.count))
        for mapping in entities {
            writer.writeVarint(mapping.source.map { UInt64($0) + 1 } ?? 0)
            writer.writeVarint(UInt64(mapping.properties.count))
            for property in mapping.properties {
                switch property {
                case .empty: writer.writeByte(Tag.empty.rawValue)
                case .property(let position):
                    writer.writeByte(Tag.property.rawValue)
                    writer.writeVarint(UInt64(position))
                case .constant: writer.writeByte(Tag.constant.rawValue)
                case .inverseOf(let entity, let position):
                    writer.writeByte(Tag.inverse.rawValue)
                    writer.writeVarint(UInt64(entity))
                    writer.writeVarint(UInt64(position))
                }
            }
        }
    }

    /// Reads a recorded plan from `source` to `destination`, checking every index against the
    /// two models.
    ///
    /// - Throws: ``EncodingProblem`` naming what does not fit.
    static func decode(_ reader: inout ByteReader, from source: Model, to destination: Model) throws -> MigrationPlan {
        func problem(_ message: String) -> EncodingProblem { EncodingProblem(message: "migration plan: " + message) }
        guard try reader.readVarint() == UInt64(destination.descriptions.count) else { throw problem("entity count differs from the model's") }
        var mappings: [EntityMapping] = []
        for entity in destination.descriptions {
            let sourceNumber = try reader.readVarint()
            guard sourceNumber <= UInt64(source.descriptions.count) else { throw problem("entity \(entity.name) comes from entity \(sourceNumber - 1)") }
            let oldEntity = sourceNumber == 0 ? nil : source.descriptions[Int(sourceNumber - 1)]
            guard try reader.readVarint() == UInt64(entity.propertyCount) else { throw problem("property count of \(entity.name) differs") }
            var properties: [Source] = []
            for position in 0..<entity.propertyCount {
                guard let tag = Tag(rawValue: try reader.readByte()) else { throw problem("unknown property tag in \(entity.name)") }
                switch tag {
                case .empty:
                    properties.append(.empty)
                case .constant:
                    guard position < entity.attributes.count else { throw problem("a relationship of \(entity.name) takes a default") }
                    properties.append(.constant(entity.attributes[position].defaultValue ?? .null))
                case .property:
                    let old = try reader.readVarint()
                    guard let oldEntity, old < UInt64(oldEntity.propertyCount),
                        (Int(old) < oldEntity.attributes.count) == (position < entity.attributes.count)
                    else {
                        throw problem("property \(position) of \(entity.name) comes from property \(old), which does not fit")
                    }
                    properties.append(.property(Int(old)))
                case .inverse:
                    let holder = try reader.readVarint(), inverse = try reader.readVarint()
                    guard holder < UInt64(destination.descriptions.count), position >= entity.attributes.count,
                        inverse >= UInt64(destination.descriptions[Int(holder)].attributes.count),
                        inverse < UInt64(destination.descriptions[Int(holder)].propertyCount)
                    else {
                        throw problem("property \(position) of \(entity.name) is filled from an inverse that does not exist")
                    }
                    properties.append(.inverseOf(entity: Int(holder), position: Int(inverse)))
                }
            }
            mappings.append(EntityMapping(source: oldEntity?.index, properties: properties))
        }
        return MigrationPlan(source: source, destination: destination, entities: mappings)
    }
}
