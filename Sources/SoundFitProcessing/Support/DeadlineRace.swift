import SoundFitModel
import Synchronization

/// Runs `operation` until it finishes or `clock` reaches `deadline`, whichever comes first.
///
/// The operation runs in its own unstructured task, so an operation that never returns (an
/// applicator stuck on a dead server, one that ignores cancellation) cannot hold the caller:
/// at the deadline the caller resumes with `timeoutError` and the operation is cancelled and
/// left behind. Cancelling the caller resumes it at once with `CancellationError`.
func race<T: Sendable>(
    deadline: Duration, clock: DeliveryClock, timeoutError: any Error,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = Race<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.install(continuation)
            let work = Task {
                do { race.finish(.success(try await operation())) } catch { race.finish(.failure(error)) }
            }
            let timer = Task {
                do {
                    try await clock.sleep(deadline)
                    race.finish(.failure(timeoutError))
                } catch {
                    // Cancelled because the operation finished first.
                }
            }
            race.attach([work, timer])
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// The shared end of one `race`: whoever finishes first resumes the caller and cancels the rest.
private final class Race<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var result: Result<T, any Error>?
        var tasks: [Task<Void, Never>] = []
    }

    private let state = Mutex(State())

    func install(_ continuation: CheckedContinuation<T, any Error>) {
        let result = state.withLock { state -> Result<T, any Error>? in
            if let result = state.result { return result }
            state.continuation = continuation
            return nil
        }
        if let result { continuation.resume(with: result) }
    }

    func attach(_ tasks: [Task<Void, Never>]) {
        let finished = state.withLock { state -> Bool in
            if state.result != nil { return true }
            state.tasks = tasks
            return false
        }
        if finished { tasks.forEach { $0.cancel() } }
    }

    func finish(_ result: Result<T, any Error>) {
        let (continuation, tasks) = state.withLock { state -> (CheckedContinuation<T, any Error>?, [Task<Void, Never>]) in
            guard state.result == nil else { return (nil, []) }
            state.result = result
            defer { state.continuation = nil; state.tasks = [] }
            return (state.continuation, state.tasks)
        }
        tasks.forEach { $0.cancel() }
        continuation?.resume(with: result)
    }
}
