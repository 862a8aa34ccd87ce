import Synchronization
import SoundFitModel
import SoundFitEngine

/// A kernel parameter (filter, ring modulator, output gain) and its one path to the audio
/// thread. A value is validated once, against its entry, when it is accepted; handed to the
/// engine's mailbox (alone, or in the caller's `EngineBatch`); and reported from the audio
/// thread's exact acknowledgement: `applied` once the cycle that took it is acknowledged (and,
/// with persistence, journaled), `superseded` when the audio thread went straight to a newer
/// value, `failed` when no cycle took it in time (the mailbox gets the kept value back).
///
/// Delivery follows the runtime's configuration through `DeliveryStateMachine`: continuous
/// hands each value over as it arrives, up to `maximumOverlap` in flight (beyond that the
/// newest waits, superseding an older waiting one); discrete hands a value over once it
/// settled, one at a time. A value with a time (an OSC bundle's timetag) is scheduled in the
/// engine for that moment, and its timeout counts from then.
///
/// Thread rules: any thread except the audio thread. Requests are synchronous and reach the
/// mailbox in the order they were accepted; the lock is never held across a wait.
final class KernelParameter: ControlParameter {
    typealias Machine = DeliveryStateMachine<ParameterValue>

    let descriptor: ParameterDescriptor
    /// The engine slot the entry is bound to.
    let slot: EngineSlot
    private let engine: AudioEngine
    private let clock: DeliveryClock
    private let feed: ChangeFeed
    private let turn: HandOverTurn
    private let state: Mutex<State>

    private struct State {
        /// The value of the newest request the audio thread applied, and what the change feed
        /// last carried.
        var committed: CommittedValue<ParameterValue>
        var value: ParameterValue { committed.value }
        var updateState: ParameterUpdateState<ParameterValue>
        var config: DeliveryConfiguration
        var machine: Machine
        /// What the engine runs as far as this parameter knows: the value of the last
        /// acknowledged hand-over; nil when unknown (new, a value in flight, a failure, an
        /// invalidation). A request for this value is applied without a hand-over.
        var engineValue: ParameterValue?
        /// Bumped by invalidation, so a hand-over that started before cannot mark the engine current.
        var engineGeneration: UInt64 = 0
        /// The order of the hand-over that last changed `engineValue`: an older one that ends
        /// late cannot overwrite a newer one's record.
        var engineOrder: UInt64 = 0
        var handOvers: UInt64 = 0
        var requests = OpenRequests<ParameterValue>()
        var nextRequestID: UInt64 = 0
        /// Awaited between taking a value and reporting it `applied` (the state keeper's journal).
        var persistence: (@Sendable () async -> Void)?
        var timerTask: Task<Void, Never>?
        var waitingSynchronizations: [CheckedContinuation<Void, Never>] = []
        var runningSynchronizations: [CheckedContinuation<Void, Never>] = []
    }

    /// How a value reached the engine.
    private enum HandOver: Sendable {
        case published(Result<EngineSubmission, EngineError>)
        /// At `position` in a batch its caller publishes.
        case batched(EngineBatch, position: Int)
    }

    /// `descriptor` is a kernel entry of the model (bound to an engine slot); `turn` is shared
    /// by every kernel parameter of the runtime and its batches.
    init(_ descriptor: ParameterDescriptor, engine: AudioEngine, config: DeliveryConfiguration,
         clock: DeliveryClock, feed: ChangeFeed, turn: HandOverTurn) {
        guard let slot = descriptor.binding?.engineSlot else { preconditionFailure("\(descriptor.address) is not bound to an engine slot") }
        self.descriptor = descriptor
        self.slot = slot
        self.engine = engine
        self.clock = clock
        self.feed = feed
        self.turn = turn
        let value = engine.value(of: slot)
        state = Mutex(State(committed: CommittedValue(value), updateState: .applied(value), config: config,
                            machine: Machine(style: config.deliveryStyle)))
    }

    deinit {
        state.withLock { $0.requests.finishAll() }
    }

    // MARK: ControlParameter

    func currentValue() throws -> ParameterValue { state.withLock { $0.value } }

    func currentUpdateState() throws -> ParameterUpdateState<ParameterValue> { state.withLock { $0.updateState } }

    func check(_ value: ParameterValue) throws { try descriptor.validate(value) }

    func request(_ value: ParameterValue, origin: RequestOrigin?) throws -> ParameterRequest<ParameterValue> {
        try turn.take { try request(value, origin: origin, at: nil, joining: nil, checked: false) }
    }

    /// Accepts `value` to take effect at `time` (nil: now); when it is handed over at once and
    /// `batch` is for the same moment, it joins the batch (the caller publishes it, holding the
    /// `HandOverTurn`). Throws `ParameterError` for a value its entry refuses, unless `checked`:
    /// the caller's `check(_:)` accepted it just before, and the entry does not change.
    func request(_ value: ParameterValue, origin: RequestOrigin?, at time: EngineTime?,
                 joining batch: EngineBatch?, checked: Bool) throws -> ParameterRequest<ParameterValue> {
        if !checked { try descriptor.validate(value) }
        let (id, states) = state.withLock { state in
            state.nextRequestID += 1
            let id = state.nextRequestID
            let states = state.requests.open(id, origin: origin) { $0 }
            perform(state.machine.submit(.init(id: id, value: value, time: time), now: clock.now(), mayOverlap: Self.overlaps),
                    batch: batch, in: &state)
            return (id, states)
        }
        return ParameterRequest(id: id, address: descriptor.address, value: value, states: states)
    }

    // MARK: Runtime

    /// The delivery style and timeout (the runtime's). Switching to continuous hands a settling
    /// value over at once; a new timeout applies to hand-overs from then on.
    var config: DeliveryConfiguration {
        get { state.withLock { $0.config } }
        set {
            state.withLock { state in
                state.config = newValue
                perform(state.machine.changeStyle(to: newValue.deliveryStyle, mayOverlap: Self.overlaps), batch: nil, in: &state)
            }
        }
    }

    /// Makes every request wait for `persist` before it is reported `applied` (the durable
    /// state's journal: "applied" survives a `kill -9`). It never fails a request.
    func persistAppliedValues(with persist: (@Sendable () async -> Void)?) {
        state.withLock { $0.persistence = persist }
    }

    /// The engine lost, or may have lost, the value (a server gone, or back).
    func invalidateEngine() {
        state.withLock { state in
            state.engineValue = nil
            state.engineGeneration &+= 1
        }
    }

    /// Hands the current value to the engine when it may not run it, after the deliveries in
    /// flight and before a waiting value; returns when acknowledged or failed (reported as the
    /// parameter's update state, no request's).
    func synchronizeEngine() async {
        await withCheckedContinuation { continuation in
            state.withLock { state in
                state.waitingSynchronizations.append(continuation)
                perform(state.machine.requestSynchronization(), batch: nil, in: &state)
            }
        }
    }

    /// Requests not ended yet, and the values held for delivery (in flight plus the waiting
    /// one): both stay within `Machine.defaultMaximumOverlap + 1` however fast values arrive.
    var openRequestCount: Int { state.withLock { $0.requests.count } }
    var bufferedValueCount: Int { state.withLock { $0.machine.bufferedValueCount } }
    /// Whether a synchronization waits for the deliveries in flight (tests).
    var isSynchronizationRequested: Bool { state.withLock { $0.machine.isSynchronizationRequested } }

    // MARK: Delivery

    /// Every kernel delivery may overlap the others: the engine resolves each exactly.
    private static var overlaps: (ParameterValue) -> Bool { { _ in true } }

    /// Carries out a machine transition, under the lock, so states are reported in the order
    /// the transitions happened and values reach the mailbox in acceptance order.
    private func perform(_ transition: Machine.Transition, batch: EngineBatch?, in state: inout State) {
        if let request = transition.superseded { report(.superseded(request.value), for: request.id, in: &state) }
        if let request = transition.pending { report(.pending(request.value), for: request.id, in: &state) }
        if let job = transition.start { start(job, batch: batch, in: &state) }
        if let deadline = transition.sleepUntil {
            state.timerTask = Task { [clock] in
                do { try await clock.sleep(deadline) } catch { return }
                self.state.withLock { state in
                    self.perform(state.machine.timerFired(at: deadline, mayOverlap: Self.overlaps), batch: nil, in: &state)
                }
            }
        }
    }

    private func start(_ job: Machine.Job, batch: EngineBatch?, in state: inout State) {
        let work: @Sendable () async -> Void
        switch job {
        case .synchronize:
            state.runningSynchronizations = state.waitingSynchronizations
            state.waitingSynchronizations = []
            let handOver = state.engineValue == state.value ? nil : handOver(state.value, at: nil, batch: nil, in: &state)
            if handOver != nil { report(.applying(state.value), for: nil, in: &state) }
            let value = state.value
            work = { await self.synchronize(value, handOver) }
        case .deliver(let request):
            if state.engineValue == request.value {
                work = { await self.take(request) }  // the engine runs it already
            } else {
                report(.applying(request.value), for: request.id, in: &state)
                let handOver = handOver(request.value, at: request.time, batch: batch, in: &state)
                work = { await self.confirm(request, handOver) }
            }
        }
        Task {
            await work()
            self.state.withLock { state in
                self.perform(state.machine.jobFinished(job, mayOverlap: Self.overlaps), batch: nil, in: &state)
            }
        }
    }

    /// What one hand-over needs after the lock: how the value went, its order, and its deadline.
    private struct Tracked: Sendable {
        let handOver: HandOver
        let order: UInt64
        let generation: UInt64
        let deadline: ContinuousClock.Instant
        let timeout: Duration
    }

    /// Publishes (or schedules, or adds to `batch`) `value`; the engine's state is unknown until
    /// it is acknowledged.
    private func handOver(_ value: ParameterValue, at time: EngineTime?, batch: EngineBatch?, in state: inout State) -> Tracked {
        let handOver: HandOver
        if let batch, let position = batch.add(slot, value, at: time) {
            handOver = .batched(batch, position: position)
        } else {
            handOver = .published(Result { () throws(EngineError) in try engine.submit(validated: [(slot, value)], at: time) })
        }
        state.handOvers += 1
        state.engineValue = nil
        state.engineOrder = state.handOvers
        let timeout = state.config.deliveryTimeout
        // A scheduled change cannot take effect before its time: its timeout counts from then.
        let deadline = ContinuousClock.now + Self.delay(until: time) + timeout
        return Tracked(handOver: handOver, order: state.handOvers, generation: state.engineGeneration,
                       deadline: deadline, timeout: timeout)
    }

    /// Waits for the audio thread's acknowledgement of a hand-over. On failure the scheduled
    /// batch is taken back and the kept value restored (only where nothing newer was
    /// published since, so a failed value never undoes a newer one in flight).
    private func acknowledge(_ value: ParameterValue, _ tracked: Tracked) async -> ParameterUpdateState<ParameterValue> {
        var submission: EngineSubmission?
        do {
            switch tracked.handOver {
            case .published(let result): submission = try result.get()
            case .batched(let batch, let position): submission = try await batch.submission(at: position)
            }
            if let submission { try await engine.waitUntilApplied(submission, by: tracked.deadline) }
            return .applied(value)
        } catch EngineError.superseded {
            return .superseded(value)
        } catch {
            if let submission {
                engine.cancel(submission)
                engine.restore([(slot, state.withLock { $0.value })], replacing: submission)
            }
            let timedOut = ContinuousClock.now >= tracked.deadline
            return .failed(value, timedOut ? ProcessingParameterError.deliveryTimeoutExceeded(tracked.timeout) : error)
        }
    }

    private func confirm(_ request: Machine.Request, _ tracked: Tracked) async {
        let outcome = await acknowledge(request.value, tracked)
        guard case .applied = outcome else {
            state.withLock { state in
                if case .failed = outcome, tracked.order >= state.engineOrder {
                    state.engineValue = nil
                    state.engineOrder = tracked.order
                }
                report(outcome, for: request.id, in: &state)
            }
            return
        }
        state.withLock { state in markEngine(running: request.value, tracked, in: &state) }
        await take(request)
    }

    /// The engine runs `request`'s value: the parameter takes it (unless a newer request's value
    /// was taken first), the journal has it, then the change is announced and the request is
    /// reported applied.
    private func take(_ request: Machine.Request) async {
        let persistence = state.withLock { state in
            state.committed.take(request.value, requestID: request.id)
            return state.persistence
        }
        if let persistence { await persistence() }
        state.withLock { state in
            if let value = state.committed.announcement(for: request.id) {
                feed.yield(ParameterChange(address: descriptor.address, value: value, requestID: request.id,
                                           origin: state.requests.origin(of: request.id)))
            }
            report(.applied(request.value), for: request.id, in: &state)
        }
    }

    private func synchronize(_ value: ParameterValue, _ tracked: Tracked?) async {
        if let tracked {
            let outcome = await acknowledge(value, tracked)
            state.withLock { state in
                if case .applied = outcome { markEngine(running: value, tracked, in: &state) }
                report(outcome, for: nil, in: &state)
            }
        }
        let waiters = state.withLock { state in
            defer { state.runningSynchronizations = [] }
            return state.runningSynchronizations
        }
        for waiter in waiters { waiter.resume() }
    }

    private func markEngine(running value: ParameterValue, _ tracked: Tracked, in state: inout State) {
        guard tracked.generation == state.engineGeneration, tracked.order >= state.engineOrder else { return }
        state.engineValue = value
        state.engineOrder = tracked.order
    }

    /// Publishes a state as the parameter's, and to the request's own stream (which finishes
    /// after a terminal state).
    private func report(_ update: ParameterUpdateState<ParameterValue>, for id: UInt64?, in state: inout State) {
        state.updateState = update
        if let id { state.requests.report(update, to: id) }
    }

    /// How long from now until `time` (zero for "now" and for a moment already past).
    private static func delay(until time: EngineTime?) -> Duration {
        guard let time else { return .zero }
        let seconds = time.seconds(since: .now)
        return seconds > 0 ? .microseconds(Int64(seconds * 1e6)) : .zero
    }
}

/// The order in which kernel values reach the mailbox: a request, or a whole batch (an OSC
/// bundle, a patch) from its first value to its publication, holds the turn, so a value
/// accepted after another is never published before it.
final class HandOverTurn: Sendable {
    private let lock = Mutex(())

    func take<Result>(_ body: () throws -> Result) rethrows -> Result {
        try lock.withLock { _ in try body() }
    }
}
