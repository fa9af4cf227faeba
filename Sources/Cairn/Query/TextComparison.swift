import Foundation

/// Comparisons of strings as predicates make them: by Unicode rules (canonically equivalent
/// strings are equal), optionally without regard to case (`[c]`) or diacritics (`[d]`).
///
/// Strings are brought to one form first (``fold(_:_:)``): NFC, then lowercased, then with
/// combining marks removed, as asked. ASCII text, the common case, skips all of it.
enum TextComparison {
    /// The comparable form of `text` under `options`.
    static func fold(_ text: String, _ options: ComparisonOptions) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            return options.contains(.caseInsensitive) ? asciiLowercased(text) : text
        }
        var folded = options.contains(.normalized) ? text : text.precomposedStringWithCanonicalMapping
        if options.contains(.caseInsensitive) { folded = folded.lowercased() }
        if options.contains(.diacriticInsensitive) {
            var scalars = String.UnicodeScalarView()
            for scalar in folded.decomposedStringWithCanonicalMapping.unicodeScalars
            where !(scalar.properties.generalCategory == .nonspacingMark && scalar.properties.canonicalCombiningClass.rawValue > 0) {
                scalars.append(scalar)
            }
            folded = String(scalars).precomposedStringWithCanonicalMapping
        }
        return folded
    }

    private static func asciiLowercased(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return text }
        return String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// Whether `haystack` (folded) contains `needle` (folded), compared as UTF-8 bytes (NFC
    /// bytes of the same text are the same, and UTF-8 never matches inside a character's bytes).
    static func contains(_ haystack: String, _ needle: String) -> Bool {
        if needle.isEmpty { return true }
        var haystack = haystack, needle = needle
        return haystack.withUTF8 { hay in
            needle.withUTF8 { pin in
                guard pin.count <= hay.count, let first = pin.first, let hayBase = hay.baseAddress, let pinBase = pin.baseAddress else {
                    return false
                }
                var start = 0
                let last = hay.count - pin.count
                while start <= last {
                    if hay[start] == first && memcmp(hayBase + start, pinBase, pin.count) == 0 { return true }
                    start += 1
                }
                return false
            }
        }
    }

    /// Whether `text` matches a `LIKE` pattern: `*` any run of characters, `?` one character,
    /// `\` before either to take it literally.
    static func like(_ text: String, pattern: [LikeToken]) -> Bool {
        let characters = Array(text)
        var textIndex = 0, patternIndex = 0
        var starPattern = -1, starText = 0
        while textIndex < characters.count {
            if patternIndex < pattern.count {
                switch pattern[patternIndex] {
                case .any:
                    starPattern = patternIndex
                    starText = textIndex
                    patternIndex += 1
                    continue
                case .one:
                    textIndex += 1
                    patternIndex += 1
                    continue
                case .character(let character) where character == characters[textIndex]:
                    textIndex += 1
                    patternIndex += 1
                    continue
                case .character:
                    break
                }
            }
            guard starPattern >= 0 else { return false }
            patternIndex = starPattern + 1
            starText += 1
            textIndex = starText
        }
        while patternIndex < pattern.count, case .any = pattern[patternIndex] { patternIndex += 1 }
        return patternIndex == pattern.count
    }

    /// One element of a `LIKE` pattern.
    enum LikeToken: Equatable {
        case any, one
        case character(Character)
    }

    /// Splits a (folded) `LIKE` pattern into its elements.
    static func likePattern(_ pattern: String) -> [LikeToken] {
        var tokens: [LikeToken] = []
        var escaped = false
        for character in pattern {
            if escaped {
                tokens.append(.character(character))
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "*" {
                if tokens.last != .any { tokens.append(.any) }
            } else if character == "?" {
                tokens.append(.one)
            } else {
                tokens.append(.character(character))
            }
        }
        if escaped { tokens.append(.character("\\")) }
        return tokens
    }
}

/// A compiled regular expression for `MATCHES`, which must match the whole string.
final class WholeStringPattern: @unchecked Sendable {
    // Safety: NSRegularExpression is immutable once made and documented as safe to share.
    private let expression: NSRegularExpression

    init(_ pattern: String, caseInsensitive: Bool) throws {
        expression = try NSRegularExpression(pattern: "^(?:" + pattern + ")$", options: caseInsensitive ? [.caseInsensitive] : [])
    }

    func matches(_ text: String) -> Bool {
        let range = NSRange(text.startIndex..<text.endIndex, in: text)
        return expression.firstMatch(in: text, options: [], range: range) != nil
    }
}
