import Foundation
import SoundFitHearing
import SoundFitTestSupport

/// The hearing test simulated: threshold error and duration over simulated listeners with random
/// audiograms and psychometric parameters, for the procedure SoundFit runs (each frequency starts
/// near its neighbour's threshold) beside the fixed modified Hughson-Westlake (every frequency
/// starts at 40 dB HL), with the same listeners and the same random draws.
struct AudiometryBenchmarks {
    var listeners = 200
    var seed: UInt64 = 2026

    struct Summary {
        var name: String
        var errors: [Double] = []
        var presentations: [Double] = []
        var unreliable = 0
        var ears = 0
        /// Points not heard at the maximum although the true threshold was 10 dB or more below it.
        var missedPoints = 0
    }

    func run() -> String {
        var random = SeededRandom(seed: seed)
        var adaptive = Summary(name: "SoundFit (start near the neighbour's threshold)")
        var fixed = Summary(name: "fixed Hughson-Westlake (start at 40 dB HL)")
        let timing = TestTiming()
        for index in 0..<listeners {
            let listener = Self.randomListener(&random)
            Self.collect(simulate(listener, index: index, startsNearNeighbour: true), listener: listener, into: &adaptive)
            Self.collect(simulate(listener, index: index, startsNearNeighbour: false), listener: listener, into: &fixed)
        }
        var lines = [
            "\(listeners) simulated listeners, both ears, frequencies \(PureToneAudiometry.defaultFrequencies.map { "\(Int($0))" }.joined(separator: " ")) Hz, default timing (\(String(format: "%.2f", timing.meanPresentationSeconds)) s per presentation on average, catch trials included).",
            "Listeners: thresholds from random audiogram shapes (−10…100 dB HL), slope β 0.7–1.8 /dB, false alarms γ 0–5 %, lapses λ 0–5 %.",
            "",
            "| procedure | mean error (dB) | SD (dB) | 90th pct abs error (dB) | within ±5 dB | within ±10 dB | presentations per test (median) | duration (median) | unreliable ears | points missed |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for summary in [adaptive, fixed] {
            let absolute = summary.errors.map(abs).sorted()
            let mean = summary.errors.reduce(0, +) / Double(summary.errors.count)
            let sd = (summary.errors.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(summary.errors.count - 1)).squareRoot()
            let p90 = absolute[Int(Double(absolute.count - 1) * 0.9)]
            let within5 = Double(absolute.filter { $0 <= 5 }.count) / Double(absolute.count)
            let within10 = Double(absolute.filter { $0 <= 10 }.count) / Double(absolute.count)
            let presentations = median(summary.presentations)
            let minutes = presentations * timing.meanPresentationSeconds / 60
            lines.append(String(format: "| %@ | %+.2f | %.2f | %.1f | %.1f %% | %.1f %% | %.0f | %.1f min | %d of %d | %d |",
                                summary.name, mean, sd, p90, within5 * 100, within10 * 100, presentations, minutes,
                                summary.unreliable, summary.ears, summary.missedPoints))
        }
        let ratio = median(adaptive.presentations) / median(fixed.presentations)
        lines.append("")
        lines.append(String(format: "Duration ratio SoundFit / fixed (medians, same listeners): %.2f", ratio))
        return lines.joined(separator: "\n")
    }

    /// One test of `listener`; both procedures see the same catch-trial and answer draws.
    private func simulate(_ listener: SimulatedListener, index: Int, startsNearNeighbour: Bool) -> PureToneAudiometry {
        var answers = SeededRandom(seed: seed &+ UInt64(index) &* 7919)
        let configuration = PureToneAudiometry.Configuration(startsNearNeighbour: startsNearNeighbour)
        return listener.take(try! PureToneAudiometry(configuration, random: SeededRandom(seed: UInt64(index))), using: &answers)
    }

    private static func collect(_ test: PureToneAudiometry, listener: SimulatedListener, into summary: inout Summary) {
        summary.presentations.append(Double(test.presentationCount))
        for result in test.results {
            summary.ears += 1
            if !result.isReliable { summary.unreliable += 1 }
            for point in result.thresholds {
                let truth = listener.threshold(result.ear, at: point.frequency)
                // Thresholds above the maximum level cannot be measured; they are "no response".
                guard truth <= 90 else { continue }
                summary.errors.append(point.level - truth)
            }
            for frequency in result.noResponse where listener.threshold(result.ear, at: frequency) <= 80 {
                summary.missedPoints += 1
            }
        }
    }

    /// A listener with a random audiogram shape per ear (a flat part, a high-frequency slope,
    /// some ripple) and random psychometric parameters.
    static func randomListener(_ random: inout SeededRandom) -> SimulatedListener {
        func uniform(_ range: ClosedRange<Double>) -> Double { Double.random(in: range, using: &random) }
        let frequencies: [Double] = [125, 250, 500, 1000, 2000, 3000, 4000, 6000, 8000]
        var thresholds: [Ear: [(frequency: Double, level: Double)]] = [:]
        let base = uniform(-5...55)
        let slope = uniform(0...15)
        for ear in Ear.allCases {
            let offset = uniform(-5...5)
            thresholds[ear] = frequencies.map { frequency in
                let octavesAbove1k = max(0, log2(frequency / 1000))
                let level = base + offset + slope * octavesAbove1k + uniform(-5...5)
                return (frequency: frequency, level: min(100, max(-10, level)))
            }
        }
        return SimulatedListener(thresholds: thresholds, slope: uniform(0.7...1.8), falseAlarms: uniform(0...0.05),
                                 lapses: uniform(0...0.05))
    }
}
