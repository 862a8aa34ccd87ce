import Synchronization
import SoundFitModel

/// One value that only counts as changed when everything that must apply it did: the
/// processing session's `isEnabled`, `intensity` and `preset` (seed 001's processing
/// parameters). Kernel parameters (filter, ring modulator, gain) take their own, shorter path
/// to the audio engine (`SoundFitRuntime`'s `KernelParameter`).
///
/// A parameter has a current `value` (the value of the newest request every out-of-date
/// applicator applied), an `updateState`, streams of both, and applicators (`addApplicator`).
/// New values go through `request(_:)` (per-request states, for remote control surfaces) or
/// `apply(_:)` (await the outcome). Both follow the apply sequence:
///
/// 1. The out-of-date applicators are found (see below) when the delivery starts.
/// 2. If there are none, the value is taken at once: state `applied`.
/// 3. Otherwise the state is `applying` and each out-of-date applicator, in the order they
///    were added, is asked to apply the value, one after the other.
/// 4. The first applicator that throws or exceeds its `applyTimeout` (or the delivery timeout)
///    abandons the sequence: state `failed(value, error)`, the parameter keeps its value — or
///    `superseded(value)` when it threw `ProcessingParameterError.superseded`.
/// 5. When all succeeded the parameter takes the value: state `applied`.
///
/// **Out of date.** An applicator is out of date for a value unless the last value it applied
/// successfully is that value. So: a new applicator is out of date (until a delivery or
/// `synchronizeApplicators()` reaches it); after a successful sequence every applicator is up
/// to date; after a failed one, the applicator that failed is out of date (its state is
/// unknown), the ones that were not reached keep what they had, and the ones that applied the
/// failed value are out of date for the current value (a `synchronizeApplicators()` brings them
/// back to it, the next successful delivery moves everyone on). `invalidate(_:)` marks an
/// applicator out of date on request (e.g. after its processor restarted).
///
/// **Delivery.** Requests are scheduled by the `config`'s delivery style
/// (`DeliveryStateMachine`), with at most one waiting value per parameter; a newer value
/// supersedes the waiting one (latest wins), and in discrete delivery a value is delivered only
/// after it settled. One delivery (or synchronization) is in flight at a time. Memory stays
/// bounded however fast values arrive.
///
/// Thread rules: every member may be called from any thread or task (not the audio thread);
/// state is protected by a lock that is never held while applicators run. Applicators run in
/// tasks the parameter starts, one delivery at a time.
public final class ProcessingParameter<Value: Sendable & Equatable>: Sendable {
    typealias Machine = DeliveryStateMachine<Value>

    /// The parameter's address in the parameter model (empty for a parameter outside it); its
    /// requests and changes carry it.
    public let address: String
    let state: Mutex<State>
    let clock: DeliveryClock
    let validator: (@Sendable (Value) throws -> Void)?
    private let loader: (@Sendable (Value) async throws -> Value)?
    let values = Subscribers<Value>()
    let changes = Subscribers<ParameterChange<Value>>()
    let states = Subscribers<ParameterUpdateState<Value>>()

    /// Creates a parameter with `initialValue`, state `applied(initialValue)` and no applicators.
    ///
    /// - Parameters:
    ///   - config: delivery style and timeout (a controller keeps its parameters' configs in sync).
    ///   - clock: the clock for settle times and timeouts; a virtual clock in tests.
    ///   - validate: rejects a value before it is accepted (`request` and `apply` rethrow, no
    ///     state is reported). Runs under the parameter's lock: it must be fast and must not
    ///     call back into this parameter.
    ///   - load: makes the parameter remote: `load()` calls it with the current value to fetch
    ///     a new value (e.g. from a server or a preset source), then applies that.
    ///   - address: the parameter's address in the parameter model, if it has one.
    public init(
        _ initialValue: Value,
        address: String = "",
        config: DeliveryConfiguration = .default,
        clock: any Clock<Duration> = ContinuousClock(),
        validate: (@Sendable (Value) throws -> Void)? = nil,
        load: (@Sendable (Value) async throws -> Value)? = nil
    ) {
        self.address = address
        self.state = Mutex(State(value: initialValue, config: config))
        self.clock = DeliveryClock(clock)
        self.validator = validate
        self.loader = load
    }

    deinit {
        state.withLock { $0.requests.finishAll() }
    }

    // MARK: Observing

    /// The current value: the last value that every out-of-date applicator applied.
    public var value: Value { state.withLock { $0.value } }

    /// The most recent update state reported by any request or synchronization of this parameter.
    public var updateState: ParameterUpdateState<Value> { state.withLock { $0.updateState } }

    /// A new stream of the value: the current value first, then every change (a value is
    /// yielded only when it differs from the previous one). Buffers without bound: consume it.
    public func valueUpdates() -> AsyncStream<Value> {
        state.withLock { state in values.subscribe(current: state.value) }
    }

    /// A new stream of the value's changes, each naming the request that made it (so a surface
    /// can tell its own changes from others'). Unlike `valueUpdates()` it does not start with the
    /// current value. Buffers without bound: consume it.
    public func changeUpdates() -> AsyncStream<ParameterChange<Value>> {
        changes.subscribe()
    }

    /// Calls `body` with every change from now on, on the thread that makes it and before its
    /// request is reported applied (see `Subscribers.observe`): quick, non-blocking, and never
    /// back into this parameter. Observing lasts as long as the parameter.
    public func observeChanges(_ body: @escaping @Sendable (ParameterChange<Value>) -> Void) {
        _ = changes.observe(body)
    }

    /// A new stream of update states: the current state first (`applied(initial)` for a fresh
    /// parameter), then every state of every request and synchronization, in order. Buffers
    /// without bound: consume it.
    public func stateUpdates() -> AsyncStream<ParameterUpdateState<Value>> {
        state.withLock { state in states.subscribe(current: state.updateState) }
    }

    /// The delivery style and timeout. Setting it takes effect at once: switching to continuous
    /// delivers a settling value as soon as nothing is in flight; a new settle time applies to
    /// values requested from then on; a new timeout applies to deliveries that start afterwards.
    public var config: DeliveryConfiguration {
        get { state.withLock { $0.config } }
        set {
            state.withLock { state in
                state.config = newValue
                guard state.closeError == nil else { return }
                perform(state.machine.changeStyle(to: newValue.deliveryStyle, mayOverlap: Self.neverOverlaps), in: &state)
            }
        }
    }

    /// Whether `load()` can fetch values (the parameter was made with a `load` source).
    public var isRemote: Bool { loader != nil }

    // MARK: Changing the value

    /// Accepts `value` for delivery and returns its request, whose `states` report every state
    /// it goes through and end with exactly one terminal state.
    ///
    /// Synchronous, so callers that must keep the order of their requests (a surface's receive
    /// thread) get it: requests are delivered (or superseded) in the order they were accepted.
    /// Throws, reporting nothing, when the value is rejected: by the `validate` closure (e.g.
    /// `ProcessingError.invalidIntensity`, `.interrupted`) or because the parameter was closed
    /// (e.g. `ProcessingError.sessionInactive`).
    ///
    /// `origin` names the requester; the change the request makes carries it (so a surface can
    /// tell its own changes from others').
    public func request(_ value: Value, origin: RequestOrigin? = nil) throws -> ParameterRequest<Value> {
        try state.withLock { state in try accept(value, origin: origin, in: &state) { $0 } }
    }

    /// Throws what `request(_:origin:)` would throw for `value` now, without requesting it: a
    /// surface checks every set of a bundle before requesting any. (A request racing a close
    /// can still be refused after its check passed.)
    public func check(_ value: Value) throws {
        try state.withLock { state in try checkAcceptable(value, in: state) }
    }

    /// `request(_:origin:)` with the states reported in another value type (a surface's),
    /// converted with `convert` as they happen.
    public func request<Reported: Sendable>(
        _ value: Value, origin: RequestOrigin?, reportedAs convert: @escaping @Sendable (Value) -> Reported
    ) throws -> ParameterRequest<Reported> {
        try state.withLock { state in try accept(value, origin: origin, in: &state, reportedAs: convert) }
    }

    /// Applies `value` and returns when it was applied: it is then the parameter's value.
    ///
    /// Goes through delivery like `request(_:)`: with discrete delivery it returns after the
    /// settle time at the earliest; behind a delivery in flight it waits for it.
    ///
    /// Throws when it is rejected (see `request(_:)`), when an applicator failed (its error,
    /// or `ProcessingParameterError.applyTimeoutExceeded`/`.deliveryTimeoutExceeded`), and
    /// `ProcessingParameterError.superseded` when a newer value replaced it first.
    public func apply(_ value: Value) async throws {
        try await request(value).result()
    }

    /// For a remote parameter: fetches a new value with the `load` source (given the current
    /// value) and applies it. Throws `ProcessingParameterError.notRemote` without a source, the
    /// source's error when fetching fails (no state is reported then), else as `apply(_:)`.
    public func load() async throws {
        guard let loader else { throw ProcessingParameterError.notRemote }
        try await apply(try await loader(value))
    }

    // MARK: Applicators

    /// Registers an applicator (called one value at a time) and returns its handle; keep the
    /// handle, the parameter holds it weakly (drop it to remove the applicator).
    ///
    /// The new applicator is out of date: it receives the current value only with the next
    /// delivery or `synchronizeApplicators()`. `apply` may be long-running (it runs in a task
    /// of the parameter, never under a lock); it should honour cancellation, but one that does
    /// not cannot block the parameter: at its deadline the sequence fails and moves on.
    ///
    /// - Parameters:
    ///   - name: what the applicator is, named by the timeout error (e.g. "the audio engine").
    ///   - applyTimeout: the longest one call may take before the sequence fails with
    ///     `ProcessingParameterError.applyTimeoutExceeded`; nil = only the delivery timeout.
    ///   - apply: applies a value or throws.
    public func addApplicator(
        name: String? = nil,
        applyTimeout: Duration? = nil,
        apply: @escaping @Sendable (Value) async throws -> Void
    ) -> ParameterApplicator<Value> {
        state.withLock { state in
            state.nextApplicatorID += 1
            let applicator = ParameterApplicator(id: state.nextApplicatorID, name: name, applyTimeout: applyTimeout, apply: apply)
            state.applicators.append(ApplicatorEntry(id: applicator.id, applicator: applicator))
            return applicator
        }
    }

    /// Applies the current value to every out-of-date applicator (each one is attempted, in the
    /// order they were added) and returns when done.
    ///
    /// Runs alone, like a delivery that cannot overlap: after the deliveries in flight, before a
    /// waiting value (no new delivery starts while it is requested), bounded by
    /// the delivery timeout. Reports `applying` then `applied` or `failed` on `stateUpdates()`
    /// when there was something to apply; the value never changes. Throws the first error (the
    /// applicators that failed stay out of date, the others are up to date).
    public func synchronizeApplicators() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let error = state.withLock { state -> (any Error)? in
                if let error = state.closeError { return error }
                state.waitingSynchronizations.append(continuation)
                perform(state.machine.requestSynchronization(), in: &state)
                return nil
            }
            if let error { continuation.resume(throwing: error) }
        }
    }

    /// The applicators registered now (whose handles are still held), in the order they were
    /// added: a surface shows their names and apply timeouts.
    public var applicators: [ParameterApplicator<Value>] {
        state.withLock { state in state.applicators.compactMap(\.applicator) }
    }

    /// Whether `applicator` (registered here) has applied the current value.
    public func isUpToDate(_ applicator: ParameterApplicator<Value>) -> Bool {
        state.withLock { state in
            state.applicators.first { $0.id == applicator.id }.map { $0.appliedValue == state.value } ?? false
        }
    }

    /// Marks `applicator` out of date, e.g. because what it drives restarted and lost its
    /// state. A delivery already running cannot mark it up to date again; the next
    /// `synchronizeApplicators()` re-applies the current value to it.
    public func invalidate(_ applicator: ParameterApplicator<Value>) {
        state.withLock { state in
            if let index = state.applicators.firstIndex(where: { $0.id == applicator.id }) {
                state.applicators[index].invalidate()
            }
        }
    }

    // MARK: Persistence

    /// Makes every request wait for `persist` before it is reported `applied`: the delivery
    /// takes the value (so `value` and a snapshot of the state have it), awaits `persist`, then
    /// reports. The durable state store's `journaled()` makes "applied" mean "survives a
    /// `kill -9`". `persist` never fails the request (a value that could not be persisted is
    /// still applied; the surfaces say it is not persisted). nil: report at once.
    public func persistAppliedValues(with persist: (@Sendable () async -> Void)?) {
        state.withLock { $0.persistence = persist }
    }

    // MARK: Internal (session, controller, tests)

    /// Values held for delivery: the one in flight plus the waiting one; never more than 2.
    var bufferedValueCount: Int { state.withLock { $0.machine.bufferedValueCount } }

    /// How many requests ended `applied` (whether or not they changed the value).
    var appliedRequestCount: Int { state.withLock { $0.appliedRequestCount } }

    /// The newest accepted value that has not ended (waiting or in flight), else the value.
    var latestValue: Value { state.withLock { $0.machine.latestValue ?? $0.value } }

    /// Accepts `value` and returns, atomically with it, the newest value accepted before
    /// (waiting, in flight, else the current value). Interruptions use it to remember what
    /// `isEnabled` was meant to be.
    func requestCapturingLatest(_ value: Value) throws -> (request: ParameterRequest<Value>, latest: Value) {
        try state.withLock { state in
            let latest = state.machine.latestValue ?? state.value
            return (try accept(value, origin: nil, in: &state) { $0 }, latest)
        }
    }

    /// Stops accepting values: requests and synchronizations throw `error`, the waiting value
    /// fails with it, the job in flight is cancelled and fails with it (an applicator that
    /// finishes anyway no longer changes the value). Idempotent.
    func close(throwing error: any Error) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            guard state.closeError == nil else { return [] }
            state.closeError = error
            if let waiting = state.machine.close() {
                report(.failed(waiting.value, error), for: waiting.id, in: &state)
            }
            state.jobTask?.cancel()
            state.timerTask?.cancel()
            defer { state.waitingSynchronizations = [] }
            return state.waitingSynchronizations
        }
        waiters.forEach { $0.resume(throwing: error) }
    }
}
