import Foundation
import SoundFitDSP
import SoundFitModel

/// The personalization preset payload: what the multiband processor applies. Versioned JSON,
/// generated from a hearing profile for one tech level (see `PresetGenerator`).
///
/// Levels are dB SPL at the listener's ear for the configured calibration (the SPL a
/// full-scale sine stands for).
public struct PresetPayload: Sendable, Equatable {
    public static let formatVersion = 1
    /// The calibrations a preset may be generated for (dB SPL of a full-scale sine): what the
    /// processor accepts.
    public static var calibrationRange: ClosedRange<Double> { MultibandPreset.calibrationRange }

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

    public init(version: Int = formatVersion, rule: String, techLevel: TechLevel, variant: PresetVariant, calibration: Double,
                left: [BandDynamics], right: [BandDynamics]) {
        self.version = version
        self.rule = rule
        self.techLevel = techLevel
        self.variant = variant
        self.calibration = calibration
        self.left = left
        self.right = right
    }

    /// Checks the payload before a processor of `techLevel` applies it: format version, tech
    /// level, band count and centres, every number finite and in range (`BandDynamics.Field`).
    /// The error names the field at fault; the processor stays unchanged.
    public func validate(for techLevel: TechLevel) throws(PresetValidationError) {
        guard version == Self.formatVersion else {
            throw .init("unsupported preset version \(version) (expected \(Self.formatVersion))")
        }
        guard self.techLevel == techLevel else {
            throw .init("preset is for \(self.techLevel), the processor is \(techLevel)")
        }
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
                    if field == .ratio, !techLevel.compresses, band.ratio != 1 {
                        throw .init("\(techLevel) has no compression (ratio must be 1)", field: at + field.rawValue)
                    }
                }
            }
        }
    }

    private func check(_ value: Double, in range: ClosedRange<Double>, field: String) throws(PresetValidationError) {
        guard value.isFinite else { throw .init("\(value) is not a finite number", field: field) }
        guard range.contains(value) else {
            throw .init("\(value) is out of range \(format(range.lowerBound))…\(format(range.upperBound))", field: field)
        }
    }
}

/// A preset payload was rejected: the field at fault (a path below the payload, nil for the
/// payload as a whole) and why.
public struct PresetValidationError: Error, Equatable, CustomStringConvertible {
    public var field: String?
    public var reason: String

    init(_ reason: String, field: String? = nil) {
        self.field = field
        self.reason = reason
    }

    /// `left[2].ratio: nan is not a finite number`.
    public var message: String { (field.map { "\($0): " } ?? "") + reason }
    public var description: String { message }
}
