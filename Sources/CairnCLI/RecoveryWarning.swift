import CairnLog
import Glibc

/// What every command that opens a store says on standard error when the open recovered
/// something: a torn tail of the active segment ignored (read-only: `dump`, `query`, `export`)
/// or saved aside and cut (writable: `import`, `create`, `compact`), a manifest read from its
/// fallback. One line each, so that neither output piped elsewhere silently lacks the objects a
/// damaged last frame held nor a `.torn-OFFSET` file appears without a word.
enum RecoveryWarning {
    /// Prints a line for each thing `report` says the open recovered.
    static func print(_ report: RecoveryReport?, store: String) {
        var lines: [String] = []
        if let torn = report?.tornTail {
            let what = "\(torn.bytes) bytes at offset \(torn.offset) of \(torn.path) that are not a complete frame (\(torn.reason))"
            if torn.wasCut {
                lines.append("cairn: warning: \(store): cut \(what)" + (torn.savedTo.map { "; saved them to \($0)" } ?? ""))
            } else if torn.writerActive {
                lines.append(
                    "cairn: note: \(store) is open for writing elsewhere; a write in progress (\(torn.bytes) bytes at offset \(torn.offset) of \(torn.path)) was not read"
                )
            } else {
                lines.append("cairn: warning: \(store): ignored \(what); run `cairn verify \(store)`")
            }
        }
        if let note = report?.manifestNote { lines.append("cairn: warning: \(store): \(note)") }
        for line in lines { _ = Array((line + "\n").utf8).withUnsafeBytes { write(2, $0.baseAddress, $0.count) } }
    }
}
