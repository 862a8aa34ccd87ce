/// Why a request that is itself valid cannot be carried out now: no processing session, the
/// session is interrupted, no hearing profile, a preset variant the profile does not offer, a
/// patch that cannot be applied whole.
///
/// With `ParameterError` (the request itself is wrong: unknown address, wrong type, out of range,
/// read-only) it is the whole vocabulary of refusals a surface meets; what happens to a request
/// once accepted is its update state, whose `failed` carries the reason. The layers below keep
/// their own precise errors, turned into these two where the control plane meets the surfaces.
public struct ControlError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
