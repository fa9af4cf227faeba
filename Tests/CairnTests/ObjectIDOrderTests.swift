import Testing
@testable import Cairn

/// A save's new objects are written in ID order, however their keys are spread.
@Suite struct ObjectIDOrderTests {
    @Test(arguments: ["dense", "sparse", "entities", "empty", "one"])
    func entriesComeInAscendingOrder(spread: String) {
        var entries: [ObjectID: Int] = [:]
        var generator = SystemRandomNumberGenerator()
        switch spread {
        case "dense":       // a context's run of keys, with gaps left by other contexts
            for key in 1000..<3000 as Range<UInt64> where Int.random(in: 0..<3, using: &generator) > 0 { entries[ObjectID(entity: 2, key: key)] = Int(key) }
        case "sparse":
            for _ in 0..<500 { let key = UInt64.random(in: 1...(1 << 40), using: &generator); entries[ObjectID(entity: 0, key: key)] = Int(key % 1000) }
        case "entities":
            for key in 1..<600 as Range<UInt64> { entries[ObjectID(entity: Int(key % 3), key: key)] = Int(key) }
        case "one":
            entries[ObjectID(entity: 1, key: 7)] = 7
        default:
            break
        }
        let ordered = ObjectID.inOrder(entries)
        #expect(ordered.map(\.0) == entries.keys.sorted())
        #expect(ordered.allSatisfy { entries[$0.0] == $0.1 })
    }
}
