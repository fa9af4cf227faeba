import Cairn
import CairnLog

/// Opens the store at `path` with the model it was written with (as of `options.asOf`), prints
/// what the open recovered (``RecoveryWarning``), runs `body` with the store and closes it, also
/// when `body` throws. A path that is not a folder is refused first (``StoreLocationError``).
func withOpenedStore<Result>(
    at path: String, options: StoreOptions = StoreOptions(), _ body: (Store) async throws -> Result
) async throws -> Result {
    try StoreLocation.requireFolder(path)
    let opened = try Store(at: path, options: options)
    RecoveryWarning.print(opened.recoveryReport, store: path)
    let result: Result
    do {
        result = try await body(opened)
    } catch {
        try? await opened.close()
        throw error
    }
    try await opened.close()
    return result
}

/// The options of a read-only open, as of the save with LSN `asOf` when given (`--as-of`).
func readOnlyOptions(asOf: UInt64? = nil) -> StoreOptions {
    var options = StoreOptions()
    options.readOnly = true
    options.asOf = asOf.map { LSN($0) }
    return options
}
