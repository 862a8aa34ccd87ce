/// Why a parameter value was not applied.
///
/// (Named after `ProcessingParameter`; a value a parameter entry rejects is a `ParameterError`.)
public enum ProcessingParameterError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An applicator did not finish within its own `applyTimeout`; `applicator` is its name,
    /// when it was added with one.
    case applyTimeoutExceeded(Duration, applicator: String? = nil)
    /// A delivery (all of its applicators) did not finish within the delivery timeout.
    case deliveryTimeoutExceeded(Duration)
    /// A newer value replaced this one before it took effect. `apply(_:)` throws it for a
    /// request that ended `superseded`; an applicator throws it for a
    /// value a newer one overtook (the request then ends `superseded`, not `failed`).
    case superseded
    /// `load()` on a parameter that has no remote source.
    case notRemote
    /// The parameter no longer accepts values (its owner closed it without a specific reason).
    case closed

    /// A sentence for logs and the `failed` reports of surfaces.
    public var description: String {
        switch self {
        case .applyTimeoutExceeded(let timeout, let applicator):
            "\(applicator ?? "an applicator") did not apply the value within its apply timeout (\(timeout))"
        case .deliveryTimeoutExceeded(let timeout): "the value was not delivered within the delivery timeout (\(timeout))"
        case .superseded: "a newer value replaced this one before it was applied"
        case .notRemote: "the parameter has no remote source to load from"
        case .closed: "the parameter no longer accepts values"
        }
    }
}
