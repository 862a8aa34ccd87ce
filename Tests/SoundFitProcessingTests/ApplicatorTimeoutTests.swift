import SoundFitTestSupport
import SoundFitModel
import Testing
@testable import SoundFitProcessing

/// The session parameters' applicators have the handler's own apply timeouts: one that is
/// exceeded fails the whole application, naming the applicator.
@Suite(.timeLimit(.minutes(1)))
struct ApplicatorTimeoutTests {
    let clock = ManualClock()
    let handler = FakeHandler(techLevel: techLevel3, name: "the slow processor",
                              applyTimeouts: [.intensity: .milliseconds(500), .preset: .seconds(2)])

    private func makeController() -> ProcessingController {
        ProcessingController(handler: handler, presetSource: FakePresetSource(), clock: clock)
    }

    @Test func theSessionsApplicatorsHaveTheHandlersNameAndApplyTimeouts() async throws {
        let controller = makeController()
        let expected = [
            SessionApplicator(parameter: .isEnabled, name: "the slow processor", applyTimeout: nil),
            SessionApplicator(parameter: .intensity, name: "the slow processor", applyTimeout: .milliseconds(500)),
            SessionApplicator(parameter: .preset, name: "the slow processor", applyTimeout: .seconds(2)),
        ]
        // Before a session: the ones the next session gets.
        #expect(controller.sessionApplicators == expected)
        let session = try await controller.activate(configuration: .fineTuning(techLevel: techLevel3))
        #expect(controller.sessionApplicators == expected)
        #expect(session.intensity.applicators.map(\.applyTimeout) == [.milliseconds(500)])
        #expect(session.intensity.applicators.map(\.name) == ["the slow processor"])
    }

    @Test func aSlowApplicatorFailsTheValueAtItsOwnTimeoutNamingIt() async throws {
        let controller = makeController()
        let session = try await controller.activate(configuration: .fineTuning(techLevel: techLevel3))
        #expect(session.intensity.value == 0.5)  // the activation recommendation, applied in time
        let gate = Gate(), reached = Gate()
        handler.holdNextWrite(at: gate, reached: reached)
        let start = clock.elapsed

        let request = try session.intensity.request(0.8)
        await reached.wait()
        await clock.advance(by: .milliseconds(499))
        #expect(session.intensity.updateState.description == "applying(0.8)")
        await clock.advance(by: .milliseconds(1))
        let states = await allStates(request)

        // Well before the 10 s delivery timeout: the applicator's own timeout decided.
        #expect(clock.elapsed - start == .milliseconds(500))
        let error = ProcessingParameterError.applyTimeoutExceeded(.milliseconds(500), applicator: "the slow processor")
        #expect(states == ["applying(0.8)", "failed(0.8, \(error))"])
        #expect(session.intensity.updateState.error as? ProcessingParameterError == error)
        #expect(error.description == "the slow processor did not apply the value within its apply timeout (0.5 seconds)")
        #expect(session.intensity.value == 0.5)
        gate.open()
    }

    @Test func withoutItsOwnTimeoutAnApplicatorIsBoundByTheDeliveryTimeout() async throws {
        let controller = makeController()
        controller.config = DeliveryConfiguration(deliveryStyle: .continuous, deliveryTimeout: .seconds(1))
        let session = try await controller.activate(configuration: .fineTuning(techLevel: techLevel3))
        let gate = Gate(), reached = Gate()
        handler.holdNextWrite(at: gate, reached: reached)

        let request = try session.isEnabled.request(true)
        await reached.wait()
        await clock.advance(by: .seconds(1))
        let states = await allStates(request)

        #expect(states == ["applying(true)", "failed(true, \(ProcessingParameterError.deliveryTimeoutExceeded(.seconds(1))))"])
        #expect(session.isEnabled.value == false)
        gate.open()
    }
}
