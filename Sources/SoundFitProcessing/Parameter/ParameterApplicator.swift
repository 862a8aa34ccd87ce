import SoundFitModel

/// Something that must apply a parameter's values for a change to count (the audio engine,
/// a `ProcessingHandler`, persistence), as registered with `ProcessingParameter.addApplicator`
/// or `addStreamingApplicator`.
///
/// This object is the registration's handle: the parameter holds it weakly, so the applicator
/// is removed as soon as the last strong reference to the handle goes away. Keep it for as long
/// as the applicator should receive values.
public final class ParameterApplicator<Value: Sendable>: Sendable {
    /// How the parameter hands values to an applicator.
    enum Kind: Sendable {
        /// One call at a time: `apply` returns when the value is applied.
        case sequential(@Sendable (Value) async throws -> Void)
        /// Calls may overlap: `submit` hands the value over (synchronously, in call order), with
        /// the moment it is to take effect (nil: now), and returns the wait for it to take effect.
        case streaming(@Sendable (Value, EngineTime?) throws -> ParameterApplicator.Confirmation)
        /// `streaming` whose wait bounds itself: it is told how long it may take.
        case boundedStreaming(@Sendable (Value, EngineTime?) throws -> ParameterApplicator.BoundedConfirmation)
    }

    /// The wait a streaming applicator returns for one submitted value: returns when the value
    /// took effect, throws `ProcessingParameterError.superseded` when a newer submitted value
    /// overtook it before it took effect, or the error that kept it from taking effect.
    public typealias Confirmation = @Sendable () async throws -> Void

    /// The wait of a streaming applicator that bounds it itself: told how long it may take
    /// (`within`, counted from the call), it returns or throws by then. The parameter awaits it
    /// in the delivery's own task, without a racing task and timer (see
    /// `ProcessingParameter.addStreamingApplicator(boundedScheduling:)`).
    public typealias BoundedConfirmation = @Sendable (_ within: Duration) async throws -> Void

    /// The longest one call may take (for a streaming applicator: its confirmation); nil =
    /// bounded only by the delivery timeout.
    public let applyTimeout: Duration?
    /// What it is (e.g. "the audio engine"), for the error that says it timed out; nil when
    /// it was added without a name.
    public let name: String?
    let id: UInt64
    let kind: Kind

    init(id: UInt64, name: String? = nil, applyTimeout: Duration?, kind: Kind) {
        self.id = id
        self.name = name
        self.applyTimeout = applyTimeout
        self.kind = kind
    }

    /// Whether its calls may overlap (it was added with `addStreamingApplicator`).
    public var isStreaming: Bool {
        if case .sequential = kind { return false }
        return true
    }

    /// Whether its waits bound themselves (it was added with a bounded confirmation).
    var boundsItself: Bool {
        if case .boundedStreaming = kind { return true }
        return false
    }

    /// Hands `value` over to a streaming applicator (`isStreaming`) and returns its wait.
    func handOver(_ value: Value, at time: EngineTime?) throws -> BoundedConfirmation {
        switch kind {
        case .sequential:
            preconditionFailure("a sequential applicator is called, not handed values over")
        case .streaming(let submit):
            let confirmation = try submit(value, time)
            return { _ in try await confirmation() }
        case .boundedStreaming(let submit):
            return try submit(value, time)
        }
    }

    /// Applies `value` and returns when it is applied: one whole call, for deliveries that do
    /// not overlap and for synchronization. A sequential applicator applies it when called; a
    /// streaming one is told `time`, the moment the value is to take effect (nil: now), and a
    /// bounded one `within`, how long it may take.
    func apply(_ value: Value, at time: EngineTime? = nil, within: Duration) async throws {
        if case .sequential(let apply) = kind {
            try await apply(value)
        } else {
            try await handOver(value, at: time)(within)
        }
    }
}
