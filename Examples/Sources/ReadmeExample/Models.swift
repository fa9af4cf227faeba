import CairnModels

@Managed final class Author {
    @Attribute(.unique) var name: String
    var born: Int?
    @Relationship(deleteRule: .cascade, inverse: \Book.author) var books: [Book] = []
    init(name: String, born: Int? = nil) {
        self.name = name
        self.born = born
    }
}

@Managed final class Book {
    var title: String
    var year: Int?
    var tags: [String] = []  // a Codable value stored as one attribute
    var author: Author?
    init(title: String, year: Int? = nil) {
        self.title = title
        self.year = year
    }
}
