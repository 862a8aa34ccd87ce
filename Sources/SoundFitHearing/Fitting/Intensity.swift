import SoundFitDSP

/// What the personalization's intensity does to a band's gain (docs/Personalization.md).
///
/// The filterbank sums to an all-pass, so mixing the processed signal with the all-passed dry
/// one at intensity `i` interpolates each band's *linear* gain (hearing.md, "Filterbanks"):
/// `g_i = 20·log10(1 + i·(10^(g/20) − 1))` dB. It is not `i·g` dB: at 0.75 a 20 dB band gets
/// 17.8 dB (not 15), a 6 dB band 4.8 dB — large gains lose about 2.5 dB, small ones a quarter.
public enum Intensity {
    /// The gain (dB) a band of gain `gain` (dB) applies at intensity `intensity` (0…1), as the
    /// processor computes it (`PersonalizationProcessor`, control update): one formula, the DSP's
    /// (`PersonalizationResponse.appliedGain`, which also keeps it at −60 dB or above).
    public static func appliedGain(_ gain: Double, intensity: Double) -> Double {
        PersonalizationResponse.appliedGain(lawGain: gain, intensity: intensity)
    }
}
