import SoundFitModel

/// The handler's way back to the controller: tells it that parameters of a session can no
/// longer be relied on (e.g. the processor restarted, the JACK server went away and came back).
///
/// The controller then recovers (see `ProcessingController.invalidate(parameters:cause:)`): it
/// re-reads the readable parameters from the handler and re-applies what it holds where the
/// handler's state differs or is unknown. Holds the controller and session weakly; once the
/// session is no longer active, invalidating does nothing and returns nil. Call from any task.
public final class ProcessingInvalidation: Sendable {
    private weak let controller: ProcessingController?
    private weak let session: ProcessingSession?

    init(controller: ProcessingController, session: ProcessingSession) {
        self.controller = controller
        self.session = session
    }

    /// Invalidates `parameters` of the session (all of them by default: the whole processor
    /// state is unknown) and waits until the controller recovered.
    @discardableResult
    public func invalidate(parameters: Set<SessionParameter.Name> = Set(SessionParameter.Name.allCases),
                           cause: (any Error)? = nil) async -> InvalidationReport? {
        guard let controller, let session else { return nil }
        return await controller.recover(session, invalidating: parameters, cause: cause)
    }
}

/// What the controller did to recover from an invalidation.
public struct InvalidationReport: Sendable, CustomStringConvertible {
    /// The parameters the handler invalidated.
    public let invalidated: Set<SessionParameter.Name>
    /// The cause the handler gave, if any.
    public let cause: (any Error)?
    /// What the handler answered for each readable parameter that was read again.
    public internal(set) var readings: [SessionParameter.Readable: Result<SessionParameter.ReadValue, any Error>] = [:]
    /// The writable parameters whose values were re-applied to the handler, in order.
    public internal(set) var reapplied: [SessionParameter.Name] = []
    /// The writable parameters whose re-application failed (their handler applicator stays out
    /// of date: the next delivery or synchronization retries it).
    public internal(set) var failures: [SessionParameter.Name: any Error] = [:]
    /// The tech level the handler reported when it differs from the session's. Re-applying
    /// values cannot fix that: deactivate and activate a session with the new tech level.
    public internal(set) var techLevelMismatch: TechLevel?

    init(invalidated: Set<SessionParameter.Name>, cause: (any Error)?) {
        self.invalidated = invalidated
        self.cause = cause
    }

    /// Whether every re-application succeeded and the tech level still matches.
    public var isRecovered: Bool { failures.isEmpty && techLevelMismatch == nil }

    /// A one-line summary for logs.
    public var description: String {
        "invalidated \(invalidated.map(\.rawValue).sorted()), reapplied \(reapplied.map(\.rawValue)), "
            + "failures \(failures.keys.map(\.rawValue).sorted())"
            + (techLevelMismatch.map { ", handler reports \($0)" } ?? "")
    }
}
