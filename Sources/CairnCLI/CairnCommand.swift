import ArgumentParser

/// The `cairn` command: operate on a Cairn store from the shell.
@main
struct CairnCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cairn",
        abstract: "Inspect, check and exercise Cairn stores.",
        subcommands: [
            DemoCommand.self, CreateCommand.self, ModelCommand.self, DumpCommand.self, QueryCommand.self, VerifyCommand.self,
            StatsCommand.self
        ]
    )
}
