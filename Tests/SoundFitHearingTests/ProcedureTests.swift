import Foundation
import SoundFitHearing
import SoundFitTestSupport
import Testing

/// ISO 8253-1's procedure: familiarization, grid, retest, catch trials; and the gate.
@Suite struct ProcedureTests {
    @Test func familiarizationWithAConsistentListener() {
        var familiarization = Familiarization(startLevel: 40, minimumLevel: -10, maximumLevel: 90)
        var levels: [Double] = []
        while familiarization.outcome == nil {
            levels.append(familiarization.level)
            familiarization.record(heard: familiarization.level >= 25)
        }
        // 40 heard, 20 missed, up 10 to 30 heard, 30 again heard: consistent.
        #expect(levels == [40, 20, 30, 30])
        #expect(familiarization.outcome == .consistent(responseLevel: 30))
    }

    @Test func familiarizationInconsistentTwice() {
        var familiarization = Familiarization(startLevel: 40, minimumLevel: -10, maximumLevel: 90)
        // Heard, missed, heard, then missed on the check, twice over.
        let answers = [true, false, true, false, true, false, true, false]
        var index = 0
        while familiarization.outcome == nil && index < answers.count {
            familiarization.record(heard: answers[index])
            index += 1
        }
        #expect(familiarization.tries == 2)
        if case .inconsistent = familiarization.outcome {} else { Issue.record("\(String(describing: familiarization.outcome))") }
    }

    @Test func anInconsistentFamiliarizationMakesTheResultUnreliable() throws {
        // Answers the first 8 tones at random-looking fixed pattern, then like a normal ear.
        var test = try PureToneAudiometry(.init(ears: [.right], catchProbability: 0), random: SeededRandom(seed: 1))
        let pattern = [true, false, true, false, true, false, true, false]
        var count = 0
        while let trial = test.currentTrial {
            let heard = count < pattern.count ? pattern[count] : (trial.level ?? -100) >= 15
            count += 1
            test.record(heard: heard)
        }
        let result = try #require(test.results.first)
        #expect(result.reliabilityProblems.contains { $0.contains("familiarization") }, "\(result.reliabilityProblems)")
        #expect(result.problems.contains { $0.hasPrefix("unreliable: the familiarization") })
    }

    @Test("Every level is on the 5 dB grid; the maximum is rounded down", arguments: 0..<UInt64(10))
    func levelsOnTheGrid(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let thresholds = PureToneAudiometry.defaultFrequencies.map { (frequency: $0, level: Double.random(in: -8...100, using: &random)) }
        let listener = SimulatedListener(thresholds: [.left: thresholds, .right: thresholds.map { (frequency: $0.frequency, level: $0.level - 7.3) }],
                                         slope: 0.8, interauralAttenuation: 40)
        var test = try PureToneAudiometry(.init(maximumLevel: { 87.3 - $0 / 1000 }), random: SeededRandom(seed: seed + 1))
        while let trial = test.currentTrial {
            if let level = trial.level {
                #expect(level.truncatingRemainder(dividingBy: 5) == 0, "\(level)")
                #expect(level <= 85)
            }
            test.record(heard: listener.answer(trial, using: &random))
        }
        for result in test.results {
            for point in result.outcomes {
                if case .noResponse(let level, _) = point.outcome { #expect(level == (point.frequency <= 2000 ? 85 : point.frequency <= 6000 ? 80 : 75)) }
            }
        }
    }

    @Test func aRetestMoreThanFiveDecibelsOffRetestsTheOtherFrequencies() throws {
        var test = try PureToneAudiometry(.init(ears: [.left], catchProbability: 0), random: SeededRandom(seed: 1))
        var learnt = false
        var order: [Double] = []
        while let trial = test.currentTrial {
            if trial.isRetest { learnt = true }
            if learnt && !trial.isRetest && order.last != trial.frequency { order.append(trial.frequency) }
            test.record(heard: (trial.level ?? -100) >= (learnt ? 20 : 40))
        }
        let result = try #require(test.results.first)
        #expect(result.retestDifference == -20)
        #expect(result.retestedFurther)
        #expect(order == [2000, 3000, 4000, 6000, 8000, 500, 250])
        #expect(result.thresholds.map(\.level) == Array(repeating: 20, count: 8))
        #expect(result.isReliable, "\(result.reliabilityProblems)")
    }

    @Test func aRetestWithinFiveDecibelsRetestsNothing() throws {
        var test = try PureToneAudiometry(.init(ears: [.left], catchProbability: 0), random: SeededRandom(seed: 1))
        var presentations = 0
        while let trial = test.currentTrial {
            presentations += 1
            test.record(heard: (trial.level ?? -100) >= 30)
        }
        let result = try #require(test.results.first)
        #expect(result.retestDifference == 0)
        #expect(!result.retestedFurther)
        #expect(presentations < 100)
    }

    @Test("The catch-trial rate stays bounded after false alarms", arguments: 0..<UInt64(10))
    func boundedCatchTrials(seed: UInt64) throws {
        let listener = SimulatedListener.standard(left: "N2", falseAlarms: 0.3)
        var test = try PureToneAudiometry(.init(), random: SeededRandom(seed: seed))
        var random = SeededRandom(seed: seed + 77)
        var catchTrials = 0
        while let trial = test.currentTrial {
            #expect(test.catchProbability <= 0.2 + 1e-12)
            if trial.isCatchTrial { catchTrials += 1 }
            test.record(heard: listener.answer(trial, using: &random))
        }
        let share = Double(catchTrials) / Double(test.presentationCount)
        #expect(share <= 0.22, "catch trials \(catchTrials) of \(test.presentationCount)")
        for result in test.results { #expect(!result.isReliable) }
    }

    @Test func gateListsEveryProblem() {
        typealias Point = PureToneAudiometry.Point
        let complete = [500.0, 1000, 2000, 4000].map { Point(frequency: $0, outcome: .threshold(level: 30, maskingLevel: nil)) }
        let good = PureToneAudiometry.EarResult(ear: .left, outcomes: complete, listenerCatchTrials: 20, presentations: 100)
        #expect(good.problems.isEmpty)

        var unreliable = good
        unreliable.listenerCatchTrialsAnswered = 5
        #expect(unreliable.problems == ["unreliable: false alarms: 5 of 20 silent catch trials answered (more than 10 %)"])

        let incomplete = PureToneAudiometry.EarResult(ear: .left, outcomes: Array(complete.prefix(2)) + [
            Point(frequency: 4000, outcome: .noResponse(level: 90, maskingLevel: nil)),
        ])
        #expect(incomplete.problems == ["incomplete: no result at 2000 Hz"])

        var dilemma = good
        dilemma.outcomes[1].outcome = .maskingDilemma
        #expect(dilemma.problems == ["incomplete: no result at 1000 Hz", "masking dilemma at 1000 Hz"])

        var notMasked = good
        notMasked.maskingNotDone = [2000]
        #expect(notMasked.problems == ["masking needed but not done at 2000 Hz (the other ear was not tested)"])
    }

    @Test func profilePointsTakeANoResponseAsTheMaximumPlusFive() throws {
        typealias Point = PureToneAudiometry.Point
        let result = PureToneAudiometry.EarResult(ear: .right, outcomes: [
            Point(frequency: 500, outcome: .threshold(level: 20, maskingLevel: nil)),
            Point(frequency: 1000, outcome: .threshold(level: 45, maskingLevel: 60)),
            Point(frequency: 2000, outcome: .noResponse(level: 85, maskingLevel: nil)),
            Point(frequency: 3000, outcome: .maskingDilemma),
            Point(frequency: 4000, outcome: .noResponse(level: 120, maskingLevel: 70)),
        ])
        #expect(result.profilePoints.map(\.frequency) == [500, 1000, 2000, 4000])
        #expect(result.profilePoints.map(\.level) == [20, 45, 90, 120])
    }

    /// Bisgaard S2 (95 dB HL at 4 and 6 kHz) with a 90 dB HL maximum: no response there, and the
    /// profile is valid with 95 dB HL at 4, 6 and 8 kHz — their own no-responses, not a copy.
    @Test func aSteepLossGivesAValidProfile() throws {
        let listener = SimulatedListener.standard(left: "S2", right: "S2")
        var random = SeededRandom(seed: 5)
        let test = listener.take(try PureToneAudiometry(.init(), random: SeededRandom(seed: 6)), using: &random)
        for result in test.results {
            #expect(result.noResponse.contains(4000) && result.noResponse.contains(6000) && result.noResponse.contains(8000),
                    "\(result.outcomes)")
            let audiogram = try Audiogram(result.profilePoints.map { ($0.frequency, $0.level) })
            #expect(audiogram.threshold(at: 4000) == 95)
            #expect(audiogram.points.contains { $0.frequency == 8000 && $0.threshold == 95 })
            #expect(result.problems.isEmpty, "\(result.problems)")
        }
    }
}
