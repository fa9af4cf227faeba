import CairnLog
import Foundation
import Glibc

/// A file system that can say, at any moment, what a power cut would leave on disk, beyond
/// "every file cut to its synced length":
/// - a directory entry created, renamed or removed since the last `fsync` of the directory may
///   or may not survive (each such change independently, applied in order when it survives);
/// - of the bytes written to a file since its last sync, each 512-byte sector may or may not
///   have reached the disk, in any order (a later sector without an earlier one);
/// - a truncation since the last sync may or may not have.
///
/// Every call runs under one lock, so an image taken inside a call sees a consistent state.
package final class PowerCutFileIO: FileIO, @unchecked Sendable {
    // Safety: every mutable field is touched only under `lock`.
    private let base = PosixFileIO()
    private let lock = NSLock()

    /// One file's contents: what a sync made durable, and what happened since.
    private final class Inode {
        var durable: [UInt8] = []
        var pending: [Change] = []
        enum Change { case write(offset: Int, bytes: [UInt8]), truncate(Int) }
    }
    private enum Entry { case link(String, Inode), rename(String, String), unlink(String) }

    private var names: [String: Inode] = [:]
    private var durableNames: [String: Inode] = [:]
    private var journal: [Entry] = []
    private var inodes: [Int32: Inode] = [:]
    private var generator: RandomNumberGenerator & Sendable
    private var calls = 0
    /// Called inside every `every`-th call with the image a power cut at that moment would leave.
    private let every: Int
    private let capture: @Sendable ([String: [UInt8]]) -> Void

    package init(seed: UInt64, every: Int, capture: @escaping @Sendable ([String: [UInt8]]) -> Void) {
        self.generator = SeededRandom(seed: seed)
        self.every = every
        self.capture = capture
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        calls += 1
        if calls % every == 0 { capture(image()) }
        return try body()
    }

    /// What a power cut now would leave: file name → contents.
    private func image() -> [String: [UInt8]] {
        var surviving = durableNames
        for entry in journal where Bool.random(using: &generator) {
            switch entry {
            case .link(let name, let inode): surviving[name] = inode
            case .rename(let source, let destination):
                if let inode = surviving.removeValue(forKey: source) { surviving[destination] = inode }
            case .unlink(let name): surviving[name] = nil
            }
        }
        var files: [String: [UInt8]] = [:]
        for (name, inode) in surviving {
            var bytes = inode.durable
            for change in inode.pending {
                switch change {
                case .truncate(let length):
                    if Bool.random(using: &generator) {
                        bytes = Array(bytes.prefix(length)) + [UInt8](repeating: 0, count: max(0, length - bytes.count))
                    }
                case .write(let offset, let written):
                    var sector = 0
                    while sector < written.count {
                        let end = min(written.count, (offset + sector) / 512 * 512 + 512 - offset)
                        if Bool.random(using: &generator) {
                            if bytes.count < offset + end { bytes += [UInt8](repeating: 0, count: offset + end - bytes.count) }
                            bytes.replaceSubrange((offset + sector)..<(offset + end), with: written[sector..<end])
                        }
                        sector = end
                    }
                }
            }
            files[(name as NSString).lastPathComponent] = bytes
        }
        return files
    }

    package func open(_ path: String, mode: FileOpenMode) throws -> OpenFile {
        try locked {
            let existed = base.exists(path)
            let file = try base.open(path, mode: mode)
            if let inode = names[path], existed {
                inodes[file.descriptor] = inode
            } else {
                let inode = Inode()
                names[path] = inode
                journal.append(.link(path, inode))
                inodes[file.descriptor] = inode
            }
            return file
        }
    }

    package func close(_ file: OpenFile) {
        locked {
            inodes[file.descriptor] = nil
            base.close(file)
        }
    }

    package func write(_ file: OpenFile, _ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws -> Int {
        try locked {
            let count = try base.write(file, bytes, at: offset)
            inodes[file.descriptor]?.pending.append(.write(offset: Int(offset), bytes: Array(bytes.prefix(count))))
            return count
        }
    }

    private func syncLocked(_ file: OpenFile) throws {
        let length = Int(try base.size(of: file))
        var bytes = [UInt8](repeating: 0, count: length)
        try bytes.withUnsafeMutableBytes { try base.readExactly(file, into: $0, at: 0) }
        inodes[file.descriptor]?.durable = bytes
        inodes[file.descriptor]?.pending = []
    }

    package func sync(_ file: OpenFile) throws {
        try locked {
            try base.sync(file)
            try syncLocked(file)
        }
    }

    package func fullSync(_ file: OpenFile) throws {
        try locked {
            try base.fullSync(file)
            try syncLocked(file)
        }
    }

    package func truncate(_ file: OpenFile, to length: UInt64) throws {
        try locked {
            try base.truncate(file, to: length)
            inodes[file.descriptor]?.pending.append(.truncate(Int(length)))
        }
    }

    package func rename(_ source: String, to destination: String) throws {
        try locked {
            try base.rename(source, to: destination)
            names[destination] = names.removeValue(forKey: source)
            journal.append(.rename(source, destination))
        }
    }

    /// Links are not modelled: refused as across file systems, so that callers copy.
    package func link(_ source: String, to destination: String) throws {
        throw LogError.system("link (not modelled)", path: source, errno: EXDEV)
    }

    package func remove(_ path: String) throws {
        try locked {
            try base.remove(path)
            names[path] = nil
            journal.append(.unlink(path))
        }
    }

    package func syncDirectory(_ path: String) throws {
        try locked {
            try base.syncDirectory(path)
            durableNames = names
            journal = []
        }
    }

    package func read(_ file: OpenFile, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try locked { try base.read(file, into: buffer, at: offset) }
    }
    package func size(of file: OpenFile) throws -> UInt64 { try locked { try base.size(of: file) } }
    package func tryLock(_ file: OpenFile) throws -> Bool { try locked { try base.tryLock(file) } }
    package func tryLockShared(_ file: OpenFile) throws -> Bool { try locked { try base.tryLockShared(file) } }
    package func linkCount(of file: OpenFile) throws -> Int { try locked { try base.linkCount(of: file) } }
    package func contentsOfDirectory(_ path: String) throws -> [String] { try locked { try base.contentsOfDirectory(path) } }
    package func createDirectory(_ path: String) throws { try locked { try base.createDirectory(path) } }
    package func exists(_ path: String) -> Bool { locked { base.exists(path) } }
    package func availableSpace(at path: String) -> UInt64? { base.availableSpace(at: path) }
}
