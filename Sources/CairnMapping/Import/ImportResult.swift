import Cairn

/// Something a lenient import set aside: where, and what was wrong.
public struct ImportWarning: Sendable, Hashable, CustomStringConvertible {
    /// The JSON path of the value (`$[12].born`).
    public var path: String
    /// What was wrong and what was done.
    public var message: String

    /// The warning with the JSON path it concerns.
    public var description: String { "\(path): \(message)" }
}

/// What an import did.
public struct ImportResult: Sendable {
    /// The objects of the top-level records, in input order; a record whose key an earlier one
    /// had gives no second entry, and a record a lenient import skipped gives none. Read them in
    /// a context with `objects(with:)`.
    public var objectIDs: [ObjectID] = []
    /// Objects inserted (nested ones included).
    public var inserted = 0
    /// Existing objects whose values changed.
    public var updated = 0
    /// Existing objects the input named without changing them.
    public var unchanged = 0
    /// Objects deleted by the `replace` and `mergeAndPrune` relationship policies.
    public var deleted = 0
    /// Top-level records read (skipped ones included).
    public var records = 0
    /// Bytes of input read.
    public var bytes = 0
    /// Saves made (0 when nothing changed).
    public var saves = 0
    /// What a lenient import set aside.
    public var warnings: [ImportWarning] = []
    /// Records read by a second reader on another core (``InputSplit``; 0 when its work was
    /// dropped or there was none): what tests check the two-core read with.
    var recordsReadOnSecondCore = 0
    /// Records read straight into encoded rows for a batch upsert (``FlatRecordEncoder``), not
    /// applied through a context: what tests check the flat path with.
    var recordsReadFlat = 0

    /// An empty result: nothing read, nothing done.
    public init() {}
}

/// A failed chunked import: the error, and how many top-level records the chunks it committed
/// held (pass that as ``ImportOptions/skipRecords`` to resume).
public struct ImportError: Error, Sendable, CustomStringConvertible {
    /// Why it failed.
    public var underlying: any Error
    /// Top-level records committed before the failure.
    public var committedRecords: Int

    /// The error, with how many records the committed chunks held.
    public var description: String { "\(underlying) (\(committedRecords) records were committed before the failure)" }
}
