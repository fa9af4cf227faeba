import CairnModels

// The store's directory: the argument, else a new temporary directory, removed at the end. The
// program inserts the same author each time and `Author.name` is unique, so a second run into
// one store fails with a uniqueness violation, as the README's program would.
let temporary = CommandLine.arguments.count < 2
let path = temporary ? FileManager.default.temporaryDirectory.appending(path: "readme-example-\(UUID())").path : CommandLine.arguments[1]

// README.md's program, as it is written there.
let store = try Store(at: path, for: [Author.self, Book.self])  // the model is derived from the classes
try await store.performBackgroundTask { context in
    let author = Author(name: "Ursula K. Le Guin")
    context.insert(author)
    let book = Book(title: "The Dispossessed", year: 1974)
    book.author = author  // the book joins the context; author.books follows
    try await context.save()
}
let books = try store.viewContext.fetch(
    FetchDescriptor<Book>(
        predicate: #Predicate { $0.year ?? 0 > 1970 && $0.author?.name == "Ursula K. Le Guin" },
        sortBy: [SortDescriptor(\.year, order: .reverse), SortDescriptor(\.title)]))
print(books.first?.author?.name ?? "")
try await store.close()
// (End of the README's program.)

if temporary { try FileManager.default.removeItem(atPath: path) }
