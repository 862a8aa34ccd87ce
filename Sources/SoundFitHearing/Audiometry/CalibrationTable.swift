import Foundation

/// What a sound level meter read, per ear and frequency, against what SoundFit meant to play:
/// the corrections that make a nominal level the real one at the ear (the artificial ear or
/// coupler the meter measured on, IEC 60318).
///
/// A correction is `measured − nominal` in dB: +6 means the earphone played 6 dB louder than
/// nominal, so SoundFit plays that ear 6 dB lower at that frequency. Between the calibrated
/// frequencies of an ear the correction is interpolated linearly in log frequency, and held
/// flat beyond them (`LogFrequency`); an ear with no point has no correction (0 dB).
///
/// A pure value: usable from any thread.
public struct CalibrationTable: Sendable, Equatable {
    /// One calibrated frequency of one ear.
    public struct Point: Sendable, Equatable {
        public var frequency: Double
        /// measured − nominal, dB.
        public var correction: Double

        public init(frequency: Double, correction: Double) {
            self.frequency = frequency
            self.correction = correction
        }
    }

    /// The frequencies a calibration tone may have, Hz (the audiometric range with margin).
    public static let frequencyRange: ClosedRange<Double> = 125...8000
    /// The nominal levels a calibration tone may be asked for, dB SPL.
    public static let levelRange: ClosedRange<Double> = 0...130
    /// The corrections accepted, dB: a meter reading further off than this from nominal is a
    /// wrong setup (the meter on the other ear, a wrong weighting), not an earphone to correct.
    public static let correctionRange: ClosedRange<Double> = -40...40

    /// Calibrated points per ear, ascending in frequency, one per frequency.
    public private(set) var left: [Point]
    public private(set) var right: [Point]

    public init() {
        left = []
        right = []
    }

    /// A table from stored points (a state file); throws the first bad point.
    public init(left: [Point], right: [Point]) throws(CalibrationTableError) {
        self.init()
        for (ear, points) in [(Ear.left, left), (.right, right)] {
            for point in points { try set(ear: ear, frequency: point.frequency, correction: point.correction) }
        }
    }

    public var isEmpty: Bool { left.isEmpty && right.isEmpty }

    public func points(_ ear: Ear) -> [Point] { ear == .left ? left : right }

    /// The correction of `ear` at `frequency`, dB (0 when that ear has no point).
    public func correction(ear: Ear, frequency: Double) -> Double {
        LogFrequency.interpolate(points(ear).map { (frequency: $0.frequency, value: $0.correction) }, at: frequency)
    }

    /// The largest correction of any ear at any frequency, never below 0: the most conservative
    /// one for a broadband limit (the output safety limit is one limiter for every channel and
    /// band, so it must hold for the loudest-playing ear and
    /// frequency). Interpolation never exceeds the largest point, so this bounds every frequency.
    public var largestCorrection: Double {
        max(0, (left + right).map(\.correction).max() ?? 0)
    }

    /// Records a meter reading: `measured` dB SPL while a tone of `nominal` dB SPL played on
    /// `ear` at `frequency`. The nominal level is what SoundFit meant to play *with the table
    /// in force* (corrections already applied), so a new reading adds to the correction there.
    /// Returns the new correction at that frequency.
    @discardableResult
    public mutating func record(ear: Ear, frequency: Double, nominal: Double, measured: Double) throws(CalibrationTableError) -> Double {
        try Self.check(frequency: frequency)
        for (name, level) in [("nominal", nominal), ("measured", measured)] {
            guard level.isFinite, Self.levelRange.contains(level) else { throw .badLevel(name: name, level: level) }
        }
        let correction = self.correction(ear: ear, frequency: frequency) + measured - nominal
        try set(ear: ear, frequency: frequency, correction: correction)
        return correction
    }

    /// Sets the correction of `ear` at `frequency` (replacing a point there).
    public mutating func set(ear: Ear, frequency: Double, correction: Double) throws(CalibrationTableError) {
        try Self.check(frequency: frequency)
        guard correction.isFinite, Self.correctionRange.contains(correction) else {
            throw .badCorrection(frequency: frequency, correction: correction)
        }
        var points = self.points(ear).filter { $0.frequency != frequency }
        points.append(Point(frequency: frequency, correction: correction))
        points.sort { $0.frequency < $1.frequency }
        if ear == .left { left = points } else { right = points }
    }

    /// Forgets every point.
    public mutating func reset() {
        left = []
        right = []
    }

    static func check(frequency: Double) throws(CalibrationTableError) {
        guard frequency.isFinite, frequencyRange.contains(frequency) else { throw .badFrequency(frequency) }
    }
}

/// Why a calibration input was refused.
public enum CalibrationTableError: Error, Equatable, Sendable, CustomStringConvertible {
    case badFrequency(Double)
    case badLevel(name: String, level: Double)
    case badCorrection(frequency: Double, correction: Double)

    public var description: String {
        let frequencies = CalibrationTable.frequencyRange, levels = CalibrationTable.levelRange
        let corrections = CalibrationTable.correctionRange
        switch self {
        case .badFrequency(let frequency):
            return "frequency \(frequency) Hz is outside \(Int(frequencies.lowerBound))…\(Int(frequencies.upperBound)) Hz"
        case .badLevel(let name, let level):
            return "\(name) level \(level) dB SPL is outside \(Int(levels.lowerBound))…\(Int(levels.upperBound)) dB SPL"
        case .badCorrection(let frequency, let correction):
            return "correction \(correction) dB at \(frequency) Hz is outside \(Int(corrections.lowerBound))…"
                + "\(Int(corrections.upperBound)) dB (is the meter on the right ear, set to dB SPL with no weighting?)"
        }
    }
}
