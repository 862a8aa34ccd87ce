import Synchronization
import SoundFitModel

/// Session operations — activations, deactivations, and the JACK connection coming and going —
/// run one at a time, in the order they were requested. A request takes its place when it is
/// made (synchronously: on the OSC receive thread that is arrival order); its work runs in a
/// task once every earlier one has finished. So `/session/activate` followed by
/// `/session/deactivate`, from one client or two, always ends inactive, and each request is
/// answered from inside its own turn with its own outcome.
///
/// Bounded: at most `capacity` requested operations wait at once; more are refused. The audio
/// system's own operations (connection, disconnection) are never refused.
///
/// Thread rules: any thread except the audio thread.
final class SessionOperations: Sendable {
    /// Requested operations that may wait at once.
    static let capacity = 16

    private struct State {
        /// Finishes when the last operation queued has finished.
        var tail: Task<Void, Never>?
        var waiting = 0
    }

    private let state = Mutex(State())

    static let busy = ControlError("too many session operations waiting (\(capacity)): try again when they are answered")

    /// Queues `work` after every operation queued before. `requested`: counted against
    /// `capacity` (nil is returned when it is full).
    func enqueue<T: Sendable>(requested: Bool = true, _ work: @escaping @Sendable () async -> T) -> Task<T, Never>? {
        state.withLock { state -> Task<T, Never>? in
            if requested {
                guard state.waiting < Self.capacity else { return nil }
                state.waiting += 1
            }
            let previous = state.tail
            let task = Task { [self] in
                await previous?.value
                let result = await work()
                if requested { self.state.withLock { $0.waiting -= 1 } }
                return result
            }
            state.tail = Task { _ = await task.value }
            return task
        }
    }
}
