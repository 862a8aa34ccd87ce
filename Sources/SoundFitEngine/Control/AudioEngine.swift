import SoundFitDSP
import Synchronization

/// The control side of the audio engine: validates values, publishes them to the audio thread
/// and reports when they took effect.
///
/// A change counts as applied only when the audio thread acknowledged the cycle in which it
/// took effect; if no cycle runs (no server, a stalled server) `apply` fails with a timeout
/// instead of hanging or lying. Thread rules: every method may be called from any thread
/// except the audio thread.
public final class AudioEngine: Sendable {
    public let mailbox: EngineMailbox
    private let watcher: AcknowledgementWatcher

    /// Creates the engine with every parameter at its value in `settings`.
    public init(settings: ChainSettings = ChainSettings()) {
        mailbox = EngineMailbox(initialWords: EngineParameter.allCases.map { $0.load(from: settings) })
        watcher = AcknowledgementWatcher(mailbox: mailbox)
    }

    /// A renderer for a driver with this format, starting from the current values. Control thread.
    public func makeRenderer(spec: ProcessingSpec) -> RealtimeRenderer {
        RealtimeRenderer(spec: spec, mailbox: mailbox.realtime)
    }

    /// The value most recently published for `parameter` (what the engine is, or is about to be, running).
    public func value(of parameter: EngineParameter) -> ParameterValue {
        parameter.decode(mailbox.publishedBits(index: parameter.rawValue))
    }

    /// All current values as chain settings.
    public var settings: ChainSettings {
        var settings = ChainSettings()
        for parameter in EngineParameter.allCases {
            parameter.store(mailbox.publishedBits(index: parameter.rawValue), into: &settings)
        }
        return settings
    }

    /// Validates `changes`, publishes them as one batch (they take effect in the same cycle) and
    /// waits until the audio thread acknowledged them. Returns the cycle index (low 32 bits).
    /// Throws `ParameterError` for an invalid value (nothing is published) and
    /// `EngineError.timeout` when no acknowledgement arrives within `timeout`.
    @discardableResult
    public func apply(_ changes: [(EngineParameter, ParameterValue)], timeout: Duration) async throws -> UInt32 {
        let submission = try submit(changes)
        return try await waitUntilApplied(submission, timeout: timeout)
    }

    /// Validates and publishes `changes` as one batch without waiting. Callers that must keep
    /// the order of requests (the OSC receive thread) submit synchronously, then wait.
    public func submit(_ changes: [(EngineParameter, ParameterValue)]) throws(ParameterError) -> EngineSubmission {
        for (parameter, value) in changes {
            try parameter.descriptor.validate(value)
        }
        let sequences = mailbox.publish(changes.map { (index: $0.0.rawValue, bits: $0.0.encode($0.1)) })
        return EngineSubmission(targets: zip(changes, sequences).map { (index: $0.0.rawValue, sequence: $1) })
    }

    /// Waits until the audio thread acknowledged every change of `submission` (or a later value
    /// of the same parameter, which took effect in its place). Returns the cycle index.
    @discardableResult
    public func waitUntilApplied(_ submission: EngineSubmission, timeout: Duration) async throws -> UInt32 {
        try await watcher.wait(for: submission.targets, timeout: timeout)
    }

    /// Cycles rendered so far by every renderer of this engine.
    public var cycleCount: UInt64 { mailbox.cycleCount }
}

/// Why the engine could not apply a change.
public enum EngineError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No audio cycle acknowledged the change in time.
    case timeout(seconds: Double)

    public var description: String {
        switch self {
        case .timeout(let seconds):
            "the audio engine did not apply the change within \(seconds) s (is the JACK server running?)"
        }
    }
}

/// A published batch of changes, to wait on.
public struct EngineSubmission: Sendable {
    let targets: [(index: Int, sequence: UInt32)]
}
