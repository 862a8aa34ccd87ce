import Synchronization
import SoundFitModel

/// The parameter's locked state, the carrying out of delivery transitions, and the jobs (the
/// apply sequence and synchronization) that run applicators.
extension ProcessingParameter {
    struct ApplicatorEntry {
        let id: UInt64
        weak var applicator: ParameterApplicator<Value>?
        /// The last value this applicator applied successfully; nil when unknown (new, failed,
        /// or invalidated).
        var appliedValue: Value?
        /// Bumped by invalidation, so a delivery that started before cannot mark it up to date.
        var generation: UInt64 = 0

        mutating func invalidate() {
            appliedValue = nil
            generation &+= 1
        }
    }

    /// An out-of-date applicator, held strongly while a job runs.
    struct Target: Sendable {
        let applicator: ParameterApplicator<Value>
        let generation: UInt64
    }

    /// What a delivery or synchronization does, fixed when it starts (under the lock).
    struct DeliveryPlan: Sendable {
        let value: Value
        /// The out-of-date applicators, in the order they were added; empty: nothing to apply.
        let targets: [Target]
        let deadline: Duration
        let timeout: Duration
    }

    struct State {
        /// The value of the newest request every out-of-date applicator applied, and what the
        /// change feed last carried.
        var committed: CommittedValue<Value>
        var value: Value { committed.value }
        var updateState: ParameterUpdateState<Value>
        var config: DeliveryConfiguration
        var machine: Machine
        var applicators: [ApplicatorEntry] = []
        /// Where each request that has not ended reports its states, and its origin.
        var requests = OpenRequests<Value>()
        var nextRequestID: UInt64 = 0
        var nextApplicatorID: UInt64 = 0
        /// Requests that ended `applied`.
        var appliedRequestCount = 0
        var closeError: (any Error)?
        /// Awaited between taking a request's value and reporting it `applied` (see
        /// `ProcessingParameter.persistAppliedValues(with:)`).
        var persistence: (@Sendable () async -> Void)?
        /// The task of the job in flight.
        var jobTask: Task<Void, Never>?
        var timerTask: Task<Void, Never>?
        /// Callers of `synchronizeApplicators()` waiting for the next synchronization job...
        var waitingSynchronizations: [CheckedContinuation<Void, any Error>] = []
        /// ...and those the running one will resume.
        var runningSynchronizations: [CheckedContinuation<Void, any Error>] = []

        init(value: Value, config: DeliveryConfiguration) {
            self.committed = CommittedValue(value)
            self.updateState = .applied(value)
            self.config = config
            self.machine = Machine(style: config.deliveryStyle)
        }

        /// The live applicators out of date for `value`, in the order they were added. Forgets
        /// the ones whose handle was dropped.
        mutating func outOfDateTargets(for value: Value) -> [Target] {
            applicators.removeAll { $0.applicator == nil }
            return applicators.compactMap { entry in
                guard entry.appliedValue != value, let applicator = entry.applicator else { return nil }
                return Target(applicator: applicator, generation: entry.generation)
            }
        }

        /// `target` applied `value`.
        mutating func markApplied(_ value: Value, by target: Target) {
            guard let index = applicators.firstIndex(where: { $0.id == target.applicator.id }),
                  applicators[index].generation == target.generation else { return }
            applicators[index].appliedValue = value
        }

        /// `target` failed: its state is unknown.
        mutating func markUnknown(_ target: Target) {
            guard let index = applicators.firstIndex(where: { $0.id == target.applicator.id }) else { return }
            applicators[index].appliedValue = nil
        }
    }

    /// Session parameters have one sequential applicator path: their deliveries never overlap.
    static var neverOverlaps: (Value) -> Bool { { _ in false } }

    func accept<Reported: Sendable>(_ value: Value, origin: RequestOrigin?, in state: inout State,
                                    reportedAs convert: @escaping @Sendable (Value) -> Reported) throws -> ParameterRequest<Reported> {
        try checkAcceptable(value, in: state)
        state.nextRequestID += 1
        let id = state.nextRequestID
        let stream = state.requests.open(id, origin: origin, reportedAs: convert)
        perform(state.machine.submit(.init(id: id, value: value), now: clock.now(), mayOverlap: Self.neverOverlaps), in: &state)
        return ParameterRequest(id: id, address: address, value: convert(value), states: stream)
    }

    /// Why `value` would not be accepted now: the parameter was closed, or `validate` rejects it.
    func checkAcceptable(_ value: Value, in state: State) throws {
        if let error = state.closeError { throw error }
        try validator?(value)
    }

    /// Carries out a machine transition. Called with the lock held, so states are reported in
    /// the order the transitions happened; starts tasks but runs no applicator.
    func perform(_ transition: Machine.Transition, in state: inout State) {
        if let request = transition.superseded {
            report(.superseded(request.value), for: request.id, in: &state)
        }
        if let request = transition.pending {
            report(.pending(request.value), for: request.id, in: &state)
        }
        if let job = transition.start {
            start(job, in: &state)
        }
        if let deadline = transition.sleepUntil {
            state.timerTask = Task { [clock] in
                do { try await clock.sleep(deadline) } catch { return }
                self.state.withLock { state in
                    self.perform(state.machine.timerFired(at: deadline, mayOverlap: Self.neverOverlaps), in: &state)
                }
            }
        }
    }

    /// Publishes a state: to the parameter's stream, and to the request's own stream (which
    /// finishes after a terminal state).
    func report(_ update: ParameterUpdateState<Value>, for id: UInt64?, in state: inout State) {
        state.updateState = update
        states.yield(update)
        if let id { state.requests.report(update, to: id) }
    }

    /// Starts a job the machine put in flight. A delivery finds its out-of-date applicators
    /// now and reports `applying`.
    private func start(_ job: Machine.Job, in state: inout State) {
        let work: @Sendable () async -> Void
        switch job {
        case .synchronize:
            state.runningSynchronizations = state.waitingSynchronizations
            state.waitingSynchronizations = []
            work = { await self.synchronize() }
        case .deliver(let request):
            let plan = planDelivery(request.value, requestID: request.id, in: &state)
            work = { await self.deliver(request, plan) }
        }
        state.jobTask = Task {
            await work()
            self.state.withLock { state in
                state.jobTask = nil
                self.perform(state.machine.jobFinished(job, mayOverlap: Self.neverOverlaps), in: &state)
            }
        }
    }

    /// Finds the applicators out of date for `value` and reports `applying` when there are any.
    private func planDelivery(_ value: Value, requestID: UInt64?, in state: inout State) -> DeliveryPlan {
        let targets = state.outOfDateTargets(for: value)
        let timeout = state.config.deliveryTimeout
        if !targets.isEmpty { report(.applying(value), for: requestID, in: &state) }
        return DeliveryPlan(value: value, targets: targets, deadline: clock.now() + timeout, timeout: timeout)
    }

    /// Takes `value` as the parameter's value.
    private func commit(_ value: Value, requestID: UInt64, in state: inout State) {
        if state.committed.take(value, requestID: requestID) { values.yield(value) }
    }

    /// Tells the change feed (value feedback to subscribers, the state keeper, LISTENing
    /// WebSockets) about the value `requestID` took, once that value is persisted: only if it is
    /// still the value in effect (a newer request that took its value announces that one) and
    /// the feed does not carry it already.
    private func announce(requestID: UInt64, in state: inout State) {
        guard let value = state.committed.announcement(for: requestID) else { return }
        changes.yield(ParameterChange(address: address, value: value, requestID: requestID,
                                      origin: state.requests.origin(of: requestID)))
    }

    /// The apply sequence for one requested value, as planned when it started.
    private func deliver(_ request: Machine.Request, _ plan: DeliveryPlan) async {
        let value = request.value
        if let error = await applyInTurn(plan, untilFirstError: true) {
            state.withLock { state in
                let superseded = state.closeError == nil && error as? ProcessingParameterError == .superseded
                report(superseded ? .superseded(value) : .failed(value, state.closeError ?? error), for: request.id, in: &state)
            }
            return
        }
        let persistence = state.withLock { state -> (@Sendable () async -> Void)?? in
            if let error = state.closeError {
                report(.failed(value, error), for: request.id, in: &state)
                return nil
            }
            commit(value, requestID: request.id, in: &state)
            return .some(state.persistence)
        }
        guard let persistence else { return }
        // Taken, so a snapshot of the state has it; announced and reported only once it is
        // persisted ("applied", and its feedback, survive a `kill -9`).
        if let persistence { await persistence() }
        state.withLock { state in
            announce(requestID: request.id, in: &state)
            state.appliedRequestCount += 1
            report(.applied(value), for: request.id, in: &state)
        }
    }

    /// Applies the current value to every out-of-date applicator (nothing else is in flight).
    private func synchronize() async {
        let plan = state.withLock { state -> DeliveryPlan? in
            guard state.closeError == nil else { return nil }
            let plan = planDelivery(state.value, requestID: nil, in: &state)
            return plan.targets.isEmpty ? nil : plan
        }
        let firstError = if let plan { await applyInTurn(plan, untilFirstError: false) } else { nil as (any Error)? }
        let (waiters, error) = state.withLock { state -> ([CheckedContinuation<Void, any Error>], (any Error)?) in
            let error = state.closeError ?? firstError
            if let plan {
                report(error.map { .failed(plan.value, $0) } ?? .applied(plan.value), for: nil, in: &state)
            }
            defer { state.runningSynchronizations = [] }
            return (state.runningSynchronizations, error)
        }
        for waiter in waiters {
            if let error { waiter.resume(throwing: error) } else { waiter.resume() }
        }
    }

    /// Applies `plan`'s value to its targets one after the other and records who applied it;
    /// returns the first error, at once when `untilFirstError` (the targets not reached keep
    /// what they had), else after trying every target. A cancelled job (closed) stops.
    private func applyInTurn(_ plan: DeliveryPlan, untilFirstError: Bool) async -> (any Error)? {
        var firstError: (any Error)?
        for target in plan.targets {
            if Task.isCancelled { return firstError ?? CancellationError() }
            do {
                try await bounded(target, plan) { try await target.applicator.apply(plan.value) }
                state.withLock { $0.markApplied(plan.value, by: target) }
            } catch {
                // One that was superseded did not change what it holds.
                if error as? ProcessingParameterError != .superseded { state.withLock { $0.markUnknown(target) } }
                firstError = firstError ?? error
                if untilFirstError { break }
            }
        }
        return firstError
    }

    /// One applicator call, bounded by the applicator's own timeout and by the delivery's
    /// deadline, whichever ends first (the applicator's own timeout wins a tie). It runs in a
    /// `race` against the deadline (a task of its own and a timer), so one that never returns
    /// cannot hold the delivery.
    private func bounded(_ target: Target, _ plan: DeliveryPlan,
                         _ operation: @escaping @Sendable () async throws -> Void) async throws {
        var deadline = plan.deadline
        var timeoutError = ProcessingParameterError.deliveryTimeoutExceeded(plan.timeout)
        if let applyTimeout = target.applicator.applyTimeout {
            let ownDeadline = clock.now() + applyTimeout
            if ownDeadline <= plan.deadline {
                deadline = ownDeadline
                timeoutError = .applyTimeoutExceeded(applyTimeout, applicator: target.applicator.name)
            }
        }
        try await race(deadline: deadline, clock: clock, timeoutError: timeoutError, operation)
    }
}
