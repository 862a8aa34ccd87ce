/// The personalization preset payload: what the multiband processor applies, per ear and band,
/// from the generator (`PresetGenerator`, from a hearing profile) or a file to the audio thread
/// (`PreparedPersonalization` builds the processor's constants from it). Versioned JSON.
///
/// Levels are dB SPL at the listener's ear for the configured calibration (the SPL a
/// full-scale sine stands for).
public struct PresetPayload: Sendable, Equatable {
    public static let formatVersion = 1
    /// The calibrations a preset may be generated for (dB SPL of a full-scale sine): what the
    /// processor accepts.
    public static var calibrationRange: ClosedRange<Double> { 80...130 }
    /// The calibration of a preset made without one in mind (dB SPL of a full-scale sine).
    public static var defaultCalibration: Double { 100 }
    /// The rule of a preset written by hand (in code or a test), not generated.
    public static var handMadeRule: String { "hand-made" }

    public var version: Int
    /// The generation rule and its version, e.g. "soundfit-nal-rp-wdrc/2".
    public var rule: String
    /// The tech level the preset was generated for (`tech_level` in the file).
    public var techLevel: TechLevel
    public var variant: PresetVariant
    /// dB SPL of a full-scale sine.
    public var calibration: Double
    /// Per-ear bands, in the order of the tech level's band centres: the reference level of each is
    /// the band level of 65 dB SPL speech, the knee the band level of 40 dB SPL speech.
    public var left: [BandDynamics]
    public var right: [BandDynamics]

    public init(version: Int = formatVersion, rule: String = handMadeRule, techLevel: TechLevel, variant: PresetVariant = .default,
                calibration: Double = defaultCalibration, left: [BandDynamics], right: [BandDynamics]) {
        self.version = version
        self.rule = rule
        self.techLevel = techLevel
        self.variant = variant
        self.calibration = calibration
        self.left = left
        self.right = right
    }

    /// A hand-made preset with the same bands in both ears.
    public init(techLevel: TechLevel, calibration: Double = defaultCalibration, bands: [BandDynamics]) {
        self.init(techLevel: techLevel, calibration: calibration, left: bands, right: bands)
    }

    /// Checks the payload before a processor of `techLevel` applies it: format version, tech
    /// level, what the processor accepts (`validateBands()`), and no compression where the tech
    /// level has none. The error names the field at fault; the processor stays unchanged.
    public func validate(for techLevel: TechLevel) throws(PresetValidationError) {
        guard version == Self.formatVersion else {
            throw .init("unsupported preset version \(version) (expected \(Self.formatVersion))")
        }
        guard self.techLevel == techLevel else {
            throw .init("preset is for \(self.techLevel), the processor is \(techLevel)")
        }
        try validateBands()
        if !techLevel.compresses {
            for (ear, bands) in [("left", left), ("right", right)] {
                for (index, band) in bands.enumerated() where band.ratio != 1 {
                    throw .init("\(techLevel) has no compression (ratio must be 1)",
                                field: "\(ear)[\(index)].\(BandDynamics.Field.ratio.rawValue)")
                }
            }
        }
    }

    /// Checks what the multiband processor accepts, whatever the preset's origin: the
    /// calibration, each ear's band count and centres for the preset's tech level, every number
    /// finite and in range (`BandDynamics.Field`).
    public func validateBands() throws(PresetValidationError) {
        try check(calibration, in: Self.calibrationRange, field: "calibration_db_spl")
        let centres = techLevel.bandCentres
        for (ear, bands) in [("left", left), ("right", right)] {
            guard bands.count == centres.count else {
                throw .init("\(bands.count) bands, \(techLevel) has \(centres.count)", field: ear)
            }
            for (index, band) in bands.enumerated() {
                let at = "\(ear)[\(index)]."
                guard band.centre.isFinite, abs(band.centre - centres[index]) < 0.5 else {
                    throw .init("\(band.centre) is not band \(index + 1) of \(techLevel) (\(centres[index]) Hz)",
                                field: at + BandDynamics.Field.centre.rawValue)
                }
                for field in BandDynamics.Field.allCases {
                    guard let range = field.range, let value = band[field] else { continue }
                    try check(value, in: range, field: at + field.rawValue)
                }
            }
        }
    }

    /// `80`, not `80.0`: the ranges are whole numbers.
    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : "\(value)"
    }

    private func check(_ value: Double, in range: ClosedRange<Double>, field: String) throws(PresetValidationError) {
        guard value.isFinite else { throw .init("\(value) is not a finite number", field: field) }
        guard range.contains(value) else {
            throw .init("\(value) is out of range \(Self.format(range.lowerBound))…\(Self.format(range.upperBound))", field: field)
        }
    }
}

/// A preset payload was rejected: the field at fault (a path below the payload, nil for the
/// payload as a whole) and why.
public struct PresetValidationError: Error, Equatable, CustomStringConvertible {
    public var field: String?
    public var reason: String

    public init(_ reason: String, field: String? = nil) {
        self.field = field
        self.reason = reason
    }

    /// `left[2].ratio: nan is not a finite number`.
    public var message: String { (field.map { "\($0): " } ?? "") + reason }
    public var description: String { message }
}
