import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Scans that decide on a chunk's columns (``ChunkColumn``) give what the evaluation of each
/// object's values gives: over many chunks, entities mixed in a chunk, text a column cannot
/// decide (non-ASCII, null, a value of no row), a needle that the bytes between two values or a
/// value's header would match, columns made stale by saves, and values too large for a column.
@Suite struct ColumnScanTests {
    static func model() throws -> Model {
        try Model {
            Entity("Item") {
                Attribute("name", .string)
                Attribute("note", .string)
                Attribute("count", .integer64)
                Attribute("price", .double)
                Attribute("when", .date)
                Attribute("flag", .boolean)
                Relationship("owner", to: "Other")
            }
            Entity("Special", parent: "Item") {
                Attribute("extra", .string)
            }
            Entity("Other") {
                Attribute("name", .string)
            }
        }
    }

    /// Names of every kind a text column meets: ASCII, Latin-1, combining marks, the Kelvin
    /// sign, a 57-byte text (its length byte is `9`), texts whose encodings side by side hold
    /// `b\u{1}\u{2}c`, empty, and nil.
    static let names: [Value] = [
        "ab", "cd", "Ada", "ada", "Émile", "émile", "e\u{301}mile", "zoë", "Zoe", "\u{212A}elvin", "kelvin", "",
        .string("x" + String(repeating: "y", count: 56)), .string("a9x" + String(repeating: "z", count: 54)), "99@mail", nil
    ]

    static func values(_ index: Int) -> [String: Value] {
        [
            "name": names[index % names.count], "note": index % 7 == 0 ? nil : .string("note \(index)"),
            "count": index % 11 == 0 ? nil : .integer(Int64(index % 50)), "price": index % 13 == 0 ? nil : .double(Double(index % 97) / 4),
            "when": .date(Date(timeIntervalSinceReferenceDate: Double(index % 31) * 86_400)), "flag": index % 5 == 0 ? nil : .boolean(index % 3 == 0)
        ]
    }

    /// A store of `count` items, every fourth a `Special` (so chunks mix entities), saved in
    /// three saves.
    static func store(count: Int) async throws -> Store {
        let store = Store(inMemory: try model())
        for part in 0..<3 {
            let context = store.newBackgroundContext()
            for index in stride(from: part, to: count, by: 3) {
                try context.make(index % 4 == 0 ? "Special" : "Item", values(index))
            }
            try await context.save()
        }
        return store
    }

    static let predicates: [String] = [
        "name CONTAINS[c] '9x'", "name CONTAINS 'b\u{1}\u{2}c'", "name CONTAINS 'e'", "name CONTAINS[c] 'E'", "name CONTAINS[cd] 'e'",
        "name CONTAINS[c] 'kelvin'", "name CONTAINS[c] 'elv'", "name CONTAINS ''", "name CONTAINS[c] 'zo'", "name CONTAINS 'é'",
        "name CONTAINS[c] 'y'", "name CONTAINS[c] '99@'", "name BEGINSWITH[c] 'a'", "name ENDSWITH 'z'", "name == 'ada'",
        "name ==[c] 'ADA'", "name != 'ab'", "note CONTAINS '1'", "count < 10", "count >= 49", "count != 3", "price > 12.5",
        "price <= 0", "when < CAST(864000, 'NSDate')", "flag == YES", "flag != NO",
        "name CONTAINS[c] 'e' AND count < 25", "name CONTAINS 'a' OR price > 20", "NOT (name CONTAINS[c] 'ada')",
        "NOT (flag == YES) AND (count < 5 OR name CONTAINS 'x')", "(name CONTAINS 'a' OR name CONTAINS 'e') AND NOT (count > 40 OR flag == YES)",
        "name LIKE '*a*' AND count < 30", "TRUEPREDICATE AND name CONTAINS 'd'", "FALSEPREDICATE OR flag == NO"
    ]

    /// Fetches in a context with an unsaved change: every object is evaluated on its values,
    /// never on a column.
    static func byValues(_ store: Store) throws -> ObjectContext {
        let context = store.newBackgroundContext()
        try context.make("Other", ["name": "unsaved"])
        return context
    }

    @Test func scansOnColumnsAgreeWithTheEvaluationOfValues() async throws {
        let store = try await Self.store(count: 1_500)
        let committed = store.newBackgroundContext()
        let reference = try Self.byValues(store)
        for format in Self.predicates {
            for entity in ["Item", "Special"] {
                let request = FetchRequest(entity, predicate: try FetchPredicate(format: format))
                let expected = try reference.fetchIDs(request)
                #expect(try committed.fetchIDs(request) == expected, "\(entity): \(format)")
                #expect(try committed.count(request) == expected.count, "count, \(entity): \(format)")
            }
        }
        #expect(store.snapshot.objects.columnBytes > 10_000, "the scans read columns")
        // The needle that a value's header, or two values side by side, would match: only texts
        // that hold it.
        let header = FetchRequest("Item", predicate: try FetchPredicate(format: "name CONTAINS[c] '9x'"))
        let holders = (0..<1_500).filter { Self.values($0)["name"]?.text?.lowercased().contains("9x") == true }
        #expect(try committed.count(header) == holders.count && !holders.isEmpty)
        #expect(try committed.count(FetchRequest("Item", predicate: try FetchPredicate(format: "name CONTAINS 'b\u{1}\u{2}c'"))) == 0)
    }

    @Test func aggregatesAndSortsOnColumnsAgreeWithTheEvaluationOfValues() async throws {
        let store = try await Self.store(count: 1_500)
        let committed = store.newBackgroundContext()
        let reference = try Self.byValues(store)
        for format in ["TRUEPREDICATE", "flag == YES", "name CONTAINS[c] 'e'", "count < 20 OR note CONTAINS '9'"] {
            let request = FetchRequest("Item", predicate: try FetchPredicate(format: format))
            for function in [AggregateFunction.sum("price"), .average("price"), .minimum("price"), .maximum("count"), .count, .sum("count")] {
                #expect(try committed.aggregate(function, request) == reference.aggregate(function, request), "\(function): \(format)")
            }
            let sorted = FetchRequest(
                "Item", predicate: try FetchPredicate(format: format), sortKeys: [SortKey("price", ascending: false), SortKey("name"), SortKey("count")])
            #expect(try committed.fetchIDs(sorted) == reference.fetchIDs(sorted), "sorted: \(format)")
        }
    }

    @Test func severalFunctionsReadTheirColumnsOrTheirRows() async throws {
        let store = try await Self.store(count: 900)
        let setup = store.newBackgroundContext()
        let owners = try (0..<5).map { try setup.make("Other", ["name": .string("owner \($0)")]) }
        for (index, item) in try setup.fetch(FetchRequest("Item", sortKeys: [SortKey("count")])).enumerated() where index % 3 != 0 {
            try item.setObject(owners[index % owners.count], forKey: "owner")
        }
        try await setup.save()
        let committed = store.newBackgroundContext()
        let reference = try Self.byValues(store)
        // Counts and sums make their columns, minimums and maximums read made ones or the rows,
        // a key path across a relationship reads the rows: each match counted once by each.
        let functions: [AggregateFunction] = [.count, .sum("price"), .maximum("owner.name"), .minimum("name"), .maximum("count"), .average("count")]
        for format in ["TRUEPREDICATE", "flag == YES", "name CONTAINS[c] 'a'", "owner.name == 'owner 2' OR count < 3"] {
            let request = FetchRequest("Item", predicate: try FetchPredicate(format: format))
            #expect(
                try committed.aggregate(functions, request, groupBy: []) == reference.aggregate(functions, request, groupBy: []), "\(format)")
        }
    }

    @Test func columnsFollowTheRowsTheySummarize() async throws {
        let store = try await Self.store(count: 600)
        let request = FetchRequest("Item", predicate: try FetchPredicate(format: "name CONTAINS[c] 'ada' AND count < 40"))
        func agrees(_ label: String) throws {
            #expect(try store.newBackgroundContext().fetchIDs(request) == Self.byValues(store).fetchIDs(request), "\(label)")
        }
        try agrees("first scan")
        // Changed, deleted and new rows in chunks whose columns were made: the next scan sees them.
        let context = store.newBackgroundContext()
        let items = try context.fetch(FetchRequest("Item", sortKeys: [SortKey("count")]))
        for (index, item) in items.enumerated() where index % 5 == 0 { try item.setValue("ADA", forKey: "name") }
        for (index, item) in items.enumerated() where index % 9 == 1 { try item.delete() }
        try await context.save()
        try agrees("after updates and deletes")
        let inserter = store.newBackgroundContext()
        for index in 0..<50 { try inserter.make("Item", ["name": "adaline", "count": .integer(Int64(index))]) }
        try await inserter.save()
        try agrees("after inserts")
        // The published snapshot held by no one else: the next save changes its chunks in place.
        let solo = store.newBackgroundContext()
        for item in try solo.fetch(FetchRequest("Item", predicate: try FetchPredicate(format: "count == 7"))) { try item.setValue(nil, forKey: "name") }
        try await solo.save()
        try agrees("after a save changed the chunks in place")
    }

    @Test func valuesTooLargeForAColumnAreReadFromTheRows() async throws {
        let store = Store(inMemory: try Self.model())
        let context = store.newBackgroundContext()
        // 256 notes of 5,000 bytes: more than a chunk's column holds.
        for index in 0..<600 {
            let note = String(repeating: index % 3 == 0 ? "a" : "b", count: 5_000) + (index % 10 == 0 ? "needle" : "")
            try context.make("Item", ["note": .string(note), "count": .integer(Int64(index))])
        }
        try await context.save()
        let request = FetchRequest("Item", predicate: try FetchPredicate(format: "note CONTAINS 'needle' AND count >= 100"))
        #expect(try store.newBackgroundContext().count(request) == 50)
        #expect(try store.newBackgroundContext().fetchIDs(request) == Self.byValues(store).fetchIDs(request))
    }
}
