import ArgumentParser
import Foundation
import SoundFit

/// The options `soundfit render` and `soundfit verify` share, declared and checked once: what
/// builds the fitting of their offline chain (`OfflineChainSetup`), in the order a running
/// SoundFit takes it — the state directory, the session, the hearing profile, the patch, then
/// every `--set`. Main thread of the command.
struct OfflineFittingOptions: ParsableArguments {
    @Option(help: "Patch to load, by name or number (factory, or a user patch of the state directory).")
    var patch: String?

    @Option(help: "Hearing profile JSON file (see `soundfit presets --help`); its recommended preset is applied.")
    var profile: String?

    @Option(help: "A standard audiogram (Bisgaard et al. 2010: N1…N7, S1…S3) for both ears, instead of --profile.")
    var audiogram: String?

    @Option(help: "Tech level 1…4 of the processing session (default: the state's, else 3).")
    var techLevel: Int?

    @Option(help: "Personalization mode: fine_tuning or single_preset (default: the state's, else fine_tuning).")
    var personalization: PersonalizationMode?

    @Option(name: .customLong("set"),
            help: ArgumentHelp("Set a parameter, /address=value, after everything else (repeatable; values as over OSC: numbers, 0/1 or true/false, names; /address/normalized=0…1 for a fader position).",
                               valueName: "/address=value"))
    var assignments: [String] = []

    @Option(help: "State directory of an instance whose full state to use (only read; default: none, the defaults). Its user patches and calibration are used too.")
    var stateDir: String?

    func validate() throws {
        if let techLevel, !TechLevel.range.contains(techLevel) {
            throw ValidationError("--tech-level must be 1…4, got \(techLevel)")
        }
        if profile != nil && audiogram != nil {
            throw ValidationError("give --profile or --audiogram, not both")
        }
        if let audiogram, StandardAudiogram.named(audiogram) == nil {
            throw ValidationError("--audiogram must be one of \(StandardAudiogram.all.map(\.name).joined(separator: ", ")), got '\(audiogram)'")
        }
        _ = try values()
    }

    /// Every `--set`, checked against the parameter model as an OSC set is.
    func values() throws -> [(address: String, value: ParameterValue)] {
        try assignments.map { assignment in
            do {
                return try ParameterAssignment.parse(assignment)
            } catch {
                throw ValidationError("--set \(assignment): \(error)")
            }
        }
    }

    /// The hearing profile of `--audiogram` (both ears) or `--profile`; nil without either.
    func hearingProfile() throws -> HearingProfile? {
        if let audiogram, let standard = StandardAudiogram.named(audiogram) {
            return try HearingProfile(left: standard.audiogram, right: standard.audiogram)
        }
        return try profile.map(HearingProfileFile.load)
    }

    /// The offline chain's set-up from these options and `levels`.
    func setup(levels: ChainLevelOptions) throws -> OfflineChainSetup {
        OfflineChainSetup(stateDir: stateDir, patch: patch, hearingProfile: try hearingProfile(), techLevel: techLevel,
                          personalization: personalization, values: try values(), levels: levels)
    }
}
