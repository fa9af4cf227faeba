import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A stream gathered for an import (standard input, a pipe, a device, an async sequence of
/// chunks) without holding it in memory: it is written to an unnamed temporary file (in
/// `TMPDIR`, else `/tmp`; removed from the directory at once, so that nothing is left behind)
/// a piece of ``pieceSize`` bytes at a time, each piece checked as JSON as it arrives
/// (``JSONStreamCheck``); at the end the file is mapped into memory and imported as a file is.
///
/// Memory stays within about two pieces, whatever the stream's length: invalid JSON stops the
/// reading at the piece that holds its first invalid byte (`/dev/zero` fails at byte 0 after
/// reading 1 MiB), and a long valid stream takes room on disk, not in memory.
final class InputSpool {
    /// How much of a stream is held in memory before it is written out and checked.
    static let pieceSize = 1 << 20

    private let descriptor: Int32
    /// The bytes not yet written out.
    private var piece: [UInt8] = []
    /// Bytes written to the file.
    private var written = 0
    private var check: JSONStreamCheck

    /// Makes the temporary file; `allowsTrailingCommas`: whether the check reads a comma that
    /// ends an array or an object (``ImportOptions/allowsTrailingCommas``).
    ///
    /// - Throws: ``MappingError/Code/unreadableInput`` when it cannot be made.
    init(allowsTrailingCommas: Bool = false) throws(MappingError) {
        check = JSONStreamCheck(allowsTrailingCommas: allowsTrailingCommas)
        var template = Array((NSTemporaryDirectory() + "/cairn-import-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { $0.baseAddress.map { mkstemp($0) } ?? -1 }
        guard made >= 0 else { throw Self.failure("cannot make a temporary file for the input in \(NSTemporaryDirectory())") }
        descriptor = made
        template.withUnsafeBufferPointer { _ = $0.baseAddress.map { unlink($0) } }
        piece.reserveCapacity(Self.pieceSize)
    }

    deinit { close(descriptor) }

    /// Everything `source` gives until its end (a descriptor of a pipe, a device, standard
    /// input), spooled and checked, mapped.
    ///
    /// - Throws: ``MappingError/Code/unreadableInput`` naming `name` when a read fails;
    ///   ``MappingError/Code/invalidJSON`` at the first invalid byte.
    static func read(_ source: Int32, name: String, allowsTrailingCommas: Bool) throws(MappingError) -> InputBuffer {
        let spool = try InputSpool(allowsTrailingCommas: allowsTrailingCommas)
        var chunk = [UInt8](repeating: 0, count: pieceSize)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(source, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("\(name): cannot read it: \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            let refused = chunk.withUnsafeBytes { bytes -> MappingError? in
                do throws(MappingError) { try spool.append(UnsafeRawBufferPointer(rebasing: bytes[..<count])) } catch { return error }
                return nil
            }
            if let refused { throw refused }
        }
        return try spool.finish()
    }

    /// Adds the bytes that follow.
    ///
    /// - Throws: ``MappingError/Code/invalidJSON`` at the first invalid byte of a piece written
    ///   out; ``MappingError/Code/unreadableInput`` when the file cannot be written.
    func append(_ bytes: UnsafeRawBufferPointer) throws(MappingError) {
        var rest = bytes
        while !rest.isEmpty {
            let taken = min(rest.count, Self.pieceSize - piece.count)
            piece.append(contentsOf: rest.prefix(taken))
            rest = UnsafeRawBufferPointer(rebasing: rest.dropFirst(taken))
            if piece.count == Self.pieceSize { try writePiece(atEnd: false) }
        }
    }

    /// The whole stream, checked, mapped into memory.
    ///
    /// - Throws: as ``append(_:)``; ``MappingError/Code/invalidJSON`` for a stream that ends
    ///   inside a value.
    func finish() throws(MappingError) -> InputBuffer {
        try writePiece(atEnd: true)
        return try InputBuffer.mapping(descriptor, size: written, name: "the temporary copy of the input")
    }

    /// Writes the piece held to the file, and checks what is unchecked when worth it.
    private func writePiece(atEnd: Bool) throws(MappingError) {
        let writeFailed = piece.withUnsafeBytes { bytes -> Bool in
            var offset = 0
            while let base = bytes.baseAddress, offset < bytes.count {
                let count = pwrite(descriptor, base + offset, bytes.count - offset, off_t(written + offset))
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return true }
                offset += count
            }
            return false
        }
        if writeFailed { throw Self.failure("cannot write the temporary copy of the input: \(String(cString: strerror(errno)))") }
        written += piece.count
        piece.removeAll(keepingCapacity: true)
        guard check.isWorthChecking(written - check.checkedUpTo, atEnd: atEnd) else { return }
        // The unchecked bytes, mapped from the page that holds the first.
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = check.checkedUpTo / page * page
        let length = written - start
        guard length > 0 else { return try checkBytes(UnsafeRawBufferPointer(start: nil, count: 0), atEnd: atEnd) }
        guard let address = mmap(nil, length, PROT_READ, MAP_SHARED, descriptor, off_t(start)), address != MAP_FAILED else {
            throw Self.failure("cannot map the temporary copy of the input: \(String(cString: strerror(errno)))")
        }
        defer { munmap(address, length) }
        let unchecked = UnsafeRawBufferPointer(start: address + (check.checkedUpTo - start), count: written - check.checkedUpTo)
        try checkBytes(unchecked, atEnd: atEnd)
    }

    private func checkBytes(_ bytes: UnsafeRawBufferPointer, atEnd: Bool) throws(MappingError) {
        do { try check.check(bytes, atEnd: atEnd) } catch {
            throw MappingError(.invalidJSON, error.importDescription, offset: error.offset)
        }
    }

    private static func failure(_ message: String) -> MappingError {
        MappingError(.unreadableInput, message)
    }
}
