import CairnModels

enum Shelf: String, Codable, CaseIterable {
    case fiction, science
}

enum Priority: Int, Codable {
    case low = 1
    case high = 9
}

struct Dimensions: Codable, Hashable {
    var width: Double
    var height: Double
}

/// A class with a property of every kind of value Cairn stores.
@Managed final class Specimen {
    @Attribute(.unique) var code: String
    var text: String?
    var int: Int = 0
    var int8: Int8 = 0
    var int16: Int16 = 0
    var int32: Int32 = 0
    var int64: Int64 = 0
    var uint8: UInt8 = 0
    var uint32: UInt32 = 0
    var double: Double = 0
    var float: Float = 0
    var decimal: Decimal = 0
    var flag: Bool = false
    var date: Date?
    var bytes: Data?
    var uuid: UUID?
    var url: URL?
    var shelf: Shelf = .fiction
    var priority: Priority?
    var tags: [String] = []
    var size: Dimensions?
    @Transient var scratch = 0
    @Attribute(.ephemeral) var note: String?

    var shout: String { text?.uppercased() ?? "" }

    init(code: String) { self.code = code }
}
