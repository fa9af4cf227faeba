import Cairn
import CairnMapping

extension ObjectContext {
    /// Imports JSON records as objects of `M`'s entity into this context, as unsaved changes
    /// (`ObjectContext.importJSON(_:into:mapping:options:)`: the same mapping rules), and
    /// returns them as typed objects, in the order of the records.
    ///
    /// ```swift
    /// let books = try await context.importJSON(data, as: Book.self)
    /// try await context.save()
    /// ```
    public func importJSON<M: ManagedModel>(
        _ bytes: some Collection<UInt8>, as type: M.Type, mapping: Mapping? = nil, options: ImportOptions = ImportOptions()
    ) async throws -> [M] {
        let entity = try ModelBinding.binding(M.self, in: store).entity.name
        let result = try await importJSON(bytes, into: entity, mapping: mapping, options: options)
        return TypedObjects.make(result.objectIDs, of: M.self, in: self)
    }

    /// Exports objects of `M` that a descriptor matches as JSON (the mapping's keys and values,
    /// docs/MAPPING.md), in the descriptor's order.
    public func exportJSON<M: ManagedModel>(
        _ descriptor: FetchDescriptor<M>, mapping: Mapping? = nil, options: ExportOptions = ExportOptions()
    ) throws -> [UInt8] {
        let request = try descriptor.request(in: store)
        return try exportJSON(request, mapping: mapping ?? Mapping(model: store.model), options: options)
    }
}

extension Store {
    /// Imports JSON records as objects of `M`'s entity and saves them
    /// (`Store.importJSON(_:into:mapping:options:)` with the entity `M` binds to).
    public func importJSON<M: ManagedModel>(
        _ bytes: some Collection<UInt8>, as type: M.Type, mapping: Mapping? = nil, options: ImportOptions = ImportOptions()
    ) async throws -> ImportResult {
        let entity = try ModelBinding.binding(M.self, in: self).entity.name
        return try await importJSON(bytes, into: entity, mapping: mapping, options: options)
    }
}
