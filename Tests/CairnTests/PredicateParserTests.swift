import Foundation
import Testing
@testable import Cairn

/// The predicate parser: every construct, canonical descriptions that parse back, more than a
/// hundred malformed predicates with their messages and columns, variable substitution errors.
/// (The tables were written with the parser; `PredicateCases` holds them.)
@Suite struct PredicateParserTests {
    typealias C = PredicateCases

    @Test func everyConstructParses() {
        #expect(C.wellFormed.count >= 60)
        for test in C.wellFormed {
            switch C.parse(test.format, test.arguments) {
            case .success(let predicate):
                #expect(predicate == test.expected, "\(test.format)")
                #expect(C.roundTripProblem(predicate) == nil, "\(test.format): \(C.roundTripProblem(predicate) ?? "")")
            case .failure(let error):
                Issue.record("\(test.format) does not parse: \(error)")
            }
        }
    }

    @Test func descriptionsAreCanonical() throws {
        for test in C.descriptions {
            #expect(try PredicateSyntax.parse(test.format, arguments: test.arguments).description == test.description, "\(test.format)")
        }
        #expect(PredicateSyntax.and([]).description == "TRUEPREDICATE" && PredicateSyntax.or([]).description == "FALSEPREDICATE")
    }

    @Test func malformedPredicatesSayWhatWasExpectedAndWhere() {
        #expect(C.malformed.count >= 40)
        C.expectRefused(C.malformed)
    }

    @Test func variablesAreSubstitutedOrNamed() throws {
        let substituted = try PredicateSyntax.parse("age > $min AND name IN $names").substituting(["min": 18, "names": ["a", "b"]])
        #expect(substituted == .and([C.compare("age", .greater, 18), C.compare(C.key("name"), .in, C.list("a", "b"))]))
        for test in C.substitutionErrors {
            do {
                let predicate = try PredicateSyntax.parse(test.format).substituting(test.variables)
                Issue.record("substituting in \(test.format) gave \(predicate)")
            } catch {
                #expect(error.column == test.column && error.message == test.message && error.format == test.description, "\(test.format): \(error)")
            }
        }
    }

    @Test func errorsPointAtTheColumn() {
        if case .failure(let error) = C.parse("age == ") {
            #expect(error.description == "column 8: expected a value after \"==\", found end of input\nage == \n       ^")
        } else {
            Issue.record("age == should fail")
        }
        #expect((try? PredicateSyntax.parse(String(repeating: "(", count: 100_000))) == nil, "deep nesting fails without overflowing")
    }
}

/// The parser's test tables.
enum PredicateCases {
    static func key(_ path: String) -> PredicateOperand {
        .keyPath(path.split(separator: ".").map(String.init))
    }

    static func compare(
        _ lhs: PredicateOperand, _ op: PredicateOperator, _ rhs: PredicateOperand,
        _ options: ComparisonOptions = [], _ modifier: ComparisonModifier = .direct
    ) -> PredicateSyntax {
        .comparison(lhs, op, rhs, options: options, modifier: modifier)
    }

    /// `keyPath op constant`.
    static func compare(_ path: String, _ op: PredicateOperator, _ value: Value, _ options: ComparisonOptions = []) -> PredicateSyntax {
        .comparison(key(path), op, .constant(value), options: options)
    }

    static func list(_ values: Value...) -> PredicateOperand {
        .list(values.map(PredicateOperand.constant))
    }

    static func sum(_ collection: String, _ op: CollectionOperator, _ path: String = "") -> PredicateOperand {
        .collectionOperation(op, collection: collection.split(separator: ".").map(String.init), keyPath: path.split(separator: ".").map(String.init))
    }

    /// Expects each input refused with its message, at its column.
    static func expectRefused(_ tests: [(input: String, arguments: [any PredicateArgument], column: Int, message: String)]) {
        for test in tests {
            switch parse(test.input, test.arguments) {
            case .success(let predicate):
                Issue.record("\(test.input.debugDescription) parsed as \(predicate)")
            case .failure(let error):
                #expect(
                    error.column == test.column && error.message == test.message && error.format == test.input,
                    "\(test.input.debugDescription): got column \(error.column): \(error.message)")
            }
        }
    }

    static func parse(_ format: String, _ arguments: [any PredicateArgument] = []) -> Result<PredicateSyntax, PredicateSyntaxError> {
        Result { () throws(PredicateSyntaxError) in try PredicateSyntax.parse(format, arguments: arguments) }
    }

    /// Why the description does not parse back to the same predicate (or describe it the same way
    /// again); nil if it does.
    static func roundTripProblem(_ predicate: PredicateSyntax) -> String? {
        let text = predicate.description
        switch parse(text) {
        case .success(let again) where again != predicate:
            return "the description \(text) parses as \(again)"
        case .success(let again) where again.description != text:
            return "the description \(text) is described again as \(again.description)"
        case .success:
            return nil
        case .failure(let error):
            return "the description does not parse: \(error)"
        }
    }

    static let deepParentheses = String(repeating: "(", count: 101) + "a == 1" + String(repeating: ")", count: 101)
    static let deepNots = String(repeating: "NOT ", count: 101) + "a == 1"
    static let deepLists = "a IN " + String(repeating: "{", count: 101)
    static let deepMixture = String(repeating: "NOT (", count: 50) + "a IN {}" + String(repeating: ")", count: 50)
    static let date = Date(timeIntervalSinceReferenceDate: 700_000_000.5)
    static let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID()
    static let bytes: [UInt8] = [0, 1, 2, 250, 255]

    static let wellFormed: [(format: String, arguments: [any PredicateArgument], expected: PredicateSyntax)] = [
        // Comparison operators and their spellings
        ("age == 30", [], compare("age", .equal, 30)),
        ("age = 30", [], compare("age", .equal, 30)),
        ("age != 30", [], compare("age", .notEqual, 30)),
        ("age <> 30", [], compare("age", .notEqual, 30)),
        ("age < 30", [], compare("age", .less, 30)),
        ("age <= 30", [], compare("age", .lessOrEqual, 30)),
        ("age =< 30", [], compare("age", .lessOrEqual, 30)),
        ("age > 30", [], compare("age", .greater, 30)),
        ("age >= 30", [], compare("age", .greaterOrEqual, 30)),
        ("age => 30", [], compare("age", .greaterOrEqual, 30)),
        ("age>=30", [], compare("age", .greaterOrEqual, 30)),
        ("age BETWEEN {18, 65}", [], compare(key("age"), .between, list(18, 65))),
        ("age between { 18 , 65 }", [], compare(key("age"), .between, list(18, 65))),
        ("age IN {1, 2, 3}", [], compare(key("age"), .in, list(1, 2, 3))),
        ("age in {}", [], compare(key("age"), .in, .list([]))),
        ("name IN names", [], compare(key("name"), .in, key("names"))),
        ("name BEGINSWITH 'Jo'", [], compare("name", .beginsWith, "Jo")),
        ("name ENDSWITH \"son\"", [], compare("name", .endsWith, "son")),
        ("name CONTAINS 'x'", [], compare("name", .contains, "x")),
        ("name LIKE 'J*n?'", [], compare("name", .like, "J*n?")),
        ("name MATCHES '^[A-Z].*$'", [], compare("name", .matches, "^[A-Z].*$")),
        ("{1, 2} CONTAINS 1", [], compare(list(1, 2), .contains, .constant(1))),
        // Options
        ("name CONTAINS[c] 'x'", [], compare("name", .contains, "x", .caseInsensitive)),
        ("name contains[cd] 'x'", [], compare("name", .contains, "x", [.caseInsensitive, .diacriticInsensitive])),
        ("name ==[d] 'e'", [], compare("name", .equal, "e", .diacriticInsensitive)),
        ("name ==[n] 'e'", [], compare("name", .equal, "e", .normalized)),
        ("name BEGINSWITH[cdn] 'a'", [], compare("name", .beginsWith, "a", [.caseInsensitive, .diacriticInsensitive, .normalized])),
        ("name LIKE [DC] 'a'", [], compare("name", .like, "a", [.caseInsensitive, .diacriticInsensitive])),
        // AND, OR, NOT, precedence, parentheses
        ("a == 1 AND b == 2", [], .and([compare("a", .equal, 1), compare("b", .equal, 2)])),
        ("a == 1 && b == 2 and c == 3", [], .and([compare("a", .equal, 1), compare("b", .equal, 2), compare("c", .equal, 3)])),
        ("a == 1 OR b == 2 || c == 3", [], .or([compare("a", .equal, 1), compare("b", .equal, 2), compare("c", .equal, 3)])),
        ("NOT a == 1", [], .not(compare("a", .equal, 1))),
        ("!(a == 1)", [], .not(compare("a", .equal, 1))),
        ("not not a == 1", [], .not(.not(compare("a", .equal, 1)))),
        ("NOT a == 1 AND b == 2", [], .and([.not(compare("a", .equal, 1)), compare("b", .equal, 2)])),
        ("a == 1 OR b == 2 AND c == 3", [], .or([compare("a", .equal, 1), .and([compare("b", .equal, 2), compare("c", .equal, 3)])])),
        ("(a == 1 OR b == 2) AND c == 3", [], .and([.or([compare("a", .equal, 1), compare("b", .equal, 2)]), compare("c", .equal, 3)])),
        ("(a == 1 AND b == 2) AND c == 3", [], .and([.and([compare("a", .equal, 1), compare("b", .equal, 2)]), compare("c", .equal, 3)])),
        ("NOT (a == 1 OR b == 2)", [], .not(.or([compare("a", .equal, 1), compare("b", .equal, 2)]))),
        ("((a == 1))", [], compare("a", .equal, 1)),
        (
            "a == 1 AND (b == 2 OR c == 3) AND NOT d == 4", [],
            .and([compare("a", .equal, 1), .or([compare("b", .equal, 2), compare("c", .equal, 3)]), .not(compare("d", .equal, 4))])
        ),
        ("TRUEPREDICATE", [], .truePredicate),
        ("falsepredicate", [], .falsePredicate),
        ("TRUEPREDICATE OR FALSEPREDICATE", [], .or([.truePredicate, .falsePredicate])),
        // nil, SELF, booleans
        ("name == nil", [], compare("name", .equal, .null)),
        ("name != NULL", [], compare("name", .notEqual, .null)),
        ("SELF == 'x'", [], compare(.evaluatedObject, .equal, .constant("x"))),
        ("SELF IN {1, 2}", [], compare(.evaluatedObject, .in, list(1, 2))),
        ("self.name == 'x'", [], compare("name", .equal, "x")),
        ("flag == YES", [], compare("flag", .equal, true)),
        ("flag == no", [], compare("flag", .equal, false)),
        ("flag == TRUE", [], compare("flag", .equal, true)),
        ("flag != false", [], compare("flag", .notEqual, false)),
        // Strings and escapes
        ("name == 'it\\'s'", [], compare("name", .equal, "it's")),
        ("name == \"say \\\"hi\\\"\"", [], compare("name", .equal, "say \"hi\"")),
        ("name == 'a\\nb\\tc\\\\d\\re'", [], compare("name", .equal, "a\nb\tc\\d\re")),
        ("name == '\\u00e9t\\u00E9'", [], compare("name", .equal, "été")),
        ("name == '\\uD83D\\uDE00'", [], compare("name", .equal, "😀")),
        ("name == 'double \" inside'", [], compare("name", .equal, "double \" inside")),
        ("name == \"single ' inside\"", [], compare("name", .equal, "single ' inside")),
        ("name == ''", [], compare("name", .equal, "")),
        ("name == 'crème brûlée 🍮'", [], compare("name", .equal, "crème brûlée 🍮")),
        ("name == 'line\nbreak'", [], compare("name", .equal, "line\nbreak")),
        ("name == '%@ and $x and %%'", [], compare("name", .equal, "%@ and $x and %%")),
        // Numbers
        ("age == -5", [], compare("age", .equal, -5)),
        ("age == 007", [], compare("age", .equal, 7)),
        ("x == 1.5", [], compare("x", .equal, 1.5)),
        ("x == -2.5e3", [], compare("x", .equal, -2500.0)),
        ("x == 1E-2", [], compare("x", .equal, 0.01)),
        ("x == 2e+2", [], compare("x", .equal, 200.0)),
        ("x == 1e999", [], compare("x", .equal, .double(.infinity))),
        ("x == 0x1F", [], compare("x", .equal, 31)),
        ("x == -0x10", [], compare("x", .equal, -16)),
        ("x == 0b101", [], compare("x", .equal, 5)),
        ("x == 0o17", [], compare("x", .equal, 15)),
        ("x == 9223372036854775807", [], compare("x", .equal, .integer(.max))),
        ("x == -9223372036854775808", [], compare("x", .equal, .integer(.min))),
        ("x == -0x8000000000000000", [], compare("x", .equal, .integer(.min))),
        ("-3 < x", [], compare(.constant(-3), .less, key("x"))),
        // Key paths, # escapes, unicode keys
        ("author.lastName == 'Doe'", [], compare("author.lastName", .equal, "Doe")),
        ("#IN == 1", [], compare(.keyPath(["IN"]), .equal, .constant(1))),
        ("order.#in == 1", [], compare(.keyPath(["order", "in"]), .equal, .constant(1))),
        ("order.in == 1", [], compare(.keyPath(["order", "in"]), .equal, .constant(1))),
        ("#name == 1", [], compare("name", .equal, 1)),
        ("café == 'crème'", [], compare("café", .equal, "crème")),
        ("_private2 == 1", [], compare("_private2", .equal, 1)),
        ("cafe\u{301} == 1", [], compare("cafe\u{301}", .equal, 1)),
        ("ın == 1", [], compare("ın", .equal, 1)),
        ("name == '\u{301}x'", [], compare("name", .equal, "\u{301}x")),
        ("name == 'a\\n\u{301}'", [], compare("name", .equal, "a\n\u{301}")),
        // ANY, SOME, ALL, NONE
        ("ANY books.pages > 100", [], compare(key("books.pages"), .greater, .constant(100), [], .any)),
        ("some books.pages > 100", [], compare(key("books.pages"), .greater, .constant(100), [], .any)),
        ("ALL books.pages > 100", [], compare(key("books.pages"), .greater, .constant(100), [], .all)),
        ("NONE books.title CONTAINS[c] 'x'", [], compare(key("books.title"), .contains, .constant("x"), .caseInsensitive, .none)),
        ("NOT ANY tags.name == 'a'", [], .not(compare(key("tags.name"), .equal, .constant("a"), [], .any))),
        // Collection operators
        ("books.@count > 2", [], compare(sum("books", .count), .greater, .constant(2))),
        ("books.@sum.pages > 1000", [], compare(sum("books", .sum, "pages"), .greater, .constant(1000))),
        ("books.@avg.pages >= 10.5", [], compare(sum("books", .average, "pages"), .greaterOrEqual, .constant(10.5))),
        ("books.@min.year < 1900", [], compare(sum("books", .minimum, "year"), .less, .constant(1900))),
        ("author.books.@max.rating.stars == 5", [], compare(sum("author.books", .maximum, "rating.stars"), .equal, .constant(5))),
        ("scores.@max == 5", [], compare(sum("scores", .maximum), .equal, .constant(5))),
        ("books.@count == shelves.@count", [], compare(sum("books", .count), .equal, sum("shelves", .count))),
        // Lists, variables, CAST
        ("x IN {{1, 2}, {}, 'a'}", [], compare(key("x"), .in, .list([list(1, 2), .list([]), .constant("a")]))),
        ("age IN $ages", [], compare(key("age"), .in, .variable("ages"))),
        ("$min <= age", [], compare(.variable("min"), .lessOrEqual, key("age"))),
        ("age BETWEEN $range", [], compare(key("age"), .between, .variable("range"))),
        ("x IN {$a, 2}", [], compare(key("x"), .in, .list([.variable("a"), .constant(2)]))),
        ("d == CAST(700000000.5, \"NSDate\")", [], compare("d", .equal, .date(date))),
        ("d == CAST(0, 'NSDate')", [], compare("d", .equal, .date(Date(timeIntervalSinceReferenceDate: 0)))),
        ("id == CAST('E621E1F8-C36C-495A-93FC-0C247A3E6E5F', 'NSUUID')", [], compare("id", .equal, .uuid(uuid))),
        ("data == CAST('AAEC+v8=', 'NSData')", [], compare("data", .equal, .binary(bytes))),
        ("price == CAST('12.50', 'NSDecimalNumber')", [], compare("price", .equal, .decimal(Decimal(string: "12.5") ?? 0))),
        ("price == CAST(-3, 'NSDecimalNumber')", [], compare("price", .equal, .decimal(-3))),
        ("link == CAST('https://example.com/a', 'NSURL')", [], compare("link", .equal, .uri("https://example.com/a"))),
        ("f == CAST(0.1, 'Float')", [], compare("f", .equal, .float(0.1))),
        // Whitespace and case
        ("\n age\t==\r\n1 ", [], compare("age", .equal, 1)),
        (
            "a == 1 and b == 2 or not c between {1, 2}", [],
            .or([.and([compare("a", .equal, 1), compare("b", .equal, 2)]), .not(compare(key("c"), .between, list(1, 2)))])
        ),
        // Arguments
        ("age == %d", [5], compare("age", .equal, 5)),
        (
            "age == %i AND b == %ld AND c == %lld", [Int8(-1), Int32(2), Int64.max],
            .and([compare("age", .equal, -1), compare("b", .equal, 2), compare("c", .equal, .integer(.max))])
        ),
        (
            "a == %u AND b == %lu AND c == %llu", [UInt8(255), UInt(7), UInt64(Int64.max)],
            .and([compare("a", .equal, 255), compare("b", .equal, 7), compare("c", .equal, .integer(.max))])
        ),
        ("a == %d", [UInt16(65535)], compare("a", .equal, 65535)),
        ("a == %d", [UInt32.max], compare("a", .equal, .integer(Int64(UInt32.max)))),
        ("a == %d", [Int16.min], compare("a", .equal, .integer(Int64(Int16.min)))),
        ("flag == %d", [true], compare("flag", .equal, true)),
        ("name == %@", ["x"], compare("name", .equal, "x")),
        ("name == %@", [Substring("sub")], compare("name", .equal, "sub")),
        ("%K == %@", ["author.name", "Doe"], compare("author.name", .equal, "Doe")),
        ("%K > 1", ["books.@count"], compare(sum("books", .count), .greater, .constant(1))),
        ("%K > 1", ["books.@sum.pages"], compare(sum("books", .sum, "pages"), .greater, .constant(1))),
        ("%K == 1", ["in"], compare(.keyPath(["in"]), .equal, .constant(1))),
        ("%K == 1", [Value.string("a.b")], compare("a.b", .equal, 1)),
        ("ANY %K == 1", ["tags.id"], compare(key("tags.id"), .equal, .constant(1), [], .any)),
        ("age IN %@", [[1, 2, 3]], compare(key("age"), .in, list(1, 2, 3))),
        ("age IN %@", [Set([7])], compare(key("age"), .in, list(7))),
        ("age IN %@", [[Int]()], compare(key("age"), .in, .list([]))),
        ("age IN %@", [[[1], [2, 3]]], compare(key("age"), .in, .list([list(1), list(2, 3)]))),
        ("age IN %@", [[1, nil] as [Int?]], compare(key("age"), .in, list(1, .null))),
        ("x IN %@", [[PredicateArgumentValue.value("a"), 2.predicateArgumentValue]], compare(key("x"), .in, list("a", 2))),
        ("age BETWEEN %@", [[1, 9]], compare(key("age"), .between, list(1, 9))),
        ("age BETWEEN %@", [18...65], compare(key("age"), .between, list(18, 65))),
        ("score > %f", [1.5], compare("score", .greater, 1.5)),
        ("score > %lf", [2], compare("score", .greater, 2.0)),
        ("score > %f", [UInt(3)], compare("score", .greater, 3.0)),
        ("score > %f", [Float(0.5)], compare("score", .greater, .float(0.5))),
        ("score > %f", [Decimal(string: "0.1") ?? 0], compare("score", .greater, .decimal(Decimal(string: "0.1") ?? 0))),
        ("name == %@", [String?.none], compare("name", .equal, .null)),
        ("name == %@", [String?.some("y")], compare("name", .equal, "y")),
        ("d == %@", [date], compare("d", .equal, .date(date))),
        ("id == %@", [uuid], compare("id", .equal, .uuid(uuid))),
        ("data == %@", [Data(bytes)], compare("data", .equal, .binary(bytes))),
        ("link == %@", [URL(string: "https://example.com/a?b=c") ?? URL(fileURLWithPath: "/")], compare("link", .equal, .uri("https://example.com/a?b=c"))),
        ("x == %@", [Decimal(string: "12.345") ?? 0], compare("x", .equal, .decimal(Decimal(string: "12.345") ?? 0))),
        ("x == %@", [Float(1.25)], compare("x", .equal, .float(1.25))),
        ("x == %@", [Double.infinity], compare("x", .equal, .double(.infinity))),
        ("x == %@", [Value.boolean(true)], compare("x", .equal, true)),
        ("x == %@", [UInt.max / 2], compare("x", .equal, .integer(.max))),
        ("name ENDSWITH %%", [], compare("name", .endsWith, "%")),
        ("name == %@ AND %% == %@", ["a", "b"], .and([compare("name", .equal, "a"), compare(.constant("%"), .equal, .constant("b"))])),
        ("name == '%@'", [], compare("name", .equal, "%@"))
    ]

    static let descriptions: [(format: String, arguments: [any PredicateArgument], description: String)] = [
        ("age=30", [], "age == 30"),
        ("age <> 1 && b =< 2", [], "age != 1 AND b <= 2"),
        ("a == 1 OR b == 2 AND c == 3", [], "a == 1 OR (b == 2 AND c == 3)"),
        ("(a == 1 AND b == 2) AND c == 3", [], "(a == 1 AND b == 2) AND c == 3"),
        ("!(a == 1 || b == 2)", [], "NOT (a == 1 OR b == 2)"),
        ("some x.y contains[dc] 'q'", [], "ANY x.y CONTAINS[cd] \"q\""),
        ("none x.y == nil", [], "NONE x.y == nil"),
        ("#in.#self.name == yes", [], "#in.#self.name == YES"),
        ("books.@sum.pages > 1.0", [], "books.@sum.pages > 1.0"),
        ("x IN {1, 'a', $v, SELF, {}}", [], "x IN {1, \"a\", $v, SELF, {}}"),
        ("s == 'a\\u0001\\tb\"c\\\\'", [], "s == \"a\\u0001\\tb\\\"c\\\\\""),
        ("d == %@", [date], "d == CAST(700000000.5, \"NSDate\")"),
        ("d == %@", [Data(bytes)], "d == CAST(\"AAEC+v8=\", \"NSData\")"),
        ("d == %@", [uuid], "d == CAST(\"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\", \"NSUUID\")"),
        ("d == %@", [Decimal(string: "-1.25") ?? 0], "d == CAST(\"-1.25\", \"NSDecimalNumber\")"),
        ("d == %@", [Float(0.1)], "d == CAST(0.1, \"Float\")"),
        ("d == %@", [-Double.infinity], "d == -1e999"),
        ("d == %@", [URL(string: "file:///tmp/a%20b") ?? URL(fileURLWithPath: "/")], "d == CAST(\"file:///tmp/a%20b\", \"NSURL\")"),
        ("TRUEPREDICATE AND FALSEPREDICATE", [], "TRUEPREDICATE AND FALSEPREDICATE")
    ]

    static let malformed: [(input: String, arguments: [any PredicateArgument], column: Int, message: String)] = [
        // Missing and unexpected tokens
        ("", [], 1, "expected a predicate, found end of input"),
        ("   ", [], 4, "expected a predicate, found end of input"),
        ("age", [], 4, "expected a comparison operator after \"age\", found end of input"),
        ("age >", [], 6, "expected a value after \">\", found end of input"),
        ("age == ", [], 8, "expected a value after \"==\", found end of input"),
        ("age ==[c]", [], 10, "expected a value after \"==[c]\", found end of input"),
        ("(age == 1", [], 10, "expected \")\" to close \"(\" at column 1, found end of input"),
        ("a == 1 AND (b == 2", [], 19, "expected \")\" to close \"(\" at column 12, found end of input"),
        ("age == 1)", [], 9, "expected AND, OR or the end of input, found \")\""),
        ("age === 1", [], 7, "expected a value after \"==\", found \"=\""),
        ("AND age == 1", [], 1, "expected a predicate, found \"AND\""),
        ("IN == 1", [], 1, "expected a predicate, found \"IN\""),
        ("a == 1 AND", [], 11, "expected a predicate after \"AND\", found end of input"),
        ("a == 1 OR OR b == 2", [], 11, "expected a predicate after \"OR\", found \"OR\""),
        ("NOT", [], 4, "expected a predicate after \"NOT\", found end of input"),
        ("()", [], 2, "expected a predicate after \"(\", found \")\""),
        ("a == 'x' b", [], 10, "expected AND, OR or the end of input, found \"b\""),
        ("a == 1 AND b", [], 13, "expected a comparison operator after \"b\", found end of input"),
        ("ALL x", [], 6, "expected a comparison operator after \"x\", found end of input"),
        ("a & b", [], 3, "expected a comparison operator after \"a\", found \"&\""),
        ("a == -", [], 6, "expected a value after \"==\", found \"-\""),
        ("a == TRUEPREDICATE", [], 6, "expected a value after \"==\", found \"TRUEPREDICATE\""),
        ("a == 1.", [], 7, "expected AND, OR or the end of input, found \".\""),
        ("a == 1 😀", [], 8, "expected AND, OR or the end of input, found \"😀\""),
        ("a == 1 🇫🇷", [], 8, "expected AND, OR or the end of input, found \"🇫🇷\""),
        ("a ==\u{301} 1", [], 4, "expected a value after \"==\", found \"\u{301}\""),
        ("é == 'x' \u{301}", [], 9, "expected AND, OR or the end of input, found \"\u{301}\""),
        // BETWEEN and IN
        ("age BETWEEN 1", [], 13, "expected 2 values {lower, upper} after \"BETWEEN\", found 1"),
        ("age BETWEEN {1}", [], 13, "expected 2 values {lower, upper} after \"BETWEEN\", found {1}"),
        ("age between {1, 2, 3}", [], 13, "expected 2 values {lower, upper} after \"between\", found {1, 2, 3}"),
        ("age BETWEEN %@", [[1]], 13, "expected 2 values {lower, upper} after \"BETWEEN\", found {1}"),
        ("age IN", [], 7, "expected a value after \"IN\", found end of input"),
        // Lists
        ("{1, 2", [], 6, "expected \",\" or \"}\" to close \"{\" at column 1, found end of input"),
        ("a IN {1,}", [], 9, "expected a value after \",\", found \"}\""),
        ("a IN {1 2}", [], 9, "expected \",\" or \"}\" to close \"{\" at column 6, found \"2\""),
        // Strings
        ("name == 'abc", [], 13, "expected ' to close the string that starts at column 9, found end of input"),
        ("name == \"a\\q\"", [], 11, "expected an escape sequence such as \\n, \\t, \\\\, \\\", \\' or \\uXXXX, found \"\\q\""),
        ("a == 'x\\", [], 9, "expected an escape sequence after \"\\\", found end of input"),
        ("a == '\\u12'", [], 11, "expected 4 hexadecimal digits after \"\\u\", found \"'\""),
        ("a == '\\uD83D'", [], 13, "expected a low surrogate \\uDC00 to \\uDFFF after \"\\uD83D\", found \"'\""),
        ("a == '\\uD83D\\u0041'", [], 13, "expected a low surrogate \\uDC00 to \\uDFFF after \"\\uD83D\", found \"\\u0041\""),
        ("a == '\\uDE00'", [], 7, "expected a Unicode scalar value, found the lone surrogate \"\\uDE00\""),
        // Options
        ("name ==[x] 'a'", [], 9, "expected c, d or n in the comparison options, found \"x\""),
        ("name ==[] 'a'", [], 9, "expected c, d or n in the comparison options, found \"]\""),
        ("name ==[c 'a'", [], 10, "expected c, d, n or \"]\" in the comparison options, found \" \""),
        ("name ==[c", [], 10, "expected \"]\" to close \"[\" at column 8, found end of input"),
        // Modifiers and key paths
        ("ANY", [], 4, "expected a key path after \"ANY\", found end of input"),
        ("any 5 == 1", [], 5, "expected a key path after \"any\", found \"5\""),
        ("ANY books.@count > 1", [], 5, "expected a key path after \"ANY\", found \"books.@count\""),
        (
            "@count > 1", [], 1,
            "expected a predicate, found \"@count\" (a collection operator follows a to-many key path, as in \"items.@count\")"
        ),
        (
            "a == @count", [], 6,
            "expected a value after \"==\", found \"@count\" (a collection operator follows a to-many key path, as in \"items.@count\")"
        ),
        ("books.@foo > 1", [], 7, "expected a collection operator (@count, @sum, @avg, @min or @max), found \"@foo\""),
        ("books.@Count > 1", [], 7, "expected a collection operator (@count, @sum, @avg, @min or @max), found \"@Count\""),
        ("books. > 1", [], 8, "expected a key after \"books.\", found \">\""),
        ("books.@count.pages > 1", [], 13, "expected a comparison operator after \"books.@count\", found \".\""),
        ("books.@sum.@count > 1", [], 12, "expected a key after \"books.@sum.\", found \"@count\""),
        ("SELF.@count > 1", [], 6, "expected a key after \"SELF.\", found \"@count\""),
        ("# == 1", [], 2, "expected a key name after \"#\", found \" \""),
        ("a.@ > 1", [], 4, "expected a collection operator name after \"@\", found \" \""),
        ("$", [], 2, "expected a variable name after \"$\", found end of input"),
        ("a == $1", [], 7, "expected a variable name after \"$\", found \"1\""),
        // Numbers
        ("age == 0x", [], 10, "expected hexadecimal digits after \"0x\", found end of input"),
        ("age == 0b2", [], 10, "expected binary digits after \"0b\", found \"2\""),
        ("1e", [], 3, "expected digits in the exponent of \"1e\", found end of input"),
        ("a == 1e+", [], 9, "expected digits in the exponent of \"1e+\", found end of input"),
        ("a == 12abc", [], 6, "expected a number, found \"12abc\""),
        ("a == 0b102", [], 6, "expected a number, found \"0b102\""),
        (
            "a == 99999999999999999999", [], 6,
            "expected an integer between -9223372036854775808 and 9223372036854775807, found \"99999999999999999999\""
        ),
        (
            "a == -9223372036854775809", [], 6,
            "expected an integer between -9223372036854775808 and 9223372036854775807, found \"-9223372036854775809\""
        ),
        (
            "a == 0x10000000000000000", [], 6,
            "expected an integer between -9223372036854775808 and 9223372036854775807, found \"0x10000000000000000\""
        ),
        // CAST
        ("a == CAST 1", [], 11, "expected \"(\" after \"CAST\", found \"1\""),
        ("a == CAST(x, 'NSDate')", [], 11, "expected a string or number to cast, found \"x\""),
        ("a == CAST(1", [], 12, "expected \",\" after the value to cast, found end of input"),
        ("a == CAST(1, NSDate)", [], 14, "expected a type name such as \"NSDate\", found \"NSDate\""),
        (
            "a == CAST(1, 'NSFoo')", [], 14,
            "expected one of the type names \"NSDate\", \"NSUUID\", \"NSData\", \"NSDecimalNumber\", \"NSURL\", \"Float\" or \"ObjectID\", found 'NSFoo'"
        ),
        (
            "author == CAST('1:x', 'ObjectID')", [], 16,
            "expected an object ID such as \"0:42\" (entity:key) to cast to \"ObjectID\", found '1:x'"
        ),
        ("a == CAST(1, 'NSDate'", [], 22, "expected \")\" to close \"CAST(\" at column 6, found end of input"),
        ("a == CAST('x', 'NSUUID')", [], 11, "expected a UUID string to cast to \"NSUUID\", found 'x'"),
        ("a == CAST('x', 'NSDate')", [], 11, "expected a number of seconds since 2001-01-01 to cast to \"NSDate\", found 'x'"),
        ("a == CAST('12.5kg', 'NSDecimalNumber')", [], 11, "expected a decimal number to cast to \"NSDecimalNumber\", found '12.5kg'"),
        ("a == CAST('@@', 'NSData')", [], 11, "expected a base64 string to cast to \"NSData\", found '@@'"),
        // Format specifiers and arguments
        ("%@ == 1", [], 1, "expected argument 1 for %@, found no arguments"),
        ("a == %d AND b == %d", [1], 18, "expected argument 2 for %d, found only 1 argument"),
        ("a == %d", [1, 2], 8, "expected 1 argument for the format's specifiers, found 2: argument 2 (Int) has no specifier"),
        ("a == 1", ["x"], 7, "expected no arguments for the format's specifiers, found 1: argument 1 (String) has no specifier"),
        ("a == %@", [1, 2, 3], 8, "expected 1 argument for the format's specifiers, found 3: arguments 2 to 3 have no specifier"),
        ("%K == 1", [5], 1, "expected a string naming a key path for %K (argument 1), found Int"),
        ("%K == 1", ["first name"], 1, "expected a key path such as \"author.name\" for %K (argument 1), found \"first name\""),
        ("%K == 1", ["@count"], 1, "expected a key path such as \"author.name\" for %K (argument 1), found \"@count\""),
        ("%K == 1", ["books.@count.x"], 1, "expected a key path such as \"author.name\" for %K (argument 1), found \"books.@count.x\""),
        ("%K == 1", ["a..b"], 1, "expected a key path such as \"author.name\" for %K (argument 1), found \"a..b\""),
        ("%d == 1", ["x"], 1, "expected an integer for %d (argument 1), found String"),
        ("a == %d", [1.5], 6, "expected an integer for %d (argument 1), found Double"),
        ("a == %d", [Int?.none], 6, "expected an integer for %d (argument 1), found nil (Optional<Int>)"),
        ("a == %lld", [[1]], 6, "expected an integer for %lld (argument 1), found Array<Int>"),
        ("a == %f", ["x"], 6, "expected a number for %f (argument 1), found String"),
        ("a == %f", [Value.boolean(true)], 6, "expected a number for %f (argument 1), found Value.boolean"),
        ("a == %lf", [Double.nan], 6, "expected a number for %lf (argument 1), found NaN (Double)"),
        ("a == %@", [Value.double(.nan)], 6, "expected a number for %@ (argument 1), found NaN (Value.double)"),
        ("a == %u", [UInt.max], 6, "expected an integer up to 9223372036854775807 for %u (argument 1), found 18446744073709551615 (UInt)"),
        (
            "a IN %@", [[UInt64(1), UInt64.max]], 6,
            "expected an integer up to 9223372036854775807 for %@ (argument 1), found 18446744073709551615 (Array<UInt64>)"
        ),
        ("a == %x", [], 6, "expected a format specifier such as %@, %K, %d or %f, found \"%x\""),
        ("a == %", [], 6, "expected a format specifier such as %@, %K, %d or %f, found \"%\""),
        // Nesting
        (deepParentheses, [], 101, "expected at most 100 levels of nesting, found more at \"(\""),
        (deepNots, [], 401, "expected at most 100 levels of nesting, found more at \"NOT\""),
        (deepLists, [], 106, "expected at most 100 levels of nesting, found more at \"{\""),
        (deepMixture, [], 256, "expected at most 100 levels of nesting, found more at \"{\"")
    ]

    static let substitutionErrors: [(format: String, variables: [String: any PredicateArgument], column: Int, message: String, description: String)] = [
        ("age > $min", [:], 7, "expected a value for $min, found no variables", "age > $min"),
        ("age > $min", ["max": 1, "avg": 2], 7, "expected a value for $min, found only $avg, $max", "age > $min"),
        ("age BETWEEN $r", ["r": 5], 13, "expected 2 values {lower, upper} for $r after \"BETWEEN\", found 5", "age BETWEEN $r"),
        ("x == $v", ["v": Double.nan], 6, "expected a number for $v, found NaN (Double)", "x == $v"),
        ("x == $v", ["v": UInt64.max], 6, "expected an integer up to 9223372036854775807 for $v, found 18446744073709551615 (UInt64)", "x == $v"),
        ("name == 'é😀' AND x == $v", [:], 23, "expected a value for $v, found no variables", "name == \"é😀\" AND x == $v"),
        ("x=='a' || #in <> $v", [:], 20, "expected a value for $v, found no variables", "x == \"a\" OR #in != $v")
    ]
}
