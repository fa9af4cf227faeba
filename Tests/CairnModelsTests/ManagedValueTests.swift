import CairnModels
import CairnTestSupport
import Foundation
import Testing

/// Every kind of value a typed property holds: set, saved, reopened, read back; its stored
/// form as the by-name API sees it; the model derived from the class.
@Suite struct ManagedValueTests {
    @Test func theDerivedModelHasAnAttributeOfTheRightTypePerProperty() throws {
        let model = try Model(for: [Specimen.self])
        let entity = try #require(model.entity(named: "Specimen"))
        let types = Dictionary(uniqueKeysWithValues: entity.attributes.map { ($0.name, $0.type) })
        #expect(types["code"] == .string)
        #expect(types["int"] == .integer64)
        #expect(types["int8"] == .integer16)
        #expect(types["int16"] == .integer16)
        #expect(types["int32"] == .integer32)
        #expect(types["uint32"] == .integer64)
        #expect(types["double"] == .double)
        #expect(types["float"] == .float)
        #expect(types["decimal"] == .decimal)
        #expect(types["flag"] == .boolean)
        #expect(types["date"] == .date)
        #expect(types["bytes"] == .binary)
        #expect(types["uuid"] == .uuid)
        #expect(types["url"] == .uri)
        #expect(types["shelf"] == .string)
        #expect(types["priority"] == .integer64)
        #expect(types["tags"] == .string)
        #expect(types["size"] == .string)
        #expect(types["scratch"] == nil && types["shout"] == nil)
        let optional = Dictionary(uniqueKeysWithValues: entity.attributes.map { ($0.name, $0.isOptional) })
        #expect(optional["code"] == false && optional["text"] == true && optional["int"] == false && optional["priority"] == true)
        #expect(entity.attributes.first { $0.name == "note" }?.isTransient == true)
        #expect(entity.uniqueness.count == 1)
    }

    @Test func everyValueRoundTripsThroughASaveAndAReopen() async throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/values.store"
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let uuid = UUID()
        do {
            let store = try Store(at: path, for: [Specimen.self])
            let context = store.newBackgroundContext()
            let specimen = Specimen.withEveryValue(code: "A-1", date: date, uuid: uuid)
            specimen.tags = ["sf", "classic"]
            specimen.size = Dimensions(width: 1.5, height: 2)
            specimen.note = "in memory"
            context.insert(specimen)
            #expect(specimen.note == "in memory")
            try await context.save()
            // The stored forms, read by name.
            let object = try #require(specimen.managedObject)
            #expect(try object.value(forKey: "shelf", as: String.self) == "science")
            #expect(try object.value(forKey: "priority", as: Int.self) == 9)
            #expect(try object.value(forKey: "tags", as: String.self) == #"["sf","classic"]"#)
            #expect(try object.value(forKey: "size", as: String.self) == #"{"height":2,"width":1.5}"#)
            try await store.close()
        }
        let store = try Store(at: path, for: [Specimen.self])
        let specimen = try #require(try store.viewContext.fetch(FetchDescriptor<Specimen>()).first)
        #expect(specimen.code == "A-1")
        #expect(specimen.text == "héllo")
        #expect(specimen.int == -42 && specimen.int8 == -8 && specimen.int16 == 1600 && specimen.int32 == 320_000)
        #expect(specimen.int64 == .max && specimen.uint8 == 255 && specimen.uint32 == .max)
        #expect(specimen.double == 2.5 && specimen.float == 1.25)
        #expect(specimen.decimal == Decimal(string: "12345.6789")!)
        #expect(specimen.flag)
        #expect(specimen.date == date)
        #expect(specimen.bytes == Data([0, 1, 2, 255]))
        #expect(specimen.uuid == uuid)
        #expect(specimen.url == URL(string: "https://example.com/a?b=c"))
        #expect(specimen.shelf == .science)
        #expect(specimen.priority == .high)
        #expect(specimen.tags == ["sf", "classic"])
        #expect(specimen.size == Dimensions(width: 1.5, height: 2))
        #expect(specimen.note == nil)  // ephemeral: never saved
        #expect(specimen.scratch == 0)
        try await store.close()
    }

    @Test func aValueThatDoesNotFitFailsTheSaveNamingTheProperty() async throws {
        // An UInt64 above Int64.max has no stored form: the setter cannot throw, the save does.
        let overflowing = try Store(inMemoryFor: [Wide.self])
        let wide = Wide()
        let wideContext = overflowing.newBackgroundContext()
        wideContext.insert(wide)
        wide.count = .max
        let error = await #expect(throws: StoreError.self) { try await wideContext.save() }
        #expect(error?.code == .typeMismatch)
        #expect(error?.message.contains("Wide.count") == true)
        wideContext.rollback()
        #expect(!wideContext.hasChanges)
    }
}

@Managed final class Wide {
    var count: UInt64 = 0
    init() {}
}
