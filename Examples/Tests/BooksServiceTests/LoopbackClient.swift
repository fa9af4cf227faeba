import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Requests to a service on 127.0.0.1, through URLSession.
struct LoopbackClient: Sendable {
    let port: Int

    /// The URL of `path` (with its query) on the service.
    func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    /// `GET path`: the status and body.
    func get(_ path: String) async throws -> (status: Int, body: Data) {
        try await send(URLRequest(url: url(path)))
    }

    /// `POST path` with a JSON body: the status and body.
    func post(_ path: String, json: String) async throws -> (status: Int, body: Data) {
        var request = URLRequest(url: url(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(json.utf8)
        return try await send(request)
    }

    private func send(_ request: URLRequest) async throws -> (status: Int, body: Data) {
        var request = request
        request.timeoutInterval = 10
        let (body, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, body)
    }
}
