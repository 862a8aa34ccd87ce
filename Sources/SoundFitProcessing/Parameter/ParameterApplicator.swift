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
    }

    /// The wait a streaming applicator returns for one submitted value: returns when the value
    /// took effect, throws `ProcessingParameterError.superseded` when a newer submitted value
    /// overtook it before it took effect, or the error that kept it from taking effect.
    public typealias Confirmation = @Sendable () async throws -> Void

    /// The longest one call may take (for a streaming applicator: its confirmation); nil =
    /// bounded only by the delivery timeout.
    public let applyTimeout: Duration?
    let id: UInt64
    let kind: Kind

    init(id: UInt64, applyTimeout: Duration?, kind: Kind) {
        self.id = id
        self.applyTimeout = applyTimeout
        self.kind = kind
    }

    /// Whether its calls may overlap (it was added with `addStreamingApplicator`).
    public var isStreaming: Bool {
        if case .streaming = kind { return true }
        return false
    }

    /// Applies `value` and returns when it is applied: one whole call, for deliveries that do
    /// not overlap and for synchronization. A sequential applicator applies it when called; a
    /// streaming one is told `time`, the moment the value is to take effect (nil: now).
    func apply(_ value: Value, at time: EngineTime? = nil) async throws {
        switch kind {
        case .sequential(let apply): try await apply(value)
        case .streaming(let submit): try await submit(value, time)()
        }
    }
}
