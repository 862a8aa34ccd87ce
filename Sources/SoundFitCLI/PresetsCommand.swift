import ArgumentParser
import Foundation
import SoundFitModel
import SoundFitProcessing
import SoundFitHearing
import SoundFitJSON
import SoundFitProcessing

/// `soundfit presets`: print the personalization presets generated from an audiogram file.
struct PresetsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presets",
        abstract: "Print the personalization presets (default, up, down) generated from a hearing profile.",
        discussion: """
            The profile is JSON: {"version": 1, "left": [{"hz": 500, "db_hl": 35}, …], "right": […]}.
            Thresholds at 500, 1000, 2000 and 4000 Hz are required; an ear without an audiogram
            gets the other ear's.
            """)

    @Option(help: "Hearing profile JSON file.")
    var audiogram: String

    @Option(help: "Tech level 1…4 (bands and processing the presets are made for).")
    var techLevel = 3

    @Option(help: "Which presets: fine_tuning (default, up, down as available) or single_preset (default only); fine-tuning and single-preset are accepted too.")
    var personalization = PersonalizationMode.fineTuning

    @Option(help: "dB SPL of a full-scale sine.")
    var calibration = PresetGenerator.defaultCalibration

    func validate() throws {
        guard TechLevel.range.contains(techLevel) else {
            throw ValidationError("--tech-level must be 1…4, got \(techLevel)")
        }
        guard PresetPayload.calibrationRange.contains(calibration) else {
            throw ValidationError("--calibration must be 80…130 dB SPL, got \(calibration)")
        }
    }

    func run() throws {
        let profile = try HearingProfileFile.load(audiogram)
        let level = try TechLevel(techLevel)
        var presets = PresetGenerator.presets(for: profile, techLevel: level, calibration: calibration)
        if personalization == .singlePreset { presets = [presets[0]] }
        FileHandle.standardOutput.write(JSONValue.array(presets.map(\.reportJSON)).fileData())
    }
}
