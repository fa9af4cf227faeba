import CairnTestSupport
import Testing
@testable import CairnLog

@Suite struct CRC32CTests {
    /// RFC 3720 (iSCSI), appendix B.4.
    static let vectors: [([UInt8], UInt32)] = [
        ([UInt8](repeating: 0, count: 32), 0x8A91_36AA),
        ([UInt8](repeating: 0xFF, count: 32), 0x62A8_AB43),
        ((0..<32).map { UInt8($0) }, 0x46DD_794E),
        ((0..<32).reversed().map { UInt8($0) }, 0x113F_DB5C),
        (
            [
                0x01, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
                0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00
            ], 0xD996_3A56
        )
    ]

    @Test func rfc3720VectorsInSoftware() {
        for (bytes, expected) in Self.vectors {
            #expect(bytes.withUnsafeBytes { CRC32C.softwareChecksum($0, extending: 0) } == expected)
        }
    }

    @Test func rfc3720VectorsInHardware() throws {
        try #require(CRC32C.usesHardware, "this CPU has no SSE4.2; the software path is tested above")
        for (bytes, expected) in Self.vectors {
            #expect(bytes.withUnsafeBytes { CRC32C.hardwareChecksum($0, extending: 0) } == expected)
        }
    }

    @Test func bothPathsAgreeOnEveryLengthAndAlignment() {
        var generator = TestSeed.generator()
        let bytes = (0..<1100).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes.withUnsafeBytes { raw in
            for start in 0..<9 {
                for length in stride(from: 0, to: 1090, by: 7) {
                    let slice = UnsafeRawBufferPointer(rebasing: raw[start..<(start + length)])
                    #expect(CRC32C.softwareChecksum(slice, extending: 0) == CRC32C.checksum(slice))
                }
            }
        }
    }

    @Test func extendingEqualsChecksumOfConcatenation() {
        let a = Array("hello, ".utf8), b = Array("world".utf8)
        #expect(CRC32C.checksum(b, extending: CRC32C.checksum(a)) == CRC32C.checksum(a + b))
        let software = b.withUnsafeBytes { CRC32C.softwareChecksum($0, extending: a.withUnsafeBytes { CRC32C.softwareChecksum($0, extending: 0) }) }
        #expect(software == CRC32C.checksum(a + b))
    }

    @Test func maskRoundTrips() {
        for value: UInt32 in [0, 1, 0xFFFF_FFFF, 0x8A91_36AA, 0x1234_5678] {
            #expect(CRC32C.unmask(CRC32C.mask(value)) == value)
            #expect(CRC32C.mask(value) != value)
        }
    }
}
