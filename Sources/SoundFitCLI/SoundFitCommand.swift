import ArgumentParser

/// The `soundfit` executable.
@main
struct SoundFitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soundfit",
        abstract: "A JACK audio client that personalizes sound to a listener's hearing, remote-controlled over OSC.",
        version: "0.1.0",
        subcommands: [RunCommand.self, ParametersCommand.self, PresetsCommand.self, StateCommand.self, TestCommand.self],
        defaultSubcommand: RunCommand.self)
}
