/// Target settings of the personalization stage (stage 0 of the chain).
///
/// The preset itself (per-ear band gains and dynamics) is not a setting: it is prepared off the
/// audio thread as a `PreparedPersonalization` and installed with
/// `ProcessingChain.installPersonalization(_:)`.
public struct PersonalizationSettings: Sendable, Equatable {
    /// Off: after a 15 ms fade the stage is skipped and the samples pass bit-exact.
    public var isEnabled: Bool
    /// How much of the preset is applied: each band's linear gain is
    /// `1 + intensity·(gain − 1)`. 0 is transparent (bit-exact once faded).
    public var intensity: Float


    public init(isEnabled: Bool = false, intensity: Float = 0.5) {
        self.isEnabled = isEnabled
        self.intensity = intensity
    }

    /// These settings clamped into safe bounds.
    /// Numerical safety for code that drives the kernels directly (NaN becomes the default,
    /// values are kept where the filters stay stable); not the parameter range, which the
    /// parameter model checks (rejecting, never clamping) before a value reaches the engine.
    /// Real-time safe.
    public func clamped() -> PersonalizationSettings {
        PersonalizationSettings(isEnabled: isEnabled, intensity: clampParameter(intensity, 0, 1, fallback: 0.5))
    }
}
