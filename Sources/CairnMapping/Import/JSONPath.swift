import Foundation

/// Where the importer is in the input, as a stack of steps; turned into text (`$[3].books[0].title`)
/// only when a message needs it.
struct JSONPath {
    enum Step {
        case index(Int)
        case key(String)
        /// A key as its bytes in the input (valid while the import runs), decoded only when a
        /// message needs it.
        case text(UnsafeRawBufferPointer, escaped: Bool)
    }

    var steps: [Step] = []

    mutating func push(_ step: Step) { steps.append(step) }
    mutating func pop() { steps.removeLast() }

    var text: String { Self.text(steps) }

    static func text(_ steps: [Step]) -> String {
        var out = "$"
        for step in steps {
            switch step {
            case .index(let index): out += "[\(index)]"
            case .text(let bytes, let escaped):
                out += component(escaped ? String(decoding: JSONScanner.unescaped(bytes), as: UTF8.self) : String(decoding: bytes, as: UTF8.self))
            case .key(let key):
                out += component(key)
            }
        }
        return out
    }

    private static func component(_ key: String) -> String {
        let plain = !key.isEmpty && key.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x5F }
        return plain ? ".\(key)" : "[\"\(key.replacingOccurrences(of: "\"", with: "\\\""))\"]"
    }
}
