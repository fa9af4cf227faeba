import Cairn
import CairnSupport
import Foundation

/// Writes JSON text into a byte buffer, handing full buffers to a sink: export streams, whatever
/// the size of the result. Strings are escaped by ``QuotedString``, values rendered by
/// ``ValueJSON``: the one JSON writer of export and the command line.
package struct JSONWriter {
    private(set) var buffer: [UInt8] = []
    /// Bytes handed to the sink so far.
    private(set) var flushed = 0
    private let sink: (UnsafeRawBufferPointer) throws -> Void
    static let flushSize = 1 << 16

    /// A writer handing its bytes to `sink` in pieces of about 64 KiB (and the rest at
    /// ``flush(force:)``).
    package init(capacity: Int = flushSize + 4096, sink: @escaping (UnsafeRawBufferPointer) throws -> Void) {
        self.sink = sink
        buffer.reserveCapacity(capacity)
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

    /// Bytes already in JSON form.
    mutating func bytes(_ json: [UInt8]) { buffer.append(contentsOf: json) }

    mutating func raw(_ text: String) {
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
    }

    /// A string, quoted and escaped as RFC 8259 requires.
    mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { string(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// A string given as its UTF-8 bytes, quoted and escaped (``QuotedString``).
    mutating func string(utf8 bytes: UnsafeRawBufferPointer) {
        QuotedString.append(utf8: bytes, to: &buffer)
    }

    /// An integer, in decimal, without making a String.
    mutating func integer(_ number: Int64) {
        if number < 0 { buffer.append(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 20 digits, written backwards
        var count = 0
        withUnsafeMutableBytes(of: &digits) { room in
            repeat {
                room[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            buffer.append(contentsOf: room[(24 - count)...])
        }
    }

    /// A date as ISO 8601 in UTC with milliseconds (`2024-05-01T10:20:30.123Z`), quoted, as
    /// `DateText` writes it, without making a String.
    mutating func isoDate(_ date: Date) {
        guard let milliseconds = DateText.millisecondsSince1970(date) else { return string(DateText.iso8601(date)) }
        buffer.append(UInt8(ascii: "\""))
        DateText.appendISO8601(millisecondsSince1970: milliseconds, to: &buffer)
        buffer.append(UInt8(ascii: "\""))
    }

    /// The text of a tree of JSON, compact (no spaces).
    package static func text(_ json: JSONValue) -> String {
        String(decoding: bytes(json), as: UTF8.self)
    }

    /// The UTF-8 bytes of a tree of JSON (as ``text(_:)``), in a buffer of its own size.
    static func bytes(_ json: JSONValue) -> [UInt8] {
        var writer = JSONWriter(capacity: 64, sink: { _ in })
        writer.value(json)
        return Array(writer.buffer[...])
    }

    /// A tree of JSON.
    package mutating func value(_ json: JSONValue) {
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
