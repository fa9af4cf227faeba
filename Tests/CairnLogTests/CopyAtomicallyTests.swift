import CairnTestSupport
import Foundation
import Testing
@testable import CairnLog

/// A copy of part of a file (a backup's copy of a segment, a side file) takes exactly the bytes
/// asked for, and refuses a source shorter than that (cut down while it was copied) instead of
/// filling the rest with zeros.
@Suite struct CopyAtomicallyTests {
    @Test func aSourceShorterThanTheRangeIsRefusedNotPaddedWithZeros() throws {
        let directory = TemporaryDirectory()
        let io = PosixFileIO()
        let sourcePath = directory.path + "/source"
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
        #expect(FileManager.default.createFile(atPath: sourcePath, contents: Data(bytes)))
        let source = try io.open(sourcePath, mode: .readOnly)
        defer { io.close(source) }

        let whole = directory.path + "/whole"
        try io.copyAtomically(source, 100..<1000, to: whole, directory: directory.path)
        #expect(FileManager.default.contents(atPath: whole) == Data(bytes[100..<1000]))

        let past = directory.path + "/past"
        #expect { try io.copyAtomically(source, 0..<4000, to: past, directory: directory.path) } throws: {
            ($0 as? LogError)?.code == .busy && ($0 as? LogError)?.path == sourcePath
        }
        #expect(!FileManager.default.fileExists(atPath: past))
        #expect(!FileManager.default.fileExists(atPath: past + ".tmp"))
    }
}
