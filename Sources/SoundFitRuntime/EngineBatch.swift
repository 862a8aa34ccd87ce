import Synchronization
import SoundFitModel
import SoundFitEngine

/// Kernel values that belong together (an OSC bundle, a patch): the kernel parameters hand
/// their values to it (`KernelParameter.request(_:origin:at:joining:)`) instead of the engine,
/// and `publish` sends them as one mailbox batch, so they take effect in the same audio cycle,
/// each published once. Each value's wait then watches its own part of the batch. A batch for
/// a moment (an OSC bundle with a future timetag) is scheduled for it instead: the audio thread
/// applies it at the frame of the cycle that contains it.
///
/// Thread rules: any thread except the audio thread. `add` runs under a parameter's lock and
/// only takes the batch's own lock.
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
