import Observation
import Synchronization

/// A typed object's observation registrar, made by the first getter that runs.
///
/// Observation learns what to observe from the getters it sees run, so until one has run nobody
/// can be observing the object: an object never read (a new object inserted, an object updated
/// by key) makes no registrar, and `@Managed`'s setters skip it. The registrar is published with
/// a compare-and-swap: a save on another thread that tells the view context's objects about a
/// merge (`ManagedModel._managedPropertiesChanged()`) reads it while a getter may be making it.
/// `@Managed` stores one in each object (`_$observation`).
public struct ObservationSlot: ~Copyable, Sendable {
    /// The box's address, retained (0: none yet).
    @usableFromInline let address = Atomic<UInt>(0)

    /// An empty slot.
    public init() {}

    deinit {
        if let raw = UnsafeRawPointer(bitPattern: address.load(ordering: .acquiring)) {
            Unmanaged<ObservationBox>.fromOpaque(raw).release()
        }
    }

    /// The registrar's box, if a getter has made it.
    @inlinable
    public var existing: ObservationBox? {
        guard let raw = UnsafeRawPointer(bitPattern: address.load(ordering: .acquiring)) else { return nil }
        return Unmanaged<ObservationBox>.fromOpaque(raw).takeUnretainedValue()
    }

    /// Tells the registrar (made now if there is none) that `owner`'s property at `keyPath` is
    /// being read: a getter's call.
    @inlinable
    public func access<M: Observable, V>(_ owner: M, keyPath: KeyPath<M, V>) {
        (existing ?? made()).registrar.access(owner, keyPath: keyPath)
    }

    /// Makes the box, or, when another thread made one first, gives that one.
    @usableFromInline
    func made() -> ObservationBox {
        let box = ObservationBox()
        let bits = UInt(bitPattern: Unmanaged.passRetained(box).toOpaque())
        while true {
            let (exchanged, original) = address.compareExchange(expected: 0, desired: bits, ordering: .acquiringAndReleasing)
            if exchanged { return box }
            if let raw = UnsafeRawPointer(bitPattern: original) {
                Unmanaged<ObservationBox>.passUnretained(box).release()
                return Unmanaged<ObservationBox>.fromOpaque(raw).takeUnretainedValue()
            }
            // (A strong compare-exchange fails only when the slot holds a box: not reached.)
        }
    }
}

/// An object's observation registrar, in a box of its own: `ObservationRegistrar` is a resilient
/// type, which an object would copy through its value witnesses at every read; a reference to a
/// box it does not.
public final class ObservationBox: Sendable {
    /// The registrar.
    public let registrar = ObservationRegistrar()

    @usableFromInline
    init() {}
}
