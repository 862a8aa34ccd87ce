import Foundation
@testable import SoundFit
import Testing

/// The arithmetic of `FittingVerification` (targets, tolerances, verdict) and its report formats,
/// without rendering; the measurement itself is tested through the real binary
/// (`SoundFitIntegration.Verify`).
@Suite struct FittingVerificationTests {
    static let n3 = StandardAudiogram.named("N3")!.audiogram

    static func bands(techLevel: Int) throws -> [BandDynamics] {
        let profile = try HearingProfile(left: n3, right: n3)
        return PresetGenerator.preset(.default, profile: profile, techLevel: try TechLevel(techLevel)).left
    }

    @Test func targetAt65AndIntensity1IsThePrescribedGain() throws {
        for techLevel in 1...4 {
            let bands = try Self.bands(techLevel: techLevel)
            let targets = FittingVerification.speechTargets(bands, level: 65, intensity: 1)
            for (band, target) in zip(bands, targets) {
                // The reference level is the band level of 65 dB SPL speech: the gain there is
                // the prescription (NAL-RP, capped as the generator caps it).
                #expect(abs(target - band.gain) < 1e-9, "tech level \(techLevel), \(band.centre) Hz: \(target) vs \(band.gain)")
            }
        }
    }

    @Test func targetFollowsTheGainLawAndTheIntensity() throws {
        let bands = try Self.bands(techLevel: 3)
        let loud = FittingVerification.speechTargets(bands, level: 80, intensity: 1)
        let soft = FittingVerification.speechTargets(bands, level: 55, intensity: 1)
        for (index, band) in bands.enumerated() {
            #expect(abs(loud[index] - band.gain(atLevel: band.referenceLevel + 15)) < 1e-9)
            #expect(abs(soft[index] - band.gain(atLevel: band.referenceLevel - 10)) < 1e-9)
            if band.ratio > 1 { #expect(loud[index] < soft[index], "compression: less gain for louder speech") }
        }
        // Intensity 0.75 mixes the linear gains: 20·log10(1 + 0.75·(10^(g/20) − 1)).
        let mixed = FittingVerification.speechTargets(bands, level: 65, intensity: 0.75)
        for (band, target) in zip(bands, mixed) {
            let expected = 20 * log10(1 + 0.75 * (pow(10, band.gain / 20) - 1))
            #expect(abs(target - expected) < 1e-9)
        }
    }

    @Test func toleranceIsOneDecibelTo4kHzAndTwoAbove() {
        #expect([250.0, 1000, 4000].allSatisfy { FittingVerification.tolerance(centre: $0) == 1 })
        #expect([5657.0, 6000].allSatisfy { FittingVerification.tolerance(centre: $0) == 2 })
        #expect([8000.0, 11314].allSatisfy { FittingVerification.tolerance(centre: $0) == .infinity })
    }

    static func report(missBy miss: Double) -> FittingVerification.Report {
        let bands = [FittingVerification.Band(centre: 1000, target: 20, measured: 20.3, tolerance: 1),
                     FittingVerification.Band(centre: 6000, target: 10, measured: 10 + miss, tolerance: 2)]
        return FittingVerification.Report(
            techLevel: 3, calibration: 100, intensity: 1, isEnabled: true, loadedVariant: "default",
            speech: [FittingVerification.SpeechResult(ear: .left, level: 65, bands: bands)],
            tones: [FittingVerification.ToneCurve(ear: .right, centre: 1000, inputs: [40, 45], targets: [60, 65], measured: [60.1, 64.9])],
            prescription: [FittingVerification.PrescribedCurve(ear: .left, centres: [1000, 6000], prescribed: [20, 10], applied: [20, 10])])
    }

    @Test func verdictNamesTheBandsOutsideTolerance() {
        let good = Self.report(missBy: -1.9)
        #expect(good.passes && good.failures.isEmpty)
        let bad = Self.report(missBy: -2.5)
        #expect(!bad.passes)
        #expect(bad.failures == ["left 6000 Hz at 65 dB SPL: measured 7.5 dB, target 10.0 dB (-2.5 dB, tolerance 2 dB)"])
        #expect(bad.table.contains("FAIL: 1 band(s) outside tolerance"))
    }

    @Test func csvAndJSONCarryEveryNumber() throws {
        let report = Self.report(missBy: 0.5)
        #expect(report.csv == """
            kind,ear,level_db_spl,centre_hz,target_db,measured_db,tolerance_db,pass
            speech,left,65.00,1000.00,20.00,20.30,1.00,1
            speech,left,65.00,6000.00,10.00,10.50,2.00,1
            tone,right,40.00,1000.00,60.00,60.10,,
            tone,right,45.00,1000.00,65.00,64.90,,

            """)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.json.compactData())) as? [String: Any])
        #expect(json["passes"] as? Bool == true && json["techLevel"] as? Int == 3 && json["loadedVariant"] as? String == "default")
        let speech = try #require(json["speech"] as? [[String: Any]])
        #expect((speech.first?["bands"] as? [[String: Any]])?.map { $0["measured"] as? Double } == [20.3, 10.5])
        #expect((json["prescription"] as? [[String: Any]])?.first?["prescribed"] as? [Double] == [20, 10])
        #expect((json["tones"] as? [[String: Any]])?.first?["measured"] as? [Double] == [60.1, 64.9])
    }
}
