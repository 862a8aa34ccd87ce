import Testing
@testable import SoundFitProcessing

/// The pure delivery rules, without tasks or clocks.
@Suite struct DeliveryStateMachineTests {
    typealias Machine = DeliveryStateMachine<Int>

    private func request(_ id: UInt64) -> Machine.Request { Machine.Request(id: id, value: Int(id) * 10) }

    private func describe(_ transition: Machine.Transition) -> String {
        var parts: [String] = []
        if let request = transition.superseded { parts.append("superseded \(request.id)") }
        if let request = transition.pending { parts.append("pending \(request.id)") }
        switch transition.start {
        case .deliver(let request): parts.append("deliver \(request.id)")
        case .synchronize: parts.append("synchronize")
        case nil: break
        }
        if let deadline = transition.sleepUntil { parts.append("sleep until \(deadline)") }
        return parts.joined(separator: ", ")
    }

    @Test func continuousDeliversAtOnceThenKeepsOnlyTheNewestWaitingValue() {
        var machine = Machine(style: .continuous)

        #expect(describe(machine.submit(request(1), now: .zero)) == "deliver 1")
        #expect(describe(machine.submit(request(2), now: .zero)) == "pending 2")
        #expect(describe(machine.submit(request(3), now: .zero)) == "superseded 2, pending 3")
        #expect(machine.bufferedValueCount == 2)
        #expect(machine.latestValue == 30)
        #expect(describe(machine.jobFinished()) == "deliver 3")
        #expect(machine.bufferedValueCount == 1)
        #expect(describe(machine.jobFinished()) == "")
        #expect(machine.bufferedValueCount == 0)
        #expect(machine.latestValue == nil)
    }

    @Test func discreteDeliversAValueOnceItSettled() {
        var machine = Machine(style: .discrete(settleTime: .milliseconds(200)))

        #expect(describe(machine.submit(request(1), now: .zero))
                == "pending 1, sleep until \(Duration.milliseconds(200))")
        #expect(describe(machine.submit(request(2), now: .milliseconds(50))) == "superseded 1, pending 2")
        #expect(describe(machine.timerFired(at: .milliseconds(200))) == "sleep until \(Duration.milliseconds(250))")
        #expect(describe(machine.timerFired(at: .milliseconds(250))) == "deliver 2")
        #expect(describe(machine.timerFired(at: .milliseconds(250))) == "")  // stale timer
    }

    @Test func aSettledValueWaitsForTheJobInFlight() {
        var machine = Machine(style: .discrete(settleTime: .milliseconds(10)))
        _ = machine.submit(request(1), now: .zero)
        #expect(describe(machine.timerFired(at: .milliseconds(10))) == "deliver 1")
        #expect(describe(machine.submit(request(2), now: .milliseconds(10)))
                == "pending 2, sleep until \(Duration.milliseconds(20))")

        #expect(describe(machine.timerFired(at: .milliseconds(20))) == "")  // settled, 1 still in flight
        #expect(describe(machine.jobFinished()) == "deliver 2")
    }

    @Test func synchronizationRunsBetweenJobsBeforeAWaitingValue() {
        var machine = Machine(style: .continuous)
        _ = machine.submit(request(1), now: .zero)
        #expect(describe(machine.requestSynchronization()) == "")
        #expect(describe(machine.requestSynchronization()) == "")  // shared
        _ = machine.submit(request(2), now: .zero)

        #expect(describe(machine.jobFinished()) == "synchronize")
        #expect(describe(machine.jobFinished()) == "deliver 2")
        #expect(describe(machine.requestSynchronization()) == "")  // 2 in flight
        #expect(describe(machine.jobFinished()) == "synchronize")
    }

    @Test func switchingToContinuousMakesASettlingValueReady() {
        var machine = Machine(style: .discrete(settleTime: .seconds(1)))
        _ = machine.submit(request(1), now: .zero)

        #expect(describe(machine.changeStyle(to: .continuous)) == "deliver 1")
        #expect(describe(machine.timerFired(at: .seconds(1))) == "")  // the old timer is stale
    }

    @Test func closingReturnsTheWaitingValueAndStartsNothing() {
        var machine = Machine(style: .continuous)
        _ = machine.submit(request(1), now: .zero)
        _ = machine.submit(request(2), now: .zero)
        _ = machine.requestSynchronization()

        #expect(machine.close()?.id == 2)
        #expect(describe(machine.jobFinished()) == "")
        #expect(machine.bufferedValueCount == 0)
    }
}
