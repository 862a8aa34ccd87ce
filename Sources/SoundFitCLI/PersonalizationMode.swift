import SoundFitModel
import ArgumentParser
import SoundFitProcessing

/// `--personalization`: the processing session's mode, spelled as the OSC contract
/// (`/session/activate`) and the state file spell it: `fine_tuning` or `single_preset`. The
/// hyphenated spellings of earlier versions (`fine-tuning`, `single-preset`) are accepted too,
/// so existing scripts keep working.
enum PersonalizationMode: String, CaseIterable, ExpressibleByArgument {
    /// Up to three presets: default, up and down.
    case fineTuning = "fine_tuning"
    /// The default preset only.
    case singlePreset = "single_preset"

    /// The spellings earlier versions documented.
    static let aliases: [String: PersonalizationMode] = ["fine-tuning": .fineTuning, "single-preset": .singlePreset]

    init?(argument: String) {
        guard let mode = Self(rawValue: argument) ?? Self.aliases[argument] else { return nil }
        self = mode
    }

    /// The session configuration of this mode for `techLevel`.
    func configuration(techLevel: TechLevel) -> ProcessingConfiguration {
        switch self {
        case .fineTuning: .fineTuning(techLevel: techLevel)
        case .singlePreset: .singlePreset(techLevel: techLevel)
        }
    }
}
