import Cairn
import CairnMapping
import Foundation

/// Relationship imports (`relations`): a Chinook-shaped relational data set (artists, genres,
/// albums, playlists, tracks and the join entity PlaylistTrack; 1M rows, `--quick` 100,000), one
/// JSON file per entity whose to-one references are the target's unique key (`"album": 123`),
/// imported in dependency order into one store, each file timed; beside it, alternating, the
/// same number of track records without their references imported flat into a new store, and
/// a Groot-style nested file (albums holding their artist and their tracks). Each import is
/// checked (counts, and a sample of links) before its time counts.
/// `CAIRN_BENCH_PROFILE=relations` runs the reference imports alone, five times, for `perf record`.
func relationshipImportBenchmarks(_ initial: Report, root: String, quick: Bool) async throws -> Report {
    var report = initial
    let shape = ChinookShape(rows: quick ? 100_000 : 1_000_000)
    let runs = 3
    let model = try ChinookShape.model()
    let mapping = try Mapping(model: model)
    var files: [(entity: String, path: String, count: Int)] = []
    var bytes = 0
    for (entity, count) in shape.files {
        let path = root + "/chinook-\(entity).json"
        bytes += try shape.write(entity, to: path)
        files.append((entity, path, count))
    }
    let flatFile = root + "/chinook-flat-tracks.json"
    let flatBytes = try shape.write("Track", to: flatFile, flatCount: shape.total)
    let nestedFile = root + "/chinook-nested-albums.json"
    let nestedBytes = try shape.writeNested(to: nestedFile)
    let counts = shape.files.map { "\($0.entity) \(grouped($0.count))" }.joined(separator: ", ")
    print("relations: \(grouped(shape.total)) rows (\(counts)), \(bytes / 1_000_000) MB of JSON")

    if ProcessInfo.processInfo.environment["CAIRN_BENCH_PROFILE"] == "relations" {
        for run in 0..<5 {
            let times = try await referenceImport(files, shape: shape, model: model, mapping: mapping, root: root)
            print("reference import \(run): " + zip(files, times).map { "\($0.entity) \(fixed($1, 3)) s" }.joined(separator: ", "))
        }
        return report
    }

    var referenceTimes: [[Double]] = []
    var flatTimes: [Double] = []
    var nestedTimes: [Double] = []
    for run in 0..<runs {
        for referencesFirst in [run % 2 == 0, run % 2 != 0] {
            if referencesFirst {
                referenceTimes.append(try await referenceImport(files, shape: shape, model: model, mapping: mapping, root: root))
            } else {
                flatTimes.append(try await flatImport(flatFile, shape: shape, model: model, mapping: mapping, root: root))
            }
        }
        nestedTimes.append(try await nestedImport(nestedFile, shape: shape, model: model, mapping: mapping, root: root))
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    for (index, file) in files.enumerated() {
        let time = median(referenceTimes.map { $0[index] })
        let references = ChinookShape.references[file.entity] ?? []
        report.row(
            "\(file.entity) file, \(grouped(file.count)) records", "\(Int(Double(file.count) / time)) records/s (\(fixed(time, 3)) s)",
            note: references.isEmpty ? "no references (read flat)" : "references by key: " + references.joined(separator: ", "))
    }
    let totals = referenceTimes.map { $0.reduce(0, +) }
    let referenceRate = Double(shape.total) / median(totals)
    let flatRate = Double(shape.total) / median(flatTimes)
    // Per run: the flat import's time over the reference import's (the same number of records).
    let ratios = zip(flatTimes, totals).map { $0 / $1 }.sorted()
    let ratio = ratios[ratios.count / 2]
    report.row(
        "reference import, every file in dependency order", "\(Int(referenceRate)) records/s (\(fixed(median(totals), 3)) s)",
        note: "\(grouped(shape.total)) records into one store, one save a file, \(fixed(Double(bytes) / 1e6, 1)) MB")
    report.row(
        "flat import, the same number of track records without references", "\(Int(flatRate)) records/s (\(fixed(median(flatTimes), 3)) s)",
        note: "\(fixed(Double(flatBytes) / 1e6, 1)) MB, one save")
    report.row(
        "reference import ÷ flat import (records/s)", "\(fixed(ratio, 2))× (\(fixed(ratios[0], 2))–\(fixed(ratios[ratios.count - 1], 2))×)",
        note: "median of \(runs) alternating pairs")
    let nestedRecords = shape.albums * 2 + shape.tracks
    let nestedTime = median(nestedTimes)
    report.row(
        "nested (Groot-style): albums holding their artist and tracks", "\(Int(Double(nestedRecords) / nestedTime)) records/s (\(fixed(nestedTime, 3)) s)",
        note:
            "\(grouped(shape.albums)) top-level albums, \(grouped(nestedRecords)) records with the nested ones, \(fixed(Double(nestedBytes) / 1e6, 1)) MB; "
            + "\(fixed(Double(nestedRecords) / nestedTime / flatRate, 2))× the flat rate")
    report.target("reference import ≥ 0.5× the flat import's records/s", met: ratio >= 0.5, figure: "\(fixed(ratio, 2))×")
    if ProcessInfo.processInfo.environment["CAIRN_BENCH_KEEP"] == nil {
        for path in files.map(\.path) + [flatFile, nestedFile] { try? FileManager.default.removeItem(atPath: path) }
    }
    return report
}

/// Imports every file into one new store, in order; returns each file's time, after checking
/// the counts and a sample of links.
private func referenceImport(
    _ files: [(entity: String, path: String, count: Int)], shape: ChinookShape, model: Model, mapping: Mapping, root: String
) async throws -> [Double] {
    let directory = freshStore(root, "relations-references")
    let store = try Store(at: directory, model: model)
    var times: [Double] = []
    for file in files {
        let start = ContinuousClock.now
        let result = try await store.importJSON(contentsOf: URL(fileURLWithPath: file.path), into: file.entity, mapping: mapping)
        times.append(seconds(ContinuousClock.now - start))
        guard result.inserted == file.count else { throw BenchmarkFailure("relations: \(result.inserted) of \(file.count) \(file.entity) inserted") }
    }
    try shape.checkReferences(store.viewContext)
    try await store.close()
    try? FileManager.default.removeItem(atPath: directory)
    return times
}

/// Imports the flat track file into a new store; returns its time, after checking it.
private func flatImport(_ file: String, shape: ChinookShape, model: Model, mapping: Mapping, root: String) async throws -> Double {
    try await timedImport(file, into: "Track", store: "relations-flat", model: model, mapping: mapping, root: root) { result, context in
        guard result.inserted == shape.total, try context.count(FetchRequest("Track")) == shape.total else {
            throw BenchmarkFailure("relations: flat import inserted \(result.inserted) of \(shape.total) tracks")
        }
        for track in [1, shape.total / 2, shape.total] {
            let object = try ChinookShape.object(context, "Track", "trackId", track)
            guard object["name"] == .string(shape.trackName(track)), try object.object(forKey: "album") == nil else {
                throw BenchmarkFailure("relations: flat track \(track) holds \(object["name"] ?? .null)")
            }
        }
    }
}

/// Imports the nested file into a new store; returns its time, after checking it.
private func nestedImport(_ file: String, shape: ChinookShape, model: Model, mapping: Mapping, root: String) async throws -> Double {
    try await timedImport(file, into: "Album", store: "relations-nested", model: model, mapping: mapping, root: root) { result, context in
        guard result.records == shape.albums else { throw BenchmarkFailure("relations: \(result.records) of \(shape.albums) nested albums read") }
        try shape.checkNested(context)
    }
}

/// Imports `file` into a new store named `name` under `root`; returns the import's time, after
/// `check` (outside the time) passed; the store is removed.
private func timedImport(
    _ file: String, into entity: String, store name: String, model: Model, mapping: Mapping, root: String,
    check: (ImportResult, ObjectContext) throws -> Void
) async throws -> Double {
    let directory = freshStore(root, name)
    let store = try Store(at: directory, model: model)
    let start = ContinuousClock.now
    let result = try await store.importJSON(contentsOf: URL(fileURLWithPath: file), into: entity, mapping: mapping)
    let time = seconds(ContinuousClock.now - start)
    try check(result, store.viewContext)
    try await store.close()
    try? FileManager.default.removeItem(atPath: directory)
    return time
}

/// The Chinook sample database's shape at any size: artists 3% of the rows, albums 8%, tracks
/// 70% (grouped by album, as Chinook's are), 25 genres, playlists about 1%, and the rest
/// PlaylistTrack, the join entity. Every entity has an integer unique key counted from 1; a
/// reference is the target's key.
private struct ChinookShape {
    let artists: Int
    let albums: Int
    let genres = 25
    let tracks: Int
    let playlists: Int
    let playlistTracks: Int

    init(rows: Int) {
        artists = rows * 3 / 100
        albums = rows * 8 / 100
        tracks = rows * 70 / 100
        playlists = rows / 100 - genres
        playlistTracks = rows - artists - albums - genres - tracks - playlists
    }

    var total: Int { artists + albums + genres + tracks + playlists + playlistTracks }

    /// The files in the order imported (every reference's target before it).
    var files: [(entity: String, count: Int)] {
        [("Artist", artists), ("Genre", genres), ("Album", albums), ("Playlist", playlists), ("Track", tracks), ("PlaylistTrack", playlistTracks)]
    }

    /// The to-one references each entity's records give.
    static let references = ["Album": ["artist"], "Track": ["album", "genre"], "PlaylistTrack": ["playlist", "track"]]

    static func model() throws -> Model {
        try Model {
            Entity("Artist") {
                Attribute("artistId", .integer64, optional: false)
                Attribute("name", .string)
                Relationship("albums", to: "Album", inverse: "artist", .toMany(ordered: false))
                Unique("artistId")
            }
            Entity("Genre") {
                Attribute("genreId", .integer64, optional: false)
                Attribute("name", .string)
                Relationship("tracks", to: "Track", inverse: "genre", .toMany(ordered: false))
                Unique("genreId")
            }
            Entity("Album") {
                Attribute("albumId", .integer64, optional: false)
                Attribute("title", .string)
                Relationship("artist", to: "Artist", inverse: "albums")
                Relationship("tracks", to: "Track", inverse: "album", .toMany(ordered: false))
                Unique("albumId")
            }
            Entity("Playlist") {
                Attribute("playlistId", .integer64, optional: false)
                Attribute("name", .string)
                Relationship("entries", to: "PlaylistTrack", inverse: "playlist", .toMany(ordered: false))
                Unique("playlistId")
            }
            Entity("Track") {
                Attribute("trackId", .integer64, optional: false)
                Attribute("name", .string)
                Attribute("composer", .string)
                Attribute("milliseconds", .integer64)
                Attribute("bytes", .integer64)
                Attribute("unitPrice", .double)
                Relationship("album", to: "Album", inverse: "tracks")
                Relationship("genre", to: "Genre", inverse: "tracks")
                Relationship("entries", to: "PlaylistTrack", inverse: "track", .toMany(ordered: false))
                Unique("trackId")
            }
            Entity("PlaylistTrack") {
                Attribute("playlistTrackId", .integer64, optional: false)
                Attribute("position", .integer64)
                Relationship("playlist", to: "Playlist", inverse: "entries")
                Relationship("track", to: "Track", inverse: "entries")
                Unique("playlistTrackId")
            }
        }
    }

    // Who references whom: spread out, but for tracks, which come in runs of one album.

    func artist(ofAlbum album: Int) -> Int { Int(Self.mixed(album) % UInt64(artists)) + 1 }
    func album(ofTrack track: Int) -> Int { (track - 1) * albums / tracks + 1 }
    func genre(ofTrack track: Int) -> Int { Int(Self.mixed(track &+ 17) % UInt64(genres)) + 1 }
    func playlist(ofEntry entry: Int) -> Int { (entry - 1) % playlists + 1 }
    func track(ofEntry entry: Int) -> Int { Int(Self.mixed(entry &+ 31) % UInt64(tracks)) + 1 }
    func trackName(_ track: Int) -> String { "Track \(track) of \(Self.mixed(track) % 10_000)" }

    /// The JSON record of object `number` of `entity`: with its references, or for a track
    /// without (`references: false`) or nested in its album (`nested: true`, no album, no genre).
    func record(_ entity: String, _ number: Int, references: Bool = true) -> String {
        switch entity {
        case "Artist": return #"{"artistId":\#(number),"name":"Artist \#(number)"}"#
        case "Genre": return #"{"genreId":\#(number),"name":"Genre \#(number)"}"#
        case "Album":
            return #"{"albumId":\#(number),"title":"Album \#(number) of \#(Self.mixed(number) % 1000)""#
                + (references ? #","artist":\#(artist(ofAlbum: number))}"# : "}")
        case "Playlist": return #"{"playlistId":\#(number),"name":"Playlist \#(number)"}"#
        case "Track":
            let milliseconds = 120_000 + Int(Self.mixed(number &+ 5) % 300_000)
            let links = references ? #","album":\#(album(ofTrack: number)),"genre":\#(genre(ofTrack: number))"# : ""
            return #"{"trackId":\#(number),"name":"\#(trackName(number))""# + links
                + #","composer":"Composer \#(number % 5000)","milliseconds":\#(milliseconds),"bytes":\#(milliseconds * 33),"unitPrice":\#(number % 4 == 0 ? "1.99" : "0.99")}"#
        default:
            return
                #"{"playlistTrackId":\#(number),"position":\#((number - 1) / playlists),"playlist":\#(playlist(ofEntry: number)),"track":\#(track(ofEntry: number))}"#
        }
    }

    /// Writes the file of `entity` (with `flatCount`: that many tracks, without references);
    /// returns its size in bytes.
    func write(_ entity: String, to path: String, flatCount: Int? = nil) throws -> Int {
        let count = flatCount ?? files.first { $0.entity == entity }?.count ?? 0
        var text = "[\n"
        text.reserveCapacity(count * 190)
        for number in 1...count {
            text += record(entity, number, references: flatCount == nil)
            text += number == count ? "\n]\n" : ",\n"
        }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return text.utf8.count
    }

    /// Writes the albums as Groot's examples give them: each album holding its artist (a nested
    /// record, repeated in each of the artist's albums) and its tracks (nested, without genre).
    func writeNested(to path: String) throws -> Int {
        var text = "[\n"
        text.reserveCapacity(tracks * 200)
        var track = 1
        for album in 1...albums {
            let artist = artist(ofAlbum: album)
            text +=
                #"{"albumId":\#(album),"title":"Album \#(album) of \#(Self.mixed(album) % 1000)","artist":{"artistId":\#(artist),"name":"Artist \#(artist)"},"tracks":["#
            var first = true
            while track <= tracks, self.album(ofTrack: track) == album {
                text += (first ? "" : ",") + record("Track", track, references: false)
                first = false
                track += 1
            }
            text += album == albums ? "]}\n]\n" : "]},\n"
        }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return text.utf8.count
    }

    /// Checks the store the reference import made: every entity's count, and that sampled
    /// references name the objects the files say (both ends of each relationship).
    func checkReferences(_ context: ObjectContext) throws {
        for (entity, count) in files {
            let stored = try context.count(FetchRequest(entity))
            guard stored == count else { throw BenchmarkFailure("relations: \(stored) \(entity) objects stored, not \(count)") }
        }
        for track in samples(tracks) {
            let object = try Self.object(context, "Track", "trackId", track)
            try Self.expect(object, "album", "albumId", album(ofTrack: track), "track \(track)")
            try Self.expect(object, "genre", "genreId", genre(ofTrack: track), "track \(track)")
        }
        for album in samples(albums) {
            let object = try Self.object(context, "Album", "albumId", album)
            try Self.expect(object, "artist", "artistId", artist(ofAlbum: album), "album \(album)")
            let expected = (1...tracks).lazy.filter { self.album(ofTrack: $0) == album }.count
            let held = try object.objects(forKey: "tracks")
            guard held.count == expected, held.allSatisfy({ (try? $0.object(forKey: "album"))?["albumId"] == .integer(Int64(album)) }) else {
                throw BenchmarkFailure("relations: album \(album) holds \(held.count) tracks, not \(expected)")
            }
        }
        for entry in samples(playlistTracks) {
            let object = try Self.object(context, "PlaylistTrack", "playlistTrackId", entry)
            try Self.expect(object, "playlist", "playlistId", playlist(ofEntry: entry), "playlist track \(entry)")
            try Self.expect(object, "track", "trackId", track(ofEntry: entry), "playlist track \(entry)")
        }
    }

    /// Checks the store the nested import made: the counts, and sampled albums' artist and tracks.
    func checkNested(_ context: ObjectContext) throws {
        let distinctArtists = Set((1...albums).map(artist(ofAlbum:))).count
        for (entity, count) in [("Album", albums), ("Track", tracks), ("Artist", distinctArtists)] {
            let stored = try context.count(FetchRequest(entity))
            guard stored == count else { throw BenchmarkFailure("relations: nested import stored \(stored) \(entity) objects, not \(count)") }
        }
        for track in samples(tracks) {
            let object = try Self.object(context, "Track", "trackId", track)
            try Self.expect(object, "album", "albumId", album(ofTrack: track), "nested track \(track)")
        }
        for album in samples(albums) {
            try Self.expect(try Self.object(context, "Album", "albumId", album), "artist", "artistId", artist(ofAlbum: album), "nested album \(album)")
        }
    }

    /// The first, middle and last numbers of `count`, and 20 spread between.
    private func samples(_ count: Int) -> [Int] { [1, 2, count / 2, count] + (1...20).map { Int(Self.mixed($0 &* 101) % UInt64(count)) + 1 } }

    static func object(_ context: ObjectContext, _ entity: String, _ key: String, _ number: Int) throws -> ManagedObject {
        guard let object = try context.fetchFirst(FetchRequest(entity, predicate: .equal(key, .integer(Int64(number))))) else {
            throw BenchmarkFailure("relations: no \(entity) with \(key) \(number)")
        }
        return object
    }

    /// Checks that `object`'s to-one `relationship` holds the object whose `key` is `number`.
    private static func expect(_ object: ManagedObject, _ relationship: String, _ key: String, _ number: Int, _ name: String) throws {
        let related = try object.object(forKey: relationship)
        guard let related, related[key] == .integer(Int64(number)) else {
            throw BenchmarkFailure("relations: \(name)'s \(relationship) is \(related?[key] ?? .null), not \(number)")
        }
    }

    private static func mixed(_ value: Int) -> UInt64 {
        var state = UInt64(bitPattern: Int64(value)) &+ 0x9E37_79B9_7F4A_7C15
        state = (state ^ (state >> 30)) &* 0xBF58_476D_1CE4_E5B9
        state = (state ^ (state >> 27)) &* 0x94D0_49BB_1331_11EB
        return state ^ (state >> 31)
    }
}
