/// The names of the files in a store directory.
///
/// ```
/// LOCK                 writer lock (flock) holding the writer's pid
/// READERS              reader lock (flock, shared) held while a store's files are read
/// MANIFEST             the current manifest
/// MANIFEST.prev        the previous generation, kept as a fallback
/// MANIFEST.tmp         a manifest being written (never read as current)
/// 000000000001.seg     segments, numbered from 1
/// 000000000001.dict    compression dictionaries, numbered from 1
/// 000000000001.base    a compacted base snapshot (written by compaction)
/// ```
///
/// Files of Cairn's own patterns that the manifest does not reference are left-overs of an
/// interrupted roll, training or compaction, and are removed at open. Nothing else in the
/// directory is touched.
package struct StoreLayout: Sendable {
    /// The store's directory.
    package let directory: String

    package init(directory: String) {
        var trimmed = directory
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.directory = trimmed
    }

    /// The largest number a file name holds (12 digits).
    package static let largestNumber: UInt64 = 999_999_999_999

    /// The kinds of numbered files.
    package enum Kind: String, Sendable, CaseIterable {
        case segment = "seg"
        case dictionary = "dict"
        case base = "base"
    }

    package var lock: String { path("LOCK") }
    package var readers: String { path("READERS") }
    package var manifest: String { path("MANIFEST") }
    package var previousManifest: String { path("MANIFEST.prev") }

    /// The path of a file in the directory.
    package func path(_ name: String) -> String { directory + "/" + name }

    /// The file name of a numbered file, such as `000000000007.seg`.
    package static func name(_ kind: Kind, _ number: UInt64) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, 12 - digits.count)) + digits + "." + kind.rawValue
    }

    /// The path of a numbered file.
    package func path(_ kind: Kind, _ number: UInt64) -> String { path(Self.name(kind, number)) }

    /// Parses a numbered file name; nil for names that are not Cairn's.
    package static func parse(_ name: String) -> (kind: Kind, number: UInt64)? {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 12, parts[0].allSatisfy({ $0 >= "0" && $0 <= "9" }),
            let kind = Kind(rawValue: String(parts[1])), let number = UInt64(parts[0])
        else { return nil }
        return (kind, number)
    }

    /// The name of the side file that keeps the bytes cut at `offset` from segment `number`:
    /// `000000000003.seg.torn-4096`, then `….torn-4096.2`, `.3`… when that name is taken.
    package static func sideFileName(segment number: UInt64, offset: UInt64, attempt: Int) -> String {
        name(.segment, number) + ".torn-\(offset)" + (attempt > 1 ? ".\(attempt)" : "")
    }

    /// Whether a name is a side file of cut bytes (never removed).
    package static func isSideFile(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 || parts.count == 4, parse(parts[0] + "." + parts[1])?.kind == .segment,
            parts[2].hasPrefix("torn-"), parts[2].count > 5, parts[2].dropFirst(5).allSatisfy(\.isNumber)
        else { return false }
        return parts.count == 3 || (!parts[3].isEmpty && parts[3].allSatisfy(\.isNumber))
    }

    /// Whether a name is one of a store's files: a manifest (`MANIFEST`, its `.tmp` or `.prev`),
    /// the lock files, a numbered file, a temporary or a side file.
    package static func isStoreName(_ name: String) -> Bool {
        name.hasPrefix("MANIFEST") || name == "LOCK" || name == "READERS" || parse(name) != nil || isTemporary(name) || isSideFile(name)
    }

    /// Whether a name is one of Cairn's temporary files: `MANIFEST.tmp`, or a `.tmp` file named
    /// after a numbered file (a dictionary being written, a side file of `verify --repair`).
    package static func isTemporary(_ name: String) -> Bool {
        guard name.hasSuffix(".tmp") else { return false }
        if name == "MANIFEST.tmp" { return true }
        let parts = name.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        return parts.count >= 2 && parse(parts[0] + "." + parts[1]) != nil
    }
}
