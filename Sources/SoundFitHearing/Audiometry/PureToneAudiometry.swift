import Foundation

/// Automated pure-tone air-conduction audiometry: the order of ears and frequencies, the
/// threshold search at each (`ThresholdSearch`), silent catch trials, the 1 kHz retest and the
/// reliability verdict. A pure state machine (give it a seeded generator and a run is repeatable):
/// `currentTrial` says what to present, `record(heard:)` what the listener did.
///
/// - Order per ear: 1 kHz (the frequency nearest to it) first, then upwards, then downwards,
///   then the 1 kHz retest.
/// - Each frequency after the first starts 10 dB above the threshold just found next to it
///   (the retest above the first 1 kHz threshold), which still is clearly audible for the
///   listener, instead of the fixed 40 dB HL of the first: the test is shorter for the same rule.
/// - Before a presentation, a silent catch trial comes with probability `catchProbability`
///   (raised to `catchProbabilityAfterFalseAlarm` for the rest of the test once one was
///   answered), so a listener who answers without hearing is caught.
/// - Verdict per ear: `unreliable` when at least 2 catch trials of the whole test were answered
///   and more than 10 % of them, when the ear's presses outside any response window exceed 3 and
///   10 % of its presentations, or when its 1 kHz retest differs by more than 5 dB; otherwise
///   `reliable`.
public struct PureToneAudiometry: Sendable {
    public static let defaultFrequencies: [Double] = [250, 500, 1000, 2000, 3000, 4000, 6000, 8000]
    public static let frequencyRange: ClosedRange<Double> = 125...8000

    /// What the procedure needs to know besides the listener.
    public struct Configuration: Sendable, Equatable {
        public var ears: [Ear]
        public var frequencies: [Double]
        /// dB HL of the first tone of each ear.
        public var startLevel: Double
        public var minimumLevel: Double
        /// The highest level to present at a frequency (dB HL): the configured maximum, capped
        /// by what the output can play safely there.
        public var maximumLevel: @Sendable (Double) -> Double
        public var catchProbability: Double
        public var catchProbabilityAfterFalseAlarm: Double
        /// Start each frequency after the first 10 dB above its neighbour's threshold (true),
        /// or at `startLevel` like the first (the fixed procedure).
        public var startsNearNeighbour: Bool

        public init(ears: [Ear] = [.left, .right], frequencies: [Double] = PureToneAudiometry.defaultFrequencies,
                    startLevel: Double = 40, minimumLevel: Double = -10,
                    maximumLevel: @escaping @Sendable (Double) -> Double = { _ in 90 },
                    catchProbability: Double = 0.1, catchProbabilityAfterFalseAlarm: Double = 0.5,
                    startsNearNeighbour: Bool = true) {
            self.ears = ears
            self.frequencies = frequencies
            self.startLevel = startLevel
            self.minimumLevel = minimumLevel
            self.maximumLevel = maximumLevel
            self.catchProbability = catchProbability
            self.catchProbabilityAfterFalseAlarm = catchProbabilityAfterFalseAlarm
            self.startsNearNeighbour = startsNearNeighbour
        }

        public static func == (lhs: Configuration, rhs: Configuration) -> Bool {
            lhs.ears == rhs.ears && lhs.frequencies == rhs.frequencies && lhs.startLevel == rhs.startLevel
                && lhs.minimumLevel == rhs.minimumLevel && lhs.catchProbability == rhs.catchProbability
                && lhs.catchProbabilityAfterFalseAlarm == rhs.catchProbabilityAfterFalseAlarm
                && lhs.startsNearNeighbour == rhs.startsNearNeighbour
        }
    }

    /// One presentation: a tone, or a silent catch trial.
    public struct Trial: Sendable, Equatable {
        public var ear: Ear
        public var frequency: Double
        /// dB HL of the tone; nil for a catch trial (nothing is played).
        public var level: Double?
        /// The 1 kHz retest of this ear.
        public var isRetest: Bool
        /// Effective masking level (dB EM, ISO 389-4) of the narrow-band noise centred on
        /// `frequency` in the other ear's channels during this presentation; nil: no masking.
        public var maskingLevel: Double? = nil

        public var isCatchTrial: Bool { level == nil }
    }

    /// What one ear's test found.
    public struct EarResult: Sendable, Equatable {
        public var ear: Ear
        /// dB HL per frequency, ascending in frequency, for the frequencies with a threshold.
        public var thresholds: [(frequency: Double, level: Double)]
        /// Frequencies not heard at their maximum level.
        public var noResponse: [Double]
        /// Retest threshold minus first threshold at the anchor frequency, when both exist.
        public var retestDifference: Double?
        /// This ear's catch trials, and how many of them were answered.
        public var catchTrials: Int
        public var catchTrialsAnswered: Int
        /// The whole test's catch trials (both ears): answering silence is the listener's
        /// habit, not an ear's, so the verdict pools them. Final once the test is done.
        public var listenerCatchTrials: Int
        public var listenerCatchTrialsAnswered: Int
        public var pressesOutsideWindows: Int
        public var presentations: Int

        /// The listener's false-alarm rate: catch trials answered / catch trials over the whole
        /// test (0 with none).
        public var falseAlarmRate: Double {
            listenerCatchTrials == 0 ? 0 : Double(listenerCatchTrialsAnswered) / Double(listenerCatchTrials)
        }

        public var isReliable: Bool {
            if listenerCatchTrialsAnswered >= 2 && falseAlarmRate > 0.1 { return false }
            if pressesOutsideWindows > max(3, presentations / 10) { return false }
            if let retestDifference, abs(retestDifference) > 5 { return false }
            return true
        }

        public static func == (lhs: EarResult, rhs: EarResult) -> Bool {
            lhs.ear == rhs.ear && lhs.thresholds.elementsEqual(rhs.thresholds) { $0 == $1 }
                && lhs.noResponse == rhs.noResponse && lhs.retestDifference == rhs.retestDifference
                && lhs.catchTrials == rhs.catchTrials && lhs.catchTrialsAnswered == rhs.catchTrialsAnswered
                && lhs.listenerCatchTrials == rhs.listenerCatchTrials
                && lhs.listenerCatchTrialsAnswered == rhs.listenerCatchTrialsAnswered
                && lhs.pressesOutsideWindows == rhs.pressesOutsideWindows && lhs.presentations == rhs.presentations
        }
    }

    public let configuration: Configuration
    /// The trial to present now; nil when the test is done.
    public private(set) var currentTrial: Trial?
    /// Finished ears, in test order.
    public private(set) var results: [EarResult] = []
    /// Presentations so far (tones and catch trials).
    public private(set) var presentationCount = 0

    private var random: any RandomNumberGenerator & Sendable
    private var catchTrials = 0
    private var catchTrialsAnswered = 0
    private var earIndex = 0
    private var steps: [Step] = []
    private var stepIndex = 0
    private var search: ThresholdSearch?
    private var ear: EarProgress?

    /// One frequency of an ear's order, the retest included.
    private struct Step: Sendable {
        var frequency: Double
        var isRetest: Bool
        /// The step whose threshold sets this one's start level.
        var neighbour: Int?
    }

    private struct EarProgress: Sendable {
        var thresholds: [Int: Double] = [:]
        var noResponse: Set<Int> = []
        var firstAnchor: Double?
        var retest: Double?
        var catchTrials = 0
        var catchTrialsAnswered = 0
        var pressesOutsideWindows = 0
        var presentations = 0
    }

    /// A test by `configuration`; `random` decides the catch trials.
    public init(_ configuration: Configuration,
                random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()) throws(AudiometryError) {
        guard !configuration.ears.isEmpty else { throw .noEars }
        guard !configuration.frequencies.isEmpty else { throw .noFrequencies }
        for frequency in configuration.frequencies where !Self.frequencyRange.contains(frequency) {
            throw .frequencyOutOfRange(frequency)
        }
        guard Set(configuration.frequencies).count == configuration.frequencies.count else { throw .duplicateFrequencies }
        self.configuration = configuration
        self.random = random
        steps = Self.order(configuration.frequencies)
        startEar()
    }

    /// The test order of one ear: anchor (nearest 1 kHz), upwards, downwards, anchor retest.
    private static func order(_ frequencies: [Double]) -> [Step] {
        let sorted = frequencies.sorted()
        let anchor = sorted.min { abs(log2($0 / 1000)) < abs(log2($1 / 1000)) }!
        var steps = [Step(frequency: anchor, isRetest: false, neighbour: nil)]
        var previous = 0
        for frequency in sorted where frequency > anchor {
            steps.append(Step(frequency: frequency, isRetest: false, neighbour: previous))
            previous = steps.count - 1
        }
        previous = 0
        for frequency in sorted.reversed() where frequency < anchor {
            steps.append(Step(frequency: frequency, isRetest: false, neighbour: previous))
            previous = steps.count - 1
        }
        steps.append(Step(frequency: anchor, isRetest: true, neighbour: 0))
        return steps
    }

    /// Progress 0…1: finished steps over all steps of all ears.
    public var progress: Double {
        let total = configuration.ears.count * steps.count
        guard total > 0 else { return 1 }
        return min(1, Double(earIndex * steps.count + min(stepIndex, steps.count)) / Double(total))
    }

    public var isDone: Bool { currentTrial == nil }

    /// Records the listener's answer to `currentTrial` and moves on.
    public mutating func record(heard: Bool) {
        guard let trial = currentTrial, var progress = ear else { return }
        presentationCount += 1
        progress.presentations += 1
        if trial.isCatchTrial {
            progress.catchTrials += 1
            catchTrials += 1
            if heard {
                progress.catchTrialsAnswered += 1
                catchTrialsAnswered += 1
            }
            ear = progress
            nextTrial()
            return
        }
        ear = progress
        search?.record(heard: heard)
        if let outcome = search?.outcome {
            finishStep(outcome)
        } else {
            nextTrial()
        }
    }

    /// A press that fell in no response window: a false alarm of the ear under test.
    public mutating func recordPressOutsideWindows() {
        ear?.pressesOutsideWindows += 1
    }

    private mutating func startEar() {
        guard earIndex < configuration.ears.count else {
            currentTrial = nil
            for index in results.indices {
                results[index].listenerCatchTrials = catchTrials
                results[index].listenerCatchTrialsAnswered = catchTrialsAnswered
            }
            return
        }
        ear = EarProgress()
        stepIndex = 0
        startStep()
    }

    private mutating func startStep() {
        guard stepIndex < steps.count, let progress = ear else { return }
        let step = steps[stepIndex]
        let maximum = configuration.maximumLevel(step.frequency)
        var start = configuration.startLevel
        if let neighbour = step.neighbour, configuration.startsNearNeighbour || step.isRetest {
            if let threshold = progress.thresholds[neighbour] {
                start = threshold + 10
            } else if progress.noResponse.contains(neighbour) {
                start = maximum
            }
        }
        search = ThresholdSearch(startLevel: start, minimumLevel: configuration.minimumLevel,
                                 maximumLevel: max(configuration.minimumLevel, maximum))
        nextTrial()
    }

    private mutating func finishStep(_ outcome: ThresholdSearch.Outcome) {
        guard var progress = ear else { return }
        let step = steps[stepIndex]
        switch outcome {
        case .threshold(let level):
            if step.isRetest { progress.retest = level } else { progress.thresholds[stepIndex] = level }
        case .noResponse:
            if !step.isRetest { progress.noResponse.insert(stepIndex) }
        }
        ear = progress
        stepIndex += 1
        if stepIndex < steps.count {
            startStep()
        } else {
            results.append(earResult(progress))
            earIndex += 1
            startEar()
        }
    }

    private func earResult(_ progress: EarProgress) -> EarResult {
        var thresholds: [(frequency: Double, level: Double)] = []
        var noResponse: [Double] = []
        for (index, step) in steps.enumerated() where !step.isRetest {
            if let level = progress.thresholds[index] { thresholds.append((step.frequency, level)) }
            if progress.noResponse.contains(index) { noResponse.append(step.frequency) }
        }
        thresholds.sort { $0.frequency < $1.frequency }
        noResponse.sort()
        let difference = progress.retest.flatMap { retest in progress.thresholds[0].map { retest - $0 } }
        return EarResult(ear: configuration.ears[earIndex], thresholds: thresholds, noResponse: noResponse,
                         retestDifference: difference, catchTrials: progress.catchTrials,
                         catchTrialsAnswered: progress.catchTrialsAnswered,
                         listenerCatchTrials: catchTrials, listenerCatchTrialsAnswered: catchTrialsAnswered,
                         pressesOutsideWindows: progress.pressesOutsideWindows, presentations: progress.presentations)
    }

    /// Chooses the next presentation: a catch trial now and then, else the search's tone.
    private mutating func nextTrial() {
        guard let search, let progress = ear, earIndex < configuration.ears.count else { return }
        let step = steps[stepIndex]
        let earUnderTest = configuration.ears[earIndex]
        let probability = catchTrialsAnswered > 0
            ? configuration.catchProbabilityAfterFalseAlarm : configuration.catchProbability
        // No catch trial twice in a row: the last trial was a tone unless this follows a catch.
        let lastWasCatch = currentTrial?.isCatchTrial ?? false
        if !lastWasCatch && Double(random.next() >> 11) * 0x1p-53 < probability {
            currentTrial = Trial(ear: earUnderTest, frequency: step.frequency, level: nil, isRetest: step.isRetest)
        } else {
            currentTrial = Trial(ear: earUnderTest, frequency: step.frequency, level: search.level, isRetest: step.isRetest)
        }
    }
}

/// Why an audiometry configuration was refused.
public enum AudiometryError: Error, Equatable, Sendable, CustomStringConvertible {
    case noEars
    case noFrequencies
    case frequencyOutOfRange(Double)
    case duplicateFrequencies

    public var description: String {
        switch self {
        case .noEars: "the hearing test needs an ear: left, right or both"
        case .noFrequencies: "the hearing test needs at least one frequency"
        case .frequencyOutOfRange(let frequency):
            "\(frequency) Hz is outside the hearing test's range \(Int(PureToneAudiometry.frequencyRange.lowerBound))…\(Int(PureToneAudiometry.frequencyRange.upperBound)) Hz"
        case .duplicateFrequencies: "the hearing test lists a frequency twice"
        }
    }
}
