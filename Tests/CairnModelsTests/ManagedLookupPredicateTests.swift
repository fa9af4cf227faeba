import Foundation
import Testing

@testable import CairnModels

/// `$0.property == value` is translated without walking the expression (the form a lookup by key
/// takes in a loop): for every value type it must find what the general translation finds, and
/// the forms it leaves to the general translation (nil, Booleans, JSON values, transient
/// properties) must still translate as before.
@Suite struct ManagedLookupPredicateTests {
    @Test func aLookupOfEveryValueTypeFindsItsObjectAndNoOther() async throws {
        let store = try Store(inMemoryFor: [Specimen.self])
        let context = store.newBackgroundContext()
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let uuid = UUID()
        let url = try #require(URL(string: "https://example.com/a?b=c"))
        let decimal = try #require(Decimal(string: "12345.6789"))
        context.insert(Specimen(code: "B-2"))
        let specimen = Specimen.withEveryValue(code: "A-1", date: date, uuid: uuid)
        specimen.tags = ["sf"]
        context.insert(specimen)
        try await context.save()
        func codes(_ predicate: Predicate<Specimen>) throws -> [String] {
            try store.viewContext.fetch(FetchDescriptor(predicate: predicate)).map(\.code).sorted()
        }
        let bytes = Data([0, 1, 2, 255])
        let (largest, largestUnsigned, science, high) = (Int64.max, UInt32.max, Shelf.science, Priority.high)
        let found: [[String]] = [
            try codes(#Predicate { $0.code == "A-1" }), try codes(#Predicate { $0.text == "héllo" }), try codes(#Predicate { $0.int == -42 }),
            try codes(#Predicate { $0.int8 == -8 }), try codes(#Predicate { $0.int16 == 1600 }), try codes(#Predicate { $0.int32 == 320_000 }),
            try codes(#Predicate { $0.int64 == largest }), try codes(#Predicate { $0.uint8 == 255 }),
            try codes(#Predicate { $0.uint32 == largestUnsigned }), try codes(#Predicate { $0.double == 2.5 }), try codes(#Predicate { $0.float == 1.25 }),
            try codes(#Predicate { $0.decimal == decimal }), try codes(#Predicate { $0.flag == true }), try codes(#Predicate { $0.date == date }),
            try codes(#Predicate { $0.bytes == bytes }), try codes(#Predicate { $0.uuid == uuid }), try codes(#Predicate { $0.url == url }),
            try codes(#Predicate { $0.shelf == science }), try codes(#Predicate { $0.priority == high }),
            try codes(#Predicate { $0.tags == ["sf"] })
        ]
        for (index, codes) in found.enumerated() { #expect(codes == ["A-1"], "lookup \(index)") }
        #expect(try codes(#Predicate { $0.flag == false }) == ["B-2"])
        #expect(try codes(#Predicate { $0.text == nil }) == ["B-2"])
        #expect(try codes(#Predicate { $0.code == "C-3" }).isEmpty)
        // A negative literal is a constant (`-42` above too); a negated property is refused.
        #expect(try codes(#Predicate { $0.int < -40 }) == ["A-1"])
        #expect(try codes(#Predicate { $0.double > -2.5 && $0.int8 >= -8 }) == ["A-1", "B-2"])
        let negated = #expect(throws: StoreError.self) { try codes(#Predicate { -$0.int == 42 }) }
        #expect(negated?.message.contains("negating a property") == true)
    }

    /// A descriptor recognizes `$0.property == value` on a `String` or `Int` property by its type
    /// (``FetchDescriptor/keyLookup(_:)``): the request it makes must be the general
    /// translation's, and what that refuses must still be refused.
    @Test func aDescriptorsLookupIsTheGeneralTranslations() throws {
        let store = try Store(inMemoryFor: [Specimen.self])
        let key = "A-1", number = 7
        let lookups = [#Predicate<Specimen> { $0.code == key }, #Predicate<Specimen> { $0.int == number }]
        for predicate in lookups {
            #expect(FetchDescriptor<Specimen>.keyLookup(predicate.expression) != nil)
            let request = try FetchDescriptor(predicate: predicate).request(in: store)
            #expect(request.predicate == (try FetchPredicate(typed: predicate, entity: "Specimen")))
        }
        // An optional property's lookup has another type: the general translation takes it.
        let uuid = UUID()
        let optional = #Predicate<Specimen> { $0.uuid == uuid }
        #expect(FetchDescriptor<Specimen>.keyLookup(optional.expression) == nil)
        #expect(try FetchDescriptor(predicate: optional).request(in: store).predicate == .comparison(key: "uuid", .equal, .uuid(uuid)))
        // A transient property is no lookup, and is refused by name.
        let transient = #Predicate<Specimen> { $0.scratch == 1 }
        #expect(FetchDescriptor<Specimen>.keyLookup(transient.expression) == nil)
        let refused = #expect(throws: StoreError.self) { try FetchDescriptor(predicate: transient).request(in: store) }
        #expect(refused?.message.contains("scratch") == true)
    }

    @Test func aLookupByKeyTakesTheFormTheUniqueIndexAnswers() throws {
        let key = "A-1"
        let lookup = try FetchPredicate(typed: #Predicate<Specimen> { $0.code == key }, entity: "Specimen")
        #expect(lookup == .comparison(key: "code", .equal, .string("A-1")))
        let count = try FetchPredicate(typed: #Predicate<Specimen> { $0.int == 7 }, entity: "Specimen")
        #expect(count == .comparison(key: "int", .equal, .integer(7)))
        // NaN is refused, as the general translation refuses it.
        let notANumber = Double("nan") ?? 0
        #expect(throws: StoreError.self) { try FetchPredicate(typed: #Predicate<Specimen> { $0.double == notANumber }, entity: "Specimen") }
        // A transient property is still refused by name.
        #expect(throws: StoreError.self) { try FetchPredicate(typed: #Predicate<Specimen> { $0.scratch == 1 }, entity: "Specimen") }
    }
}
