import SoundFitModel

/// Events after which the session's parameters move to recommended values.
public enum RecommendationEvent: String, Sendable, Hashable, CaseIterable {
    /// A session was activated. The controller follows it by itself during `activate`.
    case sessionActivated
    /// A new hearing profile was submitted (its presets can now be generated).
    case hearingProfileSubmitted
}

/// The values the session's parameters move to after a `RecommendationEvent`; nil leaves a
/// parameter as it is.
///
/// | event | preset | intensity | isEnabled |
/// | --- | --- | --- | --- |
/// | `sessionActivated` | the previous session's variant regenerated for the new tech level, when its preset could not carry over (another tech level or mode); else unchanged | `activationIntensity` (0.5) if no intensity was set yet, else unchanged | unchanged |
/// | `hearingProfileSubmitted` | the `default` variant, loaded from the `PresetSource` | `profileIntensity` (0.75) | true |
///
/// "Set" means: the controller held an intensity from an earlier session, or a request for
/// it was applied in this session. The session applies a recommendation in the order preset,
/// intensity, isEnabled (so processing is enabled with its preset in place), each through the
/// ordinary apply sequence, so it is reported like any other change (values and update states).
/// While the session is interrupted, a recommended `isEnabled` becomes the value restored when
/// the last interruption is resolved.
public struct Recommendation: Sendable, Hashable {
    /// The intensity recommended when a session starts without one: the parameter model's
    /// default for the session's intensity (0.5).
    public static let activationIntensity: Float = {
        guard case .float(let intensity) = ParameterModel.entry(for: .intensity).defaultValue else {
            preconditionFailure("the session's intensity is a float")
        }
        return intensity
    }()
    /// The intensity recommended for a freshly submitted hearing profile: 0.75, strong enough
    /// to hear the personalization, leaving headroom for fine-tuning up.
    public static let profileIntensity: Float = 0.75

    /// The preset variant to load, or nil.
    public var presetVariant: PresetVariant?
    /// The intensity to apply, or nil.
    public var intensity: Float?
    /// The isEnabled value to apply, or nil.
    public var isEnabled: Bool?

    /// A recommendation; nil leaves a parameter unchanged.
    public init(presetVariant: PresetVariant? = nil, intensity: Float? = nil, isEnabled: Bool? = nil) {
        self.presetVariant = presetVariant
        self.intensity = intensity
        self.isEnabled = isEnabled
    }

    /// The recommendation for `event` (see the table above).
    public static func recommendation(for event: RecommendationEvent, intensityIsSet: Bool) -> Recommendation {
        switch event {
        case .sessionActivated:
            Recommendation(intensity: intensityIsSet ? nil : activationIntensity)
        case .hearingProfileSubmitted:
            Recommendation(presetVariant: .default, intensity: profileIntensity, isEnabled: true)
        }
    }
}
