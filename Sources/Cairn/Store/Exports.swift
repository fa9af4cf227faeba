// The types of the log that Cairn's own API speaks in, usable with `import Cairn` alone: LSNs
// (a store's `lastSaveLSN`, `StoreOptions.asOf`, history tokens, compaction reports), the
// compaction level (`compact(level:)`) and the recovery report (`recoveryReport`). The rest of
// CairnLog stays behind `import CairnLog`.
@_exported import struct CairnLog.LSN
@_exported import enum CairnLog.CompactionLevel
@_exported import struct CairnLog.RecoveryReport
