import Foundation
import SoundFitModel
import SoundFitProcessing
import SoundFitHearing
import SoundFitTestSupport
import Testing

/// Standard audiograms (Bisgaard, Vlaming & Dahlquist 2010, Trends in Amplification 14(2)).
enum StandardAudiograms {
    static let frequencies = StandardAudiogramLevels.frequencies
    static let n3 = StandardAudiogramLevels.levels("N3")
    static let s2 = StandardAudiogramLevels.levels("S2")

    static func audiogram(_ levels: [Double]) throws -> Audiogram {
        try Audiogram(Array(zip(frequencies, levels)))
    }

    static func flat(_ level: Double) throws -> HearingProfile {
        let audiogram = try Audiogram(Audiogram.standardFrequencies.map { ($0, level) })
        return try HearingProfile(left: audiogram, right: audiogram)
    }
}

@Suite struct PrescriptionTests {
    @Test func nalRGainsForN3MatchThePublishedValues() throws {
        // hearing.md: "NAL-R gains for N3 at the eight points are about
        // 0.1, 9.1, 19.6, 21.2, 20.8, 21.3, 22.9, 24.4 dB".
        let expected = [0.1, 9.1, 19.6, 21.2, 20.8, 21.3, 22.9, 24.4]
        let gains = NALPrescription.insertionGains(for: try StandardAudiograms.audiogram(StandardAudiograms.n3))
        for (gain, reference) in zip(gains, expected) {
            #expect(abs(gain - reference) <= 0.1, "\(gain) vs \(reference)")
        }
        // The hand check in hearing.md: 0.31·40 + 0.15·41.67 + 1 = 19.65 dB at 1 kHz.
        #expect(abs(gains[2] - 19.65) < 0.01)
    }

    @Test func severeLossGetsTheNALRPExtension() throws {
        let profile = try StandardAudiograms.flat(80)
        // H3FA = 80 > 60: +0.2·20 = +4 dB over plain NAL-R.
        let gain = NALPrescription.insertionGains(for: profile.audiogram(for: .left))[2]
        #expect(abs(gain - (0.31 * 80 + 0.15 * 80 + 1 + 4)) < 1e-9)
    }

    @Test func gainsAreInterpolatedInLogFrequencyAndNeverNegative() throws {
        let audiogram = try StandardAudiograms.audiogram(StandardAudiograms.n3)
        let atGeometricMean = NALPrescription.insertionGain(for: audiogram, at: (1000 * 1500).squareRoot())
        let gains = NALPrescription.insertionGains(for: audiogram)
        #expect(abs(atGeometricMean - (gains[2] + gains[3]) / 2) < 1e-9)
        let normal = try StandardAudiograms.flat(0)
        #expect(NALPrescription.insertionGains(for: normal.audiogram(for: .left)).allSatisfy { $0 >= 0 })
    }
}

@Suite struct PresetGeneratorTests {
    @Test func normalHearingGivesOnlyDefault() throws {
        for level in 1...4 {
            let variants = PresetGenerator.availableVariants(for: try StandardAudiograms.flat(0), techLevel: try TechLevel(level))
            #expect(variants == [.default])
        }
    }

    @Test func n3GivesAllThreeVariantsOrderedByGain() throws {
        let audiogram = try StandardAudiograms.audiogram(StandardAudiograms.n3)
        let profile = try HearingProfile(left: audiogram, right: nil)
        let presets = PresetGenerator.presets(for: profile, techLevel: try TechLevel(3))
        #expect(presets.map(\.variant) == [.default, .up, .down])
        let at4k = presets.map { $0.left[6].gain }
        #expect(presets[0].left[6].centre == 4000)
        #expect(at4k[1] > at4k[0] && at4k[0] > at4k[2], "up > default > down at 4 kHz: \(at4k)")
        // The right ear has no audiogram of its own: it gets the left one's.
        #expect(presets[0].right == presets[0].left)
    }

    /// Rule 1 capped every band of a 110 dB HL loss at 40 dB, so it offered no up; rule 2's
    /// safety cap (60 dB here) leaves NAL-RP below it in some bands: up is offered, and the
    /// bands where NAL-RP exceeds the cap sit at it and say so (`gain_capped`).
    @Test func lossBeyondTheSafetyCapIsCappedAndReported() throws {
        let variants = PresetGenerator.availableVariants(for: try StandardAudiograms.flat(110), techLevel: try TechLevel(3))
        #expect(variants == [.default, .up, .down])
        let preset = PresetGenerator.preset(.default, profile: try StandardAudiograms.flat(110), techLevel: try TechLevel(3))
        #expect(preset.left.allSatisfy { $0.gain <= $0.maximumGain && $0.maximumGain == PresetGenerator.largestGainCap })
        // 1 kHz: 0.31·110 + 0.15·110 + 1 + 0.2·50 + 0 = 61.6 dB > 60.
        #expect(preset.left[2].gain == 60 && preset.left[2].isGainCapped)
    }

    @Test(arguments: 1...4)
    func generatedPresetsValidateForTheirTechLevelOnly(_ level: Int) throws {
        let techLevel = try TechLevel(level)
        let profile = try HearingProfile(left: try StandardAudiograms.audiogram(StandardAudiograms.s2),
                                         right: try StandardAudiograms.audiogram(StandardAudiograms.n3))
        for preset in PresetGenerator.presets(for: profile, techLevel: techLevel) {
            try preset.validate(for: techLevel)
            #expect(preset.left.count == techLevel.bandCentres.count)
            #expect(preset.left.map(\.centre) == techLevel.bandCentres)
            if !techLevel.compresses { #expect(preset.left.allSatisfy { $0.ratio == 1 }) }
            let other = try TechLevel(level % 4 + 1)
            #expect(throws: PresetValidationError.self) { try preset.validate(for: other) }
            // JSON round trip.
            #expect(try PresetPayload.decode(preset.encoded(), for: techLevel) == preset)
        }
    }

    @Test func ratiosFollowTheLoss() throws {
        let preset = PresetGenerator.preset(.default, profile: try StandardAudiograms.flat(0), techLevel: try TechLevel(3))
        #expect(preset.left.allSatisfy { $0.ratio == 1 })
        let n3 = PresetGenerator.preset(
            .default, profile: try HearingProfile(left: try StandardAudiograms.audiogram(StandardAudiograms.n3), right: nil),
            techLevel: try TechLevel(3))
        #expect(n3.left[2].ratio == 1.4)  // 40 dB HL at 1 kHz
        #expect(n3.left[6].ratio == 1.8)  // 60 dB HL at 4 kHz
    }
}
