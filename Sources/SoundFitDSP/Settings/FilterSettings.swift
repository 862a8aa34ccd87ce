/// Target settings of the biquad stage.
public struct FilterSettings: Sendable, Equatable {
    public var isEnabled: Bool
    public var type: FilterType
    /// Hz, `20...20000`. Kernels also keep it below Nyquist at low sample rates.
    public var cutoff: Float
    /// `0.1...18`.
    public var q: Float
    /// dB, `-24...24`; used by the peak and shelf types.
    public var gain: Float

    public static var cutoffRange: ClosedRange<Float> { 20...20000 }
    public static var qRange: ClosedRange<Float> { 0.1...18 }
    public static var gainRange: ClosedRange<Float> { -24...24 }

    public init(isEnabled: Bool = false, type: FilterType = .lowpass, cutoff: Float = 1000,
                q: Float = 0.7071, gain: Float = 0) {
        self.isEnabled = isEnabled
        self.type = type
        self.cutoff = cutoff
        self.q = q
        self.gain = gain
    }

    /// These settings with every value clamped into its range (NaN becomes the default).
    /// Real-time safe.
    public func clamped() -> FilterSettings {
        FilterSettings(
            isEnabled: isEnabled, type: type,
            cutoff: clampParameter(cutoff, 20, 20000, fallback: 1000),
            q: clampParameter(q, 0.1, 18, fallback: 0.7071),
            gain: clampParameter(gain, -24, 24, fallback: 0))
    }
}
