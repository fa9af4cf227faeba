import CairnSupport
import CairnTestSupport
import CairnLog
import Foundation
import Testing
@testable import Cairn

/// Queries where the model or the values are unusual: sub-entities reached through
/// relationships, NaN, integers beyond 2^53, decimals with trailing zeros, many objects (the
/// two-thread scan and ordered-index chunks that split).
@Suite struct QueryEdgeTests {
    static func zoo() throws -> Model {
        try Model {
            Entity("Person") {
                Attribute("name", .string, optional: false)
                Relationship("animals", to: "Animal", inverse: "owner", .toMany(ordered: false))
            }
            Entity("Animal") {
                Attribute("name", .string)
                Relationship("owner", to: "Person", inverse: "animals")
                Relationship("vet", to: "Vet")
            }
            Entity("Dog", parent: "Animal") {
                Attribute("breed", .string)
                Attribute("weight", .double)
            }
            Entity("Vet") { Attribute("name", .string) }
        }
    }

    @Test(arguments: [false, true])
    func subEntitiesAreReachedThroughTheirRelationships(saved: Bool) async throws {
        let store = Store(inMemory: try Self.zoo())
        let context = store.viewContext
        let ann = try context.make("Person", ["name": "Ann"])
        let bob = try context.make("Person", ["name": "Bob"])
        let vet = try context.make("Vet", ["name": "Dr Who"])
        for (name, owner, dog) in [("Rex", ann, true), ("Tom", bob, false), ("Fido", bob, true)] {
            let animal = try context.make(dog ? "Dog" : "Animal", dog ? ["name": .string(name), "breed": "lab", "weight": 20.0] : ["name": .string(name)])
            try animal.setObject(owner, forKey: "owner")
            try animal.setObject(vet, forKey: "vet")
        }
        if saved { try await context.save() }
        let query = { (format: String) throws -> [String] in
            try context.fetch(FetchRequest("Animal", predicate: try FetchPredicate(format: format), sortKeys: [SortKey("name")])).compactMap {
                $0.string("name")
            }
        }
        #expect(try query("owner.name == 'Ann'") == ["Rex"])
        #expect(try query("owner.name == 'Bob'") == ["Fido", "Tom"])
        #expect(try query("owner == nil").isEmpty)
        #expect(try query("vet.name == 'Dr Who'") == ["Fido", "Rex", "Tom"])
        let people = try context.fetch(
            FetchRequest("Person", predicate: try FetchPredicate(format: "ANY animals.vet.name == 'Dr Who' AND animals.@count == 2")))
        #expect(people.compactMap { $0.string("name") } == ["Bob"])
        let sorted = try context.fetch(FetchRequest("Animal", sortKeys: [SortKey("owner.name", ascending: false), SortKey("name")]))
        #expect(sorted.compactMap { $0.string("name") } == ["Fido", "Tom", "Rex"])
        let groups = try context.aggregate([.count], FetchRequest("Animal"), groupBy: ["owner.name"])
        #expect(groups == [AggregateGroup(keys: ["Ann"], values: [1]), AggregateGroup(keys: ["Bob"], values: [2])])
    }

    @Test func nanIsNeitherStoredNorCompared() async throws {
        let store = Store(inMemory: try Self.zoo())
        let dog = try store.viewContext.insert("Dog")
        #expect { try dog.setValue(.double(.nan), forKey: "weight") } throws: { ($0 as? StoreError)?.code == .typeMismatch }
        #expect { try store.viewContext.fetch(FetchRequest("Dog", predicate: .compare("weight", .less, .double(.nan)))) } throws: {
            ($0 as? StoreError)?.code == .typeMismatch
        }
    }

    @Test func hugeIntegersAndDecimalsAnswerTheSameWithAnIndex() async throws {
        let model = try Model {
            Entity("Item") {
                Attribute("n", .integer64, indexed: true)
                Attribute("m", .integer64)
                Attribute("price", .decimal)
                Attribute("code", .string)
                Unique("price")
            }
        }
        let store = Store(inMemory: model)
        let context = store.viewContext
        let big: Int64 = 9_007_199_254_740_993
        try context.make("Item", ["n": .integer(big), "m": .integer(big), "price": .decimal(Decimal(sign: .plus, exponent: -2, significand: 150))])
        try await context.save()
        for constant: any PredicateArgument in [9_007_199_254_740_992.0, Decimal(string: "9007199254740993")!, big] {
            let indexed = try context.count(FetchRequest("Item", predicate: try FetchPredicate(format: "n == %@", argumentArray: [constant])))
            let scanned = try context.count(FetchRequest("Item", predicate: try FetchPredicate(format: "m == %@", argumentArray: [constant])))
            #expect(indexed == scanned && indexed == 1, "\(constant)")
        }
        #expect(try context.fetchFirst(FetchRequest("Item", predicate: .equal("price", .decimal(Decimal(string: "1.5")!)))) != nil)
    }

    @Test func manyObjectsTakeTheTwoThreadScanAndSplitIndexChunks() async throws {
        let model = try Model {
            Entity("Reading") {
                Attribute("sensor", .integer32, indexed: true)
                Attribute("value", .double, indexed: true)
                Attribute("label", .string)
            }
        }
        let store = Store(inMemory: model)
        let context = store.newBackgroundContext()
        var reference: [(sensor: Int64, value: Double, label: String)] = []
        for index in 0..<25_000 {
            let row = (sensor: Int64(index % 37), value: Double((index * 7919) % 1000) / 10, label: "r\(index % 101)")
            reference.append(row)
            try context.make("Reading", ["sensor": .integer(row.sensor), "value": .double(row.value), "label": .string(row.label)])
        }
        try await context.save()
        // Updates and deletes move entries between chunks of the ordered indexes.
        for object in try context.fetch(FetchRequest("Reading", predicate: .compare("sensor", .equal, 5))) {
            try object.setValue(.double(-1), forKey: "value")
        }
        try context.deleteAll(FetchRequest("Reading", predicate: .compare("sensor", .equal, 6)))
        try await context.save()
        reference = reference.map { $0.sensor == 5 ? (5, -1, $0.label) : $0 }.filter { $0.sensor != 6 }
        let view = store.viewContext
        #expect(try view.count(FetchRequest("Reading")) == reference.count)
        #expect(
            try view.count(FetchRequest("Reading", predicate: try FetchPredicate(format: "value BETWEEN {10, 20.5}")))
                == reference.filter { $0.value >= 10 && $0.value <= 20.5 }.count)
        #expect(try view.count(FetchRequest("Reading", predicate: try FetchPredicate(format: "value < 0"))) == reference.filter { $0.value < 0 }.count)
        #expect(
            try view.count(FetchRequest("Reading", predicate: try FetchPredicate(format: "label ENDSWITH '7' AND sensor IN {1, 2, 3, 4, 5, 8}")))
                == reference.filter { $0.label.hasSuffix("7") && [1, 2, 3, 4, 5, 8].contains($0.sensor) }.count)
        let total = try view.aggregate(.sum("sensor"), FetchRequest("Reading", predicate: try FetchPredicate(format: "label CONTAINS[c] 'R1'")))
        #expect(total == .integer(reference.filter { $0.label.contains("r1") }.reduce(0) { $0 + $1.sensor }))
        let firstValues = try view.fetch(FetchRequest("Reading", sortKeys: [SortKey("value"), SortKey("sensor", ascending: false)], fetchLimit: 3))
            .compactMap { $0["value"] }
        #expect(firstValues == [.double(-1), .double(-1), .double(-1)])
        // A wide range is scanned, a narrow one read from the index: the same answers.
        for (low, high) in [(0.0, 100.0), (-5.0, 50.0), (10.0, 11.0), (99.0, 99.9)] {
            let predicate = try FetchPredicate(format: "value >= %@ AND value < %@", low, high)
            let ids = try view.fetchIDs(FetchRequest("Reading", predicate: predicate, sortKeys: [SortKey("value"), SortKey("label")]))
            #expect(ids.count == reference.filter { $0.value >= low && $0.value < high }.count, "\(low)..<\(high)")
        }
    }

    @Test func containsOnLongAsciiTextAgreesWithSwift() async throws {
        let model = try Model { Entity("Note") { Attribute("text", .string) } }
        let store = Store(inMemory: model)
        let context = store.newBackgroundContext()
        var generator = TestSeed.generator()
        let alphabet = Array("abcAB9@.-é")
        var texts: [String] = []
        for _ in 0..<1500 {
            let text = String(
                (0..<Int.random(in: 0...40, using: &generator)).map { _ in
                    // Mostly ASCII; now and then a non-ASCII letter, which the byte search leaves alone.
                    alphabet[Int.random(in: 0..<(Int.random(in: 0..<20, using: &generator) == 0 ? alphabet.count : alphabet.count - 1), using: &generator)]
                })
            texts.append(text)
            try context.make("Note", ["text": .string(text)])
        }
        try await context.save()
        let view = store.viewContext
        for _ in 0..<60 {
            let needle = String(
                (0..<Int.random(in: 1...3, using: &generator)).map { _ in alphabet[Int.random(in: 0..<(alphabet.count - 1), using: &generator)] })
            let sensitive = try view.count(FetchRequest("Note", predicate: try FetchPredicate(format: "text CONTAINS %@", needle)))
            let insensitive = try view.count(FetchRequest("Note", predicate: try FetchPredicate(format: "text CONTAINS[c] %@", needle)))
            #expect(sensitive == texts.filter { $0.contains(needle) }.count, "CONTAINS \(needle)")
            #expect(insensitive == texts.filter { $0.lowercased().contains(needle.lowercased()) }.count, "CONTAINS[c] \(needle)")
        }
    }

    /// An index of values and a packed one.
    @Test(arguments: [nil, .integer] as [PackedKind?])
    func orderedIndexCountsMatchWhatItLists(kind: PackedKind?) {
        var index = OrderedIndex(kind: kind)
        #expect(index.isPacked == (kind != nil))
        var generator = TestSeed.generator()
        var values: [Int64] = []
        for key in 0..<6000 as Range<UInt64> {
            values.append(Int64.random(in: 0..<700, using: &generator))
            index.insert(.integer(values[Int(key)]), ObjectID(entity: 0, key: key))
        }
        for _ in 0..<400 {
            func bound() -> OrderedIndex.Bound? {
                Bool.random(using: &generator)
                    ? nil : .init(value: .integer(Int64.random(in: -10..<720, using: &generator)), inclusive: Bool.random(using: &generator))
            }
            let lower = bound(), upper = bound()
            let listed = index.objects(from: lower, to: upper, entity: 0)
            func inRange(_ value: Int64) -> Bool {
                guard case .integer(let low)? = lower?.value, let lower else { return upperHolds(value) }
                return (lower.inclusive ? value >= low : value > low) && upperHolds(value)
            }
            func upperHolds(_ value: Int64) -> Bool {
                guard case .integer(let high)? = upper?.value, let upper else { return true }
                return upper.inclusive ? value <= high : value < high
            }
            #expect(Set(listed) == Set(values.indices.filter { inRange(values[$0]) }.map { ObjectID(entity: 0, key: UInt64($0)) }))
            #expect(index.count(from: lower, to: upper) == listed.count)
        }
    }
}

@Suite struct ExactIndexTests {
    /// `==` and `IN` on an indexed integer, float or date answered from the ordered index alone
    /// agree with the same comparison on an attribute without index, at the edges: integers
    /// that round to the same double (compared with integers, doubles and both in one list),
    /// floats against the doubles they are not (0.1), −0.0 and 0.0, and a date whose bits
    /// once hashed as nil's.
    @Test func indexedEqualityFromTheIndexAloneAgreesWithAScan() async throws {
        let model = try Model {
            Entity("Item") {
                Attribute("n", .integer64, indexed: true)
                Attribute("m", .integer64)
                Attribute("d", .date, indexed: true)
                Attribute("e", .date)
                Attribute("f", .float, indexed: true)
                Attribute("g", .float)
            }
        }
        let store = Store(inMemory: model)
        let writer = store.newBackgroundContext()
        let big: Int64 = 1 << 53
        let numbers: [Int64?] = [0, 1, -1, big - 1, big, big + 1, -big, -big - 1, .max, .min, nil, 7, 7]
        // The one double whose hash as a date equals nil's.
        let nilLike = Date(timeIntervalSinceReferenceDate: Double(bitPattern: 0x6491_24a8_0223_8c45))
        #expect(IndexKey.hash(.date(nilLike)) == IndexKey.hash(.null))
        let dates: [Date?] = [
            Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: -0.0), nil, Date(timeIntervalSinceReferenceDate: 1.5)
        ]
        let floats: [Value] = [.float(0.1), .float(-0.0), .float(0), .float(1.5), .null, .float(-2), .float(16_777_218)]
        for (index, number) in numbers.enumerated() {
            let date = dates[index % dates.count].map(Value.date) ?? .null
            let float = floats[index % floats.count]
            try writer.make(
                "Item", ["n": number.map(Value.integer) ?? .null, "m": number.map(Value.integer) ?? .null, "d": date, "e": date, "f": float, "g": float])
        }
        try await writer.save()
        let view = store.viewContext
        func same(_ indexed: FetchPredicate, _ plain: FetchPredicate, _ label: String) throws {
            let request = FetchRequest("Item", predicate: indexed)
            #expect(try view.explain(request).contains("ordered index"), "\(label)")
            #expect(try view.fetchIDs(request) == view.fetchIDs(FetchRequest("Item", predicate: plain)), "\(label)")
            #expect(try view.count(request) == view.count(FetchRequest("Item", predicate: plain)), "\(label)")
        }
        for constant in [0, 1, -1, big - 1, big, big + 1, -big, -big - 1, .max, .min, 7, 8] as [Int64] {
            try same(.equal("n", .integer(constant)), .equal("m", .integer(constant)), "n == \(constant)")
            let query = try PreparedQuery(FetchRequest("Item", predicate: .equal("n", .integer(constant))), model: model)
            #expect(query.candidatesMatch, "exact from the index: \(constant)")
        }
        for constant in [Double(big), Double(big) + 2, -Double(big), 0.5, -1, 0, -0.0, 9.2e18, -9.3e18] {
            try same(.equal("n", .double(constant)), .equal("m", .double(constant)), "n == \(constant) as a double")
            #expect(try PreparedQuery(FetchRequest("Item", predicate: .equal("n", .double(constant))), model: model).candidatesMatch)
        }
        for constant in [Value.double(0.1), .double(Double(Float(0.1))), .double(-0.0), .integer(0), .integer(-2), .double(1.5), .integer(16_777_216)] {
            try same(.equal("f", constant), .equal("g", constant), "f == \(constant)")
        }
        let mixed: [Value] = [.double(Double(big)), .integer(big + 1), .double(0.5), .integer(-1)]
        try same(try FetchPredicate(format: "n IN %@", mixed), try FetchPredicate(format: "m IN %@", mixed), "IN, integers and doubles")
        #expect(try PreparedQuery(FetchRequest("Item", predicate: .equal("d", .date(Date()))), model: model).candidatesMatch)
        #expect(try !PreparedQuery(FetchRequest("Item", predicate: try FetchPredicate(format: "n == 7 AND m == 7")), model: model).candidatesMatch)
        let list: [Value] = [.integer(big), .integer(7), .integer(-1), .integer(.min)]
        try same(try FetchPredicate(format: "n IN %@", list), try FetchPredicate(format: "m IN %@", list), "IN")
        // Values whose matches overlap count each object once, in any order: a double finds
        // every integer that rounds to it (2^53 and 2^53 + 1), an integer only itself.
        let overlapping: [[Value]] = [
            [.integer(7), .double(7), .integer(7), .double(-0.0), .integer(0)], [.integer(big), .double(Double(big))],
            [.double(Double(big)), .integer(big)], [.integer(big + 1), .double(Double(big))], [.double(Double(big)), .integer(big + 1), .integer(big)],
            [.decimal(Decimal(string: "9007199254740993")!), .double(Double(big))],
            (0..<80).map { Value.integer(Int64($0 % 9) - 1) } + [.double(7), .double(Double(big))]
        ]
        for list in overlapping {
            try same(try FetchPredicate(format: "n IN %@", list), try FetchPredicate(format: "m IN %@", list), "IN \(list)")
        }
        // Two decimals that round to one double, against a float: each object once.
        let decimals: [Value] = [.decimal(Decimal(string: "1.5")!), .decimal(Decimal(string: "1.50000000000000000001")!), .double(1.5)]
        try same(try FetchPredicate(format: "f IN %@", decimals), try FetchPredicate(format: "g IN %@", decimals), "IN, decimals alike")
        try same(
            try FetchPredicate(format: "f IN %@", [Value.float(0), .double(-0.0), .integer(0)]),
            try FetchPredicate(format: "g IN %@", [Value.float(0), .double(-0.0), .integer(0)]), "IN, zeros")
        for date in [nilLike, Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: 1.5)] {
            try same(.equal("d", .date(date)), .equal("e", .date(date)), "d == \(date.timeIntervalSinceReferenceDate)")
        }
        #expect(try view.count(FetchRequest("Item", predicate: .equal("d", .date(nilLike)))) == 0, "nil is not that date")
    }
}

@Suite struct IdentityMapTests {
    /// A store of `count` saved notes numbered from 0 (a unique attribute).
    static func store(notes count: Int) async throws -> Store {
        let model = try Model {
            Entity("Note") {
                Attribute("n", .integer64, optional: false); Unique("n")
            }
        }
        let store = Store(inMemory: model)
        let writer = store.newBackgroundContext()
        for n in 0..<count { try writer.make("Note", ["n": .integer(Int64(n))]) }
        try await writer.save()
        return store
    }

    @Test func heldObjectsKeepTheirInstanceAndReleasedOnesAreForgotten() async throws {
        let store = try await Self.store(notes: 20_000)
        let view = store.viewContext
        func registered() -> Int { view.state.withLock { $0.registered.count } }
        let held = try #require(try view.fetchFirst(FetchRequest("Note", predicate: .equal("n", 7))))
        for n in 0..<20_000 {
            _ = try view.fetchFirst(FetchRequest("Note", predicate: .equal("n", .integer(Int64(n)))))
            #expect(registered() <= Tuning.identityMapMinimumSweep, "released objects are swept once the map reaches its minimum")
        }
        #expect(try view.fetchFirst(FetchRequest("Note", predicate: .equal("n", 7))) === held)
        var all: [ManagedObject]? = try view.fetch(FetchRequest("Note"))
        #expect(registered() == 20_000, "a sweep keeps every object held")
        #expect(all?.contains { $0 === held } == true)
        #expect(Set(all!.map(ObjectIdentifier.init)).count == 20_000)
        view.state.withLock { $0.registered.sweep() }
        #expect(registered() == 20_000)
        all = nil
        view.state.withLock { $0.registered.sweep() }
        #expect(registered() == 1, "the one held stays")
        #expect(try held.value(forKey: "n", as: Value.self) == 7)
        // A context that read many objects and dropped them lets them go at its next save; one
        // that still holds them keeps them (until released: releaseUnusedObjects).
        let reader = store.newBackgroundContext()
        var read: [ManagedObject]? = try reader.fetch(FetchRequest("Note"))
        #expect(read?.count == 20_000)
        read = nil
        try reader.make("Note", ["n": 20_001])
        try await reader.save()
        #expect(reader.state.withLock { $0.registered.count } <= 1, "dropped objects go at the save")
        do {
            let stillHeld = try reader.fetch(FetchRequest("Note"))
            try reader.make("Note", ["n": 20_002])
            try await reader.save()
            #expect(reader.state.withLock { $0.registered.count } >= 20_000, "held objects stay")
            withExtendedLifetime(stillHeld) {}
        }
        reader.releaseUnusedObjects()
        #expect(reader.state.withLock { $0.registered.count } == 0)
        // After a big map, the next sweep comes at the minimum again, not at twice the big size.
        for n in 0..<(Tuning.identityMapMinimumSweep + 10) { _ = try view.fetchFirst(FetchRequest("Note", predicate: .equal("n", .integer(Int64(n))))) }
        #expect(registered() <= Tuning.identityMapMinimumSweep)
    }

    /// Objects hold their context's state strongly (a context holds its objects too): a context
    /// that goes empties its state, so objects still held answer that it is gone and keep
    /// nothing alive, and nothing keeps a dropped context's state alive.
    @Test func objectsThatOutliveTheirContextKeepNothingAlive() async throws {
        let store = try await Self.store(notes: 10)
        weak var droppedState: Protected<ContextState>?
        var kept: ManagedObject?
        weak var keptState: Protected<ContextState>?
        do {
            let dropped = store.newBackgroundContext()
            droppedState = dropped.state
            let objects = try dropped.fetch(FetchRequest("Note"))
            try dropped.make("Note", ["n": 100])
            #expect(objects.count == 10)
            let keeping = store.newBackgroundContext()
            keptState = keeping.state
            kept = try keeping.make("Note", ["n": 101])
            #expect(kept?.isInserted == true)
        }
        #expect(droppedState == nil, "a dropped context's state goes with its objects")
        do {
            let object = try #require(kept)
            #expect(object.context == nil && !object.isInserted)
            let emptied = keptState?.withLock { state in state.inserted.isEmpty && state.registered.count == 0 && state.snapshot == nil }
            #expect(emptied == true, "the state an object keeps is empty")
            #expect(throws: StoreError.self) { try object.setValue(.integer(5), forKey: "n") }
            #expect(throws: StoreError.self) { try object.value(forKey: "n", as: Value.self) }
        }
        kept = nil
        #expect(keptState == nil)
        #expect(try store.count(of: "Note") == 10, "nothing unsaved reached the store")
    }

    @Test func objectsHeldOnOtherTasksKeepTheirInstanceWhileTheMapSweeps() async throws {
        let store = try await Self.store(notes: 500)
        let view = store.viewContext
        for _ in 0..<10 {
            // Tasks hold the only references to their objects, fetch each again and must get the
            // same instance, while another task sweeps the map over and over and they drop theirs.
            var slices = try view.fetch(FetchRequest("Note")).chunked(100)
            await withTaskGroup(of: Void.self) { group in
                for slice in slices {
                    group.addTask {
                        for object in slice {
                            let again = try? view.fetchFirst(FetchRequest("Note", predicate: .equal("n", object["n"] ?? .null)))
                            #expect(again === object, "an object held elsewhere survives every sweep")
                        }
                    }
                }
                slices = []
                group.addTask { for _ in 0..<200 { view.releaseUnusedObjects() } }
            }
        }
        view.releaseUnusedObjects()
        #expect(view.state.withLock { $0.registered.count } == 0, "once nobody holds them, a sweep lets every object go")
        #expect(try view.count(FetchRequest("Note")) == 500)
    }
}

extension Array {
    /// The elements in consecutive slices of `size` (the last may be shorter).
    func chunked(_ size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min(count, $0 + size)]) }
    }
}
