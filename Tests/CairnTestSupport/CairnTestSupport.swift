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

/// A `CairnCrashHelper` child process whose output is collected as it comes.
public final class HelperProcess: Sendable {
    /// The child process.
    public let process: Process
    private let output = Protected<[UInt8]>([])

    /// Starts the crash helper with `arguments`.
    public init(_ arguments: [String]) throws {
        guard let executable = builtExecutable("CairnCrashHelper") else {
            throw HelperError(message: "the CairnCrashHelper executable is not built next to the tests")
        }
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        pipe.fileHandleForReading.readabilityHandler = { [output] handle in
            let data = handle.availableData
            output.withLock { $0.append(contentsOf: data) }
        }
        try process.run()
    }

    /// The complete lines printed so far.
    public var lines: [String] {
        let text = output.withLock { String(decoding: $0, as: UTF8.self) }
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

    /// Kills the process with SIGKILL and waits for it.
    public func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        Thread.sleep(forTimeInterval: 0.01)  // let the reader drain the pipe
    }
}

/// The `cairn` executable built next to the test bundle.
public func cairnExecutable() -> String? { builtExecutable("cairn") }

/// An executable of this package built next to the test bundle.
public func builtExecutable(_ name: String) -> String? {
    var candidates: [String] = []
    let argument0 = CommandLine.arguments.first ?? ""
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
