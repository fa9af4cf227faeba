/// A log sequence number: the position of one record (one transaction: one frame, or several for a large one) in a store's log.
///
/// LSNs are contiguous: the first frame of a new store is 1 and every append takes the next
/// number. An LSN stays valid across reopening and compaction, so it can serve as a token for
/// "everything after this point" (replay, history).
public struct LSN: RawRepresentable, Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The number itself.
    public var rawValue: UInt64

    /// Wraps a raw number.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Wraps a raw number.
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    /// The LSN of the first frame a log ever holds.
    public static let first = LSN(1)

    /// The position before any frame: "nothing yet".
    public static let zero = LSN(0)

    /// The largest LSN a log may hold (2^63 − 1). A frame, segment or manifest naming a larger
    /// one is refused as corruption, so that no arithmetic on an LSN read from disk can overflow:
    /// the next LSN after any valid one, and the sum of a valid first LSN and frame count, both
    /// fit in 64 bits.
    public static let maximum = LSN(UInt64(Int64.max))

    /// The LSN that follows this one (``maximum`` + 1 at most, for any valid LSN).
    public var next: LSN { LSN(rawValue &+ 1) }

    /// The LSN before this one; ``zero`` before ``zero`` (no wrap-around).
    public var previous: LSN { LSN(rawValue == 0 ? 0 : rawValue - 1) }

    public static func < (lhs: LSN, rhs: LSN) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { String(rawValue) }
}
