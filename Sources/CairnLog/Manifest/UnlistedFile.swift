import Glibc
import struct Foundation.UUID

/// A file of Cairn's own name patterns in a store directory that the manifest does not list,
/// and what it provably is.
///
/// Only a file that provably holds nothing acknowledged is a left-over that a writable open may
/// remove: a temporary file, the empty segment of an interrupted roll or wipe, a segment older
/// than the manifest's first (the old store of a wipe), a dictionary no listed frame uses. A
/// segment that holds frames the manifest does not account for is evidence that the manifest
/// is stale (an older generation put back, say): the open refuses the store rather than lose
/// those frames, and salvage reads them.
package struct UnlistedFile: Sendable, Equatable {
    /// What the file is.
    package enum Kind: Sendable, Equatable {
        /// Holds nothing acknowledged; a writable open removes it.
        case leftover
        /// Bytes a recovery or `verify --repair` cut from a segment: kept, never removed.
        case sideFile
        /// A segment holding frames the manifest does not account for: the open refuses.
        case unaccountedSegment
    }

    /// The file's name in the store directory.
    package var name: String
    /// What it is.
    package var kind: Kind
    /// Why, in words.
    package var reason: String
    /// For an unaccounted segment whose header reads: the header (its first LSN, epoch, store).
    package var header: SegmentHeader?

    /// The unlisted files among `names`, in name order. An unlisted dictionary is a left-over
    /// because the open checks, before it removes anything, that every frame names a listed one.
    package static func classify(names: [String], manifest: Manifest, layout: StoreLayout, io: any FileIO) -> [UnlistedFile] {
        let listedSegments = Set(manifest.segments.map(\.number))
        let listedDictionaries = Set(manifest.dictionaries.map { UInt64($0.id) })
        let first = manifest.segments.first?.number ?? 0
        let active = manifest.activeSegment?.number ?? 0
        var found: [UnlistedFile] = []
        for name in names.sorted() {
            if StoreLayout.isTemporary(name) {
                found.append(UnlistedFile(name: name, kind: .leftover, reason: "a temporary file of an interrupted write"))
                continue
            }
            if StoreLayout.isSideFile(name) {
                found.append(UnlistedFile(name: name, kind: .sideFile, reason: "bytes cut from a segment's torn tail, kept"))
                continue
            }
            guard let (kind, number) = StoreLayout.parse(name) else { continue }
            switch kind {
            case .segment where !listedSegments.contains(number):
                found.append(classifySegment(name, number: number, first: first, active: active, manifest: manifest, layout: layout, io: io))
            case .dictionary where !listedDictionaries.contains(number):
                found.append(
                    UnlistedFile(
                        name: name, kind: .leftover,
                        reason: "a dictionary the manifest does not list (an interrupted training, or a wiped store's)"))
            case .base where manifest.base?.number != number:
                found.append(UnlistedFile(name: name, kind: .leftover, reason: "a base the manifest does not list"))
            default:
                continue
            }
        }
        return found
    }

    private static func classifySegment(
        _ name: String, number: UInt64, first: UInt64, active: UInt64, manifest: Manifest,
        layout: StoreLayout, io: any FileIO
    ) -> UnlistedFile {
        if number < first {
            return UnlistedFile(
                name: name, kind: .leftover,
                reason: "a segment older than the manifest's first (the old store of a wipe)")
        }
        let path = layout.path(name)
        let file: OpenFile
        let length: UInt64
        do {
            file = try io.open(path, mode: .readOnly)
            do { length = try io.size(of: file) } catch {
                io.close(file)
                throw error
            }
        } catch let error as LogError where error.errno == ENOENT {
            // Gone since the directory was listed (a writer removed it): nothing is there.
            return UnlistedFile(name: name, kind: .leftover, reason: "removed since the directory was listed (\(error.message))")
        } catch {
            return UnlistedFile(name: name, kind: .unaccountedSegment, reason: "\(error)")
        }
        defer { io.close(file) }
        if length <= UInt64(SegmentHeader.size) {
            return UnlistedFile(name: name, kind: .leftover, reason: "a segment with no frames (an interrupted roll or wipe)")
        }
        var raw = [UInt8](repeating: 0, count: SegmentHeader.size)
        let header = try? raw.withUnsafeMutableBytes { bytes -> SegmentHeader in
            try io.readExactly(file, into: bytes, at: 0)
            return try SegmentHeader(decoding: UnsafeRawBufferPointer(bytes), path: path)
        }
        var reason = "holds \(length - UInt64(SegmentHeader.size)) bytes after its header"
        if let header {
            reason += header.storeID == manifest.storeID ? ", from LSN \(header.firstLSN) on" : ", of another store (\(header.storeID))"
        }
        reason +=
            number > active
            ? ", after the manifest's active segment \(StoreLayout.name(.segment, active)): the manifest is stale (an older generation?)"
            : ", numbered among the segments the manifest lists"
        return UnlistedFile(name: name, kind: .unaccountedSegment, reason: reason, header: header)
    }

    /// The open's refusal of an unaccounted segment, naming both files.
    package func refusal(_ layout: StoreLayout) -> LogError {
        LogError.corruption(
            "\(layout.manifest) does not list this segment, which \(reason). Nothing was removed: move the file "
                + "out of the store to open without it, or open in salvage mode to read it",
            path: layout.path(name))
    }
}

extension UnlistedFile {
    /// The files among `names` (a directory with no manifest) that show a store was there: a
    /// base, a dictionary, a segment holding frames (longer than its header), or any other
    /// file of Cairn's names that holds bytes (a temporary or side file, `MANIFEST.prev`,
    /// `MANIFEST.tmp`), or that cannot be opened to tell. Not `LOCK` and `READERS` (a pid,
    /// nothing), nor the frameless segment of a creation interrupted before its first manifest.
    package static func storeFilesWithoutManifest(names: [String], layout: StoreLayout, io: any FileIO) -> [String] {
        names.sorted().filter { name in
            let numbered = StoreLayout.parse(name)
            guard numbered != nil || StoreLayout.isTemporary(name) || StoreLayout.isSideFile(name) || name.hasPrefix("MANIFEST")
            else { return false }
            guard let file = try? io.open(layout.path(name), mode: .readOnly) else { return true }
            defer { io.close(file) }
            guard let length = try? io.size(of: file) else { return true }
            return length > (numbered?.kind == .segment ? UInt64(SegmentHeader.size) : 0)
        }
    }

    /// The refusal of a directory whose store lost its manifest: corruption naming the directory
    /// and the files, none of which is touched.
    package static func refusalWithoutManifest(_ files: [String], layout: StoreLayout) -> LogError {
        let shown = files.prefix(8).joined(separator: ", ") + (files.count > 8 ? " and \(files.count - 8) more" : "")
        return LogError.corruption(
            "store files present but no manifest (MANIFEST, MANIFEST.prev and MANIFEST.tmp are missing or unreadable): \(shown). "
                + "Nothing was created or removed: put the store's manifest back, or move these files out of the directory "
                + "to create a new store there",
            path: layout.directory)
    }
}
