import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A Server-Sent Events stream read through URLSession: each event's `data` lines, as they
/// arrive (URLSession on Linux has no `bytes(for:)`, so a delegate hands over the bytes).
final class EventStream: Sendable {
    /// The data of each event, in order; ends when the response does.
    let events: AsyncStream<String>
    private let session: URLSession

    /// Opens `url` and starts reading.
    init(_ url: URL) {
        let (events, continuation) = AsyncStream.makeStream(of: String.self)
        self.events = events
        let delegate = Delegate(continuation)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        var request = URLRequest(url: url)
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        session.dataTask(with: request).resume()
    }

    /// Stops reading and closes the connection.
    func close() {
        session.invalidateAndCancel()
    }

    /// Splits the bytes received into events (separated by a blank line) and hands on their data.
    private final class Delegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        // Safety: URLSession calls a delegate one call at a time (its delegate queue is serial),
        // and only it touches `pending`.
        private let continuation: AsyncStream<String>.Continuation
        private var pending = Data()

        init(_ continuation: AsyncStream<String>.Continuation) {
            self.continuation = continuation
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            pending.append(data)
            while let end = pending.range(of: Data("\n\n".utf8)) {
                let event = String(decoding: pending[pending.startIndex..<end.lowerBound], as: UTF8.self)
                pending.removeSubrange(pending.startIndex..<end.upperBound)
                let data = event.split(separator: "\n").filter { $0.hasPrefix("data: ") }.map { $0.dropFirst(6) }
                continuation.yield(data.joined(separator: "\n"))
            }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            continuation.finish()
        }
    }
}
