import Foundation
import SoundFitHearing
import Testing

/// dB EM → band SPL → RMS amplitude and back, the highest masking the output can present, and
/// the reference table's checks.
@Suite struct EffectiveMaskingTests {
    let calibration = ToneCalibration(fullScaleSPL: 100)

    @Test func aBandOfTheSineSPLHasTheSineRMS() throws {
        // TDH-39 at 1 kHz: RETSPL 7 dB. 93 dB EM uncorrected = 100 dB SPL = the full-scale sine's
        // SPL, whose RMS is 1/√2.
        let amplitude = calibration.maskingAmplitude(effectiveMasking: 93, frequency: 1000)
        #expect(abs(amplitude - 1 / 2.0.squareRoot()) < 1e-12)
        #expect(abs(calibration.maskingSoundPressureLevel(effectiveMasking: 93, frequency: 1000) - 100) < 1e-12)
        // 20 dB less is a tenth of the RMS.
        #expect(abs(calibration.maskingAmplitude(effectiveMasking: 73, frequency: 1000) - 0.1 / 2.0.squareRoot()) < 1e-12)
        // A correction table adds its dB to the band SPL (interpolated in log frequency).
        let reference = try MaskingNoiseReference(name: "test", corrections: [(500, 4), (2000, 6)])
        #expect(abs(reference.correction(at: 1000) - 5) < 1e-12)
        #expect(abs(calibration.maskingSoundPressureLevel(effectiveMasking: 50, frequency: 1000, reference: reference) - 62) < 1e-12)
    }

    @Test("effectiveMasking(amplitude:) inverts maskingAmplitude", arguments: [250.0, 1000, 4000, 8000])
    func roundTrip(frequency: Double) throws {
        let reference = try MaskingNoiseReference(name: "test", corrections: [(125, 3), (8000, 7)])
        for level in stride(from: -10.0, through: 110, by: 7.5) {
            let amplitude = calibration.maskingAmplitude(effectiveMasking: level, frequency: frequency, reference: reference)
            let back = calibration.effectiveMasking(amplitude: amplitude, frequency: frequency, reference: reference)
            #expect(abs(back - level) < 1e-9, "\(frequency) Hz \(level) dB EM → \(back)")
        }
    }

    @Test func theHighestMaskingKeepsTheNoisePeaksUnderTheLimitAndFullScale() {
        // Limit 90 dB SPL (under full scale): a sine there peaks at 10^(−10/20); the band's RMS × 4 equals it.
        let highest = calibration.highestEffectiveMasking(frequency: 1000, limitSPL: 90)
        let rms = calibration.maskingAmplitude(effectiveMasking: highest, frequency: 1000)
        #expect(abs(rms * ToneCalibration.maskingCrestFactor - pow(10, -10.0 / 20)) < 1e-12)
        // Above full scale the full scale decides.
        let capped = calibration.highestEffectiveMasking(frequency: 1000, limitSPL: 130)
        #expect(abs(calibration.maskingAmplitude(effectiveMasking: capped, frequency: 1000) * ToneCalibration.maskingCrestFactor - 1) < 1e-12)
        // Lower than the tone's highest hearing level by the crest allowance (−9.03 dB) at every frequency.
        for frequency in [250.0, 1000, 4000] {
            let difference = calibration.highestHearingLevel(frequency: frequency, limitSPL: 90)
                - calibration.highestEffectiveMasking(frequency: frequency, limitSPL: 90)
            #expect(abs(difference - 20 * log10(4 / 2.0.squareRoot())) < 1e-9)
        }
    }

    @Test func badReferenceTablesAreRefused() {
        #expect(throws: MaskingNoiseReferenceError.empty) { try MaskingNoiseReference(name: "x", corrections: []) }
        #expect(throws: MaskingNoiseReferenceError.badFrequency(0)) { try MaskingNoiseReference(name: "x", corrections: [(0, 4)]) }
        #expect(throws: MaskingNoiseReferenceError.badCorrection(frequency: 1000, correction: 90)) {
            try MaskingNoiseReference(name: "x", corrections: [(1000, 90)])
        }
        #expect(throws: MaskingNoiseReferenceError.duplicateFrequency(1000)) {
            try MaskingNoiseReference(name: "x", corrections: [(1000, 4), (1000, 5)])
        }
        #expect(MaskingNoiseReference.uncorrected.correction(at: 4000) == 0)
    }
}
