import Cairn
import Foundation

/// Writes JSON text into a byte buffer, handing full buffers to a sink: export streams, whatever
/// the size of the result.
struct JSONWriter {
    private(set) var buffer: [UInt8] = []
    /// Bytes handed to the sink so far.
    private(set) var flushed = 0
    private let sink: (UnsafeRawBufferPointer) throws -> Void
    private static let flushSize = 1 << 16

    init(sink: @escaping (UnsafeRawBufferPointer) throws -> Void) {
        self.sink = sink
        buffer.reserveCapacity(Self.flushSize + 4096)
    }

    /// Hands what is buffered to the sink once the buffer is full (or always, with `force`).
    mutating func flush(force: Bool = false) throws {
        guard force ? !buffer.isEmpty : buffer.count >= Self.flushSize else { return }
        try buffer.withUnsafeBytes { try sink($0) }
        flushed += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    mutating func byte(_ byte: UInt8) { buffer.append(byte) }

    mutating func raw(_ text: String) {
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
    }

    /// A string, quoted and escaped as RFC 8259 requires.
    mutating func string(_ text: String) {
        buffer.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for index in bytes.indices {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                switch byte {
                case UInt8(ascii: "\""): raw("\\\"")
                case UInt8(ascii: "\\"): raw("\\\\")
                case 0x0A: raw("\\n")
                case 0x0D: raw("\\r")
                case 0x09: raw("\\t")
                case 0x08: raw("\\b")
                case 0x0C: raw("\\f")
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    raw("\\u00")
                    buffer.append(hex[Int(byte >> 4)])
                    buffer.append(hex[Int(byte & 0xF)])
                }
                start = index + 1
            }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        buffer.append(UInt8(ascii: "\""))
    }

    /// A tree of JSON.
    mutating func value(_ json: JSONValue) {
        switch json {
        case .null: raw("null")
        case .boolean(let flag): flag ? raw("true") : raw("false")
        case .number(let text): raw(text)
        case .string(let text): string(text)
        case .array(let items):
            byte(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { byte(UInt8(ascii: ",")) }
                value(item)
            }
            byte(UInt8(ascii: "]"))
        case .object(let members):
            byte(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { byte(UInt8(ascii: ",")) }
                string(member.key)
                byte(UInt8(ascii: ":"))
                value(member.value)
            }
            byte(UInt8(ascii: "}"))
        }
    }
}
