/// Records shaped like what an app saves: small JSON documents and compact binary change
/// records of the same data, so that compression is measured on realistic bytes.
struct SampleRecords {
    private var state: UInt64
    private var counter: UInt64 = 0

    init(seed: UInt64) { state = seed | 1 }

    private mutating func random() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }

    private mutating func below(_ bound: Int) -> Int { Int(random() % UInt64(bound)) }

    private static let given = [
        "Amelia", "Olivia", "Noah", "Liam", "Mia", "Lucas", "Emma", "Hugo", "Lea", "Jonas",
        "Sofia", "Mateo", "Nora", "Elias", "Alba", "Oskar", "Ines", "Felix", "Maja", "Leon"
    ]
    private static let family = [
        "Martin", "Bernard", "Dubois", "Garcia", "Müller", "Schmidt", "Rossi", "Novak",
        "Jensen", "Silva", "Kowalski", "Nielsen", "Horvath", "Lindqvist", "Moreau", "Costa"
    ]
    private static let streets = ["Rue de la Paix", "Hauptstraße", "Via Roma", "Calle Mayor", "Baker Street", "Nørregade"]
    private static let cities = ["Lyon", "Berlin", "Milano", "Madrid", "London", "København", "Porto", "Kraków"]
    private static let statuses = ["active", "pending", "suspended", "closed"]

    private struct Person {
        var id: UInt64, given: String, family: String, email: String, street: String, number: Int
        var city: String, birthYear: Int, score: Int, status: String, updated: String
    }

    private mutating func person() -> Person {
        counter += 1
        let given = Self.given[below(Self.given.count)], family = Self.family[below(Self.family.count)]
        return Person(
            id: counter, given: given, family: family,
            email: "\(given.lowercased()).\(family.lowercased())\(below(100))@example.com",
            street: Self.streets[below(Self.streets.count)], number: 1 + below(200),
            city: Self.cities[below(Self.cities.count)], birthYear: 1940 + below(65),
            score: below(100_000), status: Self.statuses[below(Self.statuses.count)],
            updated: "2026-\(10 + below(3))-\(10 + below(18))T\(10 + below(13)):\(10 + below(50)):\(10 + below(50))Z")
    }

    /// A JSON document of one person, about 250 bytes.
    mutating func json() -> [UInt8] {
        let p = person()
        return Array(
            """
            {"id":\(p.id),"givenName":"\(p.given)","familyName":"\(p.family)","email":"\(p.email)","address":{"street":"\(p.street)","number":\(p.number),"city":"\(p.city)"},"birthYear":\(p.birthYear),"score":\(p.score),"status":"\(p.status)","updatedAt":"\(p.updated)"}
            """.utf8)
    }

    /// A binary change record of one insert: entity and object ids, then tagged fields (about
    /// 130 bytes), as a schema-aware encoding would write it.
    mutating func binary() -> [UInt8] {
        let p = person()
        var bytes: [UInt8] = [1, 0, 3]  // record version, flags, entity number
        func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 { bytes.append(UInt8(value & 0x7F) | 0x80); value >>= 7 }
            bytes.append(UInt8(value))
        }
        func string(_ tag: UInt8, _ text: String) { bytes.append(tag); varint(UInt64(text.utf8.count)); bytes += text.utf8 }
        func integer(_ tag: UInt8, _ value: Int) { bytes.append(tag); varint(UInt64(value)) }
        varint(p.id)
        string(1, p.given); string(2, p.family); string(3, p.email); string(4, p.street); integer(5, p.number)
        string(6, p.city); integer(7, p.birthYear); integer(8, p.score); string(9, p.status); string(10, p.updated)
        return bytes
    }

    /// A larger document (about 4 KiB): a person with a history of orders.
    mutating func document(size: Int = 4096) -> [UInt8] {
        var bytes = Array("{\"orders\":[".utf8)
        while bytes.count < size - 300 { bytes += json(); bytes.append(UInt8(ascii: ",")) }
        bytes += json()
        bytes += Array("]}".utf8)
        return Array(bytes.prefix(size))
    }
}
