import SoundFitModel
import SoundFitTestSupport
import Testing
@testable import SoundFitProcessing

/// Tech level, configuration, session parameter validation, presets.
@Suite(.timeLimit(.minutes(1)))
struct ConfigurationTests {
    let clock = ManualClock()

    @Test(arguments: [0, 5, -1, 100])
    func techLevelsOutsideOneToFourAreRejected(_ level: Int) {
        #expect(throws: TechLevelError.invalidTechLevel(level)) { try TechLevel(level) }
    }

    @Test func techLevelsOneToFourAreValid() throws {
        for level in 1...4 {
            #expect(try TechLevel(level).value == level)
        }
    }

    @Test func modesOfferTheirVariants() throws {
        let techLevel = try TechLevel(4)
        #expect(ProcessingConfiguration.fineTuning(techLevel: techLevel).personalization.variants == [.default, .up, .down])
        #expect(ProcessingConfiguration.singlePreset(techLevel: techLevel).personalization.variants == [.default])
        #expect(ProcessingConfiguration.fineTuning(techLevel: techLevel).techLevel == techLevel)
        #expect(ProcessingConfiguration.singlePreset(techLevel: techLevel).personalization.modeName == "single_preset")
    }

    @Test func intensityOutsideZeroToOneIsRejected() async throws {
        let controller = ProcessingController(clock: clock)
        let session = try await controller.activate(configuration: .fineTuning(techLevel: techLevel3))

        #expect(throws: ProcessingError.invalidIntensity(1.5)) { try session.intensity.request(1.5) }
        #expect(throws: ProcessingError.invalidIntensity(-0.1)) { try session.intensity.request(-0.1) }
        #expect(throws: ProcessingError.self) { try session.intensity.request(.nan) }
        try await session.intensity.apply(1)
        try await session.intensity.apply(0)
        #expect(session.intensity.value == 0)
    }

    @Test func presetsMustMatchTheSession() async throws {
        let presets = FakePresetSource()
        let controller = ProcessingController(presetSource: presets, clock: clock)
        let session = try await controller.activate(configuration: .singlePreset(techLevel: techLevel3))

        #expect(throws: ProcessingError.presetTechLevelMismatch(presetTechLevel: 2, sessionTechLevel: 3)) {
            try session.preset.request(FakePresetSource.preset(.default, try TechLevel(2)))
        }
        #expect(throws: ProcessingError.presetVariantUnavailable(.up)) {
            try session.preset.request(FakePresetSource.preset(.up, techLevel3))
        }
        await #expect(throws: ProcessingError.presetVariantUnavailable(.down)) { try await session.loadPreset(.down) }
        #expect(presets.fetches.isEmpty)  // rejected before asking the source

        try await session.preset.load()  // no preset yet: loads the default variant
        #expect(session.preset.value?.id == "profile1-default")
        #expect(session.canEnable)
        presets.submitProfile(2)
        try await session.preset.load()  // loads the current variant again
        #expect(session.preset.value?.id == "profile2-default")
        #expect(presets.fetches == ["default@3", "default@3"])
    }

    @Test func loadingWithoutAPresetSourceFails() async throws {
        let controller = ProcessingController(clock: clock)
        let session = try await controller.activate(configuration: .fineTuning(techLevel: techLevel3))

        await #expect(throws: ProcessingError.noPresetSource) { try await session.preset.load() }
        #expect(session.preset.updateState.description == "applied(nil)")  // nothing reported
    }

    @Test func invalidDeliveryConfigurationsAreRejectedByValidate() {
        #expect(throws: InvalidDeliveryConfiguration.self) {
            try DeliveryConfiguration(deliveryStyle: .discrete(settleTime: .milliseconds(-1))).validate()
        }
        #expect(throws: InvalidDeliveryConfiguration.self) { try DeliveryConfiguration(deliveryTimeout: .zero).validate() }
        #expect(throws: Never.self) { try DeliveryConfiguration(deliveryStyle: .discrete()).validate() }
        #expect(DeliveryConfiguration.default == DeliveryConfiguration(deliveryStyle: .continuous, deliveryTimeout: .seconds(10)))
        #expect(DeliveryConfiguration.DeliveryStyle.discrete() == .discrete(settleTime: .milliseconds(200)))
    }
}
