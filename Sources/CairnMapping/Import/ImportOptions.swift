import Cairn

/// How an import treats what it reads.
public struct ImportOptions: Sendable {
    /// What a JSON `null` does to an attribute.
    public enum Nulls: String, Sendable, Hashable {
        /// It clears the attribute. The default.
        case clear
        /// It is ignored: a stored value is never overwritten by null.
        case neverOverwrite
    }

    /// What a key absent from a record does to an attribute of an existing object.
    public enum MissingKeys: String, Sendable, Hashable {
        /// Nothing: the attribute keeps its value. The default.
        case leaveAlone
        /// It clears the attribute, as a `null` would.
        case clear
    }

    /// Whether a value that does not fit (a date that does not parse, an array where a number
    /// belongs) fails the import (false, the default: nothing is written) or is set to nil with
    /// a warning (true; a record without its unique key is then skipped, and so is a record that
    /// would leave an object as the save refuses it: exactly its changes are undone).
    public var lenient = false
    /// What `null` does.
    public var nulls = Nulls.clear
    /// What a missing key does.
    public var missingKeys = MissingKeys.leaveAlone
    /// Whether records whose unique key an existing object holds update it (true, the default)
    /// or leave it untouched (Vokoder's overwrite switch off).
    public var updatesExisting = true
    /// A dotted key path to the records inside the input (`data.people` for
    /// `{"data": {"people": [...]}}`); nil: the input is the records (an array, one object, or
    /// JSON Lines).
    public var root: String?
    /// A reference by key to an object neither the store nor the input holds, or a record given
    /// as its key alone (`[1, 2, 3]`) that names no object: an error (false, the default; a
    /// warning when lenient, and such a record is skipped) or a new object holding only its key
    /// (true, as MagicalRecord, Groot and Sync do). On for every import through a mapping whose
    /// ``Mapping/insertsMissingReferences`` is set; `cairn import --insert-missing-references`.
    public var insertsMissingReferences = false
    /// Commits every this many top-level records (and the rest at the end), so that the import
    /// holds one chunk's changes beside the store rather than the whole input's (one save of any
    /// size is atomic, but its memory grows with it); nil: one save for the whole import.
    /// A failed chunked import keeps the chunks it committed, and says how many records they
    /// held (``ImportError/committedRecords``): run it again from there with ``skipRecords``.
    public var chunkSize: Int?
    /// Top-level records to pass over before importing (to resume a chunked import).
    public var skipRecords = 0
    /// Called with the progress of the import, every ``progressInterval`` records and at the end.
    public var progress: (@Sendable (ImportProgress) -> Void)?
    /// How many records between two progress reports.
    public var progressInterval = 10_000
    /// Called for each object the import inserted or updated, in the import's context, before it
    /// saves: the place to derive values the JSON does not hold (a required value included). It
    /// runs before the import checks what the save refuses, so a lenient import may then skip
    /// the record of an object the hook saw: an object that record inserted is removed, and what
    /// the record set is set back (what the hook set on an object that existed before stays).
    /// An error it throws fails the import.
    public var afterImport: (@Sendable (ManagedObject) throws -> Void)?
    /// Whether a comma may end an array or an object (`[1,2,]`, `{"a":1,}`), as Foundation's
    /// `JSONSerialization` reads on Apple platforms (true), or is an error naming this option
    /// (false, the default: JSON allows none). A comma with no value before it (`[,]`,
    /// `[1,,2]`) is an error either way.
    public var allowsTrailingCommas = false

    /// The default options: strict, null clears, a missing key leaves the value alone, one save.
    public init() {}
}

/// How far an import has gone.
public struct ImportProgress: Sendable, Hashable {
    /// Top-level records read.
    public var records: Int
    /// Bytes of input read.
    public var bytes: Int
    /// Bytes of input in all, when known.
    public var totalBytes: Int?
    /// Seconds since the import began.
    public var elapsed: Double
    /// Records read per second.
    public var recordsPerSecond: Double { elapsed > 0 ? Double(records) / elapsed : 0 }
    /// Seconds left, estimated from the bytes left at the rate so far (nil when unknown).
    public var remaining: Double? {
        guard let totalBytes, bytes > 0, elapsed > 0 else { return nil }
        return Double(totalBytes - bytes) / (Double(bytes) / elapsed)
    }
}
