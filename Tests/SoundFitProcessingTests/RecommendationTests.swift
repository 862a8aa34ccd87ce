import SoundFitTestSupport
import SoundFitModel
import Testing
@testable import SoundFitProcessing

/// Recommended values after events, reported like any other change.
@Suite(.timeLimit(.minutes(1)))
struct RecommendationTests {
    let fakes = ControllerFakes()

    @Test func theRecommendedValuesAreDocumented() {
        #expect(Recommendation.recommendation(for: .sessionActivated, intensityIsSet: false)
                == Recommendation(intensity: 0.5))
        #expect(Recommendation.recommendation(for: .sessionActivated, intensityIsSet: true) == Recommendation())
        #expect(Recommendation.recommendation(for: .hearingProfileSubmitted, intensityIsSet: true)
                == Recommendation(presetVariant: .default, intensity: 0.75, isEnabled: true))
    }

    @Test func activationRecommendsAnIntensityAndReportsItAsAChange() async throws {
        let controller = fakes.makeController()
        let slow = Gate()
        let reached = Gate()
        fakes.handler.holdNextWrite(at: slow, reached: reached)  // the first write: the preset
        let activation = Task { try await controller.activate(configuration: .fineTuning(techLevel: techLevel3)) }
        await reached.wait()
        let session = try #require(controller.session)
        let values = session.intensity.valueUpdates()
        let states = session.intensity.stateUpdates()

        slow.open()
        _ = try await activation.value

        #expect(await take(2, from: values) == [0, 0.5])
        #expect(await take(3, from: states).map(\.description) == ["applied(0.0)", "applying(0.5)", "applied(0.5)"])
        #expect(fakes.handler.processor.intensity == 0.5)
    }

    @Test func aSubmittedProfileLoadsTheDefaultPresetAndEnablesProcessing() async throws {
        let controller = fakes.makeController()
        let session = try await controller.activate(configuration: .fineTuning(techLevel: techLevel3))
        let presetValues = session.preset.valueUpdates()
        let intensityValues = session.intensity.valueUpdates()
        let intensityStates = session.intensity.stateUpdates()
        let enabledValues = session.isEnabled.valueUpdates()
        let enabledStates = session.isEnabled.stateUpdates()
        fakes.handler.clearWrites()

        try await controller.recommend(for: .hearingProfileSubmitted)

        let preset = FakePresetSource.preset(.default, techLevel3)
        #expect(await take(2, from: presetValues) == [nil, preset])
        #expect(await take(2, from: intensityValues) == [0.5, 0.75])
        #expect(await take(3, from: intensityStates).map(\.description) == ["applied(0.5)", "applying(0.75)", "applied(0.75)"])
        #expect(await take(2, from: enabledValues) == [false, true])
        #expect(await take(3, from: enabledStates).map(\.description) == ["applied(false)", "applying(true)", "applied(true)"])
        #expect(fakes.handler.writes == ["preset(profile1-default)", "intensity(0.75)", "isEnabled(true)"])
        #expect(session.canEnable)
    }

    @Test func whileInterruptedTheRecommendedEnableWaitsForTheResolve() async throws {
        let controller = fakes.makeController()
        let session = try await controller.activate(configuration: .fineTuning(techLevel: techLevel3))
        _ = try await session.interrupt(reason: "hearing test")

        try await controller.recommend(for: .hearingProfileSubmitted)

        #expect(session.isEnabled.value == false)
        #expect(session.intensity.value == 0.75)
        #expect(try await session.resolve(interruption: "hearing test") == false)
        #expect(session.isEnabled.value == true)
    }

    @Test func aFailingPresetSourceStopsTheRecommendation() async throws {
        let controller = fakes.makeController()
        let session = try await controller.activate(configuration: .fineTuning(techLevel: techLevel3))
        fakes.presets.makeUnavailable([.default])

        await #expect(throws: TestError("no default preset")) { try await controller.recommend(for: .hearingProfileSubmitted) }

        #expect(session.intensity.value == 0.5)
        #expect(session.isEnabled.value == false)
    }

    @Test func anExplicitIntensityIsNotOverriddenByTheActivationRecommendation() async throws {
        let controller = fakes.makeController()
        let session = try await controller.activate(configuration: .fineTuning(techLevel: techLevel3))
        try await session.intensity.apply(0.2)

        try await controller.recommend(for: .sessionActivated)

        #expect(session.intensity.value == 0.2)
    }
}
