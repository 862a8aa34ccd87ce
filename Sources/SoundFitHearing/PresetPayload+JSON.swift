import Foundation
import SoundFitDSP
import SoundFitJSON
import SoundFitModel

/// A personalization preset as JSON: what `soundfit presets` prints and the `presets` of a state
/// document.
///
/// ```json
/// {"calibration_db_spl": 100, "left": [{"attack_ms": 5, "centre_hz": 250, …}, …], "right": […],
///  "rule": "soundfit-nal-rp-wdrc/2", "tech_level": 3, "variant": "default", "version": 1}
/// ```
///
/// Keys are written sorted (as SoundFit always wrote them); on reading, fields SoundFit does
/// not know are ignored, `expansion_knee_db_spl` may be absent or null (no expansion) and
/// `minimum_gain_db` absent (0 dB; written only when not 0). In `reportJSON` (what
/// `soundfit presets` prints) a band whose safety cap binds says `"gain_capped": true`
/// (`BandDynamics.isGainCapped`), a derived report that reading ignores.
extension PresetPayload {
    /// A band's fields in the order they are written (sorted by name).
    private static let bandFieldsInFileOrder = BandDynamics.Field.allCases.sorted { $0.rawValue < $1.rawValue }

    /// Reads and validates a preset for a processor of `techLevel`; every problem names `file`,
    /// the line and column, and the field.
    public static func decode(_ data: Data, file: String? = nil, for techLevel: TechLevel) throws(DocumentError) -> PresetPayload {
        var reader = DocumentReader(file: file)
        guard let root = reader.parse(data) else { throw DocumentError(reader.problems) }
        let payload = read(root, field: "", validatingFor: techLevel, reader: &reader)
        try reader.check()
        return payload!
    }

    /// Reads the preset at `field` of a document (`""` for the root) and validates it for
    /// `techLevel` (nil: for the tech level it names), problems to `reader`.
    public static func read(_ value: JSONValue, field: String, validatingFor techLevel: TechLevel? = nil,
                            reader: inout DocumentReader) -> PresetPayload? {
        guard case .object(let object) = value else {
            reader.fail(field.isEmpty ? nil : field, "expected a preset object, got \(value.summary)")
            return nil
        }
        let prefix = field.isEmpty ? "" : field + "."
        let problemsBefore = reader.problems.count
        let version = reader.integer(object, "version", in: Int.min...Int.max, prefix: prefix)
        let rule = reader.string(object, "rule", prefix: prefix)
        let level = reader.integer(object, "tech_level", in: TechLevel.range, prefix: prefix)
        var variant: PresetVariant?
        if let name = reader.string(object, "variant", prefix: prefix) {
            variant = PresetVariant(rawValue: name)
            if variant == nil {
                reader.fail(prefix + "variant", "\(JSONValue.string(name).summary) is not a preset variant (default, up or down)")
            }
        }
        let calibration = reader.number(object, "calibration_db_spl", prefix: prefix)
        let left = readBands(object, "left", prefix: prefix, reader: &reader)
        let right = readBands(object, "right", prefix: prefix, reader: &reader)
        guard reader.problems.count == problemsBefore, let version, let rule, let level, let variant, let calibration,
              let left, let right, let generatedFor = try? TechLevel(level) else { return nil }
        let payload = PresetPayload(version: version, rule: rule, techLevel: generatedFor, variant: variant,
                                    calibration: calibration, left: left, right: right)
        do {
            try payload.validate(for: techLevel ?? generatedFor)
        } catch {
            reader.fail(error.field.map { prefix + $0 } ?? (field.isEmpty ? nil : field), error.reason)
            return nil
        }
        return payload
    }

    private static func readBands(_ object: JSONObject, _ ear: String, prefix: String,
                                  reader: inout DocumentReader) -> [BandDynamics]? {
        guard let elements = reader.array(object, ear, prefix: prefix, expecting: "an array of bands") else { return nil }
        var bands: [BandDynamics] = []
        for (index, element) in elements.enumerated() {
            let field = JSONDocument.path(prefix + ear, index: index)
            guard case .object(let values) = element else {
                reader.fail(field, "expected a band object, got \(element.summary)")
                continue
            }
            var band = BandDynamics(centre: 0, gain: 0)
            var complete = true
            for key in BandDynamics.Field.allCases {
                let number = reader.number(values, key.rawValue, prefix: field + ".", required: key.isRequired)
                if number == nil, key.isRequired { complete = false }
                band[key] = number
            }
            if complete { bands.append(band) }
        }
        return bands.count == elements.count ? bands : nil
    }

    /// The preset as JSON, keys sorted: what files hold (state files, preset files).
    public var json: JSONValue { json(reportingCaps: false) }

    /// The preset as JSON with `"gain_capped": true` in every band whose safety cap binds
    /// (`BandDynamics.isGainCapped`): what `soundfit presets` prints for the reader. Files leave
    /// the derived report out, so a file written before it existed is written back unchanged.
    public var reportJSON: JSONValue { json(reportingCaps: true) }

    private func json(reportingCaps: Bool) -> JSONValue {
        func bands(_ bands: [BandDynamics]) -> JSONValue {
            .array(bands.map { band in
                // `minimum_gain_db` is written only when not 0 dB: a file written before it
                // existed is written back unchanged. `gain_capped` is derived, ignored on reading.
                var entries = Self.bandFieldsInFileOrder
                    .filter { $0 != .minimumGain || band.minimumGain != 0 }
                    .map { ($0.rawValue, band[$0].map(JSONValue.number)) }
                if reportingCaps, band.isGainCapped { entries.append(("gain_capped", JSONValue.bool(true))) }
                var object = JSONObject()
                for (key, value) in entries.sorted(by: { $0.0 < $1.0 }) { object.append(key, value) }
                return .object(object)
            })
        }
        return .object(JSONObject([
            "calibration_db_spl": .number(calibration), "left": bands(left), "right": bands(right), "rule": .string(rule),
            "tech_level": .number(techLevel.value), "variant": .string(variant.rawValue), "version": .number(version),
        ]))
    }

    /// The preset as a file.
    public func encoded() -> Data { json.fileData() }
}
