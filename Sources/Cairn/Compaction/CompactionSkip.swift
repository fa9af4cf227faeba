/// Why a compaction left the store's files as they were (``CompactionReport/skipped``).
public enum CompactionSkip: Sendable, Equatable, CustomStringConvertible {
    /// The history to keep reaches back to the installed base (or before the first record):
    /// nothing could be replaced, so no base was written.
    case historyKept
    /// The base written would not have made the store smaller: `baseBytes` against the
    /// `replacedBytes` of the installed base and the segments it would have replaced (a store
    /// with few dead bytes, whose frames compress better than a base's fixed-size object
    /// headers). The base was removed, not installed, as
    /// ``Store/compact(level:retainHistory:onlyIfSmaller:progress:)`` with `onlyIfSmaller` asks.
    case wouldNotShrink(baseBytes: UInt64, replacedBytes: UInt64)

    /// Why the compaction was skipped, in words.
    public var description: String {
        switch self {
        case .historyKept: "the history to keep reaches back to the installed base, so nothing could be replaced"
        case .wouldNotShrink(let base, let replaced):
            "a base of \(base) bytes would have replaced \(replaced) bytes, so the store would not have shrunk"
        }
    }
}
