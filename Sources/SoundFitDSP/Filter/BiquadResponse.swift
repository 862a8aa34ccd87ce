extension BiquadFilter {
    /// The cutoff the filter designs with: `cutoff` kept below Nyquist at low sample rates
    /// (0.49·fs). The kernel and the response both design through it. Real-time safe.
    @inline(__always)
    public static func designCutoff(_ cutoff: Double, sampleRate: Double) -> Double {
        min(cutoff, 0.49 * sampleRate)
    }
}

extension FilterSettings {
    /// The direct-form coefficients the filter stage runs once its ramps have settled at these
    /// settings and `sampleRate` (the identity when the stage is disabled): the cookbook design
    /// of `BiquadCoefficients.rbj` at `BiquadFilter.designCutoff`, as the kernel designs it.
    public func steadyCoefficients(sampleRate: Double) -> BiquadCoefficients {
        let settings = clamped()
        guard settings.isEnabled else { return .identity }
        return BiquadCoefficients.rbj(
            type: settings.type, cutoff: BiquadFilter.designCutoff(Double(settings.cutoff), sampleRate: sampleRate),
            q: Double(settings.q), gain: Double(settings.gain), sampleRate: sampleRate)
    }
}
