import SoundFitHearing
import SoundFitModel

/// The ceiling: the output safety limit fixed when SoundFit starts (`--max-output`, dB SPL,
/// through the calibration at start). It protects the listener's ears, so it is a safety
/// property, not a setting: surfaces (OSC, WebSocket, MIDI, patches, NSM, a state import) may
/// lower the maximum output and restore it up to the ceiling, never raise it above — and never
/// in dBFS either: a calibration lowered after the start would put the same dB SPL higher in
/// dBFS, so the output's limit in dBFS stays at or below `dBFS` whatever the calibration.
///
/// A pure value, fixed for the runtime's life: usable from any thread.
public struct OutputCeiling: Sendable, Equatable, CustomStringConvertible {
    /// The highest maximum output a surface may ask for, dB SPL.
    public let maximumOutputSPL: Double
    /// The calibration the ceiling was fixed through (dB SPL of a full-scale sine).
    public let fullScaleSPL: Double

    public init(maximumOutputSPL: Double, fullScaleSPL: Double) {
        precondition(maximumOutputSPL.isFinite && fullScaleSPL.isFinite)
        self.maximumOutputSPL = maximumOutputSPL
        self.fullScaleSPL = fullScaleSPL
    }

    /// The highest output peak the ceiling allows, dB relative to full scale.
    public var dBFS: Double { maximumOutputSPL - fullScaleSPL }

    /// No ceiling beyond the surfaces' own ranges (the highest maximum output through the lowest
    /// calibration): for embeddings and tests that fix none.
    public static let unbounded = OutputCeiling(maximumOutputSPL: SoundFitRuntime.maximumOutputRange.upperBound,
                                                fullScaleSPL: PresetPayload.calibrationRange.lowerBound)

    /// The output's limit in dBFS for a requested maximum output through the current calibration:
    /// the request's own level, never above the ceiling's.
    public func limitDBFS(maximumOutputSPL requested: Double, calibration: Double) -> Double {
        min(dBFS, requested - calibration)
    }

    /// Why a surface may not ask for `requested` dB SPL; nil when it may.
    public func refusal(maximumOutputSPL requested: Double) -> String? {
        guard requested > maximumOutputSPL else { return nil }
        return "maximum output \(Self.format(requested)) dB SPL is above the ceiling \(Self.format(maximumOutputSPL)) dB SPL "
            + "set at start; restart with --max-output to raise it"
    }

    /// The calibration a ceiling is fixed through at start: `--calibration` when the command line
    /// gives one; otherwise the stored calibration (`document.json`, which `/config/calibration`,
    /// `soundfit state import` and an NSM session's directory can write), but never below the
    /// default calibration — a stored calibration can tighten the ceiling in dBFS, not loosen it,
    /// so a surface cannot raise the output's limit by lowering the calibration and restarting.
    public static func startCalibration(commandLine: Double?, stored: Double) -> Double {
        commandLine ?? max(stored, PresetGenerator.defaultCalibration)
    }

    public var description: String {
        "\(Self.format(maximumOutputSPL)) dB SPL through \(Self.format(fullScaleSPL)) dB SPL at full scale (\(Self.format(dBFS)) dBFS)"
    }

    /// `100` for whole numbers, `92.5` otherwise.
    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : String(value)
    }
}
