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
    /// The smallest attenuation, dB, of a tone on its way from this earphone's ear to the other
    /// cochlea: the masking decision's cross-hearing margin (a test-ear threshold more than this
    /// above the other ear's may be the other ear hearing it).
    public var interauralAttenuation: Double
    /// Where the RETSPL values (and the interaural attenuation) come from, for records.
    public var source: String

    /// The minimum interaural attenuation of supra-aural earphones (TDH-39/49 type), dB, used
    /// clinically for masking decisions: 40 dB.
    /// Also the value for a user's table and for circumaural earphones, whose own minimum was not
    /// found in a source: the smallest margin is the conservative one (it asks for masking
    /// sooner, never later).
    public static let supraAuralInterauralAttenuation = 40.0
    /// The minimum interaural attenuation of insert earphones (ER-3A type), dB: the lower end of
    /// the 50–60 dB minimum used clinically (hearing.md, "Masking and cross-hearing").
    public static let insertInterauralAttenuation = 50.0

    /// Values already checked (the catalogue's).
    init(name: String, checked entries: [(Double, Double)], interauralAttenuation: Double, source: String) {
        self.name = name
        self.entries = entries.map { (frequency: $0.0, retspl: $0.1) }
        self.interauralAttenuation = interauralAttenuation
        self.source = source
    }

    /// A table from (Hz, dB SPL) pairs: at least one, frequencies positive, finite and distinct,
    /// levels finite and within −20…120 dB SPL. A user's table: its interaural attenuation is
    /// the supra-aural minimum unless given.
    public init(name: String, entries: [(Double, Double)],
                interauralAttenuation: Double = EarphoneTable.supraAuralInterauralAttenuation,
                source: String = "user table") throws(EarphoneTableError) {
        guard !entries.isEmpty else { throw .empty }
        for (frequency, level) in entries {
            guard frequency.isFinite, frequency > 0 else { throw .badFrequency(frequency) }
            guard level.isFinite, (-20...120).contains(level) else { throw .badLevel(frequency: frequency, level: level) }
        }
        let sorted = entries.sorted { $0.0 < $1.0 }
        for (first, second) in zip(sorted, sorted.dropFirst()) where first.0 == second.0 {
            throw .duplicateFrequency(first.0)
        }
        self.init(name: name, checked: sorted, interauralAttenuation: interauralAttenuation, source: source)
    }

    /// RETSPL at `frequency`, interpolated in log frequency.
    public func retspl(at frequency: Double) -> Double {
        LogFrequency.interpolate(entries.map { (frequency: $0.frequency, value: $0.retspl) }, at: frequency)
    }

    public static func == (lhs: EarphoneTable, rhs: EarphoneTable) -> Bool {
        lhs.name == rhs.name && lhs.entries.elementsEqual(rhs.entries) { $0 == $1 }
            && lhs.interauralAttenuation == rhs.interauralAttenuation && lhs.source == rhs.source
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
/// earphone table → dBFS through the calibration (the dB SPL a full-scale sine stands for) and,
/// per ear and frequency, the calibration table's correction (what a meter read − nominal).
///
/// The methods without an ear apply no correction (the broadband view); those with one apply
/// that ear's. A pure value: usable from any thread.
public struct ToneCalibration: Sendable, Equatable {
    /// dB SPL of a full-scale (0 dBFS) sine at the ear.
    public var fullScaleSPL: Double
    public var earphone: EarphoneTable
    /// Per-ear, per-frequency corrections measured with a meter (empty: none).
    public var corrections: CalibrationTable

    public init(fullScaleSPL: Double, earphone: EarphoneTable = .tdh39, corrections: CalibrationTable = CalibrationTable()) {
        self.fullScaleSPL = fullScaleSPL
        self.earphone = earphone
        self.corrections = corrections
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

    /// The sine level in dBFS that gives `soundPressureLevel` dB SPL at `ear` at `frequency`:
    /// through the calibration, less that ear's correction there.
    public func fullScaleLevel(soundPressureLevel: Double, frequency: Double, ear: Ear) -> Double {
        soundPressureLevel - fullScaleSPL - corrections.correction(ear: ear, frequency: frequency)
    }

    /// The sine level in dBFS for `hearingLevel` dB HL at `frequency` on `ear`, corrected.
    public func fullScaleLevel(hearingLevel: Double, frequency: Double, ear: Ear) -> Double {
        fullScaleLevel(soundPressureLevel: soundPressureLevel(hearingLevel: hearingLevel, frequency: frequency),
                       frequency: frequency, ear: ear)
    }

    /// The sine amplitude (peak, 1 = full scale) for `hearingLevel` dB HL at `frequency` on
    /// `ear`, corrected.
    public func amplitude(hearingLevel: Double, frequency: Double, ear: Ear) -> Double {
        pow(10, fullScaleLevel(hearingLevel: hearingLevel, frequency: frequency, ear: ear) / 20)
    }

    /// The highest hearing level at `frequency` whose tone stays at or below `limitSPL` dB SPL
    /// and at or below full scale: what the output can really play.
    public func highestHearingLevel(frequency: Double, limitSPL: Double) -> Double {
        min(limitSPL, fullScaleSPL) - earphone.retspl(at: frequency)
    }

    /// The highest hearing level at `frequency` on `ear` that the output plays unclipped, where
    /// `limitSPL` is the output safety limit in real dB SPL. The limiter sits at `limitSPL` less
    /// the table's largest correction in dBFS terms (`CalibrationTable.largestCorrection`), so
    /// a tone corrected by `c` reaches it at `limitSPL − largest + c` dB SPL, and full scale at
    /// `fullScaleSPL + c`. With no corrections this is `highestHearingLevel(frequency:limitSPL:)`.
    public func highestHearingLevel(frequency: Double, limitSPL: Double, ear: Ear) -> Double {
        let correction = corrections.correction(ear: ear, frequency: frequency)
        return min(limitSPL - corrections.largestCorrection, fullScaleSPL) + correction - earphone.retspl(at: frequency)
    }
}
