import CairnLog

/// What to do when the store on disk was written with another model than the app's.
public enum ModelMismatchPolicy: Sendable, Equatable {
    /// Migrate the store when the changes can be inferred (Core Data's lightweight migration),
    /// recording the migration in the log; otherwise refuse to open with
    /// ``StoreError/Code/cannotMigrate`` and a list of each change that cannot be inferred. The
    /// default.
    case migrate
    /// Migrate when the changes can be inferred; otherwise delete the store's data and start
    /// empty.
    case migrateOrWipe
    /// Refuse to open, with a readable list of the differences.
    case fail
    /// Delete the store's data and start empty, as WTAData and Vokoder offer.
    case wipe
}

/// How a store is opened.
public struct StoreOptions: Sendable {
    /// When a save counts as done. Default `Durability.always`.
    public var durability: Durability = .always
    /// The log's segment size. Default 64 MiB.
    public var segmentSize: Int = 64 << 20
    /// What to do with a torn end of the log. Default `RecoveryMode.pointInTime`.
    public var recovery: RecoveryMode = .pointInTime
    /// What to do when the stored model differs from the app's. Default ``ModelMismatchPolicy/migrate``.
    public var modelMismatch: ModelMismatchPolicy = .migrate
    /// The app's earlier model versions, oldest first (``XcodeModelBundle/versions``): a store
    /// written with one of them migrates through each later version in turn, so that renames
    /// and other steps are taken as each version describes them. A store written with a model
    /// not listed migrates in one step.
    public var modelVersions: [Model] = []
    /// Versions of the app's model that could not be read (``XcodeModelBundle/unreadableVersions``),
    /// each with its place among ``modelVersions``: a migration that must pass through one fails,
    /// naming it and why (never wiping the store, even under ``ModelMismatchPolicy/migrateOrWipe``:
    /// the fix is to convert that version); others go on. Set both with
    /// ``XcodeModelBundle/migrationOptions(_:)``.
    public var unreadableModelVersions: [UnreadableModelVersion] = []
    /// Whether a store written with a model that is not among ``modelVersions`` may be migrated
    /// to the app's model when that drops data the store holds: an entity that holds objects, an
    /// attribute that holds values or a relationship that holds links (with its inverse) that the
    /// app's model lacks, or an integer attribute narrowed. Default `false`: such a store (the
    /// usual case is last month's build of the app opening a store a newer build wrote) is
    /// refused with ``StoreError/Code/cannotMigrate`` listing what would be lost, and is left as
    /// it was, under every ``ModelMismatchPolicy`` but ``ModelMismatchPolicy/wipe``. Steps
    /// between versions the app lists are its declared history and drop what they remove, as
    /// Core Data's do; a store never migrates down them.
    public var allowsMigrationThatDropsData = false
    /// Open without writing (for inspection): saves are refused.
    public var readOnly = false
    /// Open the store as it was after the save with this LSN (read-only: set ``readOnly``
    /// too). The store must still keep that state: from its base's LSN on, as far as
    /// compaction kept history (``HistoryRetention``); older LSNs throw
    /// ``StoreError/Code/historyUnavailable`` naming the oldest one kept.
    public var asOf: LSN?
    /// The largest frame of the log: a save's change record up to this size is one frame, and a
    /// larger one is one record of several frames of at most this size, atomic all the same
    /// (docs/FORMAT.md §4), so a save or an import of any size is one save. Default 256 MiB,
    /// about 2 million objects of ten attributes in one frame. Opening a store with a larger
    /// value raises the bound its manifest records; readers honour the manifest's.
    public var maximumFrameSize: Int = 256 << 20
    /// Former name of ``maximumFrameSize``, from when a save had to fit in one frame.
    @available(*, deprecated, renamed: "maximumFrameSize", message: "a save of any size is one save; this sets the size of its frames")
    public var maximumSaveSize: Int {
        get { maximumFrameSize }
        set { maximumFrameSize = newValue }
    }
    /// When the store compacts itself: by default when the log after the base outgrows the
    /// base (and 64 MiB), or when half of the bytes on disk are dead. See ``AutomaticCompaction``.
    public var automaticCompaction = AutomaticCompaction()
    /// The file system, replaceable in tests to inject faults.
    package var fileIO: (any FileIO)?
    /// Called at each named step of compaction (crash tests end the process there).
    package var compactionStep: (@Sendable (CompactionStep) -> Void)?
    /// Bytes by which a file a compaction replaced is cut down at a time before it is removed
    /// (the log's `releaseStep`; tests make it small).
    package var releaseStep: UInt64?
    /// A following store's: the log reads no frame after the writer's last acknowledgement.
    var readsAcknowledgedOnly = false

    /// The default options.
    public init() {}

    var logOptions: LogOptions {
        var options = LogOptions()
        options.durability = durability
        options.segmentSize = segmentSize
        options.recovery = recovery
        options.readOnly = readOnly
        options.maximumFrameSize = maximumFrameSize
        if let fileIO { options.fileIO = fileIO }
        options.compactionStep = compactionStep
        if let releaseStep { options.releaseStep = releaseStep }
        options.readsAcknowledgedOnly = readsAcknowledgedOnly
        return options
    }
}

/// A version of a model that could not be read, and where it sits among the versions that could.
public struct UnreadableModelVersion: Sendable {
    /// Its name (`Library 2`).
    public var name: String
    /// The number of readable versions before it: it comes between `modelVersions[position - 1]`
    /// and `modelVersions[position]`.
    public var position: Int
    /// Why it could not be read.
    public var problem: ModelError

    /// Describes an unreadable version.
    public init(name: String, position: Int, problem: ModelError) {
        self.name = name
        self.position = position
        self.problem = problem
    }
}
