import SoundFitModel
import SoundFitHearing
import SoundFitProcessing
import SoundFitRuntime
import Testing

@Suite struct ProfilePresetSourceTests {
    /// The generated payload travels with the personalization preset (no side table by id).
    @Test func aPresetCarriesItsPayload() async throws {
        let source = ProfilePresetSource()
        source.setProfile(try HearingProfile(left: try Audiogram([(500, 40), (1000, 45), (2000, 50), (4000, 60)]), right: nil))
        let techLevel = try TechLevel(3)
        let preset = try await source.preset(.default, for: techLevel)
        let payload = try #require(preset.payload)
        #expect(payload.variant == .default)
        #expect(payload.techLevel == techLevel)
    }
}
