import CairnLog
import Foundation
import Glibc

/// The package's golden stores in `Fixtures/Stores` (FORMAT.md, "Golden stores").
public enum FixtureStores {
    /// The `Fixtures/Stores` folder, found from this file's path.
    public static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/Stores").path
    /// The bare log CairnLog's format version 1 wrote (`GoldenStoreTests`).
    public static let logVersion1 = folder + "/log-v1"
    /// The bare log CairnLog's segment format version 2 wrote: records of several frames (`GoldenStoreTests`).
    public static let logVersion2 = folder + "/log-v2"
}

/// The store's segment files, in order.
public func segmentFiles(_ directory: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".seg") }.sorted()
        .map { directory + "/" + $0 }
}

/// Reads a whole file.
public func contents(_ path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// Writes a whole file.
public func write(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// Truncates a file.
public func truncateFile(_ path: String, to length: Int) {
    _ = Glibc.truncate(path, off_t(length))
}

/// Copies a directory (for trying many damages on one store).
public func copyDirectory(_ source: String, to destination: String) throws {
    try? FileManager.default.removeItem(atPath: destination)
    try FileManager.default.copyItem(atPath: source, toPath: destination)
}

/// Every frame header of a segment file, in order, with where it starts (a damaged header ends
/// the walk with an error).
package func frameHeaders(ofSegment path: String) throws -> [(offset: Int, header: FrameHeader)] {
    let bytes = try contents(path)
    var offset = SegmentHeader.size
    var found: [(offset: Int, header: FrameHeader)] = []
    while offset + FrameHeader.size <= bytes.count {
        let header = try bytes[offset..<(offset + FrameHeader.size)].withUnsafeBytes { try FrameHeader.parse($0, allowing: .known).get() }
        found.append((offset, header))
        offset += FrameHeader.size + Int(header.storedLength)
    }
    return found
}
