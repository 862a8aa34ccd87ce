import SoundFitDSP
import SoundFitModel
/// Generates personalization presets from a hearing profile: rule "soundfit-nal-rp-wdrc/2".
///
/// The rule (ours, built on public practice; see docs/Personalization.md):
/// - **Gain at 65 dB SPL speech** per band: the complete NAL-RP insertion gain at the band
///   centre (`NALPrescription.interpolate`: NAL-R with the severe-loss extensions, interpolated
///   in log frequency, tapered to 0 dB at 50 Hz and 10 kHz), never cut below what NAL-RP
///   prescribes by anything but the safety cap below (version 1 capped it at a hidden 40 dB).
/// - **Reference level**: the level the band's detector reads for 65 dB SPL speech: the long-term
///   average speech spectrum of Byrne et al. 1994 (`SpeechSpectrum`) through the band's own
///   analysis band-pass (`MultibandLayout.analysisPowerResponse`, 48 kHz design). The detector
///   reads mean band power without bias (`PersonalizationProcessor`), so speech-shaped noise at
///   65 dB SPL gets exactly the prescribed gain.
/// - **Compression** (tech level ≥ 2): ratio 1 + max(0, HL − 20)/50, at most 3, above a knee at
///   the band level of 40 dB speech (reference − 25 dB); constant gain below the knee.
/// - **Expansion and limiter** (tech level ≥ 3): 2:1 expansion below knee − 20 dB; per-band
///   output limit from the band's gain (`MaximumOutput`: 75 dB SPL speech peaks pass; 120 dB SPL,
///   i.e. effectively none, below tech level 3).
/// - **Gain floor**: `minimumGain` 0 dB in every band: no level gets a loss (NAL-R never
///   prescribes one); the user may lower it in a preset file.
/// - **Safety cap** (`maximumGain`, `safetyCap(outputLimit:knee:)`): the gain at which the band
///   level of 40 dB SPL speech (the knee) would reach the band's output limit, and never more
///   than 60 dB (the field's range). More gain than that would only lift sounds softer than
///   quiet speech up to the limit. With the derived output limit (75 dB SPL speech + gain +
///   15 dB peaks) the cap is min(60, gain + 50 dB), so it never cuts the prescription at 65 dB
///   SPL speech (NAL-RP is at most 57.1 dB for Bisgaard N1–N7/S1–S3, N7 at 1 kHz); where it
///   binds (the law would give more gain to soft sounds) the payload reports it per band
///   (`gain_capped`) and `/status` counts it.
/// - **Time constants**: attack 5 ms, release 50 ms; per band at tech level 4 (slower at low
///   frequencies: attack 10 → 2.5 ms, release 100 → 40 ms from 250 Hz to 11.3 kHz). These are
///   ANSI S3.22 / IEC 60118-2 times (a tone at the band centre stepping 55 ↔ 90 dB SPL; within
///   3 dB / 4 dB of the new steady output): the processor derives its detector from them
///   (`DetectorDesign`). They do not apply at tech level 1 (static equalizer) nor to a band whose
///   gain moves less than 4 dB over the step.
/// - **Variants**: up = 1.25·gain, +2 dB at and above 1 kHz, ratios ×1.1 (≤ 3), caps re-applied;
///   down = 0.75·gain, −2 dB at and above 1 kHz (≥ 0), ratios ×0.9 (≥ 1).
/// - **Availability**: default always. Up and down need a prescription to fine-tune: neither is
///   offered when the largest default gain is below 3 dB (normal hearing: nothing to soften or
///   enrich); no up when every band's default gain is already at its safety cap.
public enum PresetGenerator {
    public static let rule = "soundfit-nal-rp-wdrc/2"
    /// The largest safety cap of any band (dB): the top of `maximum_gain_db`'s range.
    public static var largestGainCap: Double { BandDynamics.Field.maximumGain.range!.upperBound }
    /// Below this largest default gain there is nothing for `down` to soften (dB).
    public static let minimumSoftenableGain = 3.0
    public static let defaultCalibration = 100.0

    /// Every variant available for `profile` and `techLevel`, default first.
    public static func presets(for profile: HearingProfile, techLevel: TechLevel,
                               calibration: Double = defaultCalibration) -> [PresetPayload] {
        let base = preset(.default, profile: profile, techLevel: techLevel, calibration: calibration)
        return variants(offeredBy: base).map {
            $0 == .default ? base : preset($0, profile: profile, techLevel: techLevel, calibration: calibration)
        }
    }

    /// The variants a profile whose default preset is `base` offers, default first: up and
    /// down only when `base` prescribes at least `minimumSoftenableGain` somewhere; up only
    /// when some band's gain is below its safety cap.
    public static func variants(offeredBy base: PresetPayload) -> [PresetVariant] {
        let allBands = base.left + base.right
        guard (allBands.map(\.gain).max() ?? 0) >= minimumSoftenableGain else { return [.default] }
        let everyBandAtItsCap = allBands.allSatisfy { $0.gain >= $0.maximumGain - 1e-9 }
        return everyBandAtItsCap ? [.default, .down] : [.default, .up, .down]
    }

    /// The available variants' names, default first.
    public static func availableVariants(for profile: HearingProfile, techLevel: TechLevel) -> [PresetVariant] {
        presets(for: profile, techLevel: techLevel).map(\.variant)
    }

    /// One variant (whether or not the availability rules offer it).
    public static func preset(_ variant: PresetVariant, profile: HearingProfile, techLevel: TechLevel,
                              calibration: Double = defaultCalibration) -> PresetPayload {
        PresetPayload(
            version: PresetPayload.formatVersion, rule: rule, techLevel: techLevel, variant: variant,
            calibration: calibration,
            left: bands(for: profile.audiogram(for: .left), techLevel: techLevel, variant: variant),
            right: bands(for: profile.audiogram(for: .right), techLevel: techLevel, variant: variant))
    }

    static func bands(for audiogram: Audiogram, techLevel: TechLevel, variant: PresetVariant) -> [BandDynamics] {
        let centres = techLevel.bandCentres
        let gains = NALPrescription.insertionGains(for: audiogram)
        return centres.enumerated().map { index, centre in
            let prescribed = NALPrescription.interpolate(gains, at: centre)
            var ratio = techLevel.compresses
                ? min(3, 1 + max(0, audiogram.threshold(at: centre) - 20) / 50) : 1
            var gain = prescribed
            let highBoost = centre >= 1000 ? 2.0 : 0
            switch variant {
            case .default: break
            case .up:
                gain = 1.25 * prescribed + highBoost
                if techLevel.compresses { ratio = min(3, ratio * 1.1) }
            case .down:
                gain = max(0, 0.75 * prescribed - highBoost)
                if techLevel.compresses { ratio = max(1, ratio * 0.9) }
            }
            let reference = speechBandLevel(band: index, techLevel: techLevel.value)
            let knee = max(0, reference - 25)
            let position = centres.count > 1 ? Double(index) / Double(centres.count - 1) : 0
            var band = BandDynamics(
                centre: centre, gain: rounded(gain), referenceLevel: rounded(reference), ratio: rounded(ratio),
                knee: rounded(knee), expansionKnee: techLevel.expands ? rounded(max(0, knee - 20)) : nil,
                expansionRatio: techLevel.expands ? 2 : 1, maximumGain: largestGainCap,
                outputLimit: techLevel.limits ? MaximumOutput.bandMaximum(index: index, centres: centres, gain: gain) : 120,
                attack: techLevel.perBandTimeConstants ? rounded(10 - 7.5 * position) : 5,
                release: techLevel.perBandTimeConstants ? rounded(100 - 60 * position) : 50)
            // The safety cap follows the band's own output limit and knee, whatever set them;
            // every variant's gain is capped by it (the floor, minimumGain, stays 0 dB).
            band.maximumGain = rounded(safetyCap(outputLimit: band.outputLimit, knee: band.knee))
            band.gain = min(band.gain, band.maximumGain)
            return band
        }
    }

    /// A band's safety cap (dB): the gain at which its band level of 40 dB SPL speech (`knee`)
    /// would reach its output limit, at most `largestGainCap` and at least 0 dB.
    public static func safetyCap(outputLimit: Double, knee: Double) -> Double {
        min(largestGainCap, max(0, outputLimit - knee))
    }

    /// The level (dB SPL) band `band`'s detector reads for 65 dB SPL speech (Byrne et al. 1994,
    /// through the band's analysis band-pass).
    static func speechBandLevel(band: Int, techLevel: Int) -> Double {
        let layout = MultibandLayout(techLevel: techLevel)!
        return SpeechSpectrum.bandLevel(overall: 65, powerResponse: layout.analysisPowerResponse(band: band))
    }

    private static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}

#if canImport(Glibc)
import Glibc
#endif
