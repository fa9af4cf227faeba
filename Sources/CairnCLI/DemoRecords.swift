/// Realistic change records for the demo: the saves of a small lending-library app (authors,
/// books, members and loans), as JSON, 150–400 bytes each.
struct DemoRecords {
    private var random: SplitMix64
    private var transaction: UInt64 = 0

    init(seed: UInt64) { random = SplitMix64(seed: seed) }

    private static let firstNames = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Margaret",
                                     "Dennis", "Radia", "Leslie", "Niklaus", "Shafi", "Tony", "Sophie", "John", "Katherine"]
    private static let lastNames = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson",
                                    "Hamilton", "Ritchie", "Perlman", "Lamport", "Wirth", "Goldwasser", "Hoare", "Wilson"]
    private static let words = ["river", "stone", "winter", "garden", "silent", "north", "glass", "harbor", "lantern",
                                "meadow", "iron", "letters", "island", "clock", "orchard", "shadow", "salt", "summer"]
    private static let genres = ["Mystery", "Science Fiction", "History", "Poetry", "Biography", "Fantasy", "Essays"]
    private static let cities = ["Lyon", "Porto", "Leeds", "Gdansk", "Tartu", "Bergen", "Ghent", "Bologna"]

    /// The next record's bytes.
    mutating func next() -> [UInt8] {
        transaction += 1
        let day = 1 + Int(random.next(below: 28))
        let time = "2026-11-\(pad(day))T\(pad(Int(random.next(below: 24)))):\(pad(Int(random.next(below: 60)))):\(pad(Int(random.next(below: 60))))Z"
        var operations: [String] = []
        for _ in 0..<(1 + Int(random.next(below: 2))) { operations.append(operation()) }
        let json = "{\"tx\":\(transaction),\"at\":\"\(time)\",\"ops\":[\(operations.joined(separator: ","))]}"
        return Array(json.utf8)
    }

    private mutating func operation() -> String {
        switch random.next(below: 10) {
        case 0...1:
            let first = pick(Self.firstNames), last = pick(Self.lastNames)
            return "{\"op\":\"insert\",\"entity\":\"Author\",\"id\":\"A-\(id())\",\"name\":\"\(first) \(last)\",\"born\":\(1900 + random.next(below: 100)),\"city\":\"\(pick(Self.cities))\"}"
        case 2...4:
            let title = "The \(pick(Self.words).capitalized) of \(pick(Self.words).capitalized)"
            return "{\"op\":\"insert\",\"entity\":\"Book\",\"id\":\"B-\(id())\",\"title\":\"\(title)\",\"author\":\"A-\(id())\",\"isbn\":\"978-\(random.next(below: 10))-\(100000 + random.next(below: 899999))-\(random.next(below: 10))\",\"year\":\(1950 + random.next(below: 76)),\"pages\":\(90 + random.next(below: 700)),\"genre\":\"\(pick(Self.genres))\",\"available\":true}"
        case 5...6:
            let first = pick(Self.firstNames), last = pick(Self.lastNames)
            return "{\"op\":\"insert\",\"entity\":\"Member\",\"id\":\"M-\(id())\",\"name\":\"\(first) \(last)\",\"email\":\"\(first.lowercased()).\(last.lowercased())@example.org\",\"city\":\"\(pick(Self.cities))\"}"
        case 7...8:
            return "{\"op\":\"update\",\"entity\":\"Loan\",\"id\":\"L-\(id())\",\"changes\":{\"returned\":\(random.next(below: 2) == 0),\"due\":\"2026-12-\(pad(1 + Int(random.next(below: 28))))\"}}"
        default:
            return "{\"op\":\"delete\",\"entity\":\"Loan\",\"id\":\"L-\(id())\"}"
        }
    }

    private mutating func id() -> String { String(10000 + random.next(below: 90000)) }
    private mutating func pick(_ list: [String]) -> String { list[Int(random.next(below: UInt64(list.count)))] }
    private func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}

/// A small, fast, seedable random number generator (SplitMix64), so that demo data repeats.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound`.
    mutating func next(below bound: UInt64) -> UInt64 { next() % bound }
}

extension String {
    fileprivate var capitalized: String { prefix(1).uppercased() + dropFirst() }
}
