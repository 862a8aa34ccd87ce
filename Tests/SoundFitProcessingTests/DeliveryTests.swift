import SoundFitTestSupport
import SoundFitModel
import Testing
@testable import SoundFitProcessing

/// Continuous and discrete delivery, supersede, bounded buffering, delivery timeout.
@Suite(.timeLimit(.minutes(1)))
struct DeliveryTests {
    let clock = ManualClock()

    @Test func discreteDeliveryAppliesOnlyTheSettledValueOfABurst() async throws {
        let parameter = ProcessingParameter(0, config: DeliveryConfiguration(deliveryStyle: .discrete()), clock: clock)
        let calls = Recorder<String>()
        let applicator = parameter.addApplicator { [clock] value in calls.record("\(value) at \(clock.elapsed)") }
        var requests: [ParameterRequest<Int>] = []

        // 50 values within 100 ms: one every 2 ms, the last at 98 ms.
        for value in 1...50 {
            requests.append(try parameter.request(value))
            #expect(parameter.bufferedValueCount <= 2)
            if value < 50 { await clock.advance(by: .milliseconds(2)) }
        }
        #expect(clock.elapsed == .milliseconds(98))

        await clock.advance(by: .milliseconds(199))  // 297 ms: not settled yet
        #expect(calls.events.isEmpty)
        #expect(parameter.value == 0)
        await clock.advance(by: .milliseconds(1))  // 298 ms = last value + settle time
        let last = await allStates(requests[49])

        #expect(last == ["pending(50)", "applying(50)", "applied(50)"])
        #expect(calls.events == ["50 at \(Duration.milliseconds(298))"])
        #expect(parameter.value == 50)
        for (index, request) in requests.dropLast().enumerated() {
            #expect(await allStates(request) == ["pending(\(index + 1))", "superseded(\(index + 1))"])
        }
        await clock.advance(by: .seconds(1))
        #expect(calls.events.count == 1)  // exactly once
        withExtendedLifetime(applicator) {}
    }

    @Test func discreteDeliveryWaitsForTheNewestValueToSettle() async throws {
        let parameter = ProcessingParameter(0, config: DeliveryConfiguration(deliveryStyle: .discrete(settleTime: .milliseconds(100))),
                                            clock: clock)
        let first = try parameter.request(1)
        await clock.advance(by: .milliseconds(60))
        let second = try parameter.request(2)

        await clock.advance(by: .milliseconds(99))  // 159 ms: the first deadline (100 ms) passed, 2 not settled
        #expect(parameter.value == 0)
        await clock.advance(by: .milliseconds(1))  // 160 ms

        #expect(await allStates(first) == ["pending(1)", "superseded(1)"])
        #expect(await allStates(second) == ["pending(2)", "applied(2)"])
        #expect(parameter.value == 2)
    }

    @Test func continuousDeliverySupersedesUnderAFloodWithBoundedBuffering() async throws {
        let parameter = ProcessingParameter(0, clock: clock)
        let slow = Gate()
        let calls = Recorder<Int>()
        let applicator = parameter.addApplicator { value in
            calls.record(value)
            await slow.wait()
        }
        var requests: [ParameterRequest<Int>] = []
        requests.reserveCapacity(10_000)
        var mostBuffered = 0

        for value in 1...10_000 {
            requests.append(try parameter.request(value))
            mostBuffered = max(mostBuffered, parameter.bufferedValueCount)
        }
        #expect(mostBuffered == 2)  // one in flight, one waiting, never more
        slow.open()

        #expect(await allStates(requests[9_999]) == ["pending(10000)", "applying(10000)", "applied(10000)"])
        #expect(await allStates(requests[0]) == ["applying(1)", "applied(1)"])
        var wrong: [String] = []
        for (index, request) in requests[1..<9_999].enumerated() {
            let states = await allStates(request)
            if states != ["pending(\(index + 2))", "superseded(\(index + 2))"] { wrong.append("\(index + 2): \(states)") }
        }
        #expect(wrong.isEmpty)
        #expect(calls.events == [1, 10_000])
        #expect(parameter.value == 10_000)
        #expect(parameter.bufferedValueCount == 0)
        withExtendedLifetime(applicator) {}
    }

    @Test func aValueArrivingDuringADeliveryIsPendingThenDelivered() async throws {
        let parameter = ProcessingParameter(0, clock: clock)
        let delivery = DeliveryHold()
        let calls = Recorder<Int>()
        let applicator = parameter.addApplicator { value in
            calls.record(value)
            if value == 1 { await delivery.hold() }
        }
        let first = try parameter.request(1)
        await delivery.reached()
        let second = try parameter.request(2)
        #expect(parameter.updateState.description == "pending(2)")

        delivery.release()

        #expect(await allStates(first) == ["applying(1)", "applied(1)"])
        #expect(await allStates(second) == ["pending(2)", "applying(2)", "applied(2)"])
        #expect(calls.events == [1, 2])
        withExtendedLifetime(applicator) {}
    }

    @Test func anApplicatorThatNeverReturnsFailsWithTheDeliveryTimeout() async throws {
        let config = DeliveryConfiguration(deliveryTimeout: .seconds(2))
        let parameter = ProcessingParameter(0, config: config, clock: clock)
        let never = Gate()
        let called = Gate()
        // Its own timeout (5 s) is longer than the delivery timeout: the delivery timeout wins.
        let applicator = parameter.addApplicator(applyTimeout: .seconds(5)) { _ in
            called.open()
            await never.wait()
        }
        let request = try parameter.request(1)
        await called.wait()

        await clock.advance(by: .milliseconds(1_999))
        #expect(parameter.updateState.description == "applying(1)")
        await clock.advance(by: .milliseconds(1))

        #expect(await allStates(request) == ["applying(1)", "failed(1, \(ProcessingParameterError.deliveryTimeoutExceeded(.seconds(2))))"])
        #expect(parameter.updateState.error as? ProcessingParameterError == .deliveryTimeoutExceeded(.seconds(2)))
        #expect(parameter.value == 0)
        await #expect(throws: ProcessingParameterError.deliveryTimeoutExceeded(.seconds(2))) {
            let retry = Task { try await parameter.apply(1) }
            await called.wait()
            while clock.sleeperCount == 0 { await Task.yield() }
            await clock.advance(by: .seconds(2))
            try await retry.value
        }
        never.open()
        withExtendedLifetime(applicator) {}
    }

    @Test func applyThrowsSupersededWhenANewerValueWins() async throws {
        let parameter = ProcessingParameter(0, config: DeliveryConfiguration(deliveryStyle: .discrete()), clock: clock)
        let older = Task { try await parameter.apply(1) }
        while parameter.bufferedValueCount == 0 { await Task.yield() }
        let newer = try parameter.request(2)

        await #expect(throws: ProcessingParameterError.superseded) { try await older.value }
        await clock.advance(by: .milliseconds(200))
        #expect(await allStates(newer) == ["pending(2)", "applied(2)"])
    }

    @Test func switchingToContinuousDeliversASettlingValueAtOnce() async throws {
        let parameter = ProcessingParameter(0, config: DeliveryConfiguration(deliveryStyle: .discrete()), clock: clock)
        let request = try parameter.request(1)

        parameter.config = DeliveryConfiguration(deliveryStyle: .continuous)

        #expect(await allStates(request) == ["pending(1)", "applied(1)"])
        #expect(clock.elapsed == .zero)
    }

    @Test func aNewSettleTimeAppliesToLaterValues() async throws {
        let parameter = ProcessingParameter(0, config: DeliveryConfiguration(deliveryStyle: .discrete()), clock: clock)
        parameter.config = DeliveryConfiguration(deliveryStyle: .discrete(settleTime: .milliseconds(20)))
        let request = try parameter.request(1)

        await clock.advance(by: .milliseconds(20))

        #expect(await allStates(request) == ["pending(1)", "applied(1)"])
    }

    @Test func synchronizationWaitsForTheDeliveryInFlight() async throws {
        let parameter = ProcessingParameter(0, clock: clock)
        let delivery = DeliveryHold()
        let calls = Recorder<String>()
        let first = parameter.addApplicator { value in
            calls.record("first \(value)")
            await delivery.hold()
        }
        let request = try parameter.request(1)
        await delivery.reached()
        let second = parameter.addApplicator { calls.record("second \($0)") }
        let synchronization = Task { try await parameter.synchronizeApplicators() }
        await yieldMany()
        #expect(calls.events == ["first 1"])  // not while the delivery is in flight

        delivery.release()
        try await synchronization.value

        #expect(await allStates(request) == ["applying(1)", "applied(1)"])
        #expect(calls.events == ["first 1", "second 1"])
        withExtendedLifetime((first, second)) {}
    }
}
