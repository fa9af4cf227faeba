// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

/// Cairn: an embedded append-only log store with a Core Data-like object graph, for Swift on Linux.
///
/// Modules, each depending only on those before it:
/// `CLZ4` → `CairnLog` → `Cairn` → `CairnMapping` → `CairnModels` → `CairnCLI`, with
/// `CCairnSupport` and `CairnSupport` under both `CairnLog` and `Cairn`. `CairnModels` (typed
/// `@Managed` classes) is the only module that uses swift-syntax, through its macro target
/// `CairnModelsMacros`: an app that imports only `Cairn` never builds it. Each is described in a line at its target
/// below, and in docs/ARCHITECTURE.md ("Modules").
/// `CAIRN_INTERNAL_CHECKS=1 swift build|test` compiles in the invariant checks that run after
/// every mutation of Cairn's structures (docs/ARCHITECTURE.md, "Invariants"). Off by default, so
/// apps and benchmarks pay nothing.
let internalChecks: [SwiftSetting] = Context.environment["CAIRN_INTERNAL_CHECKS"] == "1" ? [.define("CAIRN_INTERNAL_CHECKS")] : []

let package = Package(
    name: "Cairn",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "CairnLog", targets: ["CairnLog"]),
        .library(name: "Cairn", targets: ["Cairn"]),
        .library(name: "CairnMapping", targets: ["CairnMapping"]),
        .library(name: "CairnModels", targets: ["CairnModels"]),
        .executable(name: "cairn", targets: ["CairnCLI"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
        // `swift package generate-documentation`: the DocC catalogs of Cairn, CairnMapping and CairnModels.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0")
    ],
    targets: [
        // liblz4, as a system library: the log's compression.
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"])]
        ),
        // A little C: CRC32C with SSE4.2, a prefetch hint, thread names and priorities, `strtod` in the POSIX locale.
        .target(name: "CCairnSupport"),
        // Internal (no product exports it): locks, kept worker threads, byte readers and writers, a byte-key table, JSON string quoting, invariant checks.
        .target(name: "CairnSupport", dependencies: ["CCairnSupport"], swiftSettings: internalChecks),
        // The segmented log: frames, segments, manifest, group commit, recovery, compression, base files, inspection, backup. No entities.
        .target(
            name: "CairnLog",
            dependencies: ["CLZ4", "CCairnSupport", "CairnSupport"],
            swiftSettings: internalChecks
        ),
        // The object graph: schema, store, migration, contexts, queries, indexes, compaction; each save one log record.
        .target(
            name: "Cairn",
            dependencies: [
                "CairnLog", "CairnSupport", "CCairnSupport", .product(name: "HashTreeCollections", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections")
            ],
            swiftSettings: internalChecks
        ),
        // JSON import and export through mappings (Swift, a mapping file or the model's userInfo): docs/MAPPING.md.
        .target(name: "CairnMapping", dependencies: ["Cairn", "CairnSupport", "CCairnSupport"], swiftSettings: internalChecks),
        // The compiler plug-in of `@Managed` and its companions (swift-syntax; never linked into an app).
        .macro(
            name: "CairnModelsMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax")
            ]
        ),
        // Typed model classes (`@Managed final class Book { … }`), SwiftData's way on Cairn's contexts: docs/MODELS.md.
        .target(
            name: "CairnModels",
            dependencies: ["Cairn", "CairnMapping", "CairnSupport", "CairnModelsMacros"],
            swiftSettings: internalChecks
        ),
        // The `cairn` executable: create, model, dump, query, verify, stats, import, export, compact, backup, demo.
        .executableTarget(
            name: "CairnCLI",
            dependencies: [
                "CairnLog",
                "CairnSupport",
                "Cairn",
                "CairnMapping",
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ]
        ),
        // Helpers the test targets share: temporary directories, child processes, seeds, logs and files, file systems that fail on purpose.
        .target(
            name: "CairnTestSupport",
            dependencies: ["CairnLog", "CairnSupport"],
            path: "Tests/CairnTestSupport"
        ),
        // A test-only executable that the crash tests start and kill; not part of `cairn`.
        .executableTarget(
            name: "CairnCrashHelper",
            dependencies: [
                "CairnLog",
                "CairnSupport",
                "Cairn",
                "CairnMapping",
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ],
            path: "Tests/CairnCrashHelper"
        ),
        // The log: round trips, torn tails, damage, faults, power loss, crashes, base files, backups (some run `cairn verify`).
        .testTarget(
            name: "CairnLogTests",
            dependencies: ["CairnLog", "CairnSupport", "CairnCLI", "CairnCrashHelper", "CairnTestSupport"]
        ),
        // The object graph: models, saves, queries, indexes, migrations, compaction, golden stores.
        .testTarget(
            name: "CairnTests",
            dependencies: ["Cairn", "CairnMapping", "CairnSupport", "CairnCLI", "CairnCrashHelper", "CairnTestSupport"]
        ),
        // JSON import and export: mappings, both import paths, hostile input, round trips.
        .testTarget(
            name: "CairnMappingTests",
            dependencies: ["CairnMapping", "Cairn", "CairnSupport", "CairnTestSupport"]
        ),
        // Typed model classes: the macro's expansions, models from types, typed edits against by-name ones, #Predicate, misuse;
        // and every ```swift block of README.md and the DocC articles, compiled (DocumentationSnippets.swift).
        .testTarget(
            name: "CairnModelsTests",
            dependencies: [
                "CairnModels", "CairnModelsMacros", "Cairn", "CairnLog", "CairnMapping", "CairnSupport", "CairnTestSupport",
                .product(name: "SwiftSyntaxMacrosTestSupport", package: "swift-syntax")
            ]
        ),
        // The `cairn` command line, run as a child process (CairnCLI builds the executable).
        .testTarget(
            name: "CairnCLITests",
            dependencies: ["CairnLog", "Cairn", "CairnMapping", "CairnCLI", "CairnTestSupport"]
        )
    ],
    swiftLanguageModes: [.v6]
)
