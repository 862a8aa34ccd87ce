import Synchronization
import SoundFitModel
import SoundFitEngine

/// Kernel values that belong together (an OSC bundle, a patch): while a batch is open, the
/// engine applicators hand their values to it instead of the engine; closing it publishes them
/// as one mailbox batch, so they take effect in the same audio cycle, each published once. Each
/// value's confirmation then waits for its own part of the batch.
///
/// Thread rules: any thread except the audio thread. `add` runs under a parameter's lock (a
/// streaming applicator's submit) and only takes the batch's own lock.
final class EngineBatch: Sendable {
    private struct State {
        var changes: [(EngineSlot, ParameterValue)] = []
        var submission: EngineSubmission?
        var waiters: [CheckedContinuation<EngineSubmission, Never>] = []
    }

    private let state = Mutex(State())

    /// Adds a validated value; returns its position in the batch, or nil when the batch was
    /// already published (the caller publishes on its own then).
    func add(_ slot: EngineSlot, _ value: ParameterValue) -> Int? {
        state.withLock { state in
            guard state.submission == nil else { return nil }
            state.changes.append((slot, value))
            return state.changes.count - 1
        }
    }

    /// Publishes the collected values as one batch and wakes the confirmations waiting for it.
    func publish(to engine: AudioEngine) {
        let (submission, waiters) = state.withLock { state in
            let submission = engine.submit(validated: state.changes)
            state.submission = submission
            defer { state.waiters = [] }
            return (submission, state.waiters)
        }
        for waiter in waiters { waiter.resume(returning: submission) }
    }

    /// The submission of the value at `position`, once the batch is published.
    func submission(at position: Int) async -> EngineSubmission {
        let submission = await withCheckedContinuation { continuation in
            let published = state.withLock { state -> EngineSubmission? in
                if let submission = state.submission { return submission }
                state.waiters.append(continuation)
                return nil
            }
            if let published { continuation.resume(returning: published) }
        }
        return submission.change(at: position)
    }
}

/// The batch open now, if any: read by the engine applicators when they hand a value over.
final class OpenEngineBatch: Sendable {
    private let current = Mutex<EngineBatch?>(nil)
    /// One batch at a time: a second caller waits for the first to publish.
    private let turn = Mutex(())

    var batch: EngineBatch? { current.withLock { $0 } }

    /// Runs `body` with a batch open, then publishes what it collected to `engine`.
    func collect<Result>(publishingTo engine: AudioEngine, _ body: () -> Result) -> Result {
        turn.withLock { _ in
            let batch = EngineBatch()
            current.withLock { $0 = batch }
            let result = body()
            current.withLock { $0 = nil }
            batch.publish(to: engine)
            return result
        }
    }
}
