import SoundFitDSP
import SoundFitModel

/// The maximum output derived from the prescription: per band (`BandDynamics.outputLimit`) and
/// per ear (the broadband output limiter's ceiling, never above `--max-output`). Rule
/// "soundfit-sspl-speech-peaks/1" — ours, built on published parts; no full published rule was
/// found to implement:
///
/// - **What we looked for.** NAL-SSPL (Dillon & Storey 1998, "The National Acoustic
///   Laboratories' procedure for selecting the saturation sound pressure level of hearing aids:
///   theoretical derivation", Ear Hear 19(4):255–266). Its abstract (PubMed 9728721) gives the
///   method — the prescribed SSPL is the midpoint between the *minimum* acceptable SSPL (the
///   output that 75 dB SPL continuous discourse needs through the prescribed gain, so speech
///   does not saturate the aid) and the *maximum* (loudness discomfort level, measured or
///   estimated from thresholds); its 3FA value "increases linearly from 89 dB SPL for normal
///   hearing" — but not the full formula, the LDL estimate, nor the per-frequency version. The
///   stored library holds no copy of the paper; we did not use second-hand heuristics.
/// - **What we build: the minimum acceptable SSPL of that method**, the one half of it whose
///   parts are citable: per band, the band level of 75 dB SPL speech (Byrne et al. 1994 LTASS,
///   `SpeechSpectrum.bandLevel(overall:from:to:)`, over the band's edges halfway in log frequency
///   to its neighbours) + the band's prescribed gain + a 15 dB speech peak factor: ANSI S3.5-1997
///   (Speech Intelligibility Index) Eq. 12, band audibility (E′ − D′ + 15)/30, takes speech to
///   reach 15 dB above its long-term band level (as implemented in
///   google/speech_intelligibility_index `sii.py`). So 75 dB SPL speech peaks pass every band
///   unlimited; louder sounds are held there. It sits below NAL-SSPL's midpoint by design — the
///   quieter acceptable end — and no LDL is applied because the profile records none.
/// - **Per ear**: the power sum of the ear's band maxima — the broadband level of those speech
///   peaks through every band at once, so the broadband limiter does not cut what the bands let
///   through; never below the highest band maximum. The ear's ceiling is this or `--max-output`,
///   whichever is lower (`SoundFitRuntime.earLimits`).
///
/// Pure functions; any thread.
public enum MaximumOutput {
    public static let rule = "soundfit-sspl-speech-peaks/1"
    /// The speech the bands must pass unlimited, dB SPL overall (Dillon & Storey 1998 abstract:
    /// "continuous discourse at an overall level of 75 dB SPL").
    public static let speechLevel = 75.0
    /// How far speech peaks rise above the long-term band level, dB (ANSI S3.5-1997 Eq. 12).
    public static let peakFactor = 15.0
    /// The band maxima are kept in the per-band limiter's range (`BandDynamics` 60…140 dB SPL).
    public static let bandRange: ClosedRange<Double> = 60...140

    /// The band's edges (Hz): halfway in log frequency to its neighbours; the first and last band
    /// as wide as their neighbour's spacing.
    public static func edges(of index: Int, centres: [Double]) -> (lower: Double, upper: Double) {
        let centre = centres[index]
        let below = index > 0 ? centres[index - 1] : (centres.count > 1 ? centre * centre / centres[1] : centre / 2)
        let above = index + 1 < centres.count ? centres[index + 1] : centre * centre / below
        return ((below * centre).squareRoot(), (centre * above).squareRoot())
    }

    /// The band's maximum output, dB SPL: 75 dB SPL speech's band level + `gain` + 15 dB.
    public static func bandMaximum(index: Int, centres: [Double], gain: Double) -> Double {
        let (lower, upper) = edges(of: index, centres: centres)
        let speech = SpeechSpectrum.bandLevel(overall: speechLevel, from: lower, to: upper)
        let value = speech + max(0, gain) + peakFactor
        return min(bandRange.upperBound, max(bandRange.lowerBound, (value * 100).rounded() / 100))
    }

    /// Every band's maximum output for `gains` at `centres`, dB SPL.
    public static func bandMaxima(gains: [Double], centres: [Double]) -> [Double] {
        centres.indices.map { bandMaximum(index: $0, centres: centres, gain: gains[$0]) }
    }

    /// The ear's maximum output, dB SPL: the power sum of its band maxima.
    public static func earMaximum(bandMaxima: [Double]) -> Double {
        guard !bandMaxima.isEmpty else { return bandRange.upperBound }
        let sum = bandMaxima.reduce(0) { $0 + pow(10, $1 / 10) }
        return (10 * log10(sum) * 100).rounded() / 100
    }

    /// The ear's maximum output for a preset's bands (from their gains and centres; the bands'
    /// own `outputLimit` is 120 below tech level 3, where no band limits, so it is not read).
    public static func earMaximum(bands: [BandDynamics]) -> Double {
        earMaximum(bandMaxima: bandMaxima(gains: bands.map(\.gain), centres: bands.map(\.centre)))
    }
}

#if canImport(Glibc)
import Glibc
#endif
