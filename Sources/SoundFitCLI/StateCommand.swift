import ArgumentParser
import Foundation
import SoundFitProcessing
import SoundFitRuntime
import SoundFitState

/// `soundfit state export|import`: the full state (parameters, delivery, session, hearing
/// profile and its presets, current patch) and the calibration of the document settings, as
/// one versioned JSON document.
struct StateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state",
        abstract: "Export or import SoundFit's full state as one JSON document.",
        subcommands: [Export.self, Import.self])

    struct Location: ParsableArguments {
        @Option(help: "Directory for SoundFit's state (default: $XDG_STATE_HOME/soundfit or ~/.local/state/soundfit).")
        var stateDir: String?

        func store() throws -> DurableStateStore {
            let url = try StateDirectory.prepare(stateDir ?? StateDirectory.defaultPath)
            return DurableStateStore(directory: url, descriptors: StateKeeper.writableDescriptors)
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the saved state as JSON (read-only: safe while SoundFit runs).")

        @OptionGroup var location: Location

        @Option(help: "File to write (default: standard output).")
        var output: String?

        func run() throws {
            // Read-only (a running SoundFit may be writing the same directory): the saved state,
            // else its previous copy.
            let store = try location.store()
            var document: StateDocument?
            for url in [store.url, store.previousURL] {
                guard let data = try? Data(contentsOf: url) else { continue }
                do {
                    document = try StateDocument.decode(data, file: url.path, descriptors: StateKeeper.writableDescriptors)
                    break
                } catch {
                    FileHandle.standardError.write(Data("warning: \(error)\n".utf8))
                }
            }
            guard var document else { throw CLIError("no usable saved state in \(store.directory.path)") }
            // The presets were generated for the document settings' calibration: it goes along.
            do {
                document.calibration = try DocumentSettingsFile.read(store.directory)?.calibration
            } catch {
                FileHandle.standardError.write(Data("warning: \(error)\n".utf8))
            }
            // The calibration table and earphone go along too (document state).
            do {
                document.calibrationState = try CalibrationState.load(from: store.directory)
            } catch {
                FileHandle.standardError.write(Data("warning: \(error)\n".utf8))
            }
            let data = document.encoded(descriptors: StateKeeper.writableDescriptors)
            if let output {
                do {
                    try AtomicFile.write(data, to: URL(fileURLWithPath: output))
                } catch {
                    throw CLIError("cannot write \(output): \(error)")
                }
            } else {
                FileHandle.standardOutput.write(data)
            }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace the saved state with a document from `state export`, and the calibration in document.json when it carries one (SoundFit must not be running on this state directory).")

        @OptionGroup var location: Location

        @Argument(help: "The JSON document to import.")
        var file: String

        func run() async throws {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: file))
            } catch {
                throw CLIError("cannot read \(file): \(error.localizedDescription)")
            }
            var document: StateDocument
            do {
                document = try StateDocument.decode(data, file: file, descriptors: StateKeeper.writableDescriptors)
            } catch {
                throw CLIError("\(error)")
            }
            let store = try location.store()
            // Refused while a SoundFit runs on the directory: it would overwrite the import.
            let lock = try StateDirectory.lock(store.directory)
            defer { withExtendedLifetime(lock) {} }
            if let calibration = document.calibration {
                document.calibration = nil
                var settings = (try? DocumentSettingsFile.read(store.directory)) ?? DocumentSettings()
                settings.calibration = calibration
                do {
                    try AtomicFile.write(settings.encoded(), to: DocumentSettingsFile.url(store.directory))
                } catch {
                    throw CLIError("cannot save the imported calibration: \(error)")
                }
            }
            if let calibrationState = document.calibrationState {
                document.calibrationState = nil
                do {
                    try AtomicFile.write(calibrationState.encoded(),
                                         to: store.directory.appendingPathComponent(CalibrationState.fileName))
                } catch {
                    throw CLIError("cannot save the imported calibration table: \(error)")
                }
            }
            store.submit(document)
            do {
                try await store.flush()
            } catch {
                throw CLIError("cannot save the imported state: \(error)")
            }
            print("imported \(file) into \(store.url.path)")
        }
    }
}
