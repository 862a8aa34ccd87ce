import Foundation
import SoundFitModel

/// The personalization preset payload: what the multiband processor applies. Versioned JSON,
/// generated from a hearing profile for one tech level (see `PresetGenerator`).
///
/// Levels are dB SPL at the listener's ear for the configured calibration (the SPL a
/// full-scale sine stands for).
public struct PresetPayload: Sendable, Equatable, Codable {
    public static let formatVersion = 1

    public var version: Int
    /// The generation rule and its version, e.g. "soundfit-nal-rp-wdrc/1".
    public var rule: String
    public var techLevel: Fitting
    public var variant: PresetVariant
    /// dB SPL of a full-scale sine.
    public var calibration: Double
    public var left: [Band]
    public var right: [Band]

    /// One band's prescription and dynamics.
    public struct Band: Sendable, Equatable, Codable {
        public var centre: Double
        /// Insertion gain (dB) at the reference level.
        public var gain: Double
        /// The band level (dB SPL) of 65 dB SPL speech: where `gain` applies.
        public var referenceLevel: Double
        /// Compression ratio above the knee (1 = linear).
        public var ratio: Double
        /// Compression knee (dB SPL): below it the gain stays at its knee value.
        public var knee: Double
        /// Expansion knee (dB SPL): below it the gain falls (noise stays soft); nil = no expansion.
        public var expansionKnee: Double?
        /// Expansion ratio below `expansionKnee` (2 = the gain falls 1 dB per dB).
        public var expansionRatio: Double
        /// Gain never exceeds this (dB).
        public var maximumGain: Double
        /// Band output never exceeds this (dB SPL): a per-band limiter.
        public var outputLimit: Double
        /// Level detector time constants (ms).
        public var attack: Double
        public var release: Double

        enum CodingKeys: String, CodingKey {
            case centre = "centre_hz", gain = "gain_db", referenceLevel = "reference_level_db_spl", ratio
            case knee = "knee_db_spl", expansionKnee = "expansion_knee_db_spl", expansionRatio = "expansion_ratio"
            case maximumGain = "maximum_gain_db", outputLimit = "output_limit_db_spl"
            case attack = "attack_ms", release = "release_ms"
        }
    }

    enum CodingKeys: String, CodingKey {
        case version, rule, variant, calibration = "calibration_db_spl", left, right
        case techLevel = "tech_level"
    }

    /// Valid ranges of the band fields, used by `validate`.
    public static let ranges: [String: ClosedRange<Double>] = [
        "gain_db": 0...60, "reference_level_db_spl": 0...120, "ratio": 1...5, "knee_db_spl": 0...120,
        "expansion_knee_db_spl": 0...120, "expansion_ratio": 1...4, "maximum_gain_db": 0...60,
        "output_limit_db_spl": 60...140, "attack_ms": 0.5...200, "release_ms": 5...2000,
        "calibration_db_spl": 80...130,
    ]

    /// Checks the payload before a processor of `techLevel` applies it: format version, tech
    /// level, band count and centres, every number finite and in range. The error names the
    /// field at fault; the processor stays unchanged.
    public func validate(for techLevel: Fitting) throws(PresetValidationError) {
        guard version == Self.formatVersion else {
            throw .init("unsupported preset version \(version) (expected \(Self.formatVersion))")
        }
        guard self.techLevel == techLevel else {
            throw .init("preset is for \(self.techLevel), the processor is \(techLevel)")
        }
        try check("", "calibration_db_spl", calibration)
        for (ear, bands) in [("left", left), ("right", right)] {
            guard bands.count == techLevel.bandCentres.count else {
                throw .init("\(ear): \(bands.count) bands, \(techLevel) has \(techLevel.bandCentres.count)")
            }
            for (index, band) in bands.enumerated() {
                let at = "\(ear)[\(index)]"
                guard band.centre.isFinite, abs(band.centre - techLevel.bandCentres[index]) < 0.5 else {
                    throw .init("\(at).centre_hz: \(band.centre) is not band \(index + 1) of \(techLevel) (\(techLevel.bandCentres[index]) Hz)")
                }
                try check("\(at).", "gain_db", band.gain)
                try check("\(at).", "reference_level_db_spl", band.referenceLevel)
                try check("\(at).", "ratio", band.ratio)
                if !techLevel.compresses, band.ratio != 1 {
                    throw .init("\(at).ratio: \(techLevel) has no compression (ratio must be 1)")
                }
                try check("\(at).", "knee_db_spl", band.knee)
                if let expansionKnee = band.expansionKnee { try check("\(at).", "expansion_knee_db_spl", expansionKnee) }
                try check("\(at).", "expansion_ratio", band.expansionRatio)
                try check("\(at).", "maximum_gain_db", band.maximumGain)
                try check("\(at).", "output_limit_db_spl", band.outputLimit)
                try check("\(at).", "attack_ms", band.attack)
                try check("\(at).", "release_ms", band.release)
            }
        }
    }

    private func check(_ prefix: String, _ field: String, _ value: Double) throws(PresetValidationError) {
        guard value.isFinite else { throw .init("\(prefix)\(field): \(value) is not a finite number") }
        let range = Self.ranges[field]!
        guard range.contains(value) else {
            throw .init("\(prefix)\(field): \(value) is out of range \(format(range.lowerBound))…\(format(range.upperBound))")
        }
    }

    /// Decodes and validates a JSON payload.
    public static func decode(_ data: Data, for techLevel: Fitting) throws(PresetValidationError) -> PresetPayload {
        let payload: PresetPayload
        do {
            payload = try JSONDecoder().decode(PresetPayload.self, from: data)
        } catch {
            throw .init("malformed preset JSON: \(error)")
        }
        try payload.validate(for: techLevel)
        return payload
    }

    /// Pretty, stable JSON.
    public func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return (try? encoder.encode(self)) ?? Data()
    }
}

/// A preset payload was rejected.
public struct PresetValidationError: Error, Equatable, CustomStringConvertible {
    public var message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}
