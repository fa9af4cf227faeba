// swift-tools-version: 6.1
import PackageDescription

/// Cairn: an embedded append-only log store for Swift on Linux.
///
/// Modules, each depending only on those before it:
/// `CLZ4` → `CairnLog` → `Cairn` → `CairnCLI` (the `cairn` executable).
/// `CCairnSupport` is a tiny C target: hardware CRC32C for `CairnLog`, a prefetch hint for
/// `Cairn`'s scans.
let package = Package(
    name: "Cairn",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "CairnLog", targets: ["CairnLog"]),
        .library(name: "Cairn", targets: ["Cairn"]),
        .executable(name: "cairn", targets: ["CairnCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"])]
        ),
        .target(name: "CCairnSupport"),
        .target(
            name: "CairnLog",
            dependencies: ["CLZ4", "CCairnSupport"]
        ),
        .target(
            name: "Cairn",
            dependencies: ["CairnLog", "CCairnSupport", .product(name: "HashTreeCollections", package: "swift-collections")]
        ),
        .executableTarget(
            name: "CairnCLI",
            dependencies: [
                "CairnLog",
                "Cairn",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(
            name: "CairnTestSupport",
            dependencies: ["CairnLog"],
            path: "Tests/CairnTestSupport"
        ),
        // A test-only executable that the crash tests start and kill; not part of `cairn`.
        .executableTarget(
            name: "CairnCrashHelper",
            dependencies: [
                "CairnLog",
                "Cairn",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/CairnCrashHelper"
        ),
        .testTarget(
            name: "CairnLogTests",
            dependencies: ["CairnLog", "CairnCLI", "CairnCrashHelper", "CairnTestSupport"]
        ),
        .testTarget(
            name: "CairnTests",
            dependencies: ["Cairn", "CairnCLI", "CairnCrashHelper", "CairnTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
