import ArgumentParser
import SoundFitEngine
import SoundFitRuntime

/// `soundfit parameters`: print the OSC parameter table (the same registry `/list` reports).
struct ParametersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parameters",
        abstract: "Print every OSC parameter with its type, range, default and unit.")

    func run() throws {
        print(ParameterTable.markdown(SoundFitRuntime.descriptors))
    }
}
