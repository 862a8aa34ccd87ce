import SoundFitDSP
import SoundFitModel

extension BandDynamics {
    /// The largest gain (dB) the band's law gives at any level before its safety cap
    /// (`maximumGain`) and output limit: the gain at and below the knee (compression only
    /// lowers it above the knee, expansion below), never below the floor (`minimumGain`).
    public var uncappedPeakGain: Double {
        max(gain + (1 / ratio - 1) * (knee - referenceLevel), minimumGain)
    }

    /// Whether the safety cap binds: the law reaches `maximumGain` at some level (within the
    /// payload's 0.01 dB rounding), so some sound gets less gain than the law without the cap
    /// would give. Reported per band as `gain_capped` in the preset JSON and counted in `/status`.
    public var isGainCapped: Bool { uncappedPeakGain >= maximumGain - 0.005 }
}
