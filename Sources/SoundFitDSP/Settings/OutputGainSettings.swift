/// Target settings of the output gain stage.
public struct OutputGainSettings: Sendable, Equatable {
    public var isEnabled: Bool
    /// dB.
    public var gain: Float


    public init(isEnabled: Bool = true, gain: Float = 0) {
        self.isEnabled = isEnabled
        self.gain = gain
    }

    /// These settings clamped into safe bounds.
    /// Numerical safety for code that drives the kernels directly (NaN becomes the default,
    /// values are kept where the filters stay stable); not the parameter range, which the
    /// parameter model checks (rejecting, never clamping) before a value reaches the engine.
    /// Real-time safe.
    public func clamped() -> OutputGainSettings {
        OutputGainSettings(isEnabled: isEnabled, gain: clampParameter(gain, -60, 12, fallback: 0))
    }
}
