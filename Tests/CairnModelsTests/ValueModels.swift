import Foundation
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

extension Specimen {
    /// A specimen with a value of every scalar kind set, none left at its default (the value
    /// tests' object); `tags`, `size` and `note` are the caller's.
    static func withEveryValue(code: String, date: Date, uuid: UUID) -> Specimen {
        let specimen = Specimen(code: code)
        specimen.text = "héllo"
        specimen.int = -42
        specimen.int8 = -8
        specimen.int16 = 1600
        specimen.int32 = 320_000
        specimen.int64 = .max
        specimen.uint8 = 255
        specimen.uint32 = .max
        specimen.double = 2.5
        specimen.float = 1.25
        specimen.decimal = Decimal(string: "12345.6789") ?? 0
        specimen.flag = true
        specimen.date = date
        specimen.bytes = Data([0, 1, 2, 255])
        specimen.uuid = uuid
        specimen.url = URL(string: "https://example.com/a?b=c")
        specimen.shelf = .science
        specimen.priority = .high
        return specimen
    }
}
