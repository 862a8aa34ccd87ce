import SoundFitModel

/// One applicator of a writable session parameter, with its own apply timeout, as a surface
/// shows it.
public struct SessionApplicator: Sendable, Equatable {
    /// The parameter it applies (`isEnabled`, `intensity` or `preset`).
    public let parameter: SessionParameter.Name
    /// What it is (e.g. "the audio engine"); nil when it was added without a name.
    public let name: String?
    /// The longest one application may take; nil: only the delivery timeout.
    public let applyTimeout: Duration?

    public init(parameter: SessionParameter.Name, name: String?, applyTimeout: Duration?) {
        self.parameter = parameter
        self.name = name
        self.applyTimeout = applyTimeout
    }
}

extension ProcessingController {
    /// The applicators of the session's writable parameters, in the model's order (each
    /// parameter's in the order they were added): the active session's, else the
    /// ones the next session gets from the handler. Any thread.
    public var sessionApplicators: [SessionApplicator] {
        if let session { return session.writables.flatMap { $0.applicators() } }
        guard let handler else { return [] }
        return SessionParameter.Name.allCases.filter(\.isWritable).map {
            SessionApplicator(parameter: $0, name: handler.applicatorName, applyTimeout: handler.applyTimeout(for: $0))
        }
    }
}
