import ArgumentParser
import Cairn
import CairnLog
import Foundation

/// A model file in any form `Model(contentsOf:version:)` reads, with one warning line on
/// standard error per thing it says that Cairn loaded otherwise than written (`Model.warnings`;
/// for an Xcode bundle's current version, every version's, and each version that could not be
/// read).
func loadModel(_ path: String, version: String?) throws -> Model {
    var isFolder: ObjCBool = false
    guard version == nil, path.hasSuffix(".xcdatamodeld") || path.hasSuffix(".xcdatamodeld/"),
        FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue
    else {
        let model = try Model(contentsOf: path, version: version)
        for warning in model.warnings { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
        return model
    }
    let bundle = try XcodeModelBundle(at: path)
    for warning in bundle.warnings { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
    return bundle.current
}

/// The model of the store at `path`; nil when there is no store there yet: no folder, or one
/// with no manifest and no file of Cairn's holding bytes. A folder whose store lost its
/// manifest (a base, a dictionary, a segment with frames… are there) is refused, naming them;
/// any other failure (a damaged store…) is thrown as it is.
func existingModel(at path: String) throws -> Model? {
    do {
        return try Store.storedModel(at: path)
    } catch LogError.Code.notFound {
        let layout = StoreLayout(directory: path)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        let orphaned = UnlistedFile.storeFilesWithoutManifest(names: names, layout: layout, io: PosixFileIO())
        guard orphaned.isEmpty else { throw UnlistedFile.refusalWithoutManifest(orphaned, layout: layout) }
        return nil
    }
}

/// `cairn create STORE --model MODEL`: a new, empty store with a model. A store already there
/// is left as it is: with the same model nothing changes, with another the command fails.
struct CreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "create", abstract: "Create a store with a model.")

    @Argument(help: "The store's directory.")
    var store: String

    // A path or a version name may begin with `-`: these options take the next argument
    // whatever it is.
    @Option(
        parsing: .unconditional,
        help: "The model: Cairn's JSON model format (docs/MODEL-FORMAT.md), an Xcode .xcdatamodeld bundle, a .xcdatamodel folder or its contents XML.")
    var model: String

    @Option(parsing: .unconditional, help: "For an .xcdatamodeld bundle: the version to use (default: the current one).")
    var modelVersion: String?

    func run() async throws {
        try StoreLocation.requireFolderOrNothing(store)
        let loaded = try loadModel(model, version: modelVersion)
        // An existing store is never migrated by create: the same model changes nothing, another
        // is refused.
        if let existing = try existingModel(at: store) {
            guard existing == loaded else {
                throw CommandFailure(
                    "\(store) already holds a store, written with another model; cairn create makes new stores and never migrates one (open it with the new model in your app)"
                )
            }
            print("\(store) already holds a store with this model; nothing changed")
            return
        }
        let opened = try Store(at: store, model: loaded)
        RecoveryWarning.print(opened.recoveryReport, store: store)
        try await opened.close()
        print("created \(store) with entities \(loaded.entities.map(\.name).joined(separator: ", "))")
    }
}

/// `cairn model STORE [--format json|xml]`: prints the model the store was written with; also
/// converts a model file (`cairn model --model Library.xcdatamodeld --format json`).
struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Print a store's model, or convert a model file, as Cairn's JSON model format or Xcode's contents XML.",
        usage: "cairn model (<store> | --model <model>) [<options>]"
    )

    /// The forms a model is printed in.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case json, xml
    }

    @Argument(help: "The store's directory (or give --model instead).")
    var store: String?

    @Option(parsing: .unconditional, help: "A model file to print instead of a store's: any form `create --model` takes.")
    var model: String?

    @Option(parsing: .unconditional, help: "For an .xcdatamodeld bundle: the version to print (default: the current one).")
    var modelVersion: String?

    @Option(help: "json (Cairn's model format) or xml (an Xcode model's contents file).")
    var format: Format = .json

    func validate() throws {
        guard (store == nil) != (model == nil) else { throw ValidationError("give either a store or --model") }
    }

    func run() throws {
        let loaded: Model
        if let model {
            loaded = try loadModel(model, version: modelVersion)
        } else {
            let store = store ?? ""
            try StoreLocation.requireFolder(store)
            guard let stored = try Store.storedModel(at: store) else { throw CommandFailure("\(store) holds no model yet") }
            loaded = stored
        }
        let data = format == .json ? loaded.jsonData() : try loaded.xcodeModelXML()
        print(String(decoding: data, as: UTF8.self), terminator: format == .json ? "\n" : "")
    }
}

/// `cairn dump STORE [--entity NAME]`: every object as one JSON line.
struct DumpCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Print every object as one JSON line: entity, object ID, attribute values, relationship targets."
    )

    @Argument(help: "The store's directory.")
    var store: String

    @Option(help: "Only objects of this entity (and its sub-entities).")
    var entity: String?

    @Option(name: .customLong("as-of"), help: "Read the store as it was after the save with this LSN (within the history compaction kept).")
    var asOf: UInt64?

    func run() async throws {
        try await withOpenedStore(at: store, options: readOnlyOptions(asOf: asOf)) { try dump($0, model: $0.model) }
    }

    /// Prints the objects, about 64 KiB at a time.
    private func dump(_ opened: Store, model: Model) throws {
        let context = opened.newBackgroundContext(name: "dump")
        let names =
            try entity.map { name -> [String] in
                guard let found = model.entity(named: name) else { throw ValidationError("the model has no entity \(name)") }
                return [found.name] + found.descendants.map { model.descriptions[$0].name }
            } ?? model.entities.map(\.name)
        var output = ""
        for name in names {
            for object in try context.fetch(FetchRequest(name, includesSubentities: false)) {
                output += try ObjectJSON.line(object, store: opened) + "\n"
                if output.utf8.count > 1 << 16 {
                    print(output, terminator: "")
                    output = ""
                }
            }
        }
        print(output, terminator: "")
    }
}
