import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// `SUBQUERY` in format strings: the forms read as "some element matches" (and its negation),
/// key paths from the element's variable, round trips of descriptions, errors with their
/// messages and columns, and fetches that need one element to meet every condition.
@Suite struct SubqueryPredicateTests {
    typealias C = PredicateCases

    /// `SUBQUERY(books, $b, condition).@count > 0` as a tree.
    static func some(_ collection: String, _ condition: PredicateSyntax) -> PredicateSyntax {
        .subquery(collection: collection.split(separator: ".").map(String.init), predicate: condition)
    }

    static let recent = C.compare("year", .greater, 2000)
    static let startsWithT = C.compare("title", .beginsWith, "T")
    static let both = some("books", .and([recent, startsWithT]))
    static let bothText = "$b.year > 2000 AND $b.title BEGINSWITH 'T'"

    static let wellFormed: [(format: String, arguments: [any PredicateArgument], expected: PredicateSyntax)] = [
        // The counts that mean "some element matches", and their mirrors
        ("SUBQUERY(books, $b, \(bothText)).@count > 0", [], both),
        ("SUBQUERY(books, $b, \(bothText)).@count != 0", [], both),
        ("SUBQUERY(books, $b, \(bothText)).@count <> 0", [], both),
        ("SUBQUERY(books, $b, \(bothText)).@count >= 1", [], both),
        ("SUBQUERY(books, $b, \(bothText)).@count => 1", [], both),
        ("0 < SUBQUERY(books, $b, \(bothText)).@count", [], both),
        ("0 != SUBQUERY(books, $b, \(bothText)).@count", [], both),
        ("1 <= SUBQUERY(books, $b, \(bothText)).@count", [], both),
        ("SUBQUERY(books, $b, \(bothText)).@count > %d", [0], both),
        // ...and "no element matches"
        ("SUBQUERY(books, $b, \(bothText)).@count == 0", [], .not(both)),
        ("SUBQUERY(books, $b, \(bothText)).@count = 0", [], .not(both)),
        ("0 == SUBQUERY(books, $b, \(bothText)).@count", [], .not(both)),
        ("NOT SUBQUERY(books, $b, \(bothText)).@count > 0", [], .not(both)),
        // The keyword in any case; any variable name; spacing
        ("subquery(books,$b,\(bothText)).@count>0", [], both),
        ("SubQuery(books, $book, $book.year > 2000).@count > 0", [], some("books", recent)),
        ("SUBQUERY ( books , $_ , $_.year > 2000 ) . @count > 0", [], some("books", recent)),
        // The collection: a key path, SELF.…, %K
        ("SUBQUERY(author.books, $b, $b.year > 2000).@count > 0", [], some("author.books", recent)),
        ("SUBQUERY(SELF.books, $b, $b.year > 2000).@count > 0", [], some("books", recent)),
        ("SUBQUERY(%K, $b, $b.year > %d).@count > 0", ["books", 2000], some("books", recent)),
        ("SUBQUERY(#in, $b, $b.year > 2000).@count > 0", [], some("in", recent)),
        // The condition: key paths from the element, the element itself, collection operators
        ("SUBQUERY(books, $b, $b.publisher.name == 'Hetzel').@count > 0", [], some("books", C.compare("publisher.name", .equal, "Hetzel"))),
        ("SUBQUERY(books, $b, $b.like == 1 AND $b.#in == 2).@count > 0", [], some("books", .and([C.compare("like", .equal, 1), C.compare("in", .equal, 2)]))),
        (
            "SUBQUERY(books, $b, $b == %@).@count > 0", [ObjectID(entity: 1, key: 7)],
            some("books", .comparison(.evaluatedObject, .equal, .object(ObjectID(entity: 1, key: 7))))
        ),
        ("SUBQUERY(books, $b, $b.loans.@count > 2).@count > 0", [], some("books", .comparison(C.sum("loans", .count), .greater, .constant(2)))),
        ("SUBQUERY(books, $b, ANY $b.loans.due < 5).@count > 0", [], some("books", C.compare(C.key("loans.due"), .less, .constant(5), [], .any))),
        ("SUBQUERY(books, $b, 'x' IN $b.tags).@count > 0", [], some("books", C.compare(.constant("x"), .in, C.key("tags")))),
        (
            "SUBQUERY(books, $b, $b.title ==[cd] 'é' OR NOT ($b.year < 3)).@count > 0", [],
            some("books", .or([C.compare("title", .equal, "é", [.caseInsensitive, .diacriticInsensitive]), .not(C.compare("year", .less, 3))]))
        ),
        ("SUBQUERY(books, $b, TRUEPREDICATE).@count > 0", [], some("books", .truePredicate)),
        // Variables to substitute stay variables, inside and out; the SUBQUERY's is bound inside only
        (
            "SUBQUERY(books, $b, $b.year > $FROM).@count > 0 AND name == $b", [],
            .and([some("books", C.compare(C.key("year"), .greater, .variable("FROM"))), C.compare(C.key("name"), .equal, .variable("b"))])
        ),
        // Nesting: the inner collection is a key path from the outer element; variables shadow
        (
            "SUBQUERY(authors, $a, SUBQUERY($a.books, $b, $b.year > 2000).@count > 0).@count > 0", [],
            some("authors", some("books", recent))
        ),
        (
            "SUBQUERY(authors, $x, $x.name == 'A' AND SUBQUERY($x.books, $x, $x.year > 2000).@count == 0).@count > 0", [],
            some("authors", .and([C.compare("name", .equal, "A"), .not(some("books", recent))]))
        ),
        // Among other predicates
        (
            "name == 'A' AND (SUBQUERY(books, $b, $b.year > 2000).@count > 0 OR age > 3)", [],
            .and([C.compare("name", .equal, "A"), .or([some("books", recent), C.compare("age", .greater, 3)])])
        ),
        // `subquery` without a parenthesis is still a key
        ("subquery == 3", [], C.compare("subquery", .equal, 3)),
        ("ANY subquery.year > 2000", [], C.compare(C.key("subquery.year"), .greater, .constant(2000), [], .any)),
        ("SUBQUERY(books, $b, $b.subquery == 1).@count > 0", [], some("books", C.compare("subquery", .equal, 1)))
    ]

    @Test func everyFormParses() {
        for test in Self.wellFormed {
            switch C.parse(test.format, test.arguments) {
            case .success(let predicate):
                #expect(predicate == test.expected, "\(test.format)")
            case .failure(let error):
                Issue.record("\(test.format) does not parse: \(error)")
            }
        }
    }

    /// Predicates whose descriptions must parse back to them; none nests a SUBQUERY (see
    /// `nestedSubqueriesRoundTrip`).
    static let roundTrips: [PredicateSyntax] = [
        both,
        .not(both),
        some("author.books", .not(.or([recent, startsWithT]))),
        some("books", .comparison(.evaluatedObject, .in, .list([.object(ObjectID(entity: 2, key: 9))]))),
        some("books", .comparison(C.sum("loans", .maximum, "due"), .lessOrEqual, .constant(.date(C.date)))),
        some("books", C.compare(C.key("in"), .between, C.list(1, 2))),
        some("books", C.compare(C.key("isbn"), .equal, .constant(.uuid(C.uuid)))),
        some("books", C.compare(C.key("tags"), .contains, .constant("x"), [.caseInsensitive])),
        some("books", C.compare(C.key("year"), .greater, .variable("FROM"))),
        some("books", .truePredicate),
        some("books", .falsePredicate),
        .and([C.compare("name", .equal, "A"), .or([both, .not(some("books", recent))])])
    ]

    @Test func descriptionsParseBack() {
        for predicate in Self.roundTrips {
            #expect(C.roundTripProblem(predicate) == nil, "\(C.roundTripProblem(predicate) ?? "")")
        }
        for test in Self.wellFormed {
            if case .success(let predicate) = C.parse(test.format, test.arguments) {
                #expect(C.roundTripProblem(predicate) == nil, "\(test.format): \(C.roundTripProblem(predicate) ?? "")")
            }
        }
        #expect(Self.both.description == #"SUBQUERY(books, $x, $x.year > 2000 AND $x.title BEGINSWITH "T").@count > 0"#)
    }

    /// A SUBQUERY inside another round-trips: `PredicateWriter` reads the nested collection from
    /// the enclosing element and names the nested element `$xx`.
    @Test func nestedSubqueriesRoundTrip() throws {
        let nested = Self.some("authors", .and([C.compare("name", .equal, "A"), Self.some("books", Self.recent)]))
        let fixed = #"SUBQUERY(authors, $x, $x.name == "A" AND SUBQUERY($x.books, $x, $x.year > 2000).@count > 0).@count > 0"#
        #expect(try PredicateSyntax.parse(fixed) == nested)
        #expect(C.roundTripProblem(nested) == nil, "\(C.roundTripProblem(nested) ?? "")")
        #expect(nested.description.contains("SUBQUERY($x.books, $xx, $xx.year > 2000)"))
    }

    @Test func variablesAreSubstitutedInsideAndOut() throws {
        let template = try PredicateSyntax.parse("SUBQUERY(books, $b, $b.year > $FROM).@count > 0 AND age > $FROM")
        let substituted = try template.substituting(["FROM": 2000])
        #expect(substituted == .and([Self.some("books", Self.recent), C.compare("age", .greater, 2000)]))
        #expect(throws: PredicateSyntaxError.self) { try template.substituting([:]) }
    }

    static let malformed: [(input: String, arguments: [any PredicateArgument], column: Int, message: String)] = [
        // The condition reads only its element
        (
            "SUBQUERY(books, $b, year > 2000).@count > 0", [], 21,
            #"expected $b or a key path that starts with "$b." (a SUBQUERY condition may read only $b), found "year""#
        ),
        (
            "SUBQUERY(books, $b, $b.year > 2000 AND name == 'x').@count > 0", [], 40,
            #"expected $b or a key path that starts with "$b." (a SUBQUERY condition may read only $b), found "name""#
        ),
        (
            "SUBQUERY(books, $b, SELF.year > 2000).@count > 0", [], 21,
            #"expected $b or a key path that starts with "$b." (a SUBQUERY condition may read only $b), found "SELF""#
        ),
        (
            "SUBQUERY(books, $b, #year > 2000).@count > 0", [], 21,
            ##"expected $b or a key path that starts with "$b." (a SUBQUERY condition may read only $b), found "#year""##
        ),
        (
            "SUBQUERY(books, $b, %K > 2000).@count > 0", ["year"], 21,
            #"expected $b or a key path that starts with "$b." (a SUBQUERY condition may read only $b), found "%K""#
        ),
        (
            "SUBQUERY(books, $b, 5 < year).@count > 0", [], 25,
            #"expected $b or a key path that starts with "$b." (a SUBQUERY condition may read only $b), found "year""#
        ),
        (
            "SUBQUERY(books, $b, ANY tags == 'x').@count > 0", [], 25,
            #"expected $b or a key path that starts with "$b." (a SUBQUERY condition may read only $b), found "tags""#
        ),
        (
            "SUBQUERY(authors, $a, SUBQUERY($a.books, $b, $a.name == 'x').@count > 0).@count > 0", [], 46,
            #"expected $b or a key path that starts with "$b." (a SUBQUERY condition may read only $b), found "$a""#
        ),
        (
            "SUBQUERY(authors, $a, SUBQUERY(books, $b, $b.year > 1).@count > 0).@count > 0", [], 32,
            #"expected $a or a key path that starts with "$a." (a SUBQUERY condition may read only $a), found "books""#
        ),
        // Counts other than "some" and "none"
        (
            "SUBQUERY(books, $b, $b.year > 1).@count > 2", [], 41,
            #"expected SUBQUERY(...).@count > 0, != 0 or >= 1 (some element matches), or == 0 (none does), found "SUBQUERY(...).@count > 2""#
        ),
        (
            "SUBQUERY(books, $b, $b.year > 1).@count == 1", [], 41,
            #"expected SUBQUERY(...).@count > 0, != 0 or >= 1 (some element matches), or == 0 (none does), found "SUBQUERY(...).@count == 1""#
        ),
        (
            "SUBQUERY(books, $b, $b.year > 1).@count > 0.0", [], 41,
            #"expected SUBQUERY(...).@count > 0, != 0 or >= 1 (some element matches), or == 0 (none does), found "SUBQUERY(...).@count > 0.0""#
        ),
        (
            "SUBQUERY(books, $b, $b.year > 1).@count >[c] 0", [], 41,
            #"expected SUBQUERY(...).@count > 0, != 0 or >= 1 (some element matches), or == 0 (none does), found "SUBQUERY(...).@count >[c] 0""#
        ),
        (
            "SUBQUERY(books, $b, $b.year > 1).@count < 1", [], 41,
            #"expected SUBQUERY(...).@count > 0, != 0 or >= 1 (some element matches), or == 0 (none does), found "SUBQUERY(...).@count < 1""#
        ),
        (
            "SUBQUERY(books, $b, $b.year > 1).@count > $N", [], 41,
            #"expected SUBQUERY(...).@count > 0, != 0 or >= 1 (some element matches), or == 0 (none does), found "SUBQUERY(...).@count > $N""#
        ),
        (
            "2 < SUBQUERY(books, $b, $b.year > 1).@count", [], 1,
            #"expected SUBQUERY(...).@count > 0, != 0 or >= 1 (some element matches), or == 0 (none does), found "2 < SUBQUERY(...).@count""#
        ),
        (
            "0 BEGINSWITH SUBQUERY(books, $b, $b.year > 1).@count", [], 1,
            #"expected SUBQUERY(...).@count > 0, != 0 or >= 1 (some element matches), or == 0 (none does), found "0 BEGINSWITH SUBQUERY(...).@count""#
        ),
        (
            "SUBQUERY(books, $b, $b.year > 1).@count IN {0}", [], 44,
            #"expected a count after "IN", found "{""#
        ),
        // The shape of SUBQUERY(…).@count
        ("SUBQUERY(books, $b, $b.year > 1)", [], 33, #"expected ".@count" after "SUBQUERY(...)", found end of input"#),
        ("SUBQUERY(books, $b, $b.year > 1) > 0", [], 34, #"expected ".@count" after "SUBQUERY(...)", found ">""#),
        ("SUBQUERY(books, $b, $b.year > 1).@sum.year > 0", [], 34, #"expected "@count" after "SUBQUERY(...).", found "@sum""#),
        (
            "SUBQUERY(books, $b, $b.year > 1).@count", [], 40,
            #"expected a comparison operator after "SUBQUERY(...).@count", found end of input"#
        ),
        ("SUBQUERY(books, $b, $b.year > 1", [], 32, #"expected ")" to close "SUBQUERY(" at column 1, found end of input"#),
        ("SUBQUERY(books, $b, $b.year > 1 ,", [], 33, #"expected ")" to close "SUBQUERY(" at column 1, found ",""#),
        ("SUBQUERY(books $b, $b.year > 1).@count > 0", [], 16, #"expected "," after the collection of SUBQUERY, found "$b""#),
        ("SUBQUERY(books, b, b.year > 1).@count > 0", [], 17, #"expected a variable such as $x for the elements of books, found "b""#),
        ("SUBQUERY(books, $b $b.year > 1).@count > 0", [], 20, #"expected "," after the variable of SUBQUERY, found "$b""#),
        ("SUBQUERY(books, $b, $b.@count > 1).@count > 0", [], 24, #"expected a key after "$b.", found "@count""#),
        ("SUBQUERY(books, $b, ).@count > 0", [], 21, #"expected a predicate after ",", found ")""#),
        ("SUBQUERY()", [], 10, #"expected a to-many key path after "SUBQUERY(", found ")""#),
        // The collection is a key path
        ("SUBQUERY(books.@count, $b, $b.year > 1).@count > 0", [], 10, #"expected a to-many key path after "SUBQUERY(", found "books.@count""#),
        ("SUBQUERY('books', $b, $b.year > 1).@count > 0", [], 10, #"expected a to-many key path after "SUBQUERY(", found "'books'""#),
        ("SUBQUERY($b, $b, $b.year > 1).@count > 0", [], 10, #"expected a to-many key path after "SUBQUERY(", found "$b""#),
        (
            "SUBQUERY(authors, $a, SUBQUERY($a, $b, $b.year > 1).@count > 0).@count > 0", [], 32,
            #"expected a to-many key path after "SUBQUERY(", found "$a""#
        ),
        // SUBQUERY where a value or key path is expected
        (
            "ANY SUBQUERY(books, $b, $b.year > 1).@count > 0", [], 5,
            #"expected a key path after "ANY", found "SUBQUERY" (SUBQUERY is read only as SUBQUERY(collection, $x, condition).@count > 0, or == 0)"#
        ),
        (
            "age == SUBQUERY(books, $b, $b.year > 1).@count", [], 1,
            #"expected SUBQUERY(...).@count > 0, != 0 or >= 1 (some element matches), or == 0 (none does), found "age == SUBQUERY(...).@count""#
        ),
        (
            "ALL tags == SUBQUERY(books, $b, $b.year > 1).@count", [], 13,
            #"expected a value after "==", found "SUBQUERY" (SUBQUERY is read only as SUBQUERY(collection, $x, condition).@count > 0, or == 0)"#
        ),
        (
            "SUBQUERY(books, $b, $b.year > 1).@count > SUBQUERY(books, $b, $b.year > 1).@count", [], 43,
            #"expected a count after ">", found "SUBQUERY" (SUBQUERY is read only as SUBQUERY(collection, $x, condition).@count > 0, or == 0)"#
        ),
        (
            "age IN {1, SUBQUERY(books, $b, $b.year > 1).@count}", [], 12,
            #"expected a value after ",", found "SUBQUERY" (SUBQUERY is read only as SUBQUERY(collection, $x, condition).@count > 0, or == 0)"#
        ),
        // Nesting: a SUBQUERY counts as two levels
        (
            nested(51), [], nestedPrefix(0).count + 49 * nestedPrefix(1).count + 9,
            #"expected at most 100 levels of nesting, found more at "(""#
        ),
        (
            String(repeating: "(", count: 99) + "SUBQUERY(books, $b, $b.year > 1).@count > 0" + String(repeating: ")", count: 99), [], 108,
            #"expected at most 100 levels of nesting, found more at "(""#
        ),
        (
            "SUBQUERY(books, $b, " + String(repeating: "(", count: 99) + "$b.year > 1" + String(repeating: ")", count: 99) + ").@count > 0", [], 119,
            #"expected at most 100 levels of nesting, found more at "(""#
        )
    ]

    @Test func malformedSubqueriesSayWhatWasExpectedAndWhere() {
        C.expectRefused(Self.malformed)
    }

    /// The text before each level of `nested(_:)`.
    static func nestedPrefix(_ level: Int) -> String {
        level == 0 ? "SUBQUERY(a, $x, " : "SUBQUERY($x.a, $x, "
    }

    /// `levels` SUBQUERYs, each inside the condition of the one before.
    static func nested(_ levels: Int) -> String {
        (0..<levels).map(nestedPrefix).joined() + "$x.b > 1" + String(repeating: ").@count > 0", count: levels)
    }

    /// The deepest predicates of SUBQUERYs, parentheses and lists.
    static let deepest = [
        nested(50),
        String(repeating: "(", count: 98) + "SUBQUERY(books, $b, $b.year > 1).@count > 0" + String(repeating: ")", count: 98),
        "SUBQUERY(books, $b, " + String(repeating: "NOT (", count: 49) + "$b.year > 1" + String(repeating: ")", count: 49) + ").@count > 0",
        String(repeating: "0 < SUBQUERY(a, $x, ", count: 1) + String(repeating: "0 < SUBQUERY($x.a, $x, ", count: 48)
            + "$x.b IN " + String(repeating: "{", count: 2) + String(repeating: "}", count: 2) + String(repeating: ").@count", count: 49)
    ]

    @Test func nestingIsBoundedAndDoesNotOverflow() async throws {
        var predicate = try PredicateSyntax.parse(Self.nested(PredicateSyntax.maximumNestingDepth / 2))
        var levels = 0
        while case .subquery(_, let inner) = predicate {
            levels += 1
            predicate = inner
        }
        #expect(levels == PredicateSyntax.maximumNestingDepth / 2)
        #expect(predicate == C.compare("b", .greater, 1))
        let deep = Self.nestedPrefix(0) + String(repeating: Self.nestedPrefix(1), count: 10_000)
        #expect((try? PredicateSyntax.parse(deep)) == nil, "deep nesting fails without overflowing")
        let parsed = try await Self.onSmallStack { Self.deepest.map { (try? PredicateSyntax.parse($0)) != nil } }
        #expect(parsed == Self.deepest.map { _ in true }, "the deepest predicates parse on a secondary thread's 512 KiB stack")
    }

    /// Runs `body` on a thread with a stack of 512 KiB, a secondary thread's on Darwin.
    static func onSmallStack<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async throws -> Result {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.stackSize = 512 * 1024
            thread.start()
        }
    }

    /// Every prefix of SUBQUERY formats, and random mixtures of their tokens, parse or throw.
    @Test func noInputTraps() {
        var generator = TestSeed.generator()
        let pieces = [
            "SUBQUERY", "subquery", "(", ")", ",", ".", "@count", "@sum", "$b", "$x", "$b.", "year", "books", "SELF",
            ">", "==", "0", "1", "AND", "NOT", "%K", "{", "}", "'T'", " "
        ]
        var formats = Self.wellFormed.map(\.format) + Self.malformed.map(\.input)
        for _ in 0..<500 {
            formats.append((0..<Int.random(in: 1...24, using: &generator)).map { _ in pieces.randomElement(using: &generator) ?? "" }.joined())
        }
        var parsed = 0
        for format in formats {
            for end in 0...format.count {
                if (try? PredicateSyntax.parse(String(format.prefix(end)))) != nil { parsed += 1 }
            }
        }
        #expect(parsed > 0)
    }

    // MARK: - Fetching

    static func model() throws -> Model {
        try Model {
            Entity("Author") {
                Attribute("name", .string, optional: false)
                Relationship("books", to: "Book", inverse: "author", .toMany(ordered: false), deleteRule: .cascade)
            }
            Entity("Book") {
                Attribute("title", .string, optional: false)
                Attribute("year", .integer32, indexed: true)
                Relationship("author", to: "Author", inverse: "books")
            }
        }
    }

    /// One book of each author: its title and year.
    typealias Shelf = [(title: String, year: Int64)]

    /// Authors by name, with their books; "Split" has one book that is recent and one whose title
    /// starts with T, but none that is both.
    static let fixedAuthors: [(String, Shelf)] = [
        ("One", [("Tides", 2010), ("Abyss", 1990)]),
        ("Split", [("Alpha", 2010), ("Tales", 1990)]),
        ("Old", [("Tales", 1999)]),
        ("Nobody", [])
    ]

    /// The fixed authors and random ones.
    static func authors() -> [(String, Shelf)] {
        var generator = TestSeed.generator()
        let titles = ["Tides", "Tales", "Alpha", "Torrent", "Omega", "tame"]
        var authors = fixedAuthors
        for index in 0..<60 {
            let shelf = (0..<Int.random(in: 0...4, using: &generator)).map { _ in
                (titles.randomElement(using: &generator) ?? "", Int64.random(in: 1990...2010, using: &generator))
            }
            authors.append(("A\(index)", shelf))
        }
        return authors
    }

    /// A store with the authors and their books, all saved but the last `unsaved` authors.
    static func library(_ authors: [(String, Shelf)], unsaved: Int) async throws -> ObjectContext {
        let store = Store(inMemory: try model())
        let context = store.viewContext
        for (index, (name, shelf)) in authors.enumerated() {
            if index == authors.count - unsaved { try await context.save() }
            let author = try context.make("Author", ["name": .string(name)])
            for (title, year) in shelf {
                let book = try context.make("Book", ["title": .string(title), "year": .integer(year)])
                try book.setObject(author, forKey: "author")
            }
        }
        if unsaved == 0 { try await context.save() }
        return context
    }

    /// The names of the authors the predicate selects, sorted.
    static func names(_ context: ObjectContext, _ format: String, _ arguments: any PredicateArgument...) throws -> [String] {
        let request = FetchRequest("Author", predicate: try FetchPredicate(format: format, argumentArray: arguments), sortKeys: [SortKey("name")])
        return try context.fetch(request).compactMap { $0.string("name") }
    }

    @Test(arguments: [0, 20])
    func oneElementMustMeetEveryCondition(unsaved: Int) async throws {
        let authors = Self.authors()
        let context = try await Self.library(authors, unsaved: unsaved)
        func expected(_ test: (String, Int64) -> Bool) -> [String] {
            authors.filter { $0.1.contains { test($0.title, $0.year) } }.map(\.0).sorted()
        }
        let both = expected { $1 > 2000 && $0.hasPrefix("T") }
        #expect(both.contains("One") && !both.contains("Split") && !both.contains("Old") && !both.contains("Nobody"))
        #expect(try Self.names(context, "SUBQUERY(books, $b, \(Self.bothText)).@count > 0") == both)
        #expect(try Self.names(context, "0 < SUBQUERY(books, $b, $b.year > %d AND $b.title BEGINSWITH %@).@count", 2000, "T") == both)
        let none = Set(authors.map(\.0)).subtracting(both).sorted()
        #expect(try Self.names(context, "SUBQUERY(books, $b, \(Self.bothText)).@count == 0") == none)
        let separately = try Self.names(context, "ANY books.year > 2000 AND ANY books.title BEGINSWITH 'T'")
        #expect(separately.contains("Split") && Set(separately).isSuperset(of: both))
        let either = expected { $1 < 1995 || $0.hasPrefix("T") }
        #expect(try Self.names(context, "SUBQUERY(books, $b, $b.year < 1995 OR $b.title BEGINSWITH 'T').@count >= 1") == either)
        let caseless = expected { $0.lowercased().hasPrefix("ta") && $1 != 2000 }
        #expect(try Self.names(context, "SUBQUERY(books, $b, $b.title BEGINSWITH[c] 'ta' AND NOT $b.year == 2000).@count != 0") == caseless)
        let template = try PredicateSyntax.parse("name BEGINSWITH 'A' AND SUBQUERY(books, $b, $b.year >= $FROM AND $b.year <= $TO).@count > 0")
        let window = expected { $1 >= 2003 && $1 <= 2005 }.filter { $0.hasPrefix("A") }
        let request = FetchRequest("Author", predicate: .syntax(try template.substituting(["FROM": 2003, "TO": 2005])), sortKeys: [SortKey("name")])
        #expect(try context.fetch(request).compactMap { $0.string("name") } == window)
    }

    @Test func elementsAndNestedSubqueriesFetch() async throws {
        let authors = Self.authors()
        let context = try await Self.library(authors, unsaved: 0)
        let abyss = try #require(try context.fetchFirst(FetchRequest("Book", predicate: try FetchPredicate(format: "title == 'Abyss'"))))
        #expect(try Self.names(context, "SUBQUERY(books, $b, $b == %@).@count > 0", abyss) == ["One"])
        let inner = Self.bothText.replacingOccurrences(of: "$b", with: "$c")
        let nested = "SUBQUERY(books, $b, $b.title == 'Abyss' AND SUBQUERY($b.author.books, $c, \(inner)).@count > 0).@count > 0"
        #expect(try Self.names(context, nested) == ["One"])
        let booksOfSuchAuthors = authors.filter { $0.1.contains { $0.year > 2000 && $0.title.hasPrefix("T") } }.map(\.1.count).reduce(0, +)
        let request = FetchRequest("Book", predicate: try FetchPredicate(format: "SUBQUERY(author.books, $b, \(Self.bothText)).@count > 0"))
        #expect(try context.count(request) == booksOfSuchAuthors)
    }
}
