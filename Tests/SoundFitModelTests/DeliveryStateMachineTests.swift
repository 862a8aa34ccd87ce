import Testing
@testable import SoundFitModel

/// The pure delivery rules, without tasks or clocks.
@Suite struct DeliveryStateMachineTests {
    typealias Machine = DeliveryStateMachine<Int>

    /// A machine plus the overlap rule the parameter would give it: request `id` carries the
    /// value `id * 10`, and its delivery may overlap others when `id` is in `overlapping`.
    struct Harness {
        var machine: Machine
        var overlapping: Set<UInt64> = []
        /// How often the machine asked whether a value may overlap.
        var overlapQuestions = 0

        init(_ style: DeliveryConfiguration.DeliveryStyle, maximumOverlap: Int = Machine.defaultMaximumOverlap,
             overlapping: Set<UInt64> = []) {
            machine = Machine(style: style, maximumOverlap: maximumOverlap)
            self.overlapping = overlapping
        }

        private mutating func ask() -> (Int) -> Bool {
            let overlapping = overlapping
            return { value in overlapping.contains(UInt64(value / 10)) }
        }

        mutating func submit(_ id: UInt64, at now: Duration = .zero) -> String {
            let mayOverlap = ask()
            var questions = 0
            let transition = machine.submit(Machine.Request(id: id, value: Int(id) * 10), now: now) {
                questions += 1
                return mayOverlap($0)
            }
            overlapQuestions += questions
            return describe(transition)
        }

        mutating func finish(_ id: UInt64) -> String {
            describe(machine.jobFinished(.deliver(Machine.Request(id: id, value: Int(id) * 10)), mayOverlap: ask()))
        }

        mutating func finishSynchronization() -> String {
            describe(machine.jobFinished(.synchronize, mayOverlap: ask()))
        }

        mutating func fire(at deadline: Duration) -> String {
            describe(machine.timerFired(at: deadline, mayOverlap: ask()))
        }

        mutating func restyle(_ style: DeliveryConfiguration.DeliveryStyle) -> String {
            describe(machine.changeStyle(to: style, mayOverlap: ask()))
        }

        mutating func synchronize() -> String {
            describe(machine.requestSynchronization())
        }

        var inFlight: [UInt64] { machine.deliveries.map(\.id) }
    }

    private static func describe(_ transition: Machine.Transition) -> String {
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

    // MARK: One delivery in flight

    @Test func continuousDeliversAtOnceThenKeepsOnlyTheNewestWaitingValue() {
        var harness = Harness(.continuous)

        #expect(harness.submit(1) == "deliver 1")
        #expect(harness.submit(2) == "pending 2")
        #expect(harness.submit(3) == "superseded 2, pending 3")
        #expect(harness.machine.bufferedValueCount == 2)
        #expect(harness.machine.latestValue == 30)
        #expect(harness.finish(1) == "deliver 3")
        #expect(harness.machine.bufferedValueCount == 1)
        #expect(harness.finish(3) == "")
        #expect(harness.machine.bufferedValueCount == 0)
        #expect(harness.machine.latestValue == nil)
    }

    @Test func discreteDeliversAValueOnceItSettled() {
        var harness = Harness(.discrete(settleTime: .milliseconds(200)))

        #expect(harness.submit(1) == "pending 1, sleep until \(Duration.milliseconds(200))")
        #expect(harness.submit(2, at: .milliseconds(50)) == "superseded 1, pending 2")
        #expect(harness.fire(at: .milliseconds(200)) == "sleep until \(Duration.milliseconds(250))")
        #expect(harness.fire(at: .milliseconds(250)) == "deliver 2")
        #expect(harness.fire(at: .milliseconds(250)) == "")  // stale timer
    }

    @Test func aSettledValueWaitsForTheJobInFlight() {
        var harness = Harness(.discrete(settleTime: .milliseconds(10)))
        _ = harness.submit(1)
        #expect(harness.fire(at: .milliseconds(10)) == "deliver 1")
        #expect(harness.submit(2, at: .milliseconds(10)) == "pending 2, sleep until \(Duration.milliseconds(20))")

        #expect(harness.fire(at: .milliseconds(20)) == "")  // settled, 1 still in flight
        #expect(harness.finish(1) == "deliver 2")
    }

    @Test func synchronizationRunsBetweenJobsBeforeAWaitingValue() {
        var harness = Harness(.continuous)
        _ = harness.submit(1)
        #expect(harness.synchronize() == "")
        #expect(harness.synchronize() == "")  // shared
        _ = harness.submit(2)

        #expect(harness.finish(1) == "synchronize")
        #expect(harness.finishSynchronization() == "deliver 2")
        #expect(harness.synchronize() == "")  // 2 in flight
        #expect(harness.finish(2) == "synchronize")
    }

    @Test func switchingToContinuousMakesASettlingValueReady() {
        var harness = Harness(.discrete(settleTime: .seconds(1)))
        _ = harness.submit(1)

        #expect(harness.restyle(.continuous) == "deliver 1")
        #expect(harness.fire(at: .seconds(1)) == "")  // the old timer is stale
    }

    @Test func closingReturnsTheWaitingValueAndStartsNothing() {
        var harness = Harness(.continuous)
        _ = harness.submit(1)
        _ = harness.submit(2)
        _ = harness.synchronize()

        #expect(harness.machine.close()?.id == 2)
        #expect(harness.finish(1) == "")
        #expect(harness.machine.bufferedValueCount == 0)
    }

    // MARK: Overlapping deliveries

    @Test func overlappingDeliveriesStartAtOnceUpToTheBoundThenTheNewestWaits() {
        var harness = Harness(.continuous, maximumOverlap: 3, overlapping: Set(1...9))

        #expect(harness.submit(1) == "deliver 1")
        #expect(harness.submit(2) == "deliver 2")
        #expect(harness.submit(3) == "deliver 3")
        #expect(harness.submit(4) == "pending 4")  // the bound: 3 in flight
        #expect(harness.submit(5) == "superseded 4, pending 5")  // latest wins
        #expect(harness.machine.bufferedValueCount == 4)
        #expect(harness.machine.latestValue == 50)

        // Deliveries may end in any order; each frees a place.
        #expect(harness.finish(2) == "deliver 5")
        #expect(harness.inFlight == [1, 3, 5])
        #expect(harness.machine.latestValue == 50)
        #expect(harness.finish(5) == "")
        #expect(harness.finish(1) == "")
        #expect(harness.finish(3) == "")
        #expect(harness.machine.isIdle)
        #expect(harness.machine.bufferedValueCount == 0)
    }

    @Test func theDefaultBoundIsEightDeliveries() {
        var harness = Harness(.continuous, overlapping: Set(1...20))
        let started = (1...9).map { harness.submit($0) }

        #expect(started == (1...8).map { "deliver \($0)" } + ["pending 9"])
        #expect(harness.machine.bufferedValueCount == 9)
    }

    @Test func aValueThatCannotOverlapWaitsUntilNothingIsInFlight() {
        var harness = Harness(.continuous, overlapping: [1, 2, 4])
        _ = harness.submit(1)
        _ = harness.submit(2)

        #expect(harness.submit(3) == "pending 3")  // 3 may not overlap
        #expect(harness.finish(1) == "")
        #expect(harness.finish(2) == "deliver 3")
        // 3 runs alone: an overlapping value does not join it.
        #expect(harness.submit(4) == "pending 4")
        #expect(harness.finish(3) == "deliver 4")
    }

    @Test func aFirstDeliveryThatCannotOverlapIsJoinedByNothing() {
        var harness = Harness(.continuous, overlapping: [2])

        #expect(harness.submit(1) == "deliver 1")
        #expect(harness.submit(2) == "pending 2")
        #expect(harness.finish(1) == "deliver 2")
    }

    @Test func aNewerOverlappingValueReplacesAWaitingOneAndStarts() {
        var harness = Harness(.continuous, overlapping: [1, 2, 4])
        _ = harness.submit(1)
        _ = harness.submit(2)
        _ = harness.submit(3)  // waits: it may not overlap

        #expect(harness.submit(4) == "superseded 3, deliver 4")
        #expect(harness.inFlight == [1, 2, 4])
    }

    @Test func synchronizationWaitsForEveryOverlappingDeliveryAndHoldsNewValuesBack() {
        var harness = Harness(.continuous, overlapping: Set(1...9))
        _ = harness.submit(1)
        _ = harness.submit(2)

        #expect(harness.synchronize() == "")
        #expect(harness.submit(3) == "pending 3")  // no new delivery while one is requested
        #expect(harness.finish(2) == "")
        #expect(harness.finish(1) == "synchronize")
        #expect(harness.submit(4) == "superseded 3, pending 4")  // nothing joins a synchronization
        #expect(harness.finishSynchronization() == "deliver 4")
        #expect(harness.submit(5) == "deliver 5")
    }

    @Test func discreteDeliveryKeepsOneInFlightEvenWhenValuesMayOverlap() {
        var harness = Harness(.discrete(settleTime: .milliseconds(10)), overlapping: Set(1...9))
        _ = harness.submit(1)
        #expect(harness.fire(at: .milliseconds(10)) == "deliver 1")
        _ = harness.submit(2, at: .milliseconds(10))

        #expect(harness.fire(at: .milliseconds(20)) == "")  // settled, but 1 is in flight
        #expect(harness.finish(1) == "deliver 2")
    }

    @Test func switchingToDiscreteLetsOverlappingDeliveriesFinishAndStartsNoNewOneBesideThem() {
        var harness = Harness(.continuous, overlapping: Set(1...9))
        _ = harness.submit(1)
        _ = harness.submit(2)
        #expect(harness.restyle(.discrete(settleTime: .milliseconds(10))) == "")

        #expect(harness.submit(3) == "pending 3, sleep until \(Duration.milliseconds(10))")
        #expect(harness.fire(at: .milliseconds(10)) == "")
        #expect(harness.finish(1) == "")
        #expect(harness.finish(2) == "deliver 3")
    }

    @Test func switchingToContinuousLetsAReadyValueJoinOverlappingDeliveries() {
        var harness = Harness(.continuous, overlapping: Set(1...9))
        _ = harness.submit(1)
        _ = harness.restyle(.discrete(settleTime: .milliseconds(10)))
        _ = harness.submit(2)

        #expect(harness.restyle(.continuous) == "deliver 2")
        #expect(harness.inFlight == [1, 2])
    }

    @Test func whetherAValueMayOverlapIsAskedOnlyWhenItWouldStart() {
        var harness = Harness(.continuous, maximumOverlap: 2, overlapping: Set(1...9))
        _ = harness.submit(1)  // idle: asked, to know whether others may join it
        _ = harness.submit(2)  // joins: asked
        _ = harness.submit(3)  // the bound: not asked
        #expect(harness.overlapQuestions == 2)
    }

    @Test func closingWithSeveralInFlightReturnsTheWaitingValueAndStartsNothing() {
        var harness = Harness(.continuous, maximumOverlap: 2, overlapping: Set(1...9))
        _ = harness.submit(1)
        _ = harness.submit(2)
        _ = harness.submit(3)

        #expect(harness.machine.close()?.id == 3)
        #expect(harness.finish(2) == "")
        #expect(harness.finish(1) == "")
        #expect(harness.machine.bufferedValueCount == 0)
    }
}
