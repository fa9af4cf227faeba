import CairnLog

/// An error of the object-graph layer: what went wrong and the object, entity, property or LSN
/// concerned. Match codes in `catch` with `~=`:
///
/// ```swift
/// do { try await context.save() } catch StoreError.Code.mergeConflict { … }
/// ```
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code in words, as messages print it.
        public let rawValue: String
        /// A code from its words.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The store's stored model differs from the app's and the policy is `.fail`.
        public static let modelMismatch = Code(rawValue: "model mismatch")
        /// A frame of the log does not hold a valid record.
        public static let corruptRecord = Code(rawValue: "corrupt record")
        /// The store was written by a newer format.
        public static let unsupportedFormat = Code(rawValue: "unsupported format")
        /// The log's frames are sound, and its records are not an object graph's: with no base,
        /// its first record is not a model record, or does not decode as one (a log written
        /// with `CairnLog` alone, say). Also a store opened without a model
        /// (`Store(at:options:)`) whose log holds no model record yet.
        public static let notObjectGraph = Code(rawValue: "not an object graph")
        /// A value of the wrong type for an attribute.
        public static let typeMismatch = Code(rawValue: "type mismatch")
        /// An entity or property name the model does not have.
        public static let unknownName = Code(rawValue: "unknown name")
        /// A required value is missing.
        public static let missingValue = Code(rawValue: "missing value")
        /// Two objects share the values of a uniqueness constraint.
        public static let uniquenessViolation = Code(rawValue: "uniqueness violation")
        /// A to-many relationship holds too few or too many objects.
        public static let countViolation = Code(rawValue: "count violation")
        /// A delete refused by a `deny` delete rule.
        public static let deleteDenied = Code(rawValue: "delete denied")
        /// A save conflicts with saves made since its context's snapshot.
        public static let mergeConflict = Code(rawValue: "merge conflict")
        /// The object was deleted, or belongs to another context.
        public static let invalidObject = Code(rawValue: "invalid object")
        /// An abstract entity cannot have objects of its own.
        public static let abstractEntity = Code(rawValue: "abstract entity")
        /// The store is closed.
        public static let closed = Code(rawValue: "closed")
        /// The store was opened read-only.
        public static let readOnly = Code(rawValue: "read-only")
        /// A predicate, sort or aggregate that does not fit the entity: an unknown key, a value
        /// of a type its attribute cannot be compared with, a misused operator.
        public static let invalidPredicate = Code(rawValue: "invalid predicate")
        /// The store's model differs from the app's in ways migration cannot infer, or its data
        /// does not satisfy the new model; the message lists each problem.
        public static let cannotMigrate = Code(rawValue: "cannot migrate")
        /// The store's location is not a directory on this machine (a URL that is not a file URL).
        public static let invalidLocation = Code(rawValue: "invalid location")
        /// Arguments of a call that do not fit together: a batch insert's row with more or fewer
        /// values than it has columns, a column named twice.
        public static let invalidArgument = Code(rawValue: "invalid argument")
        /// A past LSN the store no longer keeps (compaction replaced it; the error's ``lsn`` is
        /// the oldest available) or has not reached.
        public static let historyUnavailable = Code(rawValue: "history unavailable")
        /// A following store cannot go on (``Store/followingError``): its writer migrated the
        /// store, or the store was replaced by another or went back to an earlier state, or a
        /// save could not be applied. What it shows stays as it was; open it again.
        public static let followingStopped = Code(rawValue: "following stopped")
        /// The code in words.
        public var description: String { rawValue }
        /// Lets `catch StoreError.Code.mergeConflict` match.
        public static func ~= (code: Code, error: any Error) -> Bool { (error as? StoreError)?.code == code }
    }

    /// The kind of failure.
    public var code: Code
    /// What happened, in words.
    public var message: String
    /// The entity concerned.
    public var entity: String?
    /// The property concerned.
    public var property: String?
    /// The objects concerned (a conflict, a uniqueness violation).
    public var objects: [ObjectID]
    /// The log position concerned.
    public var lsn: LSN?
    /// The file holding the record concerned (a segment), when known.
    public var file: String?
    /// The byte offset of the record's frame in ``file``, when known.
    public var offset: UInt64?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, entity: String? = nil, property: String? = nil,
        objects: [ObjectID] = [], lsn: LSN? = nil, file: String? = nil, offset: UInt64? = nil
    ) {
        self.code = code
        self.message = message
        self.entity = entity
        self.property = property
        self.objects = objects
        self.lsn = lsn
        self.file = file
        self.offset = offset
    }

    /// The code and the message, with the entity and property, file, offset and LSN concerned.
    public var description: String {
        var text = "\(code): \(message)"
        let place = [entity, property].compactMap { $0 }.joined(separator: ".")
        if !place.isEmpty { text += " (\(place))" }
        var location: [String] = []
        if let file { location.append("file \(file)") }
        if let offset { location.append("offset \(offset)") }
        if let lsn { location.append("LSN \(lsn)") }
        if !location.isEmpty { text += " (" + location.joined(separator: ", ") + ")" }
        return text
    }
}
