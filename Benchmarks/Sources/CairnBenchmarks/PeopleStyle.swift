/// How the import benchmarks' people are typed and written: the import suite's model (a
/// `Double` score, ISO 8601 dates), or as apps model them (a `Decimal` money score with two
/// decimals, a birth date written `yyyy-MM-dd` and read through a WTAData `DateFormat` userInfo
/// key). Each peer is told the same types.
enum PeopleStyle: Sendable {
    case benchmark
    case app

    /// The style whose GRDB peer is this binary's `command` (`grdb-import`, `grdb-import-app`).
    init?(grdbCommand command: String?) {
        switch command {
        case "grdb-import": self = .benchmark
        case "grdb-import-app": self = .app
        default: return nil
        }
    }

    /// This binary's subcommand that imports the people with GRDB.
    var grdbCommand: String { self == .benchmark ? "grdb-import" : "grdb-import-app" }

    /// What the rows' and targets' names add.
    var label: String { self == .benchmark ? "" : " (app-style people: Decimal score, yyyy-MM-dd born)" }

    /// The model file's name.
    var modelFileName: String { self == .benchmark ? "person-model.json" : "person-app-model.json" }

    /// The SQL type of the score (GRDB stores a `Decimal` as text).
    var grdbScoreType: String { self == .benchmark ? "DOUBLE" : "TEXT" }

    /// The arguments after the file and database of `peers/sqlite3-import.sh` (the score's type).
    var sqliteArguments: [String] { self == .benchmark ? [] : ["NUMERIC"] }

    /// The arguments after the file and database of `peers/duckdb-import.py` (the score's and
    /// the birth date's types).
    var duckDBArguments: [String] { self == .benchmark ? [] : ["DECIMAL(18,2)", "DATE"] }
}
