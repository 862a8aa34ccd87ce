/// Target settings of the ring modulator stage.
public struct RingModulatorSettings: Sendable, Equatable {
    public var isEnabled: Bool
    /// Modulator frequency in Hz.
    public var frequency: Float
    /// Wet share: `out = (1 - mix)·x + mix·x·|sin(2π·f·t)|`.
    public var mix: Float

    public static var mixRange: ClosedRange<Float> { 0...1 }

    public init(isEnabled: Bool = false, frequency: Float = 22, mix: Float = 1) {
        self.isEnabled = isEnabled
        self.frequency = frequency
        self.mix = mix
    }

    /// These settings clamped into safe bounds.
    /// Numerical safety for code that drives the kernels directly (NaN becomes the default,
    /// values are kept where the filters stay stable); not the parameter range, which the
    /// parameter model checks (rejecting, never clamping) before a value reaches the engine.
    /// Real-time safe.
    public func clamped() -> RingModulatorSettings {
        RingModulatorSettings(
            isEnabled: isEnabled,
            frequency: clampParameter(frequency, 15, 40, fallback: 22),
            mix: clampParameter(mix, 0, 1, fallback: 1))
    }
}
