import SoundFitModel
import SoundFitTestSupport
import Testing
@testable import SoundFitProcessing

/// A handler invalidating parameters, and the controller recovering its state.
@Suite(.timeLimit(.minutes(1)))
struct InvalidationTests {
    let fakes = ControllerFakes()

    /// An active session with a profile's recommended values applied to the handler.
    private func personalizedSession() async throws -> (ProcessingController, ProcessingSession) {
        let controller = fakes.makeController()
        let session = try await controller.activate(configuration: .fineTuning(techLevel: techLevel3))
        try await controller.recommend(for: .hearingProfileSubmitted)
        fakes.handler.clearWrites()
        return (controller, session)
    }

    @Test func aHandlerThatWentAwayAndCameBackGetsItsStateBack() async throws {
        let (controller, session) = try await personalizedSession()
        defer { withExtendedLifetime(controller) {} }
        let personalized = fakes.handler.processor
        #expect(personalized == FakeHandler.Processor(
            isEnabled: true, intensity: 0.75, preset: FakePresetSource.preset(.default, techLevel3), techLevel: techLevel3))

        fakes.handler.goAway()
        await #expect(throws: FakeHandlerError.offline) { try await session.intensity.apply(0.9) }
        #expect(session.intensity.value == 0.75)
        let report = try #require(await fakes.handler.comeBack())

        #expect(fakes.handler.writes == ["preset(profile1-default)", "intensity(0.75)", "isEnabled(true)"])
        #expect(fakes.handler.processor == personalized)
        #expect(report.reapplied == [.preset, .intensity, .isEnabled])
        #expect(report.isRecovered)
        #expect(report.invalidated == Set(SessionParameter.Name.allCases))
        #expect(try report.readings[.isEnabled]?.get() == .isEnabled(false))
        #expect(try report.readings[.intensity]?.get() == .intensity(0))
        #expect(try report.readings[.canEnable]?.get() == .canEnable(false))
        #expect(try report.readings[.techLevel]?.get() == .techLevel(techLevel3))
        #expect(session.intensity.value == 0.75 && session.isEnabled.value && session.canEnable)
    }

    @Test func onlyParametersThatDifferAreReapplied() async throws {
        let (controller, session) = try await personalizedSession()
        defer { withExtendedLifetime(controller) {} }
        fakes.handler.setProcessor { $0.intensity = 0.2 }
        let invalidation = try #require(fakes.handler.invalidation)

        let report = try #require(await invalidation.invalidate(parameters: [.isEnabled, .intensity]))

        #expect(report.reapplied == [.intensity])
        #expect(fakes.handler.writes == ["intensity(0.75)"])
        #expect(fakes.handler.processor.intensity == 0.75)
        #expect(session.intensity.value == 0.75)
    }

    @Test func anInvalidatedPresetIsAlwaysReapplied() async throws {
        let (controller, _) = try await personalizedSession()
        defer { withExtendedLifetime(controller) {} }

        let report = try #require(await fakes.handler.invalidation?.invalidate(parameters: [.preset], cause: TestError("reloaded")))

        #expect(report.reapplied == [.preset])
        #expect(report.cause as? TestError == TestError("reloaded"))
        #expect(fakes.handler.writes == ["preset(profile1-default)"])
    }

    @Test func aHandlerStillAwayLeavesParametersOutOfDateUntilItReturns() async throws {
        let (controller, session) = try await personalizedSession()
        fakes.handler.goAway()

        let failed = try #require(await controller.invalidate(cause: TestError("server gone")))

        #expect(failed.reapplied.isEmpty)
        #expect(Set(failed.failures.keys) == [.preset, .intensity, .isEnabled])
        #expect(!failed.isRecovered)
        #expect(session.preset.updateState.error as? FakeHandlerError == .offline)
        let intensity = try #require(session.writable(.intensity))
        #expect(!intensity.isHandlerUpToDate())

        let recovered = try #require(await fakes.handler.comeBack())

        #expect(recovered.isRecovered)
        #expect(fakes.handler.processor.intensity == 0.75 && fakes.handler.processor.isEnabled)
        #expect(intensity.isHandlerUpToDate())
    }

    @Test func aDifferentTechLevelIsReportedNotFixed() async throws {
        let (controller, _) = try await personalizedSession()
        defer { withExtendedLifetime(controller) {} }
        fakes.handler.setProcessor { $0.techLevel = try! TechLevel(2) }

        let report = try #require(await fakes.handler.invalidation?.invalidate(parameters: [.techLevel]))

        #expect(report.techLevelMismatch == (try TechLevel(2)))
        #expect(!report.isRecovered)
        #expect(report.reapplied.isEmpty)
        #expect(fakes.handler.writes.isEmpty)
    }

    @Test func aReadThatNeverAnswersTimesOutAndIsTreatedAsUnknown() async throws {
        let stuck = StuckReadHandler()
        let controller = ProcessingController(handler: stuck, config: DeliveryConfiguration(deliveryTimeout: .seconds(4)),
                                              clock: fakes.clock)
        _ = try await controller.activate(configuration: .fineTuning(techLevel: techLevel3))
        let recovery = Task { await controller.invalidate(parameters: [.intensity]) }
        while fakes.clock.sleeperCount == 0 { await Task.yield() }

        await fakes.clock.advance(by: .seconds(4))
        let report = try #require(await recovery.value)

        #expect(throws: ProcessingError.readTimeoutExceeded(.seconds(4))) { try report.readings[.intensity]?.get() }
        #expect(report.reapplied == [.intensity])
        #expect(stuck.writes.suffix(1) == ["intensity(0.5)"])
    }

    @Test func invalidationOfAnEndedSessionDoesNothing() async throws {
        let (controller, _) = try await personalizedSession()
        let invalidation = try #require(fakes.handler.invalidation)
        await controller.deactivate()

        #expect(await invalidation.invalidate() == nil)
        #expect(fakes.handler.writes.isEmpty)
    }
}

/// A handler whose reads never answer (its writes work).
final class StuckReadHandler: ProcessingHandler {
    private let log = Recorder<String>()
    private let never = Gate()

    var writes: [String] { log.events }

    func set(_ parameter: SessionParameter.Writable) async throws { log.record(parameter.description) }

    func get(_ parameter: SessionParameter.Readable) async throws -> SessionParameter.ReadValue {
        await never.wait()
        return .isEnabled(false)
    }
}
