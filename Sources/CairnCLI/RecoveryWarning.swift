import CairnLog
import Glibc

/// What the read-only commands (`dump`, `query`, `stats`) say on standard error when opening
/// the store ignored the end of its active segment: one line, so that output piped elsewhere
/// is not silently short of the objects a damaged last frame held.
enum RecoveryWarning {
    /// Prints the line when `report` holds an ignored torn tail.
    static func print(_ report: RecoveryReport?, store: String) {
        guard let torn = report?.tornTail, !torn.wasCut else { return }
        let line =
            torn.writerActive
            ? "cairn: note: \(store) is open for writing elsewhere; a write in progress (\(torn.bytes) bytes at offset \(torn.offset) of \(torn.path)) was not read\n"
            : "cairn: warning: \(store): ignored \(torn.bytes) bytes at offset \(torn.offset) of \(torn.path) that are not a complete frame (\(torn.reason)); run `cairn verify \(store)`\n"
        _ = Array(line.utf8).withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}
