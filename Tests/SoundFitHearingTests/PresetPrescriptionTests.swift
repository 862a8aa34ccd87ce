import Foundation
import SoundFitDSP
import SoundFitHearing
import SoundFitJSON
import SoundFitModel
import SoundFitTestSupport
import Testing

/// NAL-RP written again from its publications, independently of `NALPrescription`: the
/// formula, the severe-loss table of Byrne, Parkinson & Newall (1991, Fig. 9), log-frequency
/// interpolation and the taper to 0 dB at 50 Hz and 10 kHz.
enum IndependentNALRP {
    static let points: [Double] = [250, 500, 1000, 1500, 2000, 3000, 4000, 6000]
    static let k: [Double] = [-17, -8, 1, 1, -1, -2, -2, -2]
    static let severe: [(Double, [Double])] = [
        (95, [4, 3, 0, -1, -2, -2, -2, -2]),
        (100, [6, 4, 0, -2, -3, -3, -3, -3]),
        (105, [8, 5, 0, -3, -5, -5, -5, -5]),
        (110, [11, 7, 0, -3, -6, -6, -6, -6]),
        (115, [13, 8, 0, -4, -8, -8, -8, -8]),
        (120, [15, 9, 0, -5, -9, -9, -9, -9]),
    ]

    /// Threshold of a standard audiogram at `f`: Bisgaard's rows hold every NAL point but 8 kHz.
    static func threshold(_ levels: [Double], at f: Double) -> Double {
        levels[StandardAudiogramLevels.frequencies.firstIndex(of: f)!]
    }

    static func correction(h2000: Double, index: Int) -> Double {
        if h2000 < 95 { return 0 }
        if h2000 >= 120 { return severe[5].1[index] }
        var row = 0
        while severe[row + 1].0 <= h2000 { row += 1 }
        let t = (h2000 - severe[row].0) / 5
        return severe[row].1[index] + t * (severe[row + 1].1[index] - severe[row].1[index])
    }

    static func gains(_ levels: [Double]) -> [Double] {
        let h = { threshold(levels, at: $0) }
        let h3fa = (h(500) + h(1000) + h(2000)) / 3
        return points.indices.map { i in
            var ig = 0.31 * h(points[i]) + 0.15 * h3fa + k[i]
            if h3fa > 60 { ig += 0.2 * (h3fa - 60) }
            ig += correction(h2000: h(2000), index: i)
            return max(ig, 0)
        }
    }

    static func gain(_ levels: [Double], at f: Double) -> Double {
        let xs = [50.0] + points + [10000], ys = [0.0] + gains(levels) + [0]
        if f <= xs.first! || f >= xs.last! { return 0 }
        let j = xs.firstIndex { $0 >= f }!
        if xs[j] == f { return ys[j] }
        let t = log(f / xs[j - 1]) / log(xs[j] / xs[j - 1])
        return ys[j - 1] + t * (ys[j] - ys[j - 1])
    }
}

@Suite("Presets: complete NAL-RP, the safety cap, the gain floor, intensity")
struct PresetPrescriptionTests {
    static let names = StandardAudiogramLevels.all.map(\.name)

    static func profile(_ name: String) throws -> HearingProfile {
        try HearingProfile(left: try StandardAudiograms.audiogram(StandardAudiogramLevels.levels(name)), right: nil)
    }

    /// The default preset's gain at 65 dB SPL speech (`gain`, the law's gain at the reference
    /// level before the band's output limit) is NAL-RP at the band centre, within the payload's
    /// 0.01 dB rounding, at every tech level — no cap cuts it, also for the severe losses (N6,
    /// N7: the 40 dB cap of rule 1 cut 5–17 dB). The law at the reference level gives the same
    /// unless the band's output limit (safety, part C's) is below speech plus gain: printed.
    @Test("N1–N7, S1–S3: every band's g65 is NAL-RP computed independently", arguments: names)
    func defaultPresetIsNALRP(_ name: String) throws {
        let levels = StandardAudiogramLevels.levels(name)
        for level in 1...4 {
            let techLevel = try TechLevel(level)
            let preset = PresetGenerator.preset(.default, profile: try Self.profile(name), techLevel: techLevel)
            for band in preset.left {
                let expected = IndependentNALRP.gain(levels, at: band.centre)
                #expect(abs(band.gain - expected) <= 0.006, "\(name) tech level \(level) \(band.centre) Hz: \(band.gain) vs \(expected)")
                let g65 = band.gain(atLevel: band.referenceLevel)
                if g65 < band.gain - 0.006 {
                    #expect(abs(g65 - (band.outputLimit - band.referenceLevel)) < 1e-9, "only the output limit may cut g65")
                    print("measured: \(name) tech level \(level) \(Int(band.centre)) Hz: output limit \(band.outputLimit) dB SPL "
                          + "cuts g65 from \(band.gain) to \(String(format: "%.2f", g65)) dB")
                }
                #expect(band.maximumGain >= expected, "\(name) \(band.centre) Hz: cap \(band.maximumGain) < NAL-RP \(expected)")
            }
        }
    }

    /// The severe-loss correction reaches the presets: N7 (2 kHz at 105 dB HL) gets +8 dB at
    /// 250 Hz and −5 dB at 2 kHz over NAL-R + the H3FA extension.
    @Test("N7: the 2 kHz ≥ 95 dB HL correction is in the tech level 3 preset")
    func severeCorrectionInPreset() throws {
        let preset = PresetGenerator.preset(.default, profile: try Self.profile("N7"), techLevel: try TechLevel(3))
        let h3fa = (95.0 + 105 + 105) / 3
        let withoutCorrection250 = 0.31 * 90 + 0.15 * h3fa - 17 + 0.2 * (h3fa - 60)
        #expect(abs(preset.left[0].gain - (withoutCorrection250 + 8)) <= 0.006, "\(preset.left[0].gain)")
        let withoutCorrection2k = 0.31 * 105 + 0.15 * h3fa - 1 + 0.2 * (h3fa - 60)
        #expect(abs(preset.left[4].gain - (withoutCorrection2k - 5)) <= 0.006, "\(preset.left[4].gain)")
        #expect(preset.left.map(\.gain).max()! > 50, "no 40 dB cap: \(preset.left.map(\.gain))")
    }

    /// Insertion gain never below 0 dB at any band level from 20 to 110 dB SPL, for every
    /// standard audiogram, variant and tech level — except where the band's output limit (safety)
    /// needs a loss: there the output is exactly at the limit.
    @Test("no gain below 0 dB at band levels 20…110 dB SPL", arguments: names)
    func neverALoss(_ name: String) throws {
        for level in 1...4 {
            let techLevel = try TechLevel(level)
            for preset in PresetGenerator.presets(for: try Self.profile(name), techLevel: techLevel) {
                for band in preset.left + preset.right {
                    #expect(band.minimumGain == 0)
                    for spl in stride(from: 20.0, through: 110, by: 0.5) {
                        let g = band.gain(atLevel: spl)
                        if spl <= band.outputLimit {
                            #expect(g >= 0, "\(name) \(preset.variant) tl\(level) \(band.centre) Hz at \(spl): \(g)")
                        } else {
                            #expect(abs(g - (band.outputLimit - spl)) < 1e-9, "limit wins at \(spl): \(g)")
                        }
                    }
                }
            }
        }
    }

    /// N3 at 80 dB SPL speech: the 250 Hz band read −3.6 dB under rule 1; now the floor holds.
    @Test("N3 at 250 Hz: 0 dB, not a loss, above the reference level")
    func n3LowBandAtLoudSpeech() throws {
        let band = PresetGenerator.preset(.default, profile: try Self.profile("N3"), techLevel: try TechLevel(3)).left[0]
        #expect(band.gain(atLevel: band.referenceLevel + 15) == 0)
        var unfloored = band
        unfloored.minimumGain = -60
        #expect(unfloored.gain(atLevel: band.referenceLevel + 15) < 0, "the floor is what holds it")
    }

    /// Floor and expansion: below the expansion knee the gain falls to the floor and stays; a
    /// user floor of −20 dB lets the expander take it below 0.
    @Test("the floor acts after expansion; a user floor lets expansion attenuate")
    func floorAfterExpansion() {
        var band = BandDynamics(centre: 1000, gain: 10, referenceLevel: 60, ratio: 1, knee: 35,
                                expansionKnee: 30, expansionRatio: 2, maximumGain: 60, outputLimit: 105)
        #expect(band.gain(atLevel: 25) == 5)
        #expect(band.gain(atLevel: 10) == 0)
        band.minimumGain = -20
        #expect(band.gain(atLevel: 10) == -10)
        #expect(band.gain(atLevel: -20) == -20)
        // The output limit is safety: it wins over the floor.
        band.minimumGain = 0
        #expect(band.gain(atLevel: 110) == -5)
    }

    /// `minimum_gain_db` in preset files: absent reads 0 (files of rule 1, and what is written
    /// for 0), a negative floor is written and read back, a positive one rejected with the field.
    @Test("minimum_gain_db: default, absent, range")
    func minimumGainInJSON() throws {
        let techLevel = try TechLevel(3)
        var preset = PresetGenerator.preset(.default, profile: try Self.profile("N3"), techLevel: techLevel)
        let text = String(decoding: preset.encoded(), as: UTF8.self)
        #expect(!text.contains("minimum_gain_db"), "0 dB is not written")
        #expect(try PresetPayload.decode(Data(text.utf8), for: techLevel).left.allSatisfy { $0.minimumGain == 0 })
        preset.left[0].minimumGain = -12
        let lowered = String(decoding: preset.encoded(), as: UTF8.self)
        #expect(lowered.contains("\"minimum_gain_db\": -12"))
        #expect(try PresetPayload.decode(Data(lowered.utf8), for: techLevel) == preset)
        let raised = lowered.replacingOccurrences(of: "\"minimum_gain_db\": -12", with: "\"minimum_gain_db\": 3")
        #expect {
            _ = try PresetPayload.decode(Data(raised.utf8), for: techLevel)
        } throws: { error in
            "\(error)".contains("left[0].minimum_gain_db") && "\(error)".contains("out of range")
        }
    }

    /// The safety cap never binds for the standard audiograms at g65; where a user edits a band
    /// above it, the band reports `gain_capped` (payload and JSON) and the law stops at the cap.
    @Test("the cap is reported when an edited preset binds it")
    func capReportedWhenItBinds() throws {
        let techLevel = try TechLevel(3)
        var preset = PresetGenerator.preset(.default, profile: try Self.profile("N3"), techLevel: techLevel)
        // The cap is min(60, output limit − knee): with the derived output limit (75 dB SPL speech
        // peaks through the gain) about min(60, gain + 50), far above what the law gives.
        #expect(preset.left.allSatisfy { !$0.isGainCapped && abs($0.maximumGain - min(60, $0.outputLimit - $0.knee)) < 0.01 },
                "\(preset.left.map(\.maximumGain))")
        var text = String(decoding: preset.reportJSON.fileData(), as: UTF8.self)
        #expect(!text.contains("gain_capped"), "reported only where the cap binds")
        preset.left[6].gain = 58        // 4 kHz, ratio 1.8: 58 + 0.44·(ref − knee) > 60 below the knee
        #expect(preset.left[6].isGainCapped)
        #expect(preset.left[6].gain(atLevel: preset.left[6].knee - 10) == 60)
        text = String(decoding: preset.reportJSON.fileData(), as: UTF8.self)
        #expect(text.components(separatedBy: "\"gain_capped\": true").count == 2)
        #expect(!String(decoding: preset.encoded(), as: UTF8.self).contains("gain_capped"), "files leave the report out")
        // Reading ignores the derived key: the edited preset comes back as it was.
        #expect(try PresetPayload.decode(preset.reportJSON.fileData(), for: techLevel) == preset)
    }

    /// The cap follows the output limit: a band whose limit is 50 dB above its knee gets a
    /// 50 dB cap, and NAL-RP above it is capped and reported; the up variant re-applies it.
    @Test("the safety cap derives from the output limit and binds the up variant")
    func capFromOutputLimit() throws {
        #expect(PresetGenerator.safetyCap(outputLimit: 105, knee: 30) == 60)
        #expect(PresetGenerator.safetyCap(outputLimit: 80, knee: 30) == 50)
        #expect(PresetGenerator.safetyCap(outputLimit: 60, knee: 70) == 0)
        // N7 up at tech level 3: 1.25·57 + 2 > 60: capped at 60 and reported.
        let up = PresetGenerator.preset(.up, profile: try Self.profile("N7"), techLevel: try TechLevel(3))
        #expect(up.left[2].gain == 60 && up.left[2].isGainCapped, "\(up.left[2])")
        #expect(up.left.allSatisfy { $0.gain <= $0.maximumGain })
    }

    /// Availability follows the cap: no up when every band's default gain is at its cap; a
    /// 110 dB HL flat loss is no longer all capped (rule 1's 40 dB cap made it so).
    @Test("availability: no up only when every band is at its cap")
    func availabilityFollowsTheCap() throws {
        let techLevel = try TechLevel(3)
        let flat110 = PresetGenerator.presets(for: try StandardAudiograms.flat(110), techLevel: techLevel)
        #expect(flat110.map(\.variant) == [.default, .up, .down])
        var base = flat110[0]
        for index in base.left.indices {
            base.left[index].gain = base.left[index].maximumGain
            base.right[index].gain = base.right[index].maximumGain
        }
        #expect(PresetGenerator.variants(offeredBy: base) == [.default, .down])
        base.right[0].gain -= 1
        #expect(PresetGenerator.variants(offeredBy: base) == [.default, .up, .down])
    }

    /// Intensity interpolates the linear gain: the table of docs/Personalization.md at 0.75.
    @Test("intensity 0.75 in dB: 20·log10(1 + 0.75·(10^(g/20) − 1))")
    func intensityTable() {
        let table: [(Double, Double)] = [(0, 0), (3, 2.34), (6, 4.84), (10, 8.37), (20, 17.79), (30, 27.59), (40, 37.53), (60, 57.5)]
        for (gain, applied) in table {
            let computed = Intensity.appliedGain(gain, intensity: 0.75)
            #expect(abs(computed - applied) < 0.01, "\(gain) dB at 0.75: \(computed)")
        }
        #expect(abs(Intensity.appliedGain(20, intensity: 1) - 20) < 1e-9)
        #expect(Intensity.appliedGain(20, intensity: 0) == 0)
    }
}
