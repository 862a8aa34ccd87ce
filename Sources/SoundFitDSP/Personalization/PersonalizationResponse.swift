/// The magnitude response of the personalization stage at given band gains: the cascade the
/// processor solves for those gains (`EqualizerDesign`, float64, to convergence), evaluated
/// exactly. The band gains are the ones the processor applies (after intensity, see
/// `appliedGain(lawGain:intensity:)`), per ear. Allocates; not for the audio thread.
public struct PersonalizationResponse: Sendable {
    public let equalizer: MultibandEqualizer

    /// The response of tech level `techLevel`'s cascade at `sampleRate`; nil for an unknown tech
    /// level or a sample rate below 8 kHz.
    public init?(techLevel: Int, sampleRate: Double) {
        guard let equalizer = MultibandEqualizer(techLevel: techLevel, sampleRate: sampleRate) else { return nil }
        self.equalizer = equalizer
    }

    /// The cascade's magnitude (dB) at each of `frequencies` for band gains `bandGains` (dB, one
    /// per band of the layout), solved once.
    public func decibels(atFrequencies frequencies: [Double], bandGains: [Double]) -> [Double] {
        equalizer.responseDecibels(atFrequencies: frequencies, bandGains: bandGains)
    }

    /// The band gain (dB) the processor applies for a gain law's gain `lawGain` (dB) at
    /// `intensity`: the linear gain interpolated, `20·log10(1 + i·(10^(g/20) − 1))`, and kept at
    /// −60 dB or above, as the processor's control update computes it (in float64 here).
    public static func appliedGain(lawGain: Double, intensity: Double) -> Double {
        let linear = libmPow(10, lawGain / 20)
        let mixed = max(1 + intensity * (linear - 1), 1e-6)
        return max(20 * libmLog10(mixed), -60)
    }
}
