import Foundation

/// Reference equivalent threshold sound pressure levels (RETSPL) of an earphone: the dB SPL
/// (re 20 µPa) that 0 dB HL stands for at each frequency. dB HL = dB SPL − RETSPL(f).
///
/// Between its frequencies the table is interpolated linearly in log frequency; outside them
/// the nearest entry holds.
public struct EarphoneTable: Sendable, Equatable {
    /// A name for reports and files, e.g. `TDH-39`.
    public var name: String
    /// (Hz, dB SPL), ascending in frequency.
    public private(set) var entries: [(frequency: Double, retspl: Double)]

    /// A supra-aural earphone of the TDH-39 type (ISO 389-1 / ANSI S3.6): the default.
    public static let tdh39 = EarphoneTable(name: "TDH-39", checked: [
        (125, 45.0), (250, 25.5), (500, 11.5), (750, 8.0), (1000, 7.0), (1500, 6.5), (2000, 9.0),
        (3000, 10.0), (4000, 9.5), (6000, 15.5), (8000, 13.0),
    ])

    private init(name: String, checked entries: [(Double, Double)]) {
        self.name = name
        self.entries = entries.map { (frequency: $0.0, retspl: $0.1) }
    }

    /// A table from (Hz, dB SPL) pairs: at least one, frequencies positive, finite and distinct,
    /// levels finite and within −20…120 dB SPL.
    public init(name: String, entries: [(Double, Double)]) throws(EarphoneTableError) {
        guard !entries.isEmpty else { throw .empty }
        for (frequency, level) in entries {
            guard frequency.isFinite, frequency > 0 else { throw .badFrequency(frequency) }
            guard level.isFinite, (-20...120).contains(level) else { throw .badLevel(frequency: frequency, level: level) }
        }
        let sorted = entries.sorted { $0.0 < $1.0 }
        for (first, second) in zip(sorted, sorted.dropFirst()) where first.0 == second.0 {
            throw .duplicateFrequency(first.0)
        }
        self.init(name: name, checked: sorted)
    }

    /// RETSPL at `frequency`, interpolated in log frequency.
    public func retspl(at frequency: Double) -> Double {
        LogFrequency.interpolate(entries.map { (frequency: $0.frequency, value: $0.retspl) }, at: frequency)
    }

    public static func == (lhs: EarphoneTable, rhs: EarphoneTable) -> Bool {
        lhs.name == rhs.name && lhs.entries.elementsEqual(rhs.entries) { $0 == $1 }
    }
}

/// Why an earphone table was refused.
public enum EarphoneTableError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    case badFrequency(Double)
    case badLevel(frequency: Double, level: Double)
    case duplicateFrequency(Double)

    public var description: String {
        switch self {
        case .empty: "an earphone table needs at least one frequency"
        case .badFrequency(let frequency): "earphone table: frequency \(frequency) Hz must be positive and finite"
        case .badLevel(let frequency, let level): "earphone table: RETSPL \(level) dB SPL at \(frequency) Hz must be within −20…120"
        case .duplicateFrequency(let frequency): "earphone table: \(frequency) Hz is listed twice"
        }
    }
}

/// Converts hearing levels to the digital level SoundFit plays: dB HL → dB SPL through the
/// earphone table → dBFS through the calibration (the dB SPL a full-scale sine stands for).
public struct ToneCalibration: Sendable, Equatable {
    /// dB SPL of a full-scale (0 dBFS) sine at the ear.
    public var fullScaleSPL: Double
    public var earphone: EarphoneTable

    public init(fullScaleSPL: Double, earphone: EarphoneTable = .tdh39) {
        self.fullScaleSPL = fullScaleSPL
        self.earphone = earphone
    }

    /// The level in dB SPL of `hearingLevel` dB HL at `frequency`.
    public func soundPressureLevel(hearingLevel: Double, frequency: Double) -> Double {
        hearingLevel + earphone.retspl(at: frequency)
    }

    /// The sine level in dBFS (peak re full scale) for `hearingLevel` dB HL at `frequency`.
    public func fullScaleLevel(hearingLevel: Double, frequency: Double) -> Double {
        soundPressureLevel(hearingLevel: hearingLevel, frequency: frequency) - fullScaleSPL
    }

    /// The sine amplitude (peak, 1 = full scale) for `hearingLevel` dB HL at `frequency`.
    public func amplitude(hearingLevel: Double, frequency: Double) -> Double {
        pow(10, fullScaleLevel(hearingLevel: hearingLevel, frequency: frequency) / 20)
    }

    /// The highest hearing level at `frequency` whose tone stays at or below `limitSPL` dB SPL
    /// and at or below full scale: what the output can really play.
    public func highestHearingLevel(frequency: Double, limitSPL: Double) -> Double {
        min(limitSPL, fullScaleSPL) - earphone.retspl(at: frequency)
    }
}
