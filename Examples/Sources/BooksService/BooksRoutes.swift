import CairnMapping
import Foundation
import Hummingbird

/// The service's routes over a catalog:
///
/// - `POST /books/import`: a JSON array of books, upserted by ISBN; answers the counts.
/// - `GET /books?author=NAME&after=YEAR&limit=N`: the matching books, newest first, as JSON.
/// - `GET /books/live?author=NAME&after=YEAR&limit=N`: the same books as Server-Sent Events,
///   sent again each time a save changes them.
public struct BooksRoutes: Sendable {
    /// The catalog the routes read and write.
    public let catalog: BookCatalog
    /// The largest import body accepted.
    public var maxImportBytes = 64 << 20

    /// Routes over `catalog`.
    public init(catalog: BookCatalog) {
        self.catalog = catalog
    }

    /// A router holding the routes.
    public func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.post("books/import") { request, _ in try await importBooks(request) }
        router.get("books") { request, _ in try books(request) }
        router.get("books/live") { request, _ in try liveBooks(request) }
        return router
    }

    private func importBooks(_ request: Request) async throws -> ImportCounts {
        let body = try await request.body.collect(upTo: maxImportBytes)
        do {
            return try await catalog.importBooks(body.readableBytesView)
        } catch let error as MappingError {
            throw HTTPError(.badRequest, message: "\(error)")
        }
    }

    private func books(_ request: Request) throws -> Response {
        let json = try catalog.exportBooks(try BookQuery(request.uri.queryParameters))
        return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
    }

    private func liveBooks(_ request: Request) throws -> Response {
        let live = try catalog.live(try BookQuery(request.uri.queryParameters))
        let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-cache"]
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                try await live.follow { event in
                    try await writer.write(ByteBuffer(bytes: ServerSentEvent.encode(event)))
                }
                try await writer.finish(nil)
            })
    }
}

extension ImportCounts: ResponseEncodable {}

extension BookQuery {
    /// The query of a request's parameters (`author`, `after`, `limit`); a number that does not
    /// read is a bad request.
    init(_ parameters: Parameters) throws {
        self.init(author: parameters.get("author"))
        if parameters.get("after") != nil { after = try parameters.require("after", as: Int.self) }
        if parameters.get("limit") != nil { limit = try parameters.require("limit", as: Int.self) }
        if let limit, limit < 0 { throw HTTPError(.badRequest, message: "limit must not be negative") }
    }
}
