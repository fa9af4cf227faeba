import Foundation

/// The versions of an Xcode model bundle (`.xcdatamodeld`), oldest first, and which one is
/// current.
///
/// ```swift
/// let bundle = try XcodeModelBundle(at: "Models/Library.xcdatamodeld")
/// for warning in bundle.warnings { print("warning:", warning) }
/// let options = bundle.migrationOptions()    // lets a store migrate v1 → v2 → v3
/// let store = try Store(at: url, model: bundle.current, options: options)
/// ```
///
/// A version that cannot be read (one in Xcode's old binary format, or one with a problem the
/// current version does not have) does not stop the others from loading: it is listed in
/// ``unreadableVersions`` with the reason, and named in ``warnings``. Only the current version
/// must be readable; a migration that must pass through an unreadable version fails, naming it.
public struct XcodeModelBundle: Sendable {
    /// One version of the model.
    public struct Version: Sendable {
        /// Its name, without `.xcdatamodel` (`Library 2`).
        public var name: String
        /// The model.
        public var model: Model
    }

    /// A version that could not be read.
    public struct UnreadableVersion: Sendable {
        /// Its name, without `.xcdatamodel`.
        public var name: String
        /// The number of readable versions before it in ``XcodeModelBundle/versions``.
        public var position: Int
        /// Why it could not be read (with the file, and for XML the line, at fault).
        public var problem: ModelError
    }

    /// The versions that could be read, in the order of their names read as numbers
    /// (`Library`, `Library 2`, `Library 10`): the order in which Xcode users add them.
    public let versions: [Version]
    /// The versions that could not be read, in the same order.
    public let unreadableVersions: [UnreadableVersion]
    /// The name of the current version: the one `.xccurrentversion` names, or the only one.
    public let currentVersionName: String

    /// The current version's model.
    public var current: Model { versions.first { $0.name == currentVersionName }?.model ?? versions[versions.count - 1].model }

    /// One line per thing a readable version says that Cairn loaded otherwise than written (each
    /// version's ``Model/warnings``, naming its file and line), then one per version that could
    /// not be read, saying why.
    public var warnings: [String] {
        versions.flatMap { $0.model.warnings.map(\.description) }
            + unreadableVersions.map { "model version \($0.name) is not loaded: \($0.problem)" }
    }

    /// The model of the version with this name (with or without `.xcdatamodel`); nil when the
    /// bundle has no such version or it could not be read.
    public func model(version name: String) -> Model? {
        let bare = Self.bareName(name)
        return versions.first { $0.name == bare }?.model
    }

    /// `options` with the bundle's versions as ``StoreOptions/modelVersions`` and its unreadable
    /// ones as ``StoreOptions/unreadableModelVersions``.
    public func migrationOptions(_ options: StoreOptions = StoreOptions()) -> StoreOptions {
        var options = options
        options.modelVersions = versions.map(\.model)
        options.unreadableModelVersions = unreadableVersions.map { UnreadableModelVersion(name: $0.name, position: $0.position, problem: $0.problem) }
        return options
    }

    /// Reads every version of a bundle.
    ///
    /// - Throws: ``ModelError`` naming the file (and line) at fault: a bundle without versions,
    ///   a `.xccurrentversion` that names a missing version or that does not parse, a current
    ///   version that does not load.
    public init(at path: String) throws(ModelError) {
        let manager = FileManager.default
        let names: [String]
        do {
            names = try manager.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".xcdatamodel") }
        } catch {
            throw ModelError(.invalidFormat, "cannot read the model bundle: \(error.localizedDescription)", file: path)
        }
        guard !names.isEmpty else { throw ModelError(.invalidFormat, "the bundle holds no .xcdatamodel version", file: path) }
        let ordered = names.map(Self.bareName).sorted { $0.compare($1, options: .numeric) == .orderedAscending }
        let currentFile = path + "/.xccurrentversion"
        let current: String
        if manager.fileExists(atPath: currentFile) {
            current = try Self.currentVersionName(in: currentFile)
            guard ordered.contains(current) else {
                throw ModelError(
                    .invalidFormat, "the current version \(current) is not in the bundle (it has \(ordered.joined(separator: ", ")))",
                    file: currentFile)
            }
        } else if ordered.count == 1 {
            current = ordered[0]
        } else {
            throw ModelError(.invalidFormat, "the bundle has \(ordered.count) versions and no .xccurrentversion naming the current one", file: path)
        }
        var versions: [Version] = []
        var unreadable: [UnreadableVersion] = []
        for name in ordered {
            do {
                versions.append(Version(name: name, model: try Self.readVersion(path + "/" + name + ".xcdatamodel")))
            } catch {
                // The version asked for must load; another one is reported and skipped.
                if name == current { throw error }
                unreadable.append(UnreadableVersion(name: name, position: versions.count, problem: error))
            }
        }
        self.versions = versions
        self.unreadableVersions = unreadable
        currentVersionName = current
    }

    /// Reads one version folder: its `contents` XML. A folder with Xcode's old binary files
    /// (`elements`, `layout`) and no `contents` is refused as such.
    static func readVersion(_ folder: String) throws(ModelError) -> Model {
        let manager = FileManager.default
        let contents = folder + "/contents"
        if !manager.fileExists(atPath: contents), manager.fileExists(atPath: folder + "/elements") || manager.fileExists(atPath: folder + "/layout") {
            throw ModelError(
                .unsupportedFormat,
                "the version is in Xcode's old binary format (elements and layout files, no contents); open the model in Xcode and save it to convert it to XML",
                file: folder)
        }
        return try Model(xcodeModelAt: contents)
    }

    private static func currentVersionName(in file: String) throws(ModelError) -> String {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ModelError(.invalidFormat, "cannot read the file", file: file)
        }
        let plist: Any
        do {
            plist = try PropertyListSerialization.propertyList(from: data, format: nil)
        } catch {
            throw ModelError(.invalidFormat, "not a property list: \(error.localizedDescription)", file: file)
        }
        guard let name = (plist as? [String: Any])?["_XCCurrentVersionName"] as? String, !name.isEmpty else {
            throw ModelError(.invalidFormat, "no _XCCurrentVersionName string", file: file)
        }
        return bareName(name)
    }

    static func bareName(_ name: String) -> String {
        name.hasSuffix(".xcdatamodel") ? String(name.dropLast(".xcdatamodel".count)) : name
    }
}

extension Model {
    /// Loads a model from a file or folder in any form Cairn reads: an Xcode bundle
    /// (`.xcdatamodeld`: its current version, or `version`), an Xcode version folder
    /// (`.xcdatamodel`), the `contents` XML inside one, or Cairn's JSON model format.
    ///
    /// - Throws: ``ModelError`` naming the file, and for XML the line and element at fault.
    public init(contentsOf path: String, version: String? = nil) throws(ModelError) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw ModelError(.invalidFormat, "no such file or folder", file: path)
        }
        if isFolder.boolValue {
            let manager = FileManager.default
            // One version folder: its contents (or the reason it has none).
            if manager.fileExists(atPath: path + "/contents") || path.hasSuffix(".xcdatamodel")
                || manager.fileExists(atPath: path + "/elements") || manager.fileExists(atPath: path + "/layout")
            {
                self = try XcodeModelBundle.readVersion(path)
                return
            }
            guard let version else {
                self = try XcodeModelBundle(at: path).current
                return
            }
            // The version asked for is read alone: another version's problem, the current one's
            // included, does not stop it.
            let folder = path + "/" + XcodeModelBundle.bareName(version) + ".xcdatamodel"
            var isVersionFolder: ObjCBool = false
            guard manager.fileExists(atPath: folder, isDirectory: &isVersionFolder), isVersionFolder.boolValue else {
                let names = ((try? manager.contentsOfDirectory(atPath: path)) ?? []).filter { $0.hasSuffix(".xcdatamodel") }
                    .map(XcodeModelBundle.bareName).sorted { $0.compare($1, options: .numeric) == .orderedAscending }
                throw ModelError(.invalidFormat, "no version named \(version) (the bundle has \(names.joined(separator: ", ")))", file: path)
            }
            self = try XcodeModelBundle.readVersion(folder)
            return
        }
        let data = try Self.read(path)
        if data.first(where: { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }) == UInt8(ascii: "{") {
            do {
                self = try Model(jsonData: data)
            } catch var error as ModelError {
                error.file = path
                throw error
            } catch {
                throw ModelError(.invalidFormat, "\(error)", file: path)
            }
        } else {
            self = try Model(xcodeModelXML: data, file: path)
        }
    }

    /// Loads the `contents` XML of one Xcode model version.
    init(xcodeModelAt path: String) throws(ModelError) {
        self = try Model(xcodeModelXML: try Self.read(path), file: path)
    }

    /// The largest model file read: real ones are a few hundred KiB.
    static let maximumFileSize = 64 << 20

    private static func read(_ path: String) throws(ModelError) -> Data {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        guard attributes?[.type] as? FileAttributeType == .typeRegular else {
            throw ModelError(.invalidFormat, "not a regular file", file: path)
        }
        if let size = attributes?[.size] as? Int, size > maximumFileSize {
            throw ModelError(.invalidFormat, "the file has \(size) bytes; a model file has at most \(maximumFileSize)", file: path)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ModelError(.invalidFormat, "cannot read the file", file: path)
        }
        return data
    }
}
