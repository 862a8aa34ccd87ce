/// How parameter values travel to applicators: the delivery style and the delivery timeout.
///
/// The runtime sets one for every parameter (`SoundFitRuntime.config`: the session's, through
/// the processing controller, and the kernel parameters'). Changes take effect at run time.
public struct DeliveryConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// When a requested value is delivered.
    public enum DeliveryStyle: Sendable, Hashable, CustomStringConvertible {
        /// Deliver each value as it arrives (the default), "in a continuous stream": a kernel
        /// parameter hands values to the audio engine as they arrive, up to 8 in flight; a
        /// session parameter keeps one delivery in flight. The newest value waiting
        /// behind them replaces (supersedes) an older waiting one.
        case continuous
        /// Deliver a value only after it stayed unchanged for `settleTime` (default 0.2 s); every
        /// value replaced while settling ends superseded. Suits sliders that stream many values.
        case discrete(settleTime: Duration = .milliseconds(200))

        /// `continuous`, or `discrete(0.2 s)`.
        public var description: String {
            switch self {
            case .continuous: "continuous"
            case .discrete(let settleTime): "discrete(\(settleTime))"
            }
        }
    }

    /// The default: continuous delivery, 10 s delivery timeout.
    public static let `default` = DeliveryConfiguration()

    /// When a requested value is delivered.
    public var deliveryStyle: DeliveryStyle
    /// The longest one delivery (all of its applicators together) may take before it fails
    /// with `ProcessingParameterError.deliveryTimeoutExceeded`. Also bounds each read from a
    /// `ProcessingHandler`. Default 10 s.
    public var deliveryTimeout: Duration

    /// A configuration; by default continuous delivery with a 10 s timeout.
    public init(deliveryStyle: DeliveryStyle = .continuous, deliveryTimeout: Duration = .seconds(10)) {
        self.deliveryStyle = deliveryStyle
        self.deliveryTimeout = deliveryTimeout
    }

    /// Throws `InvalidDeliveryConfiguration` unless the settle time is >= 0 and the delivery
    /// timeout > 0. Callers taking values from users (surfaces) validate before setting: an invalid
    /// configuration is used as given (a negative settle time delivers at once, a zero timeout
    /// fails every delivery that has applicators).
    public func validate() throws(InvalidDeliveryConfiguration) {
        if case .discrete(let settleTime) = deliveryStyle, settleTime < .zero {
            throw InvalidDeliveryConfiguration(reason: "settle time must be >= 0, got \(settleTime)")
        }
        guard deliveryTimeout > .zero else {
            throw InvalidDeliveryConfiguration(reason: "delivery timeout must be > 0, got \(deliveryTimeout)")
        }
    }

    /// `continuous, timeout 10.0 seconds`.
    public var description: String { "\(deliveryStyle), timeout \(deliveryTimeout)" }
}

/// A `DeliveryConfiguration` that `validate()` rejects, and why.
public struct InvalidDeliveryConfiguration: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String

    public var description: String { "invalid delivery configuration: \(reason)" }
}
