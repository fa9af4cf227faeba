import Cairn
import CairnSupport

extension Store {
    /// Opens (or creates) the store in `directory` for `@Managed` classes (SwiftData's
    /// `ModelContainer(for:)`): the model is derived from the classes (``Model/init(for:)``),
    /// and a store written with an earlier version of them migrates as
    /// `StoreOptions.modelMismatch` says.
    ///
    /// ```swift
    /// let store = try Store(at: path, for: [Author.self, Book.self])
    /// ```
    ///
    /// - Throws: `StoreError` naming the class and property of a type Cairn cannot store;
    ///   otherwise as `Store.init(at:model:options:)`.
    public convenience init(at directory: String, for types: [any ManagedModel.Type], options: StoreOptions = StoreOptions()) throws {
        let model = try Model(for: types)
        try ModelBinding.check(types, against: model)
        try self.init(at: directory, model: model, options: options)
        ManagedObservation.start(self)
    }

    /// Opens (or creates) the store in `directory` with `model` (a `Model { }` or an Xcode
    /// model) and binds the classes to its entities: a class to the entity whose class name
    /// (an Xcode model's `representedClassName`) or name matches, as Core Data's generated
    /// classes bind. A class that does not match its entity (a property the entity lacks, a type
    /// that differs) is refused before the store opens, naming both.
    public convenience init(at directory: String, model: Model, for types: [any ManagedModel.Type], options: StoreOptions = StoreOptions()) throws {
        try ModelBinding.check(types, against: model)
        try self.init(at: directory, model: model, options: options)
        ManagedObservation.start(self)
    }

    /// An empty store in memory for `@Managed` classes (tests, previews, caches).
    public convenience init(inMemoryFor types: [any ManagedModel.Type]) throws {
        let model = try Model(for: types)
        try ModelBinding.check(types, against: model)
        self.init(inMemory: model)
        ManagedObservation.start(self)
    }
}

/// Tells the typed objects of a store's view context about every save (Observation): an
/// observer of a property of an object the view context holds sees the change once a save of
/// any context has merged, on the task that saved.
enum ManagedObservation {
    static func start(_ store: Store) {
        store.typedObservation.withLock { observation in
            guard observation == nil else { return }
            observation = store.observeSavesSynchronously { [weak store] save in
                guard let store else { return }
                let changed = Set(save.updated.map(\.id)).union(save.deleted)
                for object in store.viewContext.registeredTypedObjects(changed) {
                    (object as? any ManagedModel)?._managedPropertiesChanged()
                }
            }
        }
    }
}
