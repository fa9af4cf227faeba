import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Thousands (4 seeds × 600) of random predicates and sorts, evaluated by the query engine (with and without
/// indexes) and by a naive reference evaluator written apart from it, over the same random
/// objects with unsaved changes. Every random predicate also goes through the parser: its
/// canonical text must parse back to it.
@Suite struct QueryDifferentialTests {
    static func model(indexed: Bool) throws -> Model {
        try Model {
            Entity("Person") {
                Attribute("name", .string, indexed: indexed)
                Attribute("age", .integer32, indexed: indexed)
                Attribute("score", .double, indexed: indexed)
                Attribute("city", .string)
                Attribute("born", .date, indexed: indexed)
                Attribute("active", .boolean, indexed: indexed)
                Relationship("friend", to: "Person")
                Relationship("pets", to: "Pet", inverse: "owner", .toMany(ordered: false), deleteRule: .cascade)
            }
            Entity("Pet") {
                Attribute("kind", .string, indexed: indexed)
                Attribute("legs", .integer16)
                Relationship("owner", to: "Person", inverse: "pets")
            }
        }
    }

    static let names: [Value] = ["ada", "Ada", "ÉMILE", "émile", "Emile", "Zoë", "zoe", "bob", "Bob", "", "x*y", "ab?c", nil]
    static let cities: [Value] = ["Lyon", "lyon", "Paris", "Zürich", "zurich", nil]
    static let kinds: [Value] = ["cat", "Cat", "dog", "ÉMU", "emu", nil]
    static let scores: [Value] = [0.0, -0.0, 0.5, 1.5, -2.0, 3.0, nil]
    static let dates: [Value] = [
        .date(Date(timeIntervalSinceReferenceDate: 0)), .date(Date(timeIntervalSinceReferenceDate: 86_400)),
        .date(Date(timeIntervalSinceReferenceDate: -86_400)), nil
    ]

    // MARK: The data

    /// The same random operations on every store's view context: saved ones, then unsaved ones.
    static func populate(_ contexts: [ObjectContext], _ random: inout SeededRandom) async throws {
        func personValues(_ random: inout SeededRandom) -> [String: Value] {
            [
                "name": names.randomElement(using: &random)!, "age": random.next() % 5 == 0 ? nil : .integer(Int64(random.next() % 8)),
                "score": scores.randomElement(using: &random)!, "city": cities.randomElement(using: &random)!,
                "born": dates.randomElement(using: &random)!, "active": [true, false, nil].randomElement(using: &random)!
            ]
        }
        for round in 0..<3 {
            let count = round == 0 ? 60 : 15
            for _ in 0..<count {
                let values = personValues(&random)
                let friendPick = random.next()
                let petCount = Int(random.next() % 4)
                let pets = (0..<petCount).map { _ in (kinds.randomElement(using: &random)!, Value.integer(Int64(random.next() % 5))) }
                for context in contexts {
                    let person = try context.make("Person", values)
                    let people = try context.all("Person").filter { $0 !== person }.sorted { $0.objectID < $1.objectID }
                    if friendPick % 3 != 0, !people.isEmpty { try person.setObject(people[Int(friendPick % UInt64(people.count))], forKey: "friend") }
                    for (kind, legs) in pets {
                        let pet = try context.make("Pet", ["kind": kind, "legs": legs])
                        try pet.setObject(person, forKey: "owner")
                    }
                }
            }
            // Updates and deletes.
            let updates = (0..<10).map { _ in (random.next(), personValues(&random)) }
            let deletes = (0..<4).map { _ in random.next() }
            for context in contexts {
                var people = try context.all("Person").sorted { $0.objectID < $1.objectID }
                for (pick, values) in updates where !people.isEmpty {
                    let person = people[Int(pick % UInt64(people.count))]
                    for (key, value) in values where pick % 2 == 0 || key == "age" || key == "name" { try person.setValue(value, forKey: key) }
                }
                for pick in deletes where !people.isEmpty {
                    let index = Int(pick % UInt64(people.count))
                    try people[index].delete()
                    people.remove(at: index)
                }
                if round < 2 { try await context.save() }
            }
        }
    }

    // MARK: Random predicates

    static func constant(for key: String, _ random: inout SeededRandom) -> Value {
        switch key {
        case "name", "friend.name": names.randomElement(using: &random)!
        case "city": cities.randomElement(using: &random)!
        case "age", "friend.age": random.next() % 4 == 0 ? .double(Double(random.next() % 16) / 2) : .integer(Int64(random.next() % 9) - 1)
        case "score": random.next() % 3 == 0 ? .integer(Int64(random.next() % 4)) : scores.randomElement(using: &random)!
        case "born": dates.randomElement(using: &random)!
        case "active": [true, false, nil].randomElement(using: &random)!
        case "kind": kinds.randomElement(using: &random)!
        default: .integer(Int64(random.next() % 5))
        }
    }

    static func comparison(_ random: inout SeededRandom) -> PredicateSyntax {
        let keys = ["name", "age", "score", "city", "born", "active", "friend.name", "friend.age"]
        let key = keys.randomElement(using: &random)!
        let path = PredicateOperand.keyPath(key.split(separator: ".").map(String.init))
        let isText = ["name", "city", "friend.name"].contains(key)
        let options: ComparisonOptions =
            isText ? [[], [.caseInsensitive], [.diacriticInsensitive], [.caseInsensitive, .diacriticInsensitive]].randomElement(using: &random)! : []
        switch random.next() % 12 {
        case 0 where isText:
            let op: PredicateOperator = [.beginsWith, .endsWith, .contains].randomElement(using: &random)!
            let text = ["a", "É", "e", "B", "", "*", "zo"].randomElement(using: &random)!
            return .comparison(path, op, .constant(.string(text)), options: options)
        case 1 where isText:
            let pattern = ["*a*", "?d?", "É*", "*e", "x\\*y", "*", "b?b", "a*a"].randomElement(using: &random)!
            return .comparison(path, .like, .constant(.string(pattern)), options: options)
        case 2:
            var values = (0..<(1 + random.next() % 3)).map { _ in constant(for: key, &random) }
            values.removeAll { $0 == .null }
            return .comparison(path, .in, .list(values.map { .constant($0) }), options: options)
        case 3 where !isText && key != "active":
            var bounds = [constant(for: key, &random), constant(for: key, &random)]
            if bounds.contains(.null) { bounds = [constant(for: key, &random), constant(for: key, &random)].filter { $0 != .null } }
            guard bounds.count == 2 else { return .truePredicate }
            return .comparison(path, .between, .list(bounds.map { .constant($0) }))
        case 4:
            let quantifier: ComparisonModifier = [.any, .all, .none].randomElement(using: &random)!
            let kindOptions: ComparisonOptions = [[], [.caseInsensitive, .diacriticInsensitive]].randomElement(using: &random)!
            if random.next() % 2 == 0 {
                return .comparison(.keyPath(["pets", "kind"]), .equal, .constant(constant(for: "kind", &random)), options: kindOptions, modifier: quantifier)
            }
            return .comparison(
                .keyPath(["pets", "legs"]), [.greater, .lessOrEqual].randomElement(using: &random)!,
                .constant(.integer(Int64(random.next() % 5))), modifier: quantifier)
        case 5:
            let operation: CollectionOperator = [.count, .sum, .maximum].randomElement(using: &random)!
            return .comparison(
                .collectionOperation(operation, collection: ["pets"], keyPath: operation == .count ? [] : ["legs"]),
                [.greater, .equal, .less].randomElement(using: &random)!, .constant(.integer(Int64(random.next() % 6))))
        case 6:
            return .comparison(.keyPath(["friend"]), [.equal, .notEqual].randomElement(using: &random)!, .constant(.null))
        default:
            let ops: [PredicateOperator] = key == "active" ? [.equal, .notEqual] : [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]
            return .comparison(path, ops.randomElement(using: &random)!, .constant(constant(for: key, &random)), options: options)
        }
    }

    static func predicate(_ random: inout SeededRandom, depth: Int = 0) -> PredicateSyntax {
        switch depth < 3 ? random.next() % 6 : 5 {
        case 0: return .and((0..<2 + random.next() % 2).map { _ in predicate(&random, depth: depth + 1) })
        case 1: return .or((0..<2 + random.next() % 2).map { _ in predicate(&random, depth: depth + 1) })
        case 2: return .not(predicate(&random, depth: depth + 1))
        default: return comparison(&random)
        }
    }

    // MARK: The test

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func randomPredicatesAgreeWithTheReference(seed: UInt64) async throws {
        var random = SeededRandom(seed: seed)
        let indexed = Store(inMemory: try Self.model(indexed: true))
        let plain = Store(inMemory: try Self.model(indexed: false))
        try await Self.populate([indexed.viewContext, plain.viewContext], &random)
        let reference = try ReferenceData(indexed.viewContext)
        #expect(reference.people.count > 40)
        // A context without unsaved changes takes the direct path over committed rows.
        let committed = indexed.newBackgroundContext()
        let committedReference = try ReferenceData(committed)
        #expect(Set(committedReference.people.keys) != Set(reference.people.keys), "the view context has unsaved changes")
        var indexPlans = 0
        for _ in 0..<600 {
            let syntax = Self.predicate(&random)
            let reparsed = try PredicateSyntax.parse(syntax.description, arguments: [])
            #expect(reparsed == syntax, "\(syntax.description)")
            let sortKeys = [
                SortKey("name", ascending: random.next() % 2 == 0, caseInsensitive: random.next() % 2 == 0),
                SortKey("friend.age", ascending: random.next() % 2 == 0), SortKey("score")
            ].shuffled(using: &random)
            var request = FetchRequest("Person", predicate: .syntax(syntax), sortKeys: Array(sortKeys.prefix(Int(random.next() % 4))))
            if random.next() % 4 == 0 { request.setRange(Int(random.next() % 5)..<Int(5 + random.next() % 20), reversed: random.next() % 2 == 0) }
            let expected = reference.evaluate(request)
            let fromIndexed = try indexed.viewContext.fetchIDs(request)
            let fromPlain = try plain.viewContext.fetchIDs(request)
            let plan = try indexed.viewContext.explain(request)
            #expect(fromIndexed == expected, "indexed: \(syntax.description)\n\(plan)")
            #expect(fromPlain == expected, "plain: \(syntax.description)")
            #expect(try committed.fetchIDs(request) == committedReference.evaluate(request), "committed: \(syntax.description)")
            #expect(try committed.count(request) == committedReference.evaluate(request).count, "count, committed: \(syntax.description)")
            #expect(try indexed.viewContext.count(request) == expected.count, "count: \(syntax.description)")
            if plan.contains("index") { indexPlans += 1 }
        }
        #expect(indexPlans > 20, "the random predicates exercise the indexes")
    }
}

/// The objects as plain dictionaries, read through the managed-object API, and a naive
/// evaluator of predicates written independently of the engine (Foundation's string functions,
/// no compilation, no indexes).
struct ReferenceData {
    struct Person {
        var id: ObjectID
        var values: [String: Value]
        var friend: ObjectID?
        var pets: [[String: Value]]
    }

    var people: [ObjectID: Person] = [:]

    init(_ context: ObjectContext) throws {
        for object in try context.fetch(FetchRequest("Person")) {
            var values: [String: Value] = [:]
            for key in ["name", "age", "score", "city", "born", "active"] { values[key] = try object.value(forKey: key, as: Value.self) }
            let pets = try object.objects(forKey: "pets").map { pet in
                ["kind": try pet.value(forKey: "kind", as: Value.self), "legs": try pet.value(forKey: "legs", as: Value.self)]
            }
            people[object.objectID] = Person(id: object.objectID, values: values, friend: try object.object(forKey: "friend")?.objectID, pets: pets)
        }
    }

    func value(_ person: Person, _ keys: [String]) -> Value {
        if keys.count == 2, keys[0] == "friend" {
            guard let friend = person.friend.flatMap({ people[$0] }) else { return .null }
            return friend.values[keys[1]] ?? .null
        }
        if keys == ["friend"] { return person.friend == nil ? .null : .boolean(true) }
        return person.values[keys[0]] ?? .null
    }

    func evaluate(_ request: FetchRequest) -> [ObjectID] {
        let predicate = request.predicate?.syntax ?? .truePredicate
        var matches = people.values.filter { self.matches($0, predicate) }
        matches.sort { a, b in
            for key in request.sortKeys {
                var x = value(a, key.key.split(separator: ".").map(String.init)), y = value(b, key.key.split(separator: ".").map(String.init))
                if key.caseInsensitive, case .string(let s) = x, case .string(let t) = y { x = .string(s.lowercased()); y = .string(t.lowercased()) }
                let before = Self.less(x, y), after = Self.less(y, x)
                if before != after { return key.ascending ? before : after }
            }
            return a.id < b.id
        }
        var ids = matches.map(\.id)
        if request.reversesOrder { ids.reverse() }
        let start = min(request.fetchOffset, ids.count)
        let end = request.fetchLimit.map { min(start + $0, ids.count) } ?? ids.count
        return Array(ids[start..<end])
    }

    /// Nil first; numbers by value; strings by Swift's order.
    static func less(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.null, .null): return false
        case (.null, _): return true
        case (_, .null): return false
        default:
            if let x = number(a), let y = number(b) { return x < y }
            return (text(a) ?? "") < (text(b) ?? "")
        }
    }

    static func number(_ value: Value) -> Double? {
        switch value {
        case .integer(let n): Double(n)
        case .double(let n): n
        case .float(let n): Double(n)
        case .boolean(let flag): flag ? 1 : 0
        case .date(let date): date.timeIntervalSinceReferenceDate
        default: nil
        }
    }

    static func text(_ value: Value) -> String? {
        if case .string(let text) = value { return text }
        return nil
    }

    func matches(_ person: Person, _ predicate: PredicateSyntax) -> Bool {
        switch predicate {
        case .truePredicate: return true
        case .falsePredicate: return false
        case .and(let parts): return parts.allSatisfy { matches(person, $0) }
        case .or(let parts): return parts.contains { matches(person, $0) }
        case .not(let part): return !matches(person, part)
        case .subquery: Issue.record("the generator makes no SUBQUERY"); return false
        case .comparison(let lhs, let op, let rhs, let options, let modifier):
            if case .collectionOperation(let operation, _, _) = lhs, case .constant(let bound) = rhs {
                let legs = person.pets.compactMap { Self.number($0["legs"] ?? .null) }
                let result: Double? =
                    switch operation {
                    case .count: Double(person.pets.count)
                    case .sum: legs.reduce(0, +)
                    case .maximum: legs.max()
                    default: nil
                    }
                return Self.compare(result.map { .double($0) } ?? .null, op, bound, options)
            }
            guard case .keyPath(let keys) = lhs else { return false }
            if modifier != .direct {
                let values = person.pets.map { $0[keys[1]] ?? .null }
                guard case .constant(let bound) = rhs else { return false }
                let results = values.map { Self.compare($0, op, bound, options) }
                switch modifier {
                case .all: return results.allSatisfy { $0 }
                case .none: return !results.contains(true)
                default: return results.contains(true)
                }
            }
            let left = value(person, keys)
            switch rhs {
            case .constant(let bound): return Self.compare(left, op, bound, options)
            case .list(let items):
                let values = items.compactMap { if case .constant(let value) = $0 { value } else { nil } }
                if op == .between {
                    return left != .null && Self.compare(left, .greaterOrEqual, values[0], options) && Self.compare(left, .lessOrEqual, values[1], options)
                }
                return values.contains { Self.compare(left, .equal, $0, options) }
            default: return false
            }
        }
    }

    static func compare(_ left: Value, _ op: PredicateOperator, _ right: Value, _ options: ComparisonOptions) -> Bool {
        if left == .null || right == .null {
            switch op {
            case .equal: return left == right
            case .notEqual: return left != right
            default: return false
            }
        }
        if case .string(var a) = left, case .string(var b) = right {
            var compareOptions: String.CompareOptions = []
            if options.contains(.caseInsensitive) { compareOptions.insert(.caseInsensitive) }
            if options.contains(.diacriticInsensitive) { compareOptions.insert(.diacriticInsensitive) }
            if !compareOptions.isEmpty {
                a = a.folding(options: compareOptions, locale: nil)
                b = b.folding(options: compareOptions, locale: nil)
            }
            if let result = ordered(a, op, b) { return result }
            switch op {
            case .beginsWith: return b.isEmpty || a.hasPrefix(b)
            case .endsWith: return b.isEmpty || a.hasSuffix(b)
            case .contains: return b.isEmpty || a.range(of: b) != nil
            case .like:
                var pattern = "^"
                var escaped = false
                for character in b {
                    if escaped {
                        pattern += NSRegularExpression.escapedPattern(for: String(character)); escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "*" {
                        pattern += ".*"
                    } else if character == "?" {
                        pattern += "."
                    } else {
                        pattern += NSRegularExpression.escapedPattern(for: String(character))
                    }
                }
                let expression = try? NSRegularExpression(pattern: pattern + "$", options: [.dotMatchesLineSeparators])
                return expression?.firstMatch(in: a, range: NSRange(a.startIndex..., in: a)) != nil
            default: return false
            }
        }
        if case .boolean(let a) = left, case .boolean(let b) = right {
            switch op {
            case .equal: return a == b
            case .notEqual: return a != b
            default: return false
            }
        }
        guard let a = number(left), let b = number(right) else { return op == .notEqual }
        return ordered(a, op, b) ?? false
    }

    /// The comparison operators on comparable values; nil for the others.
    static func ordered<T: Comparable>(_ a: T, _ op: PredicateOperator, _ b: T) -> Bool? {
        switch op {
        case .equal: a == b
        case .notEqual: a != b
        case .less: a < b
        case .lessOrEqual: a <= b
        case .greater: a > b
        case .greaterOrEqual: a >= b
        default: nil
        }
    }
}
