/// An existing object's unsaved changes: new values by property position.
///
/// A dictionary that keeps a single change inline. Most updates change one property (an import
/// setting a counter, a status), and a context holding a hundred thousand of them would
/// otherwise allocate, hash and free a dictionary for each, and a save would touch each one's
/// storage (a cache miss per object) to read it.
struct PropertyChanges: Sendable, Sequence {
    private enum Storage: Sendable {
        case none
        case one(position: Int, value: PropertyValue)
        case many([Int: PropertyValue])
    }

    private var storage: Storage = .none

    /// No changes.
    init() {}

    /// The changes of a dictionary.
    init(_ dictionary: [Int: PropertyValue]) {
        switch dictionary.count {
        case 0: storage = .none
        case 1: storage = dictionary.first.map { .one(position: $0.key, value: $0.value) } ?? .none
        default: storage = .many(dictionary)
        }
    }

    var isEmpty: Bool {
        switch storage {
        case .none: true
        case .one: false
        case .many(let dictionary): dictionary.isEmpty
        }
    }

    var count: Int {
        switch storage {
        case .none: 0
        case .one: 1
        case .many(let dictionary): dictionary.count
        }
    }

    /// The new value at `position` (nil: unchanged); setting nil drops the change.
    subscript(position: Int) -> PropertyValue? {
        get {
            switch storage {
            case .none: return nil
            case .one(let at, let value): return at == position ? value : nil
            case .many(let dictionary): return dictionary[position]
            }
        }
        set {
            switch storage {
            case .none:
                if let newValue { storage = .one(position: position, value: newValue) }
            case .one(let at, let value):
                if at == position {
                    storage = newValue.map { .one(position: position, value: $0) } ?? .none
                } else if let newValue {
                    storage = .many([at: value, position: newValue])
                }
            case .many(var dictionary):
                storage = .none  // the dictionary's only reference, changed in place
                dictionary[position] = newValue
                storage = .many(dictionary)
            }
        }
    }

    /// The changed positions.
    var positions: [Int] { map(\.key) }

    /// Whether a changed position satisfies `predicate`.
    func containsPosition(where predicate: (Int) -> Bool) -> Bool {
        contains { predicate($0.key) }
    }

    /// The changes for which `isIncluded` holds.
    func filtered(_ isIncluded: ((key: Int, value: PropertyValue)) -> Bool) -> PropertyChanges {
        switch storage {
        case .none: return self
        case .one(let position, let value): return isIncluded((position, value)) ? self : PropertyChanges()
        case .many(let dictionary): return PropertyChanges(dictionary.filter(isIncluded))
        }
    }

    /// Adds `newer`'s changes, which replace these at the same positions.
    mutating func merge(_ newer: PropertyChanges) {
        for (position, value) in newer { self[position] = value }
    }

    /// The changes as a dictionary.
    var dictionary: [Int: PropertyValue] {
        switch storage {
        case .none: return [:]
        case .one(let position, let value): return [position: value]
        case .many(let dictionary): return dictionary
        }
    }

    func makeIterator() -> Iterator {
        switch storage {
        case .none: Iterator(state: .done)
        case .one(let position, let value): Iterator(state: .one(position, value))
        case .many(let dictionary): Iterator(state: .many(dictionary.makeIterator()))
        }
    }

    /// Each change once, as a dictionary's elements are (in no set order).
    struct Iterator: IteratorProtocol {
        fileprivate enum State {
            case done
            case one(Int, PropertyValue)
            case many(Dictionary<Int, PropertyValue>.Iterator)
        }

        fileprivate var state: State

        mutating func next() -> (key: Int, value: PropertyValue)? {
            switch state {
            case .done:
                return nil
            case .one(let position, let value):
                state = .done
                return (position, value)
            case .many(var iterator):
                let element = iterator.next()
                state = .many(iterator)
                return element
            }
        }
    }
}
