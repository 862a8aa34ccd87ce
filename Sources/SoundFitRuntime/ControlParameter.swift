import SoundFitModel
import SoundFitEngine

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
    /// not allowed now. Synchronous, so requests keep the order in which they arrived. `origin`
    /// is attached to the change the request makes (see `SoundFitRuntime.changeUpdates()`).
    func request(_ value: ParameterValue, origin: ControlOrigin?) throws -> ControlRequest
}

/// One accepted change and its states.
public struct ControlRequest: Sendable {
    public let address: String
    public let value: ParameterValue
    /// `pending`, `applying`, then one terminal state. One consumer.
    public let states: AsyncStream<ControlState>
}

/// What happened to one request, in the words of the OSC contract.
public struct ControlState: Sendable, Equatable {
    public enum Name: String, Sendable {
        case pending, applying, applied, failed, superseded
    }

    public var name: Name
    public var value: ParameterValue
    /// The reason of a `failed` state.
    public var error: String?

    public var isTerminal: Bool { name == .applied || name == .failed || name == .superseded }

    public init(name: Name, value: ParameterValue, error: String? = nil) {
        self.name = name
        self.value = value
        self.error = error
    }
}

/// Why a control request was refused.
public struct ControlError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
