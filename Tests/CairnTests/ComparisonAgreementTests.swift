import Foundation
import Testing
@testable import Cairn

/// The two evaluators of a comparison agree: the fast path on a committed row's bytes
/// (`RowComparison`) and the evaluator of decoded values, which judges objects with unsaved
/// changes (`CompiledPredicate`). Every operator the fast path decides, over every kind it
/// decides (integers, doubles, dates, booleans, ASCII text under each option) and nil, is run on
/// the same objects both ways: once committed, once each object carries an unsaved change.
@Suite struct ComparisonAgreementTests {
    static let integers: [Value] = [nil, -3, 0, 2, 7]
    static let doubles: [Value] = [nil, -1.5, 0.0, 2.5]
    static let dates: [Value] = [
        nil, .date(Date(timeIntervalSinceReferenceDate: -60)), .date(Date(timeIntervalSinceReferenceDate: 0)),
        .date(Date(timeIntervalSinceReferenceDate: 3600))
    ]
    static let booleans: [Value] = [nil, true, false]
    static let texts: [Value] = [nil, "", "abc", "ABC", "Abd", "xabcx", "émile", "abc ", "ab"]

    @Test func theRowFastPathAndTheDecodedEvaluatorAgreeOnEveryOperator() async throws {
        let model = try Model {
            Entity("Thing") {
                Attribute("n", .integer32)
                Attribute("d", .double)
                Attribute("t", .date)
                Attribute("b", .boolean)
                Attribute("s", .string)
                Attribute("touched", .integer16)
            }
        }
        let store = Store(inMemory: model)
        let count = Self.texts.count * Self.integers.count
        try await store.performBackgroundTask { context in
            for index in 0..<count {
                let thing = try context.insert("Thing")
                try thing.setValue(Self.integers[index % Self.integers.count], forKey: "n")
                try thing.setValue(Self.doubles[index % Self.doubles.count], forKey: "d")
                try thing.setValue(Self.dates[(index / 2) % Self.dates.count], forKey: "t")
                try thing.setValue(Self.booleans[index % Self.booleans.count], forKey: "b")
                try thing.setValue(Self.texts[(index / 3) % Self.texts.count], forKey: "s")
            }
            try await context.save()
        }
        // The same objects, each with an unsaved change: judged on decoded values.
        let changed = store.newBackgroundContext()
        for thing in try changed.fetch(FetchRequest("Thing")) { try thing.setValue(Value.integer(1), forKey: "touched") }

        let ordering: [PredicateOperator] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]
        var predicates: [FetchPredicate] = []
        for (key, values) in [("n", Self.integers), ("d", Self.doubles), ("t", Self.dates)] {
            for value in values.dropFirst() { for op in ordering { predicates.append(.compare(key, op, value)) } }
        }
        for value in Self.booleans.dropFirst() { for op in [PredicateOperator.equal, .notEqual] { predicates.append(.compare("b", op, value)) } }
        for needle in ["abc", "ABC", "", "b", "x", "Ab"] {
            for op in ["==", "!=", "CONTAINS", "BEGINSWITH", "ENDSWITH"] {
                for options in ["", "[c]", "[d]", "[cd]"] {
                    predicates.append(try FetchPredicate(format: "s \(op)\(options) %@", needle))
                }
            }
        }
        for predicate in predicates {
            let request = FetchRequest("Thing", predicate: predicate)
            let committed = Set(try store.viewContext.fetchIDs(request))
            let decoded = Set(try changed.fetchIDs(request))
            #expect(committed == decoded, "\(predicate): \(committed.count) on row bytes, \(decoded.count) on decoded values")
        }
        #expect(predicates.count > 150)
    }
}
