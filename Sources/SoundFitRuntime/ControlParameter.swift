import SoundFitModel
import SoundFitProcessing

/// One entry of SoundFit's control address space, as a surface (OSC) sees it: a descriptor, a
/// current value, and requests whose every update state is reported.
///
/// Kernel parameters (filter, ring modulator, output gain) and the processing session's
/// parameters (`/processing/*`) look the same here; the runtime decides what applies them.
/// Thread rules: any thread except the audio thread.
public protocol ControlParameter: Sendable {
    var descriptor: ParameterDescriptor { get }

    /// The current (applied) value, or an error when the parameter cannot be read now (e.g. no
    /// processing session).
    func currentValue() throws -> ParameterValue

    /// Accepts a validated value for delivery and returns the request, whose states end in
    /// exactly one terminal state. Throws (nothing is requested) for a value that is invalid or
    /// not allowed now: the value is validated here, once, against the parameter's entry; the
    /// layers below trust it. Synchronous, so requests keep the order in which they arrived.
    /// `origin` is attached to the change the request makes (see `SoundFitRuntime.changeUpdates()`).
    func request(_ value: ParameterValue, origin: RequestOrigin?) throws -> ParameterRequest<ParameterValue>

    /// Throws what `request(_:origin:)` would throw for `value` now (invalid, or not allowed
    /// now), without requesting anything: a surface checks every set of a bundle before it
    /// requests any, so one refused set stops the whole bundle.
    func check(_ value: ParameterValue) throws

    /// The update state of the parameter's latest change (`applied` with the current value when
    /// nothing is in flight), or an error when it cannot be read now (no session).
    func currentUpdateState() throws -> ParameterUpdateState<ParameterValue>
}

extension ControlError {
    /// Runs `body` and turns a refusal of the processing model (`ProcessingError`,
    /// `ProcessingParameterError`) into a `ControlError` with the same message, so a surface
    /// meets two kinds of refusal only: `ParameterError` and `ControlError`.
    static func refusing<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw surfaced(error)
        }
    }

    /// `refusing(_:)` for asynchronous work.
    static func refusing<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw surfaced(error)
        }
    }

    /// The error a surface meets for `error`.
    private static func surfaced(_ error: any Error) -> any Error {
        switch error {
        case let refusal as ProcessingError: ControlError(refusal.description)
        case let refusal as ProcessingParameterError: ControlError(refusal.description)
        default: error
        }
    }
}
