import Testing
@testable import Cairn

/// Property names find their positions, however many there are and whatever they hold.
@Suite struct NameTableTests {
    @Test(arguments: [0, 1, 2, 3, 10, 64, 300])
    func everyNameIsFoundAndNoOther(count: Int) {
        let names = (0..<count).map { "property\($0)" } + (count > 2 ? ["é", "名前", "a long name well past fifteen bytes"] : [])
        let table = NameTable(names)
        for (position, name) in names.enumerated() { #expect(table.position(name) == position, "\(name)") }
        for missing in ["", "property", "property\(count)", "É", "名", "a long name well past fifteen byte"] {
            #expect(table.position(missing) == nil, "\(missing)")
        }
    }

    @Test func theFirstOfTwoEqualNamesWins() {
        let table = NameTable(["a", "b", "a"])
        #expect(table.position("a") == 0 && table.position("b") == 1)
    }
}
