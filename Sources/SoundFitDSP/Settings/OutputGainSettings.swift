/// Target settings of the output gain stage.
public struct OutputGainSettings: Sendable, Equatable {
    public var isEnabled: Bool
    /// dB, `-60...12`.
    public var gain: Float

    public static var gainRange: ClosedRange<Float> { -60...12 }

    public init(isEnabled: Bool = true, gain: Float = 0) {
        self.isEnabled = isEnabled
        self.gain = gain
    }

    /// These settings with the gain clamped into its range (NaN becomes 0 dB). Real-time safe.
    public func clamped() -> OutputGainSettings {
        OutputGainSettings(isEnabled: isEnabled, gain: clampParameter(gain, -60, 12, fallback: 0))
    }
}
