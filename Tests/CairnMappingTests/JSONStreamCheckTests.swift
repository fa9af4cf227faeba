import Cairn
import Foundation
import Testing
@testable import CairnMapping

/// A stream checked piece by piece, however it is cut, accepts what the scanner accepts whole,
/// and refuses what it refuses at the same byte, line and column, as soon as the piece holding
/// that byte has arrived.
@Suite struct JSONStreamCheckTests {
    /// The scanner's verdict on the whole input (a value sequence, as an import reads it).
    static func whole(_ bytes: [UInt8]) -> JSONSyntaxError? {
        bytes.withUnsafeBytes { buffer -> JSONSyntaxError? in
            var scanner = JSONScanner(buffer, allowsValueSequence: true)
            do throws(JSONSyntaxError) {
                while try scanner.next() != nil {}
                return nil
            } catch {
                return error
            }
        }
    }

    /// The check's verdict on the input cut at `cuts`, and how many bytes had arrived when it
    /// refused.
    static func pieces(_ bytes: [UInt8], cuts: [Int]) -> (error: JSONSyntaxError?, arrived: Int) {
        var check = JSONStreamCheck()
        let ends = cuts.filter { $0 > 0 && $0 < bytes.count } + [bytes.count]
        for end in ends {
            let atEnd = end == bytes.count
            guard check.isWorthChecking(end - check.checkedUpTo, atEnd: atEnd) else { continue }
            let refused = bytes.withUnsafeBytes { buffer -> JSONSyntaxError? in
                do throws(JSONSyntaxError) {
                    try check.check(UnsafeRawBufferPointer(rebasing: buffer[check.checkedUpTo..<end]), atEnd: atEnd)
                    return nil
                } catch {
                    return error
                }
            }
            if let refused { return (refused, end) }
        }
        return (nil, bytes.count)
    }

    static let inputs =
        [
            #"[{"a": 1, "b": [true, false, null], "c": "x\u00e9\ud83d\ude00y", "d": -12.5e+3}, {"e": {}}]"#,
            "{\"a\": 1}\n{\"a\": 2}\n\n[1, 2]\n\"s\"\n0\n", "  12345  ", "[1.5e3, -0, 0.25]", "{\"é\": \"日本\"}", "",
            // Invalid, at every kind of place.
            #"[1, 2, x]"#, #"{"a" 1}"#, #"{"a": tru}"#, #"{"a": truX}"#, "[01]", "[1.]", "[-]", "[1e]", #"["a\x"]"#, #"["\ud800x"]"#,
            #"["\udc00"]"#, "[\"a\u{01}\"]", "{\"a\": 1}\n{\"a\": 2,\n x}", "[1, 2", "{\"a\": \"unterminated", "\0\0\0", "]", "[1]]",
            #"{"a": 1,}"#, #"["\ud800"]"#, #"["\ud800\u0041"]"#
        ].map { Array($0.utf8) } + [[0x22, 0xC3, 0x28, 0x22], [0x22, 0xE2, 0x82, 0x22], [0x5B, 0x22, 0xF0, 0x9F, 0x98, 0x22, 0x5D]]

    @Test(arguments: inputs.indices)
    func everyCutGivesTheWholeScannersVerdict(index: Int) {
        let bytes = Self.inputs[index]
        let expected = Self.whole(bytes)
        var cuttings = (0...bytes.count).map { [$0] }  // two pieces, cut everywhere
        cuttings.append(Array(0...bytes.count))  // a byte at a time
        for cuts in cuttings {
            let (error, arrived) = Self.pieces(bytes, cuts: cuts)
            #expect(error?.offset == expected?.offset, "\(String(decoding: bytes, as: UTF8.self).debugDescription) cut at \(cuts)")
            #expect(error?.line == expected?.line && error?.column == expected?.column, "\(cuts): \(String(describing: error))")
            if let expected, !expected.endsInput {
                // Refused soon after the bad byte arrived (a token is checked again once the
                // bytes after its start have doubled).
                #expect(arrived <= 2 * (expected.offset + 13), "\(cuts): refused at \(arrived)")
            }
        }
    }

    @Test func aLongTokenIsNotCheckedAgainForEveryPiece() {
        // A string of 4 MiB in pieces of 4 KiB: the check runs only when the unchecked bytes have
        // doubled, so it reads about twice the string, not a thousand times.
        let bytes = Array("[\"".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 4 << 20) + Array("\"]".utf8)
        var check = JSONStreamCheck()
        var checks = 0
        var end = 0
        while end < bytes.count {
            end = min(bytes.count, end + 4096)
            let atEnd = end == bytes.count
            guard check.isWorthChecking(end - check.checkedUpTo, atEnd: atEnd) else { continue }
            checks += 1
            #expect(throws: Never.self) {
                try bytes.withUnsafeBytes { buffer in
                    try check.check(UnsafeRawBufferPointer(rebasing: buffer[check.checkedUpTo..<end]), atEnd: atEnd)
                }
            }
        }
        #expect(checks < 40, "\(checks) checks")
        #expect(check.checkedUpTo == bytes.count)
    }

    @Test func anAsyncSequenceOfChunksImportsThroughTheSpool() async throws {
        let model = try MapperFixtures.model()
        let store = Store(inMemory: model)
        let records = (0..<30_000).map { #"{"ticket": \#($0), "name": "n\#($0)"}"# }.joined(separator: "\n")
        let bytes = Array(records.utf8)
        let chunks = AsyncStream<[UInt8]> { continuation in
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + 7919)
                continuation.yield(Array(bytes[start..<end]))
                start = end
            }
            continuation.finish()
        }
        let result = try await store.importJSON(from: chunks, into: "Person")
        #expect(result.inserted == 30_000)
        let garbage = AsyncStream<[UInt8]> { continuation in
            continuation.yield(Array(#"{"ticket": 1}"#.utf8) + [0])
            continuation.finish()
        }
        await #expect(throws: MappingError.self) { try await store.importJSON(from: garbage, into: "Person") }
    }
}
