/// The requests of one parameter that have not ended: where each reports its states, and who
/// asked (its change carries the origin), until its terminal state. Memory follows the
/// requests in flight, never the requests made.
///
/// A value kept under its parameter's lock (a session's `ProcessingParameter`, a
/// `KernelParameter`), so states are reported in the order the parameter made them.
public struct OpenRequests<Value: Sendable>: Sendable {
    private struct Reporter: Sendable {
        let yield: @Sendable (ParameterUpdateState<Value>) -> Void
        let finish: @Sendable () -> Void
    }

    private var reporters: [UInt64: Reporter] = [:]
    private var origins: [UInt64: RequestOrigin] = [:]

    public init() {}

    /// Opens request `id` and returns its states, reported in the requester's value type: the
    /// conversion runs as each state is reported, so no task sits between the parameter and the
    /// requester.
    public mutating func open<Reported: Sendable>(
        _ id: UInt64, origin: RequestOrigin?, reportedAs convert: @escaping @Sendable (Value) -> Reported
    ) -> AsyncStream<ParameterUpdateState<Reported>> {
        let (stream, continuation) = AsyncStream.makeStream(of: ParameterUpdateState<Reported>.self)
        reporters[id] = Reporter(yield: { continuation.yield($0.map(convert)) }, finish: { continuation.finish() })
        if let origin { origins[id] = origin }
        return stream
    }

    /// Who asked for request `id`, while it is open and named one.
    public func origin(of id: UInt64) -> RequestOrigin? { origins[id] }

    /// The requests open now.
    public var count: Int { reporters.count }

    /// Reports `update` to request `id` (if open); a terminal state closes it.
    public mutating func report(_ update: ParameterUpdateState<Value>, to id: UInt64) {
        guard let reporter = reporters[id] else { return }
        reporter.yield(update)
        guard update.isTerminal else { return }
        reporter.finish()
        reporters[id] = nil
        origins[id] = nil
    }

    /// Ends every open request's stream (its parameter is going away).
    public func finishAll() {
        reporters.values.forEach { $0.finish() }
    }
}
