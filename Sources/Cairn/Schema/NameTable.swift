/// Property positions by name, found without Swift's seeded hashing: an entity has few
/// properties with short names, and an import sets them by name millions of times.
///
/// Open addressing over a power-of-two table at most half full, keyed by FNV-1a of the name's
/// UTF-8 bytes; the name found is compared with the one asked for. The first of two equal names wins (a
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
        func fnv(_ bytes: some Sequence<UInt8>) -> Int {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            return Int(truncatingIfNeeded: hash ^ (hash >> 29))
        }
        // A native or small string gives its bytes in one piece, far faster than its iterator.
        return name.utf8.withContiguousStorageIfAvailable { fnv($0) } ?? fnv(name.utf8)
    }
}
