/// What one ear's test found, point by point, and the listener's reliability.
extension PureToneAudiometry {
    /// The result at one frequency of one ear.
    public enum PointOutcome: Sendable, Equatable {
        /// The threshold in dB HL; `maskingLevel` is the noise (dB EM) in the other ear it was
        /// found with, nil when found without masking (none was needed).
        case threshold(level: Double, maskingLevel: Double?)
        /// Not heard at `level` dB HL, the highest level on the 5 dB grid the output could present
        /// there (with `maskingLevel` dB EM in the other ear when it was masked).
        case noResponse(level: Double, maskingLevel: Double?)
        /// Masking was needed and no plateau could be found before over-masking or the highest
        /// masking level the output can present: the ear's threshold there is unknown.
        case maskingDilemma
    }

    /// One frequency's outcome.
    public struct Point: Sendable, Equatable {
        public var frequency: Double
        public var outcome: PointOutcome

        public init(frequency: Double, outcome: PointOutcome) {
            self.frequency = frequency
            self.outcome = outcome
        }
    }

    public struct EarResult: Sendable, Equatable {
        public var ear: Ear
        /// Every tested frequency's outcome, ascending in frequency.
        public var outcomes: [Point]
        /// Retest threshold minus first threshold at the anchor frequency, when both exist.
        public var retestDifference: Double?
        /// The retest differed by more than 5 dB, so every other frequency was measured again
        /// (the second measurement is the result).
        public var retestedFurther: Bool
        /// Frequencies whose threshold might be the other ear's (test-ear threshold minus the
        /// interaural attenuation reaches the lowest level an ear can have) but which could not be
        /// masked because the other ear was not tested.
        public var maskingNotDone: [Double]
        /// How the test's familiarization ended (the listener's, shared by both ears); nil when
        /// the test had none.
        public var familiarization: Familiarization.Outcome?
        /// This ear's catch trials, and how many of them were answered.
        public var catchTrials: Int
        public var catchTrialsAnswered: Int
        /// The whole test's catch trials (both ears): answering silence is the listener's
        /// habit, not an ear's, so the verdict pools them. Final once the test is done.
        public var listenerCatchTrials: Int
        public var listenerCatchTrialsAnswered: Int
        public var pressesOutsideWindows: Int
        public var presentations: Int

        public init(ear: Ear, outcomes: [Point], retestDifference: Double? = nil, retestedFurther: Bool = false,
                    maskingNotDone: [Double] = [], familiarization: Familiarization.Outcome? = nil,
                    catchTrials: Int = 0, catchTrialsAnswered: Int = 0, listenerCatchTrials: Int = 0,
                    listenerCatchTrialsAnswered: Int = 0, pressesOutsideWindows: Int = 0, presentations: Int = 0) {
            self.ear = ear
            self.outcomes = outcomes.sorted { $0.frequency < $1.frequency }
            self.retestDifference = retestDifference
            self.retestedFurther = retestedFurther
            self.maskingNotDone = maskingNotDone.sorted()
            self.familiarization = familiarization
            self.catchTrials = catchTrials
            self.catchTrialsAnswered = catchTrialsAnswered
            self.listenerCatchTrials = listenerCatchTrials
            self.listenerCatchTrialsAnswered = listenerCatchTrialsAnswered
            self.pressesOutsideWindows = pressesOutsideWindows
            self.presentations = presentations
        }

        /// dB HL per frequency, ascending in frequency, for the frequencies with a threshold
        /// (masked or not).
        public var thresholds: [(frequency: Double, level: Double)] {
            outcomes.compactMap { point in
                if case .threshold(let level, _) = point.outcome { (frequency: point.frequency, level: level) } else { nil }
            }
        }

        /// Frequencies not heard at their maximum level.
        public var noResponse: [Double] {
            outcomes.compactMap { point in
                if case .noResponse = point.outcome { point.frequency } else { nil }
            }
        }

        /// Frequencies where masking was needed and no plateau could be found.
        public var maskingDilemmas: [Double] {
            outcomes.compactMap { $0.outcome == .maskingDilemma ? $0.frequency : nil }
        }

        /// The listener's false-alarm rate: catch trials answered / catch trials over the whole
        /// test (0 with none).
        public var falseAlarmRate: Double {
            listenerCatchTrials == 0 ? 0 : Double(listenerCatchTrialsAnswered) / Double(listenerCatchTrials)
        }

        /// Each reliability rule this result breaks, in words; empty when reliable.
        /// - false alarms: at least 2 catch trials of the whole test answered and more than 10 %;
        /// - presses outside any response window: more than 3 and more than 10 % of the ear's
        ///   presentations;
        /// - the familiarization's consistency check failed twice;
        /// - the 1 kHz retest differs by more than 5 dB and the other frequencies could not be
        ///   measured again (only one frequency tested).
        public var reliabilityProblems: [String] {
            var problems: [String] = []
            if listenerCatchTrialsAnswered >= 2 && falseAlarmRate > 0.1 {
                problems.append("false alarms: \(listenerCatchTrialsAnswered) of \(listenerCatchTrials) silent catch trials answered (more than 10 %)")
            }
            if pressesOutsideWindows > max(3, presentations / 10) {
                problems.append("\(pressesOutsideWindows) presses outside the response windows in \(presentations) presentations")
            }
            if case .inconsistent = familiarization {
                problems.append("the familiarization's answers were inconsistent twice")
            }
            if let retestDifference, abs(retestDifference) > 5, !retestedFurther {
                problems.append("the retest differs by \(format(retestDifference)) dB")
            }
            return problems
        }

        public var isReliable: Bool { reliabilityProblems.isEmpty }
    }
}
