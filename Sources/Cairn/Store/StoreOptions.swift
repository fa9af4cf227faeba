import CairnLog

/// What to do when the store on disk was written with another model than the app's.
public enum ModelMismatchPolicy: Sendable, Equatable {
    /// Refuse to open, with a readable list of the differences (the default).
    case fail
    /// Delete the store's data and start empty, as WTAData and Vokoder offer.
    case wipe
}

/// How a store is opened.
public struct StoreOptions: Sendable {
    /// When a save counts as done. Default ``Durability/always``.
    public var durability: Durability = .always
    /// The log's segment size. Default 64 MiB.
    public var segmentSize: Int = 64 << 20
    /// What to do with a torn end of the log. Default ``RecoveryMode/pointInTime``.
    public var recovery: RecoveryMode = .pointInTime
    /// What to do when the stored model differs from the app's. Default ``ModelMismatchPolicy/fail``.
    public var modelMismatch: ModelMismatchPolicy = .fail
    /// Open without writing (for inspection): saves are refused.
    public var readOnly = false

    /// The default options.
    public init() {}

    var logOptions: LogOptions {
        var options = LogOptions()
        options.durability = durability
        options.segmentSize = segmentSize
        options.recovery = recovery
        options.readOnly = readOnly
        return options
    }
}
