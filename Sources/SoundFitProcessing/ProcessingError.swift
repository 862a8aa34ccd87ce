import SoundFitModel

/// Why a processing operation was rejected or failed (session, configuration, handler).
///
/// Parameter-delivery failures (timeouts, superseded) are `ProcessingParameterError`.
public enum ProcessingError: Error, Sendable, Equatable, CustomStringConvertible {
    // Each case's sentence is its `description` below.
    /// Rejected, not clamped (also for a value that is not a number).
    case invalidIntensity(Float)
    /// Only one session at a time.
    case sessionAlreadyActive
    case noActiveSession
    /// Its parameters and interruptions no longer accept changes.
    case sessionInactive
    case interrupted
    case interruptionReasonTooLong(bytes: Int)
    case tooManyInterruptions
    case presetTechLevelMismatch(presetTechLevel: Int, sessionTechLevel: Int)
    /// SinglePreset offers only `default`.
    case presetVariantUnavailable(PresetVariant)
    case noPresetSource
    /// A `ProcessingHandler` did not answer a read within the delivery timeout.
    case readTimeoutExceeded(Duration)
    case unexpectedReading(requested: SessionParameter.Readable, received: SessionParameter.ReadValue)

    /// A sentence for logs and the error replies of surfaces.
    public var description: String {
        switch self {
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
