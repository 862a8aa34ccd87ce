/// Target settings of the ring modulator stage.
public struct RingModulatorSettings: Sendable, Equatable {
    public var isEnabled: Bool
    /// Modulator frequency in Hz, `15...40`.
    public var frequency: Float
    /// Wet share, `0...1`: `out = (1 - mix)·x + mix·x·|sin(2π·f·t)|`.
    public var mix: Float

    public static var frequencyRange: ClosedRange<Float> { 15...40 }
    public static var mixRange: ClosedRange<Float> { 0...1 }

    public init(isEnabled: Bool = false, frequency: Float = 22, mix: Float = 1) {
        self.isEnabled = isEnabled
        self.frequency = frequency
        self.mix = mix
    }

    /// These settings with every value clamped into its range (NaN becomes the default).
    /// Real-time safe.
    public func clamped() -> RingModulatorSettings {
        RingModulatorSettings(
            isEnabled: isEnabled,
            frequency: clampParameter(frequency, 15, 40, fallback: 22),
            mix: clampParameter(mix, 0, 1, fallback: 1))
    }
}
