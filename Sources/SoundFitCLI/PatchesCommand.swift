import ArgumentParser
import Foundation
import Logging
import SoundFitState

/// `soundfit patches`: list the factory and user patches, as `/patch/list` reports them.
struct PatchesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "patches",
        abstract: "List the factory patches (number ≥ 0) and the user patches (number < 0): number, name, summary.")

    @Option(help: "Directory of the factory patches (default: the patches/ folder of the SoundFit checkout or installation).")
    var patchesDir: String?

    @Option(help: "State directory whose user patches to list (default: $XDG_STATE_HOME/soundfit or ~/.local/state/soundfit).")
    var stateDir: String?

    func run() throws {
        // Warnings (no factory patches found, a broken patch file) go to stderr.
        var logger = Logger(label: "soundfit") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        let state = URL(fileURLWithPath: stateDir ?? StateDirectory.defaultPath, isDirectory: true)
        let library = try PatchDirectory.library(explicit: patchesDir, stateDirectory: state, logger: logger)
        for patch in library.patches {
            print("\(patch.number)\t\(patch.name)\(patch.summary.isEmpty ? "" : "\t\(patch.summary)")")
        }
    }
}
