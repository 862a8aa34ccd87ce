import ArgumentParser
import Foundation
import SoundFitModel
import SoundFitProcessing
import SoundFitHearing

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

    @Option(help: "Which presets: fine-tuning (default, up, down as available) or single-preset (default only).")
    var personalization = "fine-tuning"

    @Option(help: "dB SPL of a full-scale sine.")
    var calibration = PresetGenerator.defaultCalibration

    func validate() throws {
        guard Fitting.techLevels.contains(techLevel) else {
            throw ValidationError("--tech-level must be 1…4, got \(techLevel)")
        }
        guard ["fine-tuning", "single-preset"].contains(personalization) else {
            throw ValidationError("--personalization must be fine-tuning or single-preset, got '\(personalization)'")
        }
        guard PresetPayload.ranges["calibration_db_spl"]!.contains(calibration) else {
            throw ValidationError("--calibration must be 80…130 dB SPL, got \(calibration)")
        }
    }

    func run() throws {
        let profile = try HearingProfileFile.load(audiogram)
        let level = try Fitting(techLevel: techLevel)
        var presets = PresetGenerator.presets(for: profile, techLevel: level, calibration: calibration)
        if personalization == "single-preset" { presets = [presets[0]] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let json = try encoder.encode(presets)
        print(String(decoding: json, as: UTF8.self))
    }
}
