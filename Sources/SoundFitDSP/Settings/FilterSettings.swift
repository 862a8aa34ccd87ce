/// Target settings of the biquad stage.
public struct FilterSettings: Sendable, Equatable {
    public var isEnabled: Bool
    public var type: FilterType
    /// Hz. Kernels also keep it below Nyquist at low sample rates.
    public var cutoff: Float
    public var q: Float
    /// dB; used by the peak and shelf types.
    public var gain: Float

    public init(isEnabled: Bool = false, type: FilterType = .lowpass, cutoff: Float = 1000,
                q: Float = 0.7071, gain: Float = 0) {
        self.isEnabled = isEnabled
        self.type = type
        self.cutoff = cutoff
        self.q = q
        self.gain = gain
    }

    /// These settings clamped into safe bounds.
    /// Numerical safety for code that drives the kernels directly (NaN becomes the default,
    /// values are kept where the filters stay stable); not the parameter range, which the
    /// parameter model checks (rejecting, never clamping) before a value reaches the engine.
    /// Real-time safe.
    public func clamped() -> FilterSettings {
        FilterSettings(
            isEnabled: isEnabled, type: type,
            cutoff: clampParameter(cutoff, 20, 20000, fallback: 1000),
            q: clampParameter(q, 0.1, 18, fallback: 0.7071),
            gain: clampParameter(gain, -24, 24, fallback: 0))
    }
}
