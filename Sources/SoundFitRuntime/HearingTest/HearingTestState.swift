import SoundFitHearing

/// Where a hearing test is: what `/test/state` reports.
public enum HearingTestState: Sendable, Equatable {
    case idle
    /// Presenting at `frequency` to `ear`; `level` is the search's current level (dB HL; catch
    /// trials are not announced); `progress` 0…1.
    case running(ear: Ear, frequency: Double, level: Double, progress: Double)
    case paused
    /// Finished; the result became the hearing profile, or `profileRefusal` says why it could not
    /// (e.g. a required frequency without a threshold).
    case done(profileRefusal: String?)
    case cancelled
    case failed(reason: String)

    /// The state's name: `idle`, `running`, `paused`, `done`, `cancelled`, `failed`.
    public var name: String {
        switch self {
        case .idle: "idle"
        case .running: "running"
        case .paused: "paused"
        case .done: "done"
        case .cancelled: "cancelled"
        case .failed: "failed"
        }
    }

    /// Running or paused: the session is interrupted and test mode is on.
    public var isActive: Bool {
        switch self {
        case .running, .paused: true
        default: false
        }
    }
}

/// What a hearing test reports as it goes, in order: the session interrupted, states, the
/// results, the interruption resolved, the final state.
public enum HearingTestEvent: Sendable {
    /// The session's interruption state changed (`/session/interrupted ,i 0|1`).
    case interrupted(Bool)
    case state(HearingTestState)
    /// The finished test, before its result becomes the hearing profile.
    case results(HearingTestRecord)
    /// The finished test could not be kept in the state directory, and why (for the log).
    case notKept(String)
}
