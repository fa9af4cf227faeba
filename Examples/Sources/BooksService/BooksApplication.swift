import Hummingbird
import Logging

extension BooksRoutes {
    /// An application serving the routes on `host`:`port` (port 0: one the system picks);
    /// `onRunning` is given the bound port once the server listens.
    public func application(
        host: String = "127.0.0.1", port: Int = 8080, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        var logger = Logger(label: "books-service")
        logger.logLevel = .warning
        return Application(
            router: router(),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "books-service"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: logger
        )
    }
}
