import Foundation
import SoundFitHearing
import SoundFitModel
import Testing

/// The per-ear, per-frequency calibration table and how tones and limits use it.
@Suite struct CalibrationTableTests {
    @Test func aReadingBecomesTheCorrectionOfThatEarOnly() throws {
        var table = CalibrationTable()
        let correction = try table.record(ear: .left, frequency: 4000, nominal: 70, measured: 76)
        #expect(correction == 6)
        #expect(table.correction(ear: .left, frequency: 4000) == 6)
        #expect(table.correction(ear: .right, frequency: 4000) == 0)
        // A second reading at the same point adds (the tone played through the first correction).
        try table.record(ear: .left, frequency: 4000, nominal: 70, measured: 69)
        #expect(table.correction(ear: .left, frequency: 4000) == 5)
        #expect(table.left.count == 1)
    }

    @Test func correctionsAreInterpolatedInLogFrequencyAndHeldFlatOutside() throws {
        var table = CalibrationTable()
        try table.set(ear: .right, frequency: 1000, correction: 2)
        try table.set(ear: .right, frequency: 4000, correction: 8)
        #expect(abs(table.correction(ear: .right, frequency: 2000) - 5) < 1e-12)  // halfway in octaves
        #expect(abs(table.correction(ear: .right, frequency: 1414.2135623730951) - 3.5) < 1e-9)
        #expect(table.correction(ear: .right, frequency: 250) == 2)
        #expect(table.correction(ear: .right, frequency: 8000) == 8)
        #expect(table.correction(ear: .left, frequency: 2000) == 0)
    }

    @Test func theLargestCorrectionIsNeverBelowZero() throws {
        var table = CalibrationTable()
        #expect(table.largestCorrection == 0)
        try table.set(ear: .left, frequency: 1000, correction: -3)
        #expect(table.largestCorrection == 0)
        try table.set(ear: .right, frequency: 6000, correction: 4.5)
        #expect(table.largestCorrection == 4.5)
        table.reset()
        #expect(table.isEmpty && table.largestCorrection == 0)
    }

    @Test func badInputsAreRefusedWithTheirRange() {
        var table = CalibrationTable()
        let cases: [(String, () throws -> Void)] = [
            ("frequency 50.0 Hz is outside 125…8000", { try table.record(ear: .left, frequency: 50, nominal: 70, measured: 70) }),
            ("frequency nan Hz", { try table.record(ear: .left, frequency: .nan, nominal: 70, measured: 70) }),
            ("measured level 200.0 dB SPL is outside 0…130", { try table.record(ear: .left, frequency: 1000, nominal: 70, measured: 200) }),
            ("nominal level -5.0", { try table.record(ear: .left, frequency: 1000, nominal: -5, measured: 70) }),
            ("correction 50.0 dB at 1000.0 Hz is outside -40…40", { try table.record(ear: .left, frequency: 1000, nominal: 20, measured: 70) }),
        ]
        for (expected, body) in cases {
            do {
                try body()
                Issue.record("accepted: \(expected)")
            } catch {
                #expect("\(error)".contains(expected), "\(error)")
            }
        }
        #expect(table.isEmpty)
    }

    @Test func theToneCalibrationPlaysACorrectedEarLower() throws {
        var table = CalibrationTable()
        try table.set(ear: .left, frequency: 4000, correction: 6)
        let calibration = ToneCalibration(fullScaleSPL: 100, earphone: .tdh39, corrections: table)
        let left = calibration.fullScaleLevel(hearingLevel: 40, frequency: 4000, ear: .left)
        let right = calibration.fullScaleLevel(hearingLevel: 40, frequency: 4000, ear: .right)
        #expect(abs(right - (40 + 9.5 - 100)) < 1e-12)
        #expect(abs(left - (right - 6)) < 1e-12)
        #expect(abs(20 * log10(calibration.amplitude(hearingLevel: 40, frequency: 4000, ear: .left)) - left) < 1e-9)
        #expect(calibration.fullScaleLevel(soundPressureLevel: 80, frequency: 4000, ear: .left) == 80 - 100 - 6)
    }

    @Test func theHighestLevelKeepsTheLimitInSPL() throws {
        var table = CalibrationTable()
        try table.set(ear: .left, frequency: 4000, correction: 6)
        try table.set(ear: .right, frequency: 4000, correction: -4)
        let calibration = ToneCalibration(fullScaleSPL: 110, earphone: .tdh39, corrections: table)
        // The limiter sits at 100 − 6 dB SPL (uncorrected), the largest correction lower.
        let limitDBFS = 100.0 - 110 - table.largestCorrection
        for ear in Ear.allCases {
            let highest = calibration.highestHearingLevel(frequency: 4000, limitSPL: 100, ear: ear)
            let dBFS = calibration.fullScaleLevel(hearingLevel: highest, frequency: 4000, ear: ear)
            #expect(abs(dBFS - limitDBFS) < 1e-9, "\(ear)")
            // The real level at the ear (dBFS through calibration plus the real excess) ≤ the limit.
            #expect(dBFS + 110 + table.correction(ear: ear, frequency: 4000) <= 100 + 1e-9)
        }
        let uncorrected = ToneCalibration(fullScaleSPL: 110, earphone: .tdh39)
        #expect(uncorrected.highestHearingLevel(frequency: 4000, limitSPL: 100, ear: .left)
            == uncorrected.highestHearingLevel(frequency: 4000, limitSPL: 100))
    }
}

/// The earphone tables known by name.
@Suite struct EarphoneCatalogueTests {
    @Test func everyTableIsFoundByNameAndCarriesItsSource() {
        for table in EarphoneTable.catalogue {
            #expect(EarphoneTable.named(table.name) == table)
            #expect(!table.source.isEmpty && table.source != "user table")
            #expect(table.interauralAttenuation >= 40)
            #expect(table.entries.map(\.frequency) == table.entries.map(\.frequency).sorted())
            #expect(table.retspl(at: 1000).isFinite)
        }
        #expect(EarphoneTable.named("tdh39") == .tdh39)
        #expect(EarphoneTable.named("DD65 v2") == .dd65v2)
        #expect(EarphoneTable.named("er-3a-ha2") == .er3aHA2)
        #expect(EarphoneTable.named("hda 200") == .hda200)
        #expect(EarphoneTable.named("TDH-49") == nil)
        #expect(Set(EarphoneTable.catalogue.map(\.name)).count == EarphoneTable.catalogue.count)
    }

    @Test func tablesHoldTheSourcedValues() {
        // Spot checks against the cited sources (see EarphoneTable+Catalogue.swift).
        #expect(EarphoneTable.dd65v2.retspl(at: 6000) == 20.8)  // 5.3 dB above TDH-39, as the source table gives it
        #expect(EarphoneTable.dd65v2.retspl(at: 6000) - EarphoneTable.tdh39.retspl(at: 6000) == 20.8 - 15.5)
        #expect(EarphoneTable.tdh39.retspl(at: 1000) - EarphoneTable.hd300.retspl(at: 1000) == 6.6)
        #expect(EarphoneTable.er3a.retspl(at: 1000) == 5.5 && EarphoneTable.er3aHA2.retspl(at: 1000) == 0)
        #expect(EarphoneTable.dd45.retspl(at: 125) == 47.5)
        #expect(EarphoneTable.hda200.retspl(at: 1000) == 5.5 && EarphoneTable.hda200.retspl(at: 8000) == 17.5)
        #expect(EarphoneTable.er3a.interauralAttenuation == 50 && EarphoneTable.tdh39.interauralAttenuation == 40)
    }

    @Test func aUserTableHasTheConservativeAttenuation() throws {
        let table = try EarphoneTable(name: "mine", entries: [(1000, 7)])
        #expect(table.interauralAttenuation == EarphoneTable.supraAuralInterauralAttenuation)
        #expect(table.source == "user table")
    }
}

/// Presets corrected per ear and band for earphones that play louder or softer than nominal.
@Suite struct CalibratedPresetTests {
    @Test func levelsMoveByTheBandsCorrectionAndGainsStay() throws {
        let audiogram = try Audiogram([(500, 40), (1000, 45), (2000, 50), (4000, 60)])
        let techLevel = try TechLevel(3)
        let preset = PresetGenerator.preset(.default, profile: try HearingProfile(left: audiogram, right: audiogram), techLevel: techLevel)
        var table = CalibrationTable()
        try table.set(ear: .left, frequency: 4000, correction: 6)
        let corrected = preset.corrected(by: table)
        #expect(corrected.right == preset.right)
        for (band, original) in zip(corrected.left, preset.left) {
            let c = table.correction(ear: .left, frequency: band.centre)
            #expect(band.gain == original.gain && band.ratio == original.ratio && band.maximumGain == original.maximumGain)
            let knee: Double = min(max(original.knee - c, 0), 120)
            let reference: Double = min(max(original.referenceLevel - c, 0), 120)
            let limit: Double = min(max(original.outputLimit - c, 60), 140)
            #expect(abs(band.knee - knee) < 1e-9)
            #expect(abs(band.referenceLevel - reference) < 1e-9)
            #expect(abs(band.outputLimit - limit) < 1e-9)
        }
        try corrected.validate(for: techLevel)
        #expect(preset.corrected(by: CalibrationTable()) == preset)
    }
}
