// The types of the log that Cairn's own API speaks in, usable with `import Cairn` alone (a
// store's `lastSaveLSN`, `StoreOptions.asOf`, history tokens and compaction reports): the rest
// of CairnLog stays behind `import CairnLog`.
@_exported import struct CairnLog.LSN
