import SoundFitHearing

/// Where a hearing test is: what `/test/state` reports.
public enum HearingTestState: Sendable, Equatable {
    case idle
    /// Testing `ear` at `frequency`; `progress` 0…1. Reported when the test starts and after each
    /// presentation's response window closes, tones and catch trials alike, never before a
    /// presentation and never with its level: what reaches the listener tells nothing of when a
    /// tone comes or how loud it is.
    case running(ear: Ear, frequency: Double, progress: Double)
    case paused
    /// Finished; the result became the hearing profile, or `profileRefusal` says why it did not:
    /// the gate's reasons (`EarResult.problems`: it is kept, and `/test/submit` applies it), or
    /// why the profile refused it.
    case done(profileRefusal: String?)
    /// Cancelled after `presentations` presentations, `heard` of them answered in their window
    /// (told once the test is over: nothing of it reaches the listener during one).
    case cancelled(presentations: Int, heard: Int)
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
    /// The kept result of the last test was applied by an explicit submit (`/test/submit`).
    case submitted
    /// The finished test could not be kept in the state directory, and why (for the log).
    case notKept(String)
}
