import Foundation
import SoundFitModel
import SoundFitHearing
import SoundFitJSON
import SoundFitState
import Testing

/// A state file SoundFit wrote before its hearing profiles and presets moved to SoundFitJSON (a
/// hearing profile, presets for all four tech levels, a user patch as current patch) still loads,
/// and is written back byte for byte.
@Suite struct StateFileFormatTests {
    private let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/state-v1.json")

    @Test func aStateFileWrittenBeforeLoadsAndIsWrittenBackUnchanged() throws {
        let data = try Data(contentsOf: fixture)
        let document = try StateDocument.decode(data, file: "state-v1.json", descriptors: TestParameters.descriptors)
        #expect(document.hearingProfile != nil)
        #expect(document.presets.map(\.techLevel.value) == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4])
        #expect(document.presets.contains { $0.left.contains { $0.expansionKnee != nil } })
        #expect(document.currentPatch?.name == "Evening")
        #expect(String(decoding: document.encoded(descriptors: TestParameters.descriptors), as: UTF8.self)
            == String(decoding: data, as: UTF8.self))
    }

    @Test func aHearingProfileInsideAStateFileIsReportedAtItsPlace() throws {
        let text = String(decoding: try Data(contentsOf: fixture), as: UTF8.self)
            .replacingOccurrences(of: "\"db_hl\": 35,\n        \"hz\": 250", with: "\"db_hl\": \"35\",\n        \"hz\": 250")
        do {
            _ = try StateDocument.decode(Data(text.utf8), file: "state.json", descriptors: TestParameters.descriptors)
            Issue.record("accepted")
        } catch {
            #expect(error.problems.map(\.description) == [
                #"state.json: line 36, column 18: hearing_profile.left[0].db_hl: expected a number, got "35""#,
            ])
        }
    }
}
