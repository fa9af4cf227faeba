import ArgumentParser
import Cairn
import CairnLog
import CairnMapping
import Foundation

/// `cairn import STORE [--entity NAME] [--django] [--discriminator KEY] [INPUT|-] [--mapping FILE] [--model MODEL] [--root KEYPATH]
/// [--insert-missing-references]
/// [--lenient] [--allow-trailing-commas] [--chunk N] [--skip N] [--json]`.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import JSON records into objects, updating those with the same unique key.",
        discussion: """
            The input is a JSON array, one object, JSON Lines, or any of these under --root. \
            Without --mapping, the model's userInfo (WTAData, Modelmatic, MagicalRecord, Groot, \
            Sync, Cairn keys) and default keys say how JSON maps; docs/MAPPING.md.

            The import is one save: all or nothing. With --chunk N it saves every N records; \
            after a failure it says how many records were saved: run again with --skip N.

            A file of several entities needs no --entity: --django reads a Django fixture \
            ("model": "app.album", "pk", "fields"), --discriminator KEY names each record's \
            entity by KEY's value; references by key resolve in any order of the records.

            Shows progress on standard error when it is a terminal.

            Examples:
              cairn import people.store --entity Person people.json \\
                  --model People.xcdatamodeld
              curl -s https://example.com/api/people \\
                  | cairn import people.store --entity Person --root data.people -
              cairn import chinook.store --django chinook.json --model Chinook.json
            """
    )

    @Argument(help: "The store's directory (created from --model when it does not exist).")
    var store: String

    @Argument(help: "The JSON file, or - for standard input (the default).")
    var input: String = "-"

    @Option(help: "The entity of the top-level records (optional with --django or --discriminator: each record names its own).")
    var entity: String?

    @Flag(help: "Read a Django fixture: \"model\": \"app.name\" names each record's entity, \"pk\" its unique key, \"fields\" the rest.")
    var django = false

    @Option(parsing: .unconditional, help: "The key whose value names each record's entity (the name, any case, an app. prefix dropped).")
    var discriminator: String?

    @Flag(help: "Make an object holding only its key for a key that names no object (a reference, or a record given as a key).")
    var insertMissingReferences = false

    @Option(parsing: .unconditional, help: "A JSON mapping file (docs/MAPPING.md).")
    var mapping: String?

    @Option(parsing: .unconditional, help: "The model, for a store that does not exist yet (a JSON model or an Xcode model).")
    var model: String?

    @Option(parsing: .unconditional, help: "The dotted key path of the records inside the input: --root data.people.")
    var root: String?

    @Flag(help: "Set values that do not fit to nil (and skip records without their key), with warnings, instead of failing.")
    var lenient = false

    @Flag(help: "Read a comma that ends an array or an object ([1,2,], {\"a\":1,}), as Apple's JSONSerialization does.")
    var allowTrailingCommas = false

    @Option(parsing: .unconditional, help: "Save every N records instead of once.")
    var chunk: Int?

    @Option(parsing: .unconditional, help: "Pass over the first N records (to resume a chunked import).")
    var skip: Int = 0

    @Flag(help: "Print the result as JSON.")
    var json = false

    func validate() throws {
        if entity == nil && !django && discriminator == nil && mapping == nil {
            throw ValidationError("give --entity, or --django, --discriminator or a mapping file's discriminator for records that name their entity")
        }
        if let chunk, chunk < 1 { throw ValidationError("--chunk takes 1 or more, not \(chunk)") }
        guard skip >= 0 else { throw ValidationError("--skip takes 0 or more, not \(skip)") }
    }

    func run() async throws {
        // Only a store that is not there is created; a store that does not open (damaged, locked,
        // written by a newer Cairn) fails with its own error.
        try StoreLocation.requireFolderOrNothing(store)
        if model == nil { try StoreLocation.requireFolder(store, hint: "give --model to create one") }
        let storedModel = try existingModel(at: store)
        let chosen: Model
        if let storedModel {
            // An existing store keeps its model: an import never migrates it.
            if let model, try loadModel(model, version: nil) != storedModel {
                throw CommandFailure(
                    "\(store) holds another model than \(model); cairn import does not migrate a store (open it with the new model in your app, or import into a new store)"
                )
            }
            chosen = storedModel
        } else if let model {
            chosen = try loadModel(model, version: nil)
        } else {
            throw ValidationError("\(store) holds no store yet: give --model to create it")
        }
        var mapping = try commandMapping(self.mapping, model: chosen, entity: entity)
        if django || discriminator != nil {
            // A --discriminator naming the mapping file's key keeps the file's table of values.
            let given = discriminator.map { key in mapping.discriminator?.key == key ? mapping.discriminator : EntityDiscriminator(key: key) }
            do {
                mapping = try mapping.with(layout: django ? .django : mapping.layout, discriminator: given ?? mapping.discriminator)
            } catch {
                throw ValidationError("\(error)")
            }
        }
        if entity == nil && mapping.discriminator == nil {
            throw ValidationError("give --entity, or --django, --discriminator or a mapping file's discriminator for records that name their entity")
        }
        let opened = try Store(at: store, model: chosen)
        RecoveryWarning.print(opened.recoveryReport, store: store)
        var options = ImportOptions()
        options.lenient = lenient
        options.allowsTrailingCommas = allowTrailingCommas
        options.root = root
        options.insertsMissingReferences = insertMissingReferences
        options.chunkSize = chunk
        options.skipRecords = skip
        let meter = ProgressMeter()
        options.progressInterval = 5_000
        options.progress = { progress in
            let total = progress.totalBytes ?? 0
            let left = progress.remaining.map { " \(Int($0.rounded(.up))) s left" } ?? ""
            meter.report(
                fraction: total > 0 ? Double(progress.bytes) / Double(total) : 0,
                "\(Formatting.bytes(progress.bytes)) of \(Formatting.bytes(total)), \(progress.records) records, "
                    + "\(Int(progress.recordsPerSecond)) records/s\(left)")
        }
        let started = ContinuousClock.now
        let result: ImportResult
        do {
            // Standard input redirected from a file is mapped like a file; a pipe or a device is
            // read in pieces into a temporary file, each checked as JSON as it comes (InputSpool).
            let path = input == "-" ? "/dev/stdin" : input
            result = try await opened.importJSON(contentsOf: URL(fileURLWithPath: path), into: entity, mapping: mapping, options: options)
        } catch {
            meter.finish()
            try? await opened.close()
            if let failure = error as? ImportError {
                throw CommandFailure(
                    "\(failure.underlying)\n\(failure.committedRecords) records were saved; run again with --skip \(failure.committedRecords) to resume")
            }
            throw error
        }
        meter.finish()
        try await opened.close()
        let elapsed = ContinuousClock.now - started
        for warning in result.warnings.prefix(50) { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
        if result.warnings.count > 50 { FileHandle.standardError.write(Data("warning: … and \(result.warnings.count - 50) more\n".utf8)) }
        if json {
            print(
                "{\"inserted\":\(result.inserted),\"updated\":\(result.updated),\"unchanged\":\(result.unchanged),\"deleted\":\(result.deleted),"
                    + "\"warnings\":\(result.warnings.count),\"records\":\(result.records),\"saves\":\(result.saves),\"bytes\":\(result.bytes)}")
        } else {
            print(
                "inserted \(result.inserted), updated \(result.updated), unchanged \(result.unchanged), deleted \(result.deleted), "
                    + "warnings \(result.warnings.count) (\(result.records) records, \(result.saves) saves, \(Formatting.duration(elapsed)))")
        }
    }
}
