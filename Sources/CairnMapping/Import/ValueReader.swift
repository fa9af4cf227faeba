import Cairn
import Foundation

/// Turns one JSON value into the value of an attribute, as its mapping says: exact numbers,
/// strings and numbers coerced where the attribute asks, dates by format, booleans from the
/// usual spellings, UUIDs, URIs, base64, transformers.
struct ValueReader {
    /// Why a value does not fit (the caller adds the path).
    struct Misfit: Error {
        var message: String
        /// Whether the mapping, not the value, is at fault (a transformer nobody registered): an
        /// ``MappingError/Code/invalidMapping`` that fails a lenient import too.
        var isMappingError = false

        /// The code of the error the caller throws.
        var code: MappingError.Code { isMappingError ? .invalidMapping : .invalidValue }
    }

    /// The value of `attribute` that the JSON value beginning with `token` writes. Leaves the
    /// scanner after the value. A transformer reads every value but null, which is nil (as
    /// export writes nil as null without it).
    static func read(_ token: JSONScanner.Token, _ attribute: ResolvedAttribute, _ scanner: inout JSONScanner) throws -> Value {
        if let name = attribute.transformerName, token != .null {
            guard let transformer = attribute.transformer else {
                try scanner.skip(token)
                throw Misfit(message: MappingError.unregisteredTransformer(name), isMappingError: true)
            }
            var limit = 1_000_000
            let json = try scanner.tree(token, limit: &limit)
            let value: Value
            do { value = try transformer.value(from: json) } catch {
                throw Misfit(message: "transformer \(name) refused the value: \(error)")
            }
            guard value == .null || value.fits(attribute.type) else {
                guard let converted = value.converted(to: attribute.type) else {
                    throw Misfit(message: "transformer \(name) gave \(value.misfit(attribute.type))")
                }
                return converted
            }
            return value
        }
        switch token {
        case .null: return .null
        case .beginArray, .beginObject:
            try scanner.skip(token)
            throw Misfit(message: "\(token == .beginArray ? "an array" : "an object") where \(expected(attribute)) belongs")
        case .endArray, .endObject, .key: throw Misfit(message: "a value was expected")
        case .boolean(let flag): return try boolean(flag, attribute)
        case .number(let number): return try self.number(number, attribute, scanner)
        case .string(let text): return try string(text, attribute, scanner)
        }
    }

    /// What an attribute takes, for messages.
    static func expected(_ attribute: ResolvedAttribute) -> String {
        switch attribute.type {
        case .string: "a string"
        case .integer16, .integer32, .integer64: "an integer (\(attribute.type))"
        case .double, .float, .decimal: "a number (\(attribute.type))"
        case .boolean: "a boolean"
        case .date: "a date (\(attribute.dateFormat))"
        case .binary: "base64 text"
        case .uuid: "a UUID"
        case .uri: "a URI"
        case .transformable, .undefined, .composite: "a value of type \(attribute.type)"
        }
    }

    private static func boolean(_ flag: Bool, _ attribute: ResolvedAttribute) throws -> Value {
        switch attribute.type {
        case .boolean: return .boolean(flag)
        case .string where attribute.coercesText: return .string(flag ? "true" : "false")
        case .string, .integer16, .integer32, .integer64, .double, .float, .decimal, .date, .binary, .uuid, .uri, .transformable, .undefined, .composite:
            throw Misfit(message: "\(flag) where \(expected(attribute)) belongs")
        }
    }

    private static func number(_ number: JSONNumberText, _ attribute: ResolvedAttribute, _ scanner: JSONScanner) throws -> Value {
        let bytes = UnsafeRawBufferPointer(rebasing: scanner.bytes[number.range])
        switch attribute.type {
        case .string:
            guard attribute.coercesText else { throw Misfit(message: "the number \(shown(scanner.text(number))) where a string belongs") }
            return .string(scanner.text(number))
        case .boolean:
            if let value = scanner.integer(number), value == 0 || value == 1 { return .boolean(value == 1) }
            throw Misfit(message: "the number \(shown(scanner.text(number))) where a boolean (true, false, 0 or 1) belongs")
        case .date:
            return try epochDate(bytes, attribute, text: scanner.text(number))
        case .integer16, .integer32, .integer64:
            // The common case straight from the bytes: an integer that fits.
            if let value = scanner.integer(number), let range = attribute.type.integerRange, range.contains(value) { return .integer(value) }
            return try numeric(bytes, isInteger: !number.hasFractionOrExponent, attribute, quoted: false)
        case .double, .float, .decimal, .binary, .uuid, .uri, .transformable, .undefined, .composite:
            return try numeric(bytes, isInteger: !number.hasFractionOrExponent, attribute, quoted: false)
        }
    }

    private static func string(_ text: JSONStringText, _ attribute: ResolvedAttribute, _ scanner: JSONScanner) throws -> Value {
        // Most strings have no escapes: read their bytes in place.
        let unescaped: [UInt8]? = text.hasEscapes ? JSONScanner.unescaped(UnsafeRawBufferPointer(rebasing: scanner.bytes[text.range])) : nil
        func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            if let unescaped { return try unescaped.withUnsafeBytes(body) }
            return try body(UnsafeRawBufferPointer(rebasing: scanner.bytes[text.range]))
        }
        switch attribute.type {
        case .string: return .string(scanner.string(text))
        case .integer16, .integer32, .integer64, .double, .float, .decimal:
            // ±∞ have no JSON literal: their one spelling is read whatever the coercion; NaN, which
            // no attribute holds, is refused by name.
            if text.range.count <= 9, case let word = scanner.string(text) {
                if word == NonFiniteNumber.notANumber { throw Misfit(message: "NaN is refused: no attribute holds NaN (it equals nothing)") }
                if let infinity = NonFiniteNumber.infinity(word, attribute.type) { return infinity }
            }
            guard attribute.coercesText else { throw Misfit(message: "the string \(quoted(scanner.string(text))) where \(expected(attribute)) belongs") }
            return try withBytes { bytes in
                guard let isInteger = NumberGrammar.check(bytes) else {
                    throw Misfit(message: "\(quoted(scanner.string(text))) is not \(expected(attribute))")
                }
                return try numeric(bytes, isInteger: isInteger, attribute, quoted: true)
            }
        case .boolean:
            guard let flag = withBytes(BooleanWord.value) else {
                throw Misfit(message: "\(quoted(scanner.string(text))) is not a boolean (true/false, yes/no, 1/0)")
            }
            return .boolean(flag)
        case .date:
            return try withBytes { bytes in try date(bytes, attribute) }
        case .uuid:
            guard let uuid = UUID(uuidString: scanner.string(text)) else { throw Misfit(message: "\(quoted(scanner.string(text))) is not a UUID") }
            return .uuid(uuid)
        case .uri:
            let string = scanner.string(text)
            guard URL(string: string) != nil else { throw Misfit(message: "\(quoted(string)) is not a URI") }
            return .uri(string)
        case .binary:
            guard let data = Data(base64Encoded: scanner.string(text)) else {
                throw Misfit(message: "the string is not base64 (binary attributes are written in base64)")
            }
            return .binary(Array(data))
        case .transformable, .undefined, .composite:
            throw Misfit(message: "a string where \(expected(attribute)) belongs")
        }
    }

    /// A number (from a JSON number, or a string holding one) as the attribute's numeric type:
    /// integers exactly and range-checked, decimals exactly, floating point to the nearest.
    private static func numeric(_ bytes: UnsafeRawBufferPointer, isInteger: Bool, _ attribute: ResolvedAttribute, quoted: Bool) throws -> Value {
        let text = String(decoding: bytes, as: UTF8.self)
        let shown = Self.shown(text)
        switch attribute.type {
        case .integer16, .integer32, .integer64:
            var value: Int64?
            if isInteger {
                value = Int64(text)
            } else if let decimal = exactDecimal(text) {
                // 2e3 or 12.0: an integer written another way (an integral decimal describes
                // itself without a fraction).
                value = Int64(decimal.description)
            }
            guard let value else {
                if isInteger || text.contains(where: { $0 == "e" || $0 == "E" }) {
                    throw Misfit(message: "\(shown) is out of the range of \(attribute.type)")
                }
                throw Misfit(message: "\(shown) is not an integer (\(attribute.type))")
            }
            let range = attribute.type.integerRange ?? Int64.min...Int64.max
            guard range.contains(value) else {
                throw Misfit(message: "\(shown) is out of the range of \(attribute.type) (\(range.lowerBound)...\(range.upperBound))")
            }
            return .integer(value)
        case .double:
            guard let value = Double(text), value.isFinite else { throw Misfit(message: "\(shown) is out of the range of double") }
            return .double(value)
        case .float:
            guard let value = Float(text), value.isFinite else { throw Misfit(message: "\(shown) is out of the range of float") }
            return .float(value)
        case .decimal:
            guard let value = exactDecimal(text) else { throw Misfit(message: "\(shown) has more digits than a decimal holds (38)") }
            return .decimal(value)
        case .string, .boolean, .date, .binary, .uuid, .uri, .transformable, .undefined, .composite:
            throw Misfit(message: "\(quoted ? "the string \"\(shown)\"" : "the number \(shown)") where \(expected(attribute)) belongs")
        }
    }

    /// `text` (checked against JSON's number grammar) as an exact `Decimal`, or nil.
    static func exactDecimal(_ text: String) -> Decimal? {
        guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), !value.isNaN else { return nil }
        let significant = text.prefix { $0 != "e" && $0 != "E" }.filter(\.isNumber).drop { $0 == "0" }
        return significant.reversed().drop { $0 == "0" }.count <= 38 ? value : nil
    }

    private static func date(_ bytes: UnsafeRawBufferPointer, _ attribute: ResolvedAttribute) throws -> Value {
        let found: Date?
        switch attribute.dateFormat {
        case .iso8601(let offset): found = ISO8601DateParser.date(bytes, defaultOffset: offset)
        case .pattern(_, let offset): found = attribute.datePattern?.date(bytes, offset: offset)
        case .unixSeconds, .unixMilliseconds:
            guard NumberGrammar.check(bytes) != nil else {
                throw Misfit(
                    message:
                        "\(quoted(String(decoding: bytes, as: UTF8.self))) is not a number of \(attribute.dateFormat == .unixSeconds ? "seconds" : "milliseconds")"
                )
            }
            return try epochDate(bytes, attribute, text: String(decoding: bytes, as: UTF8.self))
        }
        guard let found else {
            throw Misfit(
                message: "\(quoted(String(decoding: bytes, as: UTF8.self))) is not a date of \(DateRange.description) in the format \(attribute.dateFormat)")
        }
        return .date(found)
    }

    /// A date written as a number: seconds since 1970 (milliseconds with `.unixMilliseconds`).
    private static func epochDate(_ bytes: UnsafeRawBufferPointer, _ attribute: ResolvedAttribute, text: String) throws -> Value {
        guard let number = Double(text), number.isFinite else { throw Misfit(message: "\(shown(text)) is out of the range of dates") }
        guard let seconds = epochSeconds(number, attribute.dateFormat) else {
            throw Misfit(message: "\(shown(text)) is out of the range of dates (\(DateRange.description))")
        }
        return .date(Date(timeIntervalSince1970: seconds))
    }

    /// The seconds since 1970 of a date written as a number in `format`: milliseconds with
    /// `.unixMilliseconds`; under `.unixSeconds`, seconds beyond year 9999 are milliseconds, as
    /// MagicalRecord reads its `UnixTime`. Nil beyond years 1 to 9999.
    static func epochSeconds(_ number: Double, _ format: DateFormat) -> Double? {
        var seconds = format == .unixMilliseconds ? number / 1000 : number
        if format == .unixSeconds && !DateRange.contains(secondsSince1970: seconds) && DateRange.contains(secondsSince1970: seconds / 1000) {
            seconds /= 1000
        }
        return DateRange.contains(secondsSince1970: seconds) ? seconds : nil
    }

    static func quoted(_ text: String) -> String { "\"\(shown(text))\"" }

    /// A value as messages show it: at most 60 characters of it.
    static func shown(_ text: String) -> String {
        text.utf8.count > 60 ? String(text.prefix(60)) + "…" : text
    }
}

/// JSON's number grammar, applied to a string's bytes (a number given as text).
enum NumberGrammar {
    /// Whether the bytes are a JSON number: nil if not, else whether it is an integer (no
    /// fraction, no exponent).
    static func check(_ bytes: UnsafeRawBufferPointer) -> Bool? {
        guard let number = JSONScanner.numberText(bytes, at: 0), number.range.upperBound == bytes.count else { return nil }
        return !number.hasFractionOrExponent
    }
}
