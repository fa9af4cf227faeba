import CairnSupport
import Testing

/// The table of byte keys a batch upsert and the mapper's key tree look keys up in: every key
/// filed is found with its number across many growths from a small table (the empty key,
/// keys that are prefixes of others among them), and keys not filed are not.
@Suite struct ByteKeyTableTests {
    @Test func keysAreFoundAcrossGrowthAndOthersAreNot() {
        var table = ByteKeyTable(capacity: 4)
        let keys = (0..<20_000).map { Array("key-\($0)".utf8) } + [[], [0], [0, 0]]
        for (number, key) in keys.enumerated() {
            #expect(key.withUnsafeBytes { table.value($0) } == nil)
            key.withUnsafeBytes { table.insert($0, number * 3) }
        }
        for (number, key) in keys.enumerated() {
            #expect(key.withUnsafeBytes { table.value($0) } == number * 3, "\(key)")
        }
        for other in ["key-20000", "key-", "key-0 ", "yek-1"].map({ Array($0.utf8) }) + [[0, 0, 0], [1]] {
            #expect(other.withUnsafeBytes { table.value($0) } == nil, "\(other)")
        }
    }
}
