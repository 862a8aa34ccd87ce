import Foundation
import SoundFitJSON

/// The audiogram of a hearing test as an HL7 FHIR R4 `Observation`, and back.
///
/// The Observation is the LOINC panel 89015-2 "Pure tone air conduction threshold audiometry
/// panel" with one `component` per ear and frequency, coded with LOINC's "Hearing threshold
/// Ear - left|right --N Hz" and valued in dB (UCUM `dB`), as the HL7 PACIO SPLASCH and HL7
/// Australia AU Core hearing-threshold examples do. A no-response (not heard at the highest
/// level the test could present) is a value with the FHIR `Quantity.comparator` `>`: the
/// threshold is above that level — a recorded result, not a number to average. A masking
/// dilemma has no value but `dataAbsentReason` `unknown` (text "masking dilemma"). Neither
/// SPLASCH nor AU Core defines a marking of its own for it (AU Core's examples mark a
/// threshold not measured with `dataAbsentReason`, which a no-response is not).
public enum HearingTestFHIR {
    /// LOINC codes of hearing thresholds per ear and frequency (Hz).
    ///
    /// Source: HL7 PACIO SPLASCH IG, ValueSet `SPLASCHPureToneThresholdAudiometryPanel`
    /// ("Codes representing panel LOINC 89015-2"), the same codes as the PACIO PFE value set
    /// `pfe-sensory-functions-pain-clinical-test-vs`
    /// (http://hl7.org/fhir/us/pacio-pfe/ValueSet/pfe-sensory-functions-pain-clinical-test-vs) and
    /// AU Core's example `Observation/hearing-threshold-1` (89024-4, left 500 Hz). LOINC has no
    /// such code at 125 or 375 Hz in these sources: those frequencies are left out of the export
    /// (and named in its note).
    public static let thresholdCodes: [Ear: [Double: String]] = [
        .left: [250: "91375-6", 500: "89024-4", 750: "91379-8", 1000: "89016-0", 1500: "91373-1", 2000: "89018-6",
                3000: "89020-2", 4000: "89022-8", 5000: "91377-2", 6000: "89026-9", 8000: "89028-5"],
        .right: [250: "91374-9", 500: "89025-1", 750: "91378-0", 1000: "89017-8", 1500: "91372-3", 2000: "89019-4",
                 3000: "89021-0", 4000: "89023-6", 5000: "91376-4", 6000: "89027-7", 8000: "89029-3"],
    ]
    /// The panel (same sources).
    public static let panelCode = "89015-2"
    public static let loinc = "http://loinc.org"
    public static let ucum = "http://unitsofmeasure.org"
    /// FHIR R4's code system for why a value is absent (AU Core's hearing-threshold example uses
    /// its `not-performed`); a masking dilemma is `unknown`.
    public static let dataAbsentReason = "http://terminology.hl7.org/CodeSystem/data-absent-reason"

    /// One ear's audiogram as the Observation carries it.
    public struct EarAudiogram: Sendable, Equatable {
        public var ear: Ear
        /// dB HL per frequency, ascending.
        public var thresholds: [Threshold]
        /// Not heard at `level` (dB HL): the threshold is above it.
        public var noResponse: [Threshold]
        /// Frequencies whose threshold a masking dilemma left unknown (never a number).
        public var maskingDilemmas: [Double] = []

        public struct Threshold: Sendable, Equatable {
            public var frequency: Double
            public var level: Double

            public init(frequency: Double, level: Double) {
                self.frequency = frequency
                self.level = level
            }
        }
    }

    /// The display of a component's code: `Hearing threshold Ear - left --1000 Hz`.
    static func display(_ ear: Ear, _ frequency: Double) -> String {
        "Hearing threshold Ear - \(ear.rawValue) --\(Int(frequency)) Hz"
    }

    /// `record`'s audiogram as a FHIR R4 Observation (JSON).
    public static func observation(_ record: HearingTestRecord) -> JSONValue {
        var components: [JSONValue] = []
        var uncoded: [String] = []
        for result in record.results {
            for point in result.outcomes {
                let frequency = point.frequency
                guard let code = thresholdCodes[result.ear]?[frequency] else {
                    uncoded.append("\(result.ear.rawValue) \(Int(frequency)) Hz")
                    continue
                }
                let coding = JSONObject([
                    "coding": .array([.object(JSONObject([
                        "system": .string(loinc), "code": .string(code), "display": .string(display(result.ear, frequency)),
                    ]))]),
                ])
                let (level, above): (Double, Bool)
                switch point.outcome {
                case .threshold(let threshold, _): (level, above) = (threshold, false)
                case .noResponse(let maximum, _): (level, above) = (maximum, true)
                case .maskingDilemma:
                    // No number: the threshold is unknown (FHIR data-absent-reason `unknown`).
                    components.append(.object(JSONObject([
                        "code": .object(coding),
                        "dataAbsentReason": .object(JSONObject([
                            "coding": .array([.object(JSONObject([
                                "system": .string(dataAbsentReason), "code": .string("unknown"), "display": .string("Unknown"),
                            ]))]),
                            "text": .string("masking dilemma"),
                        ])),
                    ])))
                    continue
                }
                var quantity = JSONObject()
                quantity.append("value", .number(level))
                if above { quantity.append("comparator", .string(">")) }
                quantity.append("unit", .string("dB"))
                quantity.append("system", .string(ucum))
                quantity.append("code", .string("dB"))
                var component = JSONObject()
                component.append("code", .object(coding))
                component.append("valueQuantity", .object(quantity))
                if above {
                    component.append("interpretation", .array([.object(JSONObject([
                        "text": .string("no response at the maximum level presented"),
                    ]))]))
                }
                components.append(.object(component))
            }
        }
        var notes = ["Automated pure-tone air-conduction audiometry by SoundFit \(record.softwareVersion); "
            + "earphone reference table \(record.settings.earphone.name); seed \(record.seed)."]
        let problems = record.problems
        if !problems.isEmpty { notes.append("Not applied automatically: " + problems.joined(separator: "; ") + ".") }
        if !uncoded.isEmpty { notes.append("Left out (no LOINC code): " + uncoded.joined(separator: ", ") + ".") }
        var observation = JSONObject()
        observation.append("resourceType", .string("Observation"))
        observation.append("id", .string(resourceID(record)))
        observation.append("status", .string("final"))
        observation.append("category", .array([.object(JSONObject([
            "coding": .array([.object(JSONObject([
                "system": .string("http://terminology.hl7.org/CodeSystem/observation-category"),
                "code": .string("exam"), "display": .string("Exam"),
            ]))]),
        ]))]))
        observation.append("code", .object(JSONObject([
            "coding": .array([.object(JSONObject([
                "system": .string(loinc), "code": .string(panelCode),
                "display": .string("Pure tone air conduction threshold audiometry panel"),
            ]))]),
            "text": .string("Pure-tone audiogram"),
        ])))
        if let listener = record.listener {
            observation.append("subject", .object(JSONObject([
                "identifier": .object(JSONObject(["value": .string(listener)])), "display": .string(listener),
            ])))
        }
        observation.append("effectiveDateTime", .string(HearingTestRecord.isoDate(record.date)))
        observation.append("device", .object(JSONObject(["display": .string("SoundFit \(record.softwareVersion)")])))
        observation.append("note", .array(notes.map { .object(JSONObject(["text": .string($0)])) }))
        observation.append("component", .array(components))
        return .object(observation)
    }

    /// `observation(record)` as compact JSON text.
    public static func observationText(_ record: HearingTestRecord) -> String {
        String(decoding: observation(record).compactData(), as: UTF8.self)
    }

    /// The audiograms of an Observation given as JSON text.
    public static func audiograms(json text: String) throws(ImportError) -> [EarAudiogram] {
        let value: JSONValue
        do {
            value = try JSONParser.parse(Data(text.utf8))
        } catch {
            throw ImportError("\(error)")
        }
        return try audiograms(value)
    }

    /// A FHIR id (`[A-Za-z0-9\-\.]{1,64}`) from the test's date.
    static func resourceID(_ record: HearingTestRecord) -> String {
        let stem = record.fileStem.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "-" }
        return String(("soundfit-audiogram-" + String(stem)).prefix(64))
    }

    /// Why an Observation could not be read as an audiogram.
    public struct ImportError: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// The audiograms an Observation carries (an ear without components is left out). Accepts
    /// the hearing-threshold components of any source: LOINC-coded, valued in dB (or dB HL),
    /// `>`/`>=` marking a no-response; other components are ignored.
    public static func audiograms(_ observation: JSONValue) throws(ImportError) -> [EarAudiogram] {
        guard case .object(let resource) = observation else { throw ImportError("not a JSON object") }
        guard resource["resourceType"] == .string("Observation") else {
            throw ImportError("resourceType: expected \"Observation\", got \(resource["resourceType"]?.summary ?? "none")")
        }
        guard case .array(let components)? = resource["component"] else { throw ImportError("no component array") }
        var byEar: [Ear: EarAudiogram] = [:]
        for (index, component) in components.enumerated() {
            guard case .object(let fields) = component, case .object(let code)? = fields["code"],
                  case .array(let codings)? = code["coding"] else { continue }
            let found = codings.lazy.compactMap { coding -> (Ear, Double)? in
                guard case .object(let coding) = coding, coding["system"] == .string(loinc),
                      case .string(let value)? = coding["code"] else { return nil }
                for (ear, table) in thresholdCodes {
                    if let frequency = table.first(where: { $0.value == value })?.key { return (ear, frequency) }
                }
                return nil
            }.first
            guard let (ear, frequency) = found else { continue }
            if fields["valueQuantity"] == nil, fields["dataAbsentReason"] != nil {
                var audiogram = byEar[ear] ?? EarAudiogram(ear: ear, thresholds: [], noResponse: [])
                audiogram.maskingDilemmas.append(frequency)
                byEar[ear] = audiogram
                continue
            }
            guard case .object(let quantity)? = fields["valueQuantity"], let level = quantity["value"]?.double else {
                throw ImportError("component \(index) (\(display(ear, frequency))): no valueQuantity with a value")
            }
            if case .string(let unit)? = quantity["code"] ?? quantity["unit"], !["dB", "dB HL", "dB[HL]"].contains(unit) {
                throw ImportError("component \(index): unit \(unit), expected dB")
            }
            var audiogram = byEar[ear] ?? EarAudiogram(ear: ear, thresholds: [], noResponse: [])
            guard !audiogram.thresholds.contains(where: { $0.frequency == frequency }),
                  !audiogram.noResponse.contains(where: { $0.frequency == frequency }) else {
                throw ImportError("component \(index): \(display(ear, frequency)) twice")
            }
            let point = EarAudiogram.Threshold(frequency: frequency, level: level)
            switch quantity["comparator"] {
            case nil: audiogram.thresholds.append(point)
            case .string(">")?, .string(">=")?: audiogram.noResponse.append(point)
            case let other?: throw ImportError("component \(index): comparator \(other.summary) (a threshold is exact or > a level)")
            }
            byEar[ear] = audiogram
        }
        guard !byEar.isEmpty else { throw ImportError("no hearing-threshold component (LOINC \(panelCode) panel members)") }
        return Ear.allCases.compactMap { ear in
            byEar[ear].map {
                var audiogram = $0
                audiogram.thresholds.sort { $0.frequency < $1.frequency }
                audiogram.noResponse.sort { $0.frequency < $1.frequency }
                audiogram.maskingDilemmas.sort()
                return audiogram
            }
        }
    }

    /// The imported ears as test results (no trial counts: they are not in an Observation), so
    /// that they become a profile by the same rule as a test's (`EarResult.profilePoints`).
    public static func results(_ audiograms: [EarAudiogram]) -> [PureToneAudiometry.EarResult] {
        audiograms.map { audiogram in
            PureToneAudiometry.EarResult(
                ear: audiogram.ear,
                outcomes: audiogram.thresholds.map { .init(frequency: $0.frequency, outcome: .threshold(level: $0.level, maskingLevel: nil)) }
                    + audiogram.noResponse.map { .init(frequency: $0.frequency, outcome: .noResponse(level: $0.level, maskingLevel: nil)) }
                    + audiogram.maskingDilemmas.map { .init(frequency: $0, outcome: .maskingDilemma) })
        }
    }

    /// The audiograms `record` exports (what an import of its Observation gives back).
    public static func audiograms(_ record: HearingTestRecord) -> [EarAudiogram] {
        record.results.map { result in
            var audiogram = EarAudiogram(ear: result.ear, thresholds: [], noResponse: [])
            for point in result.outcomes where thresholdCodes[result.ear]?[point.frequency] != nil {
                switch point.outcome {
                case .threshold(let level, _): audiogram.thresholds.append(.init(frequency: point.frequency, level: level))
                case .noResponse(let level, _): audiogram.noResponse.append(.init(frequency: point.frequency, level: level))
                case .maskingDilemma: audiogram.maskingDilemmas.append(point.frequency)
                }
            }
            return audiogram
        }
    }
}
