import Cairn
import CairnModels
import CairnTestSupport
import Foundation
import Testing

@Composite struct Position: Equatable, Codable, Sendable {
    var latitude: Double
    var longitude: Double
}

@Composite struct Address: Equatable, Codable, Sendable {
    var city: String?
    var postcode: String?
    var position: Position?
}

/// The class of `Fixtures/Models/Composite.xcdatamodel`'s entity.
@Managed final class Place {
    var label: String?
    var visits: Int32
    var address: Address?
    init(label: String?, visits: Int32 = 0, address: Address? = nil) {
        self.label = label
        self.visits = visits
        self.address = address
    }
}

enum TrailSurface: String, CaseIterable, Codable, Sendable {
    case paved, gravel, dirt
}

@Composite struct Stretch: Equatable, Codable, Sendable {
    var start: Position
    var length: Double
    var surface: TrailSurface
    var note: String?
}

@Managed final class Trail {
    @Attribute(.unique) var name: String
    var route: Stretch
    init(name: String, route: Stretch) {
        self.name = name
        self.route = route
    }
}

@Managed final class Marker {
    var owner: Trail?
    init() {}
}

@Composite struct Tethered {
    var marker: Marker?
}

@Managed final class Buoy {
    var mooring: Tethered?
    init() {}
}

@Managed final class Survey {
    @Attribute(.unique) var spot: Position
    var label: String
    #Index<Survey>([\.spot.latitude])
    init(spot: Position, label: String) {
        self.spot = spot
        self.label = label
    }
}

@Composite struct Gauge {
    var label: String
    var count: Int
}

@Managed final class Meter {
    var gauge: Gauge
    init(gauge: Gauge) { self.gauge = gauge }
}

/// A `@Composite` struct as a composite attribute: each element stored as an attribute of its
/// own, read and written through the struct, queried and sorted by element, bound to an Xcode
/// model's composite, and refused with a message naming both when it does not match.
@Suite struct ManagedCompositeTests {
    static func stretch(_ latitude: Double, _ length: Double, _ surface: TrailSurface, note: String? = nil) -> Stretch {
        Stretch(start: Position(latitude: latitude, longitude: -latitude), length: length, surface: surface, note: note)
    }

    @Test func theDerivedModelHasTheStructsAsCompositeTypes() throws {
        let model = try Model(for: [Trail.self, Place.self])
        #expect(model.composites.map(\.name) == ["Address", "Position", "Stretch"])
        let stretch = try #require(model.composites.first { $0.name == "Stretch" })
        #expect(stretch.elements.map(\.name) == ["length", "note", "start", "surface"])
        #expect(stretch.elements.first { $0.name == "start" }?.type == .composite("Position"))
        #expect(stretch.elements.first { $0.name == "note" }?.isOptional == true)
        #expect(stretch.elements.first { $0.name == "surface" }?.type == .string)
        let trail = try #require(model.entity(named: "Trail"))
        #expect(
            trail.attributes.map(\.name).sorted() == [
                "name", "route.length", "route.note", "route.start.latitude", "route.start.longitude", "route.surface"
            ])
        #expect(trail.attributes.first { $0.name == "route.start.latitude" }?.isOptional == false)
        // Every stored leaf of an optional composite may hold nil.
        let place = try #require(model.entity(named: "Place"))
        let leaves = place.attributes.filter { $0.name.hasPrefix("address.") }
        #expect(leaves.count == 4 && leaves.allSatisfy { $0.isOptional })
        #expect(place.isComposite("address"))
    }

    @Test func aCompositeIsWrittenReadAndReopenedElementByElement() async throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/trails"
        do {
            let store = try Store(at: path, for: [Trail.self])
            let context = store.newBackgroundContext()
            let trail = Trail(name: "Coast", route: Self.stretch(48.5, 12.25, .gravel, note: "windy"))
            #expect(trail.route.surface == .gravel)  // a new object keeps its value
            context.insert(trail)
            #expect(trail.route == Self.stretch(48.5, 12.25, .gravel, note: "windy"))
            try await context.save()
            let object = try #require(trail.managedObject)
            #expect(try object.value(forKey: "route.start.latitude") as Double? == 48.5)
            #expect(try object.value(forKey: "route.surface") as String? == "gravel")
            #expect(try object.value(forKey: "route.note") as String? == "windy")
            // A change by name is the typed value's change, and back.
            try object.setValue(Value.string("dirt"), forKey: "route.surface")
            #expect(trail.route.surface == .dirt)
            trail.route.length = 13
            trail.route.note = nil
            #expect(try object.value(forKey: "route.length") as Double? == 13)
            #expect(try object.value(forKey: "route.note") as String? == nil)
            try await context.save()
            try await store.close()
        }
        let reopened = try Store(at: path, for: [Trail.self])
        let trails = try reopened.viewContext.fetch(FetchDescriptor<Trail>())
        #expect(trails.map(\.route) == [Self.stretch(48.5, 13, .dirt)])
    }

    @Test func predicatesAndSortKeysNameElements() async throws {
        let store = try Store(inMemoryFor: [Trail.self])
        let context = store.newBackgroundContext()
        for (name, latitude, length, surface) in [("a", 10.0, 5.0, TrailSurface.paved), ("b", -20, 8, .gravel), ("c", 30, 2, .gravel)] {
            context.insert(Trail(name: name, route: Self.stretch(latitude, length, surface)))
        }
        try await context.save()
        func names(_ predicate: Predicate<Trail>? = nil, _ sort: [SortDescriptor<Trail>] = [SortDescriptor(\.name)]) throws -> [String] {
            try store.viewContext.fetch(FetchDescriptor(predicate: predicate, sortBy: sort)).map(\.name)
        }
        #expect(try names(#Predicate { $0.route.length > 4 }) == ["a", "b"])
        #expect(try names(#Predicate { $0.route.start.latitude < 0 || $0.route.start.longitude < -25 }) == ["b", "c"])
        let gravel = TrailSurface.gravel
        #expect(try names(#Predicate { $0.route.surface == gravel && $0.route.note == nil }) == ["b", "c"])
        #expect(try names(nil, [SortDescriptor(\.route.length)]) == ["c", "a", "b"])
        #expect(try names(nil, [SortDescriptor(\.route.start.latitude, order: .reverse)]) == ["c", "a", "b"])
    }

    @Test func anOptionalCompositeIsNilWhenEveryElementIs() async throws {
        let store = try Store(inMemoryFor: [Place.self])
        let context = store.newBackgroundContext()
        let home = Place(label: "home")
        let office = Place(label: "office", address: Address(city: "Lyon", postcode: "69001", position: Position(latitude: 45.76, longitude: 4.83)))
        let shed = Place(label: "shed", address: Address(city: "Lyon", postcode: nil, position: nil))
        for place in [home, office, shed] { context.insert(place) }
        try await context.save()
        #expect(home.address == nil)
        #expect(office.address?.position?.latitude == 45.76)
        #expect(shed.address == Address(city: "Lyon", postcode: nil, position: nil))
        func labels(_ predicate: Predicate<Place>) throws -> [String] {
            try store.viewContext.fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.label)])).compactMap(\.label)
        }
        #expect(try labels(#Predicate { $0.address?.city == "Lyon" }) == ["office", "shed"])
        #expect(try labels(#Predicate { $0.address?.position?.latitude ?? 0 > 40 }) == ["office"])
        let sorted = try store.viewContext.fetch(FetchDescriptor<Place>(sortBy: [SortDescriptor(\.address?.postcode), SortDescriptor(\.label)]))
        #expect(sorted.compactMap(\.label) == ["home", "shed", "office"])
        office.address = nil
        #expect(try office.managedObject?.value(forKey: "address.position.longitude") as Double? == nil)
        #expect(office.address == nil)
    }

    @Test func theClassBindsToAnXcodeModelsComposite() async throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/Models/Composite.xcdatamodel/contents")
        let model = try Model(xcodeModelXML: try Data(contentsOf: url), file: url.path)
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.path + "/places", model: model, for: [Place.self])
        let context = store.newBackgroundContext()
        let place = Place(label: "pier", visits: 3, address: Address(city: "Brest", postcode: nil, position: Position(latitude: 48.38, longitude: -4.49)))
        context.insert(place)
        try await context.save()
        let object = try #require(place.managedObject)
        #expect(try object.compositeValue(forKey: "address")["position.longitude"] == .double(-4.49))
        let fetched = try store.viewContext.fetch(FetchDescriptor<Place>(predicate: #Predicate { $0.address?.city == "Brest" }))
        #expect(fetched.first?.address?.position == Position(latitude: 48.38, longitude: -4.49))
    }

    @Test func aCompositeThatDoesNotMatchTheEntityIsRefusedNamingBoth() throws {
        let folder = TemporaryDirectory()
        let model = try Model(composites: [Composite("Address", elements: [Attribute("city", .string), Attribute("zip", .string)])]) {
            Entity("Place") {
                Attribute("label", .string)
                Attribute("visits", .integer32, optional: false)
                Attribute("address", .composite("Address"))
            }
        }
        let error = #expect(throws: StoreError.self) { try Store(at: folder.path + "/s", model: model, for: [Place.self]) }
        #expect(error?.code == .modelMismatch)
        #expect(error?.message.contains("Place.address (Optional<Address>) does not match entity Place") == true)
        #expect(error?.message.contains("the entity has no attribute address.postcode") == true)

        let plain = try Model {
            Entity("Place") {
                Attribute("label", .string)
                Attribute("visits", .integer32, optional: false)
                Attribute("address", .string)
            }
        }
        let flat = #expect(throws: StoreError.self) { try Store(at: folder.path + "/t", model: plain, for: [Place.self]) }
        #expect(flat?.message.contains("the entity has no attribute address.city") == true)
    }

    @Test func anObjectAsAnElementIsRefusedNamingIt() throws {
        let error = #expect(throws: StoreError.self) { try Store(inMemoryFor: [Buoy.self]) }
        #expect(error?.message.contains("composite Tethered.marker is Optional<Marker>") == true)
        #expect(error?.entity == "Buoy")
    }

    @Test func aUniqueOrIndexedCompositeCoversItsElements() async throws {
        let model = try Model(for: [Survey.self])
        let survey = try #require(model.entities.first { $0.name == "Survey" })
        #expect(survey.uniquenessConstraints == [["spot.latitude", "spot.longitude"]])
        #expect(survey.fetchIndexes.map(\.name) == ["spot_latitude"])
        #expect(survey.fetchIndexes.first?.elements.map(\.attribute) == ["spot.latitude"])
        let store = try Store(inMemoryFor: [Survey.self])
        let context = store.newBackgroundContext()
        context.insert(Survey(spot: Position(latitude: 1, longitude: 2), label: "a"))
        context.insert(Survey(spot: Position(latitude: 1, longitude: 3), label: "b"))
        try await context.save()
        context.insert(Survey(spot: Position(latitude: 1, longitude: 2), label: "c"))
        await #expect(throws: StoreError.self) { try await context.save() }
    }

    @Test func anOptionalCompositeWithEveryElementNilReadsAsNil() async throws {
        let store = try Store(inMemoryFor: [Place.self])
        let context = store.newBackgroundContext()
        let blank = Place(label: "blank", address: Address(city: nil, postcode: nil, position: nil))
        context.insert(blank)
        #expect(blank.address == nil)  // as documented: nothing stored tells the two apart
    }

    @Test func aCompositeWriteThatAnElementRefusesChangesNoElement() async throws {
        let model = try Model(composites: [Composite("Gauge", elements: [Attribute("count", .integer16), Attribute("label", .string, optional: false)])]) {
            Entity("Meter") { Attribute("gauge", .composite("Gauge"), optional: false) }
        }
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.path + "/meters", model: model, for: [Meter.self])
        let context = store.newBackgroundContext()
        let meter = Meter(gauge: Gauge(label: "old", count: 7))
        context.insert(meter)
        try await context.save()
        meter.gauge = Gauge(label: "new", count: 100_000)  // beyond integer 16
        #expect(try meter.managedObject?.value(forKey: "gauge.label") as String? == "old")
        #expect(try meter.managedObject?.value(forKey: "gauge.count") as Int? == 7)
        await #expect(throws: StoreError.self) { try await context.save() }
        context.rollback()
        try await store.close()
    }
}
