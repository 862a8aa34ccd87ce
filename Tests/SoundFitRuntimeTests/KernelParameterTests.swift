import SoundFitTestSupport
import SoundFitModel
import SoundFitEngine
@testable import SoundFitRuntime
import Testing

/// A kernel parameter's one path to the engine, against a real `AudioEngine` whose cycles the
/// test renders (`InMemoryDriver`): hand-overs in acceptance order without waiting, the bound
/// on values in flight, exact terminal states from the acknowledgements, synchronization after
/// the engine lost its values, discrete delivery, scheduled values.
@Suite(.timeLimit(.minutes(1)))
struct KernelParameterTests {
    private func makeRuntime(_ config: DeliveryConfiguration = .default, clock: any Clock<Duration> = ContinuousClock())
        throws -> (SoundFitRuntime, KernelParameter)
    {
        let runtime = SoundFitRuntime(engine: AudioEngine(), sessionConfiguration: .fineTuning(techLevel: try TechLevel(3)),
                                      config: config, clock: clock)
        let cutoff = try #require(runtime.parameter(at: "/filter/cutoff") as? KernelParameter)
        return (runtime, cutoff)
    }

    private func states(_ request: ParameterRequest<ParameterValue>) async -> [String] {
        var names: [String] = []
        for await state in request.states { names.append(state.description) }
        return names
    }

    private func hz(_ value: Int) -> ParameterValue { .float(Float(value)) }

    private func makeDriver(_ runtime: SoundFitRuntime) -> InMemoryDriver {
        InMemoryDriver(engine: runtime.engine, blockSize: 64, channelCount: 1)
    }

    /// The mailbox's number for the cutoff slot's newest publication: it moves with each hand-over.
    private func cutoffPublication(_ runtime: SoundFitRuntime) -> UInt32 {
        runtime.engine.mailbox.publishedSequence(index: EngineSlot.filterCutoff.rawValue)
    }

    /// Requests `value` and renders the cycle that takes it: the request ends applied.
    private func applyOnce(_ value: Int, to cutoff: KernelParameter, rendering driver: inout InMemoryDriver) async throws {
        let request = try cutoff.request(hz(value), origin: nil)
        driver.renderSilentCycle()
        #expect(await states(request) == ["applying(\(Float(value)))", "applied(\(Float(value)))"])
    }

    /// Polls `condition` every millisecond until it holds (the suite's time limit bounds it). A
    /// real sleep, not `Task.yield()`: a yielding loop can keep the tasks it waits for (a settle
    /// timer, a delivery's task) off a busy machine's threads.
    private func waitUntil(_ condition: () -> Bool) async throws {
        while !condition() { try await Task.sleep(for: .milliseconds(1)) }
    }

    @Test func atMostEightValuesAreInFlightAndTheNewestWaits() async throws {
        let (runtime, cutoff) = try makeRuntime()
        var driver = makeDriver(runtime)
        var requests: [ParameterRequest<ParameterValue>] = []
        var mostBuffered = 0
        for value in 101...1_100 {
            requests.append(try cutoff.request(hz(value), origin: nil))
            mostBuffered = max(mostBuffered, cutoff.bufferedValueCount)
        }
        // Eight handed over (the mailbox holds the eighth), one waiting: memory stays bounded.
        #expect(runtime.engine.value(of: .filterCutoff) == hz(108))
        #expect(mostBuffered == 9)
        for (index, request) in requests[8..<999].enumerated() {
            #expect(await states(request) == ["pending(\(Float(index + 109)))", "superseded(\(Float(index + 109)))"])
        }
        // Cycles until the waiting value was handed over and taken.
        driver.renderSilentCycle()
        let loop = RenderLoop(engine: runtime.engine)
        defer { loop.stop() }
        #expect(await states(requests[999]) == ["pending(1100.0)", "applying(1100.0)", "applied(1100.0)"])
        #expect(await states(requests[7]) == ["applying(108.0)", "applied(108.0)"])
        #expect(await states(requests[0]) == ["applying(101.0)", "superseded(101.0)"])
        #expect(try cutoff.currentValue() == hz(1_100))
    }

    @Test func aFloodEndsWithOneTerminalStateEachTheLastValueAndBoundedBookkeeping() async throws {
        let (runtime, cutoff) = try makeRuntime()
        let changes = runtime.changeUpdates()
        var driver = makeDriver(runtime)
        var requests: [ParameterRequest<ParameterValue>] = []
        var largest = 0
        var generator = SystemRandomNumberGenerator()
        for value in 1...3_000 {
            // A distinct origin each time: 3 000 clients.
            requests.append(try cutoff.request(hz(value + 20), origin: RequestOrigin("client-\(value)")))
            largest = max(largest, cutoff.openRequestCount)
            if Int.random(in: 0..<4, using: &generator) == 0 { driver.renderSilentCycle() }
        }
        let bound = DeliveryStateMachine<ParameterValue>.defaultMaximumOverlap + 1
        #expect(largest <= bound, "\(largest) requests kept for 3 000 (bound \(bound))")
        let loop = RenderLoop(engine: runtime.engine)
        defer { loop.stop() }
        var terminal: [UpdateStateName: Int] = [:]
        for request in requests {
            let ends = await states(request).compactMap { description in
                UpdateStateName.allCases.first { description.hasPrefix("\($0)(") && $0.isTerminal }
            }
            #expect(ends.count == 1)
            if let end = ends.first { terminal[end, default: 0] += 1 }
        }
        #expect(terminal[.failed] == nil)
        #expect(try cutoff.currentValue() == hz(3_020))
        #expect(cutoff.openRequestCount == 0)
        // The change feed only ever moved forward, and ended at the last value.
        var previous: Float = 0
        var last: ParameterValue?
        for await change in changes {
            guard case .float(let value) = change.value else { continue }
            #expect(value > previous)
            previous = value
            last = change.value
            if change.value == hz(3_020) { break }
        }
        #expect(last == hz(3_020))
    }

    @Test func aValueEqualToTheAppliedOneStillReachesTheEngineWithAnotherInFlight() async throws {
        let (runtime, cutoff) = try makeRuntime()
        var driver = makeDriver(runtime)
        try await applyOnce(500, to: cutoff, rendering: &driver)
        // The same value again with nothing in flight: the engine runs it, nothing is handed over.
        let publication = cutoffPublication(runtime)
        #expect(await states(try cutoff.request(hz(500), origin: nil)) == ["applied(500.0)"])
        #expect(cutoffPublication(runtime) == publication)
        // With 600 in flight the engine's value is unknown: 500 must be handed over again.
        let newer = try cutoff.request(hz(600), origin: nil)
        let back = try cutoff.request(hz(500), origin: nil)
        #expect(runtime.engine.value(of: .filterCutoff) == hz(500))
        driver.renderSilentCycle()
        #expect(await states(newer) == ["applying(600.0)", "superseded(600.0)"])
        #expect(await states(back) == ["applying(500.0)", "applied(500.0)"])
        #expect(try cutoff.currentValue() == hz(500))
    }

    @Test func afterTheEngineLostItsValuesSynchronizationPublishesTheKeptValueOnce() async throws {
        let (runtime, cutoff) = try makeRuntime()
        var driver = makeDriver(runtime)
        try await applyOnce(2_500, to: cutoff, rendering: &driver)
        // Up to date: synchronizing publishes nothing.
        let sequence = { cutoffPublication(runtime) }
        let before = sequence()
        await cutoff.synchronizeEngine()
        #expect(sequence() == before)
        // Lost (a server gone and back): the kept value is published again, and acknowledged.
        cutoff.invalidateEngine()
        let synchronization = Task { await cutoff.synchronizeEngine() }
        try await waitUntil { sequence() != before }
        #expect(sequence() == before &+ 1)
        #expect(try cutoff.currentUpdateState().description == "applying(2500.0)")
        driver.renderSilentCycle()
        await synchronization.value
        #expect(try cutoff.currentUpdateState().description == "applied(2500.0)")
        #expect(runtime.engine.value(of: .filterCutoff) == hz(2_500))
    }

    @Test func synchronizationWaitsForTheDeliveryInFlightAndAValueRequestedMeanwhileWaitsForIt() async throws {
        let (runtime, cutoff) = try makeRuntime()
        var driver = makeDriver(runtime)
        let sequence = { cutoffPublication(runtime) }
        let inFlight = try cutoff.request(hz(700), origin: nil)
        let published = sequence()
        cutoff.invalidateEngine()  // the server went away and came back while 700 was in flight
        let synchronization = Task { await cutoff.synchronizeEngine() }
        try await waitUntil { cutoff.isSynchronizationRequested }
        #expect(sequence() == published)  // it waits behind the delivery in flight
        let later = try cutoff.request(hz(800), origin: nil)
        #expect(runtime.engine.value(of: .filterCutoff) == hz(700))  // and 800 waits behind it
        driver.renderSilentCycle()
        #expect(await states(inFlight) == ["applying(700.0)", "applied(700.0)"])
        // Invalidated after 700 was handed over, its acknowledgement does not vouch for the
        // engine: the synchronization hands 700 over again.
        try await waitUntil { sequence() != published }
        #expect(runtime.engine.value(of: .filterCutoff) == hz(700))
        driver.renderSilentCycle()
        await synchronization.value
        let loop = RenderLoop(engine: runtime.engine)
        defer { loop.stop() }
        #expect(await states(later) == ["pending(800.0)", "applying(800.0)", "applied(800.0)"])
        #expect(try cutoff.currentValue() == hz(800))
    }

    @Test func discreteDeliveryHandsOverOneSettledValueAtATime() async throws {
        let clock = ManualClock()
        let (runtime, cutoff) = try makeRuntime(DeliveryConfiguration(deliveryStyle: .discrete(settleTime: .milliseconds(50))),
                                                clock: clock)
        let before = runtime.engine.value(of: .filterCutoff)
        let first = try cutoff.request(hz(300), origin: nil)
        let second = try cutoff.request(hz(400), origin: nil)
        #expect(runtime.engine.value(of: .filterCutoff) == before)  // nothing handed over while settling
        await clock.advance(by: .milliseconds(50))
        let loop = RenderLoop(engine: runtime.engine)
        defer { loop.stop() }
        #expect(await states(first) == ["pending(300.0)", "superseded(300.0)"])
        #expect(await states(second) == ["pending(400.0)", "applying(400.0)", "applied(400.0)"])
    }

    @Test func aScheduledValueWaitsForItsMomentAndItsTimeoutCountsFromThen() async throws {
        let (runtime, cutoff) = try makeRuntime(DeliveryConfiguration(deliveryTimeout: .milliseconds(100)))
        let started = ContinuousClock.now
        // No cycle runs: the value fails, but only once its moment plus the timeout passed.
        let moment = EngineTime(microseconds: EngineTime.now.microseconds + 300_000)
        let result = runtime.requestBatch([(cutoff, hz(700))], origin: nil, at: moment)
        let request = try #require(try result.first?.get())
        var last: ParameterUpdateState<ParameterValue>?
        for await state in request.states { last = state }
        #expect(last?.name == .failed)
        #expect(last?.reason?.contains("delivery timeout") == true)
        #expect(started.duration(to: .now) >= .milliseconds(400))
        #expect(try cutoff.currentValue() == hz(1_000))
    }
}
