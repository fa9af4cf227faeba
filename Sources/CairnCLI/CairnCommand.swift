import ArgumentParser
import Glibc

/// The `cairn` command: operate on a Cairn store from the shell.
@main
struct CairnCommand: AsyncParsableCommand {
    /// The version `cairn --version` prints.
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "cairn",
        abstract: "Inspect, check and exercise Cairn stores.",
        discussion: ExitStatus.summary,
        version: "cairn \(version)",
        subcommands: [
            DemoCommand.self, CreateCommand.self, ModelCommand.self, DumpCommand.self, QueryCommand.self, VerifyCommand.self,
            StatsCommand.self, ImportCommand.self, ExportCommand.self, CompactCommand.self, BackupCommand.self, HistoryCommand.self
        ]
    )

    /// Parses the arguments and runs the command, as the argument parser's own `main` does,
    /// but exits with Cairn's statuses (``ExitStatus``): wrong usage is 2 for every command.
    static func main() async {
        var command: any ParsableCommand
        do {
            command = try await asyncParseAsRoot()
        } catch {
            finish(error, of: Self.self)
        }
        do {
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            finish(error, of: type(of: command))
        }
    }

    /// Prints what `error` says (help and the version on standard output, errors on standard
    /// error, with the usage of `command` for wrong usage) and exits with its status.
    private static func finish(_ error: any Error, of command: any ParsableCommand.Type) -> Never {
        let status = ExitStatus.code(for: error)
        var text = fullMessage(for: error)
        if let validation = error as? ValidationError, command != Self.self {
            // Thrown by a subcommand's run: its own usage, named as it is typed.
            text = """
                Error: \(validation.message)
                Usage: \(usageString(for: command))
                  See 'cairn \(command._commandName) --help' for more information.
                """
        }
        if !text.isEmpty {
            let bytes = Array((text.hasSuffix("\n") ? text : text + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(status == ExitStatus.success ? 1 : 2, $0.baseAddress, $0.count) }
        }
        Glibc.exit(status)
    }
}
