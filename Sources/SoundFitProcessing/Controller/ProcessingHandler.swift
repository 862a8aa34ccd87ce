import SoundFitModel

/// The component that does the actual processing and exchanges the session's parameters with
/// the controller. In SoundFit: the audio engine's adapter.
///
/// The controller installs the handler as an applicator of the session's writable parameters:
/// a value counts as applied only when `set` returned. Reads happen when the handler
/// invalidates parameters. Every call is asynchronous and bounded by the delivery timeout
/// (`DeliveryConfiguration.deliveryTimeout`, 10 s by default): a call that takes longer fails with
/// `ProcessingParameterError.deliveryTimeoutExceeded` (writes) or
/// `ProcessingError.readTimeoutExceeded` (reads) and is cancelled.
///
/// Calls come from tasks the controller and the parameters start, never under a lock. For one
/// parameter, writes never overlap; writes of different parameters may.
public protocol ProcessingHandler: Sendable {
    /// Applies a value on the processor (enable/disable, intensity, preset), or throws.
    func set(_ parameter: SessionParameter.Writable) async throws

    /// Answers the processor's current value of `parameter` (the handler keeps and caches
    /// its state), or throws. Must answer with the requested parameter's case.
    func get(_ parameter: SessionParameter.Readable) async throws -> SessionParameter.ReadValue

    /// A session was activated with this handler, before any value is written. Keep
    /// `invalidation` to tell the controller when the processor's state can no longer be relied
    /// on. Default: does nothing.
    func sessionDidActivate(_ session: ProcessingSession, invalidation: ProcessingInvalidation) async

    /// The session was deactivated; no more values will be written for it. Default: does nothing.
    func sessionDidDeactivate(_ session: ProcessingSession) async

    /// What the handler is, named by the error of a write that exceeded its apply timeout.
    /// Default: "the processing handler".
    var applicatorName: String { get }

    /// The longest one write of `parameter` may take (the handler's own apply timeout, within
    /// the delivery timeout); exceeding it fails the value with
    /// `ProcessingParameterError.applyTimeoutExceeded`. Default: nil, the delivery timeout only.
    func applyTimeout(for parameter: SessionParameter.Name) -> Duration?
}

/// The defaults the requirements above name.
extension ProcessingHandler {
    public func sessionDidActivate(_ session: ProcessingSession, invalidation: ProcessingInvalidation) async {}
    public func sessionDidDeactivate(_ session: ProcessingSession) async {}
    public var applicatorName: String { "the processing handler" }
    public func applyTimeout(for parameter: SessionParameter.Name) -> Duration? { nil }
}
