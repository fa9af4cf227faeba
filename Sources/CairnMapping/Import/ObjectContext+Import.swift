import Cairn

extension ObjectContext {
    /// Imports JSON records into this context as unsaved changes, by the same rules as
    /// ``Cairn/Store/importJSON(_:into:mapping:options:)`` (upsert by unique key, nested objects
    /// and references by key, every option): `save()` keeps them, `rollback()` drops them.
    /// Records are applied as the context sees its objects, its unsaved changes included; the
    /// import is one piece (``ImportOptions/chunkSize`` does not apply).
    ///
    /// ```swift
    /// let result = try await context.importJSON(data, into: "Book")
    /// try await context.save()
    /// ```
    ///
    /// - Throws: as the store's import; what was applied before a failure stays in the context
    ///   (roll it back to drop it).
    public func importJSON(
        _ bytes: some Collection<UInt8>, into entity: String? = nil, mapping: Mapping? = nil, options: ImportOptions = ImportOptions()
    ) async throws -> ImportResult {
        var options = options
        options.chunkSize = nil
        var run = JSONImport(store: store, input: InputBuffer(copying: bytes), entity: entity, mapping: mapping, options: options)
        run.context = self
        return try await run.run()
    }
}
