import Foundation
import SoundFitDSP
import SoundFitHearing
import SoundFitModel
import Testing

/// The maximum output derived from the prescription (`MaximumOutput`), per band
/// and per ear, for the standard audiograms — against the rule computed here on its own: the
/// speech band level integrated from the LTASS density (not `bandLevel(overall:from:to:)`), the
/// preset's gain, the 15 dB peak factor of ANSI S3.5-1997, the power sum per ear.
@Suite struct MaximumOutputTests {
    /// 75 dB SPL speech between `lower` and `upper` Hz: the LTASS density integrated on a 1 Hz grid.
    private func speechLevel(from lower: Double, to upper: Double) -> Double {
        var intensity = 0.0
        var f = lower + 0.5
        while f < upper {
            intensity += pow(10, SpeechSpectrum.spectralDensity(at: f, overall: 75) / 10) * min(1, upper - f + 0.5)
            f += 1
        }
        return 10 * log10(intensity)
    }

    @Test("Band and ear maxima of N1–N7 and S1–S3 follow the rule (tech levels 3 and 4); below level 3 no band limits",
          arguments: [1, 2, 3, 4])
    func standardAudiograms(techLevel: Int) throws {
        let level = try TechLevel(techLevel)
        for standard in StandardAudiogram.all {
            let profile = try HearingProfile(left: standard.audiogram, right: standard.audiogram)
            let preset = PresetGenerator.preset(.default, profile: profile, techLevel: level)
            let centres = preset.left.map(\.centre)
            var maxima: [Double] = []
            for (index, band) in preset.left.enumerated() {
                // Edges halfway (log frequency) to the neighbours; the outer bands as wide as the next.
                let below = index > 0 ? centres[index - 1] : centres[0] * centres[0] / centres[1]
                let above = index + 1 < centres.count ? centres[index + 1] : centres[index] * centres[index] / centres[index - 1]
                let expected = speechLevel(from: (below * band.centre).squareRoot(), to: (band.centre * above).squareRoot())
                    + band.gain + 15
                maxima.append(expected)
                if techLevel >= 3 {
                    #expect(abs(band.outputLimit - expected) < 0.1,
                            "\(standard.name) \(band.centre) Hz: \(band.outputLimit) vs \(expected) dB SPL")
                } else {
                    #expect(band.outputLimit == 120, "no band limit below tech level 3")
                }
            }
            let ear = 10 * log10(maxima.reduce(0) { $0 + pow(10, $1 / 10) })
            let derived = MaximumOutput.earMaximum(bands: preset.left)
            #expect(abs(derived - ear) < 0.1, "\(standard.name): ear maximum \(derived) vs \(ear) dB SPL")
            #expect(derived >= (maxima.max() ?? 0) - 0.01)
            if techLevel == 3 {
                print("[measure] " + "\(standard.name) level 3: band maxima "
                       + preset.left.map { String(format: "%.0f", $0.outputLimit) }.joined(separator: " ")
                       + String(format: " dB SPL; ear maximum %.1f dB SPL", derived))
            }
        }
    }

    @Test("More gain, higher maxima; the same ear twice gives the same maximum")
    func monotonicInGain() {
        let centres = [250.0, 500, 1000, 2000, 4000]
        let low = MaximumOutput.bandMaxima(gains: [0, 5, 10, 15, 20], centres: centres)
        let high = MaximumOutput.bandMaxima(gains: [10, 15, 20, 25, 30], centres: centres)
        for (a, b) in zip(low, high) { #expect(abs(b - a - 10) < 0.02) }
        #expect(abs(MaximumOutput.earMaximum(bandMaxima: high) - MaximumOutput.earMaximum(bandMaxima: low) - 10) < 0.02)
    }
}
