import CairnModels
import CairnSupport
import CairnTestSupport
import Foundation
import Synchronization
import Testing

@Managed final class Stray {
    var label: String = ""
    init() {}
}

/// What a typed class cannot do, each refused with a message that says what to do instead.
@Suite(.serialized) struct ManagedMisuseTests {
    @Test func anObjectOfAnotherContextIsRefusedAtSave() async throws {
        let store = try Store(inMemoryFor: [Author.self, Book.self])
        let first = store.newBackgroundContext(name: "first")
        let second = store.newBackgroundContext(name: "second")
        let author = Author(name: "A")
        first.insert(author)
        let book = Book(title: "B")
        second.insert(book)
        book.author = author
        let error = await #expect(throws: StoreError.self) { try await second.save() }
        #expect(error?.message.contains("belongs to context first, not second") == true)
        second.insert(author)
        second.rollback()
        #expect(!second.hasChanges)
    }

    @Test func aClassTheModelLacksIsRefused() async throws {
        let store = try Store(inMemoryFor: [Author.self, Book.self])
        let context = store.newBackgroundContext()
        context.insert(Stray())
        let error = await #expect(throws: StoreError.self) { try await context.save() }
        #expect(error?.message.contains("Stray is not bound to an entity of the store's model") == true)
        #expect(throws: StoreError.self) { try context.fetch(FetchDescriptor<Stray>()) }
    }

    @Test func aClassThatDoesNotMatchItsEntityIsRefusedBeforeTheStoreOpens() throws {
        let folder = TemporaryDirectory()
        let model = try Model {
            Entity("Author") {
                Attribute("name", .string, optional: false)
                Attribute("born", .string)
                Relationship("books", to: "Book", inverse: "author", .toMany(ordered: false))
            }
            Entity("Book") {
                Attribute("title", .string, optional: false)
                Attribute("year", .integer64)
                Attribute("tags", .string)
                Relationship("author", to: "Author", inverse: "books")
            }
        }
        let error = #expect(throws: StoreError.self) { try Store(at: folder.path + "/s", model: model, for: [Author.self, Book.self]) }
        #expect(error?.code == .modelMismatch)
        #expect(error?.message.contains("Author.born (Optional<Int>) does not match entity Author") == true)
        #expect(error?.message.contains("the property is stored as integer64, the attribute is string") == true)
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/s"))

        let missing = try Model {
            Entity("Stray") { Attribute("name", .string) }
        }
        let absent = #expect(throws: StoreError.self) { try Store(at: folder.path + "/t", model: missing, for: [Stray.self]) }
        #expect(absent?.message.contains("the entity has no attribute label") == true)
    }

    @Test func readingAnObjectThatIsGoneGivesAnEmptyValueAndSaysWhy() async throws {
        let reports = Mutex<[String]>([])
        ManagedModelProblems.setHandler { message in reports.withLock { $0.append(message) } }
        defer { ManagedModelProblems.setHandler(nil) }
        let store = try Store(inMemoryFor: [Author.self, Book.self])
        let context = store.newBackgroundContext()
        let author = Author(name: "Gone", born: 1900)
        context.insert(author)
        try await context.save()
        #expect(author.name == "Gone")  // read before: the next read must see the delete
        context.delete(author)
        #expect(author.name == "")
        #expect(author.born == nil)
        #expect(author.books.isEmpty)
        let messages = reports.withLock { $0 }
        #expect(messages.contains { $0.contains("Author.name cannot be read") && $0.contains("was deleted") })
        context.rollback()
        #expect(author.name == "Gone")

        var scratch: ObjectContext? = store.newBackgroundContext()
        let orphan = Book(title: "Orphan")
        scratch?.insert(orphan)
        #expect(orphan.title == "Orphan")
        scratch = nil
        #expect(orphan.title == "")
        #expect(reports.withLock { $0 }.contains { $0.contains("Book.title cannot be read: its context is gone") })
    }

    /// An element of a composite whose stored value does not read as its type.
    @Test func anElementThatDoesNotReadIsReportedAndReadsAsAPlaceholder() async throws {
        let store = try Store(inMemoryFor: [Trail.self])
        let context = store.newBackgroundContext()
        let trail = Trail(name: "x", route: ManagedCompositeTests.stretch(1, 2, .paved))
        context.insert(trail)
        try await context.save()
        let reports = Mutex<[String]>([])
        ManagedModelProblems.setHandler { message in reports.withLock { $0.append(message) } }
        defer { ManagedModelProblems.setHandler(nil) }
        try trail.managedObject?.setValue(Value.string("lava"), forKey: "route.surface")
        // The elements that read keep their values; the one that does not reads as its first case.
        #expect(trail.route == ManagedCompositeTests.stretch(1, 2, .paved))
        #expect(reports.withLock { $0 }.contains { $0.contains("Trail.route cannot be read whole: element surface: its stored value") })
    }

    /// A stored value another program wrote that does not decode, and a required to-one that
    /// points to nothing, read as empty values and are reported: nothing traps.
    @Test func whatDoesNotReadGivesAnEmptyValueNotATrap() async throws {
        let store = try Store(inMemoryFor: [Crate.self, Owner.self, Owned.self])
        let context = store.newBackgroundContext()
        let crate = Crate(size: Dimensions(width: 2, height: 3))
        context.insert(crate)
        let owned = Owned(owner: Owner())
        context.insert(owned)
        try await context.save()
        let reports = Mutex<[String]>([])
        ManagedModelProblems.setHandler { message in reports.withLock { $0.append(message) } }
        defer { ManagedModelProblems.setHandler(nil) }
        try crate.managedObject?.setValue(Value.string("{\"width\": \"wide\"}"), forKey: "size")
        #expect(crate.size == Dimensions(width: 0, height: 0))
        try owned.managedObject?.setObject(nil, forKey: "owner")
        #expect(owned.owner.items.isEmpty)
        #expect(owned.owner.persistentModelID == nil)
        // The stand-in is no object of any context: linking it is refused at the save.
        let other = Owned(owner: Owner())
        context.insert(other)
        other.owner = owned.owner
        let error = await #expect(throws: StoreError.self) { try await context.save() }
        #expect(error?.message.contains("Owner is a stand-in for a missing object") == true)
        context.rollback()
        let messages = reports.withLock { $0 }
        #expect(messages.contains { $0.contains("Crate.size cannot be read: its stored value") })
        #expect(messages.contains { $0.contains("Owned.owner cannot be read: it points to no object") })
    }

    @Test func aNonOptionalPropertyWithNoEmptyValueIsRefusedWhenBound() throws {
        let error = #expect(throws: StoreError.self) { try Store(inMemoryFor: [Diary.self]) }
        #expect(error?.message.contains("Diary.mood (Mood) has no value to read when its stored value cannot be") == true)
        #expect(error?.message.contains("declare it optional, or make the enum CaseIterable") == true)
    }

    /// What the compiler cannot stop (an object smuggled to another thread past `Sendable`
    /// checking) is reported by the internal checks when two threads use the object at once.
    @Test(.enabled(if: internalChecksEnabled, "the check is compiled in with CAIRN_INTERNAL_CHECKS=1 (the test command sets it)"))
    func anObjectUsedByTwoThreadsAtOnceIsReported() async throws {
        let store = try Store(inMemoryFor: [Author.self, Book.self])
        let context = store.newBackgroundContext()
        let author = Author(name: "Shared")
        context.insert(author)
        for index in 0..<200 { Book(title: "\(index)").author = author }
        try await context.save()
        let reports = Mutex<[String]>([])
        ManagedModelProblems.setHandler { message in reports.withLock { $0.append(message) } }
        defer { ManagedModelProblems.setHandler(nil) }
        nonisolated(unsafe) let shared = author
        // One thread after the other: no report.
        DispatchQueue.global().sync { _ = shared.books.count }
        #expect(shared.books.count == 200)
        #expect(reports.withLock { $0 }.isEmpty)
        // At once: reported, and the second waits for the first.
        let deadline = ContinuousClock.now + .seconds(20)
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            while reports.withLock({ $0.isEmpty }) && ContinuousClock.now < deadline { #expect(shared.books.count == 200) }
        }
        #expect(reports.withLock { $0 }.contains { $0.contains("misuse: Author.books was used by two threads at once") })

        // Objects never read, read first by two threads at once: one registrar each, whichever
        // thread makes it first (a compare-and-swap), and every read right.
        let fresh = store.newBackgroundContext()
        nonisolated(unsafe) let books = try fresh.fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]))
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            for book in books { #expect(!book.title.isEmpty) }
        }
        #expect(books.count == 200)
    }

    @Test func aNilToOneReadsNilWithoutAReport() async throws {
        let reports = Mutex<[String]>([])
        ManagedModelProblems.setHandler { message in reports.withLock { $0.append(message) } }
        defer { ManagedModelProblems.setHandler(nil) }
        let store = try Store(inMemoryFor: [Author.self, Book.self])
        let context = store.newBackgroundContext()
        let book = Book(title: "Alone")
        context.insert(book)
        #expect(book.author == nil)
        #expect(reports.withLock { $0 }.filter { $0.contains("Book.author") }.isEmpty)
    }

    @Test func aNarrowerIntegerOrARequiredToOneOnAnOptionalOneIsRefused() throws {
        let folder = TemporaryDirectory()
        let wide = try Model {
            Entity("Tally") { Attribute("count", .integer64, optional: false) }
        }
        let narrow = #expect(throws: StoreError.self) { try Store(at: folder.path + "/n", model: wide, for: [Tally.self]) }
        #expect(narrow?.message.contains("which holds integers the property (integer16) cannot") == true)
        let optionalOwner = try Model {
            Entity("Owned") { Relationship("owner", to: "Owner", inverse: "items") }
            Entity("Owner") { Relationship("items", to: "Owned", inverse: "owner", .toMany(ordered: false)) }
        }
        let required = #expect(throws: StoreError.self) { try Store(at: folder.path + "/o", model: optionalOwner, for: [Owned.self]) }
        #expect(required?.message.contains("the relationship is optional: declare the property Owner? to read its nil") == true)
    }

    @Test func anUnsupportedPropertyTypeIsNamedWhenTheModelIsDerived() throws {
        let error = #expect(throws: StoreError.self) { try Model(for: [Unstorable.self]) }
        #expect(error?.message.contains("Unstorable.handle is NSObject") == true)
    }
}

@Managed final class Unstorable {
    var handle: NSObject = NSObject()
    init() {}
}

@Managed final class Tally {
    var count: Int16 = 0
    init() {}
}

@Managed final class Owner {
    var items: [Owned] = []
    init() {}
}

@Managed final class Owned {
    var owner: Owner
    init(owner: Owner) { self.owner = owner }
}

@Managed final class Crate {
    var size: Dimensions
    init(size: Dimensions) { self.size = size }
}

/// Not `CaseIterable`, and no case's raw value is empty.
enum Mood: String, Codable {
    case calm, stormy
}

@Managed final class Diary {
    var mood: Mood
    init(mood: Mood) { self.mood = mood }
}
