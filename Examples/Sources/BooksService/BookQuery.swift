import CairnModels

/// What `GET /books` and `GET /books/live` ask for: an author, books after a year, at most so
/// many, newest first.
public struct BookQuery: Sendable, Hashable {
    /// Only the books of the author of this name.
    public var author: String?
    /// Only the books published after this year (books without a year are left out).
    public var after: Int?
    /// At most this many books.
    public var limit: Int?

    /// A query; every part is optional.
    public init(author: String? = nil, after: Int? = nil, limit: Int? = nil) {
        self.author = author
        self.after = after
        self.limit = limit
    }

    /// The typed fetch: the conditions given, newest first, then by title.
    var descriptor: FetchDescriptor<Book> {
        var descriptor = FetchDescriptor<Book>(
            predicate: predicate, sortBy: [SortDescriptor(\.year, order: .reverse), SortDescriptor(\.title)])
        descriptor.fetchLimit = limit
        return descriptor
    }

    /// One `#Predicate` per combination of the parts given (a captured optional is no
    /// condition `#Predicate` translates).
    private var predicate: Predicate<Book>? {
        let noYear = Int.min  // a book without a year is after no year
        switch (author, after) {
        case (let author?, let after?):
            return #Predicate { $0.author?.name == author && $0.year ?? noYear > after }
        case (let author?, nil):
            return #Predicate { $0.author?.name == author }
        case (nil, let after?):
            return #Predicate { $0.year ?? noYear > after }
        case (nil, nil):
            return nil
        }
    }
}
