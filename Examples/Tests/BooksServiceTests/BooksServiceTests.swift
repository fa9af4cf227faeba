import BooksService
import Foundation
import Testing

/// The books service over HTTP on loopback: import, queries, and live results pushed as a
/// background save changes them.
@Suite(.timeLimit(.minutes(2))) struct BooksServiceTests {
    static let leGuin = "Ursula K. Le Guin"
    static let books = """
        [{"isbn": "978-0-06-051275-4", "title": "The Dispossessed", "year": 1974, "author": "Ursula K. Le Guin"},
         {"isbn": "978-0-547-77374-3", "title": "A Wizard of Earthsea", "year": 1968, "author": "Ursula K. Le Guin"},
         {"isbn": "978-0-8070-8305-7", "title": "Kindred", "published": 1979, "author": "Octavia E. Butler"}]
        """

    @Test func importsUpsertsByISBN() async throws {
        try await withRunningService { client in
            let first = try await client.post("/books/import", json: Self.books)
            #expect(first.status == 200)
            // Three books and two authors, made by the books' references.
            #expect(try decode(ImportCounts.self, first.body) == counts(records: 3, inserted: 5))

            let again = try await client.post(
                "/books/import", json: #"[{"isbn": "978-0-8070-8305-7", "title": "Kindred", "year": 1979, "author": "Octavia E. Butler"}]"#)
            #expect(try decode(ImportCounts.self, again.body) == counts(records: 1, unchanged: 1))

            let renamed = try await client.post("/books/import", json: #"[{"isbn": "978-0-8070-8305-7", "title": "Kindred (25th anniversary)"}]"#)
            #expect(try decode(ImportCounts.self, renamed.body) == counts(records: 1, updated: 1))

            let broken = try await client.post("/books/import", json: #"[{"isbn": "1", "title": }]"#)
            #expect(broken.status == 400)
            // What the mapping refuses is a bad request, named by its JSON path; nothing is saved.
            let keyless = try await client.post("/books/import", json: #"[{"title": "No ISBN"}]"#)
            #expect(keyless.status == 400)
            #expect(String(decoding: keyless.body, as: UTF8.self).contains("$[0]"))
            let untitled = try await client.post("/books/import", json: #"[{"isbn": "0-00-000000-0"}]"#)
            #expect(untitled.status == 400)
            #expect(try decode([BookRecord].self, try await client.get("/books").body).count == 3)
        }
    }

    @Test func queriesByAuthorYearAndLimit() async throws {
        try await withRunningService { client in
            _ = try await client.post("/books/import", json: Self.books)

            let all = try decode([BookRecord].self, try await client.get("/books").body)
            #expect(all.map(\.title) == ["Kindred", "The Dispossessed", "A Wizard of Earthsea"])

            let author = try #require(Self.leGuin.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let hers = try decode([BookRecord].self, try await client.get("/books?author=\(author)").body)
            #expect(hers.map(\.title) == ["The Dispossessed", "A Wizard of Earthsea"])
            #expect(hers.allSatisfy { $0.author == Self.leGuin })

            let recent = try decode([BookRecord].self, try await client.get("/books?after=1970&limit=1").body)
            #expect(recent == [BookRecord(isbn: "978-0-8070-8305-7", title: "Kindred", year: 1979, author: "Octavia E. Butler")])

            #expect(try await client.get("/books?after=nineteen").status == 400)
        }
    }

    @Test func liveResultsFollowImports() async throws {
        try await withRunningService { client in
            _ = try await client.post("/books/import", json: Self.books)
            let author = try #require(Self.leGuin.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let stream = EventStream(client.url("/books/live?author=\(author)&after=1960"))
            defer { stream.close() }

            let initial = try await nextEvent(of: stream)
            #expect(initial.initial)
            #expect(initial.books.map(\.title) == ["The Dispossessed", "A Wizard of Earthsea"])

            // A book of another author changes nothing the stream shows; hers does.
            _ = try await client.post(
                "/books/import", json: #"[{"isbn": "978-0-44-657006-1", "title": "Parable of the Sower", "year": 1993, "author": "Octavia E. Butler"}]"#)
            _ = try await client.post(
                "/books/import", json: #"[{"isbn": "978-0-441-47812-5", "title": "The Left Hand of Darkness", "year": 1969, "author": "Ursula K. Le Guin"}]"#)
            let update = try await nextEvent(of: stream)
            #expect(!update.initial)
            #expect(update.inserted == ["978-0-441-47812-5"])
            #expect(update.removed == 0)
            #expect(update.books.map(\.title) == ["The Dispossessed", "The Left Hand of Darkness", "A Wizard of Earthsea"])
            #expect(update.lsn > initial.lsn)

            // A change of year that takes a book out of the query is a removal.
            _ = try await client.post("/books/import", json: #"[{"isbn": "978-0-547-77374-3", "year": 1950}]"#)
            let removal = try await nextEvent(of: stream)
            #expect(removal.inserted.isEmpty)
            #expect(removal.removed == 1)
            #expect(removal.books.map(\.title) == ["The Dispossessed", "The Left Hand of Darkness"])

            // A change of year that keeps a book in the results but moves it is neither.
            _ = try await client.post("/books/import", json: #"[{"isbn": "978-0-06-051275-4", "year": 1965}]"#)
            let move = try await nextEvent(of: stream)
            #expect(move.inserted.isEmpty)
            #expect(move.removed == 0)
            #expect(move.books.map(\.title) == ["The Left Hand of Darkness", "The Dispossessed"])
        }
    }
    @Test func shutdownEndsLiveStreams() async throws {
        // The service shuts down gracefully with the stream still open: the stream must end for
        // the shutdown to finish (else the time limit fails the test).
        let stream = try await withRunningService { client in
            let stream = EventStream(client.url("/books/live"))
            let initial = try await nextEvent(of: stream)
            #expect(initial.books.isEmpty)
            return stream
        }
        defer { stream.close() }
        let end = try await within(10, "the end of /books/live") {
            var events = stream.events.makeAsyncIterator()
            return await events.next()
        }
        #expect(end == nil)
    }
}

/// The next event of a live stream, within 10 seconds.
private func nextEvent(of stream: EventStream) async throws -> LiveBooksEvent {
    let data = try await within(10, "an event of /books/live") {
        var events = stream.events.makeAsyncIterator()
        return await events.next()
    }
    return try decode(LiveBooksEvent.self, Data(try #require(data, "the stream ended").utf8))
}

private func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
    try JSONDecoder().decode(type, from: data)
}

private func counts(records: Int, inserted: Int = 0, updated: Int = 0, unchanged: Int = 0) throws -> ImportCounts {
    try decode(ImportCounts.self, Data(#"{"records": \#(records), "inserted": \#(inserted), "updated": \#(updated), "unchanged": \#(unchanged)}"#.utf8))
}
