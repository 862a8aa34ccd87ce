import Foundation
import SoundFitModel
import SoundFitHearing
import SoundFitProcessing
import SoundFitState
import Testing

@Suite struct StateDocumentTests {
    private func profile() throws -> HearingProfile {
        try HearingProfile(
            left: Audiogram([(250, 35), (500, 35), (1000, 40), (1500, 45), (2000, 50), (3000, 55), (4000, 60), (6000, 65)]),
            right: Audiogram([(500, 20), (1000, 25), (2000, 40), (4000, 55)]))
    }

    private func fullDocument() throws -> StateDocument {
        let profile = try profile()
        let techLevel = try TechLevel(3)
        return StateDocument(
            parameters: TestParameters.values([
                "/processing/enabled": .bool(true), "/processing/intensity": .float(0.75), "/processing/preset": .choice("up"),
                "/filter/enabled": .bool(true), "/filter/type": .choice("peak"), "/filter/cutoff": .float(1234.5),
                "/filter/q": .float(0.3333), "/filter/gain": .float(-7.25), "/output/gain": .float(-12.5),
            ]),
            delivery: DeliveryConfiguration(deliveryStyle: .discrete(settleTime: .milliseconds(350)), deliveryTimeout: .milliseconds(2500)),
            session: .fineTuning(techLevel: techLevel),
            currentPatch: CurrentPatch(number: -3, name: "Evening", isModified: true),
            hearingProfile: profile,
            presets: PresetGenerator.presets(for: profile, techLevel: techLevel))
    }

    private func decode(_ text: String) -> [String] {
        do {
            _ = try StateDocument.decode(Data(text.utf8), file: "state.json", descriptors: TestParameters.descriptors)
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    /// A valid document's text with `edit` applied.
    private func edited(_ edit: (String) -> String) throws -> String {
        edit(String(decoding: try fullDocument().encoded(descriptors: TestParameters.descriptors), as: UTF8.self))
    }

    @Test func midiMappingsRoundTripAndBadOnesAreNamed() throws {
        var document = try fullDocument()
        document.midiMappings = [try MIDIMapping(address: "/output/gain", channel: 1, controller: 7),
                                 try MIDIMapping(address: "/filter/cutoff", channel: 16, controller: 74)]
        let data = document.encoded(descriptors: TestParameters.descriptors)
        let decoded = try StateDocument.decode(data, file: "state.json", descriptors: TestParameters.descriptors)
        #expect(decoded.midiMappings == document.midiMappings)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"midi_mappings\": ["))
        // A document without mappings writes no key; an older document without it reads as none.
        #expect(!String(decoding: try fullDocument().encoded(descriptors: TestParameters.descriptors), as: UTF8.self).contains("midi_mappings"))
        func withMappings(_ json: String) -> String {
            text.replacing(#/"midi_mappings": \[[^\]]*\]/#, with: "\"midi_mappings\": \(json)")
        }
        #expect(decode(withMappings(#"[{"address": "/output/gain", "channel": 0, "controller": 7}]"#))
            .contains { $0.contains("midi_mappings[0].channel") })
        #expect(decode(withMappings(#"[{"address": "/nope", "channel": 1, "controller": 7}]"#))
            .contains { $0.contains("unknown address /nope") })
        #expect(decode(withMappings(#"[{"address": "/output/gain", "channel": 1, "controller": 7}, {"address": "/filter/q", "channel": 1, "controller": 7}]"#))
            .contains { $0.contains("mapped twice") })
    }

    @Test func aPendingRecommendationRoundTripsAndAnOlderDocumentHasNone() throws {
        var document = try fullDocument()
        document.recommendationPending = true
        let text = String(decoding: document.encoded(descriptors: TestParameters.descriptors), as: UTF8.self)
        #expect(text.contains("\"recommendation_pending\": true"))
        let decoded = try StateDocument.decode(Data(text.utf8), file: "state.json", descriptors: TestParameters.descriptors)
        #expect(decoded.recommendationPending)
        #expect(decoded == document)
        // Written only when pending: a document of an older SoundFit has no key, and reads as none.
        let older = try edited { $0 }
        #expect(!older.contains("recommendation_pending"))
        #expect(try !StateDocument.decode(Data(older.utf8), file: "state.json", descriptors: TestParameters.descriptors)
            .recommendationPending)
        #expect(decode(text.replacingOccurrences(of: "\"recommendation_pending\": true", with: "\"recommendation_pending\": 1"))
            .contains { $0.contains("recommendation_pending: expected true or false, got 1") })
    }

    @Test func aFullDocumentRoundTrips() throws {
        let document = try fullDocument()
        #expect(document.presets.count >= 1)
        let data = document.encoded(descriptors: TestParameters.descriptors)
        let decoded = try StateDocument.decode(data, file: "state.json", descriptors: TestParameters.descriptors)
        #expect(decoded == document)
        #expect(decoded.encoded(descriptors: TestParameters.descriptors) == data)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.hasPrefix("{\n  \"format\": \"soundfit.state\",\n  \"version\": 1,\n  \"parameters\": {\n    \"/processing/enabled\": true,"))
        #expect(text.contains("\"delivery\": {\n    \"style\": \"discrete\",\n    \"settle_seconds\": 0.35,\n    \"timeout_seconds\": 2.5\n  }"))
        #expect(text.contains("\"session\": {\n    \"mode\": \"fine_tuning\",\n    \"tech_level\": 3\n  }"))
        #expect(text.contains("\"current_patch\": {\n    \"number\": -3,\n    \"name\": \"Evening\",\n    \"modified\": true\n  }"))
        #expect(text.contains("\"/filter/cutoff\": 1234.5,"))
        #expect(text.contains("\"/filter/q\": 0.3333,"))
    }

    @Test func aMinimalDocumentRoundTrips() throws {
        let document = StateDocument.defaults(descriptors: TestParameters.descriptors, session: .singlePreset(techLevel: try TechLevel(1)))
        #expect(document.parameters == TestParameters.defaults)
        let data = document.encoded(descriptors: TestParameters.descriptors)
        #expect(try StateDocument.decode(data, file: "state.json", descriptors: TestParameters.descriptors) == document)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"delivery\": {\n    \"style\": \"continuous\",\n    \"timeout_seconds\": 10\n  }"))
        #expect(text.contains("\"current_patch\": null"))
        #expect(text.contains("\"hearing_profile\": null"))
        #expect(text.contains("\"presets\": []"))
    }

    @Test func missingParametersTakeTheirDefaults() throws {
        let text = try edited { $0.replacingOccurrences(of: "    \"/output/gain\": -12.5\n", with: "").replacingOccurrences(of: "\"/output/enabled\": true,", with: "\"/output/enabled\": true") }
        let document = try StateDocument.decode(Data(text.utf8), file: "state.json", descriptors: TestParameters.descriptors)
        #expect(document.parameters["/output/gain"] == .float(0))
        #expect(document.parameters["/filter/cutoff"] == .float(1234.5))
    }

    @Test func eachBadFieldIsNamed() throws {
        #expect(decode(try edited { $0.replacingOccurrences(of: "\"style\": \"discrete\"", with: "\"style\": \"sometimes\"") })
            == ["state.json: line 20, column 14: delivery.style: 'sometimes' is not a delivery style (continuous or discrete)"])
        #expect(decode(try edited { $0.replacingOccurrences(of: "\"timeout_seconds\": 2.5", with: "\"timeout_seconds\": 0") })
            == ["state.json: line 22, column 24: delivery.timeout_seconds: 0 is out of range 0.001…86400"])
        #expect(decode(try edited { $0.replacingOccurrences(of: "\"settle_seconds\": 0.35", with: "\"settle_seconds\": -1") })
            == ["state.json: line 21, column 23: delivery.settle_seconds: -1 is out of range 0…86400"])
        #expect(decode(try edited { $0.replacingOccurrences(of: "\"mode\": \"fine_tuning\",\n    \"tech_level\": 3", with: "\"mode\": \"fine_tuning\",\n    \"tech_level\": 7") })
            == ["state.json: line 26, column 19: session.tech_level: 7 is out of range 1…4"])
        #expect(decode(try edited { $0.replacingOccurrences(of: "\"mode\": \"fine_tuning\"", with: "\"mode\": \"fine-tuning\"") })
            == ["state.json: line 25, column 13: session.mode: 'fine-tuning' is not a personalization mode (fine_tuning or single_preset)"])
        #expect(decode(try edited { $0.replacingOccurrences(of: "\"name\": \"Evening\"", with: "\"name\": \"a/b\"") })
            == ["state.json: line 30, column 13: current_patch.name: patch name 'a/b' contains '/': a patch name is a name, never a path"])
        #expect(decode(try edited { $0.replacingOccurrences(of: "\"modified\": true", with: "\"modified\": \"yes\"") })
            == ["state.json: line 31, column 17: current_patch.modified: expected true or false, got \"yes\""])
        #expect(decode(try edited { $0.replacingOccurrences(of: "\"/processing/intensity\": 0.75", with: "\"/processing/intensity\": 1.5") })
            == ["state.json: line 6, column 30: parameters./processing/intensity: 1.5 is out of range 0…1"])
        #expect(decode(try edited { $0.replacingOccurrences(of: "\"presets\": [", with: "\"extra\": 1,\n  \"presets\": [") })
            == ["state.json: line 88, column 12: extra: unknown field (known fields: format, version, parameters, delivery, session, current_patch, hearing_profile, presets, calibration_db_spl, midi_mappings, calibration, recommendation_pending)"])
        #expect(decode(try edited { $0.replacingOccurrences(of: "\"soundfit.state\"", with: "\"soundfit.patch\"") })
            == ["state.json: line 2, column 13: format: expected \"soundfit.state\", got \"soundfit.patch\""])
        #expect(decode(try edited { $0.replacingOccurrences(of: "\"version\": 1,\n  \"parameters\"", with: "\"version\": 9,\n  \"parameters\"") })
            == ["state.json: line 3, column 14: version: 9 is not supported (this SoundFit reads version 1)"])
    }

    @Test func theHearingProfileAndPresetsAreValidated() throws {
        let badProfile = decode(try edited { $0.replacingOccurrences(of: "\"hz\" : 6000", with: "\"hz\" : 6001").replacingOccurrences(of: "\"hz\": 6000", with: "\"hz\": 6001") })
        #expect(badProfile.count == 1)
        #expect(badProfile.first?.hasPrefix("state.json: line 65, column 15: hearing_profile.left[7].hz: ") == true, "\(badProfile)")
        #expect(badProfile.first?.contains("6001") == true, "\(badProfile)")

        let badPreset = decode(try edited { text in
            // The first preset's first band: a gain beyond the payload's range.
            guard let range = text.range(of: "\"gain_db\": ") else { return text }
            let end = text[range.upperBound...].firstIndex(of: ",")!
            return text.replacingCharacters(in: range.upperBound..<end, with: "99")
        })
        #expect(badPreset.count == 1)
        #expect(badPreset.first?.hasPrefix("state.json: line 97, column 22: presets[0].left[0].gain_db: ") == true, "\(badPreset)")
        #expect(badPreset.first?.contains("left[0].gain_db: 99") == true, "\(badPreset)")

        let missingField = decode(try edited { $0.replacingOccurrences(of: "\"rule\": ", with: "\"rul\": ") })
        #expect(missingField.first?.hasPrefix("state.json: line 89, column 5: presets[0].rule: missing") == true, "\(missingField)")
    }

    @Test func validateCatchesWhatDecodeWouldReject() throws {
        var document = try fullDocument()
        try document.validate(descriptors: TestParameters.descriptors)
        document.delivery.deliveryTimeout = .zero
        document.parameters["/filter/q"] = .float(100)
        do {
            try document.validate(descriptors: TestParameters.descriptors)
            Issue.record("an invalid document passed")
        } catch {
            #expect(error.problems.map(\.field) == ["parameters./filter/q", "delivery.timeout_seconds"])
        }
    }
}

@Suite struct DocumentSettingsTests {
    @Test func roundTrip() throws {
        let settings = DocumentSettings(calibration: 105.5, channelCount: 4,
                                        osc: .init(host: "0.0.0.0", port: 9000, allow: ["127.0.0.1", "192.168.1.0/24"]))
        let data = settings.encoded()
        #expect(try DocumentSettings.decode(data, file: "document.json") == settings)
        #expect(String(decoding: data, as: UTF8.self) == """
            {
              "format": "soundfit.document",
              "version": 1,
              "calibration_db_spl": 105.5,
              "channels": 4,
              "osc": {
                "host": "0.0.0.0",
                "port": 9000,
                "allow": ["127.0.0.1", "192.168.1.0/24"]
              }
            }

            """)
        #expect(try DocumentSettings.decode(DocumentSettings().encoded(), file: "d") == DocumentSettings())
    }

    @Test func badFieldsAreNamed() throws {
        let text = """
            {"format": "soundfit.document", "version": 1, "calibration_db_spl": 200, "channels": 0,
             "osc": {"host": "", "port": 70000, "allow": ["10.0.0.0/8", ""]}}
            """
        do {
            _ = try DocumentSettings.decode(Data(text.utf8), file: "document.json")
            Issue.record("accepted")
        } catch {
            #expect(error.problems.map(\.description) == [
                "document.json: line 1, column 69: calibration_db_spl: 200 is out of range 80…130",
                "document.json: line 1, column 86: channels: 0 is out of range 1…64",
                "document.json: line 2, column 18: osc.host: '' is not a host name or address",
                "document.json: line 2, column 30: osc.port: 70000 is out of range 0…65535",
                "document.json: line 2, column 61: osc.allow[1]: expected an address or prefix such as \"192.168.1.0/24\", got \"\"",
            ])
        }
    }
}

extension StateDocumentTests {
    /// An export carries the document settings' calibration; `state.json`
    /// (no calibration) reads back without one.
    @Test func theCalibrationOfAnExportRoundTrips() throws {
        var document = try fullDocument()
        let saved = document.encoded(descriptors: TestParameters.descriptors)
        let root = try #require(try JSONSerialization.jsonObject(with: saved) as? [String: Any])
        #expect(root["calibration_db_spl"] == nil)
        #expect(try StateDocument.decode(saved, file: "state.json", descriptors: TestParameters.descriptors).calibration == nil)
        document.calibration = 107.5
        let exported = document.encoded(descriptors: TestParameters.descriptors)
        let read = try StateDocument.decode(exported, file: "export.json", descriptors: TestParameters.descriptors)
        #expect(read == document)
        #expect(read.calibration == 107.5)
        let text = String(decoding: exported, as: UTF8.self).replacingOccurrences(of: "107.5", with: "140")
        #expect(decode(text).contains { $0.contains("calibration_db_spl: 140 is out of range 80…130") }, "\(decode(text))")
    }
}
