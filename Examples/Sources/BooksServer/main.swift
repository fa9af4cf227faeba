import BooksService
import Foundation
import Hummingbird

// books-service [--store PATH] [--host HOST] [--port PORT]
// Environment: BOOKS_STORE, HOST, PORT; an argument wins. Port 0 lets the system pick one.
// SIGINT or SIGTERM shuts down gracefully: live streams end, then the store is closed.

/// The value of `--name VALUE` among the arguments, else of the environment variable.
func setting(_ name: String, environment variable: String) -> String? {
    let arguments = CommandLine.arguments
    if let index = arguments.firstIndex(of: "--\(name)"), index + 1 < arguments.count { return arguments[index + 1] }
    return ProcessInfo.processInfo.environment[variable]
}

let path = setting("store", environment: "BOOKS_STORE") ?? "books.store"
let host = setting("host", environment: "HOST") ?? "127.0.0.1"
guard let port = Int(setting("port", environment: "PORT") ?? "8080") else {
    FileHandle.standardError.write(Data("books-service: the port must be a number\n".utf8))
    exit(2)
}

let catalog = try BookCatalog(path: path)
let app = BooksRoutes(catalog: catalog).application(host: host, port: port) { bound in
    // Written at once (not buffered), for whoever waits for the port.
    FileHandle.standardOutput.write(Data("books-service: store \(path), listening on http://\(host):\(bound)\n".utf8))
}
try await app.runService()
try await catalog.store.close()
