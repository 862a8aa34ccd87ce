import SoundFitModel
import Synchronization

/// The interruption rules as a plain value: which reasons are active and which `isEnabled`
/// value comes back when the last one is resolved.
///
/// The first interruption disables processing and remembers the value `isEnabled` was meant to
/// have; further reasons change nothing; resolving a reason that is not active changes nothing;
/// resolving the last one restores the remembered value.
struct InterruptionState: Sendable, Equatable {
    /// Bounds on what a client can make the session remember: reasons are names, not data.
    static let maximumReasons = 16
    static let maximumReasonBytes = 128

    /// What the session must do with `isEnabled` after an event.
    enum Action: Sendable, Equatable {
        case none
        /// Force `isEnabled` to false (and remember what it was).
        case disable
        /// Apply this value to `isEnabled`.
        case restore(Bool)
    }

    private(set) var reasons: Set<String> = []
    /// The value to restore after the last resolve. A recommendation that changes `isEnabled`
    /// while interrupted sets it too: it takes effect when the interruption ends.
    var valueBeforeInterruption: Bool?

    var isInterrupted: Bool { !reasons.isEmpty }

    mutating func interrupt(reason: String) -> Action {
        let wasInterrupted = isInterrupted
        reasons.insert(reason)
        return wasInterrupted ? .none : .disable
    }

    mutating func resolve(reason: String) -> Action {
        guard reasons.remove(reason) != nil, reasons.isEmpty else { return .none }
        defer { valueBeforeInterruption = nil }
        return .restore(valueBeforeInterruption ?? false)
    }
}

/// The controller's interruptions, shared by its successive sessions (they outlive a session:
/// a session re-activated while interrupted starts interrupted).
///
/// `isInterrupted` is an atomic copy of `state.isInterrupted` for `isEnabled`'s validator, which
/// runs under the parameter's lock and so must not take `state`'s lock (interruptions take
/// `state`, then the parameter's lock).
final class Interruptions: Sendable {
    let state = Mutex(InterruptionState())
    let isInterrupted = Atomic<Bool>(false)
}
