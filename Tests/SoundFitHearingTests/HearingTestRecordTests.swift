import Foundation
import SoundFitHearing
import SoundFitJSON
import Testing

/// The hearing test's record (trial log, version, seed, reference levels) and its FHIR export.
@Suite struct HearingTestRecordTests {
    /// A finished test of both ears by a listener who hears exactly from 20 dB HL (left) and
    /// 35 dB HL (right) up, except nothing at 8 kHz right; catch trials included.
    static func record(seed: UInt64 = 7) throws -> HearingTestRecord {
        var test = try PureToneAudiometry(.init(ears: [.left, .right], maximumLevel: { $0 == 8000 ? 85 : 90 }),
                                          random: HearingTestRandom.stream(1, seed: seed))
        var presentations: [HearingTestRecord.Presentation] = []
        var time = Date(timeIntervalSince1970: 1_800_000_000)
        while let trial = test.currentTrial {
            let threshold = trial.ear == .left ? 20.0 : 35
            let heard = trial.level.map { $0 >= threshold && !(trial.ear == .right && trial.frequency == 8000) } ?? false
            presentations.append(.init(time: time, ear: trial.ear, frequency: trial.frequency, level: trial.level,
                                       fullScaleLevel: trial.level.map { $0 - 100 }, maskingLevel: trial.maskingLevel,
                                       isRetest: trial.isRetest, heard: heard, latency: heard ? 0.2 : nil))
            test.record(heard: heard)
            time += 2.5
        }
        return HearingTestRecord(
            date: time, frequencies: PureToneAudiometry.defaultFrequencies, settings: HearingTestSettings(), calibration: 100,
            results: test.results, softwareVersion: "9.9.9", sampleRate: 48000, seed: seed, listener: "P017",
            maximumLevels: Dictionary(uniqueKeysWithValues: PureToneAudiometry.defaultFrequencies.map { ($0, $0 == 8000 ? 85 : 90) }),
            presentations: presentations)
    }

    @Test func theSameSeedGivesTheSameTestAnotherSeedAnother() throws {
        let first = try Self.record(seed: 7), again = try Self.record(seed: 7), other = try Self.record(seed: 8)
        #expect(first.presentations.map(\.level) == again.presentations.map(\.level))
        #expect(first.presentations.map(\.isCatchTrial) != other.presentations.map(\.isCatchTrial))
        #expect(first.presentations.contains { $0.isCatchTrial })
        var gaps = HearingTestRandom.stream(2, seed: 7), catches = HearingTestRandom.stream(1, seed: 7)
        #expect(gaps.next() != catches.next())
    }

    @Test func theRecordKeepsEveryPresentationAndWhatTheTestRanWith() throws {
        let record = try Self.record()
        guard case .object(let json) = record.json else { Issue.record("not an object"); return }
        #expect(json["version"] == .number(2))
        #expect(json["software_version"] == .string("9.9.9"))
        #expect(json["seed"] == .string("7"))
        #expect(json["listener_id"] == .string("P017"))
        #expect(json["sample_rate_hz"] == .number(48000.0))
        guard case .array(let trials)? = json["trials"], case .object(let levels)? = json["reference_levels"],
              case .array(let retspl)? = levels["retspl_db_spl"] else {
            Issue.record("no trials or reference levels: \(json.keys)")
            return
        }
        #expect(trials.count == record.presentations.count && trials.count > 20)
        #expect(retspl.count == HearingTestSettings().earphone.entries.count)
        let catchTrials = trials.filter { if case .object(let t) = $0 { t["catch_trial"] == .bool(true) } else { false } }
        #expect(!catchTrials.isEmpty)
        for trial in catchTrials {
            guard case .object(let fields) = trial else { continue }
            #expect(fields["db_hl"] == .null && fields["dbfs"] == .null)
        }
        guard case .object(let first) = trials[0] else { return }
        for key in ["time", "ear", "hz", "db_hl", "dbfs", "catch_trial", "masking_db_em", "response", "latency_s"] {
            #expect(first[key] != nil, "\(key) missing")
        }
    }

    @Test func theExportIsLOINCCodedAndRoundTrips() throws {
        let record = try Self.record()
        let text = HearingTestFHIR.observationText(record)
        let json = try JSONParser.parse(Data(text.utf8))
        guard case .object(let observation) = json, case .array(let components)? = observation["component"] else {
            Issue.record("no components: \(text)")
            return
        }
        #expect(observation["resourceType"] == .string("Observation"))
        // One component per ear and frequency: 8 frequencies × 2 ears.
        #expect(components.count == 16)
        #expect(text.contains("\"89016-0\"") && text.contains("\"89029-3\"") && text.contains("\"89015-2\""))
        // 8 kHz right was not heard: "> 85 dB".
        let right8k = components.first { "\($0)".contains("89029-3") }
        #expect("\(String(describing: right8k))".contains("comparator"))
        let imported = try HearingTestFHIR.audiograms(json: text)
        #expect(imported == HearingTestFHIR.audiograms(record))
        #expect(imported.first { $0.ear == .right }?.noResponse == [.init(frequency: 8000, level: 85)])
        #expect(imported.first { $0.ear == .left }?.thresholds.map(\.level) == Array(repeating: 20, count: 8))
    }

    @Test func badObservationsAreRefusedWithTheirReason() {
        #expect(throws: HearingTestFHIR.ImportError.self) { try HearingTestFHIR.audiograms(json: "[]") }
        #expect(throws: HearingTestFHIR.ImportError.self) { try HearingTestFHIR.audiograms(json: #"{"resourceType": "Patient"}"#) }
        #expect(throws: HearingTestFHIR.ImportError.self) {
            try HearingTestFHIR.audiograms(json: #"{"resourceType": "Observation", "component": []}"#)
        }
        #expect(throws: HearingTestFHIR.ImportError.self) {
            try HearingTestFHIR.audiograms(json: #"{"resourceType": "Observation", "component": [{"code": {"coding": "#
                + #"[{"system": "http://loinc.org", "code": "89016-0"}]}, "valueQuantity": {"unit": "dB"}}]}"#)
        }
    }
}
