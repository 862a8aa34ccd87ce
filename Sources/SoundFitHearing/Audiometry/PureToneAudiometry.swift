import Foundation

/// Automated pure-tone air-conduction audiometry after ISO 8253-1: familiarization, the order of
/// ears and frequencies, the threshold search at each (`ThresholdSearch`), silent catch trials,
/// the 1 kHz retest, masking by the plateau method where the other ear could have heard the tone
/// (`PlateauSearch`) and the reliability verdict. A pure state machine (give it a seeded
/// generator and a run is repeatable): `currentTrial` says what to present, `record(heard:)`
/// what the listener did.
///
/// - Familiarization (`Familiarization`, with the standard's consistency check) opens the test
///   at the first ear's first frequency; that frequency's search then starts 10 dB below the
///   response level and ascends in 5 dB steps.
/// - Order per ear (ISO 8253-1): 1 kHz (the frequency nearest to it) first, then upwards, then
///   downwards, then the 1 kHz retest. When the retest differs from the first 1 kHz threshold by
///   more than 5 dB, the other frequencies are measured again in the same order and the second
///   measurements are the result (the listener has learnt the task in between; the standard
///   asks for the retest of further frequencies rather than a flag).
/// - Each frequency after the first starts 10 dB above the threshold just found next to it
///   (the retest above the first 1 kHz threshold), which still is clearly audible for the
///   listener, instead of the fixed 40 dB HL of the first: the test is shorter for the same rule.
/// - Every level is on the 5 dB grid; the highest is the output's maximum rounded down to it, and
///   a frequency not heard there is "no response at" that level.
/// - Masking: both ears are measured unmasked first. Then each threshold whose level minus the
///   interaural attenuation reaches the other ear's threshold (air conduction, the conservative
///   rule; minus `maskingMargin` for the ±5 dB of each measurement) is measured again with
///   narrow-band noise in the other ear by the plateau method; the masked threshold, a masked no
///   response, or a masking dilemma replaces it. With one ear tested nothing can be masked: the
///   points that would need it are listed in `EarResult.maskingNotDone`.
/// - Before a presentation, a silent catch trial comes with probability `catchProbability`, raised
///   by `catchProbabilityStep` per answered catch trial up to `catchProbabilityMaximum`, so a
///   listener who answers without hearing is caught while the test stays about as long. In a
///   masked series the catch trial carries the series' masking level (the noise stays on).
/// - Verdict per ear: `EarResult.reliabilityProblems`.
public struct PureToneAudiometry: Sendable {
    public static let defaultFrequencies: [Double] = [250, 500, 1000, 2000, 3000, 4000, 6000, 8000]
    public static let frequencyRange: ClosedRange<Double> = 125...8000
    /// dB subtracted from the other ear's threshold when deciding whether a point needs masking:
    /// each of the two thresholds compared carries up to ±5 dB of measurement error, so a shadow
    /// (the other ear hearing the tone) can be measured up to 10 dB below "other ear + interaural
    /// attenuation". Ours, not the standard's: it masks a little more often than the bare rule,
    /// which costs time but never a wrong number.
    public static let maskingMargin = 10.0

    /// What the procedure needs to know besides the listener.
    public struct Configuration: Sendable, Equatable {
        public var ears: [Ear]
        public var frequencies: [Double]
        /// dB HL of the first tone of each ear.
        public var startLevel: Double
        public var minimumLevel: Double
        /// The highest level to present at a frequency (dB HL): the configured maximum, capped
        /// by what the output can play safely there. Rounded down to the 5 dB grid.
        public var maximumLevel: @Sendable (Double) -> Double
        /// Catch-trial probability before any false alarm, the rise per answered catch trial and
        /// its cap.
        public var catchProbability: Double
        public var catchProbabilityStep: Double
        public var catchProbabilityMaximum: Double
        /// Start each frequency after the first 10 dB above its neighbour's threshold (true),
        /// or at `startLevel` like the first (the fixed procedure).
        public var startsNearNeighbour: Bool
        /// Open the test with the familiarization.
        public var familiarizes: Bool
        /// The earphone's interaural attenuation (dB): how much weaker a sound in one ear reaches
        /// the other cochlea. 40 dB is the minimum used clinically for supra-aural earphones
        /// (TDH-39/49); inserts have 50–60 dB. The earphone table in use supplies it.
        public var interauralAttenuation: Double
        /// The highest effective masking level (dB EM) the output can present in an ear at a
        /// frequency. Rounded down to the 5 dB grid.
        public var maximumMaskingLevel: @Sendable (Double) -> Double

        public init(ears: [Ear] = [.left, .right], frequencies: [Double] = PureToneAudiometry.defaultFrequencies,
                    startLevel: Double = 40, minimumLevel: Double = -10,
                    maximumLevel: @escaping @Sendable (Double) -> Double = { _ in 90 },
                    catchProbability: Double = 0.1, catchProbabilityStep: Double = 0.05,
                    catchProbabilityMaximum: Double = 0.2, startsNearNeighbour: Bool = true,
                    familiarizes: Bool = true, interauralAttenuation: Double = 40,
                    maximumMaskingLevel: @escaping @Sendable (Double) -> Double = { _ in 90 }) {
            self.ears = ears
            self.frequencies = frequencies
            self.startLevel = startLevel
            self.minimumLevel = minimumLevel
            self.maximumLevel = maximumLevel
            self.catchProbability = catchProbability
            self.catchProbabilityStep = catchProbabilityStep
            self.catchProbabilityMaximum = catchProbabilityMaximum
            self.startsNearNeighbour = startsNearNeighbour
            self.familiarizes = familiarizes
            self.interauralAttenuation = interauralAttenuation
            self.maximumMaskingLevel = maximumMaskingLevel
        }

        public static func == (lhs: Configuration, rhs: Configuration) -> Bool {
            lhs.ears == rhs.ears && lhs.frequencies == rhs.frequencies && lhs.startLevel == rhs.startLevel
                && lhs.minimumLevel == rhs.minimumLevel && lhs.catchProbability == rhs.catchProbability
                && lhs.catchProbabilityStep == rhs.catchProbabilityStep
                && lhs.catchProbabilityMaximum == rhs.catchProbabilityMaximum
                && lhs.startsNearNeighbour == rhs.startsNearNeighbour && lhs.familiarizes == rhs.familiarizes
                && lhs.interauralAttenuation == rhs.interauralAttenuation
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

    public let configuration: Configuration
    /// The trial to present now; nil when the test is done.
    public private(set) var currentTrial: Trial?
    /// Every tested ear's result, in test order; empty until the test is done (an unmasked
    /// threshold may still be replaced by masking until then).
    public private(set) var results: [EarResult] = []
    /// Presentations so far (tones and catch trials).
    public private(set) var presentationCount = 0

    private var random: any RandomNumberGenerator & Sendable
    private var catchTrials = 0
    private var catchTrialsAnswered = 0
    private let baseSteps: [Step]
    private var steps: [Step] = []
    private var earIndex = 0
    private var stepIndex = 0
    private var ears: [EarProgress] = []
    private var phase = Phase.done
    private var familiarization: Familiarization.Outcome?
    private var maskingQueue: [MaskingPoint] = []
    private var maskingIndex = 0

    private enum Phase: Sendable {
        case familiarization(Familiarization)
        case search(ThresholdSearch)
        case plateau(PlateauSearch)
        case done
    }

    /// One frequency of an ear's order, the retest and the repeats included.
    private struct Step: Sendable {
        enum Kind: Sendable { case first, retest, repeated }
        var frequency: Double
        var kind: Kind
        /// The frequency whose threshold sets this one's start level.
        var neighbour: Double?
    }

    private struct MaskingPoint: Sendable {
        var ear: Int
        var frequency: Double
        var unmasked: Double
        var other: Double
    }

    private struct EarProgress: Sendable {
        var outcomes: [Double: PointOutcome] = [:]
        var firstAnchor: Double?
        var retest: Double?
        var retestedFurther = false
        var maskingNotDone: [Double] = []
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
        baseSteps = Self.order(configuration.frequencies)
        startEar()
    }

    /// The test order of one ear: anchor (nearest 1 kHz), upwards, downwards, anchor retest.
    private static func order(_ frequencies: [Double]) -> [Step] {
        let sorted = frequencies.sorted()
        let anchor = sorted.min { abs(log2($0 / 1000)) < abs(log2($1 / 1000)) }!
        var steps = [Step(frequency: anchor, kind: .first, neighbour: nil)]
        var previous = anchor
        for frequency in sorted where frequency > anchor {
            steps.append(Step(frequency: frequency, kind: .first, neighbour: previous))
            previous = frequency
        }
        previous = anchor
        for frequency in sorted.reversed() where frequency < anchor {
            steps.append(Step(frequency: frequency, kind: .first, neighbour: previous))
            previous = frequency
        }
        steps.append(Step(frequency: anchor, kind: .retest, neighbour: anchor))
        return steps
    }

    /// Progress 0…1: finished steps over all steps of all ears, then the masked points.
    public var progress: Double {
        if currentTrial == nil { return 1 }
        let total = configuration.ears.count * baseSteps.count
        let unmasked = Double(earIndex * baseSteps.count + min(stepIndex, baseSteps.count)) / Double(max(1, total))
        let share = configuration.ears.count > 1 ? 0.9 : 1
        guard earIndex >= configuration.ears.count else { return min(1, unmasked) * share }
        return share + (1 - share) * Double(maskingIndex) / Double(max(1, maskingQueue.count))
    }

    public var isDone: Bool { currentTrial == nil }

    /// The index in `ears` of the ear under test now.
    private var currentEar: Int {
        if case .plateau = phase { return maskingQueue[maskingIndex].ear }
        return earIndex
    }

    /// Records the listener's answer to `currentTrial` and moves on.
    public mutating func record(heard: Bool) {
        guard let trial = currentTrial, ears.indices.contains(currentEar) else { return }
        let index = currentEar
        presentationCount += 1
        ears[index].presentations += 1
        if trial.isCatchTrial {
            ears[index].catchTrials += 1
            catchTrials += 1
            if heard {
                ears[index].catchTrialsAnswered += 1
                catchTrialsAnswered += 1
            }
            nextTrial()
            return
        }
        switch phase {
        case .familiarization(var familiarizing):
            familiarizing.record(heard: heard)
            phase = .familiarization(familiarizing)
            guard let outcome = familiarizing.outcome else { return nextTrial() }
            familiarization = outcome
            if outcome == .noResponse {
                finishStep(.noResponse, maximum: familiarizing.maximumLevel)
            } else {
                startStep()
            }
        case .search(var search):
            search.record(heard: heard)
            phase = .search(search)
            if let outcome = search.outcome { finishStep(outcome, maximum: search.maximumLevel) } else { nextTrial() }
        case .plateau(var plateau):
            plateau.record(heard: heard)
            phase = .plateau(plateau)
            if let outcome = plateau.outcome { finishMasked(outcome) } else { nextTrial() }
        case .done:
            return
        }
    }

    /// A press that fell in no response window: a false alarm of the ear under test.
    public mutating func recordPressOutsideWindows() {
        guard ears.indices.contains(currentEar) else { return }
        ears[currentEar].pressesOutsideWindows += 1
    }

    // MARK: Unmasked

    private mutating func startEar() {
        guard earIndex < configuration.ears.count else { return startMasking() }
        ears.append(EarProgress())
        steps = baseSteps
        stepIndex = 0
        startStep()
    }

    private func maximum(at frequency: Double) -> Double {
        max(ThresholdSearch.gridUp(configuration.minimumLevel), ThresholdSearch.gridDown(configuration.maximumLevel(frequency)))
    }

    private mutating func startStep() {
        let step = steps[stepIndex]
        let maximum = maximum(at: step.frequency)
        let isFirstOfTest = earIndex == 0 && stepIndex == 0
        if isFirstOfTest && configuration.familiarizes && familiarization == nil {
            phase = .familiarization(Familiarization(startLevel: configuration.startLevel,
                                                     minimumLevel: configuration.minimumLevel, maximumLevel: maximum))
            return nextTrial()
        }
        var start = configuration.startLevel
        var firstStep = 20.0
        if isFirstOfTest {
            switch familiarization {
            case .consistent(let response)?, .inconsistent(let response)?:
                // ISO 8253-1's ascending method: 10 dB below the familiarization's response.
                start = response - 10
                firstStep = 5
            default:
                break
            }
        }
        let progress = ears[earIndex]
        let source = step.kind == .repeated ? step.frequency : step.neighbour
        if let source, configuration.startsNearNeighbour || step.kind != .first {
            switch progress.outcomes[source] {
            case .threshold(let level, _)?: start = level + 10
            case .noResponse?: start = maximum
            default: break
            }
        }
        phase = .search(ThresholdSearch(startLevel: start, minimumLevel: configuration.minimumLevel,
                                        maximumLevel: maximum, firstStep: firstStep))
        nextTrial()
    }

    private mutating func finishStep(_ outcome: ThresholdSearch.Outcome, maximum: Double) {
        let step = steps[stepIndex]
        let point: PointOutcome = switch outcome {
        case .threshold(let level): .threshold(level: level, maskingLevel: nil)
        case .noResponse: .noResponse(level: maximum, maskingLevel: nil)
        }
        switch step.kind {
        case .first:
            ears[earIndex].outcomes[step.frequency] = point
            if stepIndex == 0, case .threshold(let level) = outcome { ears[earIndex].firstAnchor = level }
        case .retest:
            if case .threshold(let level) = outcome {
                ears[earIndex].retest = level
                if let first = ears[earIndex].firstAnchor, abs(level - first) > 5, baseSteps.count > 2 {
                    // ISO 8253-1: a retest more than 5 dB off means the other frequencies are
                    // measured again, in the same order; the practised values stand.
                    ears[earIndex].retestedFurther = true
                    ears[earIndex].outcomes[step.frequency] = point
                    for repeated in baseSteps.dropFirst().dropLast() {
                        steps.append(Step(frequency: repeated.frequency, kind: .repeated, neighbour: nil))
                    }
                }
            }
        case .repeated:
            ears[earIndex].outcomes[step.frequency] = point
        }
        stepIndex += 1
        if stepIndex < steps.count {
            startStep()
        } else {
            earIndex += 1
            startEar()
        }
    }

    // MARK: Masking

    /// Decides which points need masking (or would, when only one ear was tested) and starts
    /// measuring them.
    private mutating func startMasking() {
        let attenuation = configuration.interauralAttenuation
        if ears.count == 2 {
            for index in 0..<2 {
                for step in baseSteps where step.kind == .first {
                    guard case .threshold(let level, nil)? = ears[index].outcomes[step.frequency] else { continue }
                    let other: Double
                    switch ears[1 - index].outcomes[step.frequency] {
                    case .threshold(let otherLevel, _)?: other = otherLevel
                    case .noResponse(let otherLevel, _)?: other = otherLevel + 5
                    default: continue
                    }
                    if level - attenuation >= other - Self.maskingMargin {
                        maskingQueue.append(MaskingPoint(ear: index, frequency: step.frequency, unmasked: level, other: other))
                    }
                }
            }
        } else {
            for index in ears.indices {
                for (frequency, outcome) in ears[index].outcomes {
                    if case .threshold(let level, _) = outcome,
                       level - attenuation >= ThresholdSearch.gridUp(configuration.minimumLevel) {
                        ears[index].maskingNotDone.append(frequency)
                    }
                }
            }
        }
        maskingIndex = 0
        startPlateau()
    }

    private mutating func startPlateau() {
        guard maskingIndex < maskingQueue.count else { return finish() }
        let point = maskingQueue[maskingIndex]
        let plateau = PlateauSearch(unmaskedThreshold: point.unmasked, otherThreshold: point.other,
                                    interauralAttenuation: configuration.interauralAttenuation,
                                    minimumLevel: configuration.minimumLevel, maximumLevel: maximum(at: point.frequency),
                                    maximumMasking: configuration.maximumMaskingLevel(point.frequency))
        phase = .plateau(plateau)
        if let outcome = plateau.outcome { return finishMasked(outcome) }
        nextTrial()
    }

    private mutating func finishMasked(_ outcome: PlateauSearch.Outcome) {
        let point = maskingQueue[maskingIndex]
        ears[point.ear].outcomes[point.frequency] = switch outcome {
        case .threshold(let level, let masking): .threshold(level: level, maskingLevel: masking)
        case .noResponse(let level, let masking): .noResponse(level: level, maskingLevel: masking)
        case .dilemma: .maskingDilemma
        }
        maskingIndex += 1
        startPlateau()
    }

    private mutating func finish() {
        phase = .done
        currentTrial = nil
        results = ears.indices.map { index in
            let progress = ears[index]
            let difference = progress.retest.flatMap { retest in progress.firstAnchor.map { retest - $0 } }
            return EarResult(ear: configuration.ears[index],
                             outcomes: progress.outcomes.map { Point(frequency: $0.key, outcome: $0.value) },
                             retestDifference: difference, retestedFurther: progress.retestedFurther,
                             maskingNotDone: progress.maskingNotDone, familiarization: familiarization,
                             catchTrials: progress.catchTrials, catchTrialsAnswered: progress.catchTrialsAnswered,
                             listenerCatchTrials: catchTrials, listenerCatchTrialsAnswered: catchTrialsAnswered,
                             pressesOutsideWindows: progress.pressesOutsideWindows, presentations: progress.presentations)
        }
    }

    // MARK: Presentations

    /// The catch-trial probability now: raised per answered catch trial, capped.
    public var catchProbability: Double {
        min(configuration.catchProbabilityMaximum,
            configuration.catchProbability + configuration.catchProbabilityStep * Double(catchTrialsAnswered))
    }

    /// Chooses the next presentation: a catch trial now and then, else the phase's tone.
    private mutating func nextTrial() {
        let trial: Trial
        switch phase {
        case .familiarization(let familiarizing):
            trial = Trial(ear: configuration.ears[earIndex], frequency: steps[stepIndex].frequency,
                          level: familiarizing.level, isRetest: false)
        case .search(let search):
            let step = steps[stepIndex]
            trial = Trial(ear: configuration.ears[earIndex], frequency: step.frequency, level: search.level,
                          isRetest: step.kind == .retest)
        case .plateau(let plateau):
            let point = maskingQueue[maskingIndex]
            trial = Trial(ear: configuration.ears[point.ear], frequency: point.frequency, level: plateau.toneLevel,
                          isRetest: false, maskingLevel: plateau.masking)
        case .done:
            currentTrial = nil
            return
        }
        // No catch trial twice in a row: the last trial was a tone unless this follows a catch.
        let lastWasCatch = currentTrial?.isCatchTrial ?? false
        if !lastWasCatch && Double(random.next() >> 11) * 0x1p-53 < catchProbability {
            currentTrial = Trial(ear: trial.ear, frequency: trial.frequency, level: nil, isRetest: trial.isRetest,
                                 maskingLevel: trial.maskingLevel)
        } else {
            currentTrial = trial
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
