import CairnLog
import CairnSupport
import Foundation

/// What a change record says of its save besides the changes: when it was made, by whom, from
/// which context (Core Data's `transactionAuthor` and context name). Written in every change
/// record from record version 3 on (docs/FORMAT.md, "Version 3: the transaction header"); a
/// record of version 1 or 2 has none.
package struct TransactionInfo: Sendable, Equatable {
    /// Microseconds since 1970-01-01 00:00 UTC, as the saving process's clock read them.
    package var microseconds: Int64
    /// The author the saving context named (``ObjectContext/transactionAuthor``); nil: none.
    package var author: String?
    /// The saving context's name; nil for a save made without a context (a batch insert or
    /// upsert).
    package var contextName: String?

    package init(microseconds: Int64, author: String?, contextName: String?) {
        self.microseconds = microseconds
        self.author = author
        self.contextName = contextName
    }

    /// A save made now by `author` from the context named `contextName`.
    package static func now(author: String? = nil, contextName: String? = nil) -> TransactionInfo {
        let microseconds = (Date().timeIntervalSince1970 * 1_000_000).rounded()
        // (A clock beyond ±292,000 years from 1970 reads as 1970, not as a trap.)
        let stored = microseconds.isFinite && abs(microseconds) < 9.2e18 ? Int64(microseconds) : 0
        // (An empty name is stored as none: the record cannot tell them apart.)
        return TransactionInfo(
            microseconds: stored, author: author.flatMap { $0.isEmpty ? nil : $0 }, contextName: contextName.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The time the save was made.
    package var date: Date { Date(timeIntervalSince1970: Double(microseconds) / 1_000_000) }

    /// The header's flag that says the inserts are in parts (version 2's layout); the other bits
    /// are reserved, written as zero and refused when set.
    static let insertsInParts: UInt8 = 1

    /// Writes the header: flags (u8), microseconds (zigzag varint), author and context name
    /// (each a varint byte count and UTF-8; 0 bytes: none).
    func write(inParts: Bool, into writer: inout ByteWriter) {
        writer.write(inParts ? Self.insertsInParts : 0)
        writer.writeSignedVarint(microseconds)
        writer.writeLengthPrefixed(utf8: author ?? "")
        writer.writeLengthPrefixed(utf8: contextName ?? "")
    }

    /// Reads a header, leaving `reader` at the record's body; returns it and whether the inserts
    /// are in parts.
    ///
    /// - Throws: ``EncodingProblem`` for a reserved flag, or a name that is not UTF-8;
    ///   ``CairnSupport/ByteReader/Overrun`` for a truncated header.
    static func read(_ reader: inout ByteReader) throws -> (info: TransactionInfo, inParts: Bool) {
        let flags = try reader.read(UInt8.self)
        guard flags & ~insertsInParts == 0 else {
            throw EncodingProblem(message: "the transaction header's flags \(flags) set a reserved bit (a newer version of Cairn may write them)")
        }
        let microseconds = try reader.readSignedVarint()
        func text(_ what: String) throws -> String? {
            let start = reader.offset
            let bytes = try reader.readLengthPrefixed()
            guard !bytes.isEmpty else { return nil }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw EncodingProblem(message: "the transaction header's \(what) at byte \(start) is not UTF-8")
            }
            return text
        }
        let author = try text("author")
        let contextName = try text("context name")
        return (TransactionInfo(microseconds: microseconds, author: author, contextName: contextName), flags & insertsInParts != 0)
    }
}
