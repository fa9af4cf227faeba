/// How the default JSON key of a property is made from its name.
public enum KeyStyle: String, Sendable, Hashable, CaseIterable {
    /// The property's name as it is (`firstName`).
    case asIs
    /// snake_case (`firstName` → `first_name`, `userID` → `user_id`).
    case snakeCase

    /// The default key for a property named `name`.
    public func key(for name: String) -> String {
        switch self {
        case .asIs: return name
        case .snakeCase: return Self.snakeCased(name)
        }
    }

    /// `firstName` → `first_name`; a run of capitals is one word (`userID` → `user_id`,
    /// `URLString` → `url_string`); dots (composite element paths) are kept.
    static func snakeCased(_ name: String) -> String {
        let characters = Array(name)
        var out = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase {
                let previous = index > 0 ? characters[index - 1] : nil
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                let startsWord = previous.map { $0.isLowercase || $0.isNumber || ($0.isUppercase && next?.isLowercase == true) } ?? false
                if startsWord && previous != "." && previous != "_" { out.append("_") }
                out.append(contentsOf: character.lowercased())
            } else {
                out.append(character)
            }
        }
        return out
    }
}
