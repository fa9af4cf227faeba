import CairnTestSupport
import Foundation
import Testing
@testable import Cairn
@testable import CairnLog

/// A Cairn store (object graph) written by format version 1 and kept in
/// `Fixtures/Stores/store-v1`, with its expected contents in `store-v1.expected.txt`: every
/// later build must open it and read exactly those objects (docs/FORMAT.md, "Compatibility").
///
/// The store holds every attribute type, every kind of relationship, entity inheritance, a
/// uniqueness constraint, updates and deletes, a migration record (written with model version 1,
/// then opened with version 2), a trained compression dictionary and several segments.
/// Regenerate it only when the format version changes, next to the old one:
/// `CAIRN_WRITE_FIXTURES=1 swift test --filter writeStoreVersion1Fixture`.
@Suite struct GoldenGraphStoreTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/Stores")
    static let version1 = fixtures.appendingPathComponent("store-v1").path
    static let version1Dump = fixtures.appendingPathComponent("store-v1.expected.txt").path

    /// The golden model: version 1 wrote the store's first records; version 2 (the current one)
    /// adds `Person.email` and the entity `Note`, widens `Passport.number` to 64 bits and renames
    /// `Tag.name` to `label`.
    static func model(version: Int) throws -> Model {
        try Model {
            Entity("Item", abstract: true) {
                Attribute("code", .string, optional: false)
                // Many-to-many, with an inverse.
                Relationship("tags", to: "Tag", inverse: "items", .toMany(ordered: false))
                Unique("code")
            }
            Entity("Sample", parent: "Item") {
                Attribute("text", .string)
                Attribute("small", .integer16)
                Attribute("medium", .integer32)
                Attribute("large", .integer64, indexed: true)
                Attribute("ratio", .double)
                Attribute("level", .float)
                Attribute("price", .decimal)
                Attribute("flag", .boolean, default: false)
                Attribute("stamp", .date)
                Attribute("blob", .binary)
                Attribute("identifier", .uuid)
                Attribute("link", .uri)
                Attribute("colour", .transformable(transformer: "GoldenRGB"))
                Attribute("scratch", .string, transient: true)
                // To-one with an inverse (many-to-one), to-many ordered with an inverse,
                // to-many unordered without one, to-one without one.
                Relationship("owner", to: "Person", inverse: "samples")
                Relationship("steps", to: "Step", inverse: "sample", .toMany(ordered: true), deleteRule: .cascade)
                Relationship("related", to: "Sample", .toMany(ordered: false))
                Relationship("favourite", to: "Tag")
            }
            Entity("Special", parent: "Sample") {
                Attribute("note", .string)
            }
            Entity("Gadget", parent: "Item") {
                Attribute("weight", .double)
            }
            Entity("Person") {
                Attribute("name", .string, optional: false)
                if version >= 2 { Attribute("email", .string) }
                Relationship("samples", to: "Sample", inverse: "owner", .toMany(ordered: false))
                // One-to-one, and to-many ordered without an inverse.
                Relationship("passport", to: "Passport", inverse: "holder", deleteRule: .cascade)
                Relationship("reading", to: "Item", .toMany(ordered: true))
                Unique("name")
            }
            Entity("Passport") {
                Attribute("number", version >= 2 ? .integer64 : .integer32)
                Relationship("holder", to: "Person", inverse: "passport")
            }
            Entity("Step") {
                Attribute("title", .string)
                Relationship("sample", to: "Sample", inverse: "steps")
            }
            Entity("Tag") {
                if version >= 2 { Attribute("label", .string, renamingIdentifier: "name") } else { Attribute("name", .string) }
                Relationship("items", to: "Item", inverse: "tags", .toMany(ordered: false))
            }
            if version >= 2 {
                Entity("Note") {
                    Attribute("text", .string)
                }
            }
        }
    }

    // MARK: Writing the fixture

    @Test(.enabled(if: ProcessInfo.processInfo.environment["CAIRN_WRITE_FIXTURES"] == "1"))
    func writeStoreVersion1Fixture() async throws {
        try? FileManager.default.removeItem(atPath: Self.version1)
        try FileManager.default.createDirectory(atPath: Self.fixtures.path, withIntermediateDirectories: true)
        var options = StoreOptions()
        options.segmentSize = 4096
        options.durability = .none
        let first = try Store(at: Self.version1, model: try Self.model(version: 1), options: options)
        try await Self.writeVersion1Objects(first)
        try await first.close()
        // Opening with version 2 migrates the store and appends a migration record.
        let second = try Store(at: Self.version1, model: try Self.model(version: 2), options: options)
        try await Self.writeVersion2Objects(second)
        try await second.close()
        try FileManager.default.removeItem(atPath: Self.version1 + "/LOCK")

        var readOnly = StoreOptions()
        readOnly.readOnly = true
        let reader = try Store(at: Self.version1, model: try Self.model(version: 2), options: readOnly)
        try Data(try Self.dump(reader).utf8).write(to: URL(fileURLWithPath: Self.version1Dump))
        try await reader.close()
        try Self.expectEveryFeature(Self.version1)
    }

    /// Version 1's objects, one save at a time (each save a frame, so that the log trains a
    /// dictionary): tags, people with passports, samples with steps, gadgets, reading lists,
    /// then updates and deletes.
    static func writeVersion1Objects(_ store: Store) async throws {
        let context = store.newBackgroundContext(name: "golden v1")
        var tags: [ManagedObject] = []
        for index in 0..<8 {
            let tag = try context.insert("Tag")
            try tag.setValue(.string("tag \(index)"), forKey: "name")
            tags.append(tag)
        }
        try await context.save()
        var people: [ManagedObject] = []
        for index in 0..<12 {
            let person = try context.insert("Person")
            try person.setValue(.string("Person \(index)"), forKey: "name")
            if index % 2 == 0 {
                // One-to-one: the person's passport follows.
                let passport = try context.insert("Passport")
                let number: Int64 = index == 0 ? Int64(Int32.max) : index == 2 ? Int64(Int32.min) : Int64(index) * 100_003
                try passport.setValue(.integer(number), forKey: "number")
                try passport.setObject(person, forKey: "holder")
            }
            people.append(person)
            try await context.save()
        }
        var samples: [ManagedObject] = []
        for index in 0..<120 {
            let sample = try context.insert(index % 4 == 3 ? "Special" : "Sample")
            try setValues(of: sample, index)
            if index % 4 == 3 { try sample.setValue(.string("special \(index)"), forKey: "note") }
            if index % 5 != 4 { try sample.setObject(people[index % 12], forKey: "owner") }
            if index % 3 == 0 { try sample.setObject(tags[index % 8], forKey: "favourite") }
            try sample.setObjects(Array(Set([tags[index % 8], tags[(index * 3 + 1) % 8]])).sorted { $0.objectID < $1.objectID }, forKey: "tags")
            // Only samples that are never deleted are pointed at without an inverse.
            let related = Set([index / 2, index - 1, index * 7 % 11].filter { $0 >= 0 && $0 < index && !isDeleted(sample: $0) })
            try sample.setObjects(related.sorted().map { samples[$0] }, forKey: "related")
            var steps: [ManagedObject] = []
            for number in 0..<(index % 4) {
                let step = try context.insert("Step")
                try step.setValue(.string("step \(index).\(number)"), forKey: "title")
                steps.append(step)
            }
            try sample.setObjects(steps, forKey: "steps")
            samples.append(sample)
            try await context.save()
        }
        var gadgets: [ManagedObject] = []
        for index in 0..<30 {
            let gadget = try context.insert("Gadget")
            try gadget.setValue(.string("G-\(padded(index))"), forKey: "code")
            try gadget.setValue(index % 6 == 5 ? .null : .double(Double(index) * 0.75), forKey: "weight")
            try gadget.setObjects([tags[(index + 2) % 8]], forKey: "tags")
            gadgets.append(gadget)
            try await context.save()
        }
        for (index, person) in people.enumerated() {
            let kept = [(index * 13) % 120, (index * 29 + 2) % 120].filter { !isDeleted(sample: $0) }.map { samples[$0] }
            try person.setObjects(kept + [gadgets[index % 9]], forKey: "reading")
            try await context.save()
        }
        // Enough saves (each one frame) that the log trains a dictionary well before the
        // migration, and later frames are compressed with it.
        for update in 0..<160 {
            let index = (update * 7) % 120
            let sample = samples[index]
            // Every update changes the link, so that each one is a frame.
            try sample.setValue(.uri("https://example.org/samples/\(index)?q=a%20b&revision=\(update)"), forKey: "link")
            switch update % 5 {
            case 0:
                let text = try sample.value(forKey: "text", as: String?.self)
                try sample.setValue(.string((text ?? "") + " (revised \(update))"), forKey: "text")
            case 1: try sample.setValue(.null, forKey: "small")
            case 2: try sample.setObjects(try sample.objects(forKey: "steps").reversed(), forKey: "steps")
            case 3:
                try sample.setValue(.boolean(update % 2 == 0), forKey: "flag")
                try sample.setValue(.decimal(Decimal(update) / 8), forKey: "price")
            default:
                try sample.removeObject(try #require(try sample.objects(forKey: "tags").first), forKey: "tags")
                try sample.addObject(tags[update % 8], forKey: "tags")
            }
            try await context.save()
        }
        // Deletes: samples (their steps cascade), gadgets no list points to, and a person (the
        // passport cascades; their samples lose their owner).
        for index in samples.indices where isDeleted(sample: index) {
            try samples[index].delete()
            try await context.save()
        }
        for index in gadgets.indices where index % 10 == 9 {
            try gadgets[index].delete()
            try await context.save()
        }
        try people[4].delete()
        try await context.save()
    }

    /// Whether the sample of this index is deleted by version 1 (so that nothing points to it
    /// through a relationship without an inverse).
    static func isDeleted(sample index: Int) -> Bool { index % 10 == 5 }

    /// Version 2's changes, after the migration: the new attribute, a passport number beyond 32
    /// bits, the renamed attribute, the new entity, more samples.
    static func writeVersion2Objects(_ store: Store) async throws {
        let context = store.newBackgroundContext(name: "golden v2")
        let people = try context.fetch(FetchRequest("Person", sortKeys: [SortKey("name")]))
        for (index, person) in people.enumerated() where index % 3 != 2 {
            try person.setValue(.string("person\(index)@example.org"), forKey: "email")
            try await context.save()
        }
        let passport = try #require(try context.fetch(FetchRequest("Passport", sortKeys: [SortKey("number")])).last)
        try passport.setValue(.integer(5_000_000_000), forKey: "number")
        let tag = try #require(try context.fetchFirst(FetchRequest("Tag", predicate: .equal("label", "tag 0"))))
        try tag.setValue(.string("tag zero"), forKey: "label")
        let note = try context.insert("Note")
        try note.setValue(.string("written after the migration"), forKey: "text")
        try await context.save()
        for index in 200..<210 {
            let sample = try context.insert(index % 2 == 0 ? "Sample" : "Special")
            try setValues(of: sample, index)
            try sample.setObject(people[index % people.count], forKey: "owner")
            try sample.setObjects([tag], forKey: "tags")
            try await context.save()
        }
    }

    /// Deterministic values of every attribute type, with edge cases (extremes of each integer
    /// width, −0, infinities, dates before 1970, empty bytes, nulls).
    static func setValues(of sample: ManagedObject, _ index: Int) throws {
        let number = Int64(index)
        let edgeDoubles: [Double] = [-0.0, .infinity, -.infinity, .leastNonzeroMagnitude]
        let values: [(String, Value)] = [
            ("code", .string("S-\(padded(index))")),
            ("text", index % 7 == 6 ? .null : .string(index % 5 == 0 ? "sample \(index): ünïcödé ✓ \"quoted\"\n" : "sample \(index)")),
            ("small", .integer(index == 0 ? Int64(Int16.min) : index == 1 ? Int64(Int16.max) : number * 263 % 30_000 - 15_000)),
            ("medium", .integer(index == 0 ? Int64(Int32.min) : index == 1 ? Int64(Int32.max) : number * 1_000_003 - 50_000_000)),
            ("large", .integer(index == 0 ? .min : index == 1 ? .max : number * 1_000_000_000_007 - 3)),
            ("ratio", .double(index < edgeDoubles.count ? edgeDoubles[index] : Double(number) / 7 - 5)),
            ("level", index % 8 == 7 ? .null : .float(index == 0 ? .greatestFiniteMagnitude : Float(number) * 0.3)),
            ("price", .decimal(Decimal(string: "\(index % 2 == 0 ? "" : "-")\(number * 37).\(padded(index % 100, 2))") ?? 0)),
            ("flag", index % 3 == 0 ? .null : .boolean(index % 2 == 0)),
            ("stamp", .date(Date(timeIntervalSinceReferenceDate: index == 0 ? -10_000_000_000 : 800_000_000 + Double(number) * 86_400.125))),
            ("blob", index % 6 == 0 ? .null : .binary((0..<(index % 9)).map { UInt8(($0 * 31 + index) % 256) })),
            ("identifier", .uuid(uuid(index))),
            ("link", .uri("https://example.org/samples/\(index)?q=a%20b")),
            ("colour", .binary([UInt8(index % 256), UInt8(index * 2 % 256), UInt8(index * 3 % 256)]))
        ]
        for (key, value) in values { try sample.setValue(value, forKey: key) }
    }

    /// A UUID made from an index.
    static func uuid(_ index: Int) -> UUID {
        var bytes = (0..<16).map { UInt8(($0 * 17 + index * 5) % 256) }
        bytes[6] = 0x40 | (bytes[6] & 0x0F)
        bytes[8] = 0x80 | (bytes[8] & 0x3F)
        return bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
    }

    /// `number` with leading zeros up to `width` digits.
    static func padded(_ number: Int, _ width: Int = 3) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    // MARK: The dump

    /// Every object of the store, one block each, in a canonical text form: entities by name,
    /// objects by key; each attribute (transient ones left out) and each relationship in
    /// position order; unordered relationships' targets by ID, ordered ones in their order.
    static func dump(_ store: Store) throws -> String {
        let context = store.newBackgroundContext(name: "dump")
        var text = ""
        for entity in store.model.descriptions {
            let objects = try context.fetch(FetchRequest(entity.name, includesSubentities: false)).sorted { $0.objectID < $1.objectID }
            for object in objects {
                text += "\(name(object))\n"
                for attribute in entity.attributes where !attribute.isTransient {
                    text += "  \(attribute.name) = \(describe(try object.value(forKey: attribute.name, as: Value.self)))\n"
                }
                for relationship in entity.relationships {
                    let value: String
                    if !relationship.isToMany {
                        value = try object.object(forKey: relationship.name).map(name) ?? "nil"
                    } else if relationship.isOrdered {
                        value = "[" + (try object.objects(forKey: relationship.name)).map(name).joined(separator: ", ") + "]"
                    } else {
                        let targets = try object.objects(forKey: relationship.name).sorted { $0.objectID < $1.objectID }
                        value = "{" + targets.map(name).joined(separator: ", ") + "}"
                    }
                    text += "  \(relationship.name) -> \(value)\n"
                }
            }
        }
        return text
    }

    /// `Entity#key`.
    static func name(_ object: ManagedObject) -> String { "\(object.entity.name)#\(object.objectID.key)" }

    /// A value in a form that keeps every bit: numbers as Swift prints them (shortest text that
    /// reads back exactly), dates as seconds since 2001, bytes in hex.
    static func describe(_ value: Value) -> String {
        switch value {
        case .null: return "nil"
        case .string(let text): return "string " + quoted(text)
        case .integer(let number): return "integer \(number)"
        case .double(let number): return "double \(number)"
        case .float(let number): return "float \(number)"
        case .decimal(let number): return "decimal \(number)"
        case .boolean(let flag): return "boolean \(flag)"
        case .date(let date): return "date \(date.timeIntervalSinceReferenceDate)"
        case .binary(let bytes): return "binary <" + bytes.map(hex).joined() + ">"
        case .uuid(let id): return "uuid \(id.uuidString)"
        case .uri(let text): return "uri " + quoted(text)
        }
    }

    /// `text` in double quotes, with quotes, backslashes and control characters escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case let control where control.value < 0x20: out += "\\u{\(String(control.value, radix: 16))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// A byte in two hexadecimal digits.
    static func hex(_ byte: UInt8) -> String {
        (byte < 16 ? "0" : "") + String(byte, radix: 16)
    }

    // MARK: Reading the fixture

    /// The fixture holds what it is meant to: several segments, a trained dictionary used by
    /// frames, the model record and one migration.
    static func expectEveryFeature(_ store: String) throws {
        let inspection = try LogInspection.inspect(directory: store)
        #expect(inspection.isHealthy)
        #expect(inspection.segments.count > 3, "several segments")
        #expect(inspection.dictionaries >= 1, "a trained dictionary")
        #expect(inspection.storedBytes < inspection.rawBytes, "compressed frames")
        var codecs: [FrameCodec: Int] = [:]
        for segment in inspection.segments {
            for (_, header) in try frameHeaders(ofSegment: store + "/" + segment.file) { codecs[header.codec, default: 0] += 1 }
        }
        #expect(codecs[.lz4Dictionary, default: 0] > 10, "frames compressed with the dictionary: \(codecs)")
        let models = try Store.storedModels(at: store)
        #expect(models.count == 2, "the model record and a migration record")
        #expect(try models.first == model(version: 1) && models.last == model(version: 2))
    }

    @Test func storeVersion1OpensWithItsObjectsAndTakesChanges() async throws {
        try #require(FileManager.default.fileExists(atPath: Self.version1 + "/MANIFEST"), "fixture missing: \(Self.version1)")
        let directory = TemporaryDirectory()
        let copy = directory.store()
        try FileManager.default.copyItem(atPath: Self.version1, toPath: copy)
        try Self.expectEveryFeature(copy)

        let model = try Self.model(version: 2)
        let store = try Store(at: copy, model: model)
        let expected = try String(contentsOfFile: Self.version1Dump, encoding: .utf8)
        let dumped = try Self.dump(store)
        #expect(dumped == expected, "the objects of store-v1 as this build reads them differ from store-v1.expected.txt")

        // An insert, an update and a delete, saved and read back after a reopen.
        let context = store.newBackgroundContext(name: "change")
        let sample = try context.insert("Special")
        try Self.setValues(of: sample, 900)
        try sample.setValue(.string("added by the test"), forKey: "note")
        let owner = try #require(try context.fetchFirst(FetchRequest("Person", predicate: .equal("name", "Person 0"))))
        try sample.setObject(owner, forKey: "owner")
        try owner.setValue(.string("changed@example.org"), forKey: "email")
        let gadgets = try context.count(FetchRequest("Gadget"))
        let gadget = try #require(try context.fetchFirst(FetchRequest("Gadget", sortKeys: [SortKey("code")])))
        let gadgetCode = try gadget.value(forKey: "code", as: String.self)
        try gadget.delete()
        try await context.save()
        let changed = try Self.dump(store)
        try await store.close()

        let reopened = try Store(at: copy, model: model)
        #expect(try Self.dump(reopened) == changed)
        let view = reopened.newBackgroundContext(name: "check")
        let added = try #require(try view.fetchFirst(FetchRequest("Item", predicate: .equal("code", "S-900"))))
        #expect(added.entity.name == "Special")
        #expect(try added.value(forKey: "note", as: String?.self) == "added by the test")
        #expect(try added.value(forKey: "large", as: Value.self) == .integer(900 * 1_000_000_000_007 - 3))
        #expect(try added.object(forKey: "owner")?.value(forKey: "email", as: String?.self) == "changed@example.org")
        #expect(try view.count(FetchRequest("Item", predicate: .equal("code", .string(gadgetCode)))) == 0)
        #expect(try view.count(FetchRequest("Gadget")) == gadgets - 1)
        try await reopened.close()
    }

    // MARK: Newer versions

    /// Rewrites the masked CRC32C of `bytes[0 ..< end]` at `offset`.
    static func reseal(_ bytes: inout [UInt8], over end: Int, at offset: Int) {
        let checksum = CRC32C.mask(CRC32C.checksum(Array(bytes[0..<end])))
        withUnsafeBytes(of: checksum.littleEndian) { bytes.replaceSubrange(offset..<(offset + 4), with: $0) }
    }

    /// Opens `store` with the golden model; returns the error, if any.
    static func openError(_ store: String) -> (any Error)? {
        do {
            _ = try Store(at: store, model: try model(version: 2))
            return nil
        } catch {
            return error
        }
    }

    @Test func aStoreWrittenByANewerVersionIsRefusedAsSuch() async throws {
        try #require(FileManager.default.fileExists(atPath: Self.version1 + "/MANIFEST"), "fixture missing: \(Self.version1)")
        let directory = TemporaryDirectory()
        /// Copies the fixture, changes one file's version field (its checksum still valid), and
        /// returns the copy.
        func forged(_ name: String, file: String, version: UInt8, checksum: (_ size: Int) -> (end: Int, offset: Int)) throws -> String {
            let copy = directory.store(name)
            try FileManager.default.copyItem(atPath: Self.version1, toPath: copy)
            let path = copy + "/" + file
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            bytes[8] = version
            bytes[9] = 0
            let (end, offset) = checksum(bytes.count)
            Self.reseal(&bytes, over: end, at: offset)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return copy
        }
        let atTheEnd = { (size: Int) in (size - 4, size - 4) }
        let stores = [
            // One above each current version (the manifest's is 2: a compacted store's).
            ("manifest", 3, try forged("manifest", file: "MANIFEST", version: 3, checksum: atTheEnd)),
            ("segment", 3, try forged("segment", file: StoreLayout.name(.segment, 1), version: 3) { _ in (60, 60) }),
            ("dictionary", 2, try forged("dictionary", file: StoreLayout.name(.dictionary, 1), version: 2, checksum: atTheEnd))
        ]
        for (what, version, store) in stores {
            let error = try #require(Self.openError(store), "\(what)")
            #expect((error as? LogError)?.code == .unsupportedFormat, "\(what): \(error)")
            #expect("\(error)".contains("\(what) format version \(version): written by a newer version of Cairn"), "\(what): \(error)")
        }
        // A store record one above the newest version (2) in a whole frame.
        let record = directory.store("record")
        try FileManager.default.copyItem(atPath: Self.version1, toPath: record)
        let log = try Log.open(at: record)
        let lsn = try await log.append([StoreRecord.changesKind, StoreRecord.version + 1, 0, 0, 0])
        try await log.close()
        let error = try #require(Self.openError(record))
        #expect((error as? StoreError)?.code == .unsupportedFormat && (error as? StoreError)?.lsn == lsn, "\(error)")
        #expect("\(error)".contains("was written by a newer version of Cairn"), "\(error)")
        // A version Cairn never wrote is not called newer.
        let older = try forged("older", file: "MANIFEST", version: 0, checksum: atTheEnd)
        let olderError = try #require(Self.openError(older))
        #expect((olderError as? LogError)?.code == .unsupportedFormat && !"\(olderError)".contains("newer"), "\(olderError)")
    }
}
