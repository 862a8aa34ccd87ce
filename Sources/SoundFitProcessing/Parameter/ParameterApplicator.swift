import SoundFitModel

/// Something that must apply a session parameter's values for a change to count (the
/// `ProcessingHandler`), as registered with `ProcessingParameter.addApplicator`.
///
/// This object is the registration's handle: the parameter holds it weakly, so the applicator
/// is removed as soon as the last strong reference to the handle goes away. Keep it for as long
/// as the applicator should receive values.
public final class ParameterApplicator<Value: Sendable>: Sendable {
    /// The longest one call may take; nil = bounded only by the delivery timeout.
    public let applyTimeout: Duration?
    /// What it is (e.g. "the audio engine"), for the error that says it timed out; nil when
    /// it was added without a name.
    public let name: String?
    let id: UInt64
    /// Applies a value and returns when it is applied (one call at a time).
    let apply: @Sendable (Value) async throws -> Void

    init(id: UInt64, name: String? = nil, applyTimeout: Duration?, apply: @escaping @Sendable (Value) async throws -> Void) {
        self.id = id
        self.name = name
        self.applyTimeout = applyTimeout
        self.apply = apply
    }
}
