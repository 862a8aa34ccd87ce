import Synchronization

/// A virtual clock: time stands still until a test advances it, so settle times and timeouts
/// and debounce deadlines are checked to the exact instant without sleeping. Shared by the
/// processing-model and state tests.
public final class ManualClock: Clock, Sendable {
    public struct Instant: InstantProtocol, CustomStringConvertible {
        /// Time since the clock was made.
        public var offset: Duration

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        public var description: String { "\(offset)" }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [UInt64: Sleeper] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }

    /// Time since the clock was made.
    public var elapsed: Duration { now.offset }

    /// Tasks sleeping on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resume = state.withLock { state -> Result<Void, any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let resume { continuation.resume(with: resume) }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward by `duration`, waking sleepers in deadline order (time stands at each
    /// deadline while its sleepers are woken), and gives woken tasks a chance to run.
    public func advance(by duration: Duration) async {
        let target = now.advanced(by: duration)
        while true {
            let due = state.withLock { state -> [Sleeper] in
                guard let earliest = state.sleepers.values.map(\.deadline).min(), earliest <= target else {
                    state.now = target
                    return []
                }
                state.now = max(state.now, earliest)
                let due = state.sleepers.filter { $0.value.deadline <= earliest }
                for id in due.keys { state.sleepers[id] = nil }
                return Array(due.values)
            }
            if due.isEmpty { break }
            due.forEach { $0.continuation.resume() }
            await yieldMany()
        }
        await yieldMany()
    }
}

/// Lets other tasks run for a while (not a synchronization: tests wait on states for that).
public func yieldMany(_ count: Int = 50) async {
    for _ in 0..<count { await Task.yield() }
}
