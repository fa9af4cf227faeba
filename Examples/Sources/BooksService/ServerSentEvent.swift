import Foundation

/// Server-Sent Events framing (the `text/event-stream` format).
enum ServerSentEvent {
    /// An event named `books`, its `id` the LSN and its data the event as one line of JSON.
    static func encode(_ event: LiveBooksEvent) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = String(decoding: try encoder.encode(event), as: UTF8.self)
        return Array("event: books\nid: \(event.lsn)\ndata: \(json)\n\n".utf8)
    }
}
