/// The delivery rules of one parameter, as a plain value: which request is delivered when,
/// which one waits, which one is superseded. No clocks, tasks or locks; every event returns a
/// `Transition` that the parameter carries out (report states, start a job, start a timer).
///
/// Slots: at most one job in flight (a value delivery or a synchronization) and at most one
/// waiting value — so no queue grows however fast values arrive. A new value always takes the
/// waiting slot; the value it replaces there ends superseded (latest wins).
///
/// - continuous: a value is delivered at once when nothing is in flight, else it waits
///   (`pending`) and is delivered when the job in flight ends.
/// - discrete: a value waits (`pending`) until it stayed in the waiting slot for the settle time;
///   then it is delivered, or, when a job is still in flight, as soon as that job ends.
/// - A requested synchronization runs when nothing is in flight, before a ready waiting value.
struct DeliveryStateMachine<Value: Sendable>: Sendable {
    typealias RequestID = UInt64

    struct Request: Sendable {
        var id: RequestID
        var value: Value
    }

    /// Work the parameter runs, one at a time.
    enum Job: Sendable {
        /// The apply sequence for a requested value.
        case deliver(Request)
        /// Apply the current value to the out-of-date applicators.
        case synchronize
    }

    /// What the parameter must do after an event.
    struct Transition: Sendable {
        /// Report `superseded` for this request (it left the waiting slot unapplied).
        var superseded: Request?
        /// Report `pending` for this request (it entered the waiting slot).
        var pending: Request?
        /// Start this job (it is now in flight).
        var start: Job?
        /// Start a timer that calls `timerFired(at:)` with this deadline.
        var sleepUntil: Duration?
    }

    private(set) var style: ProcessingConfig.DeliveryStyle
    private(set) var inFlight: Job?
    private(set) var waiting: Request?
    /// When the waiting value has settled; nil when it is ready to be delivered.
    private(set) var settleDeadline: Duration?
    /// The deadline of the running settle timer, nil when none runs.
    private(set) var timerDeadline: Duration?
    private(set) var isSynchronizationRequested = false
    private(set) var isClosed = false

    init(style: ProcessingConfig.DeliveryStyle) {
        self.style = style
    }

    /// Values held for delivery: the one in flight plus the waiting one (never more than 2).
    var bufferedValueCount: Int {
        var count = waiting == nil ? 0 : 1
        if case .deliver = inFlight { count += 1 }
        return count
    }

    /// The newest accepted value that has not ended yet (waiting, else in flight), if any.
    var latestValue: Value? {
        if let waiting { return waiting.value }
        if case .deliver(let request) = inFlight { return request.value }
        return nil
    }

    /// A value was accepted at time `now`.
    mutating func submit(_ request: Request, now: Duration) -> Transition {
        precondition(!isClosed, "submit after close")
        var transition = Transition(superseded: waiting)
        waiting = nil
        switch style {
        case .continuous:
            settleDeadline = nil
            if inFlight == nil {
                inFlight = .deliver(request)
                transition.start = .deliver(request)
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
    mutating func timerFired(at deadline: Duration) -> Transition {
        guard timerDeadline == deadline else { return Transition() }  // stale: closed or restyled
        timerDeadline = nil
        guard waiting != nil, let settleDeadline else { return Transition() }
        if settleDeadline <= deadline {
            self.settleDeadline = nil
            return startNextIfIdle()
        }
        // A newer value arrived while the timer ran: sleep on until it has settled.
        timerDeadline = settleDeadline
        return Transition(sleepUntil: settleDeadline)
    }

    /// The job in flight ended (whatever its outcome).
    mutating func jobFinished() -> Transition {
        inFlight = nil
        return startNextIfIdle()
    }

    /// Someone asked for the out-of-date applicators to be synchronized. Requests made while
    /// one is already waiting share it.
    mutating func requestSynchronization() -> Transition {
        precondition(!isClosed, "synchronization after close")
        isSynchronizationRequested = true
        return startNextIfIdle()
    }

    /// The delivery style changed. To continuous: a settling value is ready at once. To
    /// discrete (or another settle time): values already waiting keep their deadline (or stay
    /// ready); the new settle time applies to values submitted from now on.
    mutating func changeStyle(to style: ProcessingConfig.DeliveryStyle) -> Transition {
        self.style = style
        guard case .continuous = style else { return Transition() }
        settleDeadline = nil
        timerDeadline = nil
        return startNextIfIdle()
    }

    /// No more values: returns the waiting request (to be failed); the job in flight, if any,
    /// is the caller's to cancel.
    mutating func close() -> Request? {
        isClosed = true
        defer { waiting = nil }
        settleDeadline = nil
        timerDeadline = nil
        isSynchronizationRequested = false
        return waiting
    }

    private mutating func startNextIfIdle() -> Transition {
        guard inFlight == nil, !isClosed else { return Transition() }
        if isSynchronizationRequested {
            isSynchronizationRequested = false
            inFlight = .synchronize
            return Transition(start: .synchronize)
        }
        if let request = waiting, settleDeadline == nil {
            waiting = nil
            inFlight = .deliver(request)
            return Transition(start: .deliver(request))
        }
        return Transition()
    }
}
