import Foundation
import SoundFitHearing

/// A listener for hearing-test simulations, as clinical audiometry simulators model one: at
/// x dB HL it answers "heard" with probability ψ(x) = γ + (1 − γ − λ) / (1 + e^{β(α − x)}), α the
/// true threshold of that ear at that frequency (interpolated in log frequency), β the slope per
/// dB, γ the false-alarm propensity (also its answer rate to silence), λ the lapse rate.
///
/// Cross-hearing (`interauralAttenuation` set): each cochlea detects on its own. A tone of L dB HL
/// in the test ear reaches the test cochlea at L and the other cochlea at L − IA; masking noise of
/// E dB EM in the other ear raises that cochlea's threshold to max(α, E) and crosses to the test
/// cochlea at E − IA, raising its threshold to max(α, E − IA) (over-masking). The tone is heard
/// when either cochlea detects it: the sensory probability is 1 − (1 − d_test)(1 − d_other) with
/// d = 1 / (1 + e^{β(α − x)}) per cochlea, and ψ = γ + (1 − γ − λ) · that.
public struct SimulatedListener: Sendable {
    /// True thresholds per ear: (Hz, dB HL), ascending in frequency.
    public var thresholds: [Ear: [(frequency: Double, level: Double)]]
    public var slope: Double
    public var falseAlarms: Double
    public var lapses: Double
    /// Whether the listener answers at all (false: never presses).
    public var answers: Bool
    /// dB between one ear's earphone and the other cochlea; nil: no cross-hearing (each ear
    /// hears only its own tones, the listener of the tests before masking existed).
    public var interauralAttenuation: Double?

    public init(thresholds: [Ear: [(frequency: Double, level: Double)]], slope: Double = 1.2, falseAlarms: Double = 0,
                lapses: Double = 0.02, answers: Bool = true, interauralAttenuation: Double? = nil) {
        self.thresholds = thresholds
        self.interauralAttenuation = interauralAttenuation
        self.slope = slope
        self.falseAlarms = falseAlarms
        self.lapses = lapses
        self.answers = answers
    }

    /// A listener whose `left` and `right` ears have flat thresholds (dB HL at every frequency).
    public static func flat(left: Double, right: Double, slope: Double = 1.2, falseAlarms: Double = 0, lapses: Double = 0.02,
                            interauralAttenuation: Double? = 40) -> SimulatedListener {
        SimulatedListener(thresholds: [.left: [(frequency: 1000, level: left)], .right: [(frequency: 1000, level: right)]],
                          slope: slope, falseAlarms: falseAlarms, lapses: lapses, interauralAttenuation: interauralAttenuation)
    }

    /// Both ears with the standard audiogram `name` (N1…N5, S1…S3), extended flat to 125 and
    /// 8000 Hz from its end points.
    public static func standard(left: String, right: String? = nil, slope: Double = 1.2, falseAlarms: Double = 0,
                                lapses: Double = 0.02) -> SimulatedListener {
        func points(_ name: String) -> [(frequency: Double, level: Double)] {
            Array(zip(StandardAudiogramLevels.frequencies, StandardAudiogramLevels.levels(name)))
                .map { (frequency: $0.0, level: $0.1) }
        }
        return SimulatedListener(thresholds: [.left: points(left), .right: points(right ?? left)],
                                 slope: slope, falseAlarms: falseAlarms, lapses: lapses)
    }

    /// The true threshold α of `ear` at `frequency`.
    public func threshold(_ ear: Ear, at frequency: Double) -> Double {
        LogFrequency.interpolate((thresholds[ear] ?? []).map { (frequency: $0.frequency, value: $0.level) }, at: frequency)
    }

    /// ψ: the probability of "heard" for a tone of `level` dB HL in `ear` (nil: a silent catch
    /// trial), with `maskingLevel` dB EM of noise in the other ear.
    public func probabilityOfHeard(_ ear: Ear, frequency: Double, level: Double?, maskingLevel: Double? = nil) -> Double {
        guard answers else { return 0 }
        guard let level else { return falseAlarms }
        let other: Ear = ear == .left ? .right : .left
        var testThreshold = threshold(ear, at: frequency)
        var detection: Double
        if let attenuation = interauralAttenuation {
            var otherThreshold = threshold(other, at: frequency)
            if let maskingLevel {
                otherThreshold = max(otherThreshold, maskingLevel)
                testThreshold = max(testThreshold, maskingLevel - attenuation)
            }
            let test = detect(threshold: testThreshold, level: level)
            let crossed = detect(threshold: otherThreshold, level: level - attenuation)
            detection = 1 - (1 - test) * (1 - crossed)
        } else {
            detection = detect(threshold: testThreshold, level: level)
        }
        return falseAlarms + (1 - falseAlarms - lapses) * detection
    }

    /// One cochlea's sensory detection probability.
    private func detect(threshold alpha: Double, level: Double) -> Double {
        1 / (1 + exp(slope * (alpha - level)))
    }

    /// One answer to `trial`, drawn with `random`.
    public func answer(_ trial: PureToneAudiometry.Trial, using random: inout some RandomNumberGenerator) -> Bool {
        Double.random(in: 0..<1, using: &random) < probabilityOfHeard(trial.ear, frequency: trial.frequency, level: trial.level, maskingLevel: trial.maskingLevel)
    }

    /// Runs a whole test with this listener; returns the finished procedure.
    public func take(_ test: PureToneAudiometry, using random: inout some RandomNumberGenerator) -> PureToneAudiometry {
        var test = test
        while let trial = test.currentTrial {
            test.record(heard: answer(trial, using: &random))
        }
        return test
    }
}
