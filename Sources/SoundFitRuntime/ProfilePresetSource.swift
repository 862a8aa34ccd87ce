import Synchronization
import SoundFitModel
import SoundFitHearing
import SoundFitProcessing

/// The preset source behind the session's `preset` parameter: generates personalization presets
/// from the current hearing profile (`PresetGenerator`); each preset carries its payload
/// (`PresetPayload`) to the engine.
///
/// Thread rules: any thread except the audio thread.
public final class ProfilePresetSource: PresetSource {
    private struct State {
        var profile: HearingProfile?
        var calibration: Double
        /// Per-ear, per-band corrections applied to every generated preset.
        var calibrationTable = CalibrationTable()
        var generation = 0
    }

    private let state: Mutex<State>

    public init(calibration: Double = PresetGenerator.defaultCalibration) {
        state = Mutex(State(calibration: calibration))
    }

    /// dB SPL of a full-scale sine, written into every generated preset. Setting it makes later
    /// loads generate presets for the new value (the session's preset must be loaded again).
    public var calibration: Double {
        get { state.withLock { $0.calibration } }
        set {
            state.withLock { state in
                state.calibration = newValue
                state.generation += 1
            }
        }
    }

    /// The per-ear, per-frequency corrections every generated preset is corrected by
    /// (`PresetPayload.corrected(by:)`). Setting it makes later loads generate corrected presets.
    public var calibrationTable: CalibrationTable {
        get { state.withLock { $0.calibrationTable } }
        set {
            state.withLock { state in
                state.calibrationTable = newValue
                state.generation += 1
            }
        }
    }

    /// The current hearing profile.
    public var profile: HearingProfile? { state.withLock { $0.profile } }

    /// Replaces the hearing profile; later loads generate from it.
    public func setProfile(_ profile: HearingProfile) {
        state.withLock { state in
            state.profile = profile
            state.generation += 1
        }
    }

    /// The variants the current profile offers at `techLevel` (empty without a profile).
    public func availableVariants(for techLevel: TechLevel) -> [PresetVariant] {
        guard let profile else { return [] }
        return PresetGenerator.availableVariants(for: profile, techLevel: techLevel)
    }

    public func preset(_ variant: PresetVariant, for techLevel: TechLevel) async throws -> PersonalizationPreset {
        let (payload, generation) = try generate(variant, for: techLevel)
        let id = "profile-\(generation)-\(variant)-tl\(techLevel.value)"
        return PersonalizationPreset(id: id, variant: variant, techLevel: techLevel, payload: payload)
    }

    /// The payload `preset(_:for:)` would carry, now (for reports: `/personalization/gains`).
    /// Throws `ControlError` without a profile or when the variant is not available.
    public func payload(_ variant: PresetVariant, for techLevel: TechLevel) throws -> PresetPayload {
        try generate(variant, for: techLevel).payload
    }

    private func generate(_ variant: PresetVariant, for techLevel: TechLevel) throws -> (payload: PresetPayload, generation: Int) {
        try state.withLock { state in
            guard let profile = state.profile else {
                throw ControlError("no hearing profile yet: submit one with /profile/audiogram or --profile")
            }
            let payloads = PresetGenerator.presets(for: profile, techLevel: techLevel, calibration: state.calibration)
                .map { $0.corrected(by: state.calibrationTable) }
            guard let payload = payloads.first(where: { $0.variant == variant }) else {
                throw ControlError(
                    "preset variant \(variant) is not available for this hearing profile (available: \(payloads.map(\.variant.rawValue).joined(separator: ", ")))")
            }
            return (payload, state.generation)
        }
    }
}
