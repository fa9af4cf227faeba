import CairnLog
import CairnSupport
import Foundation
import Glibc

/// A fresh directory under the system's temporary folder, removed when the value is released.
public final class TemporaryDirectory: Sendable {
    /// The directory's path.
    public let path: String

    /// Makes the directory.
    public init(_ name: String = "cairn-test") {
        let template = NSTemporaryDirectory() + "/\(name)-XXXXXX"
        var bytes = Array(template.utf8CString)
        let made = bytes.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
        }
        path = made ?? template
    }

    /// The path of a store directory inside (not created).
    public func store(_ name: String = "store") -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A child process started with `posix_spawn`, its output read by a thread of its own.
///
/// Foundation's `Process` is not used: on Linux it watches for the child's exit through
/// libdispatch, whose event loop has been seen to crash the whole test process
/// (`_dispatch_event_loop_drain`, a bad pointer) while a child was killed and waited for.
/// Here the exit is collected with `waitpid` and the output with blocking `read`s.
public final class ChildProcess: Sendable {
    /// The child's process ID.
    public let pid: pid_t
    private let output = Protected<[UInt8]>([])
    private let exitStatus = Protected<Int32?>(nil)
    private let outputClosed = DispatchSemaphore(value: 0)
    /// Held while a pipe is made and marked close-on-exec, and while a child is spawned.
    private static let spawning = NSLock()

    /// Starts `executable` with `arguments`, in `directory` when given. Its standard output is
    /// collected, and its standard error too when `includeStandardError` (else it is discarded).
    public init(_ executable: String, _ arguments: [String], in directory: String? = nil, includeStandardError: Bool) throws {
        var fds: [Int32] = [-1, -1]
        // Close-on-exec, so that no other child spawned meanwhile inherits the pipe (which would
        // keep it open, and this reader waiting, until that other child ends); the child's own
        // copies, made by dup2, stay open.
        // (One spawn at a time, so that none happens between the pipe and the flag.)
        let made = Self.spawning.withLock { () -> Bool in
            guard pipe(&fds) == 0 else { return false }
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            return true
        }
        guard made else { throw HelperError(message: "pipe failed: errno \(errno)") }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addclose(&actions, readEnd)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        if includeStandardError {
            posix_spawn_file_actions_adddup2(&actions, writeEnd, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addclose(&actions, writeEnd)
        // In another directory through the shell (glibc's addchdir is not exported to Swift):
        // `sh -c 'cd -- "$0" && exec "$@"' DIRECTORY EXECUTABLE ARGUMENTS…`.
        var program = executable
        var words = [executable] + arguments
        if let directory {
            program = "/bin/sh"
            words = ["/bin/sh", "-c", #"cd -- "$0" && exec "$@""#, directory, executable] + arguments
        }
        let argv = words.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let result = Self.spawning.withLock { posix_spawn(&child, program, &actions, nil, argv, environ) }
        close(writeEnd)
        guard result == 0 else {
            close(readEnd)
            throw HelperError(message: "posix_spawn \(executable) failed: errno \(result)")
        }
        pid = child
        let thread = Thread { [output, outputClosed] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                output.withLock { $0.append(contentsOf: buffer[0..<count]) }
            }
            close(readEnd)
            outputClosed.signal()
        }
        thread.start()
    }

    /// Everything the child printed so far.
    public var outputBytes: [UInt8] { output.current }

    /// Whether the child has not exited yet.
    public var isRunning: Bool {
        if exitStatus.current != nil { return false }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return true }
        exitStatus.withLock { $0 = status }
        return false
    }

    /// Waits for the child to exit and for its output to end; returns its exit status (128 plus
    /// the signal's number when a signal ended it).
    @discardableResult
    public func waitUntilExit() -> Int32 {
        var status: Int32 = 0
        if let known = exitStatus.current {
            status = known
        } else {
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            exitStatus.withLock { $0 = status }
        }
        outputClosed.wait()
        outputClosed.signal()  // later waits return at once
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// Kills the child with SIGKILL and waits for it.
    public func kill() {
        if isRunning { Glibc.kill(pid, SIGKILL) }
        waitUntilExit()
    }
}

/// A `CairnCrashHelper` child process whose output is collected as it comes.
public final class HelperProcess: Sendable {
    /// The child process.
    public let process: ChildProcess

    /// Starts the crash helper with `arguments`.
    public init(_ arguments: [String]) throws {
        guard let executable = builtExecutable("CairnCrashHelper") else {
            throw HelperError(message: "the CairnCrashHelper executable is not built next to the tests")
        }
        process = try ChildProcess(executable, arguments, includeStandardError: false)
    }

    /// The complete lines printed so far.
    public var lines: [String] {
        let text = String(decoding: process.outputBytes, as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.removeLast()  // an incomplete last line, or the empty string after the final newline
        return lines
    }

    /// Waits until a line starting with `prefix` appears (or `timeout` passes).
    public func waitForLine(startingWith prefix: String, timeout: Duration = .seconds(20)) async throws -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = lines.first(where: { $0.hasPrefix(prefix) }) { return line }
            if !process.isRunning { return lines.first { $0.hasPrefix(prefix) } }
            try await Task.sleep(for: .milliseconds(2))
        }
        return nil
    }

    /// Kills the process with SIGKILL and waits for it and for the end of its output.
    public func kill() {
        process.kill()
    }
}

/// The `cairn` executable built next to the test bundle.
public func cairnExecutable() -> String? { builtExecutable("cairn") }

/// An executable of this package built next to the test bundle.
public func builtExecutable(_ name: String) -> String? {
    var candidates: [String] = []
    // Absolute, so that a child process started in another directory finds it too.
    let given = CommandLine.arguments.first ?? ""
    let argument0 = given.hasPrefix("/") ? given : FileManager.default.currentDirectoryPath + "/" + given
    var directory = (argument0 as NSString).deletingLastPathComponent
    for _ in 0..<4 {
        candidates.append(directory + "/" + name)
        directory = (directory as NSString).deletingLastPathComponent
    }
    candidates.append(FileManager.default.currentDirectoryPath + "/.build/debug/" + name)
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// Thrown when a helper process cannot be started.
public struct HelperError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
    /// An error saying `message`.
    public init(message: String) { self.message = message }
}

/// Seeds for randomized tests, so that any failing run can be replayed.
///
/// A run draws one base seed (or takes `CAIRN_TEST_SEED`) and prints it once; each test mixes
/// it with its own name, so tests differ from one another yet `CAIRN_TEST_SEED=<printed> swift
/// test` repeats every one of them exactly.
public enum TestSeed {
    /// The run's base seed.
    public static let base: UInt64 = {
        let given = ProcessInfo.processInfo.environment["CAIRN_TEST_SEED"].flatMap { UInt64($0) }
        let seed = given ?? UInt64.random(in: 1...UInt64.max)
        print("Cairn tests: CAIRN_TEST_SEED=\(seed)\(given == nil ? " (set it to replay this run's random tests)" : " (given)")")
        return seed
    }()

    /// The seed of one test: the base seed mixed with `name` (by default the calling function's
    /// name and file).
    public static func named(_ name: String = #function, file: String = #fileID) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in (file + "/" + name).utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return base ^ hash
    }

    /// A generator seeded for one test.
    public static func generator(_ name: String = #function, file: String = #fileID) -> SeededRandom {
        SeededRandom(seed: named(name, file: file))
    }
}

/// A small, fast, deterministic generator (SplitMix64): the same seed gives the same sequence.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Starts the sequence of `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next number of the sequence.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

/// Runs `body` on a thread of its own and returns what it returns: blocking work (a hook that
/// waits for a task, a child process waited for) then holds no thread of the shared pool, which
/// a parallel test run needs whole.
public func onOwnThread<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
        }
        thread.start()
    }
}

/// Runs the `cairn` built next to the tests (in `directory` when given) on a thread of its own,
/// and returns its exit status and its standard output and error, interleaved.
public func runCairn(_ arguments: [String], in directory: String? = nil) async throws -> (status: Int32, output: String) {
    guard let executable = cairnExecutable() else { throw HelperError(message: "the cairn executable is built next to the tests") }
    return try await onOwnThread {
        let process = try ChildProcess(executable, arguments, in: directory, includeStandardError: true)
        let status = process.waitUntilExit()
        return (status, String(decoding: process.outputBytes, as: UTF8.self))
    }
}
