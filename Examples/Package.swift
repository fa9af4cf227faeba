// swift-tools-version: 6.1
import PackageDescription

/// Cairn's examples: the README's program, and an HTTP service that keeps its books in Cairn.
///
/// Cairn is the package one folder up. A package added by path is known by its folder's name,
/// which is whatever the checkout is called, so the name is read from this manifest's path.
let cairn = Context.packageDirectory.split(separator: "/").dropLast().last.map(String.init) ?? "cairn"

let package = Package(
    name: "CairnExamples",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "readme-example", targets: ["ReadmeExample"]),
        .executable(name: "books-service", targets: ["BooksServer"])
    ],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // Hummingbird's own dependencies, named for the logger and graceful shutdown of live streams.
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0")
    ],
    targets: [
        // The typed `@Managed` Author and Book program at the top of README.md.
        .executableTarget(
            name: "ReadmeExample",
            dependencies: [.product(name: "CairnModels", package: cairn)]
        ),
        // The books service: its model, JSON import and export, queries and live results over HTTP.
        .target(
            name: "BooksService",
            dependencies: [
                .product(name: "CairnModels", package: cairn),
                .product(name: "CairnMapping", package: cairn),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
            ]
        ),
        // The `books-service` executable: arguments and environment, then the service.
        .executableTarget(
            name: "BooksServer",
            dependencies: ["BooksService"]
        ),
        // The service started on loopback and driven over HTTP.
        .testTarget(
            name: "BooksServiceTests",
            dependencies: [
                "BooksService",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
