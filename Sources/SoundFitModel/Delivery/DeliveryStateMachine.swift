/// The delivery rules of one parameter, as a plain value: which request is delivered when,
/// which one waits, which one is superseded. No clocks, tasks or locks; every event returns a
/// `Transition` that the parameter carries out (report states, start a job, start a timer).
///
/// Slots: the jobs in flight and at most one waiting value — so no queue grows however fast
/// values arrive. A new value always takes the waiting slot; the value it replaces there ends
/// superseded (latest wins).
///
/// - In flight: one job (a value delivery or a synchronization), or, with continuous delivery,
///   up to `maximumOverlap` **overlapping** deliveries: deliveries whose out-of-date applicators
///   all accept overlapping calls (a kernel parameter's hand-overs to the engine). Whether a value's delivery may
///   overlap is the parameter's to say (`mayOverlap`), at the moment it would start.
/// - continuous: a value is delivered at once when nothing is in flight, or when it may overlap
///   and only overlapping deliveries are in flight (fewer than `maximumOverlap`); else it waits
///   (`pending`) and starts when the jobs in flight allow it.
/// - discrete: a value waits (`pending`) until it stayed in the waiting slot for the settle time;
///   then it is delivered, or, when a job is still in flight, as soon as nothing is. One
///   delivery in flight at a time.
/// - A requested synchronization runs alone: once nothing is in flight, before a ready waiting
///   value; while it is requested, no new delivery starts.
public struct DeliveryStateMachine<Value: Sendable>: Sendable {
    public typealias RequestID = UInt64

    public struct Request: Sendable {
        public var id: RequestID
        public var value: Value
        /// When the value is to take effect (a scheduled change), nil for "now".
        public var time: EngineTime?

        public init(id: RequestID, value: Value, time: EngineTime? = nil) {
            self.id = id
            self.value = value
            self.time = time
        }
    }

    /// Work the parameter runs.
    public enum Job: Sendable {
        /// The apply sequence for a requested value.
        case deliver(Request)
        /// Apply the current value to the out-of-date applicators.
        case synchronize
    }

    /// What the parameter must do after an event.
    public struct Transition: Sendable {
        /// Report `superseded` for this request (it left the waiting slot unapplied).
        public var superseded: Request?
        /// Report `pending` for this request (it entered the waiting slot).
        public var pending: Request?
        /// Start this job (it is now in flight).
        public var start: Job?
        /// Start a timer that calls `timerFired(at:)` with this deadline.
        public var sleepUntil: Duration?
    }

    /// The most deliveries in flight at once when they overlap.
    public static var defaultMaximumOverlap: Int { 8 }

    public let maximumOverlap: Int
    public private(set) var style: DeliveryConfiguration.DeliveryStyle
    /// The deliveries in flight, oldest first: one, or several that all overlap.
    public private(set) var deliveries: [Request] = []
    /// Whether the deliveries in flight overlap, so that another overlapping one may join them.
    public private(set) var deliveriesOverlap = false
    public private(set) var isSynchronizing = false
    public private(set) var waiting: Request?
    /// When the waiting value has settled; nil when it is ready to be delivered.
    public private(set) var settleDeadline: Duration?
    /// The deadline of the running settle timer, nil when none runs.
    public private(set) var timerDeadline: Duration?
    public private(set) var isSynchronizationRequested = false
    public private(set) var isClosed = false

    public init(style: DeliveryConfiguration.DeliveryStyle, maximumOverlap: Int = Self.defaultMaximumOverlap) {
        precondition(maximumOverlap >= 1, "at least one delivery must be able to run")
        self.style = style
        self.maximumOverlap = maximumOverlap
    }

    /// Values held for delivery: the ones in flight plus the waiting one (never more than
    /// `maximumOverlap + 1`).
    public var bufferedValueCount: Int { deliveries.count + (waiting == nil ? 0 : 1) }

    /// Whether no job is in flight.
    public var isIdle: Bool { deliveries.isEmpty && !isSynchronizing }

    /// The newest accepted value that has not ended yet (waiting, else the newest in flight), if any.
    public var latestValue: Value? { waiting?.value ?? deliveries.last?.value }

    /// A value was accepted at time `now`. `mayOverlap` tells whether a delivery of a value
    /// could overlap others (asked only when it would start).
    public mutating func submit(_ request: Request, now: Duration, mayOverlap: (Value) -> Bool) -> Transition {
        precondition(!isClosed, "submit after close")
        var transition = Transition(superseded: waiting)
        waiting = nil
        switch style {
        case .continuous:
            settleDeadline = nil
            if canStart(request, mayOverlap: mayOverlap) {
                transition.start = begin(request, mayOverlap: mayOverlap)
            } else {
                waiting = request
                transition.pending = request
            }
        case .discrete(let settleTime):
            let deadline = now + settleTime
            waiting = request
            settleDeadline = deadline
            transition.pending = request
            if timerDeadline.map({ deadline < $0 }) ?? true {  // none running, or the settle time shrank
                timerDeadline = deadline
                transition.sleepUntil = deadline
            }
        }
        return transition
    }

    /// The settle timer started for `deadline` fired.
    public mutating func timerFired(at deadline: Duration, mayOverlap: (Value) -> Bool) -> Transition {
        guard timerDeadline == deadline else { return Transition() }  // stale: closed or restyled
        timerDeadline = nil
        guard waiting != nil, let settleDeadline else { return Transition() }
        if settleDeadline <= deadline {
            self.settleDeadline = nil
            return startNext(mayOverlap: mayOverlap)
        }
        // A newer value arrived while the timer ran: sleep on until it has settled.
        timerDeadline = settleDeadline
        return Transition(sleepUntil: settleDeadline)
    }

    /// `job` ended (whatever its outcome).
    public mutating func jobFinished(_ job: Job, mayOverlap: (Value) -> Bool) -> Transition {
        switch job {
        case .deliver(let request): deliveries.removeAll { $0.id == request.id }
        case .synchronize: isSynchronizing = false
        }
        if deliveries.isEmpty { deliveriesOverlap = false }
        return startNext(mayOverlap: mayOverlap)
    }

    /// Someone asked for the out-of-date applicators to be synchronized. Requests made while
    /// one is already waiting share it.
    public mutating func requestSynchronization() -> Transition {
        precondition(!isClosed, "synchronization after close")
        isSynchronizationRequested = true
        return startNext { _ in false }  // starts the synchronization or nothing
    }

    /// The delivery style changed. To continuous: a settling value is ready at once. To
    /// discrete (or another settle time): values already waiting keep their deadline (or stay
    /// ready); the new settle time applies to values submitted from now on. Deliveries already
    /// overlapping finish; no new one joins them while the style is discrete.
    public mutating func changeStyle(to style: DeliveryConfiguration.DeliveryStyle, mayOverlap: (Value) -> Bool) -> Transition {
        self.style = style
        guard case .continuous = style else { return Transition() }
        settleDeadline = nil
        timerDeadline = nil
        return startNext(mayOverlap: mayOverlap)
    }

    /// No more values: returns the waiting request (to be failed); the jobs in flight, if any,
    /// are the caller's to cancel.
    public mutating func close() -> Request? {
        isClosed = true
        defer { waiting = nil }
        settleDeadline = nil
        timerDeadline = nil
        isSynchronizationRequested = false
        return waiting
    }

    /// Whether a delivery of `request` may start now.
    private func canStart(_ request: Request, mayOverlap: (Value) -> Bool) -> Bool {
        guard !isClosed, !isSynchronizing, !isSynchronizationRequested else { return false }
        if deliveries.isEmpty { return true }
        guard case .continuous = style, deliveriesOverlap, deliveries.count < maximumOverlap else { return false }
        return mayOverlap(request.value)
    }

    private mutating func begin(_ request: Request, mayOverlap: (Value) -> Bool) -> Job {
        if deliveries.isEmpty { deliveriesOverlap = mayOverlap(request.value) }
        deliveries.append(request)
        return .deliver(request)
    }

    private mutating func startNext(mayOverlap: (Value) -> Bool) -> Transition {
        guard !isClosed else { return Transition() }
        if isSynchronizationRequested {
            guard isIdle else { return Transition() }
            isSynchronizationRequested = false
            isSynchronizing = true
            return Transition(start: .synchronize)
        }
        guard let request = waiting, settleDeadline == nil, canStart(request, mayOverlap: mayOverlap) else {
            return Transition()
        }
        waiting = nil
        return Transition(start: begin(request, mayOverlap: mayOverlap))
    }
}
