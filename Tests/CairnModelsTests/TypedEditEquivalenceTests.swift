import CairnModels
import CairnTestSupport
import Foundation
import Testing

/// A random sequence of typed edits (set, clear, link, unlink, delete) from several contexts,
/// saved and merged, makes the same store as the same edits made by name through `setValue`;
/// reopened, the two are the same again.
@Suite struct TypedEditEquivalenceTests {
    /// One store edited through the classes, one through `ManagedObject`'s by-name API, each with
    /// three background contexts; objects are known by labels.
    final class Pair {
        let typed: Store
        let named: Store
        var typedContexts: [ObjectContext]
        var namedContexts: [ObjectContext]
        var typedIDs: [String: ObjectID] = [:]
        var namedIDs: [String: ObjectID] = [:]

        init(_ folder: TemporaryDirectory) throws {
            let typed = try Store(at: folder.path + "/typed", for: [Author.self, Book.self])
            let named = try Store(at: folder.path + "/named", model: try Model(for: [Author.self, Book.self]))
            self.typed = typed
            self.named = named
            typedContexts = (0..<3).map { typed.newBackgroundContext(name: "c\($0)") }
            namedContexts = (0..<3).map { named.newBackgroundContext(name: "c\($0)") }
        }
    }

    static func tagsJSON(_ tags: [String]) -> String { "[" + tags.map { "\"\($0)\"" }.joined(separator: ",") + "]" }

    @Test func typedEditsEqualByNameEdits() async throws {
        var random = TestSeed.generator()
        let folder = TemporaryDirectory()
        let pair = try Pair(folder)
        var labels: [String] = []
        var counter = 0
        // A link the context refuses (to an object another context deleted and saved) is thrown
        // by the typed context's next save, and by the by-name call at once: the by-name side
        // notes it, and fails its next save the same way.
        var namedRefused = [false, false, false]
        func byName(_ c: Int, _ edit: () throws -> Void) throws {
            do {
                try edit()
            } catch let error as StoreError where error.code == .invalidObject {
                namedRefused[c] = true
            }
        }
        for _ in 0..<400 {
            let c = Int.random(in: 0..<3, using: &random)
            let tc = pair.typedContexts[c], nc = pair.namedContexts[c]
            func typedAuthor(_ label: String) -> Author? { pair.typedIDs[label].flatMap { tc.model(for: $0, as: Author.self) } }
            func typedBook(_ label: String) -> Book? { pair.typedIDs[label].flatMap { tc.model(for: $0, as: Book.self) } }
            func namedObject(_ label: String) -> ManagedObject? { pair.namedIDs[label].flatMap { nc.object(with: $0) } }
            let pick = labels.randomElement(using: &random)
            switch Int.random(in: 0..<10, using: &random) {
            case 0:
                counter += 1
                let label = "a\(counter)"
                let author = Author(name: label, born: Int.random(in: 1900...2000, using: &random))
                tc.insert(author)
                pair.typedIDs[label] = author.persistentModelID
                let object = try nc.insert("Author")
                try object.setValue(label, forKey: "name")
                try object.setValue(author.born, forKey: "born")
                pair.namedIDs[label] = object.objectID
                labels.append(label)
            case 1:
                counter += 1
                let label = "b\(counter)"
                let book = Book(title: label)
                tc.insert(book)
                pair.typedIDs[label] = book.persistentModelID
                let object = try nc.insert("Book")
                try object.setValue(label, forKey: "title")
                try object.setValue(Self.tagsJSON([]), forKey: "tags")
                pair.namedIDs[label] = object.objectID
                labels.append(label)
            case 2:
                guard let pick, let book = typedBook(pick), let object = namedObject(pick) else { continue }
                let year: Int? = Bool.random(using: &random) ? Int.random(in: 1950...2020, using: &random) : nil
                let tags = (0..<Int.random(in: 0...2, using: &random)).map { "t\($0)" }
                book.year = year
                book.tags = tags
                try object.setValue(year, forKey: "year")
                try object.setValue(Self.tagsJSON(tags), forKey: "tags")
            case 3:
                guard let pick, let author = typedAuthor(pick), let object = namedObject(pick) else { continue }
                let born: Int? = Bool.random(using: &random) ? nil : Int.random(in: 1900...2000, using: &random)
                author.born = born
                try object.setValue(born, forKey: "born")
            case 4, 5:
                // Link a book to an author (or unlink it), from either end.
                guard let bookLabel = labels.filter({ $0.hasPrefix("b") }).randomElement(using: &random),
                    let book = typedBook(bookLabel), let bookObject = namedObject(bookLabel)
                else { continue }
                let authorLabel = labels.filter { $0.hasPrefix("a") }.randomElement(using: &random)
                let author = authorLabel.flatMap(typedAuthor), authorObject = authorLabel.flatMap(namedObject)
                if Bool.random(using: &random) || author == nil {
                    book.author = author
                    try byName(c) { try bookObject.setObject(authorObject, forKey: "author") }
                } else if let author, let authorObject {
                    author.books = author.books + [book]
                    try byName(c) { try authorObject.addObject(bookObject, forKey: "books") }
                }
            case 6:
                guard let pick, pick.hasPrefix("a"), let author = typedAuthor(pick), let object = namedObject(pick),
                    let first = author.books.first
                else { continue }
                author.books = author.books.filter { $0 !== first }
                try byName(c) {
                    try object.setObjects(try object.objects(forKey: "books").filter { $0.objectID != first.persistentModelID }, forKey: "books")
                }
            case 7:
                guard let pick, let object = namedObject(pick) else { continue }
                if pick.hasPrefix("a"), let author = typedAuthor(pick) { tc.delete(author) } else if let book = typedBook(pick) { tc.delete(book) }
                try object.delete()
            case 8:
                let typedOutcome: Bool
                do {
                    try await tc.save()
                    typedOutcome = true
                } catch {
                    tc.rollback()
                    typedOutcome = false
                }
                let namedOutcome: Bool
                if namedRefused[c] {
                    nc.rollback()
                    namedRefused[c] = false
                    namedOutcome = false
                } else {
                    do {
                        try await nc.save()
                        namedOutcome = true
                    } catch {
                        nc.rollback()
                        namedOutcome = false
                    }
                }
                #expect(typedOutcome == namedOutcome, "save of context \(c)")
            default:
                tc.refresh()
                nc.refresh()
            }
            #expect(tc.hasChanges == nc.hasChanges)
        }
        for c in 0..<3 {
            do { try await pair.typedContexts[c].save() } catch { pair.typedContexts[c].rollback() }
            if namedRefused[c] {
                pair.namedContexts[c].rollback()
            } else {
                do { try await pair.namedContexts[c].save() } catch { pair.namedContexts[c].rollback() }
            }
        }
        let typedDump = try Self.dump(pair.typed), namedDump = try Self.dump(pair.named)
        #expect(typedDump == namedDump)
        #expect(!typedDump.isEmpty)
        try await pair.typed.close()
        try await pair.named.close()
        let typed = try Store(at: folder.path + "/typed", for: [Author.self, Book.self])
        let named = try Store(at: folder.path + "/named", model: try Model(for: [Author.self, Book.self]))
        #expect(try Self.dump(typed) == typedDump)
        #expect(try Self.dump(named) == typedDump)
        try await typed.close()
        try await named.close()
    }

    /// Every object by label, through the typed classes, with its values and links.
    static func dump(_ store: Store) throws -> [String] {
        let view = store.viewContext
        let authors = try view.fetch(FetchDescriptor<Author>()).map { author in
            "\(author.name) born=\(author.born.map(String.init) ?? "nil") books=\(author.books.map(\.title).sorted())"
        }
        let books = try view.fetch(FetchDescriptor<Book>()).map { book in
            "\(book.title) year=\(book.year.map(String.init) ?? "nil") tags=\(book.tags) author=\(book.author?.name ?? "nil")"
        }
        return (authors + books).sorted()
    }
}
