import Cairn

/// A version of an app's typed model, as SwiftData's `VersionedSchema`: its classes, nested in
/// the type, each named as the entity it stands for.
///
/// ```swift
/// enum LibraryV2: VersionedSchema {
///     static let versionIdentifier = SchemaVersion(2, 0, 0)
///     static var models: [any ManagedModel.Type] { [Book.self] }
///     @Managed final class Book { @Attribute(originalName: "title") var name: String; init(name: String) { self.name = name } }
/// }
/// ```
public protocol VersionedSchema {
    /// The version's number.
    static var versionIdentifier: SchemaVersion { get }
    /// The version's classes.
    static var models: [any ManagedModel.Type] { get }
}

/// A model version's number: major, minor, patch.
public struct SchemaVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The parts of the number.
    public var major: Int, minor: Int, patch: Int

    /// A version number.
    public init(_ major: Int, _ minor: Int, _ patch: Int) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    /// Orders by major, then minor, then patch.
    public static func < (lhs: SchemaVersion, rhs: SchemaVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
    }

    /// The version as `1.2.0`.
    public var description: String { "\(major).\(minor).\(patch)" }
}

/// How a store written with an earlier version of the model becomes the latest, as SwiftData's
/// `SchemaMigrationPlan`: the versions, oldest first, and a stage from each to the next.
public protocol SchemaMigrationPlan {
    /// Every version, oldest first; the last is the app's.
    static var schemas: [any VersionedSchema.Type] { get }
    /// A stage from each version to the next.
    static var stages: [MigrationStage] { get }
}

/// One step of a migration plan.
public enum MigrationStage {
    /// A step Cairn infers (Core Data's lightweight migration): renames by `originalName`,
    /// added and removed attributes and relationships, optionality, new entities.
    case lightweight(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type)
}

extension Store {
    /// Opens (or creates) the store in `directory` for the latest version of a migration plan:
    /// a store written with an earlier version migrates through each later one in turn.
    ///
    /// - Throws: `StoreError.Code.invalidArgument` for a plan whose stages do not go from each
    ///   version to the next; otherwise as ``Store/init(at:for:options:)``, and
    ///   `StoreError.Code.cannotMigrate` for a step that would drop data
    ///   (`StoreOptions.allowsMigrationThatDropsData`).
    public convenience init(at directory: String, migrationPlan: any SchemaMigrationPlan.Type, options: StoreOptions = StoreOptions()) throws {
        let versions = migrationPlan.schemas
        guard let latest = versions.last else {
            throw StoreError(.invalidArgument, "the migration plan \(migrationPlan) lists no schema")
        }
        try Self.checkStages(of: migrationPlan)
        var options = options
        options.modelVersions = try versions.dropLast().map { try Model(for: $0.models) }
        try self.init(at: directory, for: latest.models, options: options)
    }

    private static func checkStages(of plan: any SchemaMigrationPlan.Type) throws {
        let versions = plan.schemas.map { ObjectIdentifier($0) }
        let names = plan.schemas.map { "\($0) \($0.versionIdentifier)" }
        for (index, version) in plan.schemas.enumerated().dropFirst() where version.versionIdentifier <= plan.schemas[index - 1].versionIdentifier {
            throw StoreError(.invalidArgument, "the migration plan \(plan) lists \(names[index]) after \(names[index - 1]): list the versions oldest first")
        }
        var steps = Set<Int>()
        for stage in plan.stages {
            switch stage {
            case .lightweight(let from, let to):
                guard let start = versions.firstIndex(of: ObjectIdentifier(from)), versions.firstIndex(of: ObjectIdentifier(to)) == start + 1 else {
                    throw StoreError(
                        .invalidArgument,
                        "the migration plan \(plan) has a stage from \(from) to \(to): a stage goes from a version of its schemas to the next one")
                }
                steps.insert(start)
            }
        }
        if let missing = (0..<max(0, versions.count - 1)).first(where: { !steps.contains($0) }) {
            throw StoreError(
                .invalidArgument, "the migration plan \(plan) has no stage from \(names[missing]) to \(names[missing + 1])")
        }
    }
}
