import CairnLog
import CairnSupport
import Foundation
import Glibc

/// Kinds of operations a ``FaultyFileIO`` can fail.
package enum FaultOperation: Sendable { case write, sync }

/// The fault to inject.
package enum Fault: Sendable, Equatable {
    /// The call fails with this errno.
    case error(Int32)
    /// The call writes half of its bytes; the next write call fails with this errno.
    case shortThenError(Int32)
    /// The call writes half of its bytes; the rest goes through normally.
    case shortWrite
}

/// Every kind of call a ``FaultyFileIO`` counts as one I/O step.
package enum IOStep: String, Sendable, CaseIterable {
    case open, write, read, sync, fullSync, truncate, size, tryLock, rename, remove, syncDirectory, listDirectory, createDirectory
}

/// A file system that fails the n-th write or sync (counting from 1), or the n-th I/O step of
/// any kind, or the first call of a kind on a path, and counts calls.
package final class FaultyFileIO: FileIO, Sendable {
    private let base = PosixFileIO()
    private struct State {
        var writes = 0
        /// The file of each write, in order.
        var writePaths: [String] = []
        var syncs = 0
        var dataSyncs = 0
        var steps = 0
        var failWriteAt: Int?
        var failSyncAt: Int?
        var failStepAt: Int?
        var failPath: (suffix: String, step: IOStep)?
        var fault: Fault = .error(EIO)
        var pendingError: Int32?
        var failed: String?
        var syncDelay: UInt32 = 0
        var syncThreadDelay: UInt32 = 0
        var largestRead = 0
        var bytesRead = 0
        var availableSpace: UInt64?
    }
    private let state = Protected(State())

    package init() {}

    /// Arms a fault at the n-th call of `operation` from now on.
    package func inject(_ fault: Fault, at operation: FaultOperation, call: Int) {
        state.withLock { state in
            state.fault = fault
            switch operation {
            case .write: state.failWriteAt = state.writes + call
            case .sync: state.failSyncAt = state.syncs + call
            }
        }
    }

    /// Arms a failure of the n-th I/O step of any kind from now on: `ENOSPC` for a write (a
    /// full disk), `EIO` for anything else.
    package func injectAtStep(_ step: Int) {
        state.withLock { $0.failStepAt = $0.steps + step }
    }

    /// Arms a failure of the first `step` on a path ending in `suffix` (`ENOSPC` for a write,
    /// `EIO` otherwise).
    package func inject(_ step: IOStep, onPathEndingIn suffix: String) {
        state.withLock { $0.failPath = (suffix, step) }
    }

    /// Makes every `fdatasync` take at least this many microseconds (a slow disk), so that a
    /// test can make a step fail while a sync is still running.
    package func delaySyncs(microseconds: UInt32) { state.withLock { $0.syncDelay = microseconds } }

    /// Makes the syncs of the log's sync thread (`cairn-sync`) take this long: a stuck
    /// background sync, while syncs on other threads run at once.
    package func delaySyncThreadSyncs(microseconds: UInt32) { state.withLock { $0.syncThreadDelay = microseconds } }

    /// Disarms any fault.
    package func heal() {
        state.withLock {
            $0.failWriteAt = nil; $0.failSyncAt = nil; $0.pendingError = nil; $0.failStepAt = nil; $0.failPath = nil
        }
    }

    package var writeCount: Int { state.withLock { $0.writes } }
    /// The file each write went to, in order (call `n` is element `n - 1`).
    package var writePaths: [String] { state.withLock { $0.writePaths } }
    package var syncCount: Int { state.withLock { $0.syncs } }
    /// `fdatasync` calls alone (the syncs that acknowledge appends).
    package var dataSyncCount: Int { state.withLock { $0.dataSyncs } }
    /// The longest single read so far, and all bytes read.
    package var largestRead: Int { state.withLock { $0.largestRead } }
    package var bytesRead: Int { state.withLock { $0.bytesRead } }
    /// I/O steps of every kind so far.
    package var stepCount: Int { state.withLock { $0.steps } }
    /// The step that was failed, as "kind path", once one was.
    package var failedStep: String? { state.withLock { $0.failed } }

    /// Counts a step; throws the armed failure when this is the step.
    private func step(_ kind: IOStep, _ path: String) throws {
        let failure = state.withLock { state -> Int32? in
            state.steps += 1
            var fails = state.steps == state.failStepAt
            if let armed = state.failPath, armed.step == kind, path.hasSuffix(armed.suffix) {
                fails = true
                state.failPath = nil
            }
            guard fails else { return nil }
            state.failed = "\(kind.rawValue) \(path)"
            return kind == .write ? ENOSPC : EIO
        }
        if let failure { throw LogError.system("\(kind.rawValue) (injected)", path: path, errno: failure) }
    }

    package func write(_ file: OpenFile, _ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws -> Int {
        try step(.write, file.path)
        enum Action { case pass, fail(Int32), short }
        let action = state.withLock { state -> Action in
            state.writes += 1
            state.writePaths.append(file.path)
            if let pending = state.pendingError {
                state.pendingError = nil
                return .fail(pending)
            }
            guard state.writes == state.failWriteAt else { return .pass }
            switch state.fault {
            case .error(let number): return .fail(number)
            case .shortThenError(let number):
                state.pendingError = number
                return .short
            case .shortWrite: return .short
            }
        }
        switch action {
        case .pass: return try base.write(file, bytes, at: offset)
        case .fail(let number): throw LogError.system("write", path: file.path, errno: number, offset: offset)
        case .short: return try base.write(file, UnsafeRawBufferPointer(rebasing: bytes[0..<max(1, bytes.count / 2)]), at: offset)
        }
    }

    /// Counts a sync and returns the errno to fail it with, if this is the armed one.
    private func nextSyncFault() -> Int32? {
        state.withLock { state -> Int32? in
            state.syncs += 1
            guard state.syncs == state.failSyncAt, case .error(let number) = state.fault else { return nil }
            return number
        }
    }

    package func sync(_ file: OpenFile) throws {
        try step(.sync, file.path)
        state.withLock { $0.dataSyncs += 1 }
        if let failure = nextSyncFault() { throw LogError.system("fdatasync", path: file.path, errno: failure) }
        let (delay, threadDelay) = state.withLock { ($0.syncDelay, $0.syncThreadDelay) }
        if delay > 0 { usleep(delay) }
        if threadDelay > 0 && currentThreadName() == SyncThread.threadName { usleep(threadDelay) }
        try base.sync(file)
    }

    package func fullSync(_ file: OpenFile) throws {
        try step(.fullSync, file.path)
        if let failure = nextSyncFault() { throw LogError.system("fsync", path: file.path, errno: failure) }
        try base.fullSync(file)
    }

    package func open(_ path: String, mode: FileOpenMode) throws -> OpenFile {
        try step(.open, path)
        return try base.open(path, mode: mode)
    }
    package func close(_ file: OpenFile) { base.close(file) }
    package func read(_ file: OpenFile, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try step(.read, file.path)
        let count = try base.read(file, into: buffer, at: offset)
        state.withLock {
            $0.largestRead = max($0.largestRead, buffer.count); $0.bytesRead += count
        }
        return count
    }
    package func truncate(_ file: OpenFile, to length: UInt64) throws {
        try step(.truncate, file.path)
        try base.truncate(file, to: length)
    }
    package func size(of file: OpenFile) throws -> UInt64 {
        try step(.size, file.path)
        return try base.size(of: file)
    }
    package func tryLock(_ file: OpenFile) throws -> Bool {
        try step(.tryLock, file.path)
        return try base.tryLock(file)
    }
    package func tryLockShared(_ file: OpenFile) throws -> Bool {
        try step(.tryLock, file.path)
        return try base.tryLockShared(file)
    }
    package func linkCount(of file: OpenFile) throws -> Int {
        try step(.size, file.path)
        return try base.linkCount(of: file)
    }
    package func rename(_ source: String, to destination: String) throws {
        try step(.rename, source)
        try base.rename(source, to: destination)
    }
    package func link(_ source: String, to destination: String) throws {
        try step(.rename, source)
        try base.link(source, to: destination)
    }
    package func remove(_ path: String) throws {
        try step(.remove, path)
        try base.remove(path)
    }
    package func syncDirectory(_ path: String) throws {
        try step(.syncDirectory, path)
        try base.syncDirectory(path)
    }
    package func contentsOfDirectory(_ path: String) throws -> [String] {
        try step(.listDirectory, path)
        return try base.contentsOfDirectory(path)
    }
    package func createDirectory(_ path: String) throws {
        try step(.createDirectory, path)
        try base.createDirectory(path)
    }
    package func exists(_ path: String) -> Bool { base.exists(path) }
    package func nextData(in file: OpenFile, from offset: UInt64) -> UInt64? { base.nextData(in: file, from: offset) }
    package func availableSpace(at path: String) -> UInt64? { state.withLock { $0.availableSpace } ?? base.availableSpace(at: path) }

    /// Makes the file system report only this much free space (nil: the real figure).
    package func reportAvailableSpace(_ bytes: UInt64?) { state.withLock { $0.availableSpace = bytes } }
}

/// The calling thread's name as the system knows it.
package func currentThreadName() -> String {
    let path = "/proc/thread-self/comm"
    let name = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    return name.trimmingCharacters(in: .whitespacesAndNewlines)
}
