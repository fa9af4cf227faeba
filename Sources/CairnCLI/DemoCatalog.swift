/// Made-up but plausible books and authors for the demo, repeatable from a seed.
struct DemoCatalog {
    struct BookEntry {
        var isbn: String
        var title: String
        var year: Int64
        var author: String
        var born: Int64
    }

    private var random: SplitMix64
    private let prefix: String
    private var counter = 0

    init(seed: UInt64, prefix: String) {
        random = SplitMix64(seed: seed)
        self.prefix = prefix
    }

    private static let firstNames = [
        "Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Margaret",
        "Dennis", "Radia", "Leslie", "Niklaus", "Shafi", "Tony", "Sophie", "John", "Katherine"
    ]
    private static let lastNames = [
        "Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson",
        "Hamilton", "Ritchie", "Perlman", "Lamport", "Wirth", "Goldwasser", "Hoare", "Wilson"
    ]
    private static let words = [
        "River", "Stone", "Winter", "Garden", "Silence", "North", "Glass", "Harbor", "Lantern",
        "Meadow", "Iron", "Letters", "Island", "Clock", "Orchard", "Shadow", "Salt", "Summer"
    ]

    /// The next book; about ten books per author.
    mutating func nextBook() -> BookEntry {
        counter += 1
        let authorNumber = counter / 10
        var authorRandom = SplitMix64(seed: UInt64(authorNumber) &* 2654435761 &+ UInt64(prefix.utf8.reduce(0) { $0 &* 31 &+ UInt64($1) }))
        let author = "\(pick(Self.firstNames, &authorRandom)) \(pick(Self.lastNames, &authorRandom)) \(prefix)-\(authorNumber)"
        let born = 1900 + Int64(authorRandom.next(below: 90))
        let title = "The \(pick(Self.words, &random)) of \(pick(Self.words, &random))"
        let year = min(2026, born + 20 + Int64(random.next(below: 50)))
        return BookEntry(isbn: "978-\(prefix)-\(counter)", title: title, year: year, author: author, born: born)
    }

    private func pick(_ list: [String], _ generator: inout SplitMix64) -> String {
        list[Int(generator.next(below: UInt64(list.count)))]
    }
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
