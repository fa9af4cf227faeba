import Foundation

/// The versions of an Xcode model bundle (`.xcdatamodeld`), oldest first, and which one is
/// current.
///
/// ```swift
/// let bundle = try XcodeModelBundle(at: "Models/Library.xcdatamodeld")
/// var options = StoreOptions()
/// options.modelVersions = bundle.versions.map(\.model)   // lets a store migrate v1 → v2 → v3
/// let store = try Store(at: url, model: bundle.current, options: options)
/// ```
public struct XcodeModelBundle: Sendable {
    /// One version of the model.
    public struct Version: Sendable {
        /// Its name, without `.xcdatamodel` (`Library 2`).
        public var name: String
        /// The model.
        public var model: Model
    }

    /// The versions, in the order of their names read as numbers (`Library`, `Library 2`,
    /// `Library 10`): the order in which Xcode users add them.
    public let versions: [Version]
    /// The name of the current version: the one `.xccurrentversion` names, or the only one.
    public let currentVersionName: String

    /// The current version's model.
    public var current: Model { versions.first { $0.name == currentVersionName }?.model ?? versions[versions.count - 1].model }

    /// The model of the version with this name (with or without `.xcdatamodel`).
    public func model(version name: String) -> Model? {
        let bare = Self.bareName(name)
        return versions.first { $0.name == bare }?.model
    }

    /// Reads every version of a bundle.
    ///
    /// - Throws: ``ModelError`` naming the file (and line) at fault: a bundle without versions,
    ///   a `.xccurrentversion` that names a missing version or that does not parse, a version
    ///   that does not load.
    public init(at path: String) throws(ModelError) {
        let manager = FileManager.default
        let names: [String]
        do {
            names = try manager.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".xcdatamodel") }
        } catch {
            throw ModelError(.invalidFormat, "cannot read the model bundle: \(error.localizedDescription)", file: path)
        }
        guard !names.isEmpty else { throw ModelError(.invalidFormat, "the bundle holds no .xcdatamodel version", file: path) }
        var versions: [Version] = []
        for name in names.map(Self.bareName).sorted(by: { $0.compare($1, options: .numeric) == .orderedAscending }) {
            let contents = path + "/" + name + ".xcdatamodel/contents"
            versions.append(Version(name: name, model: try Model(xcodeModelAt: contents)))
        }
        self.versions = versions
        let currentFile = path + "/.xccurrentversion"
        if manager.fileExists(atPath: currentFile) {
            let current = try Self.currentVersionName(in: currentFile)
            guard versions.contains(where: { $0.name == current }) else {
                throw ModelError(
                    .invalidFormat, "the current version \(current) is not in the bundle (it has \(versions.map(\.name).joined(separator: ", ")))",
                    file: currentFile)
            }
            currentVersionName = current
        } else if versions.count == 1 {
            currentVersionName = versions[0].name
        } else {
            throw ModelError(.invalidFormat, "the bundle has \(versions.count) versions and no .xccurrentversion naming the current one", file: path)
        }
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
            if FileManager.default.fileExists(atPath: path + "/contents") {
                self = try Model(xcodeModelAt: path + "/contents")
                return
            }
            let bundle = try XcodeModelBundle(at: path)
            guard let version else { self = bundle.current; return }
            guard let model = bundle.model(version: version) else {
                throw ModelError(
                    .invalidFormat, "no version named \(version) (the bundle has \(bundle.versions.map(\.name).joined(separator: ", ")))", file: path)
            }
            self = model
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
