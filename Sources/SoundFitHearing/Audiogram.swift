/// One ear.
public enum Ear: String, Sendable, CaseIterable {
    case left, right
}

/// Hearing thresholds of one ear in dB HL at standard audiometric frequencies.
///
/// Valid audiograms use only standard frequencies (octaves and inter-octaves from 125 to
/// 8000 Hz), levels from −10 to 120 dB HL, contain at least 500, 1000, 2000 and 4000 Hz and
/// no frequency twice. Anything else is rejected with an `AudiogramError` that names the problem.
public struct Audiogram: Sendable, Equatable {
    /// Standard audiometric frequencies accepted in an audiogram.
    public static let standardFrequencies: [Double] = [125, 250, 375, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000]
    /// Frequencies every audiogram must contain (the prescription's three-frequency average needs
    /// 500/1000/2000 Hz; 4000 Hz anchors the high bands).
    public static let requiredFrequencies: [Double] = [500, 1000, 2000, 4000]
    public static let levelRange: ClosedRange<Double> = -10...120

    /// Threshold points sorted by frequency.
    public let points: [Point]

    /// One threshold: `{"hz": 500, "db_hl": 35}` in a hearing profile file.
    public struct Point: Sendable, Equatable {
        public var frequency: Double
        public var threshold: Double

        public init(frequency: Double, threshold: Double) {
            self.frequency = frequency
            self.threshold = threshold
        }
    }

    public init(points: [Point]) throws(AudiogramError) {
        if let (_, error) = Self.firstInvalidPoint(points) { throw error }
        let missing = Self.requiredFrequencies.filter { required in !points.contains { $0.frequency == required } }
        guard missing.isEmpty else { throw .missingFrequencies(missing) }
        self.points = points.sorted { $0.frequency < $1.frequency }
    }

    /// The first point that breaks a rule (nonstandard frequency, level out of range, a frequency
    /// given twice), with its index (so a file reader can name `left[3].hz`).
    static func firstInvalidPoint(_ points: [Point]) -> (index: Int, error: AudiogramError)? {
        var seen = Set<Double>()
        for (index, point) in points.enumerated() {
            guard point.frequency.isFinite, standardFrequencies.contains(point.frequency) else {
                return (index, .nonstandardFrequency(point.frequency))
            }
            guard point.threshold.isFinite, levelRange.contains(point.threshold) else {
                return (index, .levelOutOfRange(frequency: point.frequency, level: point.threshold))
            }
            guard seen.insert(point.frequency).inserted else { return (index, .duplicateFrequency(point.frequency)) }
        }
        return nil
    }

    /// Convenience: `[(hz, dB HL)]`.
    public init(_ pairs: [(Double, Double)]) throws(AudiogramError) {
        try self.init(points: pairs.map { Point(frequency: $0.0, threshold: $0.1) })
    }

    /// The threshold at `frequency`, interpolated linearly in log frequency between measured
    /// points and held flat beyond the first and last.
    public func threshold(at frequency: Double) -> Double {
        LogFrequency.interpolate(points.map { (frequency: $0.frequency, value: $0.threshold) }, at: frequency)
    }
}

/// Why an audiogram was rejected.
public enum AudiogramError: Error, Equatable, Sendable, CustomStringConvertible {
    case nonstandardFrequency(Double)
    case levelOutOfRange(frequency: Double, level: Double)
    case duplicateFrequency(Double)
    case missingFrequencies([Double])
    case noEar

    public var description: String {
        switch self {
        case .nonstandardFrequency(let hz):
            "\(format(hz)) Hz is not a standard audiometric frequency (\(Audiogram.standardFrequencies.map(format).joined(separator: ", ")) Hz)"
        case .levelOutOfRange(let hz, let level):
            "threshold \(format(level)) dB HL at \(format(hz)) Hz is outside −10…120 dB HL"
        case .duplicateFrequency(let hz): "\(format(hz)) Hz appears twice"
        case .missingFrequencies(let missing):
            "missing required frequencies: \(missing.map(format).joined(separator: ", ")) Hz"
        case .noEar: "a hearing profile needs an audiogram for at least one ear"
        }
    }
}

func format(_ value: Double) -> String {
    value.isFinite && value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : "\(value)"
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
