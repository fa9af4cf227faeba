import Cairn
import CairnSupport

/// Where a typed object's values live: in its context (an object inserted or fetched), or,
/// for a new object not inserted yet, in the object itself. `@Managed` stores one in each
/// object and reads and writes every persisted property through it.
public struct ManagedState {
    /// The object underneath, once the typed object is in a context.
    @usableFromInline var object: ManagedObject?
    /// Where the class's properties live in the object's entity.
    @usableFromInline var binding: EntityBinding?
    /// The values of a new object (by ordinal) until it is inserted.
    @usableFromInline var pending = PendingValues()
    /// What the object's context read for it last, read again only when the context changed.
    @usableFromInline var cache = CachedObjectView()
    /// Whether the object stands in for a missing one (what a required to-one reads as when it
    /// points to no object): no context takes it.
    var isStandIn = false
    #if CAIRN_INTERNAL_CHECKS
        /// The check that one thread at a time uses the object (compiled in with the internal checks).
        @usableFromInline let useCheck = ConcurrentUseCheck()
    #endif

    // (The accessors `@Managed` writes call the methods marked inlinable here, so that they are
    // specialized for each property's type in the app's module: no witness-table calls.)

    /// The state of a new object.
    public init() {}

    /// The state of a new object of a class with `propertyCount` persisted properties (what
    /// `@Managed` writes: the values set before the object is inserted take one buffer of that size).
    public init(propertyCount: Int) {
        pending = PendingValues(count: propertyCount)
    }

    /// The state of an object of a context.
    @usableFromInline
    init(object: ManagedObject, binding: EntityBinding) {
        self.object = object
        self.binding = binding
    }

    /// The state of a stand-in for a missing object.
    init(standIn: Void) {
        isStandIn = true
    }

    /// Makes a new object's state that of an object of a context: its values are the context's
    /// from now on. (The use check stays: a use under way carries on.)
    mutating func bind(to object: ManagedObject, _ binding: EntityBinding) {
        self.object = object
        self.binding = binding
        pending = PendingValues()
        cache = CachedObjectView()
    }

    /// Sets a property's initial value (an initializer's assignment, or the property's
    /// declared value): kept in the object until it is inserted; ignored by an object of a
    /// context, whose values are its context's.
    @inlinable
    public mutating func initialize<V>(_ ordinal: Int, to value: V) {
        guard object == nil else { return }
        pending.set(.swift(PendingValues.Boxed(value)), at: ordinal)
    }

    /// Sets a property's initial value of a type the store holds as it is (kept as its stored value).
    @inlinable
    public mutating func initialize<V: AttributeValue>(_ ordinal: Int, to value: V) {
        guard object == nil else { return }
        let stored = value.storedValue
        // nil before any other value is no value: an optional property's implicit nil keeps no
        // storage (in the objects a fetch makes above all).
        // (A tag test, not `==`: this runs for each optional property of every object made.)
        if case .null? = stored, pending.isEmpty { return }
        pending.set(stored.map(PendingValues.Entry.stored) ?? .swift(PendingValues.Boxed(value)), at: ordinal)
    }

    // MARK: Reading

    /// The value of persisted property `ordinal` of `owner`, of a type the store holds as it is.
    @inlinable
    public static func value<M: ManagedModel, V: AttributeValue>(_ ordinal: Int, of owner: M) -> V {
        checkingUse(ordinal, of: owner) { scalarValue(ordinal, of: owner) }
    }

    @inlinable
    static func scalarValue<M: ManagedModel, V: AttributeValue>(_ ordinal: Int, of owner: M) -> V {
        if let object = owner._managedState.object, let binding = owner._managedState.binding,
            case .attribute(let position, .scalar) = binding.slots[ordinal],
            let stored = owner._managedState.cache.attributeValue(of: object, at: position),
            let value = V(storedValue: stored)
        {
            return value
        }
        if owner._managedState.object == nil, case .stored(let stored) = owner._managedState.pending.entry(at: ordinal),
            let value = V(storedValue: stored)
        {
            return value
        }
        return anyValue(ordinal, of: owner)
    }

    /// The value of persisted property `ordinal` of `owner`, as its context sees it.
    public static func value<M: ManagedModel, V>(_ ordinal: Int, of owner: M) -> V {
        checkingUse(ordinal, of: owner) { anyValue(ordinal, of: owner) }
    }

    /// Runs an access to property `ordinal` of `owner`; with the internal checks compiled in,
    /// as the one use of the object under way (``ConcurrentUseCheck``).
    @inlinable
    static func checkingUse<M: ManagedModel, R>(_ ordinal: Int, of owner: M, _ access: () -> R) -> R {
        #if CAIRN_INTERNAL_CHECKS
            let check = owner._managedState.useCheck
            check.enter(M.self, ordinal, schema: M.managedSchema)
            defer { check.leave() }
        #endif
        return access()
    }

    @usableFromInline
    static func anyValue<M: ManagedModel, V>(_ ordinal: Int, of owner: M) -> V {
        guard let object = owner._managedState.object, let binding = owner._managedState.binding else {
            switch owner._managedState.pending.entry(at: ordinal) {
            case .swift(let boxed): if let value = boxed.value as? V { return value }
            case .stored(let stored):
                let coding: PropertyKind.ValueCoding = (V.self is any AttributeValue.Type) ? .scalar : .json
                if let value = ValueCodec.decode(stored, as: V.self, coding: coding) as? V { return value }
            case .none:
                // An optional never set is nil.
                if let optional = V.self as? any OptionalValue.Type, let none = optional.none as? V { return none }
            }
            return placeholder(ordinal, of: owner, because: "it has no value yet")
        }
        switch binding.slots[ordinal] {
        case .attribute(let position, let coding):
            guard let stored = owner._managedState.cache.attributeValue(of: object, at: position) else { return gone(ordinal, of: owner, object) }
            if let value = ValueCodec.decode(stored, as: V.self, coding: coding) as? V { return value }
            return placeholder(ordinal, of: owner, because: "its stored value \(stored) does not read as \(V.self)")
        case .composite(let positions, let layout):
            guard let stored = owner._managedState.cache.attributeValues(of: object, at: positions) else { return gone(ordinal, of: owner, object) }
            do {
                return try layout.value(stored[...], as: V.self)
            } catch {
                // The elements that read keep their values; the others read as empty ones.
                ManagedModelProblems.report("\(M.self).\(M.managedSchema.properties[ordinal].name) cannot be read whole: \(error)")
                if let value = try? layout.value(stored[...], as: V.self, lenient: true) { return value }
                return placeholder(ordinal, of: owner, because: "\(error)")
            }
        case .toOne(let index, let type):
            guard let targets = owner._managedState.cache.targets(of: object, relationship: index), let context = object.context else {
                return gone(ordinal, of: owner, object)
            }
            guard let target = targets.first else {
                // An optional to-one without an object is nil, not a problem.
                if let optional = V.self as? any OptionalValue.Type, let none = optional.none as? V { return none }
                return placeholder(ordinal, of: owner, because: "it points to no object")
            }
            if let value = TypedObjects.make(target, type, in: context) as? V { return value }
            return placeholder(ordinal, of: owner, because: "its object \(target) is not a \(type)")
        case .toMany(let index, let type):
            guard let targets = owner._managedState.cache.targets(of: object, relationship: index), let context = object.context,
                let many = V.self as? any ToManyValue.Type
            else { return gone(ordinal, of: owner, object) }
            if let value = many.make(TypedObjects.make(targets, type, in: context)) as? V { return value }
            return placeholder(ordinal, of: owner, because: "its objects are not \(type)")
        }
    }

    // MARK: Writing

    /// Sets persisted property `ordinal` of `owner` to a value of a type the store holds as it is.
    @inlinable
    public static func setValue<M: ManagedModel, V: AttributeValue>(_ value: V, _ ordinal: Int, of owner: M) {
        checkingUse(ordinal, of: owner) { setScalarValue(value, ordinal, of: owner) }
    }

    @inlinable
    static func setScalarValue<M: ManagedModel, V: AttributeValue>(_ value: V, _ ordinal: Int, of owner: M) {
        if let object = owner._managedState.object, let binding = owner._managedState.binding,
            case .attribute(let position, .scalar) = binding.slots[ordinal], let stored = value.storedValue
        {
            return TypedObjects.setStored(stored, at: position, of: object, binding, ordinal)
        }
        // A new object keeps the value in its stored form (an optional property set in an
        // initializer comes here: Swift gave it nil first).
        if owner._managedState.object == nil { return owner._managedState.initialize(ordinal, to: value) }
        setAnyValue(value, ordinal, of: owner)
    }

    /// Sets persisted property `ordinal` of `owner`: an unsaved change of its context, or of the
    /// new object itself. A new object linked to an object of a context joins that context
    /// first (as SwiftData inserts it). A change the context refuses (an integer out of the
    /// attribute's range, an object of another context) is thrown by the context's next save.
    public static func setValue<M: ManagedModel, V>(_ value: V, _ ordinal: Int, of owner: M) {
        checkingUse(ordinal, of: owner) { setAnyValue(value, ordinal, of: owner) }
    }

    @usableFromInline
    static func setAnyValue<M: ManagedModel, V>(_ value: V, _ ordinal: Int, of owner: M) {
        if owner._managedState.object == nil {
            let kind = M.managedSchema.properties[ordinal].kind
            guard kind.isRelationship, let context = TypedObjects.context(ofLinked: value) else {
                owner._managedState.initialize(ordinal, to: value)
                return
            }
            context.insert(owner)
        }
        guard let object = owner._managedState.object, let binding = owner._managedState.binding else { return }
        TypedObjects.set(value, of: object, binding, ordinal)
    }

    // MARK: Nothing to read

    /// What a property reads as when the object no longer exists in its context.
    private static func gone<M: ManagedModel, V>(_ ordinal: Int, of owner: M, _ object: ManagedObject) -> V {
        let reason =
            object.context == nil
            ? "its context is gone (an object lives as long as its context: pass its persistentModelID to another context)"
            : "\(object.entity.name) \(object.objectID) was deleted or does not exist in context \(object.context?.name ?? "")"
        return placeholder(ordinal, of: owner, because: reason)
    }

    private static func placeholder<M: ManagedModel, V>(_ ordinal: Int, of owner: M, because reason: String) -> V {
        let property = M.managedSchema.properties[ordinal]
        let message = "\(M.self).\(property.name) cannot be read: \(reason)"
        ManagedModelProblems.report(message)
        if let value = ValueCodec.placeholder(V.self) as? V { return value }
        // (Not reached: a class with a non-optional property of a type without a placeholder is
        // refused when it is bound to an entity, and a new object's initializer sets every
        // non-optional property.)
        fatalError("CairnModels: \(message); \(V.self) has no empty value to read instead (declare the property optional)")
    }
}

/// The values a new object keeps until it is inserted, by ordinal (inline in the object's
/// state: no allocation until the first value, one buffer then).
@usableFromInline
struct PendingValues {
    /// One property's value.
    @usableFromInline
    enum Entry {
        case none
        /// A value of a type the store holds as it is, in its stored form.
        case stored(Value)
        /// Any other value (an enum, a Codable value, objects), as it was set (boxed: an entry
        /// stays the size of a stored value).
        case swift(Boxed)
    }

    /// A value of any type, in a box.
    @usableFromInline
    final class Boxed {
        @usableFromInline let value: Any
        @usableFromInline init(_ value: Any) { self.value = value }
    }

    /// The entries, once a value was set. (A class of its own, not a `ContiguousArray<Entry>`:
    /// making an array of a generic element type looks its storage's metadata up at each
    /// allocation, a large part of making a new object.)
    @usableFromInline var storage: PendingStorage?
    /// How many entries to make room for at the first value (the class's persisted properties).
    @usableFromInline var initialCount: Int32 = 16

    @usableFromInline
    init() {}

    init(count: Int) {
        initialCount = Int32(clamping: Swift.max(count, 1))
    }

    /// Whether no value was set.
    @usableFromInline var isEmpty: Bool { storage == nil }

    @usableFromInline
    mutating func set(_ entry: Entry, at ordinal: Int) {
        guard ordinal >= 0 else { return }
        let capacity = storage?.entryCount ?? 0
        if ordinal >= capacity {
            storage = PendingStorage.make(capacity: Swift.max(ordinal + 1, capacity * 2, Int(initialCount)), copying: storage)
        } else if !isKnownUniquelyReferenced(&storage) {
            // (A copy of the state shares the buffer: it keeps what it saw.)
            storage = PendingStorage.make(capacity: capacity, copying: storage)
        }
        storage?.set(entry, at: ordinal)
    }

    @usableFromInline
    func entry(at ordinal: Int) -> Entry { storage?.entry(at: ordinal) ?? .none }

    /// Calls `body` with each value set, by ordinal.
    func forEach(_ body: (Int, Entry) throws -> Void) rethrows {
        guard let storage else { return }
        for ordinal in 0..<storage.entryCount {
            let entry = storage.entry(at: ordinal)
            if case .none = entry { continue }
            try body(ordinal, entry)
        }
    }
}

/// The entries of ``PendingValues``: `capacity` of them, each `.none` until set.
@usableFromInline
final class PendingStorage: ManagedBuffer<Int, PendingValues.Entry> {
    /// A buffer of `capacity` entries holding `old`'s entries (if any) and `.none` after them.
    @usableFromInline
    static func make(capacity: Int, copying old: PendingStorage?) -> PendingStorage {
        let made = unsafeDowncast(create(minimumCapacity: capacity) { _ in capacity }, to: PendingStorage.self)
        made.withUnsafeMutablePointerToElements { entries in
            let kept = Swift.min(old?.entryCount ?? 0, capacity)
            if let old, kept > 0 {
                old.withUnsafeMutablePointerToElements { entries.initialize(from: $0, count: kept) }
            }
            (entries + kept).initialize(repeating: .none, count: capacity - kept)
        }
        return made
    }

    /// How many entries it holds.
    @usableFromInline var entryCount: Int { header }

    @usableFromInline
    func set(_ entry: PendingValues.Entry, at ordinal: Int) {
        guard ordinal >= 0, ordinal < header else { return }
        withUnsafeMutablePointerToElements { $0[ordinal] = entry }
    }

    @usableFromInline
    func entry(at ordinal: Int) -> PendingValues.Entry {
        guard ordinal >= 0, ordinal < header else { return .none }
        return withUnsafeMutablePointerToElements { $0[ordinal] }
    }

    deinit {
        _ = withUnsafeMutablePointers { count, entries in entries.deinitialize(count: count.pointee) }
    }
}

/// Where reads that cannot be made are reported: reading a property of an object that was
/// deleted, or whose context is gone, gives nil, zero, empty or false and reports it here.
public enum ManagedModelProblems {
    private static let handler = Protected<(@Sendable (String) -> Void)?>(nil)

    /// Replaces what is done with each report (default: a line on standard error); nil restores it.
    public static func setHandler(_ newHandler: (@Sendable (String) -> Void)?) {
        handler.withLock { $0 = newHandler }
    }

    static func report(_ message: String) {
        if let handler = handler.withLock({ $0 }) { return handler(message) }
        FileHandle.standardError.write(Data("CairnModels: \(message)\n".utf8))
    }
}
