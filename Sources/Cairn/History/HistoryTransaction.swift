import CairnLog
import Foundation

/// One save as history tells it (Core Data's `NSPersistentHistoryTransaction`): when and by whom
/// it was made, and what it changed, read back from the store's log.
public struct HistoryTransaction: Sendable {
    /// The LSN of the save's log frame.
    public var lsn: LSN
    /// The token after this transaction: history since it starts with the next one.
    public var token: HistoryToken
    /// When the save was made (the saving process's clock); nil for a save written by a build
    /// of Cairn before change record version 3, which did not record it.
    public var timestamp: Date?
    /// The author the saving context named (``ObjectContext/transactionAuthor``), if any.
    public var author: String?
    /// The name of the context that saved; nil for a save made without one (a batch insert).
    public var contextName: String?
    /// Set when this LSN records the store's model (its first record) or a migration to a new
    /// one: the model from here on. Every object may have changed: a consumer refetches. The
    /// transaction then has no ``changes``.
    public var newModel: Model?
    /// The record's changes, decoded when first asked for.
    let body: HistoryChanges?

    init(
        lsn: LSN, token: HistoryToken, timestamp: Date? = nil, author: String? = nil, contextName: String? = nil, newModel: Model? = nil,
        body: HistoryChanges? = nil
    ) {
        self.lsn = lsn
        self.token = token
        self.timestamp = timestamp
        self.author = author
        self.contextName = contextName
        self.newModel = newModel
        self.body = body
    }

    /// The objects the save changed (of the entities asked for), in the order the record lists
    /// them: inserts, updates, deletes.
    ///
    /// Decoded from the save's record when first asked for, then kept: a reader that looks only
    /// at who saved and when reads history at the speed of the log's frames.
    ///
    /// - Throws: ``StoreError/Code/corruptRecord`` naming the LSN, segment file and offset when
    ///   the record's changes do not read (its frame's checksum held: a record forged, or written
    ///   by a faulty build).
    public var changes: [HistoryChange] {
        get throws { try body?.decoded() ?? [] }
    }

    /// The name of the entity of `id` (a changed object, or a relationship's target among
    /// their values) in the model the save was written with, which may differ from the store's
    /// model now; nil for an entity that model does not have.
    public func entityName(of id: ObjectID) -> String? {
        guard let descriptions = (body?.model ?? newModel)?.descriptions, descriptions.indices.contains(id.entity) else { return nil }
        return descriptions[id.entity].name
    }
}

/// One object's change in a ``HistoryTransaction`` (Core Data's `NSPersistentHistoryChange`).
public struct HistoryChange: Sendable {
    /// What happened to the object.
    public enum Kind: String, Sendable, Codable {
        /// The save made it: ``HistoryChange/values`` holds every property.
        case inserted
        /// The save changed it: ``HistoryChange/values`` holds the properties it changed, with
        /// their new values (an inverse relationship the context kept in step included).
        case updated
        /// The save deleted it: ``HistoryChange/values`` holds its tombstone, the values of its
        /// uniqueness constraints' attributes (empty for an entity without constraints, and for
        /// a save written before change record version 3).
        case deleted
    }

    /// What happened.
    public var kind: Kind
    /// The object.
    public var objectID: ObjectID
    /// Its entity's name (in the model the save was written with).
    public var entity: String
    /// The names of the properties in ``values``, in the same order.
    public var properties: [String]
    /// The values: see ``Kind``.
    public var values: [PropertyValue]

    /// The value of the property named `name` among ``values``, if it is there.
    public subscript(name: String) -> PropertyValue? {
        guard let index = properties.firstIndex(of: name), values.indices.contains(index) else { return nil }
        return values[index]
    }

    /// ``values`` by property name.
    public var valuesByName: [String: PropertyValue] {
        Dictionary(zip(properties, values), uniquingKeysWith: { first, _ in first })
    }
}
