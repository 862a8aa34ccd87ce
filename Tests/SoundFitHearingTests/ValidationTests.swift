import Foundation
import SoundFitDSP
import SoundFitModel
import SoundFitProcessing
import SoundFitHearing
import SoundFitJSON
import Testing

@Suite struct AudiogramValidationTests {
    private func message(_ pairs: [(Double, Double)]) -> String? {
        do {
            _ = try Audiogram(pairs)
            return nil
        } catch {
            return error.description
        }
    }

    private let complete: [(Double, Double)] = [(500, 30), (1000, 35), (2000, 40), (4000, 50)]

    @Test func aCompleteAudiogramIsAccepted() {
        #expect(message(complete) == nil)
        #expect(message(complete + [(125, -10), (8000, 120)]) == nil)
    }

    @Test func eachProblemIsNamed() {
        #expect(message(complete + [(1234, 30)])?.contains("1234 Hz is not a standard audiometric frequency") == true)
        #expect(message(complete + [(8000, 121)]) == "threshold 121 dB HL at 8000 Hz is outside −10…120 dB HL")
        #expect(message(complete + [(250, -11)])?.contains("outside −10…120") == true)
        #expect(message(complete + [(1000, 30)]) == "1000 Hz appears twice")
        #expect(message([(500, 30), (1000, 35), (2000, 40)]) == "missing required frequencies: 4000 Hz")
        #expect(message(complete + [(250, .nan)])?.contains("250 Hz") == true)
    }

    @Test func profileFilesNameTheFieldAtFault() throws {
        let good = #"{"version": 1, "left": [{"hz": 500, "db_hl": 30}, {"hz": 1000, "db_hl": 35}, {"hz": 2000, "db_hl": 40}, {"hz": 4000, "db_hl": 50}]}"#
        let profile = try HearingProfile.decode(Data(good.utf8))
        #expect(profile.audiogram(for: .right).threshold(at: 1000) == 35)

        func loadingError(_ json: String) -> String? {
            do {
                _ = try HearingProfile.decode(Data(json.utf8))
                return nil
            } catch {
                return error.description
            }
        }
        #expect(loadingError(#"{"version": 1}"#) == "a hearing profile needs an audiogram for at least one ear")
        #expect(loadingError(#"{"version": 2, "left": []}"#)?.contains("unsupported hearing profile version 2") == true)
        #expect(loadingError(#"{"left": [{"hz": 500}]}"#)?.contains("db_hl") == true)
        #expect(loadingError(#"{"left": [{"hz": 500, "db_hl": 30}]}"#)?.contains("missing required frequencies") == true)
        #expect(loadingError("not json") != nil)
    }
}

@Suite struct PresetPayloadValidationTests {
    private func preset() throws -> PresetPayload {
        let audiogram = try Audiogram([(500, 30), (1000, 35), (2000, 40), (4000, 50)])
        return PresetGenerator.preset(.default, profile: try HearingProfile(left: audiogram, right: nil),
                                      techLevel: try TechLevel(3))
    }

    private func rejection(_ change: (inout PresetPayload) -> Void) throws -> String? {
        var payload = try preset()
        change(&payload)
        let techLevel = try TechLevel(3)
        do {
            try payload.validate(for: techLevel)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func invalidPayloadsAreRejectedWithTheFieldAtFault() throws {
        #expect(try rejection { _ in } == nil)
        #expect(try rejection { $0.left[2].ratio = .nan } == "left[2].ratio: nan is not a finite number")
        #expect(try rejection { $0.right[0].gain = .infinity } == "right[0].gain_db: inf is not a finite number")
        #expect(try rejection { $0.left[1].ratio = 7 } == "left[1].ratio: 7.0 is out of range 1…5")
        #expect(try rejection { $0.left.removeLast() } == "left: 7 bands, tech level 3 has 8")
        #expect(try rejection { $0.techLevel = try! TechLevel(2) } == "preset is for tech level 2, the processor is tech level 3")
        #expect(try rejection { $0.version = 9 } == "unsupported preset version 9 (expected 1)")
        #expect(try rejection { $0.calibration = 20 } == "calibration_db_spl: 20.0 is out of range 80…130")
        #expect(try rejection { $0.left[0].centre = 300 }?.hasPrefix("left[0].centre_hz") == true)
    }

    @Test func thePayloadAndTheProcessorCheckTheSameRanges() throws {
        // One type and one range table: what the payload's validation accepts, the processor's does.
        for field in BandDynamics.Field.allCases {
            guard let range = field.range else { continue }
            for (value, accepted) in [(range.lowerBound, true), (range.upperBound, true), (range.upperBound + 1, false)] {
                var payload = try preset()
                payload.left[3][field] = value
                #expect(((try? payload.validate(for: payload.techLevel)) != nil) == accepted, "\(field) = \(value)")
                #expect(((try? payload.validateBands()) != nil) == accepted, "\(field) = \(value)")
                if !accepted {
                    #expect(try rejection { $0 = payload }?.hasPrefix("left[3].\(field.rawValue): ") == true, "\(field)")
                }
            }
        }
    }

    @Test func malformedJSONIsRejected() throws {
        #expect(throws: DocumentError.self) { try PresetPayload.decode(Data("{}".utf8), for: try TechLevel(3)) }
    }
}
