import Cairn

extension FetchedResultsController {
    /// Fetched results of a typed class that follow the store's saves (SwiftData's `@Query`
    /// with sections and change sets): the objects `descriptor` asks for, grouped in sections by
    /// `sectionKey`, a persisted attribute of `M` that must be the descriptor's first sort key.
    ///
    /// ```swift
    /// let books = try FetchedResultsController(
    ///     FetchDescriptor<Book>(sortBy: [SortDescriptor(\.year), SortDescriptor(\.title)]), in: store, sectionKey: \.year)
    /// let firstSection = books.results.models(Book.self, inSection: 0, in: store.viewContext)
    /// ```
    ///
    /// - Throws: `StoreError` for a descriptor that does not translate, a section key that is
    ///   not a persisted attribute or not the first sort key, or a class the store has no
    ///   entity for.
    public convenience init<M: ManagedModel>(
        _ descriptor: FetchDescriptor<M>, in store: Store, sectionKey: PartialKeyPath<M>? = nil, pageSize: Int? = nil
    ) throws {
        var name: String?
        if let sectionKey {
            guard let found = M.managedSchema.property(for: sectionKey).map(\.name) ?? M.managedSchema.compositeElementName(for: sectionKey) else {
                throw StoreError(
                    .invalidArgument, "fetched results of \(M.self): the section key \(sectionKey) is not a persisted attribute", entity: M.entityName)
            }
            name = found
        }
        try self.init(try descriptor.request(in: store), in: store, sectionKey: name, pageSize: pageSize)
    }
}

extension FetchedResults {
    /// The typed objects of the results, in order, as objects of `context` (those it no longer
    /// has, deleted since, left out).
    public func models<M: ManagedModel>(_ type: M.Type = M.self, in context: ObjectContext) -> [M] {
        TypedObjects.make(objectIDs, in: context)
    }

    /// The typed objects of section `section`, in order, as objects of `context`.
    public func models<M: ManagedModel>(_ type: M.Type = M.self, inSection section: Int, in context: ObjectContext) -> [M] {
        TypedObjects.make(objectIDs(inSection: section), in: context)
    }
}
