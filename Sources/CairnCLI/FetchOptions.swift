import ArgumentParser
import Cairn
import Foundation

/// What `cairn query` and `cairn export` fetch: the store, the entity, `--where` and `--sort`.
struct FetchOptions: ParsableArguments {
    @Argument(help: "The store's directory.")
    var store: String

    @Option(help: "The entity to fetch (its sub-entities included).")
    var entity: String

    // The options whose value may begin with `-` take the next argument whatever it is, so
    // that `--where "-5 < year"` and `--sort -year` work as typed (and a negative number
    // reaches the command's checks instead of passing for an option).
    @Option(name: .customLong("where"), parsing: .unconditional, help: "A predicate in NSPredicate's format syntax.")
    var predicate: String?

    @Option(parsing: .unconditional, help: "Sort keys separated by commas; a leading - sorts descending, a trailing ~ ignores case: --sort -year,name~.")
    var sort: String?

    /// The request the options describe; a `--where` that does not parse is wrong usage.
    func request(offset: Int = 0, limit: Int? = nil) throws -> FetchRequest {
        var request = FetchRequest(entity, sortKeys: Self.sortKeys(sort), fetchOffset: offset, fetchLimit: limit)
        if let predicate {
            do {
                request.predicate = try FetchPredicate(format: predicate)
            } catch {
                throw ValidationError("--where: \(error)")
            }
        }
        return request
    }

    /// `--sort`'s keys: `-year,name~` is year descending, then name ascending ignoring case.
    static func sortKeys(_ text: String?) -> [SortKey] {
        (text ?? "").split(separator: ",").map { part in
            var key = part.trimmingCharacters(in: .whitespaces)
            let descending = key.hasPrefix("-")
            if descending { key.removeFirst() }
            let caseInsensitive = key.hasSuffix("~")
            if caseInsensitive { key.removeLast() }
            return SortKey(key, ascending: !descending, caseInsensitive: caseInsensitive)
        }
    }
}
