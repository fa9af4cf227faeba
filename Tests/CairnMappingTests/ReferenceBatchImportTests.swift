import Cairn
import CairnTestSupport
import Foundation
import Testing

@testable import CairnMapping

/// Flat records whose to-one relationships are given by key (`"album": 12`) are read straight
/// into encoded rows and set by the batch upsert, which finds each key's object through the
/// destination's uniqueness index and keeps the inverse to-many in step. That path must leave
/// exactly what the context path leaves: the same objects, links at both ends, counts, warnings
/// and errors, whatever the input (keys nothing holds, nulls, repeated records, changed links).
@Suite struct ReferenceBatchImportTests {
    /// Chinook's shape: tracks point to an album (inverse `tracks`) and a genre (no inverse, a
    /// text key); albums to an artist (inverse `albums`); a review requires its track.
    static func model() throws -> Model {
        try Model {
            Entity("Artist") {
                Attribute("artistId", .integer64, optional: false)
                Attribute("name", .string)
                Relationship("albums", to: "Album", inverse: "artist", .toMany(ordered: false))
                Unique("artistId")
            }
            Entity("Genre") {
                Attribute("code", .string, optional: false)
                Attribute("name", .string)
                Unique("code")
            }
            Entity("Album") {
                Attribute("albumId", .integer64, optional: false)
                Attribute("title", .string)
                Relationship("artist", to: "Artist", inverse: "albums")
                Relationship("tracks", to: "Track", inverse: "album", .toMany(ordered: false))
                Unique("albumId")
            }
            Entity("Track") {
                Attribute("trackId", .integer64, optional: false)
                Attribute("name", .string)
                Relationship("album", to: "Album", inverse: "tracks")
                Relationship("genre", to: "Genre")
                Relationship("reviews", to: "Review", inverse: "track", .toMany(ordered: false))
                Unique("trackId")
            }
            Entity("Review") {
                Attribute("reviewId", .integer64, optional: false)
                Attribute("stars", .integer16)
                Relationship("track", to: "Track", inverse: "reviews", optional: false)
                Unique("reviewId")
            }
        }
    }

    /// Every object of every entity, by key: its attributes and, for each relationship, the
    /// keys of the objects it holds (sorted for a to-many): both ends of every link.
    static func dump(_ store: Store, _ model: Model) throws -> [String] {
        let keys = ["Artist": "artistId", "Genre": "code", "Album": "albumId", "Track": "trackId", "Review": "reviewId"]
        var lines: [String] = []
        for entity in model.descriptions {
            guard let key = keys[entity.name] else { continue }
            for object in try store.viewContext.fetch(FetchRequest(entity.name, sortKeys: [SortKey(key)])) {
                var line = "\(entity.name)"
                for attribute in entity.attributes { line += " \(attribute.name)=\(object[attribute.name] ?? .null)" }
                for relationship in entity.relationships {
                    let destinationKey = keys[relationship.destination] ?? ""
                    let targets =
                        relationship.isToMany
                        ? try object.objects(forKey: relationship.name) : [try object.object(forKey: relationship.name)].compactMap { $0 }
                    let named = targets.map { "\($0[destinationKey] ?? .null)" }
                    line += " \(relationship.name)=[\((relationship.isToMany ? named.sorted() : named).joined(separator: ","))]"
                }
                lines.append(line)
            }
        }
        return lines
    }

    /// Artists 1…4, genres g1…g3, albums 1…6 (album `n` by artist `n % 4 + 1`).
    static let setup = [
        ("Artist", #"[{"artistId": 1, "name": "a1"}, {"artistId": 2}, {"artistId": 3}, {"artistId": 4}]"#),
        ("Genre", #"[{"code": "g1", "name": "Rock"}, {"code": "g2"}, {"code": "g3"}]"#),
        ("Album", "[" + (1...6).map { #"{"albumId": \#($0), "title": "t\#($0)", "artist": \#($0 % 4 + 1)}"# }.joined(separator: ",") + "]")
    ]

    /// Random track records: repeated keys, albums that exist, that do not (`missing`), null or
    /// absent; genres likewise.
    static func randomTracks(_ generator: inout SeededRandom, count: Int, missing: Bool) -> [UInt8] {
        var records: [String] = []
        for _ in 0..<count {
            var fields = [#""trackId": \#(Int.random(in: 0..<(count / 2 + 1), using: &generator))"#]
            if Bool.random(using: &generator) { fields.append(#""name": "n\#(Int.random(in: 0..<4, using: &generator))""#) }
            switch Int.random(in: 0..<8, using: &generator) {
            case 0: fields.append(#""album": null"#)
            case 1: break
            case 2 where missing: fields.append(#""album": 99"#)
            default: fields.append(#""album": \#(Int.random(in: 1...6, using: &generator))"#)
            }
            switch Int.random(in: 0..<6, using: &generator) {
            case 0: fields.append(#""genre": null"#)
            case 1: break
            case 2 where missing: fields.append(#""genre": "gX""#)
            default: fields.append(#""genre": "g\#(Int.random(in: 1...3, using: &generator))""#)
            }
            records.append("{" + fields.shuffled(using: &generator).joined(separator: ", ") + "}")
        }
        return Array(("[" + records.joined(separator: ",\n") + "]").utf8)
    }

    /// What an import did, or how it failed, as text to compare.
    static func outcome(_ run: () async throws -> ImportResult) async -> (String, ImportResult?) {
        do {
            let result = try await run()
            let warnings = result.warnings.map(\.description).joined(separator: "; ")
            return ("\(result.inserted)/\(result.updated)/\(result.unchanged) saves \(result.saves) objects \(result.objectIDs.count) [\(warnings)]", result)
        } catch let error as MappingError {
            return ("\(error.code) \(error.path ?? "-") \(error.offset ?? -1) \(error)", nil)
        } catch {
            return ("\(error)", nil)
        }
    }

    @Test(arguments: 0..<16) func bothPathsLinkTheSameObjects(seed: Int) async throws {
        let model = try Self.model()
        let mapping = try Mapping(model: model)
        var generator = SeededRandom(seed: UInt64(seed))
        var options = ImportOptions()
        options.lenient = seed % 2 == 1
        if seed % 4 == 2 { options.updatesExisting = false }
        if seed % 4 == 3 { options.nulls = .neverOverwrite }
        var viaContext = options
        viaContext.afterImport = { _ in }  // a hook needs objects: the context path
        let fast = Store(inMemory: model)
        let slow = Store(inMemory: model)
        for (entity, json) in Self.setup {
            _ = try await fast.importJSON(Array(json.utf8), into: entity, mapping: mapping)
            _ = try await slow.importJSON(Array(json.utf8), into: entity, mapping: mapping)
        }
        // Strict seeds meet a missing key now and then (every import then fails alike).
        let missing = options.lenient || seed % 8 == 0
        let inputs = [Self.randomTracks(&generator, count: 40, missing: missing), Self.randomTracks(&generator, count: 40, missing: missing)]
        for (step, input) in [inputs[0], inputs[1], inputs[1]].enumerated() {
            let place = "seed \(seed), import \(step)"
            let (a, flat) = await Self.outcome { try await fast.importJSON(input, into: "Track", mapping: mapping, options: options) }
            let (b, context) = await Self.outcome { try await slow.importJSON(input, into: "Track", mapping: mapping, options: viaContext) }
            #expect(a == b, "\(place)")
            if let flat, let context {
                #expect(flat.recordsReadFlat == flat.records && context.recordsReadFlat == 0, "\(place): the paths taken")
                let keys = { (store: Store, ids: [ObjectID]) in try store.viewContext.objects(with: ids).map { $0["trackId"] } }
                #expect(try keys(fast, flat.objectIDs) == keys(slow, context.objectIDs), "\(place): objectIDs")
            }
            #expect(try Self.dump(fast, model) == Self.dump(slow, model), "\(place)")
        }
    }

    /// A key nothing holds fails a strict import with the context's error (its path, offset and
    /// message), and a lenient one leaves the relationship as it was, with its warning.
    @Test func aKeyNothingHoldsIsReportedAsTheContextReportsIt() async throws {
        let model = try Self.model()
        let input = #"[{"trackId": 1, "album": 2}, {"trackId": 2, "album": 77, "genre": "g1"}, {"trackId": 1, "genre": "nope"}]"#
        for lenient in [false, true] {
            var options = ImportOptions()
            options.lenient = lenient
            let (flat, context) = try await Self.bothWays(model, setup: Self.setup, "Track", input, options: options)
            #expect(flat.0 == context.0, "lenient \(lenient)")
            #expect(flat.2 == context.2, "lenient \(lenient)")
            if lenient {
                #expect(flat.1?.recordsReadFlat == 3)
                #expect(flat.0.contains("$[1].album: no Album has the key 77; the relationship is left as it is"), "\(flat.0)")
                #expect(flat.0.contains("$[2].genre: no Genre has the key \"nope\""), "\(flat.0)")
            } else {
                #expect(flat.0.contains(" $[1].album ") && flat.0.contains("no Album has the key 77, in the store or in the input"), "\(flat.0)")
            }
        }
    }

    /// A required relationship given a key nothing holds: strict, the import fails; lenient,
    /// the record is skipped (its object not made) with both warnings, on either path.
    @Test func aRequiredReferenceNothingHoldsSkipsTheRecord() async throws {
        let model = try Self.model()
        let input = #"[{"reviewId": 1, "track": 5, "stars": 4}, {"reviewId": 2, "track": 6}, {"reviewId": 3, "stars": 1}]"#
        let setup = Self.setup + [("Track", #"[{"trackId": 5, "album": 1}]"#)]
        for lenient in [false, true] {
            var options = ImportOptions()
            options.lenient = lenient
            let (flat, context) = try await Self.bothWays(model, setup: setup, "Review", input, options: options)
            #expect(flat.0 == context.0, "lenient \(lenient)")
            #expect(flat.2 == context.2, "lenient \(lenient)")
            if lenient {
                #expect(flat.2.contains { $0.hasPrefix("Track trackId=5") && $0.hasSuffix("reviews=[1]") }, "\(flat.2)")
                #expect(flat.2.filter { $0.hasPrefix("Review") }.count == 1, "\(flat.2)")
            }
        }
    }

    /// Moving tracks to another album takes them out of the old album's list; the store read
    /// again from its files (replay of the change records) holds the same links.
    @Test func movedLinksLeaveTheOldInverseAndSurviveReopening() async throws {
        let model = try Self.model()
        let directory = TemporaryDirectory()
        let store = try Store(at: directory.store(), model: model)
        for (entity, json) in Self.setup { _ = try await store.importJSON(Array(json.utf8), into: entity) }
        let first = Array(
            ("[" + (1...40).map { #"{"trackId": \#($0), "album": \#($0 % 3 + 1), "genre": "g\#($0 % 3 + 1)"}"# }.joined(separator: ",") + "]").utf8)
        let moved = Array(("[" + (1...40).map { #"{"trackId": \#($0), "album": \#($0 % 2 + 4)}"# }.joined(separator: ",") + "]").utf8)
        let a = try await store.importJSON(first, into: "Track")
        #expect(a.inserted == 40 && a.recordsReadFlat == 40)
        let b = try await store.importJSON(moved, into: "Track")
        #expect(b.updated == 40 && b.recordsReadFlat == 40)
        let c = try await store.importJSON(moved, into: "Track")
        #expect(c.unchanged == 40 && c.saves == 0, "the same links again change nothing")
        let view = store.viewContext
        for album in 1...3 { #expect(try view.one("Album", "albumId", .integer(Int64(album)))?.objects(forKey: "tracks").isEmpty == true) }
        let four = try #require(try view.one("Album", "albumId", 4))
        #expect(try four.objects(forKey: "tracks").map { try $0.value(forKey: "trackId", as: Int.self) }.sorted() == Array(stride(from: 2, through: 40, by: 2)))
        let before = try Self.dump(store, model)
        try await store.close()
        let reopened = try Store(at: directory.store(), model: model)
        #expect(try Self.dump(reopened, model) == before)
        try await reopened.close()
    }

    /// References on two cores: the second reader's rows carry their keys too.
    @Test func twoReadersLinkAsOne() async throws {
        let model = try Self.model()
        let padding = String(repeating: "p", count: 1_000)
        let records = (1...6_000).map { #"{"trackId": \#($0), "name": "\#(padding)", "album": \#($0 % 6 + 1), "genre": "g\#($0 % 3 + 1)"}"# }
        let input = Array(("[" + records.joined(separator: ",\n") + "]").utf8)
        var dumps: [[String]] = []
        for serial in [false, true] {
            let store = Store(inMemory: model)
            for (entity, json) in Self.setup { _ = try await store.importJSON(Array(json.utf8), into: entity) }
            var options = ImportOptions()
            if serial { options.chunkSize = .max }
            let result = try await store.importJSON(input, into: "Track", options: options)
            #expect(result.inserted == 6_000 && result.recordsReadFlat == 6_000)
            if !serial && ProcessInfo.processInfo.activeProcessorCount >= 2 { #expect(result.recordsReadOnSecondCore > 0) }
            dumps.append(try Self.dump(store, model).filter { !$0.hasPrefix("Track") })
        }
        #expect(dumps[0] == dumps[1])
        #expect(dumps[0].contains { $0.hasPrefix("Album albumId=1 ") && $0.contains("tracks=[") })
    }

    /// Imports `input` into two stores set up alike, one through the flat path and one through a
    /// context (a hook), with `options`; each one's outcome and every object's links.
    static func bothWays(
        _ model: Model, mapping: Mapping? = nil, setup: [(String, String)], _ entity: String, _ input: String, options: ImportOptions = ImportOptions()
    ) async throws -> (flat: (String, ImportResult?, [String]), context: (String, ImportResult?, [String])) {
        var outcomes: [(String, ImportResult?, [String])] = []
        for viaContext in [false, true] {
            let store = Store(inMemory: model)
            for (entity, json) in setup { _ = try await store.importJSON(Array(json.utf8), into: entity, mapping: mapping) }
            var options = options
            if viaContext { options.afterImport = { _ in } }
            let (text, result) = await Self.outcome { try await store.importJSON(Array(input.utf8), into: entity, mapping: mapping, options: options) }
            outcomes.append((text, result, try Self.dump(store, model)))
        }
        return (outcomes[0], outcomes[1])
    }

    /// A reference given under two key paths: the losing one is read and checked all the same,
    /// as a context's reader reads it (strict: its error; lenient: its warning).
    @Test func aReferenceUnderTwoKeysIsCheckedUnderBoth() async throws {
        let model = try Self.model()
        let mapping = try Mapping(model: model) { EntityMapping("Track") { RelationshipMap("album", from: "album_id", "albumId") } }
        for (input, lenient) in [
            (#"[{"trackId": 1, "album_id": 2, "albumId": "x"}, {"trackId": 2, "albumId": 3}]"#, false),
            (#"[{"trackId": 1, "album_id": 2, "albumId": "x"}, {"trackId": 2, "albumId": 3}]"#, true),
            (#"[{"trackId": 1, "albumId": 5, "album_id": 2}, {"trackId": 2, "album_id": null, "albumId": 3}]"#, false)
        ] {
            var options = ImportOptions()
            options.lenient = lenient
            let (flat, context) = try await Self.bothWays(model, mapping: mapping, setup: Self.setup, "Track", input, options: options)
            #expect(flat.0 == context.0, "\(input) lenient \(lenient)")
            #expect(flat.2 == context.2, "\(input) lenient \(lenient)")
        }
    }

    /// Unresolved keys in chunks, under a root key, with records skipped: each warning names its
    /// record's path and the key's offset as a context's does.
    @Test func unresolvedKeysNameTheirPlaceInChunks() async throws {
        let model = try Self.model()
        let records = (0..<40).map { #"{"trackId": \#($0), "album": \#($0 % 5 == 0 ? 90 + $0 : $0 % 6 + 1)}"# }
        let input = #"{"data": {"tracks": ["# + records.joined(separator: ",\n") + "]}}"
        var options = ImportOptions()
        options.lenient = true
        options.root = "data.tracks"
        options.chunkSize = 7
        options.skipRecords = 3
        let (flat, context) = try await Self.bothWays(model, setup: Self.setup, "Track", input, options: options)
        #expect(flat.0 == context.0)
        #expect(flat.2 == context.2)
        #expect(flat.1?.recordsReadFlat == 37)
        #expect(flat.0.contains("$.data.tracks[35].album: no Album has the key 125"), "\(flat.0)")
    }

    /// Targets of a sub-entity (whose inverse lies at another position: it adds an attribute),
    /// and a relationship whose inverse is required or that names its destination by another
    /// attribute than its key, the latter two through a context.
    @Test func subEntityTargetsAndReferencesLeftToAContext() async throws {
        let model = try Model {
            Entity("Album") {
                Attribute("albumId", .integer64)
                Attribute("code", .string)
                Relationship("tracks", to: "Track", inverse: "album", .toMany(ordered: false))
                Relationship("notes", to: "Note", inverse: "album", .toMany(ordered: false), optional: false)
                Unique("albumId")
                Unique("code")
            }
            Entity("LiveAlbum", parent: "Album") { Attribute("venue", .string) }
            Entity("Track") {
                Attribute("trackId", .integer64)
                Relationship("album", to: "Album", inverse: "tracks")
                Unique("trackId")
            }
            Entity("Note") {
                Attribute("noteId", .integer64)
                Relationship("album", to: "Album", inverse: "notes")
                Unique("noteId")
            }
        }
        let setup = [
            ("Note", #"[{"noteId": 1}, {"noteId": 2}]"#), ("Album", #"[{"albumId": 1, "code": "a", "notes": [1]}]"#),
            ("LiveAlbum", #"[{"albumId": 2, "code": "b", "venue": "v", "notes": [2]}]"#)
        ]
        func dump(_ store: Store) throws -> [String] {
            try store.viewContext.fetch(FetchRequest("Album", sortKeys: [SortKey("albumId")])).map { album in
                let tracks = try album.objects(forKey: "tracks").map { "\($0["trackId"] ?? .null)" }.sorted()
                let notes = try album.objects(forKey: "notes").map { "\($0["noteId"] ?? .null)" }.sorted()
                return "\(album.entity.name) \(album["albumId"] ?? .null) tracks \(tracks) notes \(notes)"
            }
        }
        let cases: [(entity: String, input: String, mapping: Mapping?, flat: Bool)] = [
            ("Track", #"[{"trackId": 1, "album": 2}, {"trackId": 2, "album": 1}, {"trackId": 3, "album": 2}]"#, nil, true),
            ("Track", #"[{"trackId": 1, "album": 1}, {"trackId": 3, "album": 1}]"#, nil, true),
            ("Note", #"[{"noteId": 3, "album": 1}]"#, nil, false),
            ("Note", #"[{"noteId": 2, "album": 1}]"#, nil, false),  // LiveAlbum 2 would hold no note: refused
            (
                "Track", #"[{"trackId": 4, "album": "b"}]"#,
                try Mapping(model: model) { EntityMapping("Track") { RelationshipMap("album", relatedBy: ["code"]) } }, false
            )
        ]
        var stores: [Store] = []
        var texts: [[String]] = []
        for viaContext in [false, true] {
            texts.append([])
            let store = Store(inMemory: model)
            for (entity, json) in setup { _ = try await store.importJSON(Array(json.utf8), into: entity) }
            for item in cases {
                var options = ImportOptions()
                if viaContext { options.afterImport = { _ in } }
                let (text, result) = await Self.outcome {
                    try await store.importJSON(Array(item.input.utf8), into: item.entity, mapping: item.mapping, options: options)
                }
                texts[texts.count - 1].append(text)
                if !viaContext, let result { #expect(result.recordsReadFlat == (item.flat ? result.records : 0), "\(item.input): \(text)") }
            }
            stores.append(store)
        }
        #expect(texts[0] == texts[1])
        #expect(texts[0][3].contains("LiveAlbum.notes is required"), "\(texts[0][3])")
        #expect(try dump(stores[0]) == dump(stores[1]))
        #expect(try dump(stores[0]) == [#"Album 1 tracks ["1", "2", "3"] notes ["1", "3"]"#, #"LiveAlbum 2 tracks ["4"] notes ["2"]"#])
    }

    /// Relationships the batch upsert does not set (an ordered inverse, a one-to-one, a
    /// reference into the entity's own family) go through a context, linked all the same.
    @Test func otherRelationshipsGoThroughAContext() async throws {
        let model = try Model {
            Entity("List") {
                Attribute("listId", .integer64)
                Relationship("items", to: "Item", inverse: "list", .toMany(ordered: true))
                Unique("listId")
            }
            Entity("Item") {
                Attribute("itemId", .integer64)
                Relationship("list", to: "List", inverse: "items")
                Relationship("parent", to: "Item", inverse: "children")
                Relationship("children", to: "Item", inverse: "parent", .toMany(ordered: false))
                Unique("itemId")
            }
        }
        let store = Store(inMemory: model)
        _ = try await store.importJSON(Array(#"[{"listId": 1}]"#.utf8), into: "List")
        let ordered = try await store.importJSON(Array(#"[{"itemId": 2, "list": 1}, {"itemId": 1, "list": 1}]"#.utf8), into: "Item")
        #expect(ordered.recordsReadFlat == 0 && ordered.inserted == 2)
        let list = try #require(try store.viewContext.one("List", "listId", 1))
        #expect(try list.objects(forKey: "items").map { try $0.value(forKey: "itemId", as: Int.self) } == [2, 1], "in input order")
        let tree = try await store.importJSON(Array(#"[{"itemId": 3, "parent": 4}, {"itemId": 4}]"#.utf8), into: "Item")
        #expect(tree.recordsReadFlat == 0 && tree.inserted == 2)
        let four = try #require(try store.viewContext.one("Item", "itemId", 4))
        #expect(try four.objects(forKey: "children").map { try $0.value(forKey: "itemId", as: Int.self) } == [3], "a forward reference in the file")
    }
}
