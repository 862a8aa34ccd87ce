/// What happened to a requested value: the update state of one request, and of the parameter
/// (the most recent state any of its requests or synchronizations reported).
///
/// Every accepted request reports exactly one terminal state (`applied`, `failed` or
/// `superseded`), preceded by `pending` and/or `applying` when they happen:
///
/// | delivery | states of one request |
/// | --- | --- |
/// | no out-of-date applicator | `applied` |
/// | delivered at once | `applying`, then `applied` or `failed` (or `superseded`, when the audio thread went straight to a newer kernel value) |
/// | waiting (behind the deliveries in flight, or settling) | `pending`, then `superseded`, or `applying` → `applied`/`failed`/`superseded` |
public enum ParameterUpdateState<Value: Sendable>: Sendable, CustomStringConvertible {
    /// Accepted and waiting: settling (discrete delivery) or behind the deliveries in flight.
    case pending(Value)
    /// Being applied by the out-of-date applicators.
    case applying(Value)
    /// Every out-of-date applicator applied it; it is the parameter's value now, unless a newer
    /// request's value was applied before (overlapping deliveries can end out of order). Terminal.
    case applied(Value)
    /// An applicator failed or timed out; the parameter kept its previous value. Terminal.
    case failed(Value, any Error)
    /// A newer value replaced it before it took effect (waiting, or overtaken in a streaming
    /// applicator); it was never applied. Terminal.
    case superseded(Value)

    /// The value the state is about.
    public var value: Value {
        switch self {
        case .pending(let value), .applying(let value), .applied(let value), .superseded(let value): value
        case .failed(let value, _): value
        }
    }

    /// Whether this is the last state of its request.
    public var isTerminal: Bool {
        switch self {
        case .pending, .applying: false
        case .applied, .failed, .superseded: true
        }
    }

    /// The error of a `failed` state.
    public var error: (any Error)? {
        if case .failed(_, let error) = self { return error }
        return nil
    }

    /// Why a `failed` state failed, as surfaces report it.
    public var reason: String? { error.map { "\($0)" } }

    /// Which state it is, without the value.
    public var name: UpdateStateName {
        switch self {
        case .pending: .pending
        case .applying: .applying
        case .applied: .applied
        case .failed: .failed
        case .superseded: .superseded
        }
    }

    /// `applied(0.5)`, `failed(0.5, <error>)`.
    public var description: String {
        switch self {
        case .failed(let value, let error): "failed(\(value), \(error))"
        default: "\(name)(\(value))"
        }
    }

    /// The same state with the value in another type (a surface's).
    public func map<Other: Sendable>(_ convert: (Value) -> Other) -> ParameterUpdateState<Other> {
        switch self {
        case .pending(let value): .pending(convert(value))
        case .applying(let value): .applying(convert(value))
        case .applied(let value): .applied(convert(value))
        case .failed(let value, let error): .failed(convert(value), error)
        case .superseded(let value): .superseded(convert(value))
        }
    }
}

/// The name of an update state, as surfaces and files spell it (`rawValue`).
public enum UpdateStateName: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case pending, applying, applied, failed, superseded

    /// Whether a request's states end with this one.
    public var isTerminal: Bool { self == .applied || self == .failed || self == .superseded }

    public var description: String { rawValue }
}
