import SoundFitModel

/// Why a processing operation was rejected or failed (session, configuration, handler).
///
/// Parameter-delivery failures (timeouts, superseded) are `ProcessingParameterError`.
public enum ProcessingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A tech level outside `TechLevel.range` (1…4).
    case invalidTechLevel(Int)
    /// An intensity outside 0…1 (or not a number). Rejected, not clamped.
    case invalidIntensity(Float)
    /// `activate` while a session is active: only one session at a time.
    case sessionAlreadyActive
    /// An operation that needs an active session, without one.
    case noActiveSession
    /// The session was deactivated: its parameters and interruptions no longer accept changes.
    case sessionInactive
    /// Enabling processing while the session is interrupted.
    case interrupted
    /// An interruption reason longer than `InterruptionState.maximumReasonBytes`.
    case interruptionReasonTooLong(bytes: Int)
    /// More than `InterruptionState.maximumReasons` interruptions at once.
    case tooManyInterruptions
    /// A personalization preset made for another tech level than the session's.
    case presetTechLevelMismatch(presetTechLevel: Int, sessionTechLevel: Int)
    /// A preset variant the session's personalization mode does not offer (SinglePreset
    /// offers only `default`).
    case presetVariantUnavailable(PresetVariant)
    /// Loading a preset without a `PresetSource`.
    case noPresetSource
    /// A `ProcessingHandler` did not answer a read within the delivery timeout.
    case readTimeoutExceeded(Duration)
    /// A `ProcessingHandler` answered a read with another parameter's value.
    case unexpectedReading(requested: SessionParameter.Readable, received: SessionParameter.ReadValue)

    /// A sentence for logs and the error replies of surfaces.
    public var description: String {
        switch self {
        case .invalidTechLevel(let level):
            "tech level \(level) is outside \(TechLevel.range.lowerBound)…\(TechLevel.range.upperBound)"
        case .invalidIntensity(let intensity): "intensity \(intensity) is outside 0…1"
        case .sessionAlreadyActive: "a processing session is already active (deactivate it first)"
        case .noActiveSession: "no processing session is active"
        case .sessionInactive: "the processing session was deactivated"
        case .interrupted: "processing cannot be enabled while the session is interrupted"
        case .interruptionReasonTooLong(let bytes):
            "an interruption reason may have at most \(InterruptionState.maximumReasonBytes) bytes, got \(bytes)"
        case .tooManyInterruptions:
            "at most \(InterruptionState.maximumReasons) interruptions may be active at once; resolve one first"
        case .presetTechLevelMismatch(let preset, let session):
            "the preset was made for tech level \(preset), the session is at tech level \(session)"
        case .presetVariantUnavailable(let variant): "preset variant \(variant) is not available in this personalization mode"
        case .noPresetSource: "no preset source is configured"
        case .readTimeoutExceeded(let timeout): "the processing handler did not answer a read within \(timeout)"
        case .unexpectedReading(let requested, let received):
            "the processing handler answered a read of \(requested) with \(received)"
        }
    }
}
