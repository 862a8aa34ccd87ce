import ArgumentParser
import SoundFitModel

/// The `soundfit` executable.
@main
struct SoundFitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soundfit",
        abstract: "A JACK audio client that personalizes sound to a listener's hearing, remote-controlled over OSC.",
        version: "soundfit \(SoundFitVersion.current)",
        subcommands: [RunCommand.self, RenderCommand.self, ParametersCommand.self, PresetsCommand.self, PatchesCommand.self,
                      StateCommand.self, TestCommand.self, CalibrateCommand.self, VerifyCommand.self],
        defaultSubcommand: RunCommand.self)
}
