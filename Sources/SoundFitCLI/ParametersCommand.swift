import ArgumentParser
import SoundFitModel

/// `soundfit parameters`: print the parameter table (the model's entries, as `/list` reports them).
struct ParametersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parameters",
        abstract: "Print every OSC parameter with its type, range, default and unit.")

    func run() throws {
        print(ParameterTable.markdown(ParameterModel.all))
    }
}
