import Foundation
import SoundFitState

/// Where SoundFit keeps its state (user patches, the current state, logs of a private server).
enum StateDirectory {
    /// `$XDG_STATE_HOME/soundfit`, else `~/.local/state/soundfit`.
    static var defaultPath: String {
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            return xdg + "/soundfit"
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.local/state/soundfit"
    }

    /// Creates the directory (and parents) if needed and checks that it is writable.
    static func prepare(_ path: String) throws -> URL {
        let url = URL(fileURLWithPath: path, isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw CLIError("cannot create the state directory \(path): \(error.localizedDescription)")
        }
        guard FileManager.default.isWritableFile(atPath: path) else {
            throw CLIError("the state directory \(path) is not writable")
        }
        return url
    }

    /// Takes the state directory's lock, or fails naming the instance that holds it.
    static func lock(_ url: URL) throws -> StateDirectoryLock {
        do {
            return try StateDirectoryLock(directory: url)
        } catch {
            throw CLIError(error.description)
        }
    }
}

/// A failure reported to the user as one line on stderr with a non-zero exit.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
