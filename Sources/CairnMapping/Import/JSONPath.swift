import Foundation

/// Where the importer is in the input, as a stack of steps; turned into text (`$[3].books[0].title`)
/// only when a message needs it.
struct JSONPath {
    enum Step {
        case index(Int)
        case key(String)
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
            case .key(let key):
                let plain = !key.isEmpty && key.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x5F }
                out += plain ? ".\(key)" : "[\"\(key.replacingOccurrences(of: "\"", with: "\\\""))\"]"
            }
        }
        return out
    }
}
