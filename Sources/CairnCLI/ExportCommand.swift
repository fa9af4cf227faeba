import ArgumentParser
import Cairn
import CairnMapping
import Foundation

/// `cairn export STORE --entity NAME [--mapping FILE] [--where PREDICATE] [--sort KEYS]
/// [--depth N] [--format json|jsonl] [--output FILE]`.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export objects as JSON through a mapping, streamed.",
        usage: "cairn export <store> --entity <entity> [<options>]",
        discussion: """
            Keys, dates and numbers are written as the mapping reads them, so that the output \
            imports back unchanged. --depth 1 nests related objects (0: their keys). Shows \
            progress on standard error when it is a terminal and the output is not.

            Examples:
              cairn export people.store --entity Person --sort ticket --format jsonl \\
                  --output people.jsonl
              cairn export library.store --entity Author --depth 2 \\
                  --where "books.@count > 0"
            """
    )

    /// The output's shape.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case json, jsonl
    }

    @OptionGroup var fetch: FetchOptions

    @Option(parsing: .unconditional, help: "A JSON mapping file (docs/MAPPING.md).")
    var mapping: String?

    @Option(parsing: .unconditional, help: "How deep related objects are nested (0: their keys).")
    var depth: Int = 0

    @Option(help: "json (one array) or jsonl (one object per line).")
    var format: Format = .json

    @Option(parsing: .unconditional, help: "The file to write (default: standard output): a regular file, synced at the end, or a pipe, a FIFO, a device.")
    var output: String?

    @Flag(help: "Print what was exported (objects, bytes, file) as JSON on standard error, the output staying pure.")
    var json = false

    /// What `--json` prints.
    struct Result: Encodable {
        var objects: Int
        var bytes: UInt64
        var output: String?
    }

    func validate() throws {
        guard (0...64).contains(depth) else { throw ValidationError("--depth takes 0 to 64, not \(depth)") }
    }

    func run() async throws {
        let request = try fetch.request()
        try await withOpenedStore(at: fetch.store, options: readOnlyOptions()) { opened in
            try export(opened, request, try commandMapping(self.mapping, model: opened.model, entity: fetch.entity))
        }
    }

    private func export(_ opened: Store, _ request: FetchRequest, _ mapping: Mapping) throws {
        let context = opened.newBackgroundContext(name: "export")
        let ids: [ObjectID]
        do { ids = try context.fetchIDs(request) } catch { throw ValidationError("\(error)") }
        var options = ExportOptions()
        options.depth = depth
        options.format = format == .jsonl ? .jsonLines : .json
        // A bar on the terminal the output is not written to.
        let meter = ProgressMeter(terminal: isatty(STDERR_FILENO) == 1 && (output != nil || isatty(STDOUT_FILENO) == 0))
        options.progress = { written, total in
            meter.report(fraction: total == 0 ? 1 : Double(written) / Double(total), "\(written) of \(total) objects")
        }
        defer { meter.finish() }
        let descriptor: Int32
        if let output {
            descriptor = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw CommandFailure("cannot open \(output): \(String(cString: strerror(errno)))") }
        } else {
            descriptor = STDOUT_FILENO
        }
        defer { if output != nil { close(descriptor) } }
        let result = try context.exportJSON(ids, mapping: mapping, options: options) { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let written = write(descriptor, base + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw CommandFailure("cannot write \(output ?? "standard output"): \(String(cString: strerror(errno)))")
                }
                offset += written
            }
        }
        if options.format == .json && output == nil { print() }
        if let output {
            // Only a regular file is synced: a pipe, a FIFO, a terminal or /dev/null has nothing
            // to make durable (and fsync refuses them).
            var status = stat()
            if fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG {
                guard fsync(descriptor) == 0 else { throw CommandFailure("cannot write \(output): \(String(cString: strerror(errno)))") }
            }
        }
        meter.finish()
        if json {
            let line = try JSONOutput.line(Result(objects: result.objects, bytes: UInt64(result.bytes), output: output))
            FileHandle.standardError.write(Data((line + "\n").utf8))
        } else if let output {
            FileHandle.standardError.write(Data("exported \(result.objects) objects (\(Formatting.bytes(result.bytes))) to \(output)\n".utf8))
        }
    }
}
