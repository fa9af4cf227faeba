import ArgumentParser
import Cairn
import CairnLog
import Foundation

/// `cairn query STORE --entity NAME [--where PREDICATE] [--sort key,-key2] [--offset N]
/// [--limit N] [--count] [--explain] [--format table|json|jsonl]`.
struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Fetch objects with an NSPredicate-style predicate, sorted and paged.",
        usage: "cairn query <store> --entity <entity> [<options>]",
        discussion: """
            Examples:
              cairn query library.store --entity Book \\
                  --where "year > 1900 AND author.name BEGINSWITH[c] 'j'" \\
                  --sort -year,title --limit 10
              cairn query library.store --entity Author --where "books.@count > 2" --count
            """
    )

    /// How results are printed.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json, jsonl
    }

    @OptionGroup var fetch: FetchOptions

    @Option(parsing: .unconditional, help: "How many objects to skip.")
    var offset: Int = 0

    @Option(parsing: .unconditional, help: "How many objects to print at most.")
    var limit: Int?

    @Flag(help: "Print only how many objects match.")
    var count = false

    @Flag(help: "Print how the query would be answered (the index it uses, or a scan).")
    var explain = false

    @Option(name: .customLong("as-of"), help: "Read the store as it was after the save with this LSN (within the history compaction kept).")
    var asOf: UInt64?

    @Option(help: "table, json (one array) or jsonl (one object per line).")
    var format: Format = .table

    func validate() throws {
        guard offset >= 0 else { throw ValidationError("--offset takes 0 or more, not \(offset)") }
        if let limit, limit < 0 { throw ValidationError("--limit takes 0 or more, not \(limit)") }
    }

    func run() async throws {
        print(try await withOpenedStore(at: fetch.store, options: readOnlyOptions(asOf: asOf), answer))
    }

    /// What the command prints.
    private func answer(_ opened: Store) throws -> String {
        let model = opened.model
        guard model.entity(named: fetch.entity) != nil else {
            throw ValidationError("the model has no entity \(fetch.entity) (it has \(model.entities.map(\.name).joined(separator: ", ")))")
        }
        let request = try fetch.request(offset: offset, limit: limit)
        let context = opened.newBackgroundContext(name: "query")
        // Planning checks the request against the model and nothing else: what it refuses (an
        // unknown key, a value of the wrong type) is wrong usage, not a failure of the store.
        let plan: String
        do {
            plan = try context.explain(request)
        } catch {
            throw ValidationError("\(error)")
        }
        if explain { return plan }
        if count { return String(try context.count(request)) }
        let objects = try context.fetch(request)
        switch format {
        case .jsonl: return try objects.map { try ObjectJSON.line($0, store: opened) }.joined(separator: "\n")
        case .json: return "[" + (try objects.map { try ObjectJSON.line($0, store: opened) }).joined(separator: ",\n") + "]"
        case .table:
            guard let fetched = opened.model.entity(named: fetch.entity) else { return try Self.table(objects, family: []) }
            return try Self.table(objects, family: [fetched] + fetched.descendants.map { opened.model.descriptions[$0] })
        }
    }

    /// The objects' attributes as aligned columns, with the object's key first: a column for
    /// each attribute of the entity fetched and of its sub-entities (`family`: the entity, then
    /// its descendants), blank for an object whose entity has no such attribute, and the
    /// object's entity after its key when the family has more than one entity. The key and
    /// entity columns are headed `id` and `entity`, or `object id` and `object entity` when an
    /// attribute has that name (an attribute's name has no space, so no two headers are alike).
    static func table(_ objects: [ManagedObject], family: [EntityDescription]) throws -> String {
        guard let first = objects.first else { return "(no objects)" }
        var names: [String] = []
        for entity in family.isEmpty ? [first.entity] : family {
            for attribute in entity.attributes where !attribute.isTransient && !names.contains(attribute.name) { names.append(attribute.name) }
        }
        let showsEntity = family.count > 1
        func header(_ name: String) -> String { names.contains(name) ? "object " + name : name }
        var rows = [[header("id")] + (showsEntity ? [header("entity")] : []) + names]
        for object in objects {
            rows.append(
                ["\(object.objectID.key)"] + (showsEntity ? [object.entity.name] : [])
                    + (try names.map { name in
                        guard object.entity.attributePosition(name) != nil else { return "" }
                        let value = try object.value(forKey: name, as: Value.self)
                        switch value {
                        case .string(let text): return text
                        case .date(let date): return DateText.iso8601(date)
                        case .null: return "∅"
                        default: return value.description
                        }
                    }))
        }
        let widths = rows[0].indices.map { column in min(40, rows.map { $0[column].count }.max() ?? 0) }
        func line(_ row: [String]) -> String {
            zip(row, widths).map { cell, width in
                let clipped = cell.count > width ? String(cell.prefix(width - 1)) + "…" : cell
                return clipped.padding(toLength: width, withPad: " ", startingAt: 0)
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
        var lines = [line(rows[0]), widths.map { String(repeating: "─", count: $0) }.joined(separator: "  ")]
        lines += rows.dropFirst().map(line)
        lines.append("(\(objects.count) object\(objects.count == 1 ? "" : "s"))")
        return lines.joined(separator: "\n")
    }
}
