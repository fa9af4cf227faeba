// swift-tools-version: 6.1
import PackageDescription

/// Benchmarks for Cairn, kept out of the main package so that users of Cairn never resolve
/// benchmark-only dependencies. Run from the repository root:
///
///     swift run -c release --package-path Benchmarks cairn-benchmarks log
let package = Package(
    name: "CairnBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "cairn-benchmarks", targets: ["CairnBenchmarks"]),
    ],
    dependencies: [
        .package(name: "Cairn", path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "CairnBenchmarks",
            dependencies: [.product(name: "CairnLog", package: "Cairn")],
            path: "Sources/CairnBenchmarks"
        ),
    ],
    swiftLanguageModes: [.v6]
)
