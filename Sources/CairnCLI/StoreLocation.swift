import Glibc

/// A store path that holds no store folder: what every command says, in the same words and
/// with the same exit status (``ExitStatus/failure``), before it reads anything.
struct StoreLocationError: Error, CustomStringConvertible {
    /// What is at the path.
    enum Problem: Equatable {
        /// Nothing: no file or folder of that name (or a folder on the way is missing or a file).
        case missing
        /// A file that is not a folder.
        case notAFolder
        /// The path cannot be looked at (no permission on a folder on the way, a name too long…).
        case unreadable(errno: Int32)
    }

    /// The store path as given.
    let path: String
    /// What is there instead of a store folder.
    let problem: Problem
    /// What to do about it, when the command knows (`import`: give `--model`).
    var hint: String?

    var description: String {
        let text =
            switch problem {
            case .missing: "no store at \(path): no such directory"
            case .notAFolder: "\(path) is a file, not a store folder"
            case .unreadable(let code): "no store at \(path): \(String(cString: strerror(code)))"
            }
        return hint.map { "\(text) (\($0))" } ?? text
    }
}

/// The check every command makes of its store path first (``StoreLocationError``).
enum StoreLocation {
    /// What is at `path`: nil for a folder (or a link to one), else the problem.
    static func problem(at path: String) -> StoreLocationError.Problem? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            // (ENOTDIR: a name on the way is a file, so there is no such folder either.)
            let code = errno
            return code == ENOENT || code == ENOTDIR ? .missing : .unreadable(errno: code)
        }
        return (status.st_mode & S_IFMT) == S_IFDIR ? nil : .notAFolder
    }

    /// Throws unless `path` is a folder, which a store is.
    static func requireFolder(_ path: String, hint: String? = nil) throws {
        if let problem = problem(at: path) { throw StoreLocationError(path: path, problem: problem, hint: hint) }
    }

    /// Throws when something other than a folder is at `path`; nothing there is fine (for the
    /// commands that create a store).
    static func requireFolderOrNothing(_ path: String) throws {
        if let problem = problem(at: path), problem != .missing { throw StoreLocationError(path: path, problem: problem) }
    }
}
