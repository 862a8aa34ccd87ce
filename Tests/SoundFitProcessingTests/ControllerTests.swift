import SoundFitTestSupport
import SoundFitModel
import Testing
@testable import SoundFitProcessing

/// Activation, one session at a time, published session changes, held values, deactivation,
/// the delivery configuration.
@Suite(.timeLimit(.minutes(1)))
struct ControllerTests {
    let fakes = ControllerFakes()
    let configuration = ProcessingConfiguration.fineTuning(techLevel: techLevel3)

    @Test func onlyOneSessionIsActiveAtATime() async throws {
        let controller = fakes.makeController()
        let first = try await controller.activate(configuration: configuration)

        await #expect(throws: ProcessingError.sessionAlreadyActive) {
            try await controller.activate(configuration: .singlePreset(techLevel: techLevel3))
        }
        #expect(controller.session === first)

        await controller.deactivate()
        #expect(controller.session == nil)
        #expect(!first.isActive)
        let second = try await controller.activate(configuration: .singlePreset(techLevel: techLevel3))
        #expect(controller.session === second)
        #expect(second.id == 2)
        #expect(fakes.handler.activations == [1, 2])
        #expect(fakes.handler.deactivations == [1])
    }

    @Test func sessionChangesArePublished() async throws {
        let controller = fakes.makeController()
        let updates = controller.sessionUpdates()

        let first = try await controller.activate(configuration: configuration)
        await controller.deactivate()
        let second = try await controller.activate(configuration: configuration)
        let late = controller.sessionUpdates()  // a late subscriber gets the current session first

        #expect(await take(4, from: updates).map { $0?.id } == [nil, first.id, nil, second.id])
        #expect(await take(1, from: late).map { $0?.id } == [second.id])
    }

    @Test func activationAppliesEverythingToTheHandler() async throws {
        let controller = fakes.makeController()

        let session = try await controller.activate(configuration: configuration)

        #expect(fakes.handler.writes == ["preset(nil)", "intensity(0.5)", "isEnabled(false)"])
        #expect(session.techLevel == techLevel3)
        #expect(session.isEnabled.value == false)
        #expect(session.intensity.value == 0.5)
        #expect(session.preset.value == nil)
        #expect(!session.canEnable)
    }

    @Test func reactivationKeepsAndReappliesTheValues() async throws {
        let controller = fakes.makeController()
        let first = try await controller.activate(configuration: configuration)
        try await first.loadPreset(.up)
        try await first.intensity.apply(0.3)
        try await first.isEnabled.apply(true)
        await controller.deactivate()
        fakes.handler.goAway()  // e.g. the JACK server restarted: the processor lost everything
        _ = await fakes.handler.comeBack()  // nothing to invalidate: no session
        fakes.handler.clearWrites()

        let second = try await controller.activate(configuration: configuration)

        #expect(second.preset.value == FakePresetSource.preset(.up, techLevel3))
        #expect(second.intensity.value == 0.3)  // kept, not the activation recommendation
        #expect(second.isEnabled.value == true)
        #expect(second.canEnable)
        #expect(fakes.handler.writes == ["preset(profile1-up)", "intensity(0.3)", "isEnabled(true)"])
        #expect(fakes.handler.processor.intensity == 0.3)
    }

    /// A new tech level gets its own preset, not none.
    @Test func aPresetForAnotherTechLevelIsRegeneratedForTheNewOne() async throws {
        let controller = fakes.makeController()
        let first = try await controller.activate(configuration: configuration)
        try await first.loadPreset(.up)
        try await first.isEnabled.apply(true)
        await controller.deactivate()
        fakes.handler.clearWrites()

        let second = try await controller.activate(configuration: .fineTuning(techLevel: try TechLevel(2)))

        #expect(second.techLevel.value == 2)
        #expect(second.preset.value == FakePresetSource.preset(.up, second.techLevel))
        #expect(second.canEnable)
        #expect(second.isEnabled.value)
        #expect(second.intensity.value == 0.5)
        #expect(fakes.presets.fetches.last == "up@2")
        #expect(fakes.handler.writes.contains("preset(profile1-up)") && fakes.handler.writes.last == "isEnabled(true)")
    }

    @Test func aVariantTheNewModeDoesNotOfferIsRegeneratedAsDefault() async throws {
        let controller = fakes.makeController()
        let first = try await controller.activate(configuration: configuration)
        try await first.loadPreset(.down)
        await controller.deactivate()

        let second = try await controller.activate(configuration: .singlePreset(techLevel: techLevel3))

        #expect(second.preset.value == FakePresetSource.preset(.default, techLevel3))
    }

    @Test func aPresetThatCarriesOverIsNotFetchedAgain() async throws {
        let controller = fakes.makeController()
        let first = try await controller.activate(configuration: configuration)
        try await first.loadPreset(.up)
        await controller.deactivate()
        let fetches = fakes.presets.fetches.count

        let second = try await controller.activate(configuration: configuration)

        #expect(second.preset.value == FakePresetSource.preset(.up, techLevel3))
        #expect(fakes.presets.fetches.count == fetches)
    }

    @Test func deactivationEndsWaitingAndInFlightRequests() async throws {
        let controller = fakes.makeController()
        let session = try await controller.activate(configuration: configuration)
        let slow = Gate()
        let reached = Gate()
        fakes.handler.holdNextWrite(at: slow, reached: reached)
        let inFlight = try session.intensity.request(0.6)
        await reached.wait()
        let waiting = try session.intensity.request(0.7)

        await controller.deactivate()

        let inactive = ProcessingError.sessionInactive
        #expect(await allStates(waiting) == ["pending(0.7)", "failed(0.7, \(inactive))"])
        #expect(await allStates(inFlight) == ["applying(0.6)", "failed(0.6, \(inactive))"])
        #expect(throws: ProcessingError.sessionInactive) { try session.intensity.request(0.8) }
        await #expect(throws: ProcessingError.sessionInactive) { try await session.isEnabled.synchronizeApplicators() }
        #expect(session.intensity.value == 0.5)
        #expect(fakes.handler.deactivations == [1])
        slow.open()
    }

    @Test func theDeliveryConfigurationAppliesToEveryParameterAtRunTime() async throws {
        let controller = fakes.makeController()
        let session = try await controller.activate(configuration: configuration)
        let discrete = DeliveryConfiguration(deliveryStyle: .discrete(settleTime: .milliseconds(50)), deliveryTimeout: .seconds(3))

        controller.config = discrete

        #expect(controller.config == discrete)
        #expect(session.isEnabled.config == discrete)
        #expect(session.intensity.config == discrete)
        #expect(session.preset.config == discrete)
        let request = try session.intensity.request(0.25)
        await fakes.clock.advance(by: .milliseconds(50))
        #expect(await allStates(request) == ["pending(0.25)", "applying(0.25)", "applied(0.25)"])

        await controller.deactivate()
        controller.config = .default
        #expect(try await controller.activate(configuration: configuration).intensity.config == .default)
    }

    @Test func recommendAndInvalidateNeedASession() async throws {
        let controller = fakes.makeController()

        await #expect(throws: ProcessingError.noActiveSession) { try await controller.recommend(for: .hearingProfileSubmitted) }
        #expect(await controller.invalidate() == nil)
    }
}
