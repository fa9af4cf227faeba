import CairnSupport

/// Checking values against what their property may hold (``StoredKind``), as replay and base
/// loading do for every value: a damaged or foreign record is refused, never applied.
extension ValueEncoding {
    /// The size of the value at `offset` when it is a common one that is valid for `kind` (null
    /// of an attribute, a short string, a double, date or boolean, an integer in range); 0 to
    /// leave it to ``skipChecked(_:model:entity:position:)``, which checks everything and names
    /// errors.
    @inline(__always)
    static func quickSize(_ bytes: UnsafeRawBufferPointer, at offset: Int, _ kind: StoredKind) -> Int {
        let available = bytes.count - offset
        guard available > 0, let base = bytes.baseAddress else { return 0 }
        let value = base + offset
        let size: Int
        switch (value.load(as: UInt8.self), kind) {
        case (ValueTag.null.rawValue, .relationship): return 0
        case (ValueTag.null.rawValue, _): size = 1
        case (ValueTag.string.rawValue, .string):
            guard available >= 2, case let length = value.load(fromByteOffset: 1, as: UInt8.self), length < 0x80 else { return 0 }
            size = 2 + Int(length)
        case (ValueTag.double.rawValue, .double), (ValueTag.date.rawValue, .date): size = 9
        case (ValueTag.decimal.rawValue, .decimal):
            // Up to 38 bytes, plain number text is within the fast path's digits and powers of
            // ten: its grammar is all there is to check (``isPlainDecimalText(_:)`` agrees).
            guard available >= 2, case let length = Int(value.load(fromByteOffset: 1, as: UInt8.self)), length <= decimalDigits,
                2 + length <= available, isShortPlainDecimal(UnsafeRawBufferPointer(start: value + 2, count: length))
            else { return 0 }
            size = 2 + length
        case (ValueTag.falseValue.rawValue, .boolean), (ValueTag.trueValue.rawValue, .boolean): size = 1
        case (ValueTag.integer.rawValue, .integer(let range)):
            let (raw, length) = varint(value + 1, available: available - 1)
            // A varint of at most nine bytes (63 bits) that ends within the bytes.
            guard length < 10, length < available, value.load(fromByteOffset: length, as: UInt8.self) & 0x80 == 0 else { return 0 }
            guard range.contains(Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)) else { return 0 }
            size = 1 + length
        default: return 0
        }
        return size <= available ? size : 0
    }

    /// Whether the bytes are `-?(0|[1-9][0-9]*)(\.[0-9]+)?`: plain number text, which at up to
    /// ``decimalDigits`` bytes ``isPlainDecimalText(_:)`` reads (`DecimalTextTests`).
    @inline(__always)
    static func isShortPlainDecimal(_ text: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        let end = text.count
        if index < end && text[index] == UInt8(ascii: "-") { index += 1 }
        let whole = index
        while index < end && text[index] &- UInt8(ascii: "0") < 10 { index += 1 }
        guard index > whole, index - whole == 1 || text[whole] != UInt8(ascii: "0") else { return false }
        guard index < end else { return true }
        guard text[index] == UInt8(ascii: "."), index + 1 < end else { return false }
        index += 1
        while index < end && text[index] &- UInt8(ascii: "0") < 10 { index += 1 }
        return index == end
    }

    /// Checks one value of property `position` of `entity` against what it may hold, and moves
    /// past it.
    ///
    /// - Throws: ``EncodingProblem`` naming the entity and property for a value of the wrong
    ///   kind, an integer out of its type's range, or a target of the wrong entity.
    static func skipChecked(_ reader: inout ByteReader, model: Model, entity: EntityDescription, position: Int) throws {
        let tagByte = try reader.readByte()
        guard let tag = ValueTag(rawValue: tagByte) else { throw EncodingProblem(message: "unknown value tag \(tagByte)") }
        func wrong() -> EncodingProblem {
            let name =
                position < entity.attributes.count
                ? entity.attributes[position].name : entity.relationships[position - entity.attributes.count].name
            return EncodingProblem(message: "\(entity.name).\(name) holds a value of the wrong kind (tag \(tagByte))")
        }
        let kind = entity.storedKinds[position]
        // By tag, exhaustively: a new tag is a compile error here until its check is written.
        switch tag {
        case .null:
            if case .relationship = kind { throw wrong() }
        case .string, .uri, .binary:
            switch (tag, kind) {
            case (.string, .string), (.uri, .uri), (.binary, .binary): _ = try reader.readLengthPrefixed()
            default: throw wrong()
            }
        case .integer:
            guard case .integer(let range) = kind, range.contains(try reader.readSignedVarint()) else { throw wrong() }
        case .double:
            guard case .double = kind else { throw wrong() }
            try reader.skip(8)
        case .date:
            guard case .date = kind else { throw wrong() }
            try reader.skip(8)
        case .float:
            guard case .float = kind else { throw wrong() }
            try reader.skip(4)
        case .decimal:
            guard case .decimal = kind else { throw wrong() }
            // The text the importer writes is checked in place; any other goes through `Decimal`.
            let text = try reader.readLengthPrefixed()
            guard isPlainDecimalText(text) || decimal(String(decoding: text, as: UTF8.self)) != nil else {
                throw EncodingProblem(message: "invalid decimal \(String(decoding: text, as: UTF8.self))")
            }
        case .falseValue, .trueValue:
            guard case .boolean = kind else { throw wrong() }
        case .uuid:
            guard case .uuid = kind else { throw wrong() }
            try reader.skip(16)
        case .noObject:
            guard case .relationship(toMany: false, _) = kind else { throw wrong() }
        case .object:
            guard case .relationship(toMany: false, let destination) = kind else { throw wrong() }
            try checkTarget(&reader, model: model, destination: destination, entity: entity, position: position)
        case .objects:
            guard case .relationship(toMany: true, let destination) = kind else { throw wrong() }
            let count = try reader.readCount(limit: reader.remaining)
            for _ in 0..<count { try checkTarget(&reader, model: model, destination: destination, entity: entity, position: position) }
        }
    }

    /// Reads the value of attribute `position` of `entity`, checked as
    /// ``skipChecked(_:model:entity:position:)`` checks it.
    ///
    /// - Throws: ``EncodingProblem`` for a value of the wrong kind (or a relationship's).
    static func readCheckedAttribute(_ reader: inout ByteReader, model: Model, entity: EntityDescription, position: Int) throws -> Value {
        var check = reader
        try skipChecked(&check, model: model, entity: entity, position: position)
        let tagByte = try reader.readByte()
        guard let tag = ValueTag(rawValue: tagByte) else { throw EncodingProblem(message: "unknown value tag \(tagByte)") }
        return try readAttribute(tag, &reader)
    }

    /// Reads an object ID whose entity is in `model`.
    static func readID(_ reader: inout ByteReader, model: Model) throws -> ObjectID {
        let entity = try reader.readVarint()
        guard entity < UInt64(model.descriptions.count) else { throw EncodingProblem(message: "entity index \(entity) is not in the model") }
        return ObjectID(entity: Int(entity), key: try reader.readVarint())
    }

    /// Reads an object ID and checks that it is of `destination` or a descendant.
    private static func checkTarget(_ reader: inout ByteReader, model: Model, destination: Int, entity: EntityDescription, position: Int) throws {
        let id = try readID(&reader, model: model)
        guard id.entity == destination || model.descriptions[destination].descendants.contains(id.entity) else {
            let name = entity.relationships[position - entity.attributes.count].name
            throw EncodingProblem(message: "\(entity.name).\(name) points to a \(model.descriptions[id.entity].name)")
        }
    }
}
