import Synchronization

/// The parameter's locked state, the carrying out of delivery transitions, and the jobs (the
/// apply sequence and synchronization) that run applicators.
extension ProcessingParameter {
    struct ApplicatorEntry {
        let id: UInt64
        weak var applicator: ParameterApplicator<Value>?
        /// The last value this applicator applied successfully; nil when unknown (new, failed,
        /// invalidated).
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

    struct State {
        var value: Value
        var updateState: ParameterUpdateState<Value>
        var config: ProcessingConfig
        var machine: Machine
        var applicators: [ApplicatorEntry] = []
        /// The states stream of each request that has not ended.
        var reporters: [UInt64: AsyncStream<ParameterUpdateState<Value>>.Continuation] = [:]
        var nextRequestID: UInt64 = 0
        var nextApplicatorID: UInt64 = 0
        /// Requests that ended `applied`.
        var appliedRequestCount = 0
        var closeError: (any Error)?
        var jobTask: Task<Void, Never>?
        var timerTask: Task<Void, Never>?
        /// Callers of `synchronizeApplicators()` waiting for the next synchronization job...
        var waitingSynchronizations: [CheckedContinuation<Void, any Error>] = []
        /// ...and those the running one will resume.
        var runningSynchronizations: [CheckedContinuation<Void, any Error>] = []

        init(value: Value, config: ProcessingConfig) {
            self.value = value
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

        mutating func markApplied(_ value: Value, by target: Target) {
            guard let index = applicators.firstIndex(where: { $0.id == target.applicator.id }),
                  applicators[index].generation == target.generation else { return }
            applicators[index].appliedValue = value
        }

        mutating func markUnknown(_ target: Target) {
            guard let index = applicators.firstIndex(where: { $0.id == target.applicator.id }) else { return }
            applicators[index].appliedValue = nil
        }
    }

    func accept(_ value: Value, in state: inout State) throws -> ParameterRequest<Value> {
        if let error = state.closeError { throw error }
        try validator?(value)
        state.nextRequestID += 1
        let id = state.nextRequestID
        let (stream, reporter) = AsyncStream.makeStream(of: ParameterUpdateState<Value>.self)
        state.reporters[id] = reporter
        perform(state.machine.submit(.init(id: id, value: value), now: clock.now()), in: &state)
        return ParameterRequest(id: id, value: value, states: stream)
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
            if case .synchronize = job {
                state.runningSynchronizations = state.waitingSynchronizations
                state.waitingSynchronizations = []
            }
            state.jobTask = Task { await self.run(job) }
        }
        if let deadline = transition.sleepUntil {
            state.timerTask = Task { [clock] in
                do { try await clock.sleep(deadline) } catch { return }
                self.state.withLock { state in
                    self.perform(state.machine.timerFired(at: deadline), in: &state)
                }
            }
        }
    }

    /// Publishes a state: to the parameter's stream, and to the request's own stream (which
    /// finishes after a terminal state).
    func report(_ update: ParameterUpdateState<Value>, for id: UInt64?, in state: inout State) {
        state.updateState = update
        states.yield(update)
        guard let id, let reporter = state.reporters[id] else { return }
        reporter.yield(update)
        if update.isTerminal {
            reporter.finish()
            state.reporters[id] = nil
        }
    }

    /// Takes `value` as the parameter's value; `requestID` names the request that made it.
    private func commit(_ value: Value, requestID: UInt64, in state: inout State) {
        guard state.value != value else { return }
        state.value = value
        values.yield(value)
        changes.yield(ParameterChange(value: value, requestID: requestID))
    }

    private func run(_ job: Machine.Job) async {
        switch job {
        case .deliver(let request): await deliver(request)
        case .synchronize: await synchronize()
        }
        state.withLock { state in
            state.jobTask = nil
            perform(state.machine.jobFinished(), in: &state)
        }
    }

    /// The apply sequence for one requested value.
    private func deliver(_ request: Machine.Request) async {
        let value = request.value
        let start = state.withLock { state -> (targets: [Target], deadline: Duration, timeout: Duration)? in
            if let error = state.closeError {
                report(.failed(value, error), for: request.id, in: &state)
                return nil
            }
            let targets = state.outOfDateTargets(for: value)
            guard !targets.isEmpty else {
                commit(value, requestID: request.id, in: &state)
                state.appliedRequestCount += 1
                report(.applied(value), for: request.id, in: &state)
                return nil
            }
            report(.applying(value), for: request.id, in: &state)
            let timeout = state.config.deliveryTimeout
            return (targets, clock.now() + timeout, timeout)
        }
        guard let start else { return }
        for target in start.targets {
            do {
                try Task.checkCancellation()
                try await apply(value, with: target, deliveryDeadline: start.deadline, deliveryTimeout: start.timeout)
                state.withLock { $0.markApplied(value, by: target) }
            } catch {
                state.withLock { state in
                    state.markUnknown(target)
                    report(.failed(value, state.closeError ?? error), for: request.id, in: &state)
                }
                return
            }
        }
        state.withLock { state in
            if let error = state.closeError {
                report(.failed(value, error), for: request.id, in: &state)
                return
            }
            commit(value, requestID: request.id, in: &state)
            state.appliedRequestCount += 1
            report(.applied(value), for: request.id, in: &state)
        }
    }

    /// Applies the current value to every out-of-date applicator.
    private func synchronize() async {
        let start = state.withLock { state -> (value: Value, targets: [Target], deadline: Duration, timeout: Duration)? in
            guard state.closeError == nil else { return nil }
            let targets = state.outOfDateTargets(for: state.value)
            guard !targets.isEmpty else { return nil }
            report(.applying(state.value), for: nil, in: &state)
            let timeout = state.config.deliveryTimeout
            return (state.value, targets, clock.now() + timeout, timeout)
        }
        var firstError: (any Error)?
        if let start {
            for target in start.targets {
                if Task.isCancelled {
                    firstError = firstError ?? CancellationError()
                    break  // closed: the ones not reached keep what they had
                }
                do {
                    try await apply(start.value, with: target, deliveryDeadline: start.deadline,
                                    deliveryTimeout: start.timeout)
                    state.withLock { $0.markApplied(start.value, by: target) }
                } catch {
                    state.withLock { $0.markUnknown(target) }
                    firstError = firstError ?? error
                }
            }
        }
        let (waiters, error) = state.withLock { state -> ([CheckedContinuation<Void, any Error>], (any Error)?) in
            let error = state.closeError ?? firstError
            if let start {
                report(error.map { .failed(start.value, $0) } ?? .applied(start.value), for: nil, in: &state)
            }
            defer { state.runningSynchronizations = [] }
            return (state.runningSynchronizations, error)
        }
        for waiter in waiters {
            if let error { waiter.resume(throwing: error) } else { waiter.resume() }
        }
    }

    /// One applicator call, bounded by its own timeout and by the delivery's deadline,
    /// whichever ends first (the applicator's own timeout wins a tie).
    private func apply(_ value: Value, with target: Target, deliveryDeadline: Duration,
                       deliveryTimeout: Duration) async throws {
        var deadline = deliveryDeadline
        var timeoutError = ProcessingParameterError.deliveryTimeoutExceeded(deliveryTimeout)
        if let applyTimeout = target.applicator.applyTimeout {
            let ownDeadline = clock.now() + applyTimeout
            if ownDeadline <= deliveryDeadline {
                deadline = ownDeadline
                timeoutError = .applyTimeoutExceeded(applyTimeout)
            }
        }
        let apply = target.applicator.apply
        try await race(deadline: deadline, clock: clock, timeoutError: timeoutError) { try await apply(value) }
    }
}
