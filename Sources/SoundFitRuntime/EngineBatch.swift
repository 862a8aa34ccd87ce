import Synchronization
import SoundFitModel
import SoundFitEngine

/// Kernel values that belong together (an OSC bundle, a patch): while a batch is open, the
/// engine applicators hand their values to it instead of the engine; closing it publishes them
/// as one mailbox batch, so they take effect in the same audio cycle, each published once. Each
/// value's confirmation then waits for its own part of the batch. A batch for a moment (an OSC
/// bundle with a future timetag) is scheduled for it instead: the audio thread applies it at
/// the frame of the cycle that contains it.
///
/// Thread rules: any thread except the audio thread. `add` runs under a parameter's lock (a
/// streaming applicator's submit) and only takes the batch's own lock.
final class EngineBatch: Sendable {
    private struct State {
        var changes: [(EngineSlot, ParameterValue)] = []
        var submission: Result<EngineSubmission, EngineError>?
        var waiters: [CheckedContinuation<Result<EngineSubmission, EngineError>, Never>] = []
    }

    /// When the batch takes effect; nil: at once.
    let time: EngineTime?
    private let state = Mutex(State())

    init(time: EngineTime? = nil) {
        self.time = time
    }

    /// Adds a validated value for `time`; returns its position in the batch, or nil when the
    /// batch was already published or is for another moment (the caller submits on its own then).
    func add(_ slot: EngineSlot, _ value: ParameterValue, at time: EngineTime?) -> Int? {
        guard time == self.time else { return nil }
        return state.withLock { state in
            guard state.submission == nil else { return nil }
            state.changes.append((slot, value))
            return state.changes.count - 1
        }
    }

    /// Publishes (or schedules) the collected values as one batch and wakes the confirmations
    /// waiting for it.
    func publish(to engine: AudioEngine) {
        let (submission, waiters) = state.withLock { state in
            // An empty batch (every value refused) publishes nothing and takes no place in the schedule.
            let submission = Result { () throws(EngineError) in
                try engine.submit(validated: state.changes, at: state.changes.isEmpty ? nil : time)
            }
            state.submission = submission
            defer { state.waiters = [] }
            return (submission, state.waiters)
        }
        for waiter in waiters { waiter.resume(returning: submission) }
    }

    /// The submission of the value at `position`, once the batch is published. Throws
    /// `EngineError.scheduleFull` when the batch could not be scheduled.
    func submission(at position: Int) async throws(EngineError) -> EngineSubmission {
        let submission = await withCheckedContinuation { continuation in
            let published = state.withLock { state -> Result<EngineSubmission, EngineError>? in
                if let submission = state.submission { return submission }
                state.waiters.append(continuation)
                return nil
            }
            if let published { continuation.resume(returning: published) }
        }
        return try submission.get().change(at: position)
    }
}

/// The batch open now, if any: read by the engine applicators when they hand a value over.
final class OpenEngineBatch: Sendable {
    private let current = Mutex<EngineBatch?>(nil)
    /// One batch at a time: a second caller waits for the first to publish.
    private let turn = Mutex(())

    var batch: EngineBatch? { current.withLock { $0 } }

    /// Runs `body` with a batch open (for `time`; nil: at once), then publishes what it
    /// collected to `engine`.
    func collect<Result>(publishingTo engine: AudioEngine, at time: EngineTime? = nil, _ body: () -> Result) -> Result {
        turn.withLock { _ in
            let batch = EngineBatch(time: time)
            current.withLock { $0 = batch }
            let result = body()
            current.withLock { $0 = nil }
            batch.publish(to: engine)
            return result
        }
    }
}
