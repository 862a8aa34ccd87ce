import ArgumentParser
import SoundFit

/// The options `soundfit run` and `soundfit render` share, declared and checked once: the
/// calibration the presets are generated for, the output safety limit through it, and where
/// the factory patches are.
struct ChainLevelOptions: ParsableArguments {
    @Option(help: "Calibration in dB SPL (80…130): the level a full-scale sine stands for at the ear; presets are generated for it (default: the state directory's document.json, else 100).")
    var calibration: Double?

    @Option(help: "Output safety limit in dB SPL (40…130, through the calibration): no output sample exceeds it. For `run` it is the ceiling: surfaces may lower it and restore it, never raise it.")
    var maxOutput = SoundFitRuntime.defaultMaximumOutputSPL

    @Option(help: "Directory of the factory patches (default: the patches/ folder of the SoundFit checkout or installation).")
    var patchesDir: String?

    func validate() throws {
        if let calibration, !(calibration.isFinite && DocumentSettings.calibrationRange.contains(calibration)) {
            throw ValidationError("--calibration must be 80…130 dB SPL, got \(calibration)")
        }
        guard maxOutput.isFinite, SoundFitRuntime.maximumOutputRange.contains(maxOutput) else {
            throw ValidationError("--max-output must be 40…130 dB SPL, got \(maxOutput)")
        }
    }
}
