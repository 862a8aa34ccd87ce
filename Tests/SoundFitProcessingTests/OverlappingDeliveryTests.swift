import SoundFitTestSupport
import Synchronization
import Testing
@testable import SoundFitProcessing

/// Continuous delivery to streaming applicators: several deliveries in flight, confirmations
/// ending in any order, superseded from the applicator, the bound, synchronization alone.
@Suite(.timeLimit(.minutes(1)))
struct OverlappingDeliveryTests {
    let clock = ManualClock()

    private func streamingParameter(_ engine: FakeStreamingEngine, config: DeliveryConfiguration = .default)
        -> (ProcessingParameter<Int>, ParameterApplicator<Int>)
    {
        let parameter = ProcessingParameter(0, config: config, clock: clock)
        let applicator = parameter.addStreamingApplicator { engine.submit($0) }
        return (parameter, applicator)
    }

    @Test func valuesAreHandedOverAtOnceInRequestOrderWithoutWaitingForTheOnesInFlight() async throws {
        let engine = FakeStreamingEngine()
        let (parameter, applicator) = streamingParameter(engine)
        let states = parameter.stateUpdates()

        let requests = try (1...5).map { try parameter.request($0) }

        // Synchronously, in the order accepted: nothing waited for a confirmation.
        #expect(engine.submitted == [1, 2, 3, 4, 5])
        #expect(parameter.bufferedValueCount == 5)
        #expect(await take(6, from: states).map(\.description)
                == ["applied(0)", "applying(1)", "applying(2)", "applying(3)", "applying(4)", "applying(5)"])

        engine.renderCycle()  // one cycle: only the latest was rendered

        for (index, request) in requests.dropLast().enumerated() {
            #expect(await allStates(request) == ["applying(\(index + 1))", "superseded(\(index + 1))"])
        }
        #expect(await allStates(requests[4]) == ["applying(5)", "applied(5)"])
        #expect(parameter.value == 5)
        #expect(parameter.isUpToDate(applicator))
        #expect(parameter.appliedRequestCount == 1)
    }

    @Test func confirmationsEndingOutOfOrderOnlyEverCommitANewerValue() async throws {
        let engine = FakeStreamingEngine()
        let (parameter, applicator) = streamingParameter(engine)
        let changes = parameter.changeUpdates()
        let values = parameter.valueUpdates()
        let first = try parameter.request(1)
        let second = try parameter.request(2)
        let third = try parameter.request(3)

        engine.settle(2, .success(()))  // the newest is confirmed first…
        #expect(await allStates(third) == ["applying(3)", "applied(3)"])
        #expect(parameter.value == 3)
        engine.settle(0, .success(()))  // …then the oldest, which really took effect too
        #expect(await allStates(first) == ["applying(1)", "applied(1)"])
        engine.settle(1, .failure(ProcessingParameterError.superseded))
        #expect(await allStates(second) == ["applying(2)", "superseded(2)"])

        // The value never went back: one change, to 3.
        #expect(parameter.value == 3)
        #expect(await take(2, from: values) == [0, 3])
        let change = await take(1, from: changes)[0]
        #expect(change.value == 3 && change.requestID == third.id)
        #expect(parameter.appliedRequestCount == 2)
        // The older confirmation did not overwrite what the applicator is known to hold.
        #expect(parameter.isUpToDate(applicator))
        // And nothing else changed afterwards.
        _ = try await parameter.request(3).terminalState()
        #expect(parameter.value == 3)
    }

    @Test func supersededFromTheApplicatorEndsTheRequestSupersededNotFailed() async throws {
        let engine = FakeStreamingEngine()
        let (parameter, applicator) = streamingParameter(engine)
        let older = Task { try await parameter.apply(1) }
        while engine.submitted.count < 1 { await Task.yield() }
        let newer = try parameter.request(2)

        engine.renderCycle()

        await #expect(throws: ProcessingParameterError.superseded) { try await older.value }
        #expect(await allStates(newer) == ["applying(2)", "applied(2)"])
        #expect(parameter.updateState.description == "applied(2)")
        #expect(parameter.value == 2)
        withExtendedLifetime(applicator) {}
    }

    @Test func atMostEightDeliveriesAreInFlightAndTheNewestValueWaits() async throws {
        let engine = FakeStreamingEngine()
        let (parameter, applicator) = streamingParameter(engine)
        var requests: [ParameterRequest<Int>] = []
        var mostBuffered = 0

        for value in 1...1_000 {
            requests.append(try parameter.request(value))
            mostBuffered = max(mostBuffered, parameter.bufferedValueCount)
        }

        #expect(engine.submitted == Array(1...8))
        #expect(mostBuffered == 9)  // eight in flight, one waiting: memory stays bounded
        for (index, request) in requests[8..<999].enumerated() {
            #expect(await allStates(request) == ["pending(\(index + 9))", "superseded(\(index + 9))"])
        }
        engine.renderCycle()  // 8 applied, 1…7 superseded; the waiting 1000 starts
        await waitUntil { engine.submitted.count == 9 }
        #expect(engine.submitted.last == 1_000)
        engine.renderCycle()

        #expect(await allStates(requests[999]) == ["pending(1000)", "applying(1000)", "applied(1000)"])
        #expect(await allStates(requests[7]) == ["applying(8)", "applied(8)"])
        #expect(await allStates(requests[0]) == ["applying(1)", "superseded(1)"])
        #expect(parameter.value == 1_000)
        #expect(engine.rendered == 1_000)
        await waitUntil { parameter.bufferedValueCount == 0 }
        withExtendedLifetime(applicator) {}
    }

    @Test func aFloodEndsWithExactlyOneTerminalStateEachAndTheLastValueApplied() async throws {
        let engine = FakeStreamingEngine()
        let (parameter, applicator) = streamingParameter(engine)
        let changes = parameter.changeUpdates()
        var requests: [ParameterRequest<Int>] = []
        var generator = SystemRandomNumberGenerator()

        for value in 1...3_000 {
            requests.append(try parameter.request(value))
            if Int.random(in: 0..<4, using: &generator) == 0 { engine.renderCycle() }
            if value % 64 == 0 { await yieldMany(5) }
        }
        while parameter.bufferedValueCount > 0 {
            engine.renderCycle()
            await Task.yield()
        }

        var terminal: [String: Int] = [:]
        var wrong: [String] = []
        var lastStates: [String] = []
        for request in requests {
            let states = await allStates(request)
            lastStates = states
            let ends = states.filter { $0.hasPrefix("applied") || $0.hasPrefix("superseded") || $0.hasPrefix("failed") }
            if ends.count != 1 || states.last != ends.first { wrong.append("\(request.value): \(states)") }
            if let end = ends.first { terminal[String(end.prefix { $0 != "(" }), default: 0] += 1 }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
        #expect(terminal["failed"] == nil)
        #expect(lastStates.last == "applied(3000)")
        #expect(parameter.value == 3_000)
        #expect(engine.rendered == 3_000)
        // The value only ever moved forward.
        var lastID: UInt64 = 0
        for await change in changes {
            #expect(change.requestID > lastID)
            lastID = change.requestID
            if change.value == 3_000 { break }
        }
        withExtendedLifetime(applicator) {}
    }

    @Test func aValueEqualToTheAppliedOneStillReachesAnApplicatorWithAnotherValueInFlight() async throws {
        let engine = FakeStreamingEngine()
        let (parameter, applicator) = streamingParameter(engine)
        let five = try parameter.request(5)
        engine.renderCycle()
        #expect(await allStates(five) == ["applying(5)", "applied(5)"])

        let seven = try parameter.request(7)  // in flight…
        let fiveAgain = try parameter.request(5)  // …so the applicator's 5 is no longer certain

        #expect(engine.submitted == [5, 7, 5])
        engine.renderCycle()
        #expect(await allStates(seven) == ["applying(7)", "superseded(7)"])
        #expect(await allStates(fiveAgain) == ["applying(5)", "applied(5)"])
        #expect(engine.rendered == 5)
        #expect(parameter.value == 5)
        #expect(parameter.isUpToDate(applicator))
    }

    @Test func anOlderFailureDoesNotUndoANewerApplication() async throws {
        let engine = FakeStreamingEngine()
        let (parameter, applicator) = streamingParameter(engine)
        let first = try parameter.request(1)
        let second = try parameter.request(2)

        engine.settle(1, .success(()))
        #expect(await allStates(second) == ["applying(2)", "applied(2)"])
        engine.settle(0, .failure(TestError("lost")))

        #expect(await allStates(first) == ["applying(1)", "failed(1, lost)"])
        #expect(parameter.value == 2)
        #expect(parameter.isUpToDate(applicator))
    }

    @Test func aNewerFailureLeavesTheApplicatorOutOfDateAndTheValueKept() async throws {
        let engine = FakeStreamingEngine()
        let (parameter, applicator) = streamingParameter(engine)
        let first = try parameter.request(1)
        let second = try parameter.request(2)

        engine.settle(0, .success(()))
        #expect(await allStates(first) == ["applying(1)", "applied(1)"])
        engine.settle(1, .failure(TestError("lost")))

        #expect(await allStates(second) == ["applying(2)", "failed(2, lost)"])
        #expect(parameter.value == 1)
        #expect(!parameter.isUpToDate(applicator))
    }

    @Test func aSequentialApplicatorOutOfDateKeepsDeliveriesOneAtATime() async throws {
        let engine = FakeStreamingEngine()
        let (parameter, streaming) = streamingParameter(engine)
        let gate = Gate()
        let calls = Recorder<Int>()
        let sequential = parameter.addApplicator { value in
            calls.record(value)
            await gate.wait()
        }

        let first = try parameter.request(1)
        let second = try parameter.request(2)

        #expect(parameter.bufferedValueCount == 2)
        #expect(parameter.updateState.description == "pending(2)")
        // In its turn: the streaming applicator is submitted to, then confirmed, then the next.
        await waitUntil { engine.submitted == [1] }
        engine.renderCycle()
        await calls.waitForCount(1)
        gate.open()
        #expect(await allStates(first) == ["applying(1)", "applied(1)"])
        await waitUntil { engine.submitted == [1, 2] }
        engine.renderCycle()
        #expect(await allStates(second) == ["pending(2)", "applying(2)", "applied(2)"])
        #expect(calls.events == [1, 2])
        withExtendedLifetime((streaming, sequential)) {}
    }

    @Test func synchronizationWaitsForAllDeliveriesInFlightAndRunsAlone() async throws {
        let engine = FakeStreamingEngine()
        let (parameter, streaming) = streamingParameter(engine)
        let first = try parameter.request(1)
        let second = try parameter.request(2)
        let calls = Recorder<String>()
        let late = parameter.addApplicator { value in calls.record("late \(value) with \(engine.submitted)") }
        let synchronization = Task { try await parameter.synchronizeApplicators() }
        await waitUntil { parameter.state.withLock { $0.machine.isSynchronizationRequested } }
        let third = try parameter.request(3)

        #expect(parameter.updateState.description == "pending(3)")
        engine.settle(0, .success(()))
        #expect(await allStates(first) == ["applying(1)", "applied(1)"])
        await yieldMany()
        #expect(calls.events.isEmpty)  // 2 is still in flight
        engine.settle(1, .success(()))
        try await synchronization.value

        // The synchronization brought `late` to the value, 2, before 3 was handed over to anyone.
        #expect(await allStates(second) == ["applying(2)", "applied(2)"])
        #expect(calls.events.first == "late 2 with [1, 2]")
        await waitUntil { engine.submitted == [1, 2, 3] }
        engine.renderCycle()
        #expect(await allStates(third) == ["pending(3)", "applying(3)", "applied(3)"])
        #expect(parameter.value == 3)
        withExtendedLifetime((streaming, late)) {}
    }

    @Test func discreteDeliveryHandsOverOneSettledValueAtATime() async throws {
        let engine = FakeStreamingEngine()
        let config = DeliveryConfiguration(deliveryStyle: .discrete(settleTime: .milliseconds(10)))
        let (parameter, applicator) = streamingParameter(engine, config: config)
        let first = try parameter.request(1)
        await clock.advance(by: .milliseconds(10))
        #expect(engine.submitted == [1])
        let second = try parameter.request(2)
        await clock.advance(by: .milliseconds(10))

        #expect(engine.submitted == [1])  // settled, but 1 is in flight
        engine.renderCycle()
        #expect(await allStates(first) == ["pending(1)", "applying(1)", "applied(1)"])
        await waitUntil { engine.submitted == [1, 2] }
        engine.renderCycle()
        #expect(await allStates(second) == ["pending(2)", "applying(2)", "applied(2)"])
        withExtendedLifetime(applicator) {}
    }

    @Test func closingFailsEveryDeliveryInFlight() async throws {
        let engine = FakeStreamingEngine()
        let (parameter, applicator) = streamingParameter(engine)
        let requests = try (1...3).map { try parameter.request($0) }

        parameter.close(throwing: TestError("closed"))
        engine.renderCycle()  // too late: the parameter no longer takes values

        for (index, request) in requests.enumerated() {
            #expect(await allStates(request) == ["applying(\(index + 1))", "failed(\(index + 1), closed)"])
        }
        #expect(parameter.value == 0)
        withExtendedLifetime(applicator) {}
    }

    @Test func aStreamingApplicatorThatThrowsOnSubmitFailsTheDelivery() async throws {
        let parameter = ProcessingParameter(0, clock: clock)
        let applicator = parameter.addStreamingApplicator { value -> ParameterApplicator<Int>.Confirmation in
            if value < 0 { throw TestError("refused") }
            return {}
        }

        #expect(await allStates(try parameter.request(-1)) == ["applying(-1)", "failed(-1, refused)"])
        #expect(await allStates(try parameter.request(4)) == ["applying(4)", "applied(4)"])
        #expect(parameter.value == 4)
        withExtendedLifetime(applicator) {}
    }
}

/// Waits (yielding) until `condition` holds.
func waitUntil(_ condition: () -> Bool) async {
    while !condition() { await Task.yield() }
}

