import BooksService
import Foundation
import Logging
import ServiceLifecycle
import Testing

/// The books service on 127.0.0.1 at a port the system picks, over a new store in a temporary
/// directory: `body` is given a client of it, then the service shuts down gracefully (as on
/// SIGTERM: live streams end) and the store is closed and removed. Returns what `body` returns.
func withRunningService<T: Sendable>(_ body: @Sendable (LoopbackClient) async throws -> T) async throws -> T {
    let store = FileManager.default.temporaryDirectory.appending(path: "books-service-tests-\(UUID()).store")
    defer { try? FileManager.default.removeItem(at: store) }
    let catalog = try BookCatalog(path: store.path)
    let (ports, bound) = AsyncStream.makeStream(of: Int.self)
    let app = BooksRoutes(catalog: catalog).application(host: "127.0.0.1", port: 0) { port in bound.yield(port) }
    let service = ServiceGroup(configuration: .init(services: [app], logger: Logger(label: "books-service-tests")))
    let result = try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await service.run() }
        let result: T
        do {
            let port = try await within(30, "the server's port") { await ports.first { _ in true } }
            result = try await body(LoopbackClient(port: try #require(port)))
        } catch {
            group.cancelAll()
            throw error
        }
        await service.triggerGracefulShutdown()
        try await group.waitForAll()
        return result
    }
    try await catalog.store.close()
    return result
}
