import Cairn
import Foundation
import GRDB

/// The queries the query and scale suites run on the Person objects, each the same on Cairn's
/// view context and on GRDB, so that both suites measure the same work.
enum PersonQueries {
    /// The key of lookup `index` among `count` people: spread over the whole key range.
    static func lookupKey(_ index: Int, count: Int) -> String { Person.key(index &* 7919 % count) }

    /// Lookup by unique key.
    static func lookup(_ view: ObjectContext, _ index: Int, count: Int) throws {
        let found = try view.fetchFirst(FetchRequest("Person", predicate: .equal("key", .string(lookupKey(index, count: count)))))
        precondition(found != nil)
    }

    static func lookup(_ db: Database, _ index: Int, count: Int) throws {
        let statement = try db.cachedStatement(sql: "SELECT * FROM person WHERE key = ?")
        let found = try Person.fetchOne(statement, arguments: [lookupKey(index, count: count)])
        precondition(found != nil)
    }

    /// The birth range of query `index`: `span` seconds from -6e8 on (births spread over
    /// `count × 997` seconds, wrapping every 1.2e9).
    static func birthRange(_ index: Int, span: Double) -> (Date, Date) {
        let low = Date(timeIntervalSince1970: -600_000_000 + Double(index) * span)
        return (low, low.addingTimeInterval(span))
    }

    /// A range on an indexed date; returns the objects found.
    static func range(_ view: ObjectContext, _ index: Int, span: Double) throws -> Int {
        let (low, high) = birthRange(index, span: span)
        return try view.fetch(FetchRequest("Person", predicate: try FetchPredicate(format: "born >= %@ AND born < %@", low, high))).count
    }

    static func range(_ db: Database, _ index: Int, span: Double) throws {
        let (low, high) = birthRange(index, span: span)
        _ = try Person.fetchAll(db.cachedStatement(sql: "SELECT * FROM person WHERE born >= ? AND born < ?"), arguments: [low, high])
    }

    /// A full scan: the people whose email contains `99@`, counted.
    static func scan(_ view: ObjectContext) throws -> Int {
        try view.count(FetchRequest("Person", predicate: try FetchPredicate(format: "email CONTAINS[c] %@", "99@")))
    }

    static func scan(_ db: Database) throws {
        _ = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM person WHERE email LIKE ?", arguments: ["%99@%"])
    }

    /// A sort of the people with fewer than `visits` visits (10% of them for 50) by score, then
    /// key: the IDs, in order.
    static func sort(_ view: ObjectContext, below visits: Int64 = 50) throws -> Int {
        try view.fetchIDs(
            FetchRequest("Person", predicate: .compare("visits", .less, .integer(visits)), sortKeys: [SortKey("score", ascending: false), SortKey("key")])
        ).count
    }

    static func sort(_ db: Database, below visits: Int64 = 50) throws {
        _ = try Int64.fetchAll(db, sql: "SELECT id FROM person NOT INDEXED WHERE visits < ? ORDER BY score DESC, key", arguments: [visits])
    }

    /// The average score of the active people.
    static func aggregate(_ view: ObjectContext) throws -> Value {
        try view.aggregate(.average("score"), FetchRequest("Person", predicate: .equal("active", true)))
    }

    static func aggregate(_ db: Database) throws {
        _ = try Double.fetchOne(db, sql: "SELECT AVG(score) FROM person WHERE active = 1")
    }
}

/// Runs `body` `repeats` times (with the index of each run); returns the runs per second.
func runsPerSecond(_ repeats: Int, _ body: (Int) throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    for index in 0..<repeats { try body(index) }
    return Double(repeats) / seconds(ContinuousClock.now - start)
}

/// ``runsPerSecond(_:_:)`` for GRDB: every run in one read of `pool`.
func runsPerSecond(_ repeats: Int, on pool: DatabasePool, _ body: @escaping @Sendable (Database, Int) throws -> Void) async throws -> Double {
    let start = ContinuousClock.now
    try await pool.read { db in for index in 0..<repeats { try body(db, index) } }
    return Double(repeats) / seconds(ContinuousClock.now - start)
}
