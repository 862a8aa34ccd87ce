import SoundFitTestSupport
import SoundFitModel
import Testing
@testable import SoundFitProcessing

/// Session interruptions: forced disable, nested reasons, enabling rejected, restore.
@Suite(.timeLimit(.minutes(1)))
struct InterruptionTests {
    let clock = ManualClock()

    private func activeSession(enabled: Bool) async throws -> (ProcessingController, ProcessingSession, FakeHandler) {
        let handler = FakeHandler(techLevel: techLevel3)
        let controller = ProcessingController(handler: handler, clock: clock)
        let session = try await controller.activate(configuration: .fineTuning(techLevel: techLevel3))
        try await session.isEnabled.apply(enabled)
        handler.clearWrites()
        return (controller, session, handler)
    }

    @Test("What a client can make the session remember is bounded: 16 reasons of at most 128 bytes")
    func interruptionReasonsAreBounded() async throws {
        let (_, session, _) = try await activeSession(enabled: true)
        await #expect(throws: ProcessingError.interruptionReasonTooLong(bytes: 16384)) {
            try await session.interrupt(reason: String(repeating: "x", count: 16384))
        }
        for index in 0..<16 { _ = try await session.interrupt(reason: "reason \(index)") }
        await #expect(throws: ProcessingError.tooManyInterruptions) { try await session.interrupt(reason: "one more") }
        #expect(try await session.interrupt(reason: "reason 3") == true, "an active reason can be given again")
        #expect(session.interruptionReasons.count == 16)
        #expect(try await session.resolve(interruption: "reason 0") == true)
        #expect(try await session.interrupt(reason: "one more") == true)
    }

    @Test func nestedInterruptionsDisableOnceAndRestoreAfterTheLastResolve() async throws {
        let (_, session, handler) = try await activeSession(enabled: true)
        let values = session.isEnabled.valueUpdates()

        #expect(try await session.interrupt(reason: "hearing test") == true)
        #expect(handler.writes == ["isEnabled(false)"])
        #expect(session.isEnabled.value == false)

        #expect(try await session.interrupt(reason: "calibration") == true)
        #expect(try await session.interrupt(reason: "calibration") == true)  // already active
        #expect(handler.writes == ["isEnabled(false)"])  // no second write
        #expect(session.interruptionReasons == ["hearing test", "calibration"])

        #expect(try await session.resolve(interruption: "hearing test") == true)
        #expect(try await session.resolve(interruption: "not active") == true)
        #expect(session.isEnabled.value == false)
        #expect(handler.writes == ["isEnabled(false)"])

        #expect(try await session.resolve(interruption: "calibration") == false)
        #expect(session.isEnabled.value == true)
        #expect(handler.writes == ["isEnabled(false)", "isEnabled(true)"])
        #expect(handler.processor.isEnabled)
        #expect(await take(3, from: values) == [true, false, true])
    }

    @Test func enablingWhileInterruptedIsRejected() async throws {
        let (_, session, handler) = try await activeSession(enabled: true)
        _ = try await session.interrupt(reason: "call")

        #expect(throws: ProcessingError.interrupted) { try session.isEnabled.request(true) }
        await #expect(throws: ProcessingError.interrupted) { try await session.isEnabled.apply(true) }
        try await session.isEnabled.apply(false)  // disabling is allowed (and changes nothing)

        #expect(handler.writes == ["isEnabled(false)"])
        #expect(try await session.resolve(interruption: "call") == false)
        #expect(session.isEnabled.value == true)  // the value from before the interruption
    }

    @Test func aSessionThatWasDisabledStaysDisabled() async throws {
        let (_, session, handler) = try await activeSession(enabled: false)

        #expect(try await session.interrupt(reason: "call") == true)
        #expect(try await session.resolve(interruption: "call") == false)

        #expect(session.isEnabled.value == false)
        #expect(handler.writes.isEmpty)  // the handler already had false
    }

    @Test func theValueRequestedBeforeTheInterruptionIsRestored() async throws {
        let (_, session, handler) = try await activeSession(enabled: false)
        let slow = Gate()
        let reached = Gate()
        handler.holdNextWrite(at: slow, reached: reached)
        let enabling = try session.isEnabled.request(true)
        await reached.wait()

        let interruption = Task { try await session.interrupt(reason: "call") }
        while !session.isInterrupted { await Task.yield() }
        slow.open()
        #expect(try await interruption.value == true)
        #expect(await allStates(enabling) == ["applying(true)", "applied(true)"])
        #expect(session.isEnabled.value == false)

        #expect(try await session.resolve(interruption: "call") == false)
        #expect(session.isEnabled.value == true)
    }

    @Test func interruptionsOutliveTheSession() async throws {
        let (controller, session, handler) = try await activeSession(enabled: true)
        _ = try await session.interrupt(reason: "call")
        await controller.deactivate()
        await #expect(throws: ProcessingError.sessionInactive) { try await session.interrupt(reason: "other") }

        let next = try await controller.activate(configuration: .fineTuning(techLevel: techLevel3))

        #expect(next.isInterrupted)
        #expect(next.isEnabled.value == false)
        #expect(throws: ProcessingError.interrupted) { try next.isEnabled.request(true) }
        #expect(try await next.resolve(interruption: "call") == false)
        #expect(next.isEnabled.value == true)
        #expect(handler.processor.isEnabled)
    }

    @Test func theStateMachineRemembersTheValueOfTheFirstInterruption() {
        var state = InterruptionState()

        #expect(state.interrupt(reason: "a") == .disable)
        state.valueBeforeInterruption = true
        #expect(state.interrupt(reason: "b") == .none)
        #expect(state.interrupt(reason: "a") == .none)
        #expect(state.resolve(reason: "x") == .none)
        #expect(state.resolve(reason: "a") == .none)
        #expect(state.isInterrupted)
        #expect(state.resolve(reason: "b") == .restore(true))
        #expect(!state.isInterrupted)
        #expect(state.valueBeforeInterruption == nil)
        #expect(state.resolve(reason: "b") == .none)
        #expect(state.interrupt(reason: "c") == .disable)
        #expect(state.resolve(reason: "c") == .restore(false))  // nothing remembered: stay off
    }
}
