import Cairn
import CairnSupport
import Foundation

/// How a flat record writes an attribute's JSON value straight into the store's encoding, from
/// the token's bytes, without a `Value`, a `String` or Foundation's parsers: what
/// ``FlatRecordEncoder`` does for every value of the common kinds. Each writes exactly what
/// ``ValueReader`` reads from the same token (`FastValueTests`); a value it does not take (a
/// misfit, an escaped string, a number beyond the fast readers) goes to ``ValueReader``, which
/// reads it or says why not.
///
/// A plain value, a compiled date pattern's fields included (``DateFields``): reading a value
/// copies it and bumps no reference count, which two cores reading with the same ones would
/// bounce between them.
enum FastValue {
    /// A string attribute: a string without escapes, copied.
    case string
    /// An integer attribute: an integer in range; given as text too when the mapping coerces it.
    case integer(ClosedRange<Int64>, fromText: Bool)
    /// A double attribute: a number (or number text, when coerced), the nearest double.
    case double(fromText: Bool)
    /// A decimal attribute: a number (or number text, when coerced), every digit kept
    /// (``ValueEncoding/writeDecimal(numberText:_:)``).
    case decimal(fromText: Bool)
    /// A boolean attribute: `true`/`false`, 0 or 1, or one of the words ``ValueReader`` reads.
    case boolean
    /// A date attribute, in its format.
    case date(DateReading)
    /// A UUID attribute: the 36 characters of a UUID, either case.
    case uuid
    /// A URI attribute: a URI whose every character ``URIText`` vouches for.
    case uri
    /// A binary attribute: padded standard base64 (with no transformer, or the built-in `base64`).
    case binary
    /// The built-in `json` transformer: an array or an object, kept as its compact JSON text
    /// (`asText`: a string attribute; else its bytes), copied from the input when the input
    /// already is compact.
    case jsonText(asText: Bool)
    /// Anything else (a transformer, a float, a transformable value): through ``ValueReader``.
    case general

    /// How a date is read.
    enum DateReading {
        /// ISO 8601 text; without a zone at `offset`.
        case iso8601(offset: Int)
        /// A compiled pattern; without a zone at `offset`.
        case pattern(DateFields, offset: Int)
        /// A compiled pattern of fixed places (``FixedDateLayout``), at `offset`.
        case fixed(FixedDateLayout, offset: Int)
        /// A number of seconds (``DateFormat/unixSeconds``) or milliseconds
        /// (``DateFormat/unixMilliseconds``), or its text.
        case epoch(milliseconds: Bool)

        /// The format a date given as a number is read in: seconds since 1970, or milliseconds
        /// for ``DateFormat/unixMilliseconds`` (as ``ValueReader`` reads it).
        var numberFormat: DateFormat {
            guard case .epoch(let milliseconds) = self else { return .standard }
            return milliseconds ? .unixMilliseconds : .unixSeconds
        }
    }

    /// How `attribute`'s values are written.
    init(_ attribute: ResolvedAttribute) {
        guard attribute.transformerName == nil else {
            switch BuiltInTransformer.directReading(attribute.transformer) {
            case .jsonText(let asText): self = .jsonText(asText: asText)
            case .base64 where attribute.type == .binary: self = .binary
            default: self = .general
            }
            return
        }
        switch attribute.type {
        case .string: self = .string
        case .integer16, .integer32, .integer64:
            self = attribute.type.integerRange.map { .integer($0, fromText: attribute.coercesText) } ?? .general
        case .double: self = .double(fromText: attribute.coercesText)
        case .decimal: self = .decimal(fromText: attribute.coercesText)
        case .boolean: self = .boolean
        case .date:
            switch attribute.dateFormat {
            case .iso8601(let offset): self = .date(.iso8601(offset: offset))
            case .pattern(_, let offset):
                // A pattern `DateFormatter` reads, or one too long to hold inline, goes to
                // ``ValueReader``, which reads it through its `DatePattern`.
                if let layout = attribute.datePattern?.fixed {
                    self = .date(.fixed(layout, offset: offset))
                } else if let fields = attribute.datePattern?.inline {
                    self = .date(.pattern(fields, offset: offset))
                } else {
                    self = .general
                }
            case .unixSeconds: self = .date(.epoch(milliseconds: false))
            case .unixMilliseconds: self = .date(.epoch(milliseconds: true))
            }
        case .uuid: self = .uuid
        case .uri: self = .uri
        case .binary: self = .binary
        case .float, .transformable, .undefined, .composite: self = .general
        }
    }

    /// Writes the value beginning with `token` (the scanner just after it) into `writer`; false,
    /// writing nothing, when it is not one this kind takes straight.
    func write(_ token: JSONScanner.Token, _ scanner: inout JSONScanner, _ writer: inout ByteWriter) -> Bool {
        if case .general = self { return false }
        switch token {
        case .null:
            ValueEncoding.writeNull(&writer)
            return true
        case .string(let text) where !text.hasEscapes:
            return write(text: scanner.bytes.piece(text.range), &writer)
        case .number(let number):
            return write(number: number, scanner, &writer)
        case .boolean(let flag):
            guard case .boolean = self else { return false }
            ValueEncoding.writeBoolean(flag, &writer)
            return true
        case .beginArray, .beginObject:
            guard case .jsonText(let asText) = self else { return false }
            return Self.writeJSONText(token, asText: asText, &scanner, &writer)
        default:
            return false
        }
    }

    /// An array or object (its first token read) as the `json` transformer stores it: the
    /// input's bytes with the white space between tokens left out, when its strings hold no
    /// escape and no DEL (which the transformer's writer spells otherwise), no comma trails, and
    /// it is at most 1,000,000 bytes (so within the transformer's limit of values); false, the
    /// scanner where it was, for anything else.
    private static func writeJSONText(_ token: JSONScanner.Token, asText: Bool, _ scanner: inout JSONScanner, _ writer: inout ByteWriter) -> Bool {
        let start = scanner.offset - 1
        let depth = scanner.depth
        // Back to just after the first token, for the caller to read the value again.
        func rewind() -> Bool {
            scanner.reopen(containerAt: start, depth: depth)
            return false
        }
        let spaces: Int
        if token == .beginArray, let flat = scanner.skipFlatArray() {
            // An array of plain values, read in one loop that counted its white space.
            guard flat.plainStrings, scanner.offset - start <= 1_000_000 else { return rewind() }
            spaces = flat.spaces
        } else {
            guard (try? scanner.skipByTokens(token)) != nil, scanner.offset - start <= 1_000_000,
                let counted = whiteSpace(scanner.bytes.piece(start..<scanner.offset), trailingCommasRead: scanner.allowsTrailingCommas)
            else { return rewind() }
            spaces = counted
        }
        let source = scanner.bytes.piece(start..<scanner.offset)
        if asText && spaces == 0 {
            ValueEncoding.writeString(utf8: source, &writer)
        } else if asText {
            var text = ByteWriter(capacity: source.count - spaces)
            copyCompact(source, spaces: spaces, &text)
            text.bytes.withUnsafeBytes { ValueEncoding.writeString(utf8: $0, &writer) }
        } else {
            ValueEncoding.writeBinary(count: source.count - spaces, &writer) { copyCompact(source, spaces: spaces, &$0) }
        }
        return true
    }

    /// The number of white-space bytes between the tokens of a JSON value's text (valid JSON),
    /// or nil when a string holds an escape or DEL, or (`trailingCommasRead`) a comma trails.
    private static func whiteSpace(_ source: UnsafeRawBufferPointer, trailingCommasRead: Bool) -> Int? {
        // First, in one pass that follows no strings: no byte at or below a space (outside
        // strings white space, inside them a space), no backslash and no DEL: compact text.
        var lowest: UInt8 = 0xFF
        var marked = false
        for byte in source {
            lowest = min(lowest, byte)
            if byte == UInt8(ascii: "\\") || byte == 0x7F { marked = true }
        }
        guard lowest <= 0x20 || marked || trailingCommasRead else { return 0 }
        var spaces = 0
        var inString = false
        var previous: UInt8 = 0  // the last byte outside strings and white space
        for byte in source {
            if inString {
                guard byte != UInt8(ascii: "\\"), byte != 0x7F else { return nil }
                if byte == UInt8(ascii: "\"") { inString = false }
            } else if JSONScanner.isSpace(byte) {
                spaces += 1
            } else {
                guard previous != UInt8(ascii: ",") || (byte != UInt8(ascii: "]") && byte != UInt8(ascii: "}")) else { return nil }
                if byte == UInt8(ascii: "\"") { inString = true }
                previous = byte
            }
        }
        return spaces
    }

    /// Appends a JSON value's text (holding `spaces` bytes of white space between tokens, and no
    /// escape) without that white space.
    private static func copyCompact(_ source: UnsafeRawBufferPointer, spaces: Int, _ writer: inout ByteWriter) {
        guard spaces > 0 else { return writer.write(bytes: source) }
        var inString = false
        for byte in source {
            if byte == UInt8(ascii: "\"") { inString.toggle() }
            if inString || !JSONScanner.isSpace(byte) { writer.writeByte(byte) }
        }
    }

    /// A JSON number's value.
    private func write(number: JSONNumberText, _ scanner: JSONScanner, _ writer: inout ByteWriter) -> Bool {
        let bytes = scanner.bytes.piece(number.range)
        switch self {
        case .integer(let range, _):
            guard let value = scanner.integer(number), range.contains(value) else { return false }
            ValueEncoding.writeInteger(value, &writer)
        case .double:
            guard let value = NumberText.double(bytes) else { return false }
            ValueEncoding.writeDouble(value, &writer)
        case .decimal:
            return ValueEncoding.writeDecimal(numberText: bytes, &writer)
        case .boolean:
            guard let value = scanner.integer(number), value == 0 || value == 1 else { return false }
            ValueEncoding.writeBoolean(value == 1, &writer)
        case .date(let reading):
            // A number is seconds since 1970 in any date format, as ``ValueReader`` reads it.
            guard let number = NumberText.double(bytes), let seconds = ValueReader.epochSeconds(number, reading.numberFormat) else {
                return false
            }
            ValueEncoding.writeDate(Date(timeIntervalSince1970: seconds), &writer)
        case .string, .uuid, .uri, .binary, .jsonText, .general:
            return false
        }
        return true
    }

    /// A JSON string's value (its bytes, without escapes).
    private func write(text bytes: UnsafeRawBufferPointer, _ writer: inout ByteWriter) -> Bool {
        switch self {
        case .string:
            ValueEncoding.writeString(utf8: bytes, &writer)
        case .integer(let range, let fromText):
            guard fromText, NumberGrammar.check(bytes) == true, let value = NumberText.integer(bytes), range.contains(value) else { return false }
            ValueEncoding.writeInteger(value, &writer)
        case .double(let fromText):
            guard fromText, NumberGrammar.check(bytes) != nil, let value = NumberText.double(bytes) else { return false }
            ValueEncoding.writeDouble(value, &writer)
        case .decimal(let fromText):
            return fromText && ValueEncoding.writeDecimal(numberText: bytes, &writer)
        case .boolean:
            guard let flag = BooleanWord.value(bytes) else { return false }
            ValueEncoding.writeBoolean(flag, &writer)
        case .date(let reading):
            let date: Date?
            switch reading {
            case .iso8601(let offset): date = ISO8601DateParser.date(bytes, defaultOffset: offset)
            case .pattern(let fields, let offset): date = fields.date(bytes, offset: offset)
            case .fixed(let layout, let offset): date = layout.date(bytes, offset: offset)
            case .epoch:
                guard NumberGrammar.check(bytes) != nil, let number = NumberText.double(bytes),
                    let seconds = ValueReader.epochSeconds(number, reading.numberFormat)
                else { return false }
                date = Date(timeIntervalSince1970: seconds)
            }
            guard let date else { return false }
            ValueEncoding.writeDate(date, &writer)
        case .uuid:
            guard let uuid = UUIDText.uuid(bytes) else { return false }
            ValueEncoding.writeUUID(uuid, &writer)
        case .uri:
            guard URIText.isPlain(bytes) else { return false }
            ValueEncoding.writeURI(utf8: bytes, &writer)
        case .binary:
            guard let count = Base64Text.decodedCount(bytes) else { return false }
            ValueEncoding.writeBinary(count: count, &writer) { $0.write(count: count) { Base64Text.decode(bytes, into: $0) } }
        case .jsonText, .general:
            return false
        }
        return true
    }
}
