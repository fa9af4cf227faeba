import Cairn

/// How an export writes objects.
public struct ExportOptions: Sendable {
    /// The shape of the output.
    public enum Format: String, Sendable, Hashable, CaseIterable {
        /// One JSON array of objects.
        case json
        /// JSON Lines: one object per line.
        case jsonLines = "jsonl"
    }

    /// JSON or JSON Lines.
    public var format = Format.json
    /// How deep relationships are written as nested objects: 0 (the default) writes each
    /// relationship as the keys of its objects (when the destination has a unique key; otherwise
    /// not at all), 1 nests the related objects, 2 theirs too… An inverse back to the object
    /// that nested it is never followed.
    public var depth = 0
    /// Whether a nil value is written as `null` (the default) or left out.
    public var writesNulls = true
    /// Called for each object before it is written, with the JSON about to be written (an
    /// object), which it may change.
    public var beforeExport: (@Sendable (ManagedObject, inout JSONValue) throws -> Void)?
    /// Called after every ``progressInterval`` top-level objects written, and after the last,
    /// with the objects written so far and the objects to write (for a progress meter).
    public var progress: (@Sendable (_ written: Int, _ total: Int) -> Void)?
    /// How many top-level objects between calls of ``progress``.
    public var progressInterval = 1_000

    /// The default: a JSON array, flat, nulls written.
    public init() {}
}

/// What an export wrote.
public struct ExportResult: Sendable, Hashable {
    /// Top-level objects written.
    public var objects: Int
    /// Bytes written.
    public var bytes: Int
}
