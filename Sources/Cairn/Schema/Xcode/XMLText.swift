import Foundation

/// The text of an XML document, decoded as the XML specification says to find its encoding (a
/// byte order mark, the first characters' byte pattern, the XML declaration's `encoding`), and
/// given back as UTF-8 with a declaration saying so in place of the document's own, so that the
/// parser reads exactly the text that was checked, whatever encoding the file was in.
enum XMLText {
    /// The document as UTF-8, its XML declaration replaced by as many line breaks as it held (so
    /// that lines keep their numbers) after a declaration of UTF-8 on the first line.
    ///
    /// - Throws: ``ModelError`` (``ModelError/Code/invalidFormat``) naming the file: an encoding
    ///   Cairn does not read, or bytes that are not text in the document's encoding.
    static func utf8(_ data: Data, file: String?) throws(ModelError) -> Data {
        let bytes = [UInt8](data.prefix(4))
        let text: String
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            text = try decodeUTF8(data.dropFirst(3), file: file)
        } else if bytes.starts(with: [0x00, 0x00, 0xFE, 0xFF]) || bytes.starts(with: [0x00, 0x00, 0x00, 0x3C]) {
            text = try decode(data, .utf32BigEndian, bom: bytes[3] == 0xFF ? 4 : 0, "UTF-32 (big-endian)", file: file)
        } else if bytes.starts(with: [0xFF, 0xFE, 0x00, 0x00]) || bytes.starts(with: [0x3C, 0x00, 0x00, 0x00]) {
            text = try decode(data, .utf32LittleEndian, bom: bytes[0] == 0xFF ? 4 : 0, "UTF-32 (little-endian)", file: file)
        } else if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0x00, 0x3C]) {
            text = try decode(data, .utf16BigEndian, bom: bytes[0] == 0xFE ? 2 : 0, "UTF-16 (big-endian)", file: file)
        } else if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0x3C, 0x00]) {
            text = try decode(data, .utf16LittleEndian, bom: bytes[0] == 0xFF ? 2 : 0, "UTF-16 (little-endian)", file: file)
        } else {
            // An ASCII-compatible encoding: the declaration, if any, names it.
            let declared = declaredEncoding(data)
            switch declared?.lowercased() {
            case nil, "utf-8", "utf8":
                text = try decodeUTF8(data[...], file: file)
            case "us-ascii", "ascii":
                text = try decode(data, .ascii, bom: 0, "US-ASCII", file: file)
            case "iso-8859-1", "latin1", "iso_8859-1", "l1":
                text = try decode(data, .isoLatin1, bom: 0, "ISO-8859-1", file: file)
            case "windows-1252", "cp1252":
                text = try decode(data, .windowsCP1252, bom: 0, "windows-1252", file: file)
            case let other?:
                throw ModelError(
                    .invalidFormat,
                    "the XML declaration names the encoding \(declared ?? other), which Cairn does not read (a model file is UTF-8, as Xcode writes it; UTF-16, UTF-32, US-ASCII, ISO-8859-1 and windows-1252 are read too)",
                    file: file, line: 1)
            }
        }
        try refuseForbiddenCharacters(text, file: file)
        // The parser is told the encoding, rather than left to guess it from the first bytes.
        return Data((utf8Declaration + withoutDeclaration(text)).utf8)
    }

    /// What the parser reads first: a declaration on the first line, followed by the document's
    /// own first line (so lines keep their numbers).
    private static let utf8Declaration = #"<?xml version="1.0" encoding="UTF-8"?>"#

    /// Refuses the characters XML 1.0 forbids (U+0000, the C0 controls other than tab, line feed
    /// and carriage return, U+FFFE and U+FFFF): text made of them, such as a UTF-8 file whose
    /// characters are NUL-padded, could read to a parser as another encoding than the one checked.
    private static func refuseForbiddenCharacters(_ text: String, file: String?) throws(ModelError) {
        var line = 1
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A: line += 1
            case 0x09, 0x0D: continue
            case 0x00..<0x20, 0xFFFE, 0xFFFF:
                throw ModelError(
                    .invalidFormat, "the document holds the character U+\(String(scalar.value, radix: 16, uppercase: true)), which XML does not allow",
                    file: file, line: line)
            default: continue
            }
        }
    }

    private static func decodeUTF8(_ data: Data.SubSequence, file: String?) throws(ModelError) -> String {
        if let text = String(validating: data, as: UTF8.self) { return text }
        // Name the line of the first byte that is not UTF-8.
        var line = 1
        var iterator = data.makeIterator()
        var decoder = UTF8()
        decoding: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): if scalar == "\n" { line += 1 }
            case .emptyInput: break decoding
            case .error: break decoding
            }
        }
        throw ModelError(.invalidFormat, "the document is not valid UTF-8 text", file: file, line: line)
    }

    private static func decode(_ data: Data, _ encoding: String.Encoding, bom: Int, _ name: String, file: String?) throws(ModelError) -> String {
        guard let text = String(data: data.dropFirst(bom), encoding: encoding) else {
            throw ModelError(.invalidFormat, "the document is not valid \(name) text", file: file)
        }
        return text
    }

    /// The `encoding` of an XML declaration at the start of an ASCII-compatible document.
    private static func declaredEncoding(_ data: Data) -> String? {
        guard data.starts(with: Array("<?xml".utf8)) else { return nil }
        let head = data.prefix(512)
        guard let end = head.firstRange(of: Array("?>".utf8)) else { return nil }
        let declaration = String(decoding: head[..<end.lowerBound], as: UTF8.self)
        guard let match = declaration.firstMatch(of: /encoding\s*=\s*["']([^"']*)["']/) else { return nil }
        return String(match.output.1)
    }

    /// The text without its XML declaration (`<?xml … ?>` at the very start), replaced by the
    /// line breaks it held.
    private static func withoutDeclaration(_ text: String) -> String {
        guard text.hasPrefix("<?xml"), let end = text.range(of: "?>") else { return text }
        let declaration = text[..<end.upperBound]
        // `<?xml-stylesheet …?>` and the like are processing instructions, not the declaration.
        guard let next = declaration.dropFirst(5).first, next.isWhitespace else { return text }
        return String(repeating: "\n", count: declaration.filter(\.isNewline).count) + text[end.upperBound...]
    }
}
