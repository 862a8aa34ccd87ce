import SoundFitDSP
import SoundFitModel
/// Generates personalization presets from a hearing profile: rule "soundfit-nal-rp-wdrc/1".
///
/// The rule (ours, built on public practice; see docs/Personalization.md):
/// - **Gain at 65 dB SPL speech** per band: NAL-R/NAL-RP insertion gain at the band centre,
///   interpolated in log frequency, capped at `gainCap` (40 dB).
/// - **Reference level**: the band level of 65 dB SPL speech (an octave-band long-term average
///   speech spectrum after Byrne et al. 1994, adjusted for the band's width).
/// - **Compression** (tech level ≥ 2): ratio 1 + max(0, HL − 20)/50, at most 3, above a knee at
///   the band level of 40 dB speech (reference − 25 dB); constant gain below the knee.
/// - **Expansion and limiter** (tech level ≥ 3): 2:1 expansion below knee − 20 dB; per-band
///   output limit from the band's gain (`MaximumOutput`: 75 dB SPL speech peaks pass; 120 dB SPL,
///   i.e. effectively none, below tech level 3).
/// - **Time constants**: attack 5 ms, release 50 ms; per band at tech level 4 (slower at low
///   frequencies: attack 10 → 2.5 ms, release 100 → 40 ms from 250 Hz to 11.3 kHz).
/// - **Variants**: up = 1.25·gain, +2 dB at and above 1 kHz, ratios ×1.1 (≤ 3), caps re-applied;
///   down = 0.75·gain, −2 dB at and above 1 kHz (≥ 0), ratios ×0.9 (≥ 1).
/// - **Availability**: default always. Up and down need a prescription to fine-tune: neither is
///   offered when the largest default gain is below 3 dB (normal hearing: nothing to soften or
///   enrich); no up when every band's default gain is already at the cap.
public enum PresetGenerator {
    public static let rule = "soundfit-nal-rp-wdrc/1"
    /// Maximum insertion gain of any band (dB).
    public static let gainCap = 40.0
    /// Below this largest default gain there is nothing for `down` to soften (dB).
    public static let minimumSoftenableGain = 3.0
    public static let defaultCalibration = 100.0

    /// Every variant available for `profile` and `fitting`, default first.
    public static func presets(for profile: HearingProfile, fitting: Fitting,
                               calibration: Double = defaultCalibration) -> [PresetPayload] {
        let base = preset(.default, profile: profile, fitting: fitting, calibration: calibration)
        var result = [base]
        let allBands = base.left + base.right
        let prescribesGain = (allBands.map(\.gain).max() ?? 0) >= minimumSoftenableGain
        if prescribesGain && !allBands.allSatisfy({ $0.gain >= gainCap - 1e-9 }) {
            result.append(preset(.up, profile: profile, fitting: fitting, calibration: calibration))
        }
        if prescribesGain {
            result.append(preset(.down, profile: profile, fitting: fitting, calibration: calibration))
        }
        return result
    }

    /// The available variants' names, default first.
    public static func availableVariants(for profile: HearingProfile, fitting: Fitting) -> [PresetVariant] {
        presets(for: profile, fitting: fitting).map(\.variant)
    }

    /// One variant (whether or not the availability rules offer it).
    public static func preset(_ variant: PresetVariant, profile: HearingProfile, fitting: Fitting,
                              calibration: Double = defaultCalibration) -> PresetPayload {
        PresetPayload(
            version: PresetPayload.formatVersion, rule: rule, fitting: fitting, variant: variant,
            calibration: calibration,
            left: bands(for: profile.audiogram(for: .left), fitting: fitting, variant: variant),
            right: bands(for: profile.audiogram(for: .right), fitting: fitting, variant: variant))
    }

    static func bands(for audiogram: Audiogram, fitting: Fitting, variant: PresetVariant) -> [BandDynamics] {
        let centres = fitting.bandCentres
        let gains = NALPrescription.insertionGains(for: audiogram)
        return centres.enumerated().map { index, centre in
            let prescribed = min(gainCap, NALPrescription.interpolate(gains, at: centre))
            var ratio = fitting.compresses
                ? min(3, 1 + max(0, audiogram.threshold(at: centre) - 20) / 50) : 1
            var gain = prescribed
            let highBoost = centre >= 1000 ? 2.0 : 0
            switch variant {
            case .default: break
            case .up:
                gain = min(gainCap, 1.25 * prescribed + highBoost)
                if fitting.compresses { ratio = min(3, ratio * 1.1) }
            case .down:
                gain = max(0, 0.75 * prescribed - highBoost)
                if fitting.compresses { ratio = max(1, ratio * 0.9) }
            }
            let reference = speechBandLevel(centre: centre, centres: centres)
            let knee = max(0, reference - 25)
            let position = centres.count > 1 ? Double(index) / Double(centres.count - 1) : 0
            return BandDynamics(
                centre: centre, gain: rounded(gain), referenceLevel: rounded(reference), ratio: rounded(ratio),
                knee: rounded(knee), expansionKnee: fitting.expands ? rounded(max(0, knee - 20)) : nil,
                expansionRatio: fitting.expands ? 2 : 1, maximumGain: gainCap,
                outputLimit: fitting.limits ? MaximumOutput.bandMaximum(index: index, centres: centres, gain: gain) : 120,
                attack: fitting.perBandTimeConstants ? rounded(10 - 7.5 * position) : 5,
                release: fitting.perBandTimeConstants ? rounded(100 - 60 * position) : 50)
        }
    }

    /// Octave-band levels (dB SPL) of 65 dB SPL speech, after the long-term average speech
    /// spectrum of Byrne et al. (1994); interpolated in log frequency.
    static let octaveSpeechLevels: [(Double, Double)] = [
        (125, 52), (250, 60), (500, 61), (1000, 54), (2000, 48), (4000, 45), (8000, 40), (16000, 30),
    ]

    /// The level of 65 dB SPL speech in the band around `centre`, whose edges lie halfway (in
    /// log frequency) to its neighbours.
    static func speechBandLevel(centre: Double, centres: [Double]) -> Double {
        let index = centres.firstIndex(of: centre) ?? 0
        let below = index > 0 ? centres[index - 1] : centre / (index + 1 < centres.count ? centres[index + 1] / centre : 2)
        let above = index + 1 < centres.count ? centres[index + 1] : centre * (centre / below)
        let widthOctaves = (log2(above) - log2(below)) / 2
        var octaveLevel = octaveSpeechLevels.last!.1
        for (a, b) in zip(octaveSpeechLevels, octaveSpeechLevels.dropFirst()) where centre >= a.0 && centre <= b.0 {
            let t = (log2(centre) - log2(a.0)) / (log2(b.0) - log2(a.0))
            octaveLevel = a.1 + t * (b.1 - a.1)
            break
        }
        return octaveLevel + 10 * log10(widthOctaves)
    }

    private static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}

#if canImport(Glibc)
import Glibc
#endif
