import SoundFitTestSupport
import Synchronization
import SoundFitModel
import Testing
@testable import SoundFitProcessing

/// Seed 001's value application sequence, applicators, timeouts, weak removal, synchronize.
@Suite(.timeLimit(.minutes(1)))
struct ApplySequenceTests {
    let clock = ManualClock()

    @Test func withoutApplicatorsTheValueIsTakenAtOnce() async throws {
        let parameter = ProcessingParameter(1, clock: clock)
        let states = parameter.stateUpdates()
        let values = parameter.valueUpdates()

        let request = try parameter.request(2)

        #expect(await allStates(request) == ["applied(2)"])
        #expect(parameter.value == 2)
        #expect(await take(2, from: states).map(\.description) == ["applied(1)", "applied(2)"])
        #expect(await take(2, from: values) == [1, 2])
    }

    @Test func oneApplicatorAppliesBeforeTheValueChanges() async throws {
        let parameter = ProcessingParameter(1, clock: clock)
        let states = parameter.stateUpdates()
        let seen = Recorder<String>()
        let applicator = parameter.addApplicator { value in
            // The parameter still has its old value while the applicator works.
            seen.record("apply \(value) while value is \(parameter.value)")
        }

        try await parameter.apply(2)

        #expect(seen.events == ["apply 2 while value is 1"])
        #expect(parameter.value == 2)
        #expect(parameter.isUpToDate(applicator))
        #expect(await take(3, from: states).map(\.description) == ["applied(1)", "applying(2)", "applied(2)"])
    }

    @Test func severalApplicatorsApplyInTheOrderTheyWereAdded() async throws {
        let parameter = ProcessingParameter("a", clock: clock)
        let calls = Recorder<String>()
        let first = parameter.addApplicator { calls.record("first \($0)") }
        let second = parameter.addApplicator { calls.record("second \($0)") }
        let third = parameter.addApplicator { calls.record("third \($0)") }

        let request = try parameter.request("b")

        #expect(await allStates(request) == ["applying(b)", "applied(b)"])
        #expect(calls.events == ["first b", "second b", "third b"])
        #expect([first, second, third].allSatisfy(parameter.isUpToDate))
    }

    @Test func upToDateApplicatorsAreNotAskedAgain() async throws {
        let parameter = ProcessingParameter(1, clock: clock)
        let calls = Recorder<Int>()
        let applicator = parameter.addApplicator { calls.record($0) }
        try await parameter.apply(2)

        let again = try parameter.request(2)

        #expect(await allStates(again) == ["applied(2)"])
        #expect(calls.events == [2])
        withExtendedLifetime(applicator) {}
    }

    @Test func aFailureAbandonsTheSequenceAndKeepsTheValue() async throws {
        let parameter = ProcessingParameter(1, clock: clock)
        let calls = Recorder<String>()
        let failing = Atomic(false)
        let first = parameter.addApplicator { calls.record("first \($0)") }
        let second = parameter.addApplicator { value in
            calls.record("second \(value)")
            if failing.load(ordering: .relaxed) { throw TestError("second failed") }
        }
        let third = parameter.addApplicator { calls.record("third \($0)") }
        try await parameter.synchronizeApplicators()
        #expect(calls.events == ["first 1", "second 1", "third 1"])
        failing.store(true, ordering: .relaxed)
        let states = parameter.stateUpdates()

        await #expect(throws: TestError("second failed")) { try await parameter.apply(2) }

        #expect(calls.events.suffix(2) == ["first 2", "second 2"])  // third was not reached
        #expect(parameter.value == 1)
        #expect(await take(3, from: states).map(\.description)
                == ["applied(1)", "applying(2)", "failed(2, second failed)"])
        let failed = parameter.updateState
        #expect(failed.value == 2)
        #expect(failed.error as? TestError == TestError("second failed"))
        // first holds 2 (not the current value), second is unknown, third still holds 1.
        #expect(!parameter.isUpToDate(first))
        #expect(!parameter.isUpToDate(second))
        #expect(parameter.isUpToDate(third))

        failing.store(false, ordering: .relaxed)
        try await parameter.synchronizeApplicators()

        #expect(calls.events.suffix(2) == ["first 1", "second 1"])  // the failed one is retried
        #expect([first, second, third].allSatisfy(parameter.isUpToDate))
        #expect(calls.events.count == 7)
    }

    @Test func anApplicatorExceedingItsTimeoutFailsTheSequenceAtExactlyTheTimeout() async throws {
        let parameter = ProcessingParameter(1, clock: clock)
        let stuck = Gate()
        let called = Gate()
        let applicator = parameter.addApplicator(applyTimeout: .milliseconds(500)) { _ in
            called.open()
            await stuck.wait()  // never returns in time, ignores cancellation
        }
        let request = try parameter.request(2)
        await called.wait()

        await clock.advance(by: .milliseconds(499))
        #expect(parameter.updateState.description == "applying(2)")
        await clock.advance(by: .milliseconds(1))
        let states = await allStates(request)

        #expect(clock.elapsed == .milliseconds(500))
        #expect(states == ["applying(2)", "failed(2, \(ProcessingParameterError.applyTimeoutExceeded(.milliseconds(500))))"])
        #expect(parameter.updateState.error as? ProcessingParameterError == .applyTimeoutExceeded(.milliseconds(500)))
        #expect(parameter.value == 1)
        #expect(!parameter.isUpToDate(applicator))
        stuck.open()
    }

    @Test func droppingTheHandleRemovesTheApplicator() async throws {
        let parameter = ProcessingParameter(1, clock: clock)
        let calls = Recorder<Int>()
        var applicator: ParameterApplicator<Int>? = parameter.addApplicator { calls.record($0) }
        try await parameter.apply(2)
        #expect(calls.events == [2])

        applicator = nil
        let request = try parameter.request(3)

        #expect(applicator == nil)
        #expect(await allStates(request) == ["applied(3)"])  // no applicator left: taken at once
        #expect(calls.events == [2])
    }

    @Test func aNewApplicatorIsOutOfDateUntilSynchronized() async throws {
        let parameter = ProcessingParameter(1, clock: clock)
        try await parameter.apply(5)
        let calls = Recorder<Int>()
        let applicator = parameter.addApplicator { calls.record($0) }
        #expect(!parameter.isUpToDate(applicator))
        #expect(calls.events.isEmpty)  // adding does not apply
        let states = parameter.stateUpdates()

        try await parameter.synchronizeApplicators()
        try await parameter.synchronizeApplicators()  // nothing out of date: no call, no state

        #expect(calls.events == [5])
        #expect(parameter.isUpToDate(applicator))
        #expect(await take(3, from: states).map(\.description) == ["applied(5)", "applying(5)", "applied(5)"])
        #expect(parameter.updateState.description == "applied(5)")
    }

    @Test func invalidatingAnApplicatorMakesSynchronizeApplyAgain() async throws {
        let parameter = ProcessingParameter(1, clock: clock)
        let calls = Recorder<String>()
        let first = parameter.addApplicator { calls.record("first \($0)") }
        let second = parameter.addApplicator { calls.record("second \($0)") }
        try await parameter.synchronizeApplicators()

        parameter.invalidate(second)
        try await parameter.synchronizeApplicators()

        #expect(calls.events == ["first 1", "second 1", "second 1"])
        #expect(parameter.isUpToDate(first) && parameter.isUpToDate(second))
    }

    @Test func applicatorsMayBeLongRunning() async throws {
        let parameter = ProcessingParameter(1, clock: clock)
        let applicator = parameter.addApplicator(applyTimeout: .seconds(5)) { _ in
            try await clock.sleep(until: clock.now.advanced(by: .seconds(3)), tolerance: nil)
        }
        let request = try parameter.request(2)
        while clock.sleeperCount < 2 { await Task.yield() }  // the applicator and its timeout

        await clock.advance(by: .seconds(3))

        #expect(await allStates(request) == ["applying(2)", "applied(2)"])
        withExtendedLifetime(applicator) {}
    }

    @Test func loadFetchesARemoteValueThenAppliesIt() async throws {
        let parameter = ProcessingParameter(1, clock: clock, load: { current in current * 10 })
        let calls = Recorder<Int>()
        let applicator = parameter.addApplicator { calls.record($0) }
        #expect(parameter.isRemote)

        try await parameter.load()

        #expect(parameter.value == 10)
        #expect(calls.events == [10])
        await #expect(throws: ProcessingParameterError.notRemote) {
            try await ProcessingParameter(1, clock: clock).load()
        }
        withExtendedLifetime(applicator) {}
    }

    @Test func aRejectedValueReportsNothing() async throws {
        let parameter = ProcessingParameter(1, clock: clock, validate: { value in
            if value < 0 { throw TestError("negative") }
        })
        let states = parameter.stateUpdates()

        #expect(throws: TestError("negative")) { try parameter.request(-1) }
        try await parameter.apply(3)

        #expect(await take(2, from: states).map(\.description) == ["applied(1)", "applied(3)"])
    }
}
