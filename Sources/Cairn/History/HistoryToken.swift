import CairnLog
import Foundation

/// A place in a store's history: the changes after it are those a reader of
/// ``Store/history(since:entities:)`` gets (Core Data's `NSPersistentHistoryToken`).
///
/// A token names its store (the ID every copy and backup of the store shares) and the LSN of
/// the last save it covers. It is a plain value: keep it as JSON (`Codable` encodes its
/// string form) or as its ``description`` (`"<store ID>:<LSN>"`), and read history from it
/// again after a reopen, from a backup's copy of the store too.
///
/// ```swift
/// let token = store.currentHistoryToken
/// UserDefaults.standard.set(token.description, forKey: "sync")   // …later
/// for try await transaction in try store.history(since: HistoryToken("…")) { send(transaction) }
/// ```
public struct HistoryToken: Sendable, Hashable, Codable, LosslessStringConvertible {
    /// The store the token belongs to.
    public var storeID: UUID
    /// The LSN of the last save the token covers: history since the token starts after it.
    public var lsn: LSN

    /// The token of `storeID` after the save at `lsn`.
    public init(storeID: UUID, lsn: LSN) {
        self.storeID = storeID
        self.lsn = lsn
    }

    /// Parses a token's string form, `"<store ID>:<LSN>"`; nil for any other string.
    public init?(_ description: String) {
        guard let colon = description.lastIndex(of: ":"), let storeID = UUID(uuidString: String(description[..<colon])),
            let lsn = UInt64(description[description.index(after: colon)...])
        else { return nil }
        self.init(storeID: storeID, lsn: LSN(lsn))
    }

    /// `"<store ID>:<LSN>"`, which ``init(_:)`` reads back.
    public var description: String { "\(storeID.uuidString.lowercased()):\(lsn.rawValue)" }

    /// Decodes a token from its string form.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let token = HistoryToken(text) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "not a history token (\"<store ID>:<LSN>\"): \(text)"))
        }
        self = token
    }

    /// Encodes the token as its string form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
