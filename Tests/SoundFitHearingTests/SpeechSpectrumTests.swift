import SoundFitHearing
import Foundation
import Testing

@Suite("Speech spectrum, speech-shaped noise and band analysis")
struct SpeechSpectrumTests {
    /// The table sums to the overall level it is published for (Byrne et al. 1994: 70 dB SPL).
    @Test("The LTASS table sums to 70 dB SPL within 0.5 dB")
    func tableSumsToItsOverallLevel() {
        #expect(abs(SpeechSpectrum.tableOverallLevel - 70) < 0.5, "\(SpeechSpectrum.tableOverallLevel)")
    }

    /// The noise has the requested level and, per third-octave band, the table's levels (a
    /// ±1/6-octave band is a third-octave band), measured by the band analysis.
    @Test("Speech-shaped noise at 65 dB SPL reads the LTASS band levels within 0.5 dB from 200 Hz to 8 kHz")
    func noiseHasTheSpectrum() {
        let noise = SpeechShapedNoise.samples(level: 65, fullScaleSPL: 100, sampleRate: 48000, seconds: 4)
        let rms = (noise.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(noise.count)).squareRoot()
        #expect(abs(20 * log10(rms * 2.0.squareRoot()) + 100 - 65) < 0.01)
        let analysis = BandPowerAnalysis(sampleRate: 48000)
        let centres = Array(SpeechSpectrum.centres[5...21])
        let measured = analysis.bandLevels(noise[...], centres: centres, fullScaleSPL: 100)
        for (index, centre) in centres.enumerated() {
            let expected = SpeechSpectrum.levels[index + 5] - 5
            #expect(abs(measured[index] - expected) < 0.5, "\(centre) Hz: \(measured[index]) vs \(expected)")
        }
        let gains = analysis.insertionGains(input: noise[...], output: noise.map { $0 * 2 }[...], centres: [250, 1000, 6000])
        #expect(gains.allSatisfy { abs($0 - 6.0206) < 1e-6 }, "\(gains)")
    }

    /// Byrne, Parkinson & Newall (1991): N7's 2 kHz threshold (105 dB HL) takes the 105 row.
    @Test("NAL-RP's severe-loss correction: the 105 dB HL row, interpolation, none below 95")
    func severeLossCorrection() {
        #expect(NALPrescription.severeLossCorrection(h2000: 105) == [8, 5, 0, -3, -5, -5, -5, -5])
        #expect(NALPrescription.severeLossCorrection(h2000: 97.5) == [5, 3.5, 0, -1.5, -2.5, -2.5, -2.5, -2.5])
        #expect(NALPrescription.severeLossCorrection(h2000: 94.9).allSatisfy { $0 == 0 })
        #expect(NALPrescription.severeLossCorrection(h2000: 130) == [15, 9, 0, -5, -9, -9, -9, -9])
        // Tapers: 0 at and beyond 50 Hz and 10 kHz, the 6 kHz gain at 6 kHz.
        let n3 = StandardAudiogram.named("N3")!.audiogram
        let gains = NALPrescription.insertionGains(for: n3)
        #expect(NALPrescription.insertionGain(for: n3, at: 10000) == 0)
        #expect(NALPrescription.insertionGain(for: n3, at: 12000) == 0)
        #expect(NALPrescription.insertionGain(for: n3, at: 6000) == gains[7])
        #expect(abs(NALPrescription.insertionGain(for: n3, at: 8000) - gains[7] * (1 - log2(8.0 / 6) / log2(10.0 / 6))) < 1e-9)
    }
}
