/// The named points of writing and installing a base, where crash tests end the process to
/// check that every one leaves a store that opens to the same state (``LogOptions``'s
/// `compactionStep` hook).
package enum CompactionStep: String, Sendable, CaseIterable {
    /// Every byte of the temporary base is written, not yet synced.
    case baseWritten = "base-written"
    /// The temporary base is synced, not yet renamed.
    case baseSynced = "base-synced"
    /// The base has its name (and the directory is synced); no manifest names it yet.
    case baseRenamed = "base-renamed"
    /// The manifest naming the base replaced the old one (the commit point); nothing removed yet.
    case manifestReplaced = "manifest-replaced"
    /// The first file the base replaced was removed; others may remain.
    case removingOldFiles = "removing-old-files"
}
