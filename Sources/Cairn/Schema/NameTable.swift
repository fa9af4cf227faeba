/// Property positions by name, found without Swift's seeded hashing: an entity has few
/// properties with short names, and an import sets them by name millions of times.
///
/// Open addressing over a power-of-two table at most half full, keyed by a mix of the name's
/// UTF-8 length, its first byte and its last two (names that share them just probe further);
/// the name found is compared with the one asked for. The first of two equal names wins (a
/// model never has two).
struct NameTable: Sendable {
    private let names: [String]
    /// Per slot: an index into `names`, or -1.
    private let slots: [Int32]
    private let mask: Int

    init(_ names: [String]) {
        var size = 4
        while size < 2 * names.count { size *= 2 }
        var slots = [Int32](repeating: -1, count: size)
        for (index, name) in names.enumerated() {
            var slot = Self.hash(name) & (size - 1)
            var duplicate = false
            while slots[slot] >= 0 {
                if names[Int(slots[slot])] == name { duplicate = true; break }
                slot = (slot + 1) & (size - 1)
            }
            if !duplicate { slots[slot] = Int32(index) }
        }
        self.names = names
        self.slots = slots
        mask = size - 1
    }

    /// The position of `name`, or nil.
    func position(_ name: String) -> Int? {
        var slot = Self.hash(name) & mask
        while true {
            let index = Int(slots[slot])
            if index < 0 { return nil }
            if names[index] == name { return index }
            slot = (slot + 1) & mask
        }
    }

    private static func hash(_ name: String) -> Int {
        let utf8 = name.utf8
        let count = utf8.count
        let beforeLast = count >= 2 ? utf8[utf8.index(utf8.endIndex, offsetBy: -2)] : 0
        let word = UInt64(count) << 24 | UInt64(utf8.first ?? 0) << 16 | UInt64(beforeLast) << 8 | UInt64(utf8.last ?? 0)
        return Int(truncatingIfNeeded: avalanche(word))
    }
}
