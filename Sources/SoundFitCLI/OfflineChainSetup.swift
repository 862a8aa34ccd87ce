import Foundation
import Logging
import SoundFit

/// How `soundfit render` and `soundfit verify` build their offline chain from their flags, in
/// the order a running SoundFit takes them: the full state of `--state-dir` (else the
/// defaults), the session (`--tech-level`, `--personalization`), the hearing profile, the patch,
/// then every `--set`. Main thread of the command, before rendering.
struct OfflineChainSetup {
    var stateDir: String?
    var patch: String?
    var hearingProfile: HearingProfile?
    var techLevel: Int?
    var personalization: PersonalizationMode?
    var values: [(address: String, value: ParameterValue)]
    var levels: ChainLevelOptions

    /// SoundFit configured from the flags (not yet `configure()`d).
    func make(sampleRate: Int, channelCount: Int, logger: Logger) throws -> OfflineSoundFit {
        let stateURL = stateDir.map { URL(fileURLWithPath: $0, isDirectory: true) }
        if let stateURL {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: stateURL.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw CLIError("--state-dir \(stateURL.path) is not a directory")
            }
        }
        // User patches: the given state directory's, else those of the default one (only read).
        let patchesURL = stateURL ?? URL(fileURLWithPath: StateDirectory.defaultPath, isDirectory: true)
        var settings = OfflineSoundFit.Settings(
            stateDirectory: stateURL,
            patches: try PatchDirectory.library(explicit: levels.patchesDir, stateDirectory: patchesURL, logger: logger))
        let document = try stateURL.flatMap { url in
            do {
                return try DocumentSettingsFile.read(url)
            } catch {
                throw CLIError("\(error)")
            }
        }
        if techLevel != nil || personalization != nil {
            settings.session = (personalization ?? .fineTuning).configuration(techLevel: try TechLevel(techLevel ?? 3))
        }
        settings.hearingProfile = hearingProfile
        settings.patch = patch.map { Int($0).map(PatchReference.number) ?? .name($0) }
        settings.values = values
        settings.calibration = levels.calibration ?? document?.calibration ?? PresetGenerator.defaultCalibration
        settings.maximumOutputSPL = levels.maxOutput
        return OfflineSoundFit(settings: settings, sampleRate: sampleRate, channelCount: channelCount)
    }
}
