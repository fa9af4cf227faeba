// swift-tools-version: 6.1
import PackageDescription

/// Benchmarks for Cairn, kept out of the main package so that users of Cairn never resolve
/// benchmark-only dependencies. Run from the repository root:
///
///     swift run -c release --package-path Benchmarks cairn-benchmarks [log|graph|typed|query|import|values|import-memory|compaction|all]... [--quick]
///
/// (Benchmarks/README.md lists each suite.)
let package = Package(
    name: "CairnBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "cairn-benchmarks", targets: ["CairnBenchmarks"])
    ],
    dependencies: [
        .package(name: "Cairn", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0")
    ],
    targets: [
        .executableTarget(
            name: "CairnBenchmarks",
            dependencies: [
                .product(name: "CairnLog", package: "Cairn"),
                .product(name: "Cairn", package: "Cairn"),
                .product(name: "CairnMapping", package: "Cairn"),
                .product(name: "CairnModels", package: "Cairn"),
                .product(name: "GRDB", package: "GRDB.swift")
            ],
            path: "Sources/CairnBenchmarks"
        )
    ],
    swiftLanguageModes: [.v6]
)
