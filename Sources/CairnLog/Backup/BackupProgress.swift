/// How far a backup got (``Log/backup(to:progress:)``): reported before the first file and
/// after each one.
public struct BackupProgress: Sendable {
    /// Files done (linked, copied or found unchanged) so far.
    public let filesDone: Int
    /// Files the backup holds.
    public let fileCount: Int
    /// The bytes of the files done so far (linked or unchanged ones included: their length).
    public let bytesDone: UInt64
    /// The bytes of every file the backup holds.
    public let byteCount: UInt64

    /// The part done, 0...1, by bytes.
    public var fractionDone: Double {
        byteCount == 0 ? (fileCount == 0 ? 1 : Double(filesDone) / Double(fileCount)) : min(1, Double(bytesDone) / Double(byteCount))
    }
}
