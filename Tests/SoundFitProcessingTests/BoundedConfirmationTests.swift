import SoundFitTestSupport
import Synchronization
import Testing
@testable import SoundFitProcessing

/// Streaming applicators whose confirmation bounds itself (`addStreamingApplicator(boundedScheduling:)`,
/// the audio engine's): the delivery tells it how long it may take and awaits it in its own task,
/// with no timer of its own; an error once the deadline has passed is the timeout.
@Suite(.timeLimit(.minutes(1)))
struct BoundedConfirmationTests {
    let clock = ManualClock()

    /// A bounded applicator that records each `within` and then waits for `engine`'s cycle.
    private func boundedParameter(_ engine: FakeStreamingEngine, applyTimeout: Duration? = nil,
                                  config: DeliveryConfiguration = .default, within: Recorder<Duration>)
        -> (ProcessingParameter<Int>, ParameterApplicator<Int>)
    {
        let parameter = ProcessingParameter(0, config: config, clock: clock)
        let applicator = parameter.addStreamingApplicator(applyTimeout: applyTimeout, boundedScheduling: { value, _ in
            let confirmation = engine.submit(value)
            return { bound in
                within.record(bound)
                try await confirmation()
            }
        })
        return (parameter, applicator)
    }

    @Test func isToldTheDeliveryTimeoutAndAwaitedWithoutATimer() async throws {
        let engine = FakeStreamingEngine()
        let within = Recorder<Duration>()
        let (parameter, applicator) = boundedParameter(engine, within: within)

        let request = try parameter.request(1)
        await within.waitForCount(1)
        #expect(within.events == [DeliveryConfiguration.default.deliveryTimeout])
        // Nothing sleeps on the clock while the value is in flight: no racing timer.
        for _ in 0..<100 { await Task.yield() }
        #expect(clock.sleeperCount == 0)

        engine.renderCycle()
        #expect(await allStates(request) == ["applying(1)", "applied(1)"])
        #expect(parameter.value == 1)
        #expect(parameter.isUpToDate(applicator))
    }

    /// The same wait added as an ordinary streaming applicator races a timer (the contrast that
    /// makes the test above able to fail).
    @Test func anUnboundedConfirmationRacesATimer() async throws {
        let engine = FakeStreamingEngine()
        let parameter = ProcessingParameter(0, config: .default, clock: clock)
        let applicator = parameter.addStreamingApplicator { engine.submit($0) }

        let request = try parameter.request(1)
        while clock.sleeperCount == 0 { await Task.yield() }
        engine.renderCycle()
        #expect(await allStates(request) == ["applying(1)", "applied(1)"])
        withExtendedLifetime(applicator) {}
    }

    /// A bounded applicator whose every wait sleeps on the clock for all the time it is given
    /// and then throws `error`.
    private func parameterWaitingOut(deliveryTimeout: Duration, thenThrowing error: any Error)
        -> (ProcessingParameter<Int>, ParameterApplicator<Int>)
    {
        let parameter = ProcessingParameter(0, config: DeliveryConfiguration(deliveryTimeout: deliveryTimeout), clock: clock)
        let clock = self.clock
        let applicator = parameter.addStreamingApplicator(boundedScheduling: { _, _ in
            { within in
                try await clock.sleep(for: within)
                throw error
            }
        })
        return (parameter, applicator)
    }

    @Test func anErrorAtTheDeadlineIsTheDeliveryTimeout() async throws {
        let (parameter, applicator) = parameterWaitingOut(deliveryTimeout: .seconds(2), thenThrowing: TestError("gave up"))
        let request = try parameter.request(1)
        while clock.sleeperCount == 0 { await Task.yield() }
        await clock.advance(by: .milliseconds(1_999))
        #expect(parameter.updateState.description == "applying(1)")
        await clock.advance(by: .milliseconds(1))

        #expect(await allStates(request)
                == ["applying(1)", "failed(1, \(ProcessingParameterError.deliveryTimeoutExceeded(.seconds(2))))"])
        #expect(parameter.value == 0)
        #expect(!parameter.isUpToDate(applicator))
    }

    @Test func anApplyTimeoutShorterThanTheDeliveryTimeoutIsWhatItIsTold() async throws {
        let engine = FakeStreamingEngine()
        let within = Recorder<Duration>()
        let (parameter, applicator) = boundedParameter(engine, applyTimeout: .milliseconds(500), within: within)
        let clock = self.clock
        let request = try parameter.request(1)
        await within.waitForCount(1)
        #expect(within.events == [.milliseconds(500)])

        // The wait ends by itself at its bound: the failure is the apply timeout.
        await clock.advance(by: .milliseconds(500))
        engine.settle(0, .failure(TestError("stalled")))
        #expect(await allStates(request)
                == ["applying(1)", "failed(1, \(ProcessingParameterError.applyTimeoutExceeded(.milliseconds(500))))"])
        withExtendedLifetime(applicator) {}
    }

    @Test func anErrorBeforeTheDeadlineIsReportedAsItself() async throws {
        let engine = FakeStreamingEngine()
        let within = Recorder<Duration>()
        let (parameter, applicator) = boundedParameter(engine, within: within)

        let request = try parameter.request(1)
        await within.waitForCount(1)
        engine.settle(0, .failure(TestError("no server")))
        #expect(await allStates(request) == ["applying(1)", "failed(1, no server)"])
        #expect(!parameter.isUpToDate(applicator))
    }

    @Test func supersededFromTheConfirmationEndsTheRequestSuperseded() async throws {
        let engine = FakeStreamingEngine()
        let within = Recorder<Duration>()
        let (parameter, applicator) = boundedParameter(engine, within: within)

        let first = try parameter.request(1)
        let second = try parameter.request(2)
        await within.waitForCount(2)
        engine.renderCycle()  // only the newest is rendered: the first is superseded
        #expect(await allStates(first) == ["applying(1)", "superseded(1)"])
        #expect(await allStates(second) == ["applying(2)", "applied(2)"])
        #expect(parameter.value == 2)
        withExtendedLifetime(applicator) {}
    }

    /// Superseded learnt only after the deadline is still superseded, not a timeout.
    @Test func supersededAfterTheDeadlineStaysSuperseded() async throws {
        let (parameter, applicator) = parameterWaitingOut(deliveryTimeout: .seconds(1),
                                                          thenThrowing: ProcessingParameterError.superseded)
        let request = try parameter.request(1)
        while clock.sleeperCount == 0 { await Task.yield() }
        await clock.advance(by: .seconds(1))
        #expect(await allStates(request) == ["applying(1)", "superseded(1)"])
        withExtendedLifetime(applicator) {}
    }

    /// A delivery that cannot overlap (discrete delivery) calls it whole, with the same bound.
    @Test func aWholeCallIsToldItsBoundToo() async throws {
        let engine = FakeStreamingEngine()
        let within = Recorder<Duration>()
        let (parameter, applicator) = boundedParameter(
            engine, config: DeliveryConfiguration(deliveryStyle: .discrete(settleTime: .milliseconds(100)), deliveryTimeout: .seconds(3)),
            within: within)

        let request = try parameter.request(1)
        while clock.sleeperCount == 0 { await Task.yield() }
        await clock.advance(by: .milliseconds(100))  // settled: the delivery starts
        await within.waitForCount(1)
        #expect(within.events == [.seconds(3)])
        engine.renderCycle()
        #expect(await allStates(request).last == "applied(1)")
        withExtendedLifetime(applicator) {}
    }
}
