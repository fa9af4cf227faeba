import ArgumentParser

/// The exit statuses of every `cairn` command, one meaning each whatever the command.
enum ExitStatus {
    /// The command did what it was asked (a `verify` or `stats` of a healthy store included).
    static let success: Int32 = 0
    /// The command failed: the store is missing, damaged or refused, a model does not load, a
    /// save failed; or `verify` and `stats` found damage.
    static let failure: Int32 = 1
    /// Wrong usage: an unknown option or subcommand, a missing or malformed argument, an entity,
    /// key or predicate the store's model does not have.
    static let usage: Int32 = 2

    /// The statuses in words, for `cairn --help`.
    static let summary = """
        Exit status, the same for every command:
          0  success;
          1  a failed operation or a damaged store (verify and stats exit 1
             when they find damage);
          2  wrong usage: an unknown option, a missing or malformed argument,
             an entity, key or predicate that the store's model does not have.
        """

    /// The status for an error that ended a command: the argument parser's usage errors (its
    /// own, and every `ValidationError`) are ``usage``; an `ExitCode` keeps its value; anything
    /// else is ``failure``.
    static func code(for error: any Error) -> Int32 {
        let code = CairnCommand.exitCode(for: error)
        return code == .validationFailure ? usage : code.rawValue
    }
}

/// A command that failed for a reason other than how it was called (exit status 1): the store
/// holds no model, for instance. Wrong usage throws `ValidationError` instead (status 2).
struct CommandFailure: Error, CustomStringConvertible {
    /// What failed, in words.
    let description: String

    init(_ description: String) { self.description = description }
}
