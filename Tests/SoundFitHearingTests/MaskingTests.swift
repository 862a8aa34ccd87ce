import Foundation
import SoundFitHearing
import SoundFitTestSupport
import Testing

/// Masking with a listener who hears across the head (interaural attenuation 40 dB, the other
/// cochlea's threshold raised by the noise it gets, over-masking likewise).
@Suite struct MaskingTests {
    private func run(_ listener: SimulatedListener, seed: UInt64,
                     configuration: PureToneAudiometry.Configuration = .init()) throws -> PureToneAudiometry {
        var random = SeededRandom(seed: seed)
        return listener.take(try PureToneAudiometry(configuration, random: SeededRandom(seed: seed + 500)), using: &random)
    }

    @Test("A dead ear beside a normal ear: every point no response, never a shadow", arguments: 0..<UInt64(12))
    func deadEarBesideNormalEar(seed: UInt64) throws {
        let listener = SimulatedListener.flat(left: 110, right: 0)
        let test = try run(listener, seed: seed)
        let left = try #require(test.results.first { $0.ear == .left })
        #expect(left.outcomes.count == PureToneAudiometry.defaultFrequencies.count)
        for point in left.outcomes {
            switch point.outcome {
            case .noResponse(let level, _): #expect(level == 90)
            case .threshold(let level, _): #expect(level >= 90, "\(point.frequency) Hz: shadow threshold \(level)")
            case .maskingDilemma: break
            }
        }
        #expect(left.profilePoints.allSatisfy { $0.level >= 90 }, "\(left.profilePoints)")
        let right = try #require(test.results.first { $0.ear == .right })
        for point in right.thresholds { #expect(abs(point.level - 0) <= 10, "right \(point.frequency) Hz: \(point.level)") }
        // The other ear hears a 60 dB HL tone in the dead ear: without masking that is the shadow.
        #expect(listener.probabilityOfHeard(.left, frequency: 1000, level: 60) > 0.9)
    }

    @Test("Asymmetric ears 30 dB apart are both measured within ±5 dB", arguments: 0..<UInt64(12))
    func asymmetricEars(seed: UInt64) throws {
        let listener = SimulatedListener.flat(left: 10, right: 40)
        let test = try run(listener, seed: seed)
        var errors: [Double] = []
        var masked = 0
        for result in test.results {
            #expect(result.maskingDilemmas.isEmpty, "\(result.ear): \(result.outcomes)")
            for point in result.outcomes {
                guard case .threshold(let level, let masking) = point.outcome else {
                    Issue.record("\(result.ear) \(point.frequency) Hz: \(point.outcome)")
                    continue
                }
                if masking != nil { masked += 1 }
                errors.append(level - listener.threshold(result.ear, at: point.frequency))
            }
        }
        #expect(masked > 0, "the worse ear's points need masking by the rule")
        let within5 = Double(errors.filter { abs($0) <= 5 }.count) / Double(errors.count)
        #expect(within5 >= 0.9, "errors \(errors)")
        #expect(errors.allSatisfy { abs($0) <= 10 }, "errors \(errors)")
    }

    @Test("A masking dilemma is reported as such, never as a number", arguments: 0..<UInt64(6))
    func maskingDilemma(seed: UInt64) throws {
        // The left ear needs masking (80 − 40 ≥ 45 − 10) but the output can present only 60 dB EM:
        // no 15 dB plateau fits above the right ear's threshold + 10.
        let listener = SimulatedListener.flat(left: 80, right: 45)
        let configuration = PureToneAudiometry.Configuration(maximumMaskingLevel: { _ in 60 })
        let test = try run(listener, seed: seed, configuration: configuration)
        let left = try #require(test.results.first { $0.ear == .left })
        // Where the right ear measured 5–10 dB high the rule needs no masking: those points are
        // the left ear's own threshold (80 dB HL), never a number near the 85 dB HL shadow's.
        #expect(left.maskingDilemmas.count >= 6, "\(left.outcomes)")
        for point in left.thresholds { #expect(abs(point.level - 80) <= 5, "\(point)") }
        #expect(!left.profilePoints.contains { left.maskingDilemmas.contains($0.frequency) })
        #expect(left.problems.contains { $0.hasPrefix("masking dilemma at ") }, "\(left.problems)")
    }

    @Test func masksTrialsKeepTheirMaskingLevelForCatchTrials() throws {
        let listener = SimulatedListener.flat(left: 110, right: 0)
        var test = try PureToneAudiometry(.init(catchProbability: 0.3, catchProbabilityMaximum: 0.3), random: SeededRandom(seed: 9))
        var random = SeededRandom(seed: 10)
        var maskedCatchTrials = 0
        var previous: PureToneAudiometry.Trial?
        while let trial = test.currentTrial {
            // A catch trial changes nothing: the tone after it has its masking level.
            if let previous, previous.isCatchTrial, let masking = previous.maskingLevel {
                #expect(trial.maskingLevel == masking)
                maskedCatchTrials += 1
            }
            if let masking = trial.maskingLevel { #expect(masking.truncatingRemainder(dividingBy: 5) == 0) }
            previous = trial
            test.record(heard: listener.answer(trial, using: &random))
        }
        #expect(maskedCatchTrials > 0)
    }

    @Test func oneEarTestedListsTheMaskingItCouldNotDo() throws {
        let listener = SimulatedListener.flat(left: 50, right: 0)
        let test = try run(listener, seed: 2, configuration: .init(ears: [.left]))
        let left = try #require(test.results.first)
        #expect(left.maskingNotDone == PureToneAudiometry.defaultFrequencies)
        #expect(left.problems.contains { $0.hasPrefix("masking needed but not done") })
    }

    @Test func theListenerHearsAcrossTheHeadAndIsMaskedByTheNoise() {
        let listener = SimulatedListener(thresholds: [.left: [(1000, 110)], .right: [(1000, 0)]], slope: 2, lapses: 0,
                                         interauralAttenuation: 40)
        #expect(listener.probabilityOfHeard(.left, frequency: 1000, level: 50) > 0.99)
        #expect(listener.probabilityOfHeard(.left, frequency: 1000, level: 30) < 0.01)
        // 30 dB EM in the right ear: the crossed tone must reach 30 dB there, so 70 dB HL.
        #expect(listener.probabilityOfHeard(.left, frequency: 1000, level: 60, maskingLevel: 30) < 0.01)
        #expect(listener.probabilityOfHeard(.left, frequency: 1000, level: 75, maskingLevel: 30) > 0.99)
        // Over-masking: 100 dB EM crosses back to the test cochlea at 60.
        let normal = SimulatedListener(thresholds: [.left: [(1000, 20)], .right: [(1000, 0)]], slope: 2, lapses: 0,
                                       interauralAttenuation: 40)
        #expect(normal.probabilityOfHeard(.left, frequency: 1000, level: 50, maskingLevel: 100) < 0.01)
    }
}

/// The plateau method against a listener who answers deterministically: heard when either
/// cochlea gets the tone at or above its (masked) threshold.
@Suite struct PlateauSearchTests {
    private func run(_ search: PlateauSearch, test: Double, other: Double, attenuation: Double) -> (PlateauSearch, [Double]) {
        var search = search
        var maskings: [Double] = []
        while search.outcome == nil {
            let level = search.toneLevel
            maskings.append(search.masking)
            let heard = level >= max(test, search.masking - attenuation) || level - attenuation >= max(other, search.masking)
            search.record(heard: heard)
        }
        return (search, maskings)
    }

    @Test func aPlateauGivesTheMaskedThresholdAndItsMaskingLevel() {
        let search = PlateauSearch(unmaskedThreshold: 60, otherThreshold: 20, interauralAttenuation: 40,
                                   minimumLevel: -10, maximumLevel: 90, maximumMasking: 90)
        let (done, maskings) = run(search, test: 60, other: 20, attenuation: 40)
        #expect(done.outcome == .threshold(level: 60, maskingLevel: 45))
        #expect(maskings.first == 30 && maskings.prefix(4) == [30, 35, 40, 45])
    }

    @Test func aShadowKeepsRisingToNoResponse() {
        // The test ear hears nothing; the other ear (0 dB HL) hears the tone 40 dB down.
        let search = PlateauSearch(unmaskedThreshold: 40, otherThreshold: 0, interauralAttenuation: 40,
                                   minimumLevel: -10, maximumLevel: 90, maximumMasking: 90)
        let (done, _) = run(search, test: 200, other: 0, attenuation: 40)
        #expect(done.outcome == .noResponse(level: 90, maskingLevel: 55))
    }

    @Test func overMaskingBeforeAPlateauIsADilemma() {
        // Interaural attenuation 20 dB: from 80 dB EM the noise reaches the test ear's 60 dB HL.
        let search = PlateauSearch(unmaskedThreshold: 60, otherThreshold: 55, interauralAttenuation: 20,
                                   minimumLevel: -10, maximumLevel: 90, maximumMasking: 110)
        let (done, maskings) = run(search, test: 60, other: 55, attenuation: 20)
        #expect(done.outcome == .dilemma)
        #expect(maskings.max() == 75)
    }

    @Test func noRoomForTheFirstMaskingLevelIsADilemma() {
        let search = PlateauSearch(unmaskedThreshold: 90, otherThreshold: 85, interauralAttenuation: 40,
                                   minimumLevel: -10, maximumLevel: 90, maximumMasking: 90)
        #expect(search.outcome == .dilemma)
    }
}
