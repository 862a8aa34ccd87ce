import Foundation
import SoundFitHearing
import SoundFitTestSupport

/// The hearing test as a clinician would judge it: simulated listeners who hear across
/// the head (interaural attenuation 40 dB, the minimum of a supra-aural earphone, so the worst
/// case for shadows), with the Bisgaard standard audiograms, random, asymmetric and unilateral
/// losses, psychometric slopes 0.5–2 per dB and false alarms 0–10 %, plus a group answering 20–40 %
/// of silent trials. Reports the threshold error, shadow points, masking outcomes, the
/// reliability verdicts and the duration per ear; the same listeners and draws run once more with
/// masking switched off to show what it prevents. Seeded: every run prints the same numbers.
struct ClinicalAudiometryBenchmarks {
    var seed: UInt64 = 2211
    static let interauralAttenuation = 40.0
    static let maximumLevel = 90.0

    /// One simulated listener and the group it belongs to.
    struct Case {
        var group: String
        var listener: SimulatedListener
    }

    struct Summary {
        var errors: [Double] = []
        var shadowPoints = 0
        var earsWithShadow = 0
        var maskedPoints = 0
        var dilemmas = 0
        var maskedNoResponses = 0
        var missedPoints = 0
        var presentationsPerEar: [Double] = []
        var ears = 0
        var reliableEars = 0
        var autoApplied = 0
        /// Ears and reliable ears of listeners with false alarms γ below 5 %, and 5–10 %.
        var earsLowFalseAlarms = 0, reliableLowFalseAlarms = 0
        var earsHighFalseAlarms = 0, reliableHighFalseAlarms = 0
    }

    func run() -> String {
        let cases = Self.cases(seed: seed)
        let timing = TestTiming()
        var main = Summary(), unmasked = Summary(), falseAlarming = Summary()
        var perGroup: [String: Summary] = [:]
        for (index, item) in cases.enumerated() {
            let masked = simulate(item.listener, index: index, masking: true)
            if item.group == "false alarms 20-40 %" {
                Self.collect(masked, listener: item.listener, into: &falseAlarming)
            } else {
                Self.collect(masked, listener: item.listener, into: &main)
                Self.collect(masked, listener: item.listener, into: &perGroup[item.group, default: Summary()])
                Self.collect(simulate(item.listener, index: index, masking: false), listener: item.listener, into: &unmasked)
            }
        }
        let groups = Dictionary(grouping: cases, by: \.group).mapValues(\.count)
        var lines = [
            "\(cases.count) simulated listeners, both ears, \(PureToneAudiometry.defaultFrequencies.map { "\(Int($0))" }.joined(separator: " ")) Hz, maximum \(Int(Self.maximumLevel)) dB HL and \(Int(Self.maximumLevel)) dB EM, interaural attenuation \(Int(Self.interauralAttenuation)) dB (listener and procedure), default timing (\(String(format: "%.2f", timing.meanPresentationSeconds)) s per presentation on average).",
            "Groups: " + groups.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ".",
            "",
            "| run | points with a threshold (true ≤ \(Int(Self.maximumLevel)) dB HL) | mean error | p90 abs error | within ±5 dB | within ±10 dB | shadow points (ears) | masked points | masking dilemmas | missed points | presentations per ear (median / p90) | duration per ear (median / p90) | ears reliable | ears applied automatically |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        lines.append(Self.row("with masking, γ 0–10 %", main, timing))
        lines.append(Self.row("masking off (same listeners and draws)", unmasked, timing))
        lines.append(Self.row("with masking, γ 20–40 %", falseAlarming, timing))
        lines.append("")
        lines.append("Ears called reliable with masking: γ < 5 %: \(main.reliableLowFalseAlarms) of \(main.earsLowFalseAlarms); γ 5–10 %: \(main.reliableHighFalseAlarms) of \(main.earsHighFalseAlarms); γ 20–40 %: \(falseAlarming.reliableEars) of \(falseAlarming.ears).")
        lines.append("")
        lines.append("| group (with masking) | points | p90 abs error | shadow points | masked points | dilemmas | presentations per ear (median) | duration per ear (median) |")
        lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for (name, summary) in perGroup.sorted(by: { $0.key < $1.key }) {
            let absolute = summary.errors.map(abs).sorted()
            let p90 = absolute.isEmpty ? 0 : absolute[Int(Double(absolute.count - 1) * 0.9)]
            let presentations = median(summary.presentationsPerEar)
            lines.append(String(format: "| %@ | %d | %.1f dB | %d | %d | %d | %.0f | %.1f min |", name, summary.errors.count, p90,
                                summary.shadowPoints, summary.maskedPoints, summary.dilemmas, presentations,
                                presentations * timing.meanPresentationSeconds / 60))
        }
        return lines.joined(separator: "\n")
    }

    private static func row(_ name: String, _ summary: Summary, _ timing: TestTiming) -> String {
        let absolute = summary.errors.map(abs).sorted()
        let mean = summary.errors.reduce(0, +) / Double(max(1, summary.errors.count))
        let p90 = absolute.isEmpty ? 0 : absolute[Int(Double(absolute.count - 1) * 0.9)]
        let within5 = Double(absolute.filter { $0 <= 5 }.count) / Double(max(1, absolute.count))
        let within10 = Double(absolute.filter { $0 <= 10 }.count) / Double(max(1, absolute.count))
        let presentations = summary.presentationsPerEar.sorted()
        let medianPresentations = median(presentations)
        let p90Presentations = presentations[Int(Double(presentations.count - 1) * 0.9)]
        return String(format: "| %@ | %d | %+.2f dB | %.1f dB | %.1f %% | %.1f %% | %d (%d) | %d | %d | %d | %.0f / %.0f | %.1f / %.1f min | %d of %d | %d of %d |",
                      name, summary.errors.count, mean, p90, within5 * 100, within10 * 100, summary.shadowPoints,
                      summary.earsWithShadow, summary.maskedPoints, summary.dilemmas, summary.missedPoints,
                      medianPresentations, p90Presentations, medianPresentations * timing.meanPresentationSeconds / 60,
                      p90Presentations * timing.meanPresentationSeconds / 60, summary.reliableEars, summary.ears,
                      summary.autoApplied, summary.ears)
    }

    private func simulate(_ listener: SimulatedListener, index: Int, masking: Bool) -> PureToneAudiometry {
        var answers = SeededRandom(seed: seed &+ UInt64(index) &* 7919)
        // Masking off: an interaural attenuation no threshold can exceed, so nothing is masked.
        let configuration = PureToneAudiometry.Configuration(
            maximumLevel: { _ in Self.maximumLevel },
            interauralAttenuation: masking ? Self.interauralAttenuation : 1000,
            maximumMaskingLevel: { _ in Self.maximumLevel })
        return listener.take(try! PureToneAudiometry(configuration, random: SeededRandom(seed: UInt64(index) &+ 31)), using: &answers)
    }

    private static func collect(_ test: PureToneAudiometry, listener: SimulatedListener, into summary: inout Summary) {
        for result in test.results {
            summary.ears += 1
            summary.presentationsPerEar.append(Double(result.presentations))
            if result.isReliable { summary.reliableEars += 1 }
            if listener.falseAlarms < 0.05 {
                summary.earsLowFalseAlarms += 1
                if result.isReliable { summary.reliableLowFalseAlarms += 1 }
            } else if listener.falseAlarms <= 0.1 {
                summary.earsHighFalseAlarms += 1
                if result.isReliable { summary.reliableHighFalseAlarms += 1 }
            }
            if result.problems.isEmpty { summary.autoApplied += 1 }
            var shadow = false
            for point in result.outcomes {
                let truth = listener.threshold(result.ear, at: point.frequency)
                switch point.outcome {
                case .threshold(let level, let masking):
                    if masking != nil { summary.maskedPoints += 1 }
                    if truth <= maximumLevel { summary.errors.append(level - truth) }
                    // A shadow: a number more than 10 dB better than the ear itself can hear
                    // that the other ear could have heard (its threshold + the attenuation is
                    // within 10 dB of it) — the other ear's answer, not this ear's.
                    let other = listener.threshold(result.ear == .left ? .right : .left, at: point.frequency)
                    if level < truth - 10 && level - interauralAttenuation >= other - 10 {
                        summary.shadowPoints += 1
                        shadow = true
                        if ProcessInfo.processInfo.environment["BENCH_DEBUG"] != nil {
                            FileHandle.standardError.write(Data("shadow \(result.ear) \(point.frequency) Hz: \(level) (masking \(String(describing: masking))) truth \(truth) other \(other)\n".utf8))
                        }
                    }
                case .noResponse(_, let masking):
                    if masking != nil { summary.maskedNoResponses += 1 }
                    if truth <= maximumLevel - 10 { summary.missedPoints += 1 }
                case .maskingDilemma:
                    summary.dilemmas += 1
                }
            }
            if shadow { summary.earsWithShadow += 1 }
        }
    }

    /// The listeners: the Bisgaard set (N1–N5, S1–S3) on both ears and paired with each other,
    /// random audiograms, asymmetric and unilateral losses, and a false-alarm group.
    static func cases(seed: UInt64) -> [Case] {
        var random = SeededRandom(seed: seed)
        func uniform(_ range: ClosedRange<Double>) -> Double { Double.random(in: range, using: &random) }
        func psychometric(_ thresholds: [Ear: [(frequency: Double, level: Double)]], falseAlarms: ClosedRange<Double>) -> SimulatedListener {
            SimulatedListener(thresholds: thresholds, slope: uniform(0.5...2), falseAlarms: uniform(falseAlarms),
                              lapses: uniform(0...0.05), interauralAttenuation: interauralAttenuation)
        }
        func standard(_ name: String) -> [(frequency: Double, level: Double)] {
            zip(StandardAudiogramLevels.frequencies, StandardAudiogramLevels.levels(name)).map { (frequency: $0.0, level: $0.1) }
        }
        func shape(base: Double, slope: Double) -> [(frequency: Double, level: Double)] {
            [125.0, 250, 500, 1000, 2000, 3000, 4000, 6000, 8000].map { frequency in
                let level = base + slope * max(0, log2(frequency / 1000)) + uniform(-5...5)
                return (frequency: frequency, level: min(115, max(-10, level)))
            }
        }
        let names = ["N1", "N2", "N3", "N4", "N5", "S1", "S2", "S3"]
        var cases: [Case] = []
        for name in names {
            for _ in 0..<3 {
                cases.append(Case(group: "Bisgaard, same both ears", listener: psychometric([.left: standard(name), .right: standard(name)], falseAlarms: 0...0.1)))
            }
            for other in names where other != name {
                if uniform(0...1) < 0.4 {
                    cases.append(Case(group: "Bisgaard, different ears", listener: psychometric([.left: standard(name), .right: standard(other)], falseAlarms: 0...0.1)))
                }
            }
        }
        for _ in 0..<60 {
            let base = uniform(-5...55), slope = uniform(0...15)
            cases.append(Case(group: "random, similar ears", listener: psychometric([.left: shape(base: base + uniform(-5...5), slope: slope),
                                                                                       .right: shape(base: base + uniform(-5...5), slope: slope)],
                                                                                      falseAlarms: 0...0.1)))
        }
        for _ in 0..<40 {
            let base = uniform(-5...40), difference = uniform(20...50), slope = uniform(0...12)
            let worse = shape(base: base + difference, slope: slope), better = shape(base: base, slope: slope)
            let leftWorse = uniform(0...1) < 0.5
            cases.append(Case(group: "asymmetric (20-50 dB)", listener: psychometric([.left: leftWorse ? worse : better, .right: leftWorse ? better : worse],
                                                                                       falseAlarms: 0...0.1)))
        }
        for _ in 0..<40 {
            let normal = shape(base: uniform(-5...15), slope: uniform(0...5))
            let bad = shape(base: uniform(50...115), slope: uniform(0...10))
            let leftBad = uniform(0...1) < 0.5
            cases.append(Case(group: "unilateral (one ear 50-115 dB)", listener: psychometric([.left: leftBad ? bad : normal, .right: leftBad ? normal : bad],
                                                                                               falseAlarms: 0...0.1)))
        }
        for _ in 0..<50 {
            let base = uniform(-5...50), slope = uniform(0...15)
            cases.append(Case(group: "false alarms 20-40 %", listener: psychometric([.left: shape(base: base, slope: slope), .right: shape(base: base, slope: slope)],
                                                                                     falseAlarms: 0.2...0.4)))
        }
        return cases
    }
}
