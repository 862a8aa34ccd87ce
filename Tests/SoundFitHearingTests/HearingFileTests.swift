import SoundFitModel
import Foundation
import SoundFitHearing
import SoundFitJSON
import SoundFitProcessing
import Testing

/// Hearing profile and preset files go through SoundFitJSON: they round-trip, and every problem
/// names the file, the line and column, and the field.
@Suite struct HearingFileTests {
    private func profileProblems(_ text: String) -> [String] {
        do {
            _ = try HearingProfile.decode(Data(text.utf8), file: "profile.json")
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    private let good = """
        {
          "version": 1,
          "left": [{"hz": 500, "db_hl": 30}, {"hz": 1000, "db_hl": 35}, {"hz": 2000, "db_hl": 40}, {"hz": 4000, "db_hl": 50}]
        }
        """

    @Test func aProfileRoundTrips() throws {
        let profile = try HearingProfile(
            left: Audiogram([(250, 35), (500, 35.5), (1000, 40), (2000, 50), (4000, 60), (8000, 70)]),
            right: nil)
        let data = profile.encoded()
        #expect(try HearingProfile.decode(data, file: "p.json") == profile)
        #expect(String(decoding: data, as: UTF8.self).hasPrefix("""
            {
              "left": [
                {
                  "db_hl": 35,
                  "hz": 250
                },
                {
                  "db_hl": 35.5,
                  "hz": 500
                },
            """))
        #expect(!String(decoding: data, as: UTF8.self).contains("right"))
    }

    @Test func whatWasAcceptedBeforeIsStillAccepted() throws {
        // No version, a null ear, fields SoundFit does not know (other tools add them).
        let text = #"{"name": "J. Doe", "right": null, "left": [{"hz": 500, "db_hl": 30, "note": "x"}, {"hz": 1000, "db_hl": 35}, {"hz": 2000, "db_hl": 40}, {"hz": 4e3, "db_hl": 50.0}]}"#
        let profile = try HearingProfile.decode(Data(text.utf8))
        #expect(profile.right == nil)
        #expect(profile.audiogram(for: .right).threshold(at: 4000) == 50)
    }

    @Test func whatJSONDecoderAcceptedIsAccepted() throws {
        // Hearing profiles were read with Foundation's JSONDecoder: a trailing comma, a key given
        // twice (the first counts), UTF-16 text and deep nesting in an unknown field passed.
        let text = #"{"left": [{"hz": 500, "db_hl": 30, "db_hl": 99}, {"hz": 1000, "db_hl": 35}, {"hz": 2000, "db_hl": 40}, {"hz": 4000, "db_hl": 50},], "x": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],}"#
        for data in [Data(text.utf8), text.data(using: .utf16)!, text.data(using: .utf16LittleEndian)!] {
            let profile = try HearingProfile.decode(data, file: "profile.json")
            #expect(profile.audiogram(for: .left).threshold(at: 500) == 30)
        }
    }

    @Test func syntaxErrorsGiveTheLineAndColumn() {
        #expect(profileProblems(good.replacingOccurrences(of: "\"version\": 1,", with: "\"version\": 1")) == [
            "profile.json: line 3, column 3: invalid JSON: expected ',' or '}'",
        ])
    }

    @Test func schemaErrorsNameTheFieldAndWhereItIs() {
        #expect(profileProblems(good.replacingOccurrences(of: "\"db_hl\": 40", with: "\"db_hl\": \"40\"")) == [
            #"profile.json: line 3, column 87: left[2].db_hl: expected a number, got "40""#,
        ])
        #expect(profileProblems(good.replacingOccurrences(of: "\"hz\": 2000", with: "\"hz\": 2001")) == [
            "profile.json: line 3, column 72: left[2].hz: 2001 Hz is not a standard audiometric frequency (125, 250, 375, 500, 750, 1000, 1500, 2000, 3000, 4000, 6000, 8000 Hz)",
        ])
        #expect(profileProblems(good.replacingOccurrences(of: "\"db_hl\": 50", with: "\"db_hl\": 130")) == [
            "profile.json: line 3, column 114: left[3].db_hl: threshold 130 dB HL at 4000 Hz is outside −10…120 dB HL",
        ])
        #expect(profileProblems(good.replacingOccurrences(of: "\"hz\": 1000", with: "\"hz\": 500")) == [
            "profile.json: line 3, column 45: left[1].hz: 500 Hz appears twice",
        ])
        #expect(profileProblems(good.replacingOccurrences(of: ", {\"hz\": 4000, \"db_hl\": 50}", with: "")) == [
            "profile.json: line 3, column 11: left: missing required frequencies: 4000 Hz",
        ])
        #expect(profileProblems(good.replacingOccurrences(of: "{\"hz\": 500, \"db_hl\": 30}", with: "{\"hz\": 500}")) == [
            "profile.json: line 3, column 12: left[0].db_hl: missing (expected a number)",
        ])
        #expect(profileProblems(good.replacingOccurrences(of: "\"version\": 1", with: "\"version\": 2")) == [
            "profile.json: line 2, column 14: version: unsupported hearing profile version 2 (expected 1)",
        ])
        #expect(profileProblems(#"{"left": 3}"#) == [
            #"profile.json: line 1, column 10: left: expected an array of {"hz": …, "db_hl": …} points, got 3"#,
        ])
        #expect(profileProblems("[]") == [
            #"profile.json: expected a hearing profile object ({"version": 1, "left": […], "right": […]}), got an array"#,
        ])
        #expect(profileProblems(#"{"version": 1}"#) == ["profile.json: a hearing profile needs an audiogram for at least one ear"])
    }

    @Test func theDocumentedExampleIsAValidProfile() throws {
        let hearing = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/hearing.md")
        let text = try String(contentsOf: hearing, encoding: .utf8)
        let section = try #require(text.range(of: "## Hearing personalization"))
        let start = try #require(text.range(of: "```json\n", range: section.upperBound..<text.endIndex))
        let end = try #require(text.range(of: "```", range: start.upperBound..<text.endIndex))
        let example = String(text[start.upperBound..<end.lowerBound])
        let profile = try HearingProfile.decode(Data(example.utf8), file: "docs/hearing.md")
        #expect(profile.left != nil && profile.right != nil)
        // The error docs/hearing.md shows for a quoted number is the one SoundFit gives.
        let quoted = example.replacingOccurrences(of: "\"db_hl\": 40", with: "\"db_hl\": \"40\"")
        #expect(profileProblems(quoted) == [#"profile.json: line 3, column 60: left[1].db_hl: expected a number, got "40""#])
        #expect(text.contains(#"left[1].db_hl: expected a number, got "40""#))
    }

    @Test func presetsRoundTripAndNameTheFieldAtFault() throws {
        let techLevel = try TechLevel(4)
        let profile = try HearingProfile.decode(Data(good.utf8))
        for preset in PresetGenerator.presets(for: profile, techLevel: techLevel) {
            #expect(try PresetPayload.decode(preset.encoded(), file: "preset.json", for: techLevel) == preset)
        }
        let preset = PresetGenerator.preset(.default, profile: profile, techLevel: techLevel)
        let text = String(decoding: preset.encoded(), as: UTF8.self)
        let range = try #require(text.range(of: "\"gain_db\": "))
        let end = try #require(text[range.upperBound...].firstIndex(of: ","))
        let bad = text.replacingCharacters(in: range.upperBound..<end, with: "99")
        do {
            _ = try PresetPayload.decode(Data(bad.utf8), file: "preset.json", for: techLevel)
            Issue.record("accepted")
        } catch {
            #expect(error.problems.map(\.description) == ["preset.json: line 9, column 18: left[0].gain_db: 99.0 is out of range 0…60"])
        }
        let wrongType = text.replacingOccurrences(of: "\"variant\": \"default\"", with: "\"variant\": \"louder\"")
        #expect(throws: DocumentError.self) { try PresetPayload.decode(Data(wrongType.utf8), for: techLevel) }
    }
}
