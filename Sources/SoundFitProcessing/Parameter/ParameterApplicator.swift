/// Something that must apply a parameter's values for a change to count (the audio engine,
/// a `ProcessingHandler`, persistence), as registered with `ProcessingParameter.addApplicator`.
///
/// This object is the registration's handle: the parameter holds it weakly, so the applicator
/// is removed as soon as the last strong reference to the handle goes away. Keep it for as long
/// as the applicator should receive values.
public final class ParameterApplicator<Value: Sendable>: Sendable {
    /// The longest one call of `apply` may take; nil = bounded only by the delivery timeout.
    public let applyTimeout: Duration?
    let id: UInt64
    let apply: @Sendable (Value) async throws -> Void

    init(id: UInt64, applyTimeout: Duration?, apply: @escaping @Sendable (Value) async throws -> Void) {
        self.id = id
        self.applyTimeout = applyTimeout
        self.apply = apply
    }
}
