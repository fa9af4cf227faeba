import CairnModels

/// A writer; its name is the key that imported books name it by.
@Managed final class Author {
    @Attribute(.unique) var name: String
    @Relationship(inverse: \Book.author) var books: [Book] = []
    init(name: String) {
        self.name = name
    }
}

/// A book, found again by its ISBN when a later import names it.
@Managed final class Book {
    @Attribute(.unique) var isbn: String
    var title: String
    @Attribute(.indexed) var year: Int?
    var author: Author?
    init(isbn: String, title: String, year: Int? = nil) {
        self.isbn = isbn
        self.title = title
        self.year = year
    }
}

/// A book as JSON: what `GET /books/live` sends (`GET /books` writes the same keys through the
/// mapping's export).
public struct BookRecord: Codable, Sendable, Hashable {
    /// The book's unique key.
    public var isbn: String
    /// The title.
    public var title: String
    /// The year of publication, if known.
    public var year: Int?
    /// The author's name, if the book has one.
    public var author: String?

    /// A record with these values.
    public init(isbn: String, title: String, year: Int? = nil, author: String? = nil) {
        self.isbn = isbn
        self.title = title
        self.year = year
        self.author = author
    }

    init(_ book: Book) {
        self.init(isbn: book.isbn, title: book.title, year: book.year, author: book.author?.name)
    }
}
