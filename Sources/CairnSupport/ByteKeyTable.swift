import Foundation

/// Keys given as bytes, each with a number, found from bytes without making an array or a
/// String: the rows of a batch upsert that share a key, the JSON keys of a mapping. Keys live end
/// to end in one buffer; an open-addressing table of their positions is probed by a seeded
/// FNV-1a hash.
package struct ByteKeyTable: Sendable {
    private var storage: [UInt8] = []
    private var starts: [Int] = []
    private var values: [Int] = []
    private var table: [Int32]
    private var mask: Int

    /// A table with room for `capacity` keys before it grows.
    package init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size *= 2 }
        table = [Int32](repeating: -1, count: size)
        mask = size - 1
        starts.reserveCapacity(capacity + 1)
        values.reserveCapacity(capacity)
        starts.append(0)
    }

    /// A seed of this process, so that keys crafted to collide in one process's table (and make
    /// an import quadratic) do not collide in another's.
    private static let seed = UInt64.random(in: 1...UInt64.max)

    private static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ seed
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        hash ^= hash >> 33
        hash &*= 0xff51_afd7_ed55_8ccd
        return Int(truncatingIfNeeded: hash ^ (hash >> 33))
    }

    private func key(_ entry: Int) -> Range<Int> { starts[entry]..<starts[entry + 1] }

    /// The number filed under these bytes.
    package func value(_ bytes: UnsafeRawBufferPointer) -> Int? {
        var index = Self.hash(bytes) & mask
        return storage.withUnsafeBytes { keys -> Int? in
            while true {
                let entry = table[index]
                guard entry >= 0 else { return nil }
                let range = key(Int(entry))
                if range.count == bytes.count {
                    if range.isEmpty { return values[Int(entry)] }
                    if let base = keys.baseAddress, let other = bytes.baseAddress, memcmp(base + range.lowerBound, other, range.count) == 0 {
                        return values[Int(entry)]
                    }
                }
                index = (index + 1) & mask
            }
        }
    }

    /// Files `value` under these bytes (which no entry has yet).
    package mutating func insert(_ bytes: UnsafeRawBufferPointer, _ value: Int) {
        if (values.count + 1) * 2 > table.count { grow() }
        var index = Self.hash(bytes) & mask
        while table[index] >= 0 { index = (index + 1) & mask }
        table[index] = Int32(values.count)
        storage.append(contentsOf: bytes)
        starts.append(storage.count)
        values.append(value)
    }

    private mutating func grow() {
        let size = table.count * 2
        table = [Int32](repeating: -1, count: size)
        mask = size - 1
        for entry in values.indices {
            let range = key(entry)
            var index = storage.withUnsafeBytes { Self.hash(UnsafeRawBufferPointer(rebasing: $0[range])) } & mask
            while table[index] >= 0 { index = (index + 1) & mask }
            table[index] = Int32(entry)
        }
    }
}
