import Foundation

/// The reference levels of narrow-band masking noise: how many dB above the earphone's RETSPL
/// a one-third-octave band around f must be to give 0 dB effective masking (dB EM) at f.
///
/// ISO 389-4:1994 ("Reference levels for narrow-band masking noise", which replaced ISO
/// 8798:1987) "specifies reference levels for the calibration of narrow-band masking noise …
/// in terms of levels to be added to the reference equivalent threshold sound pressure levels
/// for the corresponding pure-tone frequencies", for one-third- and one-half-octave bands
/// (scope as published by ISO and GlobalSpec). Its table of values is not public: it was NOT
/// found in the sources searched (the standard's text, ANSI S3.6, audiometer manuals, open
/// audiometry code), so no standard values are built in here, and none may be guessed.
///
/// What SoundFit does instead: `uncorrected` (0 dB at every frequency, named as such, so that
/// a record never mistakes it for ISO 389-4) until a table is entered, e.g. from the standard
/// or from an audiometer's calibration sheet, with `init(name:corrections:)`. With
/// `uncorrected`, "E dB EM" plays the band at E dB above the tone's RETSPL: by ISO 389-4's
/// definition the real effective masking of such a band is a few dB less than E, which the
/// masking procedure's safety margins must cover until the table is entered.
///
/// Between its frequencies the table is interpolated linearly in log frequency; outside them
/// the nearest entry holds.
public struct MaskingNoiseReference: Sendable, Equatable {
    /// A name for reports and records, e.g. `ISO 389-4 (1/3 octave)`.
    public var name: String
    /// (Hz, dB added to RETSPL), ascending in frequency.
    public private(set) var corrections: [(frequency: Double, correction: Double)]

    /// No correction: the band plays at E dB above RETSPL for E dB EM. Not ISO 389-4.
    public static let uncorrected = MaskingNoiseReference(name: "uncorrected (no ISO 389-4 table entered)",
                                                          checked: [(1000, 0)])

    private init(name: String, checked: [(Double, Double)]) {
        self.name = name
        corrections = checked.map { (frequency: $0.0, correction: $0.1) }
    }

    /// A table from (Hz, dB) pairs: at least one, frequencies positive, finite and distinct,
    /// corrections finite and within −20…40 dB.
    public init(name: String, corrections: [(Double, Double)]) throws(MaskingNoiseReferenceError) {
        guard !corrections.isEmpty else { throw .empty }
        for (frequency, correction) in corrections {
            guard frequency.isFinite, frequency > 0 else { throw .badFrequency(frequency) }
            guard correction.isFinite, (-20...40).contains(correction) else {
                throw .badCorrection(frequency: frequency, correction: correction)
            }
        }
        let sorted = corrections.sorted { $0.0 < $1.0 }
        for (first, second) in zip(sorted, sorted.dropFirst()) where first.0 == second.0 {
            throw .duplicateFrequency(first.0)
        }
        self.init(name: name, checked: sorted)
    }

    /// The dB added to RETSPL at `frequency`, interpolated in log frequency.
    public func correction(at frequency: Double) -> Double {
        LogFrequency.interpolate(corrections.map { (frequency: $0.frequency, value: $0.correction) }, at: frequency)
    }

    public static func == (lhs: MaskingNoiseReference, rhs: MaskingNoiseReference) -> Bool {
        lhs.name == rhs.name && lhs.corrections.elementsEqual(rhs.corrections) { $0 == $1 }
    }
}

/// Why a masking noise reference table was refused.
public enum MaskingNoiseReferenceError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    case badFrequency(Double)
    case badCorrection(frequency: Double, correction: Double)
    case duplicateFrequency(Double)

    public var description: String {
        switch self {
        case .empty: "a masking noise reference table needs at least one frequency"
        case .badFrequency(let frequency): "masking noise reference: frequency \(frequency) Hz must be positive and finite"
        case .badCorrection(let frequency, let correction):
            "masking noise reference: \(correction) dB at \(frequency) Hz must be within −20…40"
        case .duplicateFrequency(let frequency): "masking noise reference: \(frequency) Hz is listed twice"
        }
    }
}

/// Effective masking (dB EM) → band SPL → the RMS amplitude the masking noise plays, and back.
///
/// `fullScaleSPL` is the SPL of a full-scale SINE, whose RMS is 1/√2: a noise of the same SPL
/// has the same RMS, so a band of L dB SPL has RMS 1/√2 × 10^((L − fullScaleSPL)/20).
extension ToneCalibration {
    /// Peak-to-RMS ratio the masking noise is allowed for (our choice, not a standard's):
    /// Gaussian noise exceeds 4 × its RMS in fewer than 1 in 10 000 samples, so a band whose
    /// RMS × 4 stays under the output's peak limit is practically never limited or clipped.
    public static let maskingCrestFactor = 4.0

    /// The band SPL (dB re 20 µPa) of `effectiveMasking` dB EM at `frequency`:
    /// E + RETSPL(f) + the reference's correction at f.
    public func maskingSoundPressureLevel(effectiveMasking: Double, frequency: Double,
                                          reference: MaskingNoiseReference = .uncorrected) -> Double {
        effectiveMasking + earphone.retspl(at: frequency) + reference.correction(at: frequency)
    }

    /// The band's RMS amplitude (1 = full-scale RMS) for `effectiveMasking` dB EM at `frequency`.
    public func maskingAmplitude(effectiveMasking: Double, frequency: Double,
                                 reference: MaskingNoiseReference = .uncorrected) -> Double {
        let spl = maskingSoundPressureLevel(effectiveMasking: effectiveMasking, frequency: frequency, reference: reference)
        return pow(10, (spl - fullScaleSPL) / 20) / 2.0.squareRoot()
    }

    /// The effective masking (dB EM) of a band of RMS `amplitude` at `frequency`: the inverse of
    /// `maskingAmplitude` (for measuring what a listener receives).
    public func effectiveMasking(amplitude: Double, frequency: Double,
                                 reference: MaskingNoiseReference = .uncorrected) -> Double {
        let spl = fullScaleSPL + 20 * log10(amplitude * 2.0.squareRoot())
        return spl - earphone.retspl(at: frequency) - reference.correction(at: frequency)
    }

    /// The highest effective masking at `frequency` the output can present: the band's peaks
    /// (RMS × `maskingCrestFactor`) stay at or below the peak of a sine at `limitSPL` dB SPL
    /// and at or below full scale — the noise's counterpart of `highestHearingLevel`.
    public func highestEffectiveMasking(frequency: Double, limitSPL: Double,
                                        reference: MaskingNoiseReference = .uncorrected) -> Double {
        let peakSPL = min(limitSPL, fullScaleSPL)
        let bandSPL = peakSPL + 20 * log10(2.0.squareRoot() / Self.maskingCrestFactor)
        return bandSPL - earphone.retspl(at: frequency) - reference.correction(at: frequency)
    }
    /// The band's RMS amplitude on `ear`'s channels: `maskingAmplitude` played that ear's
    /// calibration correction at `frequency` lower, as the tones are (a meter that read `c` dB
    /// more than nominal there means the ear gets `c` dB more than the numbers say).
    public func maskingAmplitude(effectiveMasking: Double, frequency: Double, ear: Ear,
                                 reference: MaskingNoiseReference = .uncorrected) -> Double {
        let correction = corrections.correction(ear: ear, frequency: frequency)
        return maskingAmplitude(effectiveMasking: effectiveMasking, frequency: frequency, reference: reference)
            * pow(10, -correction / 20)
    }

    /// The highest effective masking at `frequency` the output can present on `ear`: as
    /// `highestEffectiveMasking(frequency:limitSPL:)` with the limiter lowered by the table's
    /// largest correction and the ear's own correction at `frequency` (see
    /// `highestHearingLevel(frequency:limitSPL:ear:)`, the tone's counterpart).
    public func highestEffectiveMasking(frequency: Double, limitSPL: Double, ear: Ear,
                                        reference: MaskingNoiseReference = .uncorrected) -> Double {
        let correction = corrections.correction(ear: ear, frequency: frequency)
        let peakSPL = min(limitSPL - corrections.largestCorrection, fullScaleSPL) + correction
        let bandSPL = peakSPL + 20 * log10(2.0.squareRoot() / Self.maskingCrestFactor)
        return bandSPL - earphone.retspl(at: frequency) - reference.correction(at: frequency)
    }
}
