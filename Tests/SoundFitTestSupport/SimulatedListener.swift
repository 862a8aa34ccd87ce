import Foundation
import SoundFitHearing

/// A listener for hearing-test simulations, as clinical audiometry simulators model one: at
/// x dB HL it answers "heard" with probability ψ(x) = γ + (1 − γ − λ) / (1 + e^{β(α − x)}), α the
/// true threshold of that ear at that frequency (interpolated in log frequency), β the slope per
/// dB, γ the false-alarm propensity (also its answer rate to silence), λ the lapse rate.
public struct SimulatedListener: Sendable {
    /// True thresholds per ear: (Hz, dB HL), ascending in frequency.
    public var thresholds: [Ear: [(frequency: Double, level: Double)]]
    public var slope: Double
    public var falseAlarms: Double
    public var lapses: Double
    /// Whether the listener answers at all (false: never presses).
    public var answers: Bool

    public init(thresholds: [Ear: [(frequency: Double, level: Double)]], slope: Double = 1.2, falseAlarms: Double = 0,
                lapses: Double = 0.02, answers: Bool = true) {
        self.thresholds = thresholds
        self.slope = slope
        self.falseAlarms = falseAlarms
        self.lapses = lapses
        self.answers = answers
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

    /// ψ: the probability of "heard" for a tone of `level` dB HL (nil: a silent catch trial).
    public func probabilityOfHeard(_ ear: Ear, frequency: Double, level: Double?) -> Double {
        guard answers else { return 0 }
        guard let level else { return falseAlarms }
        let alpha = threshold(ear, at: frequency)
        return falseAlarms + (1 - falseAlarms - lapses) / (1 + exp(slope * (alpha - level)))
    }

    /// One answer to `trial`, drawn with `random`.
    public func answer(_ trial: PureToneAudiometry.Trial, using random: inout some RandomNumberGenerator) -> Bool {
        Double.random(in: 0..<1, using: &random) < probabilityOfHeard(trial.ear, frequency: trial.frequency, level: trial.level)
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
