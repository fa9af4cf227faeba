// swift-tools-version: 6.1
import PackageDescription

/// Cairn: an embedded append-only log store for Swift on Linux.
///
/// Modules, each depending only on those before it:
/// `CLZ4` → `CairnLog` → `Cairn` → `CairnMapping` (JSON) → `CairnCLI` (the `cairn` executable).
/// Under both `CairnLog` and `Cairn`: `CairnSupport` (locks, worker threads, byte readers and
/// writers) and `CCairnSupport`, a tiny C target (hardware CRC32C, a prefetch hint, thread names).
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
        .executable(name: "cairn", targets: ["CairnCLI"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0")
    ],
    targets: [
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"])]
        ),
        .target(name: "CCairnSupport"),
        // What the log and the object graph both use that is not about the log: locks, kept
        // worker threads, byte readers and writers. Internal: no product exports it.
        .target(name: "CairnSupport", dependencies: ["CCairnSupport"], swiftSettings: internalChecks),
        .target(
            name: "CairnLog",
            dependencies: ["CLZ4", "CCairnSupport", "CairnSupport"],
            swiftSettings: internalChecks
        ),
        .target(
            name: "Cairn",
            dependencies: ["CairnLog", "CairnSupport", "CCairnSupport", .product(name: "HashTreeCollections", package: "swift-collections")],
            swiftSettings: internalChecks
        ),
        // JSON import and export (docs/MAPPING.md): the JSON scanner so far.
        .target(name: "CairnMapping", dependencies: ["Cairn", "CairnSupport", "CCairnSupport"], swiftSettings: internalChecks),
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
        .testTarget(
            name: "CairnLogTests",
            dependencies: ["CairnLog", "CairnSupport", "CairnCLI", "CairnCrashHelper", "CairnTestSupport"]
        ),
        .testTarget(
            name: "CairnTests",
            dependencies: ["Cairn", "CairnSupport", "CairnCLI", "CairnCrashHelper", "CairnTestSupport"]
        ),
        .testTarget(
            name: "CairnMappingTests",
            dependencies: ["CairnMapping", "Cairn", "CairnTestSupport"]
        )
    ],
    swiftLanguageModes: [.v6]
)
